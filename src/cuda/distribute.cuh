/*
 * distribute.cuh - one level of the sample sort: splitters, classify, rank,
 * scatter (plan.cuh says how levels chain).
 *
 * A level cuts every segment of its input into buckets by the segment's own
 * splitters, in five launches that never wait on the host:
 *   1. ws_dist_sample: one block per segment sorts a stratified random
 *      sample of 4096 or 8192 keys on chip and keeps up to 255 or 1023
 *      distinct splitters (the plan's tree, plan.cuh), in order (each block
 *      of the level builds its lookup from them). A sample that repeats a
 *      splitter switches the segment to equality buckets: keys equal to a
 *      splitter get a bucket of their own, which is done at once (few
 *      distinct keys finish early).
 *   2. ws_dist_count: each block walks its chunk of a segment and counts its
 *      keys per bucket (a cell table over the splitters' range; the tree's
 *      descent where a cell is crowded, ws_classify).
 *   3. ws_scan_counts: one exclusive scan over all counts, laid out
 *      bucket-major within a segment, gives every (bucket, block) its
 *      output offset.
 *   4. ws_dist_scatter: each block walks its chunk again, ranks every tile's
 *      keys by bucket in input order (warp match + per-warp counters, so the
 *      level is stable), regroups the tile by bucket in shared memory and
 *      writes each bucket's run contiguously.
 *   5. ws_dist_finalize: each bucket becomes a segment of the next level (too
 *      big for the on-chip sort), a bucket-sort job of its size class, a
 *      copy job (equality buckets, single keys), or, after the last level, a
 *      fallback job.
 * Grids are sized for the worst case the plan allows; blocks past the counts
 * the previous launch wrote return at once.
 */
#ifndef WARPSORT_CUDA_DISTRIBUTE_CUH
#define WARPSORT_CUDA_DISTRIBUTE_CUH

#include "plan.cuh"
#include "block_rank.cuh"
#include "pdl.cuh"
#include "tile_sort.cuh" /* the on-chip sort and the device API names */

/* A shared-memory load the compiler may schedule freely: the tables it
 * reads are written once, before the barrier every caller's addresses
 * depend on. */
template <typename KB>
__device__ __forceinline__ KB ws_lds(unsigned addr) {
    static_assert(sizeof(KB) == 2 || sizeof(KB) == 4 || sizeof(KB) == 8,
                  "2-byte cells, 4- or 8-byte ordered keys");
    if constexpr (sizeof(KB) == 2) {
        unsigned short v;
        asm("ld.shared.u16 %0, [%1];" : "=h"(v) : "r"(addr));
        return (KB)v;
    } else if constexpr (sizeof(KB) == 4) {
        unsigned v;
        asm("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(addr));
        return (KB)v;
    } else {
        unsigned long long v;
        asm("ld.shared.u64 %0, [%1];" : "=l"(v) : "r"(addr));
        return (KB)v;
    }
}

/* A segment's splitters as a block looks them up (ws_dist_prologue builds
 * this in shared memory) for a tree of 2^TL slots: the heap-ordered tree,
 * the same splitters in order, and a table of 8 x 2^TL equal cells over
 * [lo, hi], the smallest and largest splitter. cell[c] holds how many
 * splitters lie below cell c (low WS_CELL_BELOW_BITS bits) and how many
 * inside it (the bits above, saturating). A key whose cell holds at most one
 * splitter is classified by one table load and one compare; only a warp
 * with a key in a crowded cell (skewed keys) descends the tree, TL dependent
 * loads. With 8 cells a splitter, random keys never do. */
#define WS_CELL_BELOW_BITS 11
#define WS_CELL_IN_MAX ((1u << (16 - WS_CELL_BELOW_BITS)) - 1u)
template <int TL>
__host__ __device__ constexpr int ws_cell_log() {
    return TL + 3;
}
template <typename KB, int TL>
struct ws_lookup_smem {
    static_assert(TL < WS_CELL_BELOW_BITS, "splitter counts fit a cell's low bits");
    KB tree[1 << TL];   /* slot k has children 2k, 2k + 1; slot 0 unused */
    KB sorted[1 << TL]; /* from m on, the largest again */
    unsigned short cell[1 << ws_cell_log<TL>()];
};
/* ... and, in registers, where it is and how keys map to cells. */
template <typename KB>
struct ws_lookup {
    unsigned tree, sorted, cell; /* shared-window addresses */
    KB lo, hi;
    unsigned shift; /* cell of a key in [lo, hi]: (key - lo) >> shift */
};
/* Cell of a key x in [lo, hi] (below the table's cell count). */
template <typename KB>
__device__ __forceinline__ unsigned ws_cell_of(const ws_lookup<KB> &lk, KB x) {
    return (unsigned)((x - lk.lo) >> lk.shift);
}

/* Splitters of the m in order whose cell is below c. */
template <typename KB>
__device__ __forceinline__ unsigned ws_splitters_below_cell(const KB *sorted, unsigned m,
                                                            const ws_lookup<KB> &lk, unsigned c) {
    unsigned a = 0, b = m;
    while (a < b) {
        const unsigned mid = (a + b) / 2;
        if (ws_cell_of(lk, sorted[mid]) < c)
            a = mid + 1;
        else
            b = mid;
    }
    return a;
}

/* Loads segment seg's splitters (m distinct, in order, ws_dist_sample) into
 * lk, builds their tree, zeroes `words` words from `zero` on, and builds
 * the cell table. Every thread calls it; it synchronises once, and the
 * caller's next barrier publishes the table. */
template <typename KB, int TL, int THREADS>
__device__ __forceinline__ ws_lookup<KB> ws_dist_prologue(ws_lookup_smem<KB, TL> &lk,
                                                          const KB *splits, unsigned seg,
                                                          unsigned m, unsigned *zero, int words) {
    constexpr int SLOTS = 1 << TL;
    const KB *g = splits + (size_t)seg * SLOTS;
    for (int k = (int)threadIdx.x; k < SLOTS; k += THREADS) {
        lk.sorted[k] = g[k];
        /* Heap slot k at depth d, position p in its row, holds the splitter
         * of in-order position (2p + 1) << (TL - 1 - d); slot 0 is unused. */
        int pos = 1;
        if (k > 0) {
            const int d = 31 - __clz(k);
            pos = (2 * (k - (1 << d)) + 1) << (TL - 1 - d);
        }
        lk.tree[k] = g[pos - 1];
    }
    for (int j = (int)threadIdx.x; j < words; j += THREADS) zero[j] = 0;
    __syncthreads();
    ws_lookup<KB> r;
    r.tree = (unsigned)__cvta_generic_to_shared(lk.tree);
    r.sorted = (unsigned)__cvta_generic_to_shared(lk.sorted);
    r.cell = (unsigned)__cvta_generic_to_shared(lk.cell);
    r.lo = lk.sorted[0];
    r.hi = lk.sorted[m - 1];
    const KB range = r.hi - r.lo;
    int bits = 0;
    if constexpr (sizeof(KB) == 4)
        bits = 32 - __clz((int)range);
    else
        bits = 64 - __clzll((long long)range);
    /* 8 cells a splitter, for the m this segment has: a block builds and
     * clears no more table than its keys use. */
    const int cell_log = min(ws_cell_log<TL>(), 35 - __clz((int)m));
    r.shift = bits > cell_log ? (unsigned)(bits - cell_log) : 0u;
    /* Each thread its run of cells: one search, then a walk over the
     * splitters inside them (a crowded run walks up to m, once per block). */
    const int cells = 1 << cell_log;
    const int run = cells > THREADS ? cells / THREADS : 1;
    const unsigned c0 = threadIdx.x * (unsigned)run;
    if (c0 >= (unsigned)cells) return r;
    unsigned below = ws_splitters_below_cell(lk.sorted, m, r, c0);
#pragma unroll 1
    for (int q = 0; q < run; q++) {
        unsigned upto = below;
        while (upto < m && ws_cell_of(r, lk.sorted[upto]) <= c0 + q) upto++;
        const unsigned in = upto - below < WS_CELL_IN_MAX ? upto - below : WS_CELL_IN_MAX;
        lk.cell[c0 + q] = (unsigned short)(below | in << WS_CELL_BELOW_BITS);
        below = upto;
    }
    return r;
}

/* Buckets of G ordered keys: j = number of splitters below the key (of the
 * m distinct ones). The cell table gives j directly unless a key of the
 * warp falls in a crowded cell; then the warp descends the heap-ordered
 * tree of 2^TL slots (slot k has children 2k, 2k+1) for all G keys, a step
 * per level walking byte addresses (a -> 2a - base + size x went right),
 * the keys' descents interleaved so their loads overlap. All 32 lanes call
 * it. */
template <typename KB, int TL, int G>
__device__ __forceinline__ void ws_classify_group(const ws_lookup<KB> &lk, const KB *key,
                                                  unsigned m, unsigned *bkt) {
    constexpr unsigned S = (unsigned)sizeof(KB);
    constexpr unsigned BELOW = (1u << WS_CELL_BELOW_BITS) - 1u;
    unsigned lh[G];
    bool crowded = false;
#pragma unroll
    for (int i = 0; i < G; i++) {
        const KB kc = key[i] < lk.lo ? lk.lo : key[i] > lk.hi ? lk.hi : key[i];
        lh[i] = ws_lds<unsigned short>(lk.cell + 2u * ws_cell_of(lk, kc));
        crowded |= lh[i] > (BELOW | 1u << WS_CELL_BELOW_BITS);
    }
    if (__any_sync(0xFFFFFFFFu, crowded)) {
        const unsigned lo = 0u - lk.tree, hi = S - lk.tree;
        unsigned a[G];
#pragma unroll
        for (int i = 0; i < G; i++) a[i] = lk.tree + S;
#pragma unroll
        for (int d = 0; d < TL; d++) {
#pragma unroll
            for (int i = 0; i < G; i++) a[i] = 2u * a[i] + (ws_lds<KB>(a[i]) < key[i] ? hi : lo);
        }
#pragma unroll
        for (int i = 0; i < G; i++) {
            const unsigned j = (a[i] - lk.tree) / S - (1u << TL);
            bkt[i] = j < m ? j : m;
        }
    } else {
#pragma unroll
        for (int i = 0; i < G; i++) {
            /* Only a cell holding a splitter needs it (about one key in
             * eight): the others' lanes stay out of the load and its bank
             * conflicts. */
            const unsigned below = lh[i] & BELOW, in = lh[i] >> WS_CELL_BELOW_BITS;
            const KB s = in != 0 ? ws_lds<KB>(lk.sorted + S * below) : KB(0);
            bkt[i] = below + (in != 0 && s < key[i] ? 1u : 0u);
        }
    }
}

/* Buckets of ITEMS ordered keys, four at a time (ws_classify_group). With
 * equality buckets, range bucket j becomes 2j and a key equal to splitter
 * j goes to 2j + 1. All 32 lanes call it. */
template <typename KB, int TL, int ITEMS>
__device__ __forceinline__ void ws_classify(const ws_lookup<KB> &lk, const KB (&key)[ITEMS],
                                            unsigned m, bool eq, unsigned (&bkt)[ITEMS]) {
    constexpr int G = ITEMS < 4 ? ITEMS : 4;
    static_assert(ITEMS % G == 0, "whole groups");
#pragma unroll
    for (int g = 0; g < ITEMS; g += G) ws_classify_group<KB, TL, G>(lk, key + g, m, bkt + g);
    if (eq) {
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            const unsigned j = bkt[i]; /* <= m < 2^TL: a slot of sorted */
            bkt[i] =
                2 * j +
                ((j < m && ws_lds<KB>(lk.sorted + (unsigned)sizeof(KB) * j) == key[i]) ? 1u : 0u);
        }
    }
}

/* Counts one warp's keys per bucket into hist (the block's counters). A
 * warp whose keys all share one bucket (sorted runs, heavy keys) adds them
 * at once instead of colliding 32 times on one counter. */
template <int ITEMS>
__device__ __forceinline__ void ws_warp_count(const unsigned (&bkt)[ITEMS], unsigned *hist) {
    const unsigned lane = threadIdx.x & 31u;
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const unsigned b0 = __shfl_sync(0xFFFFFFFFu, bkt[i], 0);
        if (__all_sync(0xFFFFFFFFu, bkt[i] == b0)) {
            if (lane == 0 && b0 != WS_NO_BUCKET) atomicAdd(&hist[b0], 32u);
        } else if (bkt[i] != WS_NO_BUCKET) {
            atomicAdd(&hist[bkt[i]], 1u);
        }
    }
}

/* Ranks a warp's keys by bucket in any order (unstable sorts): one atomic
 * per key on the block's counters, or one per warp when its keys share a
 * bucket. rank[i] counts the block's earlier-ranked keys of that bucket.
 * The warp first finds which items are shared, then issues every item's
 * atomic, then spreads the shared ones' bases: an item's base waits on
 * its atomic, and waiting item by item held a warp whose keys share their
 * buckets (sorted runs) behind one atomic's latency after another
 * (bench/NOTES.md, forty-third session). */
template <int ITEMS>
__device__ __forceinline__ void ws_block_rank_any(const unsigned (&bkt)[ITEMS],
                                                  unsigned (&rank)[ITEMS], unsigned *hist) {
    static_assert(ITEMS <= 32, "one bit an item");
    const unsigned lane = threadIdx.x & 31u;
    unsigned shared = 0; /* warp-uniform: bit i when item i is one bucket */
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const unsigned b0 = __shfl_sync(0xFFFFFFFFu, bkt[i], 0);
        shared |= __all_sync(0xFFFFFFFFu, bkt[i] == b0) ? 1u << i : 0u;
    }
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const bool valid = bkt[i] != WS_NO_BUCKET;
        if (shared >> i & 1u)
            rank[i] = lane == 0 && valid ? atomicAdd(&hist[bkt[i]], 32u) : 0u;
        else
            rank[i] = valid ? atomicAdd(&hist[bkt[i]], 1u) : 0u;
    }
#pragma unroll
    for (int i = 0; i < ITEMS; i++)
        if (shared >> i & 1u) rank[i] = __shfl_sync(0xFFFFFFFFu, rank[i], 0) + lane;
}

/*--- 1. splitters ---*/

__device__ __forceinline__ unsigned long long ws_hash64(unsigned long long x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Consecutive keys a sample draws at one random place of a stratum: half
 * a sector of 4-byte keys, one of 8-byte keys. Sorted input gives a run of
 * nearly one key, so the sample holds S / RUN distinct places; with runs
 * of 8 the buckets of sorted, reversed and skewed input came out uneven
 * enough to crowd the larger bucket classes (bench/NOTES.md, forty-third
 * session). */
#ifndef WS_SAMPLE_RUN
#define WS_SAMPLE_RUN 4
#endif

/* Shared memory of a sample block (dynamic: 8192 8-byte keys are more than
 * a static array may hold). */
template <typename KB, int TL, int SAMPLE_THREADS, int SAMPLE_ITEMS = WS_SAMPLE_ITEMS>
struct ws_sample_smem {
    static constexpr int THREADS = SAMPLE_THREADS, S = THREADS * SAMPLE_ITEMS;
    KB keys[smem_slots<KB>(S)];
    KB split[1 << TL];
    unsigned warp_sums[THREADS / 32];
};

template <typename KB, int TL, int SAMPLE_THREADS, int SAMPLE_ITEMS = WS_SAMPLE_ITEMS>
__global__ void __launch_bounds__(SAMPLE_THREADS)
    ws_dist_sample(const KB *src, int raw, key_codec codec, ws_dist_seg *segs,
                   const ws_level_ctl *ctl, KB *splits, unsigned want) {
#if WS_SAMPLE_ARCH
    ws_pdl_chain(); /* pdl.cuh */
    using SM = ws_sample_smem<KB, TL, SAMPLE_THREADS, SAMPLE_ITEMS>;
    constexpr int THREADS = SM::THREADS, ITEMS = SAMPLE_ITEMS, S = SM::S, SLOTS = 1 << TL;
    /* Candidates per thread: want < SLOTS of them. */
    constexpr int CANDS = SLOTS > THREADS ? SLOTS / THREADS : 1;
    static_assert((unsigned long long)SLOTS * S < (1ull << 32), "candidate ranks in 32 bits");
    extern __shared__ __align__(16) unsigned char ws_dist_raw[];
    SM &sm_ = *(SM *)ws_dist_raw;
    KB *skeys = sm_.keys;
    const unsigned seg = blockIdx.x;
    if (seg >= ctl->segs) return;
    const ws_dist_seg sg = segs[seg];
    const int t = (int)threadIdx.x;

    /* Stratified: the sample is S / RUN runs of RUN consecutive keys, run
     * g from a random place in the g-th of S / RUN equal strata, so no
     * region goes unsampled. A run reads one or two sectors where as many
     * keys drawn apart read one each: the next level's samples (hundreds
     * of blocks at once) were bound by DRAM's random reads (WS_SAMPLE_RUN).
     * The place inside a stratum is the high half of hash x width, not a
     * 64-bit remainder: that is a called routine, and a call waits for
     * every load in flight (bench/NOTES.md, forty-first session). */
    constexpr int RUN = WS_SAMPLE_RUN, NG = S / RUN;
    static_assert(S % RUN == 0, "whole runs");
    const unsigned long long q = sg.size / NG, r = sg.size % NG;
    KB kr[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const unsigned s = (unsigned)(i * THREADS + t), g = s / RUN, e = s % RUN;
        const unsigned long long lo = q * g + r * g / NG, hi = q * (g + 1) + r * (g + 1) / NG;
        const unsigned long long w = hi - lo; /* zero only when size < S / RUN */
        const unsigned long long h = ws_hash64(sg.begin * 0x100000001B3ull + g);
        const unsigned long long at = w > RUN ? lo + __umul64hi(h, w - RUN + 1) : lo;
        kr[i] = src[sg.begin + at + (e < w ? e : w > 0 ? w - 1 : 0)];
    }
#pragma unroll
    for (int i = 0; i < ITEMS; i++)
        smem_put(skeys, i * THREADS + t, raw ? encode(kr[i], codec) : kr[i]);
    __syncthreads();
    warp_items<KB, no_value, no_value, ITEMS> it;
    const int first = t * ITEMS;
#pragma unroll
    for (int i = 0; i < ITEMS; i++) it.k[i] = smem_get(skeys, first + i);
    tile_smem<KB, no_value> sm = {skeys, nullptr};
    block_sort_tile<32 * ITEMS, KB, no_value, no_value, THREADS, ITEMS>(it, sm, S);
#pragma unroll
    for (int i = 0; i < ITEMS; i++) smem_put(skeys, first + i, it.k[i]);
    __syncthreads();

    /* Splitter candidates at even ranks, CANDS consecutive ones a thread;
     * keep the distinct ones, in order. */
    bool keep[CANDS];
    KB cand[CANDS];
    unsigned kept = 0;
#pragma unroll
    for (int c = 0; c < CANDS; c++) {
        const unsigned u = (unsigned)(t * CANDS + c);
        keep[c] = false;
        cand[c] = 0;
        if (u < want) { /* 32-bit division: (want + 1) x S < 2^32 */
            cand[c] = smem_get(skeys, (int)((u + 1) * (unsigned)S / (want + 1)));
            keep[c] = u == 0 || cand[c] != smem_get(skeys, (int)(u * (unsigned)S / (want + 1)));
        }
        kept += keep[c] ? 1u : 0u;
    }
    unsigned m = 0;
    unsigned at = ws_block_exclusive_sum<unsigned, THREADS>(kept, sm_.warp_sums, &m);
#pragma unroll
    for (int c = 0; c < CANDS; c++)
        if (keep[c]) sm_.split[at++] = cand[c];
    __syncthreads();
    /* All SLOTS slots, the ones from m on repeating the largest. */
    KB *out = splits + (size_t)seg * SLOTS;
    for (int k = t; k < SLOTS; k += THREADS) out[k] = sm_.split[k < (int)m ? k : (int)m - 1];
    if (t == 0) {
        segs[seg].m = m;
        segs[seg].eq = m < want;
    }
#endif
}

/*--- 2. and 4. count and scatter ---*/

/* Shared memory of a count block ... */
template <typename KB, int ITEMS, int TL>
struct ws_count_smem {
    static constexpr int WARPS = WS_DIST_THREADS / 32;
    static constexpr int TILE = WS_DIST_THREADS * ITEMS;
    ws_lookup_smem<KB, TL> look;
    unsigned hist[ws_max_buckets(TL)]; /* the block's counters */
};
/* ... and of a scatter block. A stable level ranks per warp (counters and
 * lane masks per warp, in input order); an unstable one ranks with atomics
 * on one set of block counters, in a quarter of the shared memory. A
 * bucket's next output index is not kept: each tile recomputes it from the
 * previous tile's delta and slots (ws_dist_scatter). */
template <typename KB, typename V, int ITEMS, bool STABLE, int THREADS, int TL>
struct ws_dist_smem {
    static constexpr int WARPS = THREADS / 32;
    static constexpr int TILE = THREADS * ITEMS;
    static constexpr int HISTS = STABLE ? WARPS : 1;
    static constexpr int NB = ws_max_buckets(TL);
    ws_lookup_smem<KB, TL> look;
    unsigned hist[HISTS][NB];               /* counters, then offsets inside the run */
    unsigned peers[HISTS][STABLE ? NB : 1]; /* ws_warp_rank's lane masks */
    unsigned tile_start[NB];                /* bucket's first slot in the regrouped tile */
    unsigned long long delta[NB];           /* output index of slot e of bucket j: delta[j] + e */
    unsigned long long warp_sums[WARPS];
    unsigned short bkt[TILE];
    KB keys[TILE];
    typename std::conditional<is_value<V>::value, V, char>::type
        vals[is_value<V>::value ? TILE : 1];
};

/* The block's segment and chunk; false when the block has no work. */
struct ws_dist_work {
    unsigned seg, local;
    unsigned long long start, end;
};
__device__ __forceinline__ bool ws_dist_block(const ws_dist_seg *segs, const unsigned *blockseg,
                                              const ws_level_ctl *ctl, unsigned chunk,
                                              ws_dist_seg &sg, ws_dist_work &w) {
    const unsigned blk = blockIdx.x;
    if (blk >= ctl->blocks) return false;
    w.seg = blockseg ? blockseg[blk] : 0u;
    sg = segs[w.seg];
    w.local = blk - sg.first_block;
    w.start = sg.begin + (unsigned long long)w.local * chunk;
    const unsigned long long stop = sg.begin + sg.size;
    w.end = w.start + chunk < stop ? w.start + chunk : stop;
    return true;
}

/* Loads a tile's items warp-blocked (warp w owns items [w*32*ITEMS, ...),
 * lane l item i at w*32*ITEMS + i*32 + l); missing keys read as zero. */
template <typename KB, typename V, int ITEMS>
__device__ __forceinline__ void ws_dist_fetch(const KB *src, const V *vsrc, unsigned long long base,
                                              int valid, KB (&k)[ITEMS], V (&v)[ITEMS]) {
    const int lane = (int)threadIdx.x & 31, warp = (int)threadIdx.x >> 5;
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const int e = warp * 32 * ITEMS + i * 32 + lane;
        k[i] = e < valid ? src[base + e] : KB(0);
        if constexpr (is_value<V>::value) {
            if (e < valid) v[i] = vsrc[base + e];
        }
    }
}

/* Encodes (raw input) and classifies a fetched tile; missing items get
 * WS_NO_BUCKET. */
template <typename KB, int TL, int ITEMS>
__device__ __forceinline__ void ws_dist_classify_tile(int valid, int raw, key_codec codec,
                                                      const ws_lookup<KB> &lk, unsigned m, bool eq,
                                                      KB (&k)[ITEMS], unsigned (&bkt)[ITEMS]) {
    const int lane = (int)threadIdx.x & 31, warp = (int)threadIdx.x >> 5;
#pragma unroll
    for (int i = 0; i < ITEMS; i++)
        if (raw) k[i] = encode(k[i], codec);
    ws_classify<KB, TL, ITEMS>(lk, k, m, eq, bkt);
#pragma unroll
    for (int i = 0; i < ITEMS; i++)
        if (warp * 32 * ITEMS + i * 32 + lane >= valid) bkt[i] = WS_NO_BUCKET;
}

/* Items of the tile at base in a block's chunk [.., end). */
template <int TILE>
__device__ __forceinline__ int ws_tile_valid(unsigned long long base, unsigned long long end) {
    return end - base < (unsigned long long)TILE ? (int)(end - base) : TILE;
}

template <typename KB, int ITEMS, int TL>
__global__ void __launch_bounds__(WS_DIST_THREADS)
    ws_dist_count(const KB *src, int raw, key_codec codec, const ws_dist_seg *segs,
                  const unsigned *blockseg, const ws_level_ctl *ctl, const KB *splits,
                  unsigned chunk, unsigned long long *cnt, unsigned long long *scan_tiles,
                  unsigned scan_tile_count) {
#if WS_SAMPLE_ARCH
    ws_pdl_chain(); /* pdl.cuh */
    using SM = ws_count_smem<KB, ITEMS, TL>;
    extern __shared__ __align__(16) unsigned char ws_dist_raw[];
    SM &s = *(SM *)ws_dist_raw;
    /* The level's scan starts from cleared tile words (ws_scan_counts). */
    for (unsigned i = blockIdx.x * WS_DIST_THREADS + threadIdx.x; i < scan_tile_count;
         i += gridDim.x * WS_DIST_THREADS)
        scan_tiles[i] = 0ull;
    ws_dist_seg sg;
    ws_dist_work w;
    if (!ws_dist_block(segs, blockseg, ctl, chunk, sg, w)) return;
    const ws_lookup<KB> lk = ws_dist_prologue<KB, TL, WS_DIST_THREADS>(s.look, splits, w.seg, sg.m,
                                                                       s.hist, ws_max_buckets(TL));
    __syncthreads();
    unsigned *hist = s.hist;
    for (unsigned long long base = w.start; base < w.end; base += SM::TILE) {
        const int valid = ws_tile_valid<SM::TILE>(base, w.end);
        KB k[ITEMS];
        no_value v[ITEMS];
        unsigned bkt[ITEMS];
        ws_dist_fetch<KB, no_value, ITEMS>(src, nullptr, base, valid, k, v);
        ws_dist_classify_tile<KB, TL, ITEMS>(valid, raw, codec, lk, sg.m, sg.eq != 0, k, bkt);
        ws_warp_count<ITEMS>(bkt, hist);
    }
    __syncthreads();
    const int nb = (int)ctl->nbuckets;
    for (int j = (int)threadIdx.x; j < nb; j += WS_DIST_THREADS)
        cnt[sg.cnt_base + (unsigned long long)j * sg.nblocks + w.local] = s.hist[j];
#endif
}

template <typename KB, typename V, int ITEMS, bool STABLE, int THREADS, int TL>
__global__ void
__launch_bounds__(THREADS,
                  ws_scatter_min_blocks(THREADS,
                                        (int)sizeof(KB) + (is_value<V>::value ? (int)sizeof(V) : 0),
                                        STABLE))
    ws_dist_scatter(const KB *src, const V *vsrc, KB *dst, V *vdst, int raw, key_codec codec,
                    const ws_dist_seg *segs, const unsigned *blockseg, const ws_level_ctl *ctl,
                    const KB *splits, unsigned chunk, const unsigned long long *scan) {
#if WS_SAMPLE_ARCH
    ws_pdl_chain(); /* pdl.cuh */
    using SM = ws_dist_smem<KB, V, ITEMS, STABLE, THREADS, TL>;
    constexpr int NB = SM::NB;
    /* Buckets per thread, strided: thread t owns buckets q * THREADS + t, so
     * a level with fewer buckets than NB keeps every thread's share small. */
    constexpr int PER = THREADS < NB ? NB / THREADS : 1;
    static_assert(NB % THREADS == 0 || THREADS % NB == 0, "whole buckets per thread");
    static_assert(PER <= 4 && SM::TILE < 65536, "a tile's counts pack in 16-bit lanes");
    extern __shared__ __align__(16) unsigned char ws_dist_raw[];
    SM &s = *(SM *)ws_dist_raw;
    ws_dist_seg sg;
    ws_dist_work w;
    if (!ws_dist_block(segs, blockseg, ctl, chunk, sg, w)) return;
    /* hist and peers are adjacent: one zeroing covers both. */
    const ws_lookup<KB> lk = ws_dist_prologue<KB, TL, THREADS>(
        s.look, splits, w.seg, sg.m, &s.hist[0][0],
        (int)((sizeof s.hist + sizeof s.peers) / sizeof(unsigned)));
    const int t = (int)threadIdx.x, warp = t >> 5;
    const unsigned long long seg_first = scan[sg.cnt_base];
    const int nb = (int)ctl->nbuckets; /* no key's bucket reaches nb */
    __syncthreads();
    for (unsigned long long base = w.start; base < w.end; base += SM::TILE) {
        const int valid = ws_tile_valid<SM::TILE>(base, w.end);
        KB k[ITEMS];
        V v[ITEMS];
        unsigned bkt[ITEMS], rank[ITEMS];
        ws_dist_fetch<KB, V, ITEMS>(src, vsrc, base, valid, k, v);
        ws_dist_classify_tile<KB, TL, ITEMS>(valid, raw, codec, lk, sg.m, sg.eq != 0, k, bkt);
        if constexpr (STABLE)
            ws_warp_rank<ITEMS>(bkt, rank, s.hist[warp], s.peers[warp]);
        else
            ws_block_rank_any<ITEMS>(bkt, rank, s.hist[0]);
            /* Bucket and rank share a register across the barrier (bucket <
         * NB, rank < TILE <= 65536): fewer registers, more blocks per SM
         * for this barrier-bound loop. */
#pragma unroll
        for (int i = 0; i < ITEMS; i++)
            bkt[i] = bkt[i] == WS_NO_BUCKET ? WS_NO_BUCKET : bkt[i] << 16 | rank[i];
        __syncthreads();
        /* Per bucket: warps' offsets inside the tile's run, the run's slot
         * in the regrouped tile, and where it goes in the output. The
         * counts of a thread's buckets pack into 16-bit lanes of one word
         * (a tile holds fewer than 2^16 items), so one block scan gives
         * each row q of buckets its prefix. delta[j] first takes the
         * bucket's next output index: from the scan at the first tile, then
         * where the previous (full) tile's run of it ended, its delta + the
         * next bucket's slot, read before any thread writes this tile's
         * slots (the block scan passes a barrier first). */
        unsigned long long mine = 0;
#pragma unroll
        for (int q = 0; q < PER; q++) {
            const int j = q * THREADS + t;
            if (j >= nb) continue;
            unsigned run = 0;
#pragma unroll
            for (int wp = 0; wp < SM::HISTS; wp++) {
                const unsigned h = s.hist[wp][j];
                s.hist[wp][j] = run;
                run += h;
            }
            mine |= (unsigned long long)run << (16 * q);
            s.delta[j] =
                base == w.start
                    ? sg.begin + (scan[sg.cnt_base + (unsigned long long)j * sg.nblocks + w.local] -
                                  seg_first)
                    : s.delta[j] + (j + 1 < nb ? s.tile_start[j + 1] : (unsigned)SM::TILE);
        }
        /* warp_sums is next written after this tile's later barriers. */
        unsigned long long all;
        const unsigned long long ex =
            ws_block_exclusive_sum<unsigned long long, THREADS, false>(mine, s.warp_sums, &all);
        unsigned row_base = 0; /* items of the rows before q */
#pragma unroll
        for (int q = 0; q < PER; q++) {
            const int j = q * THREADS + t;
            const unsigned before = row_base + (unsigned)(ex >> (16 * q) & 0xFFFFu);
            row_base += (unsigned)(all >> (16 * q) & 0xFFFFu);
            if (j >= nb) continue;
            s.tile_start[j] = before;
            s.delta[j] -= before;
        }
        __syncthreads();
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            if (bkt[i] != WS_NO_BUCKET) {
                const unsigned b = bkt[i] >> 16;
                /* Unstable: the block's counters were read and zeroed above. */
                const unsigned slot =
                    s.tile_start[b] + (STABLE ? s.hist[warp][b] : 0u) + (bkt[i] & 0xFFFFu);
                s.keys[slot] = k[i];
                s.bkt[slot] = (unsigned short)b;
                if constexpr (is_value<V>::value) s.vals[slot] = v[i];
            }
        }
        __syncthreads();
        /* Consecutive slots of a bucket go to consecutive addresses. */
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            const int e = i * THREADS + t;
            if (e < valid) {
                const unsigned long long o = s.delta[s.bkt[e]] + (unsigned long long)e;
                dst[o] = s.keys[e];
                if constexpr (is_value<V>::value) vdst[o] = s.vals[e];
            }
        }
        if constexpr (STABLE) {
            /* The warps' offsets were read above: zero them for the next
             * tile. An unstable level's counters are zero already (the scan
             * left them so), and the next tile's first barrier orders these
             * reads before its writes. */
            __syncthreads();
            for (int j = t; j < SM::HISTS * NB; j += THREADS) (&s.hist[0][0])[j] = 0;
            __syncthreads();
        }
    }
#endif
}

/*--- 3. exclusive scan of the counts, in place; cnt[N] gets the total ---*/

/* One pass with decoupled look-back: tile b publishes its sum (AGGREGATE)
 * as soon as it has it, then its prefix (PREFIX) once warp 0 has walked
 * back over the tiles before it, 32 at a time, to the nearest one with a
 * prefix. A tile's word is flag << 62 | value (a level's counts stay below
 * 2^62); the words start at zero (ws_dist_count clears them), and tiles
 * wait only on lower-numbered tiles, which were scheduled first. One
 * launch a level, where a reduce, a scan of the partials and an apply took
 * three (bench/NOTES.md, forty-first session). */
#define WS_SCAN_AGGREGATE (1ull << 62)
#define WS_SCAN_PREFIX (2ull << 62)
#define WS_SCAN_VALUE ((1ull << 62) - 1ull)

__global__ void __launch_bounds__(WS_SCAN_THREADS)
    ws_scan_counts(unsigned long long *cnt, const ws_level_ctl *ctl, unsigned long long *tiles) {
#if WS_SAMPLE_ARCH
    ws_pdl_chain(); /* pdl.cuh */
    __shared__ unsigned long long warp_sums[WS_SCAN_THREADS / 32];
    __shared__ unsigned long long s_prefix;
    const unsigned long long n = ctl->cnt_entries;
    const unsigned b = blockIdx.x;
    const unsigned long long first = (unsigned long long)b * WS_SCAN_TILE;
    if (first > n) return; /* tiles past the last entry publish nothing, and none waits on them */
    /* Blocked: thread t scans items t*ITEMS .. t*ITEMS+ITEMS-1. */
    const unsigned long long mine = first + (unsigned long long)threadIdx.x * WS_SCAN_ITEMS;
    unsigned long long x[WS_SCAN_ITEMS], sum = 0;
#pragma unroll
    for (int i = 0; i < WS_SCAN_ITEMS; i++) {
        x[i] = mine + i < n ? cnt[mine + i] : 0ull;
        sum += x[i];
    }
    unsigned long long total;
    unsigned long long run =
        ws_block_exclusive_sum<unsigned long long, WS_SCAN_THREADS>(sum, warp_sums, &total);
    volatile unsigned long long *vt = tiles;
    if (threadIdx.x < 32) {
        const unsigned lane = threadIdx.x;
        unsigned long long prefix = 0;
        if (b == 0) {
            if (lane == 0) vt[0] = WS_SCAN_PREFIX | total;
        } else {
            if (lane == 0) vt[b] = WS_SCAN_AGGREGATE | total;
            /* Walk back: lane i reads tile at - i; a window ends at its
             * nearest tile with a prefix, or takes all 32 and moves on. */
            long long at = (long long)b - 1;
            for (;;) {
                unsigned long long w = 0;
                if (at - (long long)lane >= 0) {
                    do {
                        w = vt[at - lane];
                    } while ((w & ~WS_SCAN_VALUE) == 0);
                }
                const unsigned pm =
                    __ballot_sync(0xFFFFFFFFu, (w & ~WS_SCAN_VALUE) == WS_SCAN_PREFIX);
                const unsigned upto = pm ? (unsigned)__ffs((int)pm) - 1u : 31u;
                unsigned long long v = lane <= upto ? (w & WS_SCAN_VALUE) : 0ull;
#pragma unroll
                for (int d = 16; d > 0; d /= 2) v += __shfl_xor_sync(0xFFFFFFFFu, v, d);
                prefix += v;
                if (pm || at < 32) break; /* tile 0 always has its prefix */
                at -= 32;
            }
            if (lane == 0) vt[b] = WS_SCAN_PREFIX | (prefix + total);
        }
        if (lane == 0) s_prefix = prefix;
    }
    __syncthreads();
    run += s_prefix;
#pragma unroll
    for (int i = 0; i < WS_SCAN_ITEMS; i++) {
        if (mine + i <= n) cnt[mine + i] = run;
        run += x[i];
    }
#endif
}

/*--- 5. bookkeeping: where every bucket of the level goes ---*/

/* Output of a level for the next one and for the bucket sort. */
struct ws_level_out {
    ws_dist_seg *segs; /* next level's segments (null after the last level) */
    unsigned *blockseg;
    ws_level_ctl *ctl;
    unsigned chunk;
    ws_bucket *sort[WS_SORT_CLASSES];
    ws_bucket *copy;
    ws_big_bucket *big;
    ws_final_ctl *fin;
    unsigned class_cap[WS_SORT_CLASSES];
};

/* Appends a sort job (a bucket, or consecutive buckets: their keys are in
 * key order, so sorting their union sorts each) to its size class. */
__device__ __forceinline__ void ws_emit_sort(const ws_level_out &out, unsigned long long begin,
                                             unsigned long long size, unsigned in_tmp) {
    int c = 0;
    while (size > out.class_cap[c]) c++;
    const unsigned at = atomicAdd(&out.fin->sort_count[c], 1u);
    out.sort[c][at] = ws_bucket{begin, (unsigned)size, in_tmp};
}

/* Lanes below lane x (x <= 32) as a mask. */
__device__ __forceinline__ unsigned ws_lanes_below(unsigned x) {
    return x >= 32 ? 0xFFFFFFFFu : (1u << x) - 1u;
}

/* The lowest lane set in m, or 32 when none is. */
__device__ __forceinline__ unsigned ws_first_lane(unsigned m) {
    return m ? (unsigned)__ffs((int)m) - 1u : 32u;
}

/* Appends the job (begin, size) to the list s_begin / s_size of *njobs
 * jobs (lane 0 writes; every lane counts). */
__device__ __forceinline__ void ws_list_job(unsigned long long *s_begin, unsigned *s_size,
                                            unsigned *njobs, unsigned long long begin,
                                            unsigned size) {
    if ((threadIdx.x & 31u) == 0) s_begin[*njobs] = begin, s_size[*njobs] = size;
    (*njobs)++;
}

/* Inclusive sum across the warp. */
template <typename T>
__device__ __forceinline__ T ws_warp_inclusive_sum(T x) {
    const unsigned lane = threadIdx.x & 31u;
#pragma unroll
    for (int d = 1; d < 32; d *= 2) {
        const T y = __shfl_up_sync(0xFFFFFFFFu, x, d);
        if (lane >= (unsigned)d) x += y;
    }
    return x;
}

/* Threads of a bookkeeping block: one block per segment. */
#define WS_FIN_THREADS 256

/* One block per segment. Every warp takes 32 buckets at a time: it reads
 * their sizes, turns the ones the on-chip sort cannot take into copy jobs
 * (equality buckets), next-level segments or, after the last level,
 * sort or fallback jobs, and leaves the rest for warp 0, which packs them
 * greedily, in key order, into jobs of up to class_cap[0] keys (one tile),
 * so tiles run nearly full. One long kernel body on purpose: its phases
 * share the shared-memory bucket table and the barriers between them, which
 * device functions would have to pass around without making it clearer. */
__global__ void __launch_bounds__(WS_FIN_THREADS)
    ws_dist_finalize(const ws_dist_seg *segs, const ws_level_ctl *ctl,
                     const unsigned long long *scan, unsigned in_tmp, ws_level_out out) {
#if WS_SAMPLE_ARCH
    ws_pdl_chain(); /* pdl.cuh */
    constexpr int NB = ws_max_buckets(WS_TREE_LOG_WIDE), GROUPS = NB / 32;
    __shared__ unsigned long long s_begin[NB];
    __shared__ unsigned s_size[NB];
    __shared__ unsigned s_packed[GROUPS]; /* per 32 buckets: which go into jobs */
    __shared__ unsigned s_alone[GROUPS];  /* ... and which end the job before them */
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    const unsigned long long pack = out.class_cap[0];
    const unsigned nb = ctl->nbuckets;
    for (unsigned seg = blockIdx.x; seg < ctl->segs; seg += gridDim.x) {
        const ws_dist_seg sg = segs[seg];
        const unsigned long long first = scan[sg.cnt_base];
        for (unsigned j0 = warp * 32; j0 < nb; j0 += WS_FIN_THREADS) {
            const unsigned j = j0 + lane;
            /* Bucket j ends where j + 1 begins; the last one's end is the
             * next region's start (or the total, scan[cnt_entries]). */
            const unsigned long long at =
                j < nb ? scan[sg.cnt_base + (unsigned long long)j * sg.nblocks] : 0ull;
            const unsigned long long size =
                j < nb ? scan[sg.cnt_base + (unsigned long long)(j + 1) * sg.nblocks] - at : 0ull;
            const unsigned long long begin = sg.begin + (at - first);
            const bool equal = sg.eq && (j & 1u);
            const bool packed = size != 0 && !equal && size <= pack;
            const bool alone = size != 0 && !packed;
            const unsigned pm = __ballot_sync(0xFFFFFFFFu, packed);
            const unsigned am = __ballot_sync(0xFFFFFFFFu, alone);
            if (lane == 0) {
                s_packed[j0 / 32] = pm;
                s_alone[j0 / 32] = am;
            }
            if (packed) {
                s_begin[j] = begin;
                s_size[j] = (unsigned)size;
            }
            /* Buckets too big for a job, each lane its own. */
            const bool next_seg =
                alone && !equal && size > out.class_cap[WS_SORT_CLASSES - 1] && out.segs;
            if (__any_sync(0xFFFFFFFFu, next_seg)) {
                /* Next-level segments: one reservation for the warp's. */
                const unsigned blocks =
                    next_seg ? (unsigned)((size + out.chunk - 1) / out.chunk) : 0u;
                const unsigned seg_at = ws_warp_inclusive_sum<unsigned>(next_seg ? 1u : 0u);
                const unsigned blk_at = ws_warp_inclusive_sum<unsigned>(blocks);
                unsigned s0 = 0, b0 = 0;
                if (lane == 31) {
                    s0 = atomicAdd(&out.ctl->segs, seg_at);
                    b0 = atomicAdd(&out.ctl->blocks, blk_at);
                    (void)atomicAdd(&out.ctl->cnt_entries,
                                    (unsigned long long)blk_at * out.ctl->nbuckets);
                }
                s0 = __shfl_sync(0xFFFFFFFFu, s0, 31);
                b0 = __shfl_sync(0xFFFFFFFFu, b0, 31);
                if (next_seg) {
                    const unsigned s2 = s0 + seg_at - 1, fb = b0 + blk_at - blocks;
                    /* Count entries follow the blocks: cnt_base = first block x nbuckets. */
                    out.segs[s2] = ws_dist_seg{
                        begin, size, (unsigned long long)fb * out.ctl->nbuckets, fb, blocks,
                        0u,    0u};
                    for (unsigned b = 0; b < blocks; b++) out.blockseg[fb + b] = s2;
                }
            }
            if (!alone || next_seg) continue;
            if (equal) {
                const unsigned pieces = (unsigned)((size + WS_COPY_PIECE - 1) / WS_COPY_PIECE);
                const unsigned c0 = atomicAdd(&out.fin->copy_count, pieces);
                for (unsigned p = 0; p < pieces; p++) {
                    const unsigned long long off = (unsigned long long)p * WS_COPY_PIECE;
                    const unsigned long long len =
                        size - off < WS_COPY_PIECE ? size - off : WS_COPY_PIECE;
                    out.copy[c0 + p] = ws_bucket{begin + off, (unsigned)len, in_tmp};
                }
            } else if (size <= out.class_cap[WS_SORT_CLASSES - 1]) {
                ws_emit_sort(out, begin, size, in_tmp);
            } else {
                const unsigned at_b = atomicAdd(&out.fin->big_count, 1u);
                out.big[at_b] = ws_big_bucket{begin, size, in_tmp, 0u};
            }
        }
        __syncthreads();
        if (warp == 0) {
            /* The greedy packing, in bucket order, 32 buckets a step: a
             * bucket on its own ends the open job before it, and a packed
             * one that would take the job past `pack` items ends it and
             * opens the next. Each lane first finds where a job opened at
             * its bucket would end (a search over the step's running
             * sizes); the walk from job to job is then found by doubling,
             * a few shuffles a step however many jobs it holds, not a
             * dependent pass a bucket (bench/NOTES.md, forty-first
             * session). Jobs are listed in s_begin / s_size from 0 on: a
             * job holds at least one packed bucket, so the list never
             * reaches a bucket not yet read. */
            const unsigned cap = (unsigned)pack;
            unsigned long long job_begin = 0;
            unsigned job_size = 0, njobs = 0; /* the open job; jobs listed (every lane) */
            for (unsigned g = 0; g * 32 < nb; g++) {
                const unsigned pm = s_packed[g], am = s_alone[g];
                if (pm == 0) { /* no packed bucket: one on its own ends the open job */
                    if (am != 0 && job_size != 0) {
                        ws_list_job(s_begin, s_size, &njobs, job_begin, job_size);
                        job_size = 0;
                    }
                    continue;
                }
                const bool pk = (pm >> lane & 1u) != 0;
                const unsigned sz = pk ? s_size[g * 32 + lane] : 0u;
                const unsigned long long bg = pk ? s_begin[g * 32 + lane] : 0ull;
                const unsigned incl = ws_warp_inclusive_sum<unsigned>(sz), excl = incl - sz;
                const unsigned total = __shfl_sync(0xFFFFFFFFu, incl, 31);
                /* A job opened here ends before the first bucket past this
                 * one that is on its own or takes it past cap (incl only
                 * grows at packed buckets), or runs on (32). */
                unsigned over = 0;
#pragma unroll
                for (unsigned step = 16; step; step >>= 1) {
                    const unsigned v = __shfl_sync(0xFFFFFFFFu, incl, (int)(over + step - 1));
                    if (v <= excl + cap) over += step;
                }
                if (over == 31 && total <= excl + cap) over = 32; /* the search stops at 31 */
                const unsigned own = am & ~ws_lanes_below(lane + 1);
                const unsigned end = min(over, ws_first_lane(own));
                const unsigned closed =
                    __shfl_sync(0xFFFFFFFFu, incl, (int)(end > 0 ? end - 1 : 0)) - excl;
                __syncwarp(); /* every lane has read its bucket before the list grows */
                unsigned k;   /* the bucket that opens the next job */
                if (job_size != 0) {
                    /* the open job takes the buckets before its first cut */
                    const unsigned cut = __ballot_sync(0xFFFFFFFFu, incl > cap - job_size) | am;
                    const unsigned m0 = ws_first_lane(cut);
                    job_size += m0 ? __shfl_sync(0xFFFFFFFFu, incl, (int)m0 - 1) : 0u;
                    if (m0 == 32) continue;
                    ws_list_job(s_begin, s_size, &njobs, job_begin, job_size);
                    job_size = 0;
                    const unsigned rest = pm & ~ws_lanes_below((am >> m0 & 1u) ? m0 + 1 : m0);
                    k = ws_first_lane(rest);
                } else {
                    k = ws_first_lane(pm);
                }
                if (k < 32) {
                    /* The jobs from k on: each lane knows the bucket that
                     * opens the job after one opened at it (jump[0]); five
                     * doublings of that link mark every bucket the walk
                     * from k reaches, and those list their jobs at once. */
                    const unsigned after = end < 32 && (am >> end & 1u) ? end + 1 : end;
                    const unsigned rest = end < 32 ? pm & ~ws_lanes_below(after) : 0u;
                    unsigned jump[5];
                    jump[0] = ws_first_lane(rest);
#pragma unroll
                    for (int d = 1; d < 5; d++) {
                        const unsigned y =
                            __shfl_sync(0xFFFFFFFFu, jump[d - 1], (int)(jump[d - 1] & 31u));
                        jump[d] = jump[d - 1] < 32 ? y : 32u;
                    }
                    unsigned x = k; /* the last bucket of the walk at or below this lane */
#pragma unroll
                    for (int d = 4; d >= 0; d--) {
                        const unsigned y = __shfl_sync(0xFFFFFFFFu, jump[d], (int)(x & 31u));
                        if (x < 32 && y <= lane) x = y;
                    }
                    const bool opens = x == lane;
                    const unsigned cm = __ballot_sync(0xFFFFFFFFu, opens && end < 32);
                    if (opens && end < 32) {
                        const unsigned at = njobs + (unsigned)__popc(cm & ws_lanes_below(lane));
                        s_begin[at] = bg;
                        s_size[at] = closed;
                    }
                    njobs += (unsigned)__popc(cm);
                    /* the last one runs on into the next step */
                    const unsigned om = __ballot_sync(0xFFFFFFFFu, opens && end == 32);
                    if (om) {
                        const int o = __ffs((int)om) - 1;
                        job_begin = __shfl_sync(0xFFFFFFFFu, bg, o);
                        job_size = total - __shfl_sync(0xFFFFFFFFu, excl, o);
                    }
                }
            }
            if (job_size != 0) ws_list_job(s_begin, s_size, &njobs, job_begin, job_size);
            __syncwarp();
            /* One reservation for the segment's jobs: every segment of
             * the level appends to the one class-0 counter, and an atomic
             * a job would serialise them. */
            unsigned base = 0;
            if (lane == 0 && njobs != 0) base = atomicAdd(&out.fin->sort_count[0], njobs);
            base = __shfl_sync(0xFFFFFFFFu, base, 0);
            for (unsigned i = lane; i < njobs; i += 32)
                out.sort[0][base + i] = ws_bucket{s_begin[i], s_size[i], in_tmp};
        }
        __syncthreads(); /* the arrays are the next segment's */
    }
#endif
}

/* Level 0: each of the rows equal rows of the n items is a segment (one
 * for a single array), its blocks after the row before's (blockseg0, NULL
 * for one row); every counter starts at zero. One block. */
__global__ void ws_dist_init(ws_dist_seg *segs0, unsigned *blockseg0, ws_level_ctl *ctl,
                             ws_final_ctl *fin, unsigned long long n, unsigned rows, unsigned chunk,
                             ws_level_nb nbuckets) {
#if WS_SAMPLE_ARCH
    const unsigned long long len = n / rows;
    const unsigned nb = (unsigned)((len + chunk - 1) / chunk); /* blocks a row */
    for (unsigned r = threadIdx.x; r < rows; r += blockDim.x)
        segs0[r] = ws_dist_seg{
            r * len, len, (unsigned long long)r * nb * nbuckets.nb[0], r * nb, nb, 0u, 0u};
    if (blockseg0)
        for (unsigned b = threadIdx.x; b < rows * nb; b += blockDim.x) blockseg0[b] = b / nb;
    if (threadIdx.x != 0) return;
    for (int l = 0; l < WS_MAX_LEVELS; l++) ctl[l] = ws_level_ctl{0u, 0u, 0ull, nbuckets.nb[l]};
    ctl[0] = ws_level_ctl{rows, rows * nb, (unsigned long long)rows * nb * nbuckets.nb[0],
                          nbuckets.nb[0]};
    *fin = ws_final_ctl{};
#endif
}

#endif /* WARPSORT_CUDA_DISTRIBUTE_CUH */
