/*
 * iota.h - the one iota of the CUDA backend: out[i] = base + i for i < n,
 * as 4- or 8-byte indices (argsort's values). Asynchronous on stream.
 * Internal; CUDA translation units only.
 */
#ifndef WARPSORT_CUDA_IOTA_H
#define WARPSORT_CUDA_IOTA_H

#include <cuda_runtime.h>
#include <stddef.h>

cudaError_t ws_iota(void *out, size_t n, size_t base, size_t index_bytes, int sm_count,
                    cudaStream_t stream);

#endif /* WARPSORT_CUDA_IOTA_H */
