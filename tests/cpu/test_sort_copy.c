/*
 * test_sort_copy.c - warpsort_sort_copy (the out-of-place sort) on the CPU
 * backend: every dtype and order, n = 0, 1 and sizes around the insertion
 * sort's limit, AUTO's crossover, the thread split and the write-combining
 * scatter; every count of radix passes (random, narrow and all-equal keys);
 * keys_in == keys_out; 1 and 3 threads; argument errors that leave both
 * arrays unchanged. Cases and checks: sort_copy_cases.h.
 */
#include "sort_copy_cases.h"
#include "testkit.h"
#include "wt_cmocka.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static int g_quick;

static warpsort_context_t *cpu_context(unsigned threads) {
    warpsort_context_t *ctx = NULL;
    warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
    cfg.backend = WARPSORT_BACKEND_CPU;
    cfg.cpu_threads = threads;
    assert_int_equal(warpsort_create(&ctx, &cfg), WARPSORT_OK);
    return ctx;
}

/* 64 is the insertion sort's limit, 2048 AUTO's crossover, 2^16 keys a
 * thread, 2^20 four-byte keys the write-combining scatter. */
static const size_t k_sizes[] = {
    0, 1, 2, 63, 64, 65, 1000, 2047, 2048, 2049, 65537, 1u << 17, (1u << 20) + 3};
static const size_t k_quick_sizes[] = {0, 1, 63, 65, 2049, 1u << 17};

static void run(warpsort_context_t *ctx, warpsort_context_t *oracle) {
    const unsigned dists = g_quick
                               ? (1u << KEYGEN_RANDOM | 1u << KEYGEN_EQUAL)
                               : (1u << KEYGEN_RANDOM | 1u << KEYGEN_NARROW | 1u << KEYGEN_EQUAL |
                                  1u << KEYGEN_NAN_MIX | 1u << KEYGEN_REVERSED | 1u << KEYGEN_FEW);
    const size_t *sizes = g_quick ? k_quick_sizes : k_sizes;
    const size_t num = g_quick ? COUNT(k_quick_sizes) : COUNT(k_sizes);
    const size_t failures =
        sc_run_matrix(ctx, &wt_host_memory, &wt_host_memory, sizes, num, dists, oracle, stderr);
    assert_int_equal(failures, 0);
}

static void test_matrix_threads_default(void **state) {
    (void)state;
    warpsort_context_t *ctx = cpu_context(0), *oracle = cpu_context(1);
    run(ctx, oracle);
    warpsort_destroy(ctx);
    warpsort_destroy(oracle);
}

/* Three threads on two cores: more chunks than cores, uneven chunks. */
static void test_matrix_three_threads(void **state) {
    (void)state;
    warpsort_context_t *ctx = cpu_context(3), *oracle = cpu_context(1);
    run(ctx, oracle);
    warpsort_destroy(ctx);
    warpsort_destroy(oracle);
}

/* AUTO (the CPU here, or small host arrays on a CUDA build) gives the same. */
static void test_auto_context(void **state) {
    (void)state;
    warpsort_context_t *ctx = NULL, *oracle = cpu_context(1);
    assert_int_equal(warpsort_create(&ctx, NULL), WARPSORT_OK);
    const size_t sizes[] = {1, 100, 2047};
    assert_int_equal(sc_run_matrix(ctx, &wt_host_memory, &wt_host_memory, sizes, COUNT(sizes),
                                   1u << KEYGEN_NAN_MIX, oracle, stderr),
                     0);
    warpsort_destroy(ctx);
    warpsort_destroy(oracle);
}

/* Each bad argument is refused with its status and a message, and neither
 * array changes. */
static void test_errors(void **state) {
    (void)state;
    warpsort_context_t *ctx = cpu_context(0);
    enum { N = 100 };
    uint64_t in[N + 1], out[N + 1], in0[N + 1], out0[N + 1];
    keygen_fill(in, N + 1, WARPSORT_U64, KEYGEN_RANDOM, 3);
    for (size_t i = 0; i <= N; i++) out[i] = 0xDEADBEEFull + i;
    memcpy(in0, in, sizeof in);
    memcpy(out0, out, sizeof out);
#define EXPECT(call, status, text)                                 \
    do {                                                           \
        assert_int_equal((call), (status));                        \
        assert_non_null(strstr(warpsort_last_error(ctx), (text))); \
        assert_memory_equal(in, in0, sizeof in);                   \
        assert_memory_equal(out, out0, sizeof out);                \
    } while (0)
    EXPECT(warpsort_sort_copy(ctx, in, NULL, N, WARPSORT_U64, 0), WARPSORT_NULL_POINTER,
           "keys_out is NULL");
    EXPECT(warpsort_sort_copy(ctx, NULL, out, N, WARPSORT_U64, 0), WARPSORT_NULL_POINTER, "NULL");
    EXPECT(warpsort_sort_copy(ctx, in, (char *)out + 4, N, WARPSORT_U64, 0), WARPSORT_MISALIGNED,
           "keys_out");
    EXPECT(warpsort_sort_copy(ctx, (char *)in + 4, out, N, WARPSORT_U64, 0), WARPSORT_MISALIGNED,
           "aligned");
    /* partial overlap, either way round */
    EXPECT(warpsort_sort_copy(ctx, in, in + 1, N, WARPSORT_U64, 0), WARPSORT_OVERLAP, "overlap");
    EXPECT(warpsort_sort_copy(ctx, in + 1, in, N, WARPSORT_U64, 0), WARPSORT_OVERLAP, "overlap");
    EXPECT(warpsort_sort_copy(ctx, in, out, N, (warpsort_dtype_t)17, 0), WARPSORT_UNSUPPORTED_DTYPE,
           "dtype");
    EXPECT(warpsort_sort_copy(ctx, in, out, N, WARPSORT_U64, 0x40u), WARPSORT_INVALID_ARGUMENT,
           "flag");
    EXPECT(warpsort_sort_copy(ctx, in, out, SIZE_MAX / 2, WARPSORT_U64, 0),
           WARPSORT_INVALID_ARGUMENT, "too large");
#undef EXPECT
    assert_int_equal(warpsort_sort_copy(NULL, in, out, N, WARPSORT_U64, 0),
                     WARPSORT_INVALID_ARGUMENT);
    /* n = 0: nothing is read or written, NULL pointers are fine */
    assert_int_equal(warpsort_sort_copy(ctx, NULL, NULL, 0, WARPSORT_F32, 0), WARPSORT_OK);
    assert_int_equal(warpsort_sort_copy(ctx, in, out, 0, WARPSORT_U64, 0), WARPSORT_OK);
    assert_memory_equal(out, out0, sizeof out);
    /* adjacent arrays do not overlap */
    assert_int_equal(warpsort_sort_copy(ctx, in, in + N / 2, N / 2, WARPSORT_U64, 0), WARPSORT_OK);
    char msg[256];
    if (wt_check_sorted(in + N / 2, N / 2, WARPSORT_U64, 0, msg, sizeof msg)) fail_msg("%s", msg);
    assert_memory_equal(in, in0, N / 2 * sizeof in[0]);
    assert_string_equal(warpsort_last_error(ctx), "");
    warpsort_destroy(ctx);
}

int main(int argc, char **argv) {
    g_quick = wt_cmocka_options(argc, argv);
    if (g_quick < 0) return 2;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matrix_threads_default),
        cmocka_unit_test(test_matrix_three_threads),
        cmocka_unit_test(test_auto_context),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests_name("sort_copy", tests, NULL, NULL);
}
