/* iota.cu - the one iota (iota.h). */
#include <stdint.h>

#include "iota.h"

template <typename I>
__global__ void ws_iota_kernel(I *out, size_t n, size_t base) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        out[i] = (I)(base + i);
}

cudaError_t ws_iota(void *out, size_t n, size_t base, size_t index_bytes, int sm_count,
                    cudaStream_t stream) {
    if (!n) return cudaSuccess;
    /* A grid-stride loop over eight blocks per SM: enough to saturate the
     * stores, few enough that the grid never dwarfs a small n. */
    const size_t want = (n + 255) / 256, most = (size_t)(sm_count > 0 ? sm_count : 1) * 8;
    const unsigned grid = (unsigned)(want < most ? want : most);
    if (index_bytes == 4)
        ws_iota_kernel<uint32_t><<<grid, 256, 0, stream>>>((uint32_t *)out, n, base);
    else
        ws_iota_kernel<uint64_t><<<grid, 256, 0, stream>>>((uint64_t *)out, n, base);
    return cudaGetLastError();
}
