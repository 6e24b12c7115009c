/*
 * cub_segmented_radix.cu - rival cub-segmented-radix:
 * cub::DeviceSegmentedRadixSort (SortKeys / SortPairs) for the segmented
 * regimes (equal segments or random lengths, by int offsets in device
 * memory), u32 values.
 *
 * DoubleBuffer entry points (CUB ping-pongs into keys_alt / vals_alt); all
 * key bits; temp storage allocated once, outside timing. Radix sort is
 * stable, so it also takes --stable rows.
 */
#include "rivals/cub_rival.cuh"
#include "rivals/factories.h"

#include <cub/device/device_segmented_radix_sort.cuh>

namespace wsb {
namespace {

template <class K>
class CubSegmentedRadix final : public CubDoubleBufferRival<K, uint32_t> {
  public:
    explicit CubSegmentedRadix(bool pairs)
        : CubDoubleBufferRival<K, uint32_t>(pairs, "cub::DeviceSegmentedRadixSort",
                                            "n above INT_MAX (int num_items and offsets)") {}

  private:
    using CubDoubleBufferRival<K, uint32_t>::keys_;
    using CubDoubleBufferRival<K, uint32_t>::vals_;
    using CubRival::pairs_;

    cudaError_t call(void *temp, size_t &bytes, const Buffers &b) override {
        const int *begin = b.seg_offsets;
        const int *end = b.seg_offsets + 1;
        const int bits = (int)(sizeof(K) * 8);
        if (pairs_)
            return cub::DeviceSegmentedRadixSort::SortPairs(temp, bytes, keys_, vals_, (int)b.n,
                                                            (int)b.num_segments, begin, end, 0,
                                                            bits, b.stream);
        return cub::DeviceSegmentedRadixSort::SortKeys(
            temp, bytes, keys_, (int)b.n, (int)b.num_segments, begin, end, 0, bits, b.stream);
    }
};

} // namespace

std::unique_ptr<DeviceRival> make_cub_segmented_radix(const Regime &r, const RivalEnv &,
                                                      std::string *why) {
    if (!r.segmented()) {
        *why = "segmented regimes only";
        return nullptr;
    }
    if (wide_values_refused(r, why)) return nullptr;
    return make_typed<CubSegmentedRadix>(r.dtype, r.pairs());
}

} // namespace wsb
