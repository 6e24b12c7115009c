/*
 * collectives.cu - the collectives mode: warp sort (32 x K u32 keys) against
 * cub::WarpMergeSort, block sort (1024..8192 u32 keys, pairs) against
 * cub::BlockMergeSort and cub::BlockRadixSort, warp reduce / inclusive scan
 * against cub::WarpReduce / cub::WarpScan, in-kernel (collective_kernels.cuh).
 * Timed by core/measure.h (CUDA events around each launch); every launch's
 * per-thread output is checked against the case's CUB reference.
 */
#include "core/cli.h"
#include "core/measure.h"
#include "core/run_info.h"
#include "modes/collective_kernels.cuh"
#include "modes/mode.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace wsb {
namespace {

const char *const kUsage =
    "usage: warpsort_bench collectives [--repeat N] [--warmup N] [--device N]\n"
    "                                  [--json PATH | --no-json] [--list]\n"
    "\n"
    "The device API's collectives (include/warpsort/) against CUB's at equal work\n"
    "per block, in-kernel: each block sorts (or reduces, scans) its tile 64 times\n"
    "in registers and shared memory, so DRAM plays no part. CUDA events around each\n"
    "launch, median of --repeat (default 7) after --warmup (default 1); every\n"
    "launch's output is checked against CUB's for the same case. JSON default\n"
    "./bench-collectives-<UTC date>.json.\n";

using Kernel = void (*)(uint32_t *);

struct ImplSpec {
    const char *name;
    Kernel kernel;
    size_t smem;
};

struct Case {
    std::string group, name;
    int blocks_per_sm, threads, items_per_thread; /* items per launch = blocks x threads x items */
    std::vector<ImplSpec> impls;                  /* warpsort first */
    int ref; /* the CUB implementation the others are checked against */
};

template <int K>
Case warp_sort_case() {
    return {"warp sort",
            "32x" + std::to_string(K) + " u32 keys",
            8,
            256,
            K * kIters,
            {{"warpsort", warp_sort_bench<K, WS>, warp_sort_smem<K, WS>()},
             {"cub::WarpMergeSort", warp_sort_bench<K, CUB_MERGE>, warp_sort_smem<K, CUB_MERGE>()}},
            1};
}

template <int T, int K, bool P>
Case block_sort_case() {
    return {P ? "block sort pairs" : "block sort keys",
            std::to_string(T * K) + " u32 " + (P ? "pairs" : "keys") + " (" + std::to_string(T) +
                "x" + std::to_string(K) + ")",
            4,
            T,
            K * kIters,
            {{"warpsort", block_sort_bench<T, K, P, WS>, BlockBench<T, K, P, WS>::smem()},
             {"cub::BlockMergeSort", block_sort_bench<T, K, P, CUB_MERGE>,
              BlockBench<T, K, P, CUB_MERGE>::smem()},
             {"cub::BlockRadixSort", block_sort_bench<T, K, P, CUB_RADIX>,
              BlockBench<T, K, P, CUB_RADIX>::smem()}},
            2};
}

template <OpKind OP>
Case warp_op_case() {
    return {OP == REDUCE ? "warp reduce" : "warp inclusive scan",
            "int sum, 32 lanes",
            8,
            256,
            kIters * 16,
            {{"warpsort", warp_op_bench<OP, false>, 0},
             {OP == REDUCE ? "cub::WarpReduce" : "cub::WarpScan", warp_op_bench<OP, true>, 0}},
            1};
}

std::vector<Case> all_cases() {
    return {warp_sort_case<1>(),
            warp_sort_case<2>(),
            warp_sort_case<4>(),
            warp_sort_case<8>(),
            warp_sort_case<16>(),
            block_sort_case<256, 4, false>(),
            block_sort_case<256, 8, false>(),
            block_sort_case<256, 16, false>(),
            block_sort_case<512, 16, false>(),
            block_sort_case<256, 4, true>(),
            block_sort_case<256, 8, true>(),
            block_sort_case<256, 16, true>(),
            block_sort_case<512, 16, true>(),
            warp_op_case<REDUCE>(),
            warp_op_case<SCAN>()};
}

/* Launches impl over the case's grid on g.stream (async). */
void launch(Gpu &g, const Case &c, const ImplSpec &impl, uint32_t *sink) {
    if (impl.smem > 48 * 1024)
        WSB_CUDA(cudaFuncSetAttribute(impl.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      (int)impl.smem));
    impl.kernel<<<g.prop.multiProcessorCount * c.blocks_per_sm, c.threads, impl.smem, g.stream>>>(
        sink);
    WSB_CUDA(cudaGetLastError());
}

/* One launch of one implementation; its sink checked against the reference sink. */
class CollectiveTrial final : public Trial {
  public:
    CollectiveTrial(Gpu &g, const Case &c, const ImplSpec &impl, uint32_t *sink,
                    const uint32_t *ref, size_t words)
        : g_(g), c_(c), impl_(impl), sink_(sink), ref_(ref), words_(words) {}
    void reset() override { /* a launch that writes nothing must not pass */
        WSB_CUDA(cudaMemsetAsync(sink_, 0xA5, words_ * sizeof(uint32_t), g_.stream));
        WSB_CUDA(cudaStreamSynchronize(g_.stream));
    }
    bool run(double *ms, std::string *err) override {
        event_begin(g_);
        launch(g_, c_, impl_, sink_);
        const cudaError_t e = event_end(g_);
        if (e != cudaSuccess) {
            *err = "while running: " + cuda_error_text(e);
            return false;
        }
        *ms = event_ms(g_);
        return true;
    }
    VerifyResult verify() override {
        VerifyResult r;
        r.ref_mismatch = device_words_differ(sink_, ref_, words_, g_.stream);
        if (r.ref_mismatch)
            r.problem = std::string("output differs from ") + c_.impls[(size_t)c_.ref].name + "'s";
        return r;
    }

  private:
    Gpu &g_;
    const Case &c_;
    const ImplSpec &impl_;
    uint32_t *sink_;
    const uint32_t *ref_;
    size_t words_;
};

struct Run {
    Gpu gpu;
    RunInfo info;
    std::vector<Row> rows;
    PhaseTimes ph;
    CommonOptions opt; /* repeat, warmup, device, json_path, no_json, list_only */
};

/* The rows of one case: the reference launch, then every implementation. */
void run_case(Run &r, const Case &c) {
    const size_t blocks = (size_t)r.gpu.prop.multiProcessorCount * (size_t)c.blocks_per_sm;
    const size_t words = blocks * (size_t)c.threads, items = words * (size_t)c.items_per_thread;
    DeviceMemory sink, ref;
    WSB_CUDA(sink.allocate(words * sizeof(uint32_t)));
    WSB_CUDA(ref.allocate(words * sizeof(uint32_t)));
    launch(r.gpu, c, c.impls[(size_t)c.ref], (uint32_t *)ref.get());
    WSB_CUDA(cudaStreamSynchronize(r.gpu.stream));
    double ws_ms = 0;
    for (const ImplSpec &impl : c.impls) {
        JsonFields f;
        f.str("collective", c.group)
            .str("case", c.name)
            .integer("threads_per_block", c.threads)
            .integer("blocks", (long long)blocks)
            .integer("tiles_per_block", kIters);
        Row row = make_row(c.group + " " + c.name, f, items, impl.name);
        row.timer = "cuda-events";
        CollectiveTrial t(r.gpu, c, impl, (uint32_t *)sink.get(), (const uint32_t *)ref.get(),
                          words);
        if (measure(t, r.opt.warmup, r.opt.repeat, row, 0, r.ph)) {
            if (&impl == &c.impls[0]) ws_ms = row.median_ms;
            if (ws_ms > 0) row.results.num("warpsort_speedup", row.median_ms / ws_ms);
            if (ws_ms > 0 && &impl != &c.impls[0])
                row.note = strprintf("warpsort %.2fx as fast", row.median_ms / ws_ms);
        } else {
            ensure_context_alive(r.gpu, row.rival);
        }
        print_row(row);
        r.rows.push_back(row);
    }
}

} // namespace

int collectives_main(int argc, char **argv) {
    const double t_start = wall_ms();
    Run r;
    const CommonSpec spec = {kUsage,
                             kFlagRepeat | kFlagWarmup | kFlagDevice | kFlagJson | kFlagList, 0};
    parse_flags(argc, argv, spec, &r.opt); /* it has no flags of its own */
    check_common_flags(r.opt);
    const std::vector<Case> cases = all_cases();
    if (r.opt.list_only) {
        for (const Case &c : cases)
            for (const ImplSpec &i : c.impls)
                std::printf("%-20s %-28s %s\n", c.group.c_str(), c.name.c_str(), i.name);
        return kExitOk;
    }
    std::string why;
    if (!open_gpu(r.gpu, r.opt.device, &why)) {
        std::fprintf(stderr, "warpsort_bench collectives: %s\n", why.c_str());
        return kExitHarness;
    }
    collect_run_info(r.info, r.gpu, "collectives");
    r.info.settings.integer("repeat", r.opt.repeat)
        .integer("warmup", r.opt.warmup)
        .integer("tiles_per_block", kIters);
    print_run_header(r.info);
    std::string json = r.opt.json_path;
    if (!r.opt.no_json)
        start_results(json = json.empty() ? default_json_path("collectives") : json, r.info);
    print_table_header("Gitems/s");
    for (const Case &c : cases) run_case(r, c);
    r.info.aborted.clear();
    r.info.wall_s = (wall_ms() - t_start) * 1e-3;
    const int bad = print_summary(r.rows, r.info.wall_s);
    if (!r.opt.no_json) {
        write_results(json, r.info, r.rows);
        std::printf("results: %s\n", json.c_str());
    }
    return bad ? kExitRowFailed : kExitOk;
}

} // namespace wsb
