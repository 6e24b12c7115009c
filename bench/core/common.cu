/*
 * common.cu - the harness's error check, string formatting and memory owners.
 */
#include "core/common.h"

#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace wsb {

void cuda_check(cudaError_t err, const char *what, const char *file, int line) {
    if (err == cudaSuccess) return;
    throw BenchError(strprintf("%s:%d: %s failed: %s (%s)", file, line, what, cudaGetErrorName(err),
                               cudaGetErrorString(err)));
}

std::string strprintf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char small[512];
    va_list ap2;
    va_copy(ap2, ap);
    int len = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (len < 0) {
        va_end(ap2);
        return std::string("(format error)");
    }
    if ((size_t)len < sizeof small) {
        va_end(ap2);
        return std::string(small, (size_t)len);
    }
    std::string out((size_t)len, '\0');
    vsnprintf(&out[0], (size_t)len + 1, fmt, ap2);
    va_end(ap2);
    return out;
}

std::string gib(double bytes) { return strprintf("%.2f GiB", bytes / (1024.0 * 1024.0 * 1024.0)); }

cudaError_t DeviceMemory::allocate(size_t bytes) {
    release();
    if (bytes == 0) bytes = 1;
    cudaError_t e = cudaMalloc(&ptr_, bytes);
    if (e != cudaSuccess) {
        ptr_ = nullptr;
        (void)cudaGetLastError();
        return e;
    }
    bytes_ = bytes;
    return cudaSuccess;
}

/* Frees run from destructors, which must not throw: a failing free reports
 * an earlier asynchronous error, which the harness's own checks after every
 * run (ensure_context_alive) report with its cause. */
void DeviceMemory::release() {
    if (ptr_) (void)cudaFree(ptr_);
    ptr_ = nullptr;
    bytes_ = 0;
}

bool HostMemory::allocate(size_t bytes, bool pinned) {
    release();
    if (bytes == 0) bytes = 1;
    if (pinned) {
        if (cudaMallocHost(&ptr_, bytes) != cudaSuccess) {
            (void)cudaGetLastError();
            ptr_ = nullptr;
            return false;
        }
    } else {
        ptr_ = std::malloc(bytes);
    }
    pinned_ = pinned;
    return ptr_ != nullptr;
}

void HostMemory::release() {
    if (ptr_ && pinned_)
        (void)cudaFreeHost(ptr_); /* as DeviceMemory::release */
    else
        std::free(ptr_);
    ptr_ = nullptr;
}

double host_memory_bytes() {
    return (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGE_SIZE);
}

} // namespace wsb
