/*
 * device.h - the device mode (warpsort against its rivals on device
 * memory) and the modes that are presets of it (wide-pairs).
 */
#ifndef WSB_MODES_DEVICE_H
#define WSB_MODES_DEVICE_H

#include <cstdint>
#include <string>
#include <vector>

#include "core/cli.h"
#include "core/regime.h"

namespace wsb {

/* repeat, slow_repeat, warmup, seed, device, json_path, no_json,
 * list_only, flush_l2: CommonOptions. */
struct DeviceOptions : CommonOptions {
    DeviceOptions() { slow_repeat = 3; }
    enum Preset { None, Quick, Full } preset = None;
    bool dtype_set = false, kind_set = false, dist_set = false, min_set = false, max_set = false,
         seg_set = false;
    std::vector<bool> dtypes = {true, false, false, false};
    std::vector<bool> kinds = {true, false}; /* keys, pairs */
    std::vector<bool> dists = std::vector<bool>(kNumDists, false);
    int value_bytes = 4; /* of pairs */
    int min_log = 10, max_log = 28;
    std::vector<int> logs;           /* --log: these sizes instead of the range */
    std::vector<uint64_t> seg_sizes; /* equal segments */
    std::vector<uint64_t> seg_maxes; /* random lengths, uniform 1..max */
    bool whole = true;               /* the whole-array regimes too (--no-whole: not) */
    std::vector<bool> rivals;        /* per registry entry */
    int cpu_max_log = 24, seed_max_log = 27, host_check_max_log = 20;
    bool stable = false;
};

struct Job {
    Regime regime;
    int log2n;
    std::vector<bool> drop; /* per registry entry: left out of this job */
};

/* The defaults of a mode built on the device mode, and its help. */
struct DeviceMode {
    const char *name;
    const char *usage;
    DeviceOptions defaults;
};

DeviceOptions parse_device_args(const DeviceMode &mode, int argc, char **argv);
std::vector<Job> make_device_plan(const DeviceOptions &o);
/* Registry indices of the rivals of one job, in table order. */
std::vector<int> rivals_for(const DeviceOptions &o, const Job &job);
/* Runs the plan (device_run.cu). */
int run_device_mode(const DeviceMode &mode, int argc, char **argv);

} // namespace wsb

#endif /* WSB_MODES_DEVICE_H */
