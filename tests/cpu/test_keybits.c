/*
 * test_keybits.c - src/core/keybits.h, the single source of the sort order,
 * checked against the testkit's reference order (written from the semantics).
 */
#include "core/internal.h"
#include "core/keybits.h"
#include "testkit.h"
#include "wt_cmocka.h"

/* keybits.h's width-generic maps, addressed by dtype. */
static uint64_t to_ordered(uint64_t x, warpsort_dtype_t d, int desc) {
    return ws_to_ordered(x, (unsigned)warpsort_dtype_size(d), ws_dtype_kind(d), desc);
}
static uint64_t from_ordered(uint64_t o, warpsort_dtype_t d, int desc) {
    return ws_from_ordered(o, (unsigned)warpsort_dtype_size(d), ws_dtype_kind(d), desc);
}

/* Edge patterns of every width: sign/exponent boundaries, NaNs, denormals. */
static const uint32_t k_edges32[] = {
    0x00000000u, 0x00000001u, 0x007FFFFFu, 0x00800000u, 0x3F800000u, 0x7F7FFFFFu,
    0x7F800000u, 0x7F800001u, 0x7FC00000u, 0x7FFFFFFEu, 0x7FFFFFFFu, 0x80000000u,
    0x80000001u, 0x807FFFFFu, 0x80800000u, 0xBF800000u, 0xFF7FFFFFu, 0xFF800000u,
    0xFF800001u, 0xFFC00000u, 0xFFFFFFFEu, 0xFFFFFFFFu,
};
static const uint64_t k_edges64[] = {
    0x0000000000000000ull, 0x0000000000000001ull, 0x000FFFFFFFFFFFFFull, 0x0010000000000000ull,
    0x3FF0000000000000ull, 0x7FEFFFFFFFFFFFFFull, 0x7FF0000000000000ull, 0x7FF0000000000001ull,
    0x7FF8000000000000ull, 0x7FFFFFFFFFFFFFFEull, 0x7FFFFFFFFFFFFFFFull, 0x8000000000000000ull,
    0x8000000000000001ull, 0x800FFFFFFFFFFFFFull, 0x8010000000000000ull, 0xBFF0000000000000ull,
    0xFFEFFFFFFFFFFFFFull, 0xFFF0000000000000ull, 0xFFF0000000000001ull, 0xFFF8000000000000ull,
    0xFFFFFFFFFFFFFFFEull, 0xFFFFFFFFFFFFFFFFull,
};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static void test_dtype_kind(void **state) {
    (void)state;
    assert_int_equal(ws_dtype_kind(WARPSORT_U32), 0);
    assert_int_equal(ws_dtype_kind(WARPSORT_U64), 0);
    assert_int_equal(ws_dtype_kind(WARPSORT_I32), 1);
    assert_int_equal(ws_dtype_kind(WARPSORT_I64), 1);
    assert_int_equal(ws_dtype_kind(WARPSORT_F32), 2);
    assert_int_equal(ws_dtype_kind(WARPSORT_F64), 2);
}

/* Decoding gives the input bits back, for every dtype and order: the output
 * of a sort is a permutation of the input bit patterns. */
static void test_round_trip(void **state) {
    (void)state;
    for (int d = 0; d < WARPSORT_DTYPE_COUNT_; d++) {
        warpsort_dtype_t dt = (warpsort_dtype_t)d;
        int wide = warpsort_dtype_size(dt) == 8;
        for (int desc = 0; desc < 2; desc++) {
            size_t edges = wide ? COUNT(k_edges64) : COUNT(k_edges32);
            for (size_t i = 0; i < edges; i++) {
                uint64_t x = wide ? k_edges64[i] : k_edges32[i];
                assert_int_equal(from_ordered(to_ordered(x, dt, desc), dt, desc), x);
            }
            for (uint64_t i = 0; i < 200000; i++) {
                uint64_t x = wt_mix(i * 2654435761u + (uint64_t)d);
                if (!wide) x &= 0xFFFFFFFFull;
                assert_int_equal(from_ordered(to_ordered(x, dt, desc), dt, desc), x);
                /* the decoder is a bijection too, so every ordered value is reachable */
                assert_int_equal(to_ordered(from_ordered(x, dt, desc), dt, desc), x);
            }
        }
    }
}

/* Every high half with a few low halves: all sign/exponent boundaries of f32
 * exactly, both orders, and ordered bits agree with the reference order
 * between neighbours in this sweep. */
static void check_agreement(warpsort_dtype_t dt, uint64_t a, uint64_t b);

static void test_f32_sweep(void **state) {
    (void)state;
    static const uint32_t lows[] = {0x0000u, 0x0001u, 0x8000u, 0xFFFEu, 0xFFFFu};
    uint32_t prev = 0;
    for (uint32_t hi = 0; hi <= 0xFFFFu; hi++) {
        for (size_t l = 0; l < COUNT(lows); l++) {
            uint32_t x = hi << 16 | lows[l];
            uint32_t asc = ws_to_ordered32(x, 2, 0), desc = ws_to_ordered32(x, 2, 1);
            assert_int_equal(ws_from_ordered32(asc, 2, 0), x);
            assert_int_equal(ws_from_ordered32(desc, 2, 1), x);
            assert_int_equal(desc, (uint32_t)~asc);
            check_agreement(WARPSORT_F32, prev, x);
            prev = x;
        }
    }
}

/* -NaN, -inf, -FLT_MAX, -1, -denormal, -0, +0, +denormal, 1, FLT_MAX, +inf,
 * then every NaN (of either sign) after +inf ascending and before -inf
 * descending. */
static void check_float_ladder(warpsort_dtype_t dt, const uint64_t *ladder, size_t rungs,
                               const uint64_t *nans, size_t num_nans) {
    for (size_t i = 1; i < rungs; i++) {
        assert_true(to_ordered(ladder[i - 1], dt, 0) < to_ordered(ladder[i], dt, 0));
        assert_true(to_ordered(ladder[i - 1], dt, 1) > to_ordered(ladder[i], dt, 1));
    }
    uint64_t pinf = ladder[rungs - 1], ninf = ladder[0];
    for (size_t i = 0; i < num_nans; i++) {
        assert_true(to_ordered(nans[i], dt, 0) > to_ordered(pinf, dt, 0));
        assert_true(to_ordered(nans[i], dt, 1) < to_ordered(ninf, dt, 1));
        assert_true(to_ordered(nans[i], dt, 1) < to_ordered(pinf, dt, 1));
    }
}

static void test_float_order(void **state) {
    (void)state;
    const uint64_t ladder32[] = {0xFF800000u, 0xFF7FFFFFu, 0xBF800000u, 0x80800000u, 0x807FFFFFu,
                                 0x80000001u, 0x80000000u, 0x00000000u, 0x00000001u, 0x007FFFFFu,
                                 0x00800000u, 0x3F800000u, 0x7F7FFFFFu, 0x7F800000u};
    const uint64_t nans32[] = {0x7F800001u, 0x7FC00000u, 0x7FFFFFFFu,
                               0xFF800001u, 0xFFC00000u, 0xFFFFFFFFu};
    check_float_ladder(WARPSORT_F32, ladder32, COUNT(ladder32), nans32, COUNT(nans32));
    const uint64_t ladder64[] = {
        0xFFF0000000000000ull, 0xFFEFFFFFFFFFFFFFull, 0xBFF0000000000000ull, 0x8010000000000000ull,
        0x800FFFFFFFFFFFFFull, 0x8000000000000001ull, 0x8000000000000000ull, 0x0000000000000000ull,
        0x0000000000000001ull, 0x000FFFFFFFFFFFFFull, 0x0010000000000000ull, 0x3FF0000000000000ull,
        0x7FEFFFFFFFFFFFFFull, 0x7FF0000000000000ull};
    const uint64_t nans64[] = {0x7FF0000000000001ull, 0x7FF8000000000000ull, 0x7FFFFFFFFFFFFFFFull,
                               0xFFF0000000000001ull, 0xFFF8000000000000ull, 0xFFFFFFFFFFFFFFFFull};
    check_float_ladder(WARPSORT_F64, ladder64, COUNT(ladder64), nans64, COUNT(nans64));
}

/* Descending is the bitwise complement of ascending, for every dtype. */
static void test_descending_is_complement(void **state) {
    (void)state;
    for (int d = 0; d < WARPSORT_DTYPE_COUNT_; d++) {
        warpsort_dtype_t dt = (warpsort_dtype_t)d;
        uint64_t mask = warpsort_dtype_size(dt) == 4 ? 0xFFFFFFFFull : ~0ull;
        for (uint64_t i = 0; i < 100000; i++) {
            uint64_t x = wt_mix(i) & mask;
            assert_int_equal(to_ordered(x, dt, 1), ~to_ordered(x, dt, 0) & mask);
        }
    }
}

/* Ordered bits compare like the reference order for every dtype, on random
 * pairs and on all pairs of edge patterns; distinct NaNs get distinct,
 * fixed ranks. */
static void check_agreement(warpsort_dtype_t dt, uint64_t a, uint64_t b) {
    int ref = wt_ref_cmp(a, b, dt);
    uint64_t oa = to_ordered(a, dt, 0), ob = to_ordered(b, dt, 0);
    if (a == b) {
        assert_true(oa == ob);
    } else if (ref == 0) { /* two different NaNs: any fixed order, never tied */
        assert_true(wt_is_nan(a, dt) && wt_is_nan(b, dt));
        assert_true(oa != ob);
    } else if (ref < 0) {
        if (oa >= ob)
            fail_msg("%s: 0x%llx should order before 0x%llx", warpsort_dtype_name(dt),
                     (unsigned long long)a, (unsigned long long)b);
    } else {
        if (oa <= ob)
            fail_msg("%s: 0x%llx should order after 0x%llx", warpsort_dtype_name(dt),
                     (unsigned long long)a, (unsigned long long)b);
    }
}

static void test_agrees_with_reference(void **state) {
    (void)state;
    for (int d = 0; d < WARPSORT_DTYPE_COUNT_; d++) {
        warpsort_dtype_t dt = (warpsort_dtype_t)d;
        int wide = warpsort_dtype_size(dt) == 8;
        uint64_t mask = wide ? ~0ull : 0xFFFFFFFFull;
        size_t edges = wide ? COUNT(k_edges64) : COUNT(k_edges32);
        for (size_t i = 0; i < edges; i++)
            for (size_t j = 0; j < edges; j++)
                check_agreement(dt, wide ? k_edges64[i] : k_edges32[i],
                                wide ? k_edges64[j] : k_edges32[j]);
        for (uint64_t i = 0; i < 300000; i++) {
            uint64_t a = wt_mix(2 * i) & mask, b = wt_mix(2 * i + 1) & mask;
            check_agreement(dt, a, b);
            /* near neighbours: differences in the low bits only */
            check_agreement(dt, a, (a ^ (wt_mix(i) & 0xFF)) & mask);
        }
        /* the special-value generator draws from the same edges the tests use */
        enum { N = 4096 };
        uint64_t keys[N];
        keygen_fill(keys, wide ? N : N / 2, dt, KEYGEN_NAN_MIX, 77);
        for (size_t i = 0; i + 1 < (size_t)(wide ? N : N / 2); i++) {
            uint64_t a = wt_bits(keys, i, wide ? 8 : 4), b = wt_bits(keys, i + 1, wide ? 8 : 4);
            check_agreement(dt, a, b);
        }
    }
}

/* ws_load_ordered reads element i of either width exactly as the scalar
 * maps convert it. */
static void test_load_ordered(void **state) {
    (void)state;
    uint32_t a32[COUNT(k_edges32)];
    for (size_t i = 0; i < COUNT(k_edges32); i++) a32[i] = k_edges32[i];
    for (int d = 0; d < WARPSORT_DTYPE_COUNT_; d++) {
        warpsort_dtype_t dt = (warpsort_dtype_t)d;
        int wide = warpsort_dtype_size(dt) == 8;
        for (int desc = 0; desc < 2; desc++) {
            size_t edges = wide ? COUNT(k_edges64) : COUNT(k_edges32);
            for (size_t i = 0; i < edges; i++) {
                uint64_t got = ws_load_ordered(wide ? (const void *)k_edges64 : (const void *)a32,
                                               i, wide ? 8u : 4u, ws_dtype_kind(dt), desc);
                assert_int_equal(got, to_ordered(wide ? k_edges64[i] : k_edges32[i], dt, desc));
            }
        }
    }
}

int main(int argc, char **argv) {
    if (wt_cmocka_options(argc, argv) < 0) return 2;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dtype_kind),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_load_ordered),
        cmocka_unit_test(test_f32_sweep),
        cmocka_unit_test(test_float_order),
        cmocka_unit_test(test_descending_is_complement),
        cmocka_unit_test(test_agrees_with_reference),
    };
    return cmocka_run_group_tests_name("keybits", tests, NULL, NULL);
}
