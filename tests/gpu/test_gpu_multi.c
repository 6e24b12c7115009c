/*
 * test_gpu_multi.c - host arrays sorted out of core on several devices
 * (config devices / device_count; src/cuda/pipeline/workers.cu): keys,
 * pairs and argsort of every dtype, stable, both orders, adversarial
 * distributions (all equal, two values, sorted, reversed, NaNs and +-0.0),
 * sizes that are multiples of nothing, budgets small enough for hundreds of
 * runs and ranges; failures part-way on any device leaving the host arrays
 * byte-identical and naming the device; the device list checks that need a
 * device. Every result is compared byte for byte with the CPU backend
 * (testkit).
 *
 * Two kinds of tests:
 *  - same_device_*: the WARPSORT_TEST_OOC_WORKERS hook runs 2 or 3 workers
 *    on the context's device, each with its own stream, ring, staging
 *    threads and workspace: the several-device code, concurrency and
 *    out-of-order landing included, on any machine with one GPU;
 *  - two_gpus_*: devices {0, 1} (and WARPSORT_ALL_DEVICES); skipped with
 *    fewer than two GPUs.
 * Both kinds also trace two calls (WARPSORT_TRACE, read at create) and check
 * that every worker's device and host spans are in the file, inside their
 * call.
 *
 * Standalone: --quick for a short pass, --filter PATTERN for a subset.
 * Without a CUDA backend or device every test reports SKIPPED and the
 * program exits 77 (ctest: SKIP_RETURN_CODE).
 */
#define _POSIX_C_SOURCE 200809L
#include <cuda_runtime_api.h>

#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "gpu_memory.h"
#include "testkit.h"
#include "wt_cmocka.h"

#define WT_EXIT_SKIPPED 77
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Test hook in the library (src/cuda/pipeline/pipeline.h). */
void ws_pipeline_test_fail_at(warpsort_context_t *ctx, unsigned k);

static int g_have_gpu, g_gpus;
static warpsort_context_t *g_cpu; /* the oracle */
static int g_quick;
static int g_spread_hook; /* the next multi_context sets WARPSORT_TEST_SPREAD */

#define SMALL_RING ((size_t)64 << 10) /* 4 slots of 16 KiB: blocks of 4096 / 2048 items */

#define REQUIRE_GPU() WT_REQUIRE_GPU(g_have_gpu)
#define REQUIRE_TWO_GPUS()                                                     \
    do {                                                                       \
        REQUIRE_GPU();                                                         \
        if (g_gpus < 2) {                                                      \
            print_message("%d CUDA device(s), two needed: skipped\n", g_gpus); \
            skip();                                                            \
        }                                                                      \
    } while (0)

/* A CUDA context for host arrays: ring, device budget (per device), device
 * list (count 0: none) and, when workers > 1, that many workers on device 0
 * through the test hook; with g_spread_hook set, WARPSORT_TEST_SPREAD too
 * (both read at create; g_spread_hook is cleared). */
static warpsort_context_t *multi_context(size_t ring, size_t budget, const int *devices, int count,
                                         unsigned workers) {
    char k[16];
    snprintf(k, sizeof k, "%u", workers);
    if (workers > 1) setenv("WARPSORT_TEST_OOC_WORKERS", k, 1);
    if (g_spread_hook) setenv("WARPSORT_TEST_SPREAD", "1", 1);
    warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
    cfg.backend = WARPSORT_BACKEND_CUDA;
    cfg.host_ring_bytes = ring;
    cfg.device_budget_bytes = budget;
    cfg.devices = devices;
    cfg.device_count = count;
    warpsort_context_t *ctx = NULL;
    const warpsort_status_t st = warpsort_create(&ctx, &cfg);
    unsetenv("WARPSORT_TEST_OOC_WORKERS");
    unsetenv("WARPSORT_TEST_SPREAD");
    g_spread_hook = 0;
    if (st != WARPSORT_OK)
        fail_msg("warpsort_create: %s: %s", warpsort_status_name(st), warpsort_create_error());
    return ctx;
}

struct op_case {
    wt_op_t op;
    size_t second;
    unsigned flags;
};
static const struct op_case k_ops[] = {
    {WT_OP_SORT, 0, 0},
    {WT_OP_SORT, 0, WARPSORT_DESCENDING},
    {WT_OP_PAIRS, 4, WARPSORT_STABLE},
    {WT_OP_PAIRS, 8, WARPSORT_STABLE | WARPSORT_DESCENDING},
    {WT_OP_PAIRS, 4, 0},
    {WT_OP_ARGSORT, 4, 0},
    {WT_OP_ARGSORT, 8, WARPSORT_DESCENDING},
};

/* The adversarial distributions: every key equal (ranges are cut inside one
 * run of equal keys), two values, sorted and reversed (each range reads one
 * or two runs), NaNs of both signs with +-0.0 and infinities, and random. */
#define ADVERSARIAL                                                                      \
    (1u << KEYGEN_RANDOM | 1u << KEYGEN_EQUAL | 1u << KEYGEN_TWO | 1u << KEYGEN_SORTED | \
     1u << KEYGEN_REVERSED | 1u << KEYGEN_NAN_MIX | 1u << KEYGEN_SKEWED)

/* Every dtype and operation over sizes and distributions on ctx, host
 * memory of kind mem; returns the failed cases (each logged). */
static size_t run_matrix(warpsort_context_t *ctx, const wt_memory_t *mem, const size_t *sizes,
                         size_t nsizes, unsigned dists, uint64_t seed) {
    size_t failures = 0;
    for (int d = 0; d < WARPSORT_DTYPE_COUNT_; d++) {
        if (g_quick && d != WARPSORT_F32 && d != WARPSORT_U64) continue;
        for (size_t o = 0; o < COUNT(k_ops); o++) {
            wt_matrix_t m = {
                k_ops[o].op, (warpsort_dtype_t)d, k_ops[o].second, k_ops[o].flags, sizes, nsizes,
                dists,       seed + 31 * o + d};
            failures += wt_run_matrix(ctx, mem, &m, g_cpu, stderr);
        }
    }
    return failures;
}

static void run_one(warpsort_context_t *ctx, const wt_memory_t *mem, wt_op_t op,
                    warpsort_dtype_t dt, size_t second, unsigned flags, size_t n,
                    keygen_dist_t dist) {
    const wt_case_t c = {op, dt, second, flags, n, dist, 0x3D1CEull ^ n};
    wt_require_case(ctx, mem, &c, g_cpu);
}

/* sort_copy of n f32 keys (NaNs, +-0.0) descending: keys_in only read,
 * keys_out written at the end, equal to the CPU backend's. */
static void sort_copy_f32(warpsort_context_t *ctx, size_t n, uint64_t seed) {
    float *in = malloc(n * 4), *out = malloc(n * 4), *ref = malloc(n * 4), *keep = malloc(n * 4);
    assert_true(in && out && ref && keep);
    keygen_fill(in, n, WARPSORT_F32, KEYGEN_NAN_MIX, seed);
    memcpy(keep, in, n * 4);
    memcpy(ref, in, n * 4);
    assert_int_equal(warpsort_sort_copy(ctx, in, out, n, WARPSORT_F32, WARPSORT_DESCENDING),
                     WARPSORT_OK);
    assert_int_equal(warpsort_sort(g_cpu, ref, n, WARPSORT_F32, WARPSORT_DESCENDING), WARPSORT_OK);
    assert_memory_equal(out, ref, n * 4);
    assert_memory_equal(in, keep, n * 4);
    free(in);
    free(out);
    free(ref);
    free(keep);
}

/* The failures that involve no device: out of core, the calling thread
 * allocates the host scratch before any device work of the call (the
 * workers' contexts and rings come before it, the runs after it) and copies
 * the result from it into the caller's arrays after the last device is done,
 * both in host memory alone, so no device failed and none is named
 * (warpsort.h, "Host arrays on several GPUs"). The whole message must be the
 * checkpoint's: the in-core checkpoint of the same name, which waits for a
 * device and copies from it, is named like every other. */
static int host_only_failure(const char *why) {
    return strcmp(why, "forced failure (test hook) at host scratch") == 0 ||
           strcmp(why, "forced failure (test hook) at writing the result back") == 0;
}

/* Runs op on host arrays with the k-th checkpoint (counted over all
 * workers) failing, for k = 1, 2, ... until a call gets past every one:
 * each failure must leave the arrays byte-identical and say which device
 * failed ("CUDA device"), unless it involved none (host_only_failure); the
 * final success must match the CPU backend. route: where the call goes,
 * told by where it failed: out of core (some failure is at phase 2's
 * "sorting a range"), spread across the workers (some at "spread: ...",
 * none at a run, range or host scratch), or in core on the context's
 * device (none of these). */
enum route { IN_CORE, OUT_OF_CORE, SPREAD };
static void fail_everywhere(warpsort_context_t *ctx, wt_op_t op, warpsort_dtype_t dt, size_t second,
                            unsigned flags, size_t n, enum route route) {
    const size_t kb = warpsort_dtype_size(dt);
    unsigned char *keys = malloc(n * kb), *second_arr = malloc(n * 8);
    unsigned char *orig_k = malloc(n * kb), *orig_s = malloc(n * 8);
    assert_true(keys && second_arr && orig_k && orig_s);
    keygen_fill(orig_k, n, dt, KEYGEN_TWO, 1234);
    for (size_t i = 0; i < n * 8; i++) orig_s[i] = (unsigned char)(i * 29 + 3);
    if (op == WT_OP_PAIRS) wt_fill_iota(orig_s, n, second);
    int failed_calls = 0, named = 0, host_only = 0, ranges = 0, runs = 0, spread = 0;
    for (unsigned k = 1; k < 100000; k++) {
        memcpy(keys, orig_k, n * kb);
        memcpy(second_arr, orig_s, n * 8);
        ws_pipeline_test_fail_at(ctx, k);
        const warpsort_status_t st =
            op == WT_OP_ARGSORT ? warpsort_argsort(ctx, keys, second_arr, n, dt, second, flags)
            : op == WT_OP_PAIRS ? warpsort_sort_pairs(ctx, keys, second_arr, n, dt, second, flags)
                                : warpsort_sort(ctx, keys, n, dt, flags);
        if (st == WARPSORT_OK) break;
        failed_calls++;
        const char *why = warpsort_last_error(ctx);
        if (st != WARPSORT_OUT_OF_MEMORY || !strstr(why, "test hook"))
            fail_msg("k=%u: %s: %s", k, warpsort_status_name(st), why);
        if (strstr(why, "CUDA device"))
            named++;
        else if (host_only_failure(why))
            host_only++;
        else
            fail_msg("k=%u: the failure names no device: %s", k, why);
        runs += strstr(why, "at sorting a run") != NULL;
        ranges += strstr(why, "at sorting a range") != NULL;
        spread += strstr(why, "at spread: ") != NULL;
        if (memcmp(keys, orig_k, n * kb) != 0) fail_msg("k=%u: keys changed by a failed call", k);
        if (memcmp(second_arr, orig_s, n * 8) != 0)
            fail_msg("k=%u: %s changed by a failed call", k,
                     op == WT_OP_ARGSORT ? "indices" : "values");
    }
    ws_pipeline_test_fail_at(ctx, 0);
    if (failed_calls < 3) fail_msg("only %d checkpoints reached", failed_calls);
    if (route == OUT_OF_CORE && !ranges)
        fail_msg("no failure while sorting a range: the call did not go out of core");
    if (route != OUT_OF_CORE && (runs || ranges || host_only))
        fail_msg("%d failures at runs, ranges or host scratch: the call went out of core",
                 runs + ranges + host_only);
    if (route == SPREAD && !spread) fail_msg("no failure in a spread phase: the call stayed put");
    if (route != SPREAD && spread) fail_msg("%d failures in spread phases", spread);
    print_message("%s n=%zu %s: %d forced failures (%d naming a device, %d on host memory "
                  "alone), arrays unchanged\n",
                  wt_op_name(op), n,
                  route == OUT_OF_CORE ? "out of core"
                  : route == SPREAD    ? "spread"
                                       : "in core",
                  failed_calls, named, host_only);
    unsigned char *ref_k = malloc(n * kb), *ref_s = malloc(n * 8);
    assert_true(ref_k && ref_s);
    memcpy(ref_k, orig_k, n * kb);
    memcpy(ref_s, orig_s, n * 8);
    const warpsort_status_t st =
        op == WT_OP_ARGSORT ? warpsort_argsort(g_cpu, ref_k, ref_s, n, dt, second, flags)
        : op == WT_OP_PAIRS ? warpsort_sort_pairs(g_cpu, ref_k, ref_s, n, dt, second, flags)
                            : warpsort_sort(g_cpu, ref_k, n, dt, flags);
    assert_int_equal(st, WARPSORT_OK);
    assert_memory_equal(keys, ref_k, n * kb);
    if (op != WT_OP_SORT && (op == WT_OP_ARGSORT || (flags & WARPSORT_STABLE)))
        assert_memory_equal(second_arr, ref_s, n * second);
    free(ref_k);
    free(ref_s);
    free(keys);
    free(second_arr);
    free(orig_k);
    free(orig_s);
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

#define TRACE_CALLS 2
/* The trace file (WARPSORT_TRACE) of TRACE_CALLS calls on `workers`
 * workers whose lanes begin with prefix[w] ("dev0.w1 "): every row parses,
 * ends no earlier than it starts and lies inside its call (wall[call] ms
 * long; time zero is taken inside the call, device times may sit a few
 * microseconds late), no span was dropped, and every call has, for every
 * worker, device spans (h2d, compute, d2h) and host spans (host, phase) that
 * include sorting a run and a range. */
static void check_trace(const char *path, const double *wall, const char *const *prefix,
                        unsigned workers) {
    FILE *f = fopen(path, "r");
    if (!f) fail_msg("cannot read the trace %s", path);
    char line[512];
    if (!fgets(line, sizeof line, f) || strcmp(line, "call,lane,what,start_ms,end_ms\n") != 0)
        fail_msg("trace %s: bad header '%s'", path, line);
    /* [call][worker]: device spans, host spans, runs sorted, ranges sorted */
    unsigned seen[TRACE_CALLS][4][4];
    memset(seen, 0, sizeof seen);
    size_t rows = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#') fail_msg("trace: %s", line); /* spans dropped */
        unsigned call = 0;
        char lane[64], what[64];
        double t0 = 0, t1 = 0;
        if (sscanf(line, "%u,%63[^,],%63[^,],%lf,%lf", &call, lane, what, &t0, &t1) != 5 ||
            call >= TRACE_CALLS)
            fail_msg("trace: bad row '%s'", line);
        if (t1 < t0 || t0 < -0.01 || t1 > wall[call] + 5.0)
            fail_msg("trace: span outside call %u (%.3f ms): '%s'", call, wall[call], line);
        unsigned w = 0;
        while (w < workers && strncmp(lane, prefix[w], strlen(prefix[w])) != 0) w++;
        if (w == workers) fail_msg("trace: lane '%s' names no worker", lane);
        const char *kind = lane + strlen(prefix[w]);
        const int dev = !strcmp(kind, "h2d") || !strcmp(kind, "compute") || !strcmp(kind, "d2h");
        if (!dev && strcmp(kind, "host") != 0 && strcmp(kind, "phase") != 0)
            fail_msg("trace: unknown lane '%s'", lane);
        seen[call][w][dev ? 0 : 1]++;
        seen[call][w][2] += strcmp(what, "sorting a run") == 0;
        seen[call][w][3] += strcmp(what, "sorting a range") == 0;
        rows++;
    }
    fclose(f);
    for (unsigned c = 0; c < TRACE_CALLS; c++)
        for (unsigned w = 0; w < workers; w++) {
            const unsigned *k = seen[c][w];
            if (!k[0] || !k[1] || !k[2] || !k[3])
                fail_msg("trace: call %u, worker '%s': %u device spans, %u host spans, "
                         "%u runs, %u ranges",
                         c, prefix[w], k[0], k[1], k[2], k[3]);
        }
    print_message("trace: %zu spans of %u workers in %u calls\n", rows, workers, TRACE_CALLS);
}

/* TRACE_CALLS out-of-core sorts of u32 keys (ring SMALL_RING, 512 KiB of
 * device budget a worker: dozens of runs and ranges) on a context created
 * with WARPSORT_TRACE set, then check_trace. */
static void traced_calls(const int *devices, int count, unsigned workers,
                         const char *const *prefix) {
    char path[] = "/tmp/warpsort_trace_XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0) fail_msg("mkstemp failed");
    close(fd);
    setenv("WARPSORT_TRACE", path, 1);
    warpsort_context_t *ctx =
        multi_context(SMALL_RING, ((size_t)512 << 10) * (devices ? 1 : workers), devices, count,
                      devices ? 0 : workers);
    unsetenv("WARPSORT_TRACE");
    const size_t n = 1000003;
    uint32_t *keys = malloc(n * 4), *ref = malloc(n * 4);
    assert_true(keys && ref);
    double wall[TRACE_CALLS];
    for (unsigned c = 0; c < TRACE_CALLS; c++) {
        keygen_fill(keys, n, WARPSORT_U32, KEYGEN_RANDOM, 0x7ACEull + c);
        memcpy(ref, keys, n * 4);
        const double t0 = now_ms();
        const warpsort_status_t st = warpsort_sort(ctx, keys, n, WARPSORT_U32, 0);
        wall[c] = now_ms() - t0;
        if (st != WARPSORT_OK)
            fail_msg("%s: %s", warpsort_status_name(st), warpsort_last_error(ctx));
        assert_int_equal(warpsort_sort(g_cpu, ref, n, WARPSORT_U32, 0), WARPSORT_OK);
        assert_memory_equal(keys, ref, n * 4);
    }
    warpsort_destroy(ctx);
    free(keys);
    free(ref);
    check_trace(path, wall, prefix, workers);
    unlink(path);
}

/*--- several workers on one device (the test hook) ---*/

/* Sizes that are multiples of nothing, under budgets of a few hundred KiB
 * per worker: runs of a few thousand items, up to hundreds of runs and
 * ranges taken by 2 and 3 workers at once. */
static void test_same_device_matrix(void **state) {
    (void)state;
    REQUIRE_GPU();
    const size_t sizes[] = {100003, 700001};
    size_t failures = 0;
    for (unsigned workers = 2; workers <= 3; workers++) {
        warpsort_context_t *ctx =
            multi_context(SMALL_RING, (size_t)workers << 20, NULL, 0, workers);
        failures += run_matrix(ctx, &wt_host_memory, sizes, g_quick ? 1 : COUNT(sizes),
                               g_quick ? (1u << KEYGEN_RANDOM | 1u << KEYGEN_EQUAL) : ADVERSARIAL,
                               0xA11ull * workers);
        warpsort_destroy(ctx);
    }
    assert_int_equal(failures, 0);
}

/* Pinned inputs, sort_copy and the default ring (32 MiB slots: 2^24+ items
 * in runs that are themselves cut into pieces), with 2 workers. */
static void test_same_device_memory_kinds(void **state) {
    (void)state;
    REQUIRE_GPU();
    warpsort_context_t *ctx = multi_context(SMALL_RING, (size_t)2 << 20, NULL, 0, 2);
    run_one(ctx, &wt_pinned_memory, WT_OP_PAIRS, WARPSORT_U64, 4, WARPSORT_STABLE, 300007,
            KEYGEN_FEW);
    run_one(ctx, &wt_pinned_memory, WT_OP_ARGSORT, WARPSORT_F64, 8, WARPSORT_DESCENDING, 300007,
            KEYGEN_NAN_MIX);
    sort_copy_f32(ctx, 250009, 77);
    warpsort_destroy(ctx);
    if (g_quick) return;
    ctx = multi_context(0, (size_t)128 << 20, NULL, 0, 2);
    const size_t big = ((size_t)1 << 25) + 11;
    run_one(ctx, &wt_host_memory, WT_OP_SORT, WARPSORT_U32, 0, 0, big, KEYGEN_RANDOM);
    run_one(ctx, &wt_host_memory, WT_OP_PAIRS, WARPSORT_F32, 4, WARPSORT_STABLE, big / 2,
            KEYGEN_TWO);
    warpsort_destroy(ctx);
}

/* The k-th checkpoint over all workers fails, for every k, out of core and
 * in core; fail_everywhere checks which route each case took. The u32 and
 * f32 sorts out of core hold more bytes than the budget (the in-core
 * workspace holds at least the array); the pairs and argsort ones (720 KB)
 * go out of core through what the in-core workspace adds to the array. */
static void test_same_device_failures(void **state) {
    (void)state;
    REQUIRE_GPU();
    /* 1 MiB: 512 KiB a worker */
    warpsort_context_t *ctx = multi_context(SMALL_RING, (size_t)1 << 20, NULL, 0, 2);
    fail_everywhere(ctx, WT_OP_PAIRS, WARPSORT_I64, 4, WARPSORT_STABLE, 60013, OUT_OF_CORE);
    fail_everywhere(ctx, WT_OP_ARGSORT, WARPSORT_F64, 8, WARPSORT_DESCENDING, 45007, OUT_OF_CORE);
    if (!g_quick) fail_everywhere(ctx, WT_OP_SORT, WARPSORT_U32, 0, 0, 300007, OUT_OF_CORE);
    warpsort_destroy(ctx);
    /* A fresh context (768 KiB: 256 KiB a worker): the first call out of
     * core also starts the workers' contexts and the context's own ring.
     * Then in core on the context's device alone, still named. */
    ctx = multi_context(SMALL_RING, (size_t)3 << 18, NULL, 0, 3);
    fail_everywhere(ctx, WT_OP_SORT, WARPSORT_F32, 0, WARPSORT_DESCENDING, 200003, OUT_OF_CORE);
    fail_everywhere(ctx, WT_OP_PAIRS, WARPSORT_F32, 4, WARPSORT_STABLE, 20011, IN_CORE);
    warpsort_destroy(ctx);
}

/* A budget that leaves a worker less than one run: a clear error naming the
 * budget, the arrays untouched. */
static void test_same_device_budget_too_small(void **state) {
    (void)state;
    REQUIRE_GPU();
    warpsort_context_t *ctx = multi_context(SMALL_RING, 2048, NULL, 0, 2);
    const size_t n = 100000;
    uint32_t *keys = malloc(n * 4), *orig = malloc(n * 4);
    assert_true(keys && orig);
    keygen_fill(keys, n, WARPSORT_U32, KEYGEN_RANDOM, 5);
    memcpy(orig, keys, n * 4);
    assert_int_equal(warpsort_sort(ctx, keys, n, WARPSORT_U32, 0), WARPSORT_OUT_OF_MEMORY);
    assert_non_null(strstr(warpsort_last_error(ctx), "budget"));
    assert_memory_equal(keys, orig, n * 4);
    free(keys);
    free(orig);
    warpsort_destroy(ctx);
}

/* The trace of 2 workers on device 0: lanes "dev0.w0 ..." and "dev0.w1 ". */
static void test_same_device_trace(void **state) {
    (void)state;
    REQUIRE_GPU();
    static const char *const prefix[2] = {"dev0.w0 ", "dev0.w1 "};
    traced_calls(NULL, 0, 2, prefix);
}

/*--- in core across the workers (spread.cu) ---*/

/* The spread path on 2 and 3 workers of one device (WARPSORT_TEST_SPREAD
 * with the workers hook): every dtype and operation, the adversarial
 * distributions, sizes that are multiples of nothing (shares of unequal
 * length), pinned memory and sort_copy; then the route itself, told by the
 * failures (fail_everywhere), at every checkpoint. */
static void test_same_device_spread(void **state) {
    (void)state;
    REQUIRE_GPU();
    const size_t sizes[] = {100003, 700001};
    size_t failures = 0;
    for (unsigned workers = 2; workers <= 3; workers++) {
        g_spread_hook = 1;
        warpsort_context_t *ctx =
            multi_context(SMALL_RING, (size_t)workers << 24, NULL, 0, workers);
        failures += run_matrix(ctx, &wt_host_memory, sizes, g_quick ? 1 : COUNT(sizes),
                               g_quick ? (1u << KEYGEN_RANDOM | 1u << KEYGEN_EQUAL) : ADVERSARIAL,
                               0x5B2ull * workers);
        run_one(ctx, &wt_pinned_memory, WT_OP_PAIRS, WARPSORT_U64, 4, WARPSORT_STABLE, 300007,
                KEYGEN_FEW);
        sort_copy_f32(ctx, 250009, 78);
        fail_everywhere(ctx, WT_OP_PAIRS, WARPSORT_I64, 4, WARPSORT_STABLE, 60013, SPREAD);
        if (!g_quick || workers == 3)
            fail_everywhere(ctx, WT_OP_ARGSORT, WARPSORT_F32, 8, WARPSORT_DESCENDING, 45007,
                            SPREAD);
        warpsort_destroy(ctx);
    }
    assert_int_equal(failures, 0);
}

/*--- two GPUs ---*/

static const int k_two[2] = {0, 1};

static void test_two_gpus_matrix(void **state) {
    (void)state;
    REQUIRE_TWO_GPUS();
    warpsort_context_t *ctx = multi_context(SMALL_RING, (size_t)512 << 10, k_two, 2, 0);
    const size_t sizes[] = {200003, 1000003};
    const size_t failures =
        run_matrix(ctx, &wt_host_memory, sizes, g_quick ? 1 : COUNT(sizes),
                   g_quick ? (1u << KEYGEN_RANDOM | 1u << KEYGEN_EQUAL) : ADVERSARIAL, 0x2D2ull);
    run_one(ctx, &wt_pinned_memory, WT_OP_PAIRS, WARPSORT_I32, 8, WARPSORT_STABLE, 400009,
            KEYGEN_REVERSED);
    warpsort_destroy(ctx);
    assert_int_equal(failures, 0);
}

/* WARPSORT_ALL_DEVICES, the default ring and a 64 MiB budget per device:
 * 2^25 keys in runs cut into pieces, pageable and pinned; a list in the
 * other order with device 1 as the context's device. */
static void test_two_gpus_all_devices(void **state) {
    (void)state;
    REQUIRE_TWO_GPUS();
    warpsort_context_t *ctx = multi_context(0, (size_t)64 << 20, NULL, WARPSORT_ALL_DEVICES, 0);
    const size_t n = g_quick ? ((size_t)1 << 23) + 5 : ((size_t)1 << 25) + 11;
    run_one(ctx, &wt_host_memory, WT_OP_SORT, WARPSORT_U32, 0, 0, n, KEYGEN_RANDOM);
    run_one(ctx, &wt_pinned_memory, WT_OP_SORT, WARPSORT_F64, 0, WARPSORT_DESCENDING, n / 2,
            KEYGEN_NAN_MIX);
    run_one(ctx, &wt_host_memory, WT_OP_PAIRS, WARPSORT_U64, 8, WARPSORT_STABLE, n / 4,
            KEYGEN_SKEWED);
    warpsort_destroy(ctx);
    const int reversed[2] = {1, 0};
    warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
    cfg.backend = WARPSORT_BACKEND_CUDA;
    cfg.device = 1;
    cfg.host_ring_bytes = SMALL_RING;
    cfg.device_budget_bytes = (size_t)512 << 10;
    cfg.devices = reversed;
    cfg.device_count = 2;
    assert_int_equal(warpsort_create(&ctx, &cfg), WARPSORT_OK);
    run_one(ctx, &wt_host_memory, WT_OP_ARGSORT, WARPSORT_I64, 8, 0, 300007, KEYGEN_TWO);
    warpsort_destroy(ctx);
}

/* A list of one device that is not the context's: out of core runs there
 * alone, in core stays on the context's device. */
static void test_two_gpus_other_device(void **state) {
    (void)state;
    REQUIRE_TWO_GPUS();
    const int one[1] = {1};
    warpsort_context_t *ctx = multi_context(SMALL_RING, (size_t)512 << 10, one, 1, 0);
    run_one(ctx, &wt_host_memory, WT_OP_PAIRS, WARPSORT_F32, 4, WARPSORT_STABLE, 300007,
            KEYGEN_NAN_MIX);
    run_one(ctx, &wt_host_memory, WT_OP_SORT, WARPSORT_U32, 0, 0, 3001, KEYGEN_RANDOM);
    warpsort_destroy(ctx);
}

static void test_two_gpus_failures(void **state) {
    (void)state;
    REQUIRE_TWO_GPUS();
    warpsort_context_t *ctx = multi_context(SMALL_RING, (size_t)256 << 10, k_two, 2, 0);
    fail_everywhere(ctx, WT_OP_PAIRS, WARPSORT_U64, 8, WARPSORT_STABLE, 60013, OUT_OF_CORE);
    fail_everywhere(ctx, WT_OP_ARGSORT, WARPSORT_I32, 4, 0, 45007, OUT_OF_CORE);
    warpsort_destroy(ctx);
}

/* Spread across two GPUs without the hook, because the array does not fit
 * one device's budget and half of it does (the route told by the failures),
 * and with it on the default ring: peer copies between the devices. */
static void test_two_gpus_spread(void **state) {
    (void)state;
    REQUIRE_TWO_GPUS();
    warpsort_context_t *ctx = multi_context(SMALL_RING, (size_t)3 << 19, k_two, 2, 0);
    fail_everywhere(ctx, WT_OP_SORT, WARPSORT_U32, 0, 0, 300007, SPREAD);
    fail_everywhere(ctx, WT_OP_PAIRS, WARPSORT_F64, 4, WARPSORT_STABLE | WARPSORT_DESCENDING, 66667,
                    SPREAD);
    warpsort_destroy(ctx);
    g_spread_hook = 1;
    ctx = multi_context(SMALL_RING, (size_t)64 << 20, k_two, 2, 0);
    const size_t sizes[] = {200003, 1000003};
    const size_t failures =
        run_matrix(ctx, &wt_host_memory, sizes, g_quick ? 1 : COUNT(sizes),
                   g_quick ? (1u << KEYGEN_RANDOM | 1u << KEYGEN_EQUAL) : ADVERSARIAL, 0x5D2ull);
    warpsort_destroy(ctx);
    g_spread_hook = 1;
    ctx = multi_context(0, 0, k_two, 2, 0);
    const size_t n = g_quick ? ((size_t)1 << 24) + 5 : ((size_t)1 << 26) + 11;
    run_one(ctx, &wt_host_memory, WT_OP_SORT, WARPSORT_U32, 0, 0, n, KEYGEN_RANDOM);
    run_one(ctx, &wt_pinned_memory, WT_OP_ARGSORT, WARPSORT_F32, 8, 0, n / 2, KEYGEN_NAN_MIX);
    run_one(ctx, &wt_host_memory, WT_OP_PAIRS, WARPSORT_U64, 8, WARPSORT_STABLE, n / 4, KEYGEN_TWO);
    warpsort_destroy(ctx);
    assert_int_equal(failures, 0);
}

/* The trace of devices {0, 1}: lanes "dev0 ..." and "dev1 ...", each device's
 * events on the call's time base. */
static void test_two_gpus_trace(void **state) {
    (void)state;
    REQUIRE_TWO_GPUS();
    static const char *const prefix[2] = {"dev0 ", "dev1 "};
    traced_calls(k_two, 2, 2, prefix);
}

/* Ordinals with no device behind them: BACKEND_UNAVAILABLE at create for
 * backend CUDA, naming the entry; AUTO takes the CPU and says why. */
static void test_device_list_range(void **state) {
    (void)state;
    REQUIRE_GPU();
    const int bad[2] = {0, g_gpus};
    warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
    cfg.backend = WARPSORT_BACKEND_CUDA;
    cfg.devices = bad;
    cfg.device_count = 2;
    warpsort_context_t *ctx = NULL;
    assert_int_equal(warpsort_create(&ctx, &cfg), WARPSORT_BACKEND_UNAVAILABLE);
    assert_null(ctx);
    char want[64];
    snprintf(want, sizeof want, "devices[1] = %d", g_gpus);
    if (!strstr(warpsort_create_error(), want))
        fail_msg("create error '%s' does not name %s", warpsort_create_error(), want);
    cfg.backend = WARPSORT_BACKEND_AUTO;
    assert_int_equal(warpsort_create(&ctx, &cfg), WARPSORT_OK);
    assert_int_equal(warpsort_get_backend(ctx), WARPSORT_BACKEND_CPU);
    if (!strstr(warpsort_last_error(ctx), want))
        fail_msg("AUTO's reason '%s' does not name %s", warpsort_last_error(ctx), want);
    warpsort_destroy(ctx);
    /* every device present */
    cfg.backend = WARPSORT_BACKEND_CUDA;
    cfg.devices = NULL;
    cfg.device_count = WARPSORT_ALL_DEVICES;
    assert_int_equal(warpsort_create(&ctx, &cfg), WARPSORT_OK);
    warpsort_destroy(ctx);
}

int main(int argc, char **argv) {
    g_quick = wt_cmocka_options(argc, argv);
    if (g_quick < 0) return 2;
    const int gpu = wt_gpu_probe(NULL);
    if (gpu < 0) return 1;
    g_have_gpu = gpu;
    warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
    if (g_have_gpu && cudaGetDeviceCount(&g_gpus) != cudaSuccess) g_gpus = 0;
    if (g_have_gpu) fprintf(stderr, "%d CUDA device(s)\n", g_gpus);
    cfg.backend = WARPSORT_BACKEND_CPU;
    if (warpsort_create(&g_cpu, &cfg) != WARPSORT_OK) {
        fprintf(stderr, "cannot create the CPU oracle context\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_device_matrix),
        cmocka_unit_test(test_same_device_memory_kinds),
        cmocka_unit_test(test_same_device_failures),
        cmocka_unit_test(test_same_device_budget_too_small),
        cmocka_unit_test(test_same_device_trace),
        cmocka_unit_test(test_same_device_spread),
        cmocka_unit_test(test_two_gpus_matrix),
        cmocka_unit_test(test_two_gpus_all_devices),
        cmocka_unit_test(test_two_gpus_other_device),
        cmocka_unit_test(test_two_gpus_failures),
        cmocka_unit_test(test_two_gpus_spread),
        cmocka_unit_test(test_two_gpus_trace),
        cmocka_unit_test(test_device_list_range),
    };
    int failed = _cmocka_run_group_tests("gpu_multi", tests, COUNT(tests), NULL, NULL);
    warpsort_destroy(g_cpu);
    if (failed) return failed;
    return g_have_gpu ? 0 : WT_EXIT_SKIPPED;
}
