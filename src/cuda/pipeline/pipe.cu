/*
 * pipe.cu - the pipeline's per-context state: copy streams and events
 * (created on the first host-array call), the pinned ring (on the first call
 * that stages pageable memory), the test checkpoints, and the drain after a
 * failure.
 */
#include <stdlib.h>

#include "pipe.h"

/* Where the workers of a call on several devices stop once one has failed,
 * and the test hook (pipeline.h): the k-th checkpoint from now on fails,
 * counted over the context and all its workers (one counter, taken with a
 * compare-and-swap: the workers pass checkpoints concurrently). */
warpsort_status_t ws_checkpoint(warpsort_context_t *ctx, const char *where) {
    ws_cuda_state *st = ws_state(ctx);
    if (st->stop && __atomic_load_n(st->stop, __ATOMIC_ACQUIRE))
        return ws_error(ctx, WARPSORT_INTERNAL, "stopped at %s: another worker failed", where);
    unsigned *c = st->fail_countdown ? st->fail_countdown : &st->test_fail_countdown;
    unsigned v = __atomic_load_n(c, __ATOMIC_RELAXED);
    while (v &&
           !__atomic_compare_exchange_n(c, &v, v - 1, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
    }
    if (v == 1)
        return ws_error(ctx, WARPSORT_OUT_OF_MEMORY, "forced failure (test hook) at %s", where);
    return WARPSORT_OK;
}

extern "C" void ws_pipeline_test_fail_at(warpsort_context_t *ctx, unsigned k) {
    if (ctx && ctx->backend == WARPSORT_BACKEND_CUDA && ctx->cuda)
        ws_state(ctx)->test_fail_countdown = k;
}

int ws_host_is_pinned(const void *p) {
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return a.type == cudaMemoryTypeHost;
}
static size_t ws_slot_bytes(const warpsort_context_t *ctx) {
    const size_t ring = ctx->host_ring_bytes ? ctx->host_ring_bytes : WS_RING_DEFAULT_BYTES;
    size_t slot = (ring / WS_RING_SLOTS) & ~(size_t)4095;
    return slot < 4096 ? 4096 : slot;
}

static void ws_pipe_free(ws_pipe *p) {
    if (p->h2d) (void)cudaStreamSynchronize(p->h2d);
    if (p->d2h) (void)cudaStreamSynchronize(p->d2h);
    ws_trace_free(&p->trace);
    if (p->ring) (void)cudaFreeHost(p->ring);
    ws_pool_destroy(p->pool);
    for (unsigned i = 0; i < WS_RING_SLOTS; i++)
        if (p->slot_ev[i]) (void)cudaEventDestroy(p->slot_ev[i]);
    for (unsigned i = 0; i < WS_MAX_PIECES; i++)
        if (p->piece_ev[i]) (void)cudaEventDestroy(p->piece_ev[i]);
    if (p->start_ev) (void)cudaEventDestroy(p->start_ev);
    if (p->done_ev) (void)cudaEventDestroy(p->done_ev);
    if (p->h2d) (void)cudaStreamDestroy(p->h2d);
    if (p->d2h) (void)cudaStreamDestroy(p->d2h);
    (void)cudaGetLastError();
    free(p);
}

void ws_pipe_destroy(warpsort_context_t *ctx) {
    ws_cuda_state *st = ws_state(ctx);
    if (st) ws_workers_destroy(ctx);
    if (st && st->pipe) {
        ws_pipe_free(st->pipe);
        st->pipe = NULL;
    }
}

/* Streams and events, created once per context (the ring comes later, only
 * when a job stages pageable memory). */
warpsort_status_t ws_pipe_get(warpsort_context_t *ctx, ws_pipe **out) {
    ws_cuda_state *st = ws_state(ctx);
    if (st->pipe) {
        *out = st->pipe;
        return WARPSORT_OK;
    }
    WS_TRY(ws_checkpoint(ctx, "pipeline streams"));
    ws_pipe *p = (ws_pipe *)calloc(1, sizeof *p);
    if (!p) return ws_error(ctx, WARPSORT_OUT_OF_MEMORY, "cannot allocate the pipeline state");
    cudaError_t err = cudaStreamCreateWithFlags(&p->h2d, cudaStreamNonBlocking);
    if (err == cudaSuccess) err = cudaStreamCreateWithFlags(&p->d2h, cudaStreamNonBlocking);
    for (unsigned i = 0; err == cudaSuccess && i < WS_RING_SLOTS; i++)
        err = cudaEventCreateWithFlags(&p->slot_ev[i], cudaEventDisableTiming);
    for (unsigned i = 0; err == cudaSuccess && i < WS_MAX_PIECES; i++)
        err = cudaEventCreateWithFlags(&p->piece_ev[i], cudaEventDisableTiming);
    if (err == cudaSuccess) err = cudaEventCreateWithFlags(&p->start_ev, cudaEventDisableTiming);
    if (err == cudaSuccess) err = cudaEventCreateWithFlags(&p->done_ev, cudaEventDisableTiming);
    if (err != cudaSuccess) {
        ws_pipe_free(p);
        return ws_cuda_fail(ctx, err, "creating the pipeline's streams and events");
    }
    p->slot_bytes = ws_slot_bytes(ctx);
    st->pipe = p;
    *out = p;
    return WARPSORT_OK;
}

warpsort_status_t ws_pipe_ring(warpsort_context_t *ctx, ws_pipe *p) {
    if (p->ring) return WARPSORT_OK;
    WS_TRY(ws_checkpoint(ctx, "pinned ring"));
    void *ring = NULL;
    cudaError_t err = cudaHostAlloc(&ring, WS_RING_SLOTS * p->slot_bytes, cudaHostAllocDefault);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        return ws_error(ctx, WARPSORT_OUT_OF_MEMORY,
                        "cannot allocate a pinned ring of %u x %zu bytes: %s", WS_RING_SLOTS,
                        p->slot_bytes, cudaGetErrorString(err));
    }
    p->ring = (unsigned char *)ring;
    p->next_slot = 0;
    /* Threads that wait for slots: without them every 32 MiB slot paid for
     * cpu_threads pthread_creates. NULL (none started) falls back to that. */
    if (!p->pool) p->pool = ws_pool_create(ctx->cpu_threads);
    return WARPSORT_OK;
}

/* Waits for everything a failed job may have left in flight (it may read
 * the caller's memory), and clears non-sticky errors. */
void ws_drain(warpsort_context_t *ctx, ws_pipe *p) {
    (void)cudaStreamSynchronize(ws_state(ctx)->stream);
    if (p) {
        (void)cudaStreamSynchronize(p->h2d);
        (void)cudaStreamSynchronize(p->d2h);
    }
    (void)cudaGetLastError();
}
