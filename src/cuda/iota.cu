/* iota.cu - argsort's index helpers (iota.h). */
#include <stdint.h>

#include "iota.h"

template <typename I>
__global__ void ws_iota_kernel(I *out, size_t n, size_t base) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        out[i] = (I)(base + i);
}

__global__ void ws_widen_kernel(const uint32_t *in, uint64_t *out, size_t n) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        out[i] = in[i];
}

/* A grid-stride loop over eight blocks per SM: enough to saturate the
 * stores, few enough that the grid never dwarfs a small n. */
static unsigned ws_index_grid(size_t n, int sm_count) {
    const size_t want = (n + 255) / 256, most = (size_t)(sm_count > 0 ? sm_count : 1) * 8;
    return (unsigned)(want < most ? want : most);
}

cudaError_t ws_widen_indices(const uint32_t *in, uint64_t *out, size_t n, int sm_count,
                             cudaStream_t stream) {
    if (!n) return cudaSuccess;
    ws_widen_kernel<<<ws_index_grid(n, sm_count), 256, 0, stream>>>(in, out, n);
    return cudaGetLastError();
}

cudaError_t ws_iota(void *out, size_t n, size_t base, size_t index_bytes, int sm_count,
                    cudaStream_t stream) {
    if (!n) return cudaSuccess;
    const unsigned grid = ws_index_grid(n, sm_count);
    if (index_bytes == 4)
        ws_iota_kernel<uint32_t><<<grid, 256, 0, stream>>>((uint32_t *)out, n, base);
    else
        ws_iota_kernel<uint64_t><<<grid, 256, 0, stream>>>((uint64_t *)out, n, base);
    return cudaGetLastError();
}
