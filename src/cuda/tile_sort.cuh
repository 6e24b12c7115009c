/*
 * tile_sort.cuh - on-chip sorts of whole tiles, and the sample sort's
 * bucket copies and oversized buckets.
 *
 * ws_sort_tile_block is the one on-chip network sort: a block loads up to
 * SUB tiles of THREADS x ITEMS items, sorts each with block_sort_tile (warp
 * bitonic runs, then merges in shared memory) and, for SUB = 2, merges the
 * two. The merge path's tile sort (block_sort_kernel) and the cooperative
 * sort call it, and so do buckets too big for the on-chip sorts after the
 * sample sort's last distribution level (ws_big_bucket_kernel: one block
 * merges sorted tiles in global memory; slow, for inputs the sampling failed
 * on). The sample sort's buckets of on-chip size take radix passes instead
 * (radix_tile.cuh).
 */
#ifndef WARPSORT_CUDA_TILE_SORT_CUH
#define WARPSORT_CUDA_TILE_SORT_CUH

#include <stddef.h>
#include <stdint.h>
#include <type_traits>

#include "warpsort/block_sort.cuh"
#include "warpsort/key_traits.cuh"
#include "merge.cuh"
#include "pdl.cuh"
#include "plan.cuh"

using warpsort::block_sort_tile;
using warpsort::decode;
using warpsort::encode;
using warpsort::is_value;
using warpsort::key_codec;
using warpsort::merge_items_to_registers;
using warpsort::merge_items_to_smem;
using warpsort::merge_path;
using warpsort::merge_src;
using warpsort::no_value;
using warpsort::sentinel;
using warpsort::slot_get;
using warpsort::smem_get;
using warpsort::smem_index;
using warpsort::smem_put;
using warpsort::smem_slots;
using warpsort::tile_smem;
using warpsort::warp_items;

/* Whether the final merge of a two-sub-tile block writes to a second key
 * array (4-byte keys alone: 2 x 33 KB still lets three blocks share an
 * SM) rather than through registers (everything else: a second array
 * would cost more occupancy than the registers do). */
template <typename KB, typename V>
__host__ __device__ constexpr bool ws_tile_second_array() {
    return !is_value<V>::value && sizeof(KB) == 4;
}
/* Shared memory of a tile-sort block: the keys (twice with the second
 * array), then the values. */
template <typename KB, typename V>
__host__ __device__ constexpr size_t ws_tile_keys_bytes(int block_tile, int sub) {
    return ws_align256(sizeof(KB) * smem_slots<KB>(block_tile) *
                       (sub == 2 && ws_tile_second_array<KB, V>() ? 2 : 1));
}
template <typename KB, typename V>
__host__ __device__ constexpr size_t ws_tile_smem_bytes(int block_tile, int sub) {
    return ws_tile_keys_bytes<KB, V>(block_tile, sub) +
           (is_value<V>::value ? sizeof(V) * smem_slots<V>(block_tile) : 0);
}

/* Sorts one sub-tile staged in shared memory with the block network, P
 * (positions or none) chosen by the caller, and leaves it there. */
template <typename KB, typename V, typename P, int THREADS, int ITEMS, int RUN>
__device__ __forceinline__ void ws_sort_staged(const tile_smem<KB, V> &sub, int sub_valid) {
    const int first = (int)threadIdx.x * ITEMS;
    warp_items<KB, V, P, ITEMS> it;
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        it.k[i] = smem_get(sub.keys, first + i);
        it.v[i] = smem_get(sub.vals, first + i);
        if constexpr (is_value<P>::value) it.p[i] = (uint32_t)(first + i);
    }
    block_sort_tile<RUN, KB, V, P, THREADS, ITEMS>(it, sub, sub_valid);
    /* Each thread writes back only the slots it read: no barrier. */
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        smem_put(sub.keys, first + i, it.k[i]);
        smem_put(sub.vals, first + i, it.v[i]);
    }
}

/* One block sorts items [base, base + valid) of keys_in (valid <= SUB *
 * THREADS * ITEMS) into the same range of keys_out, which may alias
 * keys_in: SUB (1 or 2) sub-tiles of TILE items one after the other, then,
 * for SUB = 2, a merge of the two in shared memory. Missing items are
 * sentinels (the largest key). Positions make equal keys keep their input
 * order (STABLE), and keep sentinels after real all-ones keys: without
 * them a value of such a key could be traded for a sentinel's. So an
 * unstable sort of pairs carries positions only in a sub-tile that is
 * partial and holds a real all-ones key (rare: checked per sub-tile);
 * keys alone never need them (a sentinel and an all-ones key are the same
 * key). encode_in: keys_in holds the dtype's bits (else ordered bits);
 * decode_out: keys_out gets the dtype's bits. Every thread of the block
 * calls it; smem holds ws_tile_smem_bytes. One body on purpose: its steps
 * (load, sort per sub-tile, merge, store) share the registers holding the
 * tile and the barriers between them; split into calls they would pass the
 * same arrays by reference and read no clearer. */
template <typename KB, typename V, bool STABLE, int THREADS, int ITEMS, int RUN, int SUB>
__device__ __forceinline__ void ws_sort_tile_block(const KB *keys_in, const V *vals_in,
                                                   KB *keys_out, V *vals_out, size_t base,
                                                   int valid, bool encode_in, bool decode_out,
                                                   key_codec codec, unsigned char *smem) {
    static_assert(SUB == 1 || SUB == 2, "one or two sub-tiles per block");
    constexpr int TILE = THREADS * ITEMS;
    constexpr int BLOCK_TILE = SUB * TILE;
    KB *keys = (KB *)smem;
    V *vals = (V *)(smem + ws_tile_keys_bytes<KB, V>(BLOCK_TILE, SUB));
    const int t = (int)threadIdx.x;
    const int first = t * ITEMS;

#pragma unroll 1
    for (int u = 0; u < SUB; u++) {
        /* Sub-tile u is items [u*TILE, (u+1)*TILE) of the padded arrays:
         * TILE is a whole number of padding periods, so it is an array of
         * its own at slot smem_index(u*TILE). */
        tile_smem<KB, V> sub;
        sub.keys = keys + smem_index<KB>(u * TILE);
        sub.vals = vals + smem_index<V>(u * TILE);
        const int sub_valid = valid - u * TILE;
        bool all_ones = false; /* a real key equal to the sentinel */
        /* Coalesced striped loads, all issued before the first store so the
         * DRAM latency is paid once; missing items become sentinels (largest
         * key, and, with positions, after every real item). */
        KB kr[ITEMS];
        V vr[ITEMS];
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            const int e = i * THREADS + t;
            const size_t g = base + (size_t)(u * TILE + e);
            kr[i] = e < sub_valid ? keys_in[g] : KB(0);
            if constexpr (is_value<V>::value) {
                if (e < sub_valid) vr[i] = vals_in[g];
            }
        }
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            const int e = i * THREADS + t;
            const KB key = encode_in ? encode(kr[i], codec) : kr[i];
            all_ones |= e < sub_valid && key == sentinel<KB>();
            smem_put(sub.keys, e, e < sub_valid ? key : sentinel<KB>());
            if constexpr (is_value<V>::value) {
                if (e < sub_valid) smem_put(sub.vals, e, vr[i]);
            }
        }
        if constexpr (STABLE) {
            __syncthreads();
            ws_sort_staged<KB, V, uint32_t, THREADS, ITEMS, RUN>(sub, sub_valid);
        } else if constexpr (!is_value<V>::value) {
            __syncthreads();
            ws_sort_staged<KB, V, no_value, THREADS, ITEMS, RUN>(sub, sub_valid);
        } else if (__syncthreads_or(sub_valid < TILE && all_ones)) {
            ws_sort_staged<KB, V, uint32_t, THREADS, ITEMS, RUN>(sub, sub_valid);
        } else {
            ws_sort_staged<KB, V, no_value, THREADS, ITEMS, RUN>(sub, sub_valid);
        }
    }
    __syncthreads();
    const KB *res_keys = keys; /* where the sorted block tile ends up */
    if constexpr (SUB == 2) {
        /* Merge the two sorted sub-tiles: each thread takes outputs
         * [first, first+ITEMS) and [TILE+first, ...). The first sub-tile
         * wins ties, so the tile stays stable. */
        const merge_src m = {0, TILE, TILE, TILE};
        if constexpr (ws_tile_second_array<KB, V>()) {
            /* Straight into the second array, keeping registers free.
             * Outputs from `valid` on are never stored: their merges are
             * skipped (the register path below does not skip: guarding
             * its merges made ptxas spill). */
            const bool lo = first < valid, hi = TILE + first < valid;
            KB *out = keys + smem_slots<KB>(BLOCK_TILE);
            if (lo)
                merge_items_to_smem<KB, V, ITEMS>(keys, vals, m, first, out, vals,
                                                  blocked_base<KB, ITEMS>(first), 0);
            if (hi)
                merge_items_to_smem<KB, V, ITEMS>(keys, vals, m, TILE + first, out, vals,
                                                  blocked_base<KB, ITEMS>(TILE + first), 0);
            res_keys = out;
        } else {
            /* Into registers, then back once every thread has read. */
            KB k0[ITEMS], k1[ITEMS];
            V v0[ITEMS], v1[ITEMS];
            merge_items_to_registers<KB, V, ITEMS>(keys, vals, m, first, k0, v0);
            merge_items_to_registers<KB, V, ITEMS>(keys, vals, m, TILE + first, k1, v1);
            __syncthreads();
#pragma unroll
            for (int i = 0; i < ITEMS; i++) {
                smem_put(keys, first + i, k0[i]);
                smem_put(vals, first + i, v0[i]);
                smem_put(keys, TILE + first + i, k1[i]);
                smem_put(vals, TILE + first + i, v1[i]);
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < SUB * ITEMS; i++) {
        const int e = i * THREADS + t;
        if (e < valid) {
            const KB key = smem_get(res_keys, e);
            keys_out[base + e] = decode_out ? decode(key, codec) : key;
            if constexpr (is_value<V>::value) vals_out[base + e] = smem_get(vals, e);
        }
    }
}

/* Sorts tiles [tile_offset + blockIdx.x * SUB * TILE, ...) of keys_in into
 * keys_out (which may alias keys_in); SUB = 2 merges two tiles on chip,
 * which saves a whole merge pass when it makes n / tile a power of four
 * (ws_sort_tile_for). keep_ordered leaves ordered bits for the merge
 * passes; otherwise the tile is decoded back to the dtype. */
template <typename KB, typename V, bool STABLE, int THREADS, int ITEMS, int RUN, int MIN_BLOCKS,
          int SUB>
__global__ void __launch_bounds__(THREADS, ws_min_blocks_fit(THREADS, MIN_BLOCKS))
    block_sort_kernel(const KB *keys_in, const V *vals_in, KB *keys_out, V *vals_out, size_t n,
                      size_t tile_offset, int keep_ordered, key_codec codec) {
    ws_pdl_wait(); /* a chain's dependent launch; the cuts after it spread (pdl.cuh) */
    constexpr int BLOCK_TILE = SUB * THREADS * ITEMS;
    extern __shared__ __align__(16) unsigned char ws_tile_smem_raw[];
    const size_t base = tile_offset + (size_t)blockIdx.x * BLOCK_TILE;
    const int valid = n - base < (size_t)BLOCK_TILE ? (int)(n - base) : BLOCK_TILE;
    ws_sort_tile_block<KB, V, STABLE, THREADS, ITEMS, RUN, SUB>(
        keys_in, vals_in, keys_out, vals_out, base, valid, true, !keep_ordered, codec,
        ws_tile_smem_raw);
}

/*=== sample-sort buckets ===*/

/* Equality buckets and single items: decode and copy into place. */
template <typename KB, typename V>
__global__ void __launch_bounds__(256)
    ws_bucket_copy_kernel(KB *keys, V *vals, const KB *tmp_keys, const V *tmp_vals,
                          const ws_bucket *list, const unsigned *count, key_codec codec) {
#if WS_SAMPLE_ARCH
    ws_pdl_chain(); /* pdl.cuh */
    const unsigned total = *count;
    for (unsigned e = blockIdx.x; e < total; e += gridDim.x) {
        const ws_bucket b = list[e];
        const KB *src = b.in_tmp ? tmp_keys : keys;
        for (unsigned i = threadIdx.x; i < b.size; i += blockDim.x) {
            keys[b.begin + i] = decode(src[b.begin + i], codec);
            if constexpr (is_value<V>::value) {
                if (b.in_tmp) vals[b.begin + i] = tmp_vals[b.begin + i];
            }
        }
    }
#endif
}

template <typename KB, typename V, int THREADS, int ITEMS>
__host__ __device__ constexpr size_t ws_big_smem_bytes() {
    return ws_align256(sizeof(KB) * smem_slots<KB>(THREADS * ITEMS + ITEMS)) +
           (is_value<V>::value ? sizeof(V) * smem_slots<V>(THREADS * ITEMS + ITEMS) : 0);
}

/* Fallback for a bucket still too big for the on-chip sort after the last
 * level: one block sorts it tile by tile (stable), then merges runs pairwise,
 * ping-ponging between the bucket's ranges of the two buffers (no other
 * bucket uses them), one tile of outputs at a time: thread 0 finds the
 * window's merge-path split in global memory, the block loads the window's
 * inputs into shared memory and merges them there. The last pass writes the
 * decoded keys into the caller's arrays. Ties take the earlier run, so the
 * result is stable. */
template <typename KB, typename V, int THREADS, int ITEMS, int RUN>
__global__ void __launch_bounds__(THREADS)
    ws_big_bucket_kernel(KB *keys, V *vals, KB *tmp_keys, V *tmp_vals, const ws_big_bucket *list,
                         const unsigned *count, key_codec codec) {
#if WS_SAMPLE_ARCH
    ws_pdl_chain(); /* pdl.cuh */
    constexpr int TILE = THREADS * ITEMS;
    extern __shared__ __align__(16) unsigned char ws_tile_smem_raw[];
    KB *sk = (KB *)ws_tile_smem_raw;
    V *sv = (V *)(ws_tile_smem_raw + ws_align256(sizeof(KB) * smem_slots<KB>(TILE + ITEMS)));
    __shared__ unsigned long long split[2];
    const int t = (int)threadIdx.x;
    const unsigned total = *count;
    for (unsigned e = blockIdx.x; e < total; e += gridDim.x) {
        const ws_big_bucket b = list[e];
        const unsigned long long m = b.size;
        int passes = 0;
        for (unsigned long long w = TILE; w < m; w *= 2) passes++;
        /* The runs start where the last pass then lands in the caller's arrays. */
        KB *home_k = b.in_tmp ? tmp_keys : keys;
        V *home_v = b.in_tmp ? tmp_vals : vals;
        KB *xk = passes % 2 ? tmp_keys : keys, *yk = passes % 2 ? keys : tmp_keys;
        V *xv = passes % 2 ? tmp_vals : vals, *yv = passes % 2 ? vals : tmp_vals;
        for (unsigned long long tb = 0; tb < m; tb += TILE) {
            const int valid = m - tb < (unsigned long long)TILE ? (int)(m - tb) : TILE;
            ws_sort_tile_block<KB, V, true, THREADS, ITEMS, RUN, 1>(
                home_k, home_v, xk, xv, b.begin + tb, valid, false, passes == 0, codec,
                ws_tile_smem_raw);
            __syncthreads();
        }
        for (int p = 0; p < passes; p++) {
            const unsigned long long width = (unsigned long long)TILE << p;
            const bool last = p == passes - 1;
            for (unsigned long long ps = 0; ps < m; ps += 2 * width) {
                const unsigned long long a_len = m - ps < width ? m - ps : width;
                const unsigned long long b_len = m - ps - a_len < width ? m - ps - a_len : width;
                const KB *a = xk + b.begin + ps, *bb = a + a_len;
                const V *av = xv + b.begin + ps, *bv = av + a_len;
                for (unsigned long long d0 = 0; d0 < a_len + b_len; d0 += TILE) {
                    const unsigned long long d1 =
                        d0 + TILE < a_len + b_len ? d0 + TILE : a_len + b_len;
                    if (t < 2)
                        split[t] =
                            merge_path<KB, size_t>(ws_global_reader<KB>{a}, a_len,
                                                   ws_global_reader<KB>{bb}, b_len, t ? d1 : d0);
                    __syncthreads();
                    const int na = (int)(split[1] - split[0]);
                    const int nw = (int)(d1 - d0);
                    for (int i = t; i < nw; i += THREADS) {
                        const bool from_a = i < na;
                        const unsigned long long g =
                            from_a ? split[0] + i : (d0 - split[0]) + (unsigned long long)(i - na);
                        smem_put(sk, i, from_a ? a[g] : bb[g]);
                        if constexpr (is_value<V>::value) smem_put(sv, i, from_a ? av[g] : bv[g]);
                    }
                    __syncthreads();
                    const int diag = t * ITEMS;
                    if (diag < nw) {
                        /* Steps past nw read at most ITEMS slots past it: the
                         * arrays have that much slack. */
                        KB kr[ITEMS];
                        V vr[ITEMS];
                        const merge_src ms = {0, na, na, nw - na};
                        merge_items_to_registers<KB, V, ITEMS>(sk, sv, ms, diag, kr, vr);
#pragma unroll
                        for (int i = 0; i < ITEMS; i++) {
                            if (diag + i < nw) {
                                const unsigned long long o = b.begin + ps + d0 + diag + i;
                                yk[o] = last ? decode(kr[i], codec) : kr[i];
                                if constexpr (is_value<V>::value) yv[o] = vr[i];
                            }
                        }
                    }
                    __syncthreads();
                }
            }
            KB *tk = xk;
            xk = yk;
            yk = tk;
            V *tv = xv;
            xv = yv;
            yv = tv;
        }
    }
#endif
}

#endif /* WARPSORT_CUDA_TILE_SORT_CUH */
