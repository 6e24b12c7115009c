/*
 * trace.cu - the WARPSORT_TRACE hook (core/test_hooks.h): a host-array
 * call's copies, staging copies, sorts and merges as spans, appended to a CSV
 * file (call, lane, what, start_ms, end_ms) when the call returns;
 * bench/plot.py --timeline draws them. Off, it costs a branch per span and
 * allocates nothing.
 *
 * Every worker of the call is traced (workers.cu). The calling context's
 * pipeline starts the call's trace (ws_trace_start); every other worker's
 * pipeline joins it when the call hands the worker its part (ws_trace_join)
 * and records its spans into its own buffer, on its own thread: no buffer is
 * written by two threads.
 *
 * One time base: time zero is the host clock (CLOCK_MONOTONIC, one clock for
 * the whole process) once the calling context's base event has completed.
 * Events of different devices cannot be compared, so every trace records a
 * base event of its own on its own device's stream, waits for it and notes
 * the host clock then; a device span's times are its events' times after
 * that base plus the base's host time less time zero. Host spans read the
 * host clock. A base's host time trails its event by the host's wake-up from
 * cudaEventSynchronize (microseconds), so a device's spans may sit that much
 * late. A trace that cannot be set up on a device (allocation, event) is
 * skipped for that device; the call goes on.
 *
 * Lanes name the worker's device: "dev<D> <lane>", lane one of phase, host,
 * h2d, compute, d2h; "dev<D>.w<I> <lane>" when the WARPSORT_TEST_OOC_WORKERS
 * hook puts workers I = 0, 1, ... on one device D. The calling thread's own
 * steps (faulting the scratch in, the copy back) are on the lanes of the
 * context's device, its worker or not.
 *
 * The file is written once, by the calling thread when the call returns and
 * its workers have joined, grouped per worker: the calling context's spans,
 * then each other worker's in worker order, each group in the order its
 * spans began. Readers that want time order sort by start_ms. A group that
 * lost spans (more than WS_TRACE_MAX, or an event that could not be read)
 * says how many in a comment line "# call C: PREFIX: N spans dropped".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pipe.h"

static double ws_now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

void ws_trace_free(ws_trace *t) {
    for (unsigned i = 0; t->ev && i < 2 * WS_TRACE_MAX; i++)
        if (t->ev[i]) (void)cudaEventDestroy(t->ev[i]);
    if (t->base) (void)cudaEventDestroy(t->base);
    free(t->ev);
    free(t->span);
    memset(t, 0, sizeof *t);
}

/* Arms t on device `device` (current) for a call: buffers on first use, the
 * base event recorded on s and waited for, the host clock then. 0: t stays
 * off (the reason cleared). */
static int ws_trace_arm(ws_trace *t, int device, unsigned worker, cudaStream_t s) {
    t->path = NULL;
    t->count = t->dropped = 0;
    t->njoined = 0;
    if (!t->span) {
        t->ev = (cudaEvent_t *)calloc(2 * WS_TRACE_MAX, sizeof *t->ev);
        t->span = (ws_span *)calloc(WS_TRACE_MAX, sizeof *t->span);
        if (!t->ev || !t->span || cudaEventCreate(&t->base) != cudaSuccess) {
            (void)cudaGetLastError();
            ws_trace_free(t);
            return 0;
        }
    }
    if (cudaEventRecord(t->base, s) != cudaSuccess ||
        cudaEventSynchronize(t->base) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    t->host_base = ws_now_ms();
    t->device = device;
    if (worker == ~0u)
        snprintf(t->prefix, sizeof t->prefix, "dev%d", device);
    else
        snprintf(t->prefix, sizeof t->prefix, "dev%d.w%u", device, worker);
    return 1;
}

/* Starts the call's trace when WARPSORT_TRACE names a file; its base is the
 * call's time zero. Never fails the call: a trace that cannot be set up is
 * skipped. */
void ws_trace_start(warpsort_context_t *ctx, ws_pipe *p) {
    ws_trace *t = &p->trace;
    const char *path = ctx->hooks.trace_path;
    t->path = NULL;
    t->njoined = 0;
    if (!path[0]) return;
    /* With the workers hook, the context is worker 0 of its device. */
    if (!ws_trace_arm(t, ctx->device, ctx->hooks.ooc_workers ? 0u : ~0u, ws_state(ctx)->stream))
        return;
    t->origin = t->host_base;
    t->path = path;
}

void ws_trace_join(ws_pipe *caller, warpsort_context_t *wctx, ws_pipe *wp, unsigned worker) {
    ws_trace *c = &caller->trace, *t = &wp->trace;
    /* Off, the caller itself, joined already (a second out-of-core attempt
     * of the call), or no room. */
    if (!c->path || t == c || t->path || c->njoined == WS_TRACE_JOINED) return;
    if (!ws_trace_arm(t, wctx->device, worker, ws_state(wctx)->stream)) return;
    t->origin = c->origin;
    t->path = c->path;
    c->joined[c->njoined++] = t;
}

/* A device span: begin records its first event on stream s (returns the
 * span, ~0u when off or full), end its second. */
unsigned ws_trace_dev_begin(ws_pipe *p, cudaStream_t s) {
    ws_trace *t = &p->trace;
    if (!t->path) return ~0u;
    if (t->count == WS_TRACE_MAX) {
        t->dropped++;
        return ~0u;
    }
    const unsigned i = t->count;
    for (unsigned e = 2 * i; e < 2 * i + 2; e++)
        if (!t->ev[e] && cudaEventCreate(&t->ev[e]) != cudaSuccess) {
            (void)cudaGetLastError();
            t->ev[e] = NULL;
            t->dropped++;
            return ~0u;
        }
    if (cudaEventRecord(t->ev[2 * i], s) != cudaSuccess) {
        (void)cudaGetLastError();
        return ~0u;
    }
    t->count++;
    t->span[i].ev = 2 * i;
    t->span[i].lane = t->span[i].what = NULL; /* set by end */
    return i;
}
void ws_trace_dev_end(ws_pipe *p, unsigned i, cudaStream_t s, const char *lane, const char *what) {
    ws_trace *t = &p->trace;
    if (i == ~0u || !t->path) return;
    if (cudaEventRecord(t->ev[2 * i + 1], s) != cudaSuccess) {
        (void)cudaGetLastError();
        return;
    }
    t->span[i].lane = lane;
    t->span[i].what = what;
}
/* A host span that began at t0 (ws_trace_now) ends now. */
double ws_trace_now(const ws_pipe *p) { return p->trace.path ? ws_now_ms() : 0.0; }
void ws_trace_host(ws_pipe *p, double t0, const char *lane, const char *what) {
    ws_trace *t = &p->trace;
    if (!t->path) return;
    if (t->count == WS_TRACE_MAX) {
        t->dropped++;
        return;
    }
    ws_span *sp = &t->span[t->count++];
    sp->lane = lane;
    sp->what = what;
    sp->t0 = t0 - t->origin;
    sp->t1 = ws_now_ms() - t->origin;
    sp->ev = ~0u;
}

/* One worker's spans as rows of call `call`: device spans read on its own
 * device (made current for it), moved onto the call's time base. */
static void ws_trace_write(FILE *f, unsigned call, const ws_trace *t) {
    ws_device_guard g;
    const int on_device = ws_enter_device(t->device, &g) == cudaSuccess;
    if (!on_device) (void)cudaGetLastError();
    const double shift = t->host_base - t->origin;
    unsigned lost = t->dropped;
    for (unsigned i = 0; i < t->count; i++) {
        const ws_span *sp = &t->span[i];
        if (!sp->lane) { /* a device span whose end was never recorded */
            lost++;
            continue;
        }
        double t0 = sp->t0, t1 = sp->t1;
        if (sp->ev != ~0u) {
            float a = 0, b = 0;
            if (!on_device || cudaEventElapsedTime(&a, t->base, t->ev[sp->ev]) != cudaSuccess ||
                cudaEventElapsedTime(&b, t->base, t->ev[sp->ev + 1]) != cudaSuccess) {
                (void)cudaGetLastError();
                lost++;
                continue;
            }
            t0 = shift + a;
            t1 = shift + b;
        }
        fprintf(f, "%u,%s %s,%s,%.4f,%.4f\n", call, t->prefix, sp->lane, sp->what, t0, t1);
    }
    if (lost) fprintf(f, "# call %u: %s: %u spans dropped\n", call, t->prefix, lost);
    ws_leave_device(&g);
}

/* Appends the call's spans, every worker's, to the trace file; the workers
 * have joined and their streams are idle. */
void ws_trace_finish(ws_pipe *p) {
    ws_trace *t = &p->trace;
    if (!t->path) return;
    /* The call's number: one past the file's last, so that every context
     * (and process) appends to one file without clashes and without a
     * counter of the library's own. */
    unsigned call = 0;
    FILE *f = fopen(t->path, "a+");
    if (f) {
        char line[256];
        unsigned c;
        rewind(f);
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "%u,", &c) == 1 && c + 1 > call) call = c + 1;
        fseek(f, 0, SEEK_END);
        if (ftell(f) == 0) fprintf(f, "call,lane,what,start_ms,end_ms\n");
        ws_trace_write(f, call, t);
        for (unsigned i = 0; i < t->njoined; i++) ws_trace_write(f, call, t->joined[i]);
        fclose(f);
    }
    for (unsigned i = 0; i < t->njoined; i++) t->joined[i]->path = NULL;
    t->njoined = 0;
    t->path = NULL;
}
