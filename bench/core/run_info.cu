/*
 * run_info.cu - environment facts for the results file, and the file itself.
 */
#include "core/run_info.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>

#include <cub/version.cuh>

#include "warpsort.h"

#ifndef WSB_GIT_COMMIT
#define WSB_GIT_COMMIT "unknown"
#endif
#ifndef WSB_CUDA_ARCHS
#define WSB_CUDA_ARCHS "unknown"
#endif

namespace wsb {
namespace {

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
        if (!(std::isalnum((unsigned char)c) || std::strchr("-_./=,:+@%^", c))) plain = false;
    if (plain) return s;
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

/* The first token of line that looks like a version ("580.159.04"), or "". */
std::string version_token(const std::string &line) {
    size_t i = 0;
    while (i < line.size()) {
        size_t j = line.find_first_of(" \t", i);
        if (j == std::string::npos) j = line.size();
        std::string tok = line.substr(i, j - i);
        if (!tok.empty() && std::isdigit((unsigned char)tok[0]) &&
            tok.find('.') != std::string::npos &&
            tok.find_first_not_of("0123456789.") == std::string::npos)
            return tok;
        i = j + 1;
    }
    return "";
}

/* The NVIDIA driver version: from /proc, else from NVML, else "unknown". */
std::string nvidia_driver_version() {
    std::ifstream f("/proc/driver/nvidia/version");
    std::string line;
    if (f && std::getline(f, line) && !version_token(line).empty()) return version_token(line);
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

std::string cuda_version_text(int v) { return strprintf("%d.%d", v / 1000, (v % 1000) / 10); }

} // namespace

static std::string g_command_line;

void record_command_line(int argc, char **argv) {
    g_command_line.clear();
    for (int i = 0; i < argc; ++i) g_command_line += (i ? " " : "") + shell_quote(argv[i]);
}

void collect_run_info(RunInfo &info, const Gpu &g, const std::string &mode) {
    info.mode = mode;
    info.command_line = g_command_line;
    info.date_utc = now_utc("%Y-%m-%dT%H:%M:%SZ");
    info.gpu_name = g.prop.name;
    info.gpu.str("name", g.prop.name)
        .integer("sm_count", g.prop.multiProcessorCount)
        .str("compute_capability", strprintf("%d.%d", g.prop.major, g.prop.minor))
        .integer("memory_bytes", (long long)g.prop.totalGlobalMem)
        .integer("l2_bytes", g.prop.l2CacheSize);
    int driver_api = 0, runtime = 0;
    WSB_CUDA(cudaDriverGetVersion(&driver_api));
    WSB_CUDA(cudaRuntimeGetVersion(&runtime));
    info.versions.str("nvidia_driver_version", nvidia_driver_version())
        .str("cuda_driver_api_version", cuda_version_text(driver_api))
        .str("cuda_runtime_version", cuda_version_text(runtime))
        .str("nvcc_version", strprintf("%d.%d.%d", __CUDACC_VER_MAJOR__, __CUDACC_VER_MINOR__,
                                       __CUDACC_VER_BUILD__))
        .str("cccl_version", strprintf("%d.%d.%d", CCCL_VERSION / 1000000,
                                       (CCCL_VERSION / 1000) % 1000, CCCL_VERSION % 1000))
        .str("cuda_architectures", WSB_CUDA_ARCHS)
        .str("warpsort_version", warpsort_version())
        .str("git_commit_at_configure", WSB_GIT_COMMIT);
    char host[256] = {0};
    if (gethostname(host, sizeof host - 1) == 0) info.hostname = host;
}

void print_run_header(const RunInfo &info) {
    std::printf("warpsort_bench %s: %s, %s\n", info.mode.c_str(), info.gpu_name.c_str(),
                info.versions.one_line().c_str());
    std::printf("command: %s\n", info.command_line.c_str());
}

std::string default_json_path(const std::string &mode) {
    return "bench-" + mode + "-" + now_utc("%Y%m%d-%H%M%S") + ".json";
}

void start_results(const std::string &path, RunInfo &info) {
    if (!make_parent_dirs(path))
        throw BenchError("cannot create the folder of " + path + ": " + std::strerror(errno));
    info.aborted = "incomplete: the run was still going when this file was written";
    write_results(path, info, std::vector<Row>());
}

void write_results(const std::string &path, const RunInfo &info, const std::vector<Row> &rows) {
    JsonFields top;
    top.str("schema", "warpsort-bench/2")
        .str("mode", info.mode)
        .str("date_utc", info.date_utc)
        .str("command", info.command_line)
        .str("hostname", info.hostname)
        .raw("gpu", info.gpu.object(2))
        .append(info.versions)
        .raw("settings", info.settings.object(2))
        .append(info.extra)
        .str("aborted", info.aborted)
        .num("wall_s", info.wall_s);
    std::string rows_text = "[";
    for (size_t i = 0; i < rows.size(); ++i)
        rows_text += (i ? ",\n    " : "\n    ") + row_json(rows[i]);
    rows_text += rows.empty() ? "]" : "\n  ]";
    top.raw("rows", rows_text);
    write_file_atomic(path, top.object(0) + "\n");
}

double record_copy_bandwidth(Gpu &g, RunInfo &info) {
    size_t bw_bytes = 0;
    const double bw = measure_copy_bw(g, &bw_bytes);
    std::printf("copy bandwidth (D2D, read+write, median of 20 x %s): %.1f GB/s\n",
                gib((double)bw_bytes).c_str(), bw / 1e9);
    JsonFields f;
    f.str("method", "cudaMemcpyAsync device-to-device; bytes read + written / time; median")
        .integer("buffer_bytes", (long long)bw_bytes)
        .num("bytes_per_s", bw)
        .num("gb_per_s", bw / 1e9);
    info.extra.raw("copy_bandwidth", f.object(2));
    return bw;
}

} // namespace wsb
