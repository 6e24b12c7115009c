/*
 * copy_sort_copy.cu - a device rival on host arrays, as a user without a
 * host-array sort would run it: synchronous cudaMemcpy in, the device sort
 * on the harness's stream, synchronous cudaMemcpy out (the result copied
 * from wherever the rival left it). What warpsort did with host arrays
 * before its pipeline, and CUB's way; timed whole by the wall clock.
 */
#include "rivals/factories.h"

namespace wsb {
namespace {

class CopySortCopy final : public HostRival {
  public:
    CopySortCopy(std::unique_ptr<DeviceRival> rv, const Regime &r, cudaStream_t stream)
        : rv_(std::move(rv)) {
        b_.regime = r;
        b_.key_bytes = r.key_bytes();
        b_.value_bytes = (size_t)r.value_bytes;
        b_.stream = stream;
    }

    bool prepare(const HostArrays &h, std::string *err) override {
        b_.n = h.n;
        const size_t kb = h.n * b_.key_bytes, vb = h.n * b_.value_bytes;
        cudaError_t e = keys_.allocate(kb);
        if (e == cudaSuccess) e = alt_.allocate(kb);
        if (e == cudaSuccess && vb) e = vals_.allocate(vb);
        if (e == cudaSuccess && vb) e = vals_alt_.allocate(vb);
        if (e != cudaSuccess) {
            *err = "device buffers: " + cuda_error_text(e);
            return false;
        }
        b_.keys_work = keys_.get();
        b_.keys_alt = alt_.get();
        b_.vals_work = vb ? vals_.get() : nullptr;
        b_.vals_alt = vb ? vals_alt_.get() : nullptr;
        return rv_->prepare(b_, err);
    }

    bool run(const HostArrays &h, std::string *err) override {
        const size_t kb = h.n * b_.key_bytes, vb = h.n * b_.value_bytes;
        WSB_CUDA(cudaMemcpy(b_.keys_work, h.keys, kb, cudaMemcpyHostToDevice));
        if (vb) WSB_CUDA(cudaMemcpy(b_.vals_work, h.vals, vb, cudaMemcpyHostToDevice));
        rv_->before_run(b_);
        if (!rv_->run(b_, err)) return false;
        cudaError_t e = cudaStreamSynchronize(b_.stream);
        if (e != cudaSuccess) {
            *err = "while sorting: " + cuda_error_text(e);
            return false;
        }
        if (!rv_->finish(b_, err)) return false;
        WSB_CUDA(cudaMemcpy(h.keys, rv_->out_keys(b_), kb, cudaMemcpyDeviceToHost));
        if (vb) WSB_CUDA(cudaMemcpy(h.vals, rv_->out_vals(b_), vb, cudaMemcpyDeviceToHost));
        return true;
    }

    std::string note() const override {
        const std::string n = rv_->note();
        return "cudaMemcpy in, device sort, cudaMemcpy out" + (n.empty() ? "" : "; " + n);
    }

  private:
    std::unique_ptr<DeviceRival> rv_;
    Buffers b_;
    DeviceMemory keys_, alt_, vals_, vals_alt_;
};

} // namespace

std::unique_ptr<HostRival> make_copy_sort_copy(const RivalInfo &device_rival, const Regime &r,
                                               const RivalEnv &env, std::string *why) {
    if (device_rival.place != RivalPlace::Device) {
        *why = std::string(device_rival.name) + " is not a device rival";
        return nullptr;
    }
    Regime dev = r;
    dev.memory = Memory::Device;
    dev.device_budget = 0;
    std::unique_ptr<DeviceRival> rv = device_rival.make_device(dev, env, why);
    if (!rv) return nullptr;
    return std::unique_ptr<HostRival>(new CopySortCopy(std::move(rv), dev, env.stream));
}

} // namespace wsb
