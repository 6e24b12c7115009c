/*
 * cub_radix.cu - rivals cub-radix and cub-radix-i32: cub::DeviceRadixSort
 * (SortKeys / SortPairs), u32 or u64 values.
 *
 * Uses the DoubleBuffer entry points, as a user who cares about memory
 * would: CUB ping-pongs between the working buffer and keys_alt, and the
 * result is wherever the selector ends. Temp storage is allocated once,
 * outside the timed region. num_items is passed as int64_t ("cub-radix", as
 * Thrust passes it) or as int ("cub-radix-i32"). The type picks CUB's
 * offset width and with it the tuning: on sm_90, keys-only sorts take 19
 * items a thread with 64-bit offsets and 20 with 32-bit ones, pairs 17 and
 * 23 (cub/device/dispatch/tuning/tuning_radix_sort.cuh), so the harness
 * times both and a ratio can use the faster.
 */
#include "rivals/cub_rival.cuh"
#include "rivals/factories.h"

#include <cub/device/device_radix_sort.cuh>

namespace wsb {
namespace {

template <class K, class V>
class CubRadix final : public CubDoubleBufferRival<K, V> {
  public:
    CubRadix(bool pairs, bool offset64)
        : CubDoubleBufferRival<K, V>(pairs, "cub::DeviceRadixSort",
                                     offset64
                                         ? "n above INT_MAX (kept to the sizes cub-radix-i32 "
                                           "takes, so the two rows compare)"
                                         : "n above INT_MAX (the harness passes int num_items)"),
          offset64_(offset64) {}

  private:
    using CubDoubleBufferRival<K, V>::keys_;
    using CubDoubleBufferRival<K, V>::vals_;
    using CubRival::pairs_;

    cudaError_t call(void *temp, size_t &bytes, const Buffers &b) override {
        return offset64_ ? call_n(temp, bytes, b, (int64_t)b.n) : call_n(temp, bytes, b, (int)b.n);
    }
    std::string note() const override { return offset64_ ? "int64 num_items" : "int num_items"; }
    template <class N>
    cudaError_t call_n(void *temp, size_t &bytes, const Buffers &b, N n) {
        if (pairs_)
            return cub::DeviceRadixSort::SortPairs(temp, bytes, keys_, vals_, n, 0,
                                                   (int)(sizeof(K) * 8), b.stream);
        return cub::DeviceRadixSort::SortKeys(temp, bytes, keys_, n, 0, (int)(sizeof(K) * 8),
                                              b.stream);
    }
    const bool offset64_;
};

std::unique_ptr<DeviceRival> make(const Regime &r, bool offset64, std::string *why) {
    if (r.segmented()) {
        *why = "whole-array sort (see cub-segmented)";
        return nullptr;
    }
    return make_typed_kv<CubRadix>(r, r.pairs(), offset64);
}

} // namespace

std::unique_ptr<DeviceRival> make_cub_radix(const Regime &r, const RivalEnv &, std::string *why) {
    return make(r, true, why);
}

std::unique_ptr<DeviceRival> make_cub_radix_i32(const Regime &r, const RivalEnv &,
                                                std::string *why) {
    return make(r, false, why);
}

} // namespace wsb
