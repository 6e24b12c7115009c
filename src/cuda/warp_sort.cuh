/*
 * warp_sort.cuh - bitonic network over one warp's registers.
 *
 * A warp holds 32 * ITEMS items, lane l holding the ITEMS consecutive items
 * l*ITEMS .. l*ITEMS+ITEMS-1 ("blocked" order). Strides below ITEMS are
 * compare-exchanges inside a lane; strides ITEMS .. 16*ITEMS pair lane l
 * with lane l ^ (stride/ITEMS) through __shfl_xor_sync. ITEMS = 1 is the
 * classic one-key-per-lane warp sort.
 *
 * Items are (key, value, position) triples held as three register arrays;
 * V and P may be ws_no_value, in which case they cost nothing. Keys are
 * ordered bits (keys.cuh) and the network sorts ascending by ws_less.
 *
 * Preconditions: all 32 lanes of the warp call these functions together
 * (full-mask shuffles); register arrays are indexed only with constants.
 */
#ifndef WARPSORT_CUDA_WARP_SORT_CUH
#define WARPSORT_CUDA_WARP_SORT_CUH

#include "keys.cuh"

template <typename KB, typename V, typename P, int ITEMS>
struct ws_items {
    KB k[ITEMS];
    V v[ITEMS];
    P p[ITEMS];
};

/* Compare-exchange of registers lo < hi: after it, item lo precedes item hi
 * in direction asc (ascending when true). Keys alone take a min/max pair,
 * which folds to two instructions when asc is a compile-time constant. */
template <typename KB, typename V, typename P, int ITEMS>
__device__ __forceinline__ void ws_exchange_registers(ws_items<KB, V, P, ITEMS> &it, int lo,
                                                      int hi, bool asc) {
    if constexpr (!ws_is_value<V>::value && !ws_is_value<P>::value) {
        const KB a = it.k[lo], b = it.k[hi];
        const KB mn = a < b ? a : b, mx = a < b ? b : a;
        it.k[lo] = asc ? mn : mx;
        it.k[hi] = asc ? mx : mn;
    } else {
        bool out_of_order = asc ? ws_less(it.k[hi], it.p[hi], it.k[lo], it.p[lo])
                                : ws_less(it.k[lo], it.p[lo], it.k[hi], it.p[hi]);
        if (out_of_order) {
            KB tk = it.k[lo]; it.k[lo] = it.k[hi]; it.k[hi] = tk;
            V tv = it.v[lo]; it.v[lo] = it.v[hi]; it.v[hi] = tv;
            P tp = it.p[lo]; it.p[lo] = it.p[hi]; it.p[hi] = tp;
        }
    }
}

/* One bitonic stage of merge size k at stride j < 32*ITEMS over a warp's
 * registers. first is the index of this lane's register 0 within its run
 * (a multiple of ITEMS); the direction of an item pair comes from bit k of
 * the lower index. */
template <typename KB, typename V, typename P, int ITEMS>
__device__ __forceinline__ void ws_warp_stage(ws_items<KB, V, P, ITEMS> &it, int first, int k,
                                              int j) {
    if (j < ITEMS) {
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            /* first is a multiple of ITEMS: below ITEMS the direction bit is
             * i's (a constant), above it the lane's. */
            const bool asc = k < ITEMS ? (i & k) == 0 : (first & k) == 0;
            if ((i & j) == 0) ws_exchange_registers(it, i, i + j, asc);
        }
    } else {
        /* j >= ITEMS >= 1 and k > j, so bit k of the index lies above the
         * register bits: the direction is the same for all of a lane's items. */
        const int lane_mask = j / ITEMS;
        const bool asc = (first & k) == 0;
        const bool lower = ((first / ITEMS) & lane_mask) == 0;
        const bool keep_min = lower == asc;
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            KB ok = ws_shfl_xor(it.k[i], lane_mask);
            if constexpr (!ws_is_value<V>::value && !ws_is_value<P>::value) {
                const KB mine = it.k[i];
                const KB mn = ok < mine ? ok : mine, mx = ok < mine ? mine : ok;
                it.k[i] = keep_min ? mn : mx;
            } else {
                V ov = ws_shfl_xor(it.v[i], lane_mask);
                P op = ws_shfl_xor(it.p[i], lane_mask);
                /* Both partners evaluate the same predicate on (upper, lower),
                 * so exactly one copy of each item survives even on ties. */
                bool take = keep_min ? ws_less(ok, op, it.k[i], it.p[i])
                                     : ws_less(it.k[i], it.p[i], ok, op);
                if (take) {
                    it.k[i] = ok;
                    it.v[i] = ov;
                    it.p[i] = op;
                }
            }
        }
    }
}

/* The strides of merge size k that stay inside the warp: from
 * min(k/2, 16*ITEMS) down to 1. */
template <typename KB, typename V, typename P, int ITEMS>
__device__ __forceinline__ void warp_merge_registers(ws_items<KB, V, P, ITEMS> &it, int first,
                                                     int k) {
    const int top = (k / 2 < 16 * ITEMS) ? k / 2 : 16 * ITEMS;
#pragma unroll
    for (int j = top; j >= 1; j /= 2) ws_warp_stage(it, first, k, j);
}

/* Sorts every run of RUN consecutive items (RUN / ITEMS lanes, RUN a power
 * of two from ITEMS to 32 * ITEMS) into ascending order. first is the
 * lane's register-0 index within its run: (lane * ITEMS) % RUN. Inside the
 * network the direction of merge size k comes from bit k of the index, so
 * neighbouring halves form the bitonic sequences the next size needs; at
 * k = RUN that bit is zero and every run ends ascending. */
template <int RUN, typename KB, typename V, typename P, int ITEMS>
__device__ __forceinline__ void warp_sort_registers(ws_items<KB, V, P, ITEMS> &it, int first) {
    static_assert(RUN >= ITEMS && RUN <= 32 * ITEMS, "a run spans lanes of one warp");
#pragma unroll
    for (int k = 2; k <= RUN; k *= 2) warp_merge_registers(it, first, k);
}

#endif /* WARPSORT_CUDA_WARP_SORT_CUH */
