/*
 * device_bench.cu - the public device API (include/warpsort/) against CUB's
 * collectives at equal work per block, in-kernel: every block loops ITERS
 * times over its tile held in registers (and shared memory for the block
 * sorts), scrambling the keys with one multiply-add per key between
 * iterations, so DRAM plays no part. Both sides run the same loop and the
 * same scramble; only the collective differs.
 *
 *   warp sort   32 x K u32 keys per warp    vs cub::WarpMergeSort
 *   block sort  1024..8192 u32 keys, pairs  vs cub::BlockMergeSort, cub::BlockRadixSort
 *   warp reduce / inclusive scan (int sum)  vs cub::WarpReduce, cub::WarpScan
 *
 * Times: CUDA events around each launch, median of --repeat runs after a
 * warm-up. Prints a table and writes JSON (default ./device_bench.json,
 * --json PATH, --no-json). Targets (issue 12, H100): warp sort >= 1.5x
 * WarpMergeSort; block sort of 4-byte keys >= BlockRadixSort; reduce and
 * scan within 5 % of CUB.
 */
#include <cuda_runtime.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

#include <cub/block/block_merge_sort.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/warp/warp_merge_sort.cuh>
#include <cub/warp/warp_reduce.cuh>
#include <cub/warp/warp_scan.cuh>

#include <warpsort/block_sort.cuh>
#include <warpsort/warp_ops.cuh>
#include <warpsort/warp_sort.cuh>

#define DB_CUDA(call)                                                                          \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess) {                                                               \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

namespace {

constexpr int ITERS = 64; /* tiles each block sorts per launch */

struct less_u32 {
    __device__ bool operator()(uint32_t a, uint32_t b) const { return a < b; }
};

/* Per-key scramble between iterations: cheap, and the same on both sides. */
__device__ __forceinline__ uint32_t scramble(uint32_t x) { return x * 1664525u + 1013904223u; }

template <int K>
__device__ __forceinline__ void load_seed(uint32_t (&k)[K]) {
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll
    for (int i = 0; i < K; i++) k[i] = (t * K + i) * 2654435761u;
}

/*--- warp sort ---*/
enum impl { WS, CUB_MERGE, CUB_RADIX };

template <int K, impl I>
__global__ void __launch_bounds__(256) warp_sort_bench(uint32_t *sink) {
    using wms = cub::WarpMergeSort<uint32_t, K, 32>;
    extern __shared__ __align__(16) unsigned char smem[];
    uint32_t k[K];
    load_seed(k);
    uint32_t acc = 0;
    for (int it = 0; it < ITERS; it++) {
#pragma unroll
        for (int i = 0; i < K; i++) k[i] = scramble(k[i]);
        if constexpr (I == WS) {
            warpsort::warp_sort_keys(k);
        } else {
            auto *temp = reinterpret_cast<typename wms::TempStorage *>(smem);
            wms(temp[threadIdx.x / 32]).Sort(k, less_u32{});
            __syncwarp();
        }
        acc ^= k[0] + k[K - 1];
    }
    sink[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
template <int K, impl I>
size_t warp_sort_smem() {
    return I == WS ? 0 : 8 * sizeof(typename cub::WarpMergeSort<uint32_t, K, 32>::TempStorage);
}

/*--- block sort ---*/
template <int THREADS, int K, bool PAIRS, impl I>
struct block_bench {
    using ws_storage = warpsort::block_sort_storage<uint32_t, typename std::conditional<PAIRS, uint32_t, warpsort::no_value>::type, THREADS, K>;
    using cub_v = typename std::conditional<PAIRS, uint32_t, cub::NullType>::type;
    using bms = cub::BlockMergeSort<uint32_t, THREADS, K, cub_v>;
    using brs = cub::BlockRadixSort<uint32_t, THREADS, K, cub_v>;
    static size_t smem() {
        return I == WS ? sizeof(ws_storage)
                       : I == CUB_MERGE ? sizeof(typename bms::TempStorage)
                                        : sizeof(typename brs::TempStorage);
    }
};

template <int THREADS, int K, bool PAIRS, impl I>
__global__ void __launch_bounds__(THREADS) block_sort_bench(uint32_t *sink) {
    using B = block_bench<THREADS, K, PAIRS, I>;
    extern __shared__ __align__(16) unsigned char smem[];
    uint32_t k[K], v[K];
    load_seed(k);
#pragma unroll
    for (int i = 0; i < K; i++) v[i] = threadIdx.x * K + i;
    uint32_t acc = 0;
    for (int it = 0; it < ITERS; it++) {
#pragma unroll
        for (int i = 0; i < K; i++) k[i] = scramble(k[i]);
        if constexpr (I == WS) {
            auto &st = *reinterpret_cast<typename B::ws_storage *>(smem);
            if constexpr (PAIRS) warpsort::block_sort_pairs(k, v, st);
            else warpsort::block_sort_keys(k, st);
        } else if constexpr (I == CUB_MERGE) {
            auto &st = *reinterpret_cast<typename B::bms::TempStorage *>(smem);
            if constexpr (PAIRS) typename B::bms(st).Sort(k, v, less_u32{});
            else typename B::bms(st).Sort(k, less_u32{});
            __syncthreads(); /* CUB: temp storage reused next iteration */
        } else {
            auto &st = *reinterpret_cast<typename B::brs::TempStorage *>(smem);
            if constexpr (PAIRS) typename B::brs(st).Sort(k, v);
            else typename B::brs(st).Sort(k);
            __syncthreads();
        }
        acc ^= k[0] + k[K - 1] + (PAIRS ? v[0] : 0u);
    }
    sink[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

/*--- warp reduce / scan ---*/
enum op_kind { REDUCE, SCAN };

template <op_kind OP, bool CUB>
__global__ void __launch_bounds__(256) warp_op_bench(uint32_t *sink) {
    using wr = cub::WarpReduce<int>;
    using wsc = cub::WarpScan<int>;
    __shared__ typename wr::TempStorage rtemp[8];
    __shared__ typename wsc::TempStorage stemp[8];
    int x = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    int acc = 0;
    for (int it = 0; it < ITERS * 16; it++) {
        x = x * 3 + it;
        int r;
        if constexpr (OP == REDUCE) {
            /* CUB's sum lands in lane 0 only; warpsort's in every lane: both are used by lane 0 */
            if constexpr (CUB) r = wr(rtemp[threadIdx.x / 32]).Sum(x);
            else r = warpsort::warp_reduce(x, warpsort::plus_op{});
        } else {
            if constexpr (CUB) wsc(stemp[threadIdx.x / 32]).InclusiveSum(x, r);
            else r = warpsort::warp_inclusive_scan(x, warpsort::plus_op{});
        }
        acc += r;
    }
    sink[blockIdx.x * blockDim.x + threadIdx.x] = (uint32_t)acc;
}

/*--- timing ---*/
struct options {
    int repeat = 7;
    std::string json = "device_bench.json";
    bool no_json = false;
};

struct row {
    std::string group, name, impl;
    size_t items_per_launch;
    double ms;
};

template <typename Kernel>
double time_kernel(Kernel kernel, int blocks, int threads, size_t smem, uint32_t *sink,
                   const options &o) {
    if (smem > 48 * 1024)
        DB_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    cudaEvent_t a, b;
    DB_CUDA(cudaEventCreate(&a));
    DB_CUDA(cudaEventCreate(&b));
    kernel<<<blocks, threads, smem>>>(sink); /* warm-up */
    DB_CUDA(cudaGetLastError());
    std::vector<double> t;
    for (int r = 0; r < o.repeat; r++) {
        DB_CUDA(cudaEventRecord(a));
        kernel<<<blocks, threads, smem>>>(sink);
        DB_CUDA(cudaEventRecord(b));
        DB_CUDA(cudaEventSynchronize(b));
        float ms = 0;
        DB_CUDA(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms);
    }
    DB_CUDA(cudaEventDestroy(a));
    DB_CUDA(cudaEventDestroy(b));
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

template <int K>
void bench_warp_sort(std::vector<row> &rows, uint32_t *sink, int sms, const options &o) {
    const int threads = 256, blocks = sms * 8;
    const size_t items = (size_t)blocks * threads * K * ITERS;
    const std::string name = "32x" + std::to_string(K) + " u32 keys";
    rows.push_back({"warp sort", name, "warpsort",  items,
                    time_kernel(warp_sort_bench<K, WS>, blocks, threads, warp_sort_smem<K, WS>(), sink, o)});
    rows.push_back({"warp sort", name, "cub::WarpMergeSort", items,
                    time_kernel(warp_sort_bench<K, CUB_MERGE>, blocks, threads, warp_sort_smem<K, CUB_MERGE>(), sink, o)});
}

template <int THREADS, int K, bool PAIRS>
void bench_block_sort(std::vector<row> &rows, uint32_t *sink, int sms, const options &o) {
    const int blocks = sms * 4;
    const size_t items = (size_t)blocks * THREADS * K * ITERS;
    const std::string name = std::to_string(THREADS * K) + " u32 " + (PAIRS ? "pairs" : "keys") +
                             " (" + std::to_string(THREADS) + "x" + std::to_string(K) + ")";
    const char *group = PAIRS ? "block sort pairs" : "block sort keys";
    rows.push_back({group, name, "warpsort", items,
                    time_kernel(block_sort_bench<THREADS, K, PAIRS, WS>, blocks, THREADS,
                                block_bench<THREADS, K, PAIRS, WS>::smem(), sink, o)});
    rows.push_back({group, name, "cub::BlockMergeSort", items,
                    time_kernel(block_sort_bench<THREADS, K, PAIRS, CUB_MERGE>, blocks, THREADS,
                                block_bench<THREADS, K, PAIRS, CUB_MERGE>::smem(), sink, o)});
    rows.push_back({group, name, "cub::BlockRadixSort", items,
                    time_kernel(block_sort_bench<THREADS, K, PAIRS, CUB_RADIX>, blocks, THREADS,
                                block_bench<THREADS, K, PAIRS, CUB_RADIX>::smem(), sink, o)});
}

template <op_kind OP>
void bench_warp_op(std::vector<row> &rows, uint32_t *sink, int sms, const options &o) {
    const int threads = 256, blocks = sms * 8;
    const size_t items = (size_t)blocks * threads * ITERS * 16;
    const char *group = OP == REDUCE ? "warp reduce" : "warp inclusive scan";
    rows.push_back({group, "int sum, 32 lanes", "warpsort", items,
                    time_kernel(warp_op_bench<OP, false>, blocks, threads, 0, sink, o)});
    rows.push_back({group, "int sum, 32 lanes", OP == REDUCE ? "cub::WarpReduce" : "cub::WarpScan",
                    items, time_kernel(warp_op_bench<OP, true>, blocks, threads, 0, sink, o)});
}

} // namespace

int main(int argc, char **argv) {
    options o;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--repeat") && i + 1 < argc) o.repeat = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--json") && i + 1 < argc) o.json = argv[++i];
        else if (!strcmp(argv[i], "--no-json")) o.no_json = true;
        else {
            fprintf(stderr, "usage: %s [--repeat N] [--json PATH | --no-json]\n", argv[0]);
            return 2;
        }
    }
    if (o.repeat < 1) o.repeat = 1;
    int dev = 0;
    cudaDeviceProp prop;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess) {
        fprintf(stderr, "no CUDA device\n");
        return 1;
    }
    const int sms = prop.multiProcessorCount;
    uint32_t *sink = NULL;
    DB_CUDA(cudaMalloc(&sink, (size_t)sms * 8 * 1024 * sizeof(uint32_t)));

    std::vector<row> rows;
    bench_warp_sort<1>(rows, sink, sms, o);
    bench_warp_sort<2>(rows, sink, sms, o);
    bench_warp_sort<4>(rows, sink, sms, o);
    bench_warp_sort<8>(rows, sink, sms, o);
    bench_warp_sort<16>(rows, sink, sms, o);
    bench_block_sort<256, 4, false>(rows, sink, sms, o);
    bench_block_sort<256, 8, false>(rows, sink, sms, o);
    bench_block_sort<256, 16, false>(rows, sink, sms, o);
    bench_block_sort<512, 16, false>(rows, sink, sms, o);
    bench_block_sort<256, 4, true>(rows, sink, sms, o);
    bench_block_sort<256, 8, true>(rows, sink, sms, o);
    bench_block_sort<256, 16, true>(rows, sink, sms, o);
    bench_block_sort<512, 16, true>(rows, sink, sms, o);
    bench_warp_op<REDUCE>(rows, sink, sms, o);
    bench_warp_op<SCAN>(rows, sink, sms, o);
    DB_CUDA(cudaFree(sink));

    /* Table: each row's speed relative to warpsort's on the same case. */
    printf("device: %s (%d SMs), %d tiles per block per launch, median of %d\n", prop.name, sms,
           ITERS, o.repeat);
    printf("%-20s %-28s %-22s %10s %12s %10s\n", "collective", "case", "implementation", "ms",
           "Gitems/s", "ws speedup");
    double ws_ms = 0;
    for (const row &r : rows) {
        if (r.impl == "warpsort") ws_ms = r.ms;
        printf("%-20s %-28s %-22s %10.3f %12.2f %10.2f\n", r.group.c_str(), r.name.c_str(),
               r.impl.c_str(), r.ms, (double)r.items_per_launch / (r.ms * 1e6), r.ms / ws_ms);
    }
    if (!o.no_json) {
        FILE *f = fopen(o.json.c_str(), "w");
        if (!f) {
            fprintf(stderr, "cannot write %s\n", o.json.c_str());
            return 1;
        }
        fprintf(f, "{\n  \"device\": \"%s\",\n  \"sms\": %d,\n  \"iters\": %d,\n  \"repeat\": %d,\n"
                   "  \"rows\": [\n", prop.name, sms, ITERS, o.repeat);
        ws_ms = 0;
        for (size_t i = 0; i < rows.size(); i++) {
            const row &r = rows[i];
            if (r.impl == "warpsort") ws_ms = r.ms;
            fprintf(f,
                    "    {\"collective\": \"%s\", \"case\": \"%s\", \"impl\": \"%s\", \"ms\": %.6f, "
                    "\"items\": %zu, \"gitems_per_s\": %.4f, \"warpsort_speedup\": %.4f}%s\n",
                    r.group.c_str(), r.name.c_str(), r.impl.c_str(), r.ms, r.items_per_launch,
                    (double)r.items_per_launch / (r.ms * 1e6), r.ms / ws_ms,
                    i + 1 < rows.size() ? "," : "");
        }
        fprintf(f, "  ]\n}\n");
        fclose(f);
        printf("wrote %s\n", o.json.c_str());
    }
    return 0;
}
