/*
 * test_gpu_sort_copy.c - warpsort_sort_copy (the out-of-place sort) on the
 * CUDA backend: input and output in every pair of memory kinds (pageable,
 * pinned, device; the host pairs go through the host pipeline, which stages
 * from one array and writes the other), every dtype and order, sizes around
 * the ring's slot, the direct-copy limit and the pipeline's pieces (a 64 KiB
 * ring makes them small), the default ring with 8 pieces, out of core under
 * a small device budget, keys_in == keys_out, and failures part-way (the
 * pipeline's test hook) leaving both host arrays byte-identical. Device
 * input runs the leaf out of place (its first pass reads keys_in): sizes
 * on every path of it (small, one tile, merge passes, sample sort, also
 * with its levels forced deep on small inputs). Cases and checks:
 * tests/cpu/sort_copy_cases.h (the CPU backend is the oracle; keys_in must
 * come back unchanged).
 *
 * Standalone: --quick for a short pass, --filter PATTERN for a subset.
 * Without a CUDA backend or device every test reports SKIPPED and the
 * program exits 77 (ctest: SKIP_RETURN_CODE).
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <cuda_runtime_api.h>

#include <stdlib.h>

#include "gpu_memory.h"
#include "sort_copy_cases.h"
#include "testkit.h"
#include "wt_cmocka.h"

#define WT_EXIT_SKIPPED 77
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Test hook in the library (src/cuda/pipeline/pipeline.h). */
void ws_pipeline_test_fail_at(warpsort_context_t *ctx, unsigned k);

static int g_have_gpu;
static warpsort_context_t *g_cpu; /* the oracle */
static int g_quick;

#define SMALL_RING ((size_t)64 << 10) /* 4 slots of 16 KiB */
#define REQUIRE_GPU() WT_REQUIRE_GPU(g_have_gpu)

/* Sizes around the slot (16 KiB: 4096 four-byte or 2048 eight-byte items),
 * the ring (64 KiB) and the piece sizes, odd ones; 0 and 1. */
static const size_t k_sizes[] = {0,    1,     2,     33,    2047,  2049,  4095,   4097,
                                 8193, 16383, 16385, 32769, 65537, 65536, 131071, 262147};
static const size_t k_quick_sizes[] = {0, 1, 2, 4097, 16385, 65537};

static const wt_memory_t *const k_mems[] = {&wt_host_memory, &wt_pinned_memory, &wt_device_memory};

static size_t run_pair(warpsort_context_t *ctx, const wt_memory_t *in, const wt_memory_t *out,
                       unsigned dists) {
    const size_t *sizes = g_quick ? k_quick_sizes : k_sizes;
    const size_t num = g_quick ? COUNT(k_quick_sizes) : COUNT(k_sizes);
    return sc_run_matrix(ctx, in, out, sizes, num, dists, g_cpu, stderr);
}

/* Every pair of memory kinds (host pairs through the pipeline, the rest
 * staged or copied on the stream), every dtype and order. */
static void test_memory_pairs(void **state) {
    (void)state;
    REQUIRE_GPU();
    warpsort_context_t *ctx = wt_gpu_context(SMALL_RING, 0);
    size_t failures = 0;
    for (size_t i = 0; i < COUNT(k_mems); i++)
        for (size_t o = 0; o < COUNT(k_mems); o++) {
            const int host_pair = k_mems[i] != &wt_device_memory && k_mems[o] != &wt_device_memory;
            unsigned dists = 1u << KEYGEN_RANDOM | 1u << KEYGEN_EQUAL;
            if (!g_quick && host_pair) dists |= 1u << KEYGEN_NAN_MIX | 1u << KEYGEN_FEW;
            failures += run_pair(ctx, k_mems[i], k_mems[o], dists);
        }
    warpsort_destroy(ctx);
    assert_int_equal(failures, 0);
}

/* AUTO: small host arrays on the CPU, the rest on the GPU. */
static void test_auto(void **state) {
    (void)state;
    REQUIRE_GPU();
    warpsort_context_t *ctx = NULL;
    assert_int_equal(warpsort_create(&ctx, NULL), WARPSORT_OK);
    const size_t sizes[] = {1, 100, 2047, 2048, 100003};
    size_t failures = 0;
    for (size_t i = 0; i < COUNT(k_mems); i++)
        failures += sc_run_matrix(ctx, k_mems[i], k_mems[i], sizes, COUNT(sizes),
                                  1u << KEYGEN_NAN_MIX, g_cpu, stderr);
    warpsort_destroy(ctx);
    assert_int_equal(failures, 0);
}

/* The default ring (4 x 32 MiB, host threads staging) and 8 pieces, into
 * a fresh pageable output and into a pinned one. */
static void test_default_ring_large(void **state) {
    (void)state;
    REQUIRE_GPU();
    warpsort_context_t *ctx = wt_gpu_context(0, 0);
    const size_t n = g_quick ? ((size_t)1 << 22) + 3 : ((size_t)1 << 25) + 7;
    const sc_case_t cases[] = {
        {WARPSORT_U32, 0, n, KEYGEN_RANDOM, 1, 0},
        {WARPSORT_F64, WARPSORT_DESCENDING, n / 2, KEYGEN_NAN_MIX, 2, 0},
        {WARPSORT_I32, 0, n, KEYGEN_FEW, 3, 1},
    };
    for (size_t k = 0; k < COUNT(cases); k++) {
        const wt_memory_t *out = k == 1 ? &wt_pinned_memory : &wt_host_memory;
        char msg[512];
        if (sc_run_case(ctx, &wt_host_memory, out, &cases[k], g_cpu, msg, sizeof msg)) {
            char what[160];
            sc_describe(&cases[k], what, sizeof what);
            fail_msg("%s: %s", what, msg);
        }
    }
    warpsort_destroy(ctx);
}

/* A 512 KiB device budget: runs read from keys_in, ranges gathered, the
 * result gathered into keys_out. */
static void test_out_of_core(void **state) {
    (void)state;
    REQUIRE_GPU();
    warpsort_context_t *ctx = wt_gpu_context(SMALL_RING, (size_t)512 << 10);
    const size_t sizes[] = {200003, 1000003};
    const unsigned dists = g_quick ? 1u << KEYGEN_RANDOM
                                   : (1u << KEYGEN_RANDOM | 1u << KEYGEN_EQUAL |
                                      1u << KEYGEN_NAN_MIX | 1u << KEYGEN_REVERSED);
    size_t failures = sc_run_matrix(ctx, &wt_host_memory, &wt_host_memory, sizes,
                                    g_quick ? 1 : COUNT(sizes), dists, g_cpu, stderr);
    failures += sc_run_matrix(ctx, &wt_pinned_memory, &wt_host_memory, sizes, 1, 1u << KEYGEN_FEW,
                              g_cpu, stderr);
    warpsort_destroy(ctx);
    assert_int_equal(failures, 0);
}

/* warpsort_sort_copy on host arrays with the k-th checkpoint failing, for
 * k = 1, 2, ... until the call gets past every checkpoint: each failure
 * leaves keys_in and keys_out byte-identical; the final success matches
 * the CPU backend. */
static void fail_everywhere(warpsort_context_t *ctx, const wt_memory_t *mem_in,
                            const wt_memory_t *mem_out, warpsort_dtype_t dt, unsigned flags,
                            size_t n) {
    const size_t kb = warpsort_dtype_size(dt);
    unsigned char *in = mem_in->alloc(n * kb, NULL), *out = mem_out->alloc(n * kb, NULL);
    unsigned char *orig = malloc(n * kb), *poison = malloc(n * kb);
    assert_true(in && out && orig && poison);
    keygen_fill(orig, n, dt, KEYGEN_FEW, 99);
    for (size_t i = 0; i < n * kb; i++) poison[i] = sc_poison(i);
    memcpy(in, orig, n * kb);
    int failed_calls = 0;
    for (unsigned k = 1; k < 100000; k++) {
        memcpy(out, poison, n * kb);
        ws_pipeline_test_fail_at(ctx, k);
        const warpsort_status_t st = warpsort_sort_copy(ctx, in, out, n, dt, flags);
        if (memcmp(in, orig, n * kb) != 0) fail_msg("k=%u: keys_in changed", k);
        if (st == WARPSORT_OK) break;
        failed_calls++;
        if (st != WARPSORT_OUT_OF_MEMORY || !strstr(warpsort_last_error(ctx), "test hook"))
            fail_msg("k=%u: %s: %s", k, warpsort_status_name(st), warpsort_last_error(ctx));
        if (memcmp(out, poison, n * kb) != 0)
            fail_msg("k=%u: keys_out changed by a failed call", k);
    }
    ws_pipeline_test_fail_at(ctx, 0);
    if (failed_calls < 3) fail_msg("only %d checkpoints reached", failed_calls);
    print_message("%s -> %s n=%zu: %d forced failures, arrays unchanged\n", mem_in->name,
                  mem_out->name, n, failed_calls);
    unsigned char *ref = malloc(n * kb);
    assert_non_null(ref);
    memcpy(ref, orig, n * kb);
    assert_int_equal(warpsort_sort(g_cpu, ref, n, dt, flags), WARPSORT_OK);
    assert_memory_equal(out, ref, n * kb);
    free(ref);
    mem_in->release(in, NULL);
    mem_out->release(out, NULL);
    free(orig);
    free(poison);
}

static void test_failure_in_core(void **state) {
    (void)state;
    REQUIRE_GPU();
    warpsort_context_t *ctx = wt_gpu_context(SMALL_RING, 0);
    fail_everywhere(ctx, &wt_host_memory, &wt_host_memory, WARPSORT_U64, 0, 40009);
    fail_everywhere(ctx, &wt_pinned_memory, &wt_host_memory, WARPSORT_F32, WARPSORT_DESCENDING,
                    70001);
    fail_everywhere(ctx, &wt_host_memory, &wt_pinned_memory, WARPSORT_I32, 0, 50021);
    warpsort_destroy(ctx);
    /* An output of at least 64 MiB is faulted in before the device is done
     * (MADV_POPULATE_WRITE, pipe.h): a failure after that still leaves
     * its bytes as they were. The default ring: a few checkpoints. */
    ctx = wt_gpu_context(0, 0);
    fail_everywhere(ctx, &wt_host_memory, &wt_host_memory, WARPSORT_U32, 0,
                    ((size_t)1 << 24) + 4099);
    warpsort_destroy(ctx);
}

static void test_failure_out_of_core(void **state) {
    (void)state;
    REQUIRE_GPU();
    warpsort_context_t *ctx = wt_gpu_context(SMALL_RING, (size_t)256 << 10);
    fail_everywhere(ctx, &wt_host_memory, &wt_host_memory, WARPSORT_I64, 0, 60013);
    if (!g_quick)
        fail_everywhere(ctx, &wt_pinned_memory, &wt_host_memory, WARPSORT_F64, WARPSORT_DESCENDING,
                        45007);
    warpsort_destroy(ctx);
}

/* Device arrays: the copy and the sort are queued on the context's stream;
 * a partial overlap is refused before anything is queued. */
static void test_device_overlap(void **state) {
    (void)state;
    REQUIRE_GPU();
    warpsort_context_t *ctx = wt_gpu_context(0, 0);
    const size_t n = 10000;
    uint32_t *dev = NULL;
    CUDA_OK(cudaMalloc((void **)&dev, (n + 1) * 4));
    assert_int_equal(warpsort_sort_copy(ctx, dev, dev + 1, n, WARPSORT_U32, 0), WARPSORT_OVERLAP);
    assert_non_null(strstr(warpsort_last_error(ctx), "overlap"));
    CUDA_OK(cudaFree(dev));
    warpsort_destroy(ctx);
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

/* Runs cases one by one (device to device), failing with the first. */
static void run_cases(warpsort_context_t *ctx, const sc_case_t *cases, size_t num) {
    for (size_t k = 0; k < num; k++) {
        char msg[512];
        if (sc_run_case(ctx, &wt_device_memory, &wt_device_memory, &cases[k], g_cpu, msg,
                        sizeof msg)) {
            char what[160];
            sc_describe(&cases[k], what, sizeof what);
            fail_msg("%s: %s", what, msg);
        }
    }
}

/* Device to device, the leaf out of place on its small path (n <= 2048)
 * and its tile and merge paths: one tile, whole tiles, a partial last
 * tile, one merge pass and several (odd and even counts, so the tile sort
 * writes its runs to the workspace or straight to keys_out), every dtype
 * and order, in place too (sc_run_matrix). */
static void test_device_leaf_small_merge(void **state) {
    (void)state;
    REQUIRE_GPU();
    warpsort_context_t *ctx = wt_gpu_context(0, 0);
    static const size_t sizes[] = {2,     3,      31,     33,     500,           1025,  2048,
                                   2049,  4096,   4097,   8192,   12289,         32768, 65536,
                                   65613, 131072, 262147, 524288, (1u << 20) + 3};
    static const size_t quick_sizes[] = {33, 2048, 2049, 8192, 65613, 262147};
    const size_t *sz = g_quick ? quick_sizes : sizes;
    const size_t num = g_quick ? COUNT(quick_sizes) : COUNT(sizes);
    const unsigned dists = g_quick ? 1u << KEYGEN_RANDOM : (1u << KEYGEN_RANDOM | 1u << KEYGEN_FEW);
    const size_t failures =
        sc_run_matrix(ctx, &wt_device_memory, &wt_device_memory, sz, num, dists, g_cpu, stderr);
    warpsort_destroy(ctx);
    assert_int_equal(failures, 0);
}

/* Device to device at merge-path sizes with many passes (2^22 and around
 * it: full and partial tiles), and the sample sort above its threshold
 * (2^23 + 1), which only the sm_90 family (compute capability 9 and up)
 * takes: elsewhere those sizes are merge-path cases again, and skipped. */
static void test_device_leaf_large(void **state) {
    (void)state;
    REQUIRE_GPU();
    const size_t m = (size_t)1 << 22, big = ((size_t)1 << 23) + 12345;
    if (!device_has(3.0 * (double)big * 8)) skip();
    warpsort_context_t *ctx = wt_gpu_context(0, 0);
    const sc_case_t merge_cases[] = {
        {WARPSORT_U32, 0, m, KEYGEN_RANDOM, 11, 0},
        {WARPSORT_F64, WARPSORT_DESCENDING, m - 3, KEYGEN_NAN_MIX, 12, 0},
        {WARPSORT_I32, 0, m + 4097, KEYGEN_FEW, 13, 0},
    };
    run_cases(ctx, merge_cases, g_quick ? 1 : COUNT(merge_cases));
    int dev = 0, major = 0;
    CUDA_OK(cudaGetDevice(&dev));
    CUDA_OK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    if (major < 9) {
        warpsort_destroy(ctx);
        return;
    }
    const sc_case_t sample_cases[] = {
        {WARPSORT_U32, 0, big, KEYGEN_RANDOM, 21, 0},
        {WARPSORT_F64, WARPSORT_DESCENDING, big, KEYGEN_NAN_MIX, 22, 0},
        {WARPSORT_I64, 0, big, KEYGEN_FEW, 23, 0},
        {WARPSORT_F32, 0, big, KEYGEN_EQUAL, 24, 0},
    };
    run_cases(ctx, sample_cases, g_quick ? 1 : COUNT(sample_cases));
    warpsort_destroy(ctx);
}

/* The sample sort out of place on small inputs: test hooks (read when the
 * context is created, src/core/test_hooks.h) put every n above one tile on
 * the sample path with 1 to 4 levels, so level 0 reads keys_in and the
 * levels after it ping-pong an odd or even number of times; buckets left
 * after level 0 (in the workspace) and after level 1 (in keys_out) are
 * both sorted into keys_out. Only the sm_90 family has the sample path;
 * elsewhere these are merge-path cases. */
static void test_device_leaf_sample_levels(void **state) {
    (void)state;
    REQUIRE_GPU();
    static const struct {
        const char *splitters, *levels;
    } plans[] = {{"255", "1"}, {"15", "2"}, {"3", "3"}, {"3", "4"}, {"3", "1"}};
    static const size_t sizes[] = {8193, 16385, 131071, 300007};
    static const size_t quick_sizes[] = {16385, 131071};
    size_t failures = 0;
    for (size_t k = 0; k < COUNT(plans); k++) {
        setenv("WARPSORT_SAMPLE_MIN_N", "0", 1);
        setenv("WARPSORT_SAMPLE_SPLITTERS", plans[k].splitters, 1);
        setenv("WARPSORT_SAMPLE_LEVELS", plans[k].levels, 1);
        warpsort_context_t *ctx = wt_gpu_context(0, 0);
        unsetenv("WARPSORT_SAMPLE_MIN_N");
        unsetenv("WARPSORT_SAMPLE_SPLITTERS");
        unsetenv("WARPSORT_SAMPLE_LEVELS");
        failures +=
            sc_run_matrix(ctx, &wt_device_memory, &wt_device_memory, g_quick ? quick_sizes : sizes,
                          g_quick ? COUNT(quick_sizes) : COUNT(sizes),
                          1u << KEYGEN_RANDOM | 1u << KEYGEN_FEW, g_cpu, stderr);
        warpsort_destroy(ctx);
    }
    assert_int_equal(failures, 0);
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
        cmocka_unit_test(test_memory_pairs),       cmocka_unit_test(test_auto),
        cmocka_unit_test(test_default_ring_large), cmocka_unit_test(test_out_of_core),
        cmocka_unit_test(test_failure_in_core),    cmocka_unit_test(test_failure_out_of_core),
        cmocka_unit_test(test_device_overlap),     cmocka_unit_test(test_device_leaf_small_merge),
        cmocka_unit_test(test_device_leaf_large),  cmocka_unit_test(test_device_leaf_sample_levels),
    };
    int failed = _cmocka_run_group_tests("gpu_sort_copy", tests, COUNT(tests), NULL, NULL);
    warpsort_destroy(g_cpu);
    if (failed) return failed;
    return g_have_gpu ? 0 : WT_EXIT_SKIPPED;
}
