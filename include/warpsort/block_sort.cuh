/*
 * warpsort/block_sort.cuh - a thread block sorts THREADS * K items held in
 * registers (public device API).
 *
 * Public collectives (see docs/device-api.md):
 *   block_sort_keys<ORDER, STABLE>(keys, storage [, valid])
 *   block_sort_pairs<ORDER, STABLE>(keys, vals, storage [, valid])
 * with block_sort_storage<T, V, THREADS, K> in shared memory (static, or
 * dynamic: block_sort_smem_bytes<T, V, THREADS, K>() bytes).
 *
 * How (block_sort_tile, which the library's tile sort runs): each warp
 * first sorts runs of RUN items in registers with the bitonic network
 * (warp_sort.cuh). The network costs log2(k) stages per merge size k, so
 * past a few hundred items a merge is cheaper: the block then doubles the
 * runs log2(TILE / RUN) times by merge path in shared memory
 * (block_merge.cuh), each thread producing ITEMS outputs per round with one
 * binary search and ITEMS shared-memory loads. Merges take ties from the
 * earlier run, and runs hold consecutive tile indices, so positions only
 * have to break ties inside the network. The padded layout
 * (smem_layout.cuh) keeps the blocked stores and the merge reads free of
 * bank conflicts.
 */
#ifndef WARPSORT_BLOCK_SORT_CUH
#define WARPSORT_BLOCK_SORT_CUH

#include "block_merge.cuh"
#include "smem_layout.cuh"
#include "warp_sort.cuh"

namespace warpsort {

/* Padded shared-memory arrays of one tile; vals is unused for no_value. */
template <typename KB, typename V>
struct tile_smem {
    KB *keys;
    V *vals;
};

/* The merge rounds of block_sort_tile: the block's warps hold sorted runs
 * of RUN items (blocked: thread t holds run items t*ITEMS + i), doubled by
 * merge path in s until the tile is one run; values move with their keys
 * (positions are not carried: ties go to the earlier run, and runs hold
 * consecutive tile indices). Outputs from `valid` on are sentinels, and
 * the thread whose outputs all lie there keeps them and skips its merge.
 * Barriers: two per round; the last follows the last read of s. */
template <int RUN, typename KB, typename V, typename P, int THREADS, int ITEMS>
__device__ __forceinline__ void block_merge_runs(warp_items<KB, V, P, ITEMS> &it,
                                                 tile_smem<KB, V> s, int valid) {
    constexpr int TILE = THREADS * ITEMS;
    const int first = (int)threadIdx.x * ITEMS;
    const int kslot = blocked_base<KB, ITEMS>(first);
    const int vslot = blocked_base<V, ITEMS>(first);
#pragma unroll
    for (int run = RUN; run < TILE; run *= 2) {
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            slot_put(s.keys, kslot + i, it.k[i]);
            slot_put(s.vals, vslot + i, it.v[i]);
        }
        __syncthreads();
        const int pair = first & ~(2 * run - 1);
        const merge_src m = {pair, run, pair + run, run};
        /* Outputs from `valid` on are sentinels, and this thread's
         * registers already hold them: a partial tile costs its real
         * items at every round, not a power of two's worth. */
        if (first < valid)
            merge_items_to_registers<KB, V, ITEMS>(s.keys, s.vals, m, first - pair, it.k, it.v);
        __syncthreads();
    }
}

/* Sorts the tile held in registers (blocked: thread t holds tile items
 * t*ITEMS + i) into ascending order of item_less, leaving it in registers,
 * blocked. s must hold smem_slots(THREADS*ITEMS) padded slots per array.
 * Positions, when P is not no_value, order equal keys inside the network.
 * Preconditions: every thread of the block calls it; the block is 1-D with
 * exactly THREADS threads; ITEMS and RUN are powers of two, RUN between
 * ITEMS and 32 * ITEMS; THREADS is a multiple of 32 and a power of two.
 * Barriers: two per merge round (none when TILE == RUN); the last one
 * follows the last shared-memory read, so s is free again on return.
 * Items from `valid` on must be sentinels (the largest key, positions in
 * order): a warp that holds only those skips its network, and a thread
 * whose merge outputs are all past `valid` skips its merge (they stay the
 * sentinels it holds), so a part-filled tile costs about what its real
 * items cost. */
template <int RUN, typename KB, typename V, typename P, int THREADS, int ITEMS>
__device__ __forceinline__ void block_sort_tile(warp_items<KB, V, P, ITEMS> &it, tile_smem<KB, V> s,
                                                int valid = THREADS * ITEMS) {
    const int first = (int)threadIdx.x * ITEMS;
    /* Sentinels already stand in order: a warp holding only sentinels has
     * nothing to sort (warp-uniform, as the shuffles need). */
    if ((first & ~(32 * ITEMS - 1)) < valid) warp_sort_registers<RUN>(it, first & (RUN - 1));
    block_merge_runs<RUN, KB, V, P, THREADS, ITEMS>(it, s, valid);
}

/*=== the public collectives ===*/

/* Shared memory of a block sort of THREADS x K keys of type T with values
 * of type V (no_value for keys alone): padded arrays of ordered bits and
 * value words. Declare it __shared__, or place it in dynamic shared memory
 * (block_sort_smem_bytes bytes, 16-byte aligned). */
template <typename T, typename V, int THREADS, int K>
struct block_sort_storage {
    using key_bits = ordered_bits<T>;
    using value_bits = typename detail::value_word<V>::type;
    static constexpr int TILE = THREADS * K;
    key_bits keys[smem_slots<key_bits>(TILE)];
    value_bits vals[is_value<V>::value ? smem_slots<value_bits>(TILE) : 1];
};
/* Bytes of dynamic shared memory a block sort needs. */
template <typename T, typename V, int THREADS, int K>
__host__ __device__ constexpr size_t block_sort_smem_bytes() {
    return sizeof(block_sort_storage<T, V, THREADS, K>);
}

namespace detail {
template <sort_order ORDER, bool STABLE, bool HAS_VALID, typename T, typename V, int THREADS, int K>
__device__ __forceinline__ void
block_sort(T (&keys)[K], V (&vals)[K], block_sort_storage<T, V, THREADS, K> &storage, int valid) {
    static_assert(K >= 1 && K <= 16 && (K & (K - 1)) == 0, "K = 1, 2, 4, 8 or 16 keys per thread");
    static_assert(THREADS >= 32 && THREADS <= 1024 && (THREADS & (THREADS - 1)) == 0,
                  "THREADS a power of two from 32 to 1024");
    using KB = ordered_bits<T>;
    using VW = typename value_word<V>::type;
    constexpr bool POSITIONS = STABLE || (is_value<V>::value && HAS_VALID);
    using PW = typename select_type<POSITIONS, uint32_t, no_value>::type;
    /* One warp's whole network before the merges: the library's shape. */
    constexpr int RUN = 32 * K;

    const int first = (int)threadIdx.x * K;
    warp_items<KB, VW, PW, K> it;
#pragma unroll
    for (int i = 0; i < K; i++) {
        const bool real = !HAS_VALID || first + i < valid;
        it.k[i] = real ? to_ordered<ORDER>(keys[i]) : sentinel<KB>();
        it.v[i] = to_word<VW>(vals[i]);
        if constexpr (POSITIONS) it.p[i] = (uint32_t)(first + i);
    }
    block_sort_tile<RUN, KB, VW, PW, THREADS, K>(it, tile_smem<KB, VW>{storage.keys, storage.vals});
#pragma unroll
    for (int i = 0; i < K; i++) {
        if (!HAS_VALID || first + i < valid) {
            keys[i] = from_ordered<T, ORDER>(it.k[i]);
            vals[i] = from_word<V>(it.v[i]);
        }
    }
}
} // namespace detail

/* Sorts the block's THREADS * K keys in direction ORDER; thread t
 * (threadIdx.x, 1-D block of exactly THREADS threads) holds tile items
 * t*K .. t*K+K-1 before and after. STABLE keeps equal keys in input order.
 * Every thread calls it. storage may be reused as soon as it returns; if it
 * aliases other shared data, put a __syncthreads() before the call. */
template <sort_order ORDER = ascending, bool STABLE = false, typename T, int THREADS, int K>
__device__ __forceinline__ void
block_sort_keys(T (&keys)[K], block_sort_storage<T, no_value, THREADS, K> &storage) {
    no_value none[K];
    detail::block_sort<ORDER, STABLE, false>(keys, none, storage, THREADS * K);
}
/* Partial tile: only items 0 .. valid-1 take part (0 <= valid <= THREADS *
 * K, the same in every thread) and end sorted there; registers of items
 * >= valid are left unchanged. */
template <sort_order ORDER = ascending, bool STABLE = false, typename T, int THREADS, int K>
__device__ __forceinline__ void
block_sort_keys(T (&keys)[K], block_sort_storage<T, no_value, THREADS, K> &storage, int valid) {
    no_value none[K];
    detail::block_sort<ORDER, STABLE, true>(keys, none, storage, valid);
}
/* As block_sort_keys, each value (any 4- or 8-byte type) moving with its key. */
template <sort_order ORDER = ascending, bool STABLE = false, typename T, typename V, int THREADS,
          int K>
__device__ __forceinline__ void block_sort_pairs(T (&keys)[K], V (&vals)[K],
                                                 block_sort_storage<T, V, THREADS, K> &storage) {
    detail::block_sort<ORDER, STABLE, false>(keys, vals, storage, THREADS * K);
}
template <sort_order ORDER = ascending, bool STABLE = false, typename T, typename V, int THREADS,
          int K>
__device__ __forceinline__ void block_sort_pairs(T (&keys)[K], V (&vals)[K],
                                                 block_sort_storage<T, V, THREADS, K> &storage,
                                                 int valid) {
    detail::block_sort<ORDER, STABLE, true>(keys, vals, storage, valid);
}

} // namespace warpsort

#endif /* WARPSORT_BLOCK_SORT_CUH */
