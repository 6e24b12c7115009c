/*
 * cub_merge.cu - rival cub-merge: cub::DeviceMergeSort (SortKeys /
 * SortPairs; StableSort* for --stable), u32 or u64 values.
 *
 * In place on the working buffers, with plain `a < b` as the comparator
 * (the inputs hold no NaN, zero or subnormal, so for floats this order is
 * warpsort's order too). Temp storage is allocated once, outside timing.
 */
#include "rivals/cub_rival.cuh"
#include "rivals/factories.h"

#include <cub/device/device_merge_sort.cuh>

namespace wsb {
namespace {

struct PlainLess {
    template <class T>
    __device__ bool operator()(const T &a, const T &b) const {
        return a < b;
    }
};

template <class K, class V>
class CubMerge final : public CubRival {
  public:
    explicit CubMerge(bool pairs)
        : CubRival(pairs, "cub::DeviceMergeSort",
                   "n above INT_MAX (the harness passes int num_items)") {}

  private:
    cudaError_t call(void *temp, size_t &bytes, const Buffers &b) override {
        const int n = (int)b.n;
        K *k = (K *)b.keys_work;
        V *v = (V *)b.vals_work;
        if (b.regime.stable) {
            if (pairs_)
                return cub::DeviceMergeSort::StableSortPairs(temp, bytes, k, v, n, PlainLess(),
                                                             b.stream);
            return cub::DeviceMergeSort::StableSortKeys(temp, bytes, k, n, PlainLess(), b.stream);
        }
        if (pairs_)
            return cub::DeviceMergeSort::SortPairs(temp, bytes, k, v, n, PlainLess(), b.stream);
        return cub::DeviceMergeSort::SortKeys(temp, bytes, k, n, PlainLess(), b.stream);
    }
};

} // namespace

std::unique_ptr<DeviceRival> make_cub_merge(const Regime &r, const RivalEnv &, std::string *why) {
    if (r.segmented()) {
        *why = "whole-array sort (see cub-segmented)";
        return nullptr;
    }
    return make_typed_kv<CubMerge>(r, r.pairs());
}

} // namespace wsb
