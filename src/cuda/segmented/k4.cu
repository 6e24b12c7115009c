/*
 * segmented/k4.cu - the batched sorts of 4-byte keys alone
 * (segmented_sorts.cuh): one translation unit for each width pair.
 */
#include "../segmented_sorts.cuh"

WS_SEG_INSTANCE(ws_seg_sorts_k4, uint32_t, no_value)
