/*
 * test_gpu_segmented.c - batched rows and segments on the CUDA backend:
 * the cases of tests/cpu/test_segmented.c (segmented_cases.h) on device and
 * host memory, each compared byte for byte with the CPU backend wherever
 * the order is determined; host offsets beside device keys; a segment of
 * 2^24 + 1 beside tiny ones and a few huge segments, rows either side of
 * the switch to the leaf (on Hopper, 2049 .. 16384 items and the first
 * runs of longer segments take the radix blocks, 16385 .. 32768 4-byte
 * keys (alone or with 4-byte values) a pair of them in a cluster; ctest
 * gpu_segmented_no_radix runs the quick cases through the block sorts,
 * WARPSORT_SEG_NO_RADIX, and gpu_segmented_no_cluster the few-runs cases
 * through the long path, WARPSORT_SEG_NO_CLUSTER); the block class of
 * 8193 .. 16384 items and long segments from runs of 16384 around their
 * edges, with a caller workspace of exactly the queried size and on the
 * smaller chips' shapes (test hook WARPSORT_SMEM_LIMIT); bad device
 * offsets with and without a caller workspace; CUDA-graph captures and
 * replays of calls with a caller workspace.
 *
 * Standalone (--quick, --filter); without a CUDA backend or device every
 * test reports SKIPPED and the program exits 77.
 */
#define _POSIX_C_SOURCE 200809L /* setenv, strdup */
#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_memory.h"
#include "segmented_cases.h"
#include "wt_cmocka.h"

#define WT_EXIT_SKIPPED 77

static warpsort_context_t *g_gpu; /* NULL: no CUDA backend or device */
static warpsort_context_t *g_cpu; /* the oracle */
static int g_quick;

static const struct {
    wt_op_t op;
    size_t second;
} k_ops[] = {
    {WT_OP_SORT, 0}, {WT_OP_PAIRS, 4}, {WT_OP_PAIRS, 8}, {WT_OP_ARGSORT, 4}, {WT_OP_ARGSORT, 8}};

static size_t run(const wt_memory_t *mem, const wt_memory_t *offs_mem, const sg_case_t *c) {
    char msg[768];
    if (sg_run_case(g_gpu, mem, offs_mem, c, g_cpu, msg, sizeof msg)) {
        print_error("%s\n", msg);
        return 1;
    }
    return 0;
}

/* Every switch length in one call, every combination and distribution. */
static void test_mix(void **state) {
    WT_REQUIRE_GPU(g_gpu);
    const warpsort_dtype_t dt = (warpsort_dtype_t)(intptr_t)*state;
    size_t lengths[96], failures = 0;
    for (size_t o = 0; o < SG_COUNT(k_ops); o++) {
        for (unsigned flags = 0; flags < 4; flags++) {
            for (int d = 0; d < KEYGEN_DIST_COUNT; d++) {
                if (g_quick && d != KEYGEN_RANDOM && d != KEYGEN_NAN_MIX && d != KEYGEN_FEW)
                    continue;
                const uint64_t seed = 0x6E6ull + 97u * o + 13u * flags + (uint64_t)d;
                const size_t m = sg_mix(lengths, SG_COUNT(lengths), seed);
                sg_case_t c = {
                    k_ops[o].op, dt, k_ops[o].second, flags, (keygen_dist_t)d, seed, lengths, m, 0};
                failures += run(&wt_device_memory, NULL, &c);
                /* host arrays, and host offsets beside device arrays */
                if (d == KEYGEN_NAN_MIX) failures += run(&wt_host_memory, NULL, &c);
                if (d == KEYGEN_FEW) failures += run(&wt_device_memory, &wt_host_memory, &c);
            }
        }
    }
    assert_int_equal(failures, 0);
}

/* Equal rows of every class, on device and host memory. */
static void test_rows(void **state) {
    (void)state;
    WT_REQUIRE_GPU(g_gpu);
    static const size_t row_lens[] = {
        1,    2,     3,     4,     5,     8,     9,     31,    32,    33,    64,    65,    128,
        129,  256,   257,   512,   513,   1024,  1025,  2048,  2049,  4096,  4097,  5000,  8192,
        8193, 12000, 16383, 16384, 16385, 24577, 32767, 32768, 32769, 65535, 65536, 65537, 70000};
    size_t failures = 0;
    for (size_t r = 0; r < SG_COUNT(row_lens); r++) {
        for (size_t o = 0; o < SG_COUNT(k_ops); o++) {
            for (int d = 0; d < WARPSORT_DTYPE_COUNT_; d++) {
                if (g_quick && d != WARPSORT_F32 && d != WARPSORT_U64) continue;
                const unsigned flags = (unsigned)(r + o + (size_t)d) & 3u;
                const size_t rows = row_lens[r] > 16384 ? 3 : row_lens[r] > 4096 ? 5 : 37;
                sg_case_t c = {k_ops[o].op,
                               (warpsort_dtype_t)d,
                               k_ops[o].second,
                               flags,
                               (keygen_dist_t)((r + (size_t)d) % KEYGEN_DIST_COUNT),
                               0xA0ull + r,
                               NULL,
                               rows,
                               row_lens[r]};
                failures += run(&wt_device_memory, NULL, &c);
                if (r % 5 == 0 && o < 2) failures += run(&wt_host_memory, NULL, &c);
            }
        }
    }
    assert_int_equal(failures, 0);
}

/* A segment of 2^24 + 1 beside tiny ones; four of 2^22 (all SMs busy on a
 * few huge segments); long segments of many lengths (merge passes). */
static void test_long_segments(void **state) {
    (void)state;
    WT_REQUIRE_GPU(g_gpu);
    static const size_t huge[] = {1, 5, ((size_t)1 << 24) + 1, 0, 33, 2, 4097};
    static const size_t four[] = {(size_t)1 << 22, (size_t)1 << 22, (size_t)1 << 22,
                                  (size_t)1 << 22};
    static const size_t mixed_long[] = {2049,  8192, 3,    8193, 100000, 65536, 65537, 0,
                                        12345, 2050, 6143, 6145, 262145, 16384, 16385, 24577};
    /* Every four-way pass count a segment can take beside the others
     * (first runs of 16384, 8192 or 2048 by shape): each side of 4, 16,
     * 64 and 256 first runs, so segments of one call end their passes in
     * different buffers. */
    static const size_t pass_edges[] = {65535,   65536, 65537,   7,       262143, 262144,
                                        262145,  32769, 16385,   1048577, 131073, 49153,
                                        4194303, 1,     4194305, 8193,    2047,   2049};
    sg_case_t cases[] = {
        {WT_OP_SORT, WARPSORT_U32, 0, 0, KEYGEN_RANDOM, 1, huge, SG_COUNT(huge), 0},
        {WT_OP_PAIRS, WARPSORT_U64, 4, WARPSORT_STABLE, KEYGEN_FEW, 2, huge, SG_COUNT(huge), 0},
        {WT_OP_ARGSORT, WARPSORT_F32, 4, WARPSORT_DESCENDING, KEYGEN_NAN_MIX, 3, huge,
         SG_COUNT(huge), 0},
        {WT_OP_SORT, WARPSORT_F32, 0, WARPSORT_DESCENDING, KEYGEN_RANDOM, 4, four, SG_COUNT(four),
         0},
        {WT_OP_PAIRS, WARPSORT_F64, 8, WARPSORT_STABLE | WARPSORT_DESCENDING, KEYGEN_TWO, 5,
         mixed_long, SG_COUNT(mixed_long), 0},
        {WT_OP_ARGSORT, WARPSORT_I64, 8, 0, KEYGEN_SKEWED, 6, mixed_long, SG_COUNT(mixed_long), 0},
        {WT_OP_PAIRS, WARPSORT_I32, 8, WARPSORT_STABLE, KEYGEN_EQUAL, 7, mixed_long,
         SG_COUNT(mixed_long), 0},
        /* rows either side of the leaf switch (2^21 items: each row by the
         * leaf, with the whole device; 2^20: 64 runs a row, three passes) */
        {WT_OP_SORT, WARPSORT_U32, 0, 0, KEYGEN_RANDOM, 8, NULL, 3, ((size_t)1 << 21) - 1},
        {WT_OP_SORT, WARPSORT_F32, 0, WARPSORT_DESCENDING, KEYGEN_NAN_MIX, 9, NULL, 4,
         (size_t)1 << 22},
        {WT_OP_PAIRS, WARPSORT_F64, 8, WARPSORT_STABLE, KEYGEN_FEW, 10, NULL, 3, (size_t)1 << 20},
        {WT_OP_ARGSORT, WARPSORT_I32, 4, WARPSORT_DESCENDING, KEYGEN_TWO, 11, NULL, 2,
         ((size_t)1 << 21) + 3},
        {WT_OP_ARGSORT, WARPSORT_U64, 8, 0, KEYGEN_EQUAL, 12, NULL, 2, (size_t)1 << 21},
        /* the four-way pass counts, one call each (cases 12 .. 16) */
        {WT_OP_SORT, WARPSORT_F32, 0, 0, KEYGEN_NAN_MIX, 13, pass_edges, SG_COUNT(pass_edges), 0},
        {WT_OP_PAIRS, WARPSORT_U32, 4, WARPSORT_STABLE | WARPSORT_DESCENDING, KEYGEN_FEW, 14,
         pass_edges, SG_COUNT(pass_edges), 0},
        {WT_OP_ARGSORT, WARPSORT_I64, 8, 0, KEYGEN_TWO, 15, pass_edges, SG_COUNT(pass_edges), 0},
        {WT_OP_PAIRS, WARPSORT_U64, 8, 0, KEYGEN_RANDOM, 16, pass_edges, SG_COUNT(pass_edges), 0},
        {WT_OP_SORT, WARPSORT_I32, 0, WARPSORT_DESCENDING, KEYGEN_REVERSED, 17, pass_edges,
         SG_COUNT(pass_edges), 0},
        /* leaf rows in one sample sort, each row a level-0 segment
         * (ws_plan_rows; cases 8, 10 and 11 above take it too) */
        {WT_OP_PAIRS, WARPSORT_U32, 4, 0, KEYGEN_SKEWED, 18, NULL, 8, (size_t)1 << 21},
        {WT_OP_SORT, WARPSORT_U64, 0, WARPSORT_DESCENDING, KEYGEN_SORTED, 19, NULL, 2,
         ((size_t)1 << 22) + 5},
        {WT_OP_PAIRS, WARPSORT_F32, 8, WARPSORT_STABLE, KEYGEN_FEW, 20, NULL, 3,
         ((size_t)3 << 20) + 1},
        /* groups of 2^25 items (WS_SEG_LEAF_GROUP): 16 rows in one sample
         * sort, the 17th alone; 7 rows, then 2 in one */
        {WT_OP_SORT, WARPSORT_I32, 0, WARPSORT_DESCENDING, KEYGEN_RANDOM, 21, NULL, 17,
         (size_t)1 << 21},
        {WT_OP_ARGSORT, WARPSORT_F32, 4, 0, KEYGEN_FEW, 22, NULL, 9, ((size_t)1 << 22) + 1},
    };
    size_t failures = 0;
    for (size_t i = 0; i < SG_COUNT(cases); i++) {
        if (g_quick && i >= 4 && i != 4 && i != 7 && i != 10 && i != 12 && i != 13 && i != 17)
            continue;
        failures += run(&wt_device_memory, NULL, &cases[i]);
    }
    failures += run(&wt_host_memory, NULL, &cases[4]);
    failures += run(&wt_host_memory, NULL, &cases[9]);
    assert_int_equal(failures, 0);
}

/*--- the class of 8193 .. 16384 items ---*/

/* Every edge of the 1024 x 16 block class and of the long segments' runs
 * of 16384 (one, two and three runs, a last run of one item) in one call,
 * with short segments between them. Keys alone and 4-byte keys with 4-byte
 * values or indices take the class where the device's block holds it;
 * other widths keep runs of 8192 (or 2048) and are here for the same edges
 * in their shapes. The nan-mix pairs put real keys equal to the padding
 * sentinel into partial segments and runs, and the ties of the few / two /
 * equal ones make stable calls sort again by key and position: both take
 * the second sort, whose values are read back by position. */
static const size_t k_full_lengths[] = {8192,  8193,  16383, 3,     16384, 16385, 0,
                                        12288, 32768, 1,     32769, 49153, 2049,  16384,
                                        9000,  100,   65536, 16384, 8191,  81921};

static const sg_case_t k_full_cases[] = {
    {WT_OP_SORT, WARPSORT_U32, 0, 0, KEYGEN_RANDOM, 21, k_full_lengths, SG_COUNT(k_full_lengths),
     0},
    {WT_OP_SORT, WARPSORT_F32, 0, WARPSORT_DESCENDING, KEYGEN_NAN_MIX, 22, k_full_lengths,
     SG_COUNT(k_full_lengths), 0},
    {WT_OP_SORT, WARPSORT_I32, 0, WARPSORT_STABLE, KEYGEN_FEW, 23, k_full_lengths,
     SG_COUNT(k_full_lengths), 0},
    {WT_OP_SORT, WARPSORT_U64, 0, 0, KEYGEN_SKEWED, 24, k_full_lengths, SG_COUNT(k_full_lengths),
     0},
    {WT_OP_SORT, WARPSORT_F64, 0, WARPSORT_DESCENDING, KEYGEN_NAN_MIX, 25, k_full_lengths,
     SG_COUNT(k_full_lengths), 0},
    {WT_OP_SORT, WARPSORT_I64, 0, 0, KEYGEN_EQUAL, 26, k_full_lengths, SG_COUNT(k_full_lengths), 0},
    /* stable ties: values must keep input order across the class edges */
    {WT_OP_PAIRS, WARPSORT_U32, 4, WARPSORT_STABLE, KEYGEN_FEW, 27, k_full_lengths,
     SG_COUNT(k_full_lengths), 0},
    {WT_OP_PAIRS, WARPSORT_F32, 8, WARPSORT_STABLE | WARPSORT_DESCENDING, KEYGEN_TWO, 28,
     k_full_lengths, SG_COUNT(k_full_lengths), 0},
    {WT_OP_PAIRS, WARPSORT_I64, 4, 0, KEYGEN_RANDOM, 29, k_full_lengths, SG_COUNT(k_full_lengths),
     0},
    {WT_OP_ARGSORT, WARPSORT_I32, 4, 0, KEYGEN_EQUAL, 30, k_full_lengths, SG_COUNT(k_full_lengths),
     0},
    {WT_OP_ARGSORT, WARPSORT_F32, 8, WARPSORT_DESCENDING, KEYGEN_FEW, 31, k_full_lengths,
     SG_COUNT(k_full_lengths), 0},
    {WT_OP_ARGSORT, WARPSORT_U64, 8, 0, KEYGEN_TWO, 32, k_full_lengths, SG_COUNT(k_full_lengths),
     0},
    /* equal rows of the class (no classify pass) and just past it */
    {WT_OP_SORT, WARPSORT_U32, 0, 0, KEYGEN_SORTED, 33, NULL, 7, 16384},
    {WT_OP_SORT, WARPSORT_F64, 0, WARPSORT_DESCENDING, KEYGEN_FEW, 34, NULL, 5, 16383},
    {WT_OP_SORT, WARPSORT_F32, 0, 0, KEYGEN_REVERSED, 35, NULL, 6, 16385},
    {WT_OP_PAIRS, WARPSORT_U32, 4, WARPSORT_STABLE, KEYGEN_TWO, 36, NULL, 4, 16384},
    {WT_OP_ARGSORT, WARPSORT_I32, 4, 0, KEYGEN_FEW, 37, NULL, 5, 8193},
    /* the second sort: sentinel keys (unstable and stable), ties */
    {WT_OP_PAIRS, WARPSORT_U32, 4, 0, KEYGEN_NAN_MIX, 38, k_full_lengths, SG_COUNT(k_full_lengths),
     0},
    {WT_OP_PAIRS, WARPSORT_I32, 4, WARPSORT_STABLE | WARPSORT_DESCENDING, KEYGEN_NAN_MIX, 39,
     k_full_lengths, SG_COUNT(k_full_lengths), 0},
    {WT_OP_ARGSORT, WARPSORT_U32, 4, WARPSORT_DESCENDING, KEYGEN_NAN_MIX, 40, k_full_lengths,
     SG_COUNT(k_full_lengths), 0},
    {WT_OP_PAIRS, WARPSORT_F32, 4, WARPSORT_STABLE, KEYGEN_EQUAL, 41, k_full_lengths,
     SG_COUNT(k_full_lengths), 0},
    {WT_OP_PAIRS, WARPSORT_U32, 4, 0, KEYGEN_NAN_MIX, 42, NULL, 3, 16383},
    {WT_OP_PAIRS, WARPSORT_U64, 8, WARPSORT_STABLE, KEYGEN_FEW, 43, k_full_lengths,
     SG_COUNT(k_full_lengths), 0},
};

/* The cases above on g_gpu; then with a caller workspace of exactly the
 * size warpsort_segmented_workspace_size gives (a list or buffer the query
 * sized short fails as WORKSPACE_TOO_SMALL or writes past it). */
static void test_class_16384(void **state) {
    (void)state;
    WT_REQUIRE_GPU(g_gpu);
    size_t failures = 0;
    for (size_t i = 0; i < SG_COUNT(k_full_cases); i++) {
        const sg_case_t *c = &k_full_cases[i];
        failures += run(&wt_device_memory, NULL, c);
        if (i == 2 || i == 6) failures += run(&wt_host_memory, NULL, c);
        if (i == 0 || i == 9) failures += run(&wt_device_memory, &wt_host_memory, c);
        if (g_quick && i % 3 != 0) continue;
        size_t n = 0;
        for (size_t s = 0; c->lengths && s < c->num_segments; s++) n += c->lengths[s];
        if (!c->lengths) n = c->num_segments * c->row_len;
        const size_t second = c->op == WT_OP_SORT ? 0 : c->second_bytes;
        const unsigned wflags = c->op == WT_OP_ARGSORT ? WARPSORT_WORKSPACE_ARGSORT : 0;
        size_t bytes = 0;
        assert_int_equal(warpsort_segmented_workspace_size(g_gpu, n, c->num_segments, c->dtype,
                                                           second, wflags, &bytes),
                         WARPSORT_OK);
        void *ws = NULL;
        CUDA_OK(cudaMalloc(&ws, bytes));
        assert_int_equal(warpsort_set_workspace(g_gpu, ws, bytes), WARPSORT_OK);
        failures += run(&wt_device_memory, NULL, c);
        assert_int_equal(warpsort_segments_check(g_gpu), WARPSORT_OK);
        assert_int_equal(warpsort_set_workspace(g_gpu, NULL, 0), WARPSORT_OK);
        CUDA_OK(cudaFree(ws));
    }
    assert_int_equal(failures, 0);
}

/* The same edges where a smaller chip's shared memory gives smaller shapes
 * (WARPSORT_SMEM_LIMIT: the sm_80, sm_86 and sm_75 rows' per-block limits):
 * each width takes the largest shape its family's block holds, and every
 * shape sorts the same. */
static void test_class_16384_smaller_chips(void **state) {
    (void)state;
    WT_REQUIRE_GPU(g_gpu);
    static const char *const limits[] = {"166912", "101376", "65536"};
    size_t failures = 0;
    for (size_t l = 0; l < SG_COUNT(limits); l++) {
        const char *old = getenv("WARPSORT_SMEM_LIMIT");
        char *saved = old ? strdup(old) : NULL;
        setenv("WARPSORT_SMEM_LIMIT", limits[l], 1);
        warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
        cfg.backend = WARPSORT_BACKEND_CUDA;
        warpsort_context_t *ctx = NULL;
        const warpsort_status_t st = warpsort_create(&ctx, &cfg);
        if (saved)
            setenv("WARPSORT_SMEM_LIMIT", saved, 1);
        else
            unsetenv("WARPSORT_SMEM_LIMIT");
        free(saved);
        if (st != WARPSORT_OK)
            fail_msg("WARPSORT_SMEM_LIMIT=%s: %s", limits[l], warpsort_status_name(st));
        warpsort_context_t *full = g_gpu;
        g_gpu = ctx;
        for (size_t i = 0; i < SG_COUNT(k_full_cases); i++) {
            if (g_quick && i % 2 != 0) continue;
            failures += run(&wt_device_memory, NULL, &k_full_cases[i]);
        }
        g_gpu = full;
        warpsort_destroy(ctx);
    }
    assert_int_equal(failures, 0);
}

/*--- segments of two to four first runs ---*/

/* Segments of two to four first runs of 16384 (the full shape's; 8192 or
 * 2048 in the others) either side of each run's edge (a last run of one
 * item, or one short of full), with short and long ones between them, for
 * every op, dtype and distribution: one merge pass, whose slots take two,
 * three or four runs; on Hopper, 4-byte keys, alone or with 4-byte values
 * (32-bit argsort indices too), of up to 32768 items take class 13
 * instead, two radix blocks merged across a cluster. Few / two / equal
 * keys make ties that a stable call must keep in order across the runs. */
static const size_t k_few_runs_lengths[] = {16385, 32768, 5,     32769, 49152, 65536, 0,
                                            65535, 16386, 49153, 32767, 65537, 1,     24576,
                                            40000, 16384, 32770, 61441, 300,   57345};

static void test_few_runs(void **state) {
    (void)state;
    WT_REQUIRE_GPU(g_gpu);
    static const warpsort_dtype_t dtypes[] = {WARPSORT_U32, WARPSORT_F32, WARPSORT_I32,
                                              WARPSORT_U64, WARPSORT_F64};
    size_t failures = 0;
    for (size_t o = 0; o < SG_COUNT(k_ops); o++) {
        for (size_t t = 0; t < SG_COUNT(dtypes); t++) {
            for (int d = 0; d < KEYGEN_DIST_COUNT; d++) {
                if (g_quick && (d + (int)t + (int)o) % 3 != 0) continue;
                const unsigned flags = (unsigned)(o + t + (size_t)d) & 3u;
                const uint64_t seed = 0xC1ull + 31u * o + 7u * t + (uint64_t)d;
                sg_case_t c = {k_ops[o].op,
                               dtypes[t],
                               k_ops[o].second,
                               flags,
                               (keygen_dist_t)d,
                               seed,
                               k_few_runs_lengths,
                               SG_COUNT(k_few_runs_lengths),
                               0};
                failures += run(&wt_device_memory, NULL, &c);
                if (d == KEYGEN_FEW && t == 0) failures += run(&wt_host_memory, NULL, &c);
            }
        }
    }
    assert_int_equal(failures, 0);
}

/*--- bad device offsets ---*/

static void upload(void *dst, const void *src, size_t bytes) {
    CUDA_OK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
}

/* Runs sort_segments_pairs with device offsets `offsets` (num_segments + 1)
 * over 4096 device keys; returns the status, data checked untouched. */
static warpsort_status_t bad_call(const uint64_t *offsets, size_t num_segments, int with_ws,
                                  char *text, size_t text_len) {
    const size_t n = 4096;
    uint32_t *hk = malloc(n * 4), *hv = malloc(n * 4), *back = malloc(n * 4);
    assert_non_null(hk);
    assert_non_null(hv);
    assert_non_null(back);
    for (size_t i = 0; i < n; i++) {
        hk[i] = (uint32_t)wt_mix(i);
        hv[i] = (uint32_t)i;
    }
    void *dk, *dv, *doffs, *ws = NULL;
    CUDA_OK(cudaMalloc(&dk, n * 4));
    CUDA_OK(cudaMalloc(&dv, n * 4));
    CUDA_OK(cudaMalloc(&doffs, (num_segments + 1) * 8));
    upload(dk, hk, n * 4);
    upload(dv, hv, n * 4);
    upload(doffs, offsets, (num_segments + 1) * 8);
    size_t bytes = 0;
    if (with_ws) {
        assert_int_equal(
            warpsort_segmented_workspace_size(g_gpu, n, num_segments, WARPSORT_U32, 4, 0, &bytes),
            WARPSORT_OK);
        CUDA_OK(cudaMalloc(&ws, bytes));
        assert_int_equal(warpsort_set_workspace(g_gpu, ws, bytes), WARPSORT_OK);
    }
    warpsort_status_t st = warpsort_sort_segments_pairs(g_gpu, dk, dv, n, doffs, num_segments,
                                                        WARPSORT_U32, 4, WARPSORT_STABLE);
    snprintf(text, text_len, "%s", warpsort_last_error(g_gpu));
    if (with_ws) {
        assert_int_equal(st, WARPSORT_OK); /* asynchronous: the check reports it */
        st = warpsort_segments_check(g_gpu);
        snprintf(text, text_len, "%s", warpsort_last_error(g_gpu));
        assert_int_equal(warpsort_segments_check(g_gpu), WARPSORT_OK); /* reported once */
        assert_int_equal(warpsort_set_workspace(g_gpu, NULL, 0), WARPSORT_OK);
    }
    assert_int_equal(warpsort_synchronize(g_gpu), WARPSORT_OK);
    CUDA_OK(cudaMemcpy(back, dk, n * 4, cudaMemcpyDeviceToHost));
    assert_memory_equal(back, hk, n * 4);
    CUDA_OK(cudaMemcpy(back, dv, n * 4, cudaMemcpyDeviceToHost));
    assert_memory_equal(back, hv, n * 4);
    cudaFree(dk);
    cudaFree(dv);
    cudaFree(doffs);
    if (ws) cudaFree(ws);
    free(hk);
    free(hv);
    free(back);
    return st;
}

static void test_bad_device_offsets(void **state) {
    (void)state;
    WT_REQUIRE_GPU(g_gpu);
    /* many segments, one decrease far in (the first of two bad indices wins) */
    const size_t S = 1000;
    uint64_t *o = malloc((S + 1) * 8);
    assert_non_null(o);
    for (size_t i = 0; i <= S; i++) o[i] = (uint64_t)(i * 4096 / S);
    o[700] = o[699] - 1;
    o[900] = 0;
    const uint64_t last_short[] = {0, 100, 3000, 4095};
    const uint64_t first_bad[] = {7, 100, 4096};
    struct {
        const uint64_t *o;
        size_t S;
        size_t bad;
    } cases[] = {{o, S, 700}, {last_short, 3, 3}, {first_bad, 2, 0}};
    for (int with_ws = 0; with_ws < 2; with_ws++) {
        for (size_t k = 0; k < SG_COUNT(cases); k++) {
            char text[512], want[64];
            snprintf(want, sizeof want, "bad offset at index %zu", cases[k].bad);
            warpsort_status_t st = bad_call(cases[k].o, cases[k].S, with_ws, text, sizeof text);
            assert_int_equal(st, WARPSORT_INVALID_ARGUMENT);
            if (!strstr(text, want)) fail_msg("message \"%s\" does not name \"%s\"", text, want);
        }
    }
    free(o);
}

/*--- CUDA graph: capture with a caller workspace, replay ---*/

/* Nodes of graph with no node after them: 1 for a capture on one stream,
 * one per branch for a capture that forked side streams and joined them
 * back (the join adds edges to the stream, not nodes). The edges are read
 * with their data: the long segments' passes are dependent launches
 * (pdl.cuh), whose programmatic edges a query without it refuses as
 * lossy. */
static size_t graph_leaves(cudaGraph_t graph) {
    size_t nodes = 0, edges = 0;
    CUDA_OK(cudaGraphGetNodes(graph, NULL, &nodes));
    CUDA_OK(cudaGraphGetEdges(graph, NULL, NULL, NULL, &edges));
    cudaGraphNode_t *all = malloc((nodes + 1) * sizeof *all);
    cudaGraphNode_t *from = malloc((edges + 1) * sizeof *from);
    cudaGraphNode_t *to = malloc((edges + 1) * sizeof *to);
    cudaGraphEdgeData *data = malloc((edges + 1) * sizeof *data);
    assert_true(all && from && to && data);
    CUDA_OK(cudaGraphGetNodes(graph, all, &nodes));
    CUDA_OK(cudaGraphGetEdges(graph, from, to, data, &edges));
    size_t leaves = 0;
    for (size_t i = 0; i < nodes; i++) {
        int has_next = 0;
        for (size_t e = 0; e < edges && !has_next; e++) has_next = from[e] == all[i];
        leaves += !has_next;
    }
    free(all);
    free(from);
    free(to);
    free(data);
    return leaves;
}

/* One capture case: f32 keys with vb-byte values (segment-local
 * positions) in segments of `lengths`, descending and stable. */
static void graph_capture_case(const size_t *lengths, size_t S, size_t vb) {
    uint64_t offsets[33];
    assert_true(S < SG_COUNT(offsets));
    offsets[0] = 0;
    for (size_t s = 0; s < S; s++) offsets[s + 1] = offsets[s] + lengths[s];
    const size_t n = (size_t)offsets[S];

    cudaStream_t stream;
    CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
    cfg.backend = WARPSORT_BACKEND_CUDA;
    cfg.stream = stream;
    warpsort_context_t *ctx;
    assert_int_equal(warpsort_create(&ctx, &cfg), WARPSORT_OK);
    size_t bytes = 0;
    assert_int_equal(warpsort_segmented_workspace_size(ctx, n, S, WARPSORT_F32, vb, 0, &bytes),
                     WARPSORT_OK);
    void *ws, *dk, *dv, *doffs;
    CUDA_OK(cudaMalloc(&ws, bytes));
    CUDA_OK(cudaMalloc(&dk, n * 4));
    CUDA_OK(cudaMalloc(&dv, n * vb));
    CUDA_OK(cudaMalloc(&doffs, sizeof offsets));
    upload(doffs, offsets, sizeof offsets);
    assert_int_equal(warpsort_set_workspace(ctx, ws, bytes), WARPSORT_OK);

    float *hk = malloc(n * 4), *out = malloc(n * 4);
    unsigned char *hv = malloc(n * vb), *outv = malloc(n * vb);
    assert_non_null(hk);
    assert_non_null(hv);
    assert_non_null(out);
    assert_non_null(outv);

    /* warm 0: captured on a fresh context (one stream); warm 1: after an
     * uncaptured call made the side streams, so the capture forks and joins
     * them (side_streams.h), which the graph's shape shows */
    for (int warm = 0; warm < 2; warm++) {
        if (warm) {
            assert_int_equal(warpsort_sort_segments_pairs(ctx, dk, dv, n, doffs, S, WARPSORT_F32,
                                                          vb, WARPSORT_DESCENDING),
                             WARPSORT_OK);
            CUDA_OK(cudaStreamSynchronize(stream));
        }
        cudaGraph_t graph;
        cudaGraphExec_t exec;
        CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
        warpsort_status_t st = warpsort_sort_segments_pairs(
            ctx, dk, dv, n, doffs, S, WARPSORT_F32, vb, WARPSORT_DESCENDING | WARPSORT_STABLE);
        cudaError_t end = cudaStreamEndCapture(stream, &graph);
        assert_int_equal(st, WARPSORT_OK);
        CUDA_OK(end);
        /* the second capture forks (unless WARPSORT_ONE_STREAM keeps one
         * stream): its classes run on side streams, one branch each */
        const char *one = getenv("WARPSORT_ONE_STREAM");
        const int forks = warm && !(one && *one && strcmp(one, "0") != 0);
        const size_t leaves = graph_leaves(graph);
        if (forks ? leaves < 2 : leaves != 1)
            fail_msg("graph %d: %zu leaves, expected %s", warm, leaves, forks ? "2 or more" : "1");
        CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));

        for (int round = 0; round < 2; round++) { /* replay on fresh inputs */
            keygen_fill(hk, n, WARPSORT_F32, round ? KEYGEN_FEW : KEYGEN_NAN_MIX,
                        42u + (unsigned)round);
            for (size_t s = 0; s < S; s++)
                for (uint64_t i = offsets[s]; i < offsets[s + 1]; i++) {
                    if (vb == 8)
                        ((uint64_t *)hv)[i] = i - offsets[s];
                    else
                        ((uint32_t *)hv)[i] = (uint32_t)(i - offsets[s]);
                }
            upload(dk, hk, n * 4);
            upload(dv, hv, n * vb);
            CUDA_OK(cudaGraphLaunch(exec, stream));
            CUDA_OK(cudaStreamSynchronize(stream));
            CUDA_OK(cudaMemcpy(out, dk, n * 4, cudaMemcpyDeviceToHost));
            CUDA_OK(cudaMemcpy(outv, dv, n * vb, cudaMemcpyDeviceToHost));
            assert_int_equal(warpsort_segments_check(ctx), WARPSORT_OK);
            char msg[320];
            for (size_t s = 0; s < S; s++) {
                const size_t b = (size_t)offsets[s], len = lengths[s];
                if (wt_check_sorted(out + b, len, WARPSORT_F32, WARPSORT_DESCENDING, msg,
                                    sizeof msg) ||
                    wt_check_values(hk + b, out + b, outv + b * vb, len, WARPSORT_F32, vb, 1, msg,
                                    sizeof msg))
                    fail_msg("%zu-byte values, graph %d, replay %d, segment %zu: %s", vb, warm,
                             round, s, msg);
            }
        }
        cudaGraphExecDestroy(exec);
        cudaGraphDestroy(graph);
    }
    warpsort_destroy(ctx);
    cudaFree(ws);
    cudaFree(dk);
    cudaFree(dv);
    cudaFree(doffs);
    cudaStreamDestroy(stream);
    free(hk);
    free(hv);
    free(out);
    free(outv);
}

static void test_graph_capture(void **state) {
    (void)state;
    WT_REQUIRE_GPU(g_gpu);
    /* every kind of launch but the cluster pairs: warp and block classes,
     * a long segment's runs, cuts and merge passes */
    static const size_t mixed[] = {0, 1, 3, 17, 33, 300, 1000, 2000, 5000, 70000, 2, 9};
    graph_capture_case(mixed, SG_COUNT(mixed), 8);
    /* 4-byte values: on Hopper the cluster pairs' launch (class 13) too */
    static const size_t pairs[] = {20000, 3, 32768, 16385, 0, 70000, 24577, 16384, 40};
    graph_capture_case(pairs, SG_COUNT(pairs), 4);
}

int main(int argc, char **argv) {
    g_quick = wt_cmocka_options(argc, argv);
    if (g_quick < 0) return 2;
    if (wt_gpu_probe(&g_gpu) < 0) return 1;
    warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
    cfg.backend = WARPSORT_BACKEND_CPU;
    if (warpsort_create(&g_cpu, &cfg) != WARPSORT_OK) {
        fprintf(stderr, "cannot create the CPU oracle context\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        {"gpu_mix_u32", test_mix, NULL, NULL, (void *)(intptr_t)WARPSORT_U32},
        {"gpu_mix_i32", test_mix, NULL, NULL, (void *)(intptr_t)WARPSORT_I32},
        {"gpu_mix_f32", test_mix, NULL, NULL, (void *)(intptr_t)WARPSORT_F32},
        {"gpu_mix_u64", test_mix, NULL, NULL, (void *)(intptr_t)WARPSORT_U64},
        {"gpu_mix_i64", test_mix, NULL, NULL, (void *)(intptr_t)WARPSORT_I64},
        {"gpu_mix_f64", test_mix, NULL, NULL, (void *)(intptr_t)WARPSORT_F64},
        cmocka_unit_test(test_rows),
        cmocka_unit_test(test_long_segments),
        cmocka_unit_test(test_class_16384),
        cmocka_unit_test(test_class_16384_smaller_chips),
        cmocka_unit_test(test_few_runs),
        cmocka_unit_test(test_bad_device_offsets),
        cmocka_unit_test(test_graph_capture),
    };
    int failed = cmocka_run_group_tests_name("gpu_segmented", tests, NULL, NULL);
    const int had_gpu = g_gpu != NULL;
    warpsort_destroy(g_gpu);
    warpsort_destroy(g_cpu);
    if (failed) return failed;
    return had_gpu ? 0 : WT_EXIT_SKIPPED;
}
