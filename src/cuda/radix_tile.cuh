/*
 * radix_tile.cuh - sample-sort buckets of 4-byte keys sorted on chip by
 * least-significant-digit radix passes over only the bits their range
 * spans.
 *
 * After the distribution levels a bucket job (one bucket, or consecutive
 * buckets packed together) holds keys between two splitters: for random
 * 4-byte keys at 2^27 a job spans about 17 bits, so two 9-bit passes order
 * it, where the bitonic-and-merge tile sort (tile_sort.cuh) runs some 78
 * compare-exchange stages on a 4096-key tile whatever the keys. A block
 * finds its job's smallest and largest key, subtracts the smallest, and
 * runs ceil(bits / 9) passes of equal digit width (at most four, for 32
 * bits). A pass ranks each warp's keys by digit on the warp's own
 * counters, scans the (digit, warp) counts digit-major across the block
 * and scatters the keys, and their values, in shared memory; the last
 * pass's tile is stored coalesced and decoded. Every pass after the first
 * keeps the order of equal digits (ws_warp_rank); the first does too when
 * the sort is stable (a job arrives in input order), and otherwise takes
 * one shared atomic a key, in any order. Figures: bench/NOTES.md, 2026-11-27
 * (thirty-first session).
 */
#ifndef WARPSORT_CUDA_RADIX_TILE_CUH
#define WARPSORT_CUDA_RADIX_TILE_CUH

#include <stdint.h>

#include "block_rank.cuh"
#include "tile_sort.cuh"

/* Widest digit of a pass: 512 counters a warp, so a block's (digit, warp)
 * scan is 16 entries a thread with 16 items a thread. */
#define WS_RX_DIGIT_BITS 9
#define WS_RX_DIGITS (1 << WS_RX_DIGIT_BITS)
/* Items a thread holds; the block's threads are the class capacity / this. */
#define WS_RX_ITEMS 16

template <typename V, int THREADS>
struct ws_rx_smem {
    static constexpr int N = THREADS * WS_RX_ITEMS, WARPS = THREADS / 32;
    uint32_t keys[N];
    typename std::conditional<is_value<V>::value, V, uint32_t>::type
        vals[is_value<V>::value ? N : 1];
    unsigned hist[WARPS][WS_RX_DIGITS];  /* counts, then offsets in digit-major order */
    unsigned peers[WARPS][WS_RX_DIGITS]; /* ws_warp_rank's lane masks, zero between calls */
    unsigned warp_sums[WARPS];
    uint32_t lo[WARPS], hi[WARPS];
};

/* Whether a bucket class of `cap` items (keys of key_bytes) takes the radix
 * sort: 4-byte keys, with a block of cap / WS_RX_ITEMS threads, at most one
 * a digit (the scan gives each thread whole digits). */
__host__ __device__ constexpr bool ws_radix_buckets(int key_bytes, int cap) {
    return key_bytes == 4 && cap % (32 * WS_RX_ITEMS) == 0 && cap / WS_RX_ITEMS <= WS_RX_DIGITS;
}

/* Occupancy floor: 1024 threads an SM for keys alone (64 registers; the
 * 8192-key block spills 12 bytes, ptxas -v), 512 with values (their
 * registers: the stable 8-byte-value block spills 4). */
template <typename V>
__host__ __device__ constexpr int ws_rx_min_blocks(int threads) {
    return (is_value<V>::value ? 512 : 1024) / threads > 0
               ? (is_value<V>::value ? 512 : 1024) / threads
               : 1;
}

/* Sorts every job of `list` (*count of them, each at most THREADS x
 * WS_RX_ITEMS items, ordered 4-byte keys) from where it lives into the
 * caller's arrays, decoded. Thread t of warp w holds items (w x ITEMS + i) x
 * 32 + lane, i < ITEMS: a warp's items are one run of the job, read in
 * (item, lane) order, the order ws_warp_rank keeps. */
template <typename V, bool STABLE, int THREADS>
__global__ void __launch_bounds__(THREADS, ws_rx_min_blocks<V>(THREADS))
    ws_bucket_radix_kernel(uint32_t *keys, V *vals, const uint32_t *tmp_keys, const V *tmp_vals,
                           const ws_bucket *list, const unsigned *count, key_codec codec) {
#if WS_SAMPLE_ARCH
    constexpr int ITEMS = WS_RX_ITEMS, WARPS = THREADS / 32;
    constexpr int DPT =
        WS_RX_DIGITS / THREADS > 0 ? WS_RX_DIGITS / THREADS : 1; /* digits a thread scans */
    extern __shared__ __align__(16) unsigned char ws_tile_smem_raw[];
    ws_rx_smem<V, THREADS> &s = *(ws_rx_smem<V, THREADS> *)ws_tile_smem_raw;
    const int t = (int)threadIdx.x, lane = t & 31, w = t >> 5;
    for (int j = t; j < WARPS * WS_RX_DIGITS; j += THREADS) (&s.peers[0][0])[j] = 0u;
    const unsigned total = *count;
    for (unsigned e = blockIdx.x; e < total; e += gridDim.x) {
        const ws_bucket b = list[e];
        const int valid = (int)b.size;
        const uint32_t *src = b.in_tmp ? tmp_keys : keys;
        const V *vsrc = b.in_tmp ? tmp_vals : vals;
        uint32_t k[ITEMS];
        V v[ITEMS];
        uint32_t lo = 0xFFFFFFFFu, hi = 0u;
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            const int p = (w * ITEMS + i) * 32 + lane;
            k[i] = p < valid ? src[b.begin + p] : 0u;
            if constexpr (is_value<V>::value) {
                if (p < valid) v[i] = vsrc[b.begin + p];
            }
            if (p < valid) {
                lo = min(lo, k[i]);
                hi = max(hi, k[i]);
            }
        }
        lo = __reduce_min_sync(0xFFFFFFFFu, lo);
        hi = __reduce_max_sync(0xFFFFFFFFu, hi);
        if (lane == 0) s.lo[w] = lo, s.hi[w] = hi;
        __syncthreads();
#pragma unroll
        for (int u = 0; u < WARPS; u++) lo = min(lo, s.lo[u]), hi = max(hi, s.hi[u]);
        const int bits = hi > lo ? 32 - __clz((int)(hi - lo)) : 0;
        const int passes = (bits + WS_RX_DIGIT_BITS - 1) / WS_RX_DIGIT_BITS;
        const int dbits = passes ? (bits + passes - 1) / passes : 0;
        const unsigned mask = (1u << dbits) - 1u;
        if (passes == 0) { /* one key, or all equal: already in order */
#pragma unroll
            for (int i = 0; i < ITEMS; i++) {
                const int p = (w * ITEMS + i) * 32 + lane;
                if (p < valid) {
                    keys[b.begin + p] = decode(k[i], codec);
                    if constexpr (is_value<V>::value) vals[b.begin + p] = v[i];
                }
            }
            __syncthreads(); /* s.lo / s.hi are rewritten by the next job */
            continue;
        }
#pragma unroll 1
        for (int pass = 0; pass < passes; pass++) {
            const int shift = pass * dbits;
            /* The first pass orders keys whose input order does not matter
             * (STABLE false): one atomic a key on its warp's counter. The
             * others keep the previous pass's order among equal digits. */
            const bool any = !STABLE && pass == 0;
            if (pass > 0) {
#pragma unroll
                for (int i = 0; i < ITEMS; i++) {
                    const int p = (w * ITEMS + i) * 32 + lane;
                    k[i] = s.keys[p];
                    if constexpr (is_value<V>::value) v[i] = s.vals[p];
                }
            }
            for (int j = t; j < WARPS * WS_RX_DIGITS; j += THREADS) (&s.hist[0][0])[j] = 0u;
            __syncthreads();
            /* Each key's digit and rank in its warp, packed (digit << 16 |
             * rank: ranks stay below 2^10), or ~0 for a missing item. */
            unsigned dr[ITEMS];
#pragma unroll
            for (int i = 0; i < ITEMS; i++) {
                const int p = (w * ITEMS + i) * 32 + lane;
                const unsigned d = ((k[i] - lo) >> shift) & mask;
                unsigned r = 0;
                if (any) {
                    if (p < valid) r = atomicAdd(&s.hist[w][d], 1u);
                } else {
                    const unsigned dig[1] = {p < valid ? d : WS_NO_BUCKET};
                    unsigned rank[1];
                    ws_warp_rank<1>(dig, rank, s.hist[w], s.peers[w]);
                    r = rank[0];
                }
                dr[i] = p < valid ? d << 16 | r : 0xFFFFFFFFu;
            }
            __syncthreads();
            /* Offsets in digit-major order: thread t owns digits [t DPT,
             * (t+1) DPT) of every warp (threads past the digits own none). */
            unsigned mine = 0;
            const int d0 = t * DPT;
            if (d0 < WS_RX_DIGITS) {
#pragma unroll
                for (int d = 0; d < DPT; d++)
#pragma unroll
                    for (int u = 0; u < WARPS; u++) mine += s.hist[u][d0 + d];
            }
            unsigned all;
            unsigned at = ws_block_exclusive_sum<unsigned, THREADS>(mine, s.warp_sums, &all);
            if (d0 < WS_RX_DIGITS) {
#pragma unroll
                for (int d = 0; d < DPT; d++)
#pragma unroll
                    for (int u = 0; u < WARPS; u++) {
                        const unsigned c = s.hist[u][d0 + d];
                        s.hist[u][d0 + d] = at;
                        at += c;
                    }
            }
            __syncthreads();
#pragma unroll
            for (int i = 0; i < ITEMS; i++) {
                if (dr[i] != 0xFFFFFFFFu) {
                    const unsigned o = s.hist[w][dr[i] >> 16] + (dr[i] & 0xFFFFu);
                    s.keys[o] = k[i];
                    if constexpr (is_value<V>::value) s.vals[o] = v[i];
                }
            }
            __syncthreads();
        }
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            const int p = i * THREADS + t;
            if (p < valid) {
                keys[b.begin + p] = decode(s.keys[p], codec);
                if constexpr (is_value<V>::value) vals[b.begin + p] = s.vals[p];
            }
        }
        __syncthreads(); /* shared memory is reused by the next job */
    }
#endif
}

#endif /* WARPSORT_CUDA_RADIX_TILE_CUH */
