/*
 * testkit.h - shared test support for warpsort: the project's one independent
 * test oracle (a reference order and result checks, with a radix sort of its
 * own for permutation checks), and a property-matrix driver that runs on any
 * context and any memory (host, or device through hooks). Inputs come from
 * src/core/keygen.h, the generator the CLI and the benchmark use too.
 *
 * The oracle is deliberately separate from the product: it shares no code
 * with the library (not src/core/keybits.h, not the CPU backend), so a bug
 * there cannot hide itself. Every other tool calls the product's code; the
 * tests, the CLI tests included, judge results here. The reference order is
 * written from the documented semantics:
 *  - unsigned / signed integers by value;
 *  - floats by value, -0.0 before +0.0, every NaN after +inf ascending;
 *  - all NaNs form one class for the order check. The API promises distinct
 *    NaN patterns a fixed order among themselves without naming it, so the
 *    checks require instead that equal NaN patterns are contiguous, that
 *    descending is the exact reverse of ascending (wt_check_reverse), and
 *    on the GPU that the output is byte-identical to the CPU backend's;
 *  - two keys are equal (for stability) only when their bits are identical.
 */
#ifndef WARPSORT_TESTKIT_H
#define WARPSORT_TESTKIT_H

#include "core/keygen.h"
#include "warpsort.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/*--- inputs: src/core/keygen.h (keygen_fill, keygen_dist_t, KEYGEN_*) ---*/
/* Every distribution, as a mask of (1u << keygen_dist_t). */
#define WT_ALL_DISTS ((1u << KEYGEN_DIST_COUNT) - 1u)

/* values[i] = i, as 4- or 8-byte unsigned integers. */
void wt_fill_iota(void *values, size_t n, size_t bytes);

/*--- reference order ---*/
/* Raw bits of element i of an array of 4- or 8-byte elements (zero-extended). */
uint64_t wt_bits(const void *array, size_t i, size_t bytes);
/* Stores the low `bytes` bytes of v as element i. */
void wt_store(void *array, size_t i, size_t bytes, uint64_t v);
/* splitmix64 finaliser: a reproducible stream is wt_mix(base + i). */
uint64_t wt_mix(uint64_t x);
/* 1 if bits are a NaN of a float dtype. */
int wt_is_nan(uint64_t bits, warpsort_dtype_t dtype);
/* <0, 0, >0 as a sorts before, with, after b ascending. 0 means identical
 * bits, or two NaNs (see the file comment). */
int wt_ref_cmp(uint64_t a, uint64_t b, warpsort_dtype_t dtype);

/*--- checks: 0 if the property holds, else 1 with a message in msg ---*/
/* keys are ordered by the reference (flags: DESCENDING) and equal NaN
 * patterns are contiguous. */
int wt_check_sorted(const void *keys, size_t n, warpsort_dtype_t dtype, unsigned flags, char *msg,
                    size_t msg_len);
/* out holds exactly the bit patterns of orig (as multisets). */
int wt_check_permutation(const void *orig, const void *out, size_t n, size_t bytes, char *msg,
                         size_t msg_len);
/* values (generated as original indices) are a permutation of 0..n-1 and
 * out_keys[i] has the bits of orig_keys[values[i]]; if stable, values
 * increase along every run of identical keys. */
int wt_check_values(const void *orig_keys, const void *out_keys, const void *values, size_t n,
                    warpsort_dtype_t dtype, size_t value_bytes, int stable, char *msg,
                    size_t msg_len);
/* indices are a permutation of 0..n-1 that orders keys (flags: DESCENDING),
 * stably. */
int wt_check_argsort(const void *keys, const void *indices, size_t n, warpsort_dtype_t dtype,
                     size_t index_bytes, unsigned flags, char *msg, size_t msg_len);
/* desc is asc reversed element for element (keys only). */
int wt_check_reverse(const void *asc, const void *desc, size_t n, size_t bytes, char *msg,
                     size_t msg_len);

/* Order-independent fingerprint of a multiset of bit patterns, for inputs too
 * large to sort a copy of: equal multisets give equal fingerprints, and a
 * changed element changes it with overwhelming probability. */
typedef struct wt_fingerprint {
    uint64_t sum, sum_sq, xor_mix;
} wt_fingerprint_t;
wt_fingerprint_t wt_fingerprint(const void *array, size_t n, size_t bytes);

/*--- memory hooks: where the array under test lives ---*/
typedef struct wt_memory {
    const char *name;
    void *(*alloc)(size_t bytes, void *user); /* NULL on failure; bytes may be 0 */
    void (*release)(void *ptr, void *user);
    int (*upload)(void *dst, const void *host_src, size_t bytes, void *user);   /* 0 = ok */
    int (*download)(void *host_dst, const void *src, size_t bytes, void *user); /* 0 = ok */
    void *user;
} wt_memory_t;

/* Plain malloc / memcpy. */
extern const wt_memory_t wt_host_memory;
/* memcpy as a wt_memory_t upload/download hook, for other host allocators. */
int wt_host_copy(void *dst, const void *src, size_t bytes, void *user);

/*--- one case of the property matrix ---*/
typedef enum wt_op { WT_OP_SORT = 0, WT_OP_PAIRS, WT_OP_ARGSORT, WT_OP_COUNT } wt_op_t;
const char *wt_op_name(wt_op_t op);

typedef struct wt_case {
    wt_op_t op;
    warpsort_dtype_t dtype;
    size_t second_bytes; /* PAIRS: value bytes; ARGSORT: index bytes; SORT: ignored */
    unsigned flags;      /* WARPSORT_DESCENDING | WARPSORT_STABLE */
    size_t n;
    keygen_dist_t dist;
    uint64_t seed;
} wt_case_t;

/* "pairs f32 v8 desc stable n=1000 few" */
void wt_case_describe(const wt_case_t *c, char *buf, size_t len);

/* Runs c on ctx with arrays in mem and checks every property that applies.
 * If oracle is not NULL, also runs c on oracle with host memory and
 * requires byte-identical output wherever the order is determined: keys
 * always, values for stable pairs, indices for argsort. Returns 0 on
 * success, 1 with a message on failure. */
int wt_run_case(warpsort_context_t *ctx, const wt_memory_t *mem, const wt_case_t *c,
                warpsort_context_t *oracle, char *msg, size_t msg_len);

/* A family of cases: one operation, dtype, second size and flags over a set
 * of sizes and distributions. */
typedef struct wt_matrix {
    wt_op_t op;
    warpsort_dtype_t dtype;
    size_t second_bytes;
    unsigned flags;
    const size_t *sizes;
    size_t num_sizes;
    unsigned dist_mask; /* bit (1u << keygen_dist_t) per distribution */
    uint64_t seed;
} wt_matrix_t;

/* Runs every case of m; logs each failure (and nothing else) to log, which
 * may be NULL. Returns the number of failed cases. */
size_t wt_run_matrix(warpsort_context_t *ctx, const wt_memory_t *mem, const wt_matrix_t *m,
                     warpsort_context_t *oracle, FILE *log);

#ifdef __cplusplus
}
#endif
#endif /* WARPSORT_TESTKIT_H */
