/*
 * warpsort_rival.cu - the product: warpsort's CUDA backend on device memory.
 *
 * A context is created per (regime, n) row with config.stream set to the
 * harness's stream, so the CUDA events bracket exactly the work that
 * warpsort_sort / warpsort_sort_pairs enqueue there (the calls are
 * asynchronous). warpsort_synchronize(ctx) runs after the stop event,
 * outside the timed region, to collect asynchronous errors. The context
 * (and its cached workspace) is destroyed after the row, so no row keeps
 * memory that the next one needs. The first (warm-up) call may allocate the
 * workspace; timed repeats find it cached.
 */
#include "bench.cuh"
#include "cuda/plan_report.h" /* the library's own passes over memory */

namespace wsb {

namespace {

std::string status_text(warpsort_status_t st, const warpsort_context_t *ctx) {
    std::string s = warpsort_status_name(st);
    const char *detail = ctx ? warpsort_last_error(ctx) : nullptr;
    if (detail && *detail) s += std::string(": ") + detail;
    else s += std::string(" (") + warpsort_status_string(st) + ")";
    return s;
}

class WarpsortCuda final : public DeviceRival {
public:
    WarpsortCuda(const Regime &r, int device) : regime_(r), device_(device) {}
    ~WarpsortCuda() override { warpsort_destroy(ctx_); }

    bool temp_bytes(const Buffers &b, size_t *bytes, std::string *err) override {
        if (!ensure_context(b, err)) return false;
        const size_t vb = regime_.pairs ? kValueBytes : 0;
        size_t ws = 0;
        warpsort_status_t st =
            warpsort_workspace_size(ctx_, b.n, dtype_info(regime_.dtype).ws, vb, 0, &ws);
        if (st != WARPSORT_OK) {
            *err = "warpsort_workspace_size: " + status_text(st, ctx_);
            return false;
        }
        *bytes = ws;
        workspace_note_ = strprintf("workspace %zu bytes", ws);
        ws_pass_bytes passes[kMaxPasses];
        const size_t count = ws_plan_passes(ctx_, b.n, b.key_bytes, vb, passes, kMaxPasses);
        plan_note_ = "; plan:";
        for (size_t i = 0; i < count && i < kMaxPasses; i++)
            plan_note_ += strprintf("%s %s %.2f GB", i ? "," : "", passes[i].name,
                                    (double)(passes[i].read + passes[i].written) * 1e-9);
        return true;
    }

    bool prepare(const Buffers &b, std::string *err) override { return ensure_context(b, err); }

    bool run(const Buffers &b, std::string *err) override {
        const warpsort_dtype_t dt = dtype_info(regime_.dtype).ws;
        const unsigned flags = WARPSORT_ASCENDING | (regime_.stable ? WARPSORT_STABLE : 0u);
        warpsort_status_t st =
            regime_.pairs
                ? warpsort_sort_pairs(ctx_, b.keys_work, b.vals_work, b.n, dt, kValueBytes, flags)
                : warpsort_sort(ctx_, b.keys_work, b.n, dt, flags);
        if (st != WARPSORT_OK) {
            *err = (regime_.pairs ? "warpsort_sort_pairs: " : "warpsort_sort: ") +
                   status_text(st, ctx_);
            return false;
        }
        return true;
    }

    bool finish(const Buffers &, std::string *err) override {
        warpsort_status_t st = warpsort_synchronize(ctx_);
        if (st != WARPSORT_OK) {
            *err = "warpsort_synchronize: " + status_text(st, ctx_);
            return false;
        }
        return true;
    }

    /* The library's plan (ws_plan_passes): its bytes read + written, as
     * passes of 2 x n x item bytes, so the harness's byte columns are the
     * library's own; the note lists the passes. */
    double model_passes(const Buffers &b) const override {
        const size_t vb = regime_.pairs ? kValueBytes : 0;
        ws_pass_bytes passes[kMaxPasses];
        const size_t count = ctx_ ? ws_plan_passes(ctx_, b.n, b.key_bytes, vb, passes, kMaxPasses) : 0;
        unsigned long long bytes = 0;
        for (size_t i = 0; i < count && i < kMaxPasses; i++) bytes += passes[i].read + passes[i].written;
        const double item = (double)b.n * (double)(b.key_bytes + vb);
        return item > 0 ? (double)bytes / (2.0 * item) : 0.0;
    }
    std::string note() const override { return workspace_note_ + plan_note_; }

private:
    bool ensure_context(const Buffers &b, std::string *err) {
        if (ctx_) return true;
        warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
        cfg.backend = WARPSORT_BACKEND_CUDA;
        cfg.device = device_;
        cfg.stream = (void *)b.stream;
        warpsort_status_t st = warpsort_create(&ctx_, &cfg);
        if (st != WARPSORT_OK) {
            ctx_ = nullptr;
            *err = "warpsort_create(CUDA): " + status_text(st, nullptr);
            return false;
        }
        if (warpsort_get_backend(ctx_) != WARPSORT_BACKEND_CUDA) {
            *err = "warpsort_create(CUDA) returned a context on another backend";
            return false;
        }
        return true;
    }

    static constexpr size_t kMaxPasses = 16;
    Regime regime_;
    int device_;
    warpsort_context_t *ctx_ = nullptr;
    std::string workspace_note_, plan_note_;
};

} // namespace

bool warpsort_cuda_probe(int device, cudaStream_t stream, std::string *why) {
    warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
    cfg.backend = WARPSORT_BACKEND_CUDA;
    cfg.device = device;
    cfg.stream = (void *)stream;
    warpsort_context_t *ctx = nullptr;
    warpsort_status_t st = warpsort_create(&ctx, &cfg);
    if (st != WARPSORT_OK) {
        *why = "warpsort CUDA backend unavailable: warpsort_create returned " +
               status_text(st, nullptr);
        return false;
    }
    bool ok = warpsort_get_backend(ctx) == WARPSORT_BACKEND_CUDA;
    warpsort_destroy(ctx);
    if (!ok) *why = "warpsort_create(CUDA) gave a non-CUDA context";
    return ok;
}

std::unique_ptr<DeviceRival> make_warpsort_cuda(const Regime &r, int device, std::string *why) {
    if (r.seg_size) {
        *why = "warpsort has no segmented sort yet";
        return nullptr;
    }
    return std::unique_ptr<DeviceRival>(new WarpsortCuda(r, device));
}

} // namespace wsb
