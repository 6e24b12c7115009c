/*
 * split.cu - the exact split points of a distributed sort (sort.cu, step 3).
 *
 * Boundary j (0 <= j < p - 1) is the global output position g_j where rank
 * j + 1's part starts. Its key v_j is the largest ordered value with
 * count_less(v_j) <= g_j, where count_less(x) counts the keys of all ranks
 * below x: then count_less(v_j) <= g_j < count_less(v_j) + count_equal(v_j).
 * count_less is monotone in x, so v_j is built digit by digit from the top:
 * a round tries every value of the next WS_NCCL_DIGIT_BITS-bit digit at once
 * (one block per boundary, one thread per digit value d, candidate
 * v | d << shift), each rank counts its keys below each candidate with a
 * binary search in its sorted run, one all-reduce sums the counts, and the
 * next round keeps the largest digit whose sum is still <= g_j
 * (__syncthreads_count: the predicate holds exactly for d = 0..d*).
 *
 * Invariant between rounds, per boundary: v (digits found so far), and this
 * rank's lo = lower_bound(v), hi = lower_bound(v + 2^(shift + digit bits)):
 * every candidate of the next round falls in [lo, hi], so its search only
 * spans the keys that share the digits found so far. After the last digit,
 * lo = lower_bound(v_j) and hi = upper_bound(v_j): the rank's keys below
 * v_j and equal to it.
 *
 * The cut: with L_r and E_r rank r's keys below and equal to v_j, and
 * x = g_j - sum_r L_r (how many keys equal to v_j go before the boundary),
 * the equal keys are handed out in rank order: rank r contributes
 * clamp(x - sum_{r' < r} E_r', 0, E_r), so its cut is L_r plus that. The
 * cuts of one boundary add up to g_j exactly, and every rank computes every
 * rank's cuts from one all-gather of (L, E).
 */
#include <stdlib.h>

#include "core/internal.h"
#include "cuda/check.cuh"
#include "nccl/nccl_sort.h"

using warpsort::encode;
using warpsort::key_codec;

/* First position in keys[lo, hi) whose ordered key is >= x (hi if none). */
template <typename KB>
__device__ __forceinline__ uint64_t ws_lower_bound(const KB *keys, uint64_t lo, uint64_t hi, KB x,
                                                   key_codec c) {
    while (lo < hi) {
        const uint64_t mid = lo + ((hi - lo) >> 1);
        if (encode(keys[mid], c) < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The state of boundary blockIdx.x after the round that tried digit values
 * at prev_shift: v with its digit added, and the new [lo, hi]. Every thread
 * of the block calls it; it ends with every read done (a barrier). */
struct ws_split_state {
    uint64_t v, lo, hi;
};
__device__ __forceinline__ ws_split_state ws_split_resolve(const uint64_t *ctl, ws_nccl_ctl L,
                                                           uint64_t g, int prev_shift) {
    const int j = (int)blockIdx.x, t = (int)threadIdx.x;
    const uint64_t *loc = ctl + L.local + (size_t)j * WS_NCCL_DIGITS;
    const uint64_t *sum = ctl + L.sum + (size_t)j * WS_NCCL_DIGITS;
    const int d = __syncthreads_count(t > 0 && sum[t] <= g);
    ws_split_state st;
    st.v = ctl[L.v + j] | ((uint64_t)d << prev_shift);
    st.lo = loc[d];
    st.hi = d + 1 < WS_NCCL_DIGITS ? loc[d + 1] : ctl[L.hi + j];
    __syncthreads();
    return st;
}

/* One round: resolve the previous digit (unless first), then count this
 * rank's keys below every candidate of the digit at `shift`. */
template <typename KB>
__global__ void __launch_bounds__(WS_NCCL_DIGITS)
    ws_split_round(const KB *keys, uint64_t n_in, uint64_t *ctl, ws_nccl_ctl L, key_codec c,
                   uint64_t n_total, int nranks, int shift, int first) {
    const int j = (int)blockIdx.x, t = (int)threadIdx.x;
    ws_split_state st = {0, 0, n_in};
    if (!first)
        st = ws_split_resolve(ctl, L, ws_nccl_boundary(n_total, nranks, j),
                              shift + WS_NCCL_DIGIT_BITS);
    if (t == 0) {
        ctl[L.v + j] = st.v;
        ctl[L.lo + j] = st.lo;
        ctl[L.hi + j] = st.hi;
    }
    const KB x = (KB)(st.v | ((uint64_t)t << shift));
    ctl[L.local + (size_t)j * WS_NCCL_DIGITS + t] =
        t == 0 ? st.lo : ws_lower_bound<KB>(keys, st.lo, st.hi, x, c);
}

/* After the last round: this rank's (keys below v_j, keys equal to v_j). */
__global__ void __launch_bounds__(WS_NCCL_DIGITS)
    ws_split_final(uint64_t *ctl, ws_nccl_ctl L, uint64_t n_total, int nranks) {
    const int j = (int)blockIdx.x;
    const ws_split_state st = ws_split_resolve(ctl, L, ws_nccl_boundary(n_total, nranks, j), 0);
    if (threadIdx.x == 0) {
        ctl[L.v + j] = st.v;
        ctl[L.lbeq_in + 2 * (size_t)j] = st.lo;
        ctl[L.lbeq_in + 2 * (size_t)j + 1] = st.hi - st.lo;
    }
}

template <typename KB>
static warpsort_status_t ws_split_rounds(const ws_nccl_call *c, const ws_nccl_bufs *b,
                                         const ws_nccl_ctl *L, uint64_t n_total) {
    const int m = c->nranks - 1;
    const int bits = (int)sizeof(KB) * 8;
    for (int shift = bits - WS_NCCL_DIGIT_BITS; shift >= 0; shift -= WS_NCCL_DIGIT_BITS) {
        ws_split_round<KB><<<(unsigned)m, WS_NCCL_DIGITS, 0, c->s>>>(
            (const KB *)b->sorted_k, c->n_in, b->ctl, *L, c->codec, n_total, c->nranks, shift,
            shift == bits - WS_NCCL_DIGIT_BITS);
        WS_CUDA_TRY_AT(c->ctx, cudaGetLastError(), "split-point search");
        WS_NCCL_TRY(c, ncclAllReduce(b->ctl + L->local, b->ctl + L->sum, (size_t)m * WS_NCCL_DIGITS,
                                     ncclUint64, ncclSum, c->comm, c->s));
    }
    ws_split_final<<<(unsigned)m, WS_NCCL_DIGITS, 0, c->s>>>(b->ctl, *L, n_total, c->nranks);
    WS_CUDA_TRY_AT(c->ctx, cudaGetLastError(), "split-point search");
    return WARPSORT_OK;
}

/* The cuts from every rank's (L, E) per boundary (lbeq: 2 (p - 1) words per
 * rank, rank-major), as described at the top. */
static warpsort_status_t ws_split_cuts(const ws_nccl_call *c, const uint64_t *lbeq,
                                       const uint64_t *n_in_all, uint64_t n_total, uint64_t *cuts) {
    const size_t p = (size_t)c->nranks, m = p - 1, row = p + 1;
    for (size_t r = 0; r < p; r++) {
        cuts[r * row] = 0;
        cuts[r * row + p] = n_in_all[r];
    }
    for (size_t j = 0; j < m; j++) {
        const uint64_t g = ws_nccl_boundary(n_total, c->nranks, (int)j);
        uint64_t less = 0, equal = 0;
        for (size_t r = 0; r < p; r++) {
            less += lbeq[r * 2 * m + 2 * j];
            equal += lbeq[r * 2 * m + 2 * j + 1];
        }
        /* g = n_total (fewer items than ranks) takes every key: v_j is the
         * largest value and the cut every run's end. */
        if (less > g || (less + equal <= g && g < n_total))
            return ws_error(c->ctx, WARPSORT_INTERNAL,
                            "%s: split search of boundary %zu at %llu found %llu keys below and "
                            "%llu equal",
                            c->fn, j, (unsigned long long)g, (unsigned long long)less,
                            (unsigned long long)equal);
        const uint64_t x = g - less;
        uint64_t before = 0;
        for (size_t r = 0; r < p; r++) {
            const uint64_t lb = lbeq[r * 2 * m + 2 * j], eq = lbeq[r * 2 * m + 2 * j + 1];
            const uint64_t take = x > before ? (x - before < eq ? x - before : eq) : 0;
            cuts[r * row + j + 1] = lb + take;
            before += eq;
        }
    }
    for (size_t r = 0; r < p; r++)
        for (size_t j = 0; j < p; j++)
            if (cuts[r * row + j] > cuts[r * row + j + 1])
                return ws_error(c->ctx, WARPSORT_INTERNAL,
                                "%s: cut points of rank %zu out of order at %zu", c->fn, r, j);
    return WARPSORT_OK;
}

warpsort_status_t ws_nccl_find_cuts(const ws_nccl_call *c, const ws_nccl_bufs *b,
                                    const uint64_t *n_in_all, uint64_t n_total, uint64_t *cuts) {
    const ws_nccl_ctl L = ws_nccl_ctl_layout(c->nranks);
    const size_t p = (size_t)c->nranks, m = p - 1;
    WS_TRY(c->kb == 4 ? ws_split_rounds<uint32_t>(c, b, &L, n_total)
                      : ws_split_rounds<uint64_t>(c, b, &L, n_total));
    WS_NCCL_TRY(c, ncclAllGather(b->ctl + L.lbeq_in, b->ctl + L.lbeq_all, 2 * m, ncclUint64,
                                 c->comm, c->s));
    uint64_t *lbeq = (uint64_t *)malloc(2 * m * p * sizeof(uint64_t));
    if (!lbeq)
        return ws_error(c->ctx, WARPSORT_OUT_OF_MEMORY, "%s: no host memory for the split points",
                        c->fn);
    cudaError_t err = cudaMemcpyAsync(lbeq, b->ctl + L.lbeq_all, 2 * m * p * sizeof(uint64_t),
                                      cudaMemcpyDeviceToHost, c->s);
    if (err == cudaSuccess) err = cudaStreamSynchronize(c->s);
    warpsort_status_t s = err != cudaSuccess ? ws_cuda_fail(c->ctx, err, "split points download")
                                             : ws_split_cuts(c, lbeq, n_in_all, n_total, cuts);
    free(lbeq);
    return s;
}
