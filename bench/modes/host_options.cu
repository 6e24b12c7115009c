/*
 * host_options.cu - the host mode's flags.
 */
#include "modes/host.h"

#include "core/cli.h"
#include "core/common.h"
#include "rivals/rival.h"

#include <algorithm>

namespace wsb {
namespace {

const char *const kHostUsage =
    "usage: warpsort_bench host [flags]\n"
    "       warpsort_bench host --timeline N [--trace FILE] [--ooc-n M --ooc-budget BYTES\n"
    "                           [--devices LIST|all]]\n"
    "\n"
    "Sorts host arrays (random keys from src/core/keygen.h), wall clock, median of\n"
    "--repeat runs after --warmup, the input restored (untimed) before each run and\n"
    "every result verified on the host. Each row also gives the bus limit measured\n"
    "in the same run: H2D + D2H of the array by plain cudaMemcpy.\n"
    "\n"
    "  --sizes LIST        n per row: 10M, 100M, 2G (powers of ten) or 2^k (default 10M,100M);\n"
    "                      none: no such rows (only --ooc-n's)\n"
    "  --kinds LIST        DTYPE-keys or DTYPE-pairs, DTYPE u32,f32,u64,f64\n"
    "                      (default u32-keys,u32-pairs,u64-keys)\n"
    "  --value-bytes 4|8   width of the values of pairs (default 4)\n"
    "  --memory LIST       pageable (malloc), pinned (cudaMallocHost) or both (default)\n"
    "  --rivals LIST       warpsort-host (the library's pipeline), warpsort-cpu (CPU\n"
    "                      backend), or DEVICE+copy for a device rival of the device mode\n"
    "                      (cudaMemcpy in, its device sort, cudaMemcpy out), e.g.\n"
    "                      cub-radix+copy; default warpsort-host,cub-radix+copy,\n"
    "                      warpsort+copy,warpsort-cpu\n"
    "  --no-cpu            leave warpsort-cpu out\n"
    "  --cpu-max-n N       largest n for warpsort-cpu, which runs on pageable memory\n"
    "                      only (default 2^28)\n"
    "  --repeat N          timed runs per row (default 5); --slow-repeat N for\n"
    "                      warpsort-cpu (default 1); --warmup N before them (default 1)\n"
    "  --ooc-n N           add u32 keys sorted out of core: n = N pageable keys with\n"
    "  --ooc-budget BYTES  this device budget (default 4G; none: no budgeted rows): the\n"
    "                      first call of the process on its own row (it also faults the\n"
    "                      host scratch in), the calls after it, the budget-free call,\n"
    "                      the CPU backend\n"
    "  --devices LIST|all  with --ooc-n: the same rows (under the budget, then\n"
    "                      budget-free) again with the context's device list set to LIST\n"
    "                      (e.g. 0,1) or every GPU, in the same run, each row verified\n"
    "                      and its speedup over the one-device row noted; budget-free,\n"
    "                      an array whose shares fit the devices sorts in core across\n"
    "                      them (the library's spread path), else out of core\n"
    "  --timeline N        instead of the rows: one pinned and one pageable sort of N\n"
    "                      u32 keys (after a warm-up), then two out-of-core sorts of\n"
    "                      --ooc-n keys if given (and two on --devices' list if given),\n"
    "                      traced by the library (WARPSORT_TRACE, every device's worker)\n"
    "                      into --trace FILE (default host-timeline.csv); draw it with\n"
    "                      bench/plot.py --timeline FILE\n"
    "  --seed N            input generator seed (default 20240601)\n"
    "  --device N          CUDA device (default 0)\n"
    "  --json PATH         results file (default ./bench-host-<UTC date>.json)\n"
    "  --no-json           write no results file\n"
    "  --list              print the planned rows and exit (needs no GPU)\n"
    "  --help              this text\n"
    "\n"
    "Pageable rows move a lot between machines (and between lent instances of the\n"
    "same kind): compare within one run.\n";

std::vector<Regime> parse_kinds(const std::string &flag, const std::string &v) {
    static const char *const dtypes[kNumDtypes] = {"u32", "f32", "u64", "f64"};
    std::vector<Regime> out;
    for (const std::string &item : split_list(v)) {
        Regime r;
        bool found = false;
        for (int d = 0; d < kNumDtypes && !found; ++d)
            for (int k = 0; k < 2 && !found; ++k)
                if (item == std::string(dtypes[d]) + (k ? "-pairs" : "-keys")) {
                    r.dtype = (Dtype)d;
                    r.value_bytes = k ? 4 : 0;
                    found = true;
                }
        if (!found)
            usage_error(flag + ": expected DTYPE-keys or DTYPE-pairs (u32, f32, u64, f64), got '" +
                        item + "'");
        out.push_back(r);
    }
    return out;
}

std::vector<std::string> parse_rivals(const std::string &flag, const std::string &v) {
    std::vector<std::string> out = split_list(v);
    for (const std::string &name : out) {
        const bool copy = name.size() > 5 && name.compare(name.size() - 5, 5, "+copy") == 0;
        const RivalInfo *r = find_rival(copy ? name.substr(0, name.size() - 5) : name);
        if (!r || (r->place == RivalPlace::Device) != copy)
            usage_error(flag + ": unknown host rival '" + name +
                        "' (warpsort-host, warpsort-cpu or DEVICE+copy)");
    }
    return out;
}

/* --devices: "all" or distinct ordinals "0,1" (the library checks that
 * they exist when the row's context is made). */
void parse_devices(const std::string &flag, const std::string &v, HostOptions &o) {
    o.devices.clear();
    o.devices_label = v == "all" ? "all" : "";
    o.device_count = WARPSORT_ALL_DEVICES;
    if (v == "all") return;
    for (const std::string &item : split_list(v)) {
        const int d = (int)parse_int(flag, item, 0, 1023);
        if (std::find(o.devices.begin(), o.devices.end(), d) != o.devices.end())
            usage_error(flag + ": device " + item + " appears twice in '" + v + "'");
        o.devices.push_back(d);
        o.devices_label += (o.devices_label.empty() ? "" : "+") + item;
    }
    if (o.devices.size() > WARPSORT_MAX_DEVICES) usage_error(flag + ": too many devices");
    o.device_count = (int)o.devices.size();
}

/* The host mode's own flags; false if a is not one of them. */
bool parse_host_flag(const std::string &a, ArgReader &args, HostOptions &o, int &value_bytes) {
    if (a == "--no-cpu") {
        args.no_value();
        o.rivals.erase(std::remove(o.rivals.begin(), o.rivals.end(), "warpsort-cpu"),
                       o.rivals.end());
    } else if (a == "--sizes") {
        o.sizes.clear();
        const std::string v = args.value();
        if (v != "none")
            for (const std::string &s : split_list(v)) o.sizes.push_back(parse_size(a, s));
    } else if (a == "--devices") {
        parse_devices(a, args.value(), o);
    } else if (a == "--kinds")
        o.kinds = parse_kinds(a, args.value());
    else if (a == "--value-bytes")
        value_bytes = (int)parse_int(a, args.value(), 4, 8);
    else if (a == "--memory")
        parse_names(a, args.value(), {"pageable", "pinned"}, &o.memory, "both");
    else if (a == "--rivals")
        o.rivals = parse_rivals(a, args.value());
    else if (a == "--cpu-max-n")
        o.cpu_max_n = parse_size(a, args.value());
    else if (a == "--ooc-n")
        o.ooc_n = parse_size(a, args.value());
    else if (a == "--ooc-budget") {
        const std::string v = args.value();
        o.ooc_budget = v == "none" ? 0 : parse_size(a, v);
        if (v != "none" && o.ooc_budget == 0) usage_error("--ooc-budget: above 0, or none");
    } else if (a == "--timeline")
        o.timeline_n = parse_size(a, args.value());
    else if (a == "--trace")
        o.trace = args.value();
    else
        return false;
    return true;
}

} // namespace

HostOptions parse_host_args(int argc, char **argv) {
    HostOptions o;
    o.kinds = parse_kinds("default", "u32-keys,u32-pairs,u64-keys");
    int value_bytes = 4;
    const CommonSpec spec = {kHostUsage,
                             kFlagRepeat | kFlagSlowRepeat | kFlagWarmup | kFlagSeed | kFlagDevice |
                                 kFlagJson | kFlagList,
                             0};
    parse_flags(argc, argv, spec, &o, [&](const std::string &a, ArgReader &args) {
        return parse_host_flag(a, args, o, value_bytes);
    });
    if (value_bytes != 4 && value_bytes != 8) usage_error("--value-bytes: 4 or 8");
    for (Regime &r : o.kinds)
        if (r.value_bytes) r.value_bytes = value_bytes;
    check_common_flags(o);
    if (o.device_count && !o.ooc_n) usage_error("--devices: needs --ooc-n");
    return o;
}

} // namespace wsb
