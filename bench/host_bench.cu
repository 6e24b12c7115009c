/*
 * host_bench.cu - host-to-host sorting (issue 11): warpsort_sort on host
 * arrays (pageable and pinned) against CUB's copy-sort-copy on the same
 * array, the CPU backend, and the bus limit n x bytes / H2D + n x bytes /
 * D2H measured in the same run; plus out-of-core rows under a device budget.
 * Wall clock, median of --repeat runs, the input restored (untimed) before
 * each run.
 *
 *   warpsort_host_bench [--sizes 10M,100M,1000M] [--repeat 5] [--json FILE]
 *                       [--ooc-n N] [--ooc-budget BYTES] [--no-cpu]
 *   warpsort_host_bench --timeline N [--trace FILE] [--ooc-n N] [--ooc-budget BYTES]
 *                       (one pinned and one pageable sort of N u32 keys, warmed up,
 *                       then two out-of-core sorts of --ooc-n keys if given; traced
 *                       by the library into FILE, default host-timeline.csv)
 *
 * Sizes take a K/M/G suffix (powers of ten) or 2^k. Rows that do not fit the
 * host or device are skipped with a note. The timeline picture is the
 * library's own trace (WARPSORT_TRACE) drawn by bench/plot.py --timeline.
 */
#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cub/device/device_radix_sort.cuh>

#include "warpsort.h"

namespace {

#define HB_CUDA(call)                                                                   \
    do {                                                                                \
        cudaError_t e_ = (call);                                                        \
        if (e_ != cudaSuccess) {                                                        \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,               \
                    cudaGetErrorString(e_));                                            \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

double now_ms() {
    using namespace std::chrono;
    return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}
double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}
/* "runs A-B ms": the spread behind a median (pageable rows swing with the
 * host's memory system, and a median alone hides it). */
std::string spread(const std::vector<double> &v) {
    if (v.empty()) return "";
    char b[64];
    snprintf(b, sizeof b, "runs %.2f-%.2f ms", *std::min_element(v.begin(), v.end()),
             *std::max_element(v.begin(), v.end()));
    return b;
}
size_t parse_size(const char *s) {
    if (s[0] == '2' && s[1] == '^') return (size_t)1 << atoi(s + 2);
    char *end = nullptr;
    double v = strtod(s, &end);
    switch (*end) {
    case 'K': v *= 1e3; break;
    case 'M': v *= 1e6; break;
    case 'G': v *= 1e9; break;
    default: break;
    }
    return (size_t)v;
}

struct Row {
    std::string kind, memory, rival;
    size_t n;
    double ms, bus_ms;
    std::string note;
};
std::vector<Row> g_rows;

void add_row(const std::string &kind, const std::string &memory, const std::string &rival,
             size_t n, double ms, double bus_ms, const std::string &note = "") {
    g_rows.push_back({kind, memory, rival, n, ms, bus_ms, note});
    printf("%-10s %-9s %-22s n=%-11zu %10.2f ms %9.0f MEPS  %5.1f %% of bus %s\n", kind.c_str(),
           memory.c_str(), rival.c_str(), n, ms, ms > 0 ? n / ms / 1e3 : 0.0,
           ms > 0 ? 100 * bus_ms / ms : 0.0, note.c_str());
    fflush(stdout);
}

struct Kind {
    const char *name;
    warpsort_dtype_t dtype;
    size_t kb, vb;
};

/* Host buffer of either memory kind. */
void *host_alloc(size_t bytes, bool pinned) {
    void *p = nullptr;
    if (pinned) {
        if (cudaMallocHost(&p, bytes) != cudaSuccess) {
            (void)cudaGetLastError();
            return nullptr;
        }
        return p;
    }
    return malloc(bytes);
}
void host_free(void *p, bool pinned) {
    if (!p) return;
    if (pinned)
        (void)cudaFreeHost(p);
    else
        free(p);
}

void fill(void *p, size_t bytes, uint64_t seed) {
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    uint64_t *q = (uint64_t *)p;
    for (size_t i = 0; i < bytes / 8; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        q[i] = x;
    }
}

/* H2D + D2H of `bytes` between host buffer h and the device: the bus limit. */
double bus_ms(void *h, void *d, size_t bytes, int repeat) {
    std::vector<double> t;
    for (int r = 0; r < repeat; r++) {
        double t0 = now_ms();
        HB_CUDA(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice));
        double t1 = now_ms();
        HB_CUDA(cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost));
        t.push_back(t1 - t0 + now_ms() - t1);
    }
    return median(t);
}

template <class K, class V>
double cub_copy_sort_copy(void *hk, void *hv, size_t n, void *dk, void *dv, void *dk2, void *dv2,
                          void *temp, size_t temp_bytes) {
    double t0 = now_ms();
    HB_CUDA(cudaMemcpy(dk, hk, n * sizeof(K), cudaMemcpyHostToDevice));
    if (hv) HB_CUDA(cudaMemcpy(dv, hv, n * sizeof(V), cudaMemcpyHostToDevice));
    cub::DoubleBuffer<K> keys((K *)dk, (K *)dk2);
    cub::DoubleBuffer<V> vals((V *)dv, (V *)dv2);
    size_t bytes = temp_bytes;
    if (hv)
        HB_CUDA(cub::DeviceRadixSort::SortPairs(temp, bytes, keys, vals, (int)n));
    else
        HB_CUDA(cub::DeviceRadixSort::SortKeys(temp, bytes, keys, (int)n));
    HB_CUDA(cudaMemcpy(hk, keys.Current(), n * sizeof(K), cudaMemcpyDeviceToHost));
    if (hv) HB_CUDA(cudaMemcpy(hv, vals.Current(), n * sizeof(V), cudaMemcpyDeviceToHost));
    return now_ms() - t0;
}
template <class K, class V>
size_t cub_temp_bytes(size_t n, bool pairs) {
    size_t bytes = 0;
    cub::DoubleBuffer<K> keys(nullptr, nullptr);
    cub::DoubleBuffer<V> vals(nullptr, nullptr);
    if (pairs)
        HB_CUDA(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys, vals, (int)n));
    else
        HB_CUDA(cub::DeviceRadixSort::SortKeys(nullptr, bytes, keys, (int)n));
    return bytes;
}

double warpsort_host(warpsort_context_t *ctx, const Kind &k, void *hk, void *hv, size_t n) {
    double t0 = now_ms();
    warpsort_status_t st = hv ? warpsort_sort_pairs(ctx, hk, hv, n, k.dtype, k.vb, 0)
                              : warpsort_sort(ctx, hk, n, k.dtype, 0);
    double t = now_ms() - t0;
    if (st != WARPSORT_OK) {
        fprintf(stderr, "warpsort: %s: %s\n", warpsort_status_name(st), warpsort_last_error(ctx));
        return -1;
    }
    return t;
}

/* What warpsort did with host arrays before the pipeline (issue 11's
 * "today"): one synchronous copy in, the device sort, one copy out. The
 * baseline the small host arrays must not fall behind. */
double warpsort_copy_sort_copy(warpsort_context_t *ctx, const Kind &k, void *hk, void *hv, size_t n,
                               void *dk, void *dv) {
    double t0 = now_ms();
    HB_CUDA(cudaMemcpy(dk, hk, n * k.kb, cudaMemcpyHostToDevice));
    if (hv) HB_CUDA(cudaMemcpy(dv, hv, n * k.vb, cudaMemcpyHostToDevice));
    warpsort_status_t st = hv ? warpsort_sort_pairs(ctx, dk, dv, n, k.dtype, k.vb, 0)
                              : warpsort_sort(ctx, dk, n, k.dtype, 0);
    if (st == WARPSORT_OK) st = warpsort_synchronize(ctx);
    if (st != WARPSORT_OK) {
        fprintf(stderr, "warpsort: %s: %s\n", warpsort_status_name(st), warpsort_last_error(ctx));
        return -1;
    }
    HB_CUDA(cudaMemcpy(hk, dk, n * k.kb, cudaMemcpyDeviceToHost));
    if (hv) HB_CUDA(cudaMemcpy(hv, dv, n * k.vb, cudaMemcpyDeviceToHost));
    return now_ms() - t0;
}

bool sorted_u(const void *p, size_t n, size_t kb) {
    for (size_t i = 1; i < n; i++) {
        if (kb == 4 ? ((const uint32_t *)p)[i - 1] > ((const uint32_t *)p)[i]
                    : ((const uint64_t *)p)[i - 1] > ((const uint64_t *)p)[i])
            return false;
    }
    return true;
}

void run_size(size_t n, int repeat, bool with_cpu, warpsort_context_t *gpu,
              warpsort_context_t *cpu) {
    static const Kind kinds[] = {{"u32-keys", WARPSORT_U32, 4, 0},
                                 {"u32-pairs", WARPSORT_U32, 4, 4},
                                 {"u64-keys", WARPSORT_U64, 8, 0}};
    size_t free_b = 0, total_b = 0;
    HB_CUDA(cudaMemGetInfo(&free_b, &total_b));
    const double host_bytes = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGE_SIZE);
    for (const Kind &k : kinds) {
        const size_t ib = k.kb + k.vb, bytes = n * ib;
        const bool cub_fits = n <= (size_t)INT32_MAX && 2.2 * (double)bytes < (double)free_b;
        if (3.0 * (double)bytes > 0.8 * host_bytes) {
            printf("%s n=%zu: skipped (host memory)\n", k.name, n);
            continue;
        }
        for (int pinned = 0; pinned < 2; pinned++) {
            const char *mem = pinned ? "pinned" : "pageable";
            void *hk = host_alloc(n * k.kb, pinned), *hv = k.vb ? host_alloc(n * k.vb, pinned) : nullptr;
            void *ok = malloc(n * k.kb), *ov = k.vb ? malloc(n * k.vb) : nullptr;
            if (!hk || (k.vb && !hv) || !ok || (k.vb && !ov)) {
                printf("%s %s n=%zu: skipped (allocation)\n", k.name, mem, n);
                host_free(hk, pinned);
                host_free(hv, pinned);
                free(ok);
                free(ov);
                continue;
            }
            fill(ok, n * k.kb, n + k.kb);
            if (ov) fill(ov, n * k.vb, 7);
            memcpy(hk, ok, n * k.kb); /* touch every page before timing copies */
            if (hv) memcpy(hv, ov, n * k.vb);
            double bus = 0;
            void *dk = nullptr, *dv = nullptr, *dk2 = nullptr, *dv2 = nullptr, *temp = nullptr;
            size_t temp_bytes = 0;
            if (cub_fits) {
                HB_CUDA(cudaMalloc(&dk, n * k.kb));
                HB_CUDA(cudaMalloc(&dk2, n * k.kb));
                if (k.vb) {
                    HB_CUDA(cudaMalloc(&dv, n * k.vb));
                    HB_CUDA(cudaMalloc(&dv2, n * k.vb));
                }
                temp_bytes = k.kb == 4 ? cub_temp_bytes<uint32_t, uint32_t>(n, k.vb != 0)
                                       : cub_temp_bytes<uint64_t, uint64_t>(n, k.vb != 0);
                HB_CUDA(cudaMalloc(&temp, temp_bytes));
                memcpy(hk, ok, n * k.kb);
                bus = bus_ms(hk, dk, n * k.kb, repeat);
                if (k.vb) bus += bus_ms(hv, dv, n * k.vb, repeat);
            } else {
                /* bus limit in pieces that fit */
                const size_t piece = std::min(bytes, free_b / 4);
                void *d = nullptr;
                HB_CUDA(cudaMalloc(&d, piece));
                bus = bus_ms(hk, d, piece, repeat) * (double)bytes / (double)piece;
                HB_CUDA(cudaFree(d));
            }
            std::vector<double> tw, tc, tcpu, tws;
            for (int r = 0; r <= repeat; r++) { /* r = 0 warms up (ring, workspace) */
                memcpy(hk, ok, n * k.kb);
                if (hv) memcpy(hv, ov, n * k.vb);
                double t = warpsort_host(gpu, k, hk, hv, n);
                if (t < 0) break;
                if (r == 0 && !sorted_u(hk, n, k.kb)) fprintf(stderr, "warpsort: NOT SORTED\n");
                if (r) tw.push_back(t);
                if (cub_fits) {
                    memcpy(hk, ok, n * k.kb);
                    if (hv) memcpy(hv, ov, n * k.vb);
                    t = k.kb == 4 ? cub_copy_sort_copy<uint32_t, uint32_t>(hk, hv, n, dk, dv, dk2, dv2,
                                                                          temp, temp_bytes)
                                  : cub_copy_sort_copy<uint64_t, uint64_t>(hk, hv, n, dk, dv, dk2, dv2,
                                                                          temp, temp_bytes);
                    if (r) tc.push_back(t);
                    memcpy(hk, ok, n * k.kb);
                    if (hv) memcpy(hv, ov, n * k.vb);
                    t = warpsort_copy_sort_copy(gpu, k, hk, hv, n, dk, dv);
                    if (r && t > 0) tws.push_back(t);
                }
                if (with_cpu && !pinned && r < 2 && n <= 200000000) {
                    memcpy(hk, ok, n * k.kb);
                    if (hv) memcpy(hv, ov, n * k.vb);
                    t = warpsort_host(cpu, k, hk, hv, n);
                    if (r && t > 0) tcpu.push_back(t);
                }
            }
            add_row(k.name, mem, "warpsort", n, median(tw), bus, spread(tw));
            if (!tc.empty())
                add_row(k.name, mem, "cub-copy-radix-copy", n, median(tc), bus, spread(tc));
            if (!tws.empty())
                add_row(k.name, mem, "warpsort-copy-sort-copy", n, median(tws), bus,
                        "device sort between two synchronous copies: the pre-pipeline way");
            if (!tcpu.empty()) add_row(k.name, mem, "warpsort-cpu", n, median(tcpu), bus);
            add_row(k.name, mem, "bus-limit", n, bus, bus);
            if (!tc.empty() && !tw.empty())
                printf("  -> warpsort / CUB = %.2fx, warpsort at %.1f %% of the bus limit\n",
                       median(tc) / median(tw), 100 * bus / median(tw));
            for (void *p : {dk, dv, dk2, dv2, temp})
                if (p) HB_CUDA(cudaFree(p));
            host_free(hk, pinned);
            host_free(hv, pinned);
            free(ok);
            free(ov);
        }
    }
}

void run_out_of_core(size_t n, size_t budget, int repeat, bool with_cpu, warpsort_context_t *cpu) {
    const double host_bytes = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGE_SIZE);
    if (4.0 * (double)n * 4 > 0.85 * host_bytes) {
        printf("out of core n=%zu: skipped (needs 4 x %zu bytes of host memory)\n", n, n * 4);
        return;
    }
    const Kind k = {"u32-keys", WARPSORT_U32, 4, 0};
    uint32_t *h = (uint32_t *)malloc(n * 4), *o = (uint32_t *)malloc(n * 4);
    if (!h || !o) {
        printf("out of core n=%zu: skipped (allocation)\n", n);
        free(h);
        free(o);
        return;
    }
    fill(o, n * 4, 99);
    double bus = 0;
    {
        const size_t piece = (size_t)1 << 30;
        void *d = nullptr;
        HB_CUDA(cudaMalloc(&d, piece));
        bus = bus_ms(o, d, piece, repeat) * (double)(n * 4) / (double)piece;
        HB_CUDA(cudaFree(d));
    }
    for (int with_budget = 1; with_budget >= 0; with_budget--) {
        warpsort_context_t *ctx = nullptr;
        warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
        cfg.backend = WARPSORT_BACKEND_CUDA;
        cfg.device_budget_bytes = with_budget ? budget : 0;
        if (warpsort_create(&ctx, &cfg) != WARPSORT_OK) exit(1);
        /* The first call also pays for the first touch of its host scratch
         * (n x 4 bytes and a few blocks): on a VM that has never used that
         * memory it is the slowest part (bench/NOTES.md), so it gets its own
         * row; the median is over the calls after it. */
        std::vector<double> t;
        double first = -1;
        const int reps = std::max(3, repeat / 2 + 1);
        for (int r = 0; r < (with_budget ? reps : std::max(1, repeat / 2)); r++) {
            memcpy(h, o, n * 4);
            double ms = warpsort_host(ctx, k, h, nullptr, n);
            if (ms < 0) break;
            if (r == 0 && !sorted_u(h, n, 4)) fprintf(stderr, "out of core: NOT SORTED\n");
            if (with_budget && r == 0)
                first = ms;
            else
                t.push_back(ms);
        }
        char note[64];
        snprintf(note, sizeof note, "budget %zu MiB", with_budget ? budget >> 20 : 0);
        if (first > 0)
            add_row("u32-keys", "pageable", "warpsort-out-of-core-first", n, first, bus,
                    std::string(note) + ", first call in the process: faults its host scratch in");
        if (!t.empty())
            add_row("u32-keys", "pageable", with_budget ? "warpsort-out-of-core" : "warpsort-no-budget",
                    n, median(t), bus, with_budget ? note : "free device memory");
        warpsort_destroy(ctx);
    }
    if (with_cpu) {
        memcpy(h, o, n * 4);
        double ms = warpsort_host(cpu, k, h, nullptr, n);
        if (ms > 0) add_row("u32-keys", "pageable", "warpsort-cpu", n, ms, bus);
    }
    add_row("u32-keys", "pageable", "bus-limit", n, bus, bus);
    free(h);
    free(o);
}

/* Warm-up, then one pinned and one pageable sort traced by the library
 * (WARPSORT_TRACE=trace: events on every stream, host clock for the staging
 * threads), drawn by bench/plot.py --timeline. With ooc_n also two
 * out-of-core sorts of ooc_n pageable keys under ooc_budget. */
int timeline(size_t n, const char *trace, size_t ooc_n, size_t ooc_budget) {
    warpsort_context_t *ctx = nullptr;
    warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
    cfg.backend = WARPSORT_BACKEND_CUDA;
    if (warpsort_create(&ctx, &cfg) != WARPSORT_OK) return 1;
    const Kind k = {"u32-keys", WARPSORT_U32, 4, 0};
    void *pinned = host_alloc(n * 4, true), *pageable = host_alloc(n * 4, false);
    if (!pinned || !pageable) return 1;
    remove(trace); /* the library appends */
    for (int r = 0; r < 2; r++) {
        if (r && setenv("WARPSORT_TRACE", trace, 1) != 0) return 1;
        fill(pinned, n * 4, 1);
        fill(pageable, n * 4, 2);
        const double a = warpsort_host(ctx, k, pinned, nullptr, n);
        const double b = warpsort_host(ctx, k, pageable, nullptr, n);
        if (r) printf("timeline: n=%zu call 0 pinned %.2f ms, call 1 pageable %.2f ms\n", n, a, b);
    }
    host_free(pinned, true);
    host_free(pageable, false);
    if (ooc_n) {
        warpsort_context_t *small = nullptr;
        cfg.device_budget_bytes = ooc_budget;
        if (warpsort_create(&small, &cfg) != WARPSORT_OK) return 1;
        void *big = malloc(ooc_n * 4);
        if (!big) return 1;
        /* Twice: the first call also faults its host scratch in. */
        for (int r = 0; r < 2; r++) {
            fill(big, ooc_n * 4, 3);
            const double c = warpsort_host(small, k, big, nullptr, ooc_n);
            printf("timeline: call %d out of core, n=%zu, budget %zu bytes: %.2f ms%s\n", 2 + r,
                   ooc_n, ooc_budget, c, sorted_u(big, ooc_n, 4) ? "" : " NOT SORTED");
        }
        free(big);
        warpsort_destroy(small);
    }
    unsetenv("WARPSORT_TRACE");
    printf("trace: %s\n", trace);
    warpsort_destroy(ctx);
    return 0;
}

} // namespace

int main(int argc, char **argv) {
    std::vector<size_t> sizes = {10000000, 100000000};
    int repeat = 5;
    const char *json = nullptr;
    size_t ooc_n = 0, ooc_budget = (size_t)4 << 30;
    bool with_cpu = true;
    size_t timeline_n = 0;
    const char *trace = "host-timeline.csv";
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto next = [&]() -> const char * {
            if (i + 1 >= argc) {
                fprintf(stderr, "%s needs a value\n", a.c_str());
                exit(2);
            }
            return argv[++i];
        };
        if (a == "--sizes") {
            sizes.clear();
            std::string s = next();
            for (size_t p = 0; p <= s.size();) {
                size_t q = s.find(',', p);
                if (q == std::string::npos) q = s.size();
                sizes.push_back(parse_size(s.substr(p, q - p).c_str()));
                p = q + 1;
            }
        } else if (a == "--repeat") {
            repeat = atoi(next());
        } else if (a == "--json") {
            json = next();
        } else if (a == "--ooc-n") {
            ooc_n = parse_size(next());
        } else if (a == "--ooc-budget") {
            ooc_budget = parse_size(next());
        } else if (a == "--timeline") {
            timeline_n = parse_size(next());
        } else if (a == "--trace") {
            trace = next();
        } else if (a == "--no-cpu") {
            with_cpu = false;
        } else {
            fprintf(stderr, "usage: %s [--sizes A,B] [--repeat R] [--json FILE] [--ooc-n N] "
                            "[--ooc-budget BYTES] [--no-cpu]\n"
                            "       %s --timeline N [--trace FILE] [--ooc-n N] [--ooc-budget BYTES]\n",
                    argv[0], argv[0]);
            return 2;
        }
    }
    if (timeline_n) return timeline(timeline_n, trace, ooc_n, ooc_budget);
    warpsort_context_t *gpu = nullptr, *cpu = nullptr;
    warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
    cfg.backend = WARPSORT_BACKEND_CUDA;
    if (warpsort_create(&gpu, &cfg) != WARPSORT_OK) {
        fprintf(stderr, "no CUDA device\n");
        return 1;
    }
    cfg.backend = WARPSORT_BACKEND_CPU;
    if (warpsort_create(&cpu, &cfg) != WARPSORT_OK) return 1;
    cudaDeviceProp prop;
    HB_CUDA(cudaGetDeviceProperties(&prop, 0));
    printf("device: %s; host register mode: %s\n", prop.name,
           getenv("WARPSORT_HOST_REGISTER") ? getenv("WARPSORT_HOST_REGISTER") : "0");
    for (size_t n : sizes) run_size(n, repeat, with_cpu, gpu, cpu);
    if (ooc_n) run_out_of_core(ooc_n, ooc_budget, repeat, with_cpu, cpu);
    warpsort_destroy(gpu);
    warpsort_destroy(cpu);
    if (json) {
        FILE *f = fopen(json, "w");
        if (!f) {
            perror(json);
            return 1;
        }
        fprintf(f, "{\"schema\": \"warpsort-host-bench/1\", \"device\": \"%s\", \"rows\": [\n",
                prop.name);
        for (size_t i = 0; i < g_rows.size(); i++) {
            const Row &r = g_rows[i];
            fprintf(f,
                    "  {\"kind\": \"%s\", \"memory\": \"%s\", \"rival\": \"%s\", \"n\": %zu, "
                    "\"ms\": %.4f, \"meps\": %.1f, \"bus_ms\": %.4f, \"pct_of_bus\": %.2f, "
                    "\"note\": \"%s\"}%s\n",
                    r.kind.c_str(), r.memory.c_str(), r.rival.c_str(), r.n, r.ms,
                    r.ms > 0 ? r.n / r.ms / 1e3 : 0.0, r.bus_ms,
                    r.ms > 0 ? 100 * r.bus_ms / r.ms : 0.0, r.note.c_str(),
                    i + 1 < g_rows.size() ? "," : "");
        }
        fprintf(f, "]}\n");
        fclose(f);
    }
    return 0;
}
