/*
 * test_cli.c - end-to-end tests of the warpsort command-line tool.
 *
 * Each test runs the built executable in its own scratch directory. Results
 * are checked here by the independent test oracle (tests/common/testkit.h),
 * not only with the CLI's own `check`, so a bug shared by `sort` and `check`
 * (or by the library they both call) cannot hide.
 *
 * usage: test_cli GROUP   (basics, sort, errors, outputs, check, bench)
 */

#include "cli_harness.h"

#include "core/pool.h" /* WS_CPU_MAX_THREADS */

#include <errno.h>
#include <signal.h>
#include <unistd.h>

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../cpu/topk_cases.h" /* the top-k oracle */

#define STATE cli_t *c = *state

static const warpsort_dtype_t all_dtypes[] = {WARPSORT_U32, WARPSORT_I32, WARPSORT_F32,
                                              WARPSORT_U64, WARPSORT_I64, WARPSORT_F64};
static const char *const commands[] = {"run", "gen", "sort", "topk", "check", "bench"};

static uint32_t f32_bits(float f) {
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

/* The file holds n keys of dtype: the result of a sort of `input`. */
static void assert_sorted_permutation(cli_t *c, const char *input, const char *output,
                                      warpsort_dtype_t dtype, int desc) {
    size_t in_bytes, out_bytes;
    void *in = cli_read(c, input, &in_bytes);
    void *out = cli_read(c, output, &out_bytes);
    size_t es = warpsort_dtype_size(dtype);
    assert_int_equal(in_bytes, out_bytes);
    if (!test_is_sorted(out, out_bytes / es, dtype, desc))
        fail_msg("%s is not sorted (%s, %s)", output, warpsort_dtype_name(dtype),
                 desc ? "desc" : "asc");
    if (!test_same_multiset(in, out, in_bytes / es, es))
        fail_msg("%s is not a permutation of %s", output, input);
    free(in);
    free(out);
}

/*====================================================================
 * basics: help, version, sizes, gen, progress
 *==================================================================*/

static void test_help_mentions_every_command(void **state) {
    STATE;
    assert_int_equal(cli_run(c, "--help", NULL), 0);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        cli_assert_contains(c->out, commands[i]);
    cli_assert_contains(c->out, "--version");
    char *top = strdup(c->out);
    assert_int_equal(cli_run(c, "help", NULL), 0);
    assert_string_equal(c->out, top);
    assert_int_equal(cli_run(c, "-h", NULL), 0);
    assert_string_equal(c->out, top);
    free(top);
    assert_string_equal(c->err, "");
}

static void test_help_of_each_command(void **state) {
    STATE;
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        char usage[64];
        snprintf(usage, sizeof usage, "usage: warpsort %s", commands[i]);
        assert_int_equal(cli_run(c, "help", commands[i], NULL), 0);
        cli_assert_contains(c->out, usage);
        char *via_help = strdup(c->out);
        assert_int_equal(cli_run(c, commands[i], "--help", NULL), 0);
        assert_string_equal(c->out, via_help);
        free(via_help);
    }
    assert_int_equal(cli_run(c, "help", "sort", NULL), 0);
    cli_assert_contains(c->out, "--values");
    cli_assert_contains(c->out, "--stable");
}

static void test_version(void **state) {
    STATE;
    char expect[64];
    snprintf(expect, sizeof expect, "warpsort %s\n", warpsort_version());
    assert_int_equal(cli_run(c, "--version", NULL), 0);
    assert_string_equal(c->out, expect);
    assert_int_equal(cli_run(c, "-V", NULL), 0);
    assert_string_equal(c->out, expect);
}

static void test_no_arguments_prints_usage(void **state) {
    STATE;
    assert_int_equal(cli_run(c, NULL), 2);
    cli_assert_contains(c->err, "usage: warpsort");
}

static void test_size_syntax(void **state) {
    STATE;
    static const struct {
        const char *text;
        size_t n;
    } sizes[] = {{"1000", 1000},   {"2^10", 1024},   {"1K", 1024}, {"2K", 2048}, {"1Ki", 1024},
                 {"2^10+3", 1027}, {"2^12-1", 4095}, {"0", 0},     {"1", 1}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        assert_int_equal(
            cli_run(c, "gen", "-o", "k.bin", "-n", sizes[i].text, "--dtype", "u64", NULL), 0);
        size_t bytes;
        free(cli_read(c, "k.bin", &bytes));
        assert_int_equal(bytes, sizes[i].n * 8);
    }
    assert_int_equal(cli_run(c, "gen", "-o", "k.bin", "--count=16", NULL), 0);
    size_t bytes;
    free(cli_read(c, "k.bin", &bytes));
    assert_int_equal(bytes, 64);
}

static void test_gen_is_deterministic(void **state) {
    STATE;
    assert_int_equal(cli_run(c, "gen", "-o", "a.bin", "-n", "4096", "--seed", "5", NULL), 0);
    assert_int_equal(cli_run(c, "gen", "-o", "b.bin", "-n", "4096", "--seed", "5", NULL), 0);
    assert_int_equal(cli_run(c, "gen", "-o", "c.bin", "-n", "4096", "--seed", "6", NULL), 0);
    size_t na, nb, nc;
    void *a = cli_read(c, "a.bin", &na), *b = cli_read(c, "b.bin", &nb),
         *cc = cli_read(c, "c.bin", &nc);
    assert_int_equal(na, 4096 * 4);
    assert_memory_equal(a, b, na);
    assert_memory_not_equal(a, cc, na);
    free(a);
    free(b);
    free(cc);
}

static void test_gen_distributions(void **state) {
    STATE;
    for (size_t d = 0; d < sizeof all_dtypes / sizeof all_dtypes[0]; d++) {
        warpsort_dtype_t dt = all_dtypes[d];
        const char *name = warpsort_dtype_name(dt);
        size_t es = warpsort_dtype_size(dt), bytes, n = 5000;
        void *k;

        assert_int_equal(cli_run(c, "gen", "-o", "s.bin", "-n", "5000", "--dtype", name, "--dist",
                                 "sorted", NULL),
                         0);
        k = cli_read(c, "s.bin", &bytes);
        assert_int_equal(bytes, n * es);
        assert_true(test_is_sorted(k, n, dt, 0));
        assert_false(test_is_sorted(k, n, dt, 1));
        free(k);

        assert_int_equal(cli_run(c, "gen", "-o", "r.bin", "-n", "5000", "--dtype", name, "--dist",
                                 "reversed", NULL),
                         0);
        k = cli_read(c, "r.bin", &bytes);
        assert_true(test_is_sorted(k, n, dt, 1));
        free(k);

        assert_int_equal(cli_run(c, "gen", "-o", "e.bin", "-n", "5000", "--dtype", name, "--dist",
                                 "equal", NULL),
                         0);
        k = cli_read(c, "e.bin", &bytes);
        for (size_t i = 1; i < n; i++) assert_memory_equal((char *)k, (char *)k + i * es, es);
        free(k);

        assert_int_equal(
            cli_run(c, "gen", "-o", "f.bin", "-n", "5000", "--dtype", name, "--dist", "few", NULL),
            0);
        k = cli_read(c, "f.bin", &bytes);
        size_t distinct = 0;
        for (size_t i = 0; i < n; i++) {
            size_t j = 0;
            while (j < i && memcmp((char *)k + j * es, (char *)k + i * es, es) != 0) j++;
            distinct += j == i;
        }
        assert_true(distinct >= 2 && distinct <= 16);
        free(k);

        /* narrow: only the low three bytes vary */
        assert_int_equal(cli_run(c, "gen", "-o", "w.bin", "-n", "5000", "--dtype", name, "--dist",
                                 "narrow", NULL),
                         0);
        k = cli_read(c, "w.bin", &bytes);
        uint64_t first = es == 4 ? ((uint32_t *)k)[0] : ((uint64_t *)k)[0], low_bits = 0;
        for (size_t i = 0; i < n; i++) {
            uint64_t x = es == 4 ? ((uint32_t *)k)[i] : ((uint64_t *)k)[i];
            assert_true((x >> 24) == (first >> 24));
            low_bits |= x ^ first;
        }
        assert_true(low_bits > 0xFFFF); /* and they do vary, into the third byte */
        free(k);
    }
}

static void test_gen_nan_mix_has_specials(void **state) {
    STATE;
    assert_int_equal(
        cli_run(c, "gen", "-o", "f.bin", "-n", "2^14", "--dtype", "f32", "--dist", "nan-mix", NULL),
        0);
    size_t bytes;
    uint32_t *k = cli_read(c, "f.bin", &bytes);
    int pos_nan = 0, neg_nan = 0, pos_zero = 0, neg_zero = 0, pos_inf = 0, neg_inf = 0, finite = 0;
    for (size_t i = 0; i < bytes / 4; i++) {
        float f;
        memcpy(&f, &k[i], sizeof f);
        if (isnan(f))
            ++*(k[i] >> 31 ? &neg_nan : &pos_nan);
        else if (isinf(f))
            ++*(f < 0 ? &neg_inf : &pos_inf);
        else if (f == 0.0f)
            ++*(k[i] >> 31 ? &neg_zero : &pos_zero);
        else
            finite++;
    }
    assert_true(pos_nan && neg_nan && pos_zero && neg_zero && pos_inf && neg_inf);
    assert_true(finite > (int)(bytes / 4) / 2);
    free(k);

    assert_int_equal(
        cli_run(c, "gen", "-o", "i.bin", "-n", "2^14", "--dtype", "i32", "--dist", "nan-mix", NULL),
        0);
    int32_t *ik = cli_read(c, "i.bin", &bytes);
    int has_min = 0, has_max = 0;
    for (size_t i = 0; i < bytes / 4; i++) {
        has_min |= ik[i] == INT32_MIN;
        has_max |= ik[i] == INT32_MAX;
    }
    assert_true(has_min && has_max);
    free(ik);
}

static void test_gen_iota(void **state) {
    STATE;
    assert_int_equal(
        cli_run(c, "gen", "-o", "v.bin", "-n", "1000", "--dist", "iota", "--dtype", "u64", NULL),
        0);
    size_t bytes;
    uint64_t *v = cli_read(c, "v.bin", &bytes);
    assert_int_equal(bytes, 8000);
    for (uint64_t i = 0; i < 1000; i++) assert_int_equal(v[i], i);
    free(v);
}

static void test_no_progress_bar_in_pipes(void **state) {
    STATE;
    /* Long enough that a terminal would show the bar. */
    assert_int_equal(cli_run(c, "gen", "-o", "k.bin", "-n", "2^23", NULL), 0);
    assert_string_equal(c->err, "");
    assert_int_equal(cli_run(c, "sort", "k.bin", "--dtype", "u32", NULL), 0);
    assert_string_equal(c->err, "");
}

static void test_progress_bar_when_forced(void **state) {
    STATE;
    c->env_progress = "1";
    assert_int_equal(cli_run(c, "gen", "-o", "k.bin", "-n", "2^21", NULL), 0);
    cli_assert_contains(c->err, "100%");
    cli_assert_contains(c->err, "\r\033[K"); /* and the bar is erased */
    c->env_progress = "0";
    assert_int_equal(cli_run(c, "gen", "-o", "k.bin", "-n", "2^21", NULL), 0);
    assert_string_equal(c->err, "");
}

/*====================================================================
 * sort: round trips, values, stability, float order
 *==================================================================*/

static void test_round_trip_every_dtype_and_dist(void **state) {
    STATE;
    static const char *const dists[] = {"random", "nan-mix",  "few",   "equal",
                                        "sorted", "reversed", "narrow"};
    for (size_t d = 0; d < sizeof all_dtypes / sizeof all_dtypes[0]; d++) {
        const char *dt = warpsort_dtype_name(all_dtypes[d]);
        for (size_t s = 0; s < sizeof dists / sizeof dists[0]; s++) {
            for (int desc = 0; desc < 2; desc++) {
                assert_int_equal(cli_run(c, "gen", "-o", "in.bin", "-n", "3001", "--dtype", dt,
                                         "--dist", dists[s], "--seed", "11", NULL),
                                 0);
                if (desc)
                    assert_int_equal(cli_run(c, "sort", "in.bin", "-o", "out.bin", "--dtype", dt,
                                             "--desc", NULL),
                                     0);
                else
                    assert_int_equal(
                        cli_run(c, "sort", "in.bin", "-o", "out.bin", "--dtype", dt, NULL), 0);
                assert_sorted_permutation(c, "in.bin", "out.bin", all_dtypes[d], desc);
                if (desc)
                    cli_run(c, "check", "out.bin", "--dtype", dt, "--desc", "--perm-of", "in.bin",
                            NULL);
                else
                    cli_run(c, "check", "out.bin", "--dtype", dt, "--perm-of", "in.bin", NULL);
                if (c->exit_code != 0) fail_msg("check: %s %s", c->out, c->err);
                cli_assert_one_line(c->out);
            }
        }
    }
}

static void test_sort_small_and_odd_sizes(void **state) {
    STATE;
    static const char *const sizes[] = {"0", "1", "2", "31", "33", "2^16+1"};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        assert_int_equal(cli_run(c, "gen", "-o", "in.bin", "-n", sizes[i], "--dtype", "f64",
                                 "--dist", "nan-mix", NULL),
                         0);
        assert_int_equal(cli_run(c, "sort", "in.bin", "-o", "out.bin", "--dtype", "f64", NULL), 0);
        assert_sorted_permutation(c, "in.bin", "out.bin", WARPSORT_F64, 0);
    }
}

/* On a machine with a GPU: a file sorted out of core through host memory
 * under a 512 KiB device budget (hundreds of runs), keys and pairs; the
 * result is checked against the input, and a budget too small fails
 * cleanly with the output file untouched. Skips without a CUDA device. */
static void test_sort_out_of_core_gpu(void **state) {
    STATE;
    warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
    cfg.backend = WARPSORT_BACKEND_CUDA;
    warpsort_context_t *ctx = NULL;
    if (warpsort_create(&ctx, &cfg) != WARPSORT_OK) skip();
    warpsort_destroy(ctx);
    assert_int_equal(cli_run(c, "gen", "-o", "in.bin", "-n", "2^22+3", "--dtype", "f32", "--dist",
                             "nan-mix", "--seed", "3", NULL),
                     0);
    assert_int_equal(cli_run(c, "sort", "in.bin", "-o", "out.bin", "--dtype", "f32", "--backend",
                             "cuda", "--device-budget", "512K", NULL),
                     0);
    assert_sorted_permutation(c, "in.bin", "out.bin", WARPSORT_F32, 0);
    assert_int_equal(cli_run(c, "gen", "-o", "ids.bin", "-n", "2^22+3", "--dist", "iota", NULL), 0);
    assert_int_equal(cli_run(c, "sort", "in.bin", "-o", "out.bin", "--dtype", "f32", "--desc",
                             "--stable", "--values", "ids.bin", "--values-out", "ids.out.bin",
                             "--backend", "cuda", "--device-budget", "1M", NULL),
                     0);
    assert_sorted_permutation(c, "in.bin", "out.bin", WARPSORT_F32, 1);
    cli_write(c, "prev.bin", "previous", 8);
    cli_run(c, "sort", "in.bin", "-o", "prev.bin", "--dtype", "f32", "--backend", "cuda",
            "--device-budget", "1K", NULL);
    cli_assert_error(c, "WARPSORT_OUT_OF_MEMORY", NULL);
    size_t b;
    char *prev = cli_read(c, "prev.bin", &b);
    assert_int_equal(b, 8);
    assert_memory_equal(prev, "previous", 8);
    free(prev);
}

/* --devices: lists the CLI itself refuses (one line, exit 2, the output
 * untouched), and ordinals with no GPU behind them, which the library
 * refuses at create on every build (BACKEND_UNAVAILABLE naming the entry on a
 * GPU machine). With a GPU: "all" and a one-device list out of core. */
static void test_sort_devices(void **state) {
    STATE;
    assert_int_equal(cli_run(c, "gen", "-o", "in.bin", "-n", "5000", "--dtype", "u64", NULL), 0);
    cli_write(c, "prev.bin", "previous", 8);
    static const struct {
        const char *list, *says;
    } bad[] = {
        {"0,1,1", "device 1 appears twice in '0,1,1'"},
        {"-1", "bad device list '-1'"},
        {"0,,1", "bad device list '0,,1' at ',1'"},
        {"1,", "bad device list '1,'"},
        {"", "bad device list ''"},
        {"gpu0", "bad device list 'gpu0'"},
        {"2000", "device 2000 in '2000' is out of range"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cli_run(c, "sort", "in.bin", "-o", "prev.bin", "--dtype", "u64", "--devices", bad[i].list,
                NULL);
        cli_assert_error(c, "--devices", bad[i].says, NULL);
    }
    cli_run(c, "sort", "in.bin", "-o", "prev.bin", "--dtype", "u64", "--devices", "0", "--backend",
            "cpu", NULL);
    cli_assert_error(c, "--devices", "--backend cpu", NULL);
    /* 999 is no GPU on any machine: refused where the context is made */
    cli_run(c, "sort", "in.bin", "-o", "prev.bin", "--dtype", "u64", "--devices", "0,999", NULL);
    cli_assert_error(c, "WARPSORT_BACKEND_UNAVAILABLE", NULL);
    size_t b;
    char *prev = cli_read(c, "prev.bin", &b);
    assert_int_equal(b, 8);
    assert_memory_equal(prev, "previous", 8);
    free(prev);

    warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
    cfg.backend = WARPSORT_BACKEND_CUDA;
    warpsort_context_t *ctx = NULL;
    if (warpsort_create(&ctx, &cfg) != WARPSORT_OK) {
        print_message("no CUDA device: the GPU half skipped\n");
        return;
    }
    warpsort_destroy(ctx);
    assert_int_equal(cli_run(c, "gen", "-o", "big.bin", "-n", "2^20+7", "--dtype", "f32", "--dist",
                             "nan-mix", NULL),
                     0);
    assert_int_equal(cli_run(c, "sort", "big.bin", "-o", "out.bin", "--dtype", "f32", "--devices",
                             "all", "--device-budget", "1M", NULL),
                     0);
    cli_assert_contains(c->out, "(devices: all)");
    assert_sorted_permutation(c, "big.bin", "out.bin", WARPSORT_F32, 0);
    assert_int_equal(cli_run(c, "sort", "big.bin", "-o", "out.bin", "--dtype", "f32", "--desc",
                             "--devices", "0", "--device-budget", "512K", NULL),
                     0);
    cli_assert_contains(c->out, "(devices 0)");
    assert_sorted_permutation(c, "big.bin", "out.bin", WARPSORT_F32, 1);
}

static void test_sort_in_place_without_output(void **state) {
    STATE;
    assert_int_equal(cli_run(c, "gen", "-o", "k.bin", "-n", "10000", "--dtype", "i64", NULL), 0);
    assert_int_equal(cli_run(c, "gen", "-o", "orig.bin", "-n", "10000", "--dtype", "i64", NULL), 0);
    assert_int_equal(cli_run(c, "sort", "k.bin", "--dtype", "i64", NULL), 0);
    cli_assert_one_line(c->out);
    assert_sorted_permutation(c, "orig.bin", "k.bin", WARPSORT_I64, 0);
    assert_int_equal(cli_count_entries(c, NULL), 2); /* nothing else left behind */
}

static void check_values_follow_keys(cli_t *c, const char *value_bytes, const char *iota_dtype) {
    assert_int_equal(cli_run(c, "gen", "-o", "k.bin", "-n", "20000", "--dtype", "f32", "--dist",
                             "nan-mix", NULL),
                     0);
    assert_int_equal(cli_run(c, "gen", "-o", "v.bin", "-n", "20000", "--dtype", iota_dtype,
                             "--dist", "iota", NULL),
                     0);
    assert_int_equal(cli_run(c, "sort", "k.bin", "-o", "ko.bin", "--dtype", "f32", "--values",
                             "v.bin", "--value-bytes", value_bytes, "--values-out", "vo.bin", NULL),
                     0);
    size_t kb, kob, vb, vob;
    uint32_t *k = cli_read(c, "k.bin", &kb), *ko = cli_read(c, "ko.bin", &kob);
    unsigned char *v = cli_read(c, "v.bin", &vb), *vo = cli_read(c, "vo.bin", &vob);
    size_t n = kb / 4, w = (size_t)atoi(value_bytes);
    assert_int_equal(vob, n * w);
    assert_true(test_is_sorted(ko, n, WARPSORT_F32, 0));
    char *seen = calloc(n, 1);
    assert_non_null(seen);
    for (size_t i = 0; i < n; i++) {
        uint64_t idx = 0;
        memcpy(&idx, vo + i * w, w); /* little-endian: low bytes first */
        assert_true(idx < n);
        assert_false(seen[idx]);
        seen[idx] = 1;
        assert_int_equal(ko[i], k[idx]); /* the value came with this key */
    }
    /* --values-out given: the values input is left alone. */
    for (size_t i = 0; i < n; i++) {
        uint64_t idx = 0;
        memcpy(&idx, v + i * w, w);
        assert_int_equal(idx, i);
    }
    free(seen);
    free(k);
    free(ko);
    free(v);
    free(vo);
}

static void test_values_follow_keys_4_bytes(void **state) {
    check_values_follow_keys(*state, "4", "u32");
}

static void test_values_follow_keys_8_bytes(void **state) {
    check_values_follow_keys(*state, "8", "u64");
}

static void test_values_in_place(void **state) {
    STATE;
    assert_int_equal(cli_run(c, "gen", "-o", "k.bin", "-n", "5000", "--dtype", "u64", NULL), 0);
    assert_int_equal(cli_run(c, "gen", "-o", "orig.bin", "-n", "5000", "--dtype", "u64", NULL), 0);
    assert_int_equal(cli_run(c, "gen", "-o", "v.bin", "-n", "5000", "--dist", "iota", NULL), 0);
    assert_int_equal(cli_run(c, "sort", "k.bin", "--dtype", "u64", "--values", "v.bin", NULL), 0);
    size_t b;
    uint64_t *orig = cli_read(c, "orig.bin", &b), *k = cli_read(c, "k.bin", &b);
    uint32_t *v = cli_read(c, "v.bin", &b);
    assert_int_equal(b, 5000 * 4);
    assert_true(test_is_sorted(k, 5000, WARPSORT_U64, 0));
    for (size_t i = 0; i < 5000; i++) assert_int_equal(k[i], orig[v[i]]);
    free(orig);
    free(k);
    free(v);
}

static void check_stable(cli_t *c, int desc) {
    assert_int_equal(cli_run(c, "gen", "-o", "k.bin", "-n", "30000", "--dtype", "i64", "--dist",
                             "few", "--seed", "3", NULL),
                     0);
    assert_int_equal(cli_run(c, "gen", "-o", "v.bin", "-n", "30000", "--dist", "iota", NULL), 0);
    if (desc)
        assert_int_equal(cli_run(c, "sort", "k.bin", "--dtype", "i64", "--values", "v.bin",
                                 "--stable", "--desc", NULL),
                         0);
    else
        assert_int_equal(
            cli_run(c, "sort", "k.bin", "--dtype", "i64", "--values", "v.bin", "--stable", NULL),
            0);
    size_t b;
    int64_t *k = cli_read(c, "k.bin", &b);
    uint32_t *v = cli_read(c, "v.bin", &b);
    assert_true(test_is_sorted(k, 30000, WARPSORT_I64, desc));
    size_t ties = 0;
    for (size_t i = 1; i < 30000; i++) {
        if (k[i] == k[i - 1]) {
            ties++;
            if (v[i] <= v[i - 1])
                fail_msg("equal keys at %zu, %zu lost their input order", i - 1, i);
        }
    }
    assert_true(ties > 29000); /* few distinct keys: the test really exercises ties */
    free(k);
    free(v);
}

static void test_stable_ascending(void **state) { check_stable(*state, 0); }
static void test_stable_descending(void **state) { check_stable(*state, 1); }

static void test_float_order(void **state) {
    STATE;
    const uint32_t neg_nan = 0xFFC00000u, pos_nan = 0x7FC00000u, snan = 0x7F800001u;
    uint32_t in[] = {pos_nan,
                     f32_bits(1.0f),
                     f32_bits(-0.0f),
                     neg_nan,
                     f32_bits(INFINITY),
                     f32_bits(0.0f),
                     f32_bits(-INFINITY),
                     snan,
                     f32_bits(-1.0f)};
    size_t n = sizeof in / sizeof in[0];
    cli_write(c, "f.bin", in, sizeof in);
    assert_int_equal(cli_run(c, "sort", "f.bin", "-o", "a.bin", "--dtype", "f32", NULL), 0);
    size_t b;
    uint32_t *a = cli_read(c, "a.bin", &b);
    assert_int_equal(b, sizeof in);
    const uint32_t head[] = {f32_bits(-INFINITY), f32_bits(-1.0f), f32_bits(-0.0f),
                             f32_bits(0.0f),      f32_bits(1.0f),  f32_bits(INFINITY)};
    assert_memory_equal(a, head, sizeof head);
    for (size_t i = 6; i < n; i++) /* all NaNs, either sign, after +inf */
        assert_true(a[i] == neg_nan || a[i] == pos_nan || a[i] == snan);
    assert_true(test_same_multiset(in, a, n, 4));

    assert_int_equal(cli_run(c, "sort", "f.bin", "-o", "d.bin", "--dtype", "f32", "--desc", NULL),
                     0);
    uint32_t *d = cli_read(c, "d.bin", &b);
    for (size_t i = 0; i < 3; i++) assert_true(d[i] == neg_nan || d[i] == pos_nan || d[i] == snan);
    /* Descending reverses the ascending order exactly. */
    for (size_t i = 0; i < n; i++) assert_int_equal(d[i], a[n - 1 - i]);
    free(a);
    free(d);
}

/*====================================================================
 * errors: exit 2, one line, outputs untouched
 *==================================================================*/

static void test_error_missing_file(void **state) {
    STATE;
    cli_run(c, "sort", "nope.bin", "--dtype", "u32", NULL);
    cli_assert_error(c, "nope.bin", "No such file", NULL);
    cli_run(c, "check", "nope.bin", "--dtype", "u32", NULL);
    cli_assert_error(c, "nope.bin", NULL);
}

static void test_error_size_not_multiple(void **state) {
    STATE;
    cli_write(c, "ten.bin", "0123456789", 10);
    cli_run(c, "sort", "ten.bin", "--dtype", "u32", NULL);
    cli_assert_error(c, "ten.bin: size 10 is not a multiple of 4 (dtype u32)", NULL);
    cli_run(c, "sort", "ten.bin", "--dtype", "f64", NULL);
    cli_assert_error(c, "not a multiple of 8", NULL);
    cli_run(c, "check", "ten.bin", "--dtype", "i32", NULL);
    cli_assert_error(c, "not a multiple of 4", NULL);
    size_t b;
    char *after = cli_read(c, "ten.bin", &b);
    assert_int_equal(b, 10);
    assert_memory_equal(after, "0123456789", 10);
    free(after);
}

/* The promise behind temp+rename: a failed sort leaves existing outputs with
 * their bytes and leaves no temporary files in the directory. */
static void test_error_values_wrong_length_leaves_outputs(void **state) {
    STATE;
    assert_int_equal(cli_run(c, "gen", "-o", "k.bin", "-n", "1000", NULL), 0);
    assert_int_equal(cli_run(c, "gen", "-o", "v.bin", "-n", "999", "--dist", "iota", NULL), 0);
    cli_write(c, "out.bin", "previous", 8);
    cli_write(c, "vout.bin", "old values", 10);
    size_t entries = cli_count_entries(c, NULL);

    cli_run(c, "sort", "k.bin", "--dtype", "u32", "-o", "out.bin", "--values", "v.bin",
            "--values-out", "vout.bin", NULL);
    cli_assert_error(c, "v.bin", "999", "1000", NULL);

    size_t b;
    char *out = cli_read(c, "out.bin", &b);
    assert_int_equal(b, 8);
    assert_memory_equal(out, "previous", 8);
    free(out);
    char *vout = cli_read(c, "vout.bin", &b);
    assert_int_equal(b, 10);
    assert_memory_equal(vout, "old values", 10);
    free(vout);
    assert_int_equal(cli_count_entries(c, NULL), entries);
    assert_int_equal(cli_count_entries(c, "tmp"), 0);

    /* In place: the keys file itself keeps its bytes. */
    size_t kb;
    void *before = cli_read(c, "k.bin", &kb);
    cli_run(c, "sort", "k.bin", "--dtype", "u32", "--values", "v.bin", NULL);
    cli_assert_error(c, "v.bin", NULL);
    void *after = cli_read(c, "k.bin", &b);
    assert_int_equal(b, kb);
    assert_memory_equal(before, after, kb);
    free(before);
    free(after);

    /* 8-byte values from a file of 4-byte ones: a length error too. */
    assert_int_equal(cli_run(c, "gen", "-o", "v4.bin", "-n", "1000", "--dist", "iota", NULL), 0);
    cli_run(c, "sort", "k.bin", "--dtype", "u32", "--values", "v4.bin", "--value-bytes", "8", "-o",
            "out.bin", NULL);
    cli_assert_error(c, "v4.bin", NULL);
    out = cli_read(c, "out.bin", &b);
    assert_memory_equal(out, "previous", 8);
    free(out);
    assert_int_equal(cli_count_entries(c, "tmp"), 0);
}

static void test_error_values_not_multiple(void **state) {
    STATE;
    assert_int_equal(cli_run(c, "gen", "-o", "k.bin", "-n", "4", NULL), 0);
    cli_write(c, "v.bin", "123456789", 9);
    cli_run(c, "sort", "k.bin", "--dtype", "u32", "--values", "v.bin", NULL);
    cli_assert_error(c, "v.bin: size 9 is not a multiple of 4", NULL);
}

/* Failing after the keys were already written to their temporary file (the
 * 8-byte values pass the file-size limit, the 4-byte keys do not) must still
 * remove that file; a values destination that is a directory is refused
 * before any work. */
static void test_error_late_failure_removes_temp_files(void **state) {
    STATE;
    assert_int_equal(cli_run(c, "gen", "-o", "k.bin", "-n", "5000", NULL), 0);
    assert_int_equal(
        cli_run(c, "gen", "-o", "v.bin", "-n", "5000", "--dist", "iota", "--dtype", "u64", NULL),
        0);
    cli_write(c, "out.bin", "previous", 8);
    cli_write(c, "vout.bin", "old values", 10);
    cli_mkdir(c, "dir");
    size_t entries = cli_count_entries(c, NULL);
    c->fsize_limit = 30000; /* keys: 20000 bytes, values: 40000 */
    cli_run(c, "sort", "k.bin", "--dtype", "u32", "-o", "out.bin", "--values", "v.bin",
            "--value-bytes", "8", "--values-out", "vout.bin", NULL);
    c->fsize_limit = 0;
    cli_assert_error(c, "vout.bin", "File too large", NULL);
    size_t b;
    char *out = cli_read(c, "out.bin", &b);
    assert_int_equal(b, 8);
    assert_memory_equal(out, "previous", 8);
    free(out);
    out = cli_read(c, "vout.bin", &b);
    assert_int_equal(b, 10);
    free(out);
    assert_int_equal(cli_count_entries(c, NULL), entries);

    cli_run(c, "sort", "k.bin", "--dtype", "u32", "-o", "out.bin", "--values", "v.bin",
            "--value-bytes", "8", "--values-out", "dir", NULL);
    cli_assert_error(c, "dir", "is a directory", NULL);
    assert_int_equal(cli_count_entries(c, NULL), entries);

    cli_run(c, "sort", "k.bin", "--dtype", "u32", "-o", "dir", NULL);
    cli_assert_error(c, "is a directory", NULL);
    cli_run(c, "sort", "k.bin", "--dtype", "u32", "-o", "missing/out.bin", NULL);
    cli_assert_error(c, "missing/out.bin", NULL);
    assert_int_equal(cli_count_entries(c, NULL), entries);
}

static void test_error_unknown_dtype(void **state) {
    STATE;
    assert_int_equal(cli_run(c, "gen", "-o", "k.bin", "-n", "4", NULL), 0);
    cli_run(c, "sort", "k.bin", "--dtype", "u16", NULL);
    cli_assert_error(c, "unknown dtype 'u16'", NULL);
    cli_run(c, "gen", "-o", "x.bin", "--dtype", "float", NULL);
    cli_assert_error(c, "unknown dtype 'float'", NULL);
    assert_false(cli_exists(c, "x.bin"));
    cli_run(c, "sort", "k.bin", NULL);
    cli_assert_error(c, "--dtype is required", NULL);
}

static void test_error_unknown_option_and_command(void **state) {
    STATE;
    cli_run(c, "sort", "k.bin", "--dtype", "u32", "--frobnicate", NULL);
    cli_assert_error(c, "unknown option '--frobnicate'", NULL);
    cli_run(c, "gen", "-x", NULL);
    cli_assert_error(c, "unknown option '-x'", NULL);
    cli_run(c, "sort", "k.bin", "--dtype", "u32", "--desc=yes", NULL);
    cli_assert_error(c, "takes no value", NULL);
    cli_run(c, "gen", "-o", NULL);
    cli_assert_error(c, "needs a value", NULL);
    cli_run(c, "frobnicate", NULL);
    cli_assert_error(c, "unknown command 'frobnicate'", NULL);
    cli_run(c, "--frobnicate", NULL);
    cli_assert_error(c, "unknown option '--frobnicate'", NULL);
    cli_run(c, "help", "frobnicate", NULL);
    cli_assert_error(c, "unknown command 'frobnicate'", NULL);
    cli_run(c, "sort", "a.bin", "b.bin", "--dtype", "u32", NULL);
    cli_assert_error(c, "unexpected argument 'b.bin'", NULL);
    cli_run(c, "sort", "--dtype", "u32", NULL);
    cli_assert_error(c, "missing the input FILE", NULL);
    cli_run(c, "gen", "-n", "5", NULL);
    cli_assert_error(c, "-o FILE is required", NULL);
    cli_run(c, "bench", "--backend", "gpu", NULL);
    cli_assert_error(c, "unknown backend 'gpu'", NULL);
    cli_run(c, "gen", "-o", "x.bin", "--dist", "zipf", NULL);
    cli_assert_error(c, "unknown distribution 'zipf'", NULL);
}

static void test_error_bad_numbers(void **state) {
    STATE;
    static const char *const bad_sizes[] = {
        "12x", "", "-5", "2^", "2^99", "2^65", "1Q", "99999999999999999999", "1e6"};
    for (size_t i = 0; i < sizeof bad_sizes / sizeof bad_sizes[0]; i++) {
        cli_run(c, "gen", "-o", "x.bin", "-n", bad_sizes[i], NULL);
        cli_assert_error(c, "bad size", NULL);
    }
    /* A huge exponent of 1 is one key, at once (it used to loop 10^14 times). */
    assert_int_equal(cli_run(c, "gen", "-o", "one.bin", "-n", "1^99999999999999", NULL), 0);
    size_t one_bytes;
    free(cli_read(c, "one.bin", &one_bytes));
    assert_int_equal(one_bytes, 4);
    cli_run(c, "gen", "-o", "x.bin", "--seed", "abc", NULL);
    cli_assert_error(c, "--seed: bad number 'abc'", NULL);
    cli_run(c, "bench", "--threads", "2x", NULL);
    cli_assert_error(c, "--threads: bad number '2x'", NULL);
    cli_run(c, "bench", "--repeat", "0", NULL);
    cli_assert_error(c, "--repeat", NULL);
    cli_run(c, "sort", "k.bin", "--dtype", "u32", "--values", "v.bin", "--value-bytes", "3", NULL);
    cli_assert_error(c, "--value-bytes: must be 4 or 8", NULL);
    cli_run(c, "bench", "--value-bytes", "8", "-n", "1000", NULL);
    cli_assert_error(c, "--value-bytes: only with --pairs", NULL);
    assert_false(cli_exists(c, "x.bin"));
}

static void test_error_same_file_twice(void **state) {
    STATE;
    assert_int_equal(cli_run(c, "gen", "-o", "k.bin", "-n", "16", NULL), 0);
    cli_run(c, "sort", "k.bin", "--dtype", "u32", "--values", "k.bin", NULL);
    cli_assert_error(c, "both the keys and the values", NULL);
    assert_int_equal(cli_run(c, "gen", "-o", "v.bin", "-n", "16", NULL), 0);
    cli_run(c, "sort", "k.bin", "--dtype", "u32", "--values", "v.bin", "-o", "o.bin",
            "--values-out", "o.bin", NULL);
    cli_assert_error(c, "o.bin", NULL);
    assert_false(cli_exists(c, "o.bin"));
    /* Two spellings of one new file are the same file too. */
    cli_run(c, "sort", "k.bin", "--dtype", "u32", "--values", "v.bin", "-o", "o.bin",
            "--values-out", "./o.bin", NULL);
    cli_assert_error(c, "o.bin", NULL);
    assert_false(cli_exists(c, "o.bin"));
}

/* An output through a dangling symlink is refused: replacing the link with a
 * regular file would silently leave its target unwritten. */
static void test_error_dangling_symlink_output(void **state) {
    STATE;
    char link_path[PATH_MAX + 16];
    snprintf(link_path, sizeof link_path, "%s/link.bin", c->dir);
    assert_int_equal(symlink("missing/target.bin", link_path), 0);
    cli_run(c, "gen", "-o", "link.bin", "-n", "16", NULL);
    cli_assert_error(c, "link.bin", "symbolic link", NULL);
    struct stat st;
    assert_int_equal(lstat(link_path, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
}

/* iota's keys are original positions: refused where the dtype cannot hold
 * them all exactly (checked before any memory is allocated). */
static void test_error_iota_beyond_dtype(void **state) {
    STATE;
    cli_run(c, "gen", "-o", "f.bin", "-n", "2^24+1", "--dtype", "f32", "--dist", "iota", NULL);
    cli_assert_error(c, "iota", "f32", NULL);
    assert_false(cli_exists(c, "f.bin"));
    cli_run(c, "gen", "-o", "i.bin", "-n", "2^31+1", "--dtype", "i32", "--dist", "iota", NULL);
    cli_assert_error(c, "iota", "i32", NULL);
    assert_int_equal(
        cli_run(c, "gen", "-o", "f.bin", "-n", "2^24", "--dtype", "f32", "--dist", "iota", NULL),
        0);
}

/* A library error is reported with its status name. Where a usable GPU makes
 * the CUDA backend available, there is no error to provoke this way. */
static void test_error_library_status(void **state) {
    STATE;
    warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
    cfg.backend = WARPSORT_BACKEND_CUDA;
    warpsort_context_t *ctx = NULL;
    if (warpsort_create(&ctx, &cfg) == WARPSORT_OK) {
        warpsort_destroy(ctx);
        skip();
    }
    assert_int_equal(cli_run(c, "gen", "-o", "k.bin", "-n", "16", NULL), 0);
    cli_write(c, "out.bin", "previous", 8);
    cli_run(c, "sort", "k.bin", "--dtype", "u32", "-o", "out.bin", "--backend", "cuda", NULL);
    /* ... and why (warpsort_create_error): no CUDA backend, or no device */
    cli_assert_error(c, "WARPSORT_BACKEND_UNAVAILABLE", NULL);
    if (!strstr(c->err, "built without the CUDA backend") && !strstr(c->err, "no CUDA device") &&
        !strstr(c->err, "cannot run warpsort's kernels"))
        fail_msg("the error does not say why CUDA is unusable: \"%s\"", c->err);
    size_t b;
    char *out = cli_read(c, "out.bin", &b);
    assert_memory_equal(out, "previous", 8);
    free(out);
    cli_run(c, "run", "-n", "100", "--backend", "cuda", NULL);
    cli_assert_error(c, "WARPSORT_BACKEND_UNAVAILABLE", NULL);
}

/*====================================================================
 * outputs: what may be replaced, and how
 *==================================================================*/

static void scratch_path(cli_t *c, const char *name, char *path, size_t len) {
    int w = snprintf(path, len, "%s/%s", c->dir, name);
    assert_true(w > 0 && (size_t)w < len);
}

/* A FIFO or a device named by -o is refused, not replaced by a regular
 * file (as root, -o /dev/null would otherwise replace the system's). */
static void test_output_not_regular_refused(void **state) {
    STATE;
    char fifo[PATH_MAX], dev[PATH_MAX];
    scratch_path(c, "ff", fifo, sizeof fifo);
    scratch_path(c, "null", dev, sizeof dev);
    assert_int_equal(mkfifo(fifo, 0666), 0);
    cli_run(c, "gen", "-o", "ff", "-n", "10", NULL);
    cli_assert_error(c, "ff", "not a regular file", NULL);
    struct stat st;
    assert_int_equal(lstat(fifo, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));

    /* As an input it is refused too, at once (opening it used to wait for a writer). */
    cli_run(c, "sort", "ff", "--dtype", "u32", "-o", "o.bin", NULL);
    cli_assert_error(c, "ff", "not a regular file", NULL);

    assert_int_equal(cli_run(c, "gen", "-o", "k.bin", "-n", "100", NULL), 0);
    cli_run(c, "sort", "k.bin", "--dtype", "u32", "-o", "ff", NULL);
    cli_assert_error(c, "ff", "not a regular file", NULL);
    assert_int_equal(cli_run(c, "gen", "-o", "v.bin", "-n", "100", "--dist", "iota", NULL), 0);
    cli_run(c, "sort", "k.bin", "--dtype", "u32", "-o", "o.bin", "--values", "v.bin",
            "--values-out", "ff", NULL);
    cli_assert_error(c, "ff", "not a regular file", NULL);
    assert_false(cli_exists(c, "o.bin"));
    assert_int_equal(lstat(fifo, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    /* Through a symlink: the target is what counts. */
    char link_path[PATH_MAX];
    scratch_path(c, "link", link_path, sizeof link_path);
    assert_int_equal(symlink("ff", link_path), 0);
    cli_run(c, "gen", "-o", "link", "-n", "10", NULL);
    cli_assert_error(c, "not a regular file", NULL);
    assert_int_equal(lstat(fifo, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));

    /* A character device of our own (the same numbers as /dev/null), where
     * the process may make one. */
    if (mknod(dev, S_IFCHR | 0666, makedev(1, 3)) == 0) {
        cli_run(c, "gen", "-o", "null", "-n", "10", NULL);
        cli_assert_error(c, "null", "not a regular file", NULL);
        assert_int_equal(lstat(dev, &st), 0);
        assert_true(S_ISCHR(st.st_mode));
    }
    assert_int_equal(cli_count_entries(c, "tmp"), 0);
}

/* Past the file-size limit: exit 2 with a message, no temporary file left,
 * the old destination kept (it used to die of SIGXFSZ). */
static void test_output_file_size_limit(void **state) {
    STATE;
    cli_write(c, "big.bin", "previous", 8);
    size_t entries = cli_count_entries(c, NULL);
    c->fsize_limit = 64 << 10;
    cli_run(c, "gen", "-o", "big.bin", "-n", "100000", NULL);
    c->fsize_limit = 0;
    if (c->term_signal) fail_msg("killed by signal %d", c->term_signal);
    cli_assert_error(c, "big.bin", "File too large", NULL);
    size_t b;
    char *out = cli_read(c, "big.bin", &b);
    assert_int_equal(b, 8);
    assert_memory_equal(out, "previous", 8);
    free(out);
    assert_int_equal(cli_count_entries(c, NULL), entries);
}

/* Any valid name works, however long: the temporary name is shortened to
 * fit the directory's name limit. */
static void test_output_long_names(void **state) {
    STATE;
    static const size_t lengths[] = {235, 240, 254, 255};
    char name[NAME_MAX + 1];
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
        size_t len = lengths[i];
        memset(name, 'a' + (int)i, len - 4);
        memcpy(name + len - 4, ".bin", 5);
        assert_int_equal(strlen(name), len);
        if (cli_run(c, "gen", "-o", name, "-n", "1000", "--seed", "3", NULL) != 0)
            fail_msg("gen, %zu-byte name: %s", len, c->err);
        size_t b;
        free(cli_read(c, name, &b));
        assert_int_equal(b, 4000);
        if (cli_run(c, "sort", name, "--dtype", "u32", NULL) != 0)
            fail_msg("sort, %zu-byte name: %s", len, c->err);
        void *k = cli_read(c, name, &b);
        assert_true(test_is_sorted(k, 1000, WARPSORT_U32, 0));
        free(k);
    }
    /* Multi-byte UTF-8 characters: 2 x 125 + 4 = 254 bytes. */
    size_t len = 0;
    for (int i = 0; i < 125; i++, len += 2) memcpy(name + len, "\xc3\xa9", 2);
    memcpy(name + len, ".bin", 5);
    assert_int_equal(cli_run(c, "gen", "-o", name, "-n", "10", NULL), 0);
    assert_true(cli_exists(c, name));
    assert_int_equal(cli_count_entries(c, "tmp"), 0);
}

/* A SIGINT arriving between the renames of a --values sort (raised there by
 * the preloaded rename shim) waits until both are done: keys and values
 * change together, and the process still dies of the signal. */
static void test_values_commit_survives_sigint(void **state) {
    STATE;
    assert_int_equal(cli_run(c, "gen", "-o", "k.bin", "-n", "5000", "--dtype", "u64", NULL), 0);
    assert_int_equal(cli_run(c, "gen", "-o", "orig.bin", "-n", "5000", "--dtype", "u64", NULL), 0);
    assert_int_equal(cli_run(c, "gen", "-o", "v.bin", "-n", "5000", "--dist", "iota", NULL), 0);
    c->preload = WARPSORT_RENAME_SHIM;
    cli_run(c, "sort", "k.bin", "--dtype", "u64", "--values", "v.bin", NULL);
    c->preload = NULL;
    assert_int_equal(c->term_signal, SIGINT);
    size_t b;
    uint64_t *orig = cli_read(c, "orig.bin", &b), *k = cli_read(c, "k.bin", &b);
    uint32_t *v = cli_read(c, "v.bin", &b);
    assert_int_equal(b, 5000 * 4);
    assert_true(test_is_sorted(k, 5000, WARPSORT_U64, 0));
    for (size_t i = 0; i < 5000; i++)
        if (v[i] >= 5000 || k[i] != orig[v[i]])
            fail_msg("values no longer follow the keys at %zu: the renames were split", i);
    free(orig);
    free(k);
    free(v);
    assert_int_equal(cli_count_entries(c, "tmp"), 0);
}

/* A read-only file is refused like cp refuses it, in place or as -o, and
 * keeps its bytes and mode. Root passes every access check, so the refusal
 * rests on the mode bits: the test means the same as root and as a user. */
static void test_output_read_only_refused(void **state) {
    STATE;
    char path[PATH_MAX];
    assert_int_equal(cli_run(c, "gen", "-o", "k.bin", "-n", "1000", NULL), 0);
    scratch_path(c, "k.bin", path, sizeof path);
    assert_int_equal(chmod(path, 0444), 0);
    size_t kb, b;
    void *before = cli_read(c, "k.bin", &kb);
    cli_run(c, "sort", "k.bin", "--dtype", "u32", NULL);
    cli_assert_error(c, "k.bin", "Permission denied", NULL);
    void *after = cli_read(c, "k.bin", &b);
    assert_int_equal(b, kb);
    assert_memory_equal(before, after, kb);
    free(before);
    free(after);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0444);

    /* As the -o of gen and of sort, and as a --values-out. */
    cli_write(c, "ro.bin", "previous", 8);
    scratch_path(c, "ro.bin", path, sizeof path);
    assert_int_equal(chmod(path, 0444), 0);
    cli_run(c, "gen", "-o", "ro.bin", "-n", "16", NULL);
    cli_assert_error(c, "ro.bin", "Permission denied", NULL);
    cli_run(c, "sort", "k.bin", "--dtype", "u32", "-o", "ro.bin", NULL);
    cli_assert_error(c, "ro.bin", "Permission denied", NULL);
    assert_int_equal(cli_run(c, "gen", "-o", "v.bin", "-n", "1000", "--dist", "iota", NULL), 0);
    cli_run(c, "sort", "k.bin", "--dtype", "u32", "-o", "o.bin", "--values", "v.bin",
            "--values-out", "ro.bin", NULL);
    cli_assert_error(c, "ro.bin", "Permission denied", NULL);
    assert_false(cli_exists(c, "o.bin"));
    char *ro = cli_read(c, "ro.bin", &b);
    assert_int_equal(b, 8);
    assert_memory_equal(ro, "previous", 8);
    free(ro);
    assert_int_equal(cli_count_entries(c, "tmp"), 0);

    /* As another user: root's 0644 file in a directory anyone may write is
     * not that user's to replace, though rename() would allow it. */
    if (geteuid() != 0) return;
    assert_int_equal(chmod(c->dir, 0777), 0);
    cli_write(c, "roots.bin", "previous", 8);
    scratch_path(c, "roots.bin", path, sizeof path);
    assert_int_equal(chmod(path, 0644), 0);
    c->run_as = 65534; /* nobody */
    cli_run(c, "gen", "-o", "mine.bin", "-n", "16", NULL);
    if (c->exit_code == 126 || c->exit_code == 127) { /* the build tree is closed to nobody */
        c->run_as = 0;
        return;
    }
    assert_int_equal(c->exit_code, 0);
    cli_run(c, "gen", "-o", "roots.bin", "-n", "16", NULL);
    c->run_as = 0;
    cli_assert_error(c, "roots.bin", "Permission denied", NULL);
    ro = cli_read(c, "roots.bin", &b);
    assert_int_equal(b, 8);
    assert_memory_equal(ro, "previous", 8);
    free(ro);
    assert_int_equal(cli_count_entries(c, "tmp"), 0);
}

/* The replacement keeps the replaced file's mode, and its owner and group
 * where the process may set them (root may). */
static void test_output_keeps_owner_and_mode(void **state) {
    STATE;
    char path[PATH_MAX];
    assert_int_equal(cli_run(c, "gen", "-o", "k.bin", "-n", "1000", NULL), 0);
    scratch_path(c, "k.bin", path, sizeof path);
    assert_int_equal(chmod(path, 0640), 0);
    const int as_root = geteuid() == 0;
    const uid_t uid = 1234;
    const gid_t gid = 5678;
    if (as_root) assert_int_equal(chown(path, uid, gid), 0);
    assert_int_equal(cli_run(c, "sort", "k.bin", "--dtype", "u32", NULL), 0);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640);
    if (as_root) {
        assert_int_equal(st.st_uid, uid);
        assert_int_equal(st.st_gid, gid);
    }
    size_t b;
    void *k = cli_read(c, "k.bin", &b);
    assert_true(test_is_sorted(k, 1000, WARPSORT_U32, 0));
    free(k);
}

/*====================================================================
 * check
 *==================================================================*/

static int check_u32(cli_t *c, const uint32_t *keys, size_t n, const char *dtype, int desc) {
    cli_write(c, "c.bin", keys, n * 4);
    if (desc) return cli_run(c, "check", "c.bin", "--dtype", dtype, "--desc", NULL);
    return cli_run(c, "check", "c.bin", "--dtype", dtype, NULL);
}

static void test_check_detects_unsorted(void **state) {
    STATE;
    const uint32_t up[] = {1, 2, 2, 7}, bad[] = {1, 3, 2, 7};
    assert_int_equal(check_u32(c, up, 4, "u32", 0), 0);
    cli_assert_one_line(c->out);
    cli_assert_contains(c->out, "sorted: c.bin");
    assert_int_equal(check_u32(c, up, 4, "u32", 1), 1);
    cli_assert_one_line(c->out);
    cli_assert_contains(c->out, "not sorted");
    assert_int_equal(check_u32(c, bad, 4, "u32", 0), 1);
    cli_assert_one_line(c->out);
    cli_assert_contains(c->out, "key 2");
    /* Signed view: 0xFFFFFFFF is -1, so it sorts first. */
    const uint32_t mixed[] = {0xFFFFFFFFu, 0, 5};
    assert_int_equal(check_u32(c, mixed, 3, "i32", 0), 0);
    assert_int_equal(check_u32(c, mixed, 3, "u32", 0), 1);
    assert_int_equal(check_u32(c, NULL, 0, "u32", 0), 0); /* empty is sorted */
    assert_int_equal(check_u32(c, up, 1, "u32", 1), 0);
}

static void test_check_float_semantics(void **state) {
    STATE;
    const uint32_t zeros_asc[] = {f32_bits(-0.0f), f32_bits(0.0f)};
    const uint32_t zeros_desc[] = {f32_bits(0.0f), f32_bits(-0.0f)};
    const uint32_t nan_last[] = {f32_bits(-INFINITY), f32_bits(INFINITY), 0xFFC00000u};
    const uint32_t nan_first[] = {0x7FC00000u, f32_bits(1.0f)};
    assert_int_equal(check_u32(c, zeros_asc, 2, "f32", 0), 0);
    assert_int_equal(check_u32(c, zeros_desc, 2, "f32", 0), 1);
    assert_int_equal(check_u32(c, zeros_desc, 2, "f32", 1), 0);
    assert_int_equal(check_u32(c, nan_last, 3, "f32", 0), 0);
    assert_int_equal(check_u32(c, nan_first, 2, "f32", 0), 1);
    assert_int_equal(check_u32(c, nan_first, 2, "f32", 1), 0);
    /* As raw u32 the same bits are out of order. */
    assert_int_equal(check_u32(c, zeros_asc, 2, "u32", 0), 1);
}

static void test_check_permutation(void **state) {
    STATE;
    const uint32_t orig[] = {5, 1, 4, 1}, perm[] = {1, 1, 4, 5}, other[] = {1, 4, 4, 5},
                   shorter[] = {1, 4, 5};
    cli_write(c, "orig.bin", orig, sizeof orig);
    cli_write(c, "perm.bin", perm, sizeof perm);
    cli_write(c, "other.bin", other, sizeof other);
    cli_write(c, "short.bin", shorter, sizeof shorter);
    assert_int_equal(
        cli_run(c, "check", "perm.bin", "--dtype", "u32", "--perm-of", "orig.bin", NULL), 0);
    cli_assert_one_line(c->out);
    cli_assert_contains(c->out, "permutation of orig.bin");
    assert_int_equal(
        cli_run(c, "check", "other.bin", "--dtype", "u32", "--perm-of", "orig.bin", NULL), 1);
    cli_assert_one_line(c->out);
    cli_assert_contains(c->out, "not a permutation");
    assert_int_equal(
        cli_run(c, "check", "short.bin", "--dtype", "u32", "--perm-of", "orig.bin", NULL), 1);
    cli_assert_contains(c->out, "not a permutation");
    /* Unsorted and not a permutation: both reported on the one line. */
    assert_int_equal(
        cli_run(c, "check", "orig.bin", "--dtype", "u32", "--perm-of", "other.bin", NULL), 1);
    cli_assert_one_line(c->out);
    cli_assert_contains(c->out, "not sorted");
    cli_assert_contains(c->out, "not a permutation");
    /* -0.0 and +0.0 are different keys: swapping one for the other is caught. */
    const uint32_t pz[] = {f32_bits(0.0f)}, nz[] = {f32_bits(-0.0f)};
    cli_write(c, "pz.bin", pz, 4);
    cli_write(c, "nz.bin", nz, 4);
    assert_int_equal(cli_run(c, "check", "pz.bin", "--dtype", "f32", "--perm-of", "nz.bin", NULL),
                     1);
}

static void test_check_errors(void **state) {
    STATE;
    const uint32_t k[] = {1, 2};
    cli_write(c, "k.bin", k, sizeof k);
    cli_run(c, "check", "k.bin", NULL);
    cli_assert_error(c, "--dtype is required", NULL);
    cli_run(c, "check", "--dtype", "u32", NULL);
    cli_assert_error(c, "missing the FILE", NULL);
    cli_run(c, "check", "k.bin", "--dtype", "u32", "--perm-of", "none.bin", NULL);
    cli_assert_error(c, "none.bin", NULL);
    cli_run(c, "check", "k.bin", "--dtype", "u64", NULL); /* 8 bytes: one u64, sorted */
    assert_int_equal(c->exit_code, 0);
}

/*====================================================================
 * bench and run
 *==================================================================*/

static void test_bench_with_qsort(void **state) {
    STATE;
    assert_int_equal(cli_run(c, "bench", "-n", "2^14", "--repeat", "3", "--qsort", "--dtype", "f32",
                             "--dist", "nan-mix", NULL),
                     0);
    cli_assert_contains(c->out, "best");
    cli_assert_contains(c->out, "median");
    cli_assert_contains(c->out, "keys/s");
    cli_assert_contains(c->out, "speedup");
    cli_assert_contains(c->out, "verified");
    assert_string_equal(c->err, "");
}

static void test_bench_pairs_stable(void **state) {
    STATE;
    assert_int_equal(cli_run(c, "bench", "-n", "10000", "--repeat", "2", "--warmup", "0", "--pairs",
                             "--stable", "--desc", "--dist", "few", "--dtype", "i64",
                             "--value-bytes", "8", NULL),
                     0);
    cli_assert_contains(c->out, "values following their keys stably");
    cli_run(c, "bench", "--pairs", "--qsort", NULL);
    cli_assert_error(c, "--qsort", NULL);
}

static void test_run_main_job(void **state) {
    STATE;
    assert_int_equal(cli_run(c, "run", "-n", "2^16", NULL), 0);
    cli_assert_contains(c->out, "backend:");
    cli_assert_contains(c->out, "65536");
    cli_assert_contains(c->out, "keys/s");
    cli_assert_contains(c->out, "verified");
    /* AUTO on the CPU says why (no CUDA backend built, no usable device);
     * on the GPU it has nothing to explain */
    if (strstr(c->out, "backend:  cpu"))
        cli_assert_contains(c->out, "why:      AUTO chose the CPU backend: ");
    else
        assert_null(strstr(c->out, "why:"));
    assert_int_equal(cli_run(c, "run", "-n", "1000", "--dtype", "f64", "--dist", "nan-mix",
                             "--desc", "--backend", "cpu", "--threads", "2", NULL),
                     0);
    cli_assert_contains(c->out, "cpu (2 threads)");
    cli_assert_contains(c->out, "verified");
    assert_null(strstr(c->out, "why:")); /* asked for by name */
}

/* --threads above the library's cap reports the count the library uses. */
static void test_threads_above_cap(void **state) {
    STATE;
    char expect[64];
    snprintf(expect, sizeof expect, "cpu (%u threads)", WS_CPU_MAX_THREADS);
    assert_int_equal(cli_run(c, "run", "-n", "1000", "--backend", "cpu", "--threads", "1000", NULL),
                     0);
    cli_assert_contains(c->out, expect);
    snprintf(expect, sizeof expect, "at most %u", WS_CPU_MAX_THREADS);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        assert_int_equal(cli_run(c, "help", commands[i], NULL), 0);
        if (strstr(c->out, "--threads")) cli_assert_contains(c->out, expect);
    }
}

/* topk: keys and indices of a whole file and of rows, both directions and
 * index sizes, judged by the top-k oracle (tests/cpu/topk_cases.h). */
static void check_topk_files(cli_t *c, warpsort_dtype_t dt, size_t rows, size_t len, size_t k,
                             int smallest, size_t ib) {
    size_t in_bytes, kbytes, ibytes;
    void *in = cli_read(c, "in.bin", &in_bytes);
    void *keys = cli_read(c, "top.bin", &kbytes);
    void *idx = cli_read(c, "idx.bin", &ibytes);
    const size_t kb = warpsort_dtype_size(dt);
    assert_int_equal(in_bytes, rows * len * kb);
    assert_int_equal(kbytes, rows * k * kb);
    assert_int_equal(ibytes, rows * k * ib);
    tk_case_t tc = {dt, smallest, rows, len, k, KEYGEN_RANDOM, 0, ib, 0, TK_BOTH};
    size_t *order = malloc(len * sizeof *order);
    uint64_t *sel = malloc(k * sizeof *sel);
    char msg[512];
    for (size_t r = 0; r < rows; r++)
        if (tk_check_row(&tc, in, NULL, r, keys, idx, NULL, order, sel, msg, sizeof msg))
            fail_msg("%s", msg);
    free(order);
    free(sel);
    free(in);
    free(keys);
    free(idx);
}

static void test_topk_file_and_rows(void **state) {
    STATE;
    for (size_t d = 0; d < sizeof all_dtypes / sizeof all_dtypes[0]; d++) {
        const warpsort_dtype_t dt = all_dtypes[d];
        const char *name = warpsort_dtype_name(dt);
        assert_int_equal(cli_run(c, "gen", "-o", "in.bin", "-n", "3000", "--dtype", name, "--dist",
                                 "nan-mix", "--seed", "7", NULL),
                         0);
        assert_int_equal(cli_run(c, "topk", "in.bin", "--dtype", name, "-k", "33", "-o", "top.bin",
                                 "--indices-out", "idx.bin", NULL),
                         0);
        check_topk_files(c, dt, 1, 3000, 33, 0, 8);
        assert_int_equal(cli_run(c, "topk", "in.bin", "--dtype", name, "-k", "3000", "--smallest",
                                 "-o", "top.bin", "--indices-out", "idx.bin", "--index-bytes", "4",
                                 NULL),
                         0);
        check_topk_files(c, dt, 1, 3000, 3000, 1, 4);
        assert_int_equal(cli_run(c, "topk", "in.bin", "--dtype", name, "-k", "7", "--row-length",
                                 "100", "-o", "top.bin", "--indices-out", "idx.bin", NULL),
                         0);
        check_topk_files(c, dt, 30, 100, 7, 0, 8);
    }
}

/* Bad k, row length or outputs: exit 2, one line, outputs untouched. */
static void test_topk_errors(void **state) {
    STATE;
    assert_int_equal(cli_run(c, "gen", "-o", "in.bin", "-n", "100", "--dtype", "u32", NULL), 0);
    cli_write(c, "top.bin", "old", 3);
    static const char *const bad[][4] = {
        {"-k", "0", NULL, NULL},          {"-k", "101", NULL, NULL},
        {"-k", "3", "--row-length", "7"}, {"-k", "8", "--row-length", "5"},
        {"-k", "3", "--row-length", "0"}, {"-k", "3", "--index-bytes", "2"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(cli_run(c, "topk", "in.bin", "--dtype", "u32", bad[i][0], bad[i][1], "-o",
                                 "top.bin", "--indices-out", "idx.bin", bad[i][2], bad[i][3], NULL),
                         2);
        size_t bytes;
        char *old = cli_read(c, "top.bin", &bytes);
        assert_int_equal(bytes, 3);
        assert_memory_equal(old, "old", 3);
        free(old);
        assert_false(cli_exists(c, "idx.bin"));
    }
    assert_int_equal(cli_run(c, "topk", "in.bin", "--dtype", "u32", "-k", "3", NULL), 2);
    assert_int_equal(cli_run(c, "topk", "in.bin", "-k", "3", "-o", "top.bin", NULL), 2);
    cli_run(c, "topk", "in.bin", "--dtype", "u32", "-k", "3", "--row-length", "0", "-o", "top.bin",
            NULL);
    cli_assert_error(c, "at least 1", NULL);
    cli_write(c, "empty.bin", "", 0);
    cli_run(c, "topk", "empty.bin", "--dtype", "u32", "-k", "1", "-o", "top.bin", NULL);
    cli_assert_error(c, "holds no keys", NULL);
}

/*====================================================================
 * sort --row-length / --offsets: batched rows and segments
 *==================================================================*/

/* Every segment [offs[s], offs[s+1]) of `output` is the sorted segment of
 * `input`; values (iota over the file, if vname) follow their keys. */
static void check_segments(cli_t *c, const char *input, const char *output, const char *vname,
                           warpsort_dtype_t dt, const uint64_t *offs, size_t segs, int desc) {
    size_t ib, ob, vb = 0;
    char *in = cli_read(c, input, &ib), *out = cli_read(c, output, &ob);
    uint32_t *v = vname ? cli_read(c, vname, &vb) : NULL;
    const size_t es = warpsort_dtype_size(dt);
    assert_int_equal(ib, ob);
    assert_int_equal(offs[segs], ob / es);
    for (size_t s = 0; s < segs; s++) {
        const size_t b = (size_t)offs[s], len = (size_t)(offs[s + 1] - offs[s]);
        if (!test_is_sorted(out + b * es, len, dt, desc))
            fail_msg("%s: segment %zu is not sorted (%s)", output, s, warpsort_dtype_name(dt));
        if (!test_same_multiset(in + b * es, out + b * es, len, es))
            fail_msg("%s: segment %zu is not a permutation of its input", output, s);
        for (size_t i = 0; v && i < len; i++) {
            const uint32_t src = v[b + i];
            if (src < b || src >= b + len || memcmp(in + (size_t)src * es, out + (b + i) * es, es))
                fail_msg("%s: value %u at %zu did not follow its key within segment %zu", vname,
                         src, b + i, s);
        }
    }
    free(in);
    free(out);
    free(v);
}

static void test_sort_rows_and_segments(void **state) {
    STATE;
    static const uint64_t offs[] = {0, 5, 5, 1000, 1001, 1033, 3000};
    const size_t segs = sizeof offs / sizeof offs[0] - 1;
    uint64_t rows[31];
    for (size_t r = 0; r <= 30; r++) rows[r] = 100 * r;
    cli_write(c, "offs.bin", offs, sizeof offs);
    for (size_t d = 0; d < sizeof all_dtypes / sizeof all_dtypes[0]; d++) {
        const warpsort_dtype_t dt = all_dtypes[d];
        const char *name = warpsort_dtype_name(dt);
        assert_int_equal(cli_run(c, "gen", "-o", "in.bin", "-n", "3000", "--dtype", name, "--dist",
                                 "nan-mix", "--seed", "11", NULL),
                         0);
        assert_int_equal(cli_run(c, "sort", "in.bin", "--dtype", name, "--row-length", "100", "-o",
                                 "rows.bin", NULL),
                         0);
        cli_assert_contains(c->out, "in 30 rows");
        check_segments(c, "in.bin", "rows.bin", NULL, dt, rows, 30, 0);
        assert_int_equal(cli_run(c, "sort", "in.bin", "--dtype", name, "--offsets", "offs.bin",
                                 "--desc", "-o", "seg.bin", NULL),
                         0);
        cli_assert_contains(c->out, "in 6 segments");
        check_segments(c, "in.bin", "seg.bin", NULL, dt, offs, segs, 1);
    }
    /* values follow their keys inside each segment */
    assert_int_equal(
        cli_run(c, "gen", "-o", "in.bin", "-n", "3000", "--dtype", "u32", "--dist", "few", NULL),
        0);
    assert_int_equal(
        cli_run(c, "gen", "-o", "v.bin", "-n", "3000", "--dtype", "u32", "--dist", "iota", NULL),
        0);
    assert_int_equal(cli_run(c, "sort", "in.bin", "--dtype", "u32", "--offsets", "offs.bin",
                             "--stable", "--values", "v.bin", "--values-out", "vo.bin", "-o",
                             "seg.bin", NULL),
                     0);
    check_segments(c, "in.bin", "seg.bin", "vo.bin", WARPSORT_U32, offs, segs, 0);
    assert_int_equal(cli_run(c, "sort", "in.bin", "--dtype", "u32", "--row-length", "100",
                             "--values", "v.bin", "--values-out", "vo.bin", "-o", "rows.bin", NULL),
                     0);
    check_segments(c, "in.bin", "rows.bin", "vo.bin", WARPSORT_U32, rows, 30, 0);
}

/* Bad offsets or row lengths: exit 2, one line, the output untouched. */
static void test_sort_segments_errors(void **state) {
    STATE;
    assert_int_equal(cli_run(c, "gen", "-o", "in.bin", "-n", "100", "--dtype", "u32", NULL), 0);
    cli_write(c, "out.bin", "old", 3);
    static const uint64_t decreasing[] = {0, 50, 40, 100}, short_last[] = {0, 50, 99},
                          not_zero[] = {1, 100};
    cli_write(c, "dec.bin", decreasing, sizeof decreasing);
    cli_write(c, "short.bin", short_last, sizeof short_last);
    cli_write(c, "nz.bin", not_zero, sizeof not_zero);
    cli_write(c, "odd.bin", "1234567", 7);
    cli_write(c, "empty.bin", "", 0);
    static const struct {
        const char *opt, *arg, *fragment;
    } bad[] = {{"--offsets", "dec.bin", "bad offset at index 2"},
               {"--offsets", "short.bin", "bad offset at index 2"},
               {"--offsets", "nz.bin", "bad offset at index 0"},
               {"--offsets", "odd.bin", "not a multiple of 8"},
               {"--offsets", "empty.bin", "no offsets"},
               {"--offsets", "missing.bin", "missing.bin"},
               {"--row-length", "7", "not whole rows"},
               {"--row-length", "0", "at least 1"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cli_run(c, "sort", "in.bin", "--dtype", "u32", bad[i].opt, bad[i].arg, "-o", "out.bin",
                NULL);
        cli_assert_error(c, bad[i].fragment, NULL);
        size_t bytes;
        char *old = cli_read(c, "out.bin", &bytes);
        assert_int_equal(bytes, 3);
        assert_memory_equal(old, "old", 3);
        free(old);
    }
    cli_run(c, "sort", "in.bin", "--dtype", "u32", "--row-length", "10", "--offsets", "dec.bin",
            "-o", "out.bin", NULL);
    cli_assert_error(c, "exclude each other", NULL);
}

/*====================================================================*/

#define T(fn) cmocka_unit_test_setup_teardown(fn, cli_setup, cli_teardown)

int main(int argc, char **argv) {
    const struct CMUnitTest basics[] = {
        T(test_help_mentions_every_command),
        T(test_help_of_each_command),
        T(test_version),
        T(test_no_arguments_prints_usage),
        T(test_size_syntax),
        T(test_gen_is_deterministic),
        T(test_gen_distributions),
        T(test_gen_nan_mix_has_specials),
        T(test_gen_iota),
        T(test_no_progress_bar_in_pipes),
        T(test_progress_bar_when_forced),
    };
    const struct CMUnitTest sort[] = {
        T(test_round_trip_every_dtype_and_dist),
        T(test_sort_small_and_odd_sizes),
        T(test_sort_in_place_without_output),
        T(test_values_follow_keys_4_bytes),
        T(test_values_follow_keys_8_bytes),
        T(test_values_in_place),
        T(test_stable_ascending),
        T(test_stable_descending),
        T(test_sort_rows_and_segments),
        T(test_sort_segments_errors),
        T(test_float_order),
        T(test_sort_out_of_core_gpu),
        T(test_sort_devices),
        T(test_topk_file_and_rows),
        T(test_topk_errors),
    };
    const struct CMUnitTest errors[] = {
        T(test_error_missing_file),
        T(test_error_size_not_multiple),
        T(test_error_values_wrong_length_leaves_outputs),
        T(test_error_values_not_multiple),
        T(test_error_late_failure_removes_temp_files),
        T(test_error_unknown_dtype),
        T(test_error_unknown_option_and_command),
        T(test_error_bad_numbers),
        T(test_error_same_file_twice),
        T(test_error_dangling_symlink_output),
        T(test_error_iota_beyond_dtype),
        T(test_error_library_status),
    };
    const struct CMUnitTest outputs[] = {
        T(test_output_not_regular_refused), T(test_output_file_size_limit),
        T(test_output_long_names),          T(test_values_commit_survives_sigint),
        T(test_output_read_only_refused),   T(test_output_keeps_owner_and_mode),
    };
    const struct CMUnitTest check[] = {
        T(test_check_detects_unsorted),
        T(test_check_float_semantics),
        T(test_check_permutation),
        T(test_check_errors),
    };
    const struct CMUnitTest bench[] = {
        T(test_bench_with_qsort),
        T(test_bench_pairs_stable),
        T(test_run_main_job),
        T(test_threads_above_cap),
    };

    const char *group = argc > 1 ? argv[1] : "all";
    int all = strcmp(group, "all") == 0, failed = 0, matched = 0;
#define GROUP(name, tests)                                                     \
    if (all || strcmp(group, name) == 0) {                                     \
        matched = 1;                                                           \
        failed += cmocka_run_group_tests_name("cli_" name, tests, NULL, NULL); \
    }
    GROUP("basics", basics)
    GROUP("sort", sort)
    GROUP("errors", errors)
    GROUP("outputs", outputs)
    GROUP("check", check)
    GROUP("bench", bench)
#undef GROUP
    if (!matched) {
        fprintf(stderr, "test_cli: unknown group '%s'\n", group);
        return 2;
    }
    return failed ? 1 : 0;
}
