/*
 * incore.cu - one job that fits the device (pipeline.cu's overview): cut
 * into pieces, each copied in, sorted by the leaf as it lands, merged up a
 * binary tree, then copied out once the device is done.
 */
#include "cuda/iota.h"
#include "cuda/workspace.h"
#include "pipe.h"

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

/* The job's layout (pipe.h). pieces = 1 needs what the whole-array staging
 * always needed (warpsort_workspace_size documents it). */
ws_job_layout ws_job_layout_for(const warpsort_context_t *ctx, size_t n, size_t kb, size_t vb,
                                unsigned pieces) {
    ws_job_layout l;
    /* The sort's own workspace at 0, for the piece that needs most (not
     * always the largest: the paths differ). */
    size_t sort_ws = 0;
    for (unsigned i = 0; i < pieces; i++) {
        const size_t m = ws_piece_begin(n, pieces, i + 1) - ws_piece_begin(n, pieces, i);
        l.plan[i] = ws_plan_make(&ws_state(ctx)->dev, m, kb, vb);
        if (l.plan[i].lay.total > sort_ws) sort_ws = l.plan[i].lay.total;
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
 * costs launches and a merge (half a slot and 8 pieces measured best,
 * bench/NOTES.md). The test rings (a few KiB) keep many pieces. */
unsigned ws_pieces_for(const warpsort_context_t *ctx, size_t n, size_t kb, size_t vb, size_t slot,
                       size_t budget) {
    const size_t bytes = n * (kb + vb), piece_min = slot / 2;
    unsigned p = 1;
    while (p < WS_MAX_PIECES && bytes / (2 * (size_t)p) >= piece_min && n >= 2 * (size_t)p) p *= 2;
    for (; p > 0; p /= 2)
        if (ws_job_layout_for(ctx, n, kb, vb, p).total <= budget) return p;
    return 0;
}

/* Host -> device on the h2d stream: directly (pinned source, or a job small
 * enough for the driver's staging), else through the ring slot by slot. */
/* Items [lo, hi) of the job's input to the device arrays dk, dv. */
static warpsort_status_t ws_copy_in(warpsort_context_t *ctx, ws_pipe *p, const ws_job *j, size_t lo,
                                    size_t hi, unsigned char *dk, unsigned char *dv, int direct) {
    size_t base = 0;
    for (size_t s = 0; s < j->nsegs && base < hi; s++) {
        const ws_seg *g = &j->segs[s];
        const size_t b = lo > base ? lo : base;
        const size_t e = hi < base + g->count ? hi : base + g->count;
        if (b < e) {
            WS_TRY(ws_h2d(ctx, p, dk + b * j->kb, g->keys + (b - base) * j->kb, (e - b) * j->kb,
                          direct || j->keys_in_pinned));
            if (j->vb && !j->iota)
                WS_TRY(ws_h2d(ctx, p, dv + b * j->vb, g->vals + (b - base) * j->vb, (e - b) * j->vb,
                              direct || j->vals_in_pinned));
        }
        base += g->count;
    }
    return WARPSORT_OK;
}

/* Merges sorted [lo, mid) and [mid, hi) of (sk, sv) into the same range of
 * (dk, dv). */
static warpsort_status_t ws_merge_range(warpsort_context_t *ctx, const ws_job *j,
                                        const unsigned char *sk, const unsigned char *sv,
                                        unsigned char *dk, unsigned char *dv, size_t lo, size_t mid,
                                        size_t hi, size_t *bounds, cudaStream_t stream) {
    const warpsort::key_codec c = {ws_dtype_kind((int)j->dtype), j->desc};
    const size_t kb = j->kb, vb = j->vb;
    const void *av = vb ? sv + lo * vb : NULL, *bv = vb ? sv + mid * vb : NULL;
    void *ov = vb ? dv + lo * vb : NULL;
    cudaError_t err = ws_merge2(kb, vb, c, sk + lo * kb, av, mid - lo, sk + mid * kb, bv, hi - mid,
                                dk + lo * kb, ov, bounds, stream);
    if (err != cudaSuccess) return ws_cuda_fail(ctx, err, "ws_merge2");
    return WARPSORT_OK;
}

/* Piece i has been enqueued for copying in: its indices (argsort), its sort,
 * and every merge of the tree that it completes, on the compute stream. */
static warpsort_status_t ws_piece_compute(warpsort_context_t *ctx, ws_pipe *p, const ws_job *j,
                                          const ws_job_layout *l, const ws_job_buffers *d,
                                          unsigned i, unsigned pieces) {
    const cudaStream_t cs = ws_state(ctx)->stream;
    const size_t n = j->n, kb = j->kb, vb = j->vb;
    const size_t b = ws_piece_begin(n, pieces, i), e = ws_piece_begin(n, pieces, i + 1);
    if (j->iota) {
        const unsigned sp = ws_trace_dev_begin(p, cs);
        WS_CUDA_TRY(ctx, ws_iota(d->av + b * vb, e - b, j->iota_base + b, vb,
                                 ws_state(ctx)->dev.sm_count, cs));
        ws_trace_dev_end(p, sp, cs, "compute", "indices");
    }
    if (!d->one_stream) WS_CUDA_TRY(ctx, cudaStreamWaitEvent(cs, p->piece_ev[i], 0));
    if (e - b > 1) {
        const unsigned sp = ws_trace_dev_begin(p, cs);
        const char *failed = NULL;
        const cudaError_t err =
            ws_device_sort(&l->plan[i], d->ak + b * kb, vb ? d->av + b * vb : NULL, j->dtype,
                           j->desc, j->stable, d->ws, cs, &failed);
        if (err != cudaSuccess) return ws_cuda_fail(ctx, err, failed);
        ws_trace_dev_end(p, sp, cs, "compute", "sort a piece");
    }
    /* Level L merges runs of 2^(L-1) pieces; it reads A when L-1 is even
     * (pieces sort in A) and writes B when L is odd. */
    for (unsigned L = 1; L <= d->levels && (i + 1) % (1u << L) == 0; L++) {
        const unsigned r = (i + 1) / (1u << L) - 1;
        const size_t lo = ws_piece_begin(n, pieces, r << L);
        const size_t mid = ws_piece_begin(n, pieces, (r << L) + (1u << (L - 1)));
        const size_t hi = ws_piece_begin(n, pieces, (r + 1) << L);
        const int src_b = (L - 1) % 2, dst_b = L % 2;
        const unsigned sp = ws_trace_dev_begin(p, cs);
        WS_TRY(ws_merge_range(ctx, j, src_b ? d->bk : d->ak, src_b ? d->bv : d->av,
                              dst_b ? d->bk : d->ak, dst_b ? d->bv : d->av, lo, mid, hi, d->bounds,
                              cs));
        ws_trace_dev_end(p, sp, cs, "compute", "merge");
    }
    return WARPSORT_OK;
}

/* The point of no return: every error so far left the caller's arrays
 * alone; wait for the device to finish before the first byte goes back. */
static warpsort_status_t ws_job_copy_out(warpsort_context_t *ctx, ws_pipe *p, const ws_job *j,
                                         const ws_job_buffers *d) {
    const size_t n = j->n, kb = j->kb, vb = j->vb;
    const int direct = d->direct;
    const unsigned char *fk = ws_job_final(d, 0), *fv = ws_job_final(d, 1);
    WS_CUDA_TRY(ctx, cudaEventRecord(p->done_ev, ws_state(ctx)->stream));
    /* While the device finishes: the faults of an output other than the
     * input (whose pages the copy in touched), out of the copy out. */
    const double t_fault = ws_trace_now(p);
    const int fresh = !direct && !j->out_map && !(j->nsegs == 1 && j->segs[0].keys == j->keys_out);
    if (fresh) {
        if (j->keys_out && !j->keys_out_pinned) ws_populate_output(ctx, p, j->keys_out, n * kb);
        if (j->vals_out && !j->vals_out_pinned) ws_populate_output(ctx, p, j->vals_out, n * vb);
        ws_trace_host(p, t_fault, "host", "fault the output in");
    }
    const double t_dev = ws_trace_now(p);
    /* A job with a landing hook must have read all its input before the
     * hook runs (it hands the blocks read out for writing): on one stream
     * too, the wait comes first. */
    if (!d->one_stream || j->before_out) WS_CUDA_TRY(ctx, cudaEventSynchronize(p->done_ev));
    ws_trace_host(p, t_dev, "host", "wait for the device");
    WS_TRY(ws_checkpoint(ctx, "writing the result back"));
    if (j->before_out) WS_TRY(j->before_out(j->before_out_arg));
    if (j->keys_out)
        WS_TRY(ws_d2h(ctx, p, j->keys_out, fk, n * kb, direct || j->keys_out_pinned, j->out_map, 0,
                      kb));
    if (j->vals_out)
        WS_TRY(ws_d2h(ctx, p, j->vals_out, fv, n * vb, direct || j->vals_out_pinned, j->out_map, 1,
                      vb));
    WS_CUDA_TRY(ctx, cudaStreamSynchronize(p->d2h));
    return WARPSORT_OK;
}

/* The device side of the in-core job (see pipeline.cu): copies in piece
 * by piece and sorts each as it lands, merging the tree; all enqueued, the
 * sorted job left at ws_job_final. */
warpsort_status_t ws_incore_device(warpsort_context_t *ctx, ws_pipe *p, const ws_job *j,
                                   unsigned pieces, ws_job_buffers *d) {
    const cudaStream_t cs = ws_state(ctx)->stream;
    const size_t n = j->n, kb = j->kb, vb = j->vb;
    d->direct = n * (kb + vb) <=
                (p->slot_bytes < WS_DIRECT_MAX_BYTES ? p->slot_bytes : WS_DIRECT_MAX_BYTES);
    const ws_job_layout l = ws_job_layout_for(ctx, n, kb, vb, pieces);
    WS_TRY(ws_checkpoint(ctx, "device workspace"));
    WS_TRY(ws_acquire(ctx, l.total, &d->ws));
    const int staged =
        !d->direct &&
        (!j->keys_in_pinned || (vb && !j->iota && !j->vals_in_pinned) ||
         (j->keys_out && !j->keys_out_pinned) || (j->vals_out && !j->vals_out_pinned));
    if (staged) WS_TRY(ws_pipe_ring(ctx, p));
    /* A job in one piece whose copies are all direct (small, or pinned)
     * runs on the compute stream alone: with one piece there is nothing to
     * overlap, and the stream order replaces the events and the wait for
     * the device (an asynchronous fault is sticky, so the copy out behind it
     * never runs); the hops cost small arrays 3-15 % (bench/NOTES.md). */
    d->one_stream = !staged && pieces == 1;
    p->in_s = d->one_stream ? cs : p->h2d;
    p->out_s = d->one_stream ? cs : p->d2h;
    /* Earlier work on the context's stream may still use the workspace. */
    if (!d->one_stream) {
        WS_CUDA_TRY(ctx, cudaEventRecord(p->start_ev, cs));
        WS_CUDA_TRY(ctx, cudaStreamWaitEvent(p->h2d, p->start_ev, 0));
    }
    d->ak = d->ws + l.a_keys;
    d->av = vb ? d->ws + l.a_vals : NULL;
    d->bk = d->ws + l.b_keys;
    d->bv = vb ? d->ws + l.b_vals : NULL;
    d->bounds = (size_t *)(d->ws + l.bounds);
    d->levels = 0;
    while ((1u << d->levels) < pieces) d->levels++;
    for (unsigned i = 0; i < pieces; i++) {
        WS_TRY(ws_checkpoint(ctx, "copying a piece in"));
        WS_TRY(ws_copy_in(ctx, p, j, ws_piece_begin(n, pieces, i), ws_piece_begin(n, pieces, i + 1),
                          d->ak, d->av, d->direct));
        if (!d->one_stream) WS_CUDA_TRY(ctx, cudaEventRecord(p->piece_ev[i], p->h2d));
        WS_TRY(ws_piece_compute(ctx, p, j, &l, d, i, pieces));
    }
    return WARPSORT_OK;
}

/* The in-core job: the device side, a wait for the device, then the copy
 * out. Nothing reaches keys_out / vals_out before the wait. */
warpsort_status_t ws_incore(warpsort_context_t *ctx, ws_pipe *p, const ws_job *j, unsigned pieces) {
    ws_job_buffers d;
    WS_TRY(ws_incore_device(ctx, p, j, pieces, &d));
    return ws_job_copy_out(ctx, p, j, &d);
}
