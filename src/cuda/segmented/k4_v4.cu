/*
 * segmented/k4_v4.cu - the batched sorts of 4-byte keys with 4-byte values
 * (segmented_sorts.cuh): one translation unit for each width pair.
 */
#include "../segmented_sorts.cuh"

WS_SEG_INSTANCE(ws_seg_sorts_k4_v4, uint32_t, uint32_t)
