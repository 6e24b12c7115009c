/*
 * host_timeline.cu - the host mode's --timeline: one pinned and one
 * pageable sort of N u32 keys (after an untraced warm-up of each), then two
 * sorts of --ooc-n pageable keys under --ooc-budget (calls 2 and 3; none:
 * budget-free), and with --devices two more on the device list (calls 4 and
 * 5, --ooc-budget on each device; budget-free, in core across the devices
 * when their shares fit), with the library's own trace on:
 * WARPSORT_TRACE=FILE makes every host-array call append its spans to FILE
 * (call,lane,what,start_ms,end_ms; lanes "dev<D> ...", every worker's
 * device), drawn by bench/plot.py --timeline. Every traced output is
 * verified (HostVerifier).
 */
#include "modes/host.h"

#include "core/input.h"
#include "core/timing.h"
#include "core/verify.h"
#include "modes/mode.h"
#include "rivals/factories.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace wsb {
namespace {

/* One sort of in (restored from pristine) by hr: its wall time, or -1 with
 * the reason printed if it failed or its output is wrong. */
double traced_sort(HostRival &hr, const Regime &r, size_t n, const void *pristine, void *keys,
                   const char *what) {
    HostArrays h;
    h.regime = r;
    h.n = n;
    h.keys = keys;
    std::memcpy(keys, pristine, n * r.key_bytes());
    std::string err;
    const double t0 = wall_ms();
    const bool ok = hr.run(h, &err);
    const double ms = wall_ms() - t0;
    const VerifyResult vr = ok ? HostVerifier(r, n, pristine).check(keys, nullptr) : VerifyResult();
    if (!ok || !vr.ok()) {
        std::fprintf(stderr, "timeline: %s: %s\n", what, ok ? vr.describe().c_str() : err.c_str());
        return -1;
    }
    return ms;
}

/* Warm-up (untraced) and one traced call each of pinned and pageable keys. */
bool trace_in_core(const HostOptions &o, const RivalEnv &env) {
    Regime r;
    const size_t n = (size_t)o.timeline_n, bytes = n * r.key_bytes();
    HostMemory pristine, pinned, pageable;
    if (!pristine.allocate(bytes, false) || !pinned.allocate(bytes, true) ||
        !pageable.allocate(bytes, false))
        throw BenchError("timeline: host allocation of 3 x " + gib((double)bytes));
    generate_input_host(r, n, o.seed, pristine.get());
    for (int traced = 0; traced < 2; ++traced) {
        /* The library reads its test hooks when a context is created: the
         * traced pass gets a context of its own, made after the variable. */
        if (traced && setenv("WARPSORT_TRACE", o.trace.c_str(), 1) != 0)
            throw BenchError("setenv failed");
        std::string why;
        std::unique_ptr<HostRival> hr = make_warpsort_host(r, env, &why);
        HostArrays h;
        if (!hr || !hr->prepare(h, &why)) throw BenchError("timeline: warpsort-host: " + why);
        const double a = traced_sort(*hr, r, n, pristine.get(), pinned.get(), "pinned");
        const double b = traced_sort(*hr, r, n, pristine.get(), pageable.get(), "pageable");
        if (a < 0 || b < 0) return false;
        if (traced)
            std::printf("timeline: n=%zu call 0 pinned %.2f ms, call 1 pageable %.2f ms\n", n, a,
                        b);
    }
    return true;
}

/* Two traced out-of-core calls on one device (the first also faults its
 * host scratch in, as does the first of a fresh context on the device list,
 * which also starts the other devices' contexts), then two on the device
 * list when --devices is given; WARPSORT_TRACE is set, so the contexts made
 * here trace. */
bool trace_out_of_core(const HostOptions &o, const RivalEnv &env) {
    Regime r;
    r.device_budget = o.ooc_budget;
    const size_t n = (size_t)o.ooc_n, bytes = n * r.key_bytes();
    HostMemory pristine, keys;
    if (!pristine.allocate(bytes, false) || !keys.allocate(bytes, false))
        throw BenchError("timeline: host allocation of 2 x " + gib((double)bytes));
    generate_input_host(r, n, o.seed, pristine.get());
    int call = 2;
    for (int multi = 0; multi < (o.device_count ? 2 : 1); ++multi) {
        std::string why;
        std::unique_ptr<HostRival> hr =
            multi ? make_warpsort_host_devices(r, env, o.devices, o.device_count, &why)
                  : make_warpsort_host(r, env, &why);
        HostArrays h;
        if (!hr || !hr->prepare(h, &why)) throw BenchError("timeline: warpsort-host: " + why);
        const std::string where = multi ? "devices " + o.devices_label : "one device";
        for (int i = 0; i < 2; ++i, ++call) {
            const double ms = traced_sort(*hr, r, n, pristine.get(), keys.get(), "out of core");
            if (ms < 0) return false;
            std::printf("timeline: call %d on %s, n=%zu, budget %s a device: %.2f ms\n", call,
                        where.c_str(), n,
                        o.ooc_budget
                            ? strprintf("%llu bytes", (unsigned long long)o.ooc_budget).c_str()
                            : "none",
                        ms);
        }
    }
    return true;
}

} // namespace

int run_host_timeline(const HostOptions &o) {
    Gpu g;
    std::string why;
    if (!open_gpu(g, o.device, &why)) {
        std::fprintf(stderr, "warpsort_bench host: %s\n", why.c_str());
        return kExitHarness;
    }
    const RivalEnv env = {g.device, g.stream};
    std::remove(o.trace.c_str()); /* the library appends */
    bool ok = trace_in_core(o, env);
    if (ok && o.ooc_n) ok = trace_out_of_core(o, env);
    if (unsetenv("WARPSORT_TRACE") != 0) throw BenchError("unsetenv failed");
    std::printf("trace: %s\n", o.trace.c_str());
    return ok ? kExitOk : kExitRowFailed;
}

} // namespace wsb
