/*
 * overlap.cu - the exchange and the merge of a two-rank sort, overlapped
 * (sort.cu, steps 4 and 5 for p = 2).
 *
 * Each rank keeps its own piece and receives the peer's, so the merge has
 * two runs: a (rank 0's piece) and b (rank 1's piece), ties to a. One of
 * them is this rank's own and complete from the start; the other streams
 * in. The received piece travels in `chunks` pieces (ws_nccl_chunks, the
 * same on both ranks because it depends only on n_total and p), one
 * grouped ncclSend/ncclRecv each on an exchange stream of the highest
 * priority, with an event after each (the piece 16-byte aligned, its pad
 * first: ws_nccl_pad; a chunk's present items are those past the pad). A
 * merge stream of the lowest
 * priority merges behind them: after chunk c has arrived, run a is present
 * up to A items and run b up to B (one of them complete). The call's
 * stream forks both and waits for both.
 *
 * Safe outputs: the first m outputs of the whole merge come from the
 * present prefixes when m <= pos(a[A]) and m <= pos(b[B]) (positions in
 * the merged order of the first missing item of each run). With ties to a,
 *   pos(a[A]) = A + #(b < a[A]) >= A + #(b[0..B) < a[A-1]) = m_a,
 *   pos(b[B]) = B + #(a <= b[B]) >= B + #(a[0..A) <= b[B-1]) = m_b,
 * so m = min(m_a, m_b) (a complete run sets no bound; an empty present
 * prefix of an incomplete run gives 0) is safe and only reads present
 * items. The first m outputs are exactly a[0..i) and b[0..m-i) with i the
 * merge path at diagonal m, which a search over the present prefixes finds
 * (the true split lies inside them). Step c merges the outputs
 * [m_{c-1}, m_c): the slices a[i_{c-1}..i_c) and b[m_{c-1}-i_{c-1}..
 * m_c-i_c), with ties to a, which is the same order the one-shot merge
 * gives; the last step has both runs complete and reaches n_out. So the
 * result is byte-identical to merging after the whole exchange.
 *
 * m_c and i_c depend on keys, so they live on the device (a one-thread
 * step kernel per chunk); the partition and merge kernels read them, with
 * grids sized for the most the step could hold (blocks past the step's
 * tiles return at once) and merge blocks of a few tiles each, so NCCL's
 * kernels, of higher priority, find SMs soon while a merge step runs.
 */
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "cuda/check.cuh"
#include "cuda/dispatch.cuh"
#include "cuda/state.h"
#include "nccl/nccl_sort.h"
#include "warpsort/block_merge.cuh"

using warpsort::decode;
using warpsort::encode;
using warpsort::is_value;
using warpsort::key_codec;

/* Merge tile: 256 threads x ITEMS outputs. 4-byte keys alone take 16
 * items per thread, the rest 8; every thread has all its loads of a tile
 * in flight at once (loaded to registers before the shared-memory store),
 * and the shared-memory tile is padded so the per-thread merge's blocked
 * stores do not conflict (merge2.cu's tile kernel, which the merge of
 * more ranks uses, loads one item per thread at a time into an unpadded
 * tile whose blocked stores conflict 8 ways). */
#define WS_OV_THREADS 256
template <typename KB, typename V>
__host__ __device__ constexpr int ws_ov_items() {
    return sizeof(KB) == 4 && !is_value<V>::value ? 16 : 8;
}
/* Tiles per merge block at most: blocks retire often, so NCCL's kernels
 * for the next chunks (on a stream of higher priority) get SMs within a
 * few tiles' time instead of waiting for the whole merge step, which a
 * grid of persistent blocks would make them do (NCCL's blocks need much
 * of an SM's registers). */
#define WS_OV_TILES_PER_BLOCK 4
/* Smallest chunk worth an NCCL group and a merge step of its own. */
#define WS_OV_CHUNK_MIN ((uint64_t)1 << 17)

/* The default is two chunks: the first half's merge runs under the second
 * half's exchange. Merging under the exchange takes SMs from NCCL's
 * kernels; with aligned pieces two chunks keep the exchange at about 90 %
 * of its rate and hide half the merge, while four or eight slow it more
 * than they hide, and capping the merge grid gained nothing
 * (bench/NOTES.md, issue 27). WARPSORT_NCCL_CHUNKS=N (1 .. WS_NCCL_CHUNKS,
 * the same on every rank) asks for up to N, for tests and measurements. */
#define WS_OV_DEFAULT_CHUNKS 2
static int ws_ov_chunk_limit(void) {
    const char *e = getenv("WARPSORT_NCCL_CHUNKS");
    const int v = e ? atoi(e) : WS_OV_DEFAULT_CHUNKS;
    return v < 1 ? 1 : v > WS_NCCL_CHUNKS ? WS_NCCL_CHUNKS : v;
}

int ws_nccl_chunks(uint64_t n_total, int nranks) {
    if (nranks != 2) return 1;
    const uint64_t per_rank = n_total / 2;
    const uint64_t c = per_rank / WS_OV_CHUNK_MIN;
    const int limit = ws_ov_chunk_limit();
    return c < 1 ? 1 : c > (uint64_t)limit ? limit : (int)c;
}

/* Items of a piece of `len` w-byte words before its chunk c (of `chunks`),
 * rounded down to 16 bytes. */
static size_t ws_ov_bound(size_t len, int c, int chunks, size_t w) {
    if (c >= chunks) return len;
    const size_t b = (size_t)((uint64_t)len * (uint64_t)c / (uint64_t)chunks);
    return b - b % ws_nccl_align_items(w); /* chunks start 16-byte aligned too */
}

template <typename KB>
struct ws_ov_reader {
    const KB *p;
    key_codec c;
    __device__ __forceinline__ KB operator()(size_t i) const { return encode(p[i], c); }
};

/* Item i of a sorted range from `base` of the padded tile (one pad slot
 * per 128 bytes, warpsort/smem_layout.cuh): the blocked accesses of the
 * merge (thread t at items t x ITEMS + i) then hit distinct banks. */
template <typename KB>
struct ws_ov_smem {
    const KB *p;
    int base;
    __device__ __forceinline__ KB operator()(int i) const {
        return p[warpsort::smem_index<KB>(base + i)];
    }
};

/* Items of p[0..n) before key: those < key (strict) or <= key. */
template <typename KB>
__device__ size_t ws_ov_rank(const KB *p, size_t n, KB key, key_codec c, bool or_equal) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        const KB k = encode(p[mid], c);
        if (k < key || (or_equal && k == key))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* One step: from st[0..1] = (m, i) of the last step, the next safe (m, i)
 * into st[2..3], with a present up to A and b up to B. */
template <typename KB>
__global__ void ws_ov_step(const KB *a, size_t na, size_t A, const KB *b, size_t nb, size_t B,
                           key_codec c, size_t *st) {
    if (threadIdx.x || blockIdx.x) return;
    size_t m = A + B; /* both complete: everything */
    if (A < na) {
        const size_t ma = A ? A + ws_ov_rank(b, B, encode(a[A - 1], c), c, false) : 0;
        m = ma < m ? ma : m;
    }
    if (B < nb) {
        const size_t mb = B ? B + ws_ov_rank(a, A, encode(b[B - 1], c), c, true) : 0;
        m = mb < m ? mb : m;
    }
    if (m < st[0]) m = st[0]; /* never: m only grows with A and B */
    st[2] = m;
    st[3] =
        warpsort::merge_path<KB, size_t>(ws_ov_reader<KB>{a, c}, A, ws_ov_reader<KB>{b, c}, B, m);
}

/* bounds[t] = items of a among the first m0 + t x TILE outputs (m1 for the
 * last), for the tiles of [m0, m1) = [st[0], st[2]). */
template <typename KB, int TILE>
__global__ void ws_ov_partition(const KB *a, size_t A, const KB *b, size_t B, key_codec c,
                                const size_t *st, size_t *bounds) {
    const size_t m0 = st[0], m1 = st[2];
    const size_t tiles = (m1 - m0 + TILE - 1) / TILE;
    for (size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x; t <= tiles;
         t += (size_t)gridDim.x * blockDim.x) {
        const size_t d = t == tiles ? m1 : m0 + t * TILE;
        bounds[t] = warpsort::merge_path<KB, size_t>(ws_ov_reader<KB>{a, c}, A,
                                                     ws_ov_reader<KB>{b, c}, B, d);
    }
}

/* The tiles of [st[0], st[2]): each block loads a tile's slices of a and b
 * as ordered bits into shared memory (padded), every thread merges ITEMS
 * outputs from its own split (ties to a), and the tile goes out decoded. */
template <typename KB, typename V, int ITEMS>
__global__ void __launch_bounds__(WS_OV_THREADS)
    ws_ov_merge(const KB *a, const V *av, const KB *b, const V *bv, const size_t *st,
                const size_t *bounds, KB *out, V *outv, key_codec c) {
    constexpr bool HAS_V = is_value<V>::value;
    constexpr int TILE = WS_OV_THREADS * ITEMS;
    __shared__ KB sk[warpsort::smem_slots<KB>(TILE)];
    __shared__ V sv[HAS_V ? warpsort::smem_slots<V>(TILE) : 1];
    using warpsort::smem_index;
    const size_t m0 = st[0], m1 = st[2];
    const size_t tiles = (m1 - m0 + TILE - 1) / TILE;
    const int t = (int)threadIdx.x;
    for (size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const size_t o0 = m0 + tile * TILE;
        const int count = m1 - o0 < (size_t)TILE ? (int)(m1 - o0) : TILE;
        const size_t a0 = bounds[tile], a1 = bounds[tile + 1];
        const size_t b0 = o0 - a0;
        const int la = (int)(a1 - a0), lb = count - la;
        KB rk[ITEMS];
        V rv[ITEMS];
#pragma unroll
        for (int i = 0; i < ITEMS; i++) { /* all loads first: ITEMS in flight */
            const int e = i * WS_OV_THREADS + t;
            if (e < count) {
                const bool from_a = e < la;
                rk[i] = from_a ? a[a0 + e] : b[b0 + (e - la)];
                if constexpr (HAS_V) rv[i] = from_a ? av[a0 + e] : bv[b0 + (e - la)];
            }
        }
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            const int e = i * WS_OV_THREADS + t;
            if (e < count) {
                sk[smem_index<KB>(e)] = encode(rk[i], c);
                if constexpr (HAS_V) sv[smem_index<V>(e)] = rv[i];
            }
        }
        __syncthreads();
        const int d = t * ITEMS < count ? t * ITEMS : count;
        const int lo =
            warpsort::merge_path<KB, int>(ws_ov_smem<KB>{sk, 0}, la, ws_ov_smem<KB>{sk, la}, lb, d);
        int ia = lo, ib = la + (d - lo);
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            if (d + i < count) {
                const bool take_a =
                    ia < la && (ib >= count || !(sk[smem_index<KB>(ib)] < sk[smem_index<KB>(ia)]));
                const int src = take_a ? ia : ib;
                rk[i] = sk[smem_index<KB>(src)];
                if constexpr (HAS_V) rv[i] = sv[smem_index<V>(src)];
                ia += take_a;
                ib += !take_a;
            }
        }
        __syncthreads();
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            if (d + i < count) {
                sk[smem_index<KB>(d + i)] = rk[i];
                if constexpr (HAS_V) sv[smem_index<V>(d + i)] = rv[i];
            }
        }
        __syncthreads();
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            const int e = i * WS_OV_THREADS + t;
            if (e < count) {
                out[o0 + e] = decode(sk[smem_index<KB>(e)], c);
                if constexpr (HAS_V) outv[o0 + e] = sv[smem_index<V>(e)];
            }
        }
        __syncthreads(); /* the next tile reuses shared memory */
    }
}

/* The two runs. */
struct ws_ov_runs {
    const void *ak, *av, *bk, *bv;
    size_t na, nb;
};

/* One merge step on stream s, with a present up to A and b up to B. */
struct ws_ov_step_op {
    template <typename KB, typename V>
    static cudaError_t run(const ws_ov_runs *r, size_t A, size_t B, key_codec c, size_t *st,
                           size_t *bounds, void *ok, void *ov, int sm_count, cudaStream_t s) {
        constexpr int ITEMS = ws_ov_items<KB, V>();
        constexpr int TILE = WS_OV_THREADS * ITEMS;
        const KB *a = (const KB *)r->ak, *b = (const KB *)r->bk;
        ws_ov_step<KB><<<1, 32, 0, s>>>(a, r->na, A, b, r->nb, B, c, st);
        cudaError_t err = cudaGetLastError();
        if (err != cudaSuccess) return err;
        /* The step's tiles are known on the device only; at most the
         * present items' worth, + 1 bound. */
        const size_t most = (A + B) / TILE + 2;
        const size_t pblocks = (most + 255) / 256, pcap = (size_t)sm_count * 4;
        ws_ov_partition<KB, TILE>
            <<<(unsigned)(pblocks < pcap ? pblocks : pcap), 256, 0, s>>>(a, A, b, B, c, st, bounds);
        if ((err = cudaGetLastError()) != cudaSuccess) return err;
        const size_t mblocks = (most + WS_OV_TILES_PER_BLOCK - 1) / WS_OV_TILES_PER_BLOCK;
        ws_ov_merge<KB, V, ITEMS><<<(unsigned)mblocks, WS_OV_THREADS, 0, s>>>(
            a, (const V *)r->av, b, (const V *)r->bv, st, bounds, (KB *)ok, (V *)ov, c);
        return cudaGetLastError();
    }
};

/* One chunk's grouped send and receive on stream xs: keys [ka, ka + kn)
 * and values [va, va + vn) of the sorted run to the peer; keys into
 * [rka, rka + rkn) and values into [rva, rva + rvn) of recv. Both ranks
 * compute every count alike, so an empty part is skipped on both sides. */
static warpsort_status_t ws_ov_chunk(const ws_nccl_call *c, const ws_nccl_bufs *b, int peer,
                                     size_t ka, size_t kn, size_t va, size_t vn, size_t rka,
                                     size_t rkn, size_t rva, size_t rvn, cudaStream_t xs) {
    const size_t kb = c->kb, vb = c->vb;
    const ncclDataType_t kt = ws_nccl_word(kb), vt = ws_nccl_word(vb);
    ncclResult_t first = ncclSuccess;
    const char *what = "ncclGroupStart";
    ncclResult_t r = ncclGroupStart();
    if (r != ncclSuccess) return ws_nccl_fail(c->ctx, c->comm, r, what);
    if (kn) r = ncclSend(b->sorted_k + ka * kb, kn, kt, peer, c->comm, xs);
    if (r == ncclSuccess && vb && vn)
        r = ncclSend(b->sorted_v + va * vb, vn, vt, peer, c->comm, xs);
    if (r != ncclSuccess) {
        first = r;
        what = "ncclSend";
    }
    r = ncclSuccess;
    if (rkn) r = ncclRecv(b->recv_k + rka * kb, rkn, kt, peer, c->comm, xs);
    if (r == ncclSuccess && vb && rvn)
        r = ncclRecv(b->recv_v + rva * vb, rvn, vt, peer, c->comm, xs);
    if (r != ncclSuccess && first == ncclSuccess) {
        first = r;
        what = "ncclRecv";
    }
    r = ncclGroupEnd(); /* always closes the group it opened */
    if (first == ncclSuccess && r != ncclSuccess) {
        first = r;
        what = "ncclGroupEnd";
    }
    if (first != ncclSuccess) return ws_nccl_fail(c->ctx, c->comm, first, what);
    return WARPSORT_OK;
}

/* Items of a received piece present after chunk ch of `chunks`: the piece
 * travels as pad + n items in chunks, the pad first. */
static size_t ws_ov_present(size_t n, size_t pad, int ch, int chunks, size_t w) {
    const size_t got = ws_ov_bound(n + pad, ch + 1, chunks, w);
    return got > pad ? got - pad : 0;
}

warpsort_status_t ws_nccl_exchange_merge(const ws_nccl_call *c, const ws_nccl_bufs *b,
                                         const uint64_t *cuts, size_t n_out, int chunks) {
    const int p = c->nranks, me = c->rank, peer = 1 - me;
    if (p != 2 || chunks < 1 || chunks > WS_NCCL_CHUNKS)
        return ws_error(c->ctx, WARPSORT_INTERNAL, "%s: overlapped exchange of %d ranks", c->fn, p);
    const size_t row = 3, kb = c->kb, vb = c->vb;
    const uint64_t *mine = cuts + (size_t)me * row;
    const size_t s0 = mine[peer], sn = mine[peer + 1] - mine[peer]; /* sent to the peer */
    const size_t own0 = mine[me], nown = mine[me + 1] - mine[me];
    const size_t nr = cuts[(size_t)peer * row + me + 1] - cuts[(size_t)peer * row + me];
    if (nown + nr != n_out)
        return ws_error(c->ctx, WARPSORT_INTERNAL, "%s: rank %d would receive %zu items, not %zu",
                        c->fn, me, nown + nr, n_out);
    /* Aligned pieces (nccl_sort.h): each side's pad, and the received
     * piece past its pad at the start of recv. */
    const size_t r0 = cuts[(size_t)peer * row + me];
    const size_t spk = ws_nccl_pad(s0, sn, kb), spv = ws_nccl_pad(s0, sn, vb);
    const size_t rpk = ws_nccl_pad(r0, nr, kb), rpv = ws_nccl_pad(r0, nr, vb);
    const unsigned char *got_k = b->recv_k + rpk * kb, *got_v = b->recv_v + rpv * vb;
    ws_ov_runs runs;
    const unsigned char *own_k = b->sorted_k + own0 * kb, *own_v = b->sorted_v + own0 * vb;
    /* Run a is rank 0's piece: this rank's own on rank 0. */
    runs.ak = me == 0 ? (const void *)own_k : got_k;
    runs.av = vb ? (me == 0 ? (const void *)own_v : got_v) : NULL;
    runs.na = me == 0 ? nown : nr;
    runs.bk = me == 0 ? (const void *)got_k : own_k;
    runs.bv = vb ? (me == 0 ? (const void *)got_v : own_v) : NULL;
    runs.nb = me == 0 ? nr : nown;
    const int sm_count = ws_state(c->ctx)->dev.sm_count;

    /* The call's two streams (ws_nccl_side): xs = st[0] (NCCL, the
     * highest priority) and ms = st[1] (the merge, the lowest); ev[0] forks
     * both from the call's stream, ev[1 + c] marks chunk c's arrival on xs,
     * ev[C + 1] and ev[C + 2] end xs and ms. */
    ws_nccl_side o;
    warpsort_status_t s = WARPSORT_OK;
    cudaError_t err = ws_nccl_side_open(&o, 2, chunks + 3);
    const cudaStream_t xs = o.st[0], ms = o.st[1];
    /* Both streams start after the sorted run, the cuts and the zeroed
     * first step on the call's stream. */
    if (err == cudaSuccess) err = cudaMemsetAsync(b->steps, 0, 2 * sizeof(size_t), c->s);
    if (err == cudaSuccess) err = cudaEventRecord(o.ev[0], c->s);
    if (err == cudaSuccess) err = cudaStreamWaitEvent(xs, o.ev[0], 0);
    if (err == cudaSuccess) err = cudaStreamWaitEvent(ms, o.ev[0], 0);
    if (err != cudaSuccess) s = ws_cuda_fail(c->ctx, err, "exchange and merge streams");
    for (int ch = 0; ch < chunks && s == WARPSORT_OK; ch++) {
        /* Chunk ch of each padded piece, sent and received. */
        const size_t ka = ws_ov_bound(sn + spk, ch, chunks, kb);
        const size_t kn = ws_ov_bound(sn + spk, ch + 1, chunks, kb) - ka;
        const size_t va = ws_ov_bound(sn + spv, ch, chunks, vb);
        const size_t vn = ws_ov_bound(sn + spv, ch + 1, chunks, vb) - va;
        const size_t rka = ws_ov_bound(nr + rpk, ch, chunks, kb);
        const size_t rkn = ws_ov_bound(nr + rpk, ch + 1, chunks, kb) - rka;
        const size_t rva = ws_ov_bound(nr + rpv, ch, chunks, vb);
        const size_t rvn = ws_ov_bound(nr + rpv, ch + 1, chunks, vb) - rva;
        s = ws_ov_chunk(c, b, peer, s0 - spk + ka, kn, s0 - spv + va, vn, rka, rkn, rva, rvn, xs);
        if (s != WARPSORT_OK) break;
        /* Merge what is safe once chunk ch of the received run is here. */
        size_t got = ws_ov_present(nr, rpk, ch, chunks, kb);
        if (vb) {
            const size_t gv = ws_ov_present(nr, rpv, ch, chunks, vb);
            got = gv < got ? gv : got;
        }
        const size_t A = me == 0 ? runs.na : got, B = me == 0 ? got : runs.nb;
        err = cudaEventRecord(o.ev[1 + ch], xs);
        if (err == cudaSuccess) err = cudaStreamWaitEvent(ms, o.ev[1 + ch], 0);
        if (err == cudaSuccess)
            err = ws_dispatch_kv<ws_ov_step_op>(kb, vb, (const ws_ov_runs *)&runs, A, B, c->codec,
                                                b->steps + 2 * ch, b->bounds, c->keys_out,
                                                vb ? c->vals_out : NULL, sm_count, ms);
        if (err != cudaSuccess) s = ws_cuda_fail(c->ctx, err, "merge of received chunks");
    }
    /* The call's stream marks the end of the exchange, then waits for the
     * merge (also after a failure, so the workspace is not reused early). */
    if (s == WARPSORT_OK && o.events == chunks + 3) {
        err = cudaEventRecord(o.ev[chunks + 1], xs);
        if (err == cudaSuccess) err = cudaStreamWaitEvent(c->s, o.ev[chunks + 1], 0);
        if (err != cudaSuccess) s = ws_cuda_fail(c->ctx, err, "exchange stream join");
        ws_nccl_mark(c, WS_NCCL_PHASE_MERGE);
    }
    err = ws_nccl_side_close(&o, c->s);
    if (err != cudaSuccess && s == WARPSORT_OK) s = ws_cuda_fail(c->ctx, err, "merge stream join");
    return s;
}
