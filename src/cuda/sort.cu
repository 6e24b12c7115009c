/*
 * sort.cu - the CUDA backend: whole-array dispatch, workspace, host arrays.
 *
 * One plan per call (ws_plan_for, plan.cuh) picks the path for n items (key
 * + optional value): the sample sort above WS_SAMPLE_MIN_N on the Hopper
 * family (ws_sample_sort_device: distribute.cuh levels, then tile_sort.cuh
 * bucket sorts), else the merge path:
 *   1. block_sort_kernel sorts every tile of TILE items on chip (bitonic
 *      network per warp, then merges in shared memory:
 *      warpsort/block_sort.cuh) and writes sorted runs as ordered bits; a
 *      block sorts two tiles and merges them when that saves a merge pass
 *      (ws_sort_tile_for).
 *   2. ceil(log4(n / run)) merge passes (merge.cuh) each merge four runs
 *      into one: merge4_cuts splits every group of four runs into
 *      segments, merge4_pass merges one segment per block; the last pass
 *      decodes the ordered bits.
 * Buffers ping-pong between the caller's array and a workspace copy; the tile
 * sort writes to whichever makes the last pass land in the caller's array
 * (parity), so no final copy is needed. n <= TILE is one launch, in place.
 * A partial last tile reads sentinels past n and stores only real items.
 *
 * Host arrays go through the pipeline (pipeline.cu), which calls
 * ws_sort_any on device pieces; keys and values split between host and
 * device memory are staged whole here.
 */
#include <cuda_runtime.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <type_traits>

#include "tile_sort.cuh"
#include "core/internal.h"
#include "merge.cuh"
#include "distribute.cuh"
#include "plan.cuh"
#include "pipeline.h"
#include "plan_report.h"
#include "tuning.cuh"
#include "warpsort/block_sort.cuh"
#include "warpsort/key_traits.cuh"

/* The public device API (include/warpsort/) is the one implementation of
 * the warp and block collectives; these are the parts the backend calls. */
using warpsort::block_sort_tile;
using warpsort::decode;
using warpsort::encode;
using warpsort::merge_items_to_registers;
using warpsort::no_value;
using warpsort::sentinel;
using warpsort::smem_get;
using warpsort::smem_put;
using warpsort::tile_smem;
using warpsort::warp_items;

static ws_cuda_state *ws_state(const warpsort_context_t *ctx) {
    return (ws_cuda_state *)ctx->cuda;
}

/* The one place that maps a device to its row of tuning.cuh: the first
 * family (most shared memory first) whose needs the device's limits meet,
 * or WS_FAMILY_COUNT when none does. ws_cuda_init calls it once and keeps
 * the answer in ws_cuda_state.family. A kernel takes its launch shape from
 * ws_policy(key_bytes, value_bytes, family), as a template argument
 * (ws_plan<KB, V, F>, one switch over the family: ws_sort_device_family),
 * and its shared memory must fit ws_family_of(F).smem_block (assert it). */
static int ws_select_family(const ws_device_limits *lim) {
    for (int f = 0; f < WS_FAMILY_COUNT; f++) {
        const ws_family_info fi = ws_family_of(f);
        if (lim->smem_block >= fi.smem_block && lim->smem_sm >= fi.smem_sm) return f;
    }
    return WS_FAMILY_COUNT;
}

warpsort_status_t ws_cuda_fail(warpsort_context_t *ctx, cudaError_t err, const char *what) {
    /* Clear a non-sticky error so the next call starts clean. */
    (void)cudaGetLastError();
    if (err == cudaErrorMemoryAllocation)
        return ws_error(ctx, WARPSORT_OUT_OF_MEMORY, "%s: %s", what, cudaGetErrorString(err));
    return ws_error(ctx, WARPSORT_CUDA_ERROR, "%s: %s (%s)", what, cudaGetErrorName(err),
                    cudaGetErrorString(err));
}

#define WS_CUDA_TRY(ctx, call)                                 \
    do {                                                       \
        cudaError_t ws_err_ = (call);                          \
        if (ws_err_ != cudaSuccess) return ws_cuda_fail((ctx), ws_err_, #call); \
    } while (0)

/* Restores the caller's current device when a call returns. */
struct ws_device_guard {
    int previous;
    int changed;
};
static cudaError_t ws_enter_device(const warpsort_context_t *ctx, ws_device_guard *g) {
    g->changed = 0;
    cudaError_t err = cudaGetDevice(&g->previous);
    if (err != cudaSuccess) return err;
    if (g->previous != ctx->device) {
        err = cudaSetDevice(ctx->device);
        g->changed = err == cudaSuccess;
    }
    return err;
}
static void ws_leave_device(ws_device_guard *g) {
    if (g->changed) (void)cudaSetDevice(g->previous);
}

/*=== kernels ===*/

template <typename I>
__global__ void ws_iota_kernel(I *out, size_t n) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        out[i] = (I)i;
}

/*=== host side ===*/

/* Shapes of one key/value type on one architecture family (tuning.cuh). */
template <typename KB, typename V, int F = WS_FAMILY_SM90>
struct ws_plan {
    static constexpr int KEY_BYTES = sizeof(KB);
    static constexpr int VALUE_BYTES = is_value<V>::value ? (int)sizeof(V) : 0;
    static constexpr ws_shape SHAPE = ws_policy(KEY_BYTES, VALUE_BYTES, F);
    static constexpr int TILE = SHAPE.tile_threads * SHAPE.tile_items;
    static constexpr int MERGE_TILE = SHAPE.merge_threads * SHAPE.merge_items;
    static constexpr int CHUNK = ws_cut_chunk(KEY_BYTES, VALUE_BYTES, F);
    static_assert(TILE % CHUNK == 0, "the cut chunk must divide every run");

    static constexpr size_t tile_smem(int sub) {
        return ws_tile_smem_bytes<KB, V>(sub * TILE, sub);
    }
    /* Two buffers (the pieces, then X and Y) of keys and of values. */
    static constexpr size_t merge_smem() {
        return 2 * sizeof(KB) * ws_merge_slots<KB>(MERGE_TILE, SHAPE.merge_items) +
               (VALUE_BYTES ? 2 * sizeof(V) * ws_merge_slots<V>(MERGE_TILE, SHAPE.merge_items)
                            : 0);
    }
    /* Every block of the row fits what its family promises (ws_select_family). */
    static_assert(tile_smem(ws_family_of(F).tile_max_sub) <= ws_family_of(F).smem_block,
                  "tile-sort block larger than the family's shared memory");
    static_assert(merge_smem() <= ws_family_of(F).smem_block,
                  "merge block larger than the family's shared memory");
};

static unsigned ws_log2(size_t x) {
    unsigned l = 0;
    while (((size_t)1 << l) < x) l++;
    return l;
}
/* The pass over runs of `run` (a power of two) with cuts every `chunk`. */
static ws_pass_shape ws_pass_for(size_t n, size_t run, size_t chunk) {
    ws_pass_shape p;
    p.n = n;
    p.run_shift = ws_log2(run);
    p.chunk_shift = ws_log2(chunk);
    return p;
}
/* Segment slots of a pass (= merge blocks, = cut threads): a power of two
 * per full group, then the short last group's segments. */
static size_t ws_pass_slots(ws_pass_shape p) {
    const size_t full = p.n >> (p.run_shift + 2);
    size_t slots = full << ws_slot_shift(p);
    if (p.n & (((size_t)1 << (p.run_shift + 2)) - 1))
        slots += ws_group_segments(ws_group_span(full, p), p);
    return slots;
}

/* Workspace for sorting n device-resident items, as byte offsets: the
 * ping-pong copy of keys (at 0) and of values, and the cuts of the largest
 * merge pass (4 counts per segment). Empty when one tile holds everything.
 * The one place that lays it out, for sizing and for use. */
struct ws_sort_layout {
    size_t vals_off, cuts_off, total;
};
static ws_sort_layout ws_sort_layout_for(size_t n, size_t key_bytes, size_t value_bytes,
                                         int family) {
    ws_sort_layout l = {0, 0, 0};
    const size_t tile = ws_sort_tile_for(n, (int)key_bytes, (int)value_bytes, family);
    if (n <= tile) return l;
    const size_t chunk = (size_t)ws_cut_chunk((int)key_bytes, (int)value_bytes, family);
    size_t slots = 0;
    for (size_t run = tile; run < n; run *= 4) {
        const size_t s = ws_pass_slots(ws_pass_for(n, run, chunk));
        slots = s > slots ? s : slots;
    }
    l.vals_off = ws_align256(n * key_bytes);
    l.cuts_off = l.vals_off + ws_align256(n * value_bytes);
    l.total = l.cuts_off + ws_align256(4 * slots * sizeof(size_t));
    return l;
}
static size_t ws_pow2_at_least(size_t x) {
    size_t p = 1;
    while (p < x) p *= 2;
    return p;
}
static size_t ws_min(size_t a, size_t b) { return a < b ? a : b; }

/* The one plan of a call (plan.cuh). */
static ws_plan_t ws_plan_for(const ws_cuda_state *st, size_t n, size_t kb, size_t vb) {
    const ws_sample_limits &lim = st->sample_limits;
    ws_plan_t p = {};
    p.n = n;
    p.key_bytes = kb;
    p.value_bytes = vb;
    const size_t tile = ws_sort_tile_for(n, (int)kb, (int)vb, st->family);
    /* The sample sort's shapes are Hopper's (measured there); other
     * families keep the merge passes, whose rows tuning.cuh has for them. */
    if (n <= tile || n < lim.min_n || st->family != WS_FAMILY_SM90 || !st->sample_ok) {
        p.path = n <= tile ? WS_PATH_TILE : WS_PATH_MERGE;
        p.lay.total = ws_sort_layout_for(n, kb, vb, st->family).total;
        return p;
    }
    p.path = WS_PATH_SAMPLE;
    const ws_shape shape = ws_policy((int)kb, (int)vb);
    const unsigned T = (unsigned)(shape.tile_threads * shape.tile_items);
    p.cap = 2 * T;
    for (int c = 0; c < WS_SORT_CLASSES; c++) p.class_cap[c] = T << c;
    /* Buckets of about half a tile: the spread of a 16x oversampled split
     * stays inside one tile, and two tiles take the tail. */
    const size_t target = T / 2;
    size_t r = (n + target - 1) / target;
    while (r > 1 && p.levels < lim.levels && p.levels < WS_MAX_LEVELS) {
        size_t b = ws_min(ws_pow2_at_least(r), (size_t)WS_TREE_SLOTS);
        b = ws_min(b, (size_t)lim.splitters + 1);
        p.splitters[p.levels++] = (unsigned)(b - 1);
        r = (r + b - 1) / b;
    }
    /* A last level after the first takes only the buckets the level before
     * left bigger than cap, up to a few times cap: sized for n / target it
     * drew 1-7 splitters, cut them into buckets still over cap, and those
     * went to the one-block fallback. 31 splitters bring them below a tile. */
    if (p.levels >= 2) {
        unsigned &last = p.splitters[p.levels - 1];
        const unsigned floor_s = lim.splitters < 31u ? lim.splitters : 31u;
        last = last > floor_s ? last : floor_s;
    }
    const size_t D = (size_t)WS_DIST_THREADS * ws_dist_items((int)kb, (int)vb);
    /* Level 0's blocks fill whole waves: about WS_DIST_BLOCKS_PER_SM per SM
     * (tuning.cuh), as few as that allows, so few count entries too. */
    const size_t sms = (size_t)(st->sm_count > 0 ? st->sm_count : 1);
    const size_t slots = (size_t)WS_DIST_BLOCKS_PER_SM * sms;
    const size_t tiles = ((n + D - 1) / D + slots - 1) / slots;
    const size_t base_blocks = (n + D * tiles - 1) / (D * tiles);
    size_t buckets_total = 0;
    p.max_cnt = 0;
    for (int l = 0; l < p.levels; l++) {
        p.chunk[l] = (unsigned)(D * tiles);
        p.max_segs[l] = l == 0 ? 1u
                               : (unsigned)ws_min((size_t)p.max_segs[l - 1] *
                                                      ws_level_buckets(p.splitters[l - 1]),
                                                  n / (p.cap + 1) + 1);
        p.max_blocks[l] = (unsigned)(base_blocks + (l ? p.max_segs[l] : 0));
        /* Count entries per block: the level's own bucket bound, not the
         * largest tree's (a last level with few splitters needs few). */
        const size_t entries = (size_t)p.max_blocks[l] * ws_level_buckets(p.splitters[l]);
        p.max_cnt = p.max_cnt > entries ? p.max_cnt : entries;
        buckets_total += ws_min(n, (size_t)p.max_segs[l] * ws_level_buckets(p.splitters[l]));
    }
    for (int c = 0; c < WS_SORT_CLASSES; c++)
        p.sort_list_cap[c] = ws_min(buckets_total, n / (c ? p.class_cap[c - 1] + 1 : 1) + 1);
    p.copy_list_cap = buckets_total + n / WS_COPY_PIECE + 1;
    p.big_list_cap = n / (p.cap + 1) + 1;

    ws_sample_layout &L = p.lay;
    size_t off = ws_align256(n * kb);
    L.vals_tmp = off;
    off += ws_align256(n * vb);
    L.cnt = off;
    off += ws_align256((p.max_cnt + 1) * sizeof(unsigned long long));
    L.partials = off;
    off += ws_align256((p.max_cnt / WS_SCAN_TILE + 2) * sizeof(unsigned long long));
    L.ctl = off;
    off += ws_align256(WS_MAX_LEVELS * sizeof(ws_level_ctl) + sizeof(ws_final_ctl));
    for (int l = 0; l < p.levels; l++) {
        L.segs[l] = off;
        off += ws_align256(p.max_segs[l] * sizeof(ws_dist_seg));
        L.splits[l] = off;
        off += ws_align256((size_t)p.max_segs[l] * WS_TREE_SLOTS * kb);
        L.blockseg[l] = off;
        off += l ? ws_align256(p.max_blocks[l] * sizeof(unsigned)) : 0;
    }
    for (int c = 0; c < WS_SORT_CLASSES; c++) {
        L.sort_list[c] = off;
        off += ws_align256(p.sort_list_cap[c] * sizeof(ws_bucket));
    }
    L.copy_list = off;
    off += ws_align256(p.copy_list_cap * sizeof(ws_bucket));
    L.big_list = off;
    off += ws_align256(p.big_list_cap * sizeof(ws_big_bucket));
    L.total = off;
    return p;
}

size_t ws_sort_workspace_bytes(const warpsort_context_t *ctx, size_t n, size_t key_bytes,
                               size_t value_bytes) {
    return ws_plan_for(ws_state(ctx), n, key_bytes, value_bytes).lay.total;
}

/* The plan's passes (plan_report.h): what each launch of ws_sample_sort_device
 * or ws_sort_device reads and writes in bulk. */
extern "C" size_t ws_plan_passes(const warpsort_context_t *ctx, size_t n, size_t key_bytes,
                                 size_t value_bytes, ws_pass_bytes *out, size_t cap) {
    const ws_cuda_state *st = ws_state(ctx);
    if (!st) return 0;
    const ws_plan_t p = ws_plan_for(st, n, key_bytes, value_bytes);
    const unsigned long long keys = (unsigned long long)n * key_bytes;
    const unsigned long long all = (unsigned long long)n * (key_bytes + value_bytes);
    size_t count = 0;
    auto add = [&](const char *what, int i, unsigned long long read, unsigned long long written) {
        if (count < cap) {
            if (i >= 0) snprintf(out[count].name, sizeof out[count].name, "%s %d", what, i);
            else snprintf(out[count].name, sizeof out[count].name, "%s", what);
            out[count].read = read;
            out[count].written = written;
        }
        count++;
    };
    if (p.path == WS_PATH_SAMPLE) {
        for (int l = 0; l < p.levels; l++) {
            add("count, level", l, keys, 0);
            add("scatter, level", l, all, all);
        }
        add("bucket sort", -1, all, all);
    } else {
        add("tile sort", -1, all, all);
        const size_t tile =
            ws_sort_tile_for(n, (int)key_bytes, (int)value_bytes, st->family);
        const int passes = p.path == WS_PATH_MERGE ? ws_merge_passes(n, tile) : 0;
        for (int i = 0; i < passes; i++) add("merge pass", i + 1, all, all);
    }
    return count;
}

template <typename KB, typename V, int F, bool STABLE, int SUB>
static cudaError_t ws_launch_tiles_of(const KB *in, const V *vin, KB *out, V *vout, size_t n,
                                      size_t offset, unsigned tiles, int keep_ordered,
                                      key_codec codec, cudaStream_t stream) {
    using PL = ws_plan<KB, V, F>;
    auto kernel = block_sort_kernel<KB, V, STABLE, PL::SHAPE.tile_threads, PL::SHAPE.tile_items,
                                    PL::SHAPE.tile_run, PL::SHAPE.tile_min_blocks, SUB>;
    const size_t smem = PL::tile_smem(SUB);
    cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           (int)smem);
    if (err != cudaSuccess) return err;
    kernel<<<tiles, PL::SHAPE.tile_threads, smem, stream>>>(in, vin, out, vout, n, offset,
                                                            keep_ordered, codec);
    return cudaGetLastError();
}
/* Sorts `tiles` tiles of sub sub-tiles each (ws_sort_tile_for). */
template <typename KB, typename V, int F, bool STABLE>
static cudaError_t ws_launch_tiles(const KB *in, const V *vin, KB *out, V *vout, size_t n,
                                   size_t offset, unsigned tiles, int sub, int keep_ordered,
                                   key_codec codec, cudaStream_t stream) {
    /* A family with tile_max_sub = 1 never asks for two (ws_sort_tile_for):
     * its two-tile kernel, too large for it, is not even instantiated. */
    if constexpr (ws_family_of(F).tile_max_sub >= 2) {
        if (sub == 2)
            return ws_launch_tiles_of<KB, V, F, STABLE, 2>(in, vin, out, vout, n, offset, tiles,
                                                           keep_ordered, codec, stream);
    }
    return ws_launch_tiles_of<KB, V, F, STABLE, 1>(in, vin, out, vout, n, offset, tiles,
                                                   keep_ordered, codec, stream);
}

/* Sorts n device-resident items in place; ws holds ws_sort_workspace_bytes. */
template <typename KB, typename V, int F>
static warpsort_status_t ws_sort_device(warpsort_context_t *ctx, KB *keys, V *vals, size_t n,
                                        key_codec codec, bool stable, unsigned char *ws,
                                        cudaStream_t stream) {
    using PL = ws_plan<KB, V, F>;
    constexpr bool HAS_VALUES = is_value<V>::value;
    const size_t tile = ws_sort_tile_for(n, PL::KEY_BYTES, PL::VALUE_BYTES, F);
    const int sub = (int)(tile / PL::TILE);
    const size_t full = n / tile, rem = n % tile;
    const int passes = ws_merge_passes(n, tile);

    const ws_sort_layout l = ws_sort_layout_for(n, sizeof(KB), (size_t)PL::VALUE_BYTES, F);
    KB *keys_tmp = (KB *)ws;
    V *vals_tmp = HAS_VALUES ? (V *)(ws + l.vals_off) : nullptr;
    size_t *cuts = passes ? (size_t *)(ws + l.cuts_off) : nullptr;

    /* Parity: odd pass counts start in the workspace so the last pass lands
     * in the caller's buffer. */
    KB *k_run = passes % 2 ? keys_tmp : keys;
    V *v_run = passes % 2 ? vals_tmp : vals;
    const int keep_ordered = passes > 0;
    cudaError_t err = cudaSuccess;
    if (full) {
        err = stable ? ws_launch_tiles<KB, V, F, true>(keys, vals, k_run, v_run, n, 0,
                                                       (unsigned)full, sub, keep_ordered, codec,
                                                       stream)
                     : ws_launch_tiles<KB, V, F, false>(keys, vals, k_run, v_run, n, 0,
                                                        (unsigned)full, sub, keep_ordered, codec,
                                                        stream);
        if (err != cudaSuccess) return ws_cuda_fail(ctx, err, "block_sort_kernel");
    }
    if (rem) {
        /* The last, partial tile: ws_sort_tile_block adds positions when a
         * real all-ones key would tie with the padding. */
        err = stable
                  ? ws_launch_tiles<KB, V, F, true>(keys, vals, k_run, v_run, n, full * tile, 1,
                                                    sub, keep_ordered, codec, stream)
                  : ws_launch_tiles<KB, V, F, false>(keys, vals, k_run, v_run, n, full * tile, 1,
                                                     sub, keep_ordered, codec, stream);
        if (err != cudaSuccess) return ws_cuda_fail(ctx, err, "block_sort_kernel (last tile)");
    }
    if (!passes) return WARPSORT_OK;

    auto merge = merge4_pass<KB, V, PL::SHAPE.merge_threads, PL::SHAPE.merge_items,
                             PL::SHAPE.merge_min_blocks>;
    const size_t msmem = PL::merge_smem();
    WS_CUDA_TRY(ctx, cudaFuncSetAttribute(merge, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          (int)msmem));
    KB *k_src = k_run, *k_dst = k_run == keys ? keys_tmp : keys;
    V *v_src = v_run, *v_dst = v_run == vals ? vals_tmp : vals;
    size_t run = tile;
    for (int p = 0; p < passes; p++, run *= 4) {
        const ws_pass_shape shape = ws_pass_for(n, run, PL::CHUNK);
        const size_t blocks = ws_pass_slots(shape);
        merge4_cuts<KB><<<(unsigned)((blocks + 255) / 256), 256, 0, stream>>>(k_src, shape, blocks,
                                                                              cuts);
        WS_CUDA_TRY(ctx, cudaGetLastError());
        merge<<<(unsigned)blocks, PL::SHAPE.merge_threads, msmem, stream>>>(
            k_src, v_src, k_dst, v_dst, cuts, shape, p == passes - 1, codec);
        WS_CUDA_TRY(ctx, cudaGetLastError());
        KB *kt = k_src; k_src = k_dst; k_dst = kt;
        V *vt = v_src; v_src = v_dst; v_dst = vt;
    }
    return WARPSORT_OK;
}

/* Sets a kernel's dynamic shared memory and returns how many blocks fill
 * the GPU with it (for grid-stride kernels). */
template <typename K>
static cudaError_t ws_prepare_kernel(K kernel, int threads, size_t smem, int sm_count,
                                     unsigned *grid) {
    cudaError_t err =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (err != cudaSuccess) return err;
    int per_sm = 0;
    err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem);
    if (err != cudaSuccess) return err;
    *grid = (unsigned)((per_sm > 0 ? per_sm : 1) * sm_count);
    return cudaSuccess;
}

/* Bucket-sort class c: one tile per block (SUB 1), or two tiles merged on
 * chip (SUB 2). */
template <typename KB, typename V, bool STABLE, int C>
static cudaError_t ws_launch_bucket_class(KB *keys, V *vals, const KB *ktmp, const V *vtmp,
                                          const ws_bucket *list, const unsigned *count,
                                          size_t cap, key_codec codec, int sm_count,
                                          cudaStream_t stream) {
    using PL = ws_plan<KB, V>;
    constexpr int SUB = C + 1;
    constexpr int THREADS = PL::SHAPE.tile_threads;
    constexpr int ITEMS = PL::SHAPE.tile_items, RUN = PL::SHAPE.tile_run;
    constexpr int MIN_BLOCKS = PL::SHAPE.tile_min_blocks; /* the tile sort's registers */
    auto kernel = ws_bucket_sort_kernel<KB, V, STABLE, THREADS, ITEMS, RUN, MIN_BLOCKS, SUB>;
    const size_t smem = ws_tile_smem_bytes<KB, V>(SUB * THREADS * ITEMS, SUB);
    unsigned grid = 0;
    cudaError_t err = ws_prepare_kernel(kernel, THREADS, smem, sm_count, &grid);
    if (err != cudaSuccess) return err;
    grid = (unsigned)ws_min(grid, cap);
    kernel<<<grid, THREADS, smem, stream>>>(keys, vals, ktmp, vtmp, list, count, codec);
    return cudaGetLastError();
}

template <typename KB, typename V, bool STABLE>
static cudaError_t ws_launch_bucket_sorts(const ws_plan_t &p, unsigned char *ws, KB *keys, V *vals,
                                          const KB *ktmp, const V *vtmp, const ws_final_ctl *fin,
                                          key_codec codec, int sm_count, cudaStream_t stream) {
#define WS_BUCKET_CLASS(C)                                                                    \
    do {                                                                                      \
        cudaError_t e_ = ws_launch_bucket_class<KB, V, STABLE, C>(                            \
            keys, vals, ktmp, vtmp, (const ws_bucket *)(ws + p.lay.sort_list[C]),             \
            &fin->sort_count[C], p.sort_list_cap[C], codec, sm_count, stream);                \
        if (e_ != cudaSuccess) return e_;                                                     \
    } while (0)
    WS_BUCKET_CLASS(1); /* the biggest first: the longest jobs start early */
    WS_BUCKET_CLASS(0);
#undef WS_BUCKET_CLASS
    return cudaSuccess;
}

/* Sorts n device-resident items in place with the sample sort (plan.cuh,
 * distribute.cuh, tile_sort.cuh); ws holds p.lay.total bytes. Every launch
 * is enqueued on `stream`: nothing waits for the GPU. */
template <typename KB, typename V>
static warpsort_status_t ws_sample_sort_device(warpsort_context_t *ctx, const ws_plan_t &p,
                                               KB *keys, V *vals, key_codec codec,
                                               bool stable, unsigned char *ws,
                                               cudaStream_t stream) {
    using PL = ws_plan<KB, V>;
    constexpr bool HAS_VALUES = is_value<V>::value;
    constexpr int DI = ws_dist_items(PL::KEY_BYTES, PL::VALUE_BYTES);
    const int sms = ws_state(ctx)->sm_count;
    const ws_sample_layout &L = p.lay;
    KB *ktmp = (KB *)ws;
    V *vtmp = HAS_VALUES ? (V *)(ws + L.vals_tmp) : nullptr;
    unsigned long long *cnt = (unsigned long long *)(ws + L.cnt);
    unsigned long long *partials = (unsigned long long *)(ws + L.partials);
    ws_level_ctl *ctl = (ws_level_ctl *)(ws + L.ctl);
    ws_final_ctl *fin = (ws_final_ctl *)(ctl + WS_MAX_LEVELS);

    auto count = ws_dist_count<KB, DI>;
    /* Argsort and stable sorts need a stable distribution; the rest rank
     * with atomics (plan.cuh: the scatter's shared memory shrinks 4x). */
    auto scatter = stable ? ws_dist_scatter<KB, V, DI, true> : ws_dist_scatter<KB, V, DI, false>;
    const size_t count_smem = sizeof(ws_count_smem<KB, DI>);
    const size_t scatter_smem = stable ? sizeof(ws_dist_smem<KB, V, DI, true>)
                                       : sizeof(ws_dist_smem<KB, V, DI, false>);
    WS_CUDA_TRY(ctx, cudaFuncSetAttribute(count, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          (int)count_smem));
    WS_CUDA_TRY(ctx, cudaFuncSetAttribute(scatter, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          (int)scatter_smem));

    ws_level_nb nbuckets = {};
    for (int l = 0; l < p.levels; l++) nbuckets.nb[l] = ws_level_buckets(p.splitters[l]);
    ws_dist_init<<<1, 32, 0, stream>>>((ws_dist_seg *)(ws + L.segs[0]), ctl, fin, p.n,
                                       p.chunk[0], nbuckets);
    WS_CUDA_TRY(ctx, cudaGetLastError());
    const unsigned scan_blocks = (unsigned)(p.max_cnt / WS_SCAN_TILE + 1);
    for (int l = 0; l < p.levels; l++) {
        const bool even = l % 2 == 0;
        const KB *src = even ? keys : ktmp;
        KB *dst = even ? ktmp : keys;
        const V *vsrc = even ? vals : vtmp;
        V *vdst = even ? vtmp : vals;
        const int raw = l == 0;
        ws_dist_seg *segs = (ws_dist_seg *)(ws + L.segs[l]);
        KB *splits = (KB *)(ws + L.splits[l]);
        const unsigned *blockseg = l ? (const unsigned *)(ws + L.blockseg[l]) : nullptr;
        ws_dist_sample<KB><<<p.max_segs[l], WS_SAMPLE_THREADS, 0, stream>>>(
            src, raw, codec, segs, &ctl[l], splits, p.splitters[l]);
        WS_CUDA_TRY(ctx, cudaGetLastError());
        count<<<p.max_blocks[l], WS_DIST_THREADS, count_smem, stream>>>(
            src, raw, codec, segs, blockseg, &ctl[l], splits, p.chunk[l], cnt);
        WS_CUDA_TRY(ctx, cudaGetLastError());
        ws_scan_reduce<<<scan_blocks, WS_SCAN_THREADS, 0, stream>>>(cnt, &ctl[l], partials);
        ws_scan_partials<<<1, WS_SCAN_THREADS, 0, stream>>>(partials, &ctl[l]);
        ws_scan_apply<<<scan_blocks, WS_SCAN_THREADS, 0, stream>>>(cnt, &ctl[l], partials);
        WS_CUDA_TRY(ctx, cudaGetLastError());
        scatter<<<p.max_blocks[l], WS_DIST_THREADS, scatter_smem, stream>>>(
            src, vsrc, dst, vdst, raw, codec, segs, blockseg, &ctl[l], splits, p.chunk[l], cnt);
        WS_CUDA_TRY(ctx, cudaGetLastError());

        ws_level_out out = {};
        if (l + 1 < p.levels) {
            out.segs = (ws_dist_seg *)(ws + L.segs[l + 1]);
            out.blockseg = (unsigned *)(ws + L.blockseg[l + 1]);
            out.ctl = &ctl[l + 1];
            out.chunk = p.chunk[l + 1];
        }
        for (int c = 0; c < WS_SORT_CLASSES; c++) {
            out.sort[c] = (ws_bucket *)(ws + L.sort_list[c]);
            out.class_cap[c] = p.class_cap[c];
        }
        out.copy = (ws_bucket *)(ws + L.copy_list);
        out.big = (ws_big_bucket *)(ws + L.big_list);
        out.fin = fin;
        /* A block per segment. */
        const unsigned fgrid = (unsigned)ws_min((size_t)p.max_segs[l], (size_t)sms * 8);
        ws_dist_finalize<<<fgrid, WS_FIN_THREADS, 0, stream>>>(segs, &ctl[l], cnt,
                                                              even ? 1u : 0u, out);
        WS_CUDA_TRY(ctx, cudaGetLastError());
    }

    /* Unstable pairs: positions only in the rare job that needs them
     * (ws_sort_tile_block). */
    cudaError_t err = stable ? ws_launch_bucket_sorts<KB, V, true>(p, ws, keys, vals, ktmp, vtmp,
                                                                   fin, codec, sms, stream)
                             : ws_launch_bucket_sorts<KB, V, false>(p, ws, keys, vals, ktmp,
                                                                    vtmp, fin, codec, sms, stream);
    if (err != cudaSuccess) return ws_cuda_fail(ctx, err, "ws_bucket_sort_kernel");
    ws_bucket_copy_kernel<KB, V><<<(unsigned)ws_min(p.copy_list_cap, (size_t)sms * 8), 256, 0,
                                   stream>>>(keys, vals, ktmp, vtmp,
                                             (const ws_bucket *)(ws + L.copy_list),
                                             &fin->copy_count, codec);
    WS_CUDA_TRY(ctx, cudaGetLastError());
    {
        constexpr int THREADS = PL::SHAPE.tile_threads, ITEMS = PL::SHAPE.tile_items;
        auto big = ws_big_bucket_kernel<KB, V, THREADS, ITEMS, PL::SHAPE.tile_run>;
        const size_t smem = ws_big_smem_bytes<KB, V, THREADS, ITEMS>();
        WS_CUDA_TRY(ctx, cudaFuncSetAttribute(big, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              (int)smem));
        big<<<(unsigned)ws_min(p.big_list_cap, (size_t)sms), THREADS, smem, stream>>>(
            keys, vals, ktmp, vtmp, (const ws_big_bucket *)(ws + L.big_list), &fin->big_count,
            codec);
        WS_CUDA_TRY(ctx, cudaGetLastError());
    }
    return WARPSORT_OK;
}

/* Makes sure `bytes` of workspace exist; fails without touching any data. */
warpsort_status_t ws_acquire(warpsort_context_t *ctx, size_t bytes, unsigned char **out) {
    ws_cuda_state *st = ws_state(ctx);
    *out = (unsigned char *)st->workspace;
    if (bytes <= st->workspace_bytes) return WARPSORT_OK;
    if (st->workspace_external)
        return ws_error(ctx, WARPSORT_WORKSPACE_TOO_SMALL,
                        "workspace of %zu bytes given, this call needs %zu", st->workspace_bytes,
                        bytes);
    /* cudaFree waits for work still using the old buffer. */
    if (st->workspace) {
        cudaError_t err = cudaFree(st->workspace);
        st->workspace = NULL;
        st->workspace_bytes = 0;
        if (err != cudaSuccess) return ws_cuda_fail(ctx, err, "cudaFree(workspace)");
    }
    void *p = NULL;
    cudaError_t err = cudaMalloc(&p, bytes);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        return ws_error(ctx, WARPSORT_OUT_OF_MEMORY,
                        "cannot allocate %zu bytes of device workspace: %s", bytes,
                        cudaGetErrorString(err));
    }
    st->workspace = p;
    st->workspace_bytes = bytes;
    *out = (unsigned char *)p;
    return WARPSORT_OK;
}

/* 1 when the device can address p directly (device or managed memory). */
static int ws_device_accessible(const void *p) {
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
}

/* ws_sort_device with the shapes of the context's family (ws_select_family):
 * one instantiation per family; families with equal rows share kernels. */
template <typename KB, typename V>
static warpsort_status_t ws_sort_device_family(warpsort_context_t *ctx, KB *keys, V *vals,
                                               size_t n, key_codec codec, bool stable,
                                               unsigned char *ws, cudaStream_t stream) {
    switch (ws_state(ctx)->family) {
    case WS_FAMILY_SM90:
        return ws_sort_device<KB, V, WS_FAMILY_SM90>(ctx, keys, vals, n, codec, stable, ws, stream);
    case WS_FAMILY_SM80:
        return ws_sort_device<KB, V, WS_FAMILY_SM80>(ctx, keys, vals, n, codec, stable, ws, stream);
    case WS_FAMILY_SM86:
        return ws_sort_device<KB, V, WS_FAMILY_SM86>(ctx, keys, vals, n, codec, stable, ws, stream);
    default:
        return ws_sort_device<KB, V, WS_FAMILY_SM75>(ctx, keys, vals, n, codec, stable, ws, stream);
    }
}

template <typename KB, typename V>
static warpsort_status_t ws_sort_planned(warpsort_context_t *ctx, void *keys, void *vals, size_t n,
                                         key_codec codec, bool stable, unsigned char *ws,
                                         cudaStream_t stream) {
    const ws_plan_t p =
        ws_plan_for(ws_state(ctx), n, sizeof(KB), is_value<V>::value ? sizeof(V) : 0);
    if (p.path == WS_PATH_SAMPLE)
        return ws_sample_sort_device<KB, V>(ctx, p, (KB *)keys, (V *)vals, codec, stable, ws,
                                            stream);
    return ws_sort_device_family<KB, V>(ctx, (KB *)keys, (V *)vals, n, codec, stable, ws, stream);
}

template <typename KB>
static warpsort_status_t ws_dispatch_values(warpsort_context_t *ctx, void *keys, void *vals,
                                            size_t n, size_t value_bytes, key_codec codec,
                                            bool stable, unsigned char *ws, cudaStream_t stream) {
    switch (value_bytes) {
    case 0:
        /* Keys alone: the codec is a bijection, so equal keys are identical
         * bits and any order of them is the stable one; the unstable
         * kernels (fewer registers, block atomics) give the same bytes. */
        (void)stable;
        return ws_sort_planned<KB, no_value>(ctx, keys, nullptr, n, codec, false, ws, stream);
    case 4:
        return ws_sort_planned<KB, uint32_t>(ctx, keys, vals, n, codec, stable, ws, stream);
    default:
        return ws_sort_planned<KB, uint64_t>(ctx, keys, vals, n, codec, stable, ws, stream);
    }
}

warpsort_status_t ws_sort_any(warpsort_context_t *ctx, void *keys, void *vals, size_t n,
                              warpsort_dtype_t dtype, size_t value_bytes, bool stable, int desc,
                              unsigned char *ws, cudaStream_t stream) {
    const key_codec codec = {ws_dtype_kind(dtype), desc};
    if (warpsort_dtype_size(dtype) == 4)
        return ws_dispatch_values<uint32_t>(ctx, keys, vals, n, value_bytes, codec, stable, ws,
                                            stream);
    return ws_dispatch_values<uint64_t>(ctx, keys, vals, n, value_bytes, codec, stable, ws,
                                        stream);
}

/* Everything a call needs beyond the sort's own workspace: device copies
 * of host arrays (and, for argsort, of the keys). */
struct ws_call_layout {
    size_t sort_bytes, keys_off, vals_off, total;
};
static ws_call_layout ws_layout(const ws_cuda_state *st, size_t n, size_t kb, size_t vb,
                                int stage_keys, int stage_vals) {
    ws_call_layout l;
    l.sort_bytes = ws_align256(ws_plan_for(st, n, kb, vb).lay.total);
    l.keys_off = l.sort_bytes;
    l.vals_off = l.keys_off + (stage_keys ? ws_align256(n * kb) : 0);
    l.total = l.vals_off + (stage_vals ? ws_align256(n * vb) : 0);
    return l;
}

/* The sample sort takes n from WS_SAMPLE_MIN_N (tuning.cuh) up, with up to
 * 255 splitters and WS_MAX_LEVELS levels; tests narrow these (see
 * ws_sample_limits). */
static ws_sample_limits ws_sample_limits_from_env(void) {
    ws_sample_limits l = {WS_SAMPLE_MIN_N, WS_TREE_SLOTS - 1, WS_MAX_LEVELS};
    const char *v = getenv("WARPSORT_SAMPLE_MIN_N");
    if (v && *v) l.min_n = (size_t)strtoull(v, NULL, 0);
    v = getenv("WARPSORT_SAMPLE_SPLITTERS");
    if (v && *v) {
        const unsigned long s = strtoul(v, NULL, 0);
        l.splitters = s < 1 ? 1u : s > WS_TREE_SLOTS - 1 ? WS_TREE_SLOTS - 1 : (unsigned)s;
    }
    v = getenv("WARPSORT_SAMPLE_LEVELS");
    if (v && *v) {
        const long s = strtol(v, NULL, 0);
        l.levels = s < 1 ? 1 : s > WS_MAX_LEVELS ? WS_MAX_LEVELS : (int)s;
    }
    return l;
}

extern "C" {

#ifndef WARPSORT_CUDA_ARCHS
#define WARPSORT_CUDA_ARCHS "unknown"
#endif

/* Reads the limits of ctx->device, capped by WARPSORT_SMEM_LIMIT (tests
 * only: BYTES of shared memory per block, BYTES + 1 KB per SM, as a chip
 * of 8.x or 9.x with that opt-in limit reports). */
static warpsort_status_t ws_read_limits(warpsort_context_t *ctx, ws_device_limits *lim,
                                        int *sms) {
    int v[5] = {0, 0, 0, 0, 0};
    const cudaDeviceAttr attrs[5] = {cudaDevAttrMultiProcessorCount,
                                     cudaDevAttrComputeCapabilityMajor,
                                     cudaDevAttrComputeCapabilityMinor,
                                     cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                     cudaDevAttrMaxSharedMemoryPerMultiprocessor};
    for (int i = 0; i < 5; i++) {
        cudaError_t err = cudaDeviceGetAttribute(&v[i], attrs[i], ctx->device);
        if (err != cudaSuccess) {
            (void)cudaGetLastError();
            return ws_error(ctx, WARPSORT_BACKEND_UNAVAILABLE,
                            "CUDA device %d: cudaDeviceGetAttribute: %s", ctx->device,
                            cudaGetErrorString(err));
        }
    }
    *sms = v[0];
    lim->cc_major = v[1];
    lim->cc_minor = v[2];
    lim->smem_block = (size_t)v[3];
    lim->smem_sm = (size_t)v[4];
    lim->smem_forced = 0;
    const char *cap = getenv("WARPSORT_SMEM_LIMIT");
    if (cap && *cap) {
        char *end = NULL;
        const unsigned long long b = strtoull(cap, &end, 10);
        if (*end != '\0' || b == 0 || b > ((size_t)1 << 30))
            return ws_error(ctx, WARPSORT_INVALID_ARGUMENT,
                            "WARPSORT_SMEM_LIMIT=%s (a test hook): not a byte count", cap);
        lim->smem_block = lim->smem_block < b ? lim->smem_block : (size_t)b;
        lim->smem_sm = lim->smem_sm < b + 1024 ? lim->smem_sm : (size_t)b + 1024;
        lim->smem_forced = 1;
    }
    return WARPSORT_OK;
}

/* Whether the library's kernels can run on the current device: a build
 * with neither machine code for the chip nor PTX its driver can compile
 * fails here (cudaErrorNoKernelImageForDevice, cudaErrorUnsupportedPtxVersion),
 * at creation, instead of at the first sort. One kernel answers for all:
 * they are compiled into one module for the same architectures.
 * WARPSORT_FORCE_NO_KERNEL_IMAGE=1 (tests only) fails it on any device. */
static cudaError_t ws_probe_kernel_image(void) {
    const char *force = getenv("WARPSORT_FORCE_NO_KERNEL_IMAGE");
    if (force && *force && strcmp(force, "0") != 0) return cudaErrorNoKernelImageForDevice;
    cudaFuncAttributes fa;
    cudaError_t err = cudaFuncGetAttributes(&fa, merge4_cuts<uint32_t>);
    (void)cudaGetLastError();
    return err;
}

warpsort_status_t ws_cuda_init(warpsort_context_t *ctx) {
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {
        (void)cudaGetLastError();
        return ws_error(ctx, WARPSORT_BACKEND_UNAVAILABLE, "no CUDA device: %s",
                        err != cudaSuccess ? cudaGetErrorString(err) : "none found");
    }
    if (ctx->device >= count)
        return ws_error(ctx, WARPSORT_BACKEND_UNAVAILABLE,
                        "CUDA device %d requested, %d present", ctx->device, count);
    int sms = 0;
    ws_device_limits lim;
    warpsort_status_t s = ws_read_limits(ctx, &lim, &sms);
    if (s != WARPSORT_OK) return s;
    const int family = ws_select_family(&lim);
    if (family == WS_FAMILY_COUNT)
        return ws_error(ctx, WARPSORT_BACKEND_UNAVAILABLE,
                        "CUDA device %d offers %zu bytes of shared memory per block%s; warpsort "
                        "needs %zu",
                        ctx->device, lim.smem_block,
                        lim.smem_forced ? " (WARPSORT_SMEM_LIMIT)" : "",
                        ws_family_of(WS_FAMILY_COUNT - 1).smem_block);
    ws_device_guard g;
    err = ws_enter_device(ctx, &g);
    if (err == cudaSuccess) err = ws_probe_kernel_image();
    ws_leave_device(&g);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        return ws_error(ctx, WARPSORT_BACKEND_UNAVAILABLE,
                        "CUDA device %d (compute capability %d.%d) cannot run warpsort's "
                        "kernels: %s (%s); this build has code for CUDA architectures %s",
                        ctx->device, lim.cc_major, lim.cc_minor, cudaGetErrorName(err),
                        cudaGetErrorString(err), WARPSORT_CUDA_ARCHS);
    }
    ws_cuda_state *st = (ws_cuda_state *)calloc(1, sizeof *st);
    if (!st) return WARPSORT_OUT_OF_MEMORY;
    st->stream = (cudaStream_t)ctx->stream;
    st->sm_count = sms;
    st->limits = lim;
    st->family = family;
    st->sample_limits = ws_sample_limits_from_env();
    /* The sample kernels carry code for Hopper and newer only (WS_SAMPLE_ARCH):
     * a device running them from older PTX (a JIT build) keeps the merge path. */
    cudaFuncAttributes fa;
    st->sample_ok = cudaFuncGetAttributes(&fa, ws_dist_count<uint32_t, 16>) == cudaSuccess &&
                    fa.ptxVersion >= 90;
    (void)cudaGetLastError();
    ctx->cuda = st;
    return WARPSORT_OK;
}

const char *ws_cuda_family_name(const warpsort_context_t *ctx) {
    return ws_family_of(ws_state(ctx)->family).name;
}

void ws_cuda_destroy(warpsort_context_t *ctx) {
    ws_cuda_state *st = ws_state(ctx);
    if (!st) return;
    ws_device_guard g;
    if (ws_enter_device(ctx, &g) == cudaSuccess) {
        (void)cudaStreamSynchronize(st->stream);
        ws_pipe_destroy(ctx);
        if (st->workspace && !st->workspace_external) (void)cudaFree(st->workspace);
        ws_leave_device(&g);
    }
    (void)cudaGetLastError();
    free(st);
    ctx->cuda = NULL;
}

warpsort_status_t ws_cuda_synchronize(warpsort_context_t *ctx) {
    ws_device_guard g;
    cudaError_t err = ws_enter_device(ctx, &g);
    if (err == cudaSuccess) err = cudaStreamSynchronize(ws_state(ctx)->stream);
    ws_leave_device(&g);
    if (err != cudaSuccess) return ws_cuda_fail(ctx, err, "cudaStreamSynchronize");
    return WARPSORT_OK;
}

warpsort_status_t ws_cuda_workspace_size(const warpsort_context_t *ctx, size_t n,
                                         warpsort_dtype_t dtype, size_t value_bytes,
                                         unsigned flags, size_t *bytes) {
    const size_t kb = warpsort_dtype_size(dtype);
    /* Argsort keeps the caller's keys and sorts a copy. */
    const int argsort = (flags & WARPSORT_WORKSPACE_ARGSORT) != 0;
    *bytes = ws_layout(ws_state(ctx), n, kb, value_bytes, argsort, 0).total;
    return WARPSORT_OK;
}

warpsort_status_t ws_cuda_set_workspace(warpsort_context_t *ctx, void *ptr, size_t bytes) {
    ws_cuda_state *st = ws_state(ctx);
    if (ptr && (uintptr_t)ptr % 256)
        return ws_error(ctx, WARPSORT_MISALIGNED,
                        "warpsort_set_workspace: %p is not 256-byte aligned", ptr);
    ws_device_guard g;
    cudaError_t err = ws_enter_device(ctx, &g);
    if (err != cudaSuccess) return ws_cuda_fail(ctx, err, "cudaSetDevice");
    if (st->workspace && !st->workspace_external) {
        err = cudaFree(st->workspace);
        if (err != cudaSuccess) {
            ws_leave_device(&g);
            return ws_cuda_fail(ctx, err, "cudaFree(workspace)");
        }
    }
    ws_leave_device(&g);
    st->workspace = ptr;
    st->workspace_bytes = ptr ? bytes : 0;
    st->workspace_external = ptr != NULL;
    return WARPSORT_OK;
}

static warpsort_status_t ws_cuda_sort_pairs_on_device(warpsort_context_t *ctx, void *keys,
                                                      void *values, size_t n,
                                                      warpsort_dtype_t dtype, size_t value_bytes,
                                                      unsigned flags) {
    ws_cuda_state *st = ws_state(ctx);
    const size_t kb = warpsort_dtype_size(dtype);
    const size_t vb = values ? value_bytes : 0;
    const int stage_keys = !ws_device_accessible(keys);
    const int stage_vals = vb && !ws_device_accessible(values);
    /* Everything on the host: the pipeline. Split between host and device:
     * staged whole below. */
    if (stage_keys && (stage_vals || !vb))
        return ws_pipe_sort_pairs(ctx, keys, values, n, dtype, vb, flags);
    const ws_call_layout l = ws_layout(st, n, kb, vb, stage_keys, stage_vals);
    unsigned char *ws = NULL;
    warpsort_status_t s = ws_acquire(ctx, l.total, &ws);
    if (s != WARPSORT_OK) return s;

    void *dkeys = stage_keys ? (void *)(ws + l.keys_off) : keys;
    void *dvals = stage_vals ? (void *)(ws + l.vals_off) : values;
    if (stage_keys)
        WS_CUDA_TRY(ctx, cudaMemcpyAsync(dkeys, keys, n * kb, cudaMemcpyDefault, st->stream));
    if (stage_vals)
        WS_CUDA_TRY(ctx, cudaMemcpyAsync(dvals, values, n * vb, cudaMemcpyDefault, st->stream));
    s = ws_sort_any(ctx, dkeys, vb ? dvals : NULL, n, dtype, vb,
                    (flags & WARPSORT_STABLE) != 0, (flags & WARPSORT_DESCENDING) != 0, ws,
                    st->stream);
    if (s != WARPSORT_OK) return s;
    if (!stage_keys && !stage_vals) return WARPSORT_OK; /* asynchronous */

    /* Host arrays: wait for the sort before touching them, so a failure
     * leaves them as they were. */
    WS_CUDA_TRY(ctx, cudaStreamSynchronize(st->stream));
    if (stage_keys)
        WS_CUDA_TRY(ctx, cudaMemcpyAsync(keys, dkeys, n * kb, cudaMemcpyDefault, st->stream));
    if (stage_vals)
        WS_CUDA_TRY(ctx, cudaMemcpyAsync(values, dvals, n * vb, cudaMemcpyDefault, st->stream));
    WS_CUDA_TRY(ctx, cudaStreamSynchronize(st->stream));
    return WARPSORT_OK;
}

warpsort_status_t ws_cuda_sort_pairs(warpsort_context_t *ctx, void *keys, void *values, size_t n,
                                     warpsort_dtype_t dtype, size_t value_bytes, unsigned flags) {
    ws_device_guard g;
    cudaError_t err = ws_enter_device(ctx, &g);
    if (err != cudaSuccess) return ws_cuda_fail(ctx, err, "cudaSetDevice");
    warpsort_status_t s =
        ws_cuda_sort_pairs_on_device(ctx, keys, values, n, dtype, value_bytes, flags);
    ws_leave_device(&g);
    return s;
}

static warpsort_status_t ws_cuda_argsort_on_device(warpsort_context_t *ctx, const void *keys,
                                                   void *indices, size_t n,
                                                   warpsort_dtype_t dtype, size_t index_bytes,
                                                   unsigned flags) {
    ws_cuda_state *st = ws_state(ctx);
    const size_t kb = warpsort_dtype_size(dtype);
    const int stage_idx = !ws_device_accessible(indices);
    if (stage_idx && !ws_device_accessible(keys))
        return ws_pipe_argsort(ctx, keys, indices, n, dtype, index_bytes, flags);
    /* The keys are always copied: argsort must not reorder them. */
    const ws_call_layout l = ws_layout(st, n, kb, index_bytes, 1, stage_idx);
    unsigned char *ws = NULL;
    warpsort_status_t s = ws_acquire(ctx, l.total, &ws);
    if (s != WARPSORT_OK) return s;

    void *dkeys = ws + l.keys_off;
    void *didx = stage_idx ? (void *)(ws + l.vals_off) : indices;
    WS_CUDA_TRY(ctx, cudaMemcpyAsync(dkeys, keys, n * kb, cudaMemcpyDefault, st->stream));
    const unsigned grid = (unsigned)(st->sm_count * 8);
    if (index_bytes == 4)
        ws_iota_kernel<uint32_t><<<grid, 256, 0, st->stream>>>((uint32_t *)didx, n);
    else
        ws_iota_kernel<uint64_t><<<grid, 256, 0, st->stream>>>((uint64_t *)didx, n);
    WS_CUDA_TRY(ctx, cudaGetLastError());
    /* Stable: the indices are the tie-break, so equal keys keep input order. */
    s = ws_sort_any(ctx, dkeys, didx, n, dtype, index_bytes, true,
                    (flags & WARPSORT_DESCENDING) != 0, ws, st->stream);
    if (s != WARPSORT_OK) return s;
    if (stage_idx || !ws_device_accessible(keys)) {
        WS_CUDA_TRY(ctx, cudaStreamSynchronize(st->stream));
        if (stage_idx) {
            WS_CUDA_TRY(ctx, cudaMemcpyAsync(indices, didx, n * index_bytes, cudaMemcpyDefault,
                                             st->stream));
            WS_CUDA_TRY(ctx, cudaStreamSynchronize(st->stream));
        }
    }
    return WARPSORT_OK;
}

warpsort_status_t ws_cuda_argsort(warpsort_context_t *ctx, const void *keys, void *indices,
                                  size_t n, warpsort_dtype_t dtype, size_t index_bytes,
                                  unsigned flags) {
    ws_device_guard g;
    cudaError_t err = ws_enter_device(ctx, &g);
    if (err != cudaSuccess) return ws_cuda_fail(ctx, err, "cudaSetDevice");
    warpsort_status_t s =
        ws_cuda_argsort_on_device(ctx, keys, indices, n, dtype, index_bytes, flags);
    ws_leave_device(&g);
    return s;
}

} /* extern "C" */
