/*
 * merge.cuh - global merge passes over sorted runs (merge path).
 *
 * After the tile sort every run of `run` items is sorted (ordered bits). A
 * pass merges run pairs (A, B) into runs of 2*run. Each block produces one
 * output tile of MERGE_TILE items: a partition kernel finds, for the first
 * output of every block, how many come from A (a binary search along the
 * cross diagonal, "merge path"); the block then loads exactly the A and B
 * items it needs into shared memory with coalesced loads, each thread
 * searches its own diagonal there and merges ITEMS outputs serially, and the
 * block stores the tile with coalesced writes. One pass reads and writes
 * every item once.
 *
 * Ties take A first, so merging is stable; with a stable tile sort the
 * whole sort is stable.
 */
#ifndef WARPSORT_CUDA_MERGE_CUH
#define WARPSORT_CUDA_MERGE_CUH

#include "keys.cuh"
#include "tuning.cuh"

/* Number of items from A among the first `diag` outputs of merging sorted A
 * (a_len) and B (b_len), A winning ties. Works on any indexable source. */
template <typename KB, typename Src>
__device__ __forceinline__ size_t ws_merge_path(Src a, size_t a_len, Src b, size_t b_len,
                                                size_t diag) {
    size_t lo = diag > b_len ? diag - b_len : 0;
    size_t hi = diag < a_len ? diag : a_len;
    while (lo < hi) {
        const size_t mid = (lo + hi) / 2;
        const KB ka = a(mid);
        const KB kb = b(diag - 1 - mid);
        if (!(kb < ka)) lo = mid + 1; /* A[mid] goes before B[diag-1-mid] */
        else hi = mid;
    }
    return lo;
}

template <typename KB>
struct ws_global_reader {
    const KB *p;
    __device__ __forceinline__ KB operator()(size_t i) const { return p[i]; }
};
template <typename KB>
struct ws_smem_reader {
    const KB *p;
    int base;
    __device__ __forceinline__ KB operator()(size_t i) const {
        return p[ws_smem_index<KB>(base + (int)i)];
    }
};

/* Where the runs of a merge pass lie around output index o. */
struct ws_merge_span {
    size_t pair;  /* first index of the run pair */
    size_t a_len; /* items in A (the first run) */
    size_t b_len; /* items in B (the second run, maybe empty) */
};
__device__ __forceinline__ ws_merge_span ws_span_at(size_t o, size_t n, size_t run) {
    ws_merge_span s;
    s.pair = (o / (2 * run)) * (2 * run);
    const size_t left = n - s.pair;
    s.a_len = left < run ? left : run;
    s.b_len = left - s.a_len < run ? left - s.a_len : run;
    return s;
}

/* partition[b] = A items before output b*tile, within b's run pair. */
template <typename KB>
__global__ void merge_partition(const KB *__restrict__ keys, size_t n, size_t run, int tile,
                                size_t blocks, size_t *__restrict__ partition) {
    const size_t b = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= blocks) return;
    const size_t o = b * (size_t)tile;
    const ws_merge_span s = ws_span_at(o, n, run);
    ws_global_reader<KB> a{keys + s.pair}, bb{keys + s.pair + s.a_len};
    partition[b] = ws_merge_path<KB>(a, s.a_len, bb, s.b_len, o - s.pair);
}

/* One merge pass: in -> out, runs of `run` become runs of 2*run. decode
 * turns ordered bits back into the caller's dtype (last pass). */
template <typename KB, typename V, int THREADS, int ITEMS, int MIN_BLOCKS>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
    merge_pass(const KB *__restrict__ keys_in, const V *__restrict__ vals_in,
               KB *__restrict__ keys_out, V *__restrict__ vals_out,
               const size_t *__restrict__ partition, size_t n, size_t run, int decode,
               ws_key_codec codec) {
    constexpr int TILE = THREADS * ITEMS;
    constexpr bool HAS_VALUES = ws_is_value<V>::value;
    extern __shared__ __align__(16) unsigned char ws_merge_smem[];
    KB *skeys = (KB *)ws_merge_smem;
    V *svals = (V *)(skeys + ws_smem_slots<KB>(TILE));

    const size_t o_begin = (size_t)blockIdx.x * TILE;
    const ws_merge_span s = ws_span_at(o_begin, n, run);
    const size_t pair_end = s.pair + s.a_len + s.b_len;
    const size_t o_end = o_begin + TILE < pair_end ? o_begin + TILE : pair_end;
    const size_t a0 = partition[blockIdx.x];
    const size_t a1 = o_end == pair_end ? s.a_len : partition[blockIdx.x + 1];
    const size_t b0 = (o_begin - s.pair) - a0;
    const size_t b1 = (o_end - s.pair) - a1;
    const int a_count = (int)(a1 - a0);
    const int total = (int)(o_end - o_begin);
    const size_t a_src = s.pair + a0;
    const size_t b_src = s.pair + s.a_len + b0 - (size_t)a_count; /* + idx for idx >= a_count */
    (void)b1;

    /* Unrolled so all ITEMS loads of a thread are in flight at once. */
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const int idx = i * THREADS + (int)threadIdx.x;
        if (idx < total) {
            const size_t src = idx < a_count ? a_src + idx : b_src + idx;
            skeys[ws_smem_index<KB>(idx)] = keys_in[src];
            if constexpr (HAS_VALUES) svals[ws_smem_index<V>(idx)] = vals_in[src];
        }
    }
    __syncthreads();

    /* Each thread merges ITEMS outputs starting at its own diagonal. */
    const int b_count = total - a_count;
    const int diag = min((int)threadIdx.x * ITEMS, total);
    ws_smem_reader<KB> ra{skeys, 0}, rb{skeys, a_count};
    int ai = (int)ws_merge_path<KB>(ra, (size_t)a_count, rb, (size_t)b_count, (size_t)diag);
    int bi = diag - ai;
    KB k[ITEMS];
    V v[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const KB ka = ai < a_count ? skeys[ws_smem_index<KB>(ai)] : KB(0);
        const KB kb = bi < b_count ? skeys[ws_smem_index<KB>(a_count + bi)] : KB(0);
        const bool take_a = ai < a_count && (bi >= b_count || !(kb < ka));
        const int src = take_a ? ai : a_count + bi;
        k[i] = take_a ? ka : kb;
        if constexpr (HAS_VALUES) v[i] = svals[ws_smem_index<V>(src < total ? src : 0)];
        ai += take_a;
        bi += !take_a;
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const int e = (int)threadIdx.x * ITEMS + i;
        if (e < total) {
            skeys[ws_smem_index<KB>(e)] = k[i];
            if constexpr (HAS_VALUES) svals[ws_smem_index<V>(e)] = v[i];
        }
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const int idx = i * THREADS + (int)threadIdx.x;
        if (idx < total) {
            const KB key = skeys[ws_smem_index<KB>(idx)];
            keys_out[o_begin + idx] = decode ? ws_decode(key, codec) : key;
            if constexpr (HAS_VALUES) vals_out[o_begin + idx] = svals[ws_smem_index<V>(idx)];
        }
    }
}

#endif /* WARPSORT_CUDA_MERGE_CUH */
