/*
 * wide_pairs.cu - 64-bit keys with 64-bit values (issue 10's "u64 keys + u64
 * values: faster than radix pairs"), a case warpsort_bench cannot express:
 * its harness carries u32 values for every rival. warpsort_sort_pairs with
 * value_bytes 8 against CUB DeviceRadixSort::SortPairs (DoubleBuffer, the
 * faster entry point, bench/README.md) and DeviceMergeSort::SortPairs, same
 * process, same device-resident input restored (untimed) before every
 * repeat, CUDA events, 2 warm-ups, median of --repeat. Every rival's result
 * is checked on the host: keys in order, each value the index its key was
 * made from, every index once.
 *
 *   wide_pairs [--log A,B] [--dtype u64,f64] [--repeat 7] [--json FILE]
 */
#include <cub/device/device_merge_sort.cuh>
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "warpsort.h"

#define CK(x)                                                                                  \
    do {                                                                                       \
        cudaError_t e_ = (x);                                                                  \
        if (e_ != cudaSuccess) {                                                               \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x,                    \
                         cudaGetErrorString(e_));                                              \
            std::exit(1);                                                                      \
        }                                                                                      \
    } while (0)

namespace {

__host__ __device__ unsigned long long mix(unsigned long long x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}
/* Key i of the input: random bits (u64), or a finite random double in
 * [-2^42, 2^42) with 10 fraction bits (f64: no NaN, so the host check can
 * use <). Exact arithmetic only: a contracted multiply-add on the device
 * would round differently from the host. */
__host__ __device__ unsigned long long key_of(unsigned long long i, bool f64) {
    const unsigned long long r = mix(i);
    if (!f64) return r;
    double d = (double)((long long)(r >> 11) - (1ll << 52)) / 1024.0;
    unsigned long long b;
    memcpy(&b, &d, 8);
    return b;
}
__global__ void fill(unsigned long long *k, unsigned long long *v, size_t n, bool f64) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        k[i] = key_of(i, f64);
        v[i] = i;
    }
}

struct Less {
    __device__ bool operator()(double a, double b) const { return a < b; }
    __device__ bool operator()(unsigned long long a, unsigned long long b) const { return a < b; }
};

/* Keys ascending, value j = the index key j came from, every index once. */
std::string verify(const unsigned long long *dk, const unsigned long long *dv, size_t n, bool f64) {
    std::vector<unsigned long long> k(n), v(n);
    CK(cudaMemcpy(k.data(), dk, n * 8, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(v.data(), dv, n * 8, cudaMemcpyDeviceToHost));
    std::vector<bool> seen(n, false);
    for (size_t j = 0; j < n; j++) {
        if (v[j] >= n || seen[v[j]]) return "value " + std::to_string(j) + " repeated or out of range";
        seen[v[j]] = true;
        if (k[j] != key_of(v[j], f64)) return "key " + std::to_string(j) + " lost its value";
        if (j) {
            bool bad;
            if (f64) {
                double a, b;
                memcpy(&a, &k[j - 1], 8);
                memcpy(&b, &k[j], 8);
                bad = b < a;
            } else {
                bad = k[j] < k[j - 1];
            }
            if (bad) return "keys out of order at " + std::to_string(j);
        }
    }
    return "";
}

/* CUB's two rivals, sized (temp nullptr: tb gets the bytes) or run the
 * same way. Radix sorts through DoubleBuffers; the result is where *rk /
 * *rv point afterwards. */
cudaError_t cub_radix_pairs(void *temp, size_t &tb, unsigned long long *k, unsigned long long *k2,
                            unsigned long long *v, unsigned long long *v2, size_t n, bool f64,
                            cudaStream_t s, const unsigned long long **rk,
                            const unsigned long long **rv) {
    cub::DoubleBuffer<unsigned long long> dv(v, v2);
    cudaError_t e;
    if (f64) {
        cub::DoubleBuffer<double> dk((double *)k, (double *)k2);
        e = cub::DeviceRadixSort::SortPairs(temp, tb, dk, dv, (int)n, 0, 64, s);
        *rk = (const unsigned long long *)dk.Current();
    } else {
        cub::DoubleBuffer<unsigned long long> dk(k, k2);
        e = cub::DeviceRadixSort::SortPairs(temp, tb, dk, dv, (int)n, 0, 64, s);
        *rk = dk.Current();
    }
    *rv = dv.Current();
    return e;
}
cudaError_t cub_merge_pairs(void *temp, size_t &tb, unsigned long long *k, unsigned long long *v,
                            size_t n, bool f64, cudaStream_t s) {
    return f64 ? cub::DeviceMergeSort::SortPairs(temp, tb, (double *)k, v, (int64_t)n, Less(), s)
               : cub::DeviceMergeSort::SortPairs(temp, tb, k, v, (int64_t)n, Less(), s);
}

double median(std::vector<float> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
    std::vector<int> logs = {24, 26};
    std::vector<std::string> dtypes = {"u64", "f64"};
    int repeat = 7;
    const char *json = nullptr;
    auto split = [](const char *s) {
        std::vector<std::string> out;
        std::string a = s;
        for (size_t p = 0; p <= a.size();) {
            size_t q = a.find(',', p);
            if (q == std::string::npos) q = a.size();
            out.push_back(a.substr(p, q - p));
            p = q + 1;
        }
        return out;
    };
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (i + 1 < argc && a == "--log") {
            logs.clear();
            for (auto &x : split(argv[++i])) logs.push_back(std::atoi(x.c_str()));
        } else if (i + 1 < argc && a == "--dtype") {
            dtypes = split(argv[++i]);
        } else if (i + 1 < argc && a == "--repeat") {
            repeat = std::max(1, std::atoi(argv[++i]));
        } else if (i + 1 < argc && a == "--json") {
            json = argv[++i];
        } else {
            std::fprintf(stderr, "usage: %s [--log A,B] [--dtype u64,f64] [--repeat 7] [--json FILE]\n",
                         argv[0]);
            return 2;
        }
    }
    for (auto &d : dtypes)
        if (d != "u64" && d != "f64") {
            std::fprintf(stderr, "--dtype: u64 or f64, not %s\n", d.c_str());
            return 2;
        }
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    warpsort_context_t *ctx = nullptr;
    warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
    cfg.backend = WARPSORT_BACKEND_CUDA;
    cfg.stream = s;
    if (warpsort_create(&ctx, &cfg) != WARPSORT_OK) {
        std::fprintf(stderr, "no CUDA device\n");
        return 1;
    }
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    std::printf("device: %s\n", prop.name);
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::string rows;
    bool all_ok = true;
    for (const std::string &dt : dtypes) {
        const bool f64 = dt == "f64";
        for (int lg : logs) {
            const size_t n = (size_t)1 << lg;
            unsigned long long *pk, *pv, *k, *v, *k2, *v2;
            CK(cudaMalloc(&pk, n * 8));
            CK(cudaMalloc(&pv, n * 8));
            CK(cudaMalloc(&k, n * 8));
            CK(cudaMalloc(&v, n * 8));
            CK(cudaMalloc(&k2, n * 8));
            CK(cudaMalloc(&v2, n * 8));
            fill<<<1024, 256, 0, s>>>(pk, pv, n, f64);
            CK(cudaGetLastError());
            size_t tb_radix = 0, tb_merge = 0;
            const unsigned long long *rk = nullptr, *rv = nullptr;
            CK(cub_radix_pairs(nullptr, tb_radix, k, k2, v, v2, n, f64, s, &rk, &rv));
            CK(cub_merge_pairs(nullptr, tb_merge, k, v, n, f64, s));
            void *temp;
            CK(cudaMalloc(&temp, std::max(tb_radix, tb_merge)));
            const char *rivals[] = {"warpsort", "cub-radix", "cub-merge"};
            double med[3] = {0, 0, 0};
            for (int r = 0; r < 3; r++) {
                std::vector<float> ms;
                rk = k;
                rv = v;
                for (int it = 0; it < repeat + 2; it++) {
                    CK(cudaMemcpyAsync(k, pk, n * 8, cudaMemcpyDeviceToDevice, s));
                    CK(cudaMemcpyAsync(v, pv, n * 8, cudaMemcpyDeviceToDevice, s));
                    CK(cudaStreamSynchronize(s));
                    CK(cudaEventRecord(a, s));
                    if (r == 0) {
                        warpsort_status_t st = warpsort_sort_pairs(ctx, k, v, n, f64 ? WARPSORT_F64 : WARPSORT_U64, 8, 0);
                        if (st != WARPSORT_OK) {
                            std::fprintf(stderr, "warpsort: %s\n", warpsort_last_error(ctx));
                            return 1;
                        }
                    } else if (r == 1) {
                        size_t tb = tb_radix;
                        CK(cub_radix_pairs(temp, tb, k, k2, v, v2, n, f64, s, &rk, &rv));
                    } else {
                        size_t tb = tb_merge;
                        CK(cub_merge_pairs(temp, tb, k, v, n, f64, s));
                    }
                    CK(cudaEventRecord(b, s));
                    CK(cudaEventSynchronize(b));
                    float t;
                    CK(cudaEventElapsedTime(&t, a, b));
                    if (it >= 2) ms.push_back(t);
                }
                med[r] = median(ms);
                const std::string bad = verify(rk, rv, n, f64);
                if (!bad.empty()) all_ok = false;
                std::printf("%s keys + u64 values n=2^%d %-10s %8.3f ms  %6.2f Gpairs/s%s%s\n", dt.c_str(), lg,
                            rivals[r], med[r], n / med[r] / 1e6, bad.empty() ? "" : "  FAILED: ", bad.c_str());
                char row[512];
                std::snprintf(row, sizeof row,
                              "%s  {\"dtype\": \"%s\", \"value_bytes\": 8, \"n\": %zu, \"rival\": \"%s\", "
                              "\"ms\": %.4f, \"verified\": %s}",
                              rows.empty() ? "" : ",\n", dt.c_str(), n, rivals[r], med[r],
                              bad.empty() ? "true" : "false");
                rows += row;
            }
            std::printf("  -> warpsort / CUB radix = %.2fx the time\n", med[0] / med[1]);
            for (void *p : {(void *)pk, (void *)pv, (void *)k, (void *)v, (void *)k2, (void *)v2, temp}) CK(cudaFree(p));
        }
    }
    warpsort_destroy(ctx);
    if (json) {
        FILE *f = std::fopen(json, "w");
        if (!f) {
            std::perror(json);
            return 1;
        }
        std::fprintf(f, "{\"schema\": \"warpsort-wide-pairs/1\", \"device\": \"%s\", \"repeat\": %d, \"rows\": [\n%s\n]}\n",
                     prop.name, repeat, rows.c_str());
        std::fclose(f);
    }
    return all_ok ? 0 : 1;
}
