/*
 * tuning.cuh - the one table of tile shapes, per key and value width.
 *
 * Tile sort: THREADS x ITEMS items, ITEMS per thread in registers. Warps
 * sort runs of RUN items with the bitonic network, then the block merges
 * the runs in shared memory up to the whole tile.
 *
 * Merge: MERGE_THREADS x MERGE_ITEMS outputs per block, four runs merged at
 * once; the splits between blocks come from a table with one entry per
 * SPLIT_CHUNK items. The merge tile must divide the sort tile (both powers
 * of two) so no block's output straddles two groups of runs.
 */
#ifndef WARPSORT_CUDA_TUNING_CUH
#define WARPSORT_CUDA_TUNING_CUH

struct ws_shape {
    int tile_threads;
    int tile_items;
    int tile_run;         /* run length the warp network sorts before merging */
    int tile_min_blocks;  /* __launch_bounds__ occupancy floor of the tile sort */
    int merge_threads;
    int merge_items;
    int merge_min_blocks; /* ... and of a merge pass */
    int split_chunk;      /* items per chunk-table entry (merge.cuh): a divisor of the
                             merge tile; smaller means a longer table and a shorter
                             search per split */
};

/* Measured on an H100 (2^27 random u32 keys, bench/NOTES.md): 512-key warp
 * runs and 4096-key tiles take the tile sort to 1.9 ms (from ~4.5 ms for a
 * bitonic network over the whole tile). A split chunk equal to the merge
 * tile costs 15-45 us per pass for the table
 * and 210-300 us for the splits; 256-item chunks cut the splits to ~60 us
 * but made the table 370-810 us, so the table stays at one entry per tile. */
/* A tuning run overrides a row from a header passed with nvcc -include
 * (nvcc splits -D values at commas), without editing this table. */
#ifndef WS_SHAPE_KEYS
#define WS_SHAPE_KEYS {256, 16, 512, 2, 256, 16, 3, 4096}
#endif
#ifndef WS_SHAPE_PAIRS_NARROW
#define WS_SHAPE_PAIRS_NARROW {256, 16, 512, 2, 256, 8, 3, 2048}
#endif
#ifndef WS_SHAPE_PAIRS_WIDE
#define WS_SHAPE_PAIRS_WIDE {256, 8, 256, 2, 256, 8, 2, 2048}
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
