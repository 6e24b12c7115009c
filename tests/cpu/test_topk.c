/*
 * test_topk.c - top-k on the CPU backend: every dtype, both directions, k
 * at 1, 2, 31..33, every path switch +-1, n - 1 and n; rows (of length 1
 * too); values; one or the other output; all-equal keys, NaNs and +-0.0;
 * and every bad argument, which must leave the outputs untouched. Results
 * are judged by topk_cases.h (the testkit's reference order).
 */
#include "topk_cases.h"
#include "wt_cmocka.h"

static warpsort_context_t *g_ctx; /* 4 threads: single rows are cut in chunks */
static warpsort_context_t *g_one; /* 1 thread */
static int g_quick;

static void run(warpsort_context_t *ctx, tk_case_t c) {
    char msg[768];
    if (tk_run_case(ctx, &wt_host_memory, &c, NULL, msg, sizeof msg)) fail_msg("%s", msg);
}

/* Path switches of the CPU backend (cpu_topk.c): the argsort of one row
 * from 2^12 keys with k > n / 8; threads from 2^16 keys each. */
static const size_t g_lengths[] = {1, 2, 3, 31, 32, 33, 100, 255, 256, 257, 1000, 4095, 4096, 5000};

static void ks_for(size_t n, size_t *ks, size_t *count) {
    const size_t cand[] = {1,   2,   31,  32,    33,        63,        64,    65,
                           255, 256, 257, n / 8, n / 8 + 1, n / 8 - 1, n - 1, n};
    *count = 0;
    for (size_t i = 0; i < sizeof cand / sizeof cand[0]; i++) {
        size_t k = cand[i];
        if (k < 1 || k > n) continue;
        int dup = 0;
        for (size_t j = 0; j < *count; j++) dup |= ks[j] == k;
        if (!dup) ks[(*count)++] = k;
    }
}

/* state: the dtype. Every length, every k, both directions, some dists. */
static void test_single_rows(void **state) {
    const warpsort_dtype_t dt = (warpsort_dtype_t)(uintptr_t)*state;
    const keygen_dist_t dists[] = {KEYGEN_RANDOM, KEYGEN_NAN_MIX, KEYGEN_FEW,
                                   KEYGEN_EQUAL,  KEYGEN_SORTED,  KEYGEN_REVERSED};
    for (size_t li = 0; li < sizeof g_lengths / sizeof g_lengths[0]; li++) {
        const size_t n = g_lengths[li];
        size_t ks[16], nk;
        ks_for(n, ks, &nk);
        for (size_t ki = 0; ki < nk; ki++)
            for (int sm = 0; sm < 2; sm++)
                for (size_t d = 0; d < sizeof dists / sizeof dists[0]; d++) {
                    if (g_quick && d > 2 && ki % 3) continue;
                    tk_case_t c = {dt, sm, 1, n, ks[ki], dists[d], 11 + n + ks[ki], 8, 0, TK_BOTH};
                    c.index_bytes = (ki & 1) ? 4 : 8;
                    run(g_ctx, c);
                }
    }
}

/* Long rows: the chunked threads (and the argsort above n / 8). */
static void test_long_row(void **state) {
    const warpsort_dtype_t dt = (warpsort_dtype_t)(uintptr_t)*state;
    const size_t n = g_quick ? 150001 : 300007;
    const size_t ks[] = {1, 32, 1000, n / 8, n / 8 + 1, n};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
        for (int sm = 0; sm < 2; sm++) {
            run(g_ctx, (tk_case_t){dt, sm, 1, n, ks[i], KEYGEN_NAN_MIX, 3 + i, 8, 0, TK_BOTH});
            if (i < 3)
                run(g_ctx, (tk_case_t){dt, sm, 1, n, ks[i], KEYGEN_SORTED, 5 + i, 4, 0, TK_BOTH});
        }
    /* one thread: the same answer */
    run(g_one, (tk_case_t){dt, 0, 1, n, 77, KEYGEN_RANDOM, 9, 8, 0, TK_BOTH});
}

static void test_rows(void **state) {
    const warpsort_dtype_t dt = (warpsort_dtype_t)(uintptr_t)*state;
    const size_t shapes[][2] = {{3, 1}, {7, 5}, {100, 33}, {5, 300}, {64, 1000}, {2, 5000}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const size_t rows = shapes[s][0], len = shapes[s][1];
        const size_t ks[] = {1, 2, len > 32 ? 32 : len, len - (len > 1), len};
        for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
            for (int sm = 0; sm < 2 && ks[i] <= len; sm++)
                run(g_ctx,
                    (tk_case_t){dt, sm, rows, len, ks[i], KEYGEN_NAN_MIX, 21 + s, 4, 0, TK_BOTH});
    }
    /* many rows spread over the threads */
    run(g_ctx, (tk_case_t){dt, 0, 300, 1000, 10, KEYGEN_RANDOM, 4, 8, 0, TK_BOTH});
}

static void test_values_and_outputs(void **state) {
    const warpsort_dtype_t dt = (warpsort_dtype_t)(uintptr_t)*state;
    for (int sm = 0; sm < 2; sm++)
        for (size_t vb = 4; vb <= 8; vb += 4) {
            run(g_ctx, (tk_case_t){dt, sm, 1, 1000, 33, KEYGEN_FEW, 1, 4, vb, TK_BOTH});
            run(g_ctx, (tk_case_t){dt, sm, 9, 300, 17, KEYGEN_NAN_MIX, 2, 8, vb, TK_INDICES_ONLY});
            run(g_ctx, (tk_case_t){dt, sm, 1, 5000, 1000, KEYGEN_RANDOM, 3, 8, vb, TK_BOTH});
        }
    for (int sm = 0; sm < 2; sm++) {
        run(g_ctx, (tk_case_t){dt, sm, 1, 1000, 100, KEYGEN_NAN_MIX, 5, 8, 0, TK_KEYS_ONLY});
        run(g_ctx, (tk_case_t){dt, sm, 4, 777, 31, KEYGEN_RANDOM, 6, 4, 0, TK_INDICES_ONLY});
    }
}

/* All-equal keys: the indices must be 0 .. k-1 exactly. */
static void test_equal_keys_take_lowest_indices(void **state) {
    (void)state;
    uint32_t keys[1000];
    uint32_t idx[600];
    for (size_t i = 0; i < 1000; i++) keys[i] = 0x3F800000u; /* 1.0f */
    for (int sm = 0; sm < 2; sm++)
        for (size_t k = 1; k <= 600; k += 599) {
            assert_int_equal(warpsort_topk(g_ctx, keys, 1000, WARPSORT_F32, k,
                                           sm ? WARPSORT_TOPK_SMALLEST : 0u, NULL, idx, 4),
                             WARPSORT_OK);
            for (size_t i = 0; i < k; i++) assert_int_equal(idx[i], i);
        }
}

/* Floats: NaNs are the largest (first for the largest), -0.0 before +0.0. */
static void test_float_specials(void **state) {
    (void)state;
    const float nan = __builtin_nanf(""), inf = __builtin_inff();
    float keys[8] = {0.0f, -0.0f, 1.0f, nan, -inf, inf, -nan, -1.0f};
    float out[8];
    uint64_t idx[8];
    assert_int_equal(warpsort_topk(g_ctx, keys, 8, WARPSORT_F32, 8, 0, out, idx, 8), WARPSORT_OK);
    assert_true(out[0] != out[0] && out[1] != out[1]); /* two NaNs first */
    assert_true(out[2] == inf && out[3] == 1.0f);
    assert_int_equal(idx[4], 0); /* +0.0 before -0.0 when largest */
    assert_int_equal(idx[5], 1);
    assert_true(out[6] == -1.0f && out[7] == -inf);
    assert_int_equal(
        warpsort_topk(g_ctx, keys, 8, WARPSORT_F32, 3, WARPSORT_TOPK_SMALLEST, out, idx, 8),
        WARPSORT_OK);
    assert_int_equal(idx[0], 4);
    assert_int_equal(idx[1], 7);
    assert_int_equal(idx[2], 1); /* -0.0 */
}

/*--- bad arguments: a clear error, nothing written ---*/

static void expect_untouched(warpsort_status_t got, warpsort_status_t want, const void *a,
                             const void *b, size_t bytes) {
    if (got != want)
        fail_msg("got %s, want %s (%s)", warpsort_status_name(got), warpsort_status_name(want),
                 warpsort_last_error(g_ctx));
    if (want != WARPSORT_OK) assert_true(strlen(warpsort_last_error(g_ctx)) > 0);
    assert_memory_equal(a, b, bytes);
}

static void test_bad_arguments(void **state) {
    (void)state;
    uint64_t keys[65], vals[65];
    uint64_t ok[65], oi[65], ov[65], canary[3][65];
    for (int i = 0; i < 65; i++) keys[i] = vals[i] = (uint64_t)i * 0x9E3779B97F4A7C15ull;
    memset(ok, 0xA5, sizeof ok);
    memset(oi, 0x5A, sizeof oi);
    memset(ov, 0x3C, sizeof ov);
    memcpy(canary[0], ok, sizeof ok);
    memcpy(canary[1], oi, sizeof oi);
    memcpy(canary[2], ov, sizeof ov);
    const size_t all = sizeof ok;
#define EXPECT(call, want)                               \
    do {                                                 \
        warpsort_status_t st_ = (call);                  \
        expect_untouched(st_, want, ok, canary[0], all); \
        assert_memory_equal(oi, canary[1], all);         \
        assert_memory_equal(ov, canary[2], all);         \
    } while (0)
    EXPECT(warpsort_topk(g_ctx, keys, 64, WARPSORT_U64, 0, 0, ok, oi, 8),
           WARPSORT_INVALID_ARGUMENT);
    assert_non_null(strstr(warpsort_last_error(g_ctx), "k = 0"));
    EXPECT(warpsort_topk(g_ctx, keys, 64, WARPSORT_U64, 65, 0, ok, oi, 8),
           WARPSORT_INVALID_ARGUMENT);
    assert_non_null(strstr(warpsort_last_error(g_ctx), "k = 65"));
    EXPECT(warpsort_topk_rows(g_ctx, keys, 4, 16, WARPSORT_U64, 17, 0, ok, oi, 8),
           WARPSORT_INVALID_ARGUMENT);
    EXPECT(warpsort_topk(g_ctx, NULL, 64, WARPSORT_U64, 3, 0, ok, oi, 8), WARPSORT_NULL_POINTER);
    EXPECT(warpsort_topk(g_ctx, keys, 64, WARPSORT_U64, 3, 0, NULL, NULL, 8),
           WARPSORT_NULL_POINTER);
    EXPECT(warpsort_topk(g_ctx, keys, 64, WARPSORT_U64, 3, 0, ok, oi, 2),
           WARPSORT_INVALID_ARGUMENT);
    EXPECT(warpsort_topk(g_ctx, keys, 64, (warpsort_dtype_t)9, 3, 0, ok, oi, 8),
           WARPSORT_UNSUPPORTED_DTYPE);
    EXPECT(warpsort_topk(g_ctx, keys, 64, WARPSORT_U64, 3, WARPSORT_DESCENDING, ok, oi, 8),
           WARPSORT_INVALID_ARGUMENT);
    EXPECT(warpsort_topk(g_ctx, (char *)keys + 4, 32, WARPSORT_U64, 3, 0, ok, oi, 8),
           WARPSORT_MISALIGNED);
    EXPECT(warpsort_topk(g_ctx, keys, 64, WARPSORT_U64, 3, 0, ok, (char *)oi + 4, 8),
           WARPSORT_MISALIGNED);
    EXPECT(warpsort_topk(g_ctx, keys, 64, WARPSORT_U64, 3, 0, ok, ok + 1, 8), WARPSORT_OVERLAP);
    EXPECT(warpsort_topk(g_ctx, keys, 64, WARPSORT_U64, 3, 0, ok, keys + 10, 8), WARPSORT_OVERLAP);
    EXPECT(warpsort_topk_pairs(g_ctx, keys, vals, 1, 64, WARPSORT_U64, 8, 3, 0, ok, NULL, oi, 8),
           WARPSORT_NULL_POINTER);
    EXPECT(warpsort_topk_pairs(g_ctx, keys, vals, 1, 64, WARPSORT_U64, 3, 3, 0, ok, ov, oi, 8),
           WARPSORT_INVALID_ARGUMENT);
    EXPECT(
        warpsort_topk_pairs(g_ctx, keys, vals, 1, 64, WARPSORT_U64, 8, 3, 0, ok, vals + 1, oi, 8),
        WARPSORT_OVERLAP);
    /* empty calls succeed and write nothing */
    EXPECT(warpsort_topk(g_ctx, keys, 0, WARPSORT_U64, 0, 0, ok, oi, 8), WARPSORT_OK);
    EXPECT(warpsort_topk_rows(g_ctx, keys, 0, 16, WARPSORT_U64, 3, 0, ok, oi, 8), WARPSORT_OK);
#undef EXPECT
    assert_int_equal(warpsort_topk(NULL, keys, 64, WARPSORT_U64, 3, 0, ok, oi, 8),
                     WARPSORT_INVALID_ARGUMENT);
    size_t bytes = 1;
    assert_int_equal(warpsort_topk_workspace_size(g_ctx, 1, 64, WARPSORT_U64, 0, 3, &bytes),
                     WARPSORT_OK);
    assert_int_equal(bytes, 0); /* the CPU backend needs none */
    assert_int_equal(warpsort_topk_workspace_size(g_ctx, 1, 64, WARPSORT_U64, 0, 65, &bytes),
                     WARPSORT_INVALID_ARGUMENT);
}

static int setup(void **state) {
    (void)state;
    warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
    cfg.backend = WARPSORT_BACKEND_CPU;
    cfg.cpu_threads = 4;
    if (warpsort_create(&g_ctx, &cfg) != WARPSORT_OK) return -1;
    cfg.cpu_threads = 1;
    return warpsort_create(&g_one, &cfg) == WARPSORT_OK ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    warpsort_destroy(g_ctx);
    warpsort_destroy(g_one);
    return 0;
}

int main(int argc, char **argv) {
    g_quick = wt_cmocka_options(argc, argv);
    if (g_quick < 0) return 2;
    static char names[4][WARPSORT_DTYPE_COUNT_][48];
    static const char *const kinds[4] = {"single", "long_row", "rows", "values"};
    const CMUnitTestFunction fns[4] = {test_single_rows, test_long_row, test_rows,
                                       test_values_and_outputs};
    struct CMUnitTest tests[4 * WARPSORT_DTYPE_COUNT_ + 3];
    size_t count = 0;
    for (int f = 0; f < 4; f++)
        for (int d = 0; d < WARPSORT_DTYPE_COUNT_; d++) {
            snprintf(names[f][d], sizeof names[f][d], "topk_%s_%s", kinds[f],
                     warpsort_dtype_name((warpsort_dtype_t)d));
            tests[count++] =
                (struct CMUnitTest){names[f][d], fns[f], NULL, NULL, (void *)(uintptr_t)d};
        }
    tests[count++] = (struct CMUnitTest){"topk_equal_keys", test_equal_keys_take_lowest_indices,
                                         NULL, NULL, NULL};
    tests[count++] =
        (struct CMUnitTest){"topk_float_specials", test_float_specials, NULL, NULL, NULL};
    tests[count++] =
        (struct CMUnitTest){"topk_bad_arguments", test_bad_arguments, NULL, NULL, NULL};
    return _cmocka_run_group_tests("topk", tests, count, setup, teardown);
}
