/*
 * cluster_merge.cuh - two sorted runs in the shared memory of a cluster's
 * two blocks (Hopper's distributed shared memory) merged into global
 * memory: the step that makes two radix blocks (radix_tile.cuh) sort a
 * segment of up to twice their length with one read and one write of it,
 * where the long segments' path stores its runs, finds cuts and merges
 * them in two more launches.
 *
 * Block r of the pair holds run r in its tile (ordered bits, and values);
 * block r writes outputs [r na, r na + its run's length) of the merge
 * (na: run 0's length), each thread ITEMS consecutive ones found by a
 * merge-path search over both runs, equal keys from run 0 first. The
 * outputs go through registers back into the block's own tile, once both
 * blocks have read what they need, and out in coalesced rows. 4-byte
 * keys, alone or with 4-byte values: the other run's keys must fit the
 * block's idle counters.
 */
#ifndef WARPSORT_CUDA_CLUSTER_MERGE_CUH
#define WARPSORT_CUDA_CLUSTER_MERGE_CUH

#include <stdint.h>

#include "radix_tile.cuh"

/* A barrier of the cluster, whose release and acquire make every block's
 * shared-memory stores before it visible to every block's loads after it.
 * Every thread of every block calls it, converged. */
__device__ __forceinline__ void ws_cl_sync() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("barrier.cluster.arrive.release.aligned;\n\t"
                 "barrier.cluster.wait.acquire.aligned;" ::
                     : "memory");
#endif
}
/* The block's rank in its cluster. */
__device__ __forceinline__ int ws_cl_rank() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    return (int)__clusterRelativeBlockRank();
#else
    return 0;
#endif
}
/* The shared::cluster address of the object at p in block r's shared
 * memory, and a load from there: explicit, so that the block's own items
 * keep their plain shared-memory loads beside them (a generic pointer to
 * either made every access a generic one). */
__device__ __forceinline__ unsigned ws_cl_addr(const void *p, int r) {
    unsigned a = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm("mapa.shared::cluster.u32 %0, %1, %2;"
        : "=r"(a)
        : "r"((unsigned)__cvta_generic_to_shared(p)), "r"(r));
#else
    (void)p, (void)r;
#endif
    return a;
}
template <typename T>
__device__ __forceinline__ T ws_cl_ld(unsigned a) {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "4- or 8-byte words");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if constexpr (sizeof(T) == 4) {
        unsigned v;
        asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(v) : "r"(a) : "memory");
        return (T)v;
    } else {
        unsigned long long v;
        asm volatile("ld.shared::cluster.u64 %0, [%1];" : "=l"(v) : "r"(a) : "memory");
        return (T)v;
    }
#else
    (void)a;
    return T(0);
#endif
}

/* Where output p of a block's share is staged in its tile: the threads'
 * runs of WS_RX_ITEMS (16), stored in step, then fall on 32 banks, and a
 * warp's 32 consecutive outputs stay in one row of them for the
 * coalesced store. */
__device__ __forceinline__ int ws_cl_slot(int p) { return p ^ ((p >> 5) & 15); }

/* Merges the pair's runs (run 0: na keys in block 0's s, run 1: nb in
 * block 1's, with their values) into dst[begin..] (values into
 * vdst[begin..]), keys decoded by `out`; block r writes its run's share
 * of the outputs. The other block's keys are first copied whole into
 * this block's s.peers, which holds exactly a tile of 4-byte keys and is
 * idle between sorts (zeroed again here for the next one), so the
 * merge's searches and steps wait on this SM's shared memory, not on the
 * other's (read there, item by item, they took as long as the sorts:
 * bench/NOTES.md, thirty-ninth session). Values have no such room: each
 * output taken from the other run loads its value from the other block,
 * once its key is known, with nothing waiting on the load until the
 * outputs are staged. Every thread of both blocks calls it after its
 * ws_rx_sort_job with no dst; then the next job may reuse s. */
template <typename KB, typename V, int THREADS, bool PACK>
__device__ __forceinline__ void ws_cl_merge_pair(ws_rx_smem<KB, V, THREADS, PACK> &s, int na,
                                                 int nb, KB *dst, V *vdst, unsigned long long begin,
                                                 key_codec out) {
    constexpr int ITEMS = WS_RX_ITEMS, N = THREADS * ITEMS;
    constexpr bool VALS = is_value<V>::value;
    static_assert(sizeof(KB) == 4 && sizeof(s.peers) == N * sizeof(KB),
                  "4-byte keys: the other run's keys fit s.peers");
    const int t = (int)threadIdx.x, r = ws_cl_rank();
    const int mine = r == 0 ? na : nb, theirs = r == 0 ? nb : na;
    KB *other = (KB *)&s.peers[0][0];
    ws_cl_sync(); /* both runs are in place */
    const unsigned far = ws_cl_addr(&s.keys[0], r ^ 1);
#pragma unroll
    for (int q = 0; q < ITEMS; q++) {
        const int p = q * THREADS + t;
        if (p < theirs) other[p] = ws_cl_ld<KB>(far + (unsigned)p * (unsigned)sizeof(KB));
    }
    ws_cl_sync(); /* both copies are done: keys alone may overwrite their own run */
    const KB *ra = r == 0 ? s.keys : other, *rb = r == 0 ? other : s.keys;
    KB k[ITEMS];
    typename std::conditional<VALS, V, uint32_t>::type v[VALS ? ITEMS : 1];
    const int o0 = t * ITEMS; /* the thread's first output, in the block's share */
    if (o0 < mine) {
        /* merge path: i items of run 0 and o - i of run 1 come first */
        const int o = r * na + o0;
        int lo = o > nb ? o - nb : 0, hi = o < na ? o : na;
        while (lo < hi) {
            const int mid = (lo + hi) / 2;
            if (ra[mid] <= rb[o - 1 - mid]) /* equal keys: run 0's first */
                lo = mid + 1;
            else
                hi = mid;
        }
        int i = lo, j = o - lo;
        const unsigned farv = VALS ? ws_cl_addr(&s.vals[0], r ^ 1) : 0u;
#pragma unroll
        for (int q = 0; q < ITEMS; q++) {
            const KB a = i < na ? ra[i] : KB(0), b = j < nb ? rb[j] : KB(0);
            const bool take_a = j >= nb || (i < na && a <= b);
            k[q] = take_a ? a : b;
            if constexpr (VALS) {
                const int at = take_a ? i : j;
                if (o0 + q >= mine) /* past the block's share: nothing to load */
                    v[q] = 0;
                else if (take_a == (r == 0)) /* this block's run */
                    v[q] = s.vals[at];
                else
                    v[q] = ws_cl_ld<V>(farv + (unsigned)at * (unsigned)sizeof(V));
            }
            i += take_a, j += !take_a;
        }
    }
    /* every thread has read both runs (with values: in both blocks, whose
     * values the other may still be loading) */
    if constexpr (VALS) {
        ws_cl_sync();
    } else {
        __syncthreads();
    }
    static_assert(ITEMS == 16, "ws_cl_slot spreads runs of 16 outputs");
#pragma unroll
    for (int q = 0; q < ITEMS; q++) {
        const int p = o0 + q;
        if (p < mine) {
            s.keys[ws_cl_slot(p)] = k[q];
            if constexpr (VALS) s.vals[ws_cl_slot(p)] = v[q];
        }
    }
    for (int j = t; j < N; j += THREADS) other[j] = 0; /* s.peers: zero between sorts */
    __syncthreads();
    const unsigned long long at = begin + (unsigned long long)r * (unsigned)na;
#pragma unroll
    for (int q = 0; q < ITEMS; q++) {
        const int p = q * THREADS + t;
        if (p < mine) {
            dst[at + p] = decode(s.keys[ws_cl_slot(p)], out);
            if constexpr (VALS) vdst[at + p] = s.vals[ws_cl_slot(p)];
        }
    }
}

#endif /* WARPSORT_CUDA_CLUSTER_MERGE_CUH */
