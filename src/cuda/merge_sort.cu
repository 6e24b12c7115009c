/*
 * merge_sort.cu - the tile and merge paths of the device sort (leaf).
 *
 *   1. block_sort_kernel sorts every tile of plan.tile items on chip (warp
 *      bitonic runs, then merges in shared memory: warpsort/block_sort.cuh)
 *      and writes sorted runs as ordered bits; with plan.sub = 2 a block
 *      sorts two tiles and merges them. On Hopper, 4-byte keys alone take
 *      radix blocks of 16384 items or cluster pairs of them instead
 *      where those runs save a pass (plan.tiles, radix_tiles.cuh).
 *   2. plan.passes four-way merge passes (merge.cuh), each a cut launch and
 *      a merge launch; the last pass decodes the ordered bits.
 * The tile sort reads the input (keys_in, which may be the output array
 * itself) and writes its runs to whichever buffer makes the last pass land
 * in the caller's output array (parity): the output, or the workspace copy
 * for an odd pass count. The passes then ping-pong between the two and
 * never read the input again, so no copy of it and no final copy are made.
 * One tile is one launch, every item read before any is written. A
 * partial last tile reads sentinels past n and stores only real items.
 * Every shape comes from the plan; the launch shapes from the family's row
 * (kernel_shapes.cuh). Every launch after the first is a dependent one
 * where the plan says so (pdl.cuh), so its launch gap overlaps the kernel
 * before.
 */
#include "device_sort.h"
#include "dispatch.cuh"
#include "kernel_shapes.cuh"
#include "radix_tiles.cuh"

template <typename KB, typename V, int F, bool STABLE, int SUB>
static cudaError_t ws_launch_tiles_of(const KB *in, const V *vin, KB *out, V *vout, size_t n,
                                      size_t offset, unsigned tiles, int keep_ordered,
                                      key_codec codec, cudaStream_t stream, int dep) {
    using S = ws_shapes<KB, V, F>;
    auto kernel = block_sort_kernel<KB, V, STABLE, S::SHAPE.tile_threads, S::SHAPE.tile_items,
                                    S::SHAPE.tile_run, S::SHAPE.tile_min_blocks, SUB>;
    const size_t smem = S::tile_smem(SUB);
    cudaError_t err =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (err != cudaSuccess) return err;
    return ws_launch(kernel, tiles, S::SHAPE.tile_threads, smem, stream, dep, in, vin, out, vout, n,
                     offset, keep_ordered, codec);
}

/* Sorts `tiles` tiles of plan.sub sub-tiles each, from item `offset`;
 * dep: a dependent launch. */
template <typename KB, typename V, int F, bool STABLE>
static cudaError_t ws_launch_tiles(const ws_plan_t &p, const KB *in, const V *vin, KB *out, V *vout,
                                   size_t offset, unsigned tiles, key_codec codec,
                                   cudaStream_t stream, int dep) {
    const int keep_ordered = p.passes > 0;
    /* A family with tile_max_sub = 1 never plans two: its two-tile kernel,
     * too large for it, is not even instantiated. */
    if constexpr (ws_family_of(F).tile_max_sub >= 2) {
        if (p.sub == 2)
            return ws_launch_tiles_of<KB, V, F, STABLE, 2>(in, vin, out, vout, p.n, offset, tiles,
                                                           keep_ordered, codec, stream, dep);
    }
    return ws_launch_tiles_of<KB, V, F, STABLE, 1>(in, vin, out, vout, p.n, offset, tiles,
                                                   keep_ordered, codec, stream, dep);
}

template <typename KB, typename V, int F>
static cudaError_t ws_tile_sort(const ws_plan_t &p, const KB *in, const V *vin, KB *out, V *vout,
                                key_codec codec, bool stable, cudaStream_t stream,
                                const char **what) {
    cudaError_t err = cudaSuccess;
    /* Hopper's radix tiles: only 4-byte keys alone on the sm_90 family
     * plan them (ws_plan_merge), so only those instances exist. */
    if constexpr (sizeof(KB) == 4 && !is_value<V>::value && F == WS_FAMILY_SM90) {
        if (p.tiles != WS_TILES_BLOCK) {
            *what = "ws_radix_tile_kernel";
            return ws_radix_tiles_run<KB>(p, in, out, codec, stream);
        }
    }
    if (p.full_tiles) {
        *what = "block_sort_kernel";
        err = stable ? ws_launch_tiles<KB, V, F, true>(p, in, vin, out, vout, 0,
                                                       (unsigned)p.full_tiles, codec, stream, 0)
                     : ws_launch_tiles<KB, V, F, false>(p, in, vin, out, vout, 0,
                                                        (unsigned)p.full_tiles, codec, stream, 0);
        if (err != cudaSuccess) return err;
    }
    if (p.rem) {
        /* The last, partial tile: ws_sort_tile_block adds positions when a
         * real all-ones key would tie with the padding. */
        *what = "block_sort_kernel (last tile)";
        const size_t at = p.full_tiles * p.tile;
        const int dep = p.full_tiles && p.pdl; /* the first launch is an ordinary one */
        err = stable ? ws_launch_tiles<KB, V, F, true>(p, in, vin, out, vout, at, 1, codec, stream,
                                                       dep)
                     : ws_launch_tiles<KB, V, F, false>(p, in, vin, out, vout, at, 1, codec, stream,
                                                        dep);
    }
    return err;
}

template <typename KB, typename V, int F>
static cudaError_t ws_merge_passes_run(const ws_plan_t &p, KB *keys, V *vals, KB *keys_tmp,
                                       V *vals_tmp, size_t *cuts, key_codec codec,
                                       cudaStream_t stream, const char **what) {
    using S = ws_shapes<KB, V, F>;
    auto merge =
        merge4_pass<KB, V, S::SHAPE.merge_threads, S::SHAPE.merge_items, S::SHAPE.merge_min_blocks>;
    const size_t msmem = S::merge_smem();
    *what = "merge4_pass";
    cudaError_t err =
        cudaFuncSetAttribute(merge, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)msmem);
    if (err != cudaSuccess) return err;
    /* The tile sort left its runs where the pass count's parity said. */
    KB *k_src = p.passes % 2 ? keys_tmp : keys, *k_dst = p.passes % 2 ? keys : keys_tmp;
    V *v_src = p.passes % 2 ? vals_tmp : vals, *v_dst = p.passes % 2 ? vals : vals_tmp;
    for (int i = 0; i < p.passes; i++) {
        const size_t blocks = p.pass_blocks[i];
        *what = "merge4_cuts";
        /* a warp a slot */
        err = ws_launch(merge4_cuts<KB>, (unsigned)((blocks + 7) / 8), 256, 0, stream, p.pdl, k_src,
                        p.pass[i], blocks, cuts);
        if (err != cudaSuccess) return err;
        *what = "merge4_pass";
        err =
            ws_launch(merge, (unsigned)blocks, S::SHAPE.merge_threads, msmem, stream, p.pdl, k_src,
                      v_src, k_dst, v_dst, cuts, p.pass[i], (int)(i == p.passes - 1), codec);
        if (err != cudaSuccess) return err;
        KB *kt = k_src;
        k_src = k_dst;
        k_dst = kt;
        V *vt = v_src;
        v_src = v_dst;
        v_dst = vt;
    }
    return cudaSuccess;
}

/* The whole path for one family: parity, tile sort, passes. */
template <typename KB, typename V, int F>
static cudaError_t ws_merge_sort_family(const ws_plan_t &p, const KB *keys_in, const V *vals_in,
                                        KB *keys, V *vals, key_codec codec, bool stable,
                                        unsigned char *ws, cudaStream_t stream, const char **what) {
    KB *keys_tmp = (KB *)ws;
    V *vals_tmp = is_value<V>::value && p.passes ? (V *)(ws + p.lay.vals_tmp) : nullptr;
    /* Odd pass counts start in the workspace so the last pass lands in the
     * caller's buffer. */
    KB *k_run = p.passes % 2 ? keys_tmp : keys;
    V *v_run = p.passes % 2 ? vals_tmp : vals;
    cudaError_t err =
        ws_tile_sort<KB, V, F>(p, keys_in, vals_in, k_run, v_run, codec, stable, stream, what);
    if (err != cudaSuccess || !p.passes) return err;
    return ws_merge_passes_run<KB, V, F>(p, keys, vals, keys_tmp, vals_tmp,
                                         (size_t *)(ws + p.lay.cuts), codec, stream, what);
}

/* One instantiation per family; families with equal rows share kernels. */
struct ws_merge_sort_op {
    template <typename KB, typename V>
    static cudaError_t run(const ws_plan_t *p, const void *keys_in, const void *vals_in, void *keys,
                           void *vals, key_codec codec, bool stable, unsigned char *ws,
                           cudaStream_t s, const char **what) {
        const KB *ki = (const KB *)keys_in;
        const V *vi = (const V *)vals_in;
        KB *k = (KB *)keys;
        V *v = (V *)vals;
        switch (p->family) {
        case WS_FAMILY_SM90:
            return ws_merge_sort_family<KB, V, WS_FAMILY_SM90>(*p, ki, vi, k, v, codec, stable, ws,
                                                               s, what);
        case WS_FAMILY_SM80:
            return ws_merge_sort_family<KB, V, WS_FAMILY_SM80>(*p, ki, vi, k, v, codec, stable, ws,
                                                               s, what);
        case WS_FAMILY_SM86:
            return ws_merge_sort_family<KB, V, WS_FAMILY_SM86>(*p, ki, vi, k, v, codec, stable, ws,
                                                               s, what);
        default:
            return ws_merge_sort_family<KB, V, WS_FAMILY_SM75>(*p, ki, vi, k, v, codec, stable, ws,
                                                               s, what);
        }
    }
};

cudaError_t ws_merge_sort_run(const ws_plan_t *p, const void *keys_in, const void *vals_in,
                              void *keys, void *vals, key_codec codec, bool stable,
                              unsigned char *ws, cudaStream_t stream, const char **what) {
    return ws_dispatch_kv<ws_merge_sort_op>(p->key_bytes, p->value_bytes, p, keys_in, vals_in, keys,
                                            vals, codec, stable, ws, stream, what);
}

/* Whether the library's kernels can run on the current device (device.cu):
 * one kernel answers for all, they are compiled for the same architectures. */
cudaError_t ws_merge_probe_image(void) {
    cudaFuncAttributes fa;
    cudaError_t err = cudaFuncGetAttributes(&fa, merge4_cuts<uint32_t>);
    (void)cudaGetLastError();
    return err;
}
