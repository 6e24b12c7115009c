/*
 * thrust_sort.cu - rival thrust: thrust::sort / thrust::sort_by_key, u32 values.
 *
 * Called as a user would, thrust::cuda::par(alloc).on(stream), in place on
 * the working buffers, with a caching allocator: the temporary storage
 * Thrust asks for is cudaMalloc'd on the first (warm-up) call and reused by
 * every timed repeat, so no allocation is timed. (Thrust's default
 * allocator would cudaMalloc/cudaFree inside every call.) With `par`
 * Thrust synchronizes the stream before returning; the CUDA events still
 * time the GPU work.
 */
#include "rivals/factories.h"

#include <cstddef>
#include <map>
#include <new>

#include <thrust/device_ptr.h>
#include <thrust/execution_policy.h>
#include <thrust/sort.h>

namespace wsb {
namespace {

/* Hands back freed blocks of the same size; frees everything when destroyed. */
class CachingAllocator {
  public:
    using value_type = char;
    CachingAllocator() = default;
    CachingAllocator(const CachingAllocator &) = delete;
    CachingAllocator &operator=(const CachingAllocator &) = delete;
    ~CachingAllocator() { /* a destructor must not throw: see DeviceMemory::release */
        for (auto &f : free_) (void)cudaFree(f.second);
        for (auto &u : used_) (void)cudaFree(u.first);
    }
    char *allocate(std::ptrdiff_t bytes) {
        auto it = free_.find((size_t)bytes);
        char *p = nullptr;
        if (it != free_.end()) {
            p = it->second;
            free_.erase(it);
        } else {
            if (cudaMalloc(&p, (size_t)bytes) != cudaSuccess) {
                (void)cudaGetLastError();
                throw std::bad_alloc();
            }
            held_ += (size_t)bytes;
        }
        used_[p] = (size_t)bytes;
        return p;
    }
    void deallocate(char *p, size_t) {
        auto it = used_.find(p);
        if (it == used_.end()) return;
        free_.insert(std::make_pair(it->second, p));
        used_.erase(it);
    }
    size_t held() const { return held_; }

  private:
    std::multimap<size_t, char *> free_;
    std::map<char *, size_t> used_;
    size_t held_ = 0;
};

template <class K>
class ThrustSort final : public DeviceRival {
  public:
    explicit ThrustSort(bool pairs) : pairs_(pairs) {}

    bool temp_bytes(const Buffers &b, size_t *bytes, std::string *) override {
        /* Thrust sorts primitive keys with CUB's radix sort into a second
         * copy of keys (and values): an estimate, since it cannot be asked. */
        const size_t per = b.key_bytes + (pairs_ ? sizeof(uint32_t) : 0);
        *bytes = b.n * per + b.n * per / 16 + ((size_t)64 << 20);
        return true;
    }
    bool prepare(const Buffers &, std::string *) override { return true; }
    bool run(const Buffers &b, std::string *) override {
        thrust::device_ptr<K> k((K *)b.keys_work);
        if (pairs_) {
            thrust::device_ptr<uint32_t> v((uint32_t *)b.vals_work);
            thrust::sort_by_key(thrust::cuda::par(alloc_).on(b.stream), k, k + b.n, v);
        } else {
            thrust::sort(thrust::cuda::par(alloc_).on(b.stream), k, k + b.n);
        }
        return true;
    }
    std::string note() const override {
        return strprintf("caching allocator held %zu bytes (allocated in warm-up)", alloc_.held());
    }

  private:
    bool pairs_;
    CachingAllocator alloc_;
};

} // namespace

std::unique_ptr<DeviceRival> make_thrust(const Regime &r, const RivalEnv &, std::string *why) {
    if (r.segmented()) {
        *why = "whole-array sort";
        return nullptr;
    }
    if (wide_values_refused(r, why)) return nullptr;
    return make_typed<ThrustSort>(r.dtype, r.pairs());
}

} // namespace wsb
