/*
 * test_topk_plan.cu - top-k's plan (ws_tk_plan_for, src/cuda/topk.cu)
 * checked on the host: it is host code with no CUDA call, so these run
 * with or without a GPU, in CI too. The GPU tests check each path's
 * results; these pin which path a call takes where the choice is a
 * measured rule (bench/NOTES.md, forty-sixth to forty-eighth sessions):
 *   - rows of at most WS_TK_SHORT_MAX keys take the short path, unless a
 *     path is forced (WARPSORT_TOPK_PATH);
 *   - many rows (WS_TK_SHORT_ROWS_PER_SM an SM) of up to
 *     WS_TK_SHORT_ROW_MAX keys, or twice that with k <= 8, take the warp
 *     path, fewer the row blocks;
 *   - 64-bit rows too long to stage with k <= 32 take the warp path from
 *     four rows an SM, and rows of 2049..4096 keys by row count and k
 *     (WS_TK_WIDE_WARP_*);
 *   - row blocks without the bar keep a row's keys past the registers'
 *     pass in shared memory where two blocks an SM fit (REST), never
 *     when forced to L2 (WARPSORT_TOPK_PATH=rows-l2); 64-bit row blocks
 *     keep room for 256 survivors up to k = 256;
 *   - every plan takes one path, and its workspace holds the staged arrays.
 */
/* cmocka.h (included by wt_cmocka.h) declares C functions without
 * extern "C" */
extern "C" {
#include "wt_cmocka.h"
}
#include <stdio.h>
#include <string.h>

#include "cuda/topk_paths.cuh"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const int g_sms[] = {46, 132, 148};
static const int g_forced[] = {
    WS_TOPK_PATH_PLAN,          WS_TOPK_PATH_ROWS,          WS_TOPK_PATH_ROWS_NARROW,
    WS_TOPK_PATH_WARP,          WS_TOPK_PATH_FILTER,        WS_TOPK_PATH_RADIX,
    WS_TOPK_PATH_FILTER_NARROW, WS_TOPK_PATH_FILTER_SINGLE, WS_TOPK_PATH_ROWS_L2};

/* A device like an H100 (132 SMs) or another sm_90 part. */
static ws_device_info device_of(int sm_count) {
    ws_device_info d = {};
    d.family = WS_FAMILY_SM90;
    d.sm_count = sm_count;
    d.sample_ok = 1;
    d.pdl = 1;
    ws_sample_limits l = {
        WS_SAMPLE_MIN_N, WS_SAMPLE_MIN_N_KEYS, WS_TREE_SLOTS_MAX - 1, WS_MAX_LEVELS, 0, 0};
    d.sample = l;
    return d;
}

static ws_tk_plan plan(const ws_device_info &d, int force, size_t rows, size_t len, size_t kb,
                       size_t k, ws_tk_staging sg = ws_tk_staging{0, 0, 0, 0, 0}) {
    return ws_tk_plan_for(&d, force, rows, len, kb, 0, k, 4, sg);
}

static int paths_of(const ws_tk_plan &p) {
    return !!p.best + !!p.short_rows + !!p.rows_block + !!p.filter + !!p.warp_path;
}

/* Calls f(device, forced path, key bytes, row length, rows) over every
 * SM count, forced path and key width, for these lengths and row counts. */
template <size_t NL, size_t NR, typename F>
static void sweep(const size_t (&lens)[NL], const size_t (&rowss)[NR], F f) {
    for (int sms : g_sms) {
        const ws_device_info d = device_of(sms);
        for (int force : g_forced)
            for (size_t kb = 4; kb <= 8; kb += 4)
                for (size_t len : lens)
                    for (size_t rows : rowss) f(d, force, kb, len, rows);
    }
}

#define EXPECT(cond)                                                                               \
    do {                                                                                           \
        if (!(cond))                                                                               \
            fail_msg("sms=%d force=%d rows=%zu len=%zu kb=%zu k=%zu: %s", d.sm_count, force, rows, \
                     len, kb, k, #cond);                                                           \
    } while (0)

/* Short rows: the short path exactly when the plan chooses, and no
 * workspace beyond the staged arrays. */
static void test_short_rows(void **state) {
    (void)state;
    const size_t lens[] = {1, 2, 3, 31, 32, 33, 63, 64, 65, 100, 256};
    const size_t rowss[] = {1, 7, 5000, (size_t)1 << 20};
    sweep(lens, rowss, [](const ws_device_info &d, int force, size_t kb, size_t len, size_t rows) {
        const size_t ks[] = {1, len / 2 + 1, len};
        for (size_t k : ks) {
            const ws_tk_plan p = plan(d, force, rows, len, kb, k);
            const bool want = len <= WS_TK_SHORT_MAX && force == WS_TOPK_PATH_PLAN;
            EXPECT(!!p.short_rows == want);
            EXPECT(paths_of(p) <= 1);
            if (want) EXPECT(p.total == 0);
        }
    });
}

/* Many rows of 65..256 keys (512 for k <= 8): the warp path from
 * WS_TK_SHORT_ROWS_PER_SM rows an SM, the row blocks below it, and the
 * row blocks whenever a path is forced to them. */
static void test_many_short_rows(void **state) {
    (void)state;
    const size_t lens[] = {65, 128, 255, 256, 257, 511, 512};
    const size_t ks[] = {1, 8, 9, 64, 65, 200, 256};
    for (int sms : g_sms) {
        const ws_device_info d = device_of(sms);
        const size_t many = (size_t)WS_TK_SHORT_ROWS_PER_SM * (size_t)sms;
        for (size_t kb = 4; kb <= 8; kb += 4)
            for (size_t len : lens)
                for (size_t k : ks) {
                    if (k > len) continue;
                    const bool shape =
                        len <= WS_TK_SHORT_ROW_MAX || (len <= 2 * WS_TK_SHORT_ROW_MAX && k <= 8);
                    int force = WS_TOPK_PATH_PLAN;
                    size_t rows = many;
                    ws_tk_plan p = plan(d, force, rows, len, kb, k);
                    EXPECT(paths_of(p) == 1);
                    if (shape) EXPECT(p.warp_path && !p.rows_block);
                    /* (64-bit rows the blocks do not stage, k <= 32: the
                     * warp path from four rows an SM, test_wide_rows) */
                    rows = many - 1;
                    p = plan(d, force, rows, len, kb, k);
                    if (kb == 4 || k > 32) EXPECT(p.rows_block);
                    force = WS_TOPK_PATH_ROWS;
                    rows = many * 4;
                    p = plan(d, force, rows, len, kb, k);
                    EXPECT(p.rows_block && !p.warp_path);
                }
    }
}

/* The plan's path for one shape (no path forced): the warp path when
 * warp, else the row blocks. */
static void expect_warp(const ws_device_info &d, size_t rows, size_t len, size_t kb, size_t k,
                        int warp) {
    const int force = WS_TOPK_PATH_PLAN;
    const ws_tk_plan p = plan(d, force, rows, len, kb, k);
    EXPECT(paths_of(p) == 1);
    EXPECT(!!p.warp_path == !!warp && !!p.rows_block == !warp);
}

/* 64-bit rows too long to stage, k <= 32: the warp path from four rows
 * an SM; 32-bit rows, larger k and fewer rows keep the row blocks. */
static void test_wide_rows(void **state) {
    (void)state;
    for (int sms : g_sms) {
        const ws_device_info d = device_of(sms);
        const size_t len = 16384, four = 4 * (size_t)sms;
        struct {
            size_t rows, kb, k;
            int warp;
        } cases[] = {{four, 8, 16, 1}, {four, 8, 32, 1}, {four - 1, 8, 16, 0},
                     {four, 8, 33, 0}, {four, 4, 16, 0}, {four * 8, 8, 2, 1}};
        for (const auto &c : cases) expect_warp(d, c.rows, len, c.kb, c.k, c.warp);
    }
}

/* 64-bit rows of 2049..4096 keys take the warp path from
 * WS_TK_WIDE_WARP_ROWS_PER_SM rows an SM, or with k over
 * WS_TK_WIDE_WARP_BIG_K from WS_TK_SHORT_ROWS_PER_SM; shorter or longer
 * rows, fewer rows, smaller k and 32-bit keys keep the row blocks. */
static void test_wide_many_rows(void **state) {
    (void)state;
    for (int sms : g_sms) {
        const ws_device_info d = device_of(sms);
        const size_t many = (size_t)WS_TK_WIDE_WARP_ROWS_PER_SM * (size_t)sms;
        const size_t some = (size_t)WS_TK_SHORT_ROWS_PER_SM * (size_t)sms;
        const size_t big = WS_TK_WIDE_WARP_BIG_K;
        struct {
            size_t rows, len, kb, k;
            int warp;
        } cases[] = {
            {many, 4096, 8, 8, 1},       {many, 4096, 8, 64, 1},      {many, 4096, 8, 128, 1},
            {many, 2049, 8, 32, 1},      {many - 1, 4096, 8, 64, 0},  {many, 2048, 8, 128, 0},
            {many, 4097, 8, 100, 0},     {many * 4, 4096, 4, 64, 0},  {some, 2049, 8, big + 1, 1},
            {some, 4096, 8, 256, 1},     {some, 2049, 8, big, 0},     {some - 1, 4096, 8, 256, 0},
            {some, 2048, 8, big + 1, 0}, {many * 4, 2048, 8, 256, 0}, {many * 4, 1024, 8, 256, 0},
            {some * 4, 8192, 8, 256, 0}, {some * 4, 2049, 4, 256, 0}};
        for (const auto &c : cases) expect_warp(d, c.rows, c.len, c.kb, c.k, c.warp);
    }
}

/* REST: row blocks without the bar whose rows are longer than the
 * registers' pass (512 threads x 16 32-bit or 8 64-bit keys) keep the
 * keys past it in shared memory when two blocks an SM fit beside
 * WS_TK_ROWS_REST_SLACK (sm_90: every such row; sm_80: up to 64 KB of
 * them; sm_86: 32 KB; sm_75: none), and only with 512 threads, k <= 256
 * and no forced L2; every REST plan is one the launch has an instance
 * for. */
static void test_rows_rest(void **state) {
    (void)state;
    struct {
        int family;
        size_t kb, len, k;
        int force, rest;
    } cases[] = {
        {WS_FAMILY_SM90, 8, 16384, 128, WS_TOPK_PATH_PLAN, 1},
        {WS_FAMILY_SM90, 8, 12289, 100, WS_TOPK_PATH_PLAN, 1},
        {WS_FAMILY_SM90, 8, 8193, 128, WS_TOPK_PATH_PLAN, 1},
        {WS_FAMILY_SM90, 8, 8192, 128, WS_TOPK_PATH_PLAN, 1},
        {WS_FAMILY_SM90, 8, 4097, 100, WS_TOPK_PATH_PLAN, 1},
        {WS_FAMILY_SM90, 8, 4096, 100, WS_TOPK_PATH_PLAN, 0}, /* one pass */
        {WS_FAMILY_SM90, 8, 16384, 256, WS_TOPK_PATH_PLAN, 1},
        {WS_FAMILY_SM90, 8, 16384, 257, WS_TOPK_PATH_ROWS, 0}, /* 32 survivors a lane */
        {WS_FAMILY_SM90, 8, 16384, 128, WS_TOPK_PATH_ROWS_L2, 0},
        {WS_FAMILY_SM90, 8, 16384, 128, WS_TOPK_PATH_ROWS_NARROW, 1},
        {WS_FAMILY_SM90, 8, 16384, 16, WS_TOPK_PATH_ROWS, 1},
        {WS_FAMILY_SM90, 4, 16385, 128, WS_TOPK_PATH_PLAN, 1},
        {WS_FAMILY_SM90, 4, 16384, 256, WS_TOPK_PATH_PLAN, 1},
        {WS_FAMILY_SM90, 4, 8193, 256, WS_TOPK_PATH_PLAN, 1},
        {WS_FAMILY_SM90, 4, 8192, 256, WS_TOPK_PATH_PLAN, 0},
        {WS_FAMILY_SM90, 4, 32768, 256, WS_TOPK_PATH_PLAN, 1},
        {WS_FAMILY_SM90, 4, 32768, 512, WS_TOPK_PATH_PLAN, 0},
        {WS_FAMILY_SM90, 4, 8192, 64, WS_TOPK_PATH_PLAN, 0}, /* staged whole (the bar) */
        {WS_FAMILY_SM80, 8, 12288, 100, WS_TOPK_PATH_PLAN, 1},
        {WS_FAMILY_SM80, 8, 12289, 100, WS_TOPK_PATH_PLAN, 0},
        {WS_FAMILY_SM80, 4, 24576, 128, WS_TOPK_PATH_PLAN, 1},
        {WS_FAMILY_SM86, 8, 12288, 100, WS_TOPK_PATH_PLAN, 0},
        {WS_FAMILY_SM86, 8, 8192, 100, WS_TOPK_PATH_PLAN, 1},
        {WS_FAMILY_SM75, 8, 8192, 100, WS_TOPK_PATH_PLAN, 0},
        {WS_FAMILY_SM75, 4, 24576, 128, WS_TOPK_PATH_PLAN, 0},
    };
    for (const auto &c : cases) {
        ws_device_info d = device_of(132);
        d.family = c.family;
        const size_t rows = 8, len = c.len, kb = c.kb, k = c.k;
        const int force = c.force;
        const ws_tk_plan p = plan(d, force, rows, len, kb, k);
        EXPECT(p.rows_block && !!p.rows_rest == !!c.rest);
    }
    const size_t lens[] = {4096, 8192, 8193, 12288, 16384, 16385, 24577, 32768};
    const size_t rowss[] = {1, 200, 5000};
    sweep(lens, rowss, [](const ws_device_info &d, int force, size_t kb, size_t len, size_t rows) {
        const size_t ks[] = {1, 16, 32, 33, 64, 65, 128, 129, 256, 257, 1024};
        for (size_t k : ks) {
            const ws_tk_plan p = plan(d, force, rows, len, kb, k);
            /* 64-bit keys: room for 256 survivors up to k = 256, and no
             * instance with room for 512 in one warp */
            if (p.rows_block && kb == 8) EXPECT(p.rows_si != 16 && (k > 256 || p.rows_si == 8));
            if (!p.rows_rest) continue;
            EXPECT(p.rows_block && !p.rows_bar && force != WS_TOPK_PATH_ROWS_L2);
            EXPECT(p.rows_threads == WS_TK_ROWS_MAX_THREADS && p.rows_si <= 16);
        }
    });
}

/* Over shapes of every size class: one path at most (none: the radix
 * path), and a workspace that holds the staged arrays. */
static void test_one_path(void **state) {
    (void)state;
    const size_t lens[] = {1, 40, 64, 65, 300, 2048, 4096, 16384, 16385, 100000, (size_t)1 << 24};
    const size_t rowss[] = {1, 3, 200, 5000};
    sweep(lens, rowss, [](const ws_device_info &d, int force, size_t kb, size_t len, size_t rows) {
        const size_t ks[] = {1, 2, 32, 33, 100, 256, 257, 1024, 1025, 4096, 70000};
        const ws_tk_staging all = {1, 1, 1, 1, 1};
        if (rows * len > ((size_t)1 << 26)) return;
        for (size_t k : ks) {
            if (k > len) continue;
            const ws_tk_plan p = plan(d, force, rows, len, kb, k, all);
            EXPECT(paths_of(p) <= 1);
            /* keys, and outputs of keys and 4-byte indices */
            EXPECT(p.total >= rows * len * kb + rows * k * (kb + 4));
        }
    });
}

int main(int argc, char **argv) {
    (void)argc;
    (void)argv;
    const struct CMUnitTest tests[] = {
        {"topk_plan_short_rows", test_short_rows, NULL, NULL, NULL},
        {"topk_plan_many_short_rows", test_many_short_rows, NULL, NULL, NULL},
        {"topk_plan_wide_rows", test_wide_rows, NULL, NULL, NULL},
        {"topk_plan_wide_many_rows", test_wide_many_rows, NULL, NULL, NULL},
        {"topk_plan_rows_rest", test_rows_rest, NULL, NULL, NULL},
        {"topk_plan_one_path", test_one_path, NULL, NULL, NULL},
    };
    return _cmocka_run_group_tests("topk_plan", tests, COUNT(tests), NULL, NULL);
}
