/*
 * cub_segmented.cu - rival cub-segmented: cub::DeviceSegmentedSort
 * (SortKeys / SortPairs) for the segmented regimes (equal segments of
 * seg_size keys, or random lengths by offsets), u32 values.
 *
 * DoubleBuffer entry points (CUB may ping-pong into keys_alt); int segment
 * offsets in device memory; temp storage allocated once, outside timing.
 * warpsort times the same regimes with warpsort_sort_rows (warpsort_cuda.cu).
 */
#include "rivals/cub_rival.cuh"
#include "rivals/factories.h"

#include <cub/device/device_segmented_sort.cuh>

namespace wsb {
namespace {

template <class K>
class CubSegmented final : public CubDoubleBufferRival<K, uint32_t> {
  public:
    explicit CubSegmented(bool pairs)
        : CubDoubleBufferRival<K, uint32_t>(pairs, "cub::DeviceSegmentedSort",
                                            "n above INT_MAX (the harness uses int offsets)") {}

  private:
    using CubDoubleBufferRival<K, uint32_t>::keys_;
    using CubDoubleBufferRival<K, uint32_t>::vals_;
    using CubRival::pairs_;

    cudaError_t call(void *temp, size_t &bytes, const Buffers &b) override {
        const int *begin = b.seg_offsets;
        const int *end = b.seg_offsets + 1;
        if (pairs_)
            return cub::DeviceSegmentedSort::SortPairs(temp, bytes, keys_, vals_, (int64_t)b.n,
                                                       (int64_t)b.num_segments, begin, end,
                                                       b.stream);
        return cub::DeviceSegmentedSort::SortKeys(temp, bytes, keys_, (int64_t)b.n,
                                                  (int64_t)b.num_segments, begin, end, b.stream);
    }
};

} // namespace

std::unique_ptr<DeviceRival> make_cub_segmented(const Regime &r, const RivalEnv &,
                                                std::string *why) {
    if (!r.segmented() || r.stable) {
        *why = r.stable ? "not timed stably (SortKeys is not stable)" : "segmented regimes only";
        return nullptr;
    }
    if (wide_values_refused(r, why)) return nullptr;
    return make_typed<CubSegmented>(r.dtype, r.pairs());
}

} // namespace wsb
