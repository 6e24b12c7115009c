/*
 * verify_device.cu - the GPU verifier of device results.
 */
#include "core/verify.h"

#include "core/common.h"
#include "core/input.h"
#include "core/verify_kernels.cuh"

#include <algorithm>

namespace wsb {

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
    if (first_bad != UINT64_MAX)
        s += strprintf(" (first at index %llu)", (unsigned long long)first_bad);
    if (!problem.empty()) s += (s.empty() ? "" : "; ") + problem;
    return s;
}

namespace {

template <class T>
struct Type {
    using type = T;
};

/* Calls f(Type<Bits>(), Type<V>()) for the key and value widths. */
template <class F>
void with_widths(size_t key_bytes, size_t value_bytes, F f) {
    if (key_bytes == 4) {
        if (value_bytes == 8)
            f(Type<uint32_t>(), Type<uint64_t>());
        else
            f(Type<uint32_t>(), Type<uint32_t>());
    } else {
        if (value_bytes == 8)
            f(Type<uint64_t>(), Type<uint64_t>());
        else
            f(Type<uint64_t>(), Type<uint32_t>());
    }
}

VerifyResult read_counters(void *counters, cudaStream_t stream, uint64_t *vals_changed = nullptr) {
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

void reset_counters(void *counters, cudaStream_t stream) {
    VerifyCounters *c = (VerifyCounters *)counters;
    WSB_CUDA(cudaMemsetAsync(c, 0, sizeof *c, stream));
    WSB_CUDA(cudaMemsetAsync(&c->first_bad, 0xFF, sizeof c->first_bad, stream));
}

/* Per-segment multiset hashes of keys into out (2 words per segment). */
void hash_segments(const void *keys, size_t n, size_t key_bytes, const SegMap &sm, uint64_t *out,
                   size_t num_segments, cudaStream_t stream) {
    WSB_CUDA(
        cudaMemsetAsync(out, 0, 2 * std::max<size_t>(num_segments, 1) * sizeof(uint64_t), stream));
    if (n == 0) return;
    if (key_bytes == 4)
        hash_kernel<uint32_t><<<grid_for(n, 256), 256, 0, stream>>>((const uint32_t *)keys, n, sm,
                                                                    (unsigned long long *)out);
    else
        hash_kernel<uint64_t><<<grid_for(n, 256), 256, 0, stream>>>((const uint64_t *)keys, n, sm,
                                                                    (unsigned long long *)out);
    WSB_CUDA(cudaGetLastError());
}

} // namespace

size_t Verifier::bytes_needed(const Regime &r, size_t n, size_t num_segments) {
    size_t bytes = 2 * std::max<size_t>(2 * num_segments, 4) * sizeof(uint64_t) +
                   sizeof(VerifyCounters) + 1024;
    if (r.pairs()) bytes += ((n + 31) / 32) * sizeof(uint32_t) + n * (size_t)r.value_bytes;
    if (r.segmented()) bytes += n * r.key_bytes();
    if (r.seg_max) bytes += n * sizeof(uint32_t);
    return bytes;
}

/* How the kernels find an item's segment in b's regime. */
static SegMap seg_map_of(const Buffers &b, const uint32_t *ids) {
    SegMap sm;
    if (b.regime.seg_max) {
        sm.ids = ids;
        sm.offsets = b.seg_offsets;
    } else if (b.regime.seg_size) {
        sm.shift = exact_log2(b.regime.seg_size);
        if (sm.shift < 0) throw BenchError("verifier: equal segments must be a power of two");
    }
    return sm;
}

Verifier::Verifier(const Buffers &b) : b_(b) {
    try {
        const size_t words = std::max<size_t>(2 * b.num_segments, 4);
        WSB_CUDA(cudaMalloc(&in_hash_, words * sizeof(uint64_t)));
        WSB_CUDA(cudaMalloc(&out_hash_, words * sizeof(uint64_t)));
        WSB_CUDA(cudaMalloc(&counters_, sizeof(VerifyCounters)));
        if (b.value_bytes) {
            WSB_CUDA(cudaMalloc(&bitmap_, ((b.n + 31) / 32) * sizeof(uint32_t)));
            WSB_CUDA(cudaMalloc(&saved_vals_, b.n * b.value_bytes));
        }
        if (b.regime.segmented()) WSB_CUDA(cudaMalloc(&saved_keys_, b.n * b.key_bytes));
        if (b.regime.seg_max) { /* random lengths: each item's segment, from the offsets */
            if (!b.seg_offsets) throw BenchError("verifier: random segments without offsets");
            WSB_CUDA(cudaMalloc(&seg_ids_, std::max<size_t>(b.n, 1) * sizeof(uint32_t)));
            if (b.n)
                segment_ids_kernel<<<grid_for(b.n, 256), 256, 0, b.stream>>>(
                    b.seg_offsets, b.num_segments, b.n, seg_ids_);
            WSB_CUDA(cudaGetLastError());
            WSB_CUDA(cudaStreamSynchronize(b.stream));
        }
    } catch (...) {
        free_all();
        throw;
    }
}

Verifier::~Verifier() { free_all(); }

void Verifier::free_all() {
    /* As DeviceMemory::release: runs in a destructor, must not throw. */
    for (void *p : {(void *)in_hash_, (void *)out_hash_, counters_, (void *)bitmap_, saved_vals_,
                    saved_keys_, (void *)seg_ids_})
        if (p) (void)cudaFree(p);
    in_hash_ = out_hash_ = nullptr;
    seg_ids_ = nullptr;
    counters_ = saved_vals_ = saved_keys_ = nullptr;
    bitmap_ = nullptr;
}

void Verifier::hash_input() {
    hash_segments(b_.keys_pristine, b_.n, b_.key_bytes, seg_map_of(b_, seg_ids_), in_hash_,
                  b_.num_segments, b_.stream);
    WSB_CUDA(cudaStreamSynchronize(b_.stream));
}

VerifyResult Verifier::check(const void *keys, const void *vals) {
    const Buffers &b = b_;
    const bool whole = !b.regime.segmented();
    const VerifyArgs args = {seg_map_of(b, seg_ids_), dtype_info(b.regime.dtype).is_float,
                             b.regime.stable};
    if (b.value_bytes && !vals) throw BenchError("verifier: pairs regime without values");
    reset_counters(counters_, b.stream);
    if (b.value_bytes)
        WSB_CUDA(cudaMemsetAsync(bitmap_, 0, ((b.n + 31) / 32) * sizeof(uint32_t), b.stream));
    const void *ref = whole ? b.keys_ref : nullptr;
    const void *v = b.value_bytes ? vals : nullptr;
    if (b.n > 0) {
        with_widths(b.key_bytes, b.value_bytes, [&](auto kt, auto vt) {
            using Bits = typename decltype(kt)::type;
            using V = typename decltype(vt)::type;
            verify_kernel<Bits, V><<<grid_for(b.n, 256), 256, 0, b.stream>>>(
                (const Bits *)keys, (const Bits *)ref, (const V *)v, (const Bits *)b.keys_pristine,
                bitmap_, b.n, args, (VerifyCounters *)counters_);
        });
        WSB_CUDA(cudaGetLastError());
    }
    /* Segmented keys only: neither a reference nor values pin the multiset,
     * so compare each segment's hash with the input's. */
    if (!ref && !v) {
        hash_segments(keys, b.n, b.key_bytes, args.seg, out_hash_, b.num_segments, b.stream);
        hash_compare_kernel<<<grid_for(b.num_segments, 256), 256, 0, b.stream>>>(
            (const unsigned long long *)in_hash_, (const unsigned long long *)out_hash_,
            b.num_segments, args.seg, (VerifyCounters *)counters_);
        WSB_CUDA(cudaGetLastError());
    }
    return read_counters(counters_, b.stream);
}

VerifyResult Verifier::check_reference() {
    const Buffers &b = b_;
    const VerifyArgs args = {SegMap(), dtype_info(b.regime.dtype).is_float, false};
    reset_counters(counters_, b.stream);
    if (b.n > 0) {
        /* The reference is one sorted array even for segmented regimes. */
        with_widths(b.key_bytes, 0, [&](auto kt, auto) {
            using Bits = typename decltype(kt)::type;
            verify_kernel<Bits, uint32_t><<<grid_for(b.n, 256), 256, 0, b.stream>>>(
                (const Bits *)b.keys_ref, nullptr, nullptr, nullptr, nullptr, b.n, args,
                (VerifyCounters *)counters_);
        });
        WSB_CUDA(cudaGetLastError());
    }
    /* Whole-array multiset of input vs reference: one segment each, in the
     * first four words of out_hash_ (always at least four). */
    hash_segments(b.keys_pristine, b.n, b.key_bytes, SegMap(), out_hash_, 1, b.stream);
    hash_segments(b.keys_ref, b.n, b.key_bytes, SegMap(), out_hash_ + 2, 1, b.stream);
    hash_compare_kernel<<<1, 32, 0, b.stream>>>((const unsigned long long *)out_hash_,
                                                (const unsigned long long *)(out_hash_ + 2), 1,
                                                SegMap(), (VerifyCounters *)counters_);
    WSB_CUDA(cudaGetLastError());
    return read_counters(counters_, b.stream);
}

void Verifier::remember(const void *keys, const void *vals) {
    const Buffers &b = b_;
    if (b.value_bytes)
        WSB_CUDA(cudaMemcpyAsync(saved_vals_, vals, b.n * b.value_bytes, cudaMemcpyDeviceToDevice,
                                 b.stream));
    if (b.regime.segmented())
        WSB_CUDA(cudaMemcpyAsync(saved_keys_, keys, b.n * b.key_bytes, cudaMemcpyDeviceToDevice,
                                 b.stream));
    WSB_CUDA(cudaStreamSynchronize(b.stream));
    remembered_ = true;
}

VerifyResult Verifier::check_run(const void *keys, const void *vals) {
    const Buffers &b = b_;
    if (!remembered_) {
        ++full_checks;
        VerifyResult r = check(keys, vals);
        if (r.ok()) remember(keys, vals);
        return r;
    }
    reset_counters(counters_, b.stream);
    const void *expect = b.regime.segmented() ? saved_keys_ : b.keys_ref;
    const void *v = b.value_bytes ? vals : nullptr;
    if (b.n > 0) {
        with_widths(b.key_bytes, b.value_bytes, [&](auto kt, auto vt) {
            using Bits = typename decltype(kt)::type;
            using V = typename decltype(vt)::type;
            same_kernel<Bits, V><<<grid_for(b.n, 256), 256, 0, b.stream>>>(
                (const Bits *)keys, (const Bits *)expect, (const V *)v, (const V *)saved_vals_, b.n,
                (VerifyCounters *)counters_);
        });
        WSB_CUDA(cudaGetLastError());
    }
    uint64_t changed = 0;
    VerifyResult r = read_counters(counters_, b.stream, &changed);
    if (!r.ok()) return r; /* keys differ from a verified key sequence: wrong */
    if (changed == 0) {    /* identical to a verified output */
        ++equality_checks;
        return r;
    }
    ++full_checks; /* values moved among equal keys, say: check in full */
    return check(keys, vals);
}

uint64_t device_words_differ(const uint32_t *a, const uint32_t *b, size_t n, cudaStream_t stream) {
    DeviceMemory count;
    WSB_CUDA(count.allocate(sizeof(unsigned long long)));
    WSB_CUDA(cudaMemsetAsync(count.get(), 0, sizeof(unsigned long long), stream));
    words_differ_kernel<<<grid_for(n, 256), 256, 0, stream>>>(a, b, n,
                                                              (unsigned long long *)count.get());
    WSB_CUDA(cudaGetLastError());
    unsigned long long host = 0;
    WSB_CUDA(cudaMemcpyAsync(&host, count.get(), sizeof host, cudaMemcpyDeviceToHost, stream));
    WSB_CUDA(cudaStreamSynchronize(stream));
    return host;
}

} // namespace wsb
