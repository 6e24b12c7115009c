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
#include "bench.cuh"

#include <climits>

#include <cub/device/device_radix_sort.cuh>

namespace wsb {
namespace {

template <class K> class CubRadix final : public DeviceRival {
public:
    explicit CubRadix(bool pairs) : pairs_(pairs) {}

    bool temp_bytes(const Buffers &b, size_t *bytes, std::string *err) override {
        if (b.n > (size_t)INT_MAX) {
            *err = "n above INT_MAX (the harness passes int num_items)";
            return false;
        }
        rewind(b);
        size_t t = 0;
        cudaError_t e = call(nullptr, t, b);
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            *err = "temp size query failed: " + cuda_error_text(e);
            return false;
        }
        *bytes = t;
        return true;
    }

    bool prepare(const Buffers &b, std::string *err) override {
        size_t t = 0;
        if (!temp_bytes(b, &t, err)) return false;
        cudaError_t e = temp_.allocate(t);
        if (e != cudaSuccess) {
            *err = strprintf("temp storage of %zu bytes: %s", t, cuda_error_text(e).c_str());
            return false;
        }
        temp_size_ = t;
        return true;
    }

    void before_run(const Buffers &b) override { rewind(b); }

    bool run(const Buffers &b, std::string *err) override {
        size_t t = temp_size_;
        cudaError_t e = call(temp_.get(), t, b);
        if (e != cudaSuccess) {
            *err = "cub::DeviceRadixSort: " + cuda_error_text(e);
            return false;
        }
        return true;
    }

    const void *out_keys(const Buffers &) const override { return keys_.d_buffers[keys_.selector]; }
    const uint32_t *out_vals(const Buffers &) const override {
        return vals_.d_buffers[vals_.selector];
    }

private:
    void rewind(const Buffers &b) {
        keys_ = cub::DoubleBuffer<K>((K *)b.keys_work, (K *)b.keys_alt);
        vals_ = cub::DoubleBuffer<uint32_t>(b.vals_work, b.vals_alt);
    }
    cudaError_t call(void *temp, size_t &bytes, const Buffers &b) {
        const int n = (int)b.n;
        if (pairs_)
            return cub::DeviceRadixSort::SortPairs(temp, bytes, keys_, vals_, n, 0,
                                                   (int)(sizeof(K) * 8), b.stream);
        return cub::DeviceRadixSort::SortKeys(temp, bytes, keys_, n, 0, (int)(sizeof(K) * 8),
                                              b.stream);
    }

    bool pairs_;
    DeviceMemory temp_;
    size_t temp_size_ = 0;
    cub::DoubleBuffer<K> keys_;
    cub::DoubleBuffer<uint32_t> vals_;
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
