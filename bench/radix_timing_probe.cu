/*
 * radix_timing_probe.cu - which timing setting makes CUB's radix sort look
 * faster or slower: 2^27 random u32 keys, DeviceRadixSort::SortKeys timed
 * with CUDA events under several settings, median of 9 each. The last rows
 * pass num_items as int64_t (as Thrust does), which selects CUB's tuning
 * for 64-bit offsets. Standalone
 * (scripts/gpu.sh stage builds it; `run radix-probe` runs it): it answers
 * whether the harness's L2 flush, host idle time or CUB entry point makes
 * CUB look slower than it is (bench/README.md, "Timing the rivals").
 */
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#define CK(x)                                                                       \
    do {                                                                            \
        cudaError_t e_ = (x);                                                       \
        if (e_ != cudaSuccess) {                                                    \
            std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));           \
            std::exit(1);                                                           \
        }                                                                           \
    } while (0)

__global__ void fill(unsigned *k, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        unsigned long long x = i * 0x9E3779B97F4A7C15ull;
        x ^= x >> 31; x *= 0xBF58476D1CE4E5B9ull; x ^= x >> 29;
        k[i] = (unsigned)(x >> 32);
    }
}
__global__ void flush(const uint4 *b, size_t n, unsigned *sink) {
    unsigned acc = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) acc ^= b[i].x;
    if (acc == 0x12345678u) *sink = acc;
}

int main(int argc, char **argv) {
    const size_t n = (size_t)1 << (argc > 1 ? std::atoi(argv[1]) : 27);
    unsigned *pristine, *work, *alt, *out, *sink;
    uint4 *fbuf;
    const size_t fbytes = (size_t)200 << 20;
    CK(cudaMalloc(&pristine, n * 4)); CK(cudaMalloc(&work, n * 4)); CK(cudaMalloc(&alt, n * 4));
    CK(cudaMalloc(&out, n * 4)); CK(cudaMalloc(&fbuf, fbytes)); CK(cudaMalloc(&sink, 4));
    CK(cudaMemset(fbuf, 1, fbytes));
    fill<<<1024, 256>>>(pristine, n);
    CK(cudaGetLastError());
    cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    size_t tb_db = 0, tb_io = 0, tb_64 = 0;
    cub::DoubleBuffer<unsigned> db(work, alt);
    CK(cub::DeviceRadixSort::SortKeys(nullptr, tb_db, db, (int)n, 0, 32, s));
    CK(cub::DeviceRadixSort::SortKeys(nullptr, tb_io, work, out, (int)n, 0, 32, s));
    CK(cub::DeviceRadixSort::SortKeys(nullptr, tb_64, db, (int64_t)n, 0, 32, s));
    void *temp; CK(cudaMalloc(&temp, std::max({tb_db, tb_io, tb_64})));
    cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    struct Setting { const char *name; bool doublebuf, flush, idle, off64; };
    const Setting set[] = {
        {"DoubleBuffer, restore, no flush", true, false, false, false},
        {"DoubleBuffer, restore, L2 flush", true, true, false, false},
        {"DoubleBuffer, restore, 20 ms host idle", true, false, true, false},
        {"in/out API, restore, no flush", false, false, false, false},
        {"in/out API, restore, L2 flush", false, true, false, false},
        {"DoubleBuffer, int64 n, restore, no flush", true, false, false, true},
        {"DoubleBuffer, int64 n, restore, L2 flush", true, true, false, true},
    };
    for (const Setting &st : set) {
        std::vector<float> ms;
        for (int it = 0; it < 11; it++) {
            CK(cudaMemcpyAsync(work, pristine, n * 4, cudaMemcpyDeviceToDevice, s));
            if (st.flush) flush<<<132 * 8, 512, 0, s>>>(fbuf, fbytes / 16, sink);
            CK(cudaStreamSynchronize(s));
            if (st.idle) std::this_thread::sleep_for(std::chrono::milliseconds(20));
            size_t tb = std::max({tb_db, tb_io, tb_64});
            CK(cudaEventRecord(a, s));
            if (st.off64) {
                cub::DoubleBuffer<unsigned> d(work, alt);
                CK(cub::DeviceRadixSort::SortKeys(temp, tb, d, (int64_t)n, 0, 32, s));
            } else if (st.doublebuf) {
                cub::DoubleBuffer<unsigned> d(work, alt);
                CK(cub::DeviceRadixSort::SortKeys(temp, tb, d, (int)n, 0, 32, s));
            } else {
                CK(cub::DeviceRadixSort::SortKeys(temp, tb, work, out, (int)n, 0, 32, s));
            }
            CK(cudaEventRecord(b, s));
            CK(cudaEventSynchronize(b));
            float t; CK(cudaEventElapsedTime(&t, a, b));
            if (it >= 2) ms.push_back(t);
        }
        std::sort(ms.begin(), ms.end());
        std::printf("%-42s median %.3f ms  min %.3f ms\n", st.name, ms[ms.size() / 2], ms[0]);
    }
    return 0;
}
