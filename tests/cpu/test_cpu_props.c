/*
 * test_cpu_props.c - the property matrix on the CPU backend: every dtype x
 * order x {keys, pairs v4/v8, argsort i4/i8} x {stable, unstable}, over sizes
 * around the backend's thresholds and every input distribution.
 * One cmocka test per combination, named like "pairs_v8_f32_desc_stable".
 */
#include "testkit.h"
#include "wt_cmocka.h"

static warpsort_context_t *g_ctx;
static int g_quick;

/* 63/64/65 straddle the insertion-sort cut-over, 2^16 +- 1 the single-thread
 * radix range, 2^20 the multi-threaded one. */
static const size_t k_small_sizes[] = {0, 1, 2, 31, 32, 33, 63, 64, 65, 1000};
static const size_t k_medium_sizes[] = {65535, 65536, 65537};
static const size_t k_large_sizes[] = {(size_t)1 << 20};

static size_t run_sizes(const wt_prop_param_t *p, const size_t *sizes, size_t count,
                        unsigned dists) {
    wt_matrix_t m = {p->op, p->dtype, p->second_bytes, p->flags,
                     sizes, count,    dists,           0xC0FFEEull + (uint64_t)p->flags};
    return wt_run_matrix(g_ctx, &wt_host_memory, &m, NULL, stderr);
}

static void test_property_matrix(void **state) {
    const wt_prop_param_t *p = *state;
    size_t failures =
        run_sizes(p, k_small_sizes, sizeof k_small_sizes / sizeof *k_small_sizes, WT_ALL_DISTS);
    if (!g_quick) {
        failures += run_sizes(p, k_medium_sizes, sizeof k_medium_sizes / sizeof *k_medium_sizes,
                              WT_ALL_DISTS);
        /* 2^20 for every combination on random keys; all distributions on the
         * two flag sets at the corners (ascending unstable, descending stable)
         * keeps the suite within minutes on two cores. */
        unsigned big_dists = (p->flags == 0 || p->flags == (WARPSORT_DESCENDING | WARPSORT_STABLE))
                                 ? WT_ALL_DISTS
                                 : 1u << KEYGEN_RANDOM;
        failures += run_sizes(p, k_large_sizes, 1, big_dists);
    } else {
        failures += run_sizes(p, k_medium_sizes + 1, 1, 1u << KEYGEN_RANDOM | 1u << KEYGEN_NAN_MIX);
    }
    assert_int_equal(failures, 0);
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

    static wt_prop_param_t params[WT_PROP_TESTS];
    static struct CMUnitTest tests[WT_PROP_TESTS];
    size_t count = wt_prop_tests(params, tests, "", test_property_matrix);
    int failed = _cmocka_run_group_tests("cpu_properties", tests, count, NULL, NULL);
    warpsort_destroy(g_ctx);
    return failed;
}
