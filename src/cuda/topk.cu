/*
 * topk.cu - CUDA backend: top-k of an array or of every row.
 *
 * Items are (ordered key, index) pairs, the key in "smaller is better"
 * orientation (descending bits for the largest), compared
 * lexicographically: the lower index wins ties and the order is total.
 *
 * Two paths, chosen per call from k and the row length (ws_tk_plan_for):
 *  - warp path, k <= 256 and rows shorter than 2^32 - 1: every warp owns a
 *    chunk of one row and keeps the best k of it as a sorted run of 32 x
 *    ITEMS items in registers (ITEMS = 1..8). Each key is compared with the
 *    run's k-th item as it streams by; the few that beat it are appended
 *    to a per-warp buffer in shared memory, and a full buffer is sorted by
 *    the warp's bitonic network (warp_sort.cuh) and merged into the run:
 *    the elementwise better of the run and the reversed batch is bitonic
 *    and one merge pass sorts it. The input is read once. The runs of a
 *    row's chunks (k each) form a shorter row for the next level, until
 *    one warp holds the row: a few small launches, each reading ~k/chunk
 *    of the level before.
 *  - radix path (larger k), row by row: an exact radix select of the k-th
 *    key (8-bit digits from the top: one histogram pass over the row per
 *    digit, the digit picked on the device), then a count pass and an
 *    ordered compaction of the keys better than it plus the lowest-indexed
 *    keys equal to it (per-tile counts, one scan, ballots inside a tile),
 *    exactly k survivors in index order, sorted stably by the device sort.
 * Everything runs on the context's stream from host-known sizes, so with a
 * caller-set workspace a call on device memory neither allocates nor waits:
 * it can be captured in a CUDA graph. Host arrays are staged through the
 * workspace and copied back after a synchronisation.
 */
#include <cuda_runtime.h>

#include <stdint.h>
#include <string.h>

#include "check.cuh"
#include "device_sort.h"
#include "state.h"
#include "workspace.h"
#include "warpsort/key_traits.cuh"
#include "warpsort/warp_sort.cuh"

using warpsort::decode;
using warpsort::encode;
using warpsort::key_codec;
using warpsort::no_value;
using warpsort::sentinel;
using warpsort::warp_items;

/*=== tuning ===*/
/* Largest k of the warp path: 32 lanes x 8 items of run in registers. */
#define WS_TK_WARP_MAX_K 256
/* A warp's chunk holds at least this many run capacities: the next level
 * then reads at most 1/32 of this one's keys. */
#define WS_TK_MIN_CHUNK_RUNS 32
/* Warps per block of the warp path and keys each lane loads per step. */
#define WS_TK_WARPS 8
#define WS_TK_VEC 4
/* Resident warps per SM the level sizing aims at (x4: a few waves). */
#define WS_TK_WARPS_PER_SM 64
#define WS_TK_MAX_LEVELS 16
/* Radix path: tile of the count and compaction passes (8 warps x 512). */
#define WS_TK_TILE 4096
#define WS_TK_TILE_THREADS 256
#define WS_TK_DIGIT_BITS 8

__host__ __device__ static inline size_t ws_tk_div_up(size_t a, size_t b) {
    return (a + b - 1) / b;
}

/*=== device helpers ===*/

__device__ __forceinline__ unsigned ws_tk_lanemask_lt() {
    unsigned m;
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
    return m;
}

template <typename KB>
__device__ __forceinline__ bool ws_tk_less(KB a, uint32_t pa, KB b, uint32_t pb) {
    return a < b || (a == b && pa < pb);
}

/*=== warp path ===*/

/* One level: segs segments of seg_len items; warp w takes chunk w % wps of
 * segment w / wps and writes its best k (ordered bits, positions in the
 * segment's original row) to out at w * k. Level 0 reads raw keys (in_pos
 * NULL, positions are indices), later levels the previous level's runs. */
struct ws_tk_level {
    const void *in_keys;
    const uint32_t *in_pos;
    size_t segs, seg_len, chunk, wps;
    int k;
    key_codec codec;
    void *out_keys;
    uint32_t *out_pos;
};

template <typename KB, int ITEMS>
struct ws_tk_warp_state {
    static constexpr int BATCH = 32 * ITEMS;
    static constexpr int CAP = BATCH + 32 * WS_TK_VEC;
    warp_items<KB, no_value, uint32_t, ITEMS> run; /* sorted best first, blocked */
    KB tk;                                         /* the run's k-th item: the bar */
    uint32_t tp;
    int count; /* items waiting in the buffer */
    KB *bk;    /* the warp's buffer (shared) */
    uint32_t *bp;
};

/* Sorts the buffer's first `valid` (<= BATCH) items with the warp network,
 * merges them into the run and raises the bar. */
template <typename KB, int ITEMS>
__device__ __forceinline__ void ws_tk_flush(ws_tk_warp_state<KB, ITEMS> &s, int valid, int k,
                                            int lane) {
    constexpr int BATCH = ws_tk_warp_state<KB, ITEMS>::BATCH;
    warp_items<KB, no_value, uint32_t, ITEMS> b;
#pragma unroll
    for (int r = 0; r < ITEMS; r++) {
        const int i = lane * ITEMS + r;
        b.k[r] = i < valid ? s.bk[i] : sentinel<KB>();
        b.p[r] = i < valid ? s.bp[i] : 0xFFFFFFFFu;
    }
    __syncwarp(); /* every read of the buffer is done before it is refilled */
    warpsort::warp_sort_registers<BATCH>(b, lane * ITEMS);
    /* run[i] vs batch[BATCH-1-i]: lane 31 - lane, register ITEMS-1-r. The
     * better of each pair are the best BATCH of both, in bitonic order. */
#pragma unroll
    for (int r = 0; r < ITEMS; r++) {
        const KB ok = warpsort::shfl_xor(b.k[ITEMS - 1 - r], 31);
        const uint32_t op = warpsort::shfl_xor(b.p[ITEMS - 1 - r], 31);
        if (ws_tk_less(ok, op, s.run.k[r], s.run.p[r])) {
            s.run.k[r] = ok;
            s.run.p[r] = op;
        }
    }
    warpsort::warp_merge_registers(s.run, lane * ITEMS, BATCH);
    const int src_reg = (k - 1) % ITEMS;
    KB mk = s.run.k[0];
    uint32_t mp = s.run.p[0];
#pragma unroll
    for (int r = 1; r < ITEMS; r++) {
        if (r == src_reg) {
            mk = s.run.k[r];
            mp = s.run.p[r];
        }
    }
    s.tk = warpsort::detail::shfl_idx(mk, (k - 1) / ITEMS, 32);
    s.tp = warpsort::detail::shfl_idx(mp, (k - 1) / ITEMS, 32);
}

/* Moves buffer items [from, count) to the front. */
template <typename KB, int ITEMS>
__device__ __forceinline__ void ws_tk_shift(ws_tk_warp_state<KB, ITEMS> &s, int from, int lane) {
    const int rest = s.count - from; /* < 32 * WS_TK_VEC */
    KB k[WS_TK_VEC];
    uint32_t p[WS_TK_VEC];
#pragma unroll
    for (int q = 0; q < WS_TK_VEC; q++) {
        const int j = lane + 32 * q;
        if (j < rest) {
            k[q] = s.bk[from + j];
            p[q] = s.bp[from + j];
        }
    }
    __syncwarp();
#pragma unroll
    for (int q = 0; q < WS_TK_VEC; q++) {
        const int j = lane + 32 * q;
        if (j < rest) {
            s.bk[j] = k[q];
            s.bp[j] = p[q];
        }
    }
    __syncwarp();
    s.count = rest;
}

template <typename KB, int ITEMS, bool RAW>
__global__ void __launch_bounds__(32 * WS_TK_WARPS) ws_tk_warp_kernel(ws_tk_level lv) {
    using state = ws_tk_warp_state<KB, ITEMS>;
    __shared__ KB sk[WS_TK_WARPS][state::CAP];
    __shared__ uint32_t sp[WS_TK_WARPS][state::CAP];
    const int warp = (int)(threadIdx.x / 32), lane = (int)(threadIdx.x & 31);
    const size_t w = (size_t)blockIdx.x * WS_TK_WARPS + warp;
    if (w >= lv.segs * lv.wps) return; /* whole warps only */
    const size_t seg = w / lv.wps, c = w % lv.wps;
    const size_t lo = c * lv.chunk;
    const size_t hi = lo + lv.chunk < lv.seg_len ? lo + lv.chunk : lv.seg_len;
    const size_t base = seg * lv.seg_len;
    const KB *in_keys = (const KB *)lv.in_keys;

    state s;
#pragma unroll
    for (int r = 0; r < ITEMS; r++) {
        s.run.k[r] = sentinel<KB>();
        s.run.p[r] = 0xFFFFFFFFu;
    }
    s.tk = sentinel<KB>();
    s.tp = 0xFFFFFFFFu;
    s.count = 0;
    s.bk = sk[warp];
    s.bp = sp[warp];
    const unsigned below = ws_tk_lanemask_lt();

    for (size_t i0 = lo; i0 < hi; i0 += 32 * WS_TK_VEC) {
        KB o[WS_TK_VEC];
        uint32_t p[WS_TK_VEC];
#pragma unroll
        for (int v = 0; v < WS_TK_VEC; v++) {
            const size_t i = i0 + (size_t)(v * 32 + lane);
            o[v] = sentinel<KB>();
            p[v] = 0xFFFFFFFFu;
            if (i < hi) {
                if constexpr (RAW) {
                    o[v] = encode(in_keys[base + i], lv.codec);
                    p[v] = (uint32_t)i;
                } else {
                    o[v] = in_keys[base + i];
                    p[v] = lv.in_pos[base + i];
                }
            }
        }
#pragma unroll
        for (int v = 0; v < WS_TK_VEC; v++) {
            /* padding (sentinel, ~0) never beats the bar */
            const bool pass = ws_tk_less(o[v], p[v], s.tk, s.tp);
            const unsigned m = __ballot_sync(0xFFFFFFFFu, pass);
            if (pass) {
                const int at = s.count + __popc(m & below);
                s.bk[at] = o[v];
                s.bp[at] = p[v];
            }
            s.count += __popc(m);
        }
        __syncwarp();
        while (s.count >= state::BATCH) {
            ws_tk_flush(s, state::BATCH, lv.k, lane);
            ws_tk_shift(s, state::BATCH, lane);
        }
    }
    if (s.count > 0) ws_tk_flush(s, s.count, lv.k, lane);

    KB *out_keys = (KB *)lv.out_keys;
#pragma unroll
    for (int r = 0; r < ITEMS; r++) {
        const int i = lane * ITEMS + r;
        if (i < lv.k) {
            out_keys[w * (size_t)lv.k + i] = s.run.k[r];
            lv.out_pos[w * (size_t)lv.k + i] = s.run.p[r];
        }
    }
}

/*=== radix path (one row at a time) ===*/

/* The select's state: the k-th key's bits found so far (prefix), and its
 * rank among the keys sharing them (remaining, 1-based). After the last
 * digit prefix is the k-th key and remaining the number of keys equal to
 * it that belong to the top k (the lowest-indexed ones). */
struct ws_tk_select {
    unsigned long long prefix;
    unsigned long long remaining;
};

__global__ void ws_tk_select_init(ws_tk_select *sel, unsigned long long *hist, size_t k) {
    sel->prefix = 0;
    sel->remaining = k;
    for (int d = 0; d < (1 << WS_TK_DIGIT_BITS); d++) hist[d] = 0;
}

/* Histogram of the digit at `shift` over the keys whose higher digits
 * match the prefix. */
template <typename KB>
__global__ void __launch_bounds__(256)
    ws_tk_hist_kernel(const KB *keys, size_t n, key_codec codec, const ws_tk_select *sel, int shift,
                      unsigned long long *hist) {
    constexpr int BINS = 1 << WS_TK_DIGIT_BITS;
    constexpr int BITS = 8 * (int)sizeof(KB);
    __shared__ unsigned h[BINS];
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) h[b] = 0;
    __syncthreads();
    const KB prefix = (KB)sel->prefix;
    const int above = shift + WS_TK_DIGIT_BITS;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const KB o = encode(keys[i], codec);
        if (above >= BITS || ((o ^ prefix) >> above) == 0)
            atomicAdd(&h[(unsigned)(o >> shift) & (BINS - 1)], 1u);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x)
        if (h[b]) atomicAdd(&hist[b], (unsigned long long)h[b]);
}

/* Picks the digit holding the remaining rank; clears the histogram. */
__global__ void ws_tk_pick_kernel(ws_tk_select *sel, unsigned long long *hist, int shift) {
    constexpr int BINS = 1 << WS_TK_DIGIT_BITS;
    if (threadIdx.x == 0) {
        unsigned long long cum = 0, rem = sel->remaining;
        for (int d = 0; d < BINS; d++) {
            const unsigned long long c = hist[d];
            if (cum + c >= rem) {
                sel->prefix |= (unsigned long long)d << shift;
                sel->remaining = rem - cum;
                break;
            }
            cum += c;
        }
    }
    __syncthreads();
    for (int d = threadIdx.x; d < BINS; d += blockDim.x) hist[d] = 0;
}

/* Per tile: keys better than the k-th (less) and equal to it (eq). */
template <typename KB>
__global__ void __launch_bounds__(WS_TK_TILE_THREADS)
    ws_tk_count_kernel(const KB *keys, size_t n, key_codec codec, const ws_tk_select *sel,
                       unsigned *tile_less, unsigned *tile_eq) {
    __shared__ unsigned sl, se;
    if (threadIdx.x == 0) sl = se = 0;
    __syncthreads();
    const KB t = (KB)sel->prefix;
    const size_t base = (size_t)blockIdx.x * WS_TK_TILE;
    unsigned l = 0, e = 0;
    for (int j = 0; j < WS_TK_TILE / WS_TK_TILE_THREADS; j++) {
        const size_t i = base + (size_t)j * WS_TK_TILE_THREADS + threadIdx.x;
        if (i < n) {
            const KB o = encode(keys[i], codec);
            l += o < t;
            e += o == t;
        }
    }
    for (int off = 16; off > 0; off /= 2) {
        l += __shfl_xor_sync(0xFFFFFFFFu, l, off);
        e += __shfl_xor_sync(0xFFFFFFFFu, e, off);
    }
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(&sl, l);
        atomicAdd(&se, e);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        tile_less[blockIdx.x] = sl;
        tile_eq[blockIdx.x] = se;
    }
}

/* Exclusive scans of the tile counts (one block). */
__global__ void __launch_bounds__(1024)
    ws_tk_scan_kernel(const unsigned *tile_less, const unsigned *tile_eq, size_t tiles,
                      unsigned long long *less_base, unsigned long long *eq_base) {
    __shared__ unsigned long long sl[1024], se[1024];
    const size_t per = ws_tk_div_up(tiles, blockDim.x);
    const size_t lo = threadIdx.x * per, hi = lo + per < tiles ? lo + per : tiles;
    unsigned long long l = 0, e = 0;
    for (size_t t = lo; t < hi; t++) {
        l += tile_less[t];
        e += tile_eq[t];
    }
    sl[threadIdx.x] = l;
    se[threadIdx.x] = e;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned long long rl = 0, re = 0;
        for (unsigned t = 0; t < blockDim.x; t++) {
            const unsigned long long a = sl[t], b = se[t];
            sl[t] = rl;
            se[t] = re;
            rl += a;
            re += b;
        }
    }
    __syncthreads();
    l = sl[threadIdx.x];
    e = se[threadIdx.x];
    for (size_t t = lo; t < hi; t++) {
        less_base[t] = l;
        eq_base[t] = e;
        l += tile_less[t];
        e += tile_eq[t];
    }
}

/* Writes the k survivors in index order: an item's place is the number of
 * better keys before it plus the number of selected equal keys before it
 * (the first `remaining` equal keys are selected). Warp w of a tile covers
 * 512 consecutive keys, lane l items j * 32 + l. */
template <typename KB>
__global__ void __launch_bounds__(WS_TK_TILE_THREADS)
    ws_tk_compact_kernel(const KB *keys, size_t n, key_codec codec, const ws_tk_select *sel,
                         const unsigned long long *less_base, const unsigned long long *eq_base,
                         KB *out_keys, unsigned long long *out_idx) {
    constexpr int PER_WARP = WS_TK_TILE / (WS_TK_TILE_THREADS / 32);
    constexpr int STEPS = PER_WARP / 32;
    __shared__ unsigned wl[WS_TK_TILE_THREADS / 32], we[WS_TK_TILE_THREADS / 32];
    const int warp = (int)(threadIdx.x / 32), lane = (int)(threadIdx.x & 31);
    const KB t = (KB)sel->prefix;
    const unsigned long long take = sel->remaining;
    const size_t first = (size_t)blockIdx.x * WS_TK_TILE + (size_t)warp * PER_WARP;
    KB raw[STEPS];
    unsigned ml[STEPS], me[STEPS];
    unsigned cl = 0, ce = 0;
#pragma unroll
    for (int j = 0; j < STEPS; j++) {
        const size_t i = first + (size_t)j * 32 + lane;
        bool l = false, e = false;
        raw[j] = 0;
        if (i < n) {
            raw[j] = keys[i];
            const KB o = encode(raw[j], codec);
            l = o < t;
            e = o == t;
        }
        ml[j] = __ballot_sync(0xFFFFFFFFu, l);
        me[j] = __ballot_sync(0xFFFFFFFFu, e);
        cl += __popc(ml[j]);
        ce += __popc(me[j]);
    }
    if (lane == 0) {
        wl[warp] = cl;
        we[warp] = ce;
    }
    __syncthreads();
    unsigned long long lb = less_base[blockIdx.x], eb = eq_base[blockIdx.x];
    for (int v = 0; v < warp; v++) {
        lb += wl[v];
        eb += we[v];
    }
    const unsigned below = ws_tk_lanemask_lt();
#pragma unroll
    for (int j = 0; j < STEPS; j++) {
        const size_t i = first + (size_t)j * 32 + lane;
        const unsigned long long l_before = lb + __popc(ml[j] & below);
        const unsigned long long e_before = eb + __popc(me[j] & below);
        const unsigned long long e_sel = e_before < take ? e_before : take;
        const bool is_l = (ml[j] >> lane) & 1u, is_e = (me[j] >> lane) & 1u;
        if (is_l || (is_e && e_before < take)) {
            const unsigned long long at = l_before + e_sel;
            out_keys[at] = raw[j];
            out_idx[at] = i;
        }
        lb += __popc(ml[j]);
        eb += __popc(me[j]);
    }
}

/*=== outputs ===*/

/* m results from out_base on (row = index / k): keys (ordered bits decoded
 * when ORDERED, else raw), indices, values gathered from the row. */
struct ws_tk_outputs {
    void *keys, *indices, *values;
    int index_bytes, value_bytes;
    const void *in_values;
    size_t k, row_len;
};

template <typename KB, typename I, bool ORDERED>
__global__ void ws_tk_finish_kernel(const KB *keys, const I *idx, size_t m, size_t out_base,
                                    key_codec codec, ws_tk_outputs out) {
    for (size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x; j < m;
         j += (size_t)gridDim.x * blockDim.x) {
        const size_t o = out_base + j;
        const KB key = ORDERED ? decode(keys[j], codec) : keys[j];
        const unsigned long long ix = idx[j];
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
}

/*=== host side ===*/

/* One plan per call: the path, the warp levels and every workspace offset;
 * the size query and the call both read it. */
struct ws_tk_plan {
    int warp_path;
    int items; /* warp path: run items per lane (1, 2, 4, 8) */
    int levels;
    size_t seg_len[WS_TK_MAX_LEVELS], chunk[WS_TK_MAX_LEVELS], wps[WS_TK_MAX_LEVELS];
    size_t tiles; /* radix path, per row */
    /* workspace offsets (bytes) */
    size_t keys_in, vals_in;            /* staged inputs (host arrays) */
    size_t out_keys, out_idx, out_vals; /* staged outputs */
    size_t cand_keys[2], cand_pos[2];   /* warp path: the levels' runs */
    size_t select, hist, tile_cnt, tile_base, surv_keys, surv_idx, sort; /* radix path */
    ws_plan_t sort_plan; /* radix path: the survivors' sort (the leaf's plan) */
    size_t total;
};

struct ws_tk_staging {
    int keys_in, vals_in, out_keys, out_idx, out_vals;
};

static ws_tk_plan ws_tk_plan_for(const warpsort_context_t *ctx, size_t rows, size_t row_len,
                                 size_t kb, size_t vb, size_t k, size_t ib, ws_tk_staging sg) {
    const ws_cuda_state *st = ws_state(ctx);
    ws_tk_plan p;
    memset(&p, 0, sizeof p);
    size_t at = 0;
    const auto take = [&at](size_t bytes) {
        const size_t off = at;
        at += ws_align256(bytes);
        return off;
    };
    const size_t n = rows * row_len, m = rows * k;
    p.keys_in = sg.keys_in ? take(n * kb) : 0;
    p.vals_in = sg.vals_in ? take(n * vb) : 0;
    p.out_keys = sg.out_keys ? take(m * kb) : 0;
    p.out_idx = sg.out_idx ? take(m * ib) : 0;
    p.out_vals = sg.out_vals ? take(m * vb) : 0;
    p.warp_path = k <= WS_TK_WARP_MAX_K && row_len < 0xFFFFFFFFull;
    if (p.warp_path) {
        p.items = k <= 32 ? 1 : k <= 64 ? 2 : k <= 128 ? 4 : 8;
        const size_t target = (size_t)st->dev.sm_count * WS_TK_WARPS_PER_SM * 4;
        const size_t min_chunk = (size_t)WS_TK_MIN_CHUNK_RUNS * 32 * p.items;
        size_t len = row_len, first_out = 0;
        for (int lev = 0; lev < WS_TK_MAX_LEVELS; lev++) {
            size_t want = ws_tk_div_up(target, rows);
            const size_t most = ws_tk_div_up(len, min_chunk);
            size_t wps = want < most ? want : most;
            if (wps < 1) wps = 1;
            if (lev == WS_TK_MAX_LEVELS - 1) wps = 1;
            const size_t chunk = ws_tk_div_up(len, wps);
            wps = ws_tk_div_up(len, chunk);
            p.seg_len[lev] = len;
            p.chunk[lev] = chunk;
            p.wps[lev] = wps;
            p.levels = lev + 1;
            if (lev == 0) first_out = rows * wps * k;
            if (wps == 1) break;
            len = wps * k;
        }
        /* level outputs shrink: the first is the largest */
        for (int b = 0; b < 2; b++) {
            p.cand_keys[b] = take(first_out * kb);
            p.cand_pos[b] = take(first_out * sizeof(uint32_t));
        }
    } else {
        p.tiles = ws_tk_div_up(row_len, WS_TK_TILE);
        p.select = take(sizeof(ws_tk_select));
        p.hist = take(sizeof(unsigned long long) << WS_TK_DIGIT_BITS);
        p.tile_cnt = take(2 * p.tiles * sizeof(unsigned));
        p.tile_base = take(2 * p.tiles * sizeof(unsigned long long));
        p.surv_keys = take(k * kb);
        p.surv_idx = take(k * sizeof(unsigned long long));
        p.sort_plan = ws_plan_make(&st->dev, k, kb, sizeof(unsigned long long));
        p.sort = take(p.sort_plan.lay.total);
    }
    p.total = at;
    return p;
}

static unsigned ws_tk_grid(size_t items, unsigned threads, const ws_cuda_state *st) {
    size_t g = ws_tk_div_up(items, threads);
    const size_t most = (size_t)st->dev.sm_count * 8;
    if (g > most) g = most;
    return (unsigned)(g ? g : 1);
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
    const ws_cuda_state *st = ws_state(ctx);
    const void *in_keys = keys;
    const uint32_t *in_pos = NULL;
    int b = 0;
    for (int lev = 0; lev < p.levels; lev++, b ^= 1) {
        ws_tk_level lv;
        lv.in_keys = in_keys;
        lv.in_pos = in_pos;
        lv.segs = a->rows;
        lv.seg_len = p.seg_len[lev];
        lv.chunk = p.chunk[lev];
        lv.wps = p.wps[lev];
        lv.k = (int)a->k;
        lv.codec = codec;
        lv.out_keys = ws + p.cand_keys[b];
        lv.out_pos = (uint32_t *)(ws + p.cand_pos[b]);
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
    const size_t m = a->rows * a->k;
    ws_tk_finish_kernel<KB, uint32_t, true>
        <<<ws_tk_grid(m, 256, st), 256, 0, stream>>>((const KB *)in_keys, in_pos, m, 0, codec, out);
    WS_CUDA_TRY(ctx, cudaGetLastError());
    return WARPSORT_OK;
}

template <typename KB>
static warpsort_status_t ws_tk_radix_path(warpsort_context_t *ctx, const ws_tk_plan &p,
                                          const ws_topk_args_t *a, const void *keys,
                                          key_codec codec, unsigned char *ws,
                                          const ws_tk_outputs &out, cudaStream_t stream) {
    const ws_cuda_state *st = ws_state(ctx);
    const size_t n = a->row_len, k = a->k;
    ws_tk_select *sel = (ws_tk_select *)(ws + p.select);
    unsigned long long *hist = (unsigned long long *)(ws + p.hist);
    unsigned *tile_less = (unsigned *)(ws + p.tile_cnt), *tile_eq = tile_less + p.tiles;
    unsigned long long *less_base = (unsigned long long *)(ws + p.tile_base);
    unsigned long long *eq_base = less_base + p.tiles;
    KB *surv_keys = (KB *)(ws + p.surv_keys);
    unsigned long long *surv_idx = (unsigned long long *)(ws + p.surv_idx);
    const unsigned hist_grid = ws_tk_grid(n, 256 * 16, st);
    const unsigned tiles = (unsigned)p.tiles;
    for (size_t row = 0; row < a->rows; row++) {
        const KB *rk = (const KB *)keys + row * n;
        ws_tk_select_init<<<1, 1, 0, stream>>>(sel, hist, k);
        for (int shift = 8 * (int)sizeof(KB) - WS_TK_DIGIT_BITS; shift >= 0;
             shift -= WS_TK_DIGIT_BITS) {
            ws_tk_hist_kernel<KB><<<hist_grid, 256, 0, stream>>>(rk, n, codec, sel, shift, hist);
            ws_tk_pick_kernel<<<1, 256, 0, stream>>>(sel, hist, shift);
        }
        ws_tk_count_kernel<KB>
            <<<tiles, WS_TK_TILE_THREADS, 0, stream>>>(rk, n, codec, sel, tile_less, tile_eq);
        ws_tk_scan_kernel<<<1, 1024, 0, stream>>>(tile_less, tile_eq, p.tiles, less_base, eq_base);
        ws_tk_compact_kernel<KB><<<tiles, WS_TK_TILE_THREADS, 0, stream>>>(
            rk, n, codec, sel, less_base, eq_base, surv_keys, surv_idx);
        WS_CUDA_TRY(ctx, cudaGetLastError());
        /* Survivors are in index order: a stable sort leaves ties by index. */
        const char *failed = NULL;
        const cudaError_t err = ws_device_sort(&p.sort_plan, surv_keys, surv_idx, a->dtype,
                                               codec.desc, 1, ws + p.sort, stream, &failed);
        if (err != cudaSuccess) return ws_cuda_fail(ctx, err, failed);
        ws_tk_finish_kernel<KB, unsigned long long, false>
            <<<ws_tk_grid(k, 256, st), 256, 0, stream>>>(surv_keys, surv_idx, k, row * k, codec,
                                                         out);
        WS_CUDA_TRY(ctx, cudaGetLastError());
    }
    return WARPSORT_OK;
}

static ws_tk_staging ws_tk_staging_of(const ws_topk_args_t *a) {
    ws_tk_staging sg;
    sg.keys_in = !ws_cuda_device_pointer(a->keys);
    sg.vals_in = a->values && !ws_cuda_device_pointer(a->values);
    sg.out_keys = a->out_keys && !ws_cuda_device_pointer(a->out_keys);
    sg.out_idx = a->out_indices && !ws_cuda_device_pointer(a->out_indices);
    sg.out_vals = a->out_values && !ws_cuda_device_pointer(a->out_values);
    return sg;
}

static warpsort_status_t ws_tk_run(warpsort_context_t *ctx, const ws_topk_args_t *a) {
    ws_cuda_state *st = ws_state(ctx);
    const size_t kb = warpsort_dtype_size(a->dtype), vb = a->value_bytes, ib = a->index_bytes;
    const size_t n = a->rows * a->row_len, m = a->rows * a->k;
    const ws_tk_staging sg = ws_tk_staging_of(a);
    const ws_tk_plan p = ws_tk_plan_for(ctx, a->rows, a->row_len, kb, vb, a->k, ib, sg);
    unsigned char *ws = NULL;
    warpsort_status_t s = ws_acquire(ctx, p.total, &ws);
    if (s != WARPSORT_OK) return s;
    cudaStream_t stream = st->stream;

    const void *keys = sg.keys_in ? (const void *)(ws + p.keys_in) : a->keys;
    const void *values = sg.vals_in ? (const void *)(ws + p.vals_in) : a->values;
    if (sg.keys_in)
        WS_CUDA_TRY(ctx,
                    cudaMemcpyAsync(ws + p.keys_in, a->keys, n * kb, cudaMemcpyDefault, stream));
    if (sg.vals_in)
        WS_CUDA_TRY(ctx,
                    cudaMemcpyAsync(ws + p.vals_in, a->values, n * vb, cudaMemcpyDefault, stream));
    ws_tk_outputs out;
    out.keys = sg.out_keys ? (void *)(ws + p.out_keys) : a->out_keys;
    out.indices = sg.out_idx ? (void *)(ws + p.out_idx) : a->out_indices;
    out.values = sg.out_vals ? (void *)(ws + p.out_vals) : a->out_values;
    out.index_bytes = (int)ib;
    out.value_bytes = (int)vb;
    out.in_values = values;
    out.k = a->k;
    out.row_len = a->row_len;
    /* smaller is better: the largest are best in descending bits */
    const key_codec codec = {ws_dtype_kind(a->dtype), a->smallest ? 0 : 1};
    if (kb == 4)
        s = p.warp_path ? ws_tk_warp_path<uint32_t>(ctx, p, a, keys, codec, ws, out, stream)
                        : ws_tk_radix_path<uint32_t>(ctx, p, a, keys, codec, ws, out, stream);
    else
        s = p.warp_path ? ws_tk_warp_path<uint64_t>(ctx, p, a, keys, codec, ws, out, stream)
                        : ws_tk_radix_path<uint64_t>(ctx, p, a, keys, codec, ws, out, stream);
    if (s != WARPSORT_OK) return s;
    if (!(sg.keys_in || sg.vals_in || sg.out_keys || sg.out_idx || sg.out_vals))
        return WARPSORT_OK; /* asynchronous */
    /* Host arrays: wait for the result before writing any of them, so a
     * failure leaves them as they were. */
    WS_CUDA_TRY(ctx, cudaStreamSynchronize(stream));
    if (sg.out_keys)
        WS_CUDA_TRY(ctx, cudaMemcpyAsync(a->out_keys, out.keys, m * kb, cudaMemcpyDefault, stream));
    if (sg.out_idx)
        WS_CUDA_TRY(
            ctx, cudaMemcpyAsync(a->out_indices, out.indices, m * ib, cudaMemcpyDefault, stream));
    if (sg.out_vals)
        WS_CUDA_TRY(ctx,
                    cudaMemcpyAsync(a->out_values, out.values, m * vb, cudaMemcpyDefault, stream));
    WS_CUDA_TRY(ctx, cudaStreamSynchronize(stream));
    return WARPSORT_OK;
}

extern "C" {

warpsort_status_t ws_cuda_topk(warpsort_context_t *ctx, const ws_topk_args_t *a) {
    ws_device_guard g;
    cudaError_t err = ws_enter_device(ctx->device, &g);
    if (err != cudaSuccess) return ws_cuda_fail(ctx, err, "cudaSetDevice");
    const warpsort_status_t s = ws_tk_run(ctx, a);
    ws_leave_device(&g);
    return s;
}

warpsort_status_t ws_cuda_topk_workspace_size(const warpsort_context_t *ctx, size_t rows,
                                              size_t row_len, warpsort_dtype_t dtype,
                                              size_t value_bytes, size_t k, size_t *bytes) {
    const ws_tk_staging none = {0, 0, 0, 0, 0};
    *bytes = ws_tk_plan_for(ctx, rows, row_len, warpsort_dtype_size(dtype), value_bytes, k, 8, none)
                 .total;
    return WARPSORT_OK;
}

} /* extern "C" */
