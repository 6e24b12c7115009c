/*
 * test_segmented.c - batched rows and segments on the CPU backend, judged
 * by the independent oracle (segmented_cases.h over tests/common/testkit):
 * segment lengths 0, 1, 2, 31, 32, 33 and every path switch +-1 of either
 * backend mixed in one call, for every dtype x op x order x stable x
 * distribution; equal rows; the CPU's own switches (64, 2^16); a segment of
 * 2^24 + 1 beside tiny ones; bad offsets (nothing written, the first bad
 * index named) and the argument checks.
 */
#include "segmented_cases.h"
#include "wt_cmocka.h"

static warpsort_context_t *g_ctx;
static int g_quick;

static const struct {
    wt_op_t op;
    size_t second;
} k_ops[] = {
    {WT_OP_SORT, 0}, {WT_OP_PAIRS, 4}, {WT_OP_PAIRS, 8}, {WT_OP_ARGSORT, 4}, {WT_OP_ARGSORT, 8}};

static size_t run(const sg_case_t *c) {
    char msg[768];
    if (sg_run_case(g_ctx, &wt_host_memory, NULL, c, NULL, msg, sizeof msg)) {
        print_error("%s\n", msg);
        return 1;
    }
    return 0;
}

/* Every switch length in one call, for every combination and distribution. */
static void test_mix(void **state) {
    const warpsort_dtype_t dt = (warpsort_dtype_t)(intptr_t)*state;
    size_t lengths[96], failures = 0;
    for (size_t o = 0; o < SG_COUNT(k_ops); o++) {
        for (unsigned flags = 0; flags < 4; flags++) {
            for (int d = 0; d < KEYGEN_DIST_COUNT; d++) {
                if (g_quick && d != KEYGEN_RANDOM && d != KEYGEN_NAN_MIX && d != KEYGEN_FEW)
                    continue;
                const uint64_t seed = 0x5E6ull + 97u * o + 13u * flags + (uint64_t)d;
                const size_t m = sg_mix(lengths, SG_COUNT(lengths), seed);
                sg_case_t c = {
                    k_ops[o].op, dt, k_ops[o].second, flags, (keygen_dist_t)d, seed, lengths, m, 0};
                failures += run(&c);
            }
        }
    }
    assert_int_equal(failures, 0);
}

/* Equal rows, across the lengths that switch paths. */
static void test_rows(void **state) {
    (void)state;
    static const size_t row_lens[] = {1, 2, 3, 31, 32, 33, 64, 65, 129, 1000, 2049};
    size_t failures = 0;
    for (size_t r = 0; r < SG_COUNT(row_lens); r++) {
        for (size_t o = 0; o < SG_COUNT(k_ops); o++) {
            for (int d = 0; d < WARPSORT_DTYPE_COUNT_; d++) {
                const unsigned flags = (unsigned)(r + o + (size_t)d) & 3u;
                sg_case_t c = {k_ops[o].op,
                               (warpsort_dtype_t)d,
                               k_ops[o].second,
                               flags,
                               (keygen_dist_t)((r + (size_t)d) % KEYGEN_DIST_COUNT),
                               0xA0ull + r,
                               NULL,
                               37,
                               row_lens[r]};
                failures += run(&c);
            }
        }
    }
    assert_int_equal(failures, 0);
}

/* The CPU's switch to all workers per segment (2^16) beside tiny segments. */
static void test_big_switch(void **state) {
    (void)state;
    static const size_t lengths[] = {3, 65535, 0, 65536, 1, 65537, 40, 131073, 2};
    size_t failures = 0;
    for (size_t o = 0; o < SG_COUNT(k_ops); o++) {
        for (int d = 0; d < WARPSORT_DTYPE_COUNT_; d += g_quick ? 5 : 1) {
            const unsigned flags = (unsigned)(o + (size_t)d) & 3u;
            sg_case_t c = {k_ops[o].op,
                           (warpsort_dtype_t)d,
                           k_ops[o].second,
                           flags,
                           d & 1 ? KEYGEN_NAN_MIX : KEYGEN_FEW,
                           0xB16ull,
                           lengths,
                           SG_COUNT(lengths),
                           0};
            failures += run(&c);
        }
    }
    assert_int_equal(failures, 0);
}

/* A segment of 2^24 + 1 items beside tiny ones. */
static void test_huge_segment(void **state) {
    (void)state;
    if (g_quick) skip();
    static const size_t lengths[] = {1, 5, ((size_t)1 << 24) + 1, 0, 33, 2};
    sg_case_t keys = {WT_OP_SORT, WARPSORT_F32,      0, WARPSORT_DESCENDING, KEYGEN_NAN_MIX, 7,
                      lengths,    SG_COUNT(lengths), 0};
    sg_case_t pairs = {WT_OP_PAIRS, WARPSORT_U64,      4, WARPSORT_STABLE, KEYGEN_FEW, 8,
                       lengths,     SG_COUNT(lengths), 0};
    assert_int_equal(run(&keys) + run(&pairs), 0);
}

/*--- bad offsets: nothing written, the first bad index named ---*/

static void expect_bad(const uint64_t *offsets, size_t num_segments, size_t n, size_t bad_index) {
    uint32_t keys[16], vals[16], idx[16], orig_keys[16], orig_vals[16];
    for (int i = 0; i < 16; i++) {
        keys[i] = orig_keys[i] = (uint32_t)(97 * (16 - i));
        vals[i] = orig_vals[i] = (uint32_t)i;
        idx[i] = 0xDEADBEEFu;
    }
    char want[64];
    snprintf(want, sizeof want, "bad offset at index %zu:", bad_index);
    warpsort_status_t st[3];
    const char *text[3];
    static char msgs[3][512];
    st[0] = warpsort_sort_segments(g_ctx, keys, n, offsets, num_segments, WARPSORT_U32, 0);
    snprintf(msgs[0], sizeof msgs[0], "%s", warpsort_last_error(g_ctx));
    st[1] = warpsort_sort_segments_pairs(g_ctx, keys, vals, n, offsets, num_segments, WARPSORT_U32,
                                         4, WARPSORT_STABLE);
    snprintf(msgs[1], sizeof msgs[1], "%s", warpsort_last_error(g_ctx));
    st[2] = warpsort_argsort_segments(g_ctx, keys, idx, n, offsets, num_segments, WARPSORT_U32, 4,
                                      WARPSORT_DESCENDING);
    snprintf(msgs[2], sizeof msgs[2], "%s", warpsort_last_error(g_ctx));
    for (int k = 0; k < 3; k++) {
        text[k] = msgs[k];
        assert_int_equal(st[k], WARPSORT_INVALID_ARGUMENT);
        if (!strstr(text[k], want)) fail_msg("message \"%s\" does not name \"%s\"", text[k], want);
    }
    assert_memory_equal(keys, orig_keys, sizeof keys);
    assert_memory_equal(vals, orig_vals, sizeof vals);
    for (int i = 0; i < 16; i++) assert_int_equal(idx[i], 0xDEADBEEFu);
}

static void test_bad_offsets(void **state) {
    (void)state;
    const uint64_t first_not_zero[] = {1, 4, 16};
    expect_bad(first_not_zero, 2, 16, 0);
    const uint64_t decreasing[] = {0, 4, 9, 8, 12, 10, 16};
    expect_bad(decreasing, 6, 16, 3);
    const uint64_t last_short[] = {0, 4, 8, 15};
    expect_bad(last_short, 3, 16, 3);
    const uint64_t last_long[] = {0, 4, 8, 17};
    expect_bad(last_long, 3, 16, 3);
    const uint64_t past_n_then_down[] = {0, 100, 16};
    expect_bad(past_n_then_down, 2, 16, 2);
    const uint64_t none_but_n[] = {5};
    expect_bad(none_but_n, 0, 16, 0);
}

/*--- argument checks and empty calls ---*/

static void test_arguments(void **state) {
    (void)state;
    uint32_t keys[8] = {5, 4, 3, 2, 1, 0, 9, 8};
    uint32_t vals[8] = {0};
    const uint64_t offs[] = {0, 3, 3, 8};
    assert_int_equal(warpsort_sort_segments(NULL, keys, 8, offs, 3, WARPSORT_U32, 0),
                     WARPSORT_INVALID_ARGUMENT);
    assert_int_equal(warpsort_sort_segments(g_ctx, keys, 8, NULL, 3, WARPSORT_U32, 0),
                     WARPSORT_NULL_POINTER);
    assert_int_equal(warpsort_sort_segments(g_ctx, NULL, 8, offs, 3, WARPSORT_U32, 0),
                     WARPSORT_NULL_POINTER);
    assert_int_equal(warpsort_sort_segments(g_ctx, keys, 8, offs, 3, WARPSORT_DTYPE_COUNT_, 0),
                     WARPSORT_UNSUPPORTED_DTYPE);
    assert_int_equal(warpsort_sort_segments(g_ctx, keys, 8, offs, 3, WARPSORT_U32, 0x40),
                     WARPSORT_INVALID_ARGUMENT);
    assert_int_equal(warpsort_sort_segments(
                         g_ctx, keys, 8, (const uint64_t *)(const void *)((const char *)offs + 4),
                         2, WARPSORT_U32, 0),
                     WARPSORT_MISALIGNED);
    assert_int_equal(
        warpsort_sort_segments_pairs(g_ctx, keys, vals, 8, offs, 3, WARPSORT_U32, 2, 0),
        WARPSORT_INVALID_ARGUMENT);
    assert_int_equal(
        warpsort_sort_segments_pairs(g_ctx, keys, keys + 2, 6, offs, 3, WARPSORT_U32, 4, 0),
        WARPSORT_OVERLAP);
    assert_int_equal(warpsort_argsort_segments(g_ctx, keys, NULL, 8, offs, 3, WARPSORT_U32, 4, 0),
                     WARPSORT_NULL_POINTER);
    assert_int_equal(warpsort_sort_rows(g_ctx, keys, SIZE_MAX / 2, 4, WARPSORT_U32, 0),
                     WARPSORT_INVALID_ARGUMENT);
    /* nothing above touched the keys */
    const uint32_t orig[8] = {5, 4, 3, 2, 1, 0, 9, 8};
    assert_memory_equal(keys, orig, sizeof keys);

    /* empty calls: no segment, empty segments, zero rows, empty rows */
    const uint64_t zero[] = {0};
    assert_int_equal(warpsort_sort_segments(g_ctx, NULL, 0, zero, 0, WARPSORT_U32, 0), WARPSORT_OK);
    const uint64_t empties[] = {0, 0, 0, 0};
    assert_int_equal(warpsort_sort_segments(g_ctx, NULL, 0, empties, 3, WARPSORT_F64, 0),
                     WARPSORT_OK);
    assert_int_equal(warpsort_sort_rows(g_ctx, NULL, 0, 5, WARPSORT_U32, 0), WARPSORT_OK);
    assert_int_equal(warpsort_sort_rows(g_ctx, NULL, 7, 0, WARPSORT_U32, 0), WARPSORT_OK);
    assert_int_equal(warpsort_sort_segments(g_ctx, keys, 8, offs, 3, WARPSORT_U32, 0), WARPSORT_OK);
    const uint32_t want[8] = {3, 4, 5, 0, 1, 2, 8, 9};
    assert_memory_equal(keys, want, sizeof keys);

    size_t bytes = 1;
    assert_int_equal(warpsort_segmented_workspace_size(g_ctx, 1000, 10, WARPSORT_F32, 4,
                                                       WARPSORT_WORKSPACE_ARGSORT, &bytes),
                     WARPSORT_OK);
    assert_int_equal(bytes, 0); /* the CPU backend keeps no device workspace */
    assert_int_equal(warpsort_segmented_workspace_size(g_ctx, 1000, 10, WARPSORT_F32, 0,
                                                       WARPSORT_WORKSPACE_ARGSORT, &bytes),
                     WARPSORT_INVALID_ARGUMENT);
    assert_int_equal(warpsort_segments_check(g_ctx), WARPSORT_OK);
}

int main(int argc, char **argv) {
    g_quick = wt_cmocka_options(argc, argv);
    if (g_quick < 0) return 2;
    warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
    cfg.backend = WARPSORT_BACKEND_CPU;
    if (warpsort_create(&g_ctx, &cfg) != WARPSORT_OK) {
        fprintf(stderr, "cannot create a CPU context\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        {"mix_u32", test_mix, NULL, NULL, (void *)(intptr_t)WARPSORT_U32},
        {"mix_i32", test_mix, NULL, NULL, (void *)(intptr_t)WARPSORT_I32},
        {"mix_f32", test_mix, NULL, NULL, (void *)(intptr_t)WARPSORT_F32},
        {"mix_u64", test_mix, NULL, NULL, (void *)(intptr_t)WARPSORT_U64},
        {"mix_i64", test_mix, NULL, NULL, (void *)(intptr_t)WARPSORT_I64},
        {"mix_f64", test_mix, NULL, NULL, (void *)(intptr_t)WARPSORT_F64},
        cmocka_unit_test(test_rows),
        cmocka_unit_test(test_big_switch),
        cmocka_unit_test(test_huge_segment),
        cmocka_unit_test(test_bad_offsets),
        cmocka_unit_test(test_arguments),
    };
    int failed = cmocka_run_group_tests_name("cpu_segmented", tests, NULL, NULL);
    warpsort_destroy(g_ctx);
    return failed ? 1 : 0;
}
