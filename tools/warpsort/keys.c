/* keys.c - key order, reference sort and formatting for the CLI, see keys.h. */
#include "keys.h"

#include "core/keybits.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t keys_ordered(const void *keys, size_t i, warpsort_dtype_t dtype, int desc) {
    if (warpsort_dtype_size(dtype) == 4)
        return ws_to_ordered32(((const uint32_t *)keys)[i], ws_dtype_kind(dtype), desc);
    return ws_to_ordered64(((const uint64_t *)keys)[i], ws_dtype_kind(dtype), desc);
}

size_t keys_first_unsorted(const void *keys, size_t n, warpsort_dtype_t dtype, int desc) {
    for (size_t i = 1; i < n; i++)
        if (keys_ordered(keys, i, dtype, desc) < keys_ordered(keys, i - 1, dtype, desc)) return i;
    return n;
}

/* LSD radix sort of unsigned integers, 8 bits per pass; passes in which all
 * keys share the digit are skipped (few-distinct and narrow data). */
#define RADIX_SORT_FN(name, T)                                                   \
    static int name(T *a, size_t n) {                                          \
        T *tmp = malloc(n ? n * sizeof(T) : 1);                                \
        if (!tmp) return 0;                                                    \
        T *src = a, *dst = tmp;                                                \
        for (unsigned shift = 0; shift < 8 * sizeof(T); shift += 8) {          \
            size_t count[256] = {0};                                           \
            for (size_t i = 0; i < n; i++) count[(src[i] >> shift) & 0xFF]++;  \
            if (n == 0 || count[(src[0] >> shift) & 0xFF] == n) continue;      \
            size_t pos = 0;                                                    \
            for (int d = 0; d < 256; d++) {                                    \
                size_t c = count[d];                                           \
                count[d] = pos;                                                \
                pos += c;                                                      \
            }                                                                  \
            for (size_t i = 0; i < n; i++) dst[count[(src[i] >> shift) & 0xFF]++] = src[i]; \
            T *t = src;                                                        \
            src = dst;                                                         \
            dst = t;                                                           \
        }                                                                      \
        if (src != a) memcpy(a, src, n * sizeof(T));                           \
        free(tmp);                                                             \
        return 1;                                                              \
    }
RADIX_SORT_FN(radix_sort_u32, uint32_t)
RADIX_SORT_FN(radix_sort_u64, uint64_t)

int keys_reference_sort(void *keys, size_t n, warpsort_dtype_t dtype, int desc) {
    int kind = ws_dtype_kind(dtype), ok;
    if (warpsort_dtype_size(dtype) == 4) {
        uint32_t *k = keys;
        for (size_t i = 0; i < n; i++) k[i] = ws_to_ordered32(k[i], kind, desc);
        ok = radix_sort_u32(k, n);
        for (size_t i = 0; i < n; i++) k[i] = ws_from_ordered32(k[i], kind, desc);
    } else {
        uint64_t *k = keys;
        for (size_t i = 0; i < n; i++) k[i] = ws_to_ordered64(k[i], kind, desc);
        ok = radix_sort_u64(k, n);
        for (size_t i = 0; i < n; i++) k[i] = ws_from_ordered64(k[i], kind, desc);
    }
    return ok;
}

int keys_same_multiset(const void *a, const void *b, size_t n, warpsort_dtype_t dtype,
                       size_t *sorted_rank) {
    size_t es = warpsort_dtype_size(dtype), bytes = n * es;
    unsigned char *ca = malloc(bytes ? bytes : 1), *cb = malloc(bytes ? bytes : 1);
    int result = -1;
    if (ca && cb) {
        memcpy(ca, a, bytes);
        memcpy(cb, b, bytes);
        /* Any fixed order works for comparing multisets of bit patterns. */
        if (keys_reference_sort(ca, n, dtype, 0) && keys_reference_sort(cb, n, dtype, 0)) {
            result = 1;
            for (size_t i = 0; i < n; i++) {
                if (memcmp(ca + i * es, cb + i * es, es) != 0) {
                    *sorted_rank = i;
                    result = 0;
                    break;
                }
            }
        }
    }
    free(ca);
    free(cb);
    return result;
}

void keys_format(const void *keys, size_t i, warpsort_dtype_t dtype, char *buf, size_t len) {
    switch (dtype) {
    case WARPSORT_U32: snprintf(buf, len, "%" PRIu32, ((const uint32_t *)keys)[i]); break;
    case WARPSORT_I32: snprintf(buf, len, "%" PRId32, ((const int32_t *)keys)[i]); break;
    case WARPSORT_U64: snprintf(buf, len, "%" PRIu64, ((const uint64_t *)keys)[i]); break;
    case WARPSORT_I64: snprintf(buf, len, "%" PRId64, ((const int64_t *)keys)[i]); break;
    case WARPSORT_F32: {
        /* The bits matter: -0 vs +0 and NaN payloads are distinct keys. */
        float f;
        uint32_t bits = ((const uint32_t *)keys)[i];
        memcpy(&f, &bits, sizeof f);
        snprintf(buf, len, "%.9g (0x%08" PRIx32 ")", (double)f, bits);
        break;
    }
    case WARPSORT_F64: {
        double d;
        uint64_t bits = ((const uint64_t *)keys)[i];
        memcpy(&d, &bits, sizeof d);
        snprintf(buf, len, "%.17g (0x%016" PRIx64 ")", d, bits);
        break;
    }
    default: snprintf(buf, len, "?"); break;
    }
}
