/*
 * block_sort.cuh - a thread block sorts a tile of THREADS * ITEMS items.
 *
 * Each warp first sorts runs of RUN items in registers with the bitonic
 * network (warp_sort.cuh). The network costs log2(k) stages per merge size
 * k, so past a few hundred items a merge is cheaper: the block then doubles
 * the runs log2(TILE / RUN) times by merge path in shared memory
 * (block_merge.cuh), each thread producing ITEMS outputs per round with one
 * binary search and ITEMS shared-memory loads. Merges take ties from the
 * earlier run, and runs hold consecutive tile indices, so positions only
 * have to break ties inside the network.
 *
 * Preconditions: every thread of the block calls block_sort_tile; the block
 * has exactly THREADS threads; ITEMS and RUN are powers of two, RUN between
 * ITEMS and 32 * ITEMS; THREADS is a multiple of 32 and a power of two.
 */
#ifndef WARPSORT_CUDA_BLOCK_SORT_CUH
#define WARPSORT_CUDA_BLOCK_SORT_CUH

#include "block_merge.cuh"
#include "warp_sort.cuh"

/* Shared-memory arrays of one tile; vals is unused for ws_no_value. */
template <typename KB, typename V>
struct ws_tile_smem {
    KB *keys;
    V *vals;
};

/* Padded-slot accessors that vanish for the empty value type. */
template <typename T>
__device__ __forceinline__ void ws_slot_put(T *a, int slot, T x) {
    if constexpr (ws_is_value<T>::value) a[slot] = x;
}
template <typename T>
__device__ __forceinline__ T ws_slot_get(const T *a, int slot) {
    if constexpr (ws_is_value<T>::value) return a[slot];
    else return T{};
}
template <typename T>
__device__ __forceinline__ void ws_smem_put(T *a, int e, T x) {
    ws_slot_put(a, ws_smem_index<T>(e), x);
}
template <typename T>
__device__ __forceinline__ T ws_smem_get(const T *a, int e) {
    return ws_slot_get(a, ws_smem_index<T>(e));
}

/* Outputs diag .. diag+ITEMS-1 of merging m into registers: keys, and the
 * values that go with them. */
template <typename KB, typename V, int ITEMS>
__device__ __forceinline__ void ws_merge_items_to_registers(const KB *sk, const V *sv,
                                                            ws_merge_src m, int diag,
                                                            KB (&k)[ITEMS], V (&v)[ITEMS]) {
    int src[ITEMS];
    ws_serial_merge<KB, ITEMS>(sk, m, diag, k, src);
#pragma unroll
    for (int i = 0; i < ITEMS; i++) v[i] = ws_smem_get(sv, src[i]);
}

/* Sorts the tile held in registers (blocked: thread t holds tile items
 * t*ITEMS + i) into ascending order, leaving it in registers, blocked.
 * s must hold THREADS*ITEMS padded slots per array. Positions, when P is
 * not ws_no_value, order equal keys inside the network. Items from `valid`
 * on must be sentinels (largest key, positions in order): a warp or a merge
 * that sees only those skips its work, so a part-filled tile costs about
 * what its real items cost. */
template <int RUN, typename KB, typename V, typename P, int THREADS, int ITEMS>
__device__ __forceinline__ void block_sort_tile(ws_items<KB, V, P, ITEMS> &it,
                                                ws_tile_smem<KB, V> s, int valid) {
    constexpr int TILE = THREADS * ITEMS;
    const int first = (int)threadIdx.x * ITEMS;

    /* Sentinels already stand in order: a warp holding only sentinels has
     * nothing to sort (warp-uniform, as the shuffles need). */
    if ((first & ~(32 * ITEMS - 1)) < valid) warp_sort_registers<RUN>(it, first & (RUN - 1));
    const int kslot = ws_blocked_base<KB, ITEMS>(first);
    const int vslot = ws_blocked_base<V, ITEMS>(first);
#pragma unroll
    for (int run = RUN; run < TILE; run *= 2) {
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            ws_slot_put(s.keys, kslot + i, it.k[i]);
            ws_slot_put(s.vals, vslot + i, it.v[i]);
        }
        __syncthreads();
        const int pair = first & ~(2 * run - 1);
        const ws_merge_src m = {pair, run, pair + run, run};
        if (pair < valid)
            ws_merge_items_to_registers<KB, V, ITEMS>(s.keys, s.vals, m, first - pair, it.k, it.v);
        __syncthreads();
    }
}

#endif /* WARPSORT_CUDA_BLOCK_SORT_CUH */
