/*
 * topk/k8.cu - the top-k paths of 8-byte keys (topk_paths.cuh): one
 * translation unit for each key width.
 */
#include "../topk_paths.cuh"

WS_TK_INSTANCE(ws_tk_paths_k8, uint64_t)
