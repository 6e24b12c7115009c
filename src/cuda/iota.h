/*
 * iota.h - argsort's index helpers, one of each: iota (out[i] = base + i
 * for i < n, as 4- or 8-byte indices) and the widening of 4-byte indices to
 * 8. Asynchronous on stream. Internal; CUDA translation units only.
 */
#ifndef WARPSORT_CUDA_IOTA_H
#define WARPSORT_CUDA_IOTA_H

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

cudaError_t ws_iota(void *out, size_t n, size_t base, size_t index_bytes, int sm_count,
                    cudaStream_t stream);

/* out[i] = in[i] for i < n: 4-byte indices into 8-byte ones. */
cudaError_t ws_widen_indices(const uint32_t *in, uint64_t *out, size_t n, int sm_count,
                             cudaStream_t stream);

#endif /* WARPSORT_CUDA_IOTA_H */
