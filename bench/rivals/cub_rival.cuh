/*
 * cub_rival.cuh - what every CUB rival does around its one CUB call: ask
 * the temp-storage size with a null pointer, allocate it once outside
 * timing, then make the call. Subclasses supply call() and, for the
 * DoubleBuffer entry points, where the result landed.
 */
#ifndef WSB_RIVALS_CUB_RIVAL_CUH
#define WSB_RIVALS_CUB_RIVAL_CUH

#include "rivals/rival.h"

#include <climits>

#include <cub/util_type.cuh>

namespace wsb {

class CubRival : public DeviceRival {
  public:
    bool temp_bytes(const Buffers &b, size_t *bytes, std::string *err) override {
        if (b.n > (size_t)INT_MAX) {
            *err = n_limit_;
            return false;
        }
        rewind(b);
        size_t t = 0;
        cudaError_t e = call(nullptr, t, b);
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            *err = "temp size query failed: " + cuda_error_text(e);
            return false;
        }
        *bytes = t;
        return true;
    }

    bool prepare(const Buffers &b, std::string *err) override {
        size_t t = 0;
        if (!temp_bytes(b, &t, err)) return false;
        cudaError_t e = temp_.allocate(t);
        if (e != cudaSuccess) {
            *err = strprintf("temp storage of %zu bytes: %s", t, cuda_error_text(e).c_str());
            return false;
        }
        temp_size_ = t;
        return true;
    }

    bool run(const Buffers &b, std::string *err) override {
        size_t t = temp_size_;
        cudaError_t e = call(temp_.get(), t, b);
        if (e != cudaSuccess) {
            *err = std::string(api_) + ": " + cuda_error_text(e);
            return false;
        }
        return true;
    }

  protected:
    /* api names the CUB entry in errors; n_limit says why n > INT_MAX is refused. */
    CubRival(bool pairs, const char *api, const char *n_limit)
        : pairs_(pairs), api_(api), n_limit_(n_limit) {}
    /* The CUB call; a size query when temp is null. */
    virtual cudaError_t call(void *temp, size_t &bytes, const Buffers &b) = 0;
    /* Resets per-run state before a size query or a run. */
    virtual void rewind(const Buffers &) {}

    bool pairs_;

  private:
    const char *api_;
    const char *n_limit_;
    DeviceMemory temp_;
    size_t temp_size_ = 0;
};

/* Rivals on cub::DoubleBuffer: CUB may leave the result in the alternate
 * buffers, so the double buffers are rewound before every run. */
template <class K, class V>
class CubDoubleBufferRival : public CubRival {
  public:
    void before_run(const Buffers &b) override { rewind(b); }
    const void *out_keys(const Buffers &) const override { return keys_.d_buffers[keys_.selector]; }
    const void *out_vals(const Buffers &) const override { return vals_.d_buffers[vals_.selector]; }

  protected:
    using CubRival::CubRival;
    void rewind(const Buffers &b) override {
        keys_ = cub::DoubleBuffer<K>((K *)b.keys_work, (K *)b.keys_alt);
        vals_ = cub::DoubleBuffer<V>((V *)b.vals_work, (V *)b.vals_alt);
    }

    cub::DoubleBuffer<K> keys_;
    cub::DoubleBuffer<V> vals_;
};

} // namespace wsb

#endif /* WSB_RIVALS_CUB_RIVAL_CUH */
