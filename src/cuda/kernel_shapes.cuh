/*
 * kernel_shapes.cuh - the compile-time shapes of one key/value type on one
 * architecture family (its row of tuning.cuh), and the shared memory its
 * tile-sort and merge blocks take. The launchers read launch shapes from
 * here and sizes from the plan.
 */
#ifndef WARPSORT_CUDA_KERNEL_SHAPES_CUH
#define WARPSORT_CUDA_KERNEL_SHAPES_CUH

#include "merge.cuh"
#include "tile_sort.cuh"
#include "tuning.cuh"

template <typename KB, typename V, int F = WS_FAMILY_SM90>
struct ws_shapes {
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
    static constexpr size_t merge_smem() {
        return ws_merge_smem_bytes<KB, V, SHAPE.merge_threads, SHAPE.merge_items>();
    }
    /* Every block of the row fits what its family promises (ws_select_family). */
    static_assert(tile_smem(ws_family_of(F).tile_max_sub) <= ws_family_of(F).smem_block,
                  "tile-sort block larger than the family's shared memory");
    static_assert(merge_smem() <= ws_family_of(F).smem_block,
                  "merge block larger than the family's shared memory");
};

#endif /* WARPSORT_CUDA_KERNEL_SHAPES_CUH */
