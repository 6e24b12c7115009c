/*
 * cub_radix.cu - rival: cub::DeviceRadixSort (SortKeys / SortPairs).
 *
 * Uses the DoubleBuffer entry points, as a user who cares about memory
 * would: CUB ping-pongs between the working buffer and keys_alt, and the
 * result is wherever the selector ends. Temp storage is allocated once,
 * outside the timed region. num_items is passed as int64_t ("cub-radix", as
 * Thrust passes it) or as int ("cub-radix-i32"). The type picks CUB's
 * offset width and with it the tuning: on sm_90, keys-only sorts take 19
 * items a thread with 64-bit offsets and 20 with 32-bit ones, pairs 17 and
 * 23 (cub/device/dispatch/tuning/tuning_radix_sort.cuh). Issue 10's 2.83 ms
 * against the harness's 3.23 ms at 2^27 u32 keys on the H100 was this
 * setting; the harness times both, so a ratio can use the faster.
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
    CubRadix(bool pairs, bool offset64)
        : CubDoubleBufferRival<K>(pairs, "cub::DeviceRadixSort",
                                  offset64 ? "n above INT_MAX (kept to the sizes cub-radix-i32 "
                                             "takes, so the two rows compare)"
                                           : "n above INT_MAX (the harness passes int num_items)"),
          offset64_(offset64) {}

private:
    using CubDoubleBufferRival<K>::keys_;
    using CubDoubleBufferRival<K>::vals_;
    using CubRival::pairs_;

    cudaError_t call(void *temp, size_t &bytes, const Buffers &b) override {
        return offset64_ ? call_n(temp, bytes, b, (int64_t)b.n) : call_n(temp, bytes, b, (int)b.n);
    }
    std::string note() const override {
        return offset64_ ? "int64 num_items" : "int num_items";
    }
    template <class N> cudaError_t call_n(void *temp, size_t &bytes, const Buffers &b, N n) {
        if (pairs_)
            return cub::DeviceRadixSort::SortPairs(temp, bytes, keys_, vals_, n, 0,
                                                   (int)(sizeof(K) * 8), b.stream);
        return cub::DeviceRadixSort::SortKeys(temp, bytes, keys_, n, 0, (int)(sizeof(K) * 8),
                                              b.stream);
    }
    const bool offset64_;
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

std::unique_ptr<DeviceRival> make_cub_radix(const Regime &r, bool offset64, std::string *why) {
    if (r.seg_size) {
        *why = "whole-array sort (see cub-segmented)";
        return nullptr;
    }
    return make_typed<CubRadix>(r.dtype, r.pairs, offset64);
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
