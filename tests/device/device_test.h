/*
 * device_test.h - shared parts of the device API tests (tests/device/):
 * options, failure reporting, the groups each translation unit runs.
 */
#ifndef WARPSORT_DEVICE_TEST_H
#define WARPSORT_DEVICE_TEST_H

#include <cuda_runtime.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct dt_options {
    int quick;          /* fewer distributions and seeds */
    const char *filter; /* run only cases whose name contains it (NULL: all) */
};

/* Counts of one run: cases run, cases failed. */
struct dt_tally {
    int run;
    int failed;
};

/* 1 if a case named name runs under o. */
static inline int dt_selected(const dt_options &o, const char *name) {
    return !o.filter || strstr(name, o.filter) != NULL;
}

/* Records the outcome of a case: prints failures (and nothing else). */
static inline void dt_record(dt_tally &t, const char *name, int failed, const char *msg) {
    t.run++;
    if (failed) {
        t.failed++;
        printf("FAIL %s: %s\n", name, msg);
        fflush(stdout);
    }
}

/* Aborts the program on a CUDA error: the tests cannot go on meaningfully. */
#define DT_CUDA(call)                                                                              \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

void dt_warp_sort_grid_tests(const dt_options &o, dt_tally &t);
void dt_warp_sort_dtype_tests(const dt_options &o, dt_tally &t);
void dt_block_tests(const dt_options &o, dt_tally &t);
void dt_warp_ops_tests(const dt_options &o, dt_tally &t);
void dt_segment_sort_tests(const dt_options &o, dt_tally &t);

#endif /* WARPSORT_DEVICE_TEST_H */

/*--- host-side checks shared by the sort tests (C++ templates) ---*/
#include "testkit.h"
#include "warpsort.h"
#include "warpsort/key_traits.cuh"

static inline const char *dt_dtype_name(int dtype) {
    static const char *names[] = {"u32", "i32", "f32", "u64", "i64", "f64"};
    return names[dtype];
}

/* One sorted segment (a warp group's or a block's items) of total items of
 * which the first valid took part: in the output they are sorted (reference
 * order of tests/common/testkit.h), a permutation of the input's first
 * valid items, values (generated as the item's index in the segment) follow
 * their keys and, if stable, keep input order among equal keys; items at
 * index >= valid are unchanged. */
template <typename T, typename V>
int dt_check_segment(const T *in_k, const T *out_k, const V *in_v, const V *out_v, int total,
                     int valid, int desc, int stable, char *msg, size_t len) {
    const warpsort_dtype_t dtype = (warpsort_dtype_t)warpsort::key_traits<T>::dtype;
    if (wt_check_sorted(out_k, (size_t)valid, dtype, desc ? WARPSORT_DESCENDING : 0u, msg, len))
        return 1;
    if constexpr (warpsort::is_value<V>::value) {
        if (wt_check_values(in_k, out_k, out_v, (size_t)valid, dtype, sizeof(V), stable, msg, len))
            return 1;
    } else {
        if (wt_check_permutation(in_k, out_k, (size_t)valid, sizeof(T), msg, len)) return 1;
    }
    for (int j = valid; j < total; j++) {
        int changed = memcmp(&in_k[j], &out_k[j], sizeof(T)) != 0;
        if constexpr (warpsort::is_value<V>::value)
            changed |= memcmp(&in_v[j], &out_v[j], sizeof(V)) != 0;
        if (changed) {
            snprintf(msg, len, "item %d (past valid = %d of %d) was changed", j, valid, total);
            return 1;
        }
    }
    return 0;
}

/* Valid count of segment g of `total` items in a partial run: empty, full,
 * one, all but one, and pseudo-random counts. */
static inline int dt_valid_count(int g, int total, uint64_t seed) {
    switch (g % 6) {
    case 0: return 0;
    case 1: return total;
    case 2: return 1 < total ? 1 : total;
    case 3: return total - 1;
    default: return (int)(wt_mix(seed + (uint64_t)g) % (uint64_t)(total + 1));
    }
}

/* Device copy of host array h[0, n) (n may be 0). */
template <typename X>
X *dt_to_device(const X *h, size_t n) {
    X *d = NULL;
    DT_CUDA(cudaMalloc((void **)&d, n ? n * sizeof(X) : 1));
    if (n) DT_CUDA(cudaMemcpy(d, h, n * sizeof(X), cudaMemcpyHostToDevice));
    return d;
}
template <typename X>
void dt_to_host(X *h, const X *d, size_t n) {
    if (n) DT_CUDA(cudaMemcpy(h, d, n * sizeof(X), cudaMemcpyDeviceToHost));
}
