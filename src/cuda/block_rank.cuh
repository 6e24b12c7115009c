/*
 * block_rank.cuh - block-wide exclusive sums and the stable warp ranking by
 * bucket that the distribution's scatter (distribute.cuh) and the radix
 * bucket sort (radix_tile.cuh) share.
 */
#ifndef WARPSORT_CUDA_BLOCK_RANK_CUH
#define WARPSORT_CUDA_BLOCK_RANK_CUH

/* The bucket of an item that takes no part (past the valid items). */
#define WS_NO_BUCKET 0xFFFFFFFFu

/* Exclusive prefix sum of one value per thread across the block; *total
 * gets the sum. Every thread of the block calls it; it synchronises.
 * REUSE = false leaves out the closing barrier, for a caller that passes
 * another barrier before it writes warp_sums again. */
template <typename T, int THREADS, bool REUSE = true>
__device__ __forceinline__ T ws_block_exclusive_sum(T x, T *warp_sums, T *total) {
    const int lane = (int)threadIdx.x & 31, warp = (int)threadIdx.x >> 5;
    T inc = x;
#pragma unroll
    for (int d = 1; d < 32; d *= 2) {
        const T y = __shfl_up_sync(0xFFFFFFFFu, inc, d);
        if (lane >= d) inc += y;
    }
    if (lane == 31) warp_sums[warp] = inc;
    __syncthreads();
    T before = 0, all = 0;
#pragma unroll
    for (int w = 0; w < THREADS / 32; w++) {
        const T s = warp_sums[w];
        before += w < warp ? s : T(0);
        all += s;
    }
    if (REUSE) __syncthreads(); /* warp_sums may be reused right after */
    *total = all;
    return before + inc - x;
}

/* Ranks one warp's keys by bucket, in (item, lane) order: rank[i] is the
 * number of earlier keys of the same bucket counted in hist (this warp's
 * counters), which is advanced. Invalid items carry WS_NO_BUCKET. The lanes
 * sharing a bucket find each other by OR-ing their bit into that bucket's
 * word of peers (zero between calls): two shared-memory atomics per key,
 * much cheaper than __match_any_sync. All 32 lanes call it. */
template <int ITEMS>
__device__ __forceinline__ void ws_warp_rank(const unsigned (&bkt)[ITEMS], unsigned (&rank)[ITEMS],
                                             unsigned *hist, unsigned *peers_of) {
    const unsigned lane = threadIdx.x & 31u;
    const unsigned below = (1u << lane) - 1u;
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const bool valid = bkt[i] != WS_NO_BUCKET;
        if (valid) atomicOr(&peers_of[bkt[i]], 1u << lane);
        __syncwarp();
        const unsigned peers = valid ? peers_of[bkt[i]] : 0u;
        const unsigned base = valid ? hist[bkt[i]] : 0u;
        __syncwarp();
        if (valid && (peers & below) == 0) { /* the first lane of its bucket */
            hist[bkt[i]] = base + __popc(peers);
            peers_of[bkt[i]] = 0u;
        }
        __syncwarp();
        rank[i] = base + (unsigned)__popc(peers & below);
    }
}

#endif /* WARPSORT_CUDA_BLOCK_RANK_CUH */
