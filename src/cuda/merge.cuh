/*
 * merge.cuh - global merge passes: four sorted runs into one per pass.
 *
 * After the tile sort every run of `run` items is sorted (ordered bits).
 * Every pass reads and writes each item once, so the pass count sets the
 * traffic: a pass here merges four runs (A, B, C, D) into one of 4*run,
 * which halves the passes of pairwise merging. A pass is two launches:
 *
 *   1. merge4_cuts cuts every group of four runs into segments of at most
 *      MERGE_TILE outputs. The four-way merge is the merge of X = merge(A,
 *      B) and Y = merge(C, D); a cut at every chunk boundary (chunk =
 *      MERGE_TILE / 2) of X and of Y is ranked in the other half, so no
 *      search runs inside another search.
 *   2. merge4_pass merges one segment per block: it loads exactly the items
 *      the segment needs from the four runs into shared memory (coalesced),
 *      merges A with B and C with D, then X with Y, all in shared memory,
 *      and stores the segment coalesced. Segments are about MERGE_TILE / 2
 *      long and never longer than MERGE_TILE.
 *
 * Ties take A, then B, then C, then D: runs in input order, so the pass is
 * stable. A group at the end of the array may have fewer than four runs;
 * the missing ones are empty.
 */
#ifndef WARPSORT_CUDA_MERGE_CUH
#define WARPSORT_CUDA_MERGE_CUH

#include "warpsort/block_merge.cuh"
#include "warpsort/smem_layout.cuh"

#include "merge_shape.cuh"
#include "pdl.cuh"
#include "tuning.cuh"

/* The public device API's merge primitives and layout (one implementation
 * for the library and its users). */
using warpsort::blocked_base;
using warpsort::is_value;
using warpsort::key_codec;
using warpsort::merge_items_to_smem;
using warpsort::merge_path;
using warpsort::merge_src;
using warpsort::smem_index;
using warpsort::smem_slots;
using warpsort::striped_slot;

template <typename KB>
struct ws_global_reader {
    const KB *p;
    __device__ __forceinline__ KB operator()(size_t i) const { return p[i]; }
};

/* Warp-cooperative searches for the cuts: every lane of the warp calls
 * them with the same arguments and gets the same answer. A step probes
 * up to 32 (or 16) positions at once, so a search over a run of 2^14
 * takes 3 dependent loads instead of 14 (cuts are latency-bound: few of
 * them, each a chain of loads from L2). */

/* Items of sorted p (lp) and q (lq) that go before v: those < v (strict),
 * or <= v (!strict); lanes 0-15 search p, 16-31 q. */
template <typename KB>
__device__ __forceinline__ void ws_warp_rank2(const KB *p, size_t lp, const KB *q, size_t lq, KB v,
                                              bool strict, size_t &rp, size_t &rq) {
    const int lane = (int)(threadIdx.x & 31), half = lane >> 4, hl = lane & 15;
    const KB *arr = half ? q : p;
    size_t lo = 0, hi = half ? lq : lp; /* the rank lies in [lo, hi] */
    while (__any_sync(0xFFFFFFFFu, hi > lo)) {
        const size_t step = (hi - lo + 15) / 16, m = lo + (size_t)hl * step;
        bool pred = false;
        if (m < hi) pred = strict ? arr[m] < v : !(v < arr[m]);
        const unsigned c = __popc((__ballot_sync(0xFFFFFFFFu, pred) >> (16 * half)) & 0xFFFFu);
        if (hi > lo) {
            const size_t top = lo + (size_t)c * step;
            lo = c ? lo + (size_t)(c - 1) * step + 1 : lo;
            hi = c ? (top < hi ? top : hi) : lo;
        }
    }
    rp = __shfl_sync(0xFFFFFFFFu, lo, 0);
    rq = __shfl_sync(0xFFFFFFFFu, lo, 16);
}

/* Where merge(p, q) stands after diag outputs (ip = items of p among them;
 * p wins ties, as merge_path) and the key of output diag, which must
 * exist. */
template <typename KB>
__device__ __forceinline__ KB ws_warp_split_at(const KB *p, size_t lp, const KB *q, size_t lq,
                                               size_t diag, size_t &ip) {
    const int lane = (int)(threadIdx.x & 31);
    size_t lo = diag > lq ? diag - lq : 0, hi = diag < lp ? diag : lp;
    while (hi > lo) { /* uniform: every lane holds the same lo and hi */
        const size_t step = (hi - lo + 31) / 32, m = lo + (size_t)lane * step;
        /* true: p[m] goes before q[diag - 1 - m], so ip > m */
        const bool pred = m < hi && !(q[diag - 1 - m] < p[m]);
        const unsigned c = __popc(__ballot_sync(0xFFFFFFFFu, pred));
        const size_t top = lo + (size_t)c * step;
        lo = c ? lo + (size_t)(c - 1) * step + 1 : lo;
        hi = c ? (top < hi ? top : hi) : lo;
    }
    ip = lo;
    const size_t iq = diag - ip;
    return (iq >= lq || (ip < lp && !(q[iq] < p[ip]))) ? p[ip] : q[iq];
}

/* Cuts of one pass. Per group of four runs, X = merge(A, B) and Y =
 * merge(C, D); the final merge is merge(X, Y), A before B before C before D
 * on ties. An X cut sits just before X[i*chunk] (i >= 1): all of X before
 * it and the items of Y below X[i*chunk]; a Y cut just before Y[y_j], y_j =
 * j*chunk - chunk/2: all of Y before it and the items of X up to Y[y_j].
 * Both are exact splits of the stable four-way merge, found with one
 * merge-path search and two ranks (no search nested in a search). They are
 * totally ordered: Y cut j precedes X cut i exactly when y_j < (Y items
 * before X cut i), so each cut knows its place among the group's cuts from
 * its own coordinates, and consecutive cuts differ by at most a chunk of X
 * and a chunk of Y: every segment between them holds at most 2*chunk
 * outputs.
 *
 * One warp per segment slot (g, k), every lane calling with the same t;
 * slot k >= 1 writes cut k: cuts[4 * (g * slots + k) + r] = items of run r
 * before it. Slot 0 is the group start and is not stored. */
template <typename KB>
__device__ __forceinline__ void ws_merge4_cut(const KB *__restrict__ keys, ws_pass_shape p,
                                              size_t t, size_t *__restrict__ cuts) {
    const unsigned slot_shift = ws_slot_shift(p);
    const size_t g = t >> slot_shift, r = (t & (((size_t)1 << slot_shift) - 1));
    if (r == 0) return;
    const ws_merge4_span s = ws_group_span(g, p);
    const KB *a = keys + s.group, *b = a + s.len[0], *c = b + s.len[1], *d = c + s.len[2];
    const size_t chunk = ws_pass_chunk(p);
    const size_t nx = ws_x_cuts(s.len[0] + s.len[1], p);
    const size_t ny = ws_y_cuts(s.len[2] + s.len[3], p);
    size_t q[4], k;
    if (r <= nx) {
        const size_t i = r, diag = i * chunk;
        const KB v = ws_warp_split_at(a, s.len[0], b, s.len[1], diag, q[0]);
        q[1] = diag - q[0];
        ws_warp_rank2(c, s.len[2], d, s.len[3], v, true, q[2], q[3]);
        /* Y cuts before it: those with y_j < q2 + q3 */
        k = i + ((q[2] + q[3] + chunk / 2 - 1) >> p.chunk_shift);
    } else if (r - nx <= ny) {
        const size_t j = r - nx, diag = j * chunk - chunk / 2;
        const KB v = ws_warp_split_at(c, s.len[2], d, s.len[3], diag, q[2]);
        q[3] = diag - q[2];
        ws_warp_rank2(a, s.len[0], b, s.len[1], v, false, q[0], q[1]);
        k = j + ws_x_cuts(q[0] + q[1], p); /* X cuts before it: i*chunk < q0 + q1 */
    } else {
        return; /* past the cuts of a short last group */
    }
    const int lane = (int)(threadIdx.x & 31);
    const size_t mine = lane == 0 ? q[0] : lane == 1 ? q[1] : lane == 2 ? q[2] : q[3];
    if (lane < 4) cuts[4 * ((g << slot_shift) + k) + lane] = mine;
}

/* The cuts of one pass as a launch: one warp per slot. */
template <typename KB>
__global__ void __launch_bounds__(256) merge4_cuts(const KB *__restrict__ keys, ws_pass_shape p,
                                                   size_t slots_total, size_t *__restrict__ cuts) {
    ws_pdl_chain(); /* pdl.cuh */
    const size_t t = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    if (t < slots_total) ws_merge4_cut<KB>(keys, p, t, cuts); /* whole warps alike */
}

/* Where a merge block's segment lies: tile item e of piece r (items
 * [off[r], off[r+1]) of the tile; off[4] = total, or -1 for no segment)
 * is global item base + e + step[0] + ... + step[r-1]. */
struct ws_segment {
    size_t base;
    size_t step[3];
    size_t o_begin; /* global index of output 0 */
    int off[5];
};

/* The segment of merge slot `slot` (cut k to cut k+1 of group g); cut
 * holds cut k's four counts, then cut k+1's (cuts + 4 * slot of the
 * pass's cut array, or a copy of those eight). */
__device__ __forceinline__ ws_segment ws_segment_of(const size_t *cut, ws_pass_shape p,
                                                    size_t slot) {
    ws_segment seg;
    const unsigned slot_shift = ws_slot_shift(p);
    const size_t g = slot >> slot_shift;
    const size_t k = slot & (((size_t)1 << slot_shift) - 1);
    const ws_merge4_span s = ws_group_span(g, p);
    const size_t last = ws_group_segments(s, p) - 1;
    if (k > last) {
        seg.off[4] = -1;
        return seg;
    }
    size_t lo[4], hi[4];
    for (int r = 0; r < 4; r++) {
        lo[r] = k ? cut[r] : 0;
        hi[r] = k < last ? cut[4 + r] : s.len[r];
    }
    seg.o_begin = s.group + lo[0] + lo[1] + lo[2] + lo[3];
    seg.off[0] = 0;
    size_t run_start = s.group, prev = 0;
    for (int r = 0; r < 4; r++) {
        seg.off[r + 1] = seg.off[r] + (int)(hi[r] - lo[r]);
        const size_t base = run_start + lo[r] - (size_t)seg.off[r];
        if (r == 0)
            seg.base = base;
        else
            seg.step[r - 1] = base - prev; /* = len[r-1] - hi[r-1] + lo[r] >= 0 */
        prev = base;
        run_start += s.len[r];
    }
    return seg;
}

/* Loads the segment's items (keys, and values by the same index) into the
 * padded arrays k_in / v_in, striped. All loads first, into
 * registers, then the shared-memory stores: a store right after its load
 * would wait out the DRAM latency once per item instead of once per
 * thread. I is the offset type: 32 bits when a group of runs spans less
 * than 2^31 items, which saves the piece choice half its instructions. */
template <typename I, int THREADS, int ITEMS, typename KB, typename V>
__device__ __forceinline__ void ws_load_segment(const KB *__restrict__ keys_in,
                                                const V *__restrict__ vals_in,
                                                const ws_segment &seg, KB *k_in, V *v_in) {
    const KB *kb = keys_in + seg.base;
    const V *vb = nullptr;
    if constexpr (is_value<V>::value) vb = vals_in + seg.base;
    const I s1 = (I)seg.step[0], s2 = (I)seg.step[1], s3 = (I)seg.step[2];
    const int total = seg.off[4];
    KB kr[ITEMS];
    V vr[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const int e = i * THREADS + (int)threadIdx.x;
        if (e >= total) break;
        const I at = (I)e + (e >= seg.off[1] ? s1 : 0) + (e >= seg.off[2] ? s2 : 0) +
                     (e >= seg.off[3] ? s3 : 0);
        kr[i] = kb[at];
        if constexpr (is_value<V>::value) vr[i] = vb[at];
    }
    const int kt = smem_index<KB>((int)threadIdx.x), vt = smem_index<V>((int)threadIdx.x);
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const int e = i * THREADS + (int)threadIdx.x;
        if (e >= total) break;
        k_in[striped_slot<KB, THREADS>(i, kt)] = kr[i];
        if constexpr (is_value<V>::value) v_in[striped_slot<V, THREADS>(i, vt)] = vr[i];
    }
}

/* Items each shared-memory array of a merge block holds: the tile plus
 * slack for the garbage outputs (merge_items_to_smem) of the thread that
 * ends X, the one that ends Y and the one that ends the tile. */
template <typename T>
__host__ __device__ constexpr int ws_merge_slots(int tile, int items) {
    return smem_slots<T>(tile + 2 * items);
}

/* Shared memory of a merge block of THREADS x ITEMS: two buffers (the
 * pieces, then X and Y) of keys and of values. */
template <typename KB, typename V, int THREADS, int ITEMS>
__host__ __device__ constexpr size_t ws_merge_smem_bytes() {
    return 2 * sizeof(KB) * ws_merge_slots<KB>(THREADS * ITEMS, ITEMS) +
           (is_value<V>::value ? 2 * sizeof(V) * ws_merge_slots<V>(THREADS * ITEMS, ITEMS) : 0);
}

/* One block merges the segment of slot `slot` of a pass (cut: its cuts,
 * as ws_segment_of takes them): in -> out, runs of `run` become runs of
 * 4*run. decode turns ordered bits back into the caller's dtype (last
 * pass). smem holds ws_merge_smem_bytes; every thread of the block calls
 * it, and it returns with the block past its last use of smem but for the
 * final stores' reads (a caller that reuses smem synchronises first). */
template <typename KB, typename V, int THREADS, int ITEMS>
__device__ __forceinline__ void
ws_merge4_segment(const KB *__restrict__ keys_in, const V *__restrict__ vals_in,
                  KB *__restrict__ keys_out, V *__restrict__ vals_out, const size_t *cut,
                  ws_pass_shape p, int decode, key_codec codec, size_t slot,
                  unsigned char *ws_merge_smem) {
    constexpr int TILE = THREADS * ITEMS;
    constexpr int SLOTS = ws_merge_slots<KB>(TILE, ITEMS);
    constexpr bool HAS_VALUES = is_value<V>::value;
    /* k_in holds the four pieces, later the result; k_mid holds X then Y.
     * All padded: on structured input (sorted runs, few distinct keys) the
     * merges walk every thread's run in step, ITEMS apart, which without
     * padding puts a warp's loads on two banks. */
    KB *k_in = (KB *)ws_merge_smem;
    KB *k_mid = k_in + SLOTS;
    V *v_in = (V *)(k_mid + SLOTS);
    V *v_mid = v_in + (HAS_VALUES ? ws_merge_slots<V>(TILE, ITEMS) : 0);

    /* This block merges the segment between cut k and cut k+1 of group g
     * (merge4_cuts): at most 2 * chunk = TILE outputs. One thread works out
     * where its pieces lie; the others read that from shared memory. */
    __shared__ ws_segment seg_shared;
    if (threadIdx.x == 0) seg_shared = ws_segment_of(cut, p, slot);
    __syncthreads();
    const ws_segment seg = seg_shared;
    if (seg.off[4] < 0) return; /* a short last group has fewer segments (whole block) */
    const int total = seg.off[4];
    if (p.run_shift + 2 <= 31) /* a group's offsets fit 32 bits */
        ws_load_segment<uint32_t, THREADS, ITEMS>(keys_in, vals_in, seg, k_in, v_in);
    else
        ws_load_segment<size_t, THREADS, ITEMS>(keys_in, vals_in, seg, k_in, v_in);
    __syncthreads();

    /* A with B into X = k_mid[0, x_len), C with D into Y = k_mid[y_at,
     * y_at + y_len), y_at rounded up to whole threads' outputs: every
     * thread then merges for X alone or for Y alone, with no guards, and
     * the garbage outputs of the thread that ends X fall in the gap. */
    const int x_len = seg.off[2], y_len = total - x_len;
    const int y_at = (x_len + ITEMS - 1) / ITEMS * ITEMS;
    const merge_src ab = {0, seg.off[1], seg.off[1], x_len - seg.off[1]};
    const merge_src cd = {x_len, seg.off[3] - x_len, seg.off[3], total - seg.off[3]};
    /* The gap can push Y's end past the tile by less than ITEMS: a second
     * round for one thread, rarely. */
#pragma unroll 1
    for (int first = (int)threadIdx.x * ITEMS; first < y_at + y_len; first += TILE) {
        const bool in_y = first >= y_at;
        merge_items_to_smem<KB, V, ITEMS>(k_in, v_in, in_y ? cd : ab, in_y ? first - y_at : first,
                                          k_mid, v_mid, blocked_base<KB, ITEMS>(first),
                                          blocked_base<V, ITEMS>(first));
    }
    __syncthreads();
    /* A segment with nothing of X or nothing of Y (every segment of a
     * group of one or two runs: the last pass of every size with an odd
     * power of two of tiles, segmented rows of two runs) has its output
     * in k_mid already, in the same blocked layout (Y then starts at 0). */
    const KB *k_res = k_mid;
    const V *v_res = v_mid;
    if (x_len > 0 && y_len > 0) { /* uniform */
        const int first = (int)threadIdx.x * ITEMS;
        if (first < total) { /* X with Y back into k_in, in output order */
            const merge_src xy = {0, x_len, y_at, y_len};
            merge_items_to_smem<KB, V, ITEMS>(k_mid, v_mid, xy, first, k_in, v_in,
                                              blocked_base<KB, ITEMS>(first),
                                              blocked_base<V, ITEMS>(first));
        }
        __syncthreads();
        k_res = k_in;
        v_res = v_in;
    }
    const int t = (int)threadIdx.x;
    const int kt = smem_index<KB>(t), vt = smem_index<V>(t);
    KB *kout = keys_out + seg.o_begin;
    V *vout = vals_out + seg.o_begin;
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const int e = i * THREADS + t;
        if (e >= total) break;
        const KB key = k_res[striped_slot<KB, THREADS>(i, kt)];
        kout[e] = decode ? warpsort::decode(key, codec) : key;
        if constexpr (HAS_VALUES) vout[e] = v_res[striped_slot<V, THREADS>(i, vt)];
    }
}

/* One merge pass as a launch: block b merges slot b. */
template <typename KB, typename V, int THREADS, int ITEMS, int MIN_BLOCKS>
__global__ void __launch_bounds__(THREADS, ws_min_blocks_fit(THREADS, MIN_BLOCKS))
    merge4_pass(const KB *__restrict__ keys_in, const V *__restrict__ vals_in,
                KB *__restrict__ keys_out, V *__restrict__ vals_out,
                const size_t *__restrict__ cuts, ws_pass_shape p, int decode, key_codec codec) {
    ws_pdl_wait(); /* a chain's dependent launch; the cuts after it spread (pdl.cuh) */
    extern __shared__ __align__(16) unsigned char ws_merge_smem[];
    ws_merge4_segment<KB, V, THREADS, ITEMS>(keys_in, vals_in, keys_out, vals_out,
                                             cuts + 4 * (size_t)blockIdx.x, p, decode, codec,
                                             blockIdx.x, ws_merge_smem);
}

#endif /* WARPSORT_CUDA_MERGE_CUH */
