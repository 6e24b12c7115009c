/*
 * main.cu - warpsort_bench: one program, several modes, one shared core
 * (core/: timing, verification, inputs, JSON) and one rival registry
 * (rivals/). The first word picks the mode; see bench/README.md.
 *
 * To add a mode (segmented, topk, ...): write modes/<mode>.cu with its main,
 * declare it in modes/mode.h, and add one line to kModes below.
 */
#include <cstdio>
#include <cstring>
#include <string>

#include "core/cli.h"
#include "core/common.h"
#include "core/run_info.h"
#include "modes/mode.h"
#ifdef WSB_HAVE_NCCL
#include "modes/multi_gpu.h"
#endif

namespace wsb {
namespace {

const Mode kModes[] = {
    {"device",
     "warpsort vs CUB radix / merge / segmented, Thrust, seed sorts, CPU backend; device memory",
     device_main},
    {"host",
     "host arrays (pageable, pinned, out of core) vs CUB copy-sort-copy, CPU backend, bus limit",
     host_main},
    {"collectives", "the device API's warp / block collectives vs CUB's, in-kernel",
     collectives_main},
    {"wide-pairs", "the device mode with 8-byte values (u64 / f64 keys by default)",
     wide_pairs_main},
    {"segmented",
     "issue 23: 2^24 keys in equal / random segments vs CUB segmented sorts, one 2^24 sort",
     segmented_main},
    {"topk", "top-k of one array / of every row: warpsort_topk vs CUB sort then the first k",
     topk_main},
#ifdef WSB_HAVE_NCCL
    {"multi-gpu", "issue 27: one sort across all GPUs (warpsort_nccl) vs one GPU, all-to-all",
     multi_gpu_main},
#endif
};

void print_usage(FILE *f) {
    std::fprintf(f,
                 "usage: warpsort_bench MODE [flags]   (warpsort_bench MODE --help for its flags)\n"
                 "       warpsort_bench --help | --modes\n\nmodes:\n");
    for (const Mode &m : kModes) std::fprintf(f, "  %-12s %s\n", m.name, m.summary);
    std::fprintf(f, "\nExit status: 0 all rows ok or skipped, 1 a row FAILED or errored, 2 bad\n"
                    "arguments, 3 the harness could not run. See bench/README.md.\n");
}

int dispatch(int argc, char **argv) {
    record_command_line(argc, argv);
    if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
        print_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? kExitUsage : kExitOk;
    }
    if (!std::strcmp(argv[1], "--modes")) {
        for (const Mode &m : kModes) std::printf("%s\n", m.name);
        return kExitOk;
    }
    for (const Mode &m : kModes) {
        if (std::strcmp(argv[1], m.name) != 0) continue;
        set_cli_mode(m.name);
        argv[1] = argv[0]; /* the mode sees its flags from argv[1] on */
        return m.main(argc - 1, argv + 1);
    }
    std::fprintf(stderr, "warpsort_bench: unknown mode '%s'\n\n", argv[1]);
    print_usage(stderr);
    return kExitUsage;
}

} // namespace
} // namespace wsb

int main(int argc, char **argv) {
    try {
        return wsb::dispatch(argc, argv);
    } catch (const wsb::BenchError &e) {
        std::fprintf(stderr, "warpsort_bench: %s\n", e.what());
        return wsb::kExitHarness;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "warpsort_bench: unexpected exception: %s\n", e.what());
        return wsb::kExitHarness;
    }
}
