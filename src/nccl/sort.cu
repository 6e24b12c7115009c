/*
 * sort.cu - one sort across the ranks of an NCCL communicator
 * (include/warpsort_nccl.h): the entry, its checks, and the algorithm.
 *
 * Contract: rank r ends with exactly output_count(n_total, p, r) items, the
 * r-th part of the global order, ties split by (rank, position). Exact
 * parts (not "about n/p") let a caller size its outputs before the call and
 * keep every rank's share the same whatever the keys, all-equal included;
 * the (rank, position) tie rule is what makes exact parts possible with
 * duplicates, and it also makes the result stable and deterministic.
 *
 * Algorithm (p ranks, m = p - 1 boundaries; docs/multi-gpu.md has the time
 * model):
 *  1. Agree: one all-gather of (n_in, argument status, call signature) per
 *     rank gives n_total and every rank's offsets; a second round agrees on
 *     the workspace and out_capacity checks. Any failure is seen by every
 *     rank before a byte of data moves, so all return the same status and
 *     nothing was written (the inputs are const and never are).
 *  2. Local sort: the leaf sorts the input into scratch (ws_device_sort_from,
 *     whose first pass reads the const input: no copy; stable for pairs,
 *     so positions stay ordered).
 *  3. Split points (split.cu): the key at every global boundary g_j, found
 *     digit by digit over the keys' ordered bits: per round, each rank
 *     counts its keys below WS_NCCL_DIGITS - 1 candidates of every boundary
 *     (binary searches in its sorted run) and one all-reduce sums them;
 *     4 rounds for 32-bit keys, 8 for 64-bit, all on the stream. The keys
 *     equal to the boundary key are then shared out in rank order, which
 *     turns the key into an exact cut in every rank's run. One host wait:
 *     NCCL takes send and receive counts on the host.
 *  4. Exchange (exchange.cu): one group of ncclSend / ncclRecv moves the
 *     run [cut_j, cut_j+1) of every rank to rank j; a rank's own part stays.
 *  5. Merge (exchange.cu): the p sorted runs, in rank order, merged pairwise
 *     (log2 p passes of the two-way merge, ties to the lower rank) straight
 *     into keys_out. Nothing sorts twice: the local sort and the merge
 *     together read and write each item O(log p) times after the sort.
 *  4+5 with two ranks (overlap.cu): the received part arrives in chunks and
 *     a second stream merges each chunk as far as is safe while the next
 *     ones travel; the same bytes as steps 4 and 5 one after the other.
 * One rank (p = 1) is the leaf from the input into keys_out.
 * Keys alone on three or more ranks from 2^22 a rank take the
 * partition-first route instead
 * (partition.cu: sample, partition, exchange under the sorts of the parts),
 * after both agreement rounds; keys its counts do not fit come back here
 * for steps 2-5 from the untouched input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "cuda/check.cuh"
#include "cuda/device_sort.h"
#include "cuda/pipeline/pipe.h"
#include "cuda/state.h"
#include "cuda/workspace.h"
#include "nccl/nccl_sort.h"
#include "warpsort_nccl.h"

#define WS_NCCL_KNOWN_FLAGS (WARPSORT_DESCENDING | WARPSORT_STABLE)
#define WS_NCCL_MAX_N (SIZE_MAX / 32)

/* Words per rank in an agreement round: n_in, status, call signature. */
#define WS_NCCL_HDR 3

extern "C" size_t warpsort_nccl_output_count(size_t n_total, int nranks, int rank) {
    if (nranks < 1 || rank < 0 || rank >= nranks) return 0;
    return (size_t)(ws_nccl_boundary(n_total, nranks, rank) -
                    (rank ? ws_nccl_boundary(n_total, nranks, rank - 1) : 0));
}

warpsort_status_t ws_nccl_fail(warpsort_context_t *ctx, ncclComm_t comm, ncclResult_t r,
                               const char *what) {
    const char *detail = comm ? ncclGetLastError(comm) : NULL;
    const warpsort_status_t s = r == ncclInvalidArgument || r == ncclInvalidUsage
                                    ? WARPSORT_INVALID_ARGUMENT
                                    : WARPSORT_CUDA_ERROR;
    return ws_error(ctx, s, "NCCL: %s: %s%s%s", what, ncclGetErrorString(r),
                    detail && *detail ? ": " : "", detail ? detail : "");
}

ws_nccl_ctl ws_nccl_ctl_layout(int nranks) {
    const size_t p = (size_t)nranks, m = p > 1 ? p - 1 : 1;
    ws_nccl_ctl L;
    L.hdr_in = 0;
    L.hdr_all = L.hdr_in + WS_NCCL_HDR;
    L.v = L.hdr_all + WS_NCCL_HDR * p;
    L.lo = L.v + m;
    L.hi = L.lo + m;
    L.local = L.hi + m;
    L.sum = L.local + m * WS_NCCL_DIGITS;
    L.lbeq_in = L.sum + m * WS_NCCL_DIGITS;
    L.lbeq_all = L.lbeq_in + 2 * m;
    L.words = L.lbeq_all + 2 * m * p;
    return L;
}

/*--- workspace ---*/

/* The call's scratch in the context workspace: the leaf's own, the sorted
 * copy (n_in), the received runs and the merge ping-pong (n_out each), the
 * merge partition points. One rank needs the leaf's alone: it sorts in
 * keys_out. */
struct ws_nccl_layout {
    ws_plan_t plan;
    size_t sk, sv, rk, rv, tk, tv, bounds, steps, total;
};
static ws_nccl_layout ws_nccl_layout_for(const ws_cuda_state *st, int p, size_t n_in, size_t n_out,
                                         size_t kb, size_t vb) {
    ws_nccl_layout l;
    l.plan = ws_plan_make(&st->dev, n_in, kb, vb);
    size_t at = ws_align256(l.plan.lay.total);
    if (p == 1) {
        l.sk = l.sv = l.rk = l.rv = l.tk = l.tv = l.bounds = l.steps = at;
        l.total = at;
        return l;
    }
    l.sk = at;
    at += ws_align256(n_in * kb);
    l.sv = at;
    at += ws_align256(n_in * vb);
    const size_t slack = (size_t)(p - 1) * WS_NCCL_RECV_SLACK; /* aligned pieces */
    l.rk = at;
    at += ws_align256(n_out * kb + slack);
    l.rv = at;
    at += ws_align256(n_out * vb + (vb ? slack : 0));
    const size_t tmp = p > 2 ? n_out : 0; /* two runs merge straight into keys_out */
    l.tk = at;
    at += ws_align256(tmp * kb);
    l.tv = at;
    at += ws_align256(tmp * vb);
    l.bounds = at;
    at += ws_align256((n_out / WS_MERGE_TILE + 2) * sizeof(size_t));
    l.steps = at;
    at += ws_align256(2 * (WS_NCCL_CHUNKS + 1) * sizeof(size_t));
    l.total = at;
    return l;
}

extern "C" warpsort_status_t warpsort_nccl_workspace_size(const warpsort_context_t *ctx, int nranks,
                                                          size_t n_in, size_t n_out,
                                                          warpsort_dtype_t dtype,
                                                          size_t value_bytes, size_t *bytes) {
    if (!ctx || !bytes || nranks < 1 || nranks > WS_NCCL_MAX_RANKS)
        return WARPSORT_INVALID_ARGUMENT;
    if (warpsort_dtype_size(dtype) == 0) return WARPSORT_UNSUPPORTED_DTYPE;
    if (value_bytes != 0 && value_bytes != 4 && value_bytes != 8) return WARPSORT_INVALID_ARGUMENT;
    if (n_in > WS_NCCL_MAX_N || n_out > WS_NCCL_MAX_N) return WARPSORT_INVALID_ARGUMENT;
    warpsort_status_t s = ws_resolve((warpsort_context_t *)ctx);
    if (s != WARPSORT_OK) return s;
    if (ctx->backend != WARPSORT_BACKEND_CUDA) return WARPSORT_BACKEND_UNAVAILABLE;
    const size_t kb = warpsort_dtype_size(dtype);
    const size_t sort_first =
        ws_nccl_layout_for(ws_state(ctx), nranks, n_in, n_out, kb, value_bytes).total;
    /* Keys alone may take the partition-first route (partition.cu). */
    const size_t part =
        value_bytes ? 0 : ws_pt_workspace_bound(ws_state(ctx), nranks, n_in, n_out, kb);
    *bytes = part > sort_first ? part : sort_first;
    return WARPSORT_OK;
}

/*--- checks ---*/

static int ws_nccl_overlap(const void *a, size_t na, const void *b, size_t nb) {
    if (!a || !b || !na || !nb) return 0;
    const uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return x < y + nb && y < x + na;
}

/* OK if p is device (or managed) memory the rank's GPU can use. */
static warpsort_status_t ws_nccl_check_ptr(const ws_nccl_call *c, const void *p, size_t bytes,
                                           size_t align, const char *name) {
    if (!bytes) return WARPSORT_OK;
    if (!p)
        return ws_error(c->ctx, WARPSORT_NULL_POINTER, "%s: %s is NULL with %zu bytes", c->fn, name,
                        bytes);
    if ((uintptr_t)p % align)
        return ws_error(c->ctx, WARPSORT_MISALIGNED, "%s: %s (%p) is not aligned to %zu bytes",
                        c->fn, name, p, align);
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess)
        (void)cudaGetLastError();
    else if ((a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged) &&
             (a.type == cudaMemoryTypeManaged || a.device == c->device))
        return WARPSORT_OK;
    return ws_error(c->ctx, WARPSORT_INVALID_ARGUMENT,
                    "%s: %s (%p) is not device memory of this rank's GPU (device %d)", c->fn, name,
                    p, c->device);
}

/* The checks one rank can make alone, before any collective. */
static warpsort_status_t ws_nccl_check(ws_nccl_call *c, const size_t *n_out) {
    warpsort_context_t *ctx = c->ctx;
    WS_TRY(ws_resolve(ctx));
    if (ctx->backend != WARPSORT_BACKEND_CUDA)
        return ws_error(ctx, WARPSORT_BACKEND_UNAVAILABLE,
                        "%s: the context is not on the CUDA backend", c->fn);
    if (ctx->device != c->device)
        return ws_error(ctx, WARPSORT_INVALID_ARGUMENT,
                        "%s: the context is on device %d, the communicator's rank %d on %d", c->fn,
                        ctx->device, c->rank, c->device);
    if (c->kb == 0)
        return ws_error(ctx, WARPSORT_UNSUPPORTED_DTYPE, "%s: unknown dtype %d", c->fn,
                        (int)c->dtype);
    if (c->pairs) {
        if (c->vb != 4 && c->vb != 8)
            return ws_error(ctx, WARPSORT_INVALID_ARGUMENT, "%s: value_bytes %zu is not 4 or 8",
                            c->fn, c->vb);
    }
    if (c->flags & ~(unsigned)WS_NCCL_KNOWN_FLAGS)
        return ws_error(ctx, WARPSORT_INVALID_ARGUMENT, "%s: unknown flags 0x%x", c->fn,
                        c->flags & ~(unsigned)WS_NCCL_KNOWN_FLAGS);
    if (!n_out) return ws_error(ctx, WARPSORT_INVALID_ARGUMENT, "%s: n_out is NULL", c->fn);
    if (c->n_in > WS_NCCL_MAX_N || c->cap > WS_NCCL_MAX_N)
        return ws_error(ctx, WARPSORT_INVALID_ARGUMENT,
                        "%s: n_in %zu or out_capacity %zu too large", c->fn, c->n_in, c->cap);
    WS_TRY(ws_nccl_check_ptr(c, c->keys_in, c->n_in * c->kb, c->kb, "keys_in"));
    WS_TRY(ws_nccl_check_ptr(c, c->keys_out, c->cap * c->kb, c->kb, "keys_out"));
    if (c->vb) {
        WS_TRY(ws_nccl_check_ptr(c, c->vals_in, c->n_in * c->vb, c->vb, "values_in"));
        WS_TRY(ws_nccl_check_ptr(c, c->vals_out, c->cap * c->vb, c->vb, "values_out"));
    }
    const size_t ik = c->n_in * c->kb, iv = c->n_in * c->vb;
    const size_t ok = c->cap * c->kb, ov = c->cap * c->vb;
    if (ws_nccl_overlap(c->keys_out, ok, c->keys_in, ik) ||
        ws_nccl_overlap(c->keys_out, ok, c->vals_in, iv) ||
        ws_nccl_overlap(c->vals_out, ov, c->keys_in, ik) ||
        ws_nccl_overlap(c->vals_out, ov, c->vals_in, iv) ||
        ws_nccl_overlap(c->keys_out, ok, c->vals_out, ov))
        return ws_error(ctx, WARPSORT_OVERLAP,
                        "%s: an output overlaps an input or the other output", c->fn);
    return WARPSORT_OK;
}

/*--- agreement ---*/

/* What every rank must call alike: key and value widths, dtype, order. */
static uint64_t ws_nccl_signature(const ws_nccl_call *c) {
    return (uint64_t)c->kb | (uint64_t)c->vb << 8 | (uint64_t)c->pairs << 32 |
           (uint64_t)c->dtype << 16 | (uint64_t)(c->flags & WARPSORT_DESCENDING) << 24;
}

/* One agreement round: every rank's (word0, status, signature) to every
 * rank (all: WS_NCCL_HDR x p words on the host). Waits for the stream. */
static warpsort_status_t ws_nccl_round(const ws_nccl_call *c, uint64_t *ctl, const ws_nccl_ctl *L,
                                       uint64_t word0, warpsort_status_t status, uint64_t *all) {
    const uint64_t in[WS_NCCL_HDR] = {word0, (uint64_t)status, ws_nccl_signature(c)};
    WS_CUDA_TRY_AT(c->ctx,
                   cudaMemcpyAsync(ctl + L->hdr_in, in, sizeof in, cudaMemcpyHostToDevice, c->s),
                   "agreement upload");
    WS_NCCL_TRY(c, ncclAllGather(ctl + L->hdr_in, ctl + L->hdr_all, WS_NCCL_HDR, ncclUint64,
                                 c->comm, c->s));
    WS_CUDA_TRY_AT(c->ctx,
                   cudaMemcpyAsync(all, ctl + L->hdr_all, sizeof in * (size_t)c->nranks,
                                   cudaMemcpyDeviceToHost, c->s),
                   "agreement download");
    WS_CUDA_TRY_AT(c->ctx, cudaStreamSynchronize(c->s), "agreement");
    return WARPSORT_OK;
}

/* The status every rank returns after a round: the largest code any rank
 * reported (INVALID_ARGUMENT if the ranks' calls differ). A rank that did
 * not fail itself says which rank did. */
static warpsort_status_t ws_nccl_agreed(const ws_nccl_call *c, const uint64_t *all,
                                        warpsort_status_t own) {
    uint64_t worst = 0;
    int first = -1, mismatch = -1;
    for (int r = 0; r < c->nranks; r++) {
        const uint64_t s = all[WS_NCCL_HDR * r + 1];
        if (s > worst) {
            worst = s;
            first = r;
        }
        if (all[WS_NCCL_HDR * r + 2] != all[2] && mismatch < 0) mismatch = r;
    }
    if (worst >= WARPSORT_STATUS_COUNT_) worst = WARPSORT_INTERNAL;
    if (worst == 0 && mismatch < 0) return WARPSORT_OK;
    if (worst == 0)
        return ws_error(c->ctx, WARPSORT_INVALID_ARGUMENT,
                        "%s: rank %d called with another function, dtype, value size or order "
                        "than rank 0; nothing was moved",
                        c->fn, mismatch);
    if ((uint64_t)own == worst) return own; /* this rank's own message stands */
    char mine[WS_ERROR_MAX];
    snprintf(mine, sizeof mine, "%s", own != WARPSORT_OK ? warpsort_last_error(c->ctx) : "");
    return ws_error(c->ctx, (warpsort_status_t)worst,
                    "%s: rank %d failed with %s (its warpsort_last_error says why); nothing was "
                    "moved%s%s",
                    c->fn, first, warpsort_status_name((warpsort_status_t)worst),
                    *mine ? "; this rank: " : "", mine);
}

/*--- the call ---*/

/* Makes `waiter` wait for the work queued on `waited` so far. */
static cudaError_t ws_nccl_follow(cudaStream_t waiter, cudaStream_t waited) {
    if (waiter == waited) return cudaSuccess;
    cudaEvent_t e;
    cudaError_t err = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
    if (err != cudaSuccess) return err;
    err = cudaEventRecord(e, waited);
    if (err == cudaSuccess) err = cudaStreamWaitEvent(waiter, e, 0);
    (void)cudaEventDestroy(e); /* released once the wait is done */
    return err;
}

/* The input sorted into dst by the leaf, which reads keys_in (vals_in) in
 * its first pass: the const input is never written and never copied. */
static warpsort_status_t ws_nccl_local_sort(const ws_nccl_call *c, const ws_plan_t *plan,
                                            void *dst_k, void *dst_v, unsigned char *leaf) {
    if (!c->n_in) return WARPSORT_OK;
    const char *failed = NULL;
    const cudaError_t err =
        ws_device_sort_from(plan, c->keys_in, c->vb ? c->vals_in : NULL, dst_k,
                            c->vb ? dst_v : NULL, c->dtype, c->codec.desc, 1, leaf, c->s, &failed);
    if (err != cudaSuccess) return ws_cuda_fail(c->ctx, err, failed);
    return WARPSORT_OK;
}

/* One rank: nothing to agree on or exchange. */
static warpsort_status_t ws_nccl_single(ws_nccl_call *c, size_t *n_out) {
    WS_TRY(ws_nccl_check(c, n_out));
    *n_out = c->n_in;
    if (c->cap < c->n_in)
        return ws_error(c->ctx, WARPSORT_INVALID_ARGUMENT, "%s: out_capacity %zu < %zu items",
                        c->fn, c->cap, c->n_in);
    const ws_nccl_layout l =
        ws_nccl_layout_for(ws_state(c->ctx), 1, c->n_in, c->n_in, c->kb, c->vb);
    unsigned char *ws = NULL;
    WS_TRY(ws_acquire(c->ctx, l.total, &ws));
    WS_CUDA_TRY_AT(c->ctx, ws_nccl_follow(c->s, ws_state(c->ctx)->stream), "stream order");
    for (int ph = 0; ph <= WS_NCCL_PHASE_LOCAL_SORT; ph++) ws_nccl_mark(c, ph);
    WS_TRY(ws_nccl_local_sort(c, &l.plan, c->keys_out, c->vals_out, ws));
    for (int ph = WS_NCCL_PHASE_SPLITTERS; ph <= WS_NCCL_PHASES; ph++) ws_nccl_mark(c, ph);
    WS_CUDA_TRY_AT(c->ctx, ws_nccl_follow(ws_state(c->ctx)->stream, c->s), "stream order");
    return WARPSORT_OK;
}

/* Steps 2 to 5, after both agreement rounds passed: the partition-first
 * route where the plan pt allows it (partition.cu) and the keys do, the
 * sort-first route otherwise. */
static warpsort_status_t ws_nccl_run(const ws_nccl_call *c, const ws_nccl_bufs *b,
                                     const ws_plan_t *plan, const ws_pt_plan *pt,
                                     const uint64_t *n_in_all, uint64_t n_total, size_t n_out) {
    ws_nccl_mark(c, WS_NCCL_PHASE_SAMPLE);
    if (pt) {
        int taken = 0;
        WS_TRY(ws_nccl_partition_sort(c, pt, b->leaf, n_total, n_out, &taken));
        if (c->events) c->events->partition_first = taken;
        if (taken) {
            for (int ph = WS_NCCL_PHASE_SPLITTERS; ph <= WS_NCCL_PHASES; ph++) ws_nccl_mark(c, ph);
            return WARPSORT_OK;
        }
    }
    ws_nccl_mark(c, WS_NCCL_PHASE_PARTITION);
    ws_nccl_mark(c, WS_NCCL_PHASE_LOCAL_SORT);
    WS_TRY(ws_nccl_local_sort(c, plan, b->sorted_k, b->sorted_v, b->leaf));
    ws_nccl_mark(c, WS_NCCL_PHASE_SPLITTERS);
    const size_t p = (size_t)c->nranks;
    uint64_t *cuts = (uint64_t *)malloc(p * (p + 1) * sizeof(uint64_t));
    if (!cuts)
        return ws_error(c->ctx, WARPSORT_OUT_OF_MEMORY, "%s: no host memory for %zu cut points",
                        c->fn, p * (p + 1));
    warpsort_status_t s = ws_nccl_find_cuts(c, b, n_in_all, n_total, cuts);
    if (s == WARPSORT_OK) ws_nccl_mark(c, WS_NCCL_PHASE_EXCHANGE);
    if (s == WARPSORT_OK && p == 2) {
        /* The merge under the exchange; the MERGE mark is its tail. */
        s = ws_nccl_exchange_merge(c, b, cuts, n_out, ws_nccl_chunks(n_total, c->nranks));
    } else if (s == WARPSORT_OK) {
        s = ws_nccl_exchange(c, b, cuts, n_out);
        if (s == WARPSORT_OK) {
            ws_nccl_mark(c, WS_NCCL_PHASE_MERGE);
            s = ws_nccl_merge(c, b, cuts, n_out);
        }
    }
    if (s == WARPSORT_OK) ws_nccl_mark(c, WS_NCCL_PHASES);
    free(cuts);
    return s;
}

/* Both agreement rounds, then the sort; ctl is the control block, pre a
 * failure this rank already had (it still takes part, to tell the others). */
static warpsort_status_t ws_nccl_collective(ws_nccl_call *c, uint64_t *ctl, warpsort_status_t pre,
                                            size_t *n_out) {
    const ws_nccl_ctl L = ws_nccl_ctl_layout(c->nranks);
    const size_t p = (size_t)c->nranks;
    uint64_t *all = (uint64_t *)malloc(WS_NCCL_HDR * p * sizeof(uint64_t));
    uint64_t *n_in_all = (uint64_t *)malloc(p * sizeof(uint64_t));
    warpsort_status_t s = all && n_in_all ? WARPSORT_OK : WARPSORT_OUT_OF_MEMORY;
    if (s != WARPSORT_OK) {
        free(all);
        free(n_in_all);
        return ws_error(c->ctx, s, "%s: no host memory for %zu ranks' counts", c->fn, p);
    }
    ws_nccl_mark(c, WS_NCCL_PHASE_AGREE);
    /* Round 1: counts, argument checks and signatures. */
    warpsort_status_t own = pre != WARPSORT_OK ? pre : ws_nccl_check(c, n_out);
    s = ws_nccl_round(c, ctl, &L, c->n_in, own, all);
    if (s == WARPSORT_OK) s = ws_nccl_agreed(c, all, own);
    uint64_t n_total = 0;
    for (size_t r = 0; s == WARPSORT_OK && r < p; r++) {
        n_in_all[r] = all[WS_NCCL_HDR * r];
        n_total += n_in_all[r];
        if (n_total > WS_NCCL_MAX_N || n_in_all[r] > WS_NCCL_MAX_N)
            s = ws_error(c->ctx, WARPSORT_INVALID_ARGUMENT, "%s: more than %zu items in all", c->fn,
                         (size_t)WS_NCCL_MAX_N);
    }
    /* Round 2: out_capacity and workspace. */
    size_t count = 0;
    ws_nccl_layout l;
    ws_pt_plan pt;
    int pt_ok = 0;
    unsigned char *ws = NULL;
    if (s == WARPSORT_OK) {
        count = warpsort_nccl_output_count((size_t)n_total, c->nranks, c->rank);
        *n_out = count;
        l = ws_nccl_layout_for(ws_state(c->ctx), c->nranks, c->n_in, count, c->kb, c->vb);
        /* Either route fits (the partition-first one falls back to the
         * other from the untouched input). */
        pt_ok = ws_pt_plan_for(c, n_in_all, n_total, &pt);
        const size_t pt_bytes = pt_ok ? ws_pt_workspace(c, &pt, c->n_in, count) : 0;
        own = c->cap < count ? ws_error(c->ctx, WARPSORT_INVALID_ARGUMENT,
                                        "%s: out_capacity %zu < the %zu items rank %d receives",
                                        c->fn, c->cap, count, c->rank)
                             : ws_acquire(c->ctx, pt_bytes > l.total ? pt_bytes : l.total, &ws);
        s = ws_nccl_round(c, ctl, &L, 0, own, all);
        if (s == WARPSORT_OK) s = ws_nccl_agreed(c, all, own);
    }
    /* Past both rounds every rank passed its checks: its context is on the
     * CUDA backend and its workspace is in ws. */
    if (s == WARPSORT_OK && n_total) {
        ws_nccl_bufs b;
        b.ctl = ctl;
        b.leaf = ws;
        b.sorted_k = ws + l.sk;
        b.sorted_v = ws + l.sv;
        b.recv_k = ws + l.rk;
        b.recv_v = ws + l.rv;
        b.tmp_k = ws + l.tk;
        b.tmp_v = ws + l.tv;
        b.bounds = (size_t *)(ws + l.bounds);
        b.steps = (size_t *)(ws + l.steps);
        s = ws_nccl_run(c, &b, &l.plan, pt_ok ? &pt : NULL, n_in_all, n_total, count);
    } else if (s == WARPSORT_OK) {
        for (int ph = WS_NCCL_PHASE_SAMPLE; ph <= WS_NCCL_PHASES; ph++) ws_nccl_mark(c, ph);
    }
    free(all);
    free(n_in_all);
    return s;
}

/* The entry of every call; pairs: the pairs form (value_bytes must then be
 * 4 or 8). */
static warpsort_status_t ws_nccl_entry(warpsort_context_t *ctx, ncclComm_t comm,
                                       const void *keys_in, const void *values_in, size_t n_in,
                                       void *keys_out, void *values_out, size_t out_capacity,
                                       size_t *n_out, warpsort_dtype_t dtype, size_t value_bytes,
                                       int pairs, unsigned flags, cudaStream_t stream,
                                       ws_nccl_phase_events *events) {
    const char *fn = pairs ? "warpsort_nccl_sort_pairs" : "warpsort_nccl_sort";
    if (n_out) *n_out = 0;
    if (!ctx || !comm)
        return ws_error(ctx, WARPSORT_INVALID_ARGUMENT, "%s: %s is NULL", fn, ctx ? "comm" : "ctx");
    ctx->last_error[0] = '\0';
    ws_nccl_call c;
    memset(&c, 0, sizeof c);
    c.ctx = ctx;
    c.comm = comm;
    c.fn = fn;
    c.keys_in = keys_in;
    c.vals_in = values_in;
    c.n_in = n_in;
    c.keys_out = keys_out;
    c.vals_out = values_out;
    c.cap = out_capacity;
    c.dtype = dtype;
    c.kb = warpsort_dtype_size(dtype);
    c.vb = value_bytes;
    c.pairs = pairs;
    c.flags = flags;
    c.codec = warpsort::key_codec{ws_dtype_kind(dtype), (flags & WARPSORT_DESCENDING) ? 1 : 0};
    c.s = stream;
    c.events = events;
    if (events) events->partition_first = 0;
    ncclResult_t r = ncclCommCount(comm, &c.nranks);
    if (r == ncclSuccess) r = ncclCommUserRank(comm, &c.rank);
    if (r == ncclSuccess) r = ncclCommCuDevice(comm, &c.device);
    if (r != ncclSuccess) return ws_nccl_fail(ctx, comm, r, "reading the communicator");
    if (c.nranks < 1 || c.nranks > WS_NCCL_MAX_RANKS)
        return ws_error(ctx, WARPSORT_UNSUPPORTED, "%s: %d ranks (at most %d)", fn, c.nranks,
                        WS_NCCL_MAX_RANKS);
    ws_device_guard g;
    cudaError_t err = ws_enter_device(c.device, &g);
    if (err != cudaSuccess) return ws_cuda_fail(ctx, err, "cudaSetDevice");
    warpsort_status_t s;
    if (c.nranks == 1) {
        s = ws_nccl_single(&c, n_out);
    } else {
        /* The control block comes from the stream-ordered allocator, so it
         * exists even when the workspace cannot (it carries that news). */
        uint64_t *ctl = NULL;
        const size_t ctl_bytes = ws_nccl_ctl_layout(c.nranks).words * sizeof(uint64_t);
        err = cudaMallocAsync((void **)&ctl, ctl_bytes, stream);
        if (err != cudaSuccess) {
            s = ws_cuda_fail(ctx, err, "cudaMallocAsync (control words)");
        } else {
            /* After work already queued on the context's stream (its
             * workspace may still be in use there), before work queued
             * there later. */
            (void)ws_resolve(ctx); /* its failure is the checks' to report */
            const int follow =
                ctx->backend == WARPSORT_BACKEND_CUDA && ws_state(ctx) && ctx->device == c.device;
            err = follow ? ws_nccl_follow(stream, ws_state(ctx)->stream) : cudaSuccess;
            const warpsort_status_t pre =
                err != cudaSuccess ? ws_cuda_fail(ctx, err, "stream order") : WARPSORT_OK;
            s = ws_nccl_collective(&c, ctl, pre, n_out);
            (void)cudaFreeAsync(ctl, stream);
            if (follow) {
                err = ws_nccl_follow(ws_state(ctx)->stream, stream);
                if (err != cudaSuccess && s == WARPSORT_OK)
                    s = ws_cuda_fail(ctx, err, "stream order");
            }
        }
    }
    ws_leave_device(&g);
    return s;
}

extern "C" warpsort_status_t warpsort_nccl_sort(warpsort_context_t *ctx, ncclComm_t comm,
                                                const void *keys_in, size_t n_in, void *keys_out,
                                                size_t out_capacity, size_t *n_out,
                                                warpsort_dtype_t dtype, unsigned flags,
                                                cudaStream_t stream) {
    return ws_nccl_entry(ctx, comm, keys_in, NULL, n_in, keys_out, NULL, out_capacity, n_out, dtype,
                         0, 0, flags, stream, NULL);
}

extern "C" warpsort_status_t warpsort_nccl_sort_pairs(warpsort_context_t *ctx, ncclComm_t comm,
                                                      const void *keys_in, const void *values_in,
                                                      size_t n_in, void *keys_out, void *values_out,
                                                      size_t out_capacity, size_t *n_out,
                                                      warpsort_dtype_t dtype, size_t value_bytes,
                                                      unsigned flags, cudaStream_t stream) {
    return ws_nccl_entry(ctx, comm, keys_in, values_in, n_in, keys_out, values_out, out_capacity,
                         n_out, dtype, value_bytes, 1, flags, stream, NULL);
}

extern "C" warpsort_status_t
ws_nccl_sort_timed(warpsort_context_t *ctx, ncclComm_t comm, const void *keys_in,
                   const void *values_in, size_t n_in, void *keys_out, void *values_out,
                   size_t out_capacity, size_t *n_out, warpsort_dtype_t dtype, size_t value_bytes,
                   unsigned flags, cudaStream_t stream, ws_nccl_phase_events *events) {
    return ws_nccl_entry(ctx, comm, keys_in, values_in, n_in, keys_out, values_out, out_capacity,
                         n_out, dtype, value_bytes, values_in || values_out || value_bytes, flags,
                         stream, events);
}
