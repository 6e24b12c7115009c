/*
 * bench.cuh - shared declarations of the warpsort benchmark harness.
 *
 * The harness is CUDA C++ because it drives CUB and Thrust, the rivals the
 * library is measured against; none of this is part of the library.
 *
 * Layout:
 *   bench.cu          command line, plan, timing loop, main
 *   data.cu           input generation and the verifier (GPU kernels)
 *   cub_radix.cu      rival: cub::DeviceRadixSort (also builds the reference)
 *   cub_merge.cu      rival: cub::DeviceMergeSort
 *   cub_segmented.cu  rival: cub::DeviceSegmentedSort (segmented regimes)
 *   thrust_sort.cu    rival: thrust::sort / sort_by_key, caching allocator
 *   seed_baseline.cu  rivals: the seed document's naive and hybrid bitonic sorts
 *   warpsort_rival.cu rivals: the warpsort CUDA backend (and the library's own pass list)
 *   report.cu         the table on stdout and the JSON file
 */
#ifndef WARPSORT_BENCH_CUH
#define WARPSORT_BENCH_CUH

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/keygen.h"
#include "warpsort.h"

namespace wsb {

/*----------------------------------------------------------------------
 * Errors of the harness itself (not of a rival): these stop the run.
 *--------------------------------------------------------------------*/
struct BenchError : std::runtime_error {
    explicit BenchError(const std::string &what) : std::runtime_error(what) {}
};

/* Throws BenchError naming the call site when err is not cudaSuccess. */
void cuda_check(cudaError_t err, const char *what, const char *file, int line);
#define WSB_CUDA(call) ::wsb::cuda_check((call), #call, __FILE__, __LINE__)

/* printf into a std::string. */
std::string strprintf(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/*----------------------------------------------------------------------
 * Regimes
 *--------------------------------------------------------------------*/
enum class Dtype { U32, F32, U64, F64 };
constexpr int kNumDtypes = 4;

struct DtypeInfo {
    Dtype dtype;
    const char *name;        /* "u32" ... as in warpsort_dtype_name() */
    int bytes;               /* 4 or 8 */
    bool is_float;           /* order through the float total order */
    warpsort_dtype_t ws;     /* the library's code for it */
};
const DtypeInfo &dtype_info(Dtype d);

/* Inputs come from src/core/keygen.h, the generator (and the names) the CLI
 * and the tests use. The harness times the distributions whose floats are
 * finite and normal, so the rivals that compare with `<` agree with
 * warpsort's total order; --dist selects among these. */
using Dist = keygen_dist_t;
constexpr Dist kDists[] = {KEYGEN_RANDOM, KEYGEN_SORTED,   KEYGEN_REVERSED,
                           KEYGEN_FEW,    KEYGEN_EQUAL,    KEYGEN_TWO,
                           KEYGEN_SKEWED, KEYGEN_EXPONENTIAL, KEYGEN_ALL_BUT_ONE};
constexpr int kNumDists = sizeof kDists / sizeof kDists[0];
/* Position of d in kDists (-1 if the harness does not time it). */
int dist_index(Dist d);
const char *dist_name(Dist d);

/* Values of pairs are always uint32_t (the input position, so a sorted
 * output can be checked against the input exactly). */
constexpr int kValueBytes = 4;

struct Regime {
    Dtype dtype = Dtype::U32;
    bool pairs = false;
    Dist dist = KEYGEN_RANDOM;
    uint64_t seg_size = 0; /* 0: sort the whole array; else equal segments of this size */
    bool stable = false;   /* --stable: rivals sort stably; those that cannot are n/a */
};
/* "u32 keys random", "f64 pairs few seg1024". */
std::string regime_label(const Regime &r);

/*----------------------------------------------------------------------
 * Device buffers of one (regime, n) measurement. Allocated by bench.cu.
 *--------------------------------------------------------------------*/
struct Buffers {
    Regime regime;
    size_t n = 0;
    size_t key_bytes = 0;
    size_t num_segments = 1;          /* n / seg_size, or 1 */
    void *keys_pristine = nullptr;    /* the input, never modified after generation */
    void *keys_work = nullptr;        /* reset from keys_pristine before each repeat */
    void *keys_alt = nullptr;         /* second buffer for rivals that ping-pong */
    void *keys_ref = nullptr;         /* the verified sorted keys (whole-array regimes) */
    uint32_t *vals_work = nullptr;    /* pairs: reset to 0,1,2,... before each repeat */
    uint32_t *vals_alt = nullptr;     /* pairs: second buffer */
    int *seg_offsets = nullptr;       /* segmented: num_segments + 1 offsets */
    cudaStream_t stream = nullptr;
};

/*----------------------------------------------------------------------
 * A rival running on the device. The timing loop calls, per repeat:
 * reset input; before_run(); [start event] run() [stop event]; finish();
 * verify out_keys()/out_vals(). Rivals report failures through the
 * returned bool and *err; they never throw on purpose (Thrust may: the
 * loop catches that too).
 *--------------------------------------------------------------------*/
class DeviceRival {
public:
    virtual ~DeviceRival() = default;
    /* Device bytes this rival will allocate for b (for the memory check). */
    virtual bool temp_bytes(const Buffers &b, size_t *bytes, std::string *err) = 0;
    /* Allocates temp storage, contexts, ...: outside timing. */
    virtual bool prepare(const Buffers &b, std::string *err) = 0;
    /* Per repeat, outside timing (e.g. rewind a double buffer). */
    virtual void before_run(const Buffers &) {}
    /* The timed work, enqueued on b.stream. */
    virtual bool run(const Buffers &b, std::string *err) = 0;
    /* After the stop event completed, outside timing (collect async errors). */
    virtual bool finish(const Buffers &, std::string *) { return true; }
    /* Where the sorted keys / values are after run(). */
    virtual const void *out_keys(const Buffers &b) const { return b.keys_work; }
    virtual const uint32_t *out_vals(const Buffers &b) const { return b.vals_work; }
    /* Passes over memory (read + write of every key and value) that the
     * rival's algorithm makes, for the bytes-moved column; 0 = no model. */
    virtual double model_passes(const Buffers &) const { return 0.0; }
    /* Free-form note for the row (e.g. "caching allocator"). */
    virtual std::string note() const { return std::string(); }
};

/* Instantiates R<K> for the key type of d (K = uint32_t, float, uint64_t,
 * double): the one place that maps a runtime dtype to a C++ type. */
template <template <class> class R, class... Args>
std::unique_ptr<DeviceRival> make_typed(Dtype d, Args &&...args) {
    switch (d) {
    case Dtype::U32: return std::unique_ptr<DeviceRival>(new R<uint32_t>(args...));
    case Dtype::F32: return std::unique_ptr<DeviceRival>(new R<float>(args...));
    case Dtype::U64: return std::unique_ptr<DeviceRival>(new R<uint64_t>(args...));
    case Dtype::F64: return std::unique_ptr<DeviceRival>(new R<double>(args...));
    }
    return nullptr;
}

/* Owns one cudaMalloc'd block (temp storage of a rival). */
class DeviceMemory {
public:
    DeviceMemory() = default;
    ~DeviceMemory() { release(); }
    DeviceMemory(const DeviceMemory &) = delete;
    DeviceMemory &operator=(const DeviceMemory &) = delete;
    /* Returns the cudaMalloc error (and clears it) instead of throwing. */
    cudaError_t allocate(size_t bytes) {
        release();
        if (bytes == 0) bytes = 1;
        cudaError_t e = cudaMalloc(&ptr_, bytes);
        if (e != cudaSuccess) {
            ptr_ = nullptr;
            (void)cudaGetLastError();
            return e;
        }
        bytes_ = bytes;
        return cudaSuccess;
    }
    void release() {
        if (ptr_) cudaFree(ptr_);
        ptr_ = nullptr;
        bytes_ = 0;
    }
    void *get() const { return ptr_; }
    size_t size() const { return bytes_; }

private:
    void *ptr_ = nullptr;
    size_t bytes_ = 0;
};

/* "cudaErrorMemoryAllocation: out of memory" */
inline std::string cuda_error_text(cudaError_t e) {
    return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

/* Factories, one per source file. Each returns nullptr where the rival
 * cannot run the regime at all, with *why saying so (row shows n/a). */
/* offset64: num_items as int64_t (CUB then sizes its tiles for 64-bit
 * offsets, as Thrust's calls do), else as int. */
std::unique_ptr<DeviceRival> make_cub_radix(const Regime &r, bool offset64, std::string *why);
std::unique_ptr<DeviceRival> make_cub_merge(const Regime &r, std::string *why);
std::unique_ptr<DeviceRival> make_cub_segmented(const Regime &r, std::string *why);
std::unique_ptr<DeviceRival> make_thrust(const Regime &r, std::string *why);
std::unique_ptr<DeviceRival> make_seed_naive(const Regime &r, std::string *why);
std::unique_ptr<DeviceRival> make_seed_hybrid(const Regime &r, std::string *why);
std::unique_ptr<DeviceRival> make_warpsort_cuda(const Regime &r, int device, std::string *why);

/* Probes the warpsort CUDA backend once: true if a context can be created;
 * otherwise *why says why (printed once, and on each skipped row). */
bool warpsort_cuda_probe(int device, cudaStream_t stream, std::string *why);

/* The seed baselines' pass counts (every launch reads and writes the array). */
double seed_naive_passes(size_t n);
double seed_hybrid_passes(size_t n);

/*----------------------------------------------------------------------
 * Data: generation, reference, verification (data.cu, cub_radix.cu)
 *--------------------------------------------------------------------*/

/* Sorts n keys of dtype ascending with cub::DeviceRadixSort from `in` into
 * `out` (in and out distinct; `scratch` is a third n-key buffer). Used to
 * build the reference. Synchronous. */
void radix_sort_keys_reference(Dtype d, const void *in, void *out, void *scratch, size_t n,
                               cudaStream_t stream);

/* Fills b.keys_pristine per b.regime (and b.keys_ref for whole-array
 * regimes, b.seg_offsets for segmented ones), synchronously. */
void generate_input(Buffers &b, uint64_t seed);

/* Writes 0, 1, ..., n-1 into v (async on stream). */
void fill_iota(uint32_t *v, size_t n, cudaStream_t stream);
/* Order-independent 128-bit hash of the key bit patterns of each segment
 * (segments of seg_size; seg_size 0 = one segment). out holds 2 * segments
 * uint64_t. Equal hashes per segment <=> same multiset, up to collisions. */
void hash_segments(const void *keys, size_t n, size_t key_bytes, uint64_t seg_size,
                   uint64_t *out, size_t num_segments, cudaStream_t stream);

/* What the verifier found. Every count must be zero for a row to pass. */
struct VerifyResult {
    uint64_t unsorted = 0;        /* i with key[i] > key[i+1] inside one segment */
    uint64_t ref_mismatch = 0;    /* i with key bits != reference bits */
    uint64_t hash_mismatch = 0;   /* segments whose key multiset hash differs from the input's */
    uint64_t val_range = 0;       /* values >= n */
    uint64_t val_dup = 0;         /* values seen twice (so not a permutation) */
    uint64_t val_follow = 0;      /* i with key[i] != input_key[value[i]] */
    uint64_t val_segment = 0;     /* values that left their segment */
    uint64_t val_unstable = 0;    /* stable rows: i with key[i] == key[i+1], value[i] > value[i+1] */
    uint64_t first_bad = UINT64_MAX; /* smallest index of any failure above, if known */
    std::string host_problem;     /* from the host cross-check, if it ran and failed */
    bool ok() const {
        return unsorted == 0 && ref_mismatch == 0 && hash_mismatch == 0 && val_range == 0 &&
               val_dup == 0 && val_follow == 0 && val_segment == 0 && val_unstable == 0 &&
               host_problem.empty();
    }
    std::string describe() const;
};

/* Device scratch of the verifier for one (regime, n); owns its memory. */
class Verifier {
public:
    Verifier(const Buffers &b);
    ~Verifier();
    Verifier(const Verifier &) = delete;
    Verifier &operator=(const Verifier &) = delete;
    /* Bytes it allocates for b (for the memory check). */
    static size_t bytes_needed(const Regime &r, size_t n);
    /* Hashes the pristine input per segment (once, after generation). */
    void hash_input();
    /* Checks keys (and values, for pairs) on the GPU: exact comparison to
     * the reference keys for whole-array regimes; sortedness within
     * segments plus per-segment multiset hashes for segmented ones; for
     * pairs, values a permutation of 0..n-1 that carry their keys
     * (key[i] == input[value[i]]) and stay in their segment. Synchronous. */
    VerifyResult check(const void *keys, const uint32_t *vals, bool against_ref = true);
    /* Checks the reference itself: sorted and the same multiset as the input. */
    VerifyResult check_reference();

    /* The check the timing loop runs after every run of one rival. The
     * first run after forget() gets the full check(); its output, once it
     * passes, is remembered. A later run whose output is bit for bit the
     * remembered one (keys against the reference or the remembered keys,
     * values against the remembered values: sequential reads only) is
     * correct by that equality; any other output gets the full check again
     * (values may legitimately differ among equal keys). Exact either way. */
    VerifyResult check_run(const void *keys, const uint32_t *vals);
    void forget() { remembered_ = false; }
    /* How many check_run() calls took the full check / the equality path. */
    uint64_t full_checks = 0, equality_checks = 0;

private:
    void remember(const void *keys, const uint32_t *vals);
    const Buffers &b_;
    uint64_t *in_hash_ = nullptr;    /* 2 * num_segments */
    uint64_t *out_hash_ = nullptr;   /* 2 * num_segments */
    uint32_t *bitmap_ = nullptr;     /* pairs: one bit per value */
    void *counters_ = nullptr;       /* device VerifyCounters */
    uint32_t *saved_vals_ = nullptr; /* pairs: the remembered values */
    void *saved_keys_ = nullptr;     /* segmented: the remembered keys */
    bool remembered_ = false;
};

/* Runs the verifier on small planted faults; returns "" if every fault was
 * caught and every clean input passed, else what went wrong. */
std::string verifier_self_test(cudaStream_t stream);

/* Independent host check (copies back; the expected keys come from
 * std::sort of the pristine input, per segment, computed once and reused by
 * every rival of the same (regime, n)). check() returns "" if keys (and
 * vals, for pairs, unless NULL) are a correct result for the input. */
class HostCheck {
public:
    explicit HostCheck(const Buffers &b);
    std::string check(const void *keys, const uint32_t *vals);

private:
    const Buffers &b_;
    bool built_ = false;
    std::vector<uint64_t> input_, expect_; /* key bits widened to 64 */
};
/* One-shot HostCheck. */
std::string host_cross_check(const Buffers &b, const void *keys, const uint32_t *vals);

/*----------------------------------------------------------------------
 * Results and reporting (report.cu)
 *--------------------------------------------------------------------*/
enum class RowStatus { Ok, Failed, Error, Skipped, NotApplicable };
const char *row_status_name(RowStatus s);

struct Row {
    Regime regime;
    size_t n = 0;
    std::string rival;
    RowStatus status = RowStatus::Skipped;
    std::string note;               /* why skipped / what failed / how it ran */
    std::vector<double> times_ms;   /* the timed repeats (after warm-up) */
    int warmup = 0;
    std::string timer;              /* "cuda-events" or "clock_gettime" */
    double median_ms = 0, min_ms = 0, mean_ms = 0, max_ms = 0;
    double gkeys_per_s = 0;
    double model_passes = 0;        /* 0 = no model */
    double model_bytes = 0;
    double pct_copy_bw = 0;
    bool host_checked = false;      /* the independent host cross-check also ran */
};

struct RunInfo {
    std::string command_line;
    std::string date_utc;
    std::string gpu_name;
    int sm_count = 0;
    int cc_major = 0, cc_minor = 0;
    size_t gpu_memory_bytes = 0;
    int l2_bytes = 0;
    std::string driver_version;     /* NVIDIA driver, e.g. "580.159.04", or "unknown" */
    int cuda_driver_api = 0;        /* cudaDriverGetVersion */
    int cuda_runtime = 0;           /* cudaRuntimeGetVersion */
    std::string warpsort_version;
    std::string cccl_version;
    std::string nvcc_version;
    std::string cuda_arch;
    std::string git_commit;         /* of the source tree at configure time */
    std::string hostname;
    double copy_bw_bytes_per_s = 0; /* device-to-device, read + written, median */
    double copy_bw_end_bytes_per_s = 0;
    size_t copy_bw_buffer_bytes = 0;
    std::string warpsort_cuda_note; /* why warpsort CUDA rows were skipped, if they were */
    /* settings */
    int repeat = 0, slow_repeat = 0, warmup = 0;
    uint64_t seed = 0;
    bool flush_l2 = true;
    int host_check_max_log = 0;
    int cpu_max_log = 0, seed_max_log = 0;
    std::string aborted;            /* non-empty if the run stopped early */
    double wall_s = 0;
    /* Where the wall time went (seconds), to keep the harness's own cost in view. */
    double t_setup = 0;      /* buffers, input generation, reference and its checks */
    double t_reset = 0;      /* copying the pristine input back, L2 flushes */
    double t_run = 0;        /* the rivals' runs, warm-up included (host wall time) */
    double t_verify = 0;     /* the GPU verifier after every run */
    double t_host_check = 0; /* the host std::sort cross-checks */
    double t_rival_setup = 0; /* rivals' temp storage, contexts, teardown */
    uint64_t full_checks = 0, equality_checks = 0; /* Verifier::check_run paths taken */
};

/* Table on stdout. */
void print_table_header();
void print_row(const Row &row);
/* Writes the JSON file; throws BenchError if it cannot. */
void write_json(const std::string &path, const RunInfo &info, const std::vector<Row> &rows);
/* JSON string escaping (exposed for the self-test). */
std::string json_escape(const std::string &s);

} // namespace wsb

#endif /* WARPSORT_BENCH_CUH */
