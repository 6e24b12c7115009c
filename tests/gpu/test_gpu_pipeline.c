/*
 * test_gpu_pipeline.c - the host-array pipeline of the CUDA backend
 * (src/cuda/pipeline/): pageable, pinned and mixed host/device memory at
 * sizes around the ring's slot and the ring itself (a context with a tiny
 * 64 KiB ring makes those sizes small), every dtype, keys / pairs / argsort,
 * stable, both orders; out of core under a small device budget (many runs,
 * ranges of all-equal keys longer than a run); cudaHostRegister instead of
 * staging; and failures part-way (a test hook fails the k-th checkpoint, for
 * every k; a budget too small) leaving the host arrays byte-identical.
 * Every result is compared byte for byte with the CPU backend.
 *
 * Standalone: --quick for a short pass, --filter PATTERN for a subset.
 * Without a CUDA backend or device every test reports SKIPPED and the
 * program exits 77 (ctest: SKIP_RETURN_CODE).
 */
#define _POSIX_C_SOURCE 200809L
#include <cuda_runtime_api.h>

#include <stdlib.h>

#include "gpu_memory.h"
#include "testkit.h"
#include "wt_cmocka.h"

#define WT_EXIT_SKIPPED 77
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Test hook in the library (src/cuda/pipeline.h). */
void ws_pipeline_test_fail_at(warpsort_context_t *ctx, unsigned k);

static int g_have_gpu;
static warpsort_context_t *g_cpu; /* the oracle */
static int g_quick;

#define SMALL_RING ((size_t)64 << 10) /* 4 slots of 16 KiB */

#define REQUIRE_GPU() WT_REQUIRE_GPU(g_have_gpu)

/*--- memory kinds ---*/

/* Sizes around the slot (16 KiB: 4096 four-byte or 2048 eight-byte items),
 * the ring (64 KiB), the direct-copy limit and the piece sizes, odd ones. */
static const size_t k_sizes[] = {1,    2,    33,    2047,  2048,  2049,  4095,  4096,   4097,
                                 8191, 8193, 16383, 16384, 16385, 32769, 65537, 131071, 262147};
static const size_t k_quick_sizes[] = {2, 4097, 16385, 65537};

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

static size_t run_matrix(warpsort_context_t *ctx, const wt_memory_t *mem, const size_t *sizes,
                         size_t nsizes, unsigned dists, int all_dtypes) {
    size_t failures = 0;
    for (int d = 0; d < WARPSORT_DTYPE_COUNT_; d++) {
        if (!all_dtypes && d != WARPSORT_U32 && d != WARPSORT_F64) continue;
        for (size_t o = 0; o < COUNT(k_ops); o++) {
            wt_matrix_t m = {k_ops[o].op,     (warpsort_dtype_t)d,
                             k_ops[o].second, k_ops[o].flags,
                             sizes,           nsizes,
                             dists,           0xF1F0ull + (uint64_t)d * 31 + o};
            failures += wt_run_matrix(ctx, mem, &m, g_cpu, stderr);
        }
    }
    return failures;
}

static void run_one(warpsort_context_t *ctx, const wt_memory_t *mem, wt_op_t op,
                    warpsort_dtype_t dt, size_t second, unsigned flags, size_t n,
                    keygen_dist_t dist) {
    const wt_case_t c = {op, dt, second, flags, n, dist, 0xC0DEull ^ n};
    wt_require_case(ctx, mem, &c, g_cpu);
}

/*--- in core ---*/

/* Every dtype and operation, pageable and pinned, at sizes around the slot
 * and the ring of a 64 KiB ring. */
static void test_small_ring_matrix(void **state) {
    (void)state;
    REQUIRE_GPU();
    warpsort_context_t *ctx = wt_gpu_context(SMALL_RING, 0);
    const unsigned dists = 1u << KEYGEN_RANDOM | 1u << KEYGEN_FEW | 1u << KEYGEN_NAN_MIX;
    size_t failures = 0;
    if (g_quick) {
        failures += run_matrix(ctx, &wt_host_memory, k_quick_sizes, COUNT(k_quick_sizes),
                               1u << KEYGEN_RANDOM | 1u << KEYGEN_NAN_MIX, 0);
        failures += run_matrix(ctx, &wt_pinned_memory, k_quick_sizes, COUNT(k_quick_sizes),
                               1u << KEYGEN_RANDOM, 0);
    } else {
        failures += run_matrix(ctx, &wt_host_memory, k_sizes, COUNT(k_sizes), dists, 1);
        failures += run_matrix(ctx, &wt_pinned_memory, k_sizes, COUNT(k_sizes),
                               1u << KEYGEN_RANDOM | 1u << KEYGEN_SORTED, 1);
    }
    warpsort_destroy(ctx);
    assert_int_equal(failures, 0);
}

/* The default ring (4 x 32 MiB, host threads staging) and 8 pieces merged
 * on the device, pageable and pinned. */
static void test_default_ring_large(void **state) {
    (void)state;
    REQUIRE_GPU();
    warpsort_context_t *ctx = wt_gpu_context(0, 0);
    const size_t n = g_quick ? ((size_t)1 << 22) + 3 : ((size_t)1 << 25) + 7;
    run_one(ctx, &wt_host_memory, WT_OP_SORT, WARPSORT_U32, 0, 0, n, KEYGEN_RANDOM);
    run_one(ctx, &wt_pinned_memory, WT_OP_SORT, WARPSORT_U32, 0, WARPSORT_DESCENDING, n,
            KEYGEN_RANDOM);
    run_one(ctx, &wt_host_memory, WT_OP_PAIRS, WARPSORT_U64, 8, WARPSORT_STABLE, n / 2, KEYGEN_FEW);
    run_one(ctx, &wt_pinned_memory, WT_OP_PAIRS, WARPSORT_F32, 4, WARPSORT_STABLE, n,
            KEYGEN_NAN_MIX);
    run_one(ctx, &wt_host_memory, WT_OP_ARGSORT, WARPSORT_I64, 8, 0, n / 2, KEYGEN_NARROW);
    warpsort_destroy(ctx);
}

/* Keys in pinned memory and values pageable (both through the pipeline),
 * and keys on the device with values on the host (staged whole). */
static void test_mixed_memory(void **state) {
    (void)state;
    REQUIRE_GPU();
    warpsort_context_t *ctx = wt_gpu_context(SMALL_RING, 0);
    const size_t sizes[] = {4097, 100003};
    for (size_t s = 0; s < COUNT(sizes); s++) {
        const size_t n = sizes[s];
        for (int mode = 0; mode < 3; mode++) {
            uint32_t *orig = malloc(n * 4), *ref_k = malloc(n * 4);
            uint64_t *ref_v = malloc(n * 8), *host_v = malloc(n * 8);
            assert_true(orig && ref_k && ref_v && host_v);
            keygen_fill(orig, n, WARPSORT_I32, KEYGEN_FEW, 77 + (uint64_t)mode);
            void *keys = NULL, *vals = host_v, *dev = NULL;
            if (mode == 0) { /* pinned keys, pageable values */
                keys = wt_pinned_memory.alloc(n * 4, NULL);
                assert_non_null(keys);
                memcpy(keys, orig, n * 4);
            } else if (mode == 1) { /* pageable keys, pinned values */
                keys = malloc(n * 4);
                vals = wt_pinned_memory.alloc(n * 8, NULL);
                assert_true(keys && vals);
                memcpy(keys, orig, n * 4);
            } else { /* device keys, pageable values */
                CUDA_OK(cudaMalloc(&dev, n * 4));
                CUDA_OK(cudaMemcpy(dev, orig, n * 4, cudaMemcpyHostToDevice));
                keys = dev;
            }
            wt_fill_iota(vals, n, 8);
            const unsigned flags = WARPSORT_STABLE | WARPSORT_DESCENDING;
            warpsort_status_t st = warpsort_sort_pairs(ctx, keys, vals, n, WARPSORT_I32, 8, flags);
            if (st == WARPSORT_OK) st = warpsort_synchronize(ctx);
            if (st != WARPSORT_OK)
                fail_msg("mode %d n=%zu: %s: %s", mode, n, warpsort_status_name(st),
                         warpsort_last_error(ctx));
            memcpy(ref_k, orig, n * 4);
            wt_fill_iota(ref_v, n, 8);
            assert_int_equal(warpsort_sort_pairs(g_cpu, ref_k, ref_v, n, WARPSORT_I32, 8, flags),
                             WARPSORT_OK);
            uint32_t *got_k = malloc(n * 4);
            assert_non_null(got_k);
            if (dev)
                CUDA_OK(cudaMemcpy(got_k, dev, n * 4, cudaMemcpyDeviceToHost));
            else
                memcpy(got_k, keys, n * 4);
            assert_memory_equal(got_k, ref_k, n * 4);
            assert_memory_equal(vals, ref_v, n * 8);
            free(got_k);
            if (mode == 0) wt_pinned_memory.release(keys, NULL);
            if (mode == 1) {
                free(keys);
                wt_pinned_memory.release(vals, NULL);
            }
            if (dev) CUDA_OK(cudaFree(dev));
            free(orig);
            free(ref_k);
            free(ref_v);
            free(host_v);
        }
    }
    warpsort_destroy(ctx);
}

/*--- out of core ---*/

/* A 512 KiB device budget: runs of a few thousand items, dozens of runs,
 * ranges gathered from every run; all-equal keys make every range one long
 * run of equal keys cut at exact ranks. */
static void test_out_of_core(void **state) {
    (void)state;
    REQUIRE_GPU();
    warpsort_context_t *ctx = wt_gpu_context(SMALL_RING, (size_t)512 << 10);
    const size_t sizes[] = {200003, 1000003};
    const unsigned dists = 1u << KEYGEN_RANDOM | 1u << KEYGEN_EQUAL | 1u << KEYGEN_FEW |
                           1u << KEYGEN_NAN_MIX | 1u << KEYGEN_SORTED | 1u << KEYGEN_REVERSED;
    size_t failures = 0;
    for (int d = 0; d < WARPSORT_DTYPE_COUNT_; d++) {
        if (g_quick && d != WARPSORT_F32) continue;
        for (size_t o = 0; o < COUNT(k_ops); o++) {
            wt_matrix_t m = {k_ops[o].op,
                             (warpsort_dtype_t)d,
                             k_ops[o].second,
                             k_ops[o].flags,
                             sizes,
                             g_quick ? 1 : COUNT(sizes),
                             g_quick ? (1u << KEYGEN_RANDOM | 1u << KEYGEN_EQUAL) : dists,
                             0x00Cull + (uint64_t)d * 7 + o};
            failures += wt_run_matrix(ctx, &wt_host_memory, &m, g_cpu, stderr);
        }
    }
    run_one(ctx, &wt_pinned_memory, WT_OP_PAIRS, WARPSORT_U64, 4, WARPSORT_STABLE, 300007,
            KEYGEN_FEW);
    run_one(ctx, &wt_pinned_memory, WT_OP_ARGSORT, WARPSORT_F64, 8, WARPSORT_DESCENDING, 300007,
            KEYGEN_NAN_MIX);
    warpsort_destroy(ctx);
    assert_int_equal(failures, 0);
}

/* The default ring with a 64 MiB budget: 2^25 keys (128 MiB) in runs that
 * are themselves cut into pieces. */
static void test_out_of_core_default_ring(void **state) {
    (void)state;
    REQUIRE_GPU();
    if (g_quick) skip();
    warpsort_context_t *ctx = wt_gpu_context(0, (size_t)64 << 20);
    const size_t n = ((size_t)1 << 25) + 11;
    run_one(ctx, &wt_host_memory, WT_OP_SORT, WARPSORT_U32, 0, 0, n, KEYGEN_RANDOM);
    run_one(ctx, &wt_host_memory, WT_OP_PAIRS, WARPSORT_F32, 4, WARPSORT_STABLE, n / 2, KEYGEN_FEW);
    warpsort_destroy(ctx);
}

/*--- failures part-way ---*/

/* Runs op on host arrays with the k-th checkpoint failing, for k = 1, 2, ...
 * until the call gets past every checkpoint: each failure must leave the
 * arrays byte-identical; the final success must match the CPU backend. */
static void fail_everywhere(warpsort_context_t *ctx, const wt_memory_t *mem, wt_op_t op,
                            warpsort_dtype_t dt, size_t second, unsigned flags, size_t n) {
    const size_t kb = warpsort_dtype_size(dt);
    unsigned char *keys = mem->alloc(n * kb, NULL), *second_arr = mem->alloc(n * 8, NULL);
    unsigned char *orig_k = malloc(n * kb), *orig_s = malloc(n * 8);
    assert_true(keys && second_arr && orig_k && orig_s);
    keygen_fill(orig_k, n, dt, KEYGEN_FEW, 99);
    for (size_t i = 0; i < n * 8; i++) orig_s[i] = (unsigned char)(i * 131 + 7);
    if (op == WT_OP_PAIRS) wt_fill_iota(orig_s, n, second);
    unsigned k;
    int failed_calls = 0;
    for (k = 1; k < 100000; k++) {
        memcpy(keys, orig_k, n * kb);
        memcpy(second_arr, orig_s, n * 8);
        ws_pipeline_test_fail_at(ctx, k);
        warpsort_status_t st =
            op == WT_OP_ARGSORT ? warpsort_argsort(ctx, keys, second_arr, n, dt, second, flags)
            : op == WT_OP_PAIRS ? warpsort_sort_pairs(ctx, keys, second_arr, n, dt, second, flags)
                                : warpsort_sort(ctx, keys, n, dt, flags);
        if (st == WARPSORT_OK) break;
        failed_calls++;
        if (st != WARPSORT_OUT_OF_MEMORY || !strstr(warpsort_last_error(ctx), "test hook"))
            fail_msg("k=%u: %s: %s", k, warpsort_status_name(st), warpsort_last_error(ctx));
        if (memcmp(keys, orig_k, n * kb) != 0) fail_msg("k=%u: keys changed by a failed call", k);
        if (memcmp(second_arr, orig_s, n * 8) != 0)
            fail_msg("k=%u: %s changed by a failed call", k,
                     op == WT_OP_ARGSORT ? "indices" : "values");
    }
    ws_pipeline_test_fail_at(ctx, 0);
    if (failed_calls < 3) fail_msg("only %d checkpoints reached", failed_calls);
    print_message("%s %s n=%zu: %d forced failures, arrays unchanged\n", mem->name, wt_op_name(op),
                  n, failed_calls);
    /* the successful last call is right */
    unsigned char *ref_k = malloc(n * kb), *ref_s = malloc(n * 8);
    assert_true(ref_k && ref_s);
    memcpy(ref_k, orig_k, n * kb);
    memcpy(ref_s, orig_s, n * 8);
    warpsort_status_t st =
        op == WT_OP_ARGSORT ? warpsort_argsort(g_cpu, ref_k, ref_s, n, dt, second, flags)
        : op == WT_OP_PAIRS ? warpsort_sort_pairs(g_cpu, ref_k, ref_s, n, dt, second, flags)
                            : warpsort_sort(g_cpu, ref_k, n, dt, flags);
    assert_int_equal(st, WARPSORT_OK);
    assert_memory_equal(keys, ref_k, n * kb);
    if (op != WT_OP_SORT) assert_memory_equal(second_arr, ref_s, n * second);
    free(ref_k);
    free(ref_s);
    mem->release(keys, NULL);
    mem->release(second_arr, NULL);
    free(orig_k);
    free(orig_s);
}

static void test_failure_in_core(void **state) {
    (void)state;
    REQUIRE_GPU();
    warpsort_context_t *ctx = wt_gpu_context(SMALL_RING, 0);
    fail_everywhere(ctx, &wt_host_memory, WT_OP_PAIRS, WARPSORT_U64, 8, WARPSORT_STABLE, 40009);
    fail_everywhere(ctx, &wt_pinned_memory, WT_OP_SORT, WARPSORT_F32, 0, WARPSORT_DESCENDING,
                    70001);
    fail_everywhere(ctx, &wt_host_memory, WT_OP_ARGSORT, WARPSORT_I32, 4, 0, 50021);
    warpsort_destroy(ctx);
    /* a fresh context: the first call also allocates streams and the ring */
    ctx = wt_gpu_context(SMALL_RING, 0);
    fail_everywhere(ctx, &wt_host_memory, WT_OP_SORT, WARPSORT_U32, 0, 0, 30011);
    warpsort_destroy(ctx);
}

static void test_failure_out_of_core(void **state) {
    (void)state;
    REQUIRE_GPU();
    warpsort_context_t *ctx = wt_gpu_context(SMALL_RING, (size_t)256 << 10);
    fail_everywhere(ctx, &wt_host_memory, WT_OP_PAIRS, WARPSORT_I64, 4, WARPSORT_STABLE, 60013);
    fail_everywhere(ctx, &wt_pinned_memory, WT_OP_ARGSORT, WARPSORT_F64, 8, WARPSORT_DESCENDING,
                    45007);
    if (!g_quick) fail_everywhere(ctx, &wt_host_memory, WT_OP_SORT, WARPSORT_U32, 0, 0, 100003);
    warpsort_destroy(ctx);
}

/* A budget below one out-of-core run: a clear error, arrays untouched. */
static void test_budget_too_small(void **state) {
    (void)state;
    REQUIRE_GPU();
    warpsort_context_t *ctx = wt_gpu_context(SMALL_RING, 1024);
    const size_t n = 100000;
    uint32_t *keys = malloc(n * 4), *vals = malloc(n * 4), *ok = malloc(n * 4), *ov = malloc(n * 4);
    assert_true(keys && vals && ok && ov);
    keygen_fill(keys, n, WARPSORT_U32, KEYGEN_RANDOM, 5);
    wt_fill_iota(vals, n, 4);
    memcpy(ok, keys, n * 4);
    memcpy(ov, vals, n * 4);
    assert_int_equal(warpsort_sort_pairs(ctx, keys, vals, n, WARPSORT_U32, 4, 0),
                     WARPSORT_OUT_OF_MEMORY);
    assert_non_null(strstr(warpsort_last_error(ctx), "budget"));
    assert_memory_equal(keys, ok, n * 4);
    assert_memory_equal(vals, ov, n * 4);
    /* small arrays still fit and sort */
    assert_int_equal(warpsort_sort_pairs(ctx, keys, vals, 20, WARPSORT_U32, 4, 0), WARPSORT_OK);
    free(keys);
    free(vals);
    free(ok);
    free(ov);
    warpsort_destroy(ctx);
}

int main(int argc, char **argv) {
    g_quick = wt_cmocka_options(argc, argv);
    if (g_quick < 0) return 2;

    const int gpu = wt_gpu_probe(NULL);
    if (gpu < 0) return 1;
    g_have_gpu = gpu;
    warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
    cfg.backend = WARPSORT_BACKEND_CPU;
    if (warpsort_create(&g_cpu, &cfg) != WARPSORT_OK) {
        fprintf(stderr, "cannot create the CPU oracle context\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_ring_matrix),
        cmocka_unit_test(test_default_ring_large),
        cmocka_unit_test(test_mixed_memory),
        cmocka_unit_test(test_out_of_core),
        cmocka_unit_test(test_out_of_core_default_ring),
        cmocka_unit_test(test_failure_in_core),
        cmocka_unit_test(test_failure_out_of_core),
        cmocka_unit_test(test_budget_too_small),
    };
    int failed = _cmocka_run_group_tests("gpu_pipeline", tests, COUNT(tests), NULL, NULL);
    warpsort_destroy(g_cpu);
    if (failed) return failed;
    return g_have_gpu ? 0 : WT_EXIT_SKIPPED;
}
