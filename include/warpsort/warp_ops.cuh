/*
 * warpsort/warp_ops.cuh - warp primitives: reduce, inclusive and exclusive
 * scan with any associative operator, ballot-based compaction (public
 * device API; see docs/device-api.md).
 *
 * Every primitive works on groups of WIDTH consecutive lanes (WIDTH = 1, 2,
 * 4, 8, 16 or 32; a group is lanes g*WIDTH .. g*WIDTH+WIDTH-1), one item
 * per lane, registers only: no shared memory, no barrier. All 32 lanes of
 * the warp call a primitive together, converged, with the same template
 * arguments (full-mask shuffles and ballots).
 *
 * T is any trivially copyable type; it travels through shuffles as 32-bit
 * words (ceil(sizeof(T) / 4) shuffles per step). op(a, b) must be
 * associative; it need not be commutative: scans combine in lane order,
 * op(earlier, later), and so does the reduction's tree (lane order is kept
 * at every level).
 */
#ifndef WARPSORT_WARP_OPS_CUH
#define WARPSORT_WARP_OPS_CUH

#include <stdint.h>
#include <string.h>

namespace warpsort {

/* Ready-made operators (any lambda or functor with T op(T, T) works too). */
struct plus_op {
    template <typename T>
    __device__ __forceinline__ T operator()(const T &a, const T &b) const {
        return a + b;
    }
};
struct min_op {
    template <typename T>
    __device__ __forceinline__ T operator()(const T &a, const T &b) const {
        return b < a ? b : a;
    }
};
struct max_op {
    template <typename T>
    __device__ __forceinline__ T operator()(const T &a, const T &b) const {
        return a < b ? b : a;
    }
};
struct bit_or_op {
    template <typename T>
    __device__ __forceinline__ T operator()(const T &a, const T &b) const {
        return a | b;
    }
};

namespace detail {
template <typename A, typename B>
struct same_type {
    static constexpr bool value = false;
};
template <typename A>
struct same_type<A, A> {
    static constexpr bool value = true;
};
__device__ __forceinline__ int warp_lane() {
    unsigned l;
    asm("mov.u32 %0, %%laneid;" : "=r"(l));
    return (int)l;
}
/* Lanes of the calling lane's group, as a ballot mask. */
template <int WIDTH>
__device__ __forceinline__ unsigned group_mask(int lane) {
    if constexpr (WIDTH == 32)
        return 0xFFFFFFFFu;
    else
        return ((1u << WIDTH) - 1u) << (lane & ~(WIDTH - 1));
}

/* Shuffles of any trivially copyable T, word by word. For 4- and 8-byte
 * arithmetic types the copies fold away and this is the plain intrinsic. */
enum shfl_kind { SHFL_XOR, SHFL_UP, SHFL_IDX };
template <shfl_kind KIND, int WIDTH, typename T>
__device__ __forceinline__ T shfl(const T &x, int arg) {
    constexpr int WORDS = (int)((sizeof(T) + 3) / 4);
    unsigned w[WORDS];
    w[WORDS - 1] = 0;
    memcpy(w, &x, sizeof(T));
#pragma unroll
    for (int i = 0; i < WORDS; i++) {
        if constexpr (KIND == SHFL_XOR)
            w[i] = __shfl_xor_sync(0xFFFFFFFFu, w[i], arg, WIDTH);
        else if constexpr (KIND == SHFL_UP)
            w[i] = __shfl_up_sync(0xFFFFFFFFu, w[i], arg, WIDTH);
        else
            w[i] = __shfl_sync(0xFFFFFFFFu, w[i], arg, WIDTH);
    }
    T y;
    memcpy(&y, w, sizeof(T));
    return y;
}
} // namespace detail

/* op over the group's WIDTH items; every lane of the group gets the result.
 * A butterfly of log2(WIDTH) shuffle steps, each combining the lower half's
 * partial with the upper half's, so lane order is kept. */
template <int WIDTH = 32, typename T, typename Op>
__device__ __forceinline__ T warp_reduce(T x, Op op) {
    static_assert(WIDTH >= 1 && WIDTH <= 32 && (WIDTH & (WIDTH - 1)) == 0,
                  "groups of 1, 2, 4, 8, 16 or 32 lanes");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    /* A whole warp's 32-bit integer sum, minimum or maximum is one redux.sync
     * instruction (8.0 and newer): the same result as the butterfly below. */
    constexpr bool INT32 =
        detail::same_type<T, int>::value || detail::same_type<T, unsigned>::value;
    if constexpr (WIDTH == 32 && INT32 && detail::same_type<Op, plus_op>::value)
        return (T)__reduce_add_sync(0xFFFFFFFFu, x);
    else if constexpr (WIDTH == 32 && INT32 && detail::same_type<Op, min_op>::value)
        return (T)__reduce_min_sync(0xFFFFFFFFu, x);
    else if constexpr (WIDTH == 32 && INT32 && detail::same_type<Op, max_op>::value)
        return (T)__reduce_max_sync(0xFFFFFFFFu, x);
    else
#endif
    {
        const int lane = detail::warp_lane();
#pragma unroll
        for (int d = 1; d < WIDTH; d *= 2) {
            const T other = detail::shfl<detail::SHFL_XOR, WIDTH>(x, d);
            x = (lane & d) ? op(other, x) : op(x, other);
        }
        return x;
    }
}

/* Inclusive scan: lane i of the group (i = lane % WIDTH) gets
 * op(x_0, ..., x_i). log2(WIDTH) shuffle-up steps (Kogge-Stone). */
template <int WIDTH = 32, typename T, typename Op>
__device__ __forceinline__ T warp_inclusive_scan(T x, Op op) {
    static_assert(WIDTH >= 1 && WIDTH <= 32 && (WIDTH & (WIDTH - 1)) == 0,
                  "groups of 1, 2, 4, 8, 16 or 32 lanes");
    const int glane = detail::warp_lane() & (WIDTH - 1);
#pragma unroll
    for (int d = 1; d < WIDTH; d *= 2) {
        const T lower = detail::shfl<detail::SHFL_UP, WIDTH>(x, d);
        if (glane >= d) x = op(lower, x);
    }
    return x;
}

/* Exclusive scan seeded with init: lane 0 of the group gets init, lane i
 * gets op(init, x_0, ..., x_{i-1}); total receives op(init, x_0, ...,
 * x_{WIDTH-1}) in every lane of the group. init need not be an identity. */
template <int WIDTH = 32, typename T, typename Op>
__device__ __forceinline__ T warp_exclusive_scan(T x, Op op, T init, T &total) {
    const T inclusive = warp_inclusive_scan<WIDTH>(x, op);
    const int glane = detail::warp_lane() & (WIDTH - 1);
    total = op(init, detail::shfl<detail::SHFL_IDX, WIDTH>(inclusive, WIDTH - 1));
    const T before = detail::shfl<detail::SHFL_UP, WIDTH>(inclusive, 1);
    return glane == 0 ? init : op(init, before);
}
template <int WIDTH = 32, typename T, typename Op>
__device__ __forceinline__ T warp_exclusive_scan(T x, Op op, T init) {
    const T inclusive = warp_inclusive_scan<WIDTH>(x, op);
    const int glane = detail::warp_lane() & (WIDTH - 1);
    const T before = detail::shfl<detail::SHFL_UP, WIDTH>(inclusive, 1);
    return glane == 0 ? init : op(init, before);
}

/* Ballot compaction: the lanes of the group where keep holds, in lane
 * order, get ranks 0, 1, ...; returns this lane's rank (the number of
 * keeping lanes before it in the group, also for lanes that do not keep)
 * and sets count to the group's number of keeping lanes. One ballot, two
 * popcounts. */
template <int WIDTH = 32>
__device__ __forceinline__ int warp_compact_rank(bool keep, int &count) {
    static_assert(WIDTH >= 1 && WIDTH <= 32 && (WIDTH & (WIDTH - 1)) == 0,
                  "groups of 1, 2, 4, 8, 16 or 32 lanes");
    const int lane = detail::warp_lane();
    const unsigned kept = __ballot_sync(0xFFFFFFFFu, keep) & detail::group_mask<WIDTH>(lane);
    count = __popc(kept);
    return __popc(kept & ((1u << lane) - 1u));
}
/* Writes the kept items of the group contiguously to out[0, count) in lane
 * order (out: this group's destination; each lane of a group passes the
 * same out) and returns count. Nothing is written past out[count - 1]. */
template <int WIDTH = 32, typename T>
__device__ __forceinline__ int warp_compact(T *out, const T &x, bool keep) {
    int count;
    const int rank = warp_compact_rank<WIDTH>(keep, count);
    if (keep) out[rank] = x;
    return count;
}

} // namespace warpsort

#endif /* WARPSORT_WARP_OPS_CUH */
