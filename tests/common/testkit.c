/* testkit.c - the independent test oracle (reference order, checks) and the
 * property driver, see testkit.h. */
#include "testkit.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/*======================================================================
 * Small helpers
 *====================================================================*/

/* splitmix64 finaliser: element i of a stream is wt_mix(base + i), so any
 * element can be produced independently and every run is reproducible. */
uint64_t wt_mix(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static int wt_fail(char *msg, size_t len, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static int wt_fail(char *msg, size_t len, const char *fmt, ...) {
    if (msg && len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, len, fmt, ap);
        va_end(ap);
    }
    return 1;
}

uint64_t wt_bits(const void *array, size_t i, size_t bytes) {
    return bytes == 4 ? ((const uint32_t *)array)[i] : ((const uint64_t *)array)[i];
}

void wt_store(void *array, size_t i, size_t bytes, uint64_t v) {
    if (bytes == 4)
        ((uint32_t *)array)[i] = (uint32_t)v;
    else
        ((uint64_t *)array)[i] = v;
}

static int wt_is_float(warpsort_dtype_t d) { return d == WARPSORT_F32 || d == WARPSORT_F64; }

const char *wt_op_name(wt_op_t op) {
    static const char *const names[WT_OP_COUNT] = {"sort", "pairs", "argsort"};
    return (unsigned)op < WT_OP_COUNT ? names[op] : "?";
}

/*======================================================================
 * Reference order, from the documented semantics
 *====================================================================*/

int wt_is_nan(uint64_t bits, warpsort_dtype_t dtype) {
    if (dtype == WARPSORT_F32) {
        uint32_t b = (uint32_t)bits;
        return (b & 0x7F800000u) == 0x7F800000u && (b & 0x007FFFFFu) != 0;
    }
    if (dtype == WARPSORT_F64)
        return (bits & 0x7FF0000000000000ull) == 0x7FF0000000000000ull &&
               (bits & 0x000FFFFFFFFFFFFFull) != 0;
    return 0;
}

/* Compares two finite-or-infinite values by value, then -0.0 before +0.0. */
static int wt_cmp_double(double x, double y, int x_negative) {
    if (x < y) return -1;
    if (x > y) return 1;
    /* equal values with different bits: only -0.0 vs +0.0 */
    return x_negative ? -1 : 1;
}

int wt_ref_cmp(uint64_t a, uint64_t b, warpsort_dtype_t dtype) {
    if (a == b) return 0;
    switch (dtype) {
    case WARPSORT_U32:
    case WARPSORT_U64: return a < b ? -1 : 1;
    case WARPSORT_I32: {
        int32_t x, y;
        uint32_t ua = (uint32_t)a, ub = (uint32_t)b;
        memcpy(&x, &ua, 4);
        memcpy(&y, &ub, 4);
        return x < y ? -1 : 1;
    }
    case WARPSORT_I64: {
        int64_t x, y;
        memcpy(&x, &a, 8);
        memcpy(&y, &b, 8);
        return x < y ? -1 : 1;
    }
    case WARPSORT_F32:
    case WARPSORT_F64: {
        int an = wt_is_nan(a, dtype), bn = wt_is_nan(b, dtype);
        if (an || bn) return an && bn ? 0 : an ? 1 : -1; /* NaNs last, one class */
        double x, y;
        if (dtype == WARPSORT_F32) {
            float fx, fy;
            uint32_t ua = (uint32_t)a, ub = (uint32_t)b;
            memcpy(&fx, &ua, 4);
            memcpy(&fy, &ub, 4);
            x = fx;
            y = fy;
        } else {
            memcpy(&x, &a, 8);
            memcpy(&y, &b, 8);
        }
        return wt_cmp_double(x, y, signbit(x) != 0);
    }
    default: return 0;
    }
}

/*======================================================================
 * Inputs (the distributions themselves are src/core/keygen.h's)
 *====================================================================*/

void wt_fill_iota(void *values, size_t n, size_t bytes) {
    for (size_t i = 0; i < n; i++) wt_store(values, i, bytes, (uint64_t)i);
}

/*======================================================================
 * Checks
 *====================================================================*/

static int wt_cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

int wt_check_sorted(const void *keys, size_t n, warpsort_dtype_t dtype, unsigned flags, char *msg,
                    size_t msg_len) {
    size_t kb = warpsort_dtype_size(dtype);
    int desc = (flags & WARPSORT_DESCENDING) != 0;
    for (size_t i = 1; i < n; i++) {
        uint64_t a = wt_bits(keys, i - 1, kb), b = wt_bits(keys, i, kb);
        int c = wt_ref_cmp(a, b, dtype);
        if (desc ? c < 0 : c > 0)
            return wt_fail(msg, msg_len, "out of order at %zu: 0x%llx then 0x%llx (%s)", i - 1,
                           (unsigned long long)a, (unsigned long long)b,
                           desc ? "descending" : "ascending");
    }
    if (!wt_is_float(dtype)) return 0;
    /* NaNs: each pattern must form one run (a fixed order among NaNs). */
    size_t runs = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t b = wt_bits(keys, i, kb);
        if (wt_is_nan(b, dtype) && (i == 0 || wt_bits(keys, i - 1, kb) != b)) runs++;
    }
    if (runs < 2) return 0;
    uint64_t *starts = malloc(runs * sizeof *starts);
    if (!starts) return wt_fail(msg, msg_len, "test out of memory (%zu NaN runs)", runs);
    size_t r = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t b = wt_bits(keys, i, kb);
        if (wt_is_nan(b, dtype) && (i == 0 || wt_bits(keys, i - 1, kb) != b)) starts[r++] = b;
    }
    qsort(starts, runs, sizeof *starts, wt_cmp_u64);
    int bad = 0;
    uint64_t dup = 0;
    for (size_t i = 1; i < runs && !bad; i++)
        if (starts[i] == starts[i - 1]) bad = 1, dup = starts[i];
    free(starts);
    if (bad)
        return wt_fail(msg, msg_len, "NaN pattern 0x%llx appears in two separate runs",
                       (unsigned long long)dup);
    return 0;
}

/* Sorts a 4- or 8-byte array by raw unsigned bits: an LSD radix sort of the
 * oracle's own, deliberately not the library's (and fast enough for 2^28).
 * One counting pass for all bytes; bytes equal across the array are skipped. */
#define WT_DEFINE_SORT_RAW(NAME, T)                                                              \
    static int NAME(T *a, size_t n) {                                                            \
        enum { BYTES = sizeof(T) };                                                              \
        size_t(*count)[256] = calloc(BYTES, sizeof *count);                                      \
        T *tmp = malloc(n * sizeof(T));                                                          \
        if (!count || !tmp) {                                                                    \
            free(count);                                                                         \
            free(tmp);                                                                           \
            return 1;                                                                            \
        }                                                                                        \
        for (size_t i = 0; i < n; i++)                                                           \
            for (unsigned d = 0; d < BYTES; d++) count[d][(a[i] >> (8 * d)) & 255u]++;           \
        T *src = a, *dst = tmp;                                                                  \
        for (unsigned d = 0; d < BYTES; d++) {                                                   \
            size_t sum = 0;                                                                      \
            int constant = 0;                                                                    \
            for (unsigned b = 0; b < 256; b++) {                                                 \
                size_t c = count[d][b];                                                          \
                constant |= c == n;                                                              \
                count[d][b] = sum;                                                               \
                sum += c;                                                                        \
            }                                                                                    \
            if (constant) continue;                                                              \
            for (size_t i = 0; i < n; i++) dst[count[d][(src[i] >> (8 * d)) & 255u]++] = src[i]; \
            T *t = src;                                                                          \
            src = dst;                                                                           \
            dst = t;                                                                             \
        }                                                                                        \
        if (src != a) memcpy(a, src, n * sizeof(T));                                             \
        free(tmp);                                                                               \
        free(count);                                                                             \
        return 0;                                                                                \
    }
WT_DEFINE_SORT_RAW(wt_sort_raw32, uint32_t)
WT_DEFINE_SORT_RAW(wt_sort_raw64, uint64_t)

static int wt_sort_raw(void *a, size_t n, size_t bytes) {
    if (n < 2) return 0;
    return bytes == 4 ? wt_sort_raw32(a, n) : wt_sort_raw64(a, n);
}

int wt_check_permutation(const void *orig, const void *out, size_t n, size_t bytes, char *msg,
                         size_t msg_len) {
    if (n == 0) return 0;
    void *a = malloc(n * bytes), *b = malloc(n * bytes);
    int rc = 0;
    if (!a || !b) {
        rc = wt_fail(msg, msg_len, "test out of memory checking a permutation of %zu", n);
        goto done;
    }
    memcpy(a, orig, n * bytes);
    memcpy(b, out, n * bytes);
    if (wt_sort_raw(a, n, bytes) || wt_sort_raw(b, n, bytes)) {
        rc = wt_fail(msg, msg_len, "test out of memory checking a permutation of %zu", n);
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        if (wt_bits(a, i, bytes) != wt_bits(b, i, bytes)) {
            rc = wt_fail(msg, msg_len,
                         "output is not a permutation of the input: sorted bit patterns differ "
                         "at %zu (input 0x%llx, output 0x%llx)",
                         i, (unsigned long long)wt_bits(a, i, bytes),
                         (unsigned long long)wt_bits(b, i, bytes));
            break;
        }
    }
done:
    free(a);
    free(b);
    return rc;
}

/* 0 if perm[0..n) is a permutation of 0..n-1. */
static int wt_check_index_permutation(const void *perm, size_t n, size_t bytes, const char *what,
                                      char *msg, size_t msg_len) {
    if (n == 0) return 0;
    unsigned char *seen = calloc((n + 7) / 8, 1);
    if (!seen) return wt_fail(msg, msg_len, "test out of memory (%zu-bit set)", n);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t v = wt_bits(perm, i, bytes);
        if (v >= n) {
            rc = wt_fail(msg, msg_len, "%s[%zu] = %llu is out of range (n = %zu)", what, i,
                         (unsigned long long)v, n);
            break;
        }
        if (seen[v / 8] & (1u << (v % 8))) {
            rc = wt_fail(msg, msg_len, "%s[%zu] = %llu appears twice", what, i,
                         (unsigned long long)v);
            break;
        }
        seen[v / 8] |= (unsigned char)(1u << (v % 8));
    }
    free(seen);
    return rc;
}

int wt_check_values(const void *orig_keys, const void *out_keys, const void *values, size_t n,
                    warpsort_dtype_t dtype, size_t value_bytes, int stable, char *msg,
                    size_t msg_len) {
    size_t kb = warpsort_dtype_size(dtype);
    if (wt_check_index_permutation(values, n, value_bytes, "values", msg, msg_len)) return 1;
    for (size_t i = 0; i < n; i++) {
        uint64_t v = wt_bits(values, i, value_bytes);
        uint64_t k = wt_bits(out_keys, i, kb), want = wt_bits(orig_keys, (size_t)v, kb);
        if (k != want)
            return wt_fail(msg, msg_len,
                           "value did not follow its key: keys[%zu] = 0x%llx but values[%zu] = "
                           "%llu whose key was 0x%llx",
                           i, (unsigned long long)k, i, (unsigned long long)v,
                           (unsigned long long)want);
        if (stable && i > 0 && wt_bits(out_keys, i - 1, kb) == k &&
            wt_bits(values, i - 1, value_bytes) > v)
            return wt_fail(msg, msg_len,
                           "not stable: equal keys 0x%llx at %zu and %zu carry values %llu, %llu",
                           (unsigned long long)k, i - 1, i,
                           (unsigned long long)wt_bits(values, i - 1, value_bytes),
                           (unsigned long long)v);
    }
    return 0;
}

int wt_check_argsort(const void *keys, const void *indices, size_t n, warpsort_dtype_t dtype,
                     size_t index_bytes, unsigned flags, char *msg, size_t msg_len) {
    size_t kb = warpsort_dtype_size(dtype);
    if (wt_check_index_permutation(indices, n, index_bytes, "indices", msg, msg_len)) return 1;
    if (n == 0) return 0;
    void *gathered = malloc(n * kb);
    if (!gathered) return wt_fail(msg, msg_len, "test out of memory gathering %zu keys", n);
    for (size_t i = 0; i < n; i++)
        wt_store(gathered, i, kb, wt_bits(keys, (size_t)wt_bits(indices, i, index_bytes), kb));
    int rc = wt_check_sorted(gathered, n, dtype, flags, msg, msg_len);
    for (size_t i = 1; i < n && !rc; i++) {
        if (wt_bits(gathered, i - 1, kb) == wt_bits(gathered, i, kb) &&
            wt_bits(indices, i - 1, index_bytes) > wt_bits(indices, i, index_bytes))
            rc = wt_fail(msg, msg_len, "argsort not stable at %zu: indices %llu then %llu", i,
                         (unsigned long long)wt_bits(indices, i - 1, index_bytes),
                         (unsigned long long)wt_bits(indices, i, index_bytes));
    }
    free(gathered);
    return rc;
}

int wt_check_reverse(const void *asc, const void *desc, size_t n, size_t bytes, char *msg,
                     size_t msg_len) {
    for (size_t i = 0; i < n; i++)
        if (wt_bits(asc, i, bytes) != wt_bits(desc, n - 1 - i, bytes))
            return wt_fail(msg, msg_len,
                           "descending is not ascending reversed at %zu: 0x%llx vs 0x%llx", i,
                           (unsigned long long)wt_bits(asc, i, bytes),
                           (unsigned long long)wt_bits(desc, n - 1 - i, bytes));
    return 0;
}

wt_fingerprint_t wt_fingerprint(const void *array, size_t n, size_t bytes) {
    wt_fingerprint_t f = {0, 0, 0};
    for (size_t i = 0; i < n; i++) {
        uint64_t h = wt_mix(wt_bits(array, i, bytes));
        f.sum += h;
        f.sum_sq += h * h;
        f.xor_mix ^= wt_mix(h ^ 0x5851F42D4C957F2Dull);
    }
    return f;
}

/*======================================================================
 * Memory hooks
 *====================================================================*/

static void *wt_host_alloc(size_t bytes, void *user) {
    (void)user;
    return malloc(bytes ? bytes : 1);
}
static void wt_host_release(void *ptr, void *user) {
    (void)user;
    free(ptr);
}
int wt_host_copy(void *dst, const void *src, size_t bytes, void *user) {
    (void)user;
    if (bytes) memcpy(dst, src, bytes);
    return 0;
}

const wt_memory_t wt_host_memory = {"host",       wt_host_alloc, wt_host_release,
                                    wt_host_copy, wt_host_copy,  NULL};

/*======================================================================
 * Driver
 *====================================================================*/

void wt_case_describe(const wt_case_t *c, char *buf, size_t len) {
    char second[16] = "";
    if (c->op == WT_OP_PAIRS) snprintf(second, sizeof second, " v%zu", c->second_bytes);
    if (c->op == WT_OP_ARGSORT) snprintf(second, sizeof second, " i%zu", c->second_bytes);
    snprintf(buf, len, "%s %s%s %s%s n=%zu %s seed=%llu", wt_op_name(c->op),
             warpsort_dtype_name(c->dtype) ? warpsort_dtype_name(c->dtype) : "?", second,
             (c->flags & WARPSORT_DESCENDING) ? "desc" : "asc",
             (c->flags & WARPSORT_STABLE) ? " stable" : "", c->n, keygen_dist_name(c->dist),
             (unsigned long long)c->seed);
}

static warpsort_status_t wt_call(warpsort_context_t *ctx, const wt_case_t *c, void *keys,
                                 void *second) {
    switch (c->op) {
    case WT_OP_SORT: return warpsort_sort(ctx, keys, c->n, c->dtype, c->flags);
    case WT_OP_PAIRS:
        return warpsort_sort_pairs(ctx, keys, second, c->n, c->dtype, c->second_bytes, c->flags);
    case WT_OP_ARGSORT:
        return warpsort_argsort(ctx, keys, second, c->n, c->dtype, c->second_bytes, c->flags);
    default: return WARPSORT_INVALID_ARGUMENT;
    }
}

/* Runs c on the oracle (host memory) and compares with the result under test. */
static int wt_compare_oracle(warpsort_context_t *oracle, const wt_case_t *c, const void *orig,
                             const void *out_keys, const void *out_second, char *msg,
                             size_t msg_len) {
    size_t kb = warpsort_dtype_size(c->dtype), n = c->n;
    size_t sb = c->op == WT_OP_SORT ? 0 : c->second_bytes;
    void *keys = malloc(n * kb + 1), *second = malloc(n * sb + 1);
    int rc = 0;
    if (!keys || !second) {
        rc = wt_fail(msg, msg_len, "test out of host memory for the oracle");
        goto done;
    }
    memcpy(keys, orig, n * kb);
    if (c->op == WT_OP_PAIRS) wt_fill_iota(second, n, sb);
    warpsort_status_t st = wt_call(oracle, c, keys, second);
    if (st != WARPSORT_OK) {
        rc = wt_fail(msg, msg_len, "oracle failed: %s: %s", warpsort_status_name(st),
                     warpsort_last_error(oracle));
        goto done;
    }
    if (memcmp(keys, out_keys, n * kb) != 0) {
        size_t i = 0;
        while (wt_bits(keys, i, kb) == wt_bits(out_keys, i, kb)) i++;
        rc = wt_fail(msg, msg_len, "keys differ from the oracle at %zu: 0x%llx vs oracle 0x%llx", i,
                     (unsigned long long)wt_bits(out_keys, i, kb),
                     (unsigned long long)wt_bits(keys, i, kb));
        goto done;
    }
    int second_determined =
        c->op == WT_OP_ARGSORT || (c->op == WT_OP_PAIRS && (c->flags & WARPSORT_STABLE));
    if (second_determined && memcmp(second, out_second, n * sb) != 0) {
        size_t i = 0;
        while (wt_bits(second, i, sb) == wt_bits(out_second, i, sb)) i++;
        rc = wt_fail(msg, msg_len, "%s differ from the oracle at %zu: %llu vs oracle %llu",
                     c->op == WT_OP_ARGSORT ? "indices" : "values", i,
                     (unsigned long long)wt_bits(out_second, i, sb),
                     (unsigned long long)wt_bits(second, i, sb));
    }
done:
    free(keys);
    free(second);
    return rc;
}

int wt_run_case(warpsort_context_t *ctx, const wt_memory_t *mem, const wt_case_t *c,
                warpsort_context_t *oracle, char *msg, size_t msg_len) {
    const size_t kb = warpsort_dtype_size(c->dtype), n = c->n;
    const size_t sb = c->op == WT_OP_SORT ? 0 : c->second_bytes;
    void *orig = malloc(n * kb + 1), *out_keys = malloc(n * kb + 1);
    void *out_second = malloc(n * sb + 1);
    void *dev_keys = NULL, *dev_second = NULL;
    int rc = 0;
    if (!orig || !out_keys || !out_second) {
        rc = wt_fail(msg, msg_len, "test out of host memory");
        goto done;
    }
    dev_keys = mem->alloc(n * kb, mem->user);
    if (sb) dev_second = mem->alloc(n * sb, mem->user);
    if (!dev_keys || (sb && !dev_second)) {
        rc = wt_fail(msg, msg_len, "%s memory: cannot allocate %zu keys", mem->name, n);
        goto done;
    }
    keygen_fill(orig, n, c->dtype, c->dist, c->seed);
    if (c->op == WT_OP_PAIRS)
        wt_fill_iota(out_second, n, sb);
    else if (c->op == WT_OP_ARGSORT)
        memset(out_second, 0xA5, n * sb); /* poison: every index must be written */
    if (mem->upload(dev_keys, orig, n * kb, mem->user) ||
        (sb && mem->upload(dev_second, out_second, n * sb, mem->user))) {
        rc = wt_fail(msg, msg_len, "%s memory: upload failed", mem->name);
        goto done;
    }

    warpsort_status_t st = wt_call(ctx, c, dev_keys, dev_second);
    if (st == WARPSORT_OK) st = warpsort_synchronize(ctx);
    if (st != WARPSORT_OK) {
        rc = wt_fail(msg, msg_len, "returned %s: %s", warpsort_status_name(st),
                     warpsort_last_error(ctx));
        goto done;
    }
    if (mem->download(out_keys, dev_keys, n * kb, mem->user) ||
        (sb && mem->download(out_second, dev_second, n * sb, mem->user))) {
        rc = wt_fail(msg, msg_len, "%s memory: download failed", mem->name);
        goto done;
    }

    switch (c->op) {
    case WT_OP_SORT:
        rc = wt_check_sorted(out_keys, n, c->dtype, c->flags, msg, msg_len) ||
             wt_check_permutation(orig, out_keys, n, kb, msg, msg_len);
        break;
    case WT_OP_PAIRS:
        /* values are a permutation of 0..n-1 and out_keys[i] == orig[values[i]]:
         * that proves out_keys a permutation of orig without sorting copies */
        rc = wt_check_sorted(out_keys, n, c->dtype, c->flags, msg, msg_len) ||
             wt_check_values(orig, out_keys, out_second, n, c->dtype, sb,
                             (c->flags & WARPSORT_STABLE) != 0, msg, msg_len);
        break;
    case WT_OP_ARGSORT:
        if (n && memcmp(orig, out_keys, n * kb) != 0)
            rc = wt_fail(msg, msg_len, "argsort modified its keys");
        else
            rc = wt_check_argsort(orig, out_second, n, c->dtype, sb, c->flags, msg, msg_len);
        break;
    default: rc = wt_fail(msg, msg_len, "unknown op %d", (int)c->op);
    }
    if (!rc && oracle) rc = wt_compare_oracle(oracle, c, orig, out_keys, out_second, msg, msg_len);

done:
    if (dev_keys) mem->release(dev_keys, mem->user);
    if (dev_second) mem->release(dev_second, mem->user);
    free(orig);
    free(out_keys);
    free(out_second);
    return rc;
}

size_t wt_run_matrix(warpsort_context_t *ctx, const wt_memory_t *mem, const wt_matrix_t *m,
                     warpsort_context_t *oracle, FILE *log) {
    size_t failures = 0;
    for (size_t s = 0; s < m->num_sizes; s++) {
        for (unsigned d = 0; d < KEYGEN_DIST_COUNT; d++) {
            if (!(m->dist_mask & (1u << d))) continue;
            wt_case_t c = {m->op,
                           m->dtype,
                           m->second_bytes,
                           m->flags,
                           m->sizes[s],
                           (keygen_dist_t)d,
                           m->seed ^ wt_mix(m->sizes[s] * 8u + d)};
            char msg[512];
            if (wt_run_case(ctx, mem, &c, oracle, msg, sizeof msg) != 0) {
                failures++;
                if (log) {
                    char what[160];
                    wt_case_describe(&c, what, sizeof what);
                    fprintf(log, "FAIL [%s memory] %s: %s\n", mem->name, what, msg);
                }
            }
        }
    }
    return failures;
}
