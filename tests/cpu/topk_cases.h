/*
 * topk_cases.h - one top-k case run on any context and memory, judged by
 * the independent oracle (tests/common/testkit.h: the reference order),
 * shared by tests/cpu/test_topk.c and tests/gpu/test_gpu_topk.c.
 *
 * Each row's result is checked two ways:
 *  - against a reference top-k: the row's indices stably sorted by the
 *    reference order (descending for the largest), cut at k;
 *  - by properties: indices distinct and in range, each key the bits of
 *    keys[index], the output ordered with identical keys in index order, and
 *    no unselected key better than the last selected (or identical to a
 *    selected one at a lower index).
 * The reference order ranks all NaNs alike (the API fixes an order among
 * NaN patterns without naming it), so where the reference holds a NaN the
 * output must hold a NaN, and the properties pin the rest.
 */
#ifndef WARPSORT_TOPK_CASES_H
#define WARPSORT_TOPK_CASES_H

#include "testkit.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TK_BOTH = 0, TK_KEYS_ONLY = 1, TK_INDICES_ONLY = 2 };

typedef struct tk_case {
    warpsort_dtype_t dtype;
    int smallest;
    size_t rows, row_len, k;
    keygen_dist_t dist;
    uint64_t seed;
    size_t index_bytes; /* 4 or 8 */
    size_t value_bytes; /* 0 (no values), 4 or 8 */
    int outputs;        /* TK_BOTH, TK_KEYS_ONLY, TK_INDICES_ONLY */
} tk_case_t;

static inline void tk_describe(const tk_case_t *c, char *buf, size_t len) {
    snprintf(buf, len, "topk %s %s rows=%zu len=%zu k=%zu %s i%zu v%zu%s",
             warpsort_dtype_name(c->dtype), c->smallest ? "smallest" : "largest", c->rows,
             c->row_len, c->k, keygen_dist_name(c->dist), c->index_bytes, c->value_bytes,
             c->outputs == TK_KEYS_ONLY      ? " keys-only"
             : c->outputs == TK_INDICES_ONLY ? " indices-only"
                                             : "");
}

static inline int tk_fail(char *msg, size_t len, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, len, fmt, ap);
    va_end(ap);
    return 1;
}

/* The reference order of one row, for qsort (tests run single-threaded). */
static const void *tk_sort_keys;
static size_t tk_sort_kb;
static warpsort_dtype_t tk_sort_dtype;
static int tk_sort_sign;
static inline int tk_cmp_index(const void *pa, const void *pb) {
    const size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    int c = tk_sort_sign * wt_ref_cmp(wt_bits(tk_sort_keys, a, tk_sort_kb),
                                      wt_bits(tk_sort_keys, b, tk_sort_kb), tk_sort_dtype);
    if (c) return c;
    return a < b ? -1 : a > b;
}
static inline int tk_cmp_u64(const void *pa, const void *pb) {
    const uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return a < b ? -1 : a > b;
}

/* Checks row `row` of the outputs (host copies; keys of the whole input).
 * out_keys or out_idx may be NULL (not requested). order[] and sel[] are
 * scratch of row_len and k elements. */
static inline int tk_check_row(const tk_case_t *c, const void *keys, const void *values, size_t row,
                               const void *out_keys, const void *out_idx, const void *out_vals,
                               size_t *order, uint64_t *sel, char *msg, size_t len) {
    const size_t kb = warpsort_dtype_size(c->dtype), L = c->row_len, k = c->k;
    const void *rk = (const char *)keys + row * L * kb;
    const int sign = c->smallest ? 1 : -1;
    /* reference: stable sort of the row's indices, cut at k */
    for (size_t i = 0; i < L; i++) order[i] = i;
    tk_sort_keys = rk;
    tk_sort_kb = kb;
    tk_sort_dtype = c->dtype;
    tk_sort_sign = sign;
    qsort(order, L, sizeof *order, tk_cmp_index);

    /* the selected items: indices if given, else only keys to compare */
    if (!out_idx) {
        for (size_t r = 0; r < k; r++) {
            uint64_t got = wt_bits(out_keys, row * k + r, kb);
            uint64_t want = wt_bits(rk, order[r], kb);
            if (wt_is_nan(want, c->dtype) ? !wt_is_nan(got, c->dtype) : got != want)
                return tk_fail(msg, len, "row %zu rank %zu: key 0x%llx, reference 0x%llx", row, r,
                               (unsigned long long)got, (unsigned long long)want);
        }
        return 0;
    }
    char *seen = calloc(L, 1);
    if (!seen) return tk_fail(msg, len, "out of memory");
    int bad = 0;
    uint64_t prev_bits = 0;
    size_t prev_idx = 0;
    for (size_t r = 0; r < k && !bad; r++) {
        const uint64_t idx = wt_bits(out_idx, row * k + r, c->index_bytes);
        if (idx >= L || seen[idx]) {
            bad = tk_fail(msg, len, "row %zu rank %zu: index %llu %s", row, r,
                          (unsigned long long)idx, idx >= L ? "out of range" : "repeated");
            break;
        }
        seen[idx] = 1;
        const uint64_t bits = wt_bits(rk, idx, kb);
        sel[r] = bits;
        if (out_keys && wt_bits(out_keys, row * k + r, kb) != bits)
            bad = tk_fail(msg, len, "row %zu rank %zu: key 0x%llx is not keys[%llu] = 0x%llx", row,
                          r, (unsigned long long)wt_bits(out_keys, row * k + r, kb),
                          (unsigned long long)idx, (unsigned long long)bits);
        if (!bad && out_vals &&
            wt_bits(out_vals, row * k + r, c->value_bytes) !=
                wt_bits(values, row * L + idx, c->value_bytes))
            bad = tk_fail(msg, len, "row %zu rank %zu: value is not values[%llu]", row, r,
                          (unsigned long long)idx);
        if (!bad && r > 0) {
            const int cmp = sign * wt_ref_cmp(prev_bits, bits, c->dtype);
            if (cmp > 0 || (cmp == 0 && prev_bits == bits && prev_idx > idx))
                bad = tk_fail(msg, len, "row %zu ranks %zu-%zu out of order (indices %zu, %llu)",
                              row, r - 1, r, prev_idx, (unsigned long long)idx);
        }
        const uint64_t want = wt_bits(rk, order[r], kb);
        if (!bad && (wt_is_nan(want, c->dtype) ? !wt_is_nan(bits, c->dtype)
                                               : (idx != order[r] || bits != want)))
            bad = tk_fail(msg, len, "row %zu rank %zu: index %llu, reference index %zu", row, r,
                          (unsigned long long)idx, order[r]);
        prev_bits = bits;
        prev_idx = (size_t)idx;
    }
    /* completeness: nothing left out beats the last selected item */
    if (!bad) {
        const uint64_t last = sel[k - 1];
        qsort(sel, k, sizeof *sel, tk_cmp_u64);
        for (size_t i = 0; i < L && !bad; i++) {
            if (seen[i]) continue;
            const uint64_t bits = wt_bits(rk, i, kb);
            const int cmp = sign * wt_ref_cmp(bits, last, c->dtype);
            const int dup = bsearch(&bits, sel, k, sizeof *sel, tk_cmp_u64) != NULL;
            if (cmp < 0 || (dup && (bits != last || i < prev_idx)))
                bad = tk_fail(msg, len, "row %zu: index %zu (0x%llx) should have been selected",
                              row, i, (unsigned long long)bits);
        }
    }
    free(seen);
    return bad;
}

/* Calls the entry point that fits the case: warpsort_topk for one row
 * without values, warpsort_topk_rows for rows, warpsort_topk_pairs with
 * values. */
static inline warpsort_status_t tk_call(warpsort_context_t *ctx, const tk_case_t *c,
                                        const void *keys, const void *values, void *out_keys,
                                        void *out_vals, void *out_idx) {
    const unsigned flags = c->smallest ? WARPSORT_TOPK_SMALLEST : 0u;
    if (values)
        return warpsort_topk_pairs(ctx, keys, values, c->rows, c->row_len, c->dtype, c->value_bytes,
                                   c->k, flags, out_keys, out_vals, out_idx, c->index_bytes);
    if (c->rows == 1)
        return warpsort_topk(ctx, keys, c->row_len, c->dtype, c->k, flags, out_keys, out_idx,
                             c->index_bytes);
    return warpsort_topk_rows(ctx, keys, c->rows, c->row_len, c->dtype, c->k, flags, out_keys,
                              out_idx, c->index_bytes);
}

/* Runs c on ctx with arrays in mem and checks it. If same is not NULL the
 * outputs must also be byte-identical to those of ctx `same` on host
 * memory (the GPU against the CPU backend). 0 on success. */
static inline int tk_run_case(warpsort_context_t *ctx, const wt_memory_t *mem, const tk_case_t *c,
                              warpsort_context_t *same, char *msg, size_t len) {
    const size_t kb = warpsort_dtype_size(c->dtype), vb = c->value_bytes, ib = c->index_bytes;
    const size_t n = c->rows * c->row_len, m = c->rows * c->k;
    const int want_keys = c->outputs != TK_INDICES_ONLY, want_idx = c->outputs != TK_KEYS_ONLY;
    int bad = 0;
    void *keys = malloc(n * kb + 8), *values = malloc(n * (vb ? vb : 1) + 8);
    void *ok = calloc(m + 1, kb), *oi = calloc(m + 1, ib), *ov = calloc(m + 1, vb ? vb : 1);
    size_t *order = malloc((c->row_len + 1) * sizeof *order);
    uint64_t *sel = malloc((c->k + 1) * sizeof *sel);
    void *dk = NULL, *dv = NULL, *dok = NULL, *doi = NULL, *dov = NULL;
    if (!keys || !values || !ok || !oi || !ov || !order || !sel) {
        bad = tk_fail(msg, len, "out of host memory");
        goto done;
    }
    keygen_fill(keys, n, c->dtype, c->dist, c->seed);
    for (size_t i = 0; vb && i < n; i++) wt_store(values, i, vb, wt_mix(c->seed * 31 + i));
    dk = mem->alloc(n * kb, mem->user);
    dv = vb ? mem->alloc(n * vb, mem->user) : NULL;
    dok = want_keys ? mem->alloc(m * kb, mem->user) : NULL;
    doi = want_idx ? mem->alloc(m * ib, mem->user) : NULL;
    dov = vb ? mem->alloc(m * vb, mem->user) : NULL;
    if (!dk || (vb && (!dv || !dov)) || (want_keys && !dok) || (want_idx && !doi)) {
        bad = tk_fail(msg, len, "cannot allocate %s memory", mem->name);
        goto done;
    }
    if (mem->upload(dk, keys, n * kb, mem->user) ||
        (vb && mem->upload(dv, values, n * vb, mem->user))) {
        bad = tk_fail(msg, len, "upload failed");
        goto done;
    }
    warpsort_status_t st = tk_call(ctx, c, dk, dv, dok, dov, doi);
    if (st == WARPSORT_OK) st = warpsort_synchronize(ctx);
    if (st != WARPSORT_OK) {
        bad = tk_fail(msg, len, "%s: %s", warpsort_status_name(st), warpsort_last_error(ctx));
        goto done;
    }
    if ((want_keys && mem->download(ok, dok, m * kb, mem->user)) ||
        (want_idx && mem->download(oi, doi, m * ib, mem->user)) ||
        (vb && mem->download(ov, dov, m * vb, mem->user))) {
        bad = tk_fail(msg, len, "download failed");
        goto done;
    }
    /* the input is only read */
    void *again = malloc(n * kb + 8);
    if (again && !mem->download(again, dk, n * kb, mem->user) && memcmp(again, keys, n * kb))
        bad = tk_fail(msg, len, "the input keys changed");
    free(again);
    for (size_t r = 0; r < c->rows && !bad; r++)
        bad = tk_check_row(c, keys, values, r, want_keys ? ok : NULL, want_idx ? oi : NULL,
                           vb ? ov : NULL, order, sel, msg, len);
    if (!bad && same) {
        void *sk = calloc(m + 1, kb), *si = calloc(m + 1, ib), *sv = calloc(m + 1, vb ? vb : 1);
        if (!sk || !si || !sv) {
            bad = tk_fail(msg, len, "out of host memory");
        } else {
            st = tk_call(same, c, keys, vb ? values : NULL, want_keys ? sk : NULL, vb ? sv : NULL,
                         want_idx ? si : NULL);
            if (st != WARPSORT_OK)
                bad = tk_fail(msg, len, "reference backend: %s", warpsort_last_error(same));
            else if ((want_keys && memcmp(sk, ok, m * kb)) ||
                     (want_idx && memcmp(si, oi, m * ib)) || (vb && memcmp(sv, ov, m * vb)))
                bad = tk_fail(msg, len, "differs from the %s backend",
                              warpsort_backend_name(warpsort_get_backend(same)));
        }
        free(sk);
        free(si);
        free(sv);
    }
done:
    if (dk) mem->release(dk, mem->user);
    if (dv) mem->release(dv, mem->user);
    if (dok) mem->release(dok, mem->user);
    if (doi) mem->release(doi, mem->user);
    if (dov) mem->release(dov, mem->user);
    free(keys);
    free(values);
    free(ok);
    free(oi);
    free(ov);
    free(order);
    free(sel);
    if (bad) {
        char d[160];
        tk_describe(c, d, sizeof d);
        size_t used = strlen(msg);
        if (used + 4 < len) snprintf(msg + used, len - used, " [%s]", d);
    }
    return bad;
}

#endif /* WARPSORT_TOPK_CASES_H */
