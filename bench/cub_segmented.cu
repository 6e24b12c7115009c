/*
 * cub_segmented.cu - rival: cub::DeviceSegmentedSort (SortKeys / SortPairs)
 * for the segmented regimes (equal segments of seg_size keys).
 *
 * DoubleBuffer entry points (CUB may ping-pong into keys_alt); int segment
 * offsets in device memory; temp storage allocated once, outside timing.
 * warpsort has no segmented call yet, so these regimes time CUB alone.
 */
#include "bench.cuh"

#include <climits>

#include <cub/device/device_segmented_sort.cuh>

namespace wsb {
namespace {

template <class K> class CubSegmented final : public DeviceRival {
public:
    explicit CubSegmented(bool pairs) : pairs_(pairs) {}

    bool temp_bytes(const Buffers &b, size_t *bytes, std::string *err) override {
        if (b.n > (size_t)INT_MAX) {
            *err = "n above INT_MAX (the harness uses int offsets)";
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
            *err = "cub::DeviceSegmentedSort: " + cuda_error_text(e);
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
        const int *begin = b.seg_offsets;
        const int *end = b.seg_offsets + 1;
        if (pairs_)
            return cub::DeviceSegmentedSort::SortPairs(temp, bytes, keys_, vals_, (int64_t)b.n,
                                                       (int64_t)b.num_segments, begin, end,
                                                       b.stream);
        return cub::DeviceSegmentedSort::SortKeys(temp, bytes, keys_, (int64_t)b.n,
                                                  (int64_t)b.num_segments, begin, end, b.stream);
    }

    bool pairs_;
    DeviceMemory temp_;
    size_t temp_size_ = 0;
    cub::DoubleBuffer<K> keys_;
    cub::DoubleBuffer<uint32_t> vals_;
};

} // namespace

std::unique_ptr<DeviceRival> make_cub_segmented(const Regime &r, std::string *why) {
    if (!r.seg_size) {
        *why = "segmented regimes only";
        return nullptr;
    }
    return make_typed<CubSegmented>(r.dtype, r.pairs);
}

} // namespace wsb
