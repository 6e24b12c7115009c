/*
 * timing.cu - the GPU, its events, the L2 flush, the wall clock, medians
 * and the copy bandwidth.
 */
#include "core/timing.h"

#include <algorithm>

namespace wsb {

Gpu::~Gpu() {
    /* Teardown at exit: errors here would be earlier asynchronous errors,
     * already reported; a destructor must not throw. */
    if (start) (void)cudaEventDestroy(start);
    if (stop) (void)cudaEventDestroy(stop);
    if (stream) (void)cudaStreamDestroy(stream);
}

bool open_gpu(Gpu &g, int device, std::string *why) {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        (void)cudaGetLastError();
        *why = "no usable CUDA device (" +
               (e != cudaSuccess ? cuda_error_text(e) : std::string("device count is 0")) + ")";
        return false;
    }
    if (device >= count) {
        *why = strprintf("--device %d but only %d device(s)", device, count);
        return false;
    }
    g.device = device;
    WSB_CUDA(cudaSetDevice(device));
    WSB_CUDA(cudaGetDeviceProperties(&g.prop, device));
    WSB_CUDA(cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking));
    WSB_CUDA(cudaEventCreate(&g.start));
    WSB_CUDA(cudaEventCreate(&g.stop));
    g.flush_bytes = std::max<size_t>((size_t)2 * (size_t)g.prop.l2CacheSize, (size_t)64 << 20);
    WSB_CUDA(g.flush_buf.allocate(g.flush_bytes));
    WSB_CUDA(g.flush_sink.allocate(sizeof(unsigned)));
    WSB_CUDA(cudaMemset(g.flush_buf.get(), 0x5A, g.flush_bytes));
    return true;
}

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

void event_begin(Gpu &g) { WSB_CUDA(cudaEventRecord(g.start, g.stream)); }

cudaError_t event_end(Gpu &g) {
    WSB_CUDA(cudaEventRecord(g.stop, g.stream));
    return cudaEventSynchronize(g.stop);
}

double event_ms(Gpu &g) {
    float ms = 0;
    WSB_CUDA(cudaEventElapsedTime(&ms, g.start, g.stop));
    return ms;
}

double wall_ms() {
    using namespace std::chrono;
    return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

double lap(std::chrono::steady_clock::time_point &t) {
    auto now = std::chrono::steady_clock::now();
    double s = std::chrono::duration<double>(now - t).count();
    t = now;
    return s;
}

double median_of(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

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
        event_begin(g);
        WSB_CUDA(cudaMemcpyAsync(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice, g.stream));
        WSB_CUDA(event_end(g));
        if (i >= 3) t.push_back(event_ms(g));
    }
    *buffer_bytes = bytes;
    double med = median_of(t);
    return med > 0 ? 2.0 * (double)bytes / (med * 1e-3) : 0;
}

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

} // namespace wsb
