/*
 * tuning.cuh - the one table of tile shapes, per key and value width.
 *
 * Tile sort: THREADS x ITEMS items, ITEMS per thread in registers. Warps
 * sort runs of RUN items with the bitonic network, then the block merges
 * the runs in shared memory up to the whole tile.
 *
 * Merge: at most MERGE_THREADS x MERGE_ITEMS outputs per block, four runs
 * merged at once, between cuts every MERGE_TILE / 2 items of each half
 * (merge.cuh); a block's segment is about MERGE_TILE / 2 long for random
 * keys. The cut chunk must divide the sort tile (powers of two) so it
 * divides every run.
 */
#ifndef WARPSORT_CUDA_TUNING_CUH
#define WARPSORT_CUDA_TUNING_CUH

#include <stddef.h>

struct ws_shape {
    int tile_threads;
    int tile_items;
    int tile_run;         /* run length the warp network sorts before merging */
    int tile_min_blocks;  /* __launch_bounds__ occupancy floor of the tile sort */
    int merge_threads;
    int merge_items;
    int merge_min_blocks; /* ... and of a merge pass */
};

/* Measured on an H100 (2^27 random u32 keys, bench/NOTES.md): 512-key warp
 * runs (256 measured the same) and 4096-key tiles, 8192 merged on chip,
 * take the tile sort to 1.7 ms at 3 blocks per SM (85 registers). The
 * keys-only merge kernel needs ~40 registers and 66 KB of shared memory
 * per 512-thread block (8192-item capacity for 4096-item segments): three
 * blocks, 48 warps per SM. */
/* A tuning run overrides a row from a header force-included into sort.cu
 * (CMake's WARPSORT_TUNING_HEADER, scripts/gpu.sh stage-variant; nvcc splits
 * -D values at commas), without editing this table. */
#ifndef WS_SHAPE_KEYS
#define WS_SHAPE_KEYS {256, 16, 512, 3, 512, 16, 3}
#endif
#ifndef WS_SHAPE_KEYS_WIDE
#define WS_SHAPE_KEYS_WIDE {256, 16, 512, 2, 256, 16, 3}
#endif
#ifndef WS_SHAPE_PAIRS_NARROW
#define WS_SHAPE_PAIRS_NARROW {256, 16, 512, 2, 512, 8, 3}
#endif
#ifndef WS_SHAPE_PAIRS_WIDE
#define WS_SHAPE_PAIRS_WIDE {256, 8, 256, 2, 256, 8, 3}
#endif

__host__ __device__ constexpr ws_shape ws_policy(int key_bytes, int value_bytes) {
    return value_bytes == 0 ? (key_bytes <= 4 ? ws_shape WS_SHAPE_KEYS : ws_shape WS_SHAPE_KEYS_WIDE)
           : key_bytes + value_bytes <= 8 ? ws_shape WS_SHAPE_PAIRS_NARROW
                                          : ws_shape WS_SHAPE_PAIRS_WIDE;
}

__host__ __device__ constexpr int ws_tile_items_total(int key_bytes, int value_bytes) {
    return ws_policy(key_bytes, value_bytes).tile_threads *
           ws_policy(key_bytes, value_bytes).tile_items;
}
__host__ __device__ constexpr int ws_merge_items_total(int key_bytes, int value_bytes) {
    return ws_policy(key_bytes, value_bytes).merge_threads *
           ws_policy(key_bytes, value_bytes).merge_items;
}

/* Items between the cuts of a merge pass (merge.cuh): half a merge tile, so
 * no segment between two cuts outgrows a block. */
__host__ __device__ constexpr int ws_cut_chunk(int key_bytes, int value_bytes) {
    return ws_merge_items_total(key_bytes, value_bytes) / 2;
}

/* Four-way merge passes that grow sorted runs of `tile` into one run of n. */
__host__ __device__ inline int ws_merge_passes(size_t n, size_t tile) {
    int p = 0;
    for (size_t run = tile; run < n; run *= 4) p++;
    return p;
}

/* Length of the runs the tile sort leaves for n items: one tile, or two
 * tiles merged on chip when that saves a merge pass (n / tile between
 * 4^k and 2 * 4^k, e.g. 2^27 u32 keys: 7 passes instead of 8). */
__host__ __device__ inline size_t ws_sort_tile_for(size_t n, int key_bytes, int value_bytes) {
    const size_t tile = (size_t)ws_tile_items_total(key_bytes, value_bytes);
    return ws_merge_passes(n, 2 * tile) < ws_merge_passes(n, tile) ? 2 * tile : tile;
}

/* Smallest n the sample sort takes (plan.cuh); below it the merge passes
 * are cheaper. Measured on an H100 (bench/NOTES.md): at 2^25 u32 keys the
 * merge path takes 1.47 ms and the sample sort 1.58; at 2^26 2.98 and 2.89. */
#ifndef WS_SAMPLE_MIN_N
#define WS_SAMPLE_MIN_N (((size_t)1 << 25) + 1)
#endif

#endif /* WARPSORT_CUDA_TUNING_CUH */
