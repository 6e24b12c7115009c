/*
 * spread.cu - a host array in core across the workers' devices (pipeline.cu's
 * overview): too large for the context's device, small enough that every
 * device holds an equal share of it twice over. Five phases, each one
 * ws_workers_run, so each ends with every worker done (the barrier between
 * them):
 *
 *   1. share:  worker w copies items [lo_w, lo_w+1) of the input in and sorts
 *              them in core (ws_incore_device: pieces sorted as they land, a
 *              merge tree), leaving its sorted run in one buffer of its
 *              workspace (X_w) and the other (Y_w) free;
 *   2. cut:    worker w >= 1 finds how many items of every run lie below
 *              global rank lo_w, in the order (key, worker, position)
 *              (ws_split_at over the device runs): output part w is ranks
 *              [lo_w, lo_w+1), as many items as its share, so it fits Y_w;
 *   3. gather: worker w copies its slice of every run, in worker order, into
 *              Y_w: peer copies (NVLink or PCIe), its own slice on the device;
 *   4. merge:  the runs in Y_w pairwise up a tree, ping-ponging with X_w
 *              (stable: ties keep worker order), a wait for the device, and
 *              the call's last checkpoint;
 *   5. out:    worker w copies its part out into the caller's arrays at lo_w.
 *
 * Against the out-of-core path every byte crosses its PCIe link once each
 * way instead of twice, and there is no host scratch of n items to fault in
 * and copy back; the exchange crosses the links between the devices once.
 * Device memory per worker: its share twice (X, Y) and one piece's sort
 * workspace, which is what ws_pieces_for checks.
 *
 * Failures: phases 1-4 write nothing of the caller's, and the first failure
 * stops the other workers at their next checkpoint; phase 5 has no
 * checkpoint and starts only once every worker has merged and waited, so a
 * failure leaves the caller's arrays as they were (as in core on one
 * device, only a copy engine failing mid-copy could break that).
 */
#include <stdlib.h>
#include <string.h>

#include "pipe.h"

#define WS_SPREAD_MAX WARPSORT_MAX_DEVICES

struct ws_spread_call {
    const ws_job *top;
    unsigned count;
    size_t lo[WS_SPREAD_MAX + 1]; /* share w and output part w: items [lo[w], lo[w + 1]) */
    unsigned pieces[WS_SPREAD_MAX];
    int device[WS_SPREAD_MAX];
    ws_job_buffers buf[WS_SPREAD_MAX];
    const unsigned char *run_k[WS_SPREAD_MAX], *run_v[WS_SPREAD_MAX]; /* sorted shares (X) */
    unsigned char *free_k[WS_SPREAD_MAX], *free_v[WS_SPREAD_MAX];     /* the other buffers (Y) */
    size_t run_len[WS_SPREAD_MAX];
    /* cut[w * count + q]: items of run q below rank lo[w]; row count: all. */
    size_t cut[(WS_SPREAD_MAX + 1) * WS_SPREAD_MAX];
    /* part_at[w * (count + 1) + q]: where run q's slice starts in Y_w. */
    size_t part_at[WS_SPREAD_MAX * (WS_SPREAD_MAX + 1)];
    const unsigned char *fin_k[WS_SPREAD_MAX], *fin_v[WS_SPREAD_MAX]; /* merged parts */
};

static warpsort_status_t ws_spread_share(ws_worker *w, void *arg) {
    ws_spread_call *s = (ws_spread_call *)arg;
    const ws_job *top = s->top;
    const unsigned i = w->index;
    const size_t kb = top->kb, vb = top->vb, b = s->lo[i], m = s->lo[i + 1] - b;
    WS_TRY(ws_checkpoint(w->ctx, "spread: sorting a share"));
    const double t0 = ws_trace_now(w->p);
    ws_seg seg;
    ws_job sub = ws_job_slice(top, b, m, &seg);
    /* Only whether they are wanted and pinned matters here (the ring). */
    sub.keys_out = top->keys_out ? top->keys_out + b * kb : NULL;
    sub.vals_out = top->vals_out ? top->vals_out + b * vb : NULL;
    ws_job_buffers *d = &s->buf[i];
    WS_TRY(ws_incore_device(w->ctx, w->p, &sub, s->pieces[i], d));
    WS_CUDA_TRY(w->ctx, cudaStreamSynchronize(ws_state(w->ctx)->stream));
    WS_CUDA_TRY(w->ctx, cudaStreamSynchronize(w->p->h2d));
    s->run_k[i] = ws_job_final(d, 0);
    s->run_v[i] = vb ? ws_job_final(d, 1) : NULL;
    s->free_k[i] = s->run_k[i] == d->ak ? d->bk : d->ak;
    s->free_v[i] = vb ? (s->run_v[i] == d->av ? d->bv : d->av) : NULL;
    s->run_len[i] = m;
    ws_trace_host(w->p, t0, "phase", "spread: sort a share");
    return WARPSORT_OK;
}

static warpsort_status_t ws_spread_cut(ws_worker *w, void *arg) {
    ws_spread_call *s = (ws_spread_call *)arg;
    const unsigned i = w->index, count = s->count;
    size_t *cut = s->cut + (size_t)i * count;
    if (i == 0) {
        memset(cut, 0, count * sizeof *cut);
        return WARPSORT_OK;
    }
    WS_TRY(ws_checkpoint(w->ctx, "spread: cutting the shares"));
    const double t0 = ws_trace_now(w->p);
    const ws_job *top = s->top;
    ws_runs r;
    memset(&r, 0, sizeof r);
    r.n = top->n;
    r.count = count;
    r.kb = top->kb;
    r.kind = ws_dtype_kind((int)top->dtype);
    r.desc = top->desc;
    r.dev = s->run_k;
    r.dev_len = s->run_len;
    r.err = cudaSuccess;
    size_t from[WS_SPREAD_MAX];
    memset(from, 0, sizeof from);
    ws_split_at(&r, s->lo[i], from, cut);
    if (r.err != cudaSuccess) return ws_cuda_fail(w->ctx, r.err, "reading keys for the cut");
    ws_trace_host(w->p, t0, "phase", "spread: cut the shares");
    return WARPSORT_OK;
}

/* bytes from src (on src_dev) to dst on w's device, on stream st. */
static warpsort_status_t ws_spread_copy(ws_worker *w, void *dst, const void *src, int src_dev,
                                        size_t bytes, cudaStream_t st) {
    const int dev = w->ctx->device;
    if (src_dev == dev)
        WS_CUDA_TRY(w->ctx, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, st));
    else
        WS_CUDA_TRY(w->ctx, cudaMemcpyPeerAsync(dst, dev, src, src_dev, bytes, st));
    return WARPSORT_OK;
}

/* Lets w's device reach the other devices directly where they can (so the
 * peer copies take NVLink or PCIe peer-to-peer, not a trip through the
 * host). Enabling is only a speed-up: a refusal, or access already on, is
 * not an error. */
static void ws_spread_peer_access(const ws_spread_call *s, int dev) {
    for (unsigned q = 0; q < s->count; q++) {
        const int other = s->device[q];
        int can = 0;
        if (other == dev || cudaDeviceCanAccessPeer(&can, dev, other) != cudaSuccess || !can)
            continue;
        (void)cudaDeviceEnablePeerAccess(other, 0);
    }
    (void)cudaGetLastError();
}

static warpsort_status_t ws_spread_gather(ws_worker *w, void *arg) {
    ws_spread_call *s = (ws_spread_call *)arg;
    const ws_job *top = s->top;
    const unsigned i = w->index, count = s->count;
    const size_t kb = top->kb, vb = top->vb;
    WS_TRY(ws_checkpoint(w->ctx, "spread: gathering a part"));
    const double t0 = ws_trace_now(w->p);
    ws_spread_peer_access(s, w->ctx->device);
    const cudaStream_t st = ws_state(w->ctx)->stream;
    /* The slices' places in Y, checked against the part's size before any
     * copy writes there. */
    size_t *at = s->part_at + (size_t)i * (count + 1), off = 0;
    const size_t *from = s->cut + (size_t)i * count, *to = from + count;
    for (unsigned q = 0; q < count; q++) {
        at[q] = off;
        off += to[q] - from[q];
    }
    at[count] = off;
    if (off != s->lo[i + 1] - s->lo[i])
        return ws_error(w->ctx, WARPSORT_INTERNAL,
                        "spread: part %u would gather %zu items, not %zu", i, off,
                        s->lo[i + 1] - s->lo[i]);
    for (unsigned q = 0; q < count; q++) {
        const size_t b = from[q], len = to[q] - from[q];
        if (!len) continue;
        WS_TRY(ws_spread_copy(w, s->free_k[i] + at[q] * kb, s->run_k[q] + b * kb, s->device[q],
                              len * kb, st));
        if (vb)
            WS_TRY(ws_spread_copy(w, s->free_v[i] + at[q] * vb, s->run_v[q] + b * vb, s->device[q],
                                  len * vb, st));
    }
    WS_CUDA_TRY(w->ctx, cudaStreamSynchronize(st));
    ws_trace_host(w->p, t0, "phase", "spread: gather a part");
    return WARPSORT_OK;
}

static warpsort_status_t ws_spread_merge(ws_worker *w, void *arg) {
    ws_spread_call *s = (ws_spread_call *)arg;
    const ws_job *top = s->top;
    const unsigned i = w->index, count = s->count;
    const size_t kb = top->kb, vb = top->vb, m = s->lo[i + 1] - s->lo[i];
    const ws_job_buffers *d = &s->buf[i];
    const warpsort::key_codec c = {ws_dtype_kind((int)top->dtype), top->desc};
    const cudaStream_t st = ws_state(w->ctx)->stream;
    WS_TRY(ws_checkpoint(w->ctx, "spread: merging a part"));
    const double t0 = ws_trace_now(w->p);
    unsigned char *sk = s->free_k[i], *sv = s->free_v[i];
    unsigned char *dk = (unsigned char *)s->run_k[i], *dv = (unsigned char *)s->run_v[i];
    size_t at[WS_SPREAD_MAX + 1];
    memcpy(at, s->part_at + (size_t)i * (count + 1), (count + 1) * sizeof *at);
    /* Runs r and r + 1 of level L merge into one run of level L + 1; an odd
     * last run is copied across. */
    for (unsigned runs = count; runs > 1; runs = (runs + 1) / 2) {
        for (unsigned r = 0; r < runs; r += 2) {
            const size_t lo = at[r], mid = at[r + 1 < runs ? r + 1 : runs];
            const size_t hi = r + 1 < runs ? at[r + 2] : mid;
            if (mid == lo || hi == mid) {
                if (hi > lo) {
                    WS_CUDA_TRY(w->ctx, cudaMemcpyAsync(dk + lo * kb, sk + lo * kb, (hi - lo) * kb,
                                                        cudaMemcpyDeviceToDevice, st));
                    if (vb)
                        WS_CUDA_TRY(w->ctx,
                                    cudaMemcpyAsync(dv + lo * vb, sv + lo * vb, (hi - lo) * vb,
                                                    cudaMemcpyDeviceToDevice, st));
                }
            } else {
                const cudaError_t err =
                    ws_merge2(kb, vb, c, sk + lo * kb, vb ? sv + lo * vb : NULL, mid - lo,
                              sk + mid * kb, vb ? sv + mid * vb : NULL, hi - mid, dk + lo * kb,
                              vb ? dv + lo * vb : NULL, d->bounds, st);
                if (err != cudaSuccess) return ws_cuda_fail(w->ctx, err, "ws_merge2");
            }
            at[r / 2] = lo;
        }
        at[(runs + 1) / 2] = m;
        unsigned char *tk = sk, *tv = sv;
        sk = dk;
        sv = dv;
        dk = tk;
        dv = tv;
    }
    s->fin_k[i] = sk;
    s->fin_v[i] = sv;
    /* While the device merges: the faults of an output other than the input
     * (the copy in touched the input's pages), out of the copy out. */
    const size_t b = s->lo[i];
    if (!d->direct && top->segs[0].keys != top->keys_out) {
        if (top->keys_out && !top->keys_out_pinned)
            ws_populate_output(w->ctx, w->p, top->keys_out + b * kb, m * kb);
        if (top->vals_out && !top->vals_out_pinned)
            ws_populate_output(w->ctx, w->p, top->vals_out + b * vb, m * vb);
    }
    WS_CUDA_TRY(w->ctx, cudaStreamSynchronize(st));
    ws_trace_host(w->p, t0, "phase", "spread: merge a part");
    /* The last checkpoint: past it the caller's arrays are written. */
    return ws_checkpoint(w->ctx, "writing the result back");
}

static warpsort_status_t ws_spread_out(ws_worker *w, void *arg) {
    ws_spread_call *s = (ws_spread_call *)arg;
    const ws_job *top = s->top;
    const unsigned i = w->index;
    const size_t kb = top->kb, vb = top->vb, b = s->lo[i], m = s->lo[i + 1] - b;
    const int direct = s->buf[i].direct;
    const double t0 = ws_trace_now(w->p);
    if (top->keys_out)
        WS_TRY(ws_d2h(w->ctx, w->p, top->keys_out + b * kb, s->fin_k[i], m * kb,
                      direct || top->keys_out_pinned, NULL, 0, kb));
    if (top->vals_out)
        WS_TRY(ws_d2h(w->ctx, w->p, top->vals_out + b * vb, s->fin_v[i], m * vb,
                      direct || top->vals_out_pinned, NULL, 1, vb));
    WS_CUDA_TRY(w->ctx, cudaStreamSynchronize(w->p->d2h));
    ws_trace_host(w->p, t0, "phase", "spread: copy a part out");
    return WARPSORT_OK;
}

warpsort_status_t ws_spread(warpsort_context_t *ctx, const ws_job *top, ws_worker *workers,
                            unsigned count, int *taken) {
    *taken = 0;
    if (count < 2 || count > WS_SPREAD_MAX || top->nsegs != 1 || top->out_map) return WARPSORT_OK;
    ws_spread_call *s = (ws_spread_call *)calloc(1, sizeof *s);
    if (!s) return ws_error(ctx, WARPSORT_OUT_OF_MEMORY, "cannot allocate the spread's state");
    s->top = top;
    s->count = count;
    for (unsigned w = 0; w <= count; w++)
        s->lo[w] = top->n / count * w + top->n % count * w / count;
    /* Several pieces, so the workspace has the second buffer (Y). */
    for (unsigned w = 0; w < count; w++) {
        s->device[w] = workers[w].ctx->device;
        s->pieces[w] = ws_pieces_for(workers[w].ctx, s->lo[w + 1] - s->lo[w], top->kb, top->vb,
                                     workers[w].p->slot_bytes, workers[w].budget);
        if (s->pieces[w] < 2) {
            free(s);
            return WARPSORT_OK;
        }
    }
    *taken = 1;
    warpsort_status_t r = ws_workers_run(ctx, ws_spread_share, NULL, s);
    if (r == WARPSORT_OK) r = ws_workers_run(ctx, ws_spread_cut, NULL, s);
    if (r == WARPSORT_OK) {
        memcpy(s->cut + (size_t)count * count, s->run_len, count * sizeof *s->cut);
        r = ws_workers_run(ctx, ws_spread_gather, NULL, s);
    }
    if (r == WARPSORT_OK) r = ws_workers_run(ctx, ws_spread_merge, NULL, s);
    if (r == WARPSORT_OK) r = ws_workers_run(ctx, ws_spread_out, NULL, s);
    free(s);
    return r;
}
