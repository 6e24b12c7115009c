/*
 * sort_copy_cases.h - one warpsort_sort_copy case run on any context and
 * memory (input and output each in its own memory kind, or the output the
 * input itself), judged by the independent oracle (tests/common/testkit.h),
 * shared by tests/cpu/test_sort_copy.c and tests/gpu/test_gpu_sort_copy.c.
 *
 * Each case checks that:
 *  - the call succeeds (and, on device memory, warpsort_synchronize);
 *  - keys_out is ordered by the reference order and a permutation of the
 *    input bits; descending cases are the exact reverse of a stable
 *    ascending sort of the same input (which pins the NaN order);
 *  - keys_out is byte-identical to warpsort_sort on a copy of the input on
 *    the oracle context (the out-of-place call is a copy plus a sort);
 *  - keys_in is byte-identical to the input (unless it is keys_out);
 *  - nothing past keys_out's n elements is written (a guard zone).
 */
#ifndef WARPSORT_SORT_COPY_CASES_H
#define WARPSORT_SORT_COPY_CASES_H

#include "testkit.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Elements of poison past keys_out's end. */
#define SC_GUARD 37u

typedef struct sc_case {
    warpsort_dtype_t dtype;
    unsigned flags; /* WARPSORT_DESCENDING | WARPSORT_STABLE */
    size_t n;
    keygen_dist_t dist;
    uint64_t seed;
    int alias; /* keys_out = keys_in (the in-place form) */
} sc_case_t;

static inline void sc_describe(const sc_case_t *c, char *buf, size_t len) {
    snprintf(buf, len, "sort_copy %s%s%s n=%zu %s%s", warpsort_dtype_name(c->dtype),
             c->flags & WARPSORT_DESCENDING ? " desc" : "",
             c->flags & WARPSORT_STABLE ? " stable" : "", c->n, keygen_dist_name(c->dist),
             c->alias ? " in==out" : "");
}

static inline int sc_fail(char *msg, size_t len, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, len, fmt, ap);
    va_end(ap);
    return 1;
}

/* Byte i of the poison written over keys_out before the call. */
static inline unsigned char sc_poison(size_t i) { return (unsigned char)(0xA5u ^ (i * 29u)); }

/* Runs c on ctx: keys_in in in_mem, keys_out in out_mem (ignored when
 * c->alias). oracle: a CPU context for the reference sort. 0 on success, 1
 * with a message. */
static inline int sc_run_case(warpsort_context_t *ctx, const wt_memory_t *in_mem,
                              const wt_memory_t *out_mem, const sc_case_t *c,
                              warpsort_context_t *oracle, char *msg, size_t len) {
    const size_t n = c->n, kb = warpsort_dtype_size(c->dtype);
    const size_t in_bytes = n * kb, out_bytes = (n + SC_GUARD) * kb;
    unsigned char *orig = malloc(in_bytes + 1), *ref = malloc(in_bytes + 1);
    unsigned char *asc = malloc(in_bytes + 1), *poison = malloc(out_bytes);
    unsigned char *got_out = malloc(out_bytes), *got_in = malloc(in_bytes + 1);
    void *in = NULL, *out = NULL;
    int rc = 1;
    if (!orig || !ref || !asc || !poison || !got_out || !got_in) {
        sc_fail(msg, len, "host allocation failed");
        goto done;
    }
    keygen_fill(orig, n, c->dtype, c->dist, c->seed);
    for (size_t i = 0; i < out_bytes; i++) poison[i] = sc_poison(i);
    in = in_mem->alloc(c->alias ? out_bytes : in_bytes, in_mem->user);
    out = c->alias ? in : out_mem->alloc(out_bytes, out_mem->user);
    if ((!in && (c->alias ? out_bytes : in_bytes)) || (!out && out_bytes)) {
        sc_fail(msg, len, "%s allocation failed", !in ? in_mem->name : out_mem->name);
        goto done;
    }
    if (c->alias && in_mem->upload(in, poison, out_bytes, in_mem->user) != 0) goto upload_failed;
    if (in_mem->upload(in, orig, in_bytes, in_mem->user) != 0) goto upload_failed;
    if (!c->alias && out_mem->upload(out, poison, out_bytes, out_mem->user) != 0)
        goto upload_failed;

    warpsort_status_t st = warpsort_sort_copy(ctx, in, out, n, c->dtype, c->flags);
    if (st == WARPSORT_OK) st = warpsort_synchronize(ctx);
    if (st != WARPSORT_OK) {
        sc_fail(msg, len, "warpsort_sort_copy: %s: %s", warpsort_status_name(st),
                warpsort_last_error(ctx));
        goto done;
    }
    const wt_memory_t *om = c->alias ? in_mem : out_mem;
    if (om->download(got_out, out, out_bytes, om->user) != 0 ||
        (!c->alias && in_mem->download(got_in, in, in_bytes, in_mem->user) != 0)) {
        sc_fail(msg, len, "download failed");
        goto done;
    }
    if (!c->alias && memcmp(got_in, orig, in_bytes) != 0) {
        size_t i = 0;
        while (got_in[i] == orig[i]) i++;
        sc_fail(msg, len, "keys_in changed (byte %zu)", i);
        goto done;
    }
    for (size_t i = in_bytes; i < out_bytes; i++)
        if (got_out[i] != poison[i]) {
            sc_fail(msg, len, "byte %zu past keys_out's end written", i - in_bytes);
            goto done;
        }
    if (wt_check_sorted(got_out, n, c->dtype, c->flags, msg, len) ||
        wt_check_permutation(orig, got_out, n, kb, msg, len))
        goto done;
    memcpy(ref, orig, in_bytes);
    st = warpsort_sort(oracle, ref, n, c->dtype, c->flags);
    if (st != WARPSORT_OK) {
        sc_fail(msg, len, "oracle warpsort_sort: %s", warpsort_status_name(st));
        goto done;
    }
    if (memcmp(ref, got_out, in_bytes) != 0) {
        size_t i = 0;
        while (ref[i] == got_out[i]) i++;
        sc_fail(msg, len, "differs from warpsort_sort on a copy at element %zu", i / kb);
        goto done;
    }
    if (c->flags & WARPSORT_DESCENDING) {
        memcpy(asc, orig, in_bytes);
        if (warpsort_sort(oracle, asc, n, c->dtype, WARPSORT_STABLE) != WARPSORT_OK ||
            wt_check_reverse(asc, got_out, n, kb, msg, len))
            goto done;
    }
    rc = 0;
    goto done;
upload_failed:
    sc_fail(msg, len, "upload failed");
done:
    if (out && !c->alias) out_mem->release(out, out_mem->user);
    if (in) in_mem->release(in, in_mem->user);
    free(orig);
    free(ref);
    free(asc);
    free(poison);
    free(got_out);
    free(got_in);
    return rc;
}

/* Runs every dtype x {ascending, descending, descending stable} x sizes x
 * distributions in dist_mask, out of place, and in place for the first
 * distribution; logs each failure to log. Returns the number of failures. */
static inline size_t sc_run_matrix(warpsort_context_t *ctx, const wt_memory_t *in_mem,
                                   const wt_memory_t *out_mem, const size_t *sizes,
                                   size_t num_sizes, unsigned dist_mask, warpsort_context_t *oracle,
                                   FILE *log) {
    static const unsigned flag_sets[] = {0u, WARPSORT_DESCENDING,
                                         WARPSORT_DESCENDING | WARPSORT_STABLE};
    size_t failures = 0;
    for (int d = 0; d < WARPSORT_DTYPE_COUNT_; d++)
        for (size_t f = 0; f < sizeof flag_sets / sizeof flag_sets[0]; f++)
            for (size_t s = 0; s < num_sizes; s++) {
                int first = 1;
                for (unsigned dist = 0; dist < KEYGEN_DIST_COUNT; dist++) {
                    if (!(dist_mask & (1u << dist))) continue;
                    for (int alias = 0; alias <= first; alias++) {
                        sc_case_t c = {(warpsort_dtype_t)d,
                                       flag_sets[f],
                                       sizes[s],
                                       (keygen_dist_t)dist,
                                       0x5C0Full + s * 131 + d * 7 + f,
                                       alias};
                        char msg[512];
                        if (sc_run_case(ctx, in_mem, out_mem, &c, oracle, msg, sizeof msg)) {
                            char what[160];
                            sc_describe(&c, what, sizeof what);
                            if (log)
                                fprintf(log, "FAIL [%s -> %s] %s: %s\n", in_mem->name,
                                        alias ? in_mem->name : out_mem->name, what, msg);
                            failures++;
                        }
                    }
                    first = 0;
                }
            }
    return failures;
}

#endif /* WARPSORT_SORT_COPY_CASES_H */
