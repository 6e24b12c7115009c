/*
 * topk.h - the topk mode (issue 24): warpsort_topk / warpsort_topk_rows
 * against a full CUB sort of the array (or of every row) followed by taking
 * the first k. What its three files share: the case, the input on the
 * device, the rivals' interface (topk_rivals.cu) and the checker
 * (topk_check.cu).
 */
#ifndef WSB_MODES_TOPK_H
#define WSB_MODES_TOPK_H

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/common.h"
#include "core/measure.h"
#include "core/regime.h"

namespace wsb {

/* One timed call: the top k of each of `rows` rows of row_len keys
 * (rows = 1: one array of row_len keys). */
struct TopkCase {
    Dtype dtype = Dtype::F32;
    Dist dist = KEYGEN_RANDOM;
    size_t rows = 1, row_len = 0, k = 0;
    size_t n() const { return rows * row_len; }
};

/* The input of a case and how its result is asked for. */
struct TopkInput {
    TopkCase c;
    const void *keys = nullptr; /* device, rows * row_len keys, never modified */
    bool largest = true;        /* false: the k smallest, ascending */
    size_t index_bytes = 4;     /* 4 (uint32_t) or 8 (uint64_t) */
    cudaStream_t stream = nullptr;
    int device = 0;
};

/* A rival: prepare() allocates everything outside timing; run() enqueues
 * the timed work on in.stream; finish() (after the stop event) collects
 * asynchronous errors. Outputs: rows * k keys and indices, row-major. */
class TopkRival {
  public:
    virtual ~TopkRival() = default;
    virtual bool prepare(const TopkInput &in, std::string *err) = 0;
    virtual bool run(const TopkInput &in, std::string *err) = 0;
    virtual bool finish(const TopkInput &, std::string *) { return true; }
    /* Outside timing, before each run: poisons any buffer of the rival's
     * own that a later step copies from, so a stale result cannot pass. */
    virtual void poison(const TopkInput &) {}
    virtual std::string note() const = 0;
    void *out_keys() const { return out_keys_.get(); }
    void *out_indices() const { return out_idx_.get(); }
    /* Bytes of device memory prepare() will allocate (for the fit check). */
    virtual size_t bytes_needed(const TopkInput &in) const = 0;

  protected:
    /* Allocates the two outputs; "" or why not. */
    std::string allocate_outputs(const TopkInput &in);
    DeviceMemory out_keys_, out_idx_;
};

struct TopkRivalInfo {
    const char *name;
    const char *what;
    bool rows_only; /* not planned for one array */
    /* nullptr with *why where the rival does not apply to the case. */
    std::unique_ptr<TopkRival> (*make)(const TopkInput &in, std::string *why);
};
const std::vector<TopkRivalInfo> &topk_rivals();

/* The expected output of the sampled rows (all rows up to max_rows, else
 * max_rows of them spread evenly, first and last included): computed on
 * the host from a download of those rows, shared by every rival and k of
 * one input. check() then compares a result with it and runs the device
 * check of every row (see topk_check.cu). */
class TopkChecker {
  public:
    TopkChecker(const TopkInput &in, size_t max_rows);
    /* For in.c.k (the input is the same for every k of a group). */
    void set_case(const TopkInput &in);
    VerifyResult check(const void *out_keys, const void *out_indices);
    /* layers: 1 the device check alone, 2 the host reference alone, 3 both. */
    VerifyResult check_only(const void *out_keys, const void *out_indices, int layers);
    size_t sampled_rows() const { return sample_.size(); }

  private:
    TopkInput in_;
    std::vector<size_t> sample_;      /* row numbers */
    std::vector<unsigned char> host_; /* those rows' keys, back to back */
    std::vector<uint64_t> expect_;    /* per sampled row, k indices best first */
    DeviceMemory counts_, counters_;
};

/* Catches planted faults in top-k outputs (swapped neighbours, an index
 * moved to an equal key's higher index, the (k+1)-th key for the k-th, key
 * bits changed, an index out of range) and passes correct ones, on the
 * device check and the host reference; "" if so, else what went wrong. */
std::string topk_checker_self_test(cudaStream_t stream, int device);

} // namespace wsb

#endif /* WSB_MODES_TOPK_H */
