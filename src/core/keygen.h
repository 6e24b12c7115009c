/*
 * keygen.h - the one generator of test and benchmark inputs: every key
 * distribution the CLI (`gen`, `bench`, `run`), the tests and the benchmark
 * harness use, under one set of names. Not part of the library: nothing in
 * src/ calls it. It sits beside keybits.h because it is compiled for the host
 * (C) and the device (the harness generates its inputs in a CUDA kernel).
 *
 * Counter-based: key i is a pure function of (distribution, dtype, seed, n,
 * i), so any element is produced independently, on any thread, and the same
 * arguments always give the same bytes. Floats from random, equal and few are
 * finite and normal (no NaN, inf, zero or subnormal), so plain `<` and
 * warpsort's total order agree on them (the harness's merge-sort rivals
 * compare with `<`); nan-mix brings the special patterns, narrow and iota
 * include zeros.
 */
#ifndef WARPSORT_KEYGEN_H
#define WARPSORT_KEYGEN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__)
#define KEYGEN_HD __host__ __device__ __forceinline__
#else
#define KEYGEN_HD static inline
#endif

/* One list: the enum and the names. */
#define KEYGEN_DIST_LIST(X)                                                                       \
    X(RANDOM, "random")           /* uniform bits; floats finite and normal */                    \
    X(SORTED, "sorted")           /* non-decreasing in warpsort's order, ~1 in 8 repeated */      \
    X(REVERSED, "reversed")       /* sorted, back to front */                                     \
    X(EQUAL, "equal")             /* one random key everywhere */                                 \
    X(FEW, "few")                 /* 16 distinct random keys */                                   \
    X(NAN_MIX, "nan-mix")         /* random, half replaced by specials: NaNs of both signs and  \
                               several payloads, +-0, +-inf, subnormals, extremes; for    \
                               integers 0, 1, 2, all ones, the sign bit, neighbours */ \
    X(NARROW, "narrow")           /* random within one 2^24-wide band of bit patterns: only the \
                               low three bytes vary, so radix sorts skip digits */ \
    X(IOTA, "iota")               /* 0, 1, 2, ... in the dtype (exact while the dtype holds i) */ \
    X(TWO, "two")                 /* two random keys, each half the time */                       \
    X(SKEWED, "skewed")           /* one random key 90 % of the time, the rest random */          \
    X(EXPONENTIAL, "exponential") /* floor(64 x) for exponential x (floats: 64 x): small \
                               values repeat often, large ones are rare */        \
    X(ALL_BUT_ONE, "all-but-one") /* one random key everywhere but at one position */

typedef enum keygen_dist {
#define KEYGEN_X_ENUM_(name, text) KEYGEN_##name,
    KEYGEN_DIST_LIST(KEYGEN_X_ENUM_)
#undef KEYGEN_X_ENUM_
        KEYGEN_DIST_COUNT
} keygen_dist_t;

/* Distinct keys of KEYGEN_FEW. */
#define KEYGEN_FEW_DISTINCT 16u

/* "random", ...; "?" if unknown. */
static inline const char *keygen_dist_name(keygen_dist_t dist) {
#define KEYGEN_X_NAME_(name, text) text,
    static const char *const names[KEYGEN_DIST_COUNT] = {KEYGEN_DIST_LIST(KEYGEN_X_NAME_)};
#undef KEYGEN_X_NAME_
    return (unsigned)dist < KEYGEN_DIST_COUNT ? names[dist] : "?";
}

/* 1 and *dist if name is a distribution's name, else 0. */
static inline int keygen_dist_from_name(const char *name, keygen_dist_t *dist) {
    for (unsigned d = 0; d < KEYGEN_DIST_COUNT; d++) {
        if (strcmp(name, keygen_dist_name((keygen_dist_t)d)) == 0) {
            *dist = (keygen_dist_t)d;
            return 1;
        }
    }
    return 0;
}

/* A generator: distribution, key type and stream. Plain data, so it can be
 * passed to a kernel by value. */
typedef struct keygen {
    keygen_dist_t dist;
    unsigned key_bytes; /* 4 or 8 */
    int kind;           /* 0 unsigned, 1 signed, 2 float (as keybits.h) */
    uint64_t n;         /* keys in the array (sorted/reversed spread over it) */
    uint64_t base;      /* the stream: key i draws from keygen_mix(base + i) */
    uint64_t step;      /* sorted: rank distance between neighbours, 0 if n > 2^w */
    unsigned shift;     /* sorted with step 0: rank = i >> shift */
} keygen_t;

/* splitmix64's finaliser: a good 64-bit mix of a counter. */
KEYGEN_HD uint64_t keygen_mix(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* dtype: a warpsort_dtype_t (U32, I32, F32, U64, I64, F64 = 0..5). Each
 * (seed, dtype, dist) gets its own stream, except that reversed shares
 * sorted's: with one seed, one is the other back to front. */
KEYGEN_HD keygen_t keygen_init(keygen_dist_t dist, int dtype, uint64_t seed, uint64_t n) {
    keygen_t g;
    g.dist = dist;
    g.key_bytes = dtype >= 3 ? 8u : 4u;
    g.kind = dtype % 3;
    g.n = n;
    const keygen_dist_t stream = dist == KEYGEN_REVERSED ? KEYGEN_SORTED : dist;
    g.base = keygen_mix(seed ^ ((uint64_t)dtype << 56) ^ ((uint64_t)stream << 48));
    const uint64_t umax = g.key_bytes == 8 ? ~0ull : 0xFFFFFFFFull;
    g.step = n ? umax / n : 0;
    g.shift = 0;
    while (n && ((n - 1) >> g.shift) > umax) g.shift++;
    return g;
}

/* 64 random bits as a key of the generator's type; floats forced finite and
 * normal (an all-ones exponent loses its top bit, a zero one gains its
 * lowest), in one step so every key costs the same. */
KEYGEN_HD uint64_t keygen_random_key(const keygen_t *g, uint64_t r) {
    if (g->key_bytes == 4) {
        uint32_t b = (uint32_t)(r >> 32);
        if (g->kind == 2) {
            uint32_t e = (b >> 23) & 0xFFu;
            if (e == 0xFFu) b &= ~(1u << 30);
            if (e == 0u) b |= 1u << 23;
        }
        return b;
    }
    if (g->kind == 2) {
        uint64_t e = (r >> 52) & 0x7FFull;
        if (e == 0x7FFull) r &= ~(1ull << 62);
        if (e == 0ull) r |= 1ull << 52;
    }
    return r;
}

/* Special bit patterns, picked by r. */
KEYGEN_HD uint64_t keygen_special_key(const keygen_t *g, uint64_t r) {
    if (g->kind == 2 && g->key_bytes == 4) {
        const uint32_t f32[] = {
            0x00000000u, 0x80000000u, /* +0, -0 */
            0x7F800000u, 0xFF800000u, /* +inf, -inf */
            0x7FC00000u, 0xFFC00000u, /* quiet NaNs */
            0x7F800001u, 0xFF800001u, /* signalling NaNs, smallest payload */
            0x7FFFFFFFu, 0xFFFFFFFFu, /* NaNs, largest payload */
            0x7FA12345u, 0xFFD54321u, /* NaNs, other payloads */
            0x00000001u, 0x80000001u, /* smallest subnormals */
            0x007FFFFFu, 0x807FFFFFu, /* largest subnormals */
            0x00800000u, 0x80800000u, /* FLT_MIN */
            0x7F7FFFFFu, 0xFF7FFFFFu, /* FLT_MAX */
            0x3F800000u, 0xBF800000u, /* +-1 */
        };
        return f32[r % (sizeof f32 / sizeof f32[0])];
    }
    if (g->kind == 2) {
        const uint64_t f64[] = {
            0x0000000000000000ull, 0x8000000000000000ull, 0x7FF0000000000000ull,
            0xFFF0000000000000ull, 0x7FF8000000000000ull, 0xFFF8000000000000ull,
            0x7FF0000000000001ull, 0xFFF0000000000001ull, 0x7FFFFFFFFFFFFFFFull,
            0xFFFFFFFFFFFFFFFFull, 0x7FF4000012345678ull, 0xFFFC000087654321ull,
            0x0000000000000001ull, 0x8000000000000001ull, 0x000FFFFFFFFFFFFFull,
            0x800FFFFFFFFFFFFFull, 0x0010000000000000ull, 0x8010000000000000ull,
            0x7FEFFFFFFFFFFFFFull, 0xFFEFFFFFFFFFFFFFull, 0x3FF0000000000000ull,
            0xBFF0000000000000ull,
        };
        return f64[r % (sizeof f64 / sizeof f64[0])];
    }
    /* Integers: both the signed and the unsigned edges. */
    const uint64_t ones = g->key_bytes == 8 ? ~0ull : 0xFFFFFFFFull;
    const uint64_t sign = g->key_bytes == 8 ? 1ull << 63 : 1ull << 31;
    const uint64_t ints[] = {0, 1, 2, ones, ones - 1, sign, sign + 1, sign - 1, sign - 2};
    return ints[r % (sizeof ints / sizeof ints[0])];
}

/* Rank j of a strictly increasing sequence over [0, 2^w), jittered. */
KEYGEN_HD uint64_t keygen_sorted_rank(const keygen_t *g, uint64_t j) {
    if (g->step == 0) return j >> g->shift;
    return j * g->step + (keygen_mix(g->base + j) >> 8) % g->step;
}

/* A rank as a key, monotone in warpsort's order: unsigned as is, signed with
 * the sign bit flipped, floats onto the finite normal numbers (the top rank
 * bit picks the sign, the rest scale the magnitude, reversed for negatives). */
KEYGEN_HD uint64_t keygen_rank_key(const keygen_t *g, uint64_t u) {
    const int wide = g->key_bytes == 8;
    const uint64_t sign = wide ? 1ull << 63 : 1ull << 31;
    if (g->kind == 0) return u;
    if (g->kind == 1) return u ^ sign;
    const uint64_t min_normal = wide ? 1ull << 52 : 1ull << 23;
    const int positive = (u & sign) != 0;
    const uint64_t m = positive ? u - sign : sign - 1 - u;
    /* m - m/64 keeps the largest magnitude below the all-ones exponent */
    const uint64_t magnitude = min_normal + m - (m >> 6);
    return positive ? magnitude : magnitude | sign;
}

/* Key i (i < n) as raw bits (a 4-byte key in the low 32 bits). */
KEYGEN_HD uint64_t keygen_key(const keygen_t *g, uint64_t i) {
    const uint64_t r = keygen_mix(g->base + i);
    switch (g->dist) {
    case KEYGEN_SORTED:
    case KEYGEN_REVERSED: {
        uint64_t j = g->dist == KEYGEN_REVERSED ? g->n - 1 - i : i;
        /* about 1 in 8 keys repeats its predecessor's rank */
        uint64_t rj = keygen_mix(g->base + j);
        if (j > 0 && (rj & 7u) == 0) j--;
        return keygen_rank_key(g, keygen_sorted_rank(g, j));
    }
    case KEYGEN_EQUAL: return keygen_random_key(g, keygen_mix(g->base ^ 0xE9A1E9A1ull));
    case KEYGEN_FEW:
        return keygen_random_key(g,
                                 keygen_mix((g->base ^ 0xF00DF00Dull) + r % KEYGEN_FEW_DISTINCT));
    case KEYGEN_NAN_MIX:
        return (r & 1u) ? keygen_special_key(g, r >> 1) : keygen_random_key(g, keygen_mix(r));
    case KEYGEN_NARROW: {
        uint64_t band = keygen_mix(g->base ^ 0xBA5EBA5Eull) & ~0xFFFFFFull;
        if (g->key_bytes == 4) band &= 0xFFFFFFFFull;
        /* floats: the exponent's top bit cleared keeps the band finite */
        if (g->kind == 2) band &= g->key_bytes == 8 ? ~(1ull << 62) : ~(1ull << 30);
        return band | (r & 0xFFFFFFull);
    }
    case KEYGEN_IOTA:
        if (g->kind == 2 && g->key_bytes == 4) {
            float f = (float)i;
            uint32_t b;
            memcpy(&b, &f, sizeof b);
            return b;
        }
        if (g->kind == 2) {
            double d = (double)i;
            uint64_t b;
            memcpy(&b, &d, sizeof b);
            return b;
        }
        return g->key_bytes == 4 ? i & 0xFFFFFFFFull : i;
    case KEYGEN_TWO: return keygen_random_key(g, keygen_mix((g->base ^ 0x7A07A0ull) + (r & 1u)));
    case KEYGEN_SKEWED:
        return r % 10u ? keygen_random_key(g, keygen_mix(g->base ^ 0x5CE5CEull))
                       : keygen_random_key(g, keygen_mix(r));
    case KEYGEN_EXPONENTIAL: {
        /* x = -ln(u), u uniform in (0, 1]: by bits, no libm on the device */
        const double u = ((double)(r >> 11) + 1.0) * (1.0 / 9007199254740992.0);
        double x = 0.0, v = u;
        while (v < 0.5) { /* ln 2 per halving */
            v *= 2.0;
            x += 0.6931471805599453;
        }
        /* -ln(v) for v in [0.5, 1): atanh series, 2 t (1 + t^2/3 + t^4/5 + ...) */
        const double t = (1.0 - v) / (1.0 + v), t2 = t * t;
        x += 2.0 * t * (1.0 + t2 * (1.0 / 3 + t2 * (1.0 / 5 + t2 * (1.0 / 7 + t2 / 9))));
        if (g->kind == 2 && g->key_bytes == 4) {
            const float f = (float)(64.0 * x);
            uint32_t b;
            memcpy(&b, &f, sizeof b);
            return b;
        }
        if (g->kind == 2) {
            const double d = 64.0 * x;
            uint64_t b;
            memcpy(&b, &d, sizeof b);
            return b;
        }
        return (uint64_t)(64.0 * x);
    }
    case KEYGEN_ALL_BUT_ONE:
        return i == keygen_mix(g->base ^ 0x1B1B1Bull) % (g->n ? g->n : 1)
                   ? keygen_random_key(g, r)
                   : keygen_random_key(g, keygen_mix(g->base ^ 0xA11A11ull));
    case KEYGEN_RANDOM:
    default: return keygen_random_key(g, r);
    }
}

/* Writes keys [first, first + count) of g into keys (an array of n keys of
 * g's width). */
static inline void keygen_fill_range(const keygen_t *g, void *keys, size_t first, size_t count) {
    if (g->key_bytes == 4) {
        uint32_t *k = (uint32_t *)keys;
        for (size_t i = first; i < first + count; i++) k[i] = (uint32_t)keygen_key(g, i);
    } else {
        uint64_t *k = (uint64_t *)keys;
        for (size_t i = first; i < first + count; i++) k[i] = keygen_key(g, i);
    }
}

/* Fills keys[0..n) with dist for a dtype (warpsort_dtype_t value). */
static inline void keygen_fill(void *keys, size_t n, int dtype, keygen_dist_t dist, uint64_t seed) {
    keygen_t g = keygen_init(dist, dtype, seed, n);
    keygen_fill_range(&g, keys, 0, n);
}

#endif /* WARPSORT_KEYGEN_H */
