/*
 * dispatch.cuh - the one switch from run-time widths to kernel types: keys
 * of 4 or 8 bytes as ordered bits, values of none, 4 or 8 bytes.
 * OP::template run<KB, V>(args...) is called with the matching types.
 */
#ifndef WARPSORT_CUDA_DISPATCH_CUH
#define WARPSORT_CUDA_DISPATCH_CUH

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "warpsort/key_traits.cuh"

template <typename OP, typename KB, typename... A>
static cudaError_t ws_dispatch_values(size_t value_bytes, A... a) {
    switch (value_bytes) {
    case 0: return OP::template run<KB, warpsort::no_value>(a...);
    case 4: return OP::template run<KB, uint32_t>(a...);
    default: return OP::template run<KB, uint64_t>(a...);
    }
}

template <typename OP, typename... A>
static cudaError_t ws_dispatch_kv(size_t key_bytes, size_t value_bytes, A... a) {
    if (key_bytes == 4) return ws_dispatch_values<OP, uint32_t>(value_bytes, a...);
    return ws_dispatch_values<OP, uint64_t>(value_bytes, a...);
}

#endif /* WARPSORT_CUDA_DISPATCH_CUH */
