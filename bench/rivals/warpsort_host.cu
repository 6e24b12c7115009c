/*
 * warpsort_host.cu - rivals on host arrays: warpsort-host (the CUDA backend
 * handed host memory: its pipeline stages the array through the device,
 * or sorts it out of core under regime.device_budget) and warpsort-cpu
 * (the CPU backend, all cores). Synchronous calls, timed by the wall clock.
 */
#include "rivals/factories.h"
#include "rivals/warpsort_status.h"

#include <utility>
#include <vector>

namespace wsb {
namespace {

class WarpsortHost final : public HostRival {
  public:
    WarpsortHost(warpsort_backend_t backend, const RivalEnv &env, uint64_t budget,
                 std::vector<int> devices = {}, int device_count = 0)
        : backend_(backend), device_(env.device), budget_(budget), devices_(std::move(devices)),
          device_count_(device_count) {}
    ~WarpsortHost() override { warpsort_destroy(ctx_); }

    bool prepare(const HostArrays &, std::string *err) override {
        if (ctx_) return true;
        warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
        cfg.backend = backend_;
        cfg.device = device_;
        cfg.device_budget_bytes = (size_t)budget_;
        cfg.devices = devices_.empty() ? nullptr : devices_.data();
        cfg.device_count = device_count_;
        warpsort_status_t st = warpsort_create(&ctx_, &cfg);
        if (st != WARPSORT_OK) {
            ctx_ = nullptr;
            *err = "warpsort_create: " + warpsort_status_text(st, nullptr) + ": " +
                   warpsort_create_error();
            return false;
        }
        if (warpsort_get_backend(ctx_) != backend_) {
            *err = "warpsort_create returned a context on another backend";
            return false;
        }
        return true;
    }

    bool run(const HostArrays &h, std::string *err) override {
        const Regime &r = h.regime;
        const warpsort_dtype_t dt = dtype_info(r.dtype).ws;
        const unsigned flags = WARPSORT_ASCENDING | (r.stable ? WARPSORT_STABLE : 0u);
        warpsort_status_t st = r.pairs() ? warpsort_sort_pairs(ctx_, h.keys, h.vals, h.n, dt,
                                                               (size_t)r.value_bytes, flags)
                                         : warpsort_sort(ctx_, h.keys, h.n, dt, flags);
        if (st != WARPSORT_OK) {
            *err = (r.pairs() ? "warpsort_sort_pairs: " : "warpsort_sort: ") +
                   warpsort_status_text(st, ctx_);
            return false;
        }
        return true;
    }

    std::string note() const override {
        if (backend_ == WARPSORT_BACKEND_CPU) return "CPU backend";
        std::string devs;
        if (device_count_ == WARPSORT_ALL_DEVICES) devs = "devices: all";
        for (size_t i = 0; i < devices_.size(); ++i)
            devs += (i ? "," : "devices ") + std::to_string(devices_[i]);
        std::string budget =
            budget_ ? strprintf("device budget %llu MiB", (unsigned long long)(budget_ >> 20)) : "";
        if (!devs.empty() && !budget.empty()) budget += " each";
        return devs.empty() ? budget : budget.empty() ? devs : devs + ", " + budget;
    }

  private:
    warpsort_backend_t backend_;
    int device_;
    uint64_t budget_;
    std::vector<int> devices_; /* config devices; empty with device_count_ 0 or ALL */
    int device_count_;
    warpsort_context_t *ctx_ = nullptr;
};

} // namespace

std::unique_ptr<HostRival> make_warpsort_host(const Regime &r, const RivalEnv &env,
                                              std::string *why) {
    if (r.segmented()) {
        *why = "warpsort has no segmented sort yet";
        return nullptr;
    }
    return std::unique_ptr<HostRival>(
        new WarpsortHost(WARPSORT_BACKEND_CUDA, env, r.device_budget));
}

std::unique_ptr<HostRival> make_warpsort_host_devices(const Regime &r, const RivalEnv &env,
                                                      const std::vector<int> &devices,
                                                      int device_count, std::string *why) {
    if (r.segmented()) {
        *why = "warpsort has no segmented sort yet";
        return nullptr;
    }
    return std::unique_ptr<HostRival>(
        new WarpsortHost(WARPSORT_BACKEND_CUDA, env, r.device_budget, devices, device_count));
}

std::unique_ptr<HostRival> make_warpsort_cpu(const Regime &r, const RivalEnv &env,
                                             std::string *why) {
    if (r.segmented()) {
        *why = "whole-array sort";
        return nullptr;
    }
    return std::unique_ptr<HostRival>(new WarpsortHost(WARPSORT_BACKEND_CPU, env, 0));
}

} // namespace wsb
