/*
 * host.cu - the host mode's rows: per (kind, memory, n) the input is made
 * once on the host (keygen), the bus limit measured, then every rival timed
 * through core/measure.h by the wall clock, its input restored before each
 * run and its output verified on the host after each run (HostVerifier).
 */
#include "modes/host.h"

#include "core/cli.h"
#include "core/input.h"
#include "core/measure.h"
#include "core/run_info.h"
#include "modes/mode.h"
#include "rivals/factories.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace wsb {
namespace {

struct HostContext {
    HostOptions opt;
    Gpu gpu;
    RunInfo info;
    std::vector<Row> rows;
    PhaseTimes ph;
    std::string json_path;
};

/* The input of one (regime, n) in host memory of the regime's kind. */
struct HostInput {
    Regime regime;
    size_t n = 0;
    HostMemory pristine, keys, vals;
    double bus_ms = 0;
};

class HostTrial final : public Trial {
  public:
    HostTrial(HostRival &hr, HostInput &in, const HostVerifier &ver) : hr_(hr), in_(in), ver_(ver) {
        h_.regime = in.regime;
        h_.n = in.n;
        h_.keys = in.keys.get();
        h_.vals = in.regime.pairs() ? in.vals.get() : nullptr;
    }
    void reset() override {
        /* On all cores: the out-of-core rows restore tens of GiB per run. */
        const size_t kb = in_.regime.key_bytes();
        unsigned char *dst = (unsigned char *)h_.keys;
        const unsigned char *src = (const unsigned char *)in_.pristine.get();
        parallel_for(in_.n, [&](size_t first, size_t count) {
            std::memcpy(dst + first * kb, src + first * kb, count * kb);
        });
        if (h_.vals) fill_iota_host(h_.vals, (size_t)in_.regime.value_bytes, in_.n);
    }
    bool run(double *ms, std::string *err) override {
        const double t0 = wall_ms();
        const bool ok = hr_.run(h_, err);
        *ms = wall_ms() - t0;
        return ok;
    }
    VerifyResult verify() override { return ver_.check(h_.keys, h_.vals); }
    const HostArrays &arrays() const { return h_; }

  private:
    HostRival &hr_;
    HostInput &in_;
    const HostVerifier &ver_;
    HostArrays h_;
};

/* H2D + D2H of the array by plain cudaMemcpy, median of repeat, through a
 * device buffer of at most a quarter of free memory (scaled up if smaller). */
double bus_ms(void *host, size_t bytes, int repeat) {
    size_t free_b = 0, total_b = 0;
    WSB_CUDA(cudaMemGetInfo(&free_b, &total_b));
    const size_t piece = std::min(bytes, free_b / 4);
    DeviceMemory d;
    WSB_CUDA(d.allocate(piece));
    std::vector<double> t;
    for (int r = 0; r < repeat; ++r) {
        const double t0 = wall_ms();
        WSB_CUDA(cudaMemcpy(d.get(), host, piece, cudaMemcpyHostToDevice));
        WSB_CUDA(cudaMemcpy(host, d.get(), piece, cudaMemcpyDeviceToHost));
        t.push_back(wall_ms() - t0);
    }
    return median_of(t) * (double)bytes / (double)piece;
}

/* "" or why the input does not fit in host memory. */
std::string make_input(HostContext &c, HostInput &in) {
    const Regime &r = in.regime;
    const size_t kb = in.n * r.key_bytes(), vb = in.n * (size_t)r.value_bytes;
    const bool pinned = r.memory == Memory::Pinned;
    if (3.0 * (double)(kb + vb) > 0.8 * host_memory_bytes()) return "host memory";
    if (!in.pristine.allocate(kb, false) || !in.keys.allocate(kb, pinned) ||
        (vb && !in.vals.allocate(vb, pinned)))
        return "host allocation";
    generate_input_host(r, in.n, c.opt.seed, in.pristine.get());
    /* Touches every page before timing copies, on all cores (64 GiB at --ooc-n 2^34). */
    unsigned char *dst = (unsigned char *)in.keys.get();
    const unsigned char *src = (const unsigned char *)in.pristine.get();
    parallel_for(kb,
                 [&](size_t first, size_t count) { std::memcpy(dst + first, src + first, count); });
    if (vb) fill_iota_host(in.vals.get(), (size_t)r.value_bytes, in.n);
    in.bus_ms = bus_ms(in.keys.get(), kb, c.opt.repeat);
    if (vb) in.bus_ms += bus_ms(in.vals.get(), vb, c.opt.repeat);
    std::printf("  bus limit %s n=%zu: %.3f ms (H2D + D2H by cudaMemcpy)\n",
                regime_label(r).c_str(), in.n, in.bus_ms);
    return std::string();
}

std::unique_ptr<HostRival> make_host_rival(const std::string &name, const Regime &r,
                                           const RivalEnv &env, std::string *why) {
    const bool copy = name.size() > 5 && name.compare(name.size() - 5, 5, "+copy") == 0;
    const RivalInfo *info = find_rival(copy ? name.substr(0, name.size() - 5) : name);
    if (!info) throw BenchError("no rival " + name);
    return copy ? make_copy_sort_copy(*info, r, env, why) : info->make_host(r, env, why);
}

/* Times hr on in (warmup, repeat) into row, with the bus figures. */
void time_host_row(HostContext &c, HostRival &hr, HostInput &in, const HostVerifier &ver,
                   int warmup, int repeat, Row &row) {
    std::string err;
    HostTrial trial(hr, in, ver);
    if (!hr.prepare(trial.arrays(), &err)) {
        row.status = prepare_failure_status(err);
        row.note = "prepare: " + err;
        return;
    }
    row.timer = "wall-clock";
    if (!measure(trial, warmup, repeat, row, 0, c.ph)) return;
    row.note = hr.note();
    row.results.num("bus_ms", in.bus_ms).num("pct_of_bus", 100.0 * in.bus_ms / row.median_ms);
}

void emit(HostContext &c, Row row) {
    print_row(row);
    c.rows.push_back(std::move(row));
    if (!c.json_path.empty()) write_results(c.json_path, c.info, c.rows);
}

/* One row: rival `name` (registry name, or DEVICE+copy) on in. */
Row host_row(HostContext &c, const std::string &name, const Regime &r, HostInput &in,
             const HostVerifier &ver, int warmup, int repeat, HostRival *reuse = nullptr) {
    Row row = make_row(regime_label(r), regime_fields(r), in.n, name);
    const RivalEnv env = {c.gpu.device, c.gpu.stream};
    std::string why;
    std::unique_ptr<HostRival> owned;
    HostRival *hr = reuse;
    if (!hr) {
        owned = make_host_rival(name, r, env, &why);
        hr = owned.get();
    }
    if (!hr) {
        row.status = RowStatus::NotApplicable;
        row.note = why;
        return row;
    }
    guard_rival_row(c.gpu, row, [&] { time_host_row(c, *hr, in, ver, warmup, repeat, row); });
    return row;
}

/* The rows of one (kind, memory, n). warpsort-cpu runs on pageable memory only. */
void run_input(HostContext &c, const Regime &r, size_t n) {
    std::vector<std::string> names;
    for (const std::string &name : c.opt.rivals)
        if (name != "warpsort-cpu" || r.memory == Memory::Pageable) names.push_back(name);
    HostInput in;
    in.regime = r;
    in.n = n;
    const std::string why = make_input(c, in);
    std::unique_ptr<HostVerifier> ver;
    if (why.empty()) ver.reset(new HostVerifier(r, n, in.pristine.get()));
    for (const std::string &name : names) {
        Row row = make_row(regime_label(r), regime_fields(r), n, name);
        const bool cpu = name == "warpsort-cpu";
        if (!why.empty() || (cpu && n > c.opt.cpu_max_n)) {
            row.status = RowStatus::Skipped;
            row.note = why.empty() ? strprintf("above --cpu-max-n %llu",
                                               (unsigned long long)c.opt.cpu_max_n)
                                   : why;
        } else {
            row = host_row(c, name, r, in, *ver, c.opt.warmup,
                           cpu ? c.opt.slow_repeat : c.opt.repeat);
        }
        emit(c, row);
    }
}

/* --devices: the out-of-core row of regime r (with or without a budget)
 * again on the device list, after a warm-up call (it starts the other
 * devices' contexts and rings); its note and results give the speedup over
 * the one-device row of the same run. */
void run_out_of_core_devices(HostContext &c, const Regime &r, HostInput &in,
                             const HostVerifier &ver, const Row &one_device, int repeat) {
    const RivalEnv env = {c.gpu.device, c.gpu.stream};
    std::string why;
    std::unique_ptr<HostRival> multi =
        make_warpsort_host_devices(r, env, c.opt.devices, c.opt.device_count, &why);
    if (!multi) throw BenchError("warpsort-host: " + why);
    Row row = host_row(c, "warpsort-host:devices=" + c.opt.devices_label, r, in, ver, 1, repeat,
                       multi.get());
    if (row.status == RowStatus::Ok && one_device.status == RowStatus::Ok) {
        const double speedup = one_device.median_ms / row.median_ms;
        row.note += strprintf("; %.2fx the one-device row", speedup);
        row.results.num("speedup_vs_one_device", speedup);
    }
    emit(c, row);
}

/* --ooc-n: u32 keys, pageable, sorted under the device budget (the first
 * call of a fresh context on its own row, then the calls after it), without
 * a budget, and by the CPU backend. */
void run_out_of_core(HostContext &c) {
    Regime r;
    r.memory = Memory::Pageable;
    HostInput in;
    in.regime = r;
    in.n = (size_t)c.opt.ooc_n;
    std::string why = make_input(c, in);
    Regime rb = r;
    rb.device_budget = c.opt.ooc_budget;
    if (!why.empty()) {
        Row row = make_row(regime_label(rb), regime_fields(rb), in.n, "warpsort-host");
        row.status = RowStatus::Skipped;
        row.note = why;
        return emit(c, row);
    }
    const HostVerifier ver(r, in.n, in.pristine.get());
    const RivalEnv env = {c.gpu.device, c.gpu.stream};
    std::unique_ptr<HostRival> budgeted = make_warpsort_host(rb, env, &why);
    if (!budgeted) throw BenchError("warpsort-host: " + why);
    Row first = host_row(c, "warpsort-host:first-call", rb, in, ver, 0, 1, budgeted.get());
    if (first.status == RowStatus::Ok)
        first.note += "; the first call of its context also faults its host scratch in";
    emit(c, first);
    /* --ooc-budget none: the budget-free rows alone. */
    const bool budget = rb.device_budget != 0;
    Row one_budgeted;
    if (budget) {
        one_budgeted = host_row(c, "warpsort-host", rb, in, ver, 0, std::max(2, c.opt.repeat / 2),
                                budgeted.get());
        emit(c, one_budgeted);
    }
    budgeted.reset();
    Row one_free =
        host_row(c, "warpsort-host", r, in, ver, budget ? 1 : 0, std::max(1, c.opt.repeat / 2));
    emit(c, one_free);
    if (c.opt.device_count) {
        if (budget)
            run_out_of_core_devices(c, rb, in, ver, one_budgeted, std::max(2, c.opt.repeat / 2));
        run_out_of_core_devices(c, r, in, ver, one_free, std::max(1, c.opt.repeat / 2));
    }
    if (std::find(c.opt.rivals.begin(), c.opt.rivals.end(), "warpsort-cpu") == c.opt.rivals.end())
        return;
    Row cpu = make_row(regime_label(r), regime_fields(r), in.n, "warpsort-cpu");
    cpu.status = RowStatus::Skipped;
    cpu.note = strprintf("above --cpu-max-n %llu", (unsigned long long)c.opt.cpu_max_n);
    emit(c, in.n > c.opt.cpu_max_n ? cpu
                                   : host_row(c, "warpsort-cpu", r, in, ver, 0, c.opt.slow_repeat));
}

std::vector<Regime> planned_regimes(const HostOptions &o) {
    std::vector<Regime> out;
    for (const Regime &k : o.kinds)
        for (int m = 0; m < 2; ++m)
            if (o.memory[(size_t)m]) {
                Regime r = k;
                r.memory = m ? Memory::Pinned : Memory::Pageable;
                out.push_back(r);
            }
    return out;
}

void list_plan(const HostOptions &o) {
    for (uint64_t n : o.sizes)
        for (const Regime &r : planned_regimes(o)) {
            std::string names;
            for (const std::string &name : o.rivals)
                if (name != "warpsort-cpu" || r.memory == Memory::Pageable)
                    names += (names.empty() ? "" : ",") + name;
            std::printf("%-26s n=%-11llu %s\n", regime_label(r).c_str(), (unsigned long long)n,
                        names.c_str());
        }
    if (o.ooc_n)
        std::printf(
            "u32 keys random pageable   n=%-11llu out of core under %llu bytes, budget-free, cpu\n",
            (unsigned long long)o.ooc_n, (unsigned long long)o.ooc_budget);
    if (o.ooc_n && o.device_count)
        std::printf("u32 keys random pageable   n=%-11llu the same on devices %s, under the "
                    "budget and budget-free\n",
                    (unsigned long long)o.ooc_n, o.devices_label.c_str());
}

/* Device, self-test, results file: false if the harness cannot run. */
bool set_up(HostContext &c) {
    std::string why;
    if (!open_gpu(c.gpu, c.opt.device, &why)) {
        std::fprintf(stderr, "warpsort_bench host: %s\n", why.c_str());
        return false;
    }
    collect_run_info(c.info, c.gpu, "host");
    c.info.settings.integer("repeat", c.opt.repeat)
        .integer("warmup", c.opt.warmup)
        .integer("slow_repeat", c.opt.slow_repeat)
        .integer("seed", (long long)c.opt.seed)
        .integer("cpu_max_n", (long long)c.opt.cpu_max_n)
        .str("bus_limit", "H2D + D2H of the array by plain cudaMemcpy, median of repeat");
    print_run_header(c.info);
    const std::string st = verifier_self_test(c.gpu.stream);
    if (!st.empty()) {
        std::fprintf(stderr, "warpsort_bench host: verifier self-test FAILED: %s\n", st.c_str());
        return false;
    }
    if (!c.opt.no_json) {
        c.json_path = c.opt.json_path.empty() ? default_json_path("host") : c.opt.json_path;
        start_results(c.json_path, c.info);
    }
    return true;
}

} // namespace

int host_main(int argc, char **argv) {
    const double t_start = wall_ms();
    HostContext c;
    c.opt = parse_host_args(argc, argv);
    if (c.opt.timeline_n) return run_host_timeline(c.opt);
    if (c.opt.list_only) {
        list_plan(c.opt);
        return kExitOk;
    }
    if (!set_up(c)) return kExitHarness;
    print_table_header();
    int exit_code = kExitOk;
    try {
        for (uint64_t n : c.opt.sizes)
            for (const Regime &r : planned_regimes(c.opt)) run_input(c, r, (size_t)n);
        if (c.opt.ooc_n) run_out_of_core(c);
        c.info.aborted.clear();
    } catch (const BenchError &err) {
        c.info.aborted = err.what();
        std::fprintf(stderr, "\nwarpsort_bench host: stopping: %s\n", err.what());
        exit_code = kExitHarness;
    }
    c.info.wall_s = (wall_ms() - t_start) * 1e-3;
    if (print_summary(c.rows, c.info.wall_s) > 0 && exit_code == kExitOk)
        exit_code = kExitRowFailed;
    if (!c.json_path.empty()) {
        write_results(c.json_path, c.info, c.rows);
        std::printf("results: %s\n", c.json_path.c_str());
    }
    return exit_code;
}

} // namespace wsb
