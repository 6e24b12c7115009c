/*
 * registry.cu - the rivals every mode chooses from, in table order. A new
 * rival is one file with its factory (rivals/factories.h) and one line here.
 */
#include "rivals/factories.h"

namespace wsb {

const std::vector<RivalInfo> &rival_registry() {
    static const std::vector<RivalInfo> table = {
        {"warpsort", RivalPlace::Device, false, RivalCap::None, RivalScope::Both,
         "warpsort_sort / _pairs on device memory, CUDA backend", make_warpsort_cuda, nullptr},
        {"cub-radix", RivalPlace::Device, false, RivalCap::None, RivalScope::Whole,
         "cub::DeviceRadixSort, DoubleBuffer, int64_t num_items (as Thrust)", make_cub_radix,
         nullptr},
        {"cub-radix-i32", RivalPlace::Device, false, RivalCap::None, RivalScope::Whole,
         "cub::DeviceRadixSort, DoubleBuffer, int num_items", make_cub_radix_i32, nullptr},
        {"cub-merge", RivalPlace::Device, false, RivalCap::None, RivalScope::Whole,
         "cub::DeviceMergeSort, in place, a < b", make_cub_merge, nullptr},
        {"thrust", RivalPlace::Device, false, RivalCap::None, RivalScope::Whole,
         "thrust::sort / sort_by_key, caching allocator (u32 values)", make_thrust, nullptr},
        {"seed-naive", RivalPlace::Device, true, RivalCap::Seed, RivalScope::Whole,
         "the seed document's naive bitonic sort (u32 values)", make_seed_naive, nullptr},
        {"seed-hybrid", RivalPlace::Device, false, RivalCap::Seed, RivalScope::Whole,
         "the seed document's hybrid bitonic sort (u32 values)", make_seed_hybrid, nullptr},
        {"cub-segmented", RivalPlace::Device, false, RivalCap::None, RivalScope::Segmented,
         "cub::DeviceSegmentedSort, by offsets (u32 values)", make_cub_segmented, nullptr},
        {"cub-segmented-radix", RivalPlace::Device, false, RivalCap::None, RivalScope::Segmented,
         "cub::DeviceSegmentedRadixSort, by offsets (u32 values)", make_cub_segmented_radix,
         nullptr},
        {"warpsort-cpu", RivalPlace::Host, true, RivalCap::Host, RivalScope::Whole,
         "warpsort's CPU backend on host memory, all cores", nullptr, make_warpsort_cpu},
        {"warpsort-host", RivalPlace::Host, false, RivalCap::Host, RivalScope::Whole,
         "warpsort_sort / _pairs on host memory, CUDA backend (its pipeline)", nullptr,
         make_warpsort_host},
    };
    return table;
}

const RivalInfo *find_rival(const std::string &name) {
    for (const RivalInfo &r : rival_registry())
        if (name == r.name) return &r;
    return nullptr;
}

std::vector<std::string> rival_names(RivalPlace place) {
    std::vector<std::string> out;
    for (const RivalInfo &r : rival_registry())
        if (r.place == place) out.push_back(r.name);
    return out;
}

bool wide_values_refused(const Regime &r, std::string *why) {
    if (r.value_bytes != 8) return false;
    *why = "u32 values only";
    return true;
}

} // namespace wsb
