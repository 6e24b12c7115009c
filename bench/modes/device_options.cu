/*
 * device_options.cu - the device mode's flags and its plan of (regime, n)
 * jobs (shared by the modes that are presets of it).
 */
#include "modes/device.h"

#include "core/cli.h"
#include "core/common.h"
#include "rivals/rival.h"

namespace wsb {
namespace {

const int kMaxLog = 30; /* CUB rows pass int num_items; 2^30 u64 pairs = 40 GiB of buffers */

std::vector<std::string> registry_names() {
    std::vector<std::string> names;
    for (const RivalInfo &r : rival_registry()) names.push_back(r.name);
    return names;
}

std::vector<std::string> dist_names() {
    std::vector<std::string> names;
    for (int s = 0; s < kNumDists; ++s) names.push_back(dist_name(kDists[s]));
    return names;
}

/* The flags that pick what runs; false if a is not one of them. */
bool parse_selection(const std::string &a, ArgReader &args, DeviceOptions &o) {
    if (a == "--quick" || a == "--full") {
        args.no_value();
        const DeviceOptions::Preset p = a == "--quick" ? DeviceOptions::Quick : DeviceOptions::Full;
        if (o.preset != DeviceOptions::None && o.preset != p)
            usage_error("--quick and --full exclude each other");
        o.preset = p;
    } else if (a == "--dtype") {
        parse_names(a, args.value(), {"u32", "f32", "u64", "f64"}, &o.dtypes, "all");
        o.dtype_set = true;
    } else if (a == "--kind") {
        parse_names(a, args.value(), {"keys", "pairs"}, &o.kinds, "both");
        o.kind_set = true;
    } else if (a == "--keys" || a == "--pairs") {
        args.no_value();
        o.kinds = {a == "--keys", a == "--pairs"};
        o.kind_set = true;
    } else if (a == "--value-bytes") {
        o.value_bytes = (int)parse_int(a, args.value(), 4, 8);
        if (o.value_bytes != 4 && o.value_bytes != 8) usage_error("--value-bytes: 4 or 8");
    } else if (a == "--stable") {
        args.no_value();
        o.stable = true;
    } else if (a == "--dist") {
        parse_names(a, args.value(), dist_names(), &o.dists, "all");
        o.dist_set = true;
    } else if (a == "--min-log" || a == "--max-log") {
        (a == "--min-log" ? o.min_log : o.max_log) = (int)parse_int(a, args.value(), 1, kMaxLog);
        (a == "--min-log" ? o.min_set : o.max_set) = true;
        o.logs.clear();
    } else if (a == "--log") {
        o.logs.clear();
        for (const std::string &item : split_list(args.value()))
            o.logs.push_back((int)parse_int(a, item, 1, kMaxLog));
    } else if (a == "--seg-size") {
        o.seg_sizes.clear();
        for (const std::string &item : split_list(args.value())) {
            const long long s = parse_int(a, item, 2, 1ll << kMaxLog);
            if (s & (s - 1)) usage_error(strprintf("%s: %lld is not a power of two", a.c_str(), s));
            o.seg_sizes.push_back((uint64_t)s);
        }
        o.seg_set = true;
    } else if (a == "--seg-random") {
        o.seg_maxes.clear();
        for (const std::string &item : split_list(args.value()))
            o.seg_maxes.push_back((uint64_t)parse_int(a, item, 1, 1ll << kMaxLog));
    } else if (a == "--no-whole") {
        args.no_value();
        o.whole = false;
    } else if (a == "--rivals") {
        parse_names(a, args.value(), registry_names(), &o.rivals, "all");
    } else {
        return false;
    }
    return true;
}

/* The flags that set how it runs, less the common ones; false if a is not
 * one of them. */
bool parse_settings(const std::string &a, ArgReader &args, DeviceOptions &o) {
    if (a == "--cpu-max-log")
        o.cpu_max_log = (int)parse_int(a, args.value(), 0, kMaxLog);
    else if (a == "--seed-max-log")
        o.seed_max_log = (int)parse_int(a, args.value(), 0, kMaxLog);
    else if (a == "--host-check-max-log")
        o.host_check_max_log = (int)parse_int(a, args.value(), 0, kMaxLog);
    else
        return false;
    return true;
}

} // namespace

DeviceOptions parse_device_args(const DeviceMode &mode, int argc, char **argv) {
    DeviceOptions o = mode.defaults;
    const CommonSpec spec = {mode.usage,
                             kFlagRepeat | kFlagSlowRepeat | kFlagWarmup | kFlagSeed | kFlagDevice |
                                 kFlagJson | kFlagList | kFlagNoFlushL2,
                             1};
    parse_flags(argc, argv, spec, &o, [&o](const std::string &a, ArgReader &args) {
        return parse_selection(a, args, o) || parse_settings(a, args, o);
    });
    /* With a preset the range only filters it, so one bound alone is fine. */
    if ((o.preset == DeviceOptions::None || (o.min_set && o.max_set)) && o.logs.empty() &&
        o.min_log > o.max_log)
        usage_error(strprintf("--min-log %d is above --max-log %d", o.min_log, o.max_log));
    check_common_flags(o);
    return o;
}

} // namespace wsb
