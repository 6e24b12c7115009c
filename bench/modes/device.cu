/*
 * device.cu - the modes built on the device harness: device (warpsort
 * against CUB radix / merge / segmented, Thrust, the seed document's
 * bitonic sorts and the CPU backend, on device memory), wide-pairs (the
 * same harness with 8-byte values and its own defaults) and segmented
 * (issue 23's rows: many segments of 2^24 keys in all, equal and random
 * lengths, beside one sort of the whole array).
 */
#include "modes/device.h"

#include "modes/mode.h"
#include "rivals/rival.h"

namespace wsb {
namespace {

const char *const kDeviceUsage =
    "usage: warpsort_bench device [--quick | --full] [selection] [settings]\n"
    "\n"
    "Times sorting of device arrays with CUDA events (median and min of repeats\n"
    "after warm-up, fresh copy of the same input before each repeat, L2 flushed,\n"
    "every result verified) for warpsort and its rivals; prints a table and\n"
    "writes JSON to the current directory (see bench/README.md).\n"
    "\n"
    "presets (selection flags given with a preset filter it):\n"
    "  --quick             u32 random keys 2^10..2^28 with every rival, plus target\n"
    "                      rows at 2^27 (each dtype x keys/pairs, u32 sorted/reversed/\n"
    "                      few, a segmented row); about 30 s on an H100\n"
    "  --full              dtypes u32,f32,u64,f64 x keys,pairs x all dists x 2^10..2^30\n"
    "                      plus segmented (seg 1024, random); seed baselines on random\n"
    "                      inputs only, warpsort-cpu on random and few\n"
    "  (no preset)         the product of the selection flags below, defaults\n"
    "                      --dtype u32 --kind keys --dist random --min-log 10 --max-log 28\n"
    "selection:\n"
    "  --dtype LIST        u32,f32,u64,f64 or all\n"
    "  --kind LIST         keys,pairs or both;  --keys / --pairs are short for one\n"
    "  --value-bytes 4|8   width of the values of pairs (default 4; 8: warpsort,\n"
    "                      cub-radix, cub-radix-i32, cub-merge and the host rivals)\n"
    "  --stable            every row sorts stably: warpsort with WARPSORT_STABLE, CUB\n"
    "                      merge sort's StableSort*; CUB radix and Thrust are stable\n"
    "                      anyway; the seed kernels and cub-segmented are n/a\n"
    "  --dist LIST         random,sorted,reversed,few (16 distinct values),equal,two,\n"
    "                      skewed (90 % one key),exponential,all-but-one, or all\n"
    "  --min-log N         smallest n = 2^N (1..30)\n"
    "  --max-log N         largest n = 2^N (1..30; sizes that do not fit in GPU memory\n"
    "                      are skipped)\n"
    "  --log LIST          exactly these n = 2^N instead of a range, e.g. 24,26\n"
    "  --seg-size LIST     add segmented regimes: equal segments of these sizes (powers\n"
    "                      of two): warpsort_sort_rows, cub-segmented, cub-segmented-radix\n"
    "  --seg-random LIST   add segmented regimes of random lengths, uniform 1..MAX for\n"
    "                      each MAX listed, by offsets: warpsort_sort_segments and the\n"
    "                      CUB segmented sorts\n"
    "  --no-whole          only the segmented regimes (not the whole array)\n"
    "  --rivals LIST       warpsort,cub-radix,cub-radix-i32,cub-merge,thrust,seed-naive,\n"
    "                      seed-hybrid,cub-segmented,cub-segmented-radix,warpsort-cpu,\n"
    "                      warpsort-host or all\n"
    "                      (default: all but warpsort-host; cub-radix passes num_items\n"
    "                      as int64_t, as Thrust does, cub-radix-i32 as int; the host\n"
    "                      rivals sort host copies, timed by the wall clock)\n"
    "settings:\n"
    "  --repeat N          timed repeats per row (default 7)\n"
    "  --slow-repeat N     timed repeats for seed-naive and warpsort-cpu (default 3)\n"
    "  --warmup N          untimed (but verified) runs before them (default 1, >= 1)\n"
    "  --cpu-max-log N     largest n for the host rivals (default 24)\n"
    "  --seed-max-log N    largest n for seed-naive / seed-hybrid (default 27)\n"
    "  --host-check-max-log N  also check results on the host with std::sort up to\n"
    "                      2^N (default 20; the GPU verifier checks every size)\n"
    "  --no-flush-l2       do not flush L2 between the input reset and the timed run\n"
    "  --seed N            input generator seed (default 20240601)\n"
    "  --device N          CUDA device (default 0)\n"
    "  --json PATH         results file (default ./bench-device-<UTC date>.json)\n"
    "  --no-json           write no results file\n"
    "  --list              print the planned rows and exit (needs no GPU)\n"
    "  --help              this text\n"
    "\n"
    "exit status: 0 all rows ok or skipped, 1 some row FAILED verification or\n"
    "errored, 2 bad arguments, 3 the harness could not run (no GPU, self-test,\n"
    "broken CUDA context).\n";

const char *const kWidePairsUsage =
    "usage: warpsort_bench wide-pairs [device flags]\n"
    "\n"
    "The device mode with 8-byte values (u64 values 0..n-1): warpsort_sort_pairs\n"
    "with value_bytes 8 against cub::DeviceRadixSort::SortPairs (int64_t and int\n"
    "num_items) and cub::DeviceMergeSort::SortPairs, same process, same inputs,\n"
    "every result verified. Defaults: --dtype u64,f64 --pairs --value-bytes 8\n"
    "--log 24,26 --rivals warpsort,cub-radix,cub-radix-i32,cub-merge --warmup 2;\n"
    "every flag of 'warpsort_bench device --help' works here too (JSON default\n"
    "./bench-wide-pairs-<UTC date>.json).\n";

/* Registry entries named in csv selected, the others not. */
std::vector<bool> rival_set(const std::vector<std::string> &names) {
    std::vector<bool> set;
    for (const RivalInfo &r : rival_registry()) {
        bool on = false;
        for (const std::string &n : names) on = on || n == r.name;
        set.push_back(on);
    }
    return set;
}

DeviceOptions device_defaults() {
    DeviceOptions o;
    o.dists[dist_index(KEYGEN_RANDOM)] = true;
    for (const RivalInfo &r : rival_registry())
        o.rivals.push_back(std::string(r.name) != "warpsort-host");
    return o;
}

} // namespace

const char *const kSegmentedUsage =
    "usage: warpsort_bench segmented [device flags]\n"
    "\n"
    "Issue 23's rows: 2^24 keys in segments, sorted per segment by warpsort\n"
    "(warpsort_sort_rows for equal segments, warpsort_sort_segments for random\n"
    "lengths by uint64_t offsets; caller workspace) against\n"
    "cub::DeviceSegmentedSort (cub-segmented) and cub::DeviceSegmentedRadixSort\n"
    "(cub-segmented-radix), beside one sort of all 2^24 keys (warpsort, cub-radix,\n"
    "cub-radix-i32), same process, same inputs, every result verified.\n"
    "Defaults: --dtype u32,f32 --kind keys,pairs --log 24 --seg-size 2^5..2^16 and\n"
    "2^22 (four segments of 2^22 beside the one 2^24 sort) --seg-random 2048,65536\n"
    "--rivals warpsort,cub-radix,cub-radix-i32,cub-segmented,cub-segmented-radix;\n"
    "every flag of 'warpsort_bench device --help' works here too (--no-whole leaves\n"
    "out the whole-array rows; JSON default ./bench-segmented-<UTC date>.json;\n"
    "'plot.py FILE' draws G keys/s against segment length).\n";

int device_main(int argc, char **argv) {
    const DeviceMode mode = {"device", kDeviceUsage, device_defaults()};
    return run_device_mode(mode, argc, argv);
}

int wide_pairs_main(int argc, char **argv) {
    DeviceMode mode = {"wide-pairs", kWidePairsUsage, device_defaults()};
    DeviceOptions &o = mode.defaults;
    o.dtypes = {false, false, true, true};
    o.kinds = {false, true};
    o.value_bytes = 8;
    o.logs = {24, 26};
    o.warmup = 2;
    o.rivals = rival_set({"warpsort", "cub-radix", "cub-radix-i32", "cub-merge"});
    return run_device_mode(mode, argc, argv);
}

int segmented_main(int argc, char **argv) {
    DeviceMode mode = {"segmented", kSegmentedUsage, device_defaults()};
    DeviceOptions &o = mode.defaults;
    o.dtypes = {true, true, false, false};
    o.kinds = {true, true};
    o.logs = {24};
    for (int l = 5; l <= 16; ++l) o.seg_sizes.push_back((uint64_t)1 << l);
    o.seg_sizes.push_back((uint64_t)1 << 22);
    o.seg_maxes = {2048, 65536};
    o.rivals = rival_set(
        {"warpsort", "cub-radix", "cub-radix-i32", "cub-segmented", "cub-segmented-radix"});
    return run_device_mode(mode, argc, argv);
}

} // namespace wsb
