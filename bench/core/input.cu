/*
 * input.cu - input generation (device and host) and the reference sort.
 */
#include "core/input.h"

#include "core/common.h"

#include <climits>
#include <cstring>

#include <cub/device/device_radix_sort.cuh>

namespace wsb {
namespace {

template <class Bits>
__global__ void gen_kernel(Bits *out, size_t n, keygen_t g) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        out[i] = (Bits)keygen_key(&g, i);
}

template <class V>
__global__ void iota_kernel(V *v, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        v[i] = (V)i;
}

__global__ void offsets_kernel(int *off, uint64_t *off64, size_t num_segments, uint64_t seg_size) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i <= num_segments;
         i += (size_t)gridDim.x * blockDim.x) {
        off[i] = (int)(i * seg_size);
        if (off64) off64[i] = i * seg_size;
    }
}

/* Sorts n keys ascending with CUB's radix sort from in into out (scratch: a
 * third n-key buffer). The key type's own radix order is the total order
 * the verifier checks against, for the finite inputs the harness times. */
template <class K>
void reference_sort(const void *in, void *out, void *scratch, size_t n, cudaStream_t stream) {
    if (n > (size_t)INT_MAX) throw BenchError("reference sort: n above INT_MAX");
    WSB_CUDA(cudaMemcpyAsync(out, in, n * sizeof(K), cudaMemcpyDeviceToDevice, stream));
    cub::DoubleBuffer<K> keys((K *)out, (K *)scratch);
    size_t bytes = 0;
    WSB_CUDA(cub::DeviceRadixSort::SortKeys(nullptr, bytes, keys, (int)n, 0, (int)(sizeof(K) * 8),
                                            stream));
    DeviceMemory temp;
    WSB_CUDA(temp.allocate(bytes));
    WSB_CUDA(cub::DeviceRadixSort::SortKeys(temp.get(), bytes, keys, (int)n, 0,
                                            (int)(sizeof(K) * 8), stream));
    if (keys.Current() != (K *)out)
        WSB_CUDA(
            cudaMemcpyAsync(out, keys.Current(), n * sizeof(K), cudaMemcpyDeviceToDevice, stream));
    WSB_CUDA(cudaStreamSynchronize(stream));
}

void reference_sort(Dtype d, const void *in, void *out, void *scratch, size_t n, cudaStream_t s) {
    switch (d) {
    case Dtype::U32: reference_sort<uint32_t>(in, out, scratch, n, s); return;
    case Dtype::F32: reference_sort<float>(in, out, scratch, n, s); return;
    case Dtype::U64: reference_sort<uint64_t>(in, out, scratch, n, s); return;
    case Dtype::F64: reference_sort<double>(in, out, scratch, n, s); return;
    }
    throw BenchError("reference sort: unknown dtype");
}

} // namespace

uint64_t input_seed(uint64_t seed, size_t n) { return keygen_mix(seed ^ (uint64_t)n); }

std::vector<uint64_t> segment_offsets(const Regime &r, size_t n, uint64_t seed) {
    std::vector<uint64_t> off(1, 0);
    if (r.seg_size) {
        for (uint64_t at = r.seg_size; at <= n; at += r.seg_size) off.push_back(at);
        if (off.back() != n) off.push_back(n); /* a shorter last segment */
        return off;
    }
    if (!r.seg_max) return {0, (uint64_t)n};
    const uint64_t base = keygen_mix(input_seed(seed, n) ^ (r.seg_max * 0x9E3779B97F4A7C15ull));
    uint64_t at = 0;
    for (uint64_t s = 0; at < n; ++s) {
        at = std::min<uint64_t>(n, at + 1 + keygen_mix(base + s) % r.seg_max);
        off.push_back(at);
    }
    return off;
}

unsigned grid_for(size_t n, unsigned block) {
    static int sms = 0;
    if (sms == 0) {
        int dev = 0;
        WSB_CUDA(cudaGetDevice(&dev));
        WSB_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
        if (sms <= 0) sms = 1;
    }
    size_t want = (n + block - 1) / block;
    const size_t cap = (size_t)sms * 16;
    return (unsigned)std::max<size_t>(1, std::min(want, cap));
}

void generate_keys(const Regime &r, size_t n, uint64_t seed, void *keys, cudaStream_t stream) {
    if (n == 0) return;
    const keygen_t g = keygen_init(r.dist, (int)dtype_info(r.dtype).ws, input_seed(seed, n), n);
    if (r.key_bytes() == 4)
        gen_kernel<uint32_t><<<grid_for(n, 256), 256, 0, stream>>>((uint32_t *)keys, n, g);
    else
        gen_kernel<uint64_t><<<grid_for(n, 256), 256, 0, stream>>>((uint64_t *)keys, n, g);
    WSB_CUDA(cudaGetLastError());
}

void generate_input(Buffers &b, uint64_t seed) {
    generate_keys(b.regime, b.n, seed, b.keys_pristine, b.stream);
    reference_sort(b.regime.dtype, b.keys_pristine, b.keys_ref, b.keys_alt, b.n, b.stream);
    if (b.regime.segmented() && b.host_offsets) {
        if (b.host_offsets[b.num_segments] != b.n)
            throw BenchError("segment offsets do not end at n");
        if (b.n > (size_t)INT_MAX)
            throw BenchError("segmented regimes: n above INT_MAX (int offsets)");
        std::vector<int> off32(b.host_offsets, b.host_offsets + b.num_segments + 1);
        WSB_CUDA(cudaMemcpy(b.seg_offsets, off32.data(), off32.size() * sizeof(int),
                            cudaMemcpyHostToDevice));
        if (b.seg_offsets64)
            WSB_CUDA(cudaMemcpy(b.seg_offsets64, b.host_offsets,
                                (b.num_segments + 1) * sizeof(uint64_t), cudaMemcpyHostToDevice));
    } else if (b.regime.seg_max) {
        throw BenchError("random segment lengths without host offsets");
    } else if (b.regime.seg_size) {
        offsets_kernel<<<grid_for(b.num_segments + 1, 256), 256, 0, b.stream>>>(
            b.seg_offsets, b.seg_offsets64, b.num_segments, b.regime.seg_size);
        WSB_CUDA(cudaGetLastError());
    }
    WSB_CUDA(cudaStreamSynchronize(b.stream));
}

void generate_input_host(const Regime &r, size_t n, uint64_t seed, void *keys) {
    const keygen_t g = keygen_init(r.dist, (int)dtype_info(r.dtype).ws, input_seed(seed, n), n);
    parallel_for(
        n, [&g, keys](size_t first, size_t count) { keygen_fill_range(&g, keys, first, count); });
}

void fill_iota(void *vals, size_t value_bytes, size_t n, cudaStream_t stream) {
    if (n == 0) return;
    if (value_bytes == 8)
        iota_kernel<uint64_t><<<grid_for(n, 256), 256, 0, stream>>>((uint64_t *)vals, n);
    else
        iota_kernel<uint32_t><<<grid_for(n, 256), 256, 0, stream>>>((uint32_t *)vals, n);
    WSB_CUDA(cudaGetLastError());
}

void fill_iota_host(void *vals, size_t value_bytes, size_t n) {
    parallel_for(n, [vals, value_bytes](size_t first, size_t count) {
        for (size_t i = first; i < first + count; ++i) {
            if (value_bytes == 8)
                ((uint64_t *)vals)[i] = i;
            else
                ((uint32_t *)vals)[i] = (uint32_t)i;
        }
    });
}

} // namespace wsb
