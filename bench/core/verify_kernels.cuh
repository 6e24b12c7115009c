/*
 * verify_kernels.cuh - the verifier's device kernels (verify_device.cu only).
 */
#ifndef WSB_CORE_VERIFY_KERNELS_CUH
#define WSB_CORE_VERIFY_KERNELS_CUH

#include <climits>
#include <cstdint>

#include "core/order.h"

namespace wsb {

struct VerifyCounters {
    unsigned long long unsorted, ref_mismatch, hash_mismatch, val_range, val_dup, val_follow,
        val_segment, first_bad, vals_changed, val_unstable;
};

/* Which segment item i is in: equal segments of 2^shift items, or a
 * per-item segment number (random lengths), or one segment. */
struct SegMap {
    int shift = -1;                /* >= 0: equal segments of 2^shift */
    const uint32_t *ids = nullptr; /* else, if set: ids[i] is i's segment */
    const int *offsets = nullptr;  /* with ids: where each segment starts (reports) */
    __host__ __device__ bool whole() const { return shift < 0 && !ids; }
    __device__ size_t of(size_t i) const { return ids ? ids[i] : shift >= 0 ? i >> shift : 0; }
    __device__ size_t start(size_t s) const {
        return ids ? (size_t)offsets[s] : shift >= 0 ? s << shift : 0;
    }
};

/* ids[i] = the segment of item i: the last s with offsets[s] <= i. */
__global__ void segment_ids_kernel(const int *offsets, size_t num_segments, size_t n,
                                   uint32_t *ids) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        size_t lo = 0, hi = num_segments; /* offsets[lo] <= i < offsets[hi] */
        while (hi - lo > 1) {
            const size_t mid = (lo + hi) / 2;
            if ((size_t)offsets[mid] <= i)
                lo = mid;
            else
                hi = mid;
        }
        ids[i] = (uint32_t)lo;
    }
}

/* Reduces two sums over the warp and adds them to out[2 s], out[2 s + 1]. */
__device__ inline void flush_hash(unsigned long long a1, unsigned long long a2, size_t s,
                                  unsigned long long *out) {
    for (int o = 16; o > 0; o >>= 1) {
        a1 += __shfl_xor_sync(0xFFFFFFFFu, a1, o);
        a2 += __shfl_xor_sync(0xFFFFFFFFu, a2, o);
    }
    if ((threadIdx.x & 31u) == 0) {
        atomicAdd(&out[2 * s], a1);
        atomicAdd(&out[2 * s + 1], a2);
    }
}

/* Sums mix_pair() of every key's bits per segment. A warp keeps running sums
 * while its segment stays the same and flushes them with one atomicAdd per
 * word when it changes (or at the end). */
template <class Bits>
__global__ void hash_kernel(const Bits *keys, size_t n, SegMap sm, unsigned long long *out) {
    const unsigned lane = threadIdx.x & 31u;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    unsigned long long acc1 = 0, acc2 = 0;
    size_t acc_seg = SIZE_MAX; /* warp-uniform */
    for (size_t start = blockIdx.x * (size_t)blockDim.x + (threadIdx.x & ~31u); start < n;
         start += stride) {
        const size_t i = start + lane;
        const bool valid = i < n;
        uint64_t h1 = 0, h2 = 0;
        if (valid) mix_pair((uint64_t)keys[i], &h1, &h2);
        const size_t seg = sm.of(valid ? i : start);
        const size_t seg0 = __shfl_sync(0xFFFFFFFFu, seg, 0);
        if (__all_sync(0xFFFFFFFFu, seg == seg0)) {
            if (seg0 != acc_seg) {
                if (acc_seg != SIZE_MAX) flush_hash(acc1, acc2, acc_seg, out);
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
    if (acc_seg != SIZE_MAX) flush_hash(acc1, acc2, acc_seg, out);
}

/* Bit-for-bit comparison with an output already verified: keys against
 * expect (a difference is a failure, the sorted key sequence being unique),
 * values against the remembered ones (a difference only means "check again
 * in full"). */
template <class Bits, class V>
__global__ void same_kernel(const Bits *keys, const Bits *expect, const V *vals,
                            const V *saved_vals, size_t n, VerifyCounters *c) {
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

struct VerifyArgs {
    SegMap seg;
    bool is_float, stable;
};

/* Checks one value: in range, seen once (bitmap), carries key k, stays in
 * i's segment. Adds to the counters; true if it is bad. */
template <class Bits, class V>
__device__ inline bool bad_value(V v, Bits k, size_t i, const Bits *input, uint32_t *bitmap,
                                 size_t n, const SegMap &seg, unsigned long long (&cnt)[4]) {
    if ((size_t)v >= n) return ++cnt[0], true;
    bool bad = false;
    const uint32_t bit = 1u << ((size_t)v & 31u);
    if (atomicOr(&bitmap[(size_t)v >> 5], bit) & bit) ++cnt[1], bad = true;
    if (input[v] != k) ++cnt[2], bad = true;
    if (!seg.whole() && seg.of((size_t)v) != seg.of(i)) ++cnt[3], bad = true;
    return bad;
}

template <class Bits, class V>
__global__ void verify_kernel(const Bits *keys, const Bits *ref, const V *vals, const Bits *input,
                              uint32_t *bitmap, size_t n, VerifyArgs a, VerifyCounters *c) {
    unsigned long long uns = 0, mis = 0, ust = 0, vc[4] = {0, 0, 0, 0}, first = ULLONG_MAX;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const Bits k = keys[i];
        bool bad = false;
        if (i + 1 < n && (a.seg.whole() || a.seg.of(i + 1) == a.seg.of(i))) {
            if (ordered_bits(k, a.is_float) > ordered_bits(keys[i + 1], a.is_float))
                ++uns, bad = true;
            /* Stable: equal keys keep input order, and values are positions. */
            if (a.stable && vals && k == keys[i + 1] && vals[i] > vals[i + 1]) ++ust, bad = true;
        }
        if (ref && k != ref[i]) ++mis, bad = true;
        if (vals && bad_value(vals[i], k, i, input, bitmap, n, a.seg, vc)) bad = true;
        if (bad && i < first) first = i;
    }
    if (uns) atomicAdd(&c->unsorted, uns);
    if (mis) atomicAdd(&c->ref_mismatch, mis);
    if (vc[0]) atomicAdd(&c->val_range, vc[0]);
    if (vc[1]) atomicAdd(&c->val_dup, vc[1]);
    if (vc[2]) atomicAdd(&c->val_follow, vc[2]);
    if (vc[3]) atomicAdd(&c->val_segment, vc[3]);
    if (ust) atomicAdd(&c->val_unstable, ust);
    if (first != ULLONG_MAX) atomicMin(&c->first_bad, first);
}

__global__ void hash_compare_kernel(const unsigned long long *a, const unsigned long long *b,
                                    size_t num_segments, SegMap sm, VerifyCounters *c) {
    unsigned long long bad = 0, first = ULLONG_MAX;
    for (size_t s = blockIdx.x * (size_t)blockDim.x + threadIdx.x; s < num_segments;
         s += (size_t)gridDim.x * blockDim.x) {
        if (a[2 * s] != b[2 * s] || a[2 * s + 1] != b[2 * s + 1]) {
            ++bad;
            const unsigned long long at = (unsigned long long)sm.start(s);
            if (at < first) first = at;
        }
    }
    if (bad) atomicAdd(&c->hash_mismatch, bad);
    if (first != ULLONG_MAX) atomicMin(&c->first_bad, first);
}

__global__ void words_differ_kernel(const uint32_t *a, const uint32_t *b, size_t n,
                                    unsigned long long *count) {
    unsigned long long d = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        d += a[i] != b[i];
    if (d) atomicAdd(count, d);
}

} // namespace wsb

#endif /* WSB_CORE_VERIFY_KERNELS_CUH */
