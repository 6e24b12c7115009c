/*
 * cub_merge.cu - rival: cub::DeviceMergeSort (SortKeys / SortPairs).
 *
 * In place on the working buffers, with plain `a < b` as the comparator
 * (the inputs hold no NaN, zero or subnormal, so for floats this order is
 * warpsort's order too). Temp storage is allocated once, outside timing.
 */
#include "bench.cuh"

#include <climits>

#include <cub/device/device_merge_sort.cuh>

namespace wsb {
namespace {

struct PlainLess {
    template <class T> __device__ bool operator()(const T &a, const T &b) const { return a < b; }
};

template <class K> class CubMerge final : public DeviceRival {
public:
    explicit CubMerge(bool pairs) : pairs_(pairs) {}

    bool temp_bytes(const Buffers &b, size_t *bytes, std::string *err) override {
        if (b.n > (size_t)INT_MAX) {
            *err = "n above INT_MAX (the harness passes int num_items)";
            return false;
        }
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

    bool run(const Buffers &b, std::string *err) override {
        size_t t = temp_size_;
        cudaError_t e = call(temp_.get(), t, b);
        if (e != cudaSuccess) {
            *err = "cub::DeviceMergeSort: " + cuda_error_text(e);
            return false;
        }
        return true;
    }

private:
    cudaError_t call(void *temp, size_t &bytes, const Buffers &b) {
        const int n = (int)b.n;
        if (pairs_)
            return cub::DeviceMergeSort::SortPairs(temp, bytes, (K *)b.keys_work, b.vals_work, n,
                                                   PlainLess(), b.stream);
        return cub::DeviceMergeSort::SortKeys(temp, bytes, (K *)b.keys_work, n, PlainLess(),
                                              b.stream);
    }

    bool pairs_;
    DeviceMemory temp_;
    size_t temp_size_ = 0;
};

} // namespace

std::unique_ptr<DeviceRival> make_cub_merge(const Regime &r, std::string *why) {
    if (r.seg_size) {
        *why = "whole-array sort (see cub-segmented)";
        return nullptr;
    }
    return make_typed<CubMerge>(r.dtype, r.pairs);
}

} // namespace wsb
