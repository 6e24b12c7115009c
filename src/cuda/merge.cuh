/*
 * merge.cuh - global merge passes: four sorted runs into one per pass.
 *
 * After the tile sort every run of `run` items is sorted (ordered bits).
 * Every pass reads and writes each item once, so the pass count sets the
 * traffic: a pass here merges four runs (A, B, C, D) into one of 4*run,
 * which halves the passes of pairwise merging. Each block produces one
 * output tile of MERGE_TILE items:
 *
 *   1. merge4_chunks and merge4_partition find, for the first output of
 *      every block, how many items come from A, B and C. The four-way merge
 *      is the merge of X = merge(A, B) and Y = merge(C, D): a table holds
 *      where X and Y stand at every chunk boundary (one two-way merge-path
 *      search each), and each block's split is searched between table
 *      entries, then inside one chunk of X and one of Y.
 *   2. merge4_pass loads exactly the items its tile needs from the four
 *      runs into shared memory (coalesced), merges A with B and C with D,
 *      then X with Y, all in shared memory, and stores the tile coalesced.
 *
 * Ties take A, then B, then C, then D: runs in input order, so the pass is
 * stable. A group at the end of the array may have fewer than four runs;
 * the missing ones are empty.
 */
#ifndef WARPSORT_CUDA_MERGE_CUH
#define WARPSORT_CUDA_MERGE_CUH

#include "block_merge.cuh"
#include "tuning.cuh"

template <typename KB>
struct ws_global_reader {
    const KB *p;
    __device__ __forceinline__ KB operator()(size_t i) const { return p[i]; }
};

/* Where the four runs of a pass lie around output index o. */
struct ws_merge4_span {
    size_t group;  /* first index of the group of four runs */
    size_t len[4]; /* lengths of A, B, C, D (the last ones may be short or empty) */
};
__device__ __forceinline__ ws_merge4_span ws_span4_at(size_t o, size_t n, size_t run) {
    ws_merge4_span s;
    s.group = (o / (4 * run)) * (4 * run);
    size_t left = n - s.group;
#pragma unroll
    for (int r = 0; r < 4; r++) {
        s.len[r] = left < run ? left : run;
        left -= s.len[r];
    }
    return s;
}

/* The item of merge(a, b) at output index m, given i = items of a among the
 * first m+1 outputs: the later of a[i-1] and b[m-i] in merge order. */
template <typename KB>
__device__ __forceinline__ KB ws_merged_at(const KB *a, const KB *b, size_t m, size_t i) {
    const size_t j = m + 1 - i;
    if (j == 0) return a[i - 1];
    if (i == 0) return b[j - 1];
    const KB ka = a[i - 1], kb = b[j - 1];
    return kb < ka ? ka : kb; /* on a tie b's item comes later */
}

/* Where merge(first, second) stands after `diag` outputs, for the chunk of
 * the array that starts there (see merge4_chunks). */
template <typename KB>
struct ws_chunk_split {
    size_t first; /* items of the first run among the first diag outputs */
    KB prev;      /* output diag-1 (unset when diag == 0) */
    KB next;      /* output diag (unset at the end) */
};

/* A group of four runs seen as two merges: X = merge(A, B) and Y = merge(C,
 * D). A chunk index c covers array items [c*chunk, (c+1)*chunk); within a
 * group the first 2*run items' chunks index diagonals of X, the rest Y's. */
template <typename KB>
__device__ __forceinline__ void ws_halves(const KB *keys, const ws_merge4_span &s, const KB *&a,
                                          const KB *&b, const KB *&c, const KB *&d) {
    a = keys + s.group;
    b = a + s.len[0];
    c = b + s.len[1];
    d = c + s.len[2];
}

/* table[c] = the split of X or Y at the diagonal chunk c stands for. One
 * thread per chunk, one binary search each: the only long chain of global
 * loads of a pass, run once per chunk instead of once per probe. */
template <typename KB>
__global__ void __launch_bounds__(256)
    merge4_chunks(const KB *__restrict__ keys, size_t n, size_t run, size_t chunk,
                  size_t chunks, ws_chunk_split<KB> *__restrict__ table) {
    const size_t ci = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (ci >= chunks) return;
    const size_t pos = ci * chunk;
    const ws_merge4_span s = ws_span4_at(pos, n, run);
    const KB *a, *b, *c, *d;
    ws_halves(keys, s, a, b, c, d);
    const bool in_y = pos - s.group >= 2 * run;
    const KB *p = in_y ? c : a, *q = in_y ? d : b;
    const size_t lp = in_y ? s.len[2] : s.len[0], lq = in_y ? s.len[3] : s.len[1];
    const size_t diag = pos - s.group - (in_y ? 2 * run : 0);
    if (diag >= lp + lq) return; /* past the end of a short last group */
    const size_t i = ws_merge_path<KB, size_t>(ws_global_reader<KB>{p}, lp,
                                               ws_global_reader<KB>{q}, lq, diag);
    const size_t j = diag - i;
    ws_chunk_split<KB> e;
    e.first = i;
    e.prev = diag > 0 ? ws_merged_at(p, q, diag - 1, i) : KB(0);
    e.next = (j >= lq || (i < lp && !(q[j] < p[i]))) ? p[i] : q[j];
    table[ci] = e;
}

/* The piece of X (or Y) between two chunk diagonals: a merge of a piece of
 * its first run with a piece of its second. */
template <typename KB>
struct ws_chunk_piece {
    const KB *p, *q; /* the pieces' first items */
    size_t lp, lq;
    size_t base;     /* the diagonal the piece starts at */
};
template <typename KB>
__device__ __forceinline__ ws_chunk_piece<KB> ws_piece(const KB *p, size_t lp, const KB *q,
                                                       size_t lq,
                                                       const ws_chunk_split<KB> *table,
                                                       size_t k, size_t chunk) {
    const size_t d0 = k * chunk, d1 = d0 + chunk < lp + lq ? d0 + chunk : lp + lq;
    const size_t i0 = table[k].first;
    const size_t i1 = d1 < lp + lq ? table[k + 1].first : lp;
    ws_chunk_piece<KB> w;
    w.p = p + i0;
    w.q = q + (d0 - i0);
    w.lp = i1 - i0;
    w.lq = (d1 - i1) - (d0 - i0);
    w.base = d0;
    return w;
}
/* Output m of the merge a piece belongs to (m inside the piece). */
template <typename KB>
__device__ __forceinline__ KB ws_piece_at(const ws_chunk_piece<KB> &w, size_t m) {
    const size_t local = m - w.base;
    const size_t i = ws_merge_path<KB, size_t>(ws_global_reader<KB>{w.p}, w.lp,
                                               ws_global_reader<KB>{w.q}, w.lq, local + 1);
    return ws_merged_at(w.p, w.q, local, i);
}
template <typename KB>
__device__ __forceinline__ size_t ws_piece_split(const ws_chunk_piece<KB> &w, size_t diag) {
    return ws_merge_path<KB, size_t>(ws_global_reader<KB>{w.p}, w.lp,
                                     ws_global_reader<KB>{w.q}, w.lq, diag - w.base);
}

/* partition[3b .. 3b+2] = items of A, B, C before output b*tile, within
 * b's group (D's count is the rest). The split x of X against Y is found
 * first between chunk diagonals, from the table alone, then inside one
 * chunk of X and one of Y, whose pieces are small and stay in cache. */
template <typename KB>
__global__ void __launch_bounds__(256)
    merge4_partition(const KB *__restrict__ keys, size_t n, size_t run, int tile, size_t blocks,
                     size_t chunk, const ws_chunk_split<KB> *__restrict__ table,
                     size_t *__restrict__ partition) {
    const size_t blk = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (blk >= blocks) return;
    const size_t o = blk * (size_t)tile;
    const ws_merge4_span s = ws_span4_at(o, n, run);
    const KB *a, *b, *c, *d;
    ws_halves(keys, s, a, b, c, d);
    const size_t diag = o - s.group; /* a multiple of chunk */
    const size_t lx = s.len[0] + s.len[1], ly = s.len[2] + s.len[3];
    const ws_chunk_split<KB> *tx = table + s.group / chunk;
    const ws_chunk_split<KB> *ty = tx + 2 * run / chunk;
    const size_t x_lo = diag > ly ? diag - ly : 0, x_hi = diag < lx ? diag : lx;

    /* pred(m) = "X[m] goes before Y[diag-1-m]" holds for m < x and fails
     * from x on. At m = j*chunk - 1 both sides are table entries (j*chunk
     * < lx keeps X's side inside X). */
    const size_t j_min = (x_lo + chunk) / chunk;
    const size_t j_max = (x_hi < lx ? x_hi : lx - 1) / chunk;
    size_t jl = j_min, jh = j_max + 1;
    while (jl < jh) {
        const size_t jm = (jl + jh) / 2;
        if (!(ty[diag / chunk - jm].next < tx[jm].prev)) jl = jm + 1;
        else jh = jm;
    }
    size_t lo = jl > j_min ? (jl - 1) * chunk : x_lo;
    size_t hi = jl <= j_max ? jl * chunk - 1 : x_hi; /* jl <= j_max: below x_hi */

    /* Now x lies in [lo, hi]: one chunk of X, and the outputs of Y it faces
     * (diag-hi .. diag-lo) lie in one chunk of Y. */
    const ws_chunk_piece<KB> px = ws_piece(a, s.len[0], b, s.len[1], tx,
                                           (lo < lx ? lo : lx - 1) / chunk, chunk);
    const size_t y_top = diag - lo; /* most Y items the split can take */
    ws_chunk_piece<KB> py = {};
    if (y_top > 0) py = ws_piece(c, s.len[2], d, s.len[3], ty, (y_top - 1) / chunk, chunk);
    while (lo < hi) {
        const size_t mid = (lo + hi) / 2;
        if (!(ws_piece_at(py, diag - 1 - mid) < ws_piece_at(px, mid))) lo = mid + 1;
        else hi = mid;
    }
    const size_t na = ws_piece_split(px, lo) + (px.p - a);
    const size_t nc = diag - lo > 0 ? ws_piece_split(py, diag - lo) + (py.p - c) : 0;
    partition[3 * blk] = na;
    partition[3 * blk + 1] = lo - na;
    partition[3 * blk + 2] = nc;
}

/* Merges `count` <= ITEMS outputs of m from output diag on, writing them
 * (keys, and values through their item index) to dst from item `at` on. */
template <typename KB, typename V, int ITEMS>
__device__ __forceinline__ void ws_merge_to_smem(const KB *sk, const V *sv, ws_merge_src m,
                                                 int diag, int count, KB *dk, V *dv, int at) {
    ws_merge_cursor<KB> c = ws_merge_start(sk, m, diag);
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        if (i < count) {
            KB key;
            int src;
            ws_merge_step(sk, m, c, key, src);
            dk[ws_smem_index<KB>(at + i)] = key;
            if constexpr (ws_is_value<V>::value)
                dv[ws_smem_index<V>(at + i)] = sv[ws_smem_index<V>(src)];
        }
    }
}

/* One merge pass: in -> out, runs of `run` become runs of 4*run. decode
 * turns ordered bits back into the caller's dtype (last pass). */
template <typename KB, typename V, int THREADS, int ITEMS, int MIN_BLOCKS>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
    merge4_pass(const KB *__restrict__ keys_in, const V *__restrict__ vals_in,
                KB *__restrict__ keys_out, V *__restrict__ vals_out,
                const size_t *__restrict__ partition, size_t n, size_t run, int decode,
                ws_key_codec codec) {
    constexpr int TILE = THREADS * ITEMS;
    constexpr int SLOTS = ws_smem_slots<KB>(TILE);
    constexpr bool HAS_VALUES = ws_is_value<V>::value;
    extern __shared__ __align__(16) unsigned char ws_merge_smem[];
    KB *k_in = (KB *)ws_merge_smem; /* the four pieces, then the result */
    KB *k_mid = k_in + SLOTS;       /* X then Y */
    V *v_in = (V *)(k_mid + SLOTS);
    V *v_mid = v_in + (HAS_VALUES ? ws_smem_slots<V>(TILE) : 0);

    const size_t o_begin = (size_t)blockIdx.x * TILE;
    const ws_merge4_span s = ws_span4_at(o_begin, n, run);
    const size_t group_end = s.group + s.len[0] + s.len[1] + s.len[2] + s.len[3];
    const size_t o_end = o_begin + TILE < group_end ? o_begin + TILE : group_end;
    const int total = (int)(o_end - o_begin);

    /* Where this tile's piece of each run starts and how long it is. */
    size_t lo[4], hi[4];
    lo[0] = partition[3 * blockIdx.x];
    lo[1] = partition[3 * blockIdx.x + 1];
    lo[2] = partition[3 * blockIdx.x + 2];
    lo[3] = (o_begin - s.group) - lo[0] - lo[1] - lo[2];
    if (o_end == group_end) {
#pragma unroll
        for (int r = 0; r < 4; r++) hi[r] = s.len[r];
    } else {
        hi[0] = partition[3 * blockIdx.x + 3];
        hi[1] = partition[3 * blockIdx.x + 4];
        hi[2] = partition[3 * blockIdx.x + 5];
        hi[3] = (o_end - s.group) - hi[0] - hi[1] - hi[2];
    }
    int off[5];
    size_t src_base[4]; /* global index of piece r's item e is src_base[r] + e */
    off[0] = 0;
    size_t run_start = s.group;
#pragma unroll
    for (int r = 0; r < 4; r++) {
        off[r + 1] = off[r] + (int)(hi[r] - lo[r]);
        src_base[r] = run_start + lo[r] - (size_t)off[r];
        run_start += s.len[r];
    }

#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const int e = i * THREADS + (int)threadIdx.x;
        if (e < total) {
            const size_t g = e < off[2] ? (e < off[1] ? src_base[0] : src_base[1])
                                        : (e < off[3] ? src_base[2] : src_base[3]);
            k_in[ws_smem_index<KB>(e)] = keys_in[g + e];
            if constexpr (HAS_VALUES) v_in[ws_smem_index<V>(e)] = vals_in[g + e];
        }
    }
    __syncthreads();

    const int first = (int)threadIdx.x * ITEMS;
    {   /* A with B into X = k_mid[0, off[2]), C with D into Y after it. One
         * thread's outputs may cross from X into Y. */
        const ws_merge_src ab = {off[0], off[1] - off[0], off[1], off[2] - off[1]};
        const ws_merge_src cd = {off[2], off[3] - off[2], off[3], off[4] - off[3]};
        if (first < off[2]) {
            const int count = min(ITEMS, off[2] - first);
            ws_merge_to_smem<KB, V, ITEMS>(k_in, v_in, ab, first, count, k_mid, v_mid, first);
        }
        const int y_first = max(first, off[2]), y_end = min(first + ITEMS, total);
        if (y_first < y_end)
            ws_merge_to_smem<KB, V, ITEMS>(k_in, v_in, cd, y_first - off[2], y_end - y_first,
                                           k_mid, v_mid, y_first);
    }
    __syncthreads();
    if (first < total) { /* X with Y back into k_in, in output order */
        const ws_merge_src xy = {0, off[2], off[2], total - off[2]};
        ws_merge_to_smem<KB, V, ITEMS>(k_mid, v_mid, xy, first, min(ITEMS, total - first), k_in,
                                       v_in, first);
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const int e = i * THREADS + (int)threadIdx.x;
        if (e < total) {
            const KB key = k_in[ws_smem_index<KB>(e)];
            keys_out[o_begin + e] = decode ? ws_decode(key, codec) : key;
            if constexpr (HAS_VALUES) vals_out[o_begin + e] = v_in[ws_smem_index<V>(e)];
        }
    }
}

#endif /* WARPSORT_CUDA_MERGE_CUH */
