/*
 * exchange.cu - the exchange and the merge of a distributed sort (sort.cu,
 * steps 4 and 5).
 *
 * Exchange: rank me's sorted run is cut at cuts[me][0..p]; the piece
 * [cuts[me][j], cuts[me][j+1]) belongs to rank j. One NCCL group sends
 * every piece to its rank and receives this rank's piece of every other
 * rank into recv, in rank order; this rank's own piece stays where it is.
 * Pieces travel 16-byte aligned (ws_nccl_pad, ws_nccl_slots: a few items
 * before a piece go with it and are skipped). Counts of zero send nothing
 * (both sides compute the same counts).
 *
 * Merge: the p pieces this rank now holds are sorted runs, and run r (from
 * rank r) precedes run r + 1 among equal keys. Adjacent runs are merged in
 * pairs, pass after pass, with the two-way merge (ties to the first run, so
 * rank order and, within a rank, position order survive: stable), until one
 * run is left. Each pass writes every run into its output buffer at the
 * run's final offset (a run without a partner is copied), alternating
 * between tmp and keys_out so that the last pass lands in keys_out; runs
 * never straddle two buffers. Empty runs are dropped first.
 */
#include <string.h>

#include "core/internal.h"
#include "cuda/check.cuh"
#include "cuda/pipeline/pipe.h"
#include "nccl/nccl_sort.h"

cudaError_t ws_nccl_side_open(ws_nccl_side *o, int streams, int events) {
    memset(o, 0, sizeof *o);
    o->want = events;
    if (streams < 1 || streams > 2 || events < streams || events > WS_NCCL_SIDE_EVENTS)
        return cudaErrorInvalidValue;
    int least = 0, greatest = 0;
    cudaError_t err = cudaDeviceGetStreamPriorityRange(&least, &greatest);
    while (err == cudaSuccess && o->streams < streams) {
        cudaStream_t made;
        err = cudaStreamCreateWithPriority(&made, cudaStreamNonBlocking,
                                           o->streams ? least : greatest);
        if (err == cudaSuccess) o->st[o->streams++] = made;
    }
    while (err == cudaSuccess && o->events < events) {
        cudaEvent_t made;
        err = cudaEventCreateWithFlags(&made, cudaEventDisableTiming);
        if (err == cudaSuccess) o->ev[o->events++] = made;
    }
    return err;
}

cudaError_t ws_nccl_side_close(ws_nccl_side *o, cudaStream_t s) {
    cudaError_t err = cudaSuccess;
    for (int k = 0; k < 2; k++) {
        if (!o->st[k]) continue;
        cudaError_t e;
        if (o->events == o->want) {
            cudaEvent_t end = o->ev[o->want - o->streams + k];
            e = cudaEventRecord(end, o->st[k]);
            if (e == cudaSuccess) e = cudaStreamWaitEvent(s, end, 0);
        } else {
            e = cudaStreamSynchronize(o->st[k]);
        }
        if (err == cudaSuccess) err = e;
    }
    for (int i = 0; i < o->events; i++) (void)cudaEventDestroy(o->ev[i]);
    for (int k = 0; k < 2; k++)
        if (o->st[k]) (void)cudaStreamDestroy(o->st[k]);
    return err;
}

warpsort_status_t ws_nccl_exchange(const ws_nccl_call *c, const ws_nccl_bufs *b,
                                   const uint64_t *cuts, size_t n_out) {
    const int p = c->nranks, me = c->rank;
    const size_t row = (size_t)p + 1, kb = c->kb, vb = c->vb;
    const ncclDataType_t kt = ws_nccl_word(kb), vt = ws_nccl_word(vb);
    const uint64_t *mine = cuts + (size_t)me * row;
    size_t received = 0;
    for (int r = 0; r < p; r++) received += cuts[r * row + me + 1] - cuts[r * row + me];
    if (received != n_out)
        return ws_error(c->ctx, WARPSORT_INTERNAL, "%s: rank %d would receive %zu items, not %zu",
                        c->fn, me, received, n_out);
    size_t *slot_k = (size_t *)malloc(2 * (size_t)p * sizeof(size_t)), *slot_v = slot_k + p;
    if (!slot_k) return ws_error(c->ctx, WARPSORT_OUT_OF_MEMORY, "%s: no host memory", c->fn);
    ws_nccl_slots(cuts, p, me, kb, slot_k);
    ws_nccl_slots(cuts, p, me, vb, slot_v);
    ncclResult_t first = ncclSuccess;
    const char *what = "ncclGroupStart";
    ncclResult_t r = ncclGroupStart();
    if (r != ncclSuccess) {
        free(slot_k);
        return ws_nccl_fail(c->ctx, c->comm, r, what);
    }
    for (int peer = 0; peer < p; peer++) {
        if (peer == me) continue;
        /* Sent: the piece and its pad (aligned pieces, nccl_sort.h). */
        const size_t s0 = mine[peer], sn = mine[peer + 1] - mine[peer];
        const size_t spk = ws_nccl_pad(s0, sn, kb), spv = ws_nccl_pad(s0, sn, vb);
        const size_t r0 = cuts[peer * row + me], rn = cuts[peer * row + me + 1] - r0;
        const size_t rpk = ws_nccl_pad(r0, rn, kb), rpv = ws_nccl_pad(r0, rn, vb);
        if (sn) {
            r = ncclSend(b->sorted_k + (s0 - spk) * kb, sn + spk, kt, peer, c->comm, c->s);
            if (r == ncclSuccess && vb)
                r = ncclSend(b->sorted_v + (s0 - spv) * vb, sn + spv, vt, peer, c->comm, c->s);
            if (r != ncclSuccess && first == ncclSuccess) {
                first = r;
                what = "ncclSend";
            }
        }
        if (rn) {
            r = ncclRecv(b->recv_k + slot_k[peer] * kb, rn + rpk, kt, peer, c->comm, c->s);
            if (r == ncclSuccess && vb)
                r = ncclRecv(b->recv_v + slot_v[peer] * vb, rn + rpv, vt, peer, c->comm, c->s);
            if (r != ncclSuccess && first == ncclSuccess) {
                first = r;
                what = "ncclRecv";
            }
        }
    }
    free(slot_k);
    r = ncclGroupEnd(); /* always closes the group it opened */
    if (first == ncclSuccess && r != ncclSuccess) {
        first = r;
        what = "ncclGroupEnd";
    }
    if (first != ncclSuccess) return ws_nccl_fail(c->ctx, c->comm, first, what);
    return WARPSORT_OK;
}

/* A sorted run this rank holds: keys, values, items, offset in the output. */
struct ws_nccl_run {
    const unsigned char *k, *v;
    size_t n, at;
};

warpsort_status_t ws_nccl_merge(const ws_nccl_call *c, const ws_nccl_bufs *b, const uint64_t *cuts,
                                size_t n_out) {
    const int p = c->nranks, me = c->rank;
    const size_t row = (size_t)p + 1, kb = c->kb, vb = c->vb;
    ws_nccl_run *runs = (ws_nccl_run *)malloc((size_t)p * sizeof(ws_nccl_run));
    size_t *slot_k = (size_t *)malloc(2 * (size_t)p * sizeof(size_t)), *slot_v = slot_k + p;
    if (!runs || !slot_k) {
        free(runs);
        free(slot_k);
        return ws_error(c->ctx, WARPSORT_OUT_OF_MEMORY, "%s: no host memory", c->fn);
    }
    ws_nccl_slots(cuts, p, me, kb, slot_k);
    ws_nccl_slots(cuts, p, me, vb, slot_v);
    size_t count = 0, at = 0;
    for (int r = 0; r < p; r++) {
        const size_t lo = cuts[r * row + me], n = cuts[r * row + me + 1] - lo;
        ws_nccl_run run;
        if (r == me) {
            run.k = b->sorted_k + lo * kb;
            run.v = b->sorted_v + lo * vb;
        } else { /* past the piece's pad in its slot */
            run.k = b->recv_k + (slot_k[r] + ws_nccl_pad(lo, n, kb)) * kb;
            run.v = b->recv_v + (slot_v[r] + ws_nccl_pad(lo, n, vb)) * vb;
        }
        run.n = n;
        run.at = at;
        at += n;
        if (n) runs[count++] = run;
    }
    int passes = 0;
    while (((size_t)1 << passes) < count) passes++;
    warpsort_status_t s = WARPSORT_OK;
    if (passes == 0 && count == 1) { /* one run: it only needs to move */
        cudaError_t err =
            cudaMemcpyAsync(c->keys_out, runs[0].k, n_out * kb, cudaMemcpyDeviceToDevice, c->s);
        if (err == cudaSuccess && vb)
            err =
                cudaMemcpyAsync(c->vals_out, runs[0].v, n_out * vb, cudaMemcpyDeviceToDevice, c->s);
        if (err != cudaSuccess) s = ws_cuda_fail(c->ctx, err, "copy of the only run");
    }
    for (int pass = 1; pass <= passes && s == WARPSORT_OK; pass++) {
        const int to_out = (passes - pass) % 2 == 0;
        unsigned char *ok = to_out ? (unsigned char *)c->keys_out : b->tmp_k;
        unsigned char *ov = to_out ? (unsigned char *)c->vals_out : b->tmp_v;
        size_t next = 0;
        for (size_t i = 0; i < count && s == WARPSORT_OK; i += 2) {
            const ws_nccl_run a = runs[i];
            cudaError_t err;
            ws_nccl_run merged = {ok + a.at * kb, ov ? ov + a.at * vb : NULL, a.n, a.at};
            if (i + 1 < count) {
                const ws_nccl_run z = runs[i + 1];
                err = ws_merge2(kb, vb, c->codec, a.k, a.v, a.n, z.k, z.v, z.n, ok + a.at * kb,
                                vb ? ov + a.at * vb : NULL, b->bounds, c->s);
                merged.n = a.n + z.n;
            } else {
                err =
                    cudaMemcpyAsync(ok + a.at * kb, a.k, a.n * kb, cudaMemcpyDeviceToDevice, c->s);
                if (err == cudaSuccess && vb)
                    err = cudaMemcpyAsync(ov + a.at * vb, a.v, a.n * vb, cudaMemcpyDeviceToDevice,
                                          c->s);
            }
            if (err != cudaSuccess) s = ws_cuda_fail(c->ctx, err, "merge of received runs");
            runs[next++] = merged;
        }
        count = next;
    }
    free(runs);
    free(slot_k);
    return s;
}
