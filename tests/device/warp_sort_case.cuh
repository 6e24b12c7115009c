/*
 * warp_sort_case.cuh - one warp sort test case: a kernel in which every
 * group sorts its items (full, or partial with per-group valid counts
 * 0, 1, all, all but one, random), checked group by group against the
 * host reference over several distributions (ties, NaNs, +-0).
 */
#ifndef WARPSORT_WARP_SORT_CASE_CUH
#define WARPSORT_WARP_SORT_CASE_CUH
#include <stdlib.h>

#include <vector>

#include "device_test.h"
#include "warpsort/warp_sort.cuh"

using warpsort::ascending;
using warpsort::descending;
using warpsort::no_value;
using warpsort::sort_order;

/* Every lane loads K blocked items, its group sorts them (partial when
 * valid is not NULL: valid[group]), every lane stores all K back. */
template <typename T, typename V, int K, int WIDTH, sort_order ORDER, bool STABLE>
__global__ void warp_sort_kernel(T *keys, V *vals, const int *valid) {
    const int lane = blockIdx.x * blockDim.x + threadIdx.x;
    constexpr bool PAIRS = warpsort::is_value<V>::value;
    T k[K];
    V v[K];
#pragma unroll
    for (int i = 0; i < K; i++) {
        k[i] = keys[(size_t)lane * K + i];
        if constexpr (PAIRS) v[i] = vals[(size_t)lane * K + i];
    }
    if (valid) {
        const int n = valid[lane / WIDTH];
        if constexpr (PAIRS)
            warpsort::warp_sort_pairs<WIDTH, ORDER, STABLE>(k, v, n);
        else
            warpsort::warp_sort_keys<WIDTH, ORDER, STABLE>(k, n);
    } else {
        if constexpr (PAIRS)
            warpsort::warp_sort_pairs<WIDTH, ORDER, STABLE>(k, v);
        else
            warpsort::warp_sort_keys<WIDTH, ORDER, STABLE>(k);
    }
#pragma unroll
    for (int i = 0; i < K; i++) {
        keys[(size_t)lane * K + i] = k[i];
        if constexpr (PAIRS) vals[(size_t)lane * K + i] = v[i];
    }
}

template <typename T, typename V, int K, int WIDTH, sort_order ORDER, bool STABLE>
void run_warp(const dt_options &o, dt_tally &t) {
    constexpr bool PAIRS = warpsort::is_value<V>::value;
    const int dtype = warpsort::key_traits<T>::dtype;
    char name[160];
    snprintf(name, sizeof name, "warp_sort %s %s%d K=%d W=%d %s%s", dt_dtype_name(dtype),
             PAIRS ? "pairs v" : "keys", PAIRS ? (int)sizeof(V) : 0, K, WIDTH,
             ORDER == descending ? "desc" : "asc", STABLE ? " stable" : "");
    if (!dt_selected(o, name)) return;
    const int threads = 128, blocks = 2, lanes = threads * blocks;
    const int seg = WIDTH * K, groups = lanes / WIDTH, n = lanes * K;
    const keygen_dist_t dists[] = {KEYGEN_RANDOM, KEYGEN_FEW, KEYGEN_NAN_MIX, KEYGEN_EQUAL};
    const int num_dists = o.quick ? 2 : 4;
    std::vector<T> in_k(n), out_k(n);
    std::vector<V> in_v(n), out_v(n);
    std::vector<int> valid(groups);
    char msg[512] = "";
    int failed = 0;
    for (int d = 0; d < num_dists && !failed; d++) {
        for (int partial = 0; partial < 2 && !failed; partial++) {
            const uint64_t seed = 1000u * (uint64_t)K + 10u * (uint64_t)WIDTH + (uint64_t)d;
            keygen_fill(in_k.data(), (size_t)n, (int)dtype, dists[d], seed);
            if constexpr (PAIRS) {
                for (int j = 0; j < n; j++) in_v[j] = (V)(j % seg);
            }
            for (int g = 0; g < groups; g++)
                valid[g] = partial ? dt_valid_count(g, seg, seed) : seg;
            T *dk = dt_to_device(in_k.data(), (size_t)n);
            V *dv = PAIRS ? dt_to_device(in_v.data(), (size_t)n) : NULL;
            int *dvalid = partial ? dt_to_device(valid.data(), (size_t)groups) : NULL;
            warp_sort_kernel<T, V, K, WIDTH, ORDER, STABLE><<<blocks, threads>>>(dk, dv, dvalid);
            DT_CUDA(cudaGetLastError());
            DT_CUDA(cudaDeviceSynchronize());
            dt_to_host(out_k.data(), dk, (size_t)n);
            if (PAIRS) dt_to_host(out_v.data(), dv, (size_t)n);
            DT_CUDA(cudaFree(dk));
            if (dv) DT_CUDA(cudaFree(dv));
            if (dvalid) DT_CUDA(cudaFree(dvalid));
            for (int g = 0; g < groups && !failed; g++) {
                const size_t at = (size_t)g * seg;
                failed = dt_check_segment(&in_k[at], &out_k[at], &in_v[at], &out_v[at], seg,
                                          valid[g], ORDER == descending, STABLE, msg, sizeof msg);
                if (failed) {
                    char where[128];
                    snprintf(where, sizeof where, " [%s, %s, group %d, valid %d]",
                             keygen_dist_name(dists[d]), partial ? "partial" : "full", g, valid[g]);
                    strncat(msg, where, sizeof msg - strlen(msg) - 1);
                }
            }
        }
    }
    dt_record(t, name, failed, msg);
}

#endif
