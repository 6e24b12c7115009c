/*
 * topk.cu - the topk mode (issue 24): the k largest (or smallest) keys of
 * one array or of every row, with their indices, by warpsort_topk /
 * warpsort_topk_rows against a full CUB sort then the first k
 * (topk_rivals.cu). Device memory, CUDA events around each call, the L2
 * flushed and the outputs poisoned before every run, median of repeats
 * after warm-up, every run's output checked (topk_check.cu). The default
 * cases are the issue's speed targets; bench/torch_topk.py times
 * torch.topk on the same shapes.
 */
#include "modes/topk.h"

#include "core/cli.h"
#include "core/input.h"
#include "core/run_info.h"
#include "modes/mode.h"

#include <algorithm>
#include <cstdio>
#include <new>

namespace wsb {

extern bool g_topk_no_workspace; /* topk_rivals.cu */

namespace {

const char *const kUsage =
    "usage: warpsort_bench topk [selection] [settings]\n"
    "\n"
    "Top-k of device arrays: warpsort_topk / warpsort_topk_rows against a full CUB\n"
    "sort of (key, index) followed by taking the first k (of the array or of each\n"
    "row). CUDA events, L2 flushed and outputs poisoned before every run, median of\n"
    "--repeat after --warmup; every output checked on the device (every row) and\n"
    "against a host reference (the whole array, or --check-rows sampled rows).\n"
    "\n"
    "default cases (the targets of issue 24; --dtype alone filters them):\n"
    "  f32 2^24 keys, k = 1,8,32,100,256,1024,4096,65536;  f32 2^28, k = 100;\n"
    "  f32 rows 4096x4096 k=32, 1024x16384 k=128, 8192x128000 k=100;\n"
    "  f32 short rows 524288x32 k=8, 65536x256 k=8;\n"
    "  u64 and f64 2^24, k = 100 and 4096; rows 4096x4096 k=32, 1024x16384 k=128\n"
    "selection (any of --n / --rows / --k: the product dtype x shape x k instead):\n"
    "  --dtype LIST        u32,f32,u64,f64 or all (default f32 with --n/--rows/--k)\n"
    "  --n LIST            single arrays of these sizes (1000, 10M, 2^24)\n"
    "  --rows LIST         matrices ROWSxLEN, e.g. 4096x4096,8192x128000\n"
    "  --k LIST            k values (default 100); cases with k > row length are left out\n"
    "  --smallest          the k smallest, ascending (default: the k largest, descending)\n"
    "  --index-bytes 4|8   index width (default 4: uint32_t)\n"
    "  --dist LIST         input distribution(s), as the device mode (default random)\n"
    "  --rivals LIST       warpsort,cub-sort-k,cub-segsort-k or all (default all)\n"
    "settings:\n"
    "  --repeat N          timed repeats per row (default 7)\n"
    "  --warmup N          untimed (but checked) runs before them (default 1, >= 1)\n"
    "  --check-rows N      rows checked against the host reference (default 64; the\n"
    "                      device check covers every row)\n"
    "  --no-workspace      warpsort uses its context's cached workspace instead of a\n"
    "                      caller workspace (warpsort_set_workspace)\n"
    "  --no-flush-l2       do not flush L2 before each run\n"
    "  --seed N            input generator seed (default 20240601)\n"
    "  --device N          CUDA device (default 0)\n"
    "  --json PATH         results file (default ./bench-topk-<UTC date>.json)\n"
    "  --no-json           write no results file\n"
    "  --list              print the planned rows and exit (needs no GPU)\n"
    "  --help              this text\n"
    "\n"
    "exit status: 0 all rows ok or skipped, 1 some row FAILED or errored, 2 bad\n"
    "arguments, 3 the harness could not run.\n";

/* repeat, warmup, seed, device, json_path, no_json, list_only, flush_l2:
 * CommonOptions. */
struct Options : CommonOptions {
    std::vector<bool> dtypes = {false, true, false, false};
    bool dtype_set = false;
    std::vector<size_t> ns, ks;
    std::vector<std::pair<size_t, size_t>> shapes; /* rows, len */
    std::vector<bool> dists = std::vector<bool>(kNumDists, false);
    std::vector<bool> rivals;
    bool largest = true;
    size_t index_bytes = 4;
    size_t check_rows = 64;
};

std::vector<std::string> rival_names() {
    std::vector<std::string> v;
    for (const TopkRivalInfo &r : topk_rivals()) v.push_back(r.name);
    return v;
}

std::pair<size_t, size_t> parse_shape(const std::string &flag, const std::string &v) {
    const size_t x = v.find('x');
    if (x == std::string::npos)
        usage_error(flag + ": expected ROWSxLEN such as 4096x4096, got '" + v + "'");
    return {(size_t)parse_size(flag, v.substr(0, x)), (size_t)parse_size(flag, v.substr(x + 1))};
}

/* The topk mode's own flags; false if a is not one of them. */
bool parse_topk_flag(const std::string &a, ArgReader &args, Options &o) {
    if (a == "--dtype") {
        parse_names(a, args.value(), {"u32", "f32", "u64", "f64"}, &o.dtypes, "all");
        o.dtype_set = true;
    } else if (a == "--n") {
        for (const std::string &s : split_list(args.value()))
            o.ns.push_back((size_t)parse_size(a, s));
    } else if (a == "--rows") {
        for (const std::string &s : split_list(args.value())) o.shapes.push_back(parse_shape(a, s));
    } else if (a == "--k") {
        for (const std::string &s : split_list(args.value()))
            o.ks.push_back((size_t)parse_size(a, s));
    } else if (a == "--smallest") {
        args.no_value();
        o.largest = false;
    } else if (a == "--index-bytes") {
        const long long b = parse_int(a, args.value(), 4, 8);
        if (b != 4 && b != 8) usage_error("--index-bytes: 4 or 8");
        o.index_bytes = (size_t)b;
    } else if (a == "--dist") {
        std::vector<std::string> names;
        for (int s = 0; s < kNumDists; ++s) names.push_back(dist_name(kDists[s]));
        parse_names(a, args.value(), names, &o.dists, "all");
    } else if (a == "--rivals") {
        parse_names(a, args.value(), rival_names(), &o.rivals, "all");
    } else if (a == "--check-rows") {
        o.check_rows = (size_t)parse_int(a, args.value(), 1, 1 << 20);
    } else if (a == "--no-workspace") {
        args.no_value();
        g_topk_no_workspace = true;
    } else {
        return false;
    }
    return true;
}

Options parse(int argc, char **argv) {
    Options o;
    o.dists[dist_index(KEYGEN_RANDOM)] = true;
    o.rivals.assign(topk_rivals().size(), true);
    const CommonSpec spec = {kUsage,
                             kFlagRepeat | kFlagWarmup | kFlagSeed | kFlagDevice | kFlagJson |
                                 kFlagList | kFlagNoFlushL2,
                             1};
    parse_flags(argc, argv, spec, &o, [&o](const std::string &a, ArgReader &args) {
        return parse_topk_flag(a, args, o);
    });
    check_common_flags(o);
    return o;
}

TopkCase make_case(Dtype d, Dist dist, size_t rows, size_t len, size_t k) {
    TopkCase c;
    c.dtype = d;
    c.dist = dist;
    c.rows = rows;
    c.row_len = len;
    c.k = k;
    return c;
}

/* Cases grouped by input (dtype, dist, shape), k ascending within a group. */
std::vector<TopkCase> make_plan(const Options &o) {
    std::vector<TopkCase> plan;
    const size_t M = (size_t)1 << 24;
    for (int s = 0; s < kNumDists; ++s) {
        if (!o.dists[s]) continue;
        const Dist dist = kDists[s];
        if (o.ns.empty() && o.shapes.empty() && o.ks.empty()) { /* the issue's targets */
            auto add = [&](Dtype d, size_t rows, size_t len, std::vector<size_t> ks) {
                if (o.dtype_set && !o.dtypes[(int)d]) return;
                for (size_t k : ks) plan.push_back(make_case(d, dist, rows, len, k));
            };
            add(Dtype::F32, 1, M, {1, 8, 32, 100, 256, 1024, 4096, 65536});
            add(Dtype::F32, 1, (size_t)1 << 28, {100});
            add(Dtype::F32, 4096, 4096, {32});
            add(Dtype::F32, 1024, 16384, {128});
            add(Dtype::F32, 8192, 128000, {100});
            /* many short rows (e.g. routing over 32 or 256 experts) */
            add(Dtype::F32, 524288, 32, {8});
            add(Dtype::F32, 65536, 256, {8});
            for (Dtype d : {Dtype::U64, Dtype::F64}) {
                add(d, 1, M, {100, 4096});
                add(d, 4096, 4096, {32});
                add(d, 1024, 16384, {128});
            }
            continue;
        }
        std::vector<std::pair<size_t, size_t>> shapes;
        for (size_t n : o.ns) shapes.push_back({1, n});
        shapes.insert(shapes.end(), o.shapes.begin(), o.shapes.end());
        if (shapes.empty()) shapes.push_back({1, M});
        std::vector<size_t> ks = o.ks.empty() ? std::vector<size_t>{100} : o.ks;
        std::sort(ks.begin(), ks.end());
        for (int d = 0; d < kNumDtypes; ++d) {
            if (!o.dtypes[d]) continue;
            for (const auto &sh : shapes)
                for (size_t k : ks) {
                    if (k > sh.second) {
                        std::fprintf(stderr,
                                     "warpsort_bench topk: left out k = %zu above row length %zu\n",
                                     k, sh.second);
                        continue;
                    }
                    plan.push_back(make_case((Dtype)d, dist, sh.first, sh.second, k));
                }
        }
    }
    return plan;
}

std::string shape_label(const TopkCase &c) {
    const int l = exact_log2(c.row_len);
    if (c.rows > 1) return strprintf("%zux%zu", c.rows, c.row_len);
    return l >= 0 ? strprintf("2^%d", l) : strprintf("%zu", c.row_len);
}

bool rival_planned(const Options &o, size_t r, const TopkCase &c) {
    return o.rivals[r] && (c.rows > 1 || !topk_rivals()[r].rows_only);
}

std::string case_label(const TopkCase &c, bool largest) {
    return strprintf("%s %s %s%s k=%zu", dtype_info(c.dtype).name, dist_name(c.dist),
                     shape_label(c).c_str(), largest ? "" : " min", c.k);
}

JsonFields case_fields(const TopkCase &c, const Options &o) {
    JsonFields f;
    f.str("kind", "topk")
        .str("dtype", dtype_info(c.dtype).name)
        .str("dist", dist_name(c.dist))
        .integer("rows", (long long)c.rows)
        .integer("row_len", (long long)c.row_len)
        .integer("k", (long long)c.k)
        .str("order", o.largest ? "largest" : "smallest")
        .integer("key_bytes", dtype_info(c.dtype).bytes)
        .integer("index_bytes", (long long)o.index_bytes)
        .str("memory", "device");
    return f;
}

struct Context {
    Options opt;
    Gpu gpu;
    RunInfo info;
    std::vector<Row> rows;
    PhaseTimes ph;
    double copy_bw = 0, t_setup = 0;
    std::string json_path;
};

class TopkTrial final : public Trial {
  public:
    TopkTrial(Context &c, TopkRival &rv, const TopkInput &in, TopkChecker &chk)
        : c_(c), rv_(rv), in_(in), chk_(chk) {}
    void reset() override { /* poisoned outputs: a call that writes nothing fails */
        const size_t m = in_.c.rows * in_.c.k;
        WSB_CUDA(cudaMemsetAsync(rv_.out_keys(), 0xA5, m * (size_t)dtype_info(in_.c.dtype).bytes,
                                 in_.stream));
        WSB_CUDA(cudaMemsetAsync(rv_.out_indices(), 0xA5, m * in_.index_bytes, in_.stream));
        rv_.poison(in_);
        if (c_.opt.flush_l2) flush_l2(c_.gpu);
        WSB_CUDA(cudaStreamSynchronize(in_.stream));
    }
    bool run(double *ms, std::string *err) override {
        event_begin(c_.gpu);
        const double w0 = wall_ms();
        bool ok = rv_.run(in_, err);
        enqueue_ms_.push_back(wall_ms() - w0);
        const cudaError_t e = event_end(c_.gpu);
        if (ok && e != cudaSuccess) ok = false, *err = "while running: " + cuda_error_text(e);
        if (ok) ok = rv_.finish(in_, err);
        if (ok) *ms = event_ms(c_.gpu);
        return ok;
    }
    VerifyResult verify() override { return chk_.check(rv_.out_keys(), rv_.out_indices()); }
    /* The host's time in the timed calls (warm-ups included): for
     * asynchronous calls, the part of the events' time before the first
     * launch that the host path alone sets. */
    double enqueue_us_median() const {
        std::vector<double> t = enqueue_ms_;
        return t.empty() ? 0 : 1e3 * median_of(t);
    }

  private:
    std::vector<double> enqueue_ms_;
    Context &c_;
    TopkRival &rv_;
    const TopkInput &in_;
    TopkChecker &chk_;
};

size_t margin(const Gpu &g) { return ((size_t)256 << 20) + g.prop.totalGlobalMem / 100; }

Row time_rival(Context &c, const TopkRivalInfo &info, const TopkInput &in, TopkChecker &chk) {
    Row row = make_row(case_label(in.c, in.largest), case_fields(in.c, c.opt), in.c.n(), info.name);
    std::string why;
    std::unique_ptr<TopkRival> rv;
    try {
        rv = info.make(in, &why);
        if (!rv) {
            row.status = why.find("rows only") != std::string::npos ? RowStatus::NotApplicable
                                                                    : prepare_failure_status(why);
            row.note = why;
            return row;
        }
        size_t free_b = 0, total_b = 0;
        WSB_CUDA(cudaMemGetInfo(&free_b, &total_b));
        const size_t need = rv->bytes_needed(in);
        if (need + margin(c.gpu) > free_b) {
            row.status = RowStatus::Skipped;
            row.note = "memory: needs " + gib((double)need) + ", " + gib((double)free_b) + " free";
            return row;
        }
        if (!rv->prepare(in, &why)) {
            row.status = prepare_failure_status(why);
            row.note = "prepare: " + why;
        } else {
            row.timer = "cuda-events";
            TopkTrial trial(c, *rv, in, chk);
            if (measure(trial, c.opt.warmup, c.opt.repeat, row, 0, c.ph)) {
                row.model_bytes =
                    (double)in.c.n() * dtype_info(in.c.dtype).bytes; /* one read of the input */
                row.note = rv->note();
                row.host_checked = chk.sampled_rows() > 0;
                row.results.num("enqueue_us", trial.enqueue_us_median());
                fill_stats(row, c.copy_bw);
            }
        }
    } catch (const std::bad_alloc &) {
        row.status = RowStatus::Skipped;
        row.note = "out of memory (host)";
    }
    rv.reset();
    if (row.status != RowStatus::Ok) ensure_context_alive(c.gpu, row.rival);
    return row;
}

void emit(Context &c, Row row) {
    print_row(row);
    c.rows.push_back(std::move(row));
}

/* One input (dtype, dist, shape) and every case of it: plan[first, last). */
void run_group(Context &c, const std::vector<TopkCase> &plan, size_t first, size_t last) {
    const TopkCase &g = plan[first];
    const size_t n = g.n(), kb = (size_t)dtype_info(g.dtype).bytes;
    auto skip_all = [&](RowStatus st, const std::string &note) {
        for (size_t i = first; i < last; ++i)
            for (size_t r = 0; r < topk_rivals().size(); ++r) {
                if (!rival_planned(c.opt, r, plan[i])) continue;
                Row row = make_row(case_label(plan[i], c.opt.largest), case_fields(plan[i], c.opt),
                                   n, topk_rivals()[r].name);
                row.status = st;
                row.note = note;
                emit(c, row);
            }
    };
    size_t free_b = 0, total_b = 0;
    WSB_CUDA(cudaMemGetInfo(&free_b, &total_b));
    if (n * kb + margin(c.gpu) > free_b)
        return skip_all(RowStatus::Skipped, "memory: the input needs " + gib((double)(n * kb)));
    DeviceMemory keys;
    cudaError_t e = keys.allocate(n * kb);
    if (e != cudaSuccess) return skip_all(RowStatus::Skipped, "memory: " + cuda_error_text(e));
    const double t0 = wall_ms();
    Regime r;
    r.dtype = g.dtype;
    r.dist = g.dist;
    generate_keys(r, n, c.opt.seed, keys.get(), c.gpu.stream);
    WSB_CUDA(cudaStreamSynchronize(c.gpu.stream));
    TopkInput in;
    in.c = g;
    in.keys = keys.get();
    in.largest = c.opt.largest;
    in.index_bytes = c.opt.index_bytes;
    in.stream = c.gpu.stream;
    in.device = c.gpu.device;
    TopkChecker chk(in, c.opt.check_rows);
    c.t_setup += (wall_ms() - t0) * 1e-3;
    for (size_t i = first; i < last; ++i) {
        in.c = plan[i];
        const double t1 = wall_ms();
        chk.set_case(in);
        c.t_setup += (wall_ms() - t1) * 1e-3;
        for (size_t rv = 0; rv < topk_rivals().size(); ++rv)
            if (rival_planned(c.opt, rv, in.c)) emit(c, time_rival(c, topk_rivals()[rv], in, chk));
    }
}

bool same_input(const TopkCase &a, const TopkCase &b) {
    return a.dtype == b.dtype && a.dist == b.dist && a.rows == b.rows && a.row_len == b.row_len;
}

void list_plan(const Options &o, const std::vector<TopkCase> &plan) {
    size_t rows = 0;
    for (const TopkCase &c : plan) {
        std::string names;
        for (size_t r = 0; r < topk_rivals().size(); ++r)
            if (rival_planned(o, r, c))
                names += (names.empty() ? "" : ",") + std::string(topk_rivals()[r].name), ++rows;
        std::printf("%-34s %s\n", case_label(c, o.largest).c_str(), names.c_str());
    }
    std::printf("%zu cases, %zu rows\n", plan.size(), rows);
}

bool set_up(Context &c) {
    std::string why;
    if (!open_gpu(c.gpu, c.opt.device, &why)) {
        std::fprintf(stderr, "warpsort_bench topk: %s\n", why.c_str());
        return false;
    }
    collect_run_info(c.info, c.gpu, "topk");
    c.info.settings.integer("repeat", c.opt.repeat)
        .integer("warmup", c.opt.warmup)
        .integer("seed", (long long)c.opt.seed)
        .boolean("flush_l2", c.opt.flush_l2)
        .str("order", c.opt.largest ? "largest" : "smallest")
        .integer("index_bytes", (long long)c.opt.index_bytes)
        .integer("check_rows", (long long)c.opt.check_rows)
        .str("warpsort_workspace",
             g_topk_no_workspace ? "context" : "caller (warpsort_set_workspace)")
        .str("bytes_model", "model_bytes: one read of the input (n x key bytes)");
    print_run_header(c.info);
    const std::string st = topk_checker_self_test(c.gpu.stream, c.gpu.device);
    if (!st.empty()) {
        std::fprintf(stderr, "warpsort_bench topk: checker self-test FAILED: %s\n", st.c_str());
        return false;
    }
    std::printf(
        "checker self-test: ok (planted faults caught on the device and by the host reference)\n");
    c.copy_bw = record_copy_bandwidth(c.gpu, c.info);
    if (!c.opt.no_json) {
        c.json_path = c.opt.json_path.empty() ? default_json_path("topk") : c.opt.json_path;
        start_results(c.json_path, c.info);
    }
    return true;
}

} // namespace

int topk_main(int argc, char **argv) {
    const double t_start = wall_ms();
    Context c;
    c.opt = parse(argc, argv);
    const std::vector<TopkCase> plan = make_plan(c.opt);
    if (plan.empty()) usage_error("the selection is empty (no case left to run)");
    if (c.opt.list_only) {
        list_plan(c.opt, plan);
        return kExitOk;
    }
    if (!set_up(c)) return kExitHarness;
    std::printf("\n");
    print_table_header("Gkeys/s");
    int exit_code = kExitOk;
    try {
        for (size_t first = 0; first < plan.size();) {
            size_t last = first + 1;
            while (last < plan.size() && same_input(plan[first], plan[last])) ++last;
            run_group(c, plan, first, last);
            if (!c.json_path.empty()) write_results(c.json_path, c.info, c.rows);
            first = last;
        }
        c.info.aborted.clear();
    } catch (const BenchError &err) {
        c.info.aborted = err.what();
        std::fprintf(stderr, "\nwarpsort_bench topk: stopping: %s\n", err.what());
        exit_code = kExitHarness;
    }
    c.info.wall_s = (wall_ms() - t_start) * 1e-3;
    JsonFields phases;
    phases.num("rival_runs", c.ph.run)
        .num("verification", c.ph.verify)
        .num("resets", c.ph.reset)
        .num("inputs_and_host_references", c.t_setup);
    c.info.extra.raw("wall_s_by_phase", phases.object(2));
    const int bad = print_summary(c.rows, c.info.wall_s);
    if (bad && exit_code == kExitOk) exit_code = kExitRowFailed;
    if (!c.json_path.empty()) {
        write_results(c.json_path, c.info, c.rows);
        std::printf("results: %s\n", c.json_path.c_str());
    }
    return exit_code;
}

} // namespace wsb
