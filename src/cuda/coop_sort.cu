/*
 * coop_sort.cu - the leaf's one-launch path for small arrays (plan
 * WS_PATH_COOP): the merge path's tile sort and four-way merge passes in
 * one cooperative launch, the phases separated by grid barriers.
 *
 * Why a path of its own: from a few thousand to 2^16 items the merge path
 * is a handful of short launches (tile sort, then a cut and a merge launch
 * a pass) on a few SMs; each waits for the host to enqueue it and for the
 * one before to drain, and one block of 4096 items leaves every other SM
 * idle. Here the grid stays resident: tiles of WS_COOP_THREADS x
 * ws_coop_items (the tile kernels' shapes; 4 items a thread wherever 8
 * would not save a pass: more and quicker tile sorts) sorted by as
 * many blocks, then per pass every warp computes cuts (merge4_cuts' body),
 * a barrier, and every block merges segments (merge4_pass's body) with the
 * same block shape. The plan is the merge path's with this tile and half a tile
 * between cuts (plan.cu), so the workspace and the parity of the passes
 * are the merge path's too: the tile sort writes where the last pass must
 * land in the caller's array. Every item is read (tile sort) before any
 * pass writes, and a tile is read whole before it is written, so keys_in
 * may be keys. Hopper only (the plan's gate): the kernels compile where
 * the sample sort's do.
 */
#include <cooperative_groups.h>

#include "device_sort.h"
#include "dispatch.cuh"
#include "occupancy.cuh"
#include "tile_sort.cuh"

/* The passes of one call, by value (the plan's). */
struct ws_coop_shape {
    size_t n;
    int passes;
    ws_pass_shape pass[WS_MAX_PASSES];
    size_t slots[WS_MAX_PASSES]; /* merge segments (= cut slots) of each pass */
};

template <typename KB, typename V, int ITEMS>
__host__ __device__ constexpr size_t ws_coop_smem() {
    constexpr int TILE = WS_COOP_THREADS * ITEMS;
    return ws_tile_smem_bytes<KB, V>(TILE, 1) > ws_merge_smem_bytes<KB, V, WS_COOP_THREADS, ITEMS>()
               ? ws_tile_smem_bytes<KB, V>(TILE, 1)
               : ws_merge_smem_bytes<KB, V, WS_COOP_THREADS, ITEMS>();
}

template <typename KB, typename V, bool STABLE, int ITEMS>
__global__ void __launch_bounds__(WS_COOP_THREADS)
    ws_coop_sort_kernel(const KB *keys_in, const V *vals_in, KB *keys, V *vals, KB *keys_tmp,
                        V *vals_tmp, size_t *cuts, const ws_coop_shape c, key_codec codec) {
#if WS_SAMPLE_ARCH
    constexpr int THREADS = WS_COOP_THREADS, TILE = THREADS * ITEMS, RUN = 32 * ITEMS;
    extern __shared__ __align__(16) unsigned char ws_coop_smem_raw[];
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    /* An odd pass count starts in the workspace so the last lands in keys. */
    const bool odd = c.passes & 1;
    KB *k_src = odd ? keys_tmp : keys, *k_dst = odd ? keys : keys_tmp;
    V *v_src = odd ? vals_tmp : vals, *v_dst = odd ? vals : vals_tmp;
    const size_t tiles = (c.n + TILE - 1) / TILE;
    for (size_t t = blockIdx.x; t < tiles; t += gridDim.x) {
        const size_t base = t * TILE;
        const int valid = c.n - base < (size_t)TILE ? (int)(c.n - base) : TILE;
        ws_sort_tile_block<KB, V, STABLE, THREADS, ITEMS, RUN, 1>(keys_in, vals_in, k_src, v_src,
                                                                  base, valid, true, c.passes == 0,
                                                                  codec, ws_coop_smem_raw);
        __syncthreads(); /* the next tile reuses the shared memory */
    }
    const size_t warp = ((size_t)blockIdx.x * THREADS + threadIdx.x) / 32;
    const size_t warps = (size_t)gridDim.x * THREADS / 32;
    for (int i = 0; i < c.passes; i++) {
        grid.sync(); /* every run of the pass's input written; the last cuts read */
        for (size_t s = warp; s < c.slots[i]; s += warps) /* a warp per cut */
            ws_merge4_cut<KB>(k_src, c.pass[i], s, cuts);
        grid.sync();
        for (size_t b = blockIdx.x; b < c.slots[i]; b += gridDim.x) {
            ws_merge4_segment<KB, V, THREADS, ITEMS>(k_src, v_src, k_dst, v_dst, cuts + 4 * b,
                                                     c.pass[i], i == c.passes - 1, codec, b,
                                                     ws_coop_smem_raw);
            __syncthreads(); /* the next segment reuses the shared memory */
        }
        KB *kt = k_src;
        k_src = k_dst;
        k_dst = kt;
        V *vt = v_src;
        v_src = v_dst;
        v_dst = vt;
    }
#endif
}

template <typename KB, typename V, bool STABLE, int ITEMS>
static cudaError_t ws_coop_launch(const ws_plan_t &p, const KB *keys_in, const V *vals_in, KB *keys,
                                  V *vals, key_codec codec, unsigned char *ws,
                                  cudaStream_t stream) {
    constexpr size_t SMEM = ws_coop_smem<KB, V, ITEMS>();
    auto kernel = ws_coop_sort_kernel<KB, V, STABLE, ITEMS>;
    static int known[WS_OCC_MAX_DEVICES]; /* this instantiation's blocks per SM */
    cudaError_t err;
    if (SMEM > 48 * 1024 &&
        (err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    (int)SMEM)) != cudaSuccess)
        return err;
    int device = 0, per_sm = 0;
    if ((err = cudaGetDevice(&device)) != cudaSuccess ||
        (err = ws_blocks_per_sm((const void *)kernel, WS_COOP_THREADS, SMEM, device, known,
                                &per_sm)) != cudaSuccess)
        return err;
    ws_coop_shape c;
    c.n = p.n;
    c.passes = p.passes;
    size_t work = p.full_tiles + (p.rem ? 1 : 0);
    for (int i = 0; i < p.passes; i++) {
        c.pass[i] = p.pass[i];
        c.slots[i] = p.pass_blocks[i];
        work = c.slots[i] > work ? c.slots[i] : work;
    }
    /* Every block must be resident at once for the grid barriers. */
    const size_t most = (size_t)per_sm * (size_t)(p.sm_count > 0 ? p.sm_count : 1);
    const unsigned grid = (unsigned)(work < most ? work : most);
    KB *keys_tmp = (KB *)ws;
    V *vals_tmp = is_value<V>::value ? (V *)(ws + p.lay.vals_tmp) : nullptr;
    size_t *cuts = (size_t *)(ws + p.lay.cuts);
    void *args[] = {(void *)&keys_in, (void *)&vals_in,  (void *)&keys,
                    (void *)&vals,    (void *)&keys_tmp, (void *)&vals_tmp,
                    (void *)&cuts,    (void *)&c,        (void *)&codec};
    return cudaLaunchCooperativeKernel((const void *)kernel, grid, WS_COOP_THREADS, args, SMEM,
                                       stream);
}

struct ws_coop_sort_op {
    template <typename KB, typename V>
    static cudaError_t run(const ws_plan_t *p, const void *keys_in, const void *vals_in, void *keys,
                           void *vals, key_codec codec, bool stable, unsigned char *ws,
                           cudaStream_t s) {
        const KB *ki = (const KB *)keys_in;
        const V *vi = (const V *)vals_in;
        KB *k = (KB *)keys;
        V *v = (V *)vals;
        /* The plan's tile says the items a thread (ws_coop_items): 8 only for
         * items of up to 8 bytes. Keys alone never need stability
         * (device_sort.cu): no stable kernel for them. */
        if constexpr (sizeof(KB) + (is_value<V>::value ? sizeof(V) : 0) <= 8) {
            if (p->tile == (size_t)WS_COOP_THREADS * 8) {
                if constexpr (is_value<V>::value)
                    if (stable)
                        return ws_coop_launch<KB, V, true, 8>(*p, ki, vi, k, v, codec, ws, s);
                return ws_coop_launch<KB, V, false, 8>(*p, ki, vi, k, v, codec, ws, s);
            }
        }
        if constexpr (is_value<V>::value)
            if (stable) return ws_coop_launch<KB, V, true, 4>(*p, ki, vi, k, v, codec, ws, s);
        return ws_coop_launch<KB, V, false, 4>(*p, ki, vi, k, v, codec, ws, s);
    }
};

cudaError_t ws_coop_sort_run(const ws_plan_t *p, const void *keys_in, const void *vals_in,
                             void *keys, void *vals, key_codec codec, bool stable,
                             unsigned char *ws, cudaStream_t stream, const char **what) {
    *what = "coop sort";
    return ws_dispatch_kv<ws_coop_sort_op>(p->key_bytes, p->value_bytes, p, keys_in, vals_in, keys,
                                           vals, codec, stable, ws, stream);
}
