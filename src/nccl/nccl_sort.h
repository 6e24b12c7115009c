/*
 * nccl_sort.h - what the files of the distributed sort share (sort.cu is
 * the entry and states the algorithm; split.cu finds the split points;
 * exchange.cu moves the parts and merges them). One call is described by
 * a ws_nccl_call that sort.cu fills and checks; everything below it trusts
 * the call's arguments.
 * Internal; CUDA translation units only (the bench reads the phase list).
 */
#ifndef WARPSORT_NCCL_SORT_H
#define WARPSORT_NCCL_SORT_H

#include <cuda_runtime.h>
#include <nccl.h>
#include <stddef.h>
#include <stdint.h>

#include "warpsort.h"

/* The phases of one call, in order, as the bench reports them: the two
 * agreement rounds (counts and arguments, then workspace and capacity), the
 * sample and the partition of the partition-first route (sample, splitters
 * and counts, to the host; then the scatter; a call the counts send to the
 * sort-first route spends its sample phase on them and no partition),
 * the local sort (sort-first: from the input, no copy; partition-first:
 * the sorts of the parts as they arrive, with the exchange under them, so
 * the three phases after it are empty), the split-point search, the
 * exchange, the merge of the received runs (with two ranks the merge runs
 * under the exchange: the MERGE phase is then the tail after the last
 * chunk). */
#define WS_NCCL_PHASE_LIST(X)   \
    X(AGREE, "agree")           \
    X(SAMPLE, "sample")         \
    X(PARTITION, "partition")   \
    X(LOCAL_SORT, "local-sort") \
    X(SPLITTERS, "splitters")   \
    X(EXCHANGE, "exchange")     \
    X(MERGE, "merge")

enum ws_nccl_phase {
#define WS_NCCL_X_ENUM_(name, text) WS_NCCL_PHASE_##name,
    WS_NCCL_PHASE_LIST(WS_NCCL_X_ENUM_)
#undef WS_NCCL_X_ENUM_
        WS_NCCL_PHASES
};

/* Events the call records on its stream at the start of every phase and
 * at its end (ev[WS_NCCL_PHASES]), when a caller asks (the bench). */
struct ws_nccl_phase_events {
    cudaEvent_t ev[WS_NCCL_PHASES + 1];
    int partition_first; /* set by the call: 1 if it took that route */
};

#ifdef __cplusplus
extern "C" {
#endif
/* warpsort_nccl_sort_pairs, with events per phase (NULL: none) and values
 * optional (values_in NULL and value_bytes 0 for keys alone). */
warpsort_status_t ws_nccl_sort_timed(warpsort_context_t *ctx, ncclComm_t comm, const void *keys_in,
                                     const void *values_in, size_t n_in, void *keys_out,
                                     void *values_out, size_t out_capacity, size_t *n_out,
                                     warpsort_dtype_t dtype, size_t value_bytes, unsigned flags,
                                     cudaStream_t stream, struct ws_nccl_phase_events *events);
#ifdef __cplusplus
}
#endif

#ifdef __CUDACC__
#include "warpsort/key_traits.cuh"

/* Upper bound on ranks: the host keeps a few arrays of p x p words. */
#define WS_NCCL_MAX_RANKS 4096
/* Most chunks of the two-rank overlapped exchange (overlap.cu). */
#define WS_NCCL_CHUNKS 8

/* The split-point search tests one digit of WS_NCCL_DIGIT_BITS bits of every
 * boundary per round: WS_NCCL_DIGITS - 1 candidates, one NCCL all-reduce
 * (4 rounds for 32-bit keys, 8 for 64-bit). */
#define WS_NCCL_DIGIT_BITS 8
#define WS_NCCL_DIGITS (1 << WS_NCCL_DIGIT_BITS)

/* One rank's call, checked by sort.cu. */
struct ws_nccl_call {
    warpsort_context_t *ctx;
    ncclComm_t comm;
    int rank, nranks, device;
    const void *keys_in, *vals_in;
    size_t n_in;
    void *keys_out, *vals_out;
    size_t cap;
    warpsort_dtype_t dtype;
    size_t kb, vb; /* key and value bytes; vb 0: keys alone */
    int pairs;     /* the pairs form: vb must be 4 or 8 */
    warpsort::key_codec codec;
    unsigned flags;
    cudaStream_t s;
    const char *fn;
    ws_nccl_phase_events *events;
};

/* The call's device memory. ctl is the control block (split.cu's search
 * state and the words the agreement rounds exchange); the rest lies in the
 * context workspace. */
struct ws_nccl_bufs {
    uint64_t *ctl;
    unsigned char *leaf;                /* the local sort's workspace */
    unsigned char *sorted_k, *sorted_v; /* n_in items: the sorted copy of the input */
    unsigned char *recv_k, *recv_v;     /* n_out items: runs from the other ranks */
    unsigned char *tmp_k, *tmp_v;       /* n_out items: merge ping-pong (p > 2) */
    size_t *bounds;                     /* merge partition points */
    size_t *steps; /* 2 x (WS_NCCL_CHUNKS + 1) words: the overlapped merge's steps */
};

/* Control block of p ranks, as word offsets (ws_nccl_ctl_layout). */
struct ws_nccl_ctl {
    size_t hdr_in, hdr_all;   /* agreement: 2 words per rank */
    size_t v, lo, hi;         /* search state: one word per boundary */
    size_t local, sum;        /* WS_NCCL_DIGITS words per boundary */
    size_t lbeq_in, lbeq_all; /* lower bound and equal count per boundary (x p) */
    size_t words;
};
ws_nccl_ctl ws_nccl_ctl_layout(int nranks);

/* Status of an NCCL failure, its text recorded on the context. */
warpsort_status_t ws_nccl_fail(warpsort_context_t *ctx, ncclComm_t comm, ncclResult_t r,
                               const char *what);
#define WS_NCCL_TRY(c, call)                                                                \
    do {                                                                                    \
        ncclResult_t ws_nr_ = (call);                                                       \
        if (ws_nr_ != ncclSuccess) return ws_nccl_fail((c)->ctx, (c)->comm, ws_nr_, #call); \
    } while (0)

/* NCCL's element type of 4- or 8-byte words. */
static inline ncclDataType_t ws_nccl_word(size_t bytes) {
    return bytes == 8 ? ncclUint64 : ncclUint32;
}

/* First global output position of rank j + 1: the sum of the output counts
 * of ranks 0..j. */
__host__ __device__ inline uint64_t ws_nccl_boundary(uint64_t n_total, int nranks, int j) {
    const uint64_t q = n_total / (uint64_t)nranks, rem = n_total % (uint64_t)nranks;
    const uint64_t r = (uint64_t)j + 1;
    return r * q + (r < rem ? r : rem);
}

/* split.cu: the cut points of every rank's sorted run (p x (p + 1) words,
 * cuts[r * (p + 1) + j] = first item of rank r's run that goes to rank j,
 * cuts[.. + p] = n_in of rank r), found by the digit search over the sorted
 * copies. Waits for the stream once (the cuts go to the host). */
warpsort_status_t ws_nccl_find_cuts(const ws_nccl_call *c, const ws_nccl_bufs *b,
                                    const uint64_t *n_in_all, uint64_t n_total, uint64_t *cuts);

/* Aligned pieces. NCCL's Simple and LL128 protocols copy buffers that are
 * not 16-byte aligned far slower, and a cut falls anywhere. So a piece
 * that starts at item `start` of a sorted run (whose base is 256-byte
 * aligned) goes out with the ws_nccl_pad(start, w) items before it, which
 * the receiver skips, and every received piece starts a 16-byte aligned
 * slot of the receive buffer. w: key or value bytes (no padding where w
 * does not divide 16; w 0: no values). An empty piece sends nothing, pad
 * included. */
/* Items of w bytes in 16 (1 where w does not divide 16: no alignment). */
static inline size_t ws_nccl_align_items(size_t w) { return w && 16 % w == 0 ? 16 / w : 1; }
static inline size_t ws_nccl_pad(size_t start, size_t items, size_t w) {
    return items ? start % ws_nccl_align_items(w) : 0;
}
/* Receive buffer bytes beyond n_out items, per other rank: its pad and the
 * rounding of its slot. */
#define WS_NCCL_RECV_SLACK 32
/* Where every rank's piece lands in this rank's receive buffer of w-byte
 * words: at[r] = item offset of its slot (pad included; the piece itself
 * starts ws_nccl_pad items later). Ranks in order, this rank's own piece
 * none (it stays in the sorted run). cuts as ws_nccl_find_cuts gives them. */
static inline void ws_nccl_slots(const uint64_t *cuts, int p, int me, size_t w, size_t *at) {
    const size_t row = (size_t)p + 1, q = ws_nccl_align_items(w);
    size_t next = 0;
    for (int r = 0; r < p; r++) {
        at[r] = next;
        if (r == me) continue;
        const size_t start = cuts[r * row + me], n = cuts[r * row + me + 1] - start;
        next += ws_nccl_pad(start, n, w) + n;
        next = (next + q - 1) / q * q;
    }
}

/* exchange.cu: a call's streams beside its own, for the exchange (the
 * highest priority) and, with two, a merge (the lowest), and its events.
 * close makes s wait for every side stream (through the last events, or on
 * the host when they could not all be made), then releases them all: work
 * already queued on them still runs. */
#define WS_NCCL_SIDE_EVENTS (WS_NCCL_CHUNKS + 3)
struct ws_nccl_side {
    cudaStream_t st[2]; /* st[0] the highest priority, st[1] the lowest */
    cudaEvent_t ev[WS_NCCL_SIDE_EVENTS];
    int streams, events, want;
};
cudaError_t ws_nccl_side_open(ws_nccl_side *o, int streams, int events);
cudaError_t ws_nccl_side_close(ws_nccl_side *o, cudaStream_t s);

/* exchange.cu: sends every rank its part of this rank's sorted run and
 * receives this rank's part from every other, then merges the p runs
 * (rank order, stable) into keys_out / vals_out. */
warpsort_status_t ws_nccl_exchange(const ws_nccl_call *c, const ws_nccl_bufs *b,
                                   const uint64_t *cuts, size_t n_out);
warpsort_status_t ws_nccl_merge(const ws_nccl_call *c, const ws_nccl_bufs *b, const uint64_t *cuts,
                                size_t n_out);

/* overlap.cu, two ranks: the exchange in `chunks` grouped send/receive
 * rounds on a stream of its own, each chunk merged into keys_out on a
 * third stream as soon as it has arrived (as far as is safe), so the merge
 * runs under the exchange. Same result as ws_nccl_exchange +
 * ws_nccl_merge. Records the MERGE phase mark on the call's stream when the
 * exchange has ended; the call's stream then waits for the merge. */
int ws_nccl_chunks(uint64_t n_total, int nranks); /* the same on every rank */
warpsort_status_t ws_nccl_exchange_merge(const ws_nccl_call *c, const ws_nccl_bufs *b,
                                         const uint64_t *cuts, size_t n_out, int chunks);

/* partition.cu: the partition-first route (keys alone, 2 to WS_PT_MAX_RANKS
 * ranks; the file says how it works). The plan depends only on values every
 * rank agreed on, so every rank makes the same one. */
struct ws_cuda_state;
#define WS_PT_MAX_RANKS 16
#define WS_PT_MAX_PARTS 8
#define WS_PT_MAX_BUCKETS 256 /* p x K + p - 1 <= 143 */
struct ws_pt_plan {
    int p, K, B;                        /* ranks, parts per rank, buckets */
    uint64_t s_at[WS_PT_MAX_RANKS + 1]; /* each rank's slot in the gathered sample */
    uint64_t pos[WS_PT_MAX_BUCKETS];    /* the B - 1 splitters' places in the sorted sample */
    uint64_t band_cap;                  /* keys a band may hold in all */
};
/* WARPSORT_NCCL_ROUTE: sort-first (never partition), partition (whenever
 * the call allows it, any size), partition-only (as partition, and a
 * partition the keys do not allow fails with INTERNAL instead of falling
 * back: the tests' proof that the route ran); unset: partition-first from
 * WS_PT_MIN_RANKS ranks and WS_PT_MIN_PER_RANK items per rank. */
enum {
    WS_NCCL_ROUTE_AUTO,
    WS_NCCL_ROUTE_SORT_FIRST,
    WS_NCCL_ROUTE_PARTITION,
    WS_NCCL_ROUTE_PARTITION_ONLY
};
int ws_nccl_route(void);
/* 1 and the plan if this call may take the route. */
int ws_pt_plan_for(const ws_nccl_call *c, const uint64_t *n_in_all, uint64_t n_total,
                   ws_pt_plan *pl);
/* Workspace bytes of the route for this rank, with the plan, or without
 * one (an upper bound over every plan with these counts). */
size_t ws_pt_workspace(const ws_nccl_call *c, const ws_pt_plan *pl, size_t n_in, size_t n_out);
size_t ws_pt_workspace_bound(const struct ws_cuda_state *st, int nranks, size_t n_in, size_t n_out,
                             size_t kb);
/* What the gathered counts (cnt[q * B + b]: rank q's keys in bucket b) say
 * of this rank's output: band pieces kept, parts, their places. */
struct ws_pt_sizes {
    uint64_t tail, head;               /* items of band me-1 / band me this rank keeps */
    uint64_t band_from;                /* first kept item of band me-1, sorted */
    uint64_t band_n[2];                /* items of band me-1 and band me in all */
    uint64_t part_n[WS_PT_MAX_PARTS];  /* part k of this rank, in all */
    uint64_t part_at[WS_PT_MAX_PARTS]; /* its offset in recv and after tail in keys_out */
};
/* Checks the counts against the plan, with the same verdict on every rank
 * (every boundary inside its band, every band within its buffer, every part
 * within the leaf's reserve), and sizes this rank's pieces. 0: the route
 * does not hold for these keys. */
int ws_pt_check(const ws_nccl_call *c, const ws_pt_plan *pl, const uint64_t *cnt, uint64_t n_total,
                size_t n_out, ws_pt_sizes *z);

/* The exchange of one rank, planned on the host from the counts: where the
 * scatter puts its keys of every bucket (a buffer and an item offset in
 * it) and its sends and receives, round by round (round 0 the bands, round
 * 1 + k part k; msg[round_at[r] .. round_at[r + 1])). Sends read a piece
 * the scatter wrote; every rank's plan pairs with every other's. */
enum { WS_PT_SEND, WS_PT_RECV, WS_PT_BAND0, WS_PT_BAND1, WS_PT_BUFS };
struct ws_pt_place {
    int buf;
    uint64_t at;
};
struct ws_pt_xmsg {
    int buf;
    uint64_t at, n;
    int peer, recv; /* recv: 1 receive, 0 send */
};
#define WS_PT_ROUND_MSGS (4 * WS_PT_MAX_RANKS) /* a round's messages at most */
struct ws_pt_exchange {
    ws_pt_place dst[WS_PT_MAX_BUCKETS];
    ws_pt_xmsg msg[(WS_PT_MAX_PARTS + 1) * WS_PT_ROUND_MSGS];
    int round_at[WS_PT_MAX_PARTS + 2];
};
void ws_pt_exchange_plan(const ws_pt_plan *pl, int me, const uint64_t *cnt, const ws_pt_sizes *z,
                         size_t kb, ws_pt_exchange *x);

/* The route: sample, count, and either (*taken = 1) scatter, exchange and
 * sort into keys_out, or (*taken = 0, status OK) nothing more, when the
 * counts show the partition does not hold; the caller then sorts first.
 * ws: the call's workspace (ws_pt_workspace bytes). */
warpsort_status_t ws_nccl_partition_sort(const ws_nccl_call *c, const ws_pt_plan *pl,
                                         unsigned char *ws, uint64_t n_total, size_t n_out,
                                         int *taken);

/* Records the start of phase ph (or the end, WS_NCCL_PHASES) when asked. */
static inline void ws_nccl_mark(const ws_nccl_call *c, int ph) {
    if (c->events) (void)cudaEventRecord(c->events->ev[ph], c->s);
}
#endif /* __CUDACC__ */

#endif /* WARPSORT_NCCL_SORT_H */
