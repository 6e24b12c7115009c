/*
 * topk_rivals.cu - the topk mode's rivals.
 *
 *  warpsort        warpsort_topk (one array) / warpsort_topk_rows, CUDA
 *                  backend, context on the harness's stream; by default a
 *                  caller workspace of warpsort_topk_workspace_size bytes
 *                  (so the call neither allocates nor waits on the host),
 *                  --no-workspace for the context's own cached workspace.
 *  cub-sort-k      a full CUB radix sort of (key, index) pairs, descending
 *                  for the largest, then the first k of the array or of
 *                  each row: cub::DeviceRadixSort::SortPairs[Descending]
 *                  for one array, cub::DeviceSegmentedRadixSort over rows.
 *  cub-segsort-k   rows only: cub::DeviceSegmentedSort::StableSortPairs
 *                  [Descending] over rows, then the first k of each row.
 * The CUB rivals are stable, so equal keys keep input order: ties go to the
 * lower index, as warpsort's. Their index input (0.. per row) is built once
 * outside timing (the sorts only read it); the timed region is the sort and
 * the gather of the first k of each row into the outputs. Temp storage is
 * allocated once, outside timing.
 */
#include "modes/topk.h"

#include "core/input.h"
#include "rivals/warpsort_status.h"

#include <climits>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>
#include <cub/device/device_segmented_sort.cuh>

namespace wsb {

/* A flag of the mode: time warpsort with the context's own workspace. */
bool g_topk_no_workspace = false;

std::string TopkRival::allocate_outputs(const TopkInput &in) {
    const size_t m = in.c.rows * in.c.k;
    cudaError_t e = out_keys_.allocate(m * (size_t)dtype_info(in.c.dtype).bytes);
    if (e == cudaSuccess) e = out_idx_.allocate(m * in.index_bytes);
    return e == cudaSuccess ? std::string() : "outputs: " + cuda_error_text(e);
}

namespace {

/* ---- warpsort ---- */

class WarpsortTopk final : public TopkRival {
  public:
    ~WarpsortTopk() override { warpsort_destroy(ctx_); }

    size_t bytes_needed(const TopkInput &in) const override {
        return in.c.rows * in.c.k * ((size_t)dtype_info(in.c.dtype).bytes + in.index_bytes) +
               ws_bytes_;
    }

    bool prepare(const TopkInput &in, std::string *err) override {
        warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
        cfg.backend = WARPSORT_BACKEND_CUDA;
        cfg.device = in.device;
        cfg.stream = (void *)in.stream;
        warpsort_status_t st = warpsort_create(&ctx_, &cfg);
        if (st != WARPSORT_OK) {
            ctx_ = nullptr;
            *err = "warpsort_create(CUDA): " + warpsort_status_text(st, nullptr);
            return false;
        }
        st = warpsort_topk_workspace_size(ctx_, in.c.rows, in.c.row_len, dtype_info(in.c.dtype).ws,
                                          0, in.c.k, &ws_bytes_);
        if (st != WARPSORT_OK) {
            *err = "warpsort_topk_workspace_size: " + warpsort_status_text(st, ctx_);
            return false;
        }
        std::string why = allocate_outputs(in);
        if (!why.empty()) return *err = why, false;
        if (!g_topk_no_workspace && ws_bytes_) {
            const cudaError_t e = ws_.allocate(ws_bytes_);
            if (e != cudaSuccess) return *err = "workspace: " + cuda_error_text(e), false;
            st = warpsort_set_workspace(ctx_, ws_.get(), ws_bytes_);
            if (st != WARPSORT_OK)
                return *err = "warpsort_set_workspace: " + warpsort_status_text(st, ctx_), false;
        }
        return true;
    }

    bool run(const TopkInput &in, std::string *err) override {
        const warpsort_dtype_t dt = dtype_info(in.c.dtype).ws;
        const unsigned flags = in.largest ? 0u : WARPSORT_TOPK_SMALLEST;
        const warpsort_status_t st =
            in.c.rows == 1 ? warpsort_topk(ctx_, in.keys, in.c.row_len, dt, in.c.k, flags,
                                           out_keys(), out_indices(), in.index_bytes)
                           : warpsort_topk_rows(ctx_, in.keys, in.c.rows, in.c.row_len, dt, in.c.k,
                                                flags, out_keys(), out_indices(), in.index_bytes);
        if (st != WARPSORT_OK) {
            *err = std::string(in.c.rows == 1 ? "warpsort_topk: " : "warpsort_topk_rows: ") +
                   warpsort_status_text(st, ctx_);
            return false;
        }
        return true;
    }

    bool finish(const TopkInput &, std::string *err) override {
        const warpsort_status_t st = warpsort_synchronize(ctx_);
        if (st != WARPSORT_OK)
            return *err = "warpsort_synchronize: " + warpsort_status_text(st, ctx_), false;
        return true;
    }

    std::string note() const override {
        return g_topk_no_workspace ? "context workspace"
                                   : strprintf("caller workspace %zu bytes", ws_bytes_);
    }

  private:
    warpsort_context_t *ctx_ = nullptr;
    size_t ws_bytes_ = 0;
    DeviceMemory ws_;
};

/* ---- CUB: sort everything, take k ---- */

template <class I>
__global__ void row_iota_kernel(I *v, size_t n, size_t len) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        v[i] = (I)(i % len);
}

__global__ void row_offsets_kernel(int *off, size_t rows, size_t len) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i <= rows;
         i += (size_t)gridDim.x * blockDim.x)
        off[i] = (int)(i * len);
}

/* The first k of each sorted row into the outputs. */
template <class K, class I>
__global__ void take_k_kernel(const K *sk, const I *si, K *ok, I *oi, size_t rows, size_t len,
                              size_t k) {
    for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < rows * k;
         e += (size_t)gridDim.x * blockDim.x) {
        const size_t r = e / k, j = e - r * k;
        ok[e] = sk[r * len + j];
        oi[e] = si[r * len + j];
    }
}

enum class CubKind { Radix, Segmented };

template <class K, class I>
class CubSortK final : public TopkRival {
  public:
    explicit CubSortK(CubKind kind) : kind_(kind) {}

    size_t bytes_needed(const TopkInput &in) const override {
        const size_t n = in.c.n();
        return n * (2 * sizeof(I) + sizeof(K)) + in.c.rows * in.c.k * (sizeof(K) + sizeof(I)) +
               (in.c.rows + 1) * sizeof(int) + temp_bytes_;
    }

    /* The temp-storage size, asked before prepare() for the fit check. */
    bool query(const TopkInput &in, std::string *err) {
        if (in.c.n() > (size_t)INT_MAX)
            return *err = "n above INT_MAX (CUB's int num_items)", false;
        const cudaError_t e = call(nullptr, temp_bytes_, in);
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            return *err = "temp size query: " + cuda_error_text(e), false;
        }
        return true;
    }

    bool prepare(const TopkInput &in, std::string *err) override {
        const size_t n = in.c.n();
        std::string why = allocate_outputs(in);
        if (!why.empty()) return *err = why, false;
        cudaError_t e = vals_in_.allocate(n * sizeof(I));
        if (e == cudaSuccess) e = keys_out_.allocate(n * sizeof(K));
        if (e == cudaSuccess) e = vals_out_.allocate(n * sizeof(I));
        if (e == cudaSuccess) e = offsets_.allocate((in.c.rows + 1) * sizeof(int));
        if (e == cudaSuccess) e = temp_.allocate(temp_bytes_);
        if (e != cudaSuccess) return *err = "buffers: " + cuda_error_text(e), false;
        row_iota_kernel<I>
            <<<grid_for(n, 256), 256, 0, in.stream>>>((I *)vals_in_.get(), n, in.c.row_len);
        row_offsets_kernel<<<grid_for(in.c.rows + 1, 256), 256, 0, in.stream>>>(
            (int *)offsets_.get(), in.c.rows, in.c.row_len);
        WSB_CUDA(cudaGetLastError());
        WSB_CUDA(cudaStreamSynchronize(in.stream));
        return true;
    }

    void poison(const TopkInput &in) override {
        WSB_CUDA(cudaMemsetAsync(keys_out_.get(), 0xA5, in.c.n() * sizeof(K), in.stream));
        WSB_CUDA(cudaMemsetAsync(vals_out_.get(), 0xA5, in.c.n() * sizeof(I), in.stream));
    }

    bool run(const TopkInput &in, std::string *err) override {
        size_t bytes = temp_bytes_;
        cudaError_t e = call(temp_.get(), bytes, in);
        if (e == cudaSuccess && in.c.rows == 1) {
            e = cudaMemcpyAsync(out_keys(), keys_out_.get(), in.c.k * sizeof(K),
                                cudaMemcpyDeviceToDevice, in.stream);
            if (e == cudaSuccess)
                e = cudaMemcpyAsync(out_indices(), vals_out_.get(), in.c.k * sizeof(I),
                                    cudaMemcpyDeviceToDevice, in.stream);
        } else if (e == cudaSuccess) {
            take_k_kernel<K, I><<<grid_for(in.c.rows * in.c.k, 256), 256, 0, in.stream>>>(
                (const K *)keys_out_.get(), (const I *)vals_out_.get(), (K *)out_keys(),
                (I *)out_indices(), in.c.rows, in.c.row_len, in.c.k);
            e = cudaGetLastError();
        }
        if (e != cudaSuccess) return *err = api() + ": " + cuda_error_text(e), false;
        return true;
    }

    std::string note() const override {
        return api() + " of (key, index), then the first k" + (in_rows_ ? " of each row" : "") +
               strprintf("; temp %zu bytes", temp_bytes_);
    }

  private:
    std::string api() const {
        if (kind_ == CubKind::Segmented) return "cub::DeviceSegmentedSort::StableSortPairs";
        return in_rows_ ? "cub::DeviceSegmentedRadixSort::SortPairs"
                        : "cub::DeviceRadixSort::SortPairs";
    }

    cudaError_t call(void *temp, size_t &bytes, const TopkInput &in) {
        in_rows_ = in.c.rows > 1;
        const K *kin = (const K *)in.keys;
        K *kout = (K *)keys_out_.get();
        const I *vin = (const I *)vals_in_.get();
        I *vout = (I *)vals_out_.get();
        const int n = (int)in.c.n(), rows = (int)in.c.rows;
        const int *off = (const int *)offsets_.get();
        if (kind_ == CubKind::Segmented)
            return in.largest
                       ? cub::DeviceSegmentedSort::StableSortPairsDescending(
                             temp, bytes, kin, kout, vin, vout, n, rows, off, off + 1, in.stream)
                       : cub::DeviceSegmentedSort::StableSortPairs(
                             temp, bytes, kin, kout, vin, vout, n, rows, off, off + 1, in.stream);
        if (in.c.rows == 1)
            return in.largest
                       ? cub::DeviceRadixSort::SortPairsDescending(
                             temp, bytes, kin, kout, vin, vout, n, 0, (int)sizeof(K) * 8, in.stream)
                       : cub::DeviceRadixSort::SortPairs(temp, bytes, kin, kout, vin, vout, n, 0,
                                                         (int)sizeof(K) * 8, in.stream);
        return in.largest ? cub::DeviceSegmentedRadixSort::SortPairsDescending(
                                temp, bytes, kin, kout, vin, vout, n, rows, off, off + 1, 0,
                                (int)sizeof(K) * 8, in.stream)
                          : cub::DeviceSegmentedRadixSort::SortPairs(temp, bytes, kin, kout, vin,
                                                                     vout, n, rows, off, off + 1, 0,
                                                                     (int)sizeof(K) * 8, in.stream);
    }

    CubKind kind_;
    bool in_rows_ = false;
    size_t temp_bytes_ = 0;
    DeviceMemory vals_in_, keys_out_, vals_out_, offsets_, temp_;
};

template <class K>
std::unique_ptr<TopkRival> make_cub_typed(const TopkInput &in, CubKind kind, std::string *why) {
    std::unique_ptr<TopkRival> out;
    if (in.index_bytes == 8) {
        auto *r = new CubSortK<K, uint64_t>(kind);
        out.reset(r);
        if (!r->query(in, why)) return nullptr;
    } else {
        auto *r = new CubSortK<K, uint32_t>(kind);
        out.reset(r);
        if (!r->query(in, why)) return nullptr;
    }
    return out;
}

std::unique_ptr<TopkRival> make_cub(const TopkInput &in, CubKind kind, std::string *why) {
    switch (in.c.dtype) {
    case Dtype::U32: return make_cub_typed<uint32_t>(in, kind, why);
    case Dtype::F32: return make_cub_typed<float>(in, kind, why);
    case Dtype::U64: return make_cub_typed<uint64_t>(in, kind, why);
    case Dtype::F64: return make_cub_typed<double>(in, kind, why);
    }
    *why = "unknown dtype";
    return nullptr;
}

std::unique_ptr<TopkRival> make_warpsort(const TopkInput &, std::string *) {
    return std::unique_ptr<TopkRival>(new WarpsortTopk());
}

std::unique_ptr<TopkRival> make_cub_sort_k(const TopkInput &in, std::string *why) {
    return make_cub(in, CubKind::Radix, why);
}

std::unique_ptr<TopkRival> make_cub_segsort_k(const TopkInput &in, std::string *why) {
    if (in.c.rows == 1) {
        *why = "rows only (one array: cub-sort-k)";
        return nullptr;
    }
    return make_cub(in, CubKind::Segmented, why);
}

} // namespace

const std::vector<TopkRivalInfo> &topk_rivals() {
    static const std::vector<TopkRivalInfo> table = {
        {"warpsort", "warpsort_topk / warpsort_topk_rows, CUDA backend, caller workspace", false,
         make_warpsort},
        {"cub-sort-k",
         "cub::DeviceRadixSort (one array) / DeviceSegmentedRadixSort (rows) of (key, index), "
         "first k",
         false, make_cub_sort_k},
        {"cub-segsort-k", "cub::DeviceSegmentedSort::StableSortPairs over rows, first k of each",
         true, make_cub_segsort_k},
    };
    return table;
}

} // namespace wsb
