/*
 * host.h - the host mode: warpsort_sort on host arrays (pageable and
 * pinned; out of core under a device budget) against device rivals run as
 * copy-sort-copy, the CPU backend, and the bus limit measured in the same run.
 */
#ifndef WSB_MODES_HOST_H
#define WSB_MODES_HOST_H

#include <cstdint>
#include <string>
#include <vector>

#include "core/cli.h"
#include "core/regime.h"

namespace wsb {

/* repeat, slow_repeat, warmup, seed, device, json_path, no_json,
 * list_only: CommonOptions. */
struct HostOptions : CommonOptions {
    HostOptions() { repeat = 5; }
    std::vector<uint64_t> sizes = {10000000, 100000000};
    std::vector<Regime> kinds;               /* dtype x keys / pairs */
    std::vector<bool> memory = {true, true}; /* pageable, pinned */
    std::vector<std::string> rivals = {"warpsort-host", "cub-radix+copy", "warpsort+copy",
                                       "warpsort-cpu"};
    uint64_t cpu_max_n = (uint64_t)1 << 28;
    uint64_t ooc_n = 0, ooc_budget = (uint64_t)4 << 30;
    /* --devices: the out-of-core rows again on these devices at once
     * (config devices); device_count 0: not asked, WARPSORT_ALL_DEVICES: all. */
    std::vector<int> devices;
    int device_count = 0;
    std::string devices_label; /* "0+1" or "all" */
    uint64_t timeline_n = 0;
    std::string trace = "host-timeline.csv";
};

HostOptions parse_host_args(int argc, char **argv);
/* The traced timeline (--timeline): host_timeline.cu. */
int run_host_timeline(const HostOptions &o);

} // namespace wsb

#endif /* WSB_MODES_HOST_H */
