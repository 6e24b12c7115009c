/*
 * data.cu - inputs and the verifier of the benchmark harness.
 *
 * Inputs are generated on the GPU by src/core/keygen.h (counter-based, the
 * generator the CLI and the tests use), so a (seed, regime, n) always gives
 * the same keys. Every timed result is checked on
 * the GPU after each repeat (outside the timed region) and, for small n,
 * once more on the host with std::sort: a row that fails is reported as
 * FAILED, never as a number.
 */
#include "bench.cuh"

#include <algorithm>
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <vector>

namespace wsb {

/*======================================================================
 * Small shared helpers
 *====================================================================*/
void cuda_check(cudaError_t err, const char *what, const char *file, int line) {
    if (err == cudaSuccess) return;
    throw BenchError(strprintf("%s:%d: %s failed: %s (%s)", file, line, what,
                               cudaGetErrorName(err), cudaGetErrorString(err)));
}

std::string strprintf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char small[512];
    va_list ap2;
    va_copy(ap2, ap);
    int len = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (len < 0) {
        va_end(ap2);
        return std::string("(format error)");
    }
    if ((size_t)len < sizeof small) {
        va_end(ap2);
        return std::string(small, (size_t)len);
    }
    std::string out((size_t)len, '\0');
    vsnprintf(&out[0], (size_t)len + 1, fmt, ap2);
    va_end(ap2);
    return out;
}

const DtypeInfo &dtype_info(Dtype d) {
    static const DtypeInfo table[kNumDtypes] = {
        {Dtype::U32, "u32", 4, false, WARPSORT_U32},
        {Dtype::F32, "f32", 4, true, WARPSORT_F32},
        {Dtype::U64, "u64", 8, false, WARPSORT_U64},
        {Dtype::F64, "f64", 8, true, WARPSORT_F64},
    };
    return table[(int)d];
}

const char *dist_name(Dist d) { return keygen_dist_name(d); }

int dist_index(Dist d) {
    for (int i = 0; i < kNumDists; ++i)
        if (kDists[i] == d) return i;
    return -1;
}

std::string regime_label(const Regime &r) {
    std::string s = strprintf("%s %s %s", dtype_info(r.dtype).name, r.pairs ? "pairs" : "keys",
                              dist_name(r.dist));
    if (r.seg_size) s += strprintf(" seg%llu", (unsigned long long)r.seg_size);
    if (r.stable) s += " stable";
    return s;
}

std::string VerifyResult::describe() const {
    if (ok()) return "ok";
    std::string s;
    auto add = [&s](uint64_t count, const char *what) {
        if (!count) return;
        if (!s.empty()) s += ", ";
        s += strprintf("%llu %s", (unsigned long long)count, what);
    };
    add(unsorted, "out-of-order neighbours");
    add(ref_mismatch, "keys differing from the reference");
    add(hash_mismatch, "segments whose keys are not the input's");
    add(val_range, "values out of range");
    add(val_dup, "duplicate values");
    add(val_follow, "values not carrying their key");
    add(val_segment, "values outside their segment");
    add(val_unstable, "equal keys out of input order (stable rows)");
    if (first_bad != UINT64_MAX) s += strprintf(" (first at index %llu)", (unsigned long long)first_bad);
    if (!host_problem.empty()) {
        if (!s.empty()) s += "; ";
        s += "host check: " + host_problem;
    }
    return s;
}

/*======================================================================
 * Device helpers
 *====================================================================*/
namespace {

__host__ __device__ inline uint64_t splitmix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* warpsort's total order as unsigned bits (the same map as
 * src/core/keybits.h, restated here so the checker shares no code with the
 * library): floats are flipped so that -inf < ... < -0 < +0 < ... < +inf,
 * then rotated so that every NaN, of either sign, lands above +inf. */
template <class Bits> __host__ __device__ inline Bits ordered_bits(Bits b, bool is_float) {
    const Bits sign = Bits(1) << (sizeof(Bits) * 8 - 1);
    const Bits neg_nans = sizeof(Bits) == 4 ? Bits(0x007FFFFFu) : Bits(0x000FFFFFFFFFFFFFull);
    if (!is_float) return b;
    Bits t = (b & sign) ? Bits(~b) : Bits(b | sign);
    return Bits(t - neg_nans);
}

template <class Bits> __global__ void gen_kernel(Bits *out, size_t n, keygen_t g) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        out[i] = (Bits)keygen_key(&g, i);
}

__global__ void iota_kernel(uint32_t *v, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        v[i] = (uint32_t)i;
}

__global__ void offsets_kernel(int *off, size_t num_segments, uint64_t seg_size) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i <= num_segments;
         i += (size_t)gridDim.x * blockDim.x)
        off[i] = (int)(i * seg_size);
}

__device__ inline void mix_pair(uint64_t bits, uint64_t *h1, uint64_t *h2) {
    *h1 = splitmix64(bits ^ 0xA0761D6478BD642Full);
    uint64_t r = (bits << 17) | (bits >> 47);
    *h2 = splitmix64(r + 0xE7037ED1A0B428DBull) * 0x8EBC6AF09C88C6E3ull;
}

/* Sums two independent 64-bit mixes of every key's bits per segment. A warp
 * keeps running sums while its segment stays the same and flushes them
 * with one atomicAdd per word when it changes (or at the end). */
template <class Bits>
__global__ void hash_kernel(const Bits *keys, size_t n, int seg_shift,
                            unsigned long long *out) {
    const unsigned lane = threadIdx.x & 31u;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    unsigned long long acc1 = 0, acc2 = 0;
    size_t acc_seg = SIZE_MAX; /* warp-uniform */
    for (size_t start = blockIdx.x * (size_t)blockDim.x + (threadIdx.x & ~31u); start < n;
         start += stride) {
        size_t i = start + lane;
        bool valid = i < n;
        uint64_t h1 = 0, h2 = 0;
        if (valid) mix_pair((uint64_t)keys[i], &h1, &h2);
        size_t seg = seg_shift < 0 ? 0 : (valid ? i >> seg_shift : start >> seg_shift);
        size_t seg0 = __shfl_sync(0xFFFFFFFFu, seg, 0);
        bool uniform = __all_sync(0xFFFFFFFFu, seg == seg0);
        if (uniform) {
            if (seg0 != acc_seg) {
                if (acc_seg != SIZE_MAX) {
                    for (int o = 16; o > 0; o >>= 1) {
                        acc1 += __shfl_xor_sync(0xFFFFFFFFu, acc1, o);
                        acc2 += __shfl_xor_sync(0xFFFFFFFFu, acc2, o);
                    }
                    if (lane == 0) {
                        atomicAdd(&out[2 * acc_seg], acc1);
                        atomicAdd(&out[2 * acc_seg + 1], acc2);
                    }
                }
                acc1 = acc2 = 0;
                acc_seg = seg0;
            }
            acc1 += h1;
            acc2 += h2;
        } else if (valid) {
            atomicAdd(&out[2 * seg], (unsigned long long)h1);
            atomicAdd(&out[2 * seg + 1], (unsigned long long)h2);
        }
    }
    if (acc_seg != SIZE_MAX) {
        for (int o = 16; o > 0; o >>= 1) {
            acc1 += __shfl_xor_sync(0xFFFFFFFFu, acc1, o);
            acc2 += __shfl_xor_sync(0xFFFFFFFFu, acc2, o);
        }
        if (lane == 0) {
            atomicAdd(&out[2 * acc_seg], acc1);
            atomicAdd(&out[2 * acc_seg + 1], acc2);
        }
    }
}

struct VerifyCounters {
    unsigned long long unsorted, ref_mismatch, hash_mismatch, val_range, val_dup, val_follow,
        val_segment, first_bad, vals_changed, val_unstable;
};

/* Bit-for-bit comparison with an output already verified: keys against
 * `expect` (the reference or the remembered keys; a difference is a failure,
 * the sorted key sequence being unique), values against the remembered ones
 * (a difference only means "check again in full"). */
template <class Bits>
__global__ void same_kernel(const Bits *keys, const Bits *expect, const uint32_t *vals,
                            const uint32_t *saved_vals, size_t n, VerifyCounters *c) {
    unsigned long long kd = 0, vd = 0, first = ULLONG_MAX;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        if (keys[i] != expect[i]) {
            ++kd;
            if (i < first) first = i;
        }
        if (vals && vals[i] != saved_vals[i]) ++vd;
    }
    if (kd) atomicAdd(&c->ref_mismatch, kd);
    if (vd) atomicAdd(&c->vals_changed, vd);
    if (first != ULLONG_MAX) atomicMin(&c->first_bad, first);
}

template <class Bits>
__global__ void verify_kernel(const Bits *keys, const Bits *ref, const uint32_t *vals,
                              const Bits *input, uint32_t *bitmap, size_t n, int seg_shift,
                              bool is_float, bool stable, VerifyCounters *c) {
    unsigned long long uns = 0, mis = 0, rng = 0, dup = 0, fol = 0, sgm = 0, ust = 0;
    unsigned long long first = ULLONG_MAX;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const Bits k = keys[i];
        bool bad = false;
        if (i + 1 < n && (seg_shift < 0 || ((i + 1) >> seg_shift) == (i >> seg_shift))) {
            if (ordered_bits(k, is_float) > ordered_bits(keys[i + 1], is_float)) {
                ++uns;
                bad = true;
            }
            /* Stable: equal keys keep input order, and values are positions. */
            if (stable && vals && k == keys[i + 1] && vals[i] > vals[i + 1]) {
                ++ust;
                bad = true;
            }
        }
        if (ref && k != ref[i]) {
            ++mis;
            bad = true;
        }
        if (vals) {
            const uint32_t v = vals[i];
            if ((size_t)v >= n) {
                ++rng;
                bad = true;
            } else {
                const uint32_t bit = 1u << (v & 31u);
                if (atomicOr(&bitmap[v >> 5], bit) & bit) {
                    ++dup;
                    bad = true;
                }
                if (input[v] != k) {
                    ++fol;
                    bad = true;
                }
                if (seg_shift >= 0 && ((size_t)v >> seg_shift) != (i >> seg_shift)) {
                    ++sgm;
                    bad = true;
                }
            }
        }
        if (bad && i < first) first = i;
    }
    if (uns) atomicAdd(&c->unsorted, uns);
    if (mis) atomicAdd(&c->ref_mismatch, mis);
    if (rng) atomicAdd(&c->val_range, rng);
    if (dup) atomicAdd(&c->val_dup, dup);
    if (fol) atomicAdd(&c->val_follow, fol);
    if (sgm) atomicAdd(&c->val_segment, sgm);
    if (ust) atomicAdd(&c->val_unstable, ust);
    if (first != ULLONG_MAX) atomicMin(&c->first_bad, first);
}

__global__ void hash_compare_kernel(const unsigned long long *a, const unsigned long long *b,
                                    size_t num_segments, int seg_shift, VerifyCounters *c) {
    unsigned long long bad = 0, first = ULLONG_MAX;
    for (size_t s = blockIdx.x * (size_t)blockDim.x + threadIdx.x; s < num_segments;
         s += (size_t)gridDim.x * blockDim.x) {
        if (a[2 * s] != b[2 * s] || a[2 * s + 1] != b[2 * s + 1]) {
            ++bad;
            unsigned long long at = seg_shift < 0 ? 0ull : (unsigned long long)s << seg_shift;
            if (at < first) first = at;
        }
    }
    if (bad) atomicAdd(&c->hash_mismatch, bad);
    if (first != ULLONG_MAX) atomicMin(&c->first_bad, first);
}

/* Grid for grid-stride loops: enough blocks to fill the GPU, no more. */
unsigned grid_for(size_t n, unsigned block) {
    static int sms = 0;
    if (sms == 0) {
        int dev = 0;
        WSB_CUDA(cudaGetDevice(&dev));
        WSB_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
        if (sms <= 0) sms = 1;
    }
    size_t want = (n + block - 1) / block;
    size_t cap = (size_t)sms * 16;
    if (want > cap) want = cap;
    if (want == 0) want = 1;
    return (unsigned)want;
}

int seg_shift_of(uint64_t seg_size) {
    if (seg_size == 0) return -1;
    int s = 0;
    while ((1ull << s) < seg_size) ++s;
    return s;
}

template <class Bits> void launch_gen(Buffers &b, uint64_t seed) {
    const keygen_t g = keygen_init(b.regime.dist, (int)dtype_info(b.regime.dtype).ws, seed, b.n);
    gen_kernel<Bits><<<grid_for(b.n, 256), 256, 0, b.stream>>>((Bits *)b.keys_pristine, b.n, g);
    WSB_CUDA(cudaGetLastError());
}

} // namespace

/*======================================================================
 * Generation
 *====================================================================*/
void fill_iota(uint32_t *v, size_t n, cudaStream_t stream) {
    if (n == 0) return;
    iota_kernel<<<grid_for(n, 256), 256, 0, stream>>>(v, n);
    WSB_CUDA(cudaGetLastError());
}

void generate_input(Buffers &b, uint64_t seed) {
    /* Each regime and size gets its own stream of keys (keygen mixes in the
     * dtype and the distribution); keys-only and pairs of the same
     * dtype/dist/n share them. */
    const uint64_t s = splitmix64(seed ^ (uint64_t)b.n);
    if (b.key_bytes == 4)
        launch_gen<uint32_t>(b, s);
    else
        launch_gen<uint64_t>(b, s);
    /* The reference: the input sorted by CUB's radix sort (verified below
     * by Verifier::check_reference before any rival is timed). */
    radix_sort_keys_reference(b.regime.dtype, b.keys_pristine, b.keys_ref, b.keys_alt, b.n,
                              b.stream);
    if (b.regime.seg_size) {
        offsets_kernel<<<grid_for(b.num_segments + 1, 256), 256, 0, b.stream>>>(
            b.seg_offsets, b.num_segments, b.regime.seg_size);
        WSB_CUDA(cudaGetLastError());
    }
    WSB_CUDA(cudaStreamSynchronize(b.stream));
}

void hash_segments(const void *keys, size_t n, size_t key_bytes, uint64_t seg_size,
                   uint64_t *out, size_t num_segments, cudaStream_t stream) {
    WSB_CUDA(cudaMemsetAsync(out, 0, 2 * num_segments * sizeof(uint64_t), stream));
    if (n == 0) return;
    int shift = seg_shift_of(seg_size);
    if (key_bytes == 4)
        hash_kernel<uint32_t><<<grid_for(n, 256), 256, 0, stream>>>(
            (const uint32_t *)keys, n, shift, (unsigned long long *)out);
    else
        hash_kernel<uint64_t><<<grid_for(n, 256), 256, 0, stream>>>(
            (const uint64_t *)keys, n, shift, (unsigned long long *)out);
    WSB_CUDA(cudaGetLastError());
}

/*======================================================================
 * Verifier
 *====================================================================*/
size_t Verifier::bytes_needed(const Regime &r, size_t n) {
    size_t segs = r.seg_size ? n / r.seg_size : 1;
    size_t bytes = 2 * std::max<size_t>(2 * segs, 4) * sizeof(uint64_t) + sizeof(VerifyCounters) + 1024;
    if (r.pairs) bytes += ((n + 31) / 32) * sizeof(uint32_t) + n * sizeof(uint32_t);
    if (r.seg_size) bytes += n * (size_t)dtype_info(r.dtype).bytes;
    return bytes;
}

Verifier::Verifier(const Buffers &b) : b_(b) {
    try {
        const size_t words = std::max<size_t>(2 * b.num_segments, 4);
        WSB_CUDA(cudaMalloc(&in_hash_, words * sizeof(uint64_t)));
        WSB_CUDA(cudaMalloc(&out_hash_, words * sizeof(uint64_t)));
        WSB_CUDA(cudaMalloc(&counters_, sizeof(VerifyCounters)));
        if (b.regime.pairs) {
            WSB_CUDA(cudaMalloc(&bitmap_, ((b.n + 31) / 32) * sizeof(uint32_t)));
            WSB_CUDA(cudaMalloc(&saved_vals_, b.n * sizeof(uint32_t)));
        }
        if (b.regime.seg_size) WSB_CUDA(cudaMalloc(&saved_keys_, b.n * b.key_bytes));
    } catch (...) {
        cudaFree(in_hash_);
        cudaFree(out_hash_);
        cudaFree(counters_);
        cudaFree(bitmap_);
        cudaFree(saved_vals_);
        cudaFree(saved_keys_);
        throw;
    }
}

Verifier::~Verifier() {
    cudaFree(in_hash_);
    cudaFree(out_hash_);
    cudaFree(counters_);
    cudaFree(bitmap_);
    cudaFree(saved_vals_);
    cudaFree(saved_keys_);
}


void Verifier::hash_input() {
    hash_segments(b_.keys_pristine, b_.n, b_.key_bytes, b_.regime.seg_size, in_hash_,
                  b_.num_segments, b_.stream);
    WSB_CUDA(cudaStreamSynchronize(b_.stream));
}

static VerifyResult read_counters(void *counters, cudaStream_t stream,
                                  uint64_t *vals_changed = nullptr) {
    VerifyCounters c;
    WSB_CUDA(cudaMemcpyAsync(&c, counters, sizeof c, cudaMemcpyDeviceToHost, stream));
    WSB_CUDA(cudaStreamSynchronize(stream));
    VerifyResult r;
    r.unsorted = c.unsorted;
    r.ref_mismatch = c.ref_mismatch;
    r.hash_mismatch = c.hash_mismatch;
    r.val_range = c.val_range;
    r.val_dup = c.val_dup;
    r.val_follow = c.val_follow;
    r.val_segment = c.val_segment;
    r.val_unstable = c.val_unstable;
    r.first_bad = c.first_bad;
    if (vals_changed) *vals_changed = c.vals_changed;
    return r;
}

static void reset_counters(void *counters, cudaStream_t stream) {
    VerifyCounters *c = (VerifyCounters *)counters;
    WSB_CUDA(cudaMemsetAsync(c, 0, sizeof *c, stream));
    WSB_CUDA(cudaMemsetAsync(&c->first_bad, 0xFF, sizeof c->first_bad, stream));
}

VerifyResult Verifier::check(const void *keys, const uint32_t *vals, bool against_ref) {
    const Buffers &b = b_;
    const bool whole = b.regime.seg_size == 0;
    const int shift = seg_shift_of(b.regime.seg_size);
    const bool is_float = dtype_info(b.regime.dtype).is_float;
    if (b.regime.pairs && !vals) throw BenchError("verifier: pairs regime without values");
    reset_counters(counters_, b.stream);
    if (b.regime.pairs)
        WSB_CUDA(cudaMemsetAsync(bitmap_, 0, ((b.n + 31) / 32) * sizeof(uint32_t), b.stream));
    const void *ref = (whole && against_ref) ? b.keys_ref : nullptr;
    const uint32_t *v = b.regime.pairs ? vals : nullptr;
    if (b.n > 0) {
        unsigned grid = grid_for(b.n, 256);
        if (b.key_bytes == 4)
            verify_kernel<uint32_t><<<grid, 256, 0, b.stream>>>(
                (const uint32_t *)keys, (const uint32_t *)ref, v,
                (const uint32_t *)b.keys_pristine, bitmap_, b.n, shift, is_float,
                b.regime.stable, (VerifyCounters *)counters_);
        else
            verify_kernel<uint64_t><<<grid, 256, 0, b.stream>>>(
                (const uint64_t *)keys, (const uint64_t *)ref, v,
                (const uint64_t *)b.keys_pristine, bitmap_, b.n, shift, is_float,
                b.regime.stable, (VerifyCounters *)counters_);
        WSB_CUDA(cudaGetLastError());
    }
    /* Without a reference (segmented) or without values (keys only, where
     * the reference does not already pin the multiset) compare the
     * multiset of keys with the input's, segment by segment. */
    if (!ref && !v) {
        hash_segments(keys, b.n, b.key_bytes, b.regime.seg_size, out_hash_, b.num_segments,
                      b.stream);
        hash_compare_kernel<<<grid_for(b.num_segments, 256), 256, 0, b.stream>>>(
            (const unsigned long long *)in_hash_, (const unsigned long long *)out_hash_,
            b.num_segments, shift, (VerifyCounters *)counters_);
        WSB_CUDA(cudaGetLastError());
    }
    return read_counters(counters_, b.stream);
}

VerifyResult Verifier::check_reference() {
    const Buffers &b = b_;
    const bool is_float = dtype_info(b.regime.dtype).is_float;
    reset_counters(counters_, b.stream);
    if (b.n > 0) {
        unsigned grid = grid_for(b.n, 256);
        /* The reference is one sorted array even for segmented regimes. */
        if (b.key_bytes == 4)
            verify_kernel<uint32_t><<<grid, 256, 0, b.stream>>>(
                (const uint32_t *)b.keys_ref, nullptr, nullptr, nullptr, nullptr, b.n, -1,
                is_float, false, (VerifyCounters *)counters_);
        else
            verify_kernel<uint64_t><<<grid, 256, 0, b.stream>>>(
                (const uint64_t *)b.keys_ref, nullptr, nullptr, nullptr, nullptr, b.n, -1,
                is_float, false, (VerifyCounters *)counters_);
        WSB_CUDA(cudaGetLastError());
    }
    /* Whole-array multiset of input vs reference: one segment each, in
     * the first four words of out_hash_ (always at least four). */
    hash_segments(b.keys_pristine, b.n, b.key_bytes, 0, out_hash_, 1, b.stream);
    hash_segments(b.keys_ref, b.n, b.key_bytes, 0, out_hash_ + 2, 1, b.stream);
    hash_compare_kernel<<<1, 32, 0, b.stream>>>((const unsigned long long *)out_hash_,
                                                (const unsigned long long *)(out_hash_ + 2), 1,
                                                -1, (VerifyCounters *)counters_);
    WSB_CUDA(cudaGetLastError());
    return read_counters(counters_, b.stream);
}

void Verifier::remember(const void *keys, const uint32_t *vals) {
    const Buffers &b = b_;
    if (b.regime.pairs)
        WSB_CUDA(cudaMemcpyAsync(saved_vals_, vals, b.n * sizeof(uint32_t),
                                 cudaMemcpyDeviceToDevice, b.stream));
    if (b.regime.seg_size)
        WSB_CUDA(cudaMemcpyAsync(saved_keys_, keys, b.n * b.key_bytes, cudaMemcpyDeviceToDevice,
                                 b.stream));
    WSB_CUDA(cudaStreamSynchronize(b.stream));
    remembered_ = true;
}

VerifyResult Verifier::check_run(const void *keys, const uint32_t *vals) {
    const Buffers &b = b_;
    if (!remembered_) {
        ++full_checks;
        VerifyResult r = check(keys, vals);
        if (r.ok()) remember(keys, vals);
        return r;
    }
    reset_counters(counters_, b.stream);
    const void *expect = b.regime.seg_size ? saved_keys_ : b.keys_ref;
    const uint32_t *v = b.regime.pairs ? vals : nullptr;
    if (b.n > 0) {
        unsigned grid = grid_for(b.n, 256);
        if (b.key_bytes == 4)
            same_kernel<uint32_t><<<grid, 256, 0, b.stream>>>(
                (const uint32_t *)keys, (const uint32_t *)expect, v, saved_vals_, b.n,
                (VerifyCounters *)counters_);
        else
            same_kernel<uint64_t><<<grid, 256, 0, b.stream>>>(
                (const uint64_t *)keys, (const uint64_t *)expect, v, saved_vals_, b.n,
                (VerifyCounters *)counters_);
        WSB_CUDA(cudaGetLastError());
    }
    uint64_t changed = 0;
    VerifyResult r = read_counters(counters_, b.stream, &changed);
    if (!r.ok()) return r;   /* keys differ from a verified key sequence: wrong */
    if (changed == 0) {      /* identical to a verified output */
        ++equality_checks;
        return r;
    }
    ++full_checks;           /* values moved among equal keys, say: check in full */
    return check(keys, vals);
}

/*======================================================================
 * Host cross-check: independent of every kernel above.
 *====================================================================*/
namespace {
std::vector<uint64_t> download_widened(const void *dev, size_t n, size_t key_bytes) {
    std::vector<uint64_t> out(n);
    if (key_bytes == 8) {
        WSB_CUDA(cudaMemcpy(out.data(), dev, n * 8, cudaMemcpyDeviceToHost));
    } else {
        std::vector<uint32_t> tmp(n);
        WSB_CUDA(cudaMemcpy(tmp.data(), dev, n * 4, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < n; ++i) out[i] = tmp[i];
    }
    return out;
}
} // namespace

HostCheck::HostCheck(const Buffers &b) : b_(b) {}

std::string HostCheck::check(const void *keys_dev, const uint32_t *vals_dev) {
    const Buffers &b = b_;
    const size_t n = b.n;
    WSB_CUDA(cudaStreamSynchronize(b.stream));
    if (!built_) {
        /* The expected keys: the pristine input sorted per segment by std::sort. */
        const bool is_float = dtype_info(b.regime.dtype).is_float;
        input_ = download_widened(b.keys_pristine, n, b.key_bytes);
        expect_ = input_;
        const size_t seg = b.regime.seg_size ? (size_t)b.regime.seg_size : (n ? n : 1);
        auto less = [is_float, &b](uint64_t x, uint64_t y) {
            if (b.key_bytes == 4)
                return ordered_bits((uint32_t)x, is_float) < ordered_bits((uint32_t)y, is_float);
            return ordered_bits(x, is_float) < ordered_bits(y, is_float);
        };
        for (size_t s = 0; s < n; s += seg)
            std::sort(expect_.begin() + (ptrdiff_t)s,
                      expect_.begin() + (ptrdiff_t)std::min(n, s + seg), less);
        built_ = true;
    }
    std::vector<uint64_t> out = download_widened(keys_dev, n, b.key_bytes);
    for (size_t i = 0; i < n; ++i)
        if (out[i] != expect_[i])
            return strprintf("key %zu is 0x%llx, expected 0x%llx", i, (unsigned long long)out[i],
                             (unsigned long long)expect_[i]);
    if (b.regime.pairs && vals_dev) {
        const size_t seg = b.regime.seg_size ? (size_t)b.regime.seg_size : (n ? n : 1);
        std::vector<uint32_t> vals(n);
        WSB_CUDA(cudaMemcpy(vals.data(), vals_dev, n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
        std::vector<bool> seen(n, false);
        for (size_t i = 0; i < n; ++i) {
            uint32_t v = vals[i];
            if (v >= n) return strprintf("value %zu is %u, out of range", i, v);
            if (seen[v]) return strprintf("value %u appears twice", v);
            seen[v] = true;
            if (input_[v] != out[i]) return strprintf("value %zu (= %u) does not carry its key", i, v);
            if (v / seg != i / seg) return strprintf("value %zu (= %u) left its segment", i, v);
        }
    }
    return std::string();
}

std::string host_cross_check(const Buffers &b, const void *keys, const uint32_t *vals) {
    HostCheck h(b);
    return h.check(keys, vals);
}

/*======================================================================
 * Self-test: plant faults and make sure the verifier catches each one.
 *====================================================================*/
namespace {

struct SelfTestBuffers {
    Buffers b;
    std::vector<void *> allocs;
    ~SelfTestBuffers() {
        for (void *p : allocs) cudaFree(p);
    }
    void *alloc(size_t bytes) {
        void *p = nullptr;
        WSB_CUDA(cudaMalloc(&p, bytes));
        allocs.push_back(p);
        return p;
    }
};

template <class Bits>
std::string self_test_case(Dtype dt, bool pairs, uint64_t seg, Dist dist, cudaStream_t stream) {
    const size_t n = 4096;
    SelfTestBuffers t;
    Buffers &b = t.b;
    b.regime.dtype = dt;
    b.regime.pairs = pairs;
    b.regime.dist = dist;
    b.regime.seg_size = seg;
    b.n = n;
    b.key_bytes = sizeof(Bits);
    b.num_segments = seg ? n / seg : 1;
    b.stream = stream;
    b.keys_pristine = t.alloc(n * sizeof(Bits));
    b.keys_work = t.alloc(n * sizeof(Bits));
    b.keys_alt = t.alloc(n * sizeof(Bits));
    b.keys_ref = t.alloc(n * sizeof(Bits));
    if (pairs) {
        b.vals_work = (uint32_t *)t.alloc(n * sizeof(uint32_t));
        b.vals_alt = (uint32_t *)t.alloc(n * sizeof(uint32_t));
    }
    if (seg) b.seg_offsets = (int *)t.alloc((b.num_segments + 1) * sizeof(int));
    generate_input(b, 12345);

    Verifier ver(b);
    ver.hash_input();
    const std::string label = regime_label(b.regime);
    VerifyResult rr = ver.check_reference();
    if (!rr.ok()) return label + ": reference failed its own check: " + rr.describe();

    /* A correct result, made on the host. */
    const bool is_float = dtype_info(dt).is_float;
    std::vector<Bits> in(n);
    WSB_CUDA(cudaMemcpy(in.data(), b.keys_pristine, n * sizeof(Bits), cudaMemcpyDeviceToHost));
    std::vector<uint32_t> idx(n);
    for (size_t i = 0; i < n; ++i) idx[i] = (uint32_t)i;
    const size_t s = seg ? seg : n;
    for (size_t lo = 0; lo < n; lo += s)
        std::stable_sort(idx.begin() + (ptrdiff_t)lo, idx.begin() + (ptrdiff_t)(lo + s),
                         [&](uint32_t x, uint32_t y) {
                             return ordered_bits(in[x], is_float) < ordered_bits(in[y], is_float);
                         });
    std::vector<Bits> good(n);
    for (size_t i = 0; i < n; ++i) good[i] = in[idx[i]];

    auto upload = [&](const std::vector<Bits> &k, const std::vector<uint32_t> &v) {
        WSB_CUDA(cudaMemcpy(b.keys_work, k.data(), n * sizeof(Bits), cudaMemcpyHostToDevice));
        if (pairs)
            WSB_CUDA(cudaMemcpy(b.vals_work, v.data(), n * sizeof(uint32_t), cudaMemcpyHostToDevice));
    };
    auto expect_ok = [&](const char *what) -> std::string {
        VerifyResult r = ver.check(b.keys_work, b.vals_work);
        std::string h = host_cross_check(b, b.keys_work, b.vals_work);
        if (!r.ok()) return label + ": correct output (" + what + ") rejected: " + r.describe();
        if (!h.empty()) return label + ": correct output (" + what + ") rejected by host check: " + h;
        return std::string();
    };
    auto expect_bad = [&](const char *what) -> std::string {
        VerifyResult r = ver.check(b.keys_work, b.vals_work);
        std::string h = host_cross_check(b, b.keys_work, b.vals_work);
        if (r.ok()) return label + ": planted fault not caught by the GPU verifier: " + what;
        if (h.empty()) return label + ": planted fault not caught by the host check: " + what;
        return std::string();
    };
    std::string err;
    upload(good, idx);
    if (!(err = expect_ok("host-sorted")).empty()) return err;

    /* Find a spot where neighbours differ, inside one segment. */
    size_t at = SIZE_MAX;
    for (size_t i = n / 2; i + 1 < n; ++i)
        if (good[i] != good[i + 1] && (i + 1) % s != 0) {
            at = i;
            break;
        }
    if (at == SIZE_MAX) return label + ": self-test input has no distinct neighbours";

    { /* two keys swapped (values swapped along: only the order is wrong) */
        std::vector<Bits> k = good;
        std::vector<uint32_t> v = idx;
        std::swap(k[at], k[at + 1]);
        std::swap(v[at], v[at + 1]);
        upload(k, v);
        if (!(err = expect_bad("swapped neighbours")).empty()) return err;
    }
    { /* one key replaced by its neighbour: still sorted, multiset wrong */
        std::vector<Bits> k = good;
        k[at] = k[at + 1];
        upload(k, idx);
        if (!(err = expect_bad("key duplicated over its neighbour")).empty()) return err;
    }
    { /* sorted by raw unsigned bits instead of the dtype's order */
        std::vector<Bits> k = in;
        std::vector<uint32_t> v(n);
        for (size_t i = 0; i < n; ++i) v[i] = (uint32_t)i;
        for (size_t lo = 0; lo < n; lo += s)
            std::stable_sort(v.begin() + (ptrdiff_t)lo, v.begin() + (ptrdiff_t)(lo + s),
                             [&](uint32_t x, uint32_t y) { return in[x] < in[y]; });
        for (size_t i = 0; i < n; ++i) k[i] = in[v[i]];
        bool differs = false;
        for (size_t i = 0; i < n; ++i) differs |= k[i] != good[i];
        if (differs) {
            upload(k, v);
            if (!(err = expect_bad("sorted as raw bits")).empty()) return err;
        } else if (is_float) {
            return label + ": self-test input has no negative floats";
        }
    }
    { /* the unsorted input itself */
        upload(in, idx);
        if (!(err = expect_bad("unsorted input")).empty()) return err;
    }
    if (pairs) {
        { /* values of two different keys swapped */
            std::vector<uint32_t> v = idx;
            std::swap(v[at], v[at + 1]);
            upload(good, v);
            if (!(err = expect_bad("values swapped")).empty()) return err;
        }
        { /* one value duplicated */
            std::vector<uint32_t> v = idx;
            v[at] = v[at + 1];
            upload(good, v);
            if (!(err = expect_bad("value duplicated")).empty()) return err;
        }
        { /* one value out of range */
            std::vector<uint32_t> v = idx;
            v[at] = (uint32_t)n + 7u;
            upload(good, v);
            if (!(err = expect_bad("value out of range")).empty()) return err;
        }
        { /* values all zero (a sort that forgot the values) */
            std::vector<uint32_t> v(n, 0u);
            upload(good, v);
            if (!(err = expect_bad("values not written")).empty()) return err;
        }
    }
    { /* check_run: full check first, then equality with the remembered output */
        ver.forget();
        upload(good, idx);
        VerifyResult r1 = ver.check_run(b.keys_work, b.vals_work);
        VerifyResult r2 = ver.check_run(b.keys_work, b.vals_work);
        if (!r1.ok() || !r2.ok() || ver.equality_checks == 0)
            return label + ": check_run rejected a correct output or never took the equality path";
        std::vector<Bits> k = good;
        std::vector<uint32_t> v = idx;
        std::swap(k[at], k[at + 1]);
        std::swap(v[at], v[at + 1]);
        upload(k, v);
        if (ver.check_run(b.keys_work, b.vals_work).ok())
            return label + ": check_run missed swapped neighbours";
        if (pairs) {
            v = idx;
            std::swap(v[at], v[at + 1]);
            upload(good, v);
            if (ver.check_run(b.keys_work, b.vals_work).ok())
                return label + ": check_run missed swapped values";
            /* Another correct output: values exchanged between two equal keys. */
            for (size_t i = 0; i + 1 < n; ++i)
                if (good[i] == good[i + 1] && (i + 1) % s != 0) {
                    v = idx;
                    std::swap(v[i], v[i + 1]);
                    upload(good, v);
                    uint64_t full_before = ver.full_checks;
                    VerifyResult r3 = ver.check_run(b.keys_work, b.vals_work);
                    if (!r3.ok() || ver.full_checks != full_before + 1)
                        return label + ": check_run rejected values exchanged between equal keys: " +
                               r3.describe();
                    break;
                }
        }
    }
    if (seg) { /* two equal-position entries exchanged across a segment border */
        std::vector<Bits> k = good;
        std::vector<uint32_t> v = idx;
        std::swap(k[0], k[s]);
        std::swap(v[0], v[s]);
        if (k[0] != good[0]) {
            upload(k, v);
            if (!(err = expect_bad("entries moved across segments")).empty()) return err;
        }
    }
    return std::string();
}

} // namespace

std::string verifier_self_test(cudaStream_t stream) {
    struct Case {
        Dtype dt;
        bool pairs;
        uint64_t seg;
        Dist dist;
    };
    static const Case cases[] = {
        {Dtype::U32, false, 0, KEYGEN_RANDOM},  {Dtype::U32, true, 0, KEYGEN_RANDOM},
        {Dtype::F32, false, 0, KEYGEN_RANDOM},  {Dtype::F32, true, 0, KEYGEN_FEW},
        {Dtype::U64, true, 0, KEYGEN_RANDOM},   {Dtype::F64, false, 0, KEYGEN_RANDOM},
        {Dtype::F64, true, 256, KEYGEN_RANDOM}, {Dtype::U32, false, 256, KEYGEN_RANDOM},
        {Dtype::F32, false, 16, KEYGEN_RANDOM}, {Dtype::U64, true, 1024, KEYGEN_FEW},
    };
    for (const Case &c : cases) {
        std::string e = dtype_info(c.dt).bytes == 4
                            ? self_test_case<uint32_t>(c.dt, c.pairs, c.seg, c.dist, stream)
                            : self_test_case<uint64_t>(c.dt, c.pairs, c.seg, c.dist, stream);
        if (!e.empty()) return e;
    }
    /* JSON escaping is part of what must not lie. */
    if (json_escape("a\"b\\c\n\x01") != "a\\\"b\\\\c\\n\\u0001")
        return "json_escape is wrong: " + json_escape("a\"b\\c\n\x01");
    return std::string();
}

} // namespace wsb
