/*
 * block_tests.cu - warpsort::block_sort_keys / block_sort_pairs (static and
 * dynamic shared memory, full and partial tiles, storage reused at once)
 * and warpsort::block_merge_keys / block_merge_pairs against the host
 * reference, every dtype in both orders.
 */
#include <stdlib.h>

#include <algorithm>
#include <type_traits>
#include <vector>

#include "device_test.h"
#include "warpsort/block_merge.cuh"
#include "warpsort/block_sort.cuh"

using warpsort::ascending;
using warpsort::descending;
using warpsort::no_value;
using warpsort::sort_order;

/* Block b sorts its THREADS * K items (valid[b] of them when valid is not
 * NULL), twice in a row with the same storage: the second sort of sorted
 * data must change nothing, and racecheck sees the storage reused at once. */
template <typename T, typename V, int THREADS, int K, sort_order ORDER, bool STABLE, bool DYNAMIC>
__global__ void __launch_bounds__(THREADS) block_sort_kernel(T *keys, V *vals, const int *valid) {
    using storage_t = warpsort::block_sort_storage<T, V, THREADS, K>;
    constexpr bool PAIRS = warpsort::is_value<V>::value;
    /* static storage only when not dynamic (a placeholder otherwise) */
    __shared__ typename std::conditional<DYNAMIC, int, storage_t>::type static_storage;
    extern __shared__ __align__(16) unsigned char dynamic_smem[];
    storage_t &storage =
        *reinterpret_cast<storage_t *>(DYNAMIC ? (void *)dynamic_smem : (void *)&static_storage);
    const size_t base = ((size_t)blockIdx.x * THREADS + threadIdx.x) * K;
    T k[K];
    V v[K];
#pragma unroll
    for (int i = 0; i < K; i++) {
        k[i] = keys[base + i];
        if constexpr (PAIRS) v[i] = vals[base + i];
    }
    for (int round = 0; round < 2; round++) {
        if (valid) {
            if constexpr (PAIRS)
                warpsort::block_sort_pairs<ORDER, STABLE>(k, v, storage, valid[blockIdx.x]);
            else
                warpsort::block_sort_keys<ORDER, STABLE>(k, storage, valid[blockIdx.x]);
        } else {
            if constexpr (PAIRS)
                warpsort::block_sort_pairs<ORDER, STABLE>(k, v, storage);
            else
                warpsort::block_sort_keys<ORDER, STABLE>(k, storage);
        }
    }
#pragma unroll
    for (int i = 0; i < K; i++) {
        keys[base + i] = k[i];
        if constexpr (PAIRS) vals[base + i] = v[i];
    }
}

template <typename T, typename V, int THREADS, int K, sort_order ORDER, bool STABLE,
          bool DYNAMIC = false>
static void run_block_sort(const dt_options &o, dt_tally &t) {
    constexpr bool PAIRS = warpsort::is_value<V>::value;
    const int dtype = warpsort::key_traits<T>::dtype;
    char name[160];
    snprintf(name, sizeof name, "block_sort %s %s%d %dx%d %s%s%s", dt_dtype_name(dtype),
             PAIRS ? "pairs v" : "keys", PAIRS ? (int)sizeof(V) : 0, THREADS, K,
             ORDER == descending ? "desc" : "asc", STABLE ? " stable" : "",
             DYNAMIC ? " dynamic" : "");
    if (!dt_selected(o, name)) return;
    const int blocks = 6, tile = THREADS * K, n = blocks * tile;
    const keygen_dist_t dists[] = {KEYGEN_RANDOM, KEYGEN_FEW, KEYGEN_NAN_MIX, KEYGEN_SORTED};
    const int num_dists = o.quick ? 2 : 4;
    std::vector<T> in_k(n), out_k(n);
    std::vector<V> in_v(n), out_v(n);
    std::vector<int> valid(blocks);
    const size_t smem = DYNAMIC ? warpsort::block_sort_smem_bytes<T, V, THREADS, K>() : 0;
    auto kernel = block_sort_kernel<T, V, THREADS, K, ORDER, STABLE, DYNAMIC>;
    if (DYNAMIC)
        DT_CUDA(
            cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    char msg[512] = "";
    int failed = 0;
    for (int d = 0; d < num_dists && !failed; d++) {
        for (int partial = 0; partial < 2 && !failed; partial++) {
            const uint64_t seed = 7000u + 100u * (uint64_t)K + (uint64_t)THREADS + (uint64_t)d;
            keygen_fill(in_k.data(), (size_t)n, (int)dtype, dists[d], seed);
            if constexpr (PAIRS) {
                for (int j = 0; j < n; j++) in_v[j] = (V)(j % tile);
            }
            for (int b = 0; b < blocks; b++)
                valid[b] = partial ? dt_valid_count(b, tile, seed) : tile;
            T *dk = dt_to_device(in_k.data(), (size_t)n);
            V *dv = PAIRS ? dt_to_device(in_v.data(), (size_t)n) : NULL;
            int *dvalid = partial ? dt_to_device(valid.data(), (size_t)blocks) : NULL;
            kernel<<<blocks, THREADS, smem>>>(dk, dv, dvalid);
            DT_CUDA(cudaGetLastError());
            DT_CUDA(cudaDeviceSynchronize());
            dt_to_host(out_k.data(), dk, (size_t)n);
            if (PAIRS) dt_to_host(out_v.data(), dv, (size_t)n);
            DT_CUDA(cudaFree(dk));
            if (dv) DT_CUDA(cudaFree(dv));
            if (dvalid) DT_CUDA(cudaFree(dvalid));
            for (int b = 0; b < blocks && !failed; b++) {
                const size_t at = (size_t)b * tile;
                failed = dt_check_segment(&in_k[at], &out_k[at], &in_v[at], &out_v[at], tile,
                                          valid[b], ORDER == descending, STABLE, msg, sizeof msg);
                if (failed) {
                    char where[128];
                    snprintf(where, sizeof where, " [%s, %s, block %d, valid %d]",
                             keygen_dist_name(dists[d]), partial ? "partial" : "full", b, valid[b]);
                    strncat(msg, where, sizeof msg - strlen(msg) - 1);
                }
            }
        }
    }
    dt_record(t, name, failed, msg);
}

/*--- block merge ---*/

template <typename T, typename V, int K, sort_order ORDER>
__global__ void block_merge_kernel(const T *a, const V *av, int a_len, const T *b, const V *bv,
                                   int b_len, T *keys, V *vals) {
    constexpr bool PAIRS = warpsort::is_value<V>::value;
    const size_t base = (size_t)threadIdx.x * K;
    T k[K];
    V v[K];
#pragma unroll
    for (int i = 0; i < K; i++) {
        k[i] = keys[base + i];
        if constexpr (PAIRS) v[i] = vals[base + i];
    }
    if constexpr (PAIRS)
        warpsort::block_merge_pairs<ORDER>(a, av, a_len, b, bv, b_len, k, v);
    else
        warpsort::block_merge_keys<ORDER>(a, a_len, b, b_len, k);
#pragma unroll
    for (int i = 0; i < K; i++) {
        keys[base + i] = k[i];
        if constexpr (PAIRS) vals[base + i] = v[i];
    }
}

/* Sorted input for the merge, by the key order under test (the order
 * itself is checked against the independent reference by the sort tests). */
template <typename T, sort_order ORDER>
static void sort_by_order(T *k, int n) {
    std::stable_sort(k, k + n, [](T x, T y) {
        return warpsort::to_ordered<ORDER>(x) < warpsort::to_ordered<ORDER>(y);
    });
}

template <typename T, typename V, int K, sort_order ORDER>
static void run_block_merge(const dt_options &o, dt_tally &t) {
    constexpr bool PAIRS = warpsort::is_value<V>::value;
    const int dtype = warpsort::key_traits<T>::dtype;
    char name[160];
    snprintf(name, sizeof name, "block_merge %s %s K=%d %s", dt_dtype_name(dtype),
             PAIRS ? "pairs" : "keys", K, ORDER == descending ? "desc" : "asc");
    if (!dt_selected(o, name)) return;
    const int threads = 128, cap = threads * K;
    /* (a_len, b_len): empty sides, one side, unequal, full capacity, short */
    const int lens[][2] = {{0, 0},       {0, cap},           {cap, 0},
                           {1, cap - 1}, {cap / 2, cap / 2}, {cap / 3, cap - cap / 3},
                           {17, 5},      {cap - 7, 3}};
    const keygen_dist_t dists[] = {KEYGEN_FEW, KEYGEN_RANDOM, KEYGEN_NAN_MIX};
    const int num_dists = o.quick ? 2 : 3;
    char msg[512] = "";
    int failed = 0;
    for (int d = 0; d < num_dists && !failed; d++) {
        for (size_t c = 0; c < sizeof lens / sizeof lens[0] && !failed; c++) {
            const int al = lens[c][0], bl = lens[c][1], total = al + bl;
            std::vector<T> a(al + 1), b(bl + 1), out_k(cap), init_k(cap);
            /* host-side values (unused for keys alone) */
            using VH = typename std::conditional<PAIRS, V, uint32_t>::type;
            std::vector<VH> avals(al + 1), bvals(bl + 1), out_v(cap), init_v(cap);
            keygen_fill(a.data(), (size_t)al, (int)dtype, dists[d], 31 + c);
            keygen_fill(b.data(), (size_t)bl, (int)dtype, dists[d], 57 + c);
            keygen_fill(init_k.data(), (size_t)cap, (int)dtype, KEYGEN_RANDOM, 99);
            sort_by_order<T, ORDER>(a.data(), al);
            sort_by_order<T, ORDER>(b.data(), bl);
            for (int i = 0; i < al; i++) avals[i] = (VH)i;
            for (int i = 0; i < bl; i++) bvals[i] = (VH)(al + i);
            for (int i = 0; i < cap; i++) init_v[i] = (VH)(1000000 + i);
            /* expected: the stable merge, a first on ties */
            std::vector<T> ek(cap);
            std::vector<VH> ev(cap);
            int ia = 0, ib = 0;
            for (int i = 0; i < cap; i++) {
                if (i >= total) {
                    ek[i] = init_k[i];
                    ev[i] = init_v[i];
                } else if (ib < bl && (ia >= al || warpsort::to_ordered<ORDER>(b[ib]) <
                                                       warpsort::to_ordered<ORDER>(a[ia]))) {
                    ek[i] = b[ib];
                    ev[i] = bvals[ib++];
                } else {
                    ek[i] = a[ia];
                    ev[i] = avals[ia++];
                }
            }
            T *da = dt_to_device(a.data(), (size_t)al), *db = dt_to_device(b.data(), (size_t)bl);
            VH *dav = dt_to_device(avals.data(), (size_t)al);
            VH *dbv = dt_to_device(bvals.data(), (size_t)bl);
            T *dk = dt_to_device(init_k.data(), (size_t)cap);
            VH *dv = dt_to_device(init_v.data(), (size_t)cap);
            block_merge_kernel<T, V, K, ORDER>
                <<<1, threads>>>(da, PAIRS ? (const V *)dav : NULL, al, db,
                                 PAIRS ? (const V *)dbv : NULL, bl, dk, PAIRS ? (V *)dv : NULL);
            DT_CUDA(cudaGetLastError());
            DT_CUDA(cudaDeviceSynchronize());
            dt_to_host(out_k.data(), dk, (size_t)cap);
            dt_to_host(out_v.data(), dv, (size_t)cap);
            for (void *p :
                 {(void *)da, (void *)db, (void *)dav, (void *)dbv, (void *)dk, (void *)dv})
                DT_CUDA(cudaFree(p));
            for (int i = 0; i < cap && !failed; i++) {
                const bool key_ok = memcmp(&ek[i], &out_k[i], sizeof(T)) == 0;
                const bool val_ok = !PAIRS || ev[i] == out_v[i];
                if (!key_ok || !val_ok) {
                    failed = 1;
                    snprintf(msg, sizeof msg, "output %d wrong (%s; a_len %d, b_len %d, %s)", i,
                             key_ok ? "value" : "key", al, bl, keygen_dist_name(dists[d]));
                }
            }
            if (!failed &&
                wt_check_sorted(out_k.data(), (size_t)total, (warpsort_dtype_t)dtype,
                                ORDER == descending ? WARPSORT_DESCENDING : 0u, msg, sizeof msg))
                failed = 1;
        }
    }
    dt_record(t, name, failed, msg);
}

template <typename T, typename V>
static void run_block_dtype(const dt_options &o, dt_tally &t) {
    run_block_sort<T, no_value, 128, 4, ascending, false>(o, t);
    run_block_sort<T, no_value, 128, 4, descending, false>(o, t);
    run_block_sort<T, V, 64, 8, ascending, true>(o, t);
    run_block_sort<T, V, 64, 8, descending, true>(o, t);
    run_block_merge<T, no_value, 4, ascending>(o, t);
    run_block_merge<T, V, 3, descending>(o, t);
}

void dt_block_tests(const dt_options &o, dt_tally &t) {
    /* shapes: one warp (no merge round) up to 8192-key tiles */
    run_block_sort<uint32_t, no_value, 32, 16, ascending, false>(o, t);
    run_block_sort<uint32_t, no_value, 256, 1, ascending, false>(o, t);
    run_block_sort<uint32_t, no_value, 256, 2, ascending, false>(o, t);
    run_block_sort<uint32_t, no_value, 128, 8, ascending, false>(o, t);
    run_block_sort<uint32_t, no_value, 512, 16, ascending, false, true>(o, t);
    run_block_sort<uint32_t, uint32_t, 256, 8, ascending, false>(o, t);
    run_block_sort<uint32_t, uint32_t, 256, 8, ascending, true, true>(o, t);
    run_block_sort<uint64_t, uint64_t, 128, 16, descending, true, true>(o, t);
    run_block_dtype<uint32_t, uint32_t>(o, t);
    run_block_dtype<int32_t, uint32_t>(o, t);
    run_block_dtype<float, uint64_t>(o, t);
    run_block_dtype<uint64_t, uint64_t>(o, t);
    run_block_dtype<int64_t, uint32_t>(o, t);
    run_block_dtype<double, uint64_t>(o, t);
}
