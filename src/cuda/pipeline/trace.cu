/*
 * trace.cu - the WARPSORT_TRACE hook (core/test_hooks.h): a host-array
 * call's copies, staging copies, sorts and merges as spans, appended to a CSV
 * file (call, lane, what, start_ms, end_ms) when the call returns;
 * bench/plot.py --timeline draws them. Off, it costs a branch per span.
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

/* Starts the call's trace when WARPSORT_TRACE names a file. Never fails the
 * call: a trace that cannot be set up is skipped. */
void ws_trace_start(warpsort_context_t *ctx, ws_pipe *p) {
    ws_trace *t = &p->trace;
    const char *path = ctx->hooks.trace_path;
    t->path = NULL;
    t->count = t->dropped = 0;
    if (!path || !path[0]) return;
    if (!t->span) {
        t->ev = (cudaEvent_t *)calloc(2 * WS_TRACE_MAX, sizeof *t->ev);
        t->span = (ws_span *)calloc(WS_TRACE_MAX, sizeof *t->span);
        if (!t->ev || !t->span || cudaEventCreate(&t->base) != cudaSuccess) {
            (void)cudaGetLastError();
            ws_trace_free(t);
            return;
        }
    }
    if (cudaEventRecord(t->base, ws_state(ctx)->stream) != cudaSuccess ||
        cudaEventSynchronize(t->base) != cudaSuccess) {
        (void)cudaGetLastError();
        return;
    }
    t->host_base = ws_now_ms();
    t->path = path;
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
    sp->t0 = t0 - t->host_base;
    sp->t1 = ws_now_ms() - t->host_base;
    sp->ev = ~0u;
}

/* Appends the call's spans to the trace file; the streams are idle. */
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
        for (unsigned i = 0; i < t->count; i++) {
            ws_span *sp = &t->span[i];
            if (!sp->lane) continue; /* a device span whose end was never recorded */
            if (sp->ev != ~0u) {
                float a = 0, b = 0;
                if (cudaEventElapsedTime(&a, t->base, t->ev[sp->ev]) != cudaSuccess ||
                    cudaEventElapsedTime(&b, t->base, t->ev[sp->ev + 1]) != cudaSuccess) {
                    (void)cudaGetLastError();
                    continue;
                }
                sp->t0 = a;
                sp->t1 = b;
            }
            fprintf(f, "%u,%s,%s,%.4f,%.4f\n", call, sp->lane, sp->what, sp->t0, sp->t1);
        }
        if (t->dropped) fprintf(f, "# call %u: %u spans dropped\n", call, t->dropped);
        fclose(f);
    }
    t->path = NULL;
}
