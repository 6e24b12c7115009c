/*
 * cub_merge.cu - rival: cub::DeviceMergeSort (SortKeys / SortPairs).
 *
 * In place on the working buffers, with plain `a < b` as the comparator
 * (the inputs hold no NaN, zero or subnormal, so for floats this order is
 * warpsort's order too). Temp storage is allocated once, outside timing.
 */
#include "cub_rival.cuh"

#include <climits>

#include <cub/device/device_merge_sort.cuh>

namespace wsb {
namespace {

struct PlainLess {
    template <class T> __device__ bool operator()(const T &a, const T &b) const { return a < b; }
};

template <class K> class CubMerge final : public CubRival {
public:
    explicit CubMerge(bool pairs)
        : CubRival(pairs, "cub::DeviceMergeSort",
                   "n above INT_MAX (the harness passes int num_items)") {}

private:
    cudaError_t call(void *temp, size_t &bytes, const Buffers &b) override {
        const int n = (int)b.n;
        if (b.regime.stable) {
            if (pairs_)
                return cub::DeviceMergeSort::StableSortPairs(temp, bytes, (K *)b.keys_work,
                                                             b.vals_work, n, PlainLess(), b.stream);
            return cub::DeviceMergeSort::StableSortKeys(temp, bytes, (K *)b.keys_work, n,
                                                        PlainLess(), b.stream);
        }
        if (pairs_)
            return cub::DeviceMergeSort::SortPairs(temp, bytes, (K *)b.keys_work, b.vals_work, n,
                                                   PlainLess(), b.stream);
        return cub::DeviceMergeSort::SortKeys(temp, bytes, (K *)b.keys_work, n, PlainLess(),
                                              b.stream);
    }
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
