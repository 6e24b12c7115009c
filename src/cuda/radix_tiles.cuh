/*
 * radix_tiles.cuh - the merge path's tile sort by radix blocks (Hopper,
 * 4-byte keys alone): runs of WS_RADIX_TILE (16384) items, each sorted by
 * one block of 1024 threads (radix_tile.cuh, the blocks of the sample
 * sort's buckets and of the segments), or runs of twice that, each sorted
 * by a cluster of two such blocks whose halves merge through distributed
 * shared memory (cluster_merge.cuh, as segments of 16385..32768 items).
 *
 * The block sort's tiles are 4096 or 8192 items, and a merge pass (a cuts
 * launch and a merge launch) multiplies the runs by four, so at 2^18 ..
 * 2^23 items a run of 16384 or 32768 saves one pass where the other does
 * not (plan.cu, ws_plan_radix_tiles picks). Their tile sort costs more
 * than the block sort's, and less than the pass it saves (the figures:
 * bench/NOTES.md, forty-fifth session). Internal; CUDA translation units
 * only.
 */
#ifndef WARPSORT_CUDA_RADIX_TILES_CUH
#define WARPSORT_CUDA_RADIX_TILES_CUH

#include <stdint.h>

#include "cluster_merge.cuh"
#include "plan.cuh" /* WS_RADIX_TILE, WS_SAMPLE_ARCH */
#include "radix_tile.cuh"

static_assert(WS_RADIX_TILE == 1024 * WS_RX_ITEMS, "a radix tile is a block of 1024 threads");

/* A radix tile block's room: packed counters, as the segments' blocks of
 * keys alone (radix_tile.cuh, ws_rx_smem). */
template <typename KB>
using ws_rt_smem = ws_rx_smem<KB, no_value, 1024, true>;

/* Tile b of PAIR ? 2 x WS_RADIX_TILE : WS_RADIX_TILE items of in (the
 * last one partial) sorted into out at the same place, keys decoded by
 * `out_codec` (the identity keeps ordered bits for the merge passes);
 * grid-stride over the tiles, by block or (PAIR, launched in clusters of
 * two) by pair. in may be out: a block has loaded what it writes. KIND:
 * ws_kind_codec. */
template <typename KB, int KIND, bool PAIR>
__global__ void __launch_bounds__(1024, 1)
    ws_radix_tile_kernel(const KB *in, KB *out, size_t n, key_codec codec, key_codec out_codec) {
#if WS_SAMPLE_ARCH
    constexpr int N = WS_RADIX_TILE, TILE = PAIR ? 2 * N : N;
    const key_codec c = ws_kind_codec<KIND>(codec);
    extern __shared__ __align__(16) unsigned char ws_rt_dyn[];
    ws_rt_smem<KB> &s = *(ws_rt_smem<KB> *)ws_rt_dyn;
    ws_rx_block_init(s);
    const size_t tiles = (n + TILE - 1) / TILE;
    const size_t first = PAIR ? blockIdx.x / 2 : blockIdx.x;
    const size_t stride = PAIR ? gridDim.x / 2 : gridDim.x;
    for (size_t b = first; b < tiles; b += stride) {
        const size_t begin = b * (size_t)TILE, left = n - begin;
        const int len = left < (size_t)TILE ? (int)left : TILE;
        if constexpr (PAIR) {
            /* run 0: the first N items (or all of a short last tile), run
             * 1 the rest, possibly none */
            const int na = len < N ? len : N, nb = len - na, r = ws_cl_rank();
            ws_rx_sort_job<KB, no_value, false, true, 1024>(
                s, in, (const no_value *)nullptr, (KB *)nullptr, (no_value *)nullptr,
                begin + (size_t)(r * na), r ? nb : na, c, c, 0);
            ws_cl_merge_pair(s, na, nb, out, (no_value *)nullptr, begin, out_codec);
        } else {
            ws_rx_sort_job<KB, no_value, false, true, 1024>(s, in, (const no_value *)nullptr, out,
                                                            (no_value *)nullptr, begin, len, c,
                                                            out_codec, 0);
        }
    }
#endif
}

/* Sorts the plan's tiles (p.tiles WS_TILES_RADIX or WS_TILES_PAIR) of
 * in into out: one launch, the call's first (an ordinary one), as many
 * blocks or pairs as the device holds at once, fewer for fewer tiles. */
template <typename KB>
static cudaError_t ws_radix_tiles_run(const ws_plan_t &p, const KB *in, KB *out, key_codec codec,
                                      cudaStream_t stream) {
    constexpr int FLOAT = warpsort::key_traits<float>::kind;
    const bool pair = p.tiles == WS_TILES_PAIR;
    const bool fl = codec.kind == FLOAT;
    auto kernel =
        pair ? (fl ? ws_radix_tile_kernel<KB, FLOAT, true> : ws_radix_tile_kernel<KB, -1, true>)
             : (fl ? ws_radix_tile_kernel<KB, FLOAT, false> : ws_radix_tile_kernel<KB, -1, false>);
    const size_t smem = sizeof(ws_rt_smem<KB>);
    cudaError_t err =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (err != cudaSuccess) return err;
    /* with passes to come the runs stay ordered bits; alone, the caller's */
    const key_codec out_codec = p.passes ? key_codec{0, 0} : codec;
    /* the plan's tiles: WS_RADIX_TILE items, a pair's twice that */
    const size_t tiles = p.full_tiles + (p.rem != 0);
    cudaLaunchAttribute attr = {};
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = 2;
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    cudaLaunchConfig_t cfg = ws_launch_config(pair ? 2 : 1, 1024, smem, stream, &attr, pair);
    int most = 0; /* blocks, or pairs, resident at once */
    if (pair)
        err = cudaOccupancyMaxActiveClusters(&most, kernel, &cfg);
    else
        err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&most, kernel, 1024, smem);
    if (err != cudaSuccess) return err;
    if (!pair) most *= p.sm_count;
    const size_t units = tiles < (size_t)most ? tiles : (size_t)(most > 0 ? most : 1);
    cfg.gridDim = dim3((unsigned)units * (pair ? 2u : 1u));
    return cudaLaunchKernelEx(&cfg, kernel, (const KB *)in, out, p.n, codec, out_codec);
}

#endif /* WARPSORT_CUDA_RADIX_TILES_CUH */
