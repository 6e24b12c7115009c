/*
 * sort.cu - the CUDA backend: whole-array dispatch, workspace, host arrays.
 *
 * Plan for n items (key + optional value):
 *   1. block_sort_kernel sorts every tile of TILE items on chip (bitonic
 *      network per warp, then merges in shared memory: block_sort.cuh) and
 *      writes sorted runs as ordered bits; a block sorts two tiles and
 *      merges them when that saves a merge pass (ws_sort_tile_for).
 *   2. ceil(log4(n / run)) merge passes (merge.cuh) each merge four runs
 *      into one: merge4_cuts splits every group of four runs into
 *      segments, merge4_pass merges one segment per block; the last pass
 *      decodes the ordered bits.
 * Buffers ping-pong between the caller's array and a workspace copy; the tile
 * sort writes to whichever makes the last pass land in the caller's array
 * (parity), so no final copy is needed. n <= TILE is one launch, in place.
 * A partial last tile reads sentinels past n and stores only real items.
 */
#include <cuda_runtime.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <type_traits>

#include "block_sort.cuh"
#include "core/internal.h"
#include "merge.cuh"
#include "tuning.cuh"

/* What the device offers, read once at context creation (ws_cuda_init).
 * WARPSORT_SMEM_LIMIT (tests only) caps the shared memory, so the rows of
 * smaller chips can run on a larger one. */
struct ws_device_limits {
    int cc_major, cc_minor; /* compute capability */
    size_t smem_block;      /* opt-in shared memory per block, bytes */
    size_t smem_sm;         /* shared memory per SM, bytes */
    int smem_forced;        /* 1: WARPSORT_SMEM_LIMIT capped the two above */
};

struct ws_cuda_state {
    cudaStream_t stream;
    int sm_count;
    ws_device_limits limits;
    int family;        /* row of tuning.cuh for this device: ws_select_family */
    void *workspace;   /* device buffer: cached (owned) or the caller's */
    size_t workspace_bytes;
    int workspace_external;
};

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

static warpsort_status_t ws_cuda_fail(warpsort_context_t *ctx, cudaError_t err,
                                      const char *what) {
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

__host__ __device__ constexpr size_t ws_align256(size_t x) { return (x + 255) & ~(size_t)255; }

/*=== kernels ===*/

/* Whether the final merge of a two-sub-tile block writes to a second key
 * array (4-byte keys alone: 2 x 33 KB still lets three blocks share an
 * SM) rather than through registers (everything else: a second array
 * would cost more occupancy than the registers do). */
template <typename KB, typename V>
__host__ __device__ constexpr bool ws_tile_second_array() {
    return !ws_is_value<V>::value && sizeof(KB) == 4;
}
/* Shared memory of a tile-sort block: the keys (twice with the second
 * array), then the values. */
template <typename KB, typename V>
__host__ __device__ constexpr size_t ws_tile_keys_bytes(int block_tile, int sub) {
    return ws_align256(sizeof(KB) * ws_smem_slots<KB>(block_tile) *
                       (sub == 2 && ws_tile_second_array<KB, V>() ? 2 : 1));
}
template <typename KB, typename V>
__host__ __device__ constexpr size_t ws_tile_smem_bytes(int block_tile, int sub) {
    return ws_tile_keys_bytes<KB, V>(block_tile, sub) +
           (ws_is_value<V>::value ? sizeof(V) * ws_smem_slots<V>(block_tile) : 0);
}

/* Sorts tiles [tile_offset + blockIdx.x * SUB * TILE, ...) of keys_in into
 * keys_out (which may alias keys_in). A block sorts SUB (1 or 2) sub-tiles
 * of TILE items one after the other, then, for SUB = 2, merges the two in
 * shared memory: one more merge level on chip, which saves a whole merge
 * pass when it makes n / tile a power of four (ws_sort_tile_for).
 * keep_ordered leaves ordered bits for the merge passes; otherwise the tile
 * is decoded back to the dtype. */
template <typename KB, typename V, bool STABLE, int THREADS, int ITEMS, int RUN, int MIN_BLOCKS,
          int SUB>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
    block_sort_kernel(const KB *keys_in, const V *vals_in, KB *keys_out, V *vals_out, size_t n,
                      size_t tile_offset, int keep_ordered, ws_key_codec codec) {
    using P = typename std::conditional<STABLE, uint32_t, ws_no_value>::type;
    static_assert(SUB == 1 || SUB == 2, "one or two sub-tiles per block");
    constexpr int TILE = THREADS * ITEMS;
    constexpr int BLOCK_TILE = SUB * TILE;
    extern __shared__ __align__(16) unsigned char ws_tile_smem_raw[];
    KB *keys = (KB *)ws_tile_smem_raw;
    V *vals = (V *)(ws_tile_smem_raw + ws_tile_keys_bytes<KB, V>(SUB * THREADS * ITEMS, SUB));

    const size_t base = tile_offset + (size_t)blockIdx.x * BLOCK_TILE;
    const int valid = n - base < (size_t)BLOCK_TILE ? (int)(n - base) : BLOCK_TILE;
    const int t = (int)threadIdx.x;
    const int first = t * ITEMS;

#pragma unroll 1
    for (int u = 0; u < SUB; u++) {
        /* Sub-tile u is items [u*TILE, (u+1)*TILE) of the padded arrays:
         * TILE is a whole number of padding periods, so it is an array of
         * its own at slot ws_smem_index(u*TILE). */
        ws_tile_smem<KB, V> sub;
        sub.keys = keys + ws_smem_index<KB>(u * TILE);
        sub.vals = vals + ws_smem_index<V>(u * TILE);
        const int sub_valid = valid - u * TILE;
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
            if constexpr (ws_is_value<V>::value) {
                if (e < sub_valid) vr[i] = vals_in[g];
            }
        }
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            const int e = i * THREADS + t;
            ws_smem_put(sub.keys, e, e < sub_valid ? ws_encode(kr[i], codec) : ws_sentinel<KB>());
            if constexpr (ws_is_value<V>::value) {
                if (e < sub_valid) ws_smem_put(sub.vals, e, vr[i]);
            }
        }
        __syncthreads();
        ws_items<KB, V, P, ITEMS> it;
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            it.k[i] = ws_smem_get(sub.keys, first + i);
            it.v[i] = ws_smem_get(sub.vals, first + i);
            if constexpr (STABLE) it.p[i] = (uint32_t)(first + i);
        }
        block_sort_tile<RUN, KB, V, P, THREADS, ITEMS>(it, sub);
        /* Each thread writes back only the slots it read: no barrier. */
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            ws_smem_put(sub.keys, first + i, it.k[i]);
            ws_smem_put(sub.vals, first + i, it.v[i]);
        }
    }
    __syncthreads();
    const KB *res_keys = keys; /* where the sorted block tile ends up */
    if constexpr (SUB == 2) {
        /* Merge the two sorted sub-tiles: each thread takes outputs
         * [first, first+ITEMS) and [TILE+first, ...). The first sub-tile
         * wins ties, so the tile stays stable. */
        const ws_merge_src m = {0, TILE, TILE, TILE};
        if constexpr (ws_tile_second_array<KB, V>()) {
            /* Straight into the second array, keeping registers free. */
            KB *out = keys + ws_smem_slots<KB>(BLOCK_TILE);
            ws_merge_items_to_smem<KB, V, ITEMS>(keys, vals, m, first, out, vals,
                                                 ws_blocked_base<KB, ITEMS>(first), 0);
            ws_merge_items_to_smem<KB, V, ITEMS>(keys, vals, m, TILE + first, out, vals,
                                                 ws_blocked_base<KB, ITEMS>(TILE + first), 0);
            res_keys = out;
        } else {
            /* Into registers, then back once every thread has read. */
            KB k0[ITEMS], k1[ITEMS];
            V v0[ITEMS], v1[ITEMS];
            ws_merge_items_to_registers<KB, V, ITEMS>(keys, vals, m, first, k0, v0);
            ws_merge_items_to_registers<KB, V, ITEMS>(keys, vals, m, TILE + first, k1, v1);
            __syncthreads();
#pragma unroll
            for (int i = 0; i < ITEMS; i++) {
                ws_smem_put(keys, first + i, k0[i]);
                ws_smem_put(vals, first + i, v0[i]);
                ws_smem_put(keys, TILE + first + i, k1[i]);
                ws_smem_put(vals, TILE + first + i, v1[i]);
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < SUB * ITEMS; i++) {
        const int e = i * THREADS + t;
        if (e < valid) {
            const KB key = ws_smem_get(res_keys, e);
            keys_out[base + e] = keep_ordered ? key : ws_decode(key, codec);
            if constexpr (ws_is_value<V>::value) vals_out[base + e] = ws_smem_get(vals, e);
        }
    }
}

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
    static constexpr int VALUE_BYTES = ws_is_value<V>::value ? (int)sizeof(V) : 0;
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
static size_t ws_sort_workspace_bytes(size_t n, size_t key_bytes, size_t value_bytes,
                                      int family) {
    return ws_sort_layout_for(n, key_bytes, value_bytes, family).total;
}

template <typename KB, typename V, int F, bool STABLE, int SUB>
static cudaError_t ws_launch_tiles_of(const KB *in, const V *vin, KB *out, V *vout, size_t n,
                                      size_t offset, unsigned tiles, int keep_ordered,
                                      ws_key_codec codec, cudaStream_t stream) {
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
                                   ws_key_codec codec, cudaStream_t stream) {
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
                                        ws_key_codec codec, bool stable, unsigned char *ws,
                                        cudaStream_t stream) {
    using PL = ws_plan<KB, V, F>;
    constexpr bool HAS_VALUES = ws_is_value<V>::value;
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
        /* Sentinels tie with real all-ones keys: positions keep them last so
         * no real value is dropped. Keys alone need no tie-break. */
        err = (stable || HAS_VALUES)
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

/* Makes sure `bytes` of workspace exist; fails without touching any data. */
static warpsort_status_t ws_acquire(warpsort_context_t *ctx, size_t bytes, unsigned char **out) {
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
                                               size_t n, ws_key_codec codec, bool stable,
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

template <typename KB>
static warpsort_status_t ws_dispatch_values(warpsort_context_t *ctx, void *keys, void *vals,
                                            size_t n, size_t value_bytes, ws_key_codec codec,
                                            bool stable, unsigned char *ws, cudaStream_t stream) {
    switch (value_bytes) {
    case 0:
        return ws_sort_device_family<KB, ws_no_value>(ctx, (KB *)keys, (ws_no_value *)nullptr,
                                                      n, codec, stable, ws, stream);
    case 4:
        return ws_sort_device_family<KB, uint32_t>(ctx, (KB *)keys, (uint32_t *)vals, n, codec,
                                                   stable, ws, stream);
    default:
        return ws_sort_device_family<KB, uint64_t>(ctx, (KB *)keys, (uint64_t *)vals, n, codec,
                                                   stable, ws, stream);
    }
}

static warpsort_status_t ws_sort_any(warpsort_context_t *ctx, void *keys, void *vals, size_t n,
                                     warpsort_dtype_t dtype, size_t value_bytes, bool stable,
                                     int desc, unsigned char *ws, cudaStream_t stream) {
    const ws_key_codec codec = {ws_dtype_kind(dtype), desc};
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
static ws_call_layout ws_layout(int family, size_t n, size_t kb, size_t vb, int stage_keys,
                                int stage_vals) {
    ws_call_layout l;
    l.sort_bytes = ws_align256(ws_sort_workspace_bytes(n, kb, vb, family));
    l.keys_off = l.sort_bytes;
    l.vals_off = l.keys_off + (stage_keys ? ws_align256(n * kb) : 0);
    l.total = l.vals_off + (stage_vals ? ws_align256(n * vb) : 0);
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
    *bytes = ws_layout(ws_state(ctx)->family, n, kb, value_bytes, argsort, 0).total;
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
    const ws_call_layout l = ws_layout(st->family, n, kb, vb, stage_keys, stage_vals);
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
    /* The keys are always copied: argsort must not reorder them. */
    const ws_call_layout l = ws_layout(st->family, n, kb, index_bytes, 1, stage_idx);
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
