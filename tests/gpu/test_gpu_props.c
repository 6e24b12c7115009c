/*
 * test_gpu_props.c - the property matrix on the CUDA backend, on device
 * memory and on host memory, each result also compared byte for byte with
 * the CPU backend wherever the order is determined (keys always; values for
 * stable pairs; argsort indices). Plus sizes around every tile size, large
 * inputs (2^24, 2^28, past 2^32), caller-provided workspace, pinned and
 * mixed host/device pointers, a user stream; every row of the tuning table
 * (shared-memory limits forced, test hook WARPSORT_SMEM_LIMIT) and the
 * fallback of a device without a usable kernel image (test hook
 * WARPSORT_FORCE_NO_KERNEL_IMAGE).
 *
 * Standalone: copy the binary to a GPU machine and run it; --quick for a
 * short pass, --filter PATTERN (or WARPSORT_TEST_FILTER) for a subset.
 * Without a CUDA backend or device every test reports SKIPPED and the
 * program exits 77 (ctest: SKIP_RETURN_CODE).
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <cuda_runtime_api.h>
#include <stdlib.h>

#include "core/internal.h" /* ws_cuda_family_name */
#include "gpu_memory.h"
#include "testkit.h"
#include "wt_cmocka.h"

#define WT_EXIT_SKIPPED 77

static warpsort_context_t *g_gpu; /* NULL: no CUDA backend or device */
static warpsort_context_t *g_cpu; /* the oracle */
static int g_quick;

#define REQUIRE_GPU() WT_REQUIRE_GPU(g_gpu)

/*--- the matrix ---*/

/* Every size around the tile sizes the CUDA backend may pick (2^11 .. 2^14)
 * with every distribution; 2^k +- 1 further out with fewer. */
static const size_t k_tile_sizes[] = {0,    1,    2,    31,    32,    33,   63,   64,
                                      65,   1000, 2047, 2048,  2049,  4095, 4096, 4097,
                                      8191, 8192, 8193, 16383, 16384, 16385};
static const size_t k_pow2_sizes[] = {32767, 32769, 65535, 65536, 131071, 131073, 524289};
static const size_t k_large_sizes[] = {1048575, 1048577, 2097153};
static const size_t k_quick_sizes[] = {0, 1, 31, 32, 33, 8191, 8192, 8193, 65537};
static const size_t k_host_sizes[] = {0, 1, 33, 8193, 65537, 1048577};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static size_t run_sizes(const wt_prop_param_t *p, const wt_memory_t *mem, const size_t *sizes,
                        size_t count, unsigned dists) {
    wt_matrix_t m = {p->op, p->dtype, p->second_bytes, p->flags,
                     sizes, count,    dists,           0x5EEDull + (uint64_t)p->flags};
    return wt_run_matrix(g_gpu, mem, &m, g_cpu, stderr);
}

static void test_property_matrix(void **state) {
    REQUIRE_GPU();
    const wt_prop_param_t *p = *state;
    const unsigned some = 1u << KEYGEN_RANDOM | 1u << KEYGEN_FEW | 1u << KEYGEN_NAN_MIX |
                          1u << KEYGEN_SORTED | 1u << KEYGEN_NARROW;
    size_t failures = 0;
    if (g_quick) {
        failures += run_sizes(p, &wt_device_memory, k_quick_sizes, COUNT(k_quick_sizes),
                              1u << KEYGEN_RANDOM | 1u << KEYGEN_NAN_MIX | 1u << KEYGEN_FEW);
        failures += run_sizes(p, &wt_host_memory, k_host_sizes, 4, 1u << KEYGEN_NAN_MIX);
    } else {
        failures +=
            run_sizes(p, &wt_device_memory, k_tile_sizes, COUNT(k_tile_sizes), WT_ALL_DISTS);
        failures += run_sizes(p, &wt_device_memory, k_pow2_sizes, COUNT(k_pow2_sizes), some);
        failures += run_sizes(p, &wt_device_memory, k_large_sizes, COUNT(k_large_sizes),
                              1u << KEYGEN_RANDOM);
        failures += run_sizes(p, &wt_host_memory, k_host_sizes, COUNT(k_host_sizes),
                              1u << KEYGEN_RANDOM | 1u << KEYGEN_NAN_MIX);
    }
    assert_int_equal(failures, 0);
}

/*--- single cases ---*/

static void run_one(const wt_memory_t *mem, wt_op_t op, warpsort_dtype_t dt, size_t second,
                    unsigned flags, size_t n, keygen_dist_t dist, warpsort_context_t *oracle) {
    const wt_case_t c = {op, dt, second, flags, n, dist, 0xB16ull ^ n};
    wt_require_case(g_gpu, mem, &c, oracle);
}

/* Does the device have this much free memory? */
static int device_has(double bytes) {
    size_t free_bytes = 0, total = 0;
    if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return (double)free_bytes > bytes;
}

static void test_2_24_every_dtype(void **state) {
    (void)state;
    REQUIRE_GPU();
    const size_t n = (size_t)1 << 24;
    for (int d = 0; d < WARPSORT_DTYPE_COUNT_; d++) {
        warpsort_dtype_t dt = (warpsort_dtype_t)d;
        if (g_quick && dt != WARPSORT_U32 && dt != WARPSORT_F64) continue;
        run_one(&wt_device_memory, WT_OP_SORT, dt, 0, 0, n, KEYGEN_RANDOM, g_cpu);
        run_one(&wt_device_memory, WT_OP_PAIRS, dt, 4, WARPSORT_DESCENDING | WARPSORT_STABLE, n,
                KEYGEN_FEW, g_cpu);
        if (!g_quick) {
            run_one(&wt_device_memory, WT_OP_SORT, dt, 0, WARPSORT_DESCENDING, n, KEYGEN_NAN_MIX,
                    g_cpu);
            run_one(&wt_device_memory, WT_OP_PAIRS, dt, 8, 0, n, KEYGEN_RANDOM, g_cpu);
            run_one(&wt_device_memory, WT_OP_ARGSORT, dt, 4, 0, n, KEYGEN_NARROW, g_cpu);
        }
    }
    run_one(&wt_host_memory, WT_OP_SORT, WARPSORT_U32, 0, 0, n + 1, KEYGEN_RANDOM, g_cpu);
    /* Either side of the sample sort's thresholds (tuning.cuh): the largest
     * merge-path sort and the smallest sample sort of 4-byte pairs and 8-byte
     * keys alone (2^23) and of 8-byte pairs (2^22). */
    const size_t half = n / 2, quarter = n / 4;
    run_one(&wt_device_memory, WT_OP_PAIRS, WARPSORT_U32, 4, 0, half - 1, KEYGEN_RANDOM, g_cpu);
    run_one(&wt_device_memory, WT_OP_PAIRS, WARPSORT_U32, 4, 0, half, KEYGEN_RANDOM, g_cpu);
    run_one(&wt_device_memory, WT_OP_SORT, WARPSORT_U64, 0, 0, half - 1, KEYGEN_RANDOM, g_cpu);
    run_one(&wt_device_memory, WT_OP_SORT, WARPSORT_U64, 0, 0, half, KEYGEN_RANDOM, g_cpu);
    run_one(&wt_device_memory, WT_OP_PAIRS, WARPSORT_F64, 8, WARPSORT_STABLE, quarter - 1,
            KEYGEN_FEW, g_cpu);
    run_one(&wt_device_memory, WT_OP_PAIRS, WARPSORT_F64, 8, WARPSORT_STABLE, quarter, KEYGEN_FEW,
            g_cpu);
}

static void test_2_28_u32(void **state) {
    (void)state;
    REQUIRE_GPU();
    if (g_quick) skip();
    const size_t n = (size_t)1 << 28;
    if (!device_has(4.0 * (double)n * 4)) skip();
    run_one(&wt_device_memory, WT_OP_SORT, WARPSORT_U32, 0, 0, n, KEYGEN_RANDOM, g_cpu);
}

/* The sample sort's switch points on small inputs: contexts whose plan
 * limits (test hooks, src/core/test_hooks.h: read from the environment
 * when the context is created) put every n above one tile on the sample path, with
 * all 255 splitters (one level), 15 (two or three levels), 3 (deep
 * recursion), and 3 in a single level (buckets too big for the chip: the
 * one-block fallback); and keys alone above 2^21, where a level draws all
 * 1023 splitters of the wide tree (plan.cuh) and a last level of 31 takes
 * the buckets left over a tile. Every distribution, so equality buckets, empty
 * buckets, one giant bucket, NaNs and +-0.0 among the splitters and stable
 * ties across bucket boundaries all occur. */
static warpsort_context_t *sample_context(const char *splitters, const char *levels) {
    setenv("WARPSORT_SAMPLE_MIN_N", "0", 1);
    setenv("WARPSORT_SAMPLE_SPLITTERS", splitters, 1);
    setenv("WARPSORT_SAMPLE_LEVELS", levels, 1);
    warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
    cfg.backend = WARPSORT_BACKEND_CUDA;
    warpsort_context_t *ctx = NULL;
    const warpsort_status_t st = warpsort_create(&ctx, &cfg);
    unsetenv("WARPSORT_SAMPLE_MIN_N");
    unsetenv("WARPSORT_SAMPLE_SPLITTERS");
    unsetenv("WARPSORT_SAMPLE_LEVELS");
    if (st != WARPSORT_OK) fail_msg("warpsort_create: %s", warpsort_status_name(st));
    return ctx;
}

/* One plan per test, so a sanitizer run can take the four in parallel;
 * WARPSORT_TEST_DTYPE=NAME narrows a plan to one dtype, to split it further
 * (scripts/gpu.sh sanitize-split, PATTERN@DTYPE). */
struct sample_plan {
    const char *test_name, *splitters, *levels;
    int wide; /* keys alone (the wide tree's only users) at sizes that fill it */
};
static const struct sample_plan k_sample_plans[] = {
    {"test_sample_plan_255_splitters", "255", "4", 0},
    {"test_sample_plan_15_splitters", "15", "4", 0},
    {"test_sample_plan_3_splitters", "3", "4", 0},
    {"test_sample_plan_3_splitters_one_level", "3", "1", 0},
    {"test_sample_plan_1023_splitters", "1023", "4", 1},
};

/* *state: the plan (main gives each entry of k_sample_plans a test). */
static void test_sample_plan(void **state) {
    const struct sample_plan *plan = *state;
    const size_t p = (size_t)(plan - k_sample_plans); /* seeds the inputs */
    REQUIRE_GPU();
    static const size_t sizes[] = {8193, 12289, 16385, 65537, 131071, 300007};
    static const size_t quick_sizes[] = {16385, 131071};
    static const size_t wide_sizes[] = {2097153, 3145735};
    static const size_t wide_quick_sizes[] = {2097153};
    static const struct {
        wt_op_t op;
        size_t second;
        unsigned flags;
    } kinds[] = {{WT_OP_SORT, 0, 0}, /* the first two: keys alone */
                 {WT_OP_SORT, 0, WARPSORT_DESCENDING},
                 {WT_OP_PAIRS, 4, WARPSORT_STABLE},
                 {WT_OP_PAIRS, 8, WARPSORT_DESCENDING | WARPSORT_STABLE},
                 {WT_OP_PAIRS, 4, 0},
                 {WT_OP_ARGSORT, 4, 0}};
    size_t failures = 0;
    const char *only_name = getenv("WARPSORT_TEST_DTYPE");
    warpsort_dtype_t only = WARPSORT_DTYPE_COUNT_;
    if (only_name && *only_name && warpsort_dtype_from_name(only_name, &only) != WARPSORT_OK)
        fail_msg("WARPSORT_TEST_DTYPE=%s: not a dtype", only_name);
    warpsort_context_t *ctx = sample_context(plan->splitters, plan->levels);
    for (int d = 0; d < WARPSORT_DTYPE_COUNT_; d++) {
        if (only != WARPSORT_DTYPE_COUNT_ && d != (int)only) continue;
        if (g_quick && only == WARPSORT_DTYPE_COUNT_ && d != WARPSORT_U32 && d != WARPSORT_F64)
            continue;
        for (size_t k = 0; k < (plan->wide ? 2 : COUNT(kinds)); k++) {
            wt_matrix_t m = {kinds[k].op,
                             (warpsort_dtype_t)d,
                             kinds[k].second,
                             kinds[k].flags,
                             plan->wide ? (g_quick ? wide_quick_sizes : wide_sizes)
                                        : (g_quick ? quick_sizes : sizes),
                             plan->wide ? (g_quick ? COUNT(wide_quick_sizes) : COUNT(wide_sizes))
                                        : (g_quick ? COUNT(quick_sizes) : COUNT(sizes)),
                             WT_ALL_DISTS,
                             0x5A3Dull + p};
            const size_t f = wt_run_matrix(ctx, &wt_device_memory, &m, g_cpu, stderr);
            if (f)
                fprintf(stderr, "  (plan: %s splitters, %s levels)\n", plan->splitters,
                        plan->levels);
            failures += f;
        }
    }
    warpsort_destroy(ctx);
    assert_int_equal(failures, 0);
}
/* 2^32 + 12345 u32 keys: n is size_t end to end. Needs > 40 GiB free on the
 * device. Checked on the host: sorted, and the same multiset by an
 * order-independent fingerprint (an exact permutation check would sort
 * another 16 GiB). */
static void test_beyond_2_32(void **state) {
    (void)state;
    REQUIRE_GPU();
    if (g_quick || SIZE_MAX <= UINT32_MAX) skip();
    if (!device_has(40.0 * (double)(1u << 30))) {
        print_message("needs > 40 GiB of free device memory: skipped\n");
        skip();
    }
    const size_t n = ((size_t)1 << 32) + 12345;
    uint32_t *host = malloc(n * sizeof *host);
    if (!host) {
        print_message("cannot allocate 16 GiB on the host: skipped\n");
        skip();
    }
    void *dev = wt_device_memory.alloc(n * sizeof *host, NULL);
    if (!dev) {
        free(host);
        fail_msg("cudaMalloc of %zu keys failed although memory was free", n);
    }
    keygen_fill(host, n, WARPSORT_U32, KEYGEN_RANDOM, 4242);
    wt_fingerprint_t before = wt_fingerprint(host, n, 4);
    CUDA_OK(cudaMemcpy(dev, host, n * sizeof *host, cudaMemcpyHostToDevice));
    warpsort_status_t st = warpsort_sort(g_gpu, dev, n, WARPSORT_U32, 0);
    if (st == WARPSORT_OK) st = warpsort_synchronize(g_gpu);
    if (st != WARPSORT_OK) fail_msg("%s: %s", warpsort_status_name(st), warpsort_last_error(g_gpu));
    CUDA_OK(cudaMemcpy(host, dev, n * sizeof *host, cudaMemcpyDeviceToHost));
    wt_device_memory.release(dev, NULL);
    char msg[256];
    if (wt_check_sorted(host, n, WARPSORT_U32, 0, msg, sizeof msg)) fail_msg("%s", msg);
    wt_fingerprint_t after = wt_fingerprint(host, n, 4);
    assert_memory_equal(&before, &after, sizeof before);
    free(host);
}

/* Pinned host arrays, and pairs whose keys and values live in different
 * kinds of memory. */
static void test_pinned_and_mixed_memory(void **state) {
    (void)state;
    REQUIRE_GPU();
    const size_t sizes[] = {1, 33, 8193, 1048577};
    for (size_t s = 0; s < COUNT(sizes); s++) {
        run_one(&wt_pinned_memory, WT_OP_PAIRS, WARPSORT_F32, 8, WARPSORT_STABLE, sizes[s],
                KEYGEN_NAN_MIX, g_cpu);
        run_one(&wt_pinned_memory, WT_OP_ARGSORT, WARPSORT_I64, 8, WARPSORT_DESCENDING, sizes[s],
                KEYGEN_FEW, g_cpu);
    }
    /* keys on the device, values on the host, and the other way round */
    for (int keys_on_device = 0; keys_on_device < 2; keys_on_device++) {
        const size_t n = 100003;
        uint64_t *orig = malloc(n * 8), *keys = malloc(n * 8), *vals = malloc(n * 8);
        uint64_t *ref_keys = malloc(n * 8), *ref_vals = malloc(n * 8);
        assert_true(orig && keys && vals && ref_keys && ref_vals);
        keygen_fill(orig, n, WARPSORT_F64, KEYGEN_NAN_MIX, 31 + (uint64_t)keys_on_device);
        void *dev = wt_device_memory.alloc(n * 8, NULL);
        assert_non_null(dev);
        memcpy(keys, orig, n * 8);
        wt_fill_iota(vals, n, 8);
        void *k = keys, *v = vals;
        if (keys_on_device) {
            CUDA_OK(cudaMemcpy(dev, keys, n * 8, cudaMemcpyHostToDevice));
            k = dev;
        } else {
            CUDA_OK(cudaMemcpy(dev, vals, n * 8, cudaMemcpyHostToDevice));
            v = dev;
        }
        unsigned flags = WARPSORT_STABLE | WARPSORT_DESCENDING;
        warpsort_status_t st = warpsort_sort_pairs(g_gpu, k, v, n, WARPSORT_F64, 8, flags);
        if (st == WARPSORT_OK) st = warpsort_synchronize(g_gpu);
        if (st != WARPSORT_OK)
            fail_msg("%s: %s", warpsort_status_name(st), warpsort_last_error(g_gpu));
        if (keys_on_device)
            CUDA_OK(cudaMemcpy(keys, dev, n * 8, cudaMemcpyDeviceToHost));
        else
            CUDA_OK(cudaMemcpy(vals, dev, n * 8, cudaMemcpyDeviceToHost));
        memcpy(ref_keys, orig, n * 8);
        wt_fill_iota(ref_vals, n, 8);
        assert_int_equal(warpsort_sort_pairs(g_cpu, ref_keys, ref_vals, n, WARPSORT_F64, 8, flags),
                         WARPSORT_OK);
        assert_memory_equal(keys, ref_keys, n * 8);
        assert_memory_equal(vals, ref_vals, n * 8);
        wt_device_memory.release(dev, NULL);
        free(orig);
        free(keys);
        free(vals);
        free(ref_keys);
        free(ref_vals);
    }
}

/* Descending is ascending reversed, exactly, NaN patterns included. */
static void test_descending_reverses_ascending(void **state) {
    (void)state;
    REQUIRE_GPU();
    const size_t sizes[] = {1000, 8193, 300001};
    for (int d = 0; d < WARPSORT_DTYPE_COUNT_; d++) {
        warpsort_dtype_t dt = (warpsort_dtype_t)d;
        size_t kb = warpsort_dtype_size(dt);
        for (size_t s = 0; s < COUNT(sizes); s++) {
            const keygen_dist_t dists[] = {KEYGEN_NAN_MIX, KEYGEN_FEW, KEYGEN_RANDOM};
            for (size_t k = 0; k < COUNT(dists); k++) {
                size_t n = sizes[s];
                void *asc = malloc(n * kb), *desc = malloc(n * kb);
                void *dev = wt_device_memory.alloc(n * kb, NULL);
                assert_true(asc && desc && dev);
                keygen_fill(asc, n, dt, dists[k], 555);
                memcpy(desc, asc, n * kb);
                for (int pass = 0; pass < 2; pass++) {
                    void *host = pass ? desc : asc;
                    CUDA_OK(cudaMemcpy(dev, host, n * kb, cudaMemcpyHostToDevice));
                    assert_int_equal(
                        warpsort_sort(g_gpu, dev, n, dt, pass ? WARPSORT_DESCENDING : 0),
                        WARPSORT_OK);
                    assert_int_equal(warpsort_synchronize(g_gpu), WARPSORT_OK);
                    CUDA_OK(cudaMemcpy(host, dev, n * kb, cudaMemcpyDeviceToHost));
                }
                char msg[256];
                if (wt_check_reverse(asc, desc, n, kb, msg, sizeof msg))
                    fail_msg("%s n=%zu %s: %s", warpsort_dtype_name(dt), n,
                             keygen_dist_name(dists[k]), msg);
                wt_device_memory.release(dev, NULL);
                free(asc);
                free(desc);
            }
        }
    }
}

/* Caller-provided workspace: exactly the queried size works (for pairs and
 * argsort); a call needing more fails with WORKSPACE_TOO_SMALL and leaves
 * both arrays as they were; NULL returns to context-managed workspace. */
static void test_caller_workspace(void **state) {
    (void)state;
    REQUIRE_GPU();
    warpsort_context_t *ctx = NULL;
    warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
    cfg.backend = WARPSORT_BACKEND_CUDA;
    assert_int_equal(warpsort_create(&ctx, &cfg), WARPSORT_OK);

    const size_t n = 300007, big = 4 * n;
    size_t pairs_bytes = 0, arg_bytes = 0, big_bytes = 0;
    assert_int_equal(
        warpsort_workspace_size(ctx, n, WARPSORT_U64, 8, WARPSORT_STABLE, &pairs_bytes),
        WARPSORT_OK);
    assert_int_equal(
        warpsort_workspace_size(ctx, n, WARPSORT_F32, 4, WARPSORT_WORKSPACE_ARGSORT, &arg_bytes),
        WARPSORT_OK);
    assert_int_equal(
        warpsort_workspace_size(ctx, big, WARPSORT_U64, 8, WARPSORT_STABLE, &big_bytes),
        WARPSORT_OK);
    size_t given = pairs_bytes > arg_bytes ? pairs_bytes : arg_bytes;
    if (big_bytes <= given)
        fail_msg("workspace does not grow with n: %zu keys need %zu bytes, %zu keys %zu", n, given,
                 big, big_bytes);
    void *ws = wt_device_memory.alloc(given, NULL); /* cudaMalloc: 256-byte aligned */
    assert_non_null(ws);
    assert_int_equal(warpsort_set_workspace(ctx, ws, given), WARPSORT_OK);

    /* exactly enough: sorts correctly (also checked against the CPU) */
    warpsort_context_t *saved = g_gpu;
    g_gpu = ctx;
    run_one(&wt_device_memory, WT_OP_PAIRS, WARPSORT_U64, 8, WARPSORT_STABLE, n, KEYGEN_FEW, g_cpu);
    run_one(&wt_device_memory, WT_OP_ARGSORT, WARPSORT_F32, 4, 0, n, KEYGEN_NAN_MIX, g_cpu);
    g_gpu = saved;

    /* too small: fails, explains, touches nothing */
    uint64_t *keys = malloc(big * 8), *vals = malloc(big * 8);
    uint64_t *back_k = malloc(big * 8), *back_v = malloc(big * 8);
    assert_true(keys && vals && back_k && back_v);
    keygen_fill(keys, big, WARPSORT_U64, KEYGEN_RANDOM, 8);
    wt_fill_iota(vals, big, 8);
    void *dk = wt_device_memory.alloc(big * 8, NULL), *dv = wt_device_memory.alloc(big * 8, NULL);
    assert_true(dk && dv);
    CUDA_OK(cudaMemcpy(dk, keys, big * 8, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dv, vals, big * 8, cudaMemcpyHostToDevice));
    warpsort_status_t st = warpsort_sort_pairs(ctx, dk, dv, big, WARPSORT_U64, 8, WARPSORT_STABLE);
    assert_int_equal(st, WARPSORT_WORKSPACE_TOO_SMALL);
    assert_true(strlen(warpsort_last_error(ctx)) > 0);
    assert_int_equal(warpsort_synchronize(ctx), WARPSORT_OK);
    CUDA_OK(cudaMemcpy(back_k, dk, big * 8, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(back_v, dv, big * 8, cudaMemcpyDeviceToHost));
    assert_memory_equal(back_k, keys, big * 8);
    assert_memory_equal(back_v, vals, big * 8);
    /* host arrays too (the staging copies need workspace as well) */
    memcpy(back_k, keys, big * 8);
    memcpy(back_v, vals, big * 8);
    st = warpsort_sort_pairs(ctx, back_k, back_v, big, WARPSORT_U64, 8, WARPSORT_STABLE);
    assert_int_equal(st, WARPSORT_WORKSPACE_TOO_SMALL);
    assert_memory_equal(back_k, keys, big * 8);
    assert_memory_equal(back_v, vals, big * 8);

    /* a misaligned workspace is refused */
    assert_int_not_equal(warpsort_set_workspace(ctx, (char *)ws + 16, given - 16), WARPSORT_OK);

    /* back to context-managed: the large sort now succeeds */
    assert_int_equal(warpsort_set_workspace(ctx, NULL, 0), WARPSORT_OK);
    st = warpsort_sort_pairs(ctx, dk, dv, big, WARPSORT_U64, 8, WARPSORT_STABLE);
    if (st == WARPSORT_OK) st = warpsort_synchronize(ctx);
    assert_int_equal(st, WARPSORT_OK);
    CUDA_OK(cudaMemcpy(back_k, dk, big * 8, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(back_v, dv, big * 8, cudaMemcpyDeviceToHost));
    char msg[256];
    if (wt_check_sorted(back_k, big, WARPSORT_U64, 0, msg, sizeof msg) ||
        wt_check_values(keys, back_k, back_v, big, WARPSORT_U64, 8, 1, msg, sizeof msg))
        fail_msg("after returning to managed workspace: %s", msg);

    warpsort_destroy(ctx); /* the caller's buffer outlives the context */
    wt_device_memory.release(ws, NULL);
    wt_device_memory.release(dk, NULL);
    wt_device_memory.release(dv, NULL);
    free(keys);
    free(vals);
    free(back_k);
    free(back_v);
}

/* With a workspace set, nk u64 keys (descending) and np f32 keys with u32
 * values (stable) sorted by one captured CUDA graph, replayed twice on new
 * data (random, then few distinct keys, then NaNs): the calls make no
 * allocation and no host synchronisation, and every launch of the paths
 * the sizes take, dependent launches (pdl.cuh) included, replays. */
static void check_graph(size_t nk, size_t np, unsigned seed) {
    cudaStream_t stream;
    CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
    cfg.backend = WARPSORT_BACKEND_CUDA;
    cfg.stream = stream;
    warpsort_context_t *ctx = NULL;
    assert_int_equal(warpsort_create(&ctx, &cfg), WARPSORT_OK);
    size_t kbytes = 0, pbytes = 0;
    assert_int_equal(warpsort_workspace_size(ctx, nk, WARPSORT_U64, 0, 0, &kbytes), WARPSORT_OK);
    assert_int_equal(warpsort_workspace_size(ctx, np, WARPSORT_F32, 4, WARPSORT_STABLE, &pbytes),
                     WARPSORT_OK);
    const size_t bytes = kbytes > pbytes ? kbytes : pbytes;
    void *ws = NULL, *dk = NULL, *dp = NULL, *dv = NULL;
    CUDA_OK(cudaMalloc(&ws, bytes ? bytes : 1));
    CUDA_OK(cudaMalloc(&dk, nk * 8));
    CUDA_OK(cudaMalloc(&dp, np * 4));
    CUDA_OK(cudaMalloc(&dv, np * 4));
    assert_int_equal(warpsort_set_workspace(ctx, ws, bytes), WARPSORT_OK);
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    warpsort_status_t st = warpsort_sort(ctx, dk, nk, WARPSORT_U64, WARPSORT_DESCENDING);
    if (st == WARPSORT_OK)
        st = warpsort_sort_pairs(ctx, dp, dv, np, WARPSORT_F32, 4, WARPSORT_STABLE);
    CUDA_OK(cudaStreamEndCapture(stream, &graph));
    if (st != WARPSORT_OK) fail_msg("captured call: %s", warpsort_last_error(ctx));
    CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
    uint64_t *hk = malloc(nk * 8), *want_k = malloc(nk * 8);
    float *hp = malloc(np * 4), *want_p = malloc(np * 4);
    uint32_t *hv = malloc(np * 4), *want_v = malloc(np * 4);
    assert_true(hk && want_k && hp && want_p && hv && want_v);
    for (unsigned rep = 0; rep < 2; rep++) {
        keygen_fill(hk, nk, WARPSORT_U64, rep ? KEYGEN_FEW : KEYGEN_RANDOM, seed + rep);
        keygen_fill(hp, np, WARPSORT_F32, rep ? KEYGEN_NAN_MIX : KEYGEN_FEW, seed + 10 + rep);
        wt_fill_iota(hv, np, 4);
        CUDA_OK(cudaMemcpy(dk, hk, nk * 8, cudaMemcpyHostToDevice));
        CUDA_OK(cudaMemcpy(dp, hp, np * 4, cudaMemcpyHostToDevice));
        CUDA_OK(cudaMemcpy(dv, hv, np * 4, cudaMemcpyHostToDevice));
        CUDA_OK(cudaGraphLaunch(exec, stream));
        CUDA_OK(cudaStreamSynchronize(stream));
        memcpy(want_k, hk, nk * 8);
        memcpy(want_p, hp, np * 4);
        memcpy(want_v, hv, np * 4);
        assert_int_equal(warpsort_sort(g_cpu, want_k, nk, WARPSORT_U64, WARPSORT_DESCENDING),
                         WARPSORT_OK);
        assert_int_equal(
            warpsort_sort_pairs(g_cpu, want_p, want_v, np, WARPSORT_F32, 4, WARPSORT_STABLE),
            WARPSORT_OK);
        CUDA_OK(cudaMemcpy(hk, dk, nk * 8, cudaMemcpyDeviceToHost));
        CUDA_OK(cudaMemcpy(hp, dp, np * 4, cudaMemcpyDeviceToHost));
        CUDA_OK(cudaMemcpy(hv, dv, np * 4, cudaMemcpyDeviceToHost));
        assert_memory_equal(hk, want_k, nk * 8);
        assert_memory_equal(hp, want_p, np * 4);
        assert_memory_equal(hv, want_v, np * 4);
    }
    CUDA_OK(cudaGraphExecDestroy(exec));
    CUDA_OK(cudaGraphDestroy(graph));
    warpsort_destroy(ctx);
    CUDA_OK(cudaFree(ws));
    CUDA_OK(cudaFree(dk));
    CUDA_OK(cudaFree(dp));
    CUDA_OK(cudaFree(dv));
    CUDA_OK(cudaStreamDestroy(stream));
    free(hk);
    free(want_k);
    free(hp);
    free(want_p);
    free(hv);
    free(want_v);
}

/* Small arrays in one cooperative launch (coop_sort.cu): the path's
 * largest n of keys, and pairs in three tiles. */
static void test_small_graph(void **state) {
    (void)state;
    REQUIRE_GPU();
    check_graph(65536, 40001, 300);
}

/* The chains of launches: u64 keys by the tile sort and four-way merge
 * passes (merge_sort.cu), pairs from WS_SAMPLE_MIN_N by the sample sort
 * (sample_sort.cu) on the devices that run it, the merge path elsewhere. */
static void test_large_graph(void **state) {
    (void)state;
    REQUIRE_GPU();
    check_graph(((size_t)1 << 20) + 3, ((size_t)1 << 22) + 5, 320);
}

/* Work goes onto the context's stream: a sort enqueued on a user stream is
 * complete after warpsort_synchronize. */
static void test_user_stream(void **state) {
    (void)state;
    REQUIRE_GPU();
    cudaStream_t stream;
    CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    warpsort_context_t *ctx = NULL;
    warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
    cfg.backend = WARPSORT_BACKEND_CUDA;
    cfg.stream = stream;
    assert_int_equal(warpsort_create(&ctx, &cfg), WARPSORT_OK);
    warpsort_context_t *saved = g_gpu;
    g_gpu = ctx;
    run_one(&wt_device_memory, WT_OP_PAIRS, WARPSORT_I32, 4, WARPSORT_STABLE, 1000003,
            KEYGEN_NAN_MIX, g_cpu);
    run_one(&wt_device_memory, WT_OP_SORT, WARPSORT_F64, 0, WARPSORT_DESCENDING, 77777,
            KEYGEN_NAN_MIX, g_cpu);
    g_gpu = saved;
    warpsort_destroy(ctx);
    CUDA_OK(cudaStreamDestroy(stream));
}

/*--- chips other than this one: test hooks of ws_cuda_init ---*/

/* Sets (value non-NULL) or clears an environment variable; returns the old
 * value (malloc'd, or NULL) for env_restore. */
static char *env_swap(const char *name, const char *value) {
    const char *old = getenv(name);
    char *saved = old ? strdup(old) : NULL;
    if (value)
        setenv(name, value, 1);
    else
        unsetenv(name);
    return saved;
}
static void env_restore(const char *name, char *saved) {
    if (saved)
        setenv(name, saved, 1);
    else
        unsetenv(name);
    free(saved);
}

/* A CUDA context whose device reports at most limit bytes of shared memory
 * per block: the row ws_select_family picks for such a chip. */
static warpsort_status_t create_with_smem_limit(warpsort_context_t **ctx, const char *limit) {
    warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
    cfg.backend = WARPSORT_BACKEND_CUDA;
    char *saved = env_swap("WARPSORT_SMEM_LIMIT", limit);
    warpsort_status_t st = warpsort_create(ctx, &cfg);
    env_restore("WARPSORT_SMEM_LIMIT", saved);
    return st;
}

/* 4-byte keys alone at the merge path's sizes that Hopper sorts in radix
 * tiles of 16384 (2^22) or cluster pairs of 32768 (2^21, 2^23;
 * src/cuda/radix_tiles.cuh): whole tiles, a last tile of one item, a last
 * pair tile with an empty or a short second half, every key kind, both
 * orders, every distribution; 2^20 - 1 takes them on smaller GPUs.
 * Elsewhere (WARPSORT_MERGE_NO_RADIX, other chips) the same sizes take the
 * block sort's tiles. */
static void test_radix_tiles(void **state) {
    (void)state;
    REQUIRE_GPU();
    const size_t sizes[] = {((size_t)1 << 20) - 1,     ((size_t)1 << 21) + 100,
                            ((size_t)1 << 21) + 32769, ((size_t)1 << 22) + 7,
                            ((size_t)1 << 23) - 16390, ((size_t)1 << 23) - 5};
    const warpsort_dtype_t dts[] = {WARPSORT_U32, WARPSORT_I32, WARPSORT_F32};
    for (size_t s = 0; s < COUNT(sizes); s++)
        for (size_t d = 0; d < COUNT(dts); d++)
            for (int dist = 0; dist < KEYGEN_DIST_COUNT; dist++) {
                if (g_quick && (dist + (int)s + (int)d) % 4) continue;
                run_one(&wt_device_memory, WT_OP_SORT, dts[d], 0,
                        (unsigned)(dist + (int)s) % 2 ? WARPSORT_DESCENDING : 0u, sizes[s],
                        (keygen_dist_t)dist, g_cpu);
            }
}

/* Each smaller chip's row on this device: the limits of a T4 (64 KB), an
 * A10/L4/RTX 40xx (99 KB) and an A100 (163 KB) select the sm_75, sm_86 and
 * sm_80 rows, and each sorts correctly through every path it has (one
 * tile, one and several merge passes, two-tile blocks where allowed). */
static void test_rows_of_smaller_chips(void **state) {
    (void)state;
    REQUIRE_GPU();
    const struct {
        const char *limit, *row;
    } chips[] = {{"65536", "sm_75"}, {"101376", "sm_86"}, {"166912", "sm_80"}};
    const size_t sizes[] = {33, 4097, 8193, 100003, 1048577, 4194305};
    for (size_t c = 0; c < COUNT(chips); c++) {
        warpsort_context_t *ctx = NULL;
        warpsort_status_t st = create_with_smem_limit(&ctx, chips[c].limit);
        if (st != WARPSORT_OK)
            fail_msg("WARPSORT_SMEM_LIMIT=%s: %s", chips[c].limit, warpsort_status_name(st));
        if (strcmp(ws_cuda_family_name(ctx), chips[c].row) != 0)
            fail_msg("WARPSORT_SMEM_LIMIT=%s chose row %s, want %s", chips[c].limit,
                     ws_cuda_family_name(ctx), chips[c].row);
        warpsort_context_t *saved = g_gpu;
        g_gpu = ctx;
        for (size_t s = 0; s < COUNT(sizes); s++) {
            if (g_quick && sizes[s] > 1048577) continue;
            run_one(&wt_device_memory, WT_OP_SORT, WARPSORT_U32, 0, 0, sizes[s], KEYGEN_RANDOM,
                    g_cpu);
            run_one(&wt_device_memory, WT_OP_SORT, WARPSORT_F64, 0, WARPSORT_DESCENDING, sizes[s],
                    KEYGEN_NAN_MIX, g_cpu);
            run_one(&wt_device_memory, WT_OP_PAIRS, WARPSORT_F32, 4, WARPSORT_STABLE, sizes[s],
                    KEYGEN_FEW, g_cpu);
            run_one(&wt_device_memory, WT_OP_PAIRS, WARPSORT_I64, 8, 0, sizes[s], KEYGEN_RANDOM,
                    g_cpu);
            run_one(&wt_device_memory, WT_OP_ARGSORT, WARPSORT_U64, 4, 0, sizes[s], KEYGEN_NARROW,
                    g_cpu);
        }
        run_one(&wt_host_memory, WT_OP_PAIRS, WARPSORT_U32, 8, WARPSORT_STABLE, 1048577,
                KEYGEN_RANDOM, g_cpu);
        g_gpu = saved;
        warpsort_destroy(ctx);
    }
    /* Below every row (and a malformed value): no CUDA context. */
    warpsort_context_t *ctx = (warpsort_context_t *)&ctx;
    assert_int_equal(create_with_smem_limit(&ctx, "40000"), WARPSORT_BACKEND_UNAVAILABLE);
    assert_null(ctx);
    assert_int_equal(create_with_smem_limit(&ctx, "64K"), WARPSORT_INVALID_ARGUMENT);
    assert_null(ctx);
}

/* A device the build has no kernels for: AUTO takes the CPU and says why,
 * CUDA asked for explicitly is unavailable. */
static void test_no_kernel_image(void **state) {
    (void)state;
    REQUIRE_GPU();
    warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
    warpsort_context_t *auto_ctx = NULL, *cuda_ctx = (warpsort_context_t *)&cuda_ctx;
    char *saved = env_swap("WARPSORT_FORCE_NO_KERNEL_IMAGE", "1");
    const warpsort_status_t auto_st = warpsort_create(&auto_ctx, &cfg);
    cfg.backend = WARPSORT_BACKEND_CUDA;
    const warpsort_status_t cuda_st = warpsort_create(&cuda_ctx, &cfg);
    env_restore("WARPSORT_FORCE_NO_KERNEL_IMAGE", saved);

    assert_int_equal(cuda_st, WARPSORT_BACKEND_UNAVAILABLE);
    assert_null(cuda_ctx);
    assert_int_equal(auto_st, WARPSORT_OK);
    assert_int_equal(warpsort_get_backend(auto_ctx), WARPSORT_BACKEND_CPU);
    const char *why = warpsort_last_error(auto_ctx);
    print_message("AUTO without a kernel image: %s\n", why);
    if (!strstr(why, "CPU") || !strstr(why, "cudaErrorNoKernelImageForDevice"))
        fail_msg("AUTO's fallback does not say why: '%s'", why);
    uint32_t keys[5] = {5, 1, 4, 2, 3};
    assert_int_equal(warpsort_sort(auto_ctx, keys, 5, WARPSORT_U32, 0), WARPSORT_OK);
    for (int i = 0; i < 5; i++) assert_int_equal(keys[i], (uint32_t)i + 1);
    warpsort_destroy(auto_ctx);

    /* The hook gone, the device is usable again. */
    assert_int_equal(warpsort_create(&cuda_ctx, &cfg), WARPSORT_OK);
    assert_string_equal(warpsort_last_error(cuda_ctx), "");
    warpsort_destroy(cuda_ctx);
}

int main(int argc, char **argv) {
    g_quick = wt_cmocka_options(argc, argv);
    if (g_quick < 0) return 2;

    /* A device that is there but broken must fail the suite, not skip it. */
    const int gpu = wt_gpu_probe(&g_gpu);
    if (gpu < 0) return 1;
    warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
    if (gpu) {
        struct cudaDeviceProp prop;
        if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess)
            fprintf(stderr, "device 0: %s (%d.%d), %zu MiB, tuning row %s%s\n", prop.name,
                    prop.major, prop.minor, prop.totalGlobalMem >> 20, ws_cuda_family_name(g_gpu),
                    getenv("WARPSORT_SMEM_LIMIT") ? " (WARPSORT_SMEM_LIMIT)" : "");
    }
    cfg.backend = WARPSORT_BACKEND_CPU;
    if (warpsort_create(&g_cpu, &cfg) != WARPSORT_OK) {
        fprintf(stderr, "cannot create the CPU oracle context\n");
        return 1;
    }

    static wt_prop_param_t params[WT_PROP_TESTS];
    static struct CMUnitTest tests[WT_PROP_TESTS + 20];
    size_t count = wt_prop_tests(params, tests, "gpu_", test_property_matrix);
    const struct CMUnitTest extra[] = {
        cmocka_unit_test(test_descending_reverses_ascending),
        cmocka_unit_test(test_pinned_and_mixed_memory),
        cmocka_unit_test(test_caller_workspace),
        cmocka_unit_test(test_user_stream),
        cmocka_unit_test(test_small_graph),
        cmocka_unit_test(test_large_graph),
        cmocka_unit_test(test_rows_of_smaller_chips),
        cmocka_unit_test(test_radix_tiles),
        cmocka_unit_test(test_no_kernel_image),
        cmocka_unit_test(test_2_24_every_dtype),
        cmocka_unit_test(test_2_28_u32),
        cmocka_unit_test(test_beyond_2_32),
    };
    _Static_assert(COUNT(extra) + COUNT(k_sample_plans) <= 20, "tests[] holds every test");
    for (size_t i = 0; i < COUNT(extra); i++) tests[count++] = extra[i];
    for (size_t p = 0; p < COUNT(k_sample_plans); p++)
        tests[count++] = (struct CMUnitTest){k_sample_plans[p].test_name, test_sample_plan, NULL,
                                             NULL, (void *)&k_sample_plans[p]};

    int failed = _cmocka_run_group_tests("gpu_properties", tests, count, NULL, NULL);
    const int had_gpu = g_gpu != NULL;
    warpsort_destroy(g_gpu);
    warpsort_destroy(g_cpu);
    if (failed) return failed;
    return had_gpu ? 0 : WT_EXIT_SKIPPED;
}
