/*
 * device_plan.cu - the (regime, n) jobs of the device mode, in order:
 * regime by regime, n ascending; and which rivals each job gets.
 */
#include "modes/device.h"

#include "rivals/rival.h"

#include <algorithm>

namespace wsb {
namespace {

/* seg: 0 the whole array, > 0 equal segments of seg, < 0 random lengths 1..-seg. */
Regime make_regime(Dtype d, bool pairs, Dist dist, int64_t seg, const DeviceOptions &o) {
    Regime r;
    r.dtype = d;
    r.value_bytes = pairs ? o.value_bytes : 0;
    r.dist = dist;
    r.seg_size = seg > 0 ? (uint64_t)seg : 0;
    r.seg_max = seg < 0 ? (uint64_t)-seg : 0;
    r.stable = o.stable;
    return r;
}

/* The segmentations of the selection, in the make_regime() encoding. */
std::vector<int64_t> segmentations(const DeviceOptions &o, bool whole,
                                   const std::vector<uint64_t> &sizes) {
    std::vector<int64_t> segs;
    if (whole) segs.push_back(0);
    for (uint64_t s : sizes) segs.push_back((int64_t)s);
    for (uint64_t m : o.seg_maxes) segs.push_back(-(int64_t)m);
    return segs;
}

bool size_selected(const DeviceOptions &o, int l) {
    if (!o.logs.empty()) return std::find(o.logs.begin(), o.logs.end(), l) != o.logs.end();
    return l >= o.min_log && l <= o.max_log;
}

/* The product of the selection flags. */
std::vector<Job> plain_plan(const DeviceOptions &o) {
    std::vector<Job> jobs;
    const std::vector<bool> none(rival_registry().size(), false);
    for (int64_t seg : segmentations(o, o.whole, o.seg_sizes))
        for (int d = 0; d < kNumDtypes; ++d)
            for (int k = 0; k < 2; ++k)
                for (int s = 0; s < kNumDists; ++s)
                    for (int l = 1; l <= 30; ++l)
                        if (o.dtypes[d] && o.kinds[k] && o.dists[s] && size_selected(o, l))
                            jobs.push_back(
                                Job{make_regime((Dtype)d, k == 1, kDists[s], seg, o), l, none});
    return jobs;
}

/* To stay within its time budget, --full leaves out rows that cost minutes
 * and show little: the seed networks are data-oblivious (random inputs
 * only), and the CPU backend's LSD radix sort does the same passes on
 * sorted and reversed input as on random (it keeps random and few). */
std::vector<bool> full_drops(const Regime &r) {
    std::vector<bool> drop(rival_registry().size(), false);
    for (size_t i = 0; i < drop.size(); ++i) {
        const RivalInfo &info = rival_registry()[i];
        if (info.cap == RivalCap::Seed && r.dist != KEYGEN_RANDOM) drop[i] = true;
        if (info.cap == RivalCap::Host && (r.dist == KEYGEN_SORTED || r.dist == KEYGEN_REVERSED))
            drop[i] = true;
    }
    return drop;
}

/* --quick: u32 random keys 2^10..2^28, target rows at 2^27 (every dtype x
 * keys / pairs, u32 sorted / reversed / few, segmented). --full: every
 * dtype x kind x dist x 2^10..2^30 plus segmented random. */
std::vector<Job> preset_plan(const DeviceOptions &o) {
    std::vector<Job> preset;
    auto add = [&preset, &o](const Regime &r, int lo, int hi) {
        const std::vector<bool> drop = o.preset == DeviceOptions::Full
                                           ? full_drops(r)
                                           : std::vector<bool>(rival_registry().size(), false);
        for (int l = lo; l <= hi; ++l) preset.push_back(Job{r, l, drop});
    };
    const std::vector<int64_t> segs =
        segmentations(o, false, o.seg_set ? o.seg_sizes : std::vector<uint64_t>(1, 1024));
    if (o.preset == DeviceOptions::Quick) {
        add(make_regime(Dtype::U32, false, KEYGEN_RANDOM, 0, o), 10, 28);
        for (int d = 0; d < kNumDtypes; ++d)
            for (int k = 0; k < 2; ++k)
                if (d != 0 || k != 0)
                    add(make_regime((Dtype)d, k == 1, KEYGEN_RANDOM, 0, o), 27, 27);
        for (Dist dist : {KEYGEN_SORTED, KEYGEN_REVERSED, KEYGEN_FEW})
            add(make_regime(Dtype::U32, false, dist, 0, o), 27, 27);
        for (int64_t seg : segs) add(make_regime(Dtype::U32, false, KEYGEN_RANDOM, seg, o), 27, 27);
        return preset;
    }
    for (int d = 0; d < kNumDtypes; ++d)
        for (int k = 0; k < 2; ++k) {
            for (int s = 0; s < kNumDists; ++s)
                add(make_regime((Dtype)d, k == 1, kDists[s], 0, o), 10, 30);
            for (int64_t seg : segs)
                add(make_regime((Dtype)d, k == 1, KEYGEN_RANDOM, seg, o), 10, 30);
        }
    return preset;
}

} // namespace

std::vector<Job> make_device_plan(const DeviceOptions &o) {
    if (o.preset == DeviceOptions::None) return plain_plan(o);
    /* Selection flags filter the preset. */
    std::vector<Job> jobs;
    for (const Job &j : preset_plan(o)) {
        if (!o.whole && !j.regime.segmented()) continue;
        if (o.dtype_set && !o.dtypes[(int)j.regime.dtype]) continue;
        if (o.kind_set && !o.kinds[j.regime.pairs() ? 1 : 0]) continue;
        if (o.dist_set && !o.dists[dist_index(j.regime.dist)]) continue;
        if (o.min_set && j.log2n < o.min_log) continue;
        if (o.max_set && j.log2n > o.max_log) continue;
        if (!o.logs.empty() && !size_selected(o, j.log2n)) continue;
        jobs.push_back(j);
    }
    return jobs;
}

std::vector<int> rivals_for(const DeviceOptions &o, const Job &job) {
    std::vector<int> out;
    const std::vector<RivalInfo> &reg = rival_registry();
    for (size_t i = 0; i < reg.size(); ++i) {
        const bool listed = reg[i].scope == RivalScope::Both ||
                            (reg[i].scope == RivalScope::Segmented) == job.regime.segmented();
        if (o.rivals[i] && listed && !job.drop[i]) out.push_back((int)i);
    }
    return out;
}

} // namespace wsb
