/*
 * tuning.cuh - the one table of tile shapes, per key and value width.
 *
 * Tile sort: 512 threads, so a tile spans 16 warps and the cross-warp
 * strides (4 index bits) are exactly one row gather when ITEMS = 16.
 * ITEMS = 16 with items of at most 8 bytes (key + value) keeps a tile of
 * 8192 items in ~64 registers of payload per thread and <= 66 KB of shared
 * memory, so 3 blocks fit on an H100 SM; wider items halve ITEMS to stay
 * inside the same register and shared-memory budget.
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
    int merge_threads;
    int merge_items;
};

__host__ __device__ constexpr ws_shape ws_policy(int key_bytes, int value_bytes) {
    return key_bytes + value_bytes <= 8 ? ws_shape{512, 16, 256, 16}
                                        : ws_shape{512, 8, 256, 8};
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
