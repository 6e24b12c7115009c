/* keys.c - key order, result checks and formatting for the CLI, see keys.h. */
#include "keys.h"

#include "core/keybits.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t keys_first_unsorted(const void *keys, size_t n, warpsort_dtype_t dtype, int desc) {
    const unsigned kb = (unsigned)warpsort_dtype_size(dtype);
    const int kind = ws_dtype_kind(dtype);
    for (size_t i = 1; i < n; i++)
        if (ws_load_ordered(keys, i, kb, kind, desc) < ws_load_ordered(keys, i - 1, kb, kind, desc))
            return i;
    return n;
}

warpsort_status_t keys_cpu_sort(void *keys, size_t n, warpsort_dtype_t dtype, int desc, char *why,
                                size_t why_len) {
    warpsort_context_t *ctx;
    warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
    cfg.backend = WARPSORT_BACKEND_CPU;
    warpsort_status_t st = warpsort_create(&ctx, &cfg);
    if (st != WARPSORT_OK) {
        snprintf(why, why_len, "%s: cannot create a CPU context", warpsort_status_name(st));
        return st;
    }
    st = warpsort_sort(ctx, keys, n, dtype, desc ? WARPSORT_DESCENDING : WARPSORT_ASCENDING);
    if (st != WARPSORT_OK)
        snprintf(why, why_len, "%s: %s", warpsort_status_name(st), warpsort_last_error(ctx));
    warpsort_destroy(ctx);
    return st;
}

int keys_same_multiset(const void *a, const void *b, size_t n, warpsort_dtype_t dtype,
                       size_t *sorted_rank, char *why, size_t why_len) {
    size_t es = warpsort_dtype_size(dtype), bytes = n * es;
    unsigned char *ca = malloc(bytes ? bytes : 1), *cb = malloc(bytes ? bytes : 1);
    int result = -1;
    if (!ca || !cb) {
        snprintf(why, why_len, "out of memory for two copies of %zu keys", n);
    } else {
        memcpy(ca, a, bytes);
        memcpy(cb, b, bytes);
        /* Any fixed order works for comparing multisets of bit patterns. */
        if (keys_cpu_sort(ca, n, dtype, 0, why, why_len) == WARPSORT_OK &&
            keys_cpu_sort(cb, n, dtype, 0, why, why_len) == WARPSORT_OK) {
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

/* splitmix64's finaliser. */
static uint64_t keys_mix(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

keys_hash_t keys_multiset_hash(const void *keys, size_t n, size_t key_bytes) {
    keys_hash_t h = {0, 0};
    for (size_t i = 0; i < n; i++) {
        uint64_t bits = key_bytes == 4 ? ((const uint32_t *)keys)[i] : ((const uint64_t *)keys)[i];
        /* two independent mixes, summed: a sum does not depend on the order */
        h.sum1 += keys_mix(bits ^ 0xA0761D6478BD642Full);
        h.sum2 += keys_mix(((bits << 17) | (bits >> 47)) + 0xE7037ED1A0B428DBull);
    }
    return h;
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
