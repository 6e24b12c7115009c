/*
 * test_cpu_backend.c - properties specific to the CPU backend's radix sort:
 * results independent of the thread count, descending as the exact reverse
 * of ascending (which pins a fixed NaN order), every count of radix passes
 * (skipped constant digits, odd counts that end in scratch), and, where the
 * host has the memory, a sort past 2^32 keys.
 */
#define _DEFAULT_SOURCE /* sysconf(_SC_PHYS_PAGES) */
#include <unistd.h>

#include "testkit.h"
#include "wt_cmocka.h"

static int g_quick;

static warpsort_context_t *cpu_context(unsigned threads) {
    warpsort_context_t *ctx = NULL;
    warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
    cfg.backend = WARPSORT_BACKEND_CPU;
    cfg.cpu_threads = threads;
    assert_int_equal(warpsort_create(&ctx, &cfg), WARPSORT_OK);
    return ctx;
}

/* Sorts copies of keys (with iota values) on ctx: keys-only, stable pairs
 * with 8-byte values, unstable pairs with 4-byte values, argsort with 4- and
 * 8-byte indices; returns the outputs concatenated in one buffer. */
static size_t round8(size_t bytes) { return (bytes + 7) & ~(size_t)7; }

static unsigned char *sort_everything(warpsort_context_t *ctx, const void *keys, size_t n,
                                      warpsort_dtype_t dt, unsigned desc, size_t *bytes) {
    size_t kb = warpsort_dtype_size(dt);
    /* every array starts 8-byte aligned */
    size_t kpad = round8(n * kb), ipad = round8(n * 4);
    unsigned char *out = calloc(3 * kpad + n * 8 + ipad + ipad + n * 8 + 1, 1);
    assert_non_null(out);
    unsigned char *k0 = out, *k8 = k0 + kpad, *v8 = k8 + kpad, *k4 = v8 + n * 8;
    unsigned char *v4 = k4 + kpad, *i4 = v4 + ipad, *i8 = i4 + ipad;
    memcpy(k0, keys, n * kb);
    assert_int_equal(warpsort_sort(ctx, k0, n, dt, desc), WARPSORT_OK);
    memcpy(k8, keys, n * kb);
    wt_fill_iota(v8, n, 8);
    assert_int_equal(warpsort_sort_pairs(ctx, k8, v8, n, dt, 8, desc | WARPSORT_STABLE),
                     WARPSORT_OK);
    memcpy(k4, keys, n * kb);
    wt_fill_iota(v4, n, 4);
    assert_int_equal(warpsort_sort_pairs(ctx, k4, v4, n, dt, 4, desc), WARPSORT_OK);
    assert_int_equal(warpsort_argsort(ctx, keys, i4, n, dt, 4, desc), WARPSORT_OK);
    assert_int_equal(warpsort_argsort(ctx, keys, i8, n, dt, 8, desc), WARPSORT_OK);
    *bytes = (size_t)(i8 + n * 8 - out);
    return out;
}

/* cpu_threads 1, 3 and 64 (more workers than cores, 16 chunks at 2^20)
 * give byte-identical results, unstable pairs included. */
static void test_thread_count_independent(void **state) {
    (void)state;
    warpsort_context_t *one = cpu_context(1), *three = cpu_context(3), *many = cpu_context(64);
    const size_t sizes[] = {1000, ((size_t)1 << 18) + 7, (size_t)1 << 20};
    const keygen_dist_t dists[] = {KEYGEN_RANDOM, KEYGEN_FEW, KEYGEN_NAN_MIX};
    size_t num_sizes = g_quick ? 2 : 3;
    for (int d = 0; d < WARPSORT_DTYPE_COUNT_; d++) {
        warpsort_dtype_t dt = (warpsort_dtype_t)d;
        for (size_t s = 0; s < num_sizes; s++) {
            for (size_t k = 0; k < (s == 2 ? 1u : 3u); k++) { /* 2^20: random only */
                size_t n = sizes[s];
                void *keys = malloc(n * 8);
                assert_non_null(keys);
                keygen_fill(keys, n, dt, dists[k], 1234 + s);
                unsigned desc = (unsigned)(s + k) & 1u;
                size_t b1, b3, bm;
                unsigned char *r1 = sort_everything(one, keys, n, dt, desc, &b1);
                unsigned char *r3 = sort_everything(three, keys, n, dt, desc, &b3);
                unsigned char *rm = sort_everything(many, keys, n, dt, desc, &bm);
                assert_int_equal(b1, b3);
                assert_int_equal(b1, bm);
                if (memcmp(r1, r3, b1) != 0 || memcmp(r1, rm, b1) != 0)
                    fail_msg("%s n=%zu %s: results depend on cpu_threads", warpsort_dtype_name(dt),
                             n, keygen_dist_name(dists[k]));
                free(r1);
                free(r3);
                free(rm);
                free(keys);
            }
        }
    }
    warpsort_destroy(one);
    warpsort_destroy(three);
    warpsort_destroy(many);
}

/* "DESCENDING reverses the order exactly": for keys that is the ascending
 * output read backwards, NaN patterns included. */
static void test_descending_reverses_ascending(void **state) {
    (void)state;
    warpsort_context_t *ctx = cpu_context(0);
    const size_t sizes[] = {100, ((size_t)1 << 17) + 5};
    for (int d = 0; d < WARPSORT_DTYPE_COUNT_; d++) {
        warpsort_dtype_t dt = (warpsort_dtype_t)d;
        size_t kb = warpsort_dtype_size(dt);
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
            for (unsigned dist = 0; dist < KEYGEN_DIST_COUNT; dist++) {
                size_t n = sizes[s];
                void *asc = malloc(n * kb), *desc = malloc(n * kb);
                assert_non_null(asc);
                assert_non_null(desc);
                keygen_fill(asc, n, dt, (keygen_dist_t)dist, 99);
                memcpy(desc, asc, n * kb);
                assert_int_equal(warpsort_sort(ctx, asc, n, dt, 0), WARPSORT_OK);
                assert_int_equal(warpsort_sort(ctx, desc, n, dt, WARPSORT_DESCENDING), WARPSORT_OK);
                char msg[256];
                if (wt_check_reverse(asc, desc, n, kb, msg, sizeof msg))
                    fail_msg("%s n=%zu %s: %s", warpsort_dtype_name(dt), n,
                             keygen_dist_name((keygen_dist_t)dist), msg);
                free(asc);
                free(desc);
            }
        }
    }
    warpsort_destroy(ctx);
}

/* Keys that vary only under a mask make the radix sort skip the other
 * digits: one pass (which ends in scratch and is copied back), two, three,
 * only the top bits, none. The masks give odd and even pass counts with 8-
 * or 11-bit digits alike. Checked as stable pairs and as argsort. */
static void test_radix_pass_counts(void **state) {
    (void)state;
    warpsort_context_t *ctx = cpu_context(0);
    const uint64_t masks[] = {
        0x7Full,       0x7Full << 12, 0x7Full | 0x7Full << 24, 0xFF00FF00FFull,
        0xFFull << 56, 0xFFull << 24, 0x7Full << 40,           0};
    /* 2^19+3 pairs of 8+8 bytes pass 8 MiB: the write-combining scatter. */
    const size_t sizes[] = {5000, ((size_t)1 << 17) + 3, ((size_t)1 << 19) + 3};
    for (int d = 0; d < WARPSORT_DTYPE_COUNT_; d++) {
        warpsort_dtype_t dt = (warpsort_dtype_t)d;
        size_t kb = warpsort_dtype_size(dt);
        uint64_t width_mask = kb == 4 ? 0xFFFFFFFFull : ~0ull;
        for (size_t s = 0; s < 2; s++) {
            for (size_t m = 0; m < sizeof masks / sizeof *masks; m++) {
                uint64_t mask = masks[m] & width_mask;
                if (kb == 4 && masks[m] == (0xFFull << 56)) mask = 0xFFull << 24;
                size_t n = sizes[s];
                void *orig = malloc(n * kb), *keys = malloc(n * kb);
                void *values = malloc(n * 8), *idx = malloc(n * 4);
                assert_true(orig && keys && values && idx);
                keygen_fill(orig, n, dt, KEYGEN_RANDOM, 7 + m);
                /* a fixed base (here 0x4ABC... with the sign bit clear or set)
                 * plus random bits under the mask */
                uint64_t base =
                    (m & 1 ? 0xC3A5C3A5C3A5C3A5ull : 0x4ABC4ABC4ABC4ABCull) & width_mask;
                for (size_t i = 0; i < n; i++) {
                    uint64_t r = wt_bits(orig, i, kb);
                    wt_store(orig, i, kb, (base & ~mask) | (r & mask));
                }
                for (unsigned desc = 0; desc < 2; desc++) {
                    char msg[256];
                    memcpy(keys, orig, n * kb);
                    wt_fill_iota(values, n, 8);
                    unsigned flags = desc | WARPSORT_STABLE;
                    assert_int_equal(warpsort_sort_pairs(ctx, keys, values, n, dt, 8, flags),
                                     WARPSORT_OK);
                    int bad = wt_check_sorted(keys, n, dt, flags, msg, sizeof msg) ||
                              wt_check_permutation(orig, keys, n, kb, msg, sizeof msg) ||
                              wt_check_values(orig, keys, values, n, dt, 8, 1, msg, sizeof msg);
                    assert_int_equal(warpsort_argsort(ctx, orig, idx, n, dt, 4, desc), WARPSORT_OK);
                    bad = bad || wt_check_argsort(orig, idx, n, dt, 4, desc, msg, sizeof msg);
                    if (bad)
                        fail_msg("%s n=%zu mask=0x%llx %s: %s", warpsort_dtype_name(dt), n,
                                 (unsigned long long)mask, desc ? "desc" : "asc", msg);
                }
                free(orig);
                free(keys);
                free(values);
                free(idx);
            }
        }
    }
    warpsort_destroy(ctx);
}

/* n past 2^32 on the host: sizes are size_t end to end. Needs ~40 GiB, so it
 * runs only on hosts with 64 GiB or more and outside --quick; the check is
 * sortedness plus an order-independent fingerprint (sorting a copy of 2^32
 * keys would double the time). */
static void test_beyond_2_32(void **state) {
    (void)state;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    double host_bytes = (double)pages * (double)page;
    if (g_quick || SIZE_MAX <= UINT32_MAX || pages <= 0 || host_bytes < 64.0 * (1u << 30)) {
        print_message("skipping: needs 64 GiB of host memory and no --quick\n");
        skip();
    }
    const size_t n = ((size_t)1 << 32) + 12345;
    uint32_t *keys = malloc(n * sizeof *keys);
    if (!keys) skip();
    keygen_fill(keys, n, WARPSORT_U32, KEYGEN_RANDOM, 2024);
    wt_fingerprint_t before = wt_fingerprint(keys, n, 4);
    warpsort_context_t *ctx = cpu_context(0);
    assert_int_equal(warpsort_sort(ctx, keys, n, WARPSORT_U32, 0), WARPSORT_OK);
    char msg[256];
    if (wt_check_sorted(keys, n, WARPSORT_U32, 0, msg, sizeof msg)) fail_msg("%s", msg);
    wt_fingerprint_t after = wt_fingerprint(keys, n, 4);
    assert_memory_equal(&before, &after, sizeof before);
    warpsort_destroy(ctx);
    free(keys);
}

int main(int argc, char **argv) {
    g_quick = wt_cmocka_options(argc, argv);
    if (g_quick < 0) return 2;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_thread_count_independent),
        cmocka_unit_test(test_descending_reverses_ascending),
        cmocka_unit_test(test_radix_pass_counts),
        cmocka_unit_test(test_beyond_2_32),
    };
    return cmocka_run_group_tests_name("cpu_backend", tests, NULL, NULL);
}
