/*
 * pipeline.cu - the host pipeline's entry: host arrays through a pinned ring,
 * copy streams, pieces sorted as they arrive (incore.cu), and arrays larger
 * than the device (spread.cu across several, out_of_core.cu). Files: pipe.cu
 * (state), staging.cu (copies), trace.cu, merge2.cu (the merge tree's
 * kernel), incore.cu, split.cu, spread.cu, out_of_core.cu, workers.cu.
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
 * memory is copied directly, one cudaMemcpyAsync per piece
 * and array. Piece i is sorted by
 * the leaf (device_sort.h) as soon as its copy has
 * landed, while piece i+1 copies in; pairs of runs are merged by a merge-path
 * kernel (merge2.cu) as soon as both halves are sorted (a binary tree: log2 P levels
 * ping-ponging between buffers A and B). So when the last byte has arrived,
 * what is left on the compute stream is the last piece's sort and the merges
 * that depend on it: with P = 8 about 1/8 of the sort plus three merges of
 * 1/4, 1/2 and all of the array. Bus limit: n x bytes / H2D + n x bytes /
 * D2H; this tail is the gap to it. The WARPSORT_TRACE hook records every
 * span of it (trace.cu).
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
 *
 * Several devices (config devices, workers.cu): both phases are sequences of
 * independent in-core jobs, each bound by one PCIe link, so one host thread
 * per device takes the next run (phase 1) and the next range (phase 2) from
 * a shared counter and sorts it through its own context (the caller's for
 * the caller's device, a kept child context for each other one: stream,
 * ring, staging threads, workspace, budget). R is the least of the devices'
 * runs. Phase 2 hands ranges out in order (their cuts depend on the cut
 * before) but they are read and land in any order; a range lands only in
 * blocks that every range reading them has finished reading (out_of_core.cu,
 * ws_ooc), which the same count + 3 spare blocks make always possible. The
 * first failure on any device stops the others at their next checkpoint;
 * the caller's arrays are written only by the last step, as with one device.
 * On such a context every failure that involves a device names it, in core
 * too (ws_names_devices); only the out-of-core steps on host memory alone
 * (allocating the host scratch, the final copy back) name none.
 *
 * Spread (spread.cu): before going out of core, a job whose equal shares
 * fit every worker's budget in several pieces (the share twice, plus one
 * piece's sort workspace) is sorted in core across the workers: each sorts
 * its share, the runs are cut at exact ranks (split.cu, the same cut as
 * phase 2's), each worker gathers its part from every device by peer
 * copies, merges it and copies it out. Every byte crosses a bus once each
 * way instead of twice, and there is no host scratch. Jobs that fit the
 * context's device stay on it: one bus crossing each way already.
 * Files: split.cu (the exact cuts), spread.cu.
 */
#include <string.h>

#include "pipe.h"

/* Device budget: the caller's workspace, the configured budget, or the
 * free memory plus what the cached workspace already holds (it is freed
 * before a larger one is allocated), less a sixteenth. */
warpsort_status_t ws_budget(warpsort_context_t *ctx, const ws_job *j, size_t *budget) {
    ws_cuda_state *st = ws_state(ctx);
    if (st->workspace_external) {
        *budget = st->workspace_bytes;
    } else if (ctx->device_budget_bytes) {
        *budget = ctx->device_budget_bytes;
    } else if (j->n * (j->kb + j->vb) <= WS_DIRECT_MAX_BYTES &&
               ws_job_layout_for(ctx, j->n, j->kb, j->vb, 1).total <= st->workspace_bytes) {
        *budget = st->workspace_bytes; /* small and already fits: skip cudaMemGetInfo */
    } else {
        size_t free_bytes = 0, total = 0;
        WS_CUDA_TRY(ctx, cudaMemGetInfo(&free_bytes, &total));
        *budget = free_bytes + st->workspace_bytes;
        *budget -= *budget / 16;
    }
    return WARPSORT_OK;
}

/* A job the context's device cannot hold (under `budget`): in core across
 * the workers' devices when each one's share fits (spread.cu), else out of
 * core. A spread that finds less free memory than it was told, with no
 * budget set, goes out of core under half of it, as in core does. */
static warpsort_status_t ws_beyond_device(warpsort_context_t *ctx, ws_pipe *p, const ws_job *j,
                                          size_t budget, int retry) {
    ws_worker *workers = NULL;
    unsigned count = 0;
    WS_TRY(ws_workers_get(ctx, j, budget, &workers, &count));
    int taken = 0;
    warpsort_status_t r = ws_spread(ctx, j, workers, count, &taken);
    if (!taken) return ws_out_of_core(ctx, p, j, workers, count);
    if (r != WARPSORT_OUT_OF_MEMORY || !retry) return r;
    for (unsigned w = 0; w < count; w++) {
        ws_drain(workers[w].ctx, workers[w].p);
        workers[w].budget /= 2;
    }
    r = ws_out_of_core(ctx, p, j, workers, count);
    if (r == WARPSORT_OK) ctx->last_error[0] = '\0';
    return r;
}

static warpsort_status_t ws_pipe_run(warpsort_context_t *ctx, ws_job *j) {
    ws_cuda_state *st = ws_state(ctx);
    const int armed = st->test_fail_countdown != 0;
    ws_pipe *p = NULL;
    /* Failures here and in core are on ctx's device (ws_on_device names it
     * when ctx has several devices); out of core names its own. */
    warpsort_status_t r = ws_on_device(ctx, ctx->device, ws_pipe_get(ctx, &p));
    if (r != WARPSORT_OK) return r;
    ws_trace_start(ctx, p);

    size_t budget = 0;
    const int fixed = st->workspace_external || ctx->device_budget_bytes;
    r = ws_on_device(ctx, ctx->device, ws_budget(ctx, j, &budget));
    if (r != WARPSORT_OK) {
        ws_trace_finish(p);
        return r;
    }
    /* The WARPSORT_TEST_SPREAD hook: several workers spread what fits them,
     * even an array the context's device would hold. */
    int done = 0;
    if (ctx->hooks.spread && (ctx->hooks.ooc_workers || ctx->device_count > 1) &&
        !st->workspace_external) {
        ws_worker *workers = NULL;
        unsigned count = 0;
        r = ws_workers_get(ctx, j, budget, &workers, &count);
        if (r == WARPSORT_OK) r = ws_spread(ctx, j, workers, count, &done);
        done |= r != WARPSORT_OK;
    }
    const unsigned pieces =
        done ? 0 : ws_pieces_for(ctx, j->n, j->kb, j->vb, p->slot_bytes, budget);
    if (done) {
        /* spread, or failed on the way */
    } else if (pieces) {
        r = ws_on_device(ctx, ctx->device, ws_incore(ctx, p, j, pieces));
        if (r != WARPSORT_OK) ws_drain(ctx, p);
        /* No budget was set and the free memory was not there after all
         * (fragmentation, another process): beyond the device in half of it. */
        if (r == WARPSORT_OUT_OF_MEMORY && !fixed && !armed) {
            r = ws_beyond_device(ctx, p, j, budget / 2, 0);
            if (r == WARPSORT_OK) ctx->last_error[0] = '\0';
        }
    } else if (st->workspace_external) {
        r = ws_on_device(ctx, ctx->device,
                         ws_error(ctx, WARPSORT_WORKSPACE_TOO_SMALL,
                                  "workspace of %zu bytes given, sorting %zu host items needs %zu",
                                  st->workspace_bytes, j->n,
                                  ws_job_layout_for(ctx, j->n, j->kb, j->vb, 1).total));
    } else {
        r = ws_beyond_device(ctx, p, j, budget, !fixed && !armed);
    }
    if (r != WARPSORT_OK) ws_drain(ctx, p);
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

/* The job reads its input from segs and writes keys_out, so an out-of-place
 * sort is the in-place one with two addresses: in core the staging threads
 * read keys_in and the copy out writes keys_out; out of core the runs are
 * read from keys_in and the final gather writes keys_out. */
warpsort_status_t ws_pipe_sort_copy(warpsort_context_t *ctx, const void *keys_in, void *keys_out,
                                    size_t n, warpsort_dtype_t dtype, unsigned flags) {
    const ws_seg seg = {(const unsigned char *)keys_in, NULL, n};
    ws_job j;
    memset(&j, 0, sizeof j);
    j.segs = &seg;
    j.nsegs = 1;
    j.keys_in_pinned = ws_host_is_pinned(keys_in);
    j.keys_out_pinned = ws_host_is_pinned(keys_out);
    j.keys_out = (unsigned char *)keys_out;
    j.n = n;
    j.kb = warpsort_dtype_size(dtype);
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
