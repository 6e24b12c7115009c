/*
 * device_run.cu - the device mode's run: for every (regime, n) the input is
 * generated once on the GPU and its reference built and checked; then each
 * rival is timed through core/measure.h (fresh input and L2 flush before
 * every run, outside timing; every run verified). The JSON is rewritten
 * after every (regime, n), so a run cut short still leaves its rows.
 */
#include "modes/device.h"

#include "core/cli.h"
#include "core/input.h"
#include "core/run_info.h"
#include "modes/device_trials.h"
#include "modes/mode.h"

#include <algorithm>
#include <climits>
#include <cstdio>

namespace wsb {
namespace {

struct Context {
    DeviceOptions opt;
    Gpu gpu;
    RunInfo info;
    std::vector<Row> rows;
    PhaseTimes ph;
    double t_setup = 0, t_host_check = 0, t_rival_setup = 0, copy_bw = 0;
    uint64_t full_checks = 0, equality_checks = 0;
    std::string json_path;
};

size_t memory_margin(const Gpu &g) { return ((size_t)256 << 20) + g.prop.totalGlobalMem / 100; }

size_t job_common_bytes(const Regime &r, size_t n, size_t num_segments) {
    size_t bytes = 4 * n * r.key_bytes() + 2 * n * (size_t)r.value_bytes +
                   Verifier::bytes_needed(r, n, num_segments);
    if (r.segmented())
        bytes += (num_segments + 1) * (sizeof(int) + (r.seg_max ? sizeof(uint64_t) : 0));
    return bytes;
}

void emit(Context &c, Row row) {
    print_row(row);
    c.rows.push_back(std::move(row));
}

void save_json(Context &c) {
    if (!c.json_path.empty()) write_results(c.json_path, c.info, c.rows);
}

/* n/a or skipped before anything runs: false with the row marked. */
bool rival_applies(const Context &c, const RivalInfo &info, int log2n, Row &row) {
    const int cap = info.cap == RivalCap::Seed   ? c.opt.seed_max_log
                    : info.cap == RivalCap::Host ? c.opt.cpu_max_log
                                                 : 99;
    if (log2n <= cap) return true;
    row.status = RowStatus::Skipped;
    row.note = strprintf("above --%s-max-log %d", info.cap == RivalCap::Seed ? "seed" : "cpu", cap);
    return false;
}

/* The independent host check of the last output, up to --host-check-max-log. */
void host_check_row(Context &c, HostCheck &hc, const void *keys, const void *vals, int log2n,
                    Row &row) {
    if (log2n > c.opt.host_check_max_log) return;
    const double t0 = wall_ms();
    const std::string h = hc.check(keys, vals);
    c.t_host_check += (wall_ms() - t0) * 1e-3;
    if (!h.empty()) {
        row.status = RowStatus::Failed;
        row.note = "host check (GPU verifier passed!): " + h;
    }
    row.host_checked = h.empty();
}

void time_device(Context &c, DeviceRival &rv, Buffers &b, Verifier &ver, HostCheck &hc, bool slow,
                 int log2n, Row &row) {
    std::string err;
    size_t temp = 0, free_b = 0, total_b = 0;
    if (!rv.temp_bytes(b, &temp, &err)) {
        row.status = RowStatus::Skipped;
        row.note = err;
        return;
    }
    WSB_CUDA(cudaMemGetInfo(&free_b, &total_b));
    if (temp + memory_margin(c.gpu) > free_b) {
        row.status = RowStatus::Skipped;
        row.note = "memory: needs " + gib((double)temp) + " of temp storage, " +
                   gib((double)free_b) + " free";
        return;
    }
    if (!rv.prepare(b, &err)) {
        row.status = prepare_failure_status(err);
        row.note = "prepare: " + err;
        return;
    }
    row.timer = "cuda-events";
    DeviceTrial trial(c.gpu, rv, b, ver, c.opt.flush_l2);
    if (!measure(trial, c.opt.warmup, slow ? c.opt.slow_repeat : c.opt.repeat, row, 0, c.ph))
        return;
    host_check_row(c, hc, rv.out_keys(b), rv.out_vals(b), log2n, row);
    if (row.status != RowStatus::Ok) return;
    row.model_bytes = rv.model_bytes(b);
    row.note = rv.note();
    fill_stats(row, c.copy_bw);
}

void time_host(Context &c, HostRival &hr, Buffers &b, Verifier &ver, HostCheck &hc, bool slow,
               int log2n, Row &row) {
    std::string err;
    HostArrays h;
    h.regime = b.regime;
    h.n = b.n;
    if (!hr.prepare(h, &err)) {
        row.status = prepare_failure_status(err);
        row.note = "prepare: " + err;
        return;
    }
    row.timer = "wall-clock";
    HostStagedTrial trial(hr, b, ver);
    if (!measure(trial, c.opt.warmup, slow ? c.opt.slow_repeat : c.opt.repeat, row, 0, c.ph))
        return;
    host_check_row(c, hc, b.keys_work, b.vals_work, log2n, row);
    if (row.status != RowStatus::Ok) return;
    row.note = "host memory, wall clock; " + hr.note();
}

/* The regime's fields, and for segmented regimes how many segments of
 * which mean length the input has (plot.py's x axis). */
JsonFields job_fields(const Regime &r, size_t n, size_t num_segments) {
    JsonFields f = regime_fields(r);
    if (r.segmented())
        f.integer("num_segments", (long long)num_segments)
            .num("mean_segment", num_segments ? (double)n / (double)num_segments : 0.0);
    return f;
}

Row time_rival(Context &c, int id, Buffers &b, Verifier &ver, HostCheck &hc, int log2n) {
    const RivalInfo &info = rival_registry()[(size_t)id];
    Row row =
        make_row(regime_label(b.regime), job_fields(b.regime, b.n, b.num_segments), b.n, info.name);
    if (!rival_applies(c, info, log2n, row)) return row;
    const RivalEnv env = {c.gpu.device, c.gpu.stream};
    std::string why;
    std::unique_ptr<DeviceRival> rv;
    std::unique_ptr<HostRival> hr;
    if (info.place == RivalPlace::Device)
        rv = info.make_device(b.regime, env, &why);
    else
        hr = info.make_host(b.regime, env, &why);
    if (!rv && !hr) {
        row.status = RowStatus::NotApplicable;
        row.note = why;
        return row;
    }
    ver.forget();
    guard_rival_row(c.gpu, row, [&] {
        if (rv)
            time_device(c, *rv, b, ver, hc, info.slow, log2n, row);
        else
            time_host(c, *hr, b, ver, hc, info.slow, log2n, row);
    });
    return row;
}

struct JobMemory {
    DeviceMemory pristine, work, alt, ref, vals_work, vals_alt, offsets, offsets64;
};

/* Allocates b's buffers in m: "" or why not. */
std::string allocate_job(JobMemory &m, Buffers &b) {
    const size_t kb = b.n * b.key_bytes, vb = b.n * b.value_bytes;
    cudaError_t e = cudaSuccess;
    auto get = [&e](DeviceMemory &dm, size_t bytes) -> void * {
        if (e == cudaSuccess) e = dm.allocate(bytes);
        return dm.get();
    };
    b.keys_pristine = get(m.pristine, kb);
    b.keys_work = get(m.work, kb);
    b.keys_alt = get(m.alt, kb);
    b.keys_ref = get(m.ref, kb);
    if (vb) b.vals_work = get(m.vals_work, vb);
    if (vb) b.vals_alt = get(m.vals_alt, vb);
    if (b.regime.segmented())
        b.seg_offsets = (int *)get(m.offsets, (b.num_segments + 1) * sizeof(int));
    if (b.regime.seg_max)
        b.seg_offsets64 = (uint64_t *)get(m.offsets64, (b.num_segments + 1) * sizeof(uint64_t));
    return e == cudaSuccess ? std::string() : "memory: " + cuda_error_text(e);
}

/* Every rival of the job gets a row with this status and note. */
void skip_job(Context &c, const Job &job, const std::vector<int> &ids, RowStatus st,
              const std::string &note, size_t num_segments = 1) {
    const size_t n = (size_t)1 << job.log2n;
    for (int id : ids) {
        Row row = make_row(regime_label(job.regime), job_fields(job.regime, n, num_segments), n,
                           rival_registry()[(size_t)id].name);
        row.status = st;
        row.note = note;
        emit(c, row);
    }
}

/* "" if the job's common buffers fit in free memory, else why not. */
std::string job_fits(Context &c, const Job &job, size_t num_segments) {
    const size_t n = (size_t)1 << job.log2n;
    size_t free_b = 0, total_b = 0;
    WSB_CUDA(cudaMemGetInfo(&free_b, &total_b));
    const size_t common = job_common_bytes(job.regime, n, num_segments);
    if (common + memory_margin(c.gpu) <= free_b) return std::string();
    return "memory: inputs, outputs and reference need " + gib((double)common) + ", " +
           gib((double)free_b) + " free";
}

void run_job(Context &c, const Job &job) {
    const std::vector<int> ids = rivals_for(c.opt, job);
    const size_t n = (size_t)1 << job.log2n;
    if (ids.empty()) return;
    if (job.regime.seg_size > n)
        return skip_job(c, job, ids, RowStatus::NotApplicable, "segment size above n");
    if (job.regime.segmented() && n > (size_t)INT_MAX)
        return skip_job(c, job, ids, RowStatus::Skipped,
                        "segmented: n above INT_MAX (CUB's int offsets)");
    /* Random lengths: the offsets on the host, drawn from the seed (equal
     * segments are made on the device by generate_input). */
    const std::vector<uint64_t> offsets =
        job.regime.seg_max ? segment_offsets(job.regime, n, c.opt.seed) : std::vector<uint64_t>();
    const size_t num_segments = job.regime.seg_max    ? offsets.size() - 1
                                : job.regime.seg_size ? n / job.regime.seg_size
                                                      : 1;
    std::string why = job_fits(c, job, num_segments);
    if (!why.empty()) return skip_job(c, job, ids, RowStatus::Skipped, why, num_segments);
    JobMemory m;
    Buffers b;
    b.regime = job.regime;
    b.n = n;
    b.key_bytes = job.regime.key_bytes();
    b.value_bytes = (size_t)job.regime.value_bytes;
    b.num_segments = num_segments;
    b.host_offsets = job.regime.seg_max ? offsets.data() : nullptr;
    b.stream = c.gpu.stream;
    if (!(why = allocate_job(m, b)).empty())
        return skip_job(c, job, ids, RowStatus::Skipped, why, num_segments);
    const double t0 = wall_ms();
    generate_input(b, c.opt.seed);
    Verifier ver(b);
    ver.hash_input();
    VerifyResult rr = ver.check_reference();
    HostCheck hc(b);
    if (rr.ok() && !job.regime.segmented() && job.log2n <= c.opt.host_check_max_log)
        rr.problem = hc.check(b.keys_ref, nullptr);
    c.t_setup += (wall_ms() - t0) * 1e-3;
    if (!rr.ok())
        return skip_job(c, job, ids, RowStatus::Failed,
                        "the reference (CUB radix sort of the input) failed verification: " +
                            rr.describe(),
                        num_segments);
    for (int id : ids) {
        const double before = c.ph.reset + c.ph.run + c.ph.verify + c.t_host_check, t1 = wall_ms();
        Row row = time_rival(c, id, b, ver, hc, job.log2n);
        const double after = c.ph.reset + c.ph.run + c.ph.verify + c.t_host_check;
        /* What the row's own accounting missed (setup, teardown) is rival setup. */
        c.t_rival_setup += std::max(0.0, (wall_ms() - t1) * 1e-3 - (after - before));
        emit(c, row);
    }
    c.full_checks += ver.full_checks;
    c.equality_checks += ver.equality_checks;
}

void list_plan(const DeviceOptions &o, const std::vector<Job> &plan) {
    for (const Job &j : plan) {
        std::string names;
        for (int id : rivals_for(o, j))
            names += (names.empty() ? "" : ",") + std::string(rival_registry()[(size_t)id].name);
        std::printf("%-30s 2^%-3d %s\n", regime_label(j.regime).c_str(), j.log2n, names.c_str());
    }
    std::printf("%zu (regime, n) jobs\n", plan.size());
}

JsonFields settings_of(const DeviceOptions &o) {
    JsonFields s;
    s.integer("repeat", o.repeat)
        .integer("slow_repeat", o.slow_repeat)
        .integer("warmup", o.warmup)
        .integer("seed", (long long)o.seed)
        .boolean("flush_l2", o.flush_l2)
        .integer("host_check_max_log", o.host_check_max_log)
        .integer("cpu_max_log", o.cpu_max_log)
        .integer("seed_max_log", o.seed_max_log)
        .str("thrust_allocator", "caching (allocated during warm-up, reused)")
        .str("bytes_model", "model_bytes: warpsort, the library's own plan (ws_plan_passes, "
                            "src/cuda/plan_report.h), passes listed in the note; seed sorts, "
                            "launches x 2 x n x item bytes (an upper bound)");
    return s;
}

/* Device, self-test, copy bandwidth, results file: false if the harness cannot run. */
bool set_up(Context &c, const std::string &mode) {
    std::string why;
    if (!open_gpu(c.gpu, c.opt.device, &why)) {
        std::fprintf(stderr, "warpsort_bench %s: %s\n", mode.c_str(), why.c_str());
        return false;
    }
    collect_run_info(c.info, c.gpu, mode);
    c.info.settings = settings_of(c.opt);
    print_run_header(c.info);
    const std::string st = verifier_self_test(c.gpu.stream);
    if (!st.empty()) {
        std::fprintf(stderr, "warpsort_bench %s: verifier self-test FAILED: %s\n", mode.c_str(),
                     st.c_str());
        return false;
    }
    std::printf("verifier self-test: ok (planted faults caught on GPU and host)\n");
    c.copy_bw = record_copy_bandwidth(c.gpu, c.info);
    if (!c.opt.no_json) {
        c.json_path = c.opt.json_path.empty() ? default_json_path(mode) : c.opt.json_path;
        start_results(c.json_path, c.info);
    }
    return true;
}

/* The summary on stdout and in the JSON; returns the exit status. */
int finish(Context &c, int exit_code, double wall_s) {
    if (exit_code == kExitOk) {
        size_t bytes = 0;
        const double end_bw = measure_copy_bw(c.gpu, &bytes);
        std::printf("copy bandwidth at the end: %.1f GB/s (start %.1f)\n", end_bw / 1e9,
                    c.copy_bw / 1e9);
        c.info.extra.num("copy_bandwidth_end_gb_per_s", end_bw / 1e9);
    }
    c.info.wall_s = wall_s;
    JsonFields phases;
    phases.num("rival_runs", c.ph.run)
        .num("verification", c.ph.verify)
        .num("input_resets", c.ph.reset)
        .num("setup_and_references", c.t_setup)
        .num("host_checks", c.t_host_check)
        .num("rival_setup_teardown", c.t_rival_setup);
    c.info.extra.raw("wall_s_by_phase", phases.object(2))
        .integer("runs_fully_checked", (long long)c.full_checks)
        .integer("runs_identical_to_a_verified_output", (long long)c.equality_checks);
    const int bad = print_summary(c.rows, wall_s);
    std::printf("wall time: rival runs %.1f s, verification %.1f s, input resets %.1f s, setup and "
                "references %.1f s, host checks %.1f s, rival setup/teardown %.1f s\n",
                c.ph.run, c.ph.verify, c.ph.reset, c.t_setup, c.t_host_check, c.t_rival_setup);
    std::printf("verified runs: %llu fully checked, %llu identical to a verified output\n",
                (unsigned long long)c.full_checks, (unsigned long long)c.equality_checks);
    if (bad > 0 && exit_code == kExitOk) exit_code = kExitRowFailed;
    if (c.json_path.empty()) return exit_code;
    save_json(c);
    std::printf("results: %s\n", c.json_path.c_str());
    return exit_code;
}

} // namespace

int run_device_mode(const DeviceMode &mode, int argc, char **argv) {
    const double t_start = wall_ms();
    Context c;
    c.opt = parse_device_args(mode, argc, argv);
    const std::vector<Job> plan = make_device_plan(c.opt);
    if (plan.empty()) usage_error("the selection is empty (no regime and size left to run)");
    if (c.opt.list_only) {
        list_plan(c.opt, plan);
        return kExitOk;
    }
    if (!set_up(c, mode.name)) return kExitHarness;
    std::printf("\n");
    print_table_header();
    int exit_code = kExitOk;
    try {
        for (const Job &job : plan) {
            run_job(c, job);
            save_json(c); /* keep what was measured if the run is cut short */
        }
        c.info.aborted.clear();
    } catch (const BenchError &err) {
        c.info.aborted = err.what();
        std::fprintf(stderr, "\nwarpsort_bench %s: stopping: %s\n", mode.name, err.what());
        exit_code = kExitHarness;
    }
    return finish(c, exit_code, (wall_ms() - t_start) * 1e-3);
}

} // namespace wsb
