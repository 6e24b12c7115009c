/*
 * test_keygen.c - src/core/keygen.h, the one input generator of the CLI, the
 * tests and the benchmark: each distribution has the shape its name promises
 * (judged by the testkit oracle), and generation is reproducible and
 * counter-based (any range of keys equals the same range of a whole fill).
 */
#include "core/keygen.h"
#include "testkit.h"
#include "wt_cmocka.h"

#include <math.h>

static const warpsort_dtype_t k_dtypes[] = {WARPSORT_U32, WARPSORT_I32, WARPSORT_F32,
                                            WARPSORT_U64, WARPSORT_I64, WARPSORT_F64};
#define NUM_DTYPES (sizeof k_dtypes / sizeof k_dtypes[0])
enum { N = 20000 };

static int is_float(warpsort_dtype_t d) { return d == WARPSORT_F32 || d == WARPSORT_F64; }

/* 1 if bits of a float dtype are finite and normal (no NaN, inf, 0, subnormal). */
static int finite_normal(uint64_t bits, warpsort_dtype_t d) {
    if (d == WARPSORT_F32) {
        uint32_t e = ((uint32_t)bits >> 23) & 0xFFu;
        return e != 0 && e != 0xFFu;
    }
    uint64_t e = (bits >> 52) & 0x7FFu;
    return e != 0 && e != 0x7FFu;
}

static size_t count_distinct(const void *keys, size_t n, size_t kb) {
    void *copy = malloc(n * kb + 1);
    assert_non_null(copy);
    memcpy(copy, keys, n * kb);
    /* the oracle's permutation check sorts; here a quadratic count is enough for small n */
    size_t distinct = 0;
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < i && wt_bits(copy, j, kb) != wt_bits(copy, i, kb)) j++;
        distinct += j == i;
    }
    free(copy);
    return distinct;
}

static void test_names(void **state) {
    (void)state;
    static const char *const names[KEYGEN_DIST_COUNT] = {
        "random", "sorted", "reversed", "equal",  "few",         "nan-mix",
        "narrow", "iota",   "two",      "skewed", "exponential", "all-but-one"};
    for (unsigned d = 0; d < KEYGEN_DIST_COUNT; d++) {
        assert_string_equal(keygen_dist_name((keygen_dist_t)d), names[d]);
        keygen_dist_t back = KEYGEN_DIST_COUNT;
        assert_true(keygen_dist_from_name(names[d], &back));
        assert_int_equal(back, d);
    }
    keygen_dist_t unused;
    assert_false(keygen_dist_from_name("zipf", &unused));
    assert_false(keygen_dist_from_name("", &unused));
    assert_string_equal(keygen_dist_name(KEYGEN_DIST_COUNT), "?");
}

/* Same arguments, same bytes; any range equals that range of a whole fill;
 * another seed or dtype gives another stream. */
static void test_reproducible_and_counter_based(void **state) {
    (void)state;
    uint64_t a[N], b[N];
    for (size_t t = 0; t < NUM_DTYPES; t++) {
        warpsort_dtype_t dt = k_dtypes[t];
        size_t kb = warpsort_dtype_size(dt);
        for (unsigned d = 0; d < KEYGEN_DIST_COUNT; d++) {
            keygen_fill(a, N, dt, (keygen_dist_t)d, 42);
            keygen_fill(b, N, dt, (keygen_dist_t)d, 42);
            assert_memory_equal(a, b, N * kb);
            keygen_t g = keygen_init((keygen_dist_t)d, dt, 42, N);
            memset(b, 0xA5, sizeof b);
            keygen_fill_range(&g, b, 0, 777);
            keygen_fill_range(&g, b, 777, N - 777);
            assert_memory_equal(a, b, N * kb);
            if (d == KEYGEN_IOTA || d == KEYGEN_EQUAL) continue; /* seed-free or one key */
            keygen_fill(b, N, dt, (keygen_dist_t)d, 43);
            assert_memory_not_equal(a, b, N * kb);
        }
    }
    keygen_fill(a, N, WARPSORT_U32, KEYGEN_RANDOM, 7);
    keygen_fill(b, N, WARPSORT_I32, KEYGEN_RANDOM, 7);
    assert_memory_not_equal(a, b, N * 4);
}

static void test_shapes(void **state) {
    (void)state;
    uint64_t keys[N];
    char msg[256];
    for (size_t t = 0; t < NUM_DTYPES; t++) {
        warpsort_dtype_t dt = k_dtypes[t];
        size_t kb = warpsort_dtype_size(dt);
        const char *name = warpsort_dtype_name(dt);

        /* random: floats finite and normal; integers use the whole width */
        keygen_fill(keys, N, dt, KEYGEN_RANDOM, 1);
        uint64_t ored = 0;
        for (size_t i = 0; i < N; i++) {
            uint64_t x = wt_bits(keys, i, kb);
            ored |= x;
            if (is_float(dt) && !finite_normal(x, dt))
                fail_msg("%s random key %zu = 0x%llx is not finite and normal", name, i,
                         (unsigned long long)x);
        }
        assert_true(ored == (kb == 4 ? 0xFFFFFFFFull : ~0ull));
        assert_true(count_distinct(keys, 2000, kb) > 1990);

        /* sorted / reversed: ordered by the oracle, with repeats but mostly distinct;
         * floats finite and normal */
        keygen_fill(keys, N, dt, KEYGEN_SORTED, 2);
        if (wt_check_sorted(keys, N, dt, 0, msg, sizeof msg)) fail_msg("%s sorted: %s", name, msg);
        size_t repeats = 0;
        for (size_t i = 1; i < N; i++) repeats += wt_bits(keys, i, kb) == wt_bits(keys, i - 1, kb);
        assert_true(repeats > N / 16 && repeats < N / 4);
        for (size_t i = 0; i < N && is_float(dt); i++)
            assert_true(finite_normal(wt_bits(keys, i, kb), dt));
        /* spread over the whole order: negatives and positives both */
        if (dt != WARPSORT_U32 && dt != WARPSORT_U64)
            assert_true(wt_ref_cmp(wt_bits(keys, 0, kb), 0, dt) < 0 &&
                        wt_ref_cmp(wt_bits(keys, N - 1, kb), 0, dt) > 0);
        uint64_t rev[N];
        keygen_fill(rev, N, dt, KEYGEN_REVERSED, 2);
        if (wt_check_sorted(rev, N, dt, WARPSORT_DESCENDING, msg, sizeof msg))
            fail_msg("%s reversed: %s", name, msg);
        if (wt_check_reverse(keys, rev, N, kb, msg, sizeof msg))
            fail_msg("%s reversed is not sorted back to front: %s", name, msg);

        /* equal, few, two, all-but-one, skewed, exponential */
        keygen_fill(keys, N, dt, KEYGEN_EQUAL, 3);
        assert_int_equal(count_distinct(keys, N, kb), 1);
        keygen_fill(keys, N, dt, KEYGEN_TWO, 3);
        assert_int_equal(count_distinct(keys, N, kb), 2);
        keygen_fill(keys, N, dt, KEYGEN_ALL_BUT_ONE, 3);
        assert_int_equal(count_distinct(keys, N, kb), 2);
        keygen_fill(keys, N, dt, KEYGEN_SKEWED, 3);
        {
            size_t heavy = 0;
            for (size_t i = 0; i < N; i++)
                heavy += wt_bits(keys, i, kb) == wt_bits(keys, 0, kb) ||
                         wt_bits(keys, i, kb) == wt_bits(keys, 1, kb);
            /* keys 0 and 1 are the heavy key unless both fell in the 10 % */
            assert_true(heavy > N * 8 / 10);
            assert_true(count_distinct(keys, N, kb) > N / 20);
        }
        keygen_fill(keys, N, dt, KEYGEN_EXPONENTIAL, 3);
        {
            const size_t distinct = count_distinct(keys, N, kb);
            assert_true(distinct > 50); /* spread out, with many repeats for integers */
            if (!is_float(dt)) assert_true(distinct < N / 4);
            for (size_t i = 0; i < N; i++) /* non-negative and finite */
                assert_true(wt_ref_cmp(wt_bits(keys, i, kb), 0, dt) >= 0 &&
                            !wt_is_nan(wt_bits(keys, i, kb), dt));
        }
        keygen_fill(keys, N, dt, KEYGEN_FEW, 3);
        size_t few = count_distinct(keys, 4000, kb);
        assert_true(few >= 12 && few <= KEYGEN_FEW_DISTINCT);

        /* narrow: only the low three bytes vary, and they all do; floats finite */
        keygen_fill(keys, N, dt, KEYGEN_NARROW, 4);
        uint64_t first = wt_bits(keys, 0, kb), diff = 0;
        for (size_t i = 0; i < N; i++) {
            uint64_t x = wt_bits(keys, i, kb);
            assert_true((x >> 24) == (first >> 24));
            diff |= x ^ first;
            if (is_float(dt)) assert_false(wt_is_nan(x, dt));
        }
        assert_true(diff > 0x7FFFFF);

        /* iota: exact positions */
        keygen_fill(keys, N, dt, KEYGEN_IOTA, 5);
        for (size_t i = 0; i < N; i++) {
            uint64_t x = wt_bits(keys, i, kb);
            if (dt == WARPSORT_F32) {
                float f;
                uint32_t b = (uint32_t)x;
                memcpy(&f, &b, sizeof f);
                assert_true(f == (float)i);
            } else if (dt == WARPSORT_F64) {
                double f;
                memcpy(&f, &x, sizeof f);
                assert_true(f == (double)i);
            } else {
                assert_int_equal(x, i);
            }
        }
    }
}

/* nan-mix: about half specials; floats get NaNs of both signs, both zeros,
 * both infinities and subnormals; integers their extremes. */
static void test_nan_mix(void **state) {
    (void)state;
    uint64_t keys[N];
    for (size_t t = 0; t < NUM_DTYPES; t++) {
        warpsort_dtype_t dt = k_dtypes[t];
        size_t kb = warpsort_dtype_size(dt);
        keygen_fill(keys, N, dt, KEYGEN_NAN_MIX, 6);
        uint64_t sign = kb == 4 ? 1ull << 31 : 1ull << 63, ones = kb == 4 ? 0xFFFFFFFFull : ~0ull;
        int pos_nan = 0, neg_nan = 0, pos_zero = 0, neg_zero = 0, inf = 0, subnormal = 0;
        int has_min = 0, has_max = 0, has_ones = 0, has_zero = 0;
        for (size_t i = 0; i < N; i++) {
            uint64_t x = wt_bits(keys, i, kb);
            if (is_float(dt)) {
                uint64_t mag = x & ~sign,
                         inf_bits = kb == 4 ? 0x7F800000ull : 0x7FF0000000000000ull;
                if (wt_is_nan(x, dt))
                    ++*((x & sign) ? &neg_nan : &pos_nan);
                else if (mag == inf_bits)
                    inf++;
                else if (mag == 0)
                    ++*((x & sign) ? &neg_zero : &pos_zero);
                else if (mag < (kb == 4 ? 0x00800000ull : 0x0010000000000000ull))
                    subnormal++;
            } else {
                has_min |= x == sign;
                has_max |= x == sign - 1;
                has_ones |= x == ones;
                has_zero |= x == 0;
            }
        }
        if (is_float(dt))
            assert_true(pos_nan && neg_nan && pos_zero && neg_zero && inf && subnormal);
        else
            assert_true(has_min && has_max && has_ones && has_zero);
    }
}

int main(int argc, char **argv) {
    if (wt_cmocka_options(argc, argv) < 0) return 2;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_reproducible_and_counter_based),
        cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_nan_mix),
    };
    return cmocka_run_group_tests_name("keygen", tests, NULL, NULL);
}
