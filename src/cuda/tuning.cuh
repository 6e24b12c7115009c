/*
 * tuning.cuh - the one table of tile shapes, per key and value width.
 *
 * Tile sort: THREADS x ITEMS items, ITEMS per thread in registers; the
 * cross-warp strides go through one shared-memory row gather per log2(ITEMS)
 * index bits. Two blocks per SM hide the barriers of one another; pairs
 * halve ITEMS to stay inside the register budget at that occupancy.
 *
 * Merge: 256 threads x ITEMS outputs; the merge tile must divide the sort
 * tile (both powers of two) so no block's output straddles two run pairs
 * before the runs are longer than the merge tile.
 */
#ifndef WARPSORT_CUDA_TUNING_CUH
#define WARPSORT_CUDA_TUNING_CUH

struct ws_shape {
    int tile_threads;
    int tile_items;
    int tile_min_blocks;  /* __launch_bounds__ occupancy floor of the tile sort */
    int merge_threads;
    int merge_items;
    int merge_min_blocks; /* ... and of a merge pass */
};

/* Chosen by timing variants in one run per device (2^27 random keys, median
 * of 9, 2026-11-22, see bench/NOTES.md): capping a merge block at 64
 * registers (4 blocks per SM) took u32 keys from 15.9 to 12.9 ms on an H200;
 * on an H100, 256-thread tiles at 2 blocks per SM beat 512 threads at 1
 * (12.5 vs 13.1 ms). Pairs use 512 x 8 tiles at 2 blocks per SM, but the
 * first version's uncapped loop-load merge was faster for them on the H100
 * (18.9 vs 21.7 ms): the unrolled, capped merge helps keys only. */
/* A tuning run overrides a row from a header passed with nvcc -include
 * (nvcc splits -D values at commas), without editing this table. */
#ifndef WS_SHAPE_KEYS
#define WS_SHAPE_KEYS {256, 16, 2, 256, 16, 4}
#endif
#ifndef WS_SHAPE_PAIRS_NARROW
#define WS_SHAPE_PAIRS_NARROW {512, 8, 2, 256, 8, 4}
#endif
#ifndef WS_SHAPE_PAIRS_WIDE
#define WS_SHAPE_PAIRS_WIDE {512, 8, 1, 256, 8, 4}
#endif

__host__ __device__ constexpr ws_shape ws_policy(int key_bytes, int value_bytes) {
    return value_bytes == 0 ? ws_shape WS_SHAPE_KEYS
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

#endif /* WARPSORT_CUDA_TUNING_CUH */
