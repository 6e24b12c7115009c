/*
 * state.h - what the CUDA backend keeps per context (ctx->cuda): the device
 * it runs on, the workspace cache and the host pipeline's state. The router
 * (backend.cu) owns it; device.cu fills it at initialisation.
 * Internal; CUDA translation units only.
 */
#ifndef WARPSORT_CUDA_STATE_H
#define WARPSORT_CUDA_STATE_H

#include <cuda_runtime.h>

#include "core/internal.h"
#include "plan.cuh"

struct ws_pipe;    /* pipeline/: ring, streams, events; created on first use */
struct ws_workers; /* pipeline/workers.cu: out-of-core workers on the listed devices */

/* What the device offers, read once at initialisation. The smem_limit test
 * hook caps the shared memory so the rows of smaller chips run on a larger
 * one. */
struct ws_device_limits {
    int cc_major, cc_minor; /* compute capability */
    size_t smem_block;      /* opt-in shared memory per block, bytes */
    size_t smem_sm;         /* shared memory per SM, bytes */
    int smem_forced;        /* 1: the test hook capped the two above */
};

/* Side streams a call may fork (side_streams.h). */
#define WS_SIDE_STREAMS 3

struct ws_cuda_state {
    cudaStream_t stream;
    /* side streams and their events (side_streams.h), made on first use */
    cudaStream_t side[WS_SIDE_STREAMS];
    cudaEvent_t fork, join[WS_SIDE_STREAMS];
    int sides; /* 1: made */
    ws_device_limits limits;
    ws_device_info dev; /* what the plan reads: family, SMs, sample-sort limits */
    void *workspace;    /* device buffer: cached (owned) or the caller's */
    size_t workspace_bytes;
    int workspace_external;
    ws_pipe *pipe;                /* host-array pipeline, NULL until a call needs it */
    unsigned test_fail_countdown; /* test hook: the Nth pipeline checkpoint fails */
    /* Out of core on several devices (pipeline/workers.cu): */
    ws_workers *workers;      /* the workers' contexts, NULL until a call needs them */
    int own_stream;           /* 1: a worker's stream, created with it and destroyed here */
    unsigned *fail_countdown; /* a worker's: its parent's test_fail_countdown; else NULL */
    const int *stop;          /* while workers run: nonzero once one of them failed */
    unsigned thread_share;    /* while workers run: this one's staging threads; 0: all */
};

static inline ws_cuda_state *ws_state(const warpsort_context_t *ctx) {
    return (ws_cuda_state *)ctx->cuda;
}

#endif /* WARPSORT_CUDA_STATE_H */
