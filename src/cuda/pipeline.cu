/*
 * pipeline.cu - host arrays: a pinned ring, copy streams, pieces sorted as
 * they arrive, and arrays larger than the device (out of core).
 *
 * In core (the workspace fits the device budget). Three streams: h2d and d2h
 * (created here, non-blocking) and the context's stream for compute. The
 * array is cut into P pieces (a power of two up to 8, each at least half a
 * ring slot; fewer when the workspace would not fit):
 *
 *   host threads  | stage c0 | stage c1 | stage c2 | ...          (pageable only)
 *   h2d           |   | c0 DMA | c1 DMA | c2 DMA | ... piece 7 |
 *   compute       |        | sort p0 | sort p1 merge(0,1) | ... | sort p7 merges | 
 *   d2h / host    |                                             | copy out ........ |
 *
 * Pageable memory is copied into ring slot s by cpu_threads host threads
 * (streaming stores, 256 KiB steps from a shared counter: the copies are
 * bound by host memory traffic) while the copy engine moves slot s-1 (4
 * slots, an event per slot says when the DMA that used it is done). Pinned
 * (or registered) memory is copied directly, one cudaMemcpyAsync per piece
 * and array. Piece i is sorted by
 * the device sort (ws_sort_any, a black box) as soon as its copy has
 * landed, while piece i+1 copies in; pairs of runs are merged by a merge-path
 * kernel as soon as both halves are sorted (a binary tree: log2 P levels
 * ping-ponging between buffers A and B). So when the last byte has arrived,
 * what is left on the compute stream is the last piece's sort and the merges
 * that depend on it: with P = 8 about 1/8 of the sort plus three merges of
 * 1/4, 1/2 and all of the array. Bus limit: n x bytes / H2D + n x bytes /
 * D2H; this tail is the gap to it. WARPSORT_TRACE=FILE records every
 * span of it (bench/plot.py --timeline draws them).
 *
 * Failure safety: the host waits for the compute stream's last event before
 * enqueuing any copy into the caller's arrays, so every error (allocation,
 * launch, asynchronous fault) surfaces while they are untouched; jobs in
 * one piece with only direct copies (small, or pinned) instead queue the
 * copy out behind the sort on the compute stream, which a fault stops (it
 * is sticky). Copy-out
 * therefore overlaps nothing on the device side for pinned memory; for
 * pageable memory the DMA into ring slot k+1 overlaps the host threads
 * copying slot k out. Hook: splitting the final merge into output ranges
 * with an event each, and letting pinned copy-out wait on those, would hide
 * the final merge too, at the price of this guarantee.
 *
 * Out of core (workspace larger than the budget): phase 1 sorts runs of R
 * items (R the largest whose in-core workspace fits, in one piece and in
 * eight; a whole number of blocks) through the in-core path above into host
 * scratch S1. Phase 2 cuts the output into ranges of R items at exact
 * ranks: the total order is (key, run, position), so a split at rank k is
 * found by a binary search over the key bits (64 steps) with binary
 * searches in every run, and equal keys are dealt out in run order (stable;
 * a run of equal keys longer than R is simply split). Each range gathers
 * its pieces of every run (the in-core path again: copies in, sorted and
 * merged on the device) and lands in blocks of S1 that every range so far
 * has read to the end (runs are read front to back), or in a few spare
 * blocks; a table says where each output block went. The last step copies
 * the blocks, in order, into the caller's arrays, so a failure in either
 * phase leaves them as they were. Host memory: n x item bytes plus
 * (runs + 3) blocks of a ring slot's worth of keys (was 2 n x item bytes
 * with a second scratch array). Hook: phase 2 re-sorts each range from
 * scratch; a K-way merge of its pieces (they are sorted runs) would do less
 * work.
 */
#include <cuda_runtime.h>

#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif
#include <type_traits>

#include "warpsort/key_traits.cuh"
#include "pipeline.h"
extern "C" {
#include "cpu/cpu_parallel.h"

using warpsort::decode;
using warpsort::encode;
using warpsort::is_value;
using warpsort::key_codec;
using warpsort::no_value;
}

#define WS_RING_SLOTS 4u
#define WS_RING_DEFAULT_BYTES ((size_t)128 << 20) /* 4 x 32 MiB */
#define WS_MAX_PIECES 8u
/* Pageable jobs up to min(this, one slot) go through the driver's own
 * staging, as before the pipeline: no ring, no threads, one copy each way. */
#define WS_DIRECT_MAX_BYTES ((size_t)4 << 20)
/* Each host thread copies at least this much per slot. */
#define WS_COPY_GRAIN ((size_t)1 << 20)
/* Out of core: smallest run worth the trip (a budget below its workspace is
 * refused as too small). */
#define WS_OOC_MIN_RUN ((size_t)4096)
/* Merge kernel shape: 256 threads x 8 items, static shared memory up to
 * 2048 x (8 + 8) bytes = 32 KiB. */
#define WS_MERGE_THREADS 256
#define WS_MERGE_ITEMS 8
#define WS_MERGE_TILE (WS_MERGE_THREADS * WS_MERGE_ITEMS)

static size_t ws_align256(size_t x) { return (x + 255) & ~(size_t)255; }

/* WARPSORT_TRACE=FILE: every copy, staging memcpy, sort and merge of a
 * host-array call is timed, device work by event pairs on its stream, host
 * work by the host clock, both from a base event the host waits for at the
 * start of the call; the call's spans are appended to FILE as CSV (call,
 * lane, what, start_ms, end_ms) when it returns. bench/plot.py --timeline
 * draws them. Off, the cost is one getenv per call. */
#define WS_TRACE_MAX 16384u
struct ws_span {
    const char *lane, *what;
    double t0, t1; /* host spans: ms from the base; device spans: set at the end */
    unsigned ev;   /* device spans: events ev and ev + 1; ~0u for host spans */
};
struct ws_trace {
    const char *path; /* NULL: off for this call */
    cudaEvent_t base;
    cudaEvent_t *ev; /* 2 x WS_TRACE_MAX timing events, created on first use */
    ws_span *span;
    unsigned count, dropped;
    double host_base;
};

struct ws_pipe {
    ws_trace trace;
    cudaStream_t h2d, d2h;
    cudaEvent_t slot_ev[WS_RING_SLOTS];  /* last DMA that used the slot */
    cudaEvent_t piece_ev[WS_MAX_PIECES]; /* piece i has landed on the device */
    cudaEvent_t start_ev;                /* earlier work on the context's stream */
    cudaEvent_t done_ev;                 /* every sort and merge of a job */
    unsigned char *ring;                 /* WS_RING_SLOTS x slot_bytes, pinned */
    size_t slot_bytes;
    unsigned next_slot;
    cudaStream_t in_s, out_s; /* the job's direct copies: h2d and d2h, or the compute stream */
    ws_pool *pool; /* staging threads, started with the ring */
    int use_register; /* WARPSORT_HOST_REGISTER=1: cudaHostRegister pageable arrays */
    int streaming;    /* staging by ws_copy_streaming; WARPSORT_STAGING_STORES=memcpy: memcpy */
};

static ws_cuda_state *ws_state(const warpsort_context_t *ctx) {
    return (ws_cuda_state *)ctx->cuda;
}

#define WS_TRY(call)                                                    \
    do {                                                                \
        cudaError_t ws_e_ = (call);                                     \
        if (ws_e_ != cudaSuccess) return ws_cuda_fail(ctx, ws_e_, #call); \
    } while (0)
#define WS_CHECK(expr)                                   \
    do {                                                 \
        warpsort_status_t ws_s_ = (expr);                \
        if (ws_s_ != WARPSORT_OK) return ws_s_;          \
    } while (0)

static warpsort_status_t ws_checkpoint(warpsort_context_t *ctx, const char *where) {
    ws_cuda_state *st = ws_state(ctx);
    if (st->test_fail_countdown && --st->test_fail_countdown == 0)
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

/*=== host threads ===*/

/* Threads take WS_COPY_STEP-byte steps of a copy from a shared counter
 * rather than one fixed share each: a worker that wakes late or is
 * preempted (16 workers on 16 cores share them with the driver's threads)
 * then delays one step, not the whole slot while the others wait. */
#define WS_COPY_STEP ((size_t)256 << 10)
struct ws_copy_task {
    unsigned char *dst;
    const unsigned char *src;
    size_t bytes;
    size_t next_step; /* taken with atomics */
    int streaming;
};
static void ws_copy_bytes(int streaming, void *dst, const void *src, size_t bytes) {
    if (streaming)
        ws_copy_streaming(dst, src, bytes);
    else
        memcpy(dst, src, bytes);
}
static void ws_copy_part(void *arg, unsigned t) {
    (void)t;
    ws_copy_task *c = (ws_copy_task *)arg;
    for (;;) {
        const size_t b = __atomic_fetch_add(&c->next_step, 1, __ATOMIC_RELAXED) * WS_COPY_STEP;
        if (b >= c->bytes) return;
        const size_t len = c->bytes - b < WS_COPY_STEP ? c->bytes - b : WS_COPY_STEP;
        ws_copy_bytes(c->streaming, c->dst + b, c->src + b, len);
    }
}
/* Host threads for a task of `useful` shares: cpu_threads, at most
 * WS_CPU_MAX_THREADS and `useful`, at least 1. */
static unsigned ws_host_threads(const warpsort_context_t *ctx, size_t useful) {
    size_t t = ctx->cpu_threads < WS_CPU_MAX_THREADS ? ctx->cpu_threads : WS_CPU_MAX_THREADS;
    if (t > useful) t = useful;
    return t < 1 ? 1u : (unsigned)t;
}
/* A copy by up to cpu_threads threads (the pipeline's pool when it has
 * one), one per WS_COPY_GRAIN bytes. */
static void ws_host_copy(const warpsort_context_t *ctx, ws_pipe *p, void *dst, const void *src,
                         size_t bytes) {
    const unsigned t = ws_host_threads(ctx, bytes / WS_COPY_GRAIN);
    ws_copy_task c = {(unsigned char *)dst, (const unsigned char *)src, bytes, 0, p->streaming};
    ws_pool_run(p->pool, t, ws_copy_part, &c);
}

/*=== pipeline state ===*/

static size_t ws_slot_bytes(const warpsort_context_t *ctx) {
    const size_t ring = ctx->host_ring_bytes ? ctx->host_ring_bytes : WS_RING_DEFAULT_BYTES;
    size_t slot = (ring / WS_RING_SLOTS) & ~(size_t)4095;
    return slot < 4096 ? 4096 : slot;
}

static void ws_trace_free(ws_trace *t);
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
    if (st && st->pipe) {
        ws_pipe_free(st->pipe);
        st->pipe = NULL;
    }
}

/* Streams and events, created once per context (the ring comes later, only
 * when a job stages pageable memory). */
static warpsort_status_t ws_pipe_get(warpsort_context_t *ctx, ws_pipe **out) {
    ws_cuda_state *st = ws_state(ctx);
    if (st->pipe) {
        *out = st->pipe;
        return WARPSORT_OK;
    }
    WS_CHECK(ws_checkpoint(ctx, "pipeline streams"));
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
    const char *reg = getenv("WARPSORT_HOST_REGISTER");
    p->use_register = reg && reg[0] == '1';
    /* Streaming stores by default: the staging copies are bound by the
     * host's memory traffic, and skipping the read of each destination line
     * made 100M pageable u32 keys up to 1.7x faster where that traffic was
     * the bound, 1.1x where it was not (bench/NOTES.md, eighth session). */
    const char *stores = getenv("WARPSORT_STAGING_STORES");
    p->streaming = !(stores && strcmp(stores, "memcpy") == 0);
    p->slot_bytes = ws_slot_bytes(ctx);
    st->pipe = p;
    *out = p;
    return WARPSORT_OK;
}

static warpsort_status_t ws_pipe_ring(warpsort_context_t *ctx, ws_pipe *p) {
    if (p->ring) return WARPSORT_OK;
    WS_CHECK(ws_checkpoint(ctx, "pinned ring"));
    void *ring = NULL;
    cudaError_t err = cudaHostAlloc(&ring, WS_RING_SLOTS * p->slot_bytes, cudaHostAllocDefault);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        return ws_error(ctx, WARPSORT_OUT_OF_MEMORY, "cannot allocate a pinned ring of %u x %zu bytes: %s",
                        WS_RING_SLOTS, p->slot_bytes, cudaGetErrorString(err));
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
static void ws_drain(warpsort_context_t *ctx, ws_pipe *p) {
    (void)cudaStreamSynchronize(ws_state(ctx)->stream);
    if (p) {
        (void)cudaStreamSynchronize(p->h2d);
        (void)cudaStreamSynchronize(p->d2h);
    }
    (void)cudaGetLastError();
}

/*=== trace (WARPSORT_TRACE) ===*/

static double ws_now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void ws_trace_free(ws_trace *t) {
    for (unsigned i = 0; t->ev && i < 2 * WS_TRACE_MAX; i++)
        if (t->ev[i]) (void)cudaEventDestroy(t->ev[i]);
    if (t->base) (void)cudaEventDestroy(t->base);
    free(t->ev);
    free(t->span);
    memset(t, 0, sizeof *t);
}

/* Starts the call's trace when WARPSORT_TRACE names a file. Never fails the
 * call: a trace that cannot be set up is skipped. */
static void ws_trace_start(warpsort_context_t *ctx, ws_pipe *p) {
    ws_trace *t = &p->trace;
    const char *path = getenv("WARPSORT_TRACE");
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
static unsigned ws_trace_dev_begin(ws_pipe *p, cudaStream_t s) {
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
static void ws_trace_dev_end(ws_pipe *p, unsigned i, cudaStream_t s, const char *lane,
                             const char *what) {
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
static double ws_trace_now(const ws_pipe *p) { return p->trace.path ? ws_now_ms() : 0.0; }
static void ws_trace_host(ws_pipe *p, double t0, const char *lane, const char *what) {
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
static void ws_trace_finish(ws_pipe *p) {
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

/*=== kernels ===*/

template <typename I>
__global__ void ws_iota_from_kernel(I *out, size_t n, size_t base) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        out[i] = (I)(base + i);
}

/* How many items of a (length na) come first among the first d outputs of
 * merging a and b; ties go to a (stable). */
template <typename KB>
__device__ size_t ws_merge_path(const KB *a, size_t na, const KB *b, size_t nb, size_t d,
                                key_codec c) {
    size_t lo = d > nb ? d - nb : 0, hi = d < na ? d : na;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (encode(a[mid], c) <= encode(b[d - 1 - mid], c))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* bounds[i] = the merge-path split of output i * WS_MERGE_TILE. */
template <typename KB>
__global__ void ws_merge_partition_kernel(const KB *a, size_t na, const KB *b, size_t nb,
                                          size_t nbounds, size_t *bounds, key_codec c) {
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nbounds) return;
    size_t d = i * (size_t)WS_MERGE_TILE;
    if (d > na + nb) d = na + nb;
    bounds[i] = ws_merge_path(a, na, b, nb, d, c);
}

/* One output tile per block: its slices of a and b go to shared memory as
 * ordered bits (coalesced), every thread merges WS_MERGE_ITEMS outputs from
 * its own split, the tile goes back through shared memory (coalesced),
 * decoded. Ties go to a everywhere, so the merge is stable. */
template <typename KB, typename V>
__global__ void __launch_bounds__(WS_MERGE_THREADS)
    ws_merge_kernel(const KB *a, const V *av, size_t na, const KB *b, const V *bv, size_t nb,
                    const size_t *bounds, KB *out, V *outv, key_codec c) {
    constexpr bool HAS_V = is_value<V>::value;
    __shared__ KB sk[WS_MERGE_TILE];
    __shared__ V sv[HAS_V ? WS_MERGE_TILE : 1];
    const size_t o0 = (size_t)blockIdx.x * WS_MERGE_TILE;
    const size_t total = na + nb;
    const size_t o1 = total - o0 < (size_t)WS_MERGE_TILE ? total : o0 + WS_MERGE_TILE;
    const size_t a0 = bounds[blockIdx.x], a1 = bounds[blockIdx.x + 1];
    const size_t b0 = o0 - a0;
    const int la = (int)(a1 - a0);
    const int count = (int)(o1 - o0);
    const int lb = count - la;
    const int t = (int)threadIdx.x;
    for (int e = t; e < count; e += WS_MERGE_THREADS) {
        if (e < la) {
            sk[e] = encode(a[a0 + e], c);
            if constexpr (HAS_V) sv[e] = av[a0 + e];
        } else {
            sk[e] = encode(b[b0 + (e - la)], c);
            if constexpr (HAS_V) sv[e] = bv[b0 + (e - la)];
        }
    }
    __syncthreads();
    /* This thread's split inside the tile: b's slice starts at sk[la]. */
    const int d = t * WS_MERGE_ITEMS < count ? t * WS_MERGE_ITEMS : count;
    int lo = d > lb ? d - lb : 0, hi = d < la ? d : la;
    while (lo < hi) {
        const int mid = (lo + hi) >> 1;
        if (sk[mid] <= sk[la + d - 1 - mid])
            lo = mid + 1;
        else
            hi = mid;
    }
    int ia = lo, ib = la + (d - lo);
    KB rk[WS_MERGE_ITEMS];
    V rv[WS_MERGE_ITEMS];
#pragma unroll
    for (int i = 0; i < WS_MERGE_ITEMS; i++) {
        if (d + i < count) {
            const bool take_a = ia < la && (ib >= count || sk[ia] <= sk[ib]);
            const int src = take_a ? ia : ib;
            rk[i] = sk[src];
            if constexpr (HAS_V) rv[i] = sv[src];
            ia += take_a;
            ib += !take_a;
        }
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < WS_MERGE_ITEMS; i++) {
        if (d + i < count) {
            sk[d + i] = rk[i];
            if constexpr (HAS_V) sv[d + i] = rv[i];
        }
    }
    __syncthreads();
    for (int e = t; e < count; e += WS_MERGE_THREADS) {
        out[o0 + e] = decode(sk[e], c);
        if constexpr (HAS_V) outv[o0 + e] = sv[e];
    }
}

template <typename KB, typename V>
static cudaError_t ws_merge_launch(const void *ak, const void *av, size_t na, const void *bk,
                                   const void *bv, size_t nb, void *ok, void *ov, size_t *bounds,
                                   key_codec c, cudaStream_t s) {
    const size_t blocks = (na + nb + WS_MERGE_TILE - 1) / WS_MERGE_TILE;
    if (!blocks) return cudaSuccess;
    const size_t nbounds = blocks + 1;
    ws_merge_partition_kernel<KB><<<(unsigned)((nbounds + 255) / 256), 256, 0, s>>>(
        (const KB *)ak, na, (const KB *)bk, nb, nbounds, bounds, c);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) return err;
    ws_merge_kernel<KB, V><<<(unsigned)blocks, WS_MERGE_THREADS, 0, s>>>(
        (const KB *)ak, (const V *)av, na, (const KB *)bk, (const V *)bv, nb, bounds, (KB *)ok,
        (V *)ov, c);
    return cudaGetLastError();
}

template <typename KB>
static cudaError_t ws_merge_values(size_t vb, const void *ak, const void *av, size_t na,
                                   const void *bk, const void *bv, size_t nb, void *ok, void *ov,
                                   size_t *bounds, key_codec c, cudaStream_t s) {
    switch (vb) {
    case 0: return ws_merge_launch<KB, no_value>(ak, av, na, bk, bv, nb, ok, ov, bounds, c, s);
    case 4: return ws_merge_launch<KB, uint32_t>(ak, av, na, bk, bv, nb, ok, ov, bounds, c, s);
    default: return ws_merge_launch<KB, uint64_t>(ak, av, na, bk, bv, nb, ok, ov, bounds, c, s);
    }
}

/*=== one job on the device ===*/

/* A job's input: one or more host segments, read in order (out of core,
 * a range's pieces of every run). */
struct ws_seg {
    const unsigned char *keys;
    const unsigned char *vals; /* NULL with iota or keys only */
    size_t count;
};
/* Out of core, phase 2 writes each range's output into blocks of `items`
 * items: blocks of S1 that every range so far has read to the end, then a
 * few spare ones (ws_out_of_core_with says why a few suffice). Output block
 * j of a job lives at block ids[j]: an S1 block below s1_blocks, else spare
 * block ids[j] - s1_blocks. [0] holds keys, [1] values. */
struct ws_blockmap {
    unsigned char *s1[2], *spare[2];
    size_t s1_blocks, items;
    const size_t *ids;
};
static unsigned char *ws_block_at(const ws_blockmap *m, int values, size_t id, size_t esize) {
    return id < m->s1_blocks ? m->s1[values] + id * m->items * esize
                             : m->spare[values] + (id - m->s1_blocks) * m->items * esize;
}

struct ws_job {
    const ws_seg *segs;
    size_t nsegs;
    int keys_in_pinned, vals_in_pinned;
    int iota;         /* values are iota_base + i (argsort), not read */
    size_t iota_base;
    unsigned char *keys_out, *vals_out; /* host; NULL = not wanted */
    int keys_out_pinned, vals_out_pinned;
    const ws_blockmap *out_map; /* not NULL: the output goes to these blocks (pageable),
                                   keys_out / vals_out only say whether it is wanted */
    size_t n, kb, vb; /* vb 0: keys only */
    warpsort_dtype_t dtype;
    bool stable;
    int desc;
};

/* First item of piece i (i = pieces: n) of a job cut into `pieces`. The
 * pieces are equal but the last two, 3/4 and 1/2 of the others (the last
 * one 1/2 when there are two): after the last byte lands, the device still
 * sorts the last piece and merges it upwards before the copy out may start,
 * and smaller last pieces shorten that tail. In units of a quarter piece. */
static size_t ws_piece_begin(size_t n, unsigned pieces, unsigned i) {
    if (pieces < 2) return i ? n : 0;
    const size_t total = pieces == 2 ? 6 : 4 * (size_t)(pieces - 2) + 5;
    const size_t u = i <= pieces - 2 ? 4 * (size_t)i : i == pieces - 1 ? total - 2 : total;
    return (n / total) * u + (n % total) * u / total;
}

/* Device workspace of a job cut into `pieces`, as byte offsets; the one
 * place that lays it out. pieces = 1 needs what the whole-array staging
 * always needed (warpsort_workspace_size documents it). */
struct ws_job_layout {
    size_t a_keys, a_vals, b_keys, b_vals, bounds, total;
};
static ws_job_layout ws_job_layout_for(const warpsort_context_t *ctx, size_t n, size_t kb,
                                       size_t vb, unsigned pieces) {
    ws_job_layout l;
    /* The sort's own workspace at 0, for the piece that needs most (not
     * always the largest: the paths differ). */
    size_t sort_ws = 0;
    for (unsigned i = 0; i < pieces; i++) {
        const size_t w = ws_sort_workspace_bytes(
            ctx, ws_piece_begin(n, pieces, i + 1) - ws_piece_begin(n, pieces, i), kb, vb);
        if (w > sort_ws) sort_ws = w;
    }
    size_t off = ws_align256(sort_ws);
    l.a_keys = off;
    off += ws_align256(n * kb);
    l.a_vals = off;
    off += ws_align256(n * vb);
    l.b_keys = l.b_vals = l.bounds = off;
    if (pieces > 1) {
        l.b_keys = off;
        off += ws_align256(n * kb);
        l.b_vals = off;
        off += ws_align256(n * vb);
        l.bounds = off;
        off += ws_align256((n / WS_MERGE_TILE + 2) * sizeof(size_t));
    }
    l.total = off;
    return l;
}

/* Most pieces (a power of two up to 8, each at least half a slot: 16 MiB
 * with the default ring) whose workspace fits budget; 0 if not even one
 * piece fits. Pieces let the sort start before the copy in ends, but each
 * costs launches and a merge: A/B on the H100, same run, 10M pinned u32
 * keys took 2.38 ms in 8 pieces of 5 MB (an eighth of a slot, the old
 * floor) and 1.95 ms in 2 of 20 MB; at 100M, 16 pieces of 25 MB against 8
 * of 50 MB gained 1 % on pairs and u64 keys and lost 0.7 % on u32 keys, so
 * the cap stays 8. The test rings (a few KiB) keep many pieces. */
static unsigned ws_pieces_for(const warpsort_context_t *ctx, size_t n, size_t kb, size_t vb, size_t slot, size_t budget) {
    const size_t bytes = n * (kb + vb), piece_min = slot / 2;
    unsigned p = 1;
    while (p < WS_MAX_PIECES && bytes / (2 * (size_t)p) >= piece_min && n >= 2 * (size_t)p) p *= 2;
    for (; p > 0; p /= 2)
        if (ws_job_layout_for(ctx, n, kb, vb, p).total <= budget) return p;
    return 0;
}

/* Host -> device on the h2d stream: directly (pinned source, or a job small
 * enough for the driver's staging), else through the ring slot by slot. */
static warpsort_status_t ws_h2d(warpsort_context_t *ctx, ws_pipe *p, unsigned char *dst,
                                const unsigned char *src, size_t bytes, int direct) {
    if (!bytes) return WARPSORT_OK;
    if (direct) {
        const unsigned sp = ws_trace_dev_begin(p, p->in_s);
        WS_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, p->in_s));
        ws_trace_dev_end(p, sp, p->in_s, "h2d", "copy in");
        return WARPSORT_OK;
    }
    for (size_t off = 0; off < bytes; off += p->slot_bytes) {
        const size_t len = bytes - off < p->slot_bytes ? bytes - off : p->slot_bytes;
        const unsigned s = p->next_slot;
        p->next_slot = (s + 1) % WS_RING_SLOTS;
        unsigned char *slot = p->ring + (size_t)s * p->slot_bytes;
        double t0 = ws_trace_now(p);
        WS_TRY(cudaEventSynchronize(p->slot_ev[s])); /* its last DMA is done */
        ws_trace_host(p, t0, "host", "wait for a slot");
        t0 = ws_trace_now(p);
        ws_host_copy(ctx, p, slot, src + off, len);
        ws_trace_host(p, t0, "host", "stage in");
        const unsigned sp = ws_trace_dev_begin(p, p->h2d);
        WS_TRY(cudaMemcpyAsync(dst + off, slot, len, cudaMemcpyHostToDevice, p->h2d));
        ws_trace_dev_end(p, sp, p->h2d, "h2d", "copy in");
        WS_TRY(cudaEventRecord(p->slot_ev[s], p->h2d));
    }
    return WARPSORT_OK;
}

/* Where byte off of a job's output goes: dst + off, or through the block
 * map; *room is how many bytes from there on stay contiguous. */
static unsigned char *ws_out_at(unsigned char *dst, const ws_blockmap *map, int values,
                                size_t esize, size_t off, size_t *room) {
    if (!map) {
        *room = ~(size_t)0;
        return dst + off;
    }
    const size_t item = off / esize, w = item % map->items;
    *room = (map->items - w) * esize;
    return ws_block_at(map, values, map->ids[item / map->items], esize) + w * esize;
}

/* Device -> host on the d2h stream; through the ring, the DMA into the next
 * WS_RING_SLOTS - 1 slots runs while host threads copy one out. The output
 * is dst, or the blocks of map (values: which array of it; esize: bytes an
 * item). Returns once the bytes are in place. */
static warpsort_status_t ws_d2h(warpsort_context_t *ctx, ws_pipe *p, unsigned char *dst,
                                const unsigned char *src, size_t bytes, int direct,
                                const ws_blockmap *map, int values, size_t esize) {
    if (!bytes) return WARPSORT_OK;
    if (direct) {
        for (size_t off = 0, room = 0; off < bytes;) {
            unsigned char *to = ws_out_at(dst, map, values, esize, off, &room);
            const size_t len = bytes - off < room ? bytes - off : room;
            const unsigned sp = ws_trace_dev_begin(p, p->out_s);
            WS_TRY(cudaMemcpyAsync(to, src + off, len, cudaMemcpyDeviceToHost, p->out_s));
            ws_trace_dev_end(p, sp, p->out_s, "d2h", "copy out");
            off += len;
        }
        WS_TRY(cudaStreamSynchronize(p->out_s));
        return WARPSORT_OK;
    }
    /* Chunk i uses slot (next_slot + i) % SLOTS; a chunk ends at a slot's
     * size or where the output stops being contiguous. */
    const size_t slot = p->slot_bytes;
    struct {
        unsigned char *to;
        size_t len;
    } inflight[WS_RING_SLOTS];
    size_t issued = 0, done = 0, issue_off = 0, room = 0;
    while (done < issued || issue_off < bytes) {
        for (; issue_off < bytes && issued < done + WS_RING_SLOTS; issued++) {
            const unsigned s = (unsigned)((p->next_slot + issued) % WS_RING_SLOTS);
            unsigned char *to = ws_out_at(dst, map, values, esize, issue_off, &room);
            size_t len = bytes - issue_off < slot ? bytes - issue_off : slot;
            if (len > room) len = room;
            WS_TRY(cudaEventSynchronize(p->slot_ev[s])); /* chunk issued - SLOTS is out */
            const unsigned sp = ws_trace_dev_begin(p, p->d2h);
            WS_TRY(cudaMemcpyAsync(p->ring + (size_t)s * slot, src + issue_off, len,
                                   cudaMemcpyDeviceToHost, p->d2h));
            ws_trace_dev_end(p, sp, p->d2h, "d2h", "copy out");
            WS_TRY(cudaEventRecord(p->slot_ev[s], p->d2h));
            inflight[issued % WS_RING_SLOTS].to = to;
            inflight[issued % WS_RING_SLOTS].len = len;
            issue_off += len;
        }
        const unsigned s = (unsigned)((p->next_slot + done) % WS_RING_SLOTS);
        double t0 = ws_trace_now(p);
        WS_TRY(cudaEventSynchronize(p->slot_ev[s]));
        ws_trace_host(p, t0, "host", "wait for a slot");
        t0 = ws_trace_now(p);
        ws_host_copy(ctx, p, inflight[done % WS_RING_SLOTS].to, p->ring + (size_t)s * slot,
                     inflight[done % WS_RING_SLOTS].len);
        ws_trace_host(p, t0, "host", "stage out");
        done++;
    }
    p->next_slot = (unsigned)((p->next_slot + issued) % WS_RING_SLOTS);
    return WARPSORT_OK;
}

/* Items [lo, hi) of the job's input to the device arrays dk, dv. */
static warpsort_status_t ws_copy_in(warpsort_context_t *ctx, ws_pipe *p, const ws_job *j,
                                    size_t lo, size_t hi, unsigned char *dk, unsigned char *dv,
                                    int direct) {
    size_t base = 0;
    for (size_t s = 0; s < j->nsegs && base < hi; s++) {
        const ws_seg *g = &j->segs[s];
        const size_t b = lo > base ? lo : base;
        const size_t e = hi < base + g->count ? hi : base + g->count;
        if (b < e) {
            WS_CHECK(ws_h2d(ctx, p, dk + b * j->kb, g->keys + (b - base) * j->kb,
                            (e - b) * j->kb, direct || j->keys_in_pinned));
            if (j->vb && !j->iota)
                WS_CHECK(ws_h2d(ctx, p, dv + b * j->vb, g->vals + (b - base) * j->vb,
                                (e - b) * j->vb, direct || j->vals_in_pinned));
        }
        base += g->count;
    }
    return WARPSORT_OK;
}

/* Merges sorted [lo, mid) and [mid, hi) of (sk, sv) into the same range of
 * (dk, dv). */
static warpsort_status_t ws_merge_range(warpsort_context_t *ctx, const ws_job *j,
                                        const unsigned char *sk, const unsigned char *sv,
                                        unsigned char *dk, unsigned char *dv, size_t lo,
                                        size_t mid, size_t hi, size_t *bounds,
                                        cudaStream_t stream) {
    const key_codec c = {ws_dtype_kind((int)j->dtype), j->desc};
    const size_t kb = j->kb, vb = j->vb;
    const void *av = vb ? sv + lo * vb : NULL, *bv = vb ? sv + mid * vb : NULL;
    void *ov = vb ? dv + lo * vb : NULL;
    cudaError_t err =
        kb == 4 ? ws_merge_values<uint32_t>(vb, sk + lo * kb, av, mid - lo, sk + mid * kb, bv,
                                            hi - mid, dk + lo * kb, ov, bounds, c, stream)
                : ws_merge_values<uint64_t>(vb, sk + lo * kb, av, mid - lo, sk + mid * kb, bv,
                                            hi - mid, dk + lo * kb, ov, bounds, c, stream);
    if (err != cudaSuccess) return ws_cuda_fail(ctx, err, "ws_merge_kernel");
    return WARPSORT_OK;
}

/* The in-core job (see the file comment): copies in piece by piece, sorts
 * each as it lands, merges the tree, waits for the device, then copies the
 * result out. Nothing reaches keys_out / vals_out before the wait. */
static warpsort_status_t ws_incore(warpsort_context_t *ctx, ws_pipe *p, const ws_job *j,
                                   unsigned pieces) {
    ws_cuda_state *st = ws_state(ctx);
    const cudaStream_t cs = st->stream;
    const size_t n = j->n, kb = j->kb, vb = j->vb;
    const int direct = n * (kb + vb) <= (p->slot_bytes < WS_DIRECT_MAX_BYTES ? p->slot_bytes
                                                                              : WS_DIRECT_MAX_BYTES);
    const ws_job_layout l = ws_job_layout_for(ctx, n, kb, vb, pieces);
    WS_CHECK(ws_checkpoint(ctx, "device workspace"));
    unsigned char *ws = NULL;
    WS_CHECK(ws_acquire(ctx, l.total, &ws));
    const int staged = !direct && (!j->keys_in_pinned || (vb && !j->iota && !j->vals_in_pinned) ||
                                   (j->keys_out && !j->keys_out_pinned) ||
                                   (j->vals_out && !j->vals_out_pinned));
    if (staged) WS_CHECK(ws_pipe_ring(ctx, p));
    /* A job in one piece whose copies are all direct (small, or pinned)
     * runs on the compute stream alone: with one piece there is nothing to
     * overlap, and the stream order replaces the events and the wait for
     * the device (an asynchronous fault is sticky, so the copy out behind it
     * never runs). Small host arrays paid for the hops: 2^10-2^14 pageable
     * keys 6-15 % and 2^20 pinned pairs 3-5 % slower than one copy, one
     * sort, one copy. */
    const int one_stream = !staged && pieces == 1;
    p->in_s = one_stream ? cs : p->h2d;
    p->out_s = one_stream ? cs : p->d2h;

    /* Earlier work on the context's stream may still use the workspace. */
    if (!one_stream) {
        WS_TRY(cudaEventRecord(p->start_ev, cs));
        WS_TRY(cudaStreamWaitEvent(p->h2d, p->start_ev, 0));
    }

    unsigned char *const ak = ws + l.a_keys, *const av = vb ? ws + l.a_vals : NULL;
    unsigned char *const bk = ws + l.b_keys, *const bv = vb ? ws + l.b_vals : NULL;
    size_t *const bounds = (size_t *)(ws + l.bounds);
    unsigned levels = 0;
    while ((1u << levels) < pieces) levels++;

    for (unsigned i = 0; i < pieces; i++) {
        const size_t b = ws_piece_begin(n, pieces, i), e = ws_piece_begin(n, pieces, i + 1);
        WS_CHECK(ws_checkpoint(ctx, "copying a piece in"));
        WS_CHECK(ws_copy_in(ctx, p, j, b, e, ak, av, direct));
        if (!one_stream) WS_TRY(cudaEventRecord(p->piece_ev[i], p->h2d));
        if (j->iota) {
            const unsigned sp = ws_trace_dev_begin(p, cs);
            const unsigned grid = (unsigned)(st->sm_count * 4);
            if (vb == 4)
                ws_iota_from_kernel<uint32_t><<<grid, 256, 0, cs>>>((uint32_t *)(av + b * vb),
                                                                    e - b, j->iota_base + b);
            else
                ws_iota_from_kernel<uint64_t><<<grid, 256, 0, cs>>>((uint64_t *)(av + b * vb),
                                                                    e - b, j->iota_base + b);
            WS_TRY(cudaGetLastError());
            ws_trace_dev_end(p, sp, cs, "compute", "indices");
        }
        if (!one_stream) WS_TRY(cudaStreamWaitEvent(cs, p->piece_ev[i], 0));
        if (e - b > 1) {
            const unsigned sp = ws_trace_dev_begin(p, cs);
            WS_CHECK(ws_sort_any(ctx, ak + b * kb, vb ? av + b * vb : NULL, e - b, j->dtype, vb,
                                 j->stable, j->desc, ws, cs));
            ws_trace_dev_end(p, sp, cs, "compute", "sort a piece");
        }
        /* Level L merges runs of 2^(L-1) pieces; it reads A when L-1 is
         * even (pieces sort in A) and writes B when L is odd. */
        for (unsigned L = 1; L <= levels && (i + 1) % (1u << L) == 0; L++) {
            const unsigned r = (i + 1) / (1u << L) - 1;
            const size_t lo = ws_piece_begin(n, pieces, r << L);
            const size_t mid = ws_piece_begin(n, pieces, (r << L) + (1u << (L - 1)));
            const size_t hi = ws_piece_begin(n, pieces, (r + 1) << L);
            const int src_b = (L - 1) % 2, dst_b = L % 2;
            const unsigned sp = ws_trace_dev_begin(p, cs);
            WS_CHECK(ws_merge_range(ctx, j, src_b ? bk : ak, src_b ? bv : av, dst_b ? bk : ak,
                                    dst_b ? bv : av, lo, mid, hi, bounds, cs));
            ws_trace_dev_end(p, sp, cs, "compute", "merge");
        }
    }
    const unsigned char *fk = levels % 2 ? bk : ak, *fv = levels % 2 ? bv : av;
    WS_TRY(cudaEventRecord(p->done_ev, cs));
    /* The point of no return: every error so far left the caller's arrays
     * alone; wait for the device to finish before the first byte goes back. */
    const double t_wait = ws_trace_now(p);
    if (!one_stream) WS_TRY(cudaEventSynchronize(p->done_ev));
    ws_trace_host(p, t_wait, "host", "wait for the device");
    WS_CHECK(ws_checkpoint(ctx, "writing the result back"));
    if (j->keys_out)
        WS_CHECK(ws_d2h(ctx, p, j->keys_out, fk, n * kb, direct || j->keys_out_pinned, j->out_map,
                        0, kb));
    if (j->vals_out)
        WS_CHECK(ws_d2h(ctx, p, j->vals_out, fv, n * vb, direct || j->vals_out_pinned, j->out_map,
                        1, vb));
    WS_TRY(cudaStreamSynchronize(p->d2h));
    return WARPSORT_OK;
}

/*=== out of core ===*/

static uint64_t ws_host_key(const unsigned char *keys, size_t i, size_t kb, int kind, int desc) {
    if (kb == 4) {
        uint32_t x;
        memcpy(&x, keys + i * 4, 4);
        return ws_to_ordered32(x, kind, desc);
    }
    uint64_t x;
    memcpy(&x, keys + i * 8, 8);
    return ws_to_ordered64(x, kind, desc);
}

/* The sorted runs in host scratch: run q is items [q * run, ...) of keys. */
struct ws_runs {
    const unsigned char *keys;
    size_t n, run, count, kb;
    int kind, desc;
};
static size_t ws_run_len(const ws_runs *r, size_t q) {
    const size_t b = q * r->run;
    return r->n - b < r->run ? r->n - b : r->run;
}
/* First position of run q from `from` on whose ordered key is > v (upper)
 * or >= v. */
static size_t ws_run_bound(const ws_runs *r, size_t q, uint64_t v, int upper, size_t from) {
    const size_t base = q * r->run;
    size_t lo = from, hi = ws_run_len(r, q);
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        const uint64_t k = ws_host_key(r->keys, base + mid, r->kb, r->kind, r->desc);
        if (upper ? k <= v : k < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}
/* split[q] = how many items of run q are among the first k outputs, in the
 * order (key, run, position), given from[q], the same for fewer outputs.
 * Only positions from from[q] on are read: the blocks before them may hold
 * output by now. Clamping every bound at from[q] changes nothing: keys below
 * the earlier split's key lie inside every run's prefix, and items equal to
 * it that the prefix holds are the first in (run, position) order. */
static void ws_split_at(const ws_runs *r, size_t k, const size_t *from, size_t *split) {
    if (k >= r->n) {
        for (size_t q = 0; q < r->count; q++) split[q] = ws_run_len(r, q);
        return;
    }
    /* The smallest ordered key v with more than k items <= v. */
    uint64_t lo = 0, hi = r->kb == 4 ? 0xFFFFFFFFull : ~0ull;
    while (lo < hi) {
        const uint64_t mid = lo + (hi - lo) / 2;
        size_t upto = 0;
        for (size_t q = 0; q < r->count; q++) upto += ws_run_bound(r, q, mid, 1, from[q]);
        if (upto > k)
            hi = mid;
        else
            lo = mid + 1;
    }
    size_t left = k;
    for (size_t q = 0; q < r->count; q++) {
        split[q] = ws_run_bound(r, q, lo, 0, from[q]);
        left -= split[q]; /* items < v: at most k of them */
    }
    /* Items equal to v, dealt out in run order (stable). */
    for (size_t q = 0; q < r->count && left; q++) {
        const size_t equal = ws_run_bound(r, q, lo, 1, split[q]) - split[q];
        const size_t take = equal < left ? equal : left;
        split[q] += take;
        left -= take;
    }
}

/* Largest run whose workspace fits budget both in one piece and in
 * WS_MAX_PIECES (0 if none does). Sized for one piece only, a run took a
 * single piece, so the host waited for the whole run's sort after its copy
 * in (0.41 s of 3.4 s at 2^32 u32 keys under 4 GiB); in eight pieces the
 * sort overlaps the copy and the wait is the last piece and the merges, at
 * the price of a run about 4 % shorter. */
static size_t ws_run_fits(const warpsort_context_t *ctx, size_t m, size_t kb, size_t vb,
                          size_t budget) {
    return ws_job_layout_for(ctx, m, kb, vb, 1).total <= budget &&
           ws_job_layout_for(ctx, m, kb, vb, WS_MAX_PIECES).total <= budget;
}
static size_t ws_run_items(const warpsort_context_t *ctx, size_t n, size_t kb, size_t vb, size_t budget) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo + 1) / 2;
        if (ws_run_fits(ctx, mid, kb, vb, budget))
            lo = mid;
        else
            hi = mid - 1;
    }
    /* The workspace grows with n only roughly (the merge cuts do not):
     * step down until it really fits. */
    while (lo > 0 && !ws_run_fits(ctx, lo, kb, vb, budget)) lo -= lo / 64 + 1;
    return lo;
}

/* Host scratch of the out-of-core sort: tens of GiB written once by the
 * staging threads. With 4 KiB pages their first touch (a fault and a zeroed
 * page per 4 KiB) ran at 5 GB/s and was most of the sort's time; huge pages
 * (madvise: the kernel's default policy is often 'madvise' only) make the
 * faults 512x rarer and the unmap cheap. Elsewhere plain malloc. */
static unsigned char *ws_big_alloc(size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (bytes >= ((size_t)64 << 20)) {
        void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) return NULL;
        (void)madvise(m, bytes, MADV_HUGEPAGE); /* a hint: fine if refused */
        return (unsigned char *)m;
    }
#endif
    return (unsigned char *)malloc(bytes ? bytes : 1);
}
static void ws_big_free(unsigned char *m, size_t bytes) {
    if (!m) return;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (bytes >= ((size_t)64 << 20)) {
        (void)munmap(m, bytes);
        return;
    }
#endif
    free(m);
}

/* Faults the scratch in before the sort writes it, one contiguous share
 * per thread. Measured on the H100 machine (a VM, THP on madvise), 2^32
 * u32 keys: faults taken inside the staging copies (16 threads on
 * neighbouring 2 MiB pieces of each slot, so on the same page-table page
 * and its lock) held the copy-out to 3-11 ms per 32 MiB slot instead of
 * 1 ms; up front in 1 GiB shares the 32 GiB take 0.75 s when the VM has
 * used that memory before (5-6 s the first time: the hypervisor backs it),
 * and faulting 64 MiB steps while waiting for the device was slower. */
struct ws_touch_task {
    unsigned char *m;
    size_t bytes;
    unsigned threads;
};
static void ws_touch_part(void *arg, unsigned t) {
    const ws_touch_task *c = (const ws_touch_task *)arg;
    const size_t b = ws_chunk_begin(c->bytes, c->threads, t);
    const size_t e = ws_chunk_begin(c->bytes, c->threads, t + 1);
    for (size_t i = b; i < e; i += 4096) ((volatile unsigned char *)c->m)[i] = 0;
}
static void ws_prefault(const warpsort_context_t *ctx, ws_pipe *p, unsigned char *m, size_t bytes) {
    if (!m || !bytes) return;
    const unsigned t = ws_host_threads(ctx, ~(size_t)0);
    ws_touch_task c = {m, bytes, t};
    ws_pool_run(p->pool, t, ws_touch_part, &c);
}

struct ws_scratch {
    unsigned char *s1k, *s1v, *spk, *spv; /* S1 and the spare blocks */
    size_t kbytes, vbytes, spkbytes, spvbytes;
    size_t *cur, *next, *released; /* per run */
    size_t *ids, *free_ids;        /* output block -> block; the unused free blocks */
    ws_seg *segs;
};
static void ws_scratch_free(ws_scratch *s) {
    ws_big_free(s->s1k, s->kbytes);
    ws_big_free(s->s1v, s->vbytes);
    ws_big_free(s->spk, s->spkbytes);
    ws_big_free(s->spv, s->spvbytes);
    free(s->cur);
    free(s->next);
    free(s->released);
    free(s->ids);
    free(s->free_ids);
    free(s->segs);
}

/* The final copy: output block j (B items, the last one shorter) from its
 * block into the caller's array, blocks dealt out to the threads. */
struct ws_gather_task {
    unsigned char *dst;
    const ws_blockmap *map;
    int values, streaming;
    size_t esize, n, blocks;
    size_t next_block; /* taken with atomics, as in ws_copy_part */
};
static void ws_gather_part(void *arg, unsigned t) {
    (void)t;
    ws_gather_task *g = (ws_gather_task *)arg;
    for (;;) {
        const size_t j = __atomic_fetch_add(&g->next_block, 1, __ATOMIC_RELAXED);
        if (j >= g->blocks) return;
        const size_t first = j * g->map->items;
        const size_t len = g->n - first < g->map->items ? g->n - first : g->map->items;
        ws_copy_bytes(g->streaming, g->dst + first * g->esize,
                      ws_block_at(g->map, g->values, g->map->ids[j], g->esize), len * g->esize);
    }
}
static void ws_gather(const warpsort_context_t *ctx, ws_pipe *p, unsigned char *dst,
                      const ws_blockmap *map, int values, size_t esize, size_t n) {
    const size_t blocks = (n + map->items - 1) / map->items;
    const unsigned t = ws_host_threads(ctx, blocks);
    ws_gather_task g = {dst, map, values, p->streaming, esize, n, blocks, 0};
    ws_pool_run(p->pool, t, ws_gather_part, &g);
}

static warpsort_status_t ws_out_of_core_with(warpsort_context_t *ctx, ws_pipe *p,
                                             const ws_job *top, size_t budget, ws_scratch *s) {
    const size_t n = top->n, kb = top->kb, vb = top->vb;
    size_t run = ws_run_items(ctx, n, kb, vb, budget);
    if (run < WS_OOC_MIN_RUN) {
        const size_t one = ws_job_layout_for(ctx, WS_OOC_MIN_RUN, kb, vb, 1).total;
        const size_t most = ws_job_layout_for(ctx, WS_OOC_MIN_RUN, kb, vb, WS_MAX_PIECES).total;
        return ws_error(ctx, WARPSORT_OUT_OF_MEMORY,
                        "device budget of %zu bytes is too small: sorting out of core needs at "
                        "least %zu bytes for this key and value size",
                        budget, one > most ? one : most);
    }
    /* Output blocks of B items, a slot of keys; runs (and so ranges) are
     * whole blocks, so every range starts a block. */
    size_t B = p->slot_bytes / kb;
    if (B > run) B = run;
    run -= run % B;
    const size_t count = (n + run - 1) / run;
    const size_t s1_blocks = (n + B - 1) / B;
    /* A range's output needs ceil(size / B) blocks; once it has been read,
     * every run has given back all its blocks but at most one partly read,
     * and the array's last block (short when B does not divide n) is never
     * handed out, so count + 3 spare blocks always suffice. */
    const size_t spares = count + 3;
    WS_CHECK(ws_checkpoint(ctx, "host scratch"));
    s->kbytes = n * kb;
    s->vbytes = n * vb;
    s->spkbytes = top->keys_out ? spares * B * kb : 0;
    s->spvbytes = top->vals_out ? spares * B * vb : 0;
    s->s1k = ws_big_alloc(s->kbytes);
    s->s1v = vb ? ws_big_alloc(s->vbytes) : NULL;
    s->spk = s->spkbytes ? ws_big_alloc(s->spkbytes) : NULL;
    s->spv = s->spvbytes ? ws_big_alloc(s->spvbytes) : NULL;
    s->cur = (size_t *)calloc(count, sizeof(size_t));
    s->next = (size_t *)calloc(count, sizeof(size_t));
    s->released = (size_t *)calloc(count, sizeof(size_t));
    s->ids = (size_t *)calloc(s1_blocks, sizeof(size_t));
    s->free_ids = (size_t *)calloc(s1_blocks + spares, sizeof(size_t));
    s->segs = (ws_seg *)calloc(count, sizeof(ws_seg));
    if (!s->s1k || (vb && !s->s1v) || (s->spkbytes && !s->spk) || (s->spvbytes && !s->spv) ||
        !s->cur || !s->next || !s->released || !s->ids || !s->free_ids || !s->segs)
        return ws_error(ctx, WARPSORT_OUT_OF_MEMORY,
                        "cannot allocate %zu bytes of host scratch to sort %zu items out of core",
                        s->kbytes + s->vbytes + s->spkbytes + s->spvbytes, n);

    /* The pool comes with the ring; the scratch is always staged. */
    WS_CHECK(ws_pipe_ring(ctx, p));
    const double t_touch = ws_trace_now(p);
    ws_prefault(ctx, p, s->s1k, s->kbytes);
    ws_prefault(ctx, p, s->s1v, s->vbytes);
    ws_prefault(ctx, p, s->spk, s->spkbytes);
    ws_prefault(ctx, p, s->spv, s->spvbytes);
    ws_trace_host(p, t_touch, "phase", "fault the scratch in");

    /* Phase 1: runs, each sorted in core into S1. */
    for (size_t q = 0; q < count; q++) {
        const size_t b = q * run, m = n - b < run ? n - b : run;
        ws_seg seg = {top->segs[0].keys + b * kb, top->iota || !vb ? NULL : top->segs[0].vals + b * vb,
                      m};
        ws_job sub = *top;
        sub.segs = &seg;
        sub.nsegs = 1;
        sub.n = m;
        sub.iota_base = top->iota_base + b;
        sub.keys_out = s->s1k + b * kb;
        sub.vals_out = vb ? s->s1v + b * vb : NULL;
        sub.keys_out_pinned = sub.vals_out_pinned = 0;
        const unsigned pieces = ws_pieces_for(ctx, m, kb, vb, p->slot_bytes, budget);
        if (!pieces) return ws_error(ctx, WARPSORT_INTERNAL, "out-of-core run does not fit");
        WS_CHECK(ws_checkpoint(ctx, "sorting a run"));
        const double t0 = ws_trace_now(p);
        WS_CHECK(ws_incore(ctx, p, &sub, pieces));
        ws_trace_host(p, t0, "phase", "sort a run");
    }

    /* Phase 2: ranges of `run` outputs at exact ranks, each gathered from
     * every run and sorted in core into blocks S1 no longer needs (the
     * runs are read front to back) or spare ones. */
    const ws_runs runs = {s->s1k, n, run, count, kb, ws_dtype_kind((int)top->dtype), top->desc};
    const ws_blockmap map = {{s->s1k, s->s1v}, {s->spk, s->spv}, s1_blocks, B, s->ids};
    const size_t last_short = n % B ? s1_blocks - 1 : s1_blocks; /* never handed out */
    size_t nfree = 0;
    for (size_t i = 0; i < spares; i++) s->free_ids[nfree++] = s1_blocks + i;
    for (size_t k0 = 0; k0 < n;) {
        const size_t k1 = n - k0 < run ? n : k0 + run;
        double t0 = ws_trace_now(p);
        ws_split_at(&runs, k1, s->cur, s->next);
        ws_trace_host(p, t0, "phase", "split the runs");
        size_t nsegs = 0;
        for (size_t q = 0; q < count; q++) {
            const size_t c = s->next[q] - s->cur[q];
            if (c) {
                const size_t at = q * run + s->cur[q];
                s->segs[nsegs++] = ws_seg{s->s1k + at * kb, vb ? s->s1v + at * vb : NULL, c};
            }
            /* Run q's blocks read to the end by this range: free once its
             * copy in is done, which is before its copy out starts. */
            for (const size_t done = s->next[q] / B; s->released[q] < done; s->released[q]++) {
                const size_t id = q * (run / B) + s->released[q];
                if (id != last_short) s->free_ids[nfree++] = id;
            }
        }
        const size_t j0 = k0 / B, nb = (k1 - k0 + B - 1) / B;
        if (nfree < nb)
            return ws_error(ctx, WARPSORT_INTERNAL, "out of core: %zu free blocks for %zu", nfree, nb);
        for (size_t j = 0; j < nb; j++) s->ids[j0 + j] = s->free_ids[--nfree];
        ws_blockmap range_map = map;
        range_map.ids = s->ids + j0;
        ws_job sub = *top;
        sub.segs = s->segs;
        sub.nsegs = nsegs;
        sub.n = k1 - k0;
        sub.keys_in_pinned = sub.vals_in_pinned = 0;
        sub.iota = 0; /* the indices were made in phase 1 */
        sub.keys_out_pinned = sub.vals_out_pinned = 0;
        sub.out_map = &range_map; /* keys_out / vals_out: wanted or not, as the caller's */
        const unsigned pieces = ws_pieces_for(ctx, sub.n, kb, vb, p->slot_bytes, budget);
        if (!pieces) return ws_error(ctx, WARPSORT_INTERNAL, "out-of-core range does not fit");
        WS_CHECK(ws_checkpoint(ctx, "sorting a range"));
        t0 = ws_trace_now(p);
        WS_CHECK(ws_incore(ctx, p, &sub, pieces));
        ws_trace_host(p, t0, "phase", "sort a range");
        size_t *t = s->cur;
        s->cur = s->next;
        s->next = t;
        k0 = k1;
    }

    /* Final and complete: only now the caller's arrays change. */
    WS_CHECK(ws_checkpoint(ctx, "writing the result back"));
    const double t_back = ws_trace_now(p);
    if (top->keys_out) ws_gather(ctx, p, top->keys_out, &map, 0, kb, n);
    if (top->vals_out) ws_gather(ctx, p, top->vals_out, &map, 1, vb, n);
    ws_trace_host(p, t_back, "phase", "copy back");
    return WARPSORT_OK;
}

static warpsort_status_t ws_out_of_core(warpsort_context_t *ctx, ws_pipe *p, const ws_job *top,
                                        size_t budget) {
    ws_scratch s;
    memset(&s, 0, sizeof s);
    warpsort_status_t r = ws_out_of_core_with(ctx, p, top, budget, &s);
    ws_scratch_free(&s);
    return r;
}

/*=== entry points ===*/

/* WARPSORT_HOST_REGISTER=1: pins the job's large pageable arrays for the
 * call (cudaHostRegister) instead of staging them; an array that cannot be
 * registered is staged. Registered ranges are listed in reg[] to undo. */
struct ws_registered {
    void *ptr[4];
    unsigned count;
};
static void ws_register_one(void *ptr, size_t bytes, ws_registered *reg, ws_job *j) {
    if (!ptr || !bytes || ws_host_is_pinned(ptr)) return;
    if (cudaHostRegister(ptr, bytes, cudaHostRegisterDefault) != cudaSuccess) {
        (void)cudaGetLastError();
        return;
    }
    reg->ptr[reg->count++] = ptr;
    if ((const void *)j->segs[0].keys == ptr) j->keys_in_pinned = 1;
    if ((const void *)j->segs[0].vals == ptr) j->vals_in_pinned = 1;
    if ((void *)j->keys_out == ptr) j->keys_out_pinned = 1;
    if ((void *)j->vals_out == ptr) j->vals_out_pinned = 1;
}

static warpsort_status_t ws_pipe_run(warpsort_context_t *ctx, ws_job *j) {
    ws_cuda_state *st = ws_state(ctx);
    const int armed = st->test_fail_countdown != 0;
    ws_pipe *p = NULL;
    warpsort_status_t r = ws_pipe_get(ctx, &p);
    if (r != WARPSORT_OK) return r;
    ws_trace_start(ctx, p);

    /* Device budget: the caller's workspace, the configured budget, or the
     * free memory plus what the cached workspace already holds (it is
     * freed before a larger one is allocated), less a sixteenth. */
    size_t budget;
    const int fixed = st->workspace_external || ctx->device_budget_bytes;
    if (st->workspace_external) {
        budget = st->workspace_bytes;
    } else if (ctx->device_budget_bytes) {
        budget = ctx->device_budget_bytes;
    } else if (j->n * (j->kb + j->vb) <= WS_DIRECT_MAX_BYTES &&
               ws_job_layout_for(ctx, j->n, j->kb, j->vb, 1).total <= st->workspace_bytes) {
        budget = st->workspace_bytes; /* small and already fits: skip cudaMemGetInfo */
    } else {
        size_t free_bytes = 0, total = 0;
        WS_TRY(cudaMemGetInfo(&free_bytes, &total));
        budget = free_bytes + st->workspace_bytes;
        budget -= budget / 16;
    }

    ws_registered reg;
    reg.count = 0;
    const size_t bytes_k = j->n * j->kb, bytes_v = j->n * j->vb;
    if (p->use_register && bytes_k + bytes_v > WS_DIRECT_MAX_BYTES) {
        ws_register_one((void *)j->segs[0].keys, bytes_k, &reg, j);
        if (j->vb && !j->iota) ws_register_one((void *)j->segs[0].vals, bytes_v, &reg, j);
        ws_register_one(j->keys_out, bytes_k, &reg, j);
        ws_register_one(j->vals_out, bytes_v, &reg, j);
    }

    const unsigned pieces = ws_pieces_for(ctx, j->n, j->kb, j->vb, p->slot_bytes, budget);
    if (pieces) {
        r = ws_incore(ctx, p, j, pieces);
        if (r != WARPSORT_OK) ws_drain(ctx, p);
        /* No budget was set and the free memory was not there after all
         * (fragmentation, another process): out of core in half of it. */
        if (r == WARPSORT_OUT_OF_MEMORY && !fixed && !armed) {
            r = ws_out_of_core(ctx, p, j, budget / 2);
            if (r == WARPSORT_OK) ctx->last_error[0] = '\0';
        }
    } else if (st->workspace_external) {
        r = ws_error(ctx, WARPSORT_WORKSPACE_TOO_SMALL,
                     "workspace of %zu bytes given, sorting %zu host items needs %zu",
                     st->workspace_bytes, j->n, ws_job_layout_for(ctx, j->n, j->kb, j->vb, 1).total);
    } else {
        r = ws_out_of_core(ctx, p, j, budget);
    }
    if (r != WARPSORT_OK) ws_drain(ctx, p);
    for (unsigned i = 0; i < reg.count; i++) (void)cudaHostUnregister(reg.ptr[i]);
    (void)cudaGetLastError();
    ws_trace_finish(p);
    return r;
}

warpsort_status_t ws_pipe_sort_pairs(warpsort_context_t *ctx, void *keys, void *values, size_t n,
                                     warpsort_dtype_t dtype, size_t value_bytes, unsigned flags) {
    const ws_seg seg = {(const unsigned char *)keys, (const unsigned char *)values, n};
    ws_job j;
    memset(&j, 0, sizeof j);
    j.segs = &seg;
    j.nsegs = 1;
    j.keys_in_pinned = j.keys_out_pinned = ws_host_is_pinned(keys);
    j.vals_in_pinned = j.vals_out_pinned = values ? ws_host_is_pinned(values) : 0;
    j.keys_out = (unsigned char *)keys;
    j.vals_out = (unsigned char *)values;
    j.n = n;
    j.kb = warpsort_dtype_size(dtype);
    j.vb = values ? value_bytes : 0;
    j.dtype = dtype;
    j.stable = (flags & WARPSORT_STABLE) != 0;
    j.desc = (flags & WARPSORT_DESCENDING) != 0;
    return ws_pipe_run(ctx, &j);
}

warpsort_status_t ws_pipe_argsort(warpsort_context_t *ctx, const void *keys, void *indices,
                                  size_t n, warpsort_dtype_t dtype, size_t index_bytes,
                                  unsigned flags) {
    const ws_seg seg = {(const unsigned char *)keys, NULL, n};
    ws_job j;
    memset(&j, 0, sizeof j);
    j.segs = &seg;
    j.nsegs = 1;
    j.keys_in_pinned = ws_host_is_pinned(keys);
    j.iota = 1;
    j.iota_base = 0;
    j.keys_out = NULL; /* argsort leaves the keys alone */
    j.vals_out = (unsigned char *)indices;
    j.vals_out_pinned = ws_host_is_pinned(indices);
    j.n = n;
    j.kb = warpsort_dtype_size(dtype);
    j.vb = index_bytes;
    j.dtype = dtype;
    j.stable = true; /* the indices break ties: equal keys keep input order */
    j.desc = (flags & WARPSORT_DESCENDING) != 0;
    return ws_pipe_run(ctx, &j);
}
