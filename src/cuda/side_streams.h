/*
 * side_streams.h - kernels of one call that may run beside each other:
 * fork side streams off the context's stream, launch on them, join back.
 *
 * A segmented call with offsets queues a kernel per length class and the
 * long segments' tile sort and merge passes, each with its own list of
 * work and its own last, partly idle wave; most of them have no work at
 * all for a given call, which only the device knows. On one stream their
 * tails and empty launches add up; on side streams they overlap. The side
 * streams wait for everything queued on the context's stream before the
 * fork, and the context's stream for everything queued on them before the
 * join, by events: so a call stays ordered with the caller's other work,
 * and under stream capture the fork and join become graph edges.
 *
 * The streams and events are created on the first fork that is not
 * inside a stream capture (creating them there could fail the capture);
 * until then, and with WARPSORT_ONE_STREAM=1 (test_hooks.h), ws_fork
 * returns 0 and every kernel goes to the context's stream. Internal; CUDA
 * translation units only.
 */
#ifndef WARPSORT_CUDA_SIDE_STREAMS_H
#define WARPSORT_CUDA_SIDE_STREAMS_H

#include <cuda_runtime.h>

#include "state.h"

/* Forks: returns 1 with *err cudaSuccess when the side streams
 * st->side[0 .. WS_SIDE_STREAMS) now follow st->stream; 0 when the call is
 * to stay on st->stream (none made yet inside a capture, the hook, or they
 * could not be made: *err cudaSuccess), or when queuing the fork failed
 * (*err says why). */
int ws_fork(ws_cuda_state *st, int one_stream, cudaError_t *err);

/* Joins after a fork: st->stream waits for every side stream. Call it
 * after every successful fork, even when a launch in between failed, so no
 * side stream is left outside a capture. */
cudaError_t ws_join(ws_cuda_state *st);

/* Destroys the side streams and events (context teardown). */
void ws_sides_destroy(ws_cuda_state *st);

#endif /* WARPSORT_CUDA_SIDE_STREAMS_H */
