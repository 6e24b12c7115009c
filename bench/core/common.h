/*
 * common.h - what every file of the benchmark harness uses: its error type,
 * the CUDA error check, printf into a string, and an owned device block.
 *
 * The harness is CUDA C++ because it drives CUB and Thrust, the rivals the
 * library is measured against; none of it is part of the library.
 */
#ifndef WSB_CORE_COMMON_H
#define WSB_CORE_COMMON_H

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace wsb {

/* Errors of the harness itself (not of a rival): these stop the run. */
struct BenchError : std::runtime_error {
    explicit BenchError(const std::string &what) : std::runtime_error(what) {}
};

/* Throws BenchError naming the call site when err is not cudaSuccess. */
void cuda_check(cudaError_t err, const char *what, const char *file, int line);
#define WSB_CUDA(call) ::wsb::cuda_check((call), #call, __FILE__, __LINE__)

/* printf into a std::string. */
std::string strprintf(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* "cudaErrorMemoryAllocation: out of memory" */
inline std::string cuda_error_text(cudaError_t e) {
    return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

/* "1.50 GiB" */
std::string gib(double bytes);

/* Owns one cudaMalloc'd block. allocate() returns the cudaMalloc error (and
 * clears it) instead of throwing, so a caller can skip a row that does not fit. */
class DeviceMemory {
  public:
    DeviceMemory() = default;
    ~DeviceMemory() { release(); }
    DeviceMemory(const DeviceMemory &) = delete;
    DeviceMemory &operator=(const DeviceMemory &) = delete;
    cudaError_t allocate(size_t bytes);
    void release();
    void *get() const { return ptr_; }
    size_t size() const { return bytes_; }

  private:
    void *ptr_ = nullptr;
    size_t bytes_ = 0;
};

/* Owns one host block: pageable (malloc) or pinned (cudaMallocHost).
 * allocate() returns false, with nothing held, when the memory is not there. */
class HostMemory {
  public:
    HostMemory() = default;
    ~HostMemory() { release(); }
    HostMemory(const HostMemory &) = delete;
    HostMemory &operator=(const HostMemory &) = delete;
    bool allocate(size_t bytes, bool pinned);
    void release();
    void *get() const { return ptr_; }

  private:
    void *ptr_ = nullptr;
    bool pinned_ = false;
};

/* Physical memory of the host, bytes. */
double host_memory_bytes();

} // namespace wsb

#endif /* WSB_CORE_COMMON_H */
