/*
 * multi_gpu.cu - the multi-gpu mode (issue 27): one sort across every
 * visible GPU of this machine with warpsort_nccl (one process,
 * ncclCommInitAll, one host thread per GPU), against warpsort sorting the
 * same total on GPU 0 alone, and NCCL's own all-to-all of the same bytes
 * measured in the same run.
 *
 * Per row: n_total keys, n_total / p resident on each GPU (random by
 * default), sorted into the exact parts of warpsort_nccl_output_count.
 * Timing: CUDA events on every rank's stream around each call, after a
 * barrier of the host threads; a run's time is the slowest rank's; median
 * of --repeat after --warmup. The phases (agree, sample, partition, local
 * sort, splitters, exchange, merge) come from events the library records
 * at each phase's start (src/nccl/nccl_sort.h, ws_nccl_sort_timed); each
 * phase reports its slowest rank, and the row its route. Keys from 2^22 a
 * rank take the partition-first route (src/nccl/partition.cu): sample and
 * partition, then the exchange under the sorts of local-sort, so it has no
 * exchange phase of its own; WARPSORT_NCCL_ROUTE=sort-first measures the
 * other route. With two ranks the sort-first route merges under the exchange (chunk by
 * chunk, src/nccl/overlap.cu): "exchange" is then the exchange's wall time
 * with the merge running beside it, "merge" only the tail after the last
 * chunk, and "exchange+merge" (slowest rank) the two together, the figure
 * to compare with an exchange and a merge in sequence. The all-to-all
 * reference is one grouped ncclSend/ncclRecv of equal chunks, n_r / p keys
 * to every other rank, the bytes a uniform input's exchange moves. Every
 * result is checked on the host: part sizes, order within and across
 * ranks, and a multiset fingerprint against the input. NCCL_NVLS_ENABLE=0
 * is set unless the environment sets it.
 */
#include "modes/multi_gpu.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "core/cli.h"
#include "core/input.h"
#include "core/keybits.h"
#include "core/run_info.h"
#include "modes/mode.h"
#include "nccl/nccl_sort.h"
#include "warpsort_nccl.h"

namespace wsb {
namespace {

const char *const kUsage =
    "usage: warpsort_bench multi-gpu [settings]\n"
    "\n"
    "One sort across all visible GPUs (warpsort_nccl, one process, ncclCommInitAll):\n"
    "n_total keys, n_total / p on each GPU, into exact parts; against warpsort on GPU 0\n"
    "alone (the same keys) and NCCL's grouped send/recv all-to-all of the same bytes.\n"
    "CUDA events on every rank, the slowest rank per run, median of --repeat after\n"
    "--warmup; phases from the library's own events; every result checked on the host.\n"
    "Keys take the partition-first route from 2^22 a rank (WARPSORT_NCCL_ROUTE=sort-first\n"
    "for the other; the row's route says which ran).\n"
    "\n"
    "default rows (issue 27): u32 2^30 keys (2^29 per GPU on 2 GPUs), u64 2^29.\n"
    "  --dtype LIST        u32,f32,u64,f64 (with --n: every dtype x every n)\n"
    "  --n LIST            total keys (2^30, 100M, ...)\n"
    "  --dist NAME         input distribution (default random)\n"
    "  --descending        sort descending\n"
    "  --gpus N            use GPUs 0 .. N-1 (default all visible)\n"
    "  --no-baseline       skip the one-GPU warpsort row\n"
    "  --repeat N          timed runs per row (default 5)\n"
    "  --warmup N          untimed runs before them (default 1)\n"
    "  --seed N            input seed (default 20240601)\n"
    "  --json PATH         results file (default ./bench-multi-gpu-<UTC date>.json)\n"
    "  --no-json           write no results file\n"
    "  --list              print the planned rows and exit (needs no GPU)\n"
    "  --help              this text\n"
    "\n"
    "exit status: 0 all rows ok or skipped, 1 some row FAILED or errored, 2 bad\n"
    "arguments, 3 the harness could not run.\n";

/* repeat, warmup, seed, json_path, no_json, list_only: CommonOptions. */
struct Options : CommonOptions {
    Options() { repeat = 5; }
    std::vector<bool> dtypes = {false, false, false, false};
    bool dtype_set = false;
    std::vector<size_t> ns;
    Dist dist = KEYGEN_RANDOM;
    bool descending = false, baseline = true;
    int gpus = 0;
};

struct Plan {
    Dtype dtype;
    size_t n;
};

/* The multi-gpu mode's own flags; false if a is not one of them. */
bool parse_multi_gpu_flag(const std::string &a, ArgReader &args, Options &o) {
    if (a == "--dtype") {
        parse_names(a, args.value(), {"u32", "f32", "u64", "f64"}, &o.dtypes, "all");
        o.dtype_set = true;
    } else if (a == "--n") {
        for (const std::string &s : split_list(args.value()))
            o.ns.push_back((size_t)parse_size(a, s));
    } else if (a == "--dist") {
        const std::string v = args.value();
        if (!keygen_dist_from_name(v.c_str(), &o.dist)) usage_error("--dist: unknown '" + v + "'");
    } else if (a == "--descending") {
        args.no_value();
        o.descending = true;
    } else if (a == "--gpus") {
        o.gpus = (int)parse_int(a, args.value(), 1, 64);
    } else if (a == "--no-baseline") {
        args.no_value();
        o.baseline = false;
    } else {
        return false;
    }
    return true;
}

Options parse(int argc, char **argv) {
    Options o;
    const CommonSpec spec = {kUsage, kFlagRepeat | kFlagWarmup | kFlagSeed | kFlagJson | kFlagList,
                             0};
    parse_flags(argc, argv, spec, &o, [&o](const std::string &a, ArgReader &args) {
        return parse_multi_gpu_flag(a, args, o);
    });
    check_common_flags(o);
    return o;
}

std::vector<Plan> make_plan(const Options &o) {
    std::vector<Plan> plan;
    if (o.ns.empty()) {
        if (!o.dtype_set || o.dtypes[(int)Dtype::U32])
            plan.push_back({Dtype::U32, (size_t)1 << 30});
        if (!o.dtype_set || o.dtypes[(int)Dtype::U64])
            plan.push_back({Dtype::U64, (size_t)1 << 29});
        if (o.dtype_set && o.dtypes[(int)Dtype::F32]) plan.push_back({Dtype::F32, (size_t)1 << 30});
        if (o.dtype_set && o.dtypes[(int)Dtype::F64]) plan.push_back({Dtype::F64, (size_t)1 << 29});
        return plan;
    }
    for (int d = 0; d < kNumDtypes; ++d) {
        if (o.dtype_set ? !o.dtypes[d] : d != (int)Dtype::U32) continue;
        for (size_t n : o.ns) plan.push_back({(Dtype)d, n});
    }
    return plan;
}

/* Host threads meet here before every timed call, so the ranks start
 * together and no rank's time includes another's late start. */
class SpinBarrier {
  public:
    explicit SpinBarrier(int n) : n_(n) {}
    void wait() {
        const int gen = gen_.load();
        if (count_.fetch_add(1) + 1 == n_) {
            count_.store(0);
            gen_.fetch_add(1);
        } else {
            while (gen_.load() == gen) std::this_thread::yield();
        }
    }

  private:
    int n_;
    std::atomic<int> count_{0}, gen_{0};
};

/* Runs f(r) for every rank, rank r in its own host thread. */
template <class F>
void on_every_rank(int p, F f) {
    std::vector<std::thread> threads;
    for (int r = 1; r < p; ++r) threads.emplace_back(f, r);
    f(0);
    for (std::thread &t : threads) t.join();
}

struct Rank {
    int dev = 0;
    cudaStream_t s = nullptr;
    warpsort_context_t *ctx = nullptr;
    ncclComm_t comm = nullptr;
    ws_nccl_phase_events ph;
    cudaEvent_t start = nullptr, stop = nullptr;
    DeviceMemory in, out;
    size_t n_in = 0, cap = 0, n_out = 0;
    warpsort_status_t status = WARPSORT_OK;
    std::string error;
};

struct Context {
    Options opt;
    Gpu gpu; /* GPU 0, for the run's description and the baseline */
    RunInfo info;
    std::deque<Rank> ranks; /* a Rank owns device memory: never moved */
    std::vector<Row> rows;
    std::string json_path;
};

void set_up_ranks(Context &c) {
    int count = 0;
    WSB_CUDA(cudaGetDeviceCount(&count));
    const int p = c.opt.gpus ? c.opt.gpus : count;
    if (p > count) throw BenchError(strprintf("--gpus %d but only %d visible", p, count));
    for (int r = 0; r < p; ++r) c.ranks.emplace_back();
    std::vector<int> devs((size_t)p);
    for (int r = 0; r < p; ++r) devs[(size_t)r] = r;
    std::vector<ncclComm_t> comms((size_t)p);
    const ncclResult_t nr = ncclCommInitAll(comms.data(), p, devs.data());
    if (nr != ncclSuccess)
        throw BenchError(std::string("ncclCommInitAll: ") + ncclGetErrorString(nr));
    for (int r = 0; r < p; ++r) {
        Rank &k = c.ranks[(size_t)r];
        k.dev = r;
        k.comm = comms[(size_t)r];
        WSB_CUDA(cudaSetDevice(r));
        WSB_CUDA(cudaStreamCreateWithFlags(&k.s, cudaStreamNonBlocking));
        WSB_CUDA(cudaEventCreate(&k.start));
        WSB_CUDA(cudaEventCreate(&k.stop));
        for (cudaEvent_t &e : k.ph.ev) WSB_CUDA(cudaEventCreate(&e));
        warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
        cfg.backend = WARPSORT_BACKEND_CUDA;
        cfg.device = r;
        cfg.stream = k.s;
        if (warpsort_create(&k.ctx, &cfg) != WARPSORT_OK)
            throw BenchError(strprintf("no warpsort CUDA context on device %d", r));
    }
    WSB_CUDA(cudaSetDevice(0));
}

void tear_down_ranks(Context &c) {
    for (Rank &k : c.ranks) {
        (void)cudaSetDevice(k.dev);
        k.in.release();
        k.out.release();
        warpsort_destroy(k.ctx);
        ncclCommDestroy(k.comm);
        for (cudaEvent_t e : k.ph.ev) (void)cudaEventDestroy(e);
        (void)cudaEventDestroy(k.start);
        (void)cudaEventDestroy(k.stop);
        (void)cudaStreamDestroy(k.s);
    }
    (void)cudaSetDevice(0);
}

/* Items of rank r's input when n_total is spread as evenly as possible. */
size_t input_count(size_t n, int p, int r) { return warpsort_nccl_output_count(n, p, r); }

/*--- host check ---*/

struct Fingerprint {
    uint64_t sum = 0, mix = 0;
    void add(const Fingerprint &o) {
        sum += o.sum;
        mix ^= o.mix;
    }
};

Fingerprint fingerprint(const unsigned char *keys, size_t n, size_t kb) {
    Fingerprint all;
    std::mutex m;
    parallel_for(n, [&](size_t first, size_t count) {
        Fingerprint f;
        for (size_t i = first; i < first + count; ++i) {
            uint64_t b = 0;
            std::memcpy(&b, keys + i * kb, kb);
            const uint64_t m = keygen_mix(b);
            f.sum += m;
            f.mix ^= keygen_mix(m);
        }
        std::lock_guard<std::mutex> lock(m);
        all.add(f);
    });
    return all;
}

/* First position where ordered keys decrease, or n. */
size_t first_unsorted(const unsigned char *keys, size_t n, size_t kb, int kind, int desc) {
    std::atomic<size_t> bad{n};
    parallel_for(n, [&](size_t first, size_t count) {
        const size_t end = std::min(n, first + count + 1); /* overlap one to check the seam */
        uint64_t prev = 0;
        for (size_t i = first; i < end; ++i) {
            uint64_t b = 0;
            std::memcpy(&b, keys + i * kb, kb);
            const uint64_t o = ws_to_ordered(b, (unsigned)kb, kind, desc);
            if (i > first && o < prev) {
                size_t cur = bad.load();
                while (i < cur && !bad.compare_exchange_weak(cur, i)) {
                }
                return;
            }
            prev = o;
        }
    });
    return bad.load();
}

/* Checks the ranks' outputs against their inputs; "" if right. */
std::string check_result(Context &c, const Regime &reg, size_t n_total) {
    const size_t kb = reg.key_bytes();
    const int p = (int)c.ranks.size();
    const int kind = ws_dtype_kind((int)dtype_info(reg.dtype).ws);
    const int desc = c.opt.descending ? 1 : 0;
    std::vector<unsigned char> in(n_total * kb), out(n_total * kb);
    size_t at_in = 0, at_out = 0;
    for (int r = 0; r < p; ++r) {
        Rank &k = c.ranks[(size_t)r];
        WSB_CUDA(cudaSetDevice(k.dev));
        const size_t want = warpsort_nccl_output_count(n_total, p, r);
        if (k.n_out != want)
            return strprintf("rank %d holds %zu items, expected %zu", r, k.n_out, want);
        WSB_CUDA(cudaMemcpy(in.data() + at_in * kb, k.in.get(), k.n_in * kb, cudaMemcpyDefault));
        WSB_CUDA(
            cudaMemcpy(out.data() + at_out * kb, k.out.get(), k.n_out * kb, cudaMemcpyDefault));
        at_in += k.n_in;
        at_out += k.n_out;
    }
    WSB_CUDA(cudaSetDevice(0));
    const size_t bad = first_unsorted(out.data(), n_total, kb, kind, desc);
    if (bad < n_total) return strprintf("not sorted at global position %zu", bad);
    const Fingerprint a = fingerprint(in.data(), n_total, kb),
                      b = fingerprint(out.data(), n_total, kb);
    if (a.sum != b.sum || a.mix != b.mix) return "the output is not a permutation of the input";
    return "";
}

/*--- the runs ---*/

/* One collective call on every rank; fills each rank's status and phase
 * events, records start / stop around it. */
void sort_once(Context &c, const Regime &reg) {
    const int p = (int)c.ranks.size();
    SpinBarrier barrier(p);
    const unsigned flags = c.opt.descending ? WARPSORT_DESCENDING : WARPSORT_ASCENDING;
    on_every_rank(p, [&](int r) {
        Rank &k = c.ranks[(size_t)r];
        (void)cudaSetDevice(k.dev);
        barrier.wait();
        (void)cudaEventRecord(k.start, k.s);
        k.status =
            ws_nccl_sort_timed(k.ctx, k.comm, k.in.get(), nullptr, k.n_in, k.out.get(), nullptr,
                               k.cap, &k.n_out, dtype_info(reg.dtype).ws, 0, flags, k.s, &k.ph);
        (void)cudaEventRecord(k.stop, k.s);
        const cudaError_t e = cudaStreamSynchronize(k.s);
        k.error = k.status != WARPSORT_OK ? warpsort_last_error(k.ctx)
                  : e != cudaSuccess      ? cuda_error_text(e)
                                          : "";
        if (k.error.empty() && k.status == WARPSORT_OK) return;
        if (k.status == WARPSORT_OK) k.status = WARPSORT_CUDA_ERROR;
    });
    for (size_t r = 0; r < c.ranks.size(); ++r)
        if (c.ranks[r].status != WARPSORT_OK)
            throw BenchError(strprintf("rank %zu: %s: %s", r,
                                       warpsort_status_name(c.ranks[r].status),
                                       c.ranks[r].error.c_str()));
}

double elapsed(cudaEvent_t a, cudaEvent_t b) {
    float ms = 0;
    WSB_CUDA(cudaEventElapsedTime(&ms, a, b));
    return ms;
}

/* NCCL's all-to-all of equal chunks (chunk keys to every other rank) from
 * each rank's input into its output buffer; median of the slowest rank. */
double time_alltoall(Context &c, size_t chunk, size_t kb) {
    const int p = (int)c.ranks.size();
    if (p < 2 || chunk == 0) return 0;
    std::vector<double> times;
    for (int rep = 0; rep < c.opt.warmup + c.opt.repeat; ++rep) {
        SpinBarrier barrier(p);
        std::vector<ncclResult_t> res((size_t)p, ncclSuccess);
        on_every_rank(p, [&](int r) {
            Rank &k = c.ranks[(size_t)r];
            (void)cudaSetDevice(k.dev);
            barrier.wait();
            (void)cudaEventRecord(k.start, k.s);
            const unsigned char *send = (const unsigned char *)k.in.get();
            unsigned char *recv = (unsigned char *)k.out.get();
            ncclResult_t e = ncclGroupStart();
            for (int peer = 0, at = 0; peer < p && e == ncclSuccess; ++peer) {
                if (peer == r) continue;
                e = ncclSend(send + (size_t)peer * chunk * kb, chunk * kb, ncclUint8, peer, k.comm,
                             k.s);
                if (e == ncclSuccess)
                    e = ncclRecv(recv + (size_t)at * chunk * kb, chunk * kb, ncclUint8, peer,
                                 k.comm, k.s);
                ++at;
            }
            const ncclResult_t end = ncclGroupEnd();
            res[(size_t)r] = e != ncclSuccess ? e : end;
            (void)cudaEventRecord(k.stop, k.s);
            (void)cudaStreamSynchronize(k.s);
        });
        for (int r = 0; r < p; ++r)
            if (res[(size_t)r] != ncclSuccess)
                throw BenchError(
                    strprintf("all-to-all, rank %d: %s", r, ncclGetErrorString(res[(size_t)r])));
        double worst = 0;
        for (Rank &k : c.ranks) worst = std::max(worst, elapsed(k.start, k.stop));
        if (rep >= c.opt.warmup) times.push_back(worst);
    }
    return median_of(times);
}

/* warpsort on GPU 0 alone, on the same keys (the ranks' slices, one after
 * the other). Appends its row. */
void run_baseline(Context &c, const Regime &reg, size_t n_total, const JsonFields &fields) {
    Row row = make_row(regime_label(reg), fields, n_total, "warpsort-1gpu");
    row.timer = "cuda-events";
    row.warmup = c.opt.warmup;
    const size_t kb = reg.key_bytes();
    const int p = (int)c.ranks.size();
    WSB_CUDA(cudaSetDevice(0));
    DeviceMemory pristine, work;
    const cudaError_t e1 = pristine.allocate(n_total * kb);
    const cudaError_t e2 = e1 == cudaSuccess ? work.allocate(n_total * kb) : e1;
    warpsort_context_t *ctx = nullptr;
    warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
    cfg.backend = WARPSORT_BACKEND_CUDA;
    cfg.device = 0;
    cfg.stream = c.gpu.stream;
    if (e2 != cudaSuccess || warpsort_create(&ctx, &cfg) != WARPSORT_OK) {
        row.status = RowStatus::Skipped;
        row.note = e2 != cudaSuccess ? "does not fit GPU 0: " + cuda_error_text(e2)
                                     : "no warpsort context on GPU 0";
        print_row(row);
        c.rows.push_back(row);
        return;
    }
    size_t at = 0;
    for (int r = 0; r < p; ++r) {
        const size_t n_r = input_count(n_total, p, r);
        generate_keys(reg, n_r, c.opt.seed + (uint64_t)r, (unsigned char *)pristine.get() + at * kb,
                      c.gpu.stream);
        at += n_r;
    }
    const unsigned flags = c.opt.descending ? WARPSORT_DESCENDING : WARPSORT_ASCENDING;
    std::string err;
    for (int rep = 0; rep < c.opt.warmup + c.opt.repeat && err.empty(); ++rep) {
        WSB_CUDA(cudaMemcpyAsync(work.get(), pristine.get(), n_total * kb, cudaMemcpyDefault,
                                 c.gpu.stream));
        WSB_CUDA(cudaEventRecord(c.gpu.start, c.gpu.stream));
        const warpsort_status_t s =
            warpsort_sort(ctx, work.get(), n_total, dtype_info(reg.dtype).ws, flags);
        WSB_CUDA(cudaEventRecord(c.gpu.stop, c.gpu.stream));
        const cudaError_t e = cudaStreamSynchronize(c.gpu.stream);
        if (s != WARPSORT_OK)
            err = warpsort_last_error(ctx);
        else if (e != cudaSuccess)
            err = cuda_error_text(e);
        else if (rep >= c.opt.warmup)
            row.times_ms.push_back(elapsed(c.gpu.start, c.gpu.stop));
    }
    if (err.empty()) {
        std::vector<unsigned char> out(n_total * kb);
        WSB_CUDA(cudaMemcpy(out.data(), work.get(), n_total * kb, cudaMemcpyDefault));
        const int kind = ws_dtype_kind((int)dtype_info(reg.dtype).ws);
        if (first_unsorted(out.data(), n_total, kb, kind, c.opt.descending) < n_total)
            err = "one-GPU result not sorted";
    }
    warpsort_destroy(ctx);
    row.status = err.empty() ? RowStatus::Ok : RowStatus::Error;
    row.note = err;
    row.host_checked = err.empty();
    fill_stats(row, 0);
    print_row(row);
    c.rows.push_back(row);
}

void run_row(Context &c, const Plan &pl) {
    const int p = (int)c.ranks.size();
    Regime reg;
    reg.dtype = pl.dtype;
    reg.dist = c.opt.dist;
    const size_t kb = reg.key_bytes(), n = pl.n;
    JsonFields fields = regime_fields(reg);
    fields.integer("gpus", p).str("order", c.opt.descending ? "descending" : "ascending");
    Row row = make_row(regime_label(reg), fields, n, strprintf("warpsort-nccl-%dgpu", p));
    row.timer = "cuda-events, slowest rank";
    row.warmup = c.opt.warmup;
    for (int r = 0; r < p; ++r) {
        Rank &k = c.ranks[(size_t)r];
        WSB_CUDA(cudaSetDevice(k.dev));
        k.n_in = input_count(n, p, r);
        k.cap = warpsort_nccl_output_count(n, p, r);
        k.in.release();
        k.out.release();
        cudaError_t e = k.in.allocate(std::max<size_t>(k.n_in, 1) * kb);
        if (e == cudaSuccess) e = k.out.allocate(std::max<size_t>(k.cap, 1) * kb);
        if (e != cudaSuccess) {
            row.status = RowStatus::Skipped;
            row.note = strprintf("does not fit GPU %d: %s", r, cuda_error_text(e).c_str());
            print_row(row);
            c.rows.push_back(row);
            return;
        }
        generate_keys(reg, k.n_in, c.opt.seed + (uint64_t)r, k.in.get(), k.s);
        WSB_CUDA(cudaStreamSynchronize(k.s));
    }
    std::vector<std::vector<double>> phase((size_t)WS_NCCL_PHASES);
    std::vector<double> exchange_merge; /* per run: slowest rank, exchange start to end */
    bool partition_first = false;       /* the route the last run took (every rank alike) */
    for (int rep = 0; rep < c.opt.warmup + c.opt.repeat; ++rep) {
        sort_once(c, reg);
        if (rep < c.opt.warmup) continue;
        double worst = 0;
        std::vector<double> ph((size_t)WS_NCCL_PHASES, 0.0);
        double xm = 0;
        for (Rank &k : c.ranks) {
            worst = std::max(worst, elapsed(k.start, k.stop));
            for (int i = 0; i < WS_NCCL_PHASES; ++i)
                ph[(size_t)i] = std::max(ph[(size_t)i], elapsed(k.ph.ev[i], k.ph.ev[i + 1]));
            xm = std::max(xm, elapsed(k.ph.ev[WS_NCCL_PHASE_EXCHANGE], k.ph.ev[WS_NCCL_PHASES]));
            partition_first = k.ph.partition_first != 0;
        }
        row.times_ms.push_back(worst);
        exchange_merge.push_back(xm);
        for (int i = 0; i < WS_NCCL_PHASES; ++i) phase[(size_t)i].push_back(ph[(size_t)i]);
    }
    const std::string bad = check_result(c, reg, n);
    row.status = bad.empty() ? RowStatus::Ok : RowStatus::Failed;
    row.note = bad;
    row.host_checked = bad.empty();
    fill_stats(row, 0);

    /* The reference all-to-all: the bytes a uniform input's exchange sends. */
    const size_t chunk = n / p / p;
    const double a2a_ms = time_alltoall(c, chunk, kb);
    const double a2a_bytes = (double)(p - 1) * (double)chunk * (double)kb; /* per rank, sent */
    static const char *const kPhaseNames[] = {
#define WS_NCCL_X_NAME_(name, text) text,
        WS_NCCL_PHASE_LIST(WS_NCCL_X_NAME_)
#undef WS_NCCL_X_NAME_
    };
    JsonFields phases;
    std::string line = "  phases (slowest rank, median ms):";
    double exchange_ms = 0;
    for (int i = 0; i < WS_NCCL_PHASES; ++i) {
        const double m = median_of(phase[(size_t)i]);
        phases.num(kPhaseNames[i], m);
        line += strprintf(" %s %.3f", kPhaseNames[i], m);
        if (i == WS_NCCL_PHASE_EXCHANGE) exchange_ms = m;
    }
    const double xm_ms = exchange_merge.empty() ? 0 : median_of(exchange_merge);
    /* The partition-first route exchanges under its local sorts: it has no
     * exchange phase to set beside the all-to-all. */
    if (partition_first) {
        exchange_ms = 0;
        line += " | partition-first: the exchange runs under local-sort";
    } else {
        line += strprintf(" | exchange+merge %.3f%s", xm_ms,
                          p == 2 ? " (merge under the exchange; merge = the tail)" : "");
    }
    const double exch_bw = exchange_ms > 0 ? a2a_bytes / (exchange_ms * 1e-3) / 1e9 : 0;
    const double a2a_bw = a2a_ms > 0 ? a2a_bytes / (a2a_ms * 1e-3) / 1e9 : 0;
    row.results.raw("phases_ms", phases.one_line())
        .str("route", partition_first ? "partition-first" : "sort-first")
        .num("exchange_merge_ms", partition_first ? 0 : xm_ms)
        .integer("merge_overlapped", p == 2)
        .num("exchange_bytes_per_rank_model", a2a_bytes)
        .num("exchange_gb_per_s", exch_bw)
        .num("nccl_alltoall_ms", a2a_ms)
        .num("nccl_alltoall_gb_per_s", a2a_bw)
        .num("exchange_pct_of_alltoall",
             a2a_ms > 0 && exchange_ms > 0 ? 100 * a2a_ms / exchange_ms : 0);
    print_row(row);
    std::printf("%s\n", line.c_str());
    if (p > 1 && partition_first)
        std::printf("  NCCL all-to-all %.1f GB/s (%.3f ms for %.3g GB per rank), under the sorts\n",
                    a2a_bw, a2a_ms, a2a_bytes / 1e9);
    else if (p > 1)
        std::printf(
            "  exchange %.1f GB/s per rank vs NCCL all-to-all %.1f GB/s (%.3f ms for %.3g GB "
            "per rank): %.0f%%\n",
            exch_bw, a2a_bw, a2a_ms, a2a_bytes / 1e9,
            a2a_ms > 0 && exchange_ms > 0 ? 100 * a2a_ms / exchange_ms : 0.0);
    const size_t at = c.rows.size();
    c.rows.push_back(row);
    if (p > 1) {
        Row a2a = make_row(regime_label(reg), fields, n, "nccl-alltoall");
        a2a.timer = "cuda-events, slowest rank";
        a2a.warmup = c.opt.warmup;
        a2a.status = RowStatus::Ok;
        a2a.times_ms = {a2a_ms};
        a2a.note = strprintf("grouped send/recv, %zu keys to each peer", chunk);
        a2a.results.num("bytes_per_rank", a2a_bytes).num("gb_per_s", a2a_bw);
        fill_stats(a2a, 0);
        c.rows.push_back(a2a);
    }
    if (c.opt.baseline) {
        for (Rank &k : c.ranks) { /* GPU 0's memory goes to the baseline */
            (void)cudaSetDevice(k.dev);
            k.in.release();
            k.out.release();
        }
        run_baseline(c, reg, n, fields);
        const Row &base = c.rows.back();
        if (base.status == RowStatus::Ok && c.rows[at].status == RowStatus::Ok) {
            const double speedup = base.median_ms / c.rows[at].median_ms;
            c.rows[at].results.num("speedup_vs_1gpu", speedup);
            std::printf("  speedup over one GPU: %.2fx\n", speedup);
        }
    }
}

} // namespace

int multi_gpu_main(int argc, char **argv) {
    const double t_start = wall_ms();
    Context c;
    c.opt = parse(argc, argv);
    const std::vector<Plan> plan = make_plan(c.opt);
    if (plan.empty()) usage_error("the selection is empty");
    if (c.opt.list_only) {
        for (const Plan &pl : plan)
            std::printf("%s n=%zu: warpsort-nccl on all GPUs, nccl-alltoall%s\n",
                        dtype_info(pl.dtype).name, pl.n, c.opt.baseline ? ", warpsort-1gpu" : "");
        return kExitOk;
    }
    /* NVLink multicast stays off on the device machines; a caller's setting wins. */
    setenv("NCCL_NVLS_ENABLE", "0", 0);
    std::string why;
    if (!open_gpu(c.gpu, 0, &why)) {
        std::fprintf(stderr, "warpsort_bench multi-gpu: %s\n", why.c_str());
        return kExitHarness;
    }
    int exit_code = kExitOk;
    try {
        set_up_ranks(c);
        collect_run_info(c.info, c.gpu, "multi-gpu");
        int version = 0;
        ncclGetVersion(&version);
        c.info.settings.integer("gpus", (long long)c.ranks.size())
            .integer("repeat", c.opt.repeat)
            .integer("warmup", c.opt.warmup)
            .integer("seed", (long long)c.opt.seed)
            .str("dist", dist_name(c.opt.dist))
            .str("order", c.opt.descending ? "descending" : "ascending")
            .integer("nccl_version", version)
            .str("NCCL_NVLS_ENABLE", getenv("NCCL_NVLS_ENABLE") ? getenv("NCCL_NVLS_ENABLE") : "");
        print_run_header(c.info);
        std::printf("%zu GPUs, NCCL %d, NCCL_NVLS_ENABLE=%s\n\n", c.ranks.size(), version,
                    getenv("NCCL_NVLS_ENABLE"));
        if (!c.opt.no_json) {
            c.json_path =
                c.opt.json_path.empty() ? default_json_path("multi-gpu") : c.opt.json_path;
            start_results(c.json_path, c.info);
        }
        print_table_header("Gkeys/s");
        for (const Plan &pl : plan) {
            run_row(c, pl);
            if (!c.json_path.empty()) write_results(c.json_path, c.info, c.rows);
        }
        c.info.aborted.clear();
    } catch (const BenchError &err) {
        c.info.aborted = err.what();
        std::fprintf(stderr, "\nwarpsort_bench multi-gpu: stopping: %s\n", err.what());
        exit_code = kExitHarness;
    }
    tear_down_ranks(c);
    c.info.wall_s = (wall_ms() - t_start) * 1e-3;
    const int bad = print_summary(c.rows, c.info.wall_s);
    if (bad && exit_code == kExitOk) exit_code = kExitRowFailed;
    if (!c.json_path.empty()) {
        write_results(c.json_path, c.info, c.rows);
        std::printf("results: %s\n", c.json_path.c_str());
    }
    return exit_code;
}

} // namespace wsb
