/*
 * workers.cu - the out-of-core phases on several devices (pipeline.cu's
 * overview): one worker per listed device, each a context of its own on that
 * device (the caller's context for its own device, a child context for the
 * others) with its stream, pinned ring, staging threads, workspace and device
 * budget, driven by one host thread. Phases hand the workers their jobs from
 * shared counters (out_of_core.cu); this file owns the children, starts and
 * joins the threads, and turns the first failure into the call's error.
 *
 * Children are created on the first out-of-core call that needs them and
 * kept until warpsort_destroy, so later calls reuse their rings and
 * workspaces, as the caller's context reuses its own. A child's stream is
 * its own (non-blocking): the caller's stream belongs to the caller's device.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipe.h"

#define WS_MAX_WORKERS WARPSORT_MAX_DEVICES

struct ws_workers {
    unsigned count;                            /* workers of every call */
    int same_device;                           /* 1: two workers share a device (test hook) */
    int device[WS_MAX_WORKERS];                /* worker i's device */
    warpsort_context_t *child[WS_MAX_WORKERS]; /* NULL: worker i is the caller's context */
    ws_worker w[WS_MAX_WORKERS];               /* this call's */
    /* The running phase (ws_workers_run): */
    pthread_mutex_t mu;
    int stop; /* read by the workers' checkpoints (state.h: stop) */
    warpsort_status_t status;
    char message[WS_ERROR_MAX];
    ws_worker_fn fn;
    void (*wake)(void *);
    void *arg;
};

/* Worker i's device: the hook's workers all sit on the context's device. */
static int ws_worker_device(const warpsort_context_t *ctx, unsigned i) {
    if (ctx->hooks.ooc_workers) return ctx->device;
    return ctx->device_count > 0 ? ctx->devices[i] : ctx->device;
}

int ws_names_devices(const warpsort_context_t *ctx) {
    if (ctx->hooks.ooc_workers || ctx->device_count > 1) return 1;
    return ctx->device_count == 1 && ctx->devices[0] != ctx->device;
}

warpsort_status_t ws_on_device(warpsort_context_t *ctx, int device, warpsort_status_t r) {
    if (r == WARPSORT_OK || !ws_names_devices(ctx)) return r;
    char why[WS_ERROR_MAX]; /* last_error cannot be both format argument and target */
    snprintf(why, sizeof why, "%s", ctx->last_error);
    return ws_error(ctx, r, "CUDA device %d: %.480s", device, why);
}

/* A child context on `device`: the caller's settings, its own stream and
 * staging threads, no trace of its own (its pipeline joins the caller's
 * trace in each call: ws_workers_get), and the caller's test countdown
 * (state.h). Every failure names `device`. */
static warpsort_status_t ws_child_make(warpsort_context_t *ctx, int device, unsigned threads,
                                       warpsort_context_t **out) {
    *out = NULL;
    WS_TRY(ws_on_device(ctx, device, ws_checkpoint(ctx, "starting a worker")));
    warpsort_context_t *c = (warpsort_context_t *)calloc(1, sizeof *c);
    if (!c)
        return ws_on_device(
            ctx, device,
            ws_error(ctx, WARPSORT_OUT_OF_MEMORY, "cannot allocate a worker's context"));
    c->requested = c->backend = c->last_backend = WARPSORT_BACKEND_CUDA;
    c->device = device;
    c->cpu_threads = threads;
    c->device_budget_bytes = ctx->device_budget_bytes;
    c->host_ring_bytes = ctx->host_ring_bytes;
    c->hooks = ctx->hooks;
    c->hooks.trace_path[0] = '\0';
    c->hooks.ooc_workers = 0;
    warpsort_status_t st = ws_cuda_init(c);
    if (st != WARPSORT_OK) {
        ws_error(ctx, st, "CUDA device %d: %s", device, c->last_error);
        free(c);
        return st;
    }
    ws_device_guard g;
    cudaStream_t s = NULL;
    cudaError_t err = ws_enter_device(device, &g);
    if (err == cudaSuccess) err = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    ws_leave_device(&g);
    if (err != cudaSuccess) {
        ws_cuda_destroy(c);
        free(c);
        return ws_on_device(ctx, device, ws_cuda_fail(ctx, err, "creating a worker's stream"));
    }
    ws_cuda_state *cs = ws_state(c);
    cs->stream = s;
    cs->own_stream = 1;
    cs->fail_countdown = &ws_state(ctx)->test_fail_countdown;
    *out = c;
    return WARPSORT_OK;
}

/* The worker set of ctx, made once: which device each worker runs on and
 * which of them is ctx itself (the first on ctx's device). */
static warpsort_status_t ws_workers_make(warpsort_context_t *ctx, ws_workers **out) {
    ws_cuda_state *st = ws_state(ctx);
    if (st->workers) {
        *out = st->workers;
        return WARPSORT_OK;
    }
    ws_workers *ws = (ws_workers *)calloc(1, sizeof *ws);
    if (!ws || pthread_mutex_init(&ws->mu, NULL) != 0) {
        free(ws);
        return ws_error(ctx, WARPSORT_OUT_OF_MEMORY, "cannot allocate the out-of-core workers");
    }
    ws->count = ctx->hooks.ooc_workers  ? ctx->hooks.ooc_workers
                : ctx->device_count > 0 ? (unsigned)ctx->device_count
                                        : 1u;
    ws->same_device = ctx->hooks.ooc_workers != 0;
    for (unsigned i = 0; i < ws->count; i++) ws->device[i] = ws_worker_device(ctx, i);
    st->workers = ws;
    *out = ws;
    return WARPSORT_OK;
}

warpsort_status_t ws_workers_get(warpsort_context_t *ctx, const ws_job *j, size_t budget,
                                 ws_worker **out, unsigned *count) {
    ws_workers *ws = NULL;
    WS_TRY(ws_workers_make(ctx, &ws));
    const unsigned n = ws->count;
    /* The staging threads are shared out: one pool each would put
     * n x cpu_threads threads on the cores, all bound by host memory. */
    const unsigned threads = n > 1 && ctx->cpu_threads / n > 1 ? ctx->cpu_threads / n : 1u;
    int ctx_taken = 0;
    for (unsigned i = 0; i < n; i++) {
        const int dev = ws->device[i];
        unsigned on_device = 0; /* workers that share dev split its budget */
        for (unsigned k = 0; k < n; k++) on_device += ws->device[k] == dev;
        ws_worker *w = &ws->w[i];
        w->index = i;
        if (dev == ctx->device && !ctx_taken) {
            ctx_taken = 1;
            w->ctx = ctx;
            WS_TRY(ws_on_device(ctx, dev, ws_pipe_get(ctx, &w->p)));
            w->budget = budget / on_device;
            continue;
        }
        if (!ws->child[i])
            WS_TRY(ws_child_make(ctx, dev, n > 1 ? threads : ctx->cpu_threads, &ws->child[i]));
        w->ctx = ws->child[i];
        ws_device_guard g;
        cudaError_t err = ws_enter_device(dev, &g);
        if (err != cudaSuccess)
            return ws_on_device(ctx, dev, ws_cuda_fail(ctx, err, "cudaSetDevice"));
        warpsort_status_t st = ws_pipe_get(w->ctx, &w->p);
        if (st == WARPSORT_OK) st = ws_budget(w->ctx, j, &w->budget);
        /* The call's trace, when on (WARPSORT_TRACE), records this worker
         * too; ctx's pipeline (the call's) holds it. */
        if (st == WARPSORT_OK && ws_state(ctx)->pipe)
            ws_trace_join(ws_state(ctx)->pipe, w->ctx, w->p, ws->same_device ? i : ~0u);
        ws_leave_device(&g);
        if (st != WARPSORT_OK)
            return ws_error(ctx, st, "CUDA device %d: %s", dev, w->ctx->last_error);
        w->budget /= on_device;
    }
    *out = ws->w;
    *count = n;
    return WARPSORT_OK;
}

int ws_workers_stopped(const warpsort_context_t *wctx) {
    const ws_cuda_state *st = ws_state(wctx);
    return st->stop && __atomic_load_n(st->stop, __ATOMIC_ACQUIRE);
}

/* One worker's thread: its device current for the length of the phase. */
static void ws_worker_main(void *arg, unsigned t) {
    ws_workers *ws = (ws_workers *)arg;
    ws_worker *w = &ws->w[t];
    ws_device_guard g;
    warpsort_status_t r;
    const cudaError_t err = ws_enter_device(w->ctx->device, &g);
    if (err != cudaSuccess)
        r = ws_cuda_fail(w->ctx, err, "cudaSetDevice");
    else
        r = ws->fn(w, ws->arg);
    if (r != WARPSORT_OK) {
        /* Copies may still read or write host memory the caller frees next. */
        if (err == cudaSuccess) ws_drain(w->ctx, w->p);
        pthread_mutex_lock(&ws->mu);
        if (ws->status == WARPSORT_OK) {
            ws->status = r;
            if (ws->count == 1 && !ws->child[t]) /* the one-device path: as it always said */
                snprintf(ws->message, sizeof ws->message, "%s", w->ctx->last_error);
            else if (ws->same_device)
                snprintf(ws->message, sizeof ws->message,
                         "CUDA device %d (worker %u of %u): %.440s", w->ctx->device, t, ws->count,
                         w->ctx->last_error);
            else
                snprintf(ws->message, sizeof ws->message, "CUDA device %d: %.480s", w->ctx->device,
                         w->ctx->last_error);
        }
        __atomic_store_n(&ws->stop, 1, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&ws->mu);
        if (ws->wake) ws->wake(ws->arg);
    }
    if (err == cudaSuccess) ws_leave_device(&g);
}

warpsort_status_t ws_workers_run(warpsort_context_t *ctx, ws_worker_fn fn, void (*wake)(void *),
                                 void *arg) {
    ws_workers *ws = ws_state(ctx)->workers;
    if (!ws) return ws_error(ctx, WARPSORT_INTERNAL, "out of core: no workers");
    ws->stop = 0;
    ws->status = WARPSORT_OK;
    ws->message[0] = '\0';
    ws->fn = fn;
    ws->wake = wake;
    ws->arg = arg;
    const unsigned threads =
        ws->count > 1 && ctx->cpu_threads / ws->count > 1 ? ctx->cpu_threads / ws->count : 1u;
    for (unsigned i = 0; i < ws->count; i++) {
        ws_cuda_state *st = ws_state(ws->w[i].ctx);
        st->stop = &ws->stop;
        st->thread_share = ws->count > 1 ? threads : 0;
    }
    /* Worker 0 on the calling thread; a thread that cannot be started runs
     * its worker on the calling thread too (ws_parallel_run), which only
     * serialises the phase: every job is taken from a shared counter. */
    ws_parallel_run(ws->count, ws_worker_main, ws);
    for (unsigned i = 0; i < ws->count; i++) {
        ws_cuda_state *st = ws_state(ws->w[i].ctx);
        st->stop = NULL;
        st->thread_share = 0;
    }
    if (ws->status != WARPSORT_OK) return ws_error(ctx, ws->status, "%s", ws->message);
    return WARPSORT_OK;
}

void ws_workers_destroy(warpsort_context_t *ctx) {
    ws_cuda_state *st = ws_state(ctx);
    ws_workers *ws = st->workers;
    if (!ws) return;
    for (unsigned i = 0; i < ws->count; i++)
        if (ws->child[i]) {
            ws_cuda_destroy(ws->child[i]);
            free(ws->child[i]);
        }
    pthread_mutex_destroy(&ws->mu);
    free(ws);
    st->workers = NULL;
}
