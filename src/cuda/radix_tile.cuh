/*
 * radix_tile.cuh - sample-sort bucket jobs sorted on chip by
 * least-significant-digit radix passes over only the bits their range
 * spans.
 *
 * After the distribution levels a bucket job (one bucket, or consecutive
 * buckets packed together) holds keys between two splitters: for random
 * 4-byte keys at 2^27 a job spans about 17 bits, so two 9-bit passes order
 * it, where the bitonic-and-merge tile sort (tile_sort.cuh) runs some 78
 * compare-exchange stages on a 4096-key tile whatever the keys. A block
 * finds its job's smallest and largest key, subtracts the smallest, and
 * runs ceil(bits / 9) passes of equal digit width (at most two: see
 * below). A pass ranks each warp's keys by digit on the warp's own
 * counters, scans the (digit, warp) counts digit-major across the block
 * and scatters the keys, and their values, in shared memory; the last
 * pass's tile is stored coalesced and decoded. Every pass after the first
 * keeps the order of equal digits (a warp's lanes of a digit found by a
 * lane mask, ranked in (item, lane) order); the first does too when
 * the sort is stable (a job arrives in input order), and otherwise takes
 * one shared atomic a key, in any order.
 *
 * A job wider than two passes (for random 4-byte keys at 2^24 about 20
 * bits, 8-byte ones about 48) takes two passes over the top
 * WS_RX_PREFIX_BITS bits of its range only, which leave equal prefixes
 * next to each other (a few thousand random keys spread over 2^18
 * prefixes make a few dozen pairs a job); one thread a run then
 * insertion-sorts it by the whole key. A job with a run longer than
 * WS_RX_MAX_RUN (keys clustered below the prefix's resolution) is sorted
 * again by stable passes over every bit of its range. Figures:
 * bench/NOTES.md, 2026-11-27 (thirty-first and thirty-second sessions) and
 * 2026-11-28 (thirty-third).
 */
#ifndef WARPSORT_CUDA_RADIX_TILE_CUH
#define WARPSORT_CUDA_RADIX_TILE_CUH

#include <stdint.h>

#include "block_rank.cuh"
#include "pdl.cuh"
#include "tile_sort.cuh"

/* Widest digit of a pass: 512 counters a warp, so a block's (digit, warp)
 * scan is 16 entries a thread with 16 items a thread. */
#define WS_RX_DIGIT_BITS 9
#define WS_RX_DIGITS (1 << WS_RX_DIGIT_BITS)
/* Items a thread holds; the block's threads are the class capacity / this. */
#define WS_RX_ITEMS 16
/* Jobs wider than this many bits are ordered by their top this many bits
 * (two passes), then by runs of equal prefixes. */
#define WS_RX_PREFIX_BITS (2 * WS_RX_DIGIT_BITS)
/* The longest run of equal prefixes one thread insertion-sorts; a longer
 * one sends its job through passes over every bit. */
#define WS_RX_MAX_RUN 32

/* A block's room. PACK: a pass's counters are 16 bits (a warp counts at
 * most 32 x WS_RX_ITEMS keys of a digit, and a tile's offsets stay below
 * 2^16), warps 2q and 2q + 1 sharing word q of a digit, low and high half:
 * half the zeroing, half the scan's reads and writes, and room for a
 * block of 16384 8-byte keys or 4-byte pairs. Measured, it speeds the
 * segments' radix blocks of keys and slows the sample sort's bucket jobs
 * (bench/NOTES.md, thirty-fourth session), so each caller picks. */
template <typename KB, typename V, int THREADS, bool PACK>
struct ws_rx_smem {
    static constexpr int N = THREADS * WS_RX_ITEMS, WARPS = THREADS / 32;
    static constexpr int ROWS = PACK ? (WARPS + 1) / 2 : WARPS;
    static_assert(!PACK || N < 65536, "a tile's offsets fit 16 bits");
    KB keys[N];
    typename std::conditional<is_value<V>::value, V, uint32_t>::type
        vals[is_value<V>::value ? N : 1];
    unsigned hist[ROWS][WS_RX_DIGITS];   /* counts, then offsets in digit-major order */
    unsigned peers[WARPS][WS_RX_DIGITS]; /* lane masks of the stable ranking, zero between calls */
    unsigned warp_sums[WARPS];
    KB lo[WARPS], hi[WARPS];
    unsigned long_run; /* a run of equal prefixes longer than WS_RX_MAX_RUN; zero between jobs */
};

/* The codec a sort kernel runs under: KIND >= 0 fixes its kind
 * (unsigned, signed, float) at compile time, so the encode on load and
 * decode on store carry no dispatch over kinds (the segments' warp and block
 * classes ran faster so for every width, keys alone and with values, and
 * the radix blocks for float keys alone: bench/NOTES.md, thirty-fourth and
 * thirty-fifth sessions); KIND < 0 keeps the call's run-time codec (one
 * instance for the three kinds). */
template <int KIND>
__device__ __forceinline__ key_codec ws_kind_codec(key_codec c) {
    return KIND >= 0 ? key_codec{KIND, c.desc} : c;
}

/* Whether a bucket class of `cap` items takes the radix sort: a block of
 * cap / WS_RX_ITEMS threads, at most 1024 (the scan gives each thread
 * whole digits, or none). */
__host__ __device__ constexpr bool ws_radix_buckets(int cap) {
    return cap % (32 * WS_RX_ITEMS) == 0 && cap / WS_RX_ITEMS <= 1024;
}

/* Occupancy floor, in threads an SM: 1024 for 4-byte keys alone (a cap
 * of 64 registers, which ptxas meets with a few bytes of spill; the counts
 * are in bench/NOTES.md), 768 for 8-byte keys alone (their registers hold
 * twice the bits), 512 with values; as blocks of `threads`, at least one. */
template <typename KB, typename V>
__host__ __device__ constexpr int ws_rx_sm_threads() {
    return is_value<V>::value ? 512 : sizeof(KB) == 4 ? 1024 : 768;
}
template <typename KB, typename V>
__host__ __device__ constexpr int ws_rx_min_blocks(int threads) {
    return ws_rx_sm_threads<KB, V>() / threads > 0 ? ws_rx_sm_threads<KB, V>() / threads : 1;
}

/* The warp's smallest and largest key, in every lane (once a job: five
 * shuffles either width; __reduce_*_sync would need sm_80 in the sm_75
 * build of this header). */
template <typename KB>
__device__ __forceinline__ KB ws_rx_warp_min(KB x) {
#pragma unroll
    for (int d = 16; d > 0; d /= 2) {
        const KB y = __shfl_xor_sync(0xFFFFFFFFu, x, d);
        x = y < x ? y : x;
    }
    return x;
}
template <typename KB>
__device__ __forceinline__ KB ws_rx_warp_max(KB x) {
#pragma unroll
    for (int d = 16; d > 0; d /= 2) {
        const KB y = __shfl_xor_sync(0xFFFFFFFFu, x, d);
        x = y > x ? y : x;
    }
    return x;
}
__device__ __forceinline__ int ws_rx_bits(uint32_t range) { return 32 - __clz((int)range); }
__device__ __forceinline__ int ws_rx_bits(uint64_t range) { return 64 - __clzll((long long)range); }

/* One pass: ranks the block's keys (k, v: thread t of warp w holds items
 * (w x ITEMS + i) x 32 + lane of the tile, which the previous pass left in
 * that order) by digit ((key - lo) >> shift) & mask and scatters them into
 * s.keys / s.vals in digit order. any: equal digits may come out in any
 * order (one atomic a key); else they keep their order. Every thread of
 * the block calls it; it ends on a barrier. */
template <typename KB, typename V, int THREADS, bool PACK>
__device__ __forceinline__ void ws_rx_pass(ws_rx_smem<KB, V, THREADS, PACK> &s,
                                           const KB (&k)[WS_RX_ITEMS], const V (&v)[WS_RX_ITEMS],
                                           int valid, KB lo, int shift, unsigned mask, bool any) {
    constexpr int ITEMS = WS_RX_ITEMS, ROWS = ws_rx_smem<KB, V, THREADS, PACK>::ROWS;
    constexpr int DPT =
        WS_RX_DIGITS / THREADS > 0 ? WS_RX_DIGITS / THREADS : 1; /* digits a thread scans */
    constexpr unsigned CM = PACK ? 0xFFFFu : 0xFFFFFFFFu;        /* a counter's bits, from `half` */
    const int t = (int)threadIdx.x, lane = t & 31, w = t >> 5;
    const int q = PACK ? w >> 1 : w, half = PACK ? 16 * (w & 1) : 0; /* the warp's counters */
    for (int j = t; j < ROWS * WS_RX_DIGITS; j += THREADS) (&s.hist[0][0])[j] = 0u;
    __syncthreads();
    /* Each key's digit and rank in its warp, packed (digit << 16 | rank:
     * ranks stay below 2^10), or ~0 for a missing item. */
    unsigned dr[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const int p = (w * ITEMS + i) * 32 + lane;
        const bool in = p < valid;
        const unsigned d = (unsigned)((k[i] - lo) >> shift) & mask;
        unsigned r = 0;
        if (any) {
            if (in) r = atomicAdd(&s.hist[q][d], 1u << half) >> half & CM;
        } else if constexpr (PACK) {
            /* In (item, lane) order: the lanes of a digit find each other
             * through its lane mask, and the first adds them all to the
             * word its partner warp shares. */
            if (in) atomicOr(&s.peers[w][d], 1u << lane);
            __syncwarp();
            const unsigned peers = in ? s.peers[w][d] : 0u;
            __syncwarp();
            const int first = in ? __ffs((int)peers) - 1 : lane;
            unsigned base = 0;
            if (in && first == lane) {
                base = atomicAdd(&s.hist[q][d], (unsigned)__popc(peers) << half);
                s.peers[w][d] = 0u;
            }
            base = __shfl_sync(0xFFFFFFFFu, base, first);
            __syncwarp(); /* the masks are zero again before the next item's */
            r = (base >> half & CM) + (unsigned)__popc(peers & ((1u << lane) - 1u));
        } else {
            const unsigned dig[1] = {in ? d : WS_NO_BUCKET};
            unsigned rank[1];
            ws_warp_rank<1>(dig, rank, s.hist[w], s.peers[w]);
            r = rank[0];
        }
        dr[i] = in ? d << 16 | r : 0xFFFFFFFFu;
    }
    __syncthreads();
    /* Offsets in digit-major order: thread t owns digits [t DPT, (t+1) DPT)
     * of every warp (threads past the digits own none). */
    unsigned mine = 0;
    const int d0 = t * DPT;
    if (d0 < WS_RX_DIGITS) {
#pragma unroll
        for (int d = 0; d < DPT; d++)
#pragma unroll
            for (int u = 0; u < ROWS; u++) {
                const unsigned c = s.hist[u][d0 + d];
                mine += (c & CM) + (PACK ? c >> 16 : 0u);
            }
    }
    unsigned all;
    unsigned at = ws_block_exclusive_sum<unsigned, THREADS>(mine, s.warp_sums, &all);
    if (d0 < WS_RX_DIGITS) {
#pragma unroll
        for (int d = 0; d < DPT; d++)
#pragma unroll
            for (int u = 0; u < ROWS; u++) {
                const unsigned c = s.hist[u][d0 + d];
                if constexpr (PACK) {
                    s.hist[u][d0 + d] = at | (at + (c & CM)) << 16;
                    at += (c & CM) + (c >> 16);
                } else {
                    s.hist[u][d0 + d] = at;
                    at += c;
                }
            }
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        if (dr[i] != 0xFFFFFFFFu) {
            const unsigned o = (s.hist[q][dr[i] >> 16] >> half & CM) + (dr[i] & 0xFFFFu);
            s.keys[o] = k[i];
            if constexpr (is_value<V>::value) s.vals[o] = v[i];
        }
    }
    __syncthreads();
}

/* Reloads the tile the last pass scattered into the registers' layout. */
template <typename KB, typename V, int THREADS, bool PACK>
__device__ __forceinline__ void ws_rx_reload(const ws_rx_smem<KB, V, THREADS, PACK> &s,
                                             KB (&k)[WS_RX_ITEMS], V (&v)[WS_RX_ITEMS]) {
    const int lane = (int)threadIdx.x & 31, w = (int)threadIdx.x >> 5;
#pragma unroll
    for (int i = 0; i < WS_RX_ITEMS; i++) {
        const int p = (w * WS_RX_ITEMS + i) * 32 + lane;
        k[i] = s.keys[p];
        if constexpr (is_value<V>::value) v[i] = s.vals[p];
    }
}

/* After passes over the prefix (key - lo) >> shift: each run of equal
 * prefixes in s.keys[0, valid) is sorted by the whole key, stably, by the
 * thread holding its first item; a run longer than WS_RX_MAX_RUN is left
 * alone and sets s.long_run. Runs are found before any is sorted (a
 * barrier apart), so no thread reads what another writes. Every thread
 * calls it; it ends on a barrier. */
template <typename KB, typename V, int THREADS, bool PACK>
__device__ __forceinline__ void ws_rx_finish_runs(ws_rx_smem<KB, V, THREADS, PACK> &s, int valid,
                                                  KB lo, int shift) {
    const int t = (int)threadIdx.x;
    unsigned len[WS_RX_ITEMS]; /* the run starting at item i's position, or 0 */
#pragma unroll
    for (int i = 0; i < WS_RX_ITEMS; i++) {
        const int p = i * THREADS + t;
        len[i] = 0;
        if (p + 1 >= valid) continue;
        const KB pre = (s.keys[p] - lo) >> shift;
        if ((p > 0 && ((s.keys[p - 1] - lo) >> shift) == pre) ||
            ((s.keys[p + 1] - lo) >> shift) != pre)
            continue; /* not the first item of a run of two or more */
        int end = p + 2;
        while (end < valid && end - p <= WS_RX_MAX_RUN && ((s.keys[end] - lo) >> shift) == pre)
            end++;
        if (end - p > WS_RX_MAX_RUN)
            atomicOr(&s.long_run, 1u);
        else
            len[i] = (unsigned)(end - p);
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < WS_RX_ITEMS; i++) {
        const int p = i * THREADS + t, end = p + (int)len[i];
        for (int a = p + 1; a < end; a++) { /* strict compare: equal keys keep their order */
            const KB x = s.keys[a];
            typename std::conditional<is_value<V>::value, V, uint32_t>::type y = 0;
            if constexpr (is_value<V>::value) y = s.vals[a];
            int b = a;
            for (; b > p && s.keys[b - 1] > x; b--) {
                s.keys[b] = s.keys[b - 1];
                if constexpr (is_value<V>::value) s.vals[b] = s.vals[b - 1];
            }
            s.keys[b] = x;
            if constexpr (is_value<V>::value) s.vals[b] = y;
        }
    }
    __syncthreads();
}

/* Zeroes what ws_rx_sort_job expects zero: once a block, before its
 * first job. */
template <typename KB, typename V, int THREADS, bool PACK>
__device__ __forceinline__ void ws_rx_block_init(ws_rx_smem<KB, V, THREADS, PACK> &s) {
    for (int j = (int)threadIdx.x; j < THREADS / 32 * WS_RX_DIGITS; j += THREADS)
        (&s.peers[0][0])[j] = 0u;
    if (threadIdx.x == 0) s.long_run = 0u;
}

/* Sorts one job of `valid` items (at most THREADS x WS_RX_ITEMS) from
 * src[begin..] (vsrc) into dst[begin..] (vdst), decoded by `out` (the
 * identity codec {0, 0} leaves ordered bits); src and dst may be the same.
 * RAW: src holds the caller's keys, encoded by codec as they load, and
 * vsrc NULL (with values) means item p's value is vbase + p, its index in
 * the segment (argsort); else ordered keys and their values. Thread t
 * of warp w holds items (w x ITEMS + i) x 32 + lane, i < ITEMS: a warp's
 * items are one run of the job, read in (item, lane) order, the order the
 * stable passes keep. STABLE: equal keys keep their order. dst NULL: the
 * sorted job stays in s.keys / s.vals[0, valid) as ordered bits, for the
 * caller to take from there (cluster_merge.cuh). Every thread of the block
 * calls it (after ws_rx_block_init); it ends on a barrier, so the next job
 * may reuse s (the caller, with dst NULL, once it has taken the job). */
template <typename KB, typename V, bool STABLE, bool RAW, int THREADS, bool PACK>
__device__ __forceinline__ void ws_rx_sort_job(ws_rx_smem<KB, V, THREADS, PACK> &s, const KB *src,
                                               const V *vsrc, KB *dst, V *vdst,
                                               unsigned long long begin, int valid, key_codec codec,
                                               key_codec out, unsigned long long vbase) {
    constexpr int ITEMS = WS_RX_ITEMS, WARPS = THREADS / 32;
    const int t = (int)threadIdx.x, lane = t & 31, w = t >> 5;
    KB k[ITEMS];
    V v[ITEMS];
    KB lo = ~KB(0), hi = 0;
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const int p = (w * ITEMS + i) * 32 + lane;
        k[i] = p < valid ? src[begin + p] : KB(0);
        if constexpr (RAW) k[i] = encode(k[i], codec);
        if constexpr (is_value<V>::value) {
            if constexpr (RAW) {
                if (p < valid) v[i] = vsrc ? vsrc[begin + p] : (V)(vbase + (unsigned)p);
            } else if (p < valid) {
                v[i] = vsrc[begin + p];
            }
        }
        if (p < valid) {
            lo = k[i] < lo ? k[i] : lo;
            hi = k[i] > hi ? k[i] : hi;
        }
    }
    lo = ws_rx_warp_min(lo);
    hi = ws_rx_warp_max(hi);
    if (lane == 0) s.lo[w] = lo, s.hi[w] = hi;
    __syncthreads();
#pragma unroll
    for (int u = 0; u < WARPS; u++) {
        lo = s.lo[u] < lo ? s.lo[u] : lo;
        hi = s.hi[u] > hi ? s.hi[u] : hi;
    }
    const int bits = hi > lo ? ws_rx_bits(hi - lo) : 0;
    if (bits == 0) { /* one key, or all equal: already in order */
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            const int p = (w * ITEMS + i) * 32 + lane;
            if (p < valid && dst) {
                dst[begin + p] = decode(k[i], out);
                if constexpr (is_value<V>::value) vdst[begin + p] = v[i];
            } else if (p < valid) {
                s.keys[p] = k[i];
                if constexpr (is_value<V>::value) s.vals[p] = v[i];
            }
        }
    } else {
        /* A job of up to WS_RX_PREFIX_BITS bits: passes over every bit. A
         * wider one: over the top WS_RX_PREFIX_BITS, from bit `base` up. */
        const bool prefix = bits > WS_RX_PREFIX_BITS;
        const int base = prefix ? bits - WS_RX_PREFIX_BITS : 0;
        const int passes =
            ((prefix ? WS_RX_PREFIX_BITS : bits) + WS_RX_DIGIT_BITS - 1) / WS_RX_DIGIT_BITS;
        const int dbits = (bits - base + passes - 1) / passes;
        /* The first pass orders keys whose input order does not matter
         * (STABLE false): one atomic a key on its warp's counter. */
#pragma unroll 1
        for (int pass = 0; pass < passes; pass++) {
            if (pass > 0) ws_rx_reload(s, k, v);
            ws_rx_pass(s, k, v, valid, lo, base + pass * dbits, (1u << dbits) - 1u,
                       !STABLE && pass == 0);
        }
        if (prefix) {
            ws_rx_finish_runs(s, valid, lo, base);
            if (s.long_run) {
                /* Clustered keys: stable passes over every bit, from the
                 * prefix order (which keeps equal keys' order). */
                __syncthreads(); /* every thread has read long_run */
                if (t == 0) s.long_run = 0u;
                const int all = (bits + WS_RX_DIGIT_BITS - 1) / WS_RX_DIGIT_BITS;
                const int wbits = (bits + all - 1) / all;
#pragma unroll 1
                for (int pass = 0; pass < all; pass++) {
                    ws_rx_reload(s, k, v);
                    ws_rx_pass(s, k, v, valid, lo, pass * wbits, (1u << wbits) - 1u, false);
                }
            }
        }
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            const int p = i * THREADS + t;
            if (p < valid && dst) {
                dst[begin + p] = decode(s.keys[p], out);
                if constexpr (is_value<V>::value) vdst[begin + p] = s.vals[p];
            }
        }
    }
    __syncthreads(); /* s is reused by the next job (s.lo and s.hi too) */
}

/* Sorts every job of `list` (*count of them, each at most THREADS x
 * WS_RX_ITEMS items, ordered keys) from where it lives into the caller's
 * arrays, decoded (ws_rx_sort_job; PACK: ws_rx_smem, which the launch's
 * shared memory holds). */
template <typename KB, typename V, bool STABLE, int THREADS, bool PACK>
__global__ void __launch_bounds__(THREADS, ws_rx_min_blocks<KB, V>(THREADS))
    ws_bucket_radix_kernel(KB *keys, V *vals, const KB *tmp_keys, const V *tmp_vals,
                           const ws_bucket *list, const unsigned *count, unsigned *next,
                           key_codec codec) {
#if WS_SAMPLE_ARCH
    ws_pdl_chain(); /* pdl.cuh */
    extern __shared__ __align__(16) unsigned char ws_tile_smem_raw[];
    ws_rx_smem<KB, V, THREADS, PACK> &s = *(ws_rx_smem<KB, V, THREADS, PACK> *)ws_tile_smem_raw;
    __shared__ unsigned s_next;
    ws_rx_block_init(s);
    const unsigned total = *count;
    /* Block b sorts job b, then claims the next unclaimed one (`next`
     * counts claims past the first gridDim.x jobs) while it sorts, so a
     * block that drew short jobs takes more: jobs differ in size up to the
     * class's capacity, and with a few jobs a block a fixed stride left
     * the unluckiest block far behind the mean. */
    for (unsigned e = blockIdx.x; e < total;) {
        if (threadIdx.x == 0) s_next = gridDim.x + atomicAdd(next, 1u);
        const ws_bucket b = list[e];
        ws_rx_sort_job<KB, V, STABLE, false, THREADS>(s, b.in_tmp ? tmp_keys : keys,
                                                      b.in_tmp ? tmp_vals : vals, keys, vals,
                                                      b.begin, (int)b.size, codec, codec, 0);
        __syncthreads(); /* s_next is written */
        e = s_next;
        __syncthreads(); /* every thread read it before thread 0 writes the next */
    }
#endif
}

#endif /* WARPSORT_CUDA_RADIX_TILE_CUH */
