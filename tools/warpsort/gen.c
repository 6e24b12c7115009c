/* gen.c - seeded key distributions, see gen.h. */
#include "gen.h"

#include "cli.h"
#include "keys.h"
#include "progress.h"

#include <string.h>

static const char *const gen_dist_names[GEN_DIST_COUNT_] = {
    [GEN_RANDOM] = "random", [GEN_SORTED] = "sorted", [GEN_REVERSED] = "reversed",
    [GEN_EQUAL] = "equal",   [GEN_FEW] = "few",       [GEN_NANMIX] = "nan-mix",
    [GEN_IOTA] = "iota",
};

const char *gen_dist_name(gen_dist_t dist) {
    return (int)dist >= 0 && dist < GEN_DIST_COUNT_ ? gen_dist_names[dist] : "?";
}

const char *gen_dist_list(void) { return "random, sorted, reversed, equal, few, nan-mix, iota"; }

int gen_dist_from_name(const char *name, gen_dist_t *dist) {
    for (int i = 0; i < GEN_DIST_COUNT_; i++) {
        if (strcmp(name, gen_dist_names[i]) == 0) {
            *dist = (gen_dist_t)i;
            return 1;
        }
    }
    cli_error("unknown distribution '%s' (use %s)", name, gen_dist_list());
    return 0;
}

/* xoshiro256** seeded through splitmix64: fast, and any seed (0 included)
 * gives a good state. */
typedef struct rng {
    uint64_t s[4];
} rng_t;

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void rng_seed(rng_t *r, uint64_t seed) {
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t rng_next(rng_t *r) {
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

/* One random key as raw bits (low 32 bits used for 4-byte dtypes). */
static uint64_t random_key(rng_t *r, warpsort_dtype_t dtype) {
    for (;;) {
        uint64_t x = rng_next(r);
        if (dtype == WARPSORT_F32) {
            uint32_t b = (uint32_t)(x >> 32);
            if ((b & 0x7F800000u) != 0x7F800000u) return b;
        } else if (dtype == WARPSORT_F64) {
            if ((x & 0x7FF0000000000000ull) != 0x7FF0000000000000ull) return x;
        } else {
            return warpsort_dtype_size(dtype) == 4 ? x >> 32 : x;
        }
    }
}

static const uint32_t specials_f32[] = {
    0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFF800001u, 0x7FFFFFFFu, 0xFFFFFFFFu, /* NaNs */
    0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u,                           /* +-0 +-inf */
    0x00000001u, 0x80000001u, 0x7F7FFFFFu, 0xFF7FFFFFu,                           /* tiny, max */
};
static const uint64_t specials_f64[] = {
    0x7FF8000000000000ull, 0xFFF8000000000000ull, 0x7FF0000000000001ull,
    0xFFF0000000000001ull, 0x7FFFFFFFFFFFFFFFull, 0xFFFFFFFFFFFFFFFFull,
    0x0000000000000000ull, 0x8000000000000000ull, 0x7FF0000000000000ull,
    0xFFF0000000000000ull, 0x0000000000000001ull, 0x8000000000000001ull,
    0x7FEFFFFFFFFFFFFFull, 0xFFEFFFFFFFFFFFFFull,
};
/* Signed and unsigned extremes share patterns: 0, 1, all ones (-1 / max),
 * the sign bit (min / 2^(w-1)) and their neighbours. */
static const uint32_t specials_int32[] = {
    0x00000000u, 0x00000001u, 0xFFFFFFFFu, 0xFFFFFFFEu, 0x80000000u, 0x80000001u, 0x7FFFFFFFu,
};
static const uint64_t specials_int64[] = {
    0x0000000000000000ull, 0x0000000000000001ull, 0xFFFFFFFFFFFFFFFFull, 0xFFFFFFFFFFFFFFFEull,
    0x8000000000000000ull, 0x8000000000000001ull, 0x7FFFFFFFFFFFFFFFull,
};

#define GEN_COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

static uint64_t special_key(rng_t *r, warpsort_dtype_t dtype) {
    uint64_t x = rng_next(r);
    switch (dtype) {
    case WARPSORT_F32: return specials_f32[x % GEN_COUNT_OF(specials_f32)];
    case WARPSORT_F64: return specials_f64[x % GEN_COUNT_OF(specials_f64)];
    case WARPSORT_U32: case WARPSORT_I32: return specials_int32[x % GEN_COUNT_OF(specials_int32)];
    default: return specials_int64[x % GEN_COUNT_OF(specials_int64)];
    }
}

static void store(void *keys, size_t i, size_t size, uint64_t bits) {
    if (size == 4)
        ((uint32_t *)keys)[i] = (uint32_t)bits;
    else
        ((uint64_t *)keys)[i] = bits;
}

static uint64_t iota_key(size_t i, warpsort_dtype_t dtype) {
    if (dtype == WARPSORT_F32) {
        float f = (float)i;
        uint32_t b;
        memcpy(&b, &f, sizeof b);
        return b;
    }
    if (dtype == WARPSORT_F64) {
        double d = (double)i;
        uint64_t b;
        memcpy(&b, &d, sizeof b);
        return b;
    }
    return (uint64_t)i;
}

#define GEN_FEW_DISTINCT 16
/* Progress granularity: cheap to check, fine enough for a smooth bar. */
#define GEN_BLOCK ((size_t)1 << 20)

int gen_check(gen_dist_t dist, warpsort_dtype_t dtype, size_t n, const char *command) {
    if (dist != GEN_IOTA) return 1;
    /* iota's keys must be distinct, exact original positions. */
    uint64_t limit;
    switch (dtype) {
    case WARPSORT_U32: limit = (uint64_t)1 << 32; break;
    case WARPSORT_I32: limit = (uint64_t)1 << 31; break;
    case WARPSORT_F32: limit = (uint64_t)1 << 24; break;
    case WARPSORT_F64: limit = (uint64_t)1 << 53; break;
    case WARPSORT_I64: limit = (uint64_t)1 << 63; break;
    default: return 1;
    }
    if ((uint64_t)n <= limit) return 1;
    cli_error("%s: --dist iota holds exact positions only up to %llu keys of %s; use a wider dtype",
              command, (unsigned long long)limit, warpsort_dtype_name(dtype));
    return 0;
}

int gen_fill(void *keys, size_t n, warpsort_dtype_t dtype, gen_dist_t dist, uint64_t seed) {
    size_t size = warpsort_dtype_size(dtype);
    rng_t r;
    rng_seed(&r, seed);
    uint64_t pool[GEN_FEW_DISTINCT];
    for (int i = 0; i < GEN_FEW_DISTINCT; i++) pool[i] = random_key(&r, dtype);

    progress_t bar;
    progress_begin(&bar, "generating", n);
    for (size_t start = 0; start < n; start += GEN_BLOCK) {
        size_t end = n - start < GEN_BLOCK ? n : start + GEN_BLOCK;
        for (size_t i = start; i < end; i++) {
            uint64_t bits;
            switch (dist) {
            case GEN_EQUAL: bits = pool[0]; break;
            case GEN_FEW: bits = pool[rng_next(&r) % GEN_FEW_DISTINCT]; break;
            case GEN_NANMIX:
                bits = (rng_next(&r) & 3) == 0 ? special_key(&r, dtype) : random_key(&r, dtype);
                break;
            case GEN_IOTA: bits = iota_key(i, dtype); break;
            default: bits = random_key(&r, dtype); break;
            }
            store(keys, i, size, bits);
        }
        progress_update(&bar, end);
    }
    progress_end(&bar);

    if (dist == GEN_SORTED || dist == GEN_REVERSED)
        return keys_reference_sort(keys, n, dtype, dist == GEN_REVERSED);
    return 1;
}
