/*
 * pipe.h - what the host pipeline's files share (pipeline.h is its entry
 * for the router). The pipeline calls the leaf (device_sort.h) and the
 * workspace (workspace.h), never the router.
 * Internal; CUDA translation units only.
 */
#ifndef WARPSORT_CUDA_PIPELINE_PIPE_H
#define WARPSORT_CUDA_PIPELINE_PIPE_H

#include <cuda_runtime.h>
#include <stdint.h>

#include "core/pool.h"
#include "cuda/check.cuh"
#include "cuda/device_sort.h"
#include "cuda/state.h"
#include "pipeline.h"

#define WS_RING_SLOTS 4u
#define WS_RING_DEFAULT_BYTES ((size_t)128 << 20) /* 4 x 32 MiB */
#define WS_MAX_PIECES 8u
/* Pageable jobs up to min(this, one slot) go through the driver's own
 * staging: no ring, no threads, one copy each way. */
#define WS_DIRECT_MAX_BYTES ((size_t)4 << 20)
/* Each host thread copies at least this much per slot. */
#define WS_COPY_GRAIN ((size_t)1 << 20)
/* Out of core: smallest run worth the trip (a budget below its workspace is
 * refused as too small). */
#define WS_OOC_MIN_RUN ((size_t)4096)
/* Two-way merge (merge2.cu): 256 threads x 8 items per output tile. */
#define WS_MERGE_THREADS 256
#define WS_MERGE_ITEMS 8
#define WS_MERGE_TILE (WS_MERGE_THREADS * WS_MERGE_ITEMS)

/* The trace (trace.cu, the WARPSORT_TRACE hook): every copy, staging memcpy,
 * sort and merge of a host-array call on every worker, device work by event
 * pairs on its stream, host work by the host clock. Each worker's pipeline
 * has a trace of its own, written only by its thread; the calling context's
 * holds the call's (path, time zero) and lists the others'. A trace's base
 * event on its own device, and the host clock once the host saw it complete,
 * put its device's events on the call's host time base. */
/* Spans per worker and call: six per ring slot and phase out of core, so
 * 2^34 u32 keys on one device (2 x 2048 slots of 32 MiB) need about 25k. */
#define WS_TRACE_MAX 65536u
#define WS_TRACE_JOINED WARPSORT_MAX_DEVICES
struct ws_span {
    const char *lane, *what;
    double t0, t1; /* host spans: ms from the call's time zero; device spans: set at the end */
    unsigned ev;   /* device spans: events ev and ev + 1; ~0u for host spans */
};
struct ws_trace {
    const char *path; /* NULL: off for this call */
    char prefix[24];  /* the lanes': "dev<D>", or "dev<D>.w<I>" for workers sharing D */
    int device;       /* the device its events are on */
    cudaEvent_t base; /* recorded when the call (or this worker's part) began */
    cudaEvent_t *ev;  /* 2 x WS_TRACE_MAX timing events, created on first use */
    ws_span *span;    /* WS_TRACE_MAX, allocated on first use */
    unsigned count, dropped;
    double host_base;                  /* host clock (ms) once base had completed */
    double origin;                     /* host clock (ms) of the call's time zero */
    ws_trace *joined[WS_TRACE_JOINED]; /* the calling context's: the other workers' */
    unsigned njoined;
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
    ws_pool *pool;            /* staging threads, started with the ring */
};

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
struct ws_job {
    const ws_seg *segs;
    size_t nsegs;
    int keys_in_pinned, vals_in_pinned;
    int iota; /* values are iota_base + i (argsort), not read */
    size_t iota_base;
    unsigned char *keys_out, *vals_out; /* host; NULL = not wanted */
    int keys_out_pinned, vals_out_pinned;
    const ws_blockmap *out_map; /* not NULL: the output goes to these blocks (pageable),
                                   keys_out / vals_out only say whether it is wanted */
    /* Not NULL: called once the device is done with the job, so every input
     * byte has been read, and before the first output byte is written; it may
     * wait, fills out_map's ids (out of core, phase 2: the blocks to land in),
     * and an error from it fails the job with nothing written. */
    warpsort_status_t (*before_out)(void *arg);
    void *before_out_arg;
    size_t n, kb, vb; /* vb 0: keys only */
    warpsort_dtype_t dtype;
    bool stable;
    int desc;
};

/* The job of items [b, b + m) of top's input (one segment; argsort's
 * indices go on from b), its segment written to *seg; outputs as top's,
 * for the caller to point elsewhere. */
static inline ws_job ws_job_slice(const ws_job *top, size_t b, size_t m, ws_seg *seg) {
    seg->keys = top->segs[0].keys + b * top->kb;
    seg->vals = top->iota || !top->vb ? NULL : top->segs[0].vals + b * top->vb;
    seg->count = m;
    ws_job sub = *top;
    sub.segs = seg;
    sub.nsegs = 1;
    sub.n = m;
    sub.iota_base = top->iota_base + b;
    return sub;
}

/* Device workspace of a job cut into `pieces`, as byte offsets, and the
 * plan of every piece's sort: the one place that lays a job out, for sizing
 * and for use. */
struct ws_job_layout {
    ws_plan_t plan[WS_MAX_PIECES];
    size_t a_keys, a_vals, b_keys, b_vals, bounds, total;
};

/*--- pipe.cu: state, ring, checkpoints ---*/
warpsort_status_t ws_checkpoint(warpsort_context_t *ctx, const char *where);
int ws_host_is_pinned(const void *p);
warpsort_status_t ws_pipe_get(warpsort_context_t *ctx, ws_pipe **out);
warpsort_status_t ws_pipe_ring(warpsort_context_t *ctx, ws_pipe *p);
void ws_drain(warpsort_context_t *ctx, ws_pipe *p);

/*--- staging.cu: host threads and copies through the ring ---*/
unsigned ws_host_threads(const warpsort_context_t *ctx, size_t useful);
warpsort_status_t ws_h2d(warpsort_context_t *ctx, ws_pipe *p, unsigned char *dst,
                         const unsigned char *src, size_t bytes, int direct);
warpsort_status_t ws_d2h(warpsort_context_t *ctx, ws_pipe *p, unsigned char *dst,
                         const unsigned char *src, size_t bytes, int direct, const ws_blockmap *map,
                         int values, size_t esize);
unsigned char *ws_block_at(const ws_blockmap *m, int values, size_t id, size_t esize);
/* Faults the pages of a pageable output in (contents unchanged), from
 * WS_POPULATE_MIN_BYTES on; a no-op where the system cannot. */
#define WS_POPULATE_MIN_BYTES ((size_t)64 << 20)
void ws_populate_output(const warpsort_context_t *ctx, ws_pipe *p, void *dst, size_t bytes);

/*--- trace.cu ---*/
void ws_trace_free(ws_trace *t);
/* Starts the call's trace on ctx's pipeline p when the hook names a file. */
void ws_trace_start(warpsort_context_t *ctx, ws_pipe *p);
/* Worker wctx's pipeline wp joins the trace of the calling context's pipeline
 * caller (nothing when that is off, or wp is caller), on wctx's device, which
 * is current. worker: its index when workers share a device, else ~0u. */
void ws_trace_join(ws_pipe *caller, warpsort_context_t *wctx, ws_pipe *wp, unsigned worker);
unsigned ws_trace_dev_begin(ws_pipe *p, cudaStream_t s);
void ws_trace_dev_end(ws_pipe *p, unsigned i, cudaStream_t s, const char *lane, const char *what);
double ws_trace_now(const ws_pipe *p);
void ws_trace_host(ws_pipe *p, double t0, const char *lane, const char *what);
/* Writes every joined worker's spans with the caller's, once the workers
 * have joined, and turns the trace off on all of them. */
void ws_trace_finish(ws_pipe *p);

/*--- merge2.cu: merges two sorted device runs (stable: ties take a) ---*/
cudaError_t ws_merge2(size_t kb, size_t vb, warpsort::key_codec c, const void *ak, const void *av,
                      size_t na, const void *bk, const void *bv, size_t nb, void *ok, void *ov,
                      size_t *bounds, cudaStream_t s);

/*--- incore.cu: one job that fits the device ---*/
ws_job_layout ws_job_layout_for(const warpsort_context_t *ctx, size_t n, size_t kb, size_t vb,
                                unsigned pieces);
unsigned ws_pieces_for(const warpsort_context_t *ctx, size_t n, size_t kb, size_t vb, size_t slot,
                       size_t budget);
/* The device side of an in-core job: the workspace's A and B buffers (the
 * merge tree ping-pongs between them; B exists only with several pieces)
 * and how the job's streams are used. */
struct ws_job_buffers {
    unsigned char *ws, *ak, *av, *bk, *bv;
    size_t *bounds;  /* the merge kernel's cuts, for up to the job's n items */
    unsigned levels; /* merge-tree levels: log2(pieces) */
    int one_stream;  /* 1: copies and compute all on the context's stream */
    int direct;      /* 1: small enough for the driver's own staging */
};
/* Where the sorted job ends (keys: values 0; values: 1). */
static inline unsigned char *ws_job_final(const ws_job_buffers *d, int values) {
    if (values) return d->levels % 2 ? d->bv : d->av;
    return d->levels % 2 ? d->bk : d->ak;
}
/* Enqueues the job's copy in, the pieces' sorts and the merge tree on the
 * context's workspace and streams, and returns without waiting: the sorted
 * job will be at ws_job_final(d) once the context's stream is done. */
warpsort_status_t ws_incore_device(warpsort_context_t *ctx, ws_pipe *p, const ws_job *j,
                                   unsigned pieces, ws_job_buffers *d);
/* The whole in-core job: ws_incore_device, a wait, the copy out. */
warpsort_status_t ws_incore(warpsort_context_t *ctx, ws_pipe *p, const ws_job *j, unsigned pieces);

/*--- split.cu: exact cuts of sorted runs ---*/
/* Sorted runs, cut at global ranks in the order (key, run, position). Host
 * runs (dev NULL): run q is items [q * run, ...) of keys, n in all. Device
 * runs: run q is dev_len[q] items at dev[q] (on any device; n their sum),
 * each key read with a small copy; err keeps the first failed read, after
 * which a split must not be used. */
struct ws_runs {
    const unsigned char *keys;
    size_t n, run, count, kb;
    int kind, desc;
    const unsigned char *const *dev;
    const size_t *dev_len;
    cudaError_t err;
};
size_t ws_run_len(const ws_runs *r, size_t q);
/* split[q] = how many items of run q are among the first k outputs in the
 * order (key, run, position), given from[q], the same for fewer outputs
 * (zeros will do). Only positions from from[q] on are read. */
void ws_split_at(ws_runs *r, size_t k, const size_t *from, size_t *split);

/*--- pipeline.cu ---*/
/* Device memory a host-array job may use on ctx's device (which is current). */
warpsort_status_t ws_budget(warpsort_context_t *ctx, const ws_job *j, size_t *budget);

/*--- workers.cu: one host thread per device, for the out-of-core phases ---*/
/* One worker: a context on its device (the caller's, or a child the caller
 * owns) with its pipeline and device budget. */
struct ws_worker {
    warpsort_context_t *ctx;
    ws_pipe *p;
    size_t budget;
    unsigned index;
};
/* The workers of an out-of-core job on ctx: config devices (or the
 * WARPSORT_TEST_OOC_WORKERS hook), else ctx alone. Children are created on
 * first use and kept until warpsort_destroy; every call gets their pipelines
 * and budgets afresh. budget: ctx's, when ctx is a worker. */
warpsort_status_t ws_workers_get(warpsort_context_t *ctx, const ws_job *j, size_t budget,
                                 ws_worker **out, unsigned *count);
/* Runs fn(worker, arg) on every worker at once, one host thread each (the
 * first on the calling thread), its device current. The first failure wins:
 * it stops the others at their next checkpoint, calls wake(arg) so that
 * workers waiting on the caller's condition variable can see it (through
 * ws_workers_stopped), and is returned with the device named in ctx's
 * message. A failed worker's streams are drained before this returns. */
typedef warpsort_status_t (*ws_worker_fn)(ws_worker *w, void *arg);
warpsort_status_t ws_workers_run(warpsort_context_t *ctx, ws_worker_fn fn, void (*wake)(void *),
                                 void *arg);
/* 1 when ctx's host-array calls may run on a device other than its own or
 * on several workers (config devices, the WARPSORT_TEST_OOC_WORKERS hook):
 * then every failure that involves a device names it in ctx's message, in
 * core too (the caller cannot tell which route a call takes). Failures that
 * involve no device (out of core: host allocations of the scratch and its
 * bookkeeping, the final host copy back) name none. A list of ctx's own
 * device alone keeps the one-device messages. */
int ws_names_devices(const warpsort_context_t *ctx);
/* r, with ctx's message prefixed "CUDA device <device>: " when r failed and
 * ws_names_devices(ctx). For failures on the calling thread; the workers'
 * are named by ws_workers_run. */
warpsort_status_t ws_on_device(warpsort_context_t *ctx, int device, warpsort_status_t r);
/* 1 once a worker of the running ws_workers_run has failed. */
int ws_workers_stopped(const warpsort_context_t *ctx);
/* Frees the children (their devices made current in turn). */
void ws_workers_destroy(warpsort_context_t *ctx);

/*--- out_of_core.cu: runs, then exact key-range splits ---*/
/* workers: ws_workers_get's, for this job. */
warpsort_status_t ws_out_of_core(warpsort_context_t *ctx, ws_pipe *p, const ws_job *top,
                                 ws_worker *workers, unsigned count);

/*--- spread.cu: in core across the workers' devices ---*/
/* The job in core across the workers (two or more) when every worker's
 * equal share fits its budget in several pieces: each sorts its share of
 * the input on its device, the shares are cut at exact ranks, every worker
 * gathers its part of the output from all devices (peer copies), merges
 * it and copies it out. *taken 0 (and nothing done) when it does not fit. */
warpsort_status_t ws_spread(warpsort_context_t *ctx, const ws_job *top, ws_worker *workers,
                            unsigned count, int *taken);

#endif /* WARPSORT_CUDA_PIPELINE_PIPE_H */
