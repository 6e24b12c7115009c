/*
 * topk_paths.cuh - the paths of the CUDA backend's top-k (topk.cu) for one
 * key width: the device side and the launches of the five paths, queued
 * by ws_tk_paths for a call that topk.cu has planned (ws_tk_plan) and
 * staged. Each key width is stamped out in its own translation unit
 * (topk/k4.cu, topk/k8.cu) with WS_TK_INSTANCE, so a many-core build
 * compiles the two side by side. Internal; CUDA translation units only.
 */
#ifndef WARPSORT_CUDA_TOPK_PATHS_CUH
#define WARPSORT_CUDA_TOPK_PATHS_CUH

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "check.cuh"
#include "device_sort.h"
#include "occupancy.cuh"
#include "pdl.cuh"
#include "state.h"
#include "tuning.cuh"
#include "workspace.h"
#include "warpsort/key_traits.cuh"
#include "warpsort/block_sort.cuh"
#include "warpsort/warp_ops.cuh"
#include "warpsort/warp_sort.cuh"

using warpsort::decode;
using warpsort::encode;
using warpsort::key_codec;
using warpsort::no_value;
using warpsort::sentinel;
using warpsort::warp_items;

/*=== tuning ===*/
/* Best path (k = 1): rows at least this long, blocks of this many threads
 * keeping this many loads in flight each, about this many blocks an SM. */
#define WS_TK_BEST_MIN_LEN 2048
#define WS_TK_BEST_THREADS 256
#define WS_TK_BEST_UNROLL 8
#define WS_TK_BEST_BLOCKS_PER_SM 8
/* Largest k of the warp path: 32 lanes x 8 items of run in registers. */
#define WS_TK_WARP_MAX_K 256
/* A level-0 chunk holds at least this many batches (32 x ITEMS): the warm
 * start and the first merges, paid once per chunk, stay a small part. */
#define WS_TK_MIN_CHUNK_RUNS 16
/* Later levels read runs mostly above the shared bar (a compare each):
 * chunks of at least this many items. */
#define WS_TK_LEVEL_MIN_CHUNK 2048
/* Warps per block of the warp path. */
#define WS_TK_WARPS 8
/* Resident warps per SM a level's grid aims at: one wave of long chunks. */
#define WS_TK_WAVE_WARPS 32
#define WS_TK_MAX_LEVELS 16
/* Radix select (ws_tk_select_kernel): threads per block, and the tile of
 * its count and compaction phases (8 warps x 512). */
#define WS_TK_SELECT_THREADS 256
#define WS_TK_SELECT_WARPS (WS_TK_SELECT_THREADS / 32)
/* ... and the blocks an SM must hold (64 registers a thread): a wave of
 * co-resident blocks keeps enough histogram loads in flight. */
#define WS_TK_SELECT_MIN_BLOCKS 4
#define WS_TK_TILE 4096
/* 11-bit digits: 3 passes for 32-bit keys, 6 for 64-bit. */
#define WS_TK_DIGIT_BITS 11
#define WS_TK_BINS (1 << WS_TK_DIGIT_BITS)
/* Histogram passes: loads in flight per thread. */
#define WS_TK_HIST_UNROLL 8
/* Filter path: k range, the shortest row it takes (the sample must be a
 * small part of the row), and at most this many rows when k would fit the
 * warp path (which takes every row in one launch). */
#define WS_TK_FILTER_MIN_K 65
/* ... when one block takes the candidates (ws_tk_cand_kernel): the path
 * then costs about what k = 65 does at any smaller k, which beats the warp
 * path from k = 2 (k = 1 is the best path; bench/NOTES.md). */
#define WS_TK_FILTER_MIN_K_BLOCK 2
#define WS_TK_FILTER_MAX_K 4096
#define WS_TK_FILTER_MIN_LEN (1u << 16)
#define WS_TK_FILTER_MAX_ROWS 4
/* ... at any k in its range for up to FEW_ROWS rows; for more, only k of
 * at least SMALL_K on rows of at least ROWS_LEN keys, or k above ROWS_K:
 * below, the warp path's one launch for all rows beat a filter pass a row
 * (bench/NOTES.md, twenty-eighth session) */
#define WS_TK_FILTER_FEW_ROWS 2
#define WS_TK_FILTER_SMALL_K 16
#define WS_TK_FILTER_ROWS_LEN (1u << 19)
#define WS_TK_FILTER_ROWS_K 128
/* Sample: one block of 1024 threads selects over it, 16 keys each in
 * registers; its scattered loads (a line each) are spread over at most
 * this many blocks, as one SM takes them a line at a time (block b the
 * keys j = b mod grid; fewer blocks took longer: bench/NOTES.md,
 * thirtieth session). */
#define WS_TK_SAMPLE_THREADS 1024
#define WS_TK_SAMPLE_PER 16
#define WS_TK_SAMPLE (WS_TK_SAMPLE_THREADS * WS_TK_SAMPLE_PER)
#define WS_TK_SAMPLE_BLOCKS 64
/* Filter path, 32-bit keys: one block of this shape takes the candidates'
 * best k (ws_tk_cand_kernel) when at most WS_TK_CAND_EXPECTED are expected
 * to pass: it narrows them to at most max(2k, THREADS) on chip (passes of
 * UNROLL loads in flight per thread) and sorts those as one tile of at
 * most TILE. */
#define WS_TK_CAND_THREADS 1024
#define WS_TK_CAND_TILE (WS_TK_CAND_THREADS * 8)
#define WS_TK_CAND_EXPECTED (2 * WS_TK_CAND_TILE)
#define WS_TK_CAND_UNROLL 8
/* ... and sorts at most this many by their ranks instead (32-bit keys;
 * ws_tk_rank_finish) */
#define WS_TK_CAND_RANK_MAX 256
/* Filter path, the read ranking the candidates itself: they are split
 * into up to this many consecutive key ranges (buckets) at the sample's
 * best keys, so a candidate's rank is counted among about one sample gap
 * of them (n / WS_TK_SAMPLE) instead of all (rank x n / WS_TK_SAMPLE); the
 * sample's keys at or below the threshold are ranked when there are at
 * most BUCKET_SAMPLE of them (more only with ties: then one bucket). */
#define WS_TK_CAND_BUCKETS 16
#define WS_TK_BUCKET_SAMPLE 64
/* ... when k is at least this many sample gaps (32-bit keys; 64-bit keys
 * at any k): below, the best k lie in the first bucket, and one block
 * over all the candidates is faster (bench/NOTES.md, twenty-fourth,
 * twenty-ninth and thirty-seventh sessions) */
#define WS_TK_BUCKET_MIN_GAPS 1
/* The read's grid, ranking the candidates, reads a bucket in
 * chunks of this many words a thread (words: 8 bytes for 32-bit keys, 16
 * for 64-bit keys): one round trip a chunk, and most candidates are out
 * of the top k after the first (bench/NOTES.md, twenty-ninth session),
 * for up to ROUND of a block's candidates at a time. The read's appends
 * are buffered in shared memory, this many words a bucket (a block meets
 * a few dozen candidates on average; more go to the bucket directly). */
#define WS_TK_RANK_CHUNK_PER 4
#define WS_TK_RANK_ROUND 32
/* ... a round of more candidates than this is sorted first and each word
 * placed among them by a binary search; fewer are each counted against
 * every word (ws_tk_rank_buckets) */
#define WS_TK_RANK_SORT_MIN 8
#define WS_TK_RANK_APPEND_PB 64
/* ... for 64-bit keys: up to k = 16 x this, one warp sorts the survivors
 * (at most 32 x this); above, up to k = WS_TK_CAND_TILE64, the block sorts
 * at most that many (THREADS x 4: the (key, index) items of two tile
 * sorts stay within 64 registers). */
#define WS_TK_CAND_SI64 16
#define WS_TK_CAND_TILE64 (WS_TK_CAND_THREADS * 4)
/* Row blocks (ws_tk_rows_kernel): k at most this (32-bit keys, sorted by
 * a block tile; 64-bit keys, by one warp up to 512 survivors, above by
 * the block's two tiles); survivors a thread holds in the tile (32-bit /
 * 64-bit keys; the 64-bit tiles carry (key, index, position) items);
 * bytes of keys a thread holds in registers; threads per block from MIN
 * to MAX (a power of two holding the row, or MAX); rows up to MAX_PASSES
 * x MAX threads' worth of registers (the rest is read again from L2 at
 * every pass of the select). */
#define WS_TK_ROWS_MAX_K 1024
#define WS_TK_ROWS_ITEMS32 8
#define WS_TK_ROWS_ITEMS64 4
#define WS_TK_ROWS_TILE_ITEMS(kb) ((kb) == 8 ? WS_TK_ROWS_ITEMS64 : WS_TK_ROWS_ITEMS32)
#define WS_TK_ROWS_ITEMS 64
#define WS_TK_ROWS_MIN_THREADS 128
#define WS_TK_ROWS_MAX_THREADS 512
#define WS_TK_ROWS_MAX_PASSES 4
/* ... and threads an SM holds at least (a register bound; every supported
 * SM holds 1024). */
#define WS_TK_ROWS_SM_THREADS 1024
/* ... with the row's keys staged in shared memory (the threads' bar):
 * threads an SM must hold, the most staged bytes a block takes (16384
 * 32-bit keys: three blocks of 512 an SM), and a bound on the block's
 * static shared memory beside them */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define WS_TK_ROWS_SM_THREADS_STAGED 1024 /* sm_75's most */
#else
#define WS_TK_ROWS_SM_THREADS_STAGED 1536
#endif
#define WS_TK_ROWS_STAGE_MAX (64u << 10)
/* ... and without the bar, rows longer than the registers hold (T x L
 * keys) keep the rest in shared memory, read once (REST), where two blocks
 * an SM still fit with this much more a block (a bound on the REST
 * instances' static shared memory, ptxas's figures in bench/NOTES.md, plus
 * the system's 1 KB): the narrowing's passes then read it on chip instead
 * of from L2 */
#define WS_TK_ROWS_REST_SLACK (18u << 10)
/* Short rows: at most this many keys, a group of lanes a row sorting it
 * whole in registers (ws_tk_short_kernel; longer rows lost for small k
 * against the warp path). Many rows of up to SHORT_ROW_MAX keys (twice
 * that for k <= 8), at least SHORT_ROWS_PER_SM an SM, take the warp path
 * (topk.cu). */
#define WS_TK_SHORT_MAX 64
#define WS_TK_SHORT_ROW_MAX 256
#define WS_TK_SHORT_ROWS_PER_SM 16
#define WS_TK_SHORT_THREADS 256
#define WS_TK_SHORT_BLOCKS_PER_SM 32
/* 64-bit rows of more than half of WIDE_WARP_MAX_LEN keys, and at most
 * that, take the warp path (topk.cu) where it measured faster than the
 * row blocks: from WIDE_WARP_ROWS_PER_SM rows an SM, or for k above
 * WIDE_WARP_BIG_K from WS_TK_SHORT_ROWS_PER_SM. */
#define WS_TK_WIDE_WARP_MAX_LEN 4096u
#define WS_TK_WIDE_WARP_ROWS_PER_SM 23
#define WS_TK_WIDE_WARP_BIG_K 128
/* Rows at least this long rank a 64-bit block's survivors with every
 * thread (ws_tk_rows_kernel). */
#define WS_TK_ROWS_RANK_MIN_LEN 4096u
#define WS_TK_ROWS_STATIC_SMEM (12u << 10)
/* Filter pass: 16-byte loads per thread per step, threads per block (the
 * select's: the launch runs it when the filter misses), and the blocks an
 * SM must hold (3 x 256 x 64 bytes in flight an SM keep the read at the
 * rate of 4, which spilled: bench/NOTES.md). */
#define WS_TK_FILTER_UNROLL 4
#define WS_TK_FILTER_THREADS 256
#define WS_TK_FILTER_MIN_BLOCKS 3

__host__ __device__ static inline size_t ws_tk_div_up(size_t a, size_t b) {
    return (a + b - 1) / b;
}

/*=== device helpers ===*/

__device__ __forceinline__ unsigned ws_tk_lanemask_lt() {
    unsigned m;
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
    return m;
}

/* A warp's append: the lanes set in ball (nonzero, the warp's ballot of
 * the lanes that append) take consecutive slots from *count, reserved by
 * one atomicAdd; returns this lane's slot (meaningful where its bit is
 * set). Whole warps call it. */
__device__ __forceinline__ unsigned ws_tk_warp_slot(unsigned *count, unsigned ball) {
    unsigned base = 0;
    if ((threadIdx.x & 31) == 0) base = atomicAdd(count, (unsigned)__popc(ball));
    base = __shfl_sync(0xFFFFFFFFu, base, 0);
    return base + (unsigned)__popc(ball & ws_tk_lanemask_lt());
}

__device__ __forceinline__ void ws_tk_atomic_min(uint32_t *a, uint32_t v) { atomicMin(a, v); }
__device__ __forceinline__ void ws_tk_atomic_min(uint64_t *a, uint64_t v) {
    atomicMin((unsigned long long *)a, (unsigned long long)v);
}

template <typename KB>
__device__ __forceinline__ bool ws_tk_less(KB a, uint32_t pa, KB b, uint32_t pb) {
    return a < b || (a == b && pa < pb);
}

/* An item as one unsigned word: its ordered key above its 32-bit index.
 * Words are unique and sort in (key, index) order, ties and NaNs included:
 * 64 bits for 32-bit keys, 128 for 64-bit keys. */
__extension__ typedef unsigned __int128 ws_tk_u128;
template <typename KB>
struct ws_tk_word_of {
    using type = uint64_t;
};
template <>
struct ws_tk_word_of<uint64_t> {
    using type = ws_tk_u128;
};
template <typename KB>
using ws_tk_word = typename ws_tk_word_of<KB>::type;

template <typename W, typename KB>
__device__ __forceinline__ W ws_tk_pack(KB o, uint32_t i) {
    return ((W)o << 32) | (W)i;
}
template <typename KB, typename W>
__device__ __forceinline__ KB ws_tk_word_key(W w) {
    return (KB)(w >> 32);
}

/*=== outputs ===*/

/* Where results go: result o (row o / k) takes a key (raw bits), an index
 * in its row and the value the row holds there. */
struct ws_tk_outputs {
    void *keys, *indices, *values;
    int index_bytes, value_bytes;
    const void *in_values;
    size_t k, row_len;
};

template <typename KB>
__device__ __forceinline__ void ws_tk_put(const ws_tk_outputs &out, size_t o, KB key,
                                          unsigned long long ix) {
    if (out.keys) ((KB *)out.keys)[o] = key;
    if (out.indices) {
        if (out.index_bytes == 4)
            ((uint32_t *)out.indices)[o] = (uint32_t)ix;
        else
            ((uint64_t *)out.indices)[o] = ix;
    }
    if (out.values) {
        const size_t src = (o / out.k) * out.row_len + (size_t)ix;
        if (out.value_bytes == 4)
            ((uint32_t *)out.values)[o] = ((const uint32_t *)out.in_values)[src];
        else
            ((uint64_t *)out.values)[o] = ((const uint64_t *)out.in_values)[src];
    }
}

/* m sorted survivors of one row (raw keys and indices) to results from
 * out_base on. */
template <typename KB>
__global__ void ws_tk_finish_kernel(const KB *keys, const unsigned long long *idx, size_t m,
                                    size_t out_base, ws_tk_outputs out) {
    for (size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x; j < m;
         j += (size_t)gridDim.x * blockDim.x)
        ws_tk_put(out, out_base + j, keys[j], idx[j]);
}

/*=== best path (k = 1) ===*/

/* A candidate: ordered key (smaller is better) and its index in the row. */
template <typename KB>
struct ws_tk_best {
    KB key;
    unsigned long long idx;
};
template <typename KB>
__device__ __forceinline__ bool ws_tk_better(KB ka, unsigned long long ia, KB kb,
                                             unsigned long long ib) {
    return ka < kb || (ka == kb && ia < ib);
}
template <typename KB>
__device__ __forceinline__ void ws_tk_best_shfl(KB &k, unsigned long long &i, int mask) {
    const KB ok = (KB)__shfl_xor_sync(0xFFFFFFFFu, k, mask);
    const unsigned long long oi = __shfl_xor_sync(0xFFFFFFFFu, i, mask);
    if (ws_tk_better(ok, oi, k, i)) {
        k = ok;
        i = oi;
    }
}
/* The block's best of (k, i) over all threads, valid in thread 0. */
template <typename KB>
__device__ __forceinline__ void ws_tk_best_block(KB &k, unsigned long long &i) {
    __shared__ ws_tk_best<KB> w[WS_TK_BEST_THREADS / 32];
#pragma unroll
    for (int m = 16; m >= 1; m /= 2) ws_tk_best_shfl(k, i, m);
    if ((threadIdx.x & 31) == 0) w[threadIdx.x / 32] = ws_tk_best<KB>{k, i};
    __syncthreads();
    if (threadIdx.x < 32) {
        k = sentinel<KB>();
        i = ~0ull;
        if (threadIdx.x < WS_TK_BEST_THREADS / 32) {
            k = w[threadIdx.x].key;
            i = w[threadIdx.x].idx;
        }
#pragma unroll
        for (int m = 16; m >= 1; m /= 2) ws_tk_best_shfl(k, i, m);
    }
}

/* Block b takes chunk b % cpr of row b / cpr: the best of its keys into
 * part[b]; the row's last block to finish (done[row] counts them, zeroed
 * before the launch) reduces the row's cpr parts and writes the result. */
template <typename KB>
__global__ void __launch_bounds__(WS_TK_BEST_THREADS)
    ws_tk_best_kernel(const KB *keys, size_t row_len, unsigned cpr, size_t chunk, key_codec codec,
                      ws_tk_best<KB> *part, unsigned *done, ws_tk_outputs out) {
    constexpr int T = WS_TK_BEST_THREADS, U = WS_TK_BEST_UNROLL;
    const size_t row = blockIdx.x / cpr;
    const KB *rk = keys + row * row_len;
    const size_t lo = (size_t)(blockIdx.x % cpr) * chunk;
    const size_t hi = lo + chunk < row_len ? lo + chunk : row_len;
    KB bk = sentinel<KB>();
    unsigned long long bi = ~0ull;
    for (size_t i0 = lo + threadIdx.x; i0 < hi; i0 += (size_t)T * U) {
        KB v[U];
#pragma unroll
        for (int u = 0; u < U; u++) v[u] = i0 + (size_t)u * T < hi ? rk[i0 + (size_t)u * T] : KB(0);
#pragma unroll
        for (int u = 0; u < U; u++) {
            const size_t i = i0 + (size_t)u * T;
            const KB o = encode(v[u], codec);
            /* a thread's indices rise: the first of equal keys stays */
            if (i < hi && (o < bk || bi == ~0ull)) {
                bk = o;
                bi = i;
            }
        }
    }
    ws_tk_best_block(bk, bi);
    __shared__ bool last;
    if (threadIdx.x == 0) {
        part[blockIdx.x] = ws_tk_best<KB>{bk, bi};
        __threadfence(); /* the part is visible before the ticket */
        last = atomicAdd(&done[row], 1u) == cpr - 1;
    }
    __syncthreads();
    if (!last) return;
    __threadfence(); /* every other block's part is read after its ticket */
    bk = sentinel<KB>();
    bi = ~0ull;
    for (unsigned c = threadIdx.x; c < cpr; c += T) {
        const volatile ws_tk_best<KB> *q = part + row * cpr + c;
        const KB qk = q->key;
        const unsigned long long qi = q->idx;
        if (ws_tk_better(qk, qi, bk, bi)) {
            bk = qk;
            bi = qi;
        }
    }
    ws_tk_best_block(bk, bi);
    if (threadIdx.x == 0) ws_tk_put(out, row, decode(bk, codec), bi);
}

/*=== warp path ===*/

/* One level: segs segments of seg_len items; warp w takes chunk w % wps of
 * segment w / wps. Level 0 reads raw keys (in_pos NULL, positions are
 * indices), later levels the previous level's runs (ordered bits and
 * positions in the row). A level writes each warp's best k to out at w * k,
 * except the last (wps = 1), which writes the call's outputs. bar holds one
 * shared bar per segment (ordered bits, see ws_tk_warp_kernel). */
struct ws_tk_level {
    const void *in_keys;
    const uint32_t *in_pos;
    size_t segs, seg_len, chunk, wps;
    int k;
    int vec; /* level 0: the keys are aligned to their size (vector loads allowed) */
    key_codec codec;
    void *bar;
    void *out_keys; /* NULL: the last level, which writes out */
    uint32_t *out_pos;
    ws_tk_outputs out;
};

/* A warp's state: its run, its own bar (the run's k-th item), the shared
 * bar as last seen, and the buffer of items waiting to be merged. */
template <typename KB, int ITEMS>
struct ws_tk_warp {
    static constexpr int BATCH = 32 * ITEMS;
    /* keys a lane takes per step: two 16-byte vectors */
    static constexpr int V = 16 / (int)sizeof(KB);
    static constexpr int N = 2 * V;
    static constexpr int STEP = 32 * N;
    /* a step starts with fewer than BATCH items waiting and adds at most STEP */
    static constexpr int CAP = BATCH + STEP;
    warp_items<KB, no_value, uint32_t, ITEMS> run; /* sorted best first, blocked */
    KB tk;                                         /* the run's k-th item: own bar */
    uint32_t tp;
    KB g;      /* the shared bar as last read (only ever lowered) */
    KB *gbar;  /* the segment's shared bar */
    int count; /* items waiting in the buffer */
    KB *bk;    /* the warp's buffer (shared) */
    uint32_t *bp;
    int k, lane;
    unsigned below;

    /* The run's k-th item becomes the own bar; it is published as the
     * shared bar when it lowers it. */
    __device__ __forceinline__ void raise_bar() {
        const int src_reg = (k - 1) % ITEMS;
        KB mk = run.k[0];
        uint32_t mp = run.p[0];
#pragma unroll
        for (int r = 1; r < ITEMS; r++) {
            if (r == src_reg) {
                mk = run.k[r];
                mp = run.p[r];
            }
        }
        tk = warpsort::detail::shfl_idx(mk, (k - 1) / ITEMS, 32);
        tp = warpsort::detail::shfl_idx(mp, (k - 1) / ITEMS, 32);
        if (tk < g) {
            if (lane == 0) ws_tk_atomic_min(gbar, tk);
            g = tk;
        }
    }

    /* Sorts buffer items [from, from + valid) (valid <= BATCH) with the
     * warp network, merges them into the run and raises the bar. The
     * buffer is read striped (conflict-free): the sort needs no order. */
    __device__ __forceinline__ void flush(int from, int valid) {
        warp_items<KB, no_value, uint32_t, ITEMS> b;
#pragma unroll
        for (int r = 0; r < ITEMS; r++) {
            const int i = r * 32 + lane;
            b.k[r] = i < valid ? bk[from + i] : sentinel<KB>();
            b.p[r] = i < valid ? bp[from + i] : 0xFFFFFFFFu;
        }
        warpsort::warp_sort_registers<BATCH>(b, lane * ITEMS);
        /* run[i] vs batch[BATCH-1-i]: lane 31 - lane, register ITEMS-1-r.
         * The better of each pair are the best BATCH of both, in bitonic
         * order. */
#pragma unroll
        for (int r = 0; r < ITEMS; r++) {
            const KB ok = warpsort::shfl_xor(b.k[ITEMS - 1 - r], 31);
            const uint32_t op = warpsort::shfl_xor(b.p[ITEMS - 1 - r], 31);
            if (ws_tk_less(ok, op, run.k[r], run.p[r])) {
                run.k[r] = ok;
                run.p[r] = op;
            }
        }
        warpsort::warp_merge_registers(run, lane * ITEMS, BATCH);
        raise_bar();
    }

    /* Filters one step's items (padding is (sentinel, ~0): it never passes)
     * into the buffer; merges every full batch. An item passes when it may
     * still be in the top k: not above the shared bar (a warp holds k items
     * no worse than it; equal keys may still win on index) and better than
     * the own bar. */
    __device__ __forceinline__ void step(const KB (&o)[N], const uint32_t (&p)[N]) {
        bool pass[N];
        bool any = false;
#pragma unroll
        for (int v = 0; v < N; v++) {
            pass[v] = o[v] <= g && ws_tk_less(o[v], p[v], tk, tp);
            any |= pass[v];
        }
        if (!__any_sync(0xFFFFFFFFu, any)) return;
#pragma unroll
        for (int v = 0; v < N; v++) {
            const unsigned m = __ballot_sync(0xFFFFFFFFu, pass[v]);
            if (pass[v]) {
                const int at = count + __popc(m & below);
                bk[at] = o[v];
                bp[at] = p[v];
            }
            count += __popc(m);
        }
        __syncwarp(); /* the appends are visible to the whole warp */
        if (count < BATCH) return;
        int from = 0;
        while (count - from >= BATCH) {
            flush(from, BATCH);
            from += BATCH;
        }
        /* move the rest (< BATCH items) to the front */
        const int rest = count - from;
        KB rk[ITEMS];
        uint32_t rp[ITEMS];
#pragma unroll
        for (int r = 0; r < ITEMS; r++) {
            const int j = r * 32 + lane;
            if (j < rest) {
                rk[r] = bk[from + j];
                rp[r] = bp[from + j];
            }
        }
        __syncwarp(); /* every read of the buffer precedes the moves */
#pragma unroll
        for (int r = 0; r < ITEMS; r++) {
            const int j = r * 32 + lane;
            if (j < rest) {
                bk[j] = rk[r];
                bp[j] = rp[r];
            }
        }
        __syncwarp(); /* the moved items precede the next appends */
        count = rest;
    }
};

/* Item i of a segment (ordered bits and position); padding past hi. */
template <typename KB, bool RAW>
__device__ __forceinline__ void ws_tk_load_item(const ws_tk_level &lv, size_t base, size_t i,
                                                size_t hi, KB &o, uint32_t &p) {
    o = sentinel<KB>();
    p = 0xFFFFFFFFu;
    if (i < hi) {
        if constexpr (RAW) {
            o = encode(((const KB *)lv.in_keys)[base + i], lv.codec);
            p = (uint32_t)i;
        } else {
            o = ((const KB *)lv.in_keys)[base + i];
            p = lv.in_pos[base + i];
        }
    }
}

/* 16-byte vectors of raw keys (level 0) */
template <typename KB>
struct ws_tk_vec {
    KB x[16 / sizeof(KB)];
};
template <typename KB>
__device__ __forceinline__ ws_tk_vec<KB> ws_tk_load_vec(const KB *p) {
    ws_tk_vec<KB> r;
    const uint4 u = __ldg((const uint4 *)p);
    memcpy(&r, &u, sizeof r);
    return r;
}

/* Every warp keeps the best k of its chunk as a sorted run in registers.
 * Warm start: the chunk's first BATCH items are sorted straight into the
 * run. Then steps of STEP items (vector loads of raw keys where aligned,
 * the next step's loads and the shared bar issued before this step's
 * ballots) pass the bars into the buffer, and full buffers are merged.
 * The shared bar is a per-segment atomicMin of the warps' k-th keys: a key
 * above it cannot be in the top k, since the warp that published it holds
 * k items with keys no greater. It only falls, so a stale read is safe. */
template <typename KB, int ITEMS, bool RAW>
__global__ void __launch_bounds__(32 * WS_TK_WARPS) ws_tk_warp_kernel(ws_tk_level lv) {
    using W = ws_tk_warp<KB, ITEMS>;
    constexpr int N = W::N, V = W::V, STEP = W::STEP, BATCH = W::BATCH;
    __shared__ KB sk[WS_TK_WARPS][W::CAP];
    __shared__ uint32_t sp[WS_TK_WARPS][W::CAP];
    const int warp = (int)(threadIdx.x / 32), lane = (int)(threadIdx.x & 31);
    const size_t w = (size_t)blockIdx.x * WS_TK_WARPS + warp;
    if (w >= lv.segs * lv.wps) return; /* whole warps only */
    const size_t seg = w / lv.wps, c = w % lv.wps;
    const size_t lo = c * lv.chunk;
    const size_t hi = lo + lv.chunk < lv.seg_len ? lo + lv.chunk : lv.seg_len;
    const size_t base = seg * lv.seg_len;

    W s;
    s.k = lv.k;
    s.lane = lane;
    s.below = ws_tk_lanemask_lt();
    s.count = 0;
    s.bk = sk[warp];
    s.bp = sp[warp];
    s.gbar = (KB *)lv.bar + seg;
    s.g = *(volatile KB *)s.gbar;
    s.tk = sentinel<KB>();
    s.tp = 0xFFFFFFFFu;

    /* warm start */
#pragma unroll
    for (int r = 0; r < ITEMS; r++)
        ws_tk_load_item<KB, RAW>(lv, base, lo + (size_t)(r * 32 + lane), hi, s.run.k[r],
                                 s.run.p[r]);
    warpsort::warp_sort_registers<BATCH>(s.run, lane * ITEMS);
    s.raise_bar();

    size_t i = lo + BATCH;
    if constexpr (RAW) {
        if (lv.vec && i < hi) {
            const KB *in = (const KB *)lv.in_keys + base;
            /* scalar head up to a 16-byte boundary */
            const size_t mis = ((uintptr_t)(in + i) / sizeof(KB)) % V;
            size_t a = i + (V - mis) % V;
            if (a > hi) a = hi;
            if (a > i) {
                KB o[N];
                uint32_t p[N];
#pragma unroll
                for (int v = 0; v < N; v++)
                    ws_tk_load_item<KB, true>(lv, base, i + v * 32 + lane, a, o[v], p[v]);
                s.step(o, p);
                i = a;
            }
            /* whole vector steps: lane l takes vectors l and 32 + l */
            const size_t steps = (hi - i) / STEP;
            if (steps > 0) {
                ws_tk_vec<KB> cur[2], nxt[2];
                cur[0] = ws_tk_load_vec(in + i + (size_t)lane * V);
                cur[1] = ws_tk_load_vec(in + i + (size_t)(32 + lane) * V);
                for (size_t st = 0; st < steps; st++) {
                    const size_t at = i + st * STEP;
                    if (st + 1 < steps) {
                        nxt[0] = ws_tk_load_vec(in + at + STEP + (size_t)lane * V);
                        nxt[1] = ws_tk_load_vec(in + at + STEP + (size_t)(32 + lane) * V);
                    }
                    const KB gn = *(volatile KB *)s.gbar;
                    KB o[N];
                    uint32_t p[N];
#pragma unroll
                    for (int h = 0; h < 2; h++)
#pragma unroll
                        for (int e = 0; e < V; e++) {
                            o[h * V + e] = encode(cur[h].x[e], lv.codec);
                            p[h * V + e] = (uint32_t)(at + (size_t)(h * 32 + lane) * V + e);
                        }
                    s.step(o, p);
                    if (gn < s.g) s.g = gn;
                    cur[0] = nxt[0];
                    cur[1] = nxt[1];
                }
                i += steps * STEP;
            }
        }
    }
    /* scalar steps (later levels, unaligned keys, the tail) */
    for (; i < hi; i += STEP) {
        const KB gn = *(volatile KB *)s.gbar;
        KB o[N];
        uint32_t p[N];
#pragma unroll
        for (int v = 0; v < N; v++)
            ws_tk_load_item<KB, RAW>(lv, base, i + v * 32 + lane, hi, o[v], p[v]);
        s.step(o, p);
        if (gn < s.g) s.g = gn;
    }
    if (s.count > 0) s.flush(0, s.count);

    if (lv.out_keys) {
        KB *out_keys = (KB *)lv.out_keys;
#pragma unroll
        for (int r = 0; r < ITEMS; r++) {
            const int j = lane * ITEMS + r;
            if (j < lv.k) {
                out_keys[w * (size_t)lv.k + j] = s.run.k[r];
                lv.out_pos[w * (size_t)lv.k + j] = s.run.p[r];
            }
        }
    } else {
        /* the last level: one warp per row holds the row's top k */
#pragma unroll
        for (int r = 0; r < ITEMS; r++) {
            const int j = lane * ITEMS + r;
            if (j < lv.k)
                ws_tk_put(lv.out, seg * (size_t)lv.k + j, decode(s.run.k[r], lv.codec), s.run.p[r]);
        }
    }
}
/*=== candidates of the filter path ===*/

/* The filter path's state for the row in hand: the threshold (ordered
 * bits), the number of keys not above it (all counted; the buffer holds the
 * first cap), and the k and cap the row was planned with. */
struct ws_tk_filter {
    unsigned long long t, count, k, cap;
    /* Buckets of the candidates for the read's own ranking
     * (ws_tk_rank_buckets): bucket j holds the candidates whose ordered
     * key is above th[j - 1] (j > 0) and not above th[j] (j < nb - 1;
     * th[nb - 1] = t), so the buckets are consecutive ranges of the
     * order. nb = 1: one bucket. */
    unsigned long long th[WS_TK_CAND_BUCKETS];
    unsigned nb;
    /* The ranked read's candidates of each bucket (their sum is count),
     * on lines of their own: the appends' atomics would slow every read
     * of the fields above. */
    alignas(128) unsigned long long bn[WS_TK_CAND_BUCKETS];
};

/* Whether the candidates hold the top k: at least k keys are not above the
 * threshold (so the k best are among them) and all of them fit. The
 * radix select runs exactly when this is false. */
__device__ __forceinline__ bool ws_tk_filter_hit(const ws_tk_filter *fl) {
    if (!fl) return false;
    const unsigned long long c = fl->count;
    return c >= fl->k && c <= fl->cap;
}

/* Candidate layouts: 0 raw key + 64-bit index (radix path); 1 one u64 of
 * (ordered 32-bit key, 32-bit index), which sorts as (key, index); 2 the
 * ordered 64-bit key and a 32-bit index in two arrays. */
template <typename KB, int MODE>
__device__ __forceinline__ void ws_tk_emit(void *ck, void *ci, unsigned long long at, KB raw, KB o,
                                           unsigned long long i) {
    if constexpr (MODE == 0) {
        ((KB *)ck)[at] = raw;
        ((unsigned long long *)ci)[at] = i;
    } else if constexpr (MODE == 1) {
        ((unsigned long long *)ck)[at] = ((unsigned long long)o << 32) | (uint32_t)i;
    } else {
        ((unsigned long long *)ck)[at] = (unsigned long long)o;
        ((uint32_t *)ci)[at] = (uint32_t)i;
    }
}

/*=== radix select (one row at a time, one cooperative launch) ===*/

/* The select's state: the k-th key's bits found so far (prefix), and its
 * rank among the keys sharing them (remaining, 1-based). After the last
 * digit prefix is the k-th key and remaining the number of keys equal to
 * it that belong to the top k (the lowest-indexed ones). ticket counts the
 * blocks that finished a phase; the last one does the phase's serial step
 * (the digit's pick, the scan of the blocks' counts) and resets it. */
struct ws_tk_select {
    unsigned long long prefix;
    unsigned long long remaining;
    unsigned ticket;
};

/* Where the select of one row works (workspace pieces of the plan) and
 * writes its k survivors (ck / ci in layout MODE). */
struct ws_tk_select_args {
    ws_tk_select *sel;
    unsigned long long *hist;              /* WS_TK_BINS */
    unsigned *seg_less, *seg_eq;           /* per segment (tile x warps + warp) */
    unsigned long long *blk_less, *blk_eq; /* per block: counts, then bases */
    size_t tiles, k;
    void *ck, *ci;
};

/* The select's shared memory: a digit's bins, the warps' partial sums,
 * the last-block flag. */
struct ws_tk_select_smem {
    unsigned h[WS_TK_BINS];
    unsigned long long part[2][WS_TK_SELECT_WARPS];
    int last;
};

/* Whether this block is the grid's last to finish the phase: its global
 * writes are published (fenced) before its ticket is taken, and seen by
 * the last block after it. Whole blocks call it. */
__device__ __forceinline__ bool ws_tk_last_block(ws_tk_select *sel, ws_tk_select_smem &s) {
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) s.last = atomicAdd(&sel->ticket, 1u) == gridDim.x - 1;
    __syncthreads();
    if (!s.last) return false;
    __threadfence();
    return true;
}

/* Histogram of the digit of `width` bits at `shift` over the keys whose
 * higher bits match the prefix (grid-stride, WS_TK_HIST_UNROLL loads in
 * flight per thread, bins counted in shared memory then added to hist);
 * the last block picks the digit that holds the remaining rank, clears
 * hist and the ticket for the next pass. State written by other blocks in
 * this launch is read with __ldcg (L2), never from a stale L1 line. */
template <typename KB>
__device__ __forceinline__ void ws_tk_digit_pass(const KB *keys, size_t n, key_codec codec,
                                                 const ws_tk_select_args &a, int shift, int width,
                                                 ws_tk_select_smem &s) {
    constexpr int BITS = 8 * (int)sizeof(KB);
    constexpr int T = WS_TK_SELECT_THREADS, U = WS_TK_HIST_UNROLL;
    constexpr int PER = WS_TK_BINS / T;
    const int tid = (int)threadIdx.x;
    for (int b = tid; b < WS_TK_BINS; b += T) s.h[b] = 0;
    __syncthreads();
    const KB prefix = (KB)__ldcg(&a.sel->prefix);
    const int above = shift + width;
    const KB mask = (KB)((1u << width) - 1);
    const size_t stride = (size_t)gridDim.x * T * U;
    for (size_t i0 = (size_t)blockIdx.x * T * U + tid; i0 < n; i0 += stride) {
        const KB *at = keys + i0;
        const size_t left = n - i0;
        KB raw[U];
#pragma unroll
        for (int u = 0; u < U; u++) raw[u] = (size_t)u * T < left ? at[u * T] : 0;
#pragma unroll
        for (int u = 0; u < U; u++) {
            const KB o = encode(raw[u], codec);
            if ((size_t)u * T < left && (above >= BITS || ((o ^ prefix) >> above) == 0))
                atomicAdd(&s.h[(unsigned)((o >> shift) & mask)], 1u);
        }
    }
    __syncthreads();
    for (int b = tid; b < WS_TK_BINS; b += T)
        if (s.h[b]) atomicAdd(&a.hist[b], (unsigned long long)s.h[b]);
    if (!ws_tk_last_block(a.sel, s)) return;
    /* the last block: thread t holds bins t*PER .. t*PER+PER-1 */
    unsigned long long c[PER], sum = 0;
#pragma unroll
    for (int j = 0; j < PER; j++) {
        c[j] = __ldcg(&a.hist[tid * PER + j]);
        sum += c[j];
    }
    const int lane = tid & 31, warp = tid / 32;
    unsigned long long incl = sum;
    for (int off = 1; off < 32; off *= 2) {
        const unsigned long long y = __shfl_up_sync(0xFFFFFFFFu, incl, off);
        if (lane >= off) incl += y;
    }
    const unsigned long long rem = __ldcg(&a.sel->remaining);
    if (lane == 31) s.part[0][warp] = incl;
    __syncthreads();
    unsigned long long before = incl - sum;
    for (int v = 0; v < warp; v++) before += s.part[0][v];
    /* exactly one thread holds the bin of the rem-th key (1 <= rem <= the
     * keys matching the prefix) */
    if (before < rem && before + sum >= rem) {
        unsigned long long cum = before;
#pragma unroll
        for (int j = 0; j < PER; j++) {
            if (cum < rem && cum + c[j] >= rem) {
                a.sel->prefix =
                    (unsigned long long)prefix | ((unsigned long long)(tid * PER + j) << shift);
                a.sel->remaining = rem - cum;
            }
            cum += c[j];
        }
    }
#pragma unroll
    for (int j = 0; j < PER; j++) a.hist[tid * PER + j] = 0;
    if (tid == 0) a.sel->ticket = 0;
}

/* A tile's segments: warp w of a block counts and compacts keys
 * [w x WS_TK_SEG, (w + 1) x WS_TK_SEG) of each of its block's tiles, lane
 * l items j x 32 + l; the tile's first lim keys lie inside the row. */
#define WS_TK_SEG (WS_TK_TILE / WS_TK_SELECT_WARPS)

/* Per segment of this block's tiles [lo, hi) (each warp its own segment of
 * every tile): keys better than the k-th (less) and equal to it (eq), into
 * seg_less / seg_eq, and the block's totals into blk_less / blk_eq; the
 * last block turns those into exclusive bases (ranges of blocks per
 * thread, warp scans, then the warps' totals). */
template <typename KB>
__device__ __forceinline__ void ws_tk_count_phase(const KB *keys, size_t n, key_codec codec,
                                                  const ws_tk_select_args &a, size_t lo, size_t hi,
                                                  ws_tk_select_smem &s) {
    constexpr int T = WS_TK_SELECT_THREADS, W = WS_TK_SELECT_WARPS, STEPS = WS_TK_SEG / 32;
    constexpr int LOADS = 64 / (int)sizeof(KB); /* in flight per thread: 64 bytes */
    const int tid = (int)threadIdx.x, lane = tid & 31, warp = tid / 32;
    const KB t = (KB)__ldcg(&a.sel->prefix);
    const unsigned first = (unsigned)(warp * WS_TK_SEG + lane);
    unsigned long long wl = 0, we = 0; /* the warp's totals */
    for (size_t tile = lo; tile < hi; tile++) {
        const size_t base = tile * WS_TK_TILE;
        const unsigned lim = n - base < WS_TK_TILE ? (unsigned)(n - base) : WS_TK_TILE;
        const KB *at = keys + base + first;
        unsigned l = 0, e = 0;
#pragma unroll
        for (int j0 = 0; j0 < STEPS; j0 += LOADS) {
            KB raw[LOADS];
#pragma unroll
            for (int j = j0; j < j0 + LOADS; j++)
                raw[j - j0] = first + j * 32 < lim ? at[j * 32] : 0;
#pragma unroll
            for (int j = j0; j < j0 + LOADS; j++) {
                const KB o = encode(raw[j - j0], codec);
                l += first + j * 32 < lim && o < t;
                e += first + j * 32 < lim && o == t;
            }
        }
        for (int off = 16; off > 0; off /= 2) {
            l += __shfl_xor_sync(0xFFFFFFFFu, l, off);
            e += __shfl_xor_sync(0xFFFFFFFFu, e, off);
        }
        if (lane == 0) {
            a.seg_less[tile * W + warp] = l;
            a.seg_eq[tile * W + warp] = e;
        }
        wl += l;
        we += e;
    }
    if (lane == 0) {
        s.part[0][warp] = wl;
        s.part[1][warp] = we;
    }
    __syncthreads();
    if (tid == 0) {
        unsigned long long bl = 0, be = 0;
        for (int v = 0; v < W; v++) {
            bl += s.part[0][v];
            be += s.part[1][v];
        }
        a.blk_less[blockIdx.x] = bl;
        a.blk_eq[blockIdx.x] = be;
    }
    if (!ws_tk_last_block(a.sel, s)) return;
    const size_t blocks = gridDim.x, per = ws_tk_div_up(blocks, T);
    const size_t b0 = tid * per < blocks ? tid * per : blocks;
    const size_t b1 = b0 + per < blocks ? b0 + per : blocks;
    unsigned long long l = 0, e = 0;
    for (size_t b = b0; b < b1; b++) {
        l += __ldcg(&a.blk_less[b]);
        e += __ldcg(&a.blk_eq[b]);
    }
    unsigned long long il = l, ie = e;
    for (int off = 1; off < 32; off *= 2) {
        const unsigned long long yl = __shfl_up_sync(0xFFFFFFFFu, il, off);
        const unsigned long long ye = __shfl_up_sync(0xFFFFFFFFu, ie, off);
        if (lane >= off) {
            il += yl;
            ie += ye;
        }
    }
    if (lane == 31) {
        s.part[0][warp] = il;
        s.part[1][warp] = ie;
    }
    __syncthreads();
    l = il - l;
    e = ie - e;
    for (int v = 0; v < warp; v++) {
        l += s.part[0][v];
        e += s.part[1][v];
    }
    for (size_t b = b0; b < b1; b++) { /* in place: each read before its write */
        const unsigned long long vl = __ldcg(&a.blk_less[b]), ve = __ldcg(&a.blk_eq[b]);
        a.blk_less[b] = l;
        a.blk_eq[b] = e;
        l += vl;
        e += ve;
    }
    if (tid == 0) a.sel->ticket = 0;
}

/* Writes the k survivors in index order: an item's place is the number of
 * better keys before it plus the number of selected equal keys before it
 * (the first `remaining` equal keys are selected). Every warp walks the
 * block's tiles in order from the block's bases, takes its segment's base
 * from the tile's segment counts (a scan over 8 lanes), and reads its
 * segment only when it holds a survivor; no block barrier. */
template <typename KB, int MODE>
__device__ __forceinline__ void ws_tk_compact_phase(const KB *keys, size_t n, key_codec codec,
                                                    const ws_tk_select_args &a, size_t lo,
                                                    size_t hi) {
    constexpr int W = WS_TK_SELECT_WARPS, STEPS = WS_TK_SEG / 32;
    const int warp = (int)(threadIdx.x / 32), lane = (int)(threadIdx.x & 31);
    const KB t = (KB)__ldcg(&a.sel->prefix);
    const unsigned long long take = __ldcg(&a.sel->remaining);
    unsigned long long tile_lb = __ldcg(&a.blk_less[blockIdx.x]);
    unsigned long long tile_eb = __ldcg(&a.blk_eq[blockIdx.x]);
    const unsigned below = ws_tk_lanemask_lt();
    const unsigned first = (unsigned)(warp * WS_TK_SEG + lane);
    for (size_t tile = lo; tile < hi; tile++) {
        unsigned sl = 0, se = 0; /* lane v < W: segment v's counts */
        if (lane < W) {
            sl = __ldcg(&a.seg_less[tile * W + lane]);
            se = __ldcg(&a.seg_eq[tile * W + lane]);
        }
        unsigned il = sl, ie = se;
        for (int off = 1; off < W; off *= 2) {
            const unsigned yl = __shfl_up_sync(0xFFFFFFFFu, il, off);
            const unsigned ye = __shfl_up_sync(0xFFFFFFFFu, ie, off);
            if (lane >= off) {
                il += yl;
                ie += ye;
            }
        }
        const unsigned my_l = __shfl_sync(0xFFFFFFFFu, sl, warp);
        const unsigned my_e = __shfl_sync(0xFFFFFFFFu, se, warp);
        unsigned long long lb = tile_lb + __shfl_sync(0xFFFFFFFFu, il, warp) - my_l;
        unsigned long long eb = tile_eb + __shfl_sync(0xFFFFFFFFu, ie, warp) - my_e;
        tile_lb += __shfl_sync(0xFFFFFFFFu, il, W - 1);
        tile_eb += __shfl_sync(0xFFFFFFFFu, ie, W - 1);
        if (my_l == 0 && (my_e == 0 || eb >= take)) continue; /* the same for the warp */
        const size_t base = tile * WS_TK_TILE;
        const unsigned lim = n - base < WS_TK_TILE ? (unsigned)(n - base) : WS_TK_TILE;
        const KB *at = keys + base + first;
#pragma unroll
        for (int j = 0; j < STEPS; j++) {
            const bool in = first + j * 32 < lim;
            const KB raw = in ? at[j * 32] : 0, o = encode(raw, codec);
            const bool is_l = in && o < t, is_e = in && o == t;
            const unsigned ml = __ballot_sync(0xFFFFFFFFu, is_l);
            const unsigned me = __ballot_sync(0xFFFFFFFFu, is_e);
            const unsigned long long l_before = lb + __popc(ml & below);
            const unsigned long long e_before = eb + __popc(me & below);
            if (is_l || (is_e && e_before < take))
                ws_tk_emit<KB, MODE>(a.ck, a.ci, l_before + (e_before < take ? e_before : take),
                                     raw, o, base + first + j * 32);
            lb += __popc(ml);
            eb += __popc(me);
        }
    }
}

/* The exact select of one row's top k by every block of a cooperative
 * launch of at most the co-resident blocks, at most one per tile: init,
 * one histogram pass per digit, the segment counts (and the blocks'
 * bases), the compaction, separated by grid barriers. Block b owns tiles
 * [tiles x b / grid, tiles x (b + 1) / grid) of the count and compaction,
 * so the blocks' bases follow block order. */
template <typename KB, int MODE>
__device__ __forceinline__ void ws_tk_select_run(const KB *keys, size_t n, key_codec codec,
                                                 const ws_tk_select_args &a, ws_tk_select_smem &s) {
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    if (blockIdx.x == 0) {
        if (threadIdx.x == 0) {
            a.sel->prefix = 0;
            a.sel->remaining = a.k;
            a.sel->ticket = 0;
        }
        for (int d = threadIdx.x; d < WS_TK_BINS; d += WS_TK_SELECT_THREADS) a.hist[d] = 0;
    }
    grid.sync();
    for (int shift = 8 * (int)sizeof(KB); shift > 0;) {
        const int width = shift < WS_TK_DIGIT_BITS ? shift : WS_TK_DIGIT_BITS;
        shift -= width;
        ws_tk_digit_pass<KB>(keys, n, codec, a, shift, width, s);
        grid.sync();
    }
    const size_t lo = a.tiles * blockIdx.x / gridDim.x;
    const size_t hi = a.tiles * (blockIdx.x + 1) / gridDim.x;
    ws_tk_count_phase<KB>(keys, n, codec, a, lo, hi, s);
    grid.sync();
    ws_tk_compact_phase<KB, MODE>(keys, n, codec, a, lo, hi);
}

/* The radix path's select: one cooperative launch (ws_tk_select_run). */
template <typename KB, int MODE>
__global__ void __launch_bounds__(WS_TK_SELECT_THREADS,
                                  ws_min_blocks_fit(WS_TK_SELECT_THREADS, WS_TK_SELECT_MIN_BLOCKS))
    ws_tk_select_kernel(const KB *keys, size_t n, key_codec codec, ws_tk_select_args a) {
    __shared__ ws_tk_select_smem s;
    ws_tk_select_run<KB, MODE>(keys, n, codec, a, s);
}

/*=== filter path (one row at a time) ===*/

/* Appends the items of a warp that pass (c of this lane's, in pass[];
 * item e's index ix(e)) to the candidates: one atomicAdd per warp
 * reserves their places; all are counted, the first cap stored. Whole
 * warps call it. */
template <typename KB, int MODE, int M, typename Ix>
__device__ __forceinline__ void
ws_tk_append(ws_tk_filter *fl, void *ck, void *ci, unsigned long long cap, int lane, unsigned c,
             const bool (&pass)[M], const KB (&o)[M], const Ix &ix) {
    if (!__any_sync(0xFFFFFFFFu, c != 0)) return;
    unsigned incl = c;
    for (int off = 1; off < 32; off *= 2) {
        const unsigned y = __shfl_up_sync(0xFFFFFFFFu, incl, off);
        if (lane >= off) incl += y;
    }
    unsigned long long base = 0;
    if (lane == 31) base = atomicAdd(&fl->count, (unsigned long long)incl);
    base = __shfl_sync(0xFFFFFFFFu, base, 31);
    unsigned long long at = base + (incl - c);
#pragma unroll
    for (int e = 0; e < M; e++)
        if (pass[e]) {
            if (at < cap) ws_tk_emit<KB, MODE>(ck, ci, at, o[e], o[e], ix(e));
            at++;
        }
}

/* The ranked read's append (ws_tk_filter_kernel<..., true>): this lane's
 * items whose bit is set in pm (item e: index ix(e) in the row keys) go
 * to their buckets of nb: to the block's buffer in shared memory, PB a
 * bucket (buf[j x PB + i], counted in cnt[j]), flushed after the read
 * (ws_tk_flush_ranked); past PB, to the bucket itself, with an atomicAdd
 * on its count fl->bn[j] (bucket j's i-th at j x cap + i; a bucket stores
 * its first cap, more is a miss: the row's count is the buckets' sum).
 * Only a shared atomic is waited for in the read: a global one's round
 * trip for each candidate made the warps with several of them late, and
 * the grid barrier waits for the last (bench/NOTES.md, twenty-ninth
 * session). The key is read again (from L1: just loaded), so the step's
 * ordered keys need not stay live through the loop. th: the bounds in
 * shared memory. */
template <typename KB, int MODE, unsigned PB, typename Ix>
__device__ __forceinline__ void
ws_tk_append_ranked(ws_tk_filter *fl, const unsigned long long *th, unsigned nb, unsigned *cnt,
                    ws_tk_word<KB> *buf, void *ck, void *ci, unsigned long long cap, unsigned pm,
                    const KB *keys, key_codec codec, const Ix &ix) {
#pragma unroll 1
    while (pm) {
        const int e = __ffs((int)pm) - 1;
        pm &= pm - 1;
        const unsigned long long at_row = ix(e);
        const KB oe = encode(__ldg(keys + at_row), codec);
        unsigned j = 0;
#pragma unroll
        for (int i = 0; i + 1 < WS_TK_CAND_BUCKETS; i++)
            j += (unsigned)i + 1 < nb && oe > (KB)th[i];
        const unsigned lp = atomicAdd(&cnt[j], 1u);
        if (lp < PB) {
            buf[j * PB + lp] = ws_tk_pack<ws_tk_word<KB>>(oe, (uint32_t)at_row);
        } else {
            const unsigned long long at = atomicAdd(&fl->bn[j], 1ull);
            if (at < cap) ws_tk_emit<KB, MODE>(ck, ci, j * cap + at, oe, oe, at_row);
        }
    }
}

/* The block's buffered candidates (ws_tk_append_ranked) to their buckets:
 * one atomicAdd a bucket reserves their places. Every thread of the block
 * calls it after its appends; base: nb words of shared memory. */
template <typename KB, int MODE, unsigned PB>
__device__ __forceinline__ void
ws_tk_flush_ranked(ws_tk_filter *fl, unsigned nb, const unsigned *cnt, const ws_tk_word<KB> *buf,
                   unsigned long long *base, void *ck, void *ci, unsigned long long cap) {
    const unsigned t = threadIdx.x;
    __syncthreads();
    if (t < nb) {
        const unsigned c = cnt[t] < PB ? cnt[t] : PB;
        base[t] = c ? atomicAdd(&fl->bn[t], (unsigned long long)c) : 0;
    }
    __syncthreads();
    for (unsigned i = t; i < nb * PB; i += blockDim.x) {
        const unsigned j = i / PB, q = i % PB;
        if (q >= cnt[j]) continue;
        const unsigned long long at = base[j] + q;
        const ws_tk_word<KB> w = buf[i];
        const KB o = ws_tk_word_key<KB>(w);
        if (at < cap) ws_tk_emit<KB, MODE>(ck, ci, j * cap + at, o, o, (uint32_t)w);
    }
}

/* The ranked read's finish: the best k of the row's candidates, in order,
 * written by the read's own grid after its barrier instead of a launch of
 * their own. A candidate's rank in the row is the candidates of the
 * buckets before its own plus those of its own below it (the buckets are
 * consecutive ranges of the order), so only the buckets that start before
 * rank k are read: their m candidates are dealt to the blocks, up to
 * WS_TK_RANK_ROUND at a time (x[], shared memory), and every thread of a
 * block reads PER words of the bucket a chunk (from L2: written in this
 * launch) and counts them (h[], shared atomics) until every candidate of
 * the round counts at least k words below it: most do after the first
 * chunk when k is below a bucket's size, but a candidate among the best k
 * reads its whole bucket. A round of up to WS_TK_RANK_SORT_MIN counts each
 * candidate against every word (a warp's sum each). A larger one is first
 * sorted by one warp; a word's place among the candidates still in (how
 * many are not above it: a binary search) is where it is counted, so a
 * candidate's count is the prefix sum of h up to its place and a word
 * costs a few compares whatever the round's size: the big buckets of an
 * unlucky sample (a few sample gaps) had made the read's grid spend more
 * time on the ranking than on the read (bench/NOTES.md, thirty-seventh
 * session). Counts only grow and are monotone in the order, so the
 * candidates still in are then a prefix of x. Blocks start at different
 * chunks, so their first reads spread over the bucket. A candidate whose
 * rank is below k is written there. Bucket j holds s_n[j] words from
 * j x stride (ck, and ci for 64-bit keys). Every thread of the block calls
 * it. */
template <typename KB, int MODE, unsigned PER>
__device__ __forceinline__ void
ws_tk_rank_buckets(const unsigned long long *ck, const uint32_t *ci, const unsigned long long *s_n,
                   unsigned nb, size_t stride, unsigned long long k, size_t out_base,
                   key_codec codec, const ws_tk_outputs &out, ws_tk_word<KB> *x, unsigned *h) {
    using W = ws_tk_word<KB>;
    constexpr unsigned T = WS_TK_FILTER_THREADS, CH = PER * T, RC = WS_TK_RANK_ROUND;
    static_assert(RC == 32, "one warp sorts a round, a lane a candidate");
    __shared__ unsigned s_in;
    unsigned long long m = 0;
    for (unsigned j = 0; j < nb && m < k; j++) m += s_n[j];
    const unsigned long long per = (m + gridDim.x - 1) / gridDim.x;
    const unsigned long long q0 = blockIdx.x * per, q1 = q0 + per < m ? q0 + per : m;
    const unsigned t = threadIdx.x;
    unsigned long long below = 0;
    for (unsigned j = 0; j < nb && below < q1; below += s_n[j], j++) {
        const unsigned long long nj = s_n[j];
        const unsigned long long a = q0 > below ? q0 : below;
        const unsigned long long b = q1 < below + nj ? q1 : below + nj;
        const unsigned long long need = k - below; /* below < k: rank need is out */
        const size_t at = j * stride;
        const auto word = [&](unsigned long long i) -> W {
            if constexpr (MODE == 1)
                return (W)__ldcg(&ck[at + i]);
            else
                return ws_tk_pack<W>((KB)__ldcg(&ck[at + i]), __ldcg(&ci[at + i]));
        };
        const unsigned long long chunks = (nj + CH - 1) / CH;
        for (unsigned long long ra = a; ra < b; ra += RC) { /* block-uniform */
            const unsigned R = b - ra < RC ? (unsigned)(b - ra) : RC;
            const bool sorted = R > WS_TK_RANK_SORT_MIN;
            if (t < 32) { /* the round's candidates (sorted: padding last) */
                W w = t < R ? word(ra - below + t) : ~(W)0;
                if (sorted) {
                    warp_items<KB, no_value, uint32_t, 1> it;
                    it.k[0] = ws_tk_word_key<KB>(w);
                    it.p[0] = (uint32_t)w;
                    warpsort::warp_sort_registers<32>(it, (int)t);
                    w = ws_tk_pack<W>(it.k[0], it.p[0]);
                }
                x[t] = w;
                h[t] = 0;
            }
            __syncthreads();
            /* the candidates still in (sorted: a prefix of x), and lane t's
             * count of x[t] so far */
            unsigned in = R == 32 ? 0xFFFFFFFFu : (1u << R) - 1, c = 0;
            for (unsigned long long cc = 0; cc < chunks && in; cc++) { /* in: block-uniform */
                const unsigned long long c0 = (blockIdx.x + cc) % chunks * CH;
                W w[PER];
#pragma unroll
                for (unsigned u = 0; u < PER; u++) {
                    const unsigned long long i = c0 + u * T + t;
                    w[u] = i < nj ? word(i) : ~(W)0; /* above every candidate */
                }
                const unsigned act = (unsigned)__popc(in);
                if (sorted) {
#pragma unroll
                    for (unsigned u = 0; u < PER; u++) {
                        unsigned p = 0; /* the candidates in not above w[u] */
#pragma unroll
                        for (unsigned s = RC; s >= 1; s /= 2)
                            if (p + s <= act && x[p + s - 1] <= w[u]) p += s;
                        if (p < act) atomicAdd(&h[p], 1u); /* below x[p .. act) */
                    }
                } else {
                    for (unsigned left = in; left; left &= left - 1) { /* each one in */
                        const unsigned q = (unsigned)__ffs((int)left) - 1;
                        const W xq = x[q];
                        unsigned n = 0;
#pragma unroll
                        for (unsigned u = 0; u < PER; u++) n += w[u] < xq;
                        n = warpsort::warp_reduce<32>(n, warpsort::plus_op{});
                        if ((t & 31) == 0 && n) atomicAdd(&h[q], n);
                    }
                }
                __syncthreads();
                if (t < 32) {
                    c = sorted ? warpsort::warp_inclusive_scan(t < act ? h[t] : 0u,
                                                               warpsort::plus_op{})
                               : h[t];
                    const unsigned still = __ballot_sync(0xFFFFFFFFu, (in >> t & 1) && c < need);
                    if (t == 0) s_in = still;
                }
                __syncthreads();
                in = s_in;
            }
            if (t < 32 && (in >> t & 1))
                ws_tk_put(out, out_base + below + c, decode(ws_tk_word_key<KB>(x[t]), codec),
                          (uint32_t)x[t]);
            __syncthreads(); /* x[] and h[] read before the next round's */
        }
    }
}

/* The one full read: every key not above the threshold (ordered bits <=
 * t) becomes a candidate, so when there are at least k of them they hold
 * the top k with its ties resolved (all keys equal to a candidate's are
 * candidates). 16-byte loads where the keys are aligned to their size
 * (scalar head and tail), warp-uniform grid-stride steps of U vectors per
 * lane. One cooperative launch (the select's shape): after a grid
 * barrier, when the filter missed (fewer than k or more than cap passed),
 * the same blocks run the exact select (ws_tk_select_run) into the
 * candidates instead, so the miss costs no launch of its own and the hit
 * only the barrier. RANKED: the candidates go to their buckets, and the
 * same grid then writes the best k (ws_tk_rank_buckets; on a miss after
 * the select's k, behind one more barrier). */
template <typename KB, int MODE, bool RANKED>
__global__ void __launch_bounds__(WS_TK_SELECT_THREADS,
                                  ws_min_blocks_fit(WS_TK_SELECT_THREADS, WS_TK_FILTER_MIN_BLOCKS))
    ws_tk_filter_kernel(const KB *keys, size_t n, key_codec codec, ws_tk_filter *fl,
                        ws_tk_select_args a, size_t out_base, ws_tk_outputs out) {
    static_assert(WS_TK_FILTER_THREADS == WS_TK_SELECT_THREADS, "the select's blocks");
    __shared__ ws_tk_select_smem s;
    __shared__ unsigned long long s_th[RANKED ? WS_TK_CAND_BUCKETS : 1];
    void *const ck = a.ck, *const ci = a.ci;
    constexpr int V = 16 / (int)sizeof(KB);
    constexpr int U = WS_TK_FILTER_UNROLL;
    const int lane = (int)(threadIdx.x & 31);
    const size_t warp = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const size_t warps = (size_t)gridDim.x * blockDim.x / 32;
    /* head: the keys before the first 16-byte boundary (all of them when
     * the keys are not aligned to their size) */
    size_t head = n;
    if ((uintptr_t)keys % sizeof(KB) == 0) {
        head = ((16 - (uintptr_t)keys % 16) % 16) / sizeof(KB);
        if (head > n) head = n;
    }
    const size_t nvec = (n - head) / V;
    const KB *body = keys + head;
    if constexpr (!RANKED) ws_pdl_release(); /* the candidate block's launch (pdl.cuh) */
    const KB t = (KB)fl->t;
    const unsigned long long cap = fl->cap;
    const unsigned nb = RANKED ? fl->nb : 1u;
    /* RANKED: the appends' buffer, PB words a bucket */
    using W = ws_tk_word<KB>;
    constexpr unsigned PB = WS_TK_RANK_APPEND_PB;
    __shared__ W s_buf[RANKED ? WS_TK_CAND_BUCKETS * PB : 1];
    __shared__ unsigned s_cnt[WS_TK_CAND_BUCKETS];
    __shared__ unsigned long long s_base[WS_TK_CAND_BUCKETS];
    if constexpr (RANKED) {
        if (threadIdx.x < nb) s_th[threadIdx.x] = fl->th[threadIdx.x];
        if (threadIdx.x < WS_TK_CAND_BUCKETS) s_cnt[threadIdx.x] = 0;
        __syncthreads();
    }
    for (size_t b0 = warp * 32 * U; b0 < nvec; b0 += warps * 32 * U) {
        ws_tk_vec<KB> v[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const size_t j = b0 + (size_t)u * 32 + lane;
            if (j < nvec) v[u] = ws_tk_load_vec(body + j * V);
        }
        bool pass[U * V];
        KB o[U * V];
        unsigned c = 0, pm = 0;
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
            for (int e = 0; e < V; e++) {
                const size_t j = b0 + (size_t)u * 32 + lane;
                o[u * V + e] = j < nvec ? encode(v[u].x[e], codec) : (KB)0;
                pass[u * V + e] = j < nvec && o[u * V + e] <= t;
                c += pass[u * V + e];
                if constexpr (RANKED) pm |= (unsigned)pass[u * V + e] << (u * V + e);
            }
        const auto ix = [&](int e) -> unsigned long long {
            return head + (b0 + (size_t)(e / V) * 32 + lane) * V + (size_t)(e % V);
        };
        if constexpr (RANKED)
            ws_tk_append_ranked<KB, MODE, PB>(fl, s_th, nb, s_cnt, s_buf, ck, ci, cap, pm, keys,
                                              codec, ix);
        else
            ws_tk_append<KB, MODE>(fl, ck, ci, cap, lane, c, pass, o, ix);
    }
    /* scalar items: the head, then the tail after the vectors */
    const size_t tail = head + nvec * V, ns = head + (n - tail);
    for (size_t q0 = warp * 32; q0 < ns; q0 += warps * 32) {
        const size_t q = q0 + lane;
        bool pass[1] = {false};
        KB o[1] = {0};
        const unsigned long long at = q < head ? q : tail + (q - head);
        const auto ix = [at](int) { return at; };
        if (q < ns) {
            o[0] = encode(keys[at], codec);
            pass[0] = o[0] <= t;
        }
        if constexpr (RANKED)
            ws_tk_append_ranked<KB, MODE, PB>(fl, s_th, nb, s_cnt, s_buf, ck, ci, cap,
                                              pass[0] ? 1u : 0u, keys, codec, ix);
        else
            ws_tk_append<KB, MODE>(fl, ck, ci, cap, lane, pass[0] ? 1u : 0u, pass, o, ix);
    }
    if constexpr (RANKED)
        ws_tk_flush_ranked<KB, MODE, PB>(fl, nb, s_cnt, s_buf, s_base, ck, ci, cap);
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    grid.sync();
    if constexpr (!RANKED) {
        /* the count from L2: this block's L1 may hold the line from reading t */
        const unsigned long long count = __ldcg(&fl->count);
        if (count < a.k || count > cap) ws_tk_select_run<KB, MODE>(keys, n, codec, a, s);
    } else {
        /* the buckets' counts: other SMs' atomics, from L2 */
        __shared__ unsigned long long s_n[WS_TK_CAND_BUCKETS];
        if (threadIdx.x < nb) s_n[threadIdx.x] = __ldcg(&fl->bn[threadIdx.x]);
        __syncthreads();
        unsigned long long count = 0;
        for (unsigned j = 0; j < nb; j++) count += s_n[j];
        unsigned nr = nb;
        if (count < a.k || count > cap) { /* the whole grid alike */
            /* the select's k, in index order, at 0 .. k: one bucket */
            ws_tk_select_run<KB, MODE>(keys, n, codec, a, s);
            grid.sync();
            if (threadIdx.x == 0) s_n[0] = a.k;
            __syncthreads();
            nr = 1;
        }
        __shared__ W s_x[WS_TK_RANK_ROUND];
        __shared__ unsigned s_h[WS_TK_RANK_ROUND];
        ws_tk_rank_buckets<KB, MODE, WS_TK_RANK_CHUNK_PER>((const unsigned long long *)ck,
                                                           (const uint32_t *)ci, s_n, nr, cap, a.k,
                                                           out_base, codec, out, s_x, s_h);
    }
}

/*=== on-chip narrowing (the filter's candidate block, the row blocks) ===*/

/* Significant bits of x (0 for 0). */
__device__ __forceinline__ int ws_tk_width(uint64_t x) {
    return x ? 64 - __clzll((long long)x) : 0;
}
__device__ __forceinline__ int ws_tk_width(ws_tk_u128 x) {
    const uint64_t hi = (uint64_t)(x >> 64);
    return hi ? 128 - __clzll((long long)hi) : ws_tk_width((uint64_t)x);
}

/* Shared memory of a narrowing by a block of T threads: one digit's bins,
 * the scan's warp sums, the OR of every word XOR the first (low and high
 * 64 bits), the cut bin, the words before it and in it, the survivors
 * placed. The block zeroes orx and at, then a barrier, before narrowing. */
template <int T>
struct ws_tk_narrow_smem {
    __align__(16) unsigned h[WS_TK_BINS]; /* 16: row blocks overlay words on it */
    unsigned part[T / 32];
    unsigned long long orx[2];
    unsigned bin, before, cut, at;
};

/* Where a narrowing ended: the s survivors are the words not above
 * limit. */
template <typename W>
struct ws_tk_cut {
    W limit;
    unsigned s;
};

/* The best k (k <= n) of n unique words by an exact radix select over
 * their bits, narrowed until at most keep (keep >= k) survive. item(b, u)
 * gives this thread's word j = b + u x T + threadIdx.x of the block's n
 * (u < L, a constant; b a multiple of T x L), anything for j >= n
 * (ignored); w0 is word 0. An OR pass finds the highest
 * bit where the words differ (the bits above it are common), then each
 * pass histograms the next digit of up to 11 bits among the words sharing
 * the prefix so far, and the bin holding the k-th word becomes the cut:
 * the words below it are kept, the cut bin's are refined by the next
 * digit, until the kept words and the cut bin are at most keep (the words
 * are unique, so at the last digit the cut bin holds one word: ties never
 * stop the narrowing, they only reach the index bits). Every thread of
 * the block calls it; it ends after a barrier. With have_x, x is this
 * thread's part of the OR pass (words XOR w0, any share of them as long
 * as the block's threads cover all n), found as the keys were loaded, and
 * the pass over the words is skipped. */
template <typename W, int T, int L, typename Item>
__device__ __forceinline__ ws_tk_cut<W> ws_tk_narrow(ws_tk_narrow_smem<T> &sm, const Item &item,
                                                     unsigned n, unsigned k, unsigned keep, W w0,
                                                     bool have_x = false, W x = 0) {
    constexpr int WBITS = 8 * (int)sizeof(W), PER = WS_TK_BINS / T;
    static_assert(WS_TK_BINS % T == 0, "whole bins per thread");
    const int t = (int)threadIdx.x, lane = t & 31, warp = t / 32;
    ws_tk_cut<W> c = {~(W)0, n};
    if (n <= keep) return c;
    if (!have_x)
        for (unsigned b = 0; b < n; b += (unsigned)(T * L)) {
#pragma unroll
            for (int u = 0; u < L; u++)
                if (b + (unsigned)(u * T + t) < n) x |= item(b, u) ^ w0;
        }
#pragma unroll
    for (int h = 0; h < WBITS / 64; h++) {
        unsigned long long y = (unsigned long long)(x >> (64 * h));
#pragma unroll
        for (int m = 16; m >= 1; m /= 2) y |= __shfl_xor_sync(0xFFFFFFFFu, y, m);
        if (lane == 0 && y) atomicOr(&sm.orx[h], y);
    }
    __syncthreads();
    W orx = (W)sm.orx[0];
    if (WBITS > 64) orx |= (W)sm.orx[1] << (WBITS > 64 ? 64 : 0);
    /* unique words differ somewhere (n > keep >= 1) */
    int top = ws_tk_width(orx);
    W prefix = top == WBITS ? 0 : (w0 >> top) << top;
    unsigned rem = k, kept = 0; /* the k-th word's rank among the prefix's */
    unsigned s = n;
    while (s > keep && top > 0) {
        const int width = top < WS_TK_DIGIT_BITS ? top : WS_TK_DIGIT_BITS;
        const int shift = top - width;
        const unsigned mask = (1u << width) - 1;
        /* the words sharing the prefix: w & high == prefix */
        const W high = top >= WBITS ? (W)0 : ~(W)0 << top;
        for (int q = t; q < WS_TK_BINS; q += T) sm.h[q] = 0;
        __syncthreads();
        for (unsigned b = 0; b < n; b += (unsigned)(T * L)) {
#pragma unroll
            for (int u = 0; u < L; u++) {
                const unsigned j = b + (unsigned)(u * T + t);
                const W w = item(b, u);
                const bool in = j < n && (w & high) == prefix;
                /* plain adds: a warp's adds to one counter serialise, but
                 * __match_any_sync to combine them costs more than that
                 * on any input (bench/NOTES.md) */
                if (in) atomicAdd(&sm.h[(unsigned)(w >> shift) & mask], 1u);
            }
        }
        __syncthreads();
        unsigned sum = 0;
#pragma unroll
        for (int q = 0; q < PER; q++) sum += sm.h[t * PER + q];
        unsigned incl = sum;
#pragma unroll
        for (int off = 1; off < 32; off *= 2) {
            const unsigned y = __shfl_up_sync(0xFFFFFFFFu, incl, off);
            if (lane >= off) incl += y;
        }
        if (lane == 31) sm.part[warp] = incl;
        __syncthreads();
        unsigned before = incl - sum;
        for (int v = 0; v < warp; v++) before += sm.part[v];
        /* exactly one thread holds the bin of the rem-th word (1 <= rem <=
         * the words sharing the prefix) */
        if (before < rem && before + sum >= rem) {
            int q = t * PER;
            while (before + sm.h[q] < rem) before += sm.h[q++];
            sm.bin = (unsigned)q;
            sm.before = before;
            sm.cut = sm.h[q];
        }
        __syncthreads();
        kept += sm.before;
        rem -= sm.before;
        s = kept + sm.cut;
        prefix |= (W)sm.bin << shift;
        top = shift;
        __syncthreads(); /* every read precedes the next digit's writes */
    }
    c.limit = top >= WBITS ? ~(W)0 : prefix | ~(~(W)0 << top);
    c.s = s;
    return c;
}

/* Stores the survivors of a narrowing, in any order, at dst[0 .. min(s,
 * cap)) (sm.at zeroed before the narrowing); ends after a barrier. */
template <typename W, int T, int L, typename Item>
__device__ __forceinline__ void ws_tk_collect(ws_tk_narrow_smem<T> &sm, const Item &item,
                                              unsigned n, const ws_tk_cut<W> &c, W *dst,
                                              unsigned cap) {
    const int t = (int)threadIdx.x;
    for (unsigned b = 0; b < n; b += (unsigned)(T * L)) {
        const bool full = b + (unsigned)(T * L) <= n;
#pragma unroll
        for (int u = 0; u < L; u++) {
            const unsigned j = b + (unsigned)(u * T + t);
            const W w = item(b, u);
            const bool in = (full || j < n) && w <= c.limit;
            const unsigned ball = __ballot_sync(0xFFFFFFFFu, in);
            if (!ball) continue;
            const unsigned at = ws_tk_warp_slot(&sm.at, ball);
            if (in && at < cap) dst[at] = w;
        }
    }
    __syncthreads();
}

/* The warps' bars of ws_tk_thread_bar. */
template <typename KB, int T>
struct ws_tk_bars {
    KB k[T / 32];
    uint32_t p[T / 32];
};

/* A cheap limit for a narrowing by a block of T threads, for k <= T,
 * from each thread's best word (bk, bp) among the row's keys it was dealt
 * (any deal; a thread dealt none passes the sentinel with index ~0): with
 * r = ceil(k / warps), the worst of the warps' r-th best thread bests, as
 * a word. Every warp has r threads whose best word is not above it, so at
 * least k words are not (the words are unique; a sentinel bar keeps
 * every key); on keys in random order about 2k are, at most about 3.3k
 * (bench/NOTES.md has the simulation). Any order of keys stays correct:
 * the caller narrows exactly when more than it holds pass. A warp finds
 * its r-th best in r rounds of a min-reduction, the winner of each round
 * retiring its best, or for r > 4 by sorting its 32 bests: a few hundred
 * instructions a warp where the narrowing's OR pass, digit histograms and
 * scans cost thousands. Every thread calls it; it ends after a barrier. */
template <typename KB, typename W, int T>
__device__ __forceinline__ W ws_tk_thread_bar(ws_tk_bars<KB, T> &bars, KB bk, uint32_t bp,
                                              unsigned k) {
    constexpr int WARPS = T / 32;
    static_assert(WARPS >= 1 && WARPS <= 32 && (WARPS & (WARPS - 1)) == 0,
                  "a butterfly over the warps");
    const int t = (int)threadIdx.x, lane = t & 31, warp = t / 32;
    const unsigned r = (k + WARPS - 1) / WARPS;
    KB mk = bk;
    uint32_t mp = bp;
    if (r > 4) {
        /* past four rounds the warp's network (15 steps) is cheaper
         * (measured: bench/NOTES.md); lane i then holds the i-th best */
        warp_items<KB, no_value, uint32_t, 1> it;
        it.k[0] = bk;
        it.p[0] = bp;
        warpsort::warp_sort_registers<32>(it, lane);
        mk = warpsort::detail::shfl_idx(it.k[0], (int)r - 1, 32);
        mp = warpsort::detail::shfl_idx(it.p[0], (int)r - 1, 32);
    } else
        for (unsigned round = 0; round < r; round++) {
            mk = bk;
            mp = bp;
#pragma unroll
            for (int m = 16; m >= 1; m /= 2) {
                const KB ok = warpsort::shfl_xor(mk, m);
                const uint32_t op = warpsort::shfl_xor(mp, m);
                if (ws_tk_less(ok, op, mk, mp)) {
                    mk = ok;
                    mp = op;
                }
            }
            if (bp == mp) { /* this lane's best won: retire it */
                bk = sentinel<KB>();
                bp = 0xFFFFFFFFu; /* above every position */
            }
        }
    if (lane == 0) {
        bars.k[warp] = mk;
        bars.p[warp] = mp;
    }
    __syncthreads();
    /* the worst of the warps' bars: lane l reads bar l mod WARPS, and a
     * butterfly over the low bits leaves the worst in every lane */
    KB wk = bars.k[lane % WARPS];
    uint32_t wp = bars.p[lane % WARPS];
#pragma unroll
    for (int m = WARPS / 2; m >= 1; m /= 2) {
        const KB ok = warpsort::shfl_xor(wk, m);
        const uint32_t op = warpsort::shfl_xor(wp, m);
        if (ws_tk_less(wk, wp, ok, op)) {
            wk = ok;
            wp = op;
        }
    }
    return ws_tk_pack<W>(wk, wp);
}

/* Sorts the s survivors at sw[0 .. s) (k <= s <= 32 x SI) with one warp's
 * network, as (key, index) items, and writes the first k to results from
 * out_base on. Called by one whole warp. */
template <typename KB, int SI, typename W>
__device__ __forceinline__ void ws_tk_warp_finish_n(const W *sw, unsigned s, unsigned k,
                                                    size_t out_base, key_codec codec,
                                                    const ws_tk_outputs &out) {
    const int lane = (int)threadIdx.x & 31;
    warp_items<KB, no_value, uint32_t, SI> it;
#pragma unroll
    for (int r = 0; r < SI; r++) {
        const unsigned e = (unsigned)(r * 32 + lane);
        const W w = e < s ? sw[e] : ~(W)0;
        it.k[r] = ws_tk_word_key<KB>(w);
        it.p[r] = (uint32_t)w;
    }
    warpsort::warp_sort_registers<32 * SI>(it, lane * SI);
#pragma unroll
    for (int r = 0; r < SI; r++) {
        const unsigned j = (unsigned)(lane * SI + r);
        if (j < k) ws_tk_put(out, out_base + j, decode(it.k[r], codec), it.p[r]);
    }
}
/* The same, not inlined: the network of 512 64-bit keys and their
 * indices was most of the code, and of the compile time, of each of the
 * four kernels that inlined it (three row blocks, the candidates); it runs
 * once a row on one warp, so the call costs nothing measurable. Smaller
 * networks stay inlined: as calls they slowed the 64-bit row blocks
 * (bench/NOTES.md, forty-sixth session). */
template <typename KB, int SI, typename W>
__device__ __noinline__ void ws_tk_warp_finish_call(const W *sw, unsigned s, unsigned k,
                                                    size_t out_base, key_codec codec,
                                                    ws_tk_outputs out) {
    ws_tk_warp_finish_n<KB, SI>(sw, s, k, out_base, codec, out);
}
/* The same with the smallest network that holds s (s <= 32 x SI). */
template <typename KB, int SI, typename W>
__device__ __forceinline__ void ws_tk_warp_finish(const W *sw, unsigned s, unsigned k,
                                                  size_t out_base, key_codec codec,
                                                  const ws_tk_outputs &out) {
    if constexpr (SI > 1) {
        if (s <= 16u * SI) {
            ws_tk_warp_finish<KB, SI / 2>(sw, s, k, out_base, codec, out);
            return;
        }
    }
    if constexpr (sizeof(KB) == 8 && SI >= 16)
        ws_tk_warp_finish_call<KB, SI>(sw, s, k, out_base, codec, out);
    else
        ws_tk_warp_finish_n<KB, SI>(sw, s, k, out_base, codec, out);
}

/* The rank of word w among the s unique words at sw (how many are
 * smaller), counted by the G lanes of its group (G a power of two up to
 * 32, groups aligned in the warp; lane g of the group takes words g,
 * g + G, ...): the count in every lane of the group. Whole warps call it,
 * with the same s and G. */
template <typename W>
__device__ __forceinline__ unsigned ws_tk_rank_in(const W *sw, unsigned s, W w, unsigned G,
                                                  unsigned g) {
    unsigned c = 0;
    for (unsigned j = g; j < s; j += G) c += sw[j] < w;
    for (unsigned m = G / 2; m > 0; m /= 2) c += __shfl_xor_sync(0xFFFFFFFFu, c, (int)m);
    return c;
}

/* Lanes per word when T threads rank s <= T words: the most, up to 32,
 * with s x G <= T. */
__device__ __forceinline__ unsigned ws_tk_rank_group(unsigned s, unsigned T) {
    unsigned G = 32;
    while (G > 1 && s * G > T) G /= 2;
    return G;
}

/* Sorts the s unique words at sw[0 .. s) (k <= s <= T) by ranking each
 * among them, and writes the first k to results from out_base on. For a
 * few hundred words cheaper than a tile of T (no network: one pass of
 * broadcast reads, no barrier) and than one warp's network (latency on
 * one warp). Every thread of the block calls it. */
template <typename KB, int T, typename W>
__device__ __forceinline__ void ws_tk_rank_finish(const W *sw, unsigned s, unsigned k,
                                                  size_t out_base, key_codec codec,
                                                  const ws_tk_outputs &out) {
    const unsigned G = ws_tk_rank_group(s, T), t = threadIdx.x, i = t / G;
    const W w = i < s ? sw[i] : ~(W)0;
    const unsigned r = ws_tk_rank_in(sw, s, w, G, t % G);
    if (i < s && t % G == 0 && r < k)
        ws_tk_put(out, out_base + r, decode(ws_tk_word_key<KB>(w), codec), (uint32_t)w);
}

/* Picks the threshold: the rank-th smallest (1-based) ordered key of a
 * sample of WS_TK_SAMPLE keys at fixed positions (j * n / WS_TK_SAMPLE),
 * by a radix select over the sample held in registers (11-bit digits,
 * block 0), or the last key of the digit bin that holds it once that bin
 * holds no other sample key: then the keys the threshold adds are about
 * one sample gap more (the capacity allows for three), and the passes
 * left are saved (on one SM they are most of this kernel's time). One
 * cooperative launch: the grid gathers the sample (ordered) into samp,
 * and after the grid barrier block 0 selects and the others are done.
 * Resets the row's counts and records k and cap, and the candidates'
 * buckets (ws_tk_filter), up to max_buckets of them: their bounds are
 * the sample keys of ranks ceil(j x rank / nb), j = 1 .. nb - 1, nb =
 * min(rank, max_buckets), so each holds about rank / nb sample gaps. The
 * positions and the select depend on nothing but the row, so the path a
 * row takes is deterministic. */
template <typename KB>
__global__ void __launch_bounds__(WS_TK_SAMPLE_THREADS)
    ws_tk_sample_kernel(const KB *keys, size_t n, key_codec codec, unsigned rank,
                        unsigned long long k, unsigned long long cap, unsigned max_buckets,
                        KB *samp, ws_tk_filter *fl) {
    constexpr int BITS = 8 * (int)sizeof(KB);
    constexpr int PER = WS_TK_BINS / WS_TK_SAMPLE_THREADS;
    static_assert(PER == 2, "two bins per thread");
    __shared__ unsigned h[WS_TK_BINS];
    __shared__ unsigned part[WS_TK_SAMPLE_THREADS / 32];
    __shared__ unsigned long long s_prefix;
    __shared__ unsigned s_rem, s_alone, s_low_n;
    __shared__ KB s_low[WS_TK_BUCKET_SAMPLE], s_sorted[WS_TK_BUCKET_SAMPLE];
    const int tid = (int)threadIdx.x, lane = tid & 31, warp = tid / 32;
    for (unsigned long long j = blockIdx.x + (unsigned long long)gridDim.x * tid; j < WS_TK_SAMPLE;
         j += (unsigned long long)gridDim.x * WS_TK_SAMPLE_THREADS)
        samp[j] = encode(keys[(size_t)(j * n / WS_TK_SAMPLE)], codec);
    cooperative_groups::this_grid().sync();
    if (blockIdx.x != 0) return;
    KB o[WS_TK_SAMPLE_PER];
#pragma unroll
    for (int u = 0; u < WS_TK_SAMPLE_PER; u++)
        o[u] = __ldcg(&samp[u * WS_TK_SAMPLE_THREADS + tid]); /* other blocks' writes: from L2 */
    KB prefix = 0;
    unsigned rem = rank;
    for (int shift = BITS; shift > 0;) {
        const int width = shift < WS_TK_DIGIT_BITS ? shift : WS_TK_DIGIT_BITS;
        shift -= width;
        const int above = shift + width;
        const KB mask = (KB)((1u << width) - 1);
        for (int b = tid; b < WS_TK_BINS; b += WS_TK_SAMPLE_THREADS) h[b] = 0;
        __syncthreads();
#pragma unroll
        for (int u = 0; u < WS_TK_SAMPLE_PER; u++)
            if (above >= BITS || ((o[u] ^ prefix) >> above) == 0)
                atomicAdd(&h[(unsigned)((o[u] >> shift) & mask)], 1u);
        __syncthreads();
        const unsigned c0 = h[tid * PER], c1 = h[tid * PER + 1], sum = c0 + c1;
        unsigned incl = sum;
        for (int off = 1; off < 32; off *= 2) {
            const unsigned y = __shfl_up_sync(0xFFFFFFFFu, incl, off);
            if (lane >= off) incl += y;
        }
        if (lane == 31) part[warp] = incl;
        __syncthreads();
        unsigned before = incl - sum;
        for (int v = 0; v < warp; v++) before += part[v];
        /* exactly one thread holds the bin of the rem-th key (1 <= rem <=
         * the keys matching the prefix) */
        if (before < rem && before + sum >= rem) {
            const int second = before + c0 < rem;
            s_prefix =
                (unsigned long long)prefix | ((unsigned long long)(tid * PER + second) << shift);
            s_rem = rem - before - (second ? c0 : 0);
            s_alone = (second ? c1 : c0) == 1;
        }
        __syncthreads();
        prefix = (KB)s_prefix;
        rem = s_rem;
        const bool alone = s_alone;
        __syncthreads(); /* every read precedes the next pass's writes */
        if (alone) {
            prefix |= (KB)((KB(1) << shift) - 1); /* shift < BITS: the bin's last key */
            break;
        }
    }
    /* the buckets' bounds: the sample keys not above prefix (rank of
     * them, more only with ties), ranked among themselves */
    unsigned nb = rank < max_buckets ? rank : max_buckets;
    if (nb > 1) {
        if (tid == 0) s_low_n = 0;
        __syncthreads();
#pragma unroll
        for (int u = 0; u < WS_TK_SAMPLE_PER; u++) {
            const bool low = o[u] <= prefix;
            const unsigned ball = __ballot_sync(0xFFFFFFFFu, low);
            if (!ball) continue;
            const unsigned at = ws_tk_warp_slot(&s_low_n, ball);
            if (low && at < WS_TK_BUCKET_SAMPLE) s_low[at] = o[u];
        }
        __syncthreads();
        const unsigned m = s_low_n;
        if (m > WS_TK_BUCKET_SAMPLE) {
            nb = 1; /* ties at the threshold: one bucket */
        } else {
            if ((unsigned)tid < m) {
                const KB v = s_low[tid];
                unsigned r = 0;
#pragma unroll 8
                for (unsigned j = 0; j < m; j++)
                    r += s_low[j] < v || (s_low[j] == v && j < (unsigned)tid);
                s_sorted[r] = v;
            }
            __syncthreads();
            if ((unsigned)tid + 1 < nb)
                fl->th[tid] =
                    (unsigned long long)s_sorted[((unsigned)tid + 1) * rank / nb +
                                                 (((unsigned)tid + 1) * rank % nb != 0) - 1];
        }
    }
    if (tid < WS_TK_CAND_BUCKETS) fl->bn[tid] = 0;
    if (tid == 0) {
        fl->t = (unsigned long long)prefix;
        fl->count = 0;
        fl->k = k;
        fl->cap = cap;
        fl->th[nb - 1] = (unsigned long long)prefix;
        fl->nb = nb;
    }
}

/* Shared memory of ws_tk_cand_kernel: the survivors (unpadded; 32-bit keys:
 * then the padded tile that sorts them), and the narrowing's. */
template <typename KB>
struct ws_tk_cand_smem {
    uint64_t keys[warpsort::smem_slots<uint64_t>(WS_TK_CAND_TILE)];
    ws_tk_narrow_smem<WS_TK_CAND_THREADS> nw;
    ws_tk_bars<KB, WS_TK_CAND_THREADS> bars;
};
/* The two tiles of ws_tk_wide_tile_sort (TILE items), over the room of
 * the survivors they sort. */
template <int TILE>
union ws_tk_wide_tiles {
    struct {
        uint32_t k[warpsort::smem_slots<uint32_t>(TILE)];
        uint64_t v[warpsort::smem_slots<uint64_t>(TILE)];
    } by_index;
    struct {
        uint64_t k[warpsort::smem_slots<uint64_t>(TILE)];
        uint32_t v[warpsort::smem_slots<uint32_t>(TILE)];
    } by_key;
};

/* 64-bit keys: the narrowing's first, so a launch for k <= 16 x
 * WS_TK_CAND_SI64 needs only the warp's survivors after it
 * (ws_tk_cand_smem_bytes); the tile sorts reuse the survivors' room. */
template <>
struct ws_tk_cand_smem<uint64_t> {
    ws_tk_narrow_smem<WS_TK_CAND_THREADS> nw;
    union {
        ws_tk_u128 keys[WS_TK_CAND_TILE64];
        ws_tk_wide_tiles<WS_TK_CAND_TILE64> tiles;
    };
};

/* Dynamic shared memory of a ws_tk_cand_kernel launch for k. */
static inline size_t ws_tk_cand_smem_bytes(size_t kb, size_t k) {
    if (kb == 4) return sizeof(ws_tk_cand_smem<uint32_t>);
    if (2 * k <= 32 * WS_TK_CAND_SI64)
        return offsetof(ws_tk_cand_smem<uint64_t>, keys) +
               32 * WS_TK_CAND_SI64 * sizeof(ws_tk_u128);
    return sizeof(ws_tk_cand_smem<uint64_t>);
}

/* 32-bit keys: sorts the s survivors (words; s <= T x ITEMS, unpadded at
 * keys, which holds smem_slots(T x ITEMS) words) as one tile of T x ITEMS
 * and writes the first k (k <= s) to results from out_base on. A tile's
 * cost follows its real items (block_sort_tile); a smaller ITEMS gives
 * more, shorter warp networks. Every thread of the block calls it. */
template <typename KB, int T, int ITEMS>
__device__ __forceinline__ void ws_tk_tile_sort(uint64_t *keys, int s, int k, size_t out_base,
                                                key_codec codec, const ws_tk_outputs &out) {
    using U = uint64_t;
    const int lane = (int)threadIdx.x & 31, first = (int)threadIdx.x * ITEMS;
    const int warp_first = first & ~(32 * ITEMS - 1);
    warp_items<U, no_value, no_value, ITEMS> it;
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        /* striped per warp: a warp holds tile items warp_first .. + 32 x
         * ITEMS either way, so the sentinels still end up from s on */
        const int e = warp_first + i * 32 + lane;
        it.k[i] = e < s ? keys[e] : sentinel<U>();
    }
    __syncthreads(); /* every survivor read before the tile overwrites them */
    warpsort::block_sort_tile<32 * ITEMS, U, no_value, no_value, T, ITEMS>(
        it, warpsort::tile_smem<U, no_value>{keys, nullptr}, s);
#pragma unroll
    for (int i = 0; i < ITEMS; i++)
        if (first + i < k)
            ws_tk_put(out, out_base + (size_t)(first + i), decode((KB)(it.k[i] >> 32), codec),
                      (uint32_t)it.k[i]);
}
/* The same with the smallest tile that holds s (s <= T x MAXI). */
template <typename KB, int T, int MAXI>
__device__ __forceinline__ void ws_tk_tile_finish(uint64_t *keys, int s, int k, size_t out_base,
                                                  key_codec codec, const ws_tk_outputs &out) {
    if constexpr (MAXI > 1) {
        if (s <= T * MAXI / 2) {
            ws_tk_tile_finish<KB, T, MAXI / 2>(keys, s, k, out_base, codec, out);
            return;
        }
    }
    ws_tk_tile_sort<KB, T, MAXI>(keys, s, k, out_base, codec, out);
}

/* 64-bit keys: sorts the s survivors ((key, index) words, s <= T x ITEMS,
 * unpadded at words, which tiles overlays) and writes the first k (k <= s) to results from
 * out_base on. A word does not fit a tile's key, so two tile sorts: by
 * index (unique), then by key with positions, which keeps equal keys in
 * the order of the first: by index. Every thread of the block calls it. */
template <typename KB, int T, int ITEMS>
__device__ __forceinline__ void
ws_tk_wide_tile_sort(const ws_tk_u128 *words, ws_tk_wide_tiles<T * ITEMS> &tiles, int s, int k,
                     size_t out_base, key_codec codec, const ws_tk_outputs &out) {
    const int lane = (int)threadIdx.x & 31, first = (int)threadIdx.x * ITEMS;
    const int warp_first = first & ~(32 * ITEMS - 1);
    warp_items<uint32_t, uint64_t, no_value, ITEMS> a;
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        /* striped per warp, as ws_tk_tile_sort; the padding sorts last by
         * index (no row reaches 2^32 - 1 items) and carries the largest key */
        const int e = warp_first + i * 32 + lane;
        const ws_tk_u128 w = e < s ? words[e] : ~(ws_tk_u128)0;
        a.k[i] = (uint32_t)w;
        a.v[i] = (uint64_t)(w >> 32);
    }
    __syncthreads(); /* every survivor read before the tiles overwrite them */
    warpsort::block_sort_tile<32 * ITEMS, uint32_t, uint64_t, no_value, T, ITEMS>(
        a, warpsort::tile_smem<uint32_t, uint64_t>{tiles.by_index.k, tiles.by_index.v}, s);
    warp_items<uint64_t, uint32_t, uint32_t, ITEMS> b;
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        b.k[i] = a.v[i];
        b.v[i] = a.k[i];
        b.p[i] = (uint32_t)(first + i);
    }
    warpsort::block_sort_tile<32 * ITEMS, uint64_t, uint32_t, uint32_t, T, ITEMS>(
        b, warpsort::tile_smem<uint64_t, uint32_t>{tiles.by_key.k, tiles.by_key.v}, s);
#pragma unroll
    for (int i = 0; i < ITEMS; i++)
        if (first + i < k)
            ws_tk_put(out, out_base + (size_t)(first + i), decode((KB)b.k[i], codec), b.v[i]);
}

/* The best k of the row's candidates, to results from out_base on, by one
 * block (forced by WARPSORT_TOPK_PATH; the plan has the read's grid rank
 * them, ws_tk_rank_buckets). The candidates are the first n of ck (and
 * ci): all that passed
 * the filter, or the radix select's k when it missed; as words (32-bit
 * keys: one u64 in ck; 64-bit keys: the ordered key in ck, the index in
 * ci). The filter keeps several times k, so the block narrows them on chip
 * (ws_tk_narrow; the first THREADS x UNROLL words, usually all, held in
 * registers, the rest read from L2 once per pass) to at most max(2k,
 * THREADS) (32-bit keys; sorted as one tile of the next power of two of
 * them, at least THREADS), or for 64-bit keys 32 x WS_TK_CAND_SI64 (k at
 * most half that; sorted by one warp) or WS_TK_CAND_TILE64 (sorted by the
 * block, ws_tk_wide_tile_sort); the first k are the result. With bar
 * (32-bit keys, 4k <= THREADS) the threads' bar (ws_tk_thread_bar) comes
 * first and the narrowing runs only when more than max(2k, THREADS) are
 * within it. At most WS_TK_CAND_RANK_MAX survivors (32-bit keys) are
 * sorted by their ranks instead of the tile (ws_tk_rank_finish). */
template <typename KB>
__global__ void __launch_bounds__(WS_TK_CAND_THREADS)
    ws_tk_cand_kernel(const ws_tk_filter *fl, const unsigned long long *ck, const uint32_t *ci,
                      size_t k, int bar, size_t out_base, key_codec codec, ws_tk_outputs out) {
    using W = ws_tk_word<KB>;
    constexpr int T = WS_TK_CAND_THREADS, L = WS_TK_CAND_UNROLL;
    constexpr bool WIDE = sizeof(KB) == 8;
    extern __shared__ __align__(16) unsigned char ws_tk_dyn[];
    ws_tk_cand_smem<KB> &sm = *reinterpret_cast<ws_tk_cand_smem<KB> *>(ws_tk_dyn);
    ws_pdl_wait(); /* a dependent launch (pdl.cuh): the read's output from here on */
    const bool hit = ws_tk_filter_hit(fl);
    const unsigned n = (unsigned)(hit ? fl->count : fl->k);
    const int t = (int)threadIdx.x;
    if (t == 0) {
        sm.nw.orx[0] = sm.nw.orx[1] = 0;
        sm.nw.at = 0;
    }
    __syncthreads();
    const auto word = [&](unsigned j) -> W {
        if constexpr (WIDE)
            return ws_tk_pack<W>((KB)ck[j], ci[j]);
        else
            return (W)ck[j];
    };
    W wc[L];
#pragma unroll
    for (int u = 0; u < L; u++) {
        const unsigned j = (unsigned)(u * T + t);
        wc[u] = j < n ? word(j) : 0;
    }
    /* 64-bit keys: one warp's survivors, or (k above half of them) a tile */
    const bool warp_sorts = WIDE && 2 * k <= 32u * WS_TK_CAND_SI64;
    const unsigned cap = !WIDE        ? (unsigned)WS_TK_CAND_TILE
                         : warp_sorts ? 32u * WS_TK_CAND_SI64
                                      : (unsigned)WS_TK_CAND_TILE64;
    const unsigned keep = WIDE                            ? cap
                          : 2 * (unsigned)k > (unsigned)T ? 2 * (unsigned)k
                                                          : (unsigned)T;
    const auto item = [&](unsigned b, int u) -> W {
        const unsigned j = b + (unsigned)(u * T + t);
        if (b == 0) return wc[u];
        return j < n ? word(j) : (W)0;
    };
    ws_tk_cut<W> c = {~(W)0, keep + 1}; /* n >= k >= 1 */
    if constexpr (!WIDE) {
        /* bar (k at most a quarter of the threads): the threads' bar
         * first, as the row blocks do (simulated on random candidates:
         * about 130 survive for k = 32, 500 for k = 256); narrow only when
         * more than keep pass */
        if (bar) {
            W b = ~(W)0; /* this thread's best word */
            for (unsigned b0 = 0; b0 < n; b0 += (unsigned)(T * L)) {
#pragma unroll
                for (int u = 0; u < L; u++) {
                    const W w = item(b0, u);
                    if (b0 + (unsigned)(u * T + t) < n && w < b) b = w;
                }
            }
            c.limit = ws_tk_thread_bar<KB, W, T>(sm.bars, ws_tk_word_key<KB>(b), (uint32_t)b,
                                                 (unsigned)k);
            ws_tk_collect<W, T, L>(sm.nw, item, n, c, sm.keys, keep);
            c.s = sm.nw.at;
            __syncthreads(); /* every thread has read the count */
            if (c.s > keep && t == 0) sm.nw.at = 0;
        }
    }
    if (c.s > keep) {
        /* any w0 is correct; one of the words narrows with fewest digits */
        c = ws_tk_narrow<W, T, L>(sm.nw, item, n, (unsigned)k, keep, word(0));
        ws_tk_collect<W, T, L>(sm.nw, item, n, c, sm.keys, cap);
    }
    if constexpr (WIDE) {
        if (warp_sorts) {
            if (t < 32)
                ws_tk_warp_finish<KB, WS_TK_CAND_SI64>(sm.keys, c.s, (unsigned)k, out_base, codec,
                                                       out);
        } else {
            ws_tk_wide_tile_sort<KB, T, WS_TK_CAND_TILE64 / T>(sm.keys, sm.tiles, (int)c.s, (int)k,
                                                               out_base, codec, out);
        }
    } else if (c.s <= WS_TK_CAND_RANK_MAX) {
        ws_tk_rank_finish<KB, T>(sm.keys, c.s, (unsigned)k, out_base, codec, out);
    } else {
        const int m = c.s < cap ? (int)c.s : (int)cap;
        ws_tk_tile_finish<KB, T, WS_TK_CAND_TILE / T>(sm.keys, m, (int)k, out_base, codec, out);
    }
}

/*=== short rows ===*/

/* Rows of at most WIDTH x K keys (k <= len): each group of WIDTH lanes
 * sorts one row whole in registers as (ordered key, index) items, the
 * index breaking ties (warp_sort.cuh: one bitonic network, no shared
 * memory, no barrier), and writes the first k; rows grid-stride, 32 /
 * WIDTH of them a warp. */
template <typename KB, int WIDTH, int K>
__global__ void __launch_bounds__(WS_TK_SHORT_THREADS)
    ws_tk_short_kernel(const KB *keys, size_t rows, unsigned len, unsigned k, key_codec codec,
                       ws_tk_outputs out) {
    constexpr unsigned GROUPS = 32 / WIDTH;
    const unsigned lane = threadIdx.x & 31, glane = lane & (WIDTH - 1), group = lane / WIDTH;
    const size_t warp = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const size_t warps = (size_t)gridDim.x * blockDim.x / 32;
    for (size_t r0 = warp * GROUPS; r0 < rows; r0 += warps * GROUPS) {
        const size_t row = r0 + group;
        const unsigned n = row < rows ? len : 0;
        const KB *rk = keys + (row < rows ? row : 0) * (size_t)len;
        warp_items<KB, no_value, uint32_t, K> it;
#pragma unroll
        for (int i = 0; i < K; i++) {
            const unsigned j = (unsigned)i * WIDTH + glane;
            it.k[i] = j < n ? encode(rk[j], codec) : sentinel<KB>();
            it.p[i] = j; /* padding after every key: the sentinel, then j >= n */
        }
        warpsort::warp_sort_registers<WIDTH * K>(it, (int)(glane * K));
#pragma unroll
        for (int i = 0; i < K; i++) {
            const unsigned j = glane * K + (unsigned)i;
            if (j < k && row < rows) ws_tk_put(out, row * k + j, decode(it.k[i], codec), it.p[i]);
        }
    }
}

/*=== row blocks ===*/

/* Blocks of T threads an SM must hold: WS_TK_ROWS_SM_THREADS, or with
 * the keys staged in shared memory (BAR), WS_TK_ROWS_SM_THREADS_STAGED. */
__host__ __device__ constexpr int ws_tk_rows_min_blocks(int T, bool bar) {
    return bar ? WS_TK_ROWS_SM_THREADS_STAGED / T : WS_TK_ROWS_SM_THREADS / T;
}

/* The row's ordered keys to sk[0 .. n_pad) (zero past n), by the block:
 * 16-byte loads where the row starts on 16 bytes. Also the best (key,
 * position) among the keys this thread staged (ascending positions, so
 * the first of equal keys; (sentinel, ~0) if it staged none), for
 * ws_tk_thread_bar, and with OR the OR of every key it staged XOR x0
 * into kx (ws_tk_narrow's OR pass). */
template <typename KB, int T, bool OR = false>
__device__ __forceinline__ void ws_tk_stage_row(const KB *rk, unsigned n, unsigned n_pad,
                                                key_codec codec, KB *sk, KB &bk, uint32_t &bp,
                                                KB x0 = KB(0), KB *kx = nullptr) {
    constexpr int V = 16 / (int)sizeof(KB);
    const unsigned t = threadIdx.x;
    bk = sentinel<KB>();
    bp = 0xFFFFFFFFu;
    const auto best = [&](KB o, unsigned j) {
        if (o < bk || bp == 0xFFFFFFFFu) {
            bk = o;
            bp = j;
        }
    };
    unsigned head = 0;
    if (((uintptr_t)rk & 15u) == 0) {
        const unsigned nv = n / V;
#pragma unroll 4
        for (unsigned v = t; v < nv; v += T) {
            const uint4 raw = __ldg((const uint4 *)rk + v);
            KB x[V];
            memcpy(x, &raw, sizeof raw);
#pragma unroll
            for (int e = 0; e < V; e++) {
                x[e] = encode(x[e], codec);
                best(x[e], v * V + (unsigned)e);
                if constexpr (OR) *kx |= x[e] ^ x0;
            }
            uint4 o;
            memcpy(&o, x, sizeof o);
            ((uint4 *)sk)[v] = o;
        }
        head = nv * V;
    }
    for (unsigned j = head + t; j < n_pad; j += T) {
        KB o = KB(0);
        if (j < n) {
            o = encode(rk[j], codec);
            best(o, j);
            if constexpr (OR) *kx |= o ^ x0;
        }
        sk[j] = o;
    }
}

/* How far a 64-bit row block whose survivors one warp sorts narrows: to
 * the smallest warp network (32 x 2^j items) that holds k with room for
 * the cut bin, at most cap. With cap alone a row of at most cap keys was
 * sorted whole by the largest network, one warp working (bench/NOTES.md,
 * forty-seventh session; the blocks' two tiles, k > 256, keep cap: not
 * measured). But k <= 256 keeps 256: the 512-item network (a call, out of
 * line) cost far more than the digit passes that narrow to 256
 * (bench/NOTES.md, forty-eighth session). */
__device__ __forceinline__ unsigned ws_tk_rows_keep(unsigned k, unsigned cap) {
    unsigned p = 32;
    while (p < k + k / 8 + 8 && p < cap) p *= 2;
    return k <= 256 && p > 256 ? 256 : p;
}

/* One block of T threads per row (row_len at most WS_TK_ROWS_MAX_PASSES x
 * T x L, k <= 16 x SI, 64-bit keys k <= 32 x SI up to 256, the plan's
 * ws_tk_rows_keep): the row's first T x L keys are read once into
 * registers (the rest, for rows over T x L, again from L2 at every pass,
 * or with REST once into shared memory, the narrowing's OR pass done as
 * they load; with BAR the whole row into shared memory), narrowed on chip
 * to at most
 * 32 x SI (word i is (ordered key i, i); with BAR, first by the threads'
 * bar), and those are sorted
 * (32-bit keys: by the block, as one tile; 64-bit keys: by one warp, as
 * (key, index) items, or above 512 by the block's two tiles, or on rows
 * of WS_TK_ROWS_RANK_MIN_LEN or more ranked by the block); the first
 * k are the row's results. */
template <typename KB, int T, int SI, bool BAR, bool REST = false>
__global__ void __launch_bounds__(T, ws_tk_rows_min_blocks(T, BAR))
    ws_tk_rows_kernel(const KB *keys, size_t row_len, unsigned k, key_codec codec,
                      ws_tk_outputs out) {
    using W = ws_tk_word<KB>;
    constexpr int L = WS_TK_ROWS_ITEMS / (int)sizeof(KB);
    constexpr unsigned CAP = 32u * SI;
    constexpr bool WIDE = sizeof(KB) == 8;
    /* survivors; 32-bit keys: also the tile that sorts them (at most the
     * larger of CAP and T words) */
    constexpr int SW =
        WIDE ? (int)CAP : warpsort::smem_slots<uint64_t>((int)CAP > T ? (int)CAP : T);
    /* 64-bit keys with more survivors than one warp sorts: the block's
     * two tiles over them (ws_tk_wide_tile_sort) */
    constexpr bool WIDE_TILES = WIDE && SI > 16;
    __shared__ ws_tk_narrow_smem<T> sm;
    __shared__ ws_tk_bars<KB, T> bars;
    /* BAR: the survivors overlay the narrowing's bins (each collect
     * follows the narrowing's last barrier), so three blocks with rows of
     * 64 KB fit an SM */
    __shared__ union {
        W sw[BAR ? 1 : SW];
        ws_tk_wide_tiles<WIDE_TILES ? (int)CAP : 1> tiles;
    } su;
    static_assert(!BAR || (SW * sizeof(W) <= sizeof sm.h && !WIDE_TILES), "survivors fit the bins");
    W *const sw = BAR ? (W *)sm.h : su.sw;
    const KB *rk = keys + (size_t)blockIdx.x * row_len;
    const unsigned n = (unsigned)row_len;
    const int t = (int)threadIdx.x;
    if (t == 0) {
        sm.orx[0] = sm.orx[1] = 0;
        sm.at = 0;
    }
    /* ordered keys in registers, or with BAR in shared memory (the whole
     * row, padded to passes of T x L: the registers freed let more blocks
     * hide each other's latency); a word pairs one with its index (no
     * instructions for 32-bit keys: two registers) */
    extern __shared__ __align__(16) unsigned char ws_tk_row_keys[];
    KB *const sk = (KB *)ws_tk_row_keys;
    const auto key = [&](unsigned j) -> KB { return encode(j < n ? rk[j] : KB(0), codec); };
    static_assert(!(BAR && REST), "one staging");
    constexpr unsigned PASS = (unsigned)(T * L);
    KB o[BAR ? 1 : L];
    KB bk = KB(0); /* BAR: the best of the keys this thread staged */
    uint32_t bp = 0;
    /* REST: key 0, and the OR of this thread's keys XOR it (the
     * narrowing's OR pass, done as they load; elsewhere it cost registers
     * for no gain: bench/NOTES.md, forty-ninth session) */
    KB o0 = KB(0), kx = KB(0);
    if constexpr (BAR) {
        ws_tk_stage_row<KB, T>(rk, n, (n + PASS - 1) / PASS * PASS, codec, sk, bk, bp);
    } else {
        if constexpr (REST) o0 = encode(rk[0], codec);
        /* REST: keys PASS .. n to sk[0 .. n - PASS), padded to passes
         * (the bests it finds are not used); before the registers' keys,
         * whose L registers would otherwise be live across it */
        if (REST && n > PASS)
            ws_tk_stage_row<KB, T, true>(rk + PASS, n - PASS, (n - 1) / PASS * PASS, codec, sk, bk,
                                         bp, o0, &kx);
#pragma unroll
        for (int u = 0; u < L; u++) {
            o[u] = key((unsigned)(u * T + t));
            if (REST && (unsigned)(u * T + t) < n) kx |= o[u] ^ o0;
        }
    }
    __syncthreads();
    const auto okey = [&](unsigned b, int u) -> KB {
        if constexpr (BAR)
            return sk[b + (unsigned)(u * T + t)];
        else if constexpr (REST)
            return b == 0 ? o[u] : sk[b - PASS + (unsigned)(u * T + t)];
        else
            return b == 0 ? o[u] : key(b + (unsigned)(u * T + t));
    };
    const auto item = [&](unsigned b, int u) -> W {
        return ws_tk_pack<W>(okey(b, u), b + (unsigned)(u * T + t));
    };
    ws_tk_cut<W> c = {~(W)0, CAP + 1};
    /* BAR (4k <= T <= n): the threads' bests give a limit that rarely
     * keeps more than CAP (ws_tk_thread_bar); else, or when it does,
     * narrow. Its own instance (keys in shared memory, 40 registers):
     * the registers' instance keeps its 64 without spills. */
    if constexpr (BAR) {
        c.limit = ws_tk_thread_bar<KB, W, T>(bars, bk, bp, k);
        ws_tk_collect<W, T, L>(sm, item, n, c, sw, CAP);
        c.s = sm.at;
        __syncthreads(); /* every thread has read the count */
        if (c.s > CAP && t == 0) sm.at = 0;
    }
    if (c.s > CAP) {
        const W w0 = ws_tk_pack<W>(REST ? o0 : encode(rk[0], codec), 0u);
        const unsigned keep = WIDE && !WIDE_TILES ? ws_tk_rows_keep(k, CAP) : CAP;
        /* the indices' part: the OR of 0 .. n - 1 */
        const uint32_t jx = n > 1 ? 0xFFFFFFFFu >> __clz((int)(n - 1)) : 0u;
        c = ws_tk_narrow<W, T, L>(sm, item, n, k, keep, w0, REST, ws_tk_pack<W>(kx, jx));
        ws_tk_collect<W, T, L>(sm, item, n, c, sw, CAP);
    }
    const size_t out_base = (size_t)blockIdx.x * k;
    /* 64-bit keys on rows of WS_TK_ROWS_RANK_MIN_LEN or more (blocks of
     * 512): every thread ranks the survivors (ws_tk_rank_finish) instead
     * of one warp sorting them while the rest wait (bench/NOTES.md,
     * forty-seventh session: 32-bit keys and shorter rows lost). */
    constexpr bool RANK = WIDE && T == WS_TK_ROWS_MAX_THREADS;
    if (RANK && n >= WS_TK_ROWS_RANK_MIN_LEN && c.s <= (unsigned)T) {
        ws_tk_rank_finish<KB, T>(sw, c.s, k, out_base, codec, out);
    } else if constexpr (WIDE_TILES) {
        static_assert((int)CAP % T == 0 && (int)CAP / T <= WS_TK_ROWS_ITEMS64, "the tiles' shape");
        ws_tk_wide_tile_sort<KB, T, (int)CAP / T>(sw, su.tiles, (int)c.s, (int)k, out_base, codec,
                                                  out);
    } else if constexpr (WIDE) {
        if (t < 32) ws_tk_warp_finish<KB, SI>(sw, c.s, k, out_base, codec, out);
    } else if (BAR && c.s <= 64) {
        /* one warp's network, no barriers: cheaper than a tile of T */
        if (t < 32) ws_tk_warp_finish<KB, 2>(sw, c.s, k, out_base, codec, out);
    } else {
        constexpr int MAXI = (int)CAP > T ? (int)CAP / T : 1;
        ws_tk_tile_finish<KB, T, MAXI>(sw, (int)c.s, (int)k, out_base, codec, out);
    }
}

/* The first k sorted candidates of one row to results from out_base on. */
template <typename KB, int MODE>
__global__ void ws_tk_filter_finish_kernel(const unsigned long long *ck, const uint32_t *ci,
                                           size_t k, size_t out_base, key_codec codec,
                                           ws_tk_outputs out) {
    for (size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x; j < k;
         j += (size_t)gridDim.x * blockDim.x) {
        if constexpr (MODE == 1) {
            const unsigned long long v = ck[j];
            ws_tk_put(out, out_base + j, decode((KB)(v >> 32), codec), (uint32_t)v);
        } else {
            ws_tk_put(out, out_base + j, decode((KB)ck[j], codec), ci[j]);
        }
    }
}

/*=== host side: the plan and the launches ===*/

/* One plan per call: the path, the warp levels and every workspace offset;
 * the size query and the call both read it. */
struct ws_tk_plan {
    int best;          /* best path (k = 1) */
    unsigned best_cpr; /* best path: blocks per row, each a chunk of best_chunk */
    size_t best_chunk, best_part, best_done;
    int short_rows;   /* short rows (ws_tk_short_kernel) */
    int rows_block;   /* row blocks (ws_tk_rows_kernel) */
    int rows_threads; /* ... threads per block */
    int rows_si;      /* ... survivors' items per lane (32 x rows_si of them) */
    int rows_bar;     /* ... limit from the threads' bests first (ws_tk_thread_bar) */
    int rows_rest;    /* ... keys past the registers' in shared memory (REST) */
    int warp_path;
    int filter;     /* filter path (else radix when not the warp path) */
    unsigned rank;  /* filter path: the threshold's rank in the sample */
    size_t cap;     /* filter path: candidates kept */
    int ranked;     /* filter path: the read's grid writes the best k (RANKED) */
    int cand_block; /* filter path: the best k by one block (ws_tk_cand_kernel) */
    int cand_bar;   /* ... which takes the threads' bar first (ws_tk_thread_bar) */
    int items;      /* warp path: run items per lane (1, 2, 4, 8) */
    int levels;
    size_t seg_len[WS_TK_MAX_LEVELS], chunk[WS_TK_MAX_LEVELS], wps[WS_TK_MAX_LEVELS];
    size_t tiles; /* radix path, per row */
    /* workspace offsets (bytes) */
    size_t keys_in, vals_in;            /* staged inputs (host arrays) */
    size_t out_keys, out_idx, out_vals; /* staged outputs */
    size_t bar;                         /* warp path: the rows' shared bars */
    size_t cand_keys[2], cand_pos[2];   /* warp path: the levels' runs */
    size_t select, hist, seg_cnt, blk_base, surv_keys, surv_idx, sort; /* radix select */
    size_t fl;            /* filter path: ws_tk_filter (candidates: surv_keys, surv_idx) */
    size_t samp;          /* filter path: the gathered sample (ordered keys) */
    ws_plan_t sort_plan;  /* radix path: the survivors' sort (the leaf's plan) */
    ws_plan_t sort_plan2; /* filter path, 64-bit keys: the second (stable) sort */
    size_t total;
};

/* Shared memory the staged keys of a row block take (BAR): the row padded
 * to passes of T x L keys. */
static inline size_t ws_tk_rows_stage_bytes(size_t row_len, size_t kb, size_t threads) {
    const size_t pass = threads * (WS_TK_ROWS_ITEMS / kb);
    return (row_len + pass - 1) / pass * pass * kb;
}

/* ... and those of REST: the keys past the registers' first pass. */
static inline size_t ws_tk_rows_rest_bytes(size_t row_len, size_t kb, size_t threads) {
    const size_t pass_bytes = threads * WS_TK_ROWS_ITEMS;
    const size_t all = ws_tk_rows_stage_bytes(row_len, kb, threads);
    return all > pass_bytes ? all - pass_bytes : 0;
}

/* Which of a call's arrays are host memory, staged through the workspace. */
struct ws_tk_staging {
    int keys_in, vals_in, out_keys, out_idx, out_vals;
};

/* The plan of a top-k call (topk.cu): rows of row_len keys of kb bytes (vb
 * of values, ib of indices), k each, on dev; force: the test hook
 * WARPSORT_TOPK_PATH (test_hooks.h). Host code with no CUDA call, so
 * tests/gpu/test_topk_plan checks it without a GPU. */
ws_tk_plan ws_tk_plan_for(const ws_device_info *dev, int force, size_t rows, size_t row_len,
                          size_t kb, size_t vb, size_t k, size_t ib, ws_tk_staging sg);

/* Pads the filter's candidates to its capacity: ws_tk_pad_kernel, topk.cu;
 * `grid` blocks of 256. */
cudaError_t ws_tk_pad(const ws_tk_filter *fl, unsigned long long *ck, uint32_t *ci, unsigned grid,
                      cudaStream_t stream);

/* A grid-stride launch's blocks: one for every per_block items, at most
 * per_sm an SM, at least one. */
static inline unsigned ws_tk_grid_of(size_t items, size_t per_block, size_t per_sm,
                                     const ws_cuda_state *st) {
    size_t g = ws_tk_div_up(items, per_block);
    const size_t most = (size_t)st->dev.sm_count * per_sm;
    if (g > most) g = most;
    return (unsigned)(g ? g : 1);
}
/* ... an item a thread, at most 8 blocks an SM */
static inline unsigned ws_tk_grid(size_t items, unsigned threads, const ws_cuda_state *st) {
    return ws_tk_grid_of(items, threads, 8, st);
}

template <typename KB, int ITEMS>
static cudaError_t ws_tk_launch_level(const ws_tk_level &lv, bool raw, cudaStream_t stream) {
    const size_t warps = lv.segs * lv.wps;
    const unsigned grid = (unsigned)ws_tk_div_up(warps, WS_TK_WARPS);
    if (raw)
        ws_tk_warp_kernel<KB, ITEMS, true><<<grid, 32 * WS_TK_WARPS, 0, stream>>>(lv);
    else
        ws_tk_warp_kernel<KB, ITEMS, false><<<grid, 32 * WS_TK_WARPS, 0, stream>>>(lv);
    return cudaGetLastError();
}

template <typename KB>
static warpsort_status_t ws_tk_warp_path(warpsort_context_t *ctx, const ws_tk_plan &p,
                                         const ws_topk_args_t *a, const void *keys, key_codec codec,
                                         unsigned char *ws, const ws_tk_outputs &out,
                                         cudaStream_t stream) {
    WS_CUDA_TRY(ctx, cudaMemsetAsync(ws + p.bar, 0xFF, a->rows * sizeof(KB), stream));
    const void *in_keys = keys;
    const uint32_t *in_pos = NULL;
    int b = 0;
    for (int lev = 0; lev < p.levels; lev++, b ^= 1) {
        const bool last = lev == p.levels - 1;
        ws_tk_level lv;
        lv.in_keys = in_keys;
        lv.in_pos = in_pos;
        lv.segs = a->rows;
        lv.seg_len = p.seg_len[lev];
        lv.chunk = p.chunk[lev];
        lv.wps = p.wps[lev];
        lv.k = (int)a->k;
        lv.vec = lev == 0 && (uintptr_t)keys % sizeof(KB) == 0;
        lv.codec = codec;
        lv.bar = ws + p.bar;
        lv.out_keys = last ? NULL : ws + p.cand_keys[b];
        lv.out_pos = last ? NULL : (uint32_t *)(ws + p.cand_pos[b]);
        lv.out = out;
        cudaError_t err;
        switch (p.items) {
        case 1: err = ws_tk_launch_level<KB, 1>(lv, lev == 0, stream); break;
        case 2: err = ws_tk_launch_level<KB, 2>(lv, lev == 0, stream); break;
        case 4: err = ws_tk_launch_level<KB, 4>(lv, lev == 0, stream); break;
        default: err = ws_tk_launch_level<KB, 8>(lv, lev == 0, stream); break;
        }
        if (err != cudaSuccess) return ws_cuda_fail(ctx, err, "top-k warp level");
        in_keys = lv.out_keys;
        in_pos = lv.out_pos;
    }
    return WARPSORT_OK;
}

/* The co-resident grid of a cooperative launch: the blocks every SM of the
 * device holds at once, at most `most` (at least 1). */
static inline cudaError_t ws_tk_coop_grid(const void *kernel, int threads, int device, int *known,
                                          const ws_cuda_state *st, size_t most, unsigned *grid) {
    int per_sm = 0;
    const cudaError_t err = ws_blocks_per_sm(kernel, threads, 0, device, known, &per_sm);
    if (err != cudaSuccess) return err;
    size_t g = (size_t)per_sm * (size_t)st->dev.sm_count;
    if (g > most) g = most;
    *grid = (unsigned)(g ? g : 1);
    return cudaSuccess;
}

/* A cooperative launch's configuration; attr is its one attribute. */
static inline cudaLaunchConfig_t ws_tk_coop_config(unsigned grid, unsigned threads,
                                                   cudaStream_t stream, cudaLaunchAttribute *attr) {
    attr->id = cudaLaunchAttributeCooperative;
    attr->val.cooperative = 1;
    return ws_launch_config(grid, threads, 0, stream, attr, 1);
}

/* The select's workspace pieces (the plan's) for one row of top k, its
 * survivors to ck / ci. */
static inline ws_tk_select_args ws_tk_select_args_of(const ws_tk_plan &p, unsigned char *ws,
                                                     size_t k, void *ck, void *ci) {
    ws_tk_select_args a;
    a.sel = (ws_tk_select *)(ws + p.select);
    a.hist = (unsigned long long *)(ws + p.hist);
    a.seg_less = (unsigned *)(ws + p.seg_cnt);
    a.seg_eq = a.seg_less + p.tiles * WS_TK_SELECT_WARPS;
    a.blk_less = (unsigned long long *)(ws + p.blk_base);
    a.blk_eq = a.blk_less + p.tiles;
    a.tiles = p.tiles;
    a.k = k;
    a.ck = ck;
    a.ci = ci;
    return a;
}

/* The exact select of one row's top k (rk, n keys): the k-th key, then
 * the k survivors in index order written to ck / ci in layout MODE, by
 * one cooperative launch (ws_tk_select_kernel) of the blocks that fit the
 * device at once, at most one per tile (blk_base holds a pair per tile). */
template <typename KB, int MODE>
static cudaError_t ws_tk_select_row(const ws_tk_plan &p, const KB *rk, size_t n, size_t k,
                                    key_codec codec, unsigned char *ws, void *ck, void *ci,
                                    int device, const ws_cuda_state *st, cudaStream_t stream) {
    static int known[WS_OCC_MAX_DEVICES]; /* this instantiation's blocks per SM */
    unsigned grid = 0;
    const cudaError_t err =
        ws_tk_coop_grid((const void *)ws_tk_select_kernel<KB, MODE>, WS_TK_SELECT_THREADS, device,
                        known, st, p.tiles, &grid);
    if (err != cudaSuccess) return err;
    const ws_tk_select_args a = ws_tk_select_args_of(p, ws, k, ck, ci);
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t cfg = ws_tk_coop_config(grid, WS_TK_SELECT_THREADS, stream, &attr);
    return cudaLaunchKernelEx(&cfg, ws_tk_select_kernel<KB, MODE>, rk, n, codec, a);
}

/* The filter path's read of one row (ws_tk_filter_kernel), with the
 * select as its fallback: one cooperative launch of the blocks that fit
 * at once, at most one per tile and no more than the read has steps. */
template <typename KB, int MODE, bool RANKED>
static cudaError_t ws_tk_filter_row(const ws_tk_plan &p, const KB *rk, size_t n, size_t k,
                                    key_codec codec, unsigned char *ws, ws_tk_filter *fl, void *ck,
                                    void *ci, size_t out_base, const ws_tk_outputs &out, int device,
                                    const ws_cuda_state *st, cudaStream_t stream) {
    static int known[WS_OCC_MAX_DEVICES]; /* this instantiation's blocks per SM */
    const size_t steps =
        ws_tk_div_up(n, (size_t)WS_TK_FILTER_THREADS * WS_TK_FILTER_UNROLL * (16 / sizeof(KB)));
    unsigned grid = 0;
    const cudaError_t err =
        ws_tk_coop_grid((const void *)ws_tk_filter_kernel<KB, MODE, RANKED>, WS_TK_FILTER_THREADS,
                        device, known, st, p.tiles < steps ? p.tiles : steps, &grid);
    if (err != cudaSuccess) return err;
    const ws_tk_select_args a = ws_tk_select_args_of(p, ws, k, ck, ci);
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t cfg = ws_tk_coop_config(grid, WS_TK_FILTER_THREADS, stream, &attr);
    return cudaLaunchKernelEx(&cfg, ws_tk_filter_kernel<KB, MODE, RANKED>, rk, n, codec, fl, a,
                              out_base, out);
}

/* The filter path's threshold for one row (ws_tk_sample_kernel): one
 * cooperative launch of up to WS_TK_SAMPLE_BLOCKS blocks. */
template <typename KB>
static cudaError_t ws_tk_sample_row(const ws_tk_plan &p, const KB *rk, size_t n, size_t k,
                                    key_codec codec, unsigned char *ws, ws_tk_filter *fl,
                                    int device, const ws_cuda_state *st, cudaStream_t stream) {
    static int known[WS_OCC_MAX_DEVICES]; /* this instantiation's blocks per SM */
    unsigned grid = 0;
    const cudaError_t err =
        ws_tk_coop_grid((const void *)ws_tk_sample_kernel<KB>, WS_TK_SAMPLE_THREADS, device, known,
                        st, WS_TK_SAMPLE_BLOCKS, &grid);
    if (err != cudaSuccess) return err;
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t cfg = ws_tk_coop_config(grid, WS_TK_SAMPLE_THREADS, stream, &attr);
    return cudaLaunchKernelEx(&cfg, ws_tk_sample_kernel<KB>, rk, n, codec, p.rank,
                              (unsigned long long)k, (unsigned long long)p.cap,
                              p.ranked ? (unsigned)WS_TK_CAND_BUCKETS : 1u, (KB *)(ws + p.samp),
                              fl);
}

template <typename KB>
static warpsort_status_t ws_tk_radix_path(warpsort_context_t *ctx, const ws_tk_plan &p,
                                          const ws_topk_args_t *a, const void *keys,
                                          key_codec codec, unsigned char *ws,
                                          const ws_tk_outputs &out, cudaStream_t stream) {
    const ws_cuda_state *st = ws_state(ctx);
    const size_t n = a->row_len, k = a->k;
    KB *surv_keys = (KB *)(ws + p.surv_keys);
    unsigned long long *surv_idx = (unsigned long long *)(ws + p.surv_idx);
    for (size_t row = 0; row < a->rows; row++) {
        const KB *rk = (const KB *)keys + row * n;
        WS_CUDA_TRY(ctx, (ws_tk_select_row<KB, 0>(p, rk, n, k, codec, ws, surv_keys, surv_idx,
                                                  ctx->device, st, stream)));
        /* Survivors are in index order: a stable sort leaves ties by index. */
        const char *failed = NULL;
        const cudaError_t err = ws_device_sort(&p.sort_plan, surv_keys, surv_idx, a->dtype,
                                               codec.desc, 1, ws + p.sort, stream, &failed);
        if (err != cudaSuccess) return ws_cuda_fail(ctx, err, failed);
        ws_tk_finish_kernel<KB>
            <<<ws_tk_grid(k, 256, st), 256, 0, stream>>>(surv_keys, surv_idx, k, row * k, out);
        WS_CUDA_TRY(ctx, cudaGetLastError());
    }
    return WARPSORT_OK;
}

/* Row blocks with keys in dynamic shared memory: the whole row (BAR) or
 * the rest past the registers (REST). */
template <typename KB, int T, int SI, bool BAR>
static cudaError_t ws_tk_launch_staged(const ws_topk_args_t *a, const KB *in, key_codec codec,
                                       const ws_tk_outputs &out, cudaStream_t stream) {
    auto kernel = ws_tk_rows_kernel<KB, T, SI, BAR, !BAR>;
    const size_t smem = BAR ? ws_tk_rows_stage_bytes(a->row_len, sizeof(KB), T)
                            : ws_tk_rows_rest_bytes(a->row_len, sizeof(KB), T);
    /* where static and dynamic shared memory may pass the default 48 KB
     * only: the call costs host time on every top-k */
    if (smem + (BAR ? WS_TK_ROWS_STATIC_SMEM : WS_TK_ROWS_REST_SLACK) > (48u << 10)) {
        const cudaError_t err =
            cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
        if (err != cudaSuccess) return err;
    }
    kernel<<<(unsigned)a->rows, T, smem, stream>>>(in, a->row_len, (unsigned)a->k, codec, out);
    return cudaGetLastError();
}

template <typename KB, int T>
static cudaError_t ws_tk_launch_rows(const ws_tk_plan &p, const ws_topk_args_t *a, const void *keys,
                                     key_codec codec, const ws_tk_outputs &out,
                                     cudaStream_t stream) {
    const unsigned grid = (unsigned)a->rows, k = (unsigned)a->k;
    const size_t len = a->row_len;
    const KB *in = (const KB *)keys;
    if (p.rows_bar) {
        if (p.rows_si == 8) return ws_tk_launch_staged<KB, T, 8, true>(a, in, codec, out, stream);
        if constexpr (sizeof(KB) == 4)
            return ws_tk_launch_staged<KB, T, 16, true>(a, in, codec, out, stream);
    } else if (p.rows_rest && T == WS_TK_ROWS_MAX_THREADS && p.rows_si <= 16) {
        /* only the largest blocks leave keys past the registers */
        if constexpr (T == WS_TK_ROWS_MAX_THREADS) {
            if (p.rows_si == 8)
                return ws_tk_launch_staged<KB, T, 8, false>(a, in, codec, out, stream);
            if constexpr (sizeof(KB) == 4)
                return ws_tk_launch_staged<KB, T, 16, false>(a, in, codec, out, stream);
        }
    } else if (p.rows_si == 8)
        ws_tk_rows_kernel<KB, T, 8, false><<<grid, T, 0, stream>>>(in, len, k, codec, out);
    else if (p.rows_si == 16) {
        /* 64-bit keys take room for 256 up to k = 256 (the plan) */
        if constexpr (sizeof(KB) == 4)
            ws_tk_rows_kernel<KB, T, 16, false><<<grid, T, 0, stream>>>(in, len, k, codec, out);
    } else if (p.rows_si == 32) {
        if constexpr (T * WS_TK_ROWS_TILE_ITEMS(sizeof(KB)) >= 32 * 32)
            ws_tk_rows_kernel<KB, T, 32, false><<<grid, T, 0, stream>>>(in, len, k, codec, out);
    } else if constexpr (T * WS_TK_ROWS_TILE_ITEMS(sizeof(KB)) >= 32 * 64) {
        ws_tk_rows_kernel<KB, T, 64, false><<<grid, T, 0, stream>>>(in, len, k, codec, out);
    }
    return cudaGetLastError();
}

/* Row blocks: one launch, a block per row. */
template <typename KB>
static warpsort_status_t ws_tk_rows_path(warpsort_context_t *ctx, const ws_tk_plan &p,
                                         const ws_topk_args_t *a, const void *keys, key_codec codec,
                                         const ws_tk_outputs &out, cudaStream_t stream) {
    static_assert(WS_TK_ROWS_MIN_THREADS == 128 && WS_TK_ROWS_MAX_THREADS == 512,
                  "one instance per block shape");
    cudaError_t err;
    switch (p.rows_threads) {
    case 128: err = ws_tk_launch_rows<KB, 128>(p, a, keys, codec, out, stream); break;
    case 256: err = ws_tk_launch_rows<KB, 256>(p, a, keys, codec, out, stream); break;
    default: err = ws_tk_launch_rows<KB, 512>(p, a, keys, codec, out, stream); break;
    }
    WS_CUDA_TRY(ctx, err);
    return WARPSORT_OK;
}

template <typename KB, int WIDTH, int K>
static cudaError_t ws_tk_launch_short(const ws_topk_args_t *a, const void *keys, key_codec codec,
                                      const ws_tk_outputs &out, const ws_cuda_state *st,
                                      cudaStream_t stream) {
    const unsigned grid =
        ws_tk_grid_of(a->rows, WS_TK_SHORT_THREADS / WIDTH, WS_TK_SHORT_BLOCKS_PER_SM, st);
    ws_tk_short_kernel<KB, WIDTH, K><<<grid, WS_TK_SHORT_THREADS, 0, stream>>>(
        (const KB *)keys, a->rows, (unsigned)a->row_len, (unsigned)a->k, codec, out);
    return cudaGetLastError();
}

/* Short rows: one launch, the smallest group shape that holds a row. */
template <typename KB>
static warpsort_status_t ws_tk_short_path(warpsort_context_t *ctx, const ws_topk_args_t *a,
                                          const void *keys, key_codec codec,
                                          const ws_tk_outputs &out, cudaStream_t stream) {
    static_assert(WS_TK_SHORT_MAX == 64, "one shape for up to 32 keys, one for up to 64");
    const ws_cuda_state *st = ws_state(ctx);
    const cudaError_t err = a->row_len <= 32
                                ? ws_tk_launch_short<KB, 8, 4>(a, keys, codec, out, st, stream)
                                : ws_tk_launch_short<KB, 16, 4>(a, keys, codec, out, st, stream);
    WS_CUDA_TRY(ctx, err);
    return WARPSORT_OK;
}

/* k = 1: the rows' counters zeroed, then one launch (ws_tk_best_kernel). */
template <typename KB>
static warpsort_status_t ws_tk_best_path(warpsort_context_t *ctx, const ws_tk_plan &p,
                                         const ws_topk_args_t *a, const void *keys, key_codec codec,
                                         unsigned char *ws, const ws_tk_outputs &out,
                                         cudaStream_t stream) {
    unsigned *done = (unsigned *)(ws + p.best_done);
    WS_CUDA_TRY(ctx, cudaMemsetAsync(done, 0, a->rows * sizeof(unsigned), stream));
    const size_t blocks = a->rows * p.best_cpr;
    if (blocks > 0x7FFFFFFFull)
        return ws_error(ctx, WARPSORT_UNSUPPORTED, "top-k: %zu rows is too many for k = 1",
                        a->rows);
    ws_tk_best_kernel<KB><<<(unsigned)blocks, WS_TK_BEST_THREADS, 0, stream>>>(
        (const KB *)keys, a->row_len, p.best_cpr, p.best_chunk, codec,
        (ws_tk_best<KB> *)(ws + p.best_part), done, out);
    WS_CUDA_TRY(ctx, cudaGetLastError());
    return WARPSORT_OK;
}

/* Row by row: sample -> threshold, one filtering read into the candidates,
 * the radix select only where the filter missed (one launch that reads the
 * count and returns at once otherwise), then the best k of the candidates:
 * when few pass, by the read's own grid (RANKED: that one launch writes
 * the results) or, forced, by one block (ws_tk_cand_kernel), else padded
 * to cap and sorted by (key, index) with the leaf, the first k written. Every
 * launch is made whatever the data; the device picks which do work. */
template <typename KB>
static warpsort_status_t ws_tk_filter_path(warpsort_context_t *ctx, const ws_tk_plan &p,
                                           const ws_topk_args_t *a, const void *keys,
                                           key_codec codec, unsigned char *ws,
                                           const ws_tk_outputs &out, cudaStream_t stream) {
    constexpr int MODE = sizeof(KB) == 4 ? 1 : 2;
    const ws_cuda_state *st = ws_state(ctx);
    const size_t n = a->row_len, k = a->k;
    ws_tk_filter *fl = (ws_tk_filter *)(ws + p.fl);
    unsigned long long *ck = (unsigned long long *)(ws + p.surv_keys);
    uint32_t *ci = MODE == 2 ? (uint32_t *)(ws + p.surv_idx) : NULL;
    const size_t cand_smem = ws_tk_cand_smem_bytes(sizeof(KB), k);
    const auto cand = ws_tk_cand_kernel<KB>;
    if (p.cand_block)
        WS_CUDA_TRY(ctx, cudaFuncSetAttribute(cand, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              (int)cand_smem));
    for (size_t row = 0; row < a->rows; row++) {
        const KB *rk = (const KB *)keys + row * n;
        WS_CUDA_TRY(ctx, ws_tk_sample_row<KB>(p, rk, n, k, codec, ws, fl, ctx->device, st, stream));
        if (p.ranked) {
            WS_CUDA_TRY(ctx,
                        (ws_tk_filter_row<KB, MODE, true>(p, rk, n, k, codec, ws, fl, ck, ci,
                                                          row * k, out, ctx->device, st, stream)));
            continue;
        }
        WS_CUDA_TRY(ctx,
                    (ws_tk_filter_row<KB, MODE, false>(p, rk, n, k, codec, ws, fl, ck, ci, row * k,
                                                       out, ctx->device, st, stream)));
        if (p.cand_block) {
            /* a dependent launch (pdl.cuh): its block starts as the read
             * ends instead of a launch's latency later */
            WS_CUDA_TRY(ctx, ws_launch(cand, 1, WS_TK_CAND_THREADS, cand_smem, stream, st->dev.pdl,
                                       (const ws_tk_filter *)fl, (const unsigned long long *)ck,
                                       (const uint32_t *)ci, k, p.cand_bar, row * k, codec, out));
            continue;
        }
        WS_CUDA_TRY(ctx, ws_tk_pad(fl, ck, ci, ws_tk_grid(p.cap, 256, st), stream));
        const char *failed = NULL;
        cudaError_t err;
        if constexpr (MODE == 1) {
            err = ws_device_sort(&p.sort_plan, ck, NULL, WARPSORT_U64, 0, 0, ws + p.sort, stream,
                                 &failed);
        } else {
            /* by index (unique but for the padding, all equal), then
             * stably by key */
            err = ws_device_sort(&p.sort_plan, ci, ck, WARPSORT_U32, 0, 0, ws + p.sort, stream,
                                 &failed);
            if (err == cudaSuccess)
                err = ws_device_sort(&p.sort_plan2, ck, ci, WARPSORT_U64, 0, 1, ws + p.sort, stream,
                                     &failed);
        }
        if (err != cudaSuccess) return ws_cuda_fail(ctx, err, failed);
        ws_tk_filter_finish_kernel<KB, MODE>
            <<<ws_tk_grid(k, 256, st), 256, 0, stream>>>(ck, ci, k, row * k, codec, out);
        WS_CUDA_TRY(ctx, cudaGetLastError());
    }
    return WARPSORT_OK;
}
/* The path the plan chose, for KB keys. */
template <typename KB>
static warpsort_status_t
ws_tk_paths(warpsort_context_t *ctx, const ws_tk_plan &p, const ws_topk_args_t *a, const void *keys,
            key_codec codec, unsigned char *ws, const ws_tk_outputs &out, cudaStream_t stream) {
    if (p.best) return ws_tk_best_path<KB>(ctx, p, a, keys, codec, ws, out, stream);
    if (p.short_rows) return ws_tk_short_path<KB>(ctx, a, keys, codec, out, stream);
    if (p.rows_block) return ws_tk_rows_path<KB>(ctx, p, a, keys, codec, out, stream);
    if (p.filter) return ws_tk_filter_path<KB>(ctx, p, a, keys, codec, ws, out, stream);
    if (p.warp_path) return ws_tk_warp_path<KB>(ctx, p, a, keys, codec, ws, out, stream);
    return ws_tk_radix_path<KB>(ctx, p, a, keys, codec, ws, out, stream);
}

/* Defines NAME, ws_tk_paths for KB keys, for topk.cu's dispatch. */
#define WS_TK_INSTANCE(NAME, KB)                                                                  \
    warpsort_status_t NAME(warpsort_context_t *ctx, const ws_tk_plan &p, const ws_topk_args_t *a, \
                           const void *keys, key_codec codec, unsigned char *ws,                  \
                           const ws_tk_outputs &out, cudaStream_t stream) {                       \
        return ws_tk_paths<KB>(ctx, p, a, keys, codec, ws, out, stream);                          \
    }

/* The two instances, one a translation unit (topk/k4.cu, topk/k8.cu). */
typedef warpsort_status_t ws_tk_paths_fn(warpsort_context_t *ctx, const ws_tk_plan &p,
                                         const ws_topk_args_t *a, const void *keys, key_codec codec,
                                         unsigned char *ws, const ws_tk_outputs &out,
                                         cudaStream_t stream);
ws_tk_paths_fn ws_tk_paths_k4, ws_tk_paths_k8;

#endif /* WARPSORT_CUDA_TOPK_PATHS_CUH */
