/*
 * segmented/k8.cu - the batched sorts of 8-byte keys alone
 * (segmented_sorts.cuh): one translation unit for each width pair.
 */
#include "../segmented_sorts.cuh"

WS_SEG_INSTANCE(ws_seg_sorts_k8, uint64_t, no_value)
