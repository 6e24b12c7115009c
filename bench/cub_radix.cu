/*
 * cub_radix.cu - rival: cub::DeviceRadixSort (SortKeys / SortPairs).
 *
 * Uses the DoubleBuffer entry points, as a user who cares about memory
 * would: CUB ping-pongs between the working buffer and keys_alt, and the
 * result is wherever the selector ends. Temp storage is allocated once,
 * outside the timed region. num_items is passed as int (n <= 2^30 here),
 * which selects CUB's 32-bit offsets, as a typical caller gets.
 *
 * Also builds the harness's reference: the input sorted by this same sort,
 * which the verifier then checks independently (sorted + same multiset).
 */
#include "cub_rival.cuh"

#include <climits>

#include <cub/device/device_radix_sort.cuh>

namespace wsb {
namespace {

template <class K> class CubRadix final : public CubDoubleBufferRival<K> {
public:
    explicit CubRadix(bool pairs)
        : CubDoubleBufferRival<K>(pairs, "cub::DeviceRadixSort",
                                  "n above INT_MAX (the harness passes int num_items)") {}

private:
    using CubDoubleBufferRival<K>::keys_;
    using CubDoubleBufferRival<K>::vals_;
    using CubRival::pairs_;

    cudaError_t call(void *temp, size_t &bytes, const Buffers &b) override {
        const int n = (int)b.n;
        if (pairs_)
            return cub::DeviceRadixSort::SortPairs(temp, bytes, keys_, vals_, n, 0,
                                                   (int)(sizeof(K) * 8), b.stream);
        return cub::DeviceRadixSort::SortKeys(temp, bytes, keys_, n, 0, (int)(sizeof(K) * 8),
                                              b.stream);
    }
};

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
        WSB_CUDA(cudaMemcpyAsync(out, keys.Current(), n * sizeof(K), cudaMemcpyDeviceToDevice,
                                 stream));
    WSB_CUDA(cudaStreamSynchronize(stream));
}

} // namespace

std::unique_ptr<DeviceRival> make_cub_radix(const Regime &r, std::string *why) {
    if (r.seg_size) {
        *why = "whole-array sort (see cub-segmented)";
        return nullptr;
    }
    return make_typed<CubRadix>(r.dtype, r.pairs);
}

void radix_sort_keys_reference(Dtype d, const void *in, void *out, void *scratch, size_t n,
                               cudaStream_t stream) {
    switch (d) {
    case Dtype::U32: reference_sort<uint32_t>(in, out, scratch, n, stream); return;
    case Dtype::F32: reference_sort<float>(in, out, scratch, n, stream); return;
    case Dtype::U64: reference_sort<uint64_t>(in, out, scratch, n, stream); return;
    case Dtype::F64: reference_sort<double>(in, out, scratch, n, stream); return;
    }
    throw BenchError("reference sort: unknown dtype");
}

} // namespace wsb
