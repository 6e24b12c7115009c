/*
 * bench.cu - warpsort_bench: times warpsort against CUB, Thrust, the seed
 * document's bitonic sorts and warpsort's own CPU backend, in one process,
 * on the same inputs.
 *
 * For every (regime, n) the input is generated once on the GPU and its
 * reference (the sorted keys) is built and checked. Then, per rival and per
 * repeat: the pristine input is copied into the working buffer and L2 is
 * flushed (outside timing); the sort runs between two CUDA events on the
 * harness's stream; the output is verified (outside timing). The row shows
 * the median and min of the timed repeats that follow the warm-up, or
 * FAILED if any repeat, warm-up included, produced a wrong result.
 *
 * See bench/README.md for the flags and the methodology.
 */
#include "bench.cuh"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dlfcn.h>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

#include <cub/version.cuh>

#ifndef WSB_GIT_COMMIT
#define WSB_GIT_COMMIT "unknown"
#endif
#ifndef WSB_CUDA_ARCHS
#define WSB_CUDA_ARCHS "unknown"
#endif

namespace wsb {
namespace {

/*======================================================================
 * Options
 *====================================================================*/
const char *const kRivalNames[] = {"warpsort",   "cub-radix",   "cub-merge",     "thrust",
                                   "seed-naive", "seed-hybrid", "cub-segmented", "warpsort-cpu",
                                   "cub-radix-i32"};
constexpr int kNumRivals = 9;
enum RivalId {
    R_WARPSORT,
    R_CUB_RADIX,
    R_CUB_MERGE,
    R_THRUST,
    R_SEED_NAIVE,
    R_SEED_HYBRID,
    R_CUB_SEGMENTED,
    R_WARPSORT_CPU,
    R_CUB_RADIX_I32
};

struct Job {
    Regime regime;
    int log2n;
    unsigned drop = 0; /* bit (1 << rival id): leave that rival out of this job */
};

struct Options {
    enum Preset { None, Quick, Full } preset = None;
    bool dtype_set = false, kind_set = false, dist_set = false, min_set = false, max_set = false,
         seg_set = false;
    bool dtypes[kNumDtypes] = {true, false, false, false};
    bool kinds[2] = {true, false}; /* keys, pairs */
    bool dists[kNumDists] = {true, false, false, false};
    int min_log = 10, max_log = 28;
    std::vector<uint64_t> seg_sizes;
    bool rivals[kNumRivals] = {true, true, true, true, true, true, true, true, true};
    int repeat = 7, slow_repeat = 3, warmup = 1;
    int cpu_max_log = 24, seed_max_log = 27, host_check_max_log = 20;
    bool flush_l2 = true;
    uint64_t seed = 20240601;
    int device = 0;
    std::string json_path;
    bool no_json = false;
    bool list_only = false;
    bool stable = false;
};

const int kMaxLog = 30; /* CUB rows pass int num_items; 2^30 u64 pairs = 40 GiB of buffers */

const char *const kUsage =
    "usage: warpsort_bench [--quick | --full] [selection] [settings]\n"
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
    "                      inputs only, warpsort-cpu on random and few; under 8 minutes\n"
    "  (no preset)         the product of the selection flags below, defaults\n"
    "                      --dtype u32 --kind keys --dist random --min-log 10 --max-log 28\n"
    "selection:\n"
    "  --dtype LIST        u32,f32,u64,f64 or all\n"
    "  --kind LIST         keys,pairs or both;  --keys / --pairs are short for one\n"
    "  --stable            every row sorts stably: warpsort with WARPSORT_STABLE, CUB\n"
    "                      merge sort's StableSort*; CUB radix and Thrust are stable\n"
    "                      anyway; the seed kernels and cub-segmented are n/a\n"
    "  --dist LIST         random,sorted,reversed,few (16 distinct values),equal,two,\n"
    "                      skewed (90 % one key),exponential,all-but-one, or all\n"
    "  --min-log N         smallest n = 2^N (1..30)\n"
    "  --max-log N         largest n = 2^N (1..30; sizes that do not fit in GPU memory\n"
    "                      are skipped)\n"
    "  --seg-size LIST     add segmented regimes: equal segments of these sizes (powers\n"
    "                      of two; only cub-segmented runs there, warpsort shows n/a)\n"
    "  --rivals LIST       warpsort,cub-radix,cub-radix-i32,cub-merge,thrust,seed-naive,\n"
    "                      seed-hybrid,cub-segmented,warpsort-cpu or all (cub-radix\n"
    "                      passes num_items as int64_t, as Thrust does: on sm_90 that\n"
    "                      picks CUB's faster keys tuning; cub-radix-i32 passes int)\n"
    "settings:\n"
    "  --repeat N          timed repeats per row (default 7)\n"
    "  --slow-repeat N     timed repeats for seed-naive and warpsort-cpu (default 3)\n"
    "  --warmup N          untimed (but verified) runs before them (default 1, >= 1)\n"
    "  --cpu-max-log N     largest n for warpsort-cpu (default 24)\n"
    "  --seed-max-log N    largest n for seed-naive / seed-hybrid (default 27)\n"
    "  --host-check-max-log N  also check results on the host with std::sort up to\n"
    "                      2^N (default 20; the GPU verifier checks every size)\n"
    "  --no-flush-l2       do not flush L2 between the input reset and the timed run\n"
    "  --seed N            input generator seed (default 20240601)\n"
    "  --device N          CUDA device (default 0)\n"
    "  --json PATH         results file (default ./bench-<UTC date>.json)\n"
    "  --no-json           write no results file\n"
    "  --list              print the planned rows and exit (needs no GPU)\n"
    "  --help              this text\n"
    "\n"
    "exit status: 0 all rows ok or skipped, 1 some row FAILED verification or\n"
    "errored, 2 bad arguments, 3 the harness could not run (no GPU, self-test,\n"
    "broken CUDA context).\n";

[[noreturn]] void usage_error(const std::string &msg) {
    std::fprintf(stderr, "warpsort_bench: error: %s (try --help)\n", msg.c_str());
    std::exit(2);
}

std::vector<std::string> split_list(const std::string &s) {
    std::vector<std::string> out;
    size_t start = 0;
    while (start <= s.size()) {
        size_t comma = s.find(',', start);
        if (comma == std::string::npos) comma = s.size();
        out.push_back(s.substr(start, comma - start));
        start = comma + 1;
    }
    return out;
}

long long parse_int(const std::string &flag, const std::string &v, long long lo, long long hi) {
    errno = 0;
    char *end = nullptr;
    long long x = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || errno || !end || *end != '\0' || x < lo || x > hi)
        usage_error(strprintf("%s: expected an integer in %lld..%lld, got '%s'", flag.c_str(), lo,
                              hi, v.c_str()));
    return x;
}

template <size_t N>
void parse_names(const std::string &flag, const std::string &v, const char *const (&names)[N],
                 bool (&set)[N], const char *all_word) {
    for (size_t i = 0; i < N; ++i) set[i] = false;
    for (const std::string &item : split_list(v)) {
        if (item == all_word) {
            for (size_t i = 0; i < N; ++i) set[i] = true;
            continue;
        }
        size_t i = 0;
        while (i < N && item != names[i]) ++i;
        if (i == N) {
            std::string expected;
            for (size_t j = 0; j < N; ++j) expected += std::string(j ? "," : "") + names[j];
            usage_error(strprintf("%s: unknown name '%s' (expected %s or %s)", flag.c_str(),
                                  item.c_str(), expected.c_str(), all_word));
        }
        set[i] = true;
    }
}

Options parse_args(int argc, char **argv) {
    static const char *const dtype_names[kNumDtypes] = {"u32", "f32", "u64", "f64"};
    static const char *const kind_names[2] = {"keys", "pairs"};
    static const char *dist_names[kNumDists];
    for (int s = 0; s < kNumDists; ++s) dist_names[s] = dist_name(kDists[s]);
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        std::string val;
        size_t eq = a.find('=');
        bool has_eq = a.rfind("--", 0) == 0 && eq != std::string::npos;
        if (has_eq) {
            val = a.substr(eq + 1);
            a = a.substr(0, eq);
        }
        auto need = [&](void) -> std::string {
            if (has_eq) return val;
            if (i + 1 >= argc) usage_error(a + ": missing value");
            return argv[++i];
        };
        auto no_value = [&](void) {
            if (has_eq) usage_error(a + ": takes no value");
        };
        if (a == "--help" || a == "-h") {
            std::fputs(kUsage, stdout);
            std::exit(0);
        } else if (a == "--quick") {
            no_value();
            if (o.preset == Options::Full) usage_error("--quick and --full exclude each other");
            o.preset = Options::Quick;
        } else if (a == "--full") {
            no_value();
            if (o.preset == Options::Quick) usage_error("--quick and --full exclude each other");
            o.preset = Options::Full;
        } else if (a == "--dtype") {
            parse_names(a, need(), dtype_names, o.dtypes, "all");
            o.dtype_set = true;
        } else if (a == "--kind") {
            parse_names(a, need(), kind_names, o.kinds, "both");
            o.kind_set = true;
        } else if (a == "--stable") {
            no_value();
            o.stable = true;
        } else if (a == "--keys" || a == "--pairs") {
            no_value();
            o.kinds[0] = a == "--keys";
            o.kinds[1] = a == "--pairs";
            o.kind_set = true;
        } else if (a == "--dist") {
            parse_names(a, need(), dist_names, o.dists, "all");
            o.dist_set = true;
        } else if (a == "--min-log") {
            o.min_log = (int)parse_int(a, need(), 1, kMaxLog);
            o.min_set = true;
        } else if (a == "--max-log") {
            o.max_log = (int)parse_int(a, need(), 1, kMaxLog);
            o.max_set = true;
        } else if (a == "--seg-size") {
            o.seg_sizes.clear();
            for (const std::string &item : split_list(need())) {
                long long s = parse_int(a, item, 2, 1ll << kMaxLog);
                if (s & (s - 1)) usage_error(strprintf("%s: %lld is not a power of two", a.c_str(), s));
                o.seg_sizes.push_back((uint64_t)s);
            }
            o.seg_set = true;
        } else if (a == "--rivals") {
            parse_names(a, need(), kRivalNames, o.rivals, "all");
        } else if (a == "--repeat") {
            o.repeat = (int)parse_int(a, need(), 1, 1000);
        } else if (a == "--slow-repeat") {
            o.slow_repeat = (int)parse_int(a, need(), 1, 1000);
        } else if (a == "--warmup") {
            o.warmup = (int)parse_int(a, need(), 1, 100);
        } else if (a == "--cpu-max-log") {
            o.cpu_max_log = (int)parse_int(a, need(), 0, kMaxLog);
        } else if (a == "--seed-max-log") {
            o.seed_max_log = (int)parse_int(a, need(), 0, kMaxLog);
        } else if (a == "--host-check-max-log") {
            o.host_check_max_log = (int)parse_int(a, need(), 0, kMaxLog);
        } else if (a == "--no-flush-l2") {
            no_value();
            o.flush_l2 = false;
        } else if (a == "--seed") {
            o.seed = (uint64_t)parse_int(a, need(), 0, (1ll << 62));
        } else if (a == "--device") {
            o.device = (int)parse_int(a, need(), 0, 1023);
        } else if (a == "--json") {
            o.json_path = need();
            if (o.json_path.empty()) usage_error("--json: empty path");
        } else if (a == "--no-json") {
            no_value();
            o.no_json = true;
        } else if (a == "--list") {
            no_value();
            o.list_only = true;
        } else {
            usage_error("unknown argument '" + std::string(argv[i]) + "'");
        }
    }
    /* With a preset the range only filters it, so one bound alone is fine. */
    if ((o.preset == Options::None || (o.min_set && o.max_set)) && o.min_log > o.max_log)
        usage_error(strprintf("--min-log %d is above --max-log %d", o.min_log, o.max_log));
    if (o.no_json && !o.json_path.empty()) usage_error("--json and --no-json exclude each other");
    return o;
}

/* The rows to run, in order: regime by regime, n ascending. */
std::vector<Job> make_plan(const Options &o) {
    std::vector<Job> jobs;
    auto add_range = [&jobs](const Regime &r, int lo, int hi) {
        for (int l = lo; l <= hi; ++l) jobs.push_back(Job{r, l, 0u});
    };
    auto regime = [](Dtype d, bool pairs, Dist dist, uint64_t seg) {
        Regime r;
        r.dtype = d;
        r.pairs = pairs;
        r.dist = dist;
        r.seg_size = seg;
        return r;
    };
    if (o.preset == Options::None) {
        std::vector<uint64_t> segs(1, 0);
        segs.insert(segs.end(), o.seg_sizes.begin(), o.seg_sizes.end());
        for (uint64_t seg : segs)
            for (int d = 0; d < kNumDtypes; ++d)
                for (int k = 0; k < 2; ++k)
                    for (int s = 0; s < kNumDists; ++s)
                        if (o.dtypes[d] && o.kinds[k] && o.dists[s])
                            add_range(regime((Dtype)d, k == 1, kDists[s], seg), o.min_log, o.max_log);
        return jobs;
    }
    std::vector<Job> preset;
    /* To stay within its time budget, --full leaves out rows that cost
     * minutes and show little: the seed networks are data-oblivious (random
     * inputs only), and the CPU backend's LSD radix sort does the same passes
     * on sorted and reversed input as on random (it keeps random and few). */
    auto add = [&preset, &o](const Regime &r, int lo, int hi) {
        unsigned drop = 0;
        if (o.preset == Options::Full && r.dist != KEYGEN_RANDOM)
            drop |= (1u << R_SEED_NAIVE) | (1u << R_SEED_HYBRID);
        if (o.preset == Options::Full && (r.dist == KEYGEN_SORTED || r.dist == KEYGEN_REVERSED))
            drop |= 1u << R_WARPSORT_CPU;
        for (int l = lo; l <= hi; ++l) preset.push_back(Job{r, l, drop});
    };
    const uint64_t seg_default = 1024;
    std::vector<uint64_t> segs = o.seg_set ? o.seg_sizes : std::vector<uint64_t>(1, seg_default);
    if (o.preset == Options::Quick) {
        add(regime(Dtype::U32, false, KEYGEN_RANDOM, 0), 10, 28);
        for (int d = 0; d < kNumDtypes; ++d)
            for (int k = 0; k < 2; ++k)
                if (d != 0 || k != 0) add(regime((Dtype)d, k == 1, KEYGEN_RANDOM, 0), 27, 27);
        add(regime(Dtype::U32, false, KEYGEN_SORTED, 0), 27, 27);
        add(regime(Dtype::U32, false, KEYGEN_REVERSED, 0), 27, 27);
        add(regime(Dtype::U32, false, KEYGEN_FEW, 0), 27, 27);
        for (uint64_t seg : segs) add(regime(Dtype::U32, false, KEYGEN_RANDOM, seg), 27, 27);
    } else {
        for (int d = 0; d < kNumDtypes; ++d)
            for (int k = 0; k < 2; ++k)
                for (int s = 0; s < kNumDists; ++s)
                    add(regime((Dtype)d, k == 1, kDists[s], 0), 10, 30);
        for (uint64_t seg : segs)
            for (int d = 0; d < kNumDtypes; ++d)
                for (int k = 0; k < 2; ++k) add(regime((Dtype)d, k == 1, KEYGEN_RANDOM, seg), 10, 30);
    }
    /* Selection flags filter the preset. */
    for (const Job &j : preset) {
        if (o.dtype_set && !o.dtypes[(int)j.regime.dtype]) continue;
        if (o.kind_set && !o.kinds[j.regime.pairs ? 1 : 0]) continue;
        if (o.dist_set && !o.dists[dist_index(j.regime.dist)]) continue;
        if (o.min_set && j.log2n < o.min_log) continue;
        if (o.max_set && j.log2n > o.max_log) continue;
        jobs.push_back(j);
    }
    return jobs;
}

/* Which rivals a regime gets, in table order. */
std::vector<int> rivals_for(const Options &o, const Job &job) {
    const Regime &r = job.regime;
    static const int whole[] = {R_WARPSORT,   R_CUB_RADIX,   R_CUB_RADIX_I32, R_CUB_MERGE,
                                R_THRUST,     R_SEED_NAIVE,  R_SEED_HYBRID,   R_WARPSORT_CPU};
    static const int seg[] = {R_WARPSORT, R_CUB_SEGMENTED};
    std::vector<int> out;
    if (r.seg_size) {
        for (int id : seg)
            if (o.rivals[id]) out.push_back(id);
    } else {
        for (int id : whole)
            if (o.rivals[id] && !(job.drop & (1u << id))) out.push_back(id);
    }
    return out;
}

/*======================================================================
 * Environment facts for the JSON
 *====================================================================*/
std::string now_utc(const char *fmt) {
    std::time_t t = std::time(nullptr);
    std::tm tm_utc;
    gmtime_r(&t, &tm_utc);
    char buf[64];
    std::strftime(buf, sizeof buf, fmt, &tm_utc);
    return buf;
}

std::string shell_quote(const std::string &s) {
    bool plain = !s.empty();
    for (char c : s)
        if (!(std::isalnum((unsigned char)c) || std::strchr("-_./=,:+@%", c))) plain = false;
    if (plain) return s;
    std::string out = "'";
    for (char c : s) {
        if (c == '\'') out += "'\\''";
        else out += c;
    }
    return out + "'";
}

/* The NVIDIA driver version ("580.159.04"): from /proc, else from NVML. */
std::string nvidia_driver_version() {
    std::ifstream f("/proc/driver/nvidia/version");
    std::string line;
    if (f && std::getline(f, line)) {
        /* "NVRM version: NVIDIA UNIX ... Kernel Module  580.159.04  Release Build ..." */
        size_t i = 0;
        while (i < line.size()) {
            size_t j = line.find_first_of(" \t", i);
            if (j == std::string::npos) j = line.size();
            std::string tok = line.substr(i, j - i);
            if (!tok.empty() && std::isdigit((unsigned char)tok[0]) && tok.find('.') != std::string::npos &&
                tok.find_first_not_of("0123456789.") == std::string::npos)
                return tok;
            i = j + 1;
        }
    }
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) return "unknown";
    typedef int (*init_fn)(void);
    typedef int (*version_fn)(char *, unsigned);
    init_fn init = (init_fn)dlsym(h, "nvmlInit_v2");
    version_fn version = (version_fn)dlsym(h, "nvmlSystemGetDriverVersion");
    init_fn shutdown = (init_fn)dlsym(h, "nvmlShutdown");
    std::string out = "unknown";
    char buf[96] = {0};
    if (init && version && init() == 0) {
        if (version(buf, sizeof buf) == 0) out = buf;
        if (shutdown) shutdown();
    }
    dlclose(h);
    return out;
}

bool make_dirs(const std::string &path) {
    if (path.empty()) return true;
    std::string cur;
    for (size_t i = 0; i <= path.size(); ++i) {
        if (i == path.size() || path[i] == '/') {
            if (!cur.empty() && cur != "." && mkdir(cur.c_str(), 0777) != 0 && errno != EEXIST)
                return false;
        }
        if (i < path.size()) cur += path[i];
    }
    return true;
}

/* In the current directory, never in the source tree: results worth keeping
 * are copied to bench/results/ by hand, with the GPU named. */
std::string default_json_path() { return "bench-" + now_utc("%Y%m%d-%H%M%S") + ".json"; }

/*======================================================================
 * The measuring machinery
 *====================================================================*/
struct Gpu {
    int device = 0;
    cudaDeviceProp prop;
    cudaStream_t stream = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
    DeviceMemory flush_buf;
    size_t flush_bytes = 0;
    DeviceMemory flush_sink;
};

/* Reads a buffer larger than L2 so the next kernel starts with a cold,
 * clean L2 (reads leave no dirty lines whose write-back would be timed). */
__global__ void flush_kernel(const uint4 *buf, size_t n, unsigned *sink) {
    unsigned acc = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        uint4 v = buf[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x9E3779B9u) *sink = acc; /* keeps the loads; harmless if taken */
}

void flush_l2(Gpu &g) {
    size_t n = g.flush_bytes / sizeof(uint4);
    flush_kernel<<<(unsigned)g.prop.multiProcessorCount * 8, 512, 0, g.stream>>>(
        (const uint4 *)g.flush_buf.get(), n, (unsigned *)g.flush_sink.get());
    WSB_CUDA(cudaGetLastError());
}

double median_of(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

void fill_stats(Row &row, double copy_bw) {
    const std::vector<double> &t = row.times_ms;
    row.median_ms = median_of(t);
    row.min_ms = *std::min_element(t.begin(), t.end());
    row.max_ms = *std::max_element(t.begin(), t.end());
    double sum = 0;
    for (double x : t) sum += x;
    row.mean_ms = sum / (double)t.size();
    row.gkeys_per_s = row.median_ms > 0 ? (double)row.n / (row.median_ms * 1e-3) / 1e9 : 0;
    if (row.model_passes > 0) {
        size_t per = (size_t)dtype_info(row.regime.dtype).bytes + (row.regime.pairs ? kValueBytes : 0);
        row.model_bytes = row.model_passes * 2.0 * (double)row.n * (double)per;
        if (row.median_ms > 0 && copy_bw > 0)
            row.pct_copy_bw = 100.0 * (row.model_bytes / (row.median_ms * 1e-3)) / copy_bw;
    }
}

/* Device-to-device copy bandwidth: bytes read + written / time, median. */
double measure_copy_bw(Gpu &g, size_t *buffer_bytes) {
    size_t free_b = 0, total_b = 0;
    WSB_CUDA(cudaMemGetInfo(&free_b, &total_b));
    size_t bytes = (size_t)1 << 30;
    while (bytes > ((size_t)16 << 20) && 2 * bytes + ((size_t)512 << 20) > free_b) bytes /= 2;
    DeviceMemory a, b;
    WSB_CUDA(a.allocate(bytes));
    WSB_CUDA(b.allocate(bytes));
    WSB_CUDA(cudaMemsetAsync(a.get(), 1, bytes, g.stream));
    std::vector<double> t;
    for (int i = 0; i < 23; ++i) {
        WSB_CUDA(cudaEventRecord(g.start, g.stream));
        WSB_CUDA(cudaMemcpyAsync(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice, g.stream));
        WSB_CUDA(cudaEventRecord(g.stop, g.stream));
        WSB_CUDA(cudaEventSynchronize(g.stop));
        float ms = 0;
        WSB_CUDA(cudaEventElapsedTime(&ms, g.start, g.stop));
        if (i >= 3) t.push_back(ms);
    }
    *buffer_bytes = bytes;
    double med = median_of(t);
    return med > 0 ? 2.0 * (double)bytes / (med * 1e-3) : 0;
}

/* After a rival's error: clear what can be cleared; throw if the CUDA
 * context is broken (a sticky error: every later call would fail). */
void ensure_context_alive(Gpu &g, const std::string &who) {
    cudaError_t e1 = cudaStreamSynchronize(g.stream);
    (void)cudaGetLastError();
    cudaError_t e2 = cudaDeviceSynchronize();
    cudaError_t e3 = cudaGetLastError();
    if (e2 != cudaSuccess || e3 != cudaSuccess)
        throw BenchError("the CUDA context is broken after " + who + ": " +
                         cuda_error_text(e2 != cudaSuccess ? e2 : e3) +
                         (e1 != cudaSuccess ? " (stream: " + cuda_error_text(e1) + ")" : ""));
}

/* Seconds since t, and resets t to now. */
double lap(std::chrono::steady_clock::time_point &t) {
    auto now = std::chrono::steady_clock::now();
    double s = std::chrono::duration<double>(now - t).count();
    t = now;
    return s;
}

struct JobMemory {
    DeviceMemory pristine, work, alt, ref, vals_work, vals_alt, offsets;
};

size_t job_common_bytes(const Regime &r, size_t n) {
    const size_t kb = (size_t)dtype_info(r.dtype).bytes;
    size_t bytes = 4 * n * kb + Verifier::bytes_needed(r, n);
    if (r.pairs) bytes += 2 * n * sizeof(uint32_t);
    if (r.seg_size) bytes += (n / r.seg_size + 1) * sizeof(int);
    return bytes;
}

size_t memory_margin(const Gpu &g) { return ((size_t)256 << 20) + g.prop.totalGlobalMem / 100; }

std::string gib(double bytes) { return strprintf("%.2f GiB", bytes / (1024.0 * 1024.0 * 1024.0)); }

struct Context {
    Options opt;
    Gpu gpu;
    RunInfo info;
    std::vector<Row> rows;
    bool warpsort_cuda_ok = false;
    std::string warpsort_cuda_why;
    warpsort_context_t *cpu_ctx = nullptr;
    std::string cpu_why;
    std::string json_path;
};

void emit(Context &c, Row row) {
    print_row(row);
    c.rows.push_back(std::move(row));
}

/* Times one device rival on the buffers of one (regime, n). */
/* Up to --host-check-max-log, the timed result is also checked on the host
 * (std::sort). Returns false, with row marked Failed, if that check fails. */
bool host_check_row(Context &c, HostCheck &hc, const void *keys, const uint32_t *vals, int log2n,
                    std::chrono::steady_clock::time_point &tp, Row &row) {
    if (log2n > c.opt.host_check_max_log) return true;
    c.info.t_rival_setup += lap(tp);
    std::string h = hc.check(keys, vals);
    c.info.t_host_check += lap(tp);
    if (!h.empty()) {
        row.status = RowStatus::Failed;
        row.note = "host check (GPU verifier passed!): " + h;
        return false;
    }
    row.host_checked = true;
    return true;
}

Row time_device_rival(Context &c, int id, Buffers &b, Verifier &ver, HostCheck &hc, int log2n) {
    Row row;
    row.regime = b.regime;
    row.n = b.n;
    row.rival = kRivalNames[id];
    row.warmup = c.opt.warmup;
    row.timer = "cuda-events";
    std::string why;
    std::unique_ptr<DeviceRival> rv;
    switch (id) {
    case R_WARPSORT: rv = make_warpsort_cuda(b.regime, c.gpu.device, &why); break;
    case R_CUB_RADIX: rv = make_cub_radix(b.regime, true, &why); break;
    case R_CUB_RADIX_I32: rv = make_cub_radix(b.regime, false, &why); break;
    case R_CUB_MERGE: rv = make_cub_merge(b.regime, &why); break;
    case R_THRUST: rv = make_thrust(b.regime, &why); break;
    case R_SEED_NAIVE: rv = make_seed_naive(b.regime, &why); break;
    case R_SEED_HYBRID: rv = make_seed_hybrid(b.regime, &why); break;
    case R_CUB_SEGMENTED: rv = make_cub_segmented(b.regime, &why); break;
    default: why = "not a device rival";
    }
    if (!rv) {
        row.status = RowStatus::NotApplicable;
        row.note = why;
        return row;
    }
    if (id == R_WARPSORT && !c.warpsort_cuda_ok) {
        row.status = RowStatus::Skipped;
        row.note = c.warpsort_cuda_why;
        return row;
    }
    if ((id == R_SEED_NAIVE || id == R_SEED_HYBRID) && log2n > c.opt.seed_max_log) {
        row.status = RowStatus::Skipped;
        row.note = strprintf("above --seed-max-log %d", c.opt.seed_max_log);
        return row;
    }
    std::string err;
    size_t temp = 0;
    if (!rv->temp_bytes(b, &temp, &err)) {
        row.status = RowStatus::Skipped;
        row.note = err;
        return row;
    }
    size_t free_b = 0, total_b = 0;
    WSB_CUDA(cudaMemGetInfo(&free_b, &total_b));
    if (temp + memory_margin(c.gpu) > free_b) {
        row.status = RowStatus::Skipped;
        row.note = "memory: needs " + gib((double)temp) + " of temp storage, " + gib((double)free_b) +
                   " free";
        return row;
    }
    auto tp = std::chrono::steady_clock::now();
    ver.forget();
    const bool slow = id == R_SEED_NAIVE;
    const int repeats = slow ? c.opt.slow_repeat : c.opt.repeat;
    try {
        if (!rv->prepare(b, &err)) {
            row.status = err.find("out of memory") != std::string::npos ? RowStatus::Skipped
                                                                          : RowStatus::Error;
            row.note = "prepare: " + err;
            ensure_context_alive(c.gpu, row.rival);
            return row;
        }
        for (int it = 0; it < c.opt.warmup + repeats; ++it) {
            /* Fresh copy of the same input, outside timing. */
            c.info.t_rival_setup += lap(tp);
            WSB_CUDA(cudaMemcpyAsync(b.keys_work, b.keys_pristine, b.n * b.key_bytes,
                                     cudaMemcpyDeviceToDevice, b.stream));
            if (b.regime.pairs) fill_iota(b.vals_work, b.n, b.stream);
            if (c.opt.flush_l2) flush_l2(c.gpu);
            rv->before_run(b);
            WSB_CUDA(cudaStreamSynchronize(b.stream));
            c.info.t_reset += lap(tp);
            WSB_CUDA(cudaEventRecord(c.gpu.start, b.stream));
            bool ok = rv->run(b, &err);
            WSB_CUDA(cudaEventRecord(c.gpu.stop, b.stream));
            cudaError_t sync = cudaEventSynchronize(c.gpu.stop);
            if (ok && sync != cudaSuccess) {
                ok = false;
                err = "while running: " + cuda_error_text(sync);
            }
            if (ok) ok = rv->finish(b, &err);
            if (ok) {
                cudaError_t late = cudaGetLastError();
                if (late != cudaSuccess) {
                    ok = false;
                    err = "CUDA error after the run: " + cuda_error_text(late);
                }
            }
            if (!ok) {
                row.status = RowStatus::Error;
                row.note = strprintf("%s %d: ", it < c.opt.warmup ? "warm-up" : "repeat",
                                     it < c.opt.warmup ? it + 1 : it - c.opt.warmup + 1) + err;
                ensure_context_alive(c.gpu, row.rival);
                return row;
            }
            float ms = 0;
            WSB_CUDA(cudaEventElapsedTime(&ms, c.gpu.start, c.gpu.stop));
            c.info.t_run += lap(tp);
            VerifyResult vr = ver.check_run(rv->out_keys(b), rv->out_vals(b));
            c.info.t_verify += lap(tp);
            if (!vr.ok()) {
                row.status = RowStatus::Failed;
                row.note = strprintf("%s %d: ", it < c.opt.warmup ? "warm-up" : "repeat",
                                     it < c.opt.warmup ? it + 1 : it - c.opt.warmup + 1) +
                           vr.describe();
                return row;
            }
            if (it >= c.opt.warmup) row.times_ms.push_back(ms);
        }
        if (!host_check_row(c, hc, rv->out_keys(b), rv->out_vals(b), log2n, tp, row)) return row;
    } catch (const std::bad_alloc &) {
        row.status = RowStatus::Skipped;
        row.note = "out of memory (allocation inside the rival)";
        ensure_context_alive(c.gpu, row.rival);
        return row;
    } catch (const BenchError &) {
        throw;
    } catch (const std::exception &e) {
        row.status = RowStatus::Error;
        row.note = std::string("exception: ") + e.what();
        ensure_context_alive(c.gpu, row.rival);
        return row;
    }
    row.status = RowStatus::Ok;
    row.model_passes = rv->model_passes(b);
    row.note = rv->note();
    fill_stats(row, c.info.copy_bw_bytes_per_s);
    return row;
}

/* Times warpsort's CPU backend on host copies of the same input. */
Row time_cpu_rival(Context &c, Buffers &b, Verifier &ver, HostCheck &hc, int log2n) {
    Row row;
    row.regime = b.regime;
    row.n = b.n;
    row.rival = kRivalNames[R_WARPSORT_CPU];
    row.warmup = c.opt.warmup;
    row.timer = "clock_gettime";
    if (b.regime.seg_size) {
        row.status = RowStatus::NotApplicable;
        row.note = "whole-array sort";
        return row;
    }
    if (!c.cpu_ctx) {
        row.status = RowStatus::Skipped;
        row.note = c.cpu_why;
        return row;
    }
    if (log2n > c.opt.cpu_max_log) {
        row.status = RowStatus::Skipped;
        row.note = strprintf("above --cpu-max-log %d", c.opt.cpu_max_log);
        return row;
    }
    const size_t kbytes = b.n * b.key_bytes;
    std::vector<unsigned char> pristine(kbytes), work(kbytes);
    std::vector<uint32_t> vals(b.regime.pairs ? b.n : 0);
    WSB_CUDA(cudaMemcpy(pristine.data(), b.keys_pristine, kbytes, cudaMemcpyDeviceToHost));
    const warpsort_dtype_t dt = dtype_info(b.regime.dtype).ws;
    auto tp = std::chrono::steady_clock::now();
    ver.forget();
    for (int it = 0; it < c.opt.warmup + c.opt.slow_repeat; ++it) {
        c.info.t_rival_setup += lap(tp);
        std::memcpy(work.data(), pristine.data(), kbytes);
        for (size_t i = 0; i < vals.size(); ++i) vals[i] = (uint32_t)i;
        c.info.t_reset += lap(tp);
        timespec t0, t1;
        const unsigned cpu_flags = WARPSORT_ASCENDING | (b.regime.stable ? WARPSORT_STABLE : 0u);
        clock_gettime(CLOCK_MONOTONIC, &t0);
        warpsort_status_t st =
            b.regime.pairs
                ? warpsort_sort_pairs(c.cpu_ctx, work.data(), vals.data(), b.n, dt, kValueBytes,
                                      cpu_flags)
                : warpsort_sort(c.cpu_ctx, work.data(), b.n, dt, cpu_flags);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (st != WARPSORT_OK) {
            row.status = RowStatus::Error;
            const char *detail = warpsort_last_error(c.cpu_ctx);
            row.note = std::string(b.regime.pairs ? "warpsort_sort_pairs: " : "warpsort_sort: ") +
                       warpsort_status_name(st) + (detail && *detail ? std::string(": ") + detail : "");
            return row;
        }
        double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-6;
        c.info.t_run += lap(tp);
        /* Verify with the same GPU verifier: upload the result. */
        WSB_CUDA(cudaMemcpy(b.keys_work, work.data(), kbytes, cudaMemcpyHostToDevice));
        if (b.regime.pairs)
            WSB_CUDA(cudaMemcpy(b.vals_work, vals.data(), b.n * sizeof(uint32_t),
                                cudaMemcpyHostToDevice));
        VerifyResult vr = ver.check_run(b.keys_work, b.vals_work);
        c.info.t_verify += lap(tp);
        if (!vr.ok()) {
            row.status = RowStatus::Failed;
            row.note = strprintf("%s %d: ", it < c.opt.warmup ? "warm-up" : "repeat",
                                 it < c.opt.warmup ? it + 1 : it - c.opt.warmup + 1) + vr.describe();
            return row;
        }
        if (it >= c.opt.warmup) row.times_ms.push_back(ms);
    }
    if (!host_check_row(c, hc, b.keys_work, b.vals_work, log2n, tp, row)) return row;
    row.status = RowStatus::Ok;
    row.note = "host memory, wall clock";
    fill_stats(row, c.info.copy_bw_bytes_per_s);
    return row;
}

void save_json(Context &c) {
    if (c.json_path.empty()) return;
    write_json(c.json_path, c.info, c.rows);
}

void run_job(Context &c, const Job &job) {
    const Regime &r = job.regime;
    const size_t n = (size_t)1 << job.log2n;
    const std::vector<int> rivals = rivals_for(c.opt, job);
    if (rivals.empty()) return;
    auto skip_all = [&](RowStatus st, const std::string &note) {
        for (int id : rivals) {
            Row row;
            row.regime = r;
            row.n = n;
            row.rival = kRivalNames[id];
            row.status = st;
            row.note = note;
            emit(c, row);
        }
    };
    if (r.seg_size > n) {
        skip_all(RowStatus::NotApplicable, "segment size above n");
        return;
    }
    size_t free_b = 0, total_b = 0;
    WSB_CUDA(cudaMemGetInfo(&free_b, &total_b));
    const size_t common = job_common_bytes(r, n);
    if (common + memory_margin(c.gpu) > free_b) {
        skip_all(RowStatus::Skipped, "memory: inputs, outputs and reference need " +
                                         gib((double)common) + ", " + gib((double)free_b) + " free");
        return;
    }
    JobMemory m;
    Buffers b;
    b.regime = r;
    b.n = n;
    b.key_bytes = (size_t)dtype_info(r.dtype).bytes;
    b.num_segments = r.seg_size ? n / r.seg_size : 1;
    b.stream = c.gpu.stream;
    const size_t kb = n * b.key_bytes;
    cudaError_t e = cudaSuccess;
    auto get = [&e](DeviceMemory &dm, size_t bytes) -> void * {
        if (e == cudaSuccess) e = dm.allocate(bytes);
        return dm.get();
    };
    b.keys_pristine = get(m.pristine, kb);
    b.keys_work = get(m.work, kb);
    b.keys_alt = get(m.alt, kb);
    b.keys_ref = get(m.ref, kb);
    if (r.pairs) {
        b.vals_work = (uint32_t *)get(m.vals_work, n * sizeof(uint32_t));
        b.vals_alt = (uint32_t *)get(m.vals_alt, n * sizeof(uint32_t));
    }
    if (r.seg_size) b.seg_offsets = (int *)get(m.offsets, (b.num_segments + 1) * sizeof(int));
    if (e != cudaSuccess) {
        skip_all(RowStatus::Skipped, "memory: " + cuda_error_text(e));
        return;
    }
    auto tp = std::chrono::steady_clock::now();
    generate_input(b, c.opt.seed);
    Verifier ver(b);
    ver.hash_input();
    VerifyResult rr = ver.check_reference();
    HostCheck hc(b);
    if (rr.ok() && r.seg_size == 0 && job.log2n <= c.opt.host_check_max_log)
        rr.host_problem = hc.check(b.keys_ref, nullptr);
    c.info.t_setup += lap(tp);
    if (!rr.ok()) {
        skip_all(RowStatus::Failed, "the reference (cub radix sort of the input) failed "
                                    "verification: " + rr.describe());
        return;
    }
    for (int id : rivals) {
        const double before = c.info.t_reset + c.info.t_run + c.info.t_verify +
                              c.info.t_host_check + c.info.t_rival_setup;
        tp = std::chrono::steady_clock::now();
        Row row = id == R_WARPSORT_CPU ? time_cpu_rival(c, b, ver, hc, job.log2n)
                                       : time_device_rival(c, id, b, ver, hc, job.log2n);
        /* Whatever the row's own accounting missed (teardown) is rival setup. */
        const double after = c.info.t_reset + c.info.t_run + c.info.t_verify +
                             c.info.t_host_check + c.info.t_rival_setup;
        c.info.t_rival_setup += std::max(0.0, lap(tp) - (after - before));
        emit(c, row);
    }
    c.info.full_checks += ver.full_checks;
    c.info.equality_checks += ver.equality_checks;
}

int bench_main(int argc, char **argv) {
    const auto t_start = std::chrono::steady_clock::now();
    Context c;
    c.opt = parse_args(argc, argv);
    std::vector<Job> plan = make_plan(c.opt);
    for (Job &j : plan) j.regime.stable = c.opt.stable;
    if (plan.empty()) usage_error("the selection is empty (no regime and size left to run)");

    for (int i = 0; i < argc; ++i) c.info.command_line += (i ? " " : "") + shell_quote(argv[i]);
    if (c.opt.list_only) {
        for (const Job &j : plan) {
            std::string rv;
            for (int id : rivals_for(c.opt, j)) rv += std::string(rv.empty() ? "" : ",") + kRivalNames[id];
            std::printf("%-24s 2^%-3d %s\n", regime_label(j.regime).c_str(), j.log2n, rv.c_str());
        }
        std::printf("%zu (regime, n) jobs\n", plan.size());
        return 0;
    }

    /*--- device ---*/
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        std::fprintf(stderr, "warpsort_bench: no usable CUDA device (%s)\n",
                     e != cudaSuccess ? cuda_error_text(e).c_str() : "device count is 0");
        return 3;
    }
    if (c.opt.device >= count) {
        std::fprintf(stderr, "warpsort_bench: --device %d but only %d device(s)\n", c.opt.device, count);
        return 3;
    }
    Gpu &g = c.gpu;
    g.device = c.opt.device;
    WSB_CUDA(cudaSetDevice(g.device));
    WSB_CUDA(cudaGetDeviceProperties(&g.prop, g.device));
    WSB_CUDA(cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking));
    WSB_CUDA(cudaEventCreate(&g.start));
    WSB_CUDA(cudaEventCreate(&g.stop));
    g.flush_bytes = std::max<size_t>((size_t)2 * (size_t)g.prop.l2CacheSize, (size_t)64 << 20);
    WSB_CUDA(g.flush_buf.allocate(g.flush_bytes));
    WSB_CUDA(g.flush_sink.allocate(sizeof(unsigned)));
    WSB_CUDA(cudaMemset(g.flush_buf.get(), 0x5A, g.flush_bytes));

    RunInfo &info = c.info;
    info.date_utc = now_utc("%Y-%m-%dT%H:%M:%SZ");
    info.gpu_name = g.prop.name;
    info.sm_count = g.prop.multiProcessorCount;
    info.cc_major = g.prop.major;
    info.cc_minor = g.prop.minor;
    info.gpu_memory_bytes = g.prop.totalGlobalMem;
    info.l2_bytes = g.prop.l2CacheSize;
    info.driver_version = nvidia_driver_version();
    WSB_CUDA(cudaDriverGetVersion(&info.cuda_driver_api));
    WSB_CUDA(cudaRuntimeGetVersion(&info.cuda_runtime));
    info.warpsort_version = warpsort_version();
    info.cccl_version = strprintf("%d.%d.%d", CCCL_VERSION / 1000000, (CCCL_VERSION / 1000) % 1000,
                                  CCCL_VERSION % 1000);
    info.nvcc_version = strprintf("%d.%d.%d", __CUDACC_VER_MAJOR__, __CUDACC_VER_MINOR__,
                                  __CUDACC_VER_BUILD__);
    info.cuda_arch = WSB_CUDA_ARCHS;
    info.git_commit = WSB_GIT_COMMIT;
    char host[256] = {0};
    if (gethostname(host, sizeof host - 1) == 0) info.hostname = host;
    info.repeat = c.opt.repeat;
    info.slow_repeat = c.opt.slow_repeat;
    info.warmup = c.opt.warmup;
    info.seed = c.opt.seed;
    info.flush_l2 = c.opt.flush_l2;
    info.host_check_max_log = c.opt.host_check_max_log;
    info.cpu_max_log = c.opt.cpu_max_log;
    info.seed_max_log = c.opt.seed_max_log;
    info.aborted = "incomplete: the run was still going when this file was written";

    std::printf("warpsort_bench: %s (%d SMs, cc %d.%d, %s), driver %s, CUDA runtime %d.%d, "
                "warpsort %s\n",
                info.gpu_name.c_str(), info.sm_count, info.cc_major, info.cc_minor,
                gib((double)info.gpu_memory_bytes).c_str(), info.driver_version.c_str(),
                info.cuda_runtime / 1000, (info.cuda_runtime % 1000) / 10,
                info.warpsort_version.c_str());
    std::printf("command: %s\n", info.command_line.c_str());

    /*--- the verifier must catch planted faults before it is trusted ---*/
    std::string st = verifier_self_test(g.stream);
    if (!st.empty()) {
        std::fprintf(stderr, "warpsort_bench: verifier self-test FAILED: %s\n", st.c_str());
        return 3;
    }
    std::printf("verifier self-test: ok (planted faults caught on GPU and host)\n");

    info.copy_bw_bytes_per_s = measure_copy_bw(g, &info.copy_bw_buffer_bytes);
    std::printf("copy bandwidth (D2D, read+write, median of 20 x %s): %.1f GB/s\n",
                gib((double)info.copy_bw_buffer_bytes).c_str(), info.copy_bw_bytes_per_s / 1e9);

    bool want_ws = c.opt.rivals[R_WARPSORT], want_cpu = c.opt.rivals[R_WARPSORT_CPU];
    if (want_ws) {
        c.warpsort_cuda_ok = warpsort_cuda_probe(g.device, g.stream, &c.warpsort_cuda_why);
        (void)cudaGetLastError();
        if (!c.warpsort_cuda_ok) {
            info.warpsort_cuda_note = c.warpsort_cuda_why;
            std::printf("NOTE: %s; warpsort rows are skipped\n", c.warpsort_cuda_why.c_str());
        }
    }
    if (want_cpu) {
        warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
        cfg.backend = WARPSORT_BACKEND_CPU;
        warpsort_status_t s = warpsort_create(&c.cpu_ctx, &cfg);
        if (s != WARPSORT_OK) {
            c.cpu_ctx = nullptr;
            c.cpu_why = std::string("warpsort CPU backend unavailable: ") + warpsort_status_name(s);
            std::printf("NOTE: %s; warpsort-cpu rows are skipped\n", c.cpu_why.c_str());
        }
    }

    if (!c.opt.no_json) {
        c.json_path = c.opt.json_path.empty() ? default_json_path() : c.opt.json_path;
        size_t slash = c.json_path.rfind('/');
        if (slash != std::string::npos && !make_dirs(c.json_path.substr(0, slash))) {
            std::fprintf(stderr, "warpsort_bench: cannot create the folder of %s: %s\n",
                         c.json_path.c_str(), std::strerror(errno));
            return 3;
        }
        save_json(c); /* fail early if it cannot be written */
    }

    std::printf("\n");
    print_table_header();
    int exit_code = 0;
    try {
        for (const Job &job : plan) {
            run_job(c, job);
            save_json(c); /* keep what was measured if the run is cut short */
        }
        info.aborted.clear();
    } catch (const BenchError &err) {
        info.aborted = err.what();
        std::fprintf(stderr, "\nwarpsort_bench: stopping: %s\n", err.what());
        exit_code = 3;
    }
    warpsort_destroy(c.cpu_ctx);

    if (exit_code == 0) {
        size_t end_bytes = 0;
        info.copy_bw_end_bytes_per_s = measure_copy_bw(g, &end_bytes);
    }
    info.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();

    /*--- summary ---*/
    int counts[5] = {0, 0, 0, 0, 0};
    for (const Row &r : c.rows) counts[(int)r.status]++;
    std::printf("\n%zu rows: %d ok, %d FAILED, %d error, %d skipped, %d n/a; %.1f s\n", c.rows.size(),
                counts[0], counts[1], counts[2], counts[3], counts[4], info.wall_s);
    std::printf("wall time: rival runs %.1f s, verification %.1f s, input resets %.1f s, setup "
                "and references %.1f s, host checks %.1f s, rival setup/teardown %.1f s\n",
                info.t_run, info.t_verify, info.t_reset, info.t_setup, info.t_host_check,
                info.t_rival_setup);
    std::printf("verified runs: %llu fully checked, %llu identical to a verified output\n",
                (unsigned long long)info.full_checks, (unsigned long long)info.equality_checks);
    if (info.copy_bw_end_bytes_per_s > 0)
        std::printf("copy bandwidth at the end: %.1f GB/s (start %.1f)\n",
                    info.copy_bw_end_bytes_per_s / 1e9, info.copy_bw_bytes_per_s / 1e9);
    for (const Row &r : c.rows)
        if (r.status == RowStatus::Failed || r.status == RowStatus::Error)
            std::printf("  %s: %s 2^%d %s: %s\n", row_status_name(r.status),
                        regime_label(r.regime).c_str(), (int)std::log2((double)r.n), r.rival.c_str(),
                        r.note.c_str());
    if (counts[1] + counts[2] > 0 && exit_code == 0) exit_code = 1;
    if (!c.json_path.empty()) {
        try {
            save_json(c);
            std::printf("results: %s\n", c.json_path.c_str());
        } catch (const BenchError &err) {
            std::fprintf(stderr, "warpsort_bench: %s\n", err.what());
            if (exit_code == 0) exit_code = 3;
        }
    }
    return exit_code;
}

} // namespace
} // namespace wsb

int main(int argc, char **argv) {
    try {
        return wsb::bench_main(argc, argv);
    } catch (const wsb::BenchError &e) {
        std::fprintf(stderr, "warpsort_bench: %s\n", e.what());
        return 3;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "warpsort_bench: unexpected exception: %s\n", e.what());
        return 3;
    }
}
