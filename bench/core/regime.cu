/*
 * regime.cu - names and JSON fields of regimes.
 */
#include "core/regime.h"

#include "core/common.h"

namespace wsb {

const DtypeInfo &dtype_info(Dtype d) {
    static const DtypeInfo table[kNumDtypes] = {
        {Dtype::U32, "u32", 4, false, WARPSORT_U32},
        {Dtype::F32, "f32", 4, true, WARPSORT_F32},
        {Dtype::U64, "u64", 8, false, WARPSORT_U64},
        {Dtype::F64, "f64", 8, true, WARPSORT_F64},
    };
    return table[(int)d];
}

const char *dist_name(Dist d) { return keygen_dist_name(d); }

int dist_index(Dist d) {
    for (int i = 0; i < kNumDists; ++i)
        if (kDists[i] == d) return i;
    return -1;
}

const char *memory_name(Memory m) {
    switch (m) {
    case Memory::Device: return "device";
    case Memory::Pageable: return "pageable";
    case Memory::Pinned: return "pinned";
    }
    return "?";
}

static const char *kind_name(const Regime &r) {
    return r.value_bytes == 0 ? "keys" : r.value_bytes == 4 ? "pairs" : "pairs64";
}

std::string regime_label(const Regime &r) {
    std::string s =
        strprintf("%s %s %s", dtype_info(r.dtype).name, kind_name(r), dist_name(r.dist));
    if (r.seg_size) s += strprintf(" seg%llu", (unsigned long long)r.seg_size);
    if (r.seg_max) s += strprintf(" seg1..%llu", (unsigned long long)r.seg_max);
    if (r.stable) s += " stable";
    if (r.memory != Memory::Device) s += std::string(" ") + memory_name(r.memory);
    if (r.device_budget)
        s += strprintf(" budget%lluM", (unsigned long long)(r.device_budget >> 20));
    return s;
}

JsonFields regime_fields(const Regime &r) {
    JsonFields f;
    f.str("dtype", dtype_info(r.dtype).name)
        .str("kind", r.pairs() ? "pairs" : "keys")
        .str("dist", dist_name(r.dist))
        .integer("segment_size", (long long)r.seg_size)
        .integer("segment_max", (long long)r.seg_max)
        .boolean("stable", r.stable)
        .integer("key_bytes", (long long)r.key_bytes())
        .integer("value_bytes", r.value_bytes)
        .str("memory", memory_name(r.memory));
    if (r.device_budget) f.integer("device_budget_bytes", (long long)r.device_budget);
    return f;
}

int exact_log2(uint64_t n) {
    if (n == 0 || (n & (n - 1))) return -1;
    int l = 0;
    while ((1ull << l) < n) ++l;
    return l;
}

} // namespace wsb
