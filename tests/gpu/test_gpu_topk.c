/*
 * test_gpu_topk.c - top-k on the CUDA backend: the cases of the CPU test
 * (tests/cpu/topk_cases.h) on device, pinned and pageable memory, k around
 * every path switch (the run sizes 32 / 64 / 128 / 256 of the warp path,
 * the radix path above), rows, several warp levels, values, one output
 * only; each result judged by the reference order and byte-identical to
 * the CPU backend's. Plus a caller workspace (sized by
 * warpsort_topk_workspace_size, too small refused), a CUDA-graph
 * capture of calls on a user stream, and every path forced
 * (WARPSORT_TOPK_PATH) on shapes the plan gives to another.
 *
 * Standalone: --quick, --filter PATTERN. Without a CUDA backend or device
 * every test reports SKIPPED and the program exits 77.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <cuda_runtime_api.h>
#include <math.h>

#include "../cpu/topk_cases.h"
#include "gpu_memory.h"
#include "wt_cmocka.h"

#define WT_EXIT_SKIPPED 77

static warpsort_context_t *g_gpu; /* NULL: no CUDA backend or device */
static warpsort_context_t *g_cpu; /* the reference backend */
static int g_quick;

#define REQUIRE_GPU() WT_REQUIRE_GPU(g_gpu)

static void run_on(const wt_memory_t *mem, tk_case_t c) {
    char msg[768];
    if (tk_run_case(g_gpu, mem, &c, g_cpu, msg, sizeof msg)) fail_msg("%s: %s", mem->name, msg);
}

static const size_t g_ks[] = {1,   2,   31,  32,  33,  63,  64,   65,  100,
                              127, 128, 129, 255, 256, 257, 1000, 4097};

/* state: the dtype. One array, every k around the switches, both ways. */
static void test_single(void **state) {
    REQUIRE_GPU();
    const warpsort_dtype_t dt = (warpsort_dtype_t)(uintptr_t)*state;
    const size_t lengths[] = {1, 33, 257, 1000, 2047, 2048, 5003, 70001, 1u << 20};
    const keygen_dist_t dists[] = {KEYGEN_RANDOM, KEYGEN_NAN_MIX, KEYGEN_EQUAL,
                                   KEYGEN_FEW,    KEYGEN_SORTED,  KEYGEN_REVERSED};
    for (size_t li = 0; li < sizeof lengths / sizeof lengths[0]; li++) {
        const size_t n = lengths[li];
        if (g_quick && n > 70001) continue;
        for (size_t ki = 0; ki < sizeof g_ks / sizeof g_ks[0] + 2; ki++) {
            const size_t k = ki < sizeof g_ks / sizeof g_ks[0]    ? g_ks[ki]
                             : ki == sizeof g_ks / sizeof g_ks[0] ? n - (n > 1)
                                                                  : n;
            if (k > n) continue;
            for (int sm = 0; sm < 2; sm++)
                for (size_t d = 0; d < sizeof dists / sizeof dists[0]; d++) {
                    const size_t keep = g_quick ? (n >= 5003 ? 6 : 3) : n >= 70001 ? 3 : 1;
                    if ((d + ki + (size_t)sm) % keep) continue;
                    tk_case_t c = {dt, sm,     1, n, k, dists[d], 17 + n * 3 + k, ki & 1 ? 4 : 8,
                                   0,  TK_BOTH};
                    run_on(&wt_device_memory, c);
                }
        }
    }
}

static void test_rows(void **state) {
    REQUIRE_GPU();
    const warpsort_dtype_t dt = (warpsort_dtype_t)(uintptr_t)*state;
    const size_t shapes[][2] = {{7, 1},     {300, 5},  {64, 100},  {33, 1025},
                                {40, 2048}, {9, 5000}, {2, 70001}, {300, 2049}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const size_t rows = shapes[s][0], len = shapes[s][1];
        const size_t ks[] = {1, 32, 33, 256, 257, len - (len > 1), len};
        for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
            for (int sm = 0; sm < 2 && ks[i] <= len; sm++)
                run_on(&wt_device_memory, (tk_case_t){dt, sm, rows, len, ks[i], KEYGEN_NAN_MIX,
                                                      5 + s + i, i & 1 ? 8 : 4, 0, TK_BOTH});
    }
}

/* Values, one output only, and host memory (pageable and pinned). */
static void test_values_and_memory(void **state) {
    REQUIRE_GPU();
    const warpsort_dtype_t dt = (warpsort_dtype_t)(uintptr_t)*state;
    const wt_memory_t *mems[3] = {&wt_device_memory, &wt_pinned_memory, &wt_host_memory};
    for (int mi = 0; mi < 3; mi++)
        for (int sm = 0; sm < 2; sm++) {
            const wt_memory_t *mem = mems[mi];
            run_on(mem, (tk_case_t){dt, sm, 1, 5000, 33, KEYGEN_FEW, 1, 4, 4, TK_BOTH});
            run_on(mem, (tk_case_t){dt, sm, 1, 5000, 1000, KEYGEN_NAN_MIX, 2, 8, 8, TK_BOTH});
            run_on(mem, (tk_case_t){dt, sm, 20, 300, 17, KEYGEN_RANDOM, 3, 8, 8, TK_INDICES_ONLY});
            run_on(mem, (tk_case_t){dt, sm, 3, 3000, 300, KEYGEN_RANDOM, 4, 4, 4, TK_KEYS_ONLY});
            run_on(mem, (tk_case_t){dt, sm, 100, 50, 50, KEYGEN_EQUAL, 5, 4, 0, TK_BOTH});
        }
}

/* Several warp levels: many chunks per row, and a long single array. */
static void test_levels(void **state) {
    REQUIRE_GPU();
    (void)state;
    const size_t big = g_quick ? ((size_t)1 << 22) + 3 : ((size_t)1 << 24) + 7;
    for (int sm = 0; sm < 2; sm++) {
        run_on(&wt_device_memory,
               (tk_case_t){WARPSORT_F32, sm, 1, big, 100, KEYGEN_RANDOM, 7, 8, 0, TK_BOTH});
        run_on(&wt_device_memory,
               (tk_case_t){WARPSORT_U64, sm, 1, big / 4, 256, KEYGEN_SORTED, 8, 4, 0, TK_BOTH});
        run_on(&wt_device_memory,
               (tk_case_t){WARPSORT_F64, sm, 1, big / 4, 5000, KEYGEN_NAN_MIX, 9, 8, 0, TK_BOTH});
        run_on(&wt_device_memory,
               (tk_case_t){WARPSORT_F32, sm, 16, 200003, 32, KEYGEN_RANDOM, 10, 4, 0, TK_BOTH});
    }
}

/* Device memory shifted by *user bytes from a 256-byte boundary: keys that
 * start off a 16-byte boundary take the warp path's scalar head. */
static void *offset_alloc(size_t bytes, void *user) {
    unsigned char *p = NULL;
    if (cudaMalloc((void **)&p, bytes + 16) != cudaSuccess) return NULL;
    return p + *(const size_t *)user;
}
static void offset_release(void *p, void *user) {
    cudaFree((unsigned char *)p - *(const size_t *)user);
}
static int offset_copy(void *dst, const void *src, size_t bytes, void *user) {
    (void)user;
    return cudaMemcpy(dst, src, bytes, cudaMemcpyDefault) != cudaSuccess;
}

/* The warp path's switches: the run sizes, one or several warps per row
 * (and several levels), a shared bar per row, vector loads with scalar
 * heads and tails, ties (all keys equal: indices 0..k-1), NaNs and +-0.0;
 * the radix path's digits (11 bits: 3 passes for 32-bit keys, 6 for
 * 64-bit) and its compaction with ties across the k-th key. */
static void test_paths(void **state) {
    REQUIRE_GPU();
    (void)state;
    const warpsort_dtype_t dts[] = {WARPSORT_F32, WARPSORT_U64, WARPSORT_F64, WARPSORT_I32};
    const keygen_dist_t dists[] = {KEYGEN_EQUAL,  KEYGEN_FEW,    KEYGEN_NAN_MIX,
                                   KEYGEN_RANDOM, KEYGEN_SORTED, KEYGEN_REVERSED};
    const size_t ks[] = {1, 2, 31, 32, 33, 64, 65, 128, 129, 255, 256, 257, 4096};
    const size_t lens[] = {(1u << 18) + 3, (1u << 20) + 5};
    size_t at = 0;
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
        for (size_t li = 0; li < 2; li++)
            for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++, at++) {
                if (g_quick && at % 3) continue;
                const size_t n = lens[li];
                run_on(&wt_device_memory, (tk_case_t){dts[d], (int)(at & 1), 1, n, ks[ki],
                                                      dists[at % (sizeof dists / sizeof dists[0])],
                                                      100 + at, at & 2 ? 8 : 4, 0, TK_BOTH});
            }
    /* rows: several warps per row, one per row, rows of 1 */
    const size_t shapes[][3] = {{3, 300001, 100}, {5, 99999, 256}, {5000, 1000, 32},
                                {300, 4099, 128}, {4097, 1, 1},    {2, 65536, 1}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t d = 0; d < 3; d++)
            run_on(&wt_device_memory, (tk_case_t){dts[(s + d) % 4], (int)(d & 1), shapes[s][0],
                                                  shapes[s][1], shapes[s][2], dists[(s + d) % 3],
                                                  200 + s, d & 1 ? 8 : 4, d == 2 ? 4 : 0, TK_BOTH});
    /* the radix select's grid-wide phases on rows of thousands of tiles
     * (several per block of the co-resident grid, the last one partial),
     * ties across the k-th key in many of them */
    const size_t big = ((size_t)1 << 23) + 777;
    run_on(&wt_device_memory,
           (tk_case_t){WARPSORT_F32, 0, 1, big, 5000, KEYGEN_FEW, 800, 8, 0, TK_BOTH});
    if (!g_quick) {
        run_on(&wt_device_memory,
               (tk_case_t){WARPSORT_F64, 1, 1, big, 70000, KEYGEN_NAN_MIX, 801, 4, 8, TK_BOTH});
        run_on(&wt_device_memory,
               (tk_case_t){WARPSORT_U32, 0, 2, big, 4097, KEYGEN_EQUAL, 802, 4, 0, TK_BOTH});
    }
    /* keys off a 16-byte boundary (4, 8 and 12 bytes) */
    for (size_t off = 4; off <= 12; off += 4) {
        size_t user = off;
        const wt_memory_t shifted = {"device+offset", offset_alloc, offset_release,
                                     offset_copy,     offset_copy,  &user};
        run_on(&shifted, (tk_case_t){WARPSORT_F32, 0, 1, 100003, 50, KEYGEN_RANDOM, 300 + off, 4, 0,
                                     TK_BOTH});
        run_on(&shifted,
               (tk_case_t){WARPSORT_U32, 1, 7, 10001, 33, KEYGEN_FEW, 310 + off, off == 8 ? 8 : 4,
                           4, TK_BOTH}); /* 8-byte indices need 8-byte alignment */
        if (off == 8)
            run_on(&shifted,
                   (tk_case_t){WARPSORT_F64, 0, 1, 50001, 200, KEYGEN_NAN_MIX, 320, 8, 8, TK_BOTH});
    }
}

/* The row blocks' switches: threads per block (rows of up to 8 x 64 ..
 * 8 x 512 32-bit keys, 4 x 64 .. 4 x 512 64-bit keys in registers), rows
 * read again from L2 or shared memory (up to 4 times that), the longest
 * 64-bit row (16384 keys; 32-bit rows to 32768 in test_rows_rest) and one
 * more (the warp path), 256 .. 2048 survivors
 * (k 128 / 129, 256 / 257, 512 / 513), the largest k (1024 for 32-bit
 * keys, 256 for 64-bit) and one more; ties (all keys equal:
 * the cut reaches the index bits), few values, NaNs and +-0.0, sorted and
 * reversed rows, values and both index sizes. */
static void test_rows_block(void **state) {
    REQUIRE_GPU();
    (void)state;
    const warpsort_dtype_t dts[] = {WARPSORT_F32, WARPSORT_U64, WARPSORT_I32,
                                    WARPSORT_F64, WARPSORT_U32, WARPSORT_I64};
    const keygen_dist_t dists[] = {KEYGEN_EQUAL,  KEYGEN_FEW,    KEYGEN_NAN_MIX,
                                   KEYGEN_RANDOM, KEYGEN_SORTED, KEYGEN_REVERSED};
    const size_t lens[] = {2,    255,  256,  257,  512,  513,   1025,
                           2049, 4096, 4097, 8192, 8193, 16384, 16385};
    const size_t ks[] = {1, 2, 31, 32, 33, 128, 129, 255, 256, 257, 512, 513, 1024, 1025};
    size_t at = 0;
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
        for (size_t ki = 0; ki < sizeof ks / sizeof ks[0] + 1; ki++, at++) {
            const size_t len = lens[li];
            const size_t k = ki < sizeof ks / sizeof ks[0] ? ks[ki] : len - (len > 1);
            if (k > len || (g_quick && at % 3)) continue;
            const warpsort_dtype_t dt = dts[at % (sizeof dts / sizeof dts[0])];
            const keygen_dist_t dist = dists[(at / 2) % (sizeof dists / sizeof dists[0])];
            const size_t rows = 1 + at % 5;
            run_on(&wt_device_memory,
                   (tk_case_t){dt, (int)(at & 1), rows, len, k, dist, 900 + at, at & 2 ? 8 : 4,
                               at % 4 == 1   ? 4
                               : at % 4 == 3 ? 8
                                             : 0,
                               TK_BOTH});
        }
    /* many rows: a grid of thousands of blocks */
    for (int sm = 0; sm < 2; sm++) {
        run_on(&wt_device_memory, (tk_case_t){WARPSORT_F32, sm, 4096, 4096, 32, KEYGEN_RANDOM,
                                              990 + (size_t)sm, 4, 0, TK_BOTH});
        run_on(&wt_device_memory, (tk_case_t){WARPSORT_U64, sm, 777, 3001, 200, KEYGEN_FEW,
                                              992 + (size_t)sm, 8, 8, TK_BOTH});
        run_on(&wt_device_memory, (tk_case_t){WARPSORT_U32, sm, 1000, 10007, 1000, KEYGEN_NAN_MIX,
                                              994 + (size_t)sm, 4, 4, TK_BOTH});
        /* many short rows: up to 64 keys the short path (rows sorted
         * whole by lane groups), then the warp path (WS_TK_SHORT_*: at
         * least 16 rows an SM, 4500 covers 281 SMs), the row blocks
         * after it */
        const size_t shorts[][3] = {
            {4500, 32, 1},   {4500, 32, 31},   {4500, 33, 32},   {4500, 100, 100},
            {4500, 128, 64}, {4500, 255, 200}, {4500, 256, 256}, {4500, 257, 16},
            {4500, 512, 8},  {4500, 512, 9},   {4500, 31, 8},    {3000, 200, 128},
            {4500, 64, 64},  {4500, 65, 8},    {9000, 3, 2},     {7, 64, 5}};
        const warpsort_dtype_t sdt[] = {WARPSORT_F32, WARPSORT_U64, WARPSORT_I32,
                                        WARPSORT_F64, WARPSORT_U32, WARPSORT_I64};
        const keygen_dist_t sdist[] = {KEYGEN_RANDOM, KEYGEN_EQUAL,  KEYGEN_NAN_MIX,
                                       KEYGEN_FEW,    KEYGEN_SORTED, KEYGEN_REVERSED};
        for (size_t i = 0; i < sizeof shorts / sizeof shorts[0]; i++) {
            const size_t j = i + (size_t)sm * 5;
            if (g_quick && (i + (size_t)sm) % 2) continue;
            run_on(&wt_device_memory, (tk_case_t){sdt[j % 6], sm, shorts[i][0], shorts[i][1],
                                                  shorts[i][2], sdist[(j / 2) % 6], 1400 + j,
                                                  j & 1 ? 8 : 4, j % 3 == 1 ? 4 : 0, TK_BOTH});
        }
        /* many 64-bit rows of 2049..4096 keys with large k: the warp path
         * (WS_TK_WIDE_WARP_*, 4500 rows cover 281 SMs); of 1024 keys with
         * k = 250: the row blocks, narrowed to 256 survivors */
        run_on(&wt_device_memory,
               (tk_case_t){sm ? WARPSORT_F64 : WARPSORT_U64, sm, 4500, 2100, 200,
                           sm ? KEYGEN_FEW : KEYGEN_RANDOM, 1420 + (size_t)sm, 8, 0, TK_BOTH});
        run_on(&wt_device_memory,
               (tk_case_t){sm ? WARPSORT_I64 : WARPSORT_F64, sm, 4500, 1024, 250,
                           sm ? KEYGEN_SORTED : KEYGEN_NAN_MIX, 1422 + (size_t)sm, 4, 8, TK_BOTH});
        /* 64-bit keys above 512 survivors: the block's two tiles (ties by index) */
        run_on(&wt_device_memory, (tk_case_t){sm ? WARPSORT_F64 : WARPSORT_I64, sm, 600, 4096,
                                              sm ? 1000 : 300, sm ? KEYGEN_NAN_MIX : KEYGEN_EQUAL,
                                              996 + (size_t)sm, 8, sm ? 8 : 0, TK_BOTH});
    }
}

/* keys (host, dtype dt of kb bytes) through the GPU (device memory) and
 * the CPU backend: identical keys and 8-byte indices. */
static void compare_rows(const void *hk, warpsort_dtype_t dt, size_t kb, size_t rows, size_t len,
                         size_t k, unsigned flags) {
    const size_t n = rows * len, m = rows * k;
    unsigned char *want_k = malloc(m * kb), *got_k = malloc(m * kb);
    uint64_t *want_i = malloc(m * 8), *got_i = malloc(m * 8);
    assert_true(want_k && got_k && want_i && got_i);
    void *dk, *dok, *doi;
    CUDA_OK(cudaMalloc(&dk, n * kb));
    CUDA_OK(cudaMalloc(&dok, m * kb));
    CUDA_OK(cudaMalloc(&doi, m * 8));
    CUDA_OK(cudaMemcpy(dk, hk, n * kb, cudaMemcpyHostToDevice));
    const warpsort_status_t st =
        warpsort_topk_rows(g_gpu, dk, rows, len, dt, k, flags, dok, doi, 8);
    if (st != WARPSORT_OK) fail_msg("gpu: %s", warpsort_last_error(g_gpu));
    CUDA_OK(cudaMemcpy(got_k, dok, m * kb, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(got_i, doi, m * 8, cudaMemcpyDeviceToHost));
    assert_int_equal(warpsort_topk_rows(g_cpu, hk, rows, len, dt, k, flags, want_k, want_i, 8),
                     WARPSORT_OK);
    assert_memory_equal(got_k, want_k, m * kb);
    assert_memory_equal(got_i, want_i, m * 8);
    CUDA_OK(cudaFree(dk));
    CUDA_OK(cudaFree(dok));
    CUDA_OK(cudaFree(doi));
    free(want_k);
    free(got_k);
    free(want_i);
    free(got_i);
}

/* Row blocks with k at most a quarter of their threads first bound the row by the
 * threads' best keys (ws_tk_thread_bar) and narrow only when more than
 * the survivors' room pass. Keys that rank by position modulo 128 put a
 * row's best keys all in a few threads (thread t holds positions t mod
 * the block's threads), so the bound keeps about k x 16 keys: the
 * narrowing after it must give the same results. Both orders, rows whose
 * length is and is not a multiple of the block, and the random rows of the
 * same shapes (the bound alone). */
static void test_rows_thread_bar(void **state) {
    REQUIRE_GPU();
    (void)state;
    const size_t shapes[][3] = {{64, 4096, 32}, {8, 4097, 100}, {16, 16384, 128}, {4, 2048, 32},
                                {3, 1000, 32},  {5, 8192, 65},  {2, 16383, 120},  {7, 300, 2},
                                {4, 4096, 64},  {4, 4096, 65}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const size_t rows = shapes[i][0], len = shapes[i][1], k = shapes[i][2];
        float *hk = malloc(rows * len * sizeof *hk);
        assert_non_null(hk);
        for (int banded = 0; banded < 2; banded++) {
            uint64_t x = 0x9E3779B97F4A7C15ull + i;
            for (size_t r = 0; r < rows; r++)
                for (size_t j = 0; j < len; j++) {
                    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                    hk[r * len + j] = banded ? (float)((j % 128) * 1024 + j / 128 % 1024)
                                             : (float)(x >> 40) / 16777216.0f;
                }
            for (int sm = 0; sm < 2; sm++)
                compare_rows(hk, WARPSORT_F32, 4, rows, len, k, sm ? WARPSORT_TOPK_SMALLEST : 0);
        }
        free(hk);
    }
    /* 64-bit keys around k = 64 (staged with the bar up to it, the
     * narrowing above) on rows either side of 4096 (from there the block
     * ranks the survivors, below one warp sorts them), rows padded to the
     * pass, and rows too long to stage (8193..16384 keys, narrowed from
     * registers and L2): every distribution, so the bar keeps too many now
     * and then */
    const warpsort_dtype_t wide[] = {WARPSORT_U64, WARPSORT_F64, WARPSORT_I64};
    const keygen_dist_t dists[] = {KEYGEN_RANDOM, KEYGEN_EQUAL,    KEYGEN_NAN_MIX,
                                   KEYGEN_SORTED, KEYGEN_REVERSED, KEYGEN_FEW};
    const size_t wshapes[][3] = {{8, 4096, 100}, {5, 8192, 128}, {3, 2049, 65},   {4, 4096, 128},
                                 {6, 8191, 64},  {2, 4097, 127}, {4, 16384, 128}, {3, 12289, 100},
                                 {2, 16384, 33}, {5, 9000, 64},  {3, 16383, 127}, {2, 8193, 128}};
    for (size_t i = 0; i < sizeof wshapes / sizeof wshapes[0]; i++)
        for (size_t d = 0; d < sizeof dists / sizeof dists[0]; d++) {
            const size_t at = i * 6 + d;
            if (g_quick && at % 2) continue;
            run_on(&wt_device_memory, (tk_case_t){wide[at % 3], (int)(at / 3 % 2), wshapes[i][0],
                                                  wshapes[i][1], wshapes[i][2], dists[d], 1300 + at,
                                                  at & 1 ? 8 : 4, at % 4 == 2 ? 8 : 0, TK_BOTH});
        }
    /* 64-bit keys that rank by position modulo B (512: each thread of a
     * block of 512 holds one band; 64: eight threads share one), rows
     * staged and not: the narrowing's digits over keys whose best sit in
     * a few threads */
    const size_t bshapes[][4] = {
        {3, 16384, 128, 512}, {2, 16384, 100, 64}, {4, 12000, 64, 512}, {2, 8192, 128, 64}};
    for (size_t i = 0; i < sizeof bshapes / sizeof bshapes[0]; i++) {
        const size_t rows = bshapes[i][0], len = bshapes[i][1], k = bshapes[i][2];
        const size_t band = bshapes[i][3];
        uint64_t *hk = malloc(rows * len * sizeof *hk);
        assert_non_null(hk);
        for (size_t r = 0; r < rows; r++)
            for (size_t j = 0; j < len; j++) hk[r * len + j] = (j % band) * 65536 + j / band;
        for (int sm = 0; sm < 2; sm++)
            compare_rows(hk, WARPSORT_U64, 8, rows, len, k, sm ? WARPSORT_TOPK_SMALLEST : 0);
        free(hk);
    }
}

/* Row blocks that keep the keys past the registers' pass in shared
 * memory (REST: rows longer than 8192 32-bit or 4096 64-bit keys, without
 * the bar): lengths either side of one and two passes and the longest
 * rows, rows that start off 16 bytes (odd lengths: the staging's scalar
 * loads), k either side of the survivors' 256 / 512 and where the bar
 * applies instead, every distribution, each also with the rest read from
 * L2 (WARPSORT_TOPK_PATH=rows-l2): both must give the CPU backend's
 * results. */
static void test_rows_rest(void **state) {
    REQUIRE_GPU();
    (void)state;
    const warpsort_dtype_t narrow[] = {WARPSORT_F32, WARPSORT_U32, WARPSORT_I32};
    const warpsort_dtype_t wide[] = {WARPSORT_U64, WARPSORT_F64, WARPSORT_I64};
    const size_t lens4[] = {8192, 8193, 16384, 16385, 24577, 32768};
    const size_t lens8[] = {4096, 4097, 8192, 8193, 12289, 16384};
    const size_t ks[] = {1, 32, 100, 128, 129, 256, 257};
    const keygen_dist_t dists[] = {KEYGEN_RANDOM, KEYGEN_EQUAL,    KEYGEN_NAN_MIX,
                                   KEYGEN_SORTED, KEYGEN_REVERSED, KEYGEN_FEW};
    warpsort_context_t *ctx[2] = {g_gpu, NULL};
    setenv("WARPSORT_TOPK_PATH", "rows-l2", 1);
    ctx[1] = wt_gpu_context(0, 0);
    unsetenv("WARPSORT_TOPK_PATH");
    size_t at = 0;
    for (int w = 0; w < 2; w++)
        for (size_t li = 0; li < 6; li++)
            for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++, at++) {
                if (g_quick && at % 4) continue;
                const tk_case_t c = {w ? wide[at % 3] : narrow[at % 3],
                                     (int)(at / 3 % 2),
                                     1 + at % 3,
                                     w ? lens8[li] : lens4[li],
                                     ks[ki],
                                     dists[at % 6],
                                     1500 + at,
                                     at & 1 ? 8 : 4,
                                     at % 5 == 2 ? 8 : 0,
                                     TK_BOTH};
                for (int l2 = 0; l2 < 2; l2++) {
                    char msg[768];
                    tk_case_t cc = c;
                    if (tk_run_case(ctx[l2], &wt_device_memory, &cc, g_cpu, msg, sizeof msg)) {
                        warpsort_destroy(ctx[1]);
                        fail_msg("%s, case %zu: %s", l2 ? "rows-l2" : "plan", at, msg);
                    }
                }
            }
    warpsort_destroy(ctx[1]);
}

/* Every top-k path forced (WARPSORT_TOPK_PATH, read when a context is
 * made) on shapes where the plan picks another, or where the forced path
 * does not apply and the plan's next choice runs: each must give the CPU
 * backend's results. */
static void test_forced_paths(void **state) {
    REQUIRE_GPU();
    (void)state;
    static const char *const paths[] = {"rows",  "rows-narrow",   "warp",          "filter",
                                        "radix", "filter-narrow", "filter-single", "rows-l2"};
    const tk_case_t cases[] = {
        {WARPSORT_F32, 0, 64, 4096, 32, KEYGEN_RANDOM, 1200, 4, 0, TK_BOTH},
        {WARPSORT_U32, 1, 8, 16384, 128, KEYGEN_FEW, 1201, 8, 4, TK_BOTH},
        {WARPSORT_F64, 0, 1, 100000, 100, KEYGEN_NAN_MIX, 1202, 4, 0, TK_BOTH},
        {WARPSORT_I64, 1, 3, 70000, 256, KEYGEN_EQUAL, 1203, 8, 8, TK_BOTH},
        {WARPSORT_U64, 0, 4, 12289, 100, KEYGEN_RANDOM, 1204, 4, 0, TK_BOTH},
        {WARPSORT_F32, 1, 2, 24577, 200, KEYGEN_NAN_MIX, 1205, 8, 4, TK_BOTH},
    };
    for (size_t p = 0; p < sizeof paths / sizeof paths[0]; p++) {
        setenv("WARPSORT_TOPK_PATH", paths[p], 1);
        warpsort_context_t *ctx = wt_gpu_context(0, 0);
        unsetenv("WARPSORT_TOPK_PATH");
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            char msg[768];
            tk_case_t c = cases[i];
            if (tk_run_case(ctx, &wt_device_memory, &c, g_cpu, msg, sizeof msg)) {
                warpsort_destroy(ctx);
                fail_msg("WARPSORT_TOPK_PATH=%s, case %zu: %s", paths[p], i, msg);
            }
        }
        warpsort_destroy(ctx);
    }
}

/* The filter path (k 65..4096, from k = 2 where few candidates pass,
 * rows of at least 2^16 where the candidate buffer is at most
 * a quarter of the row; k <= 256 only for up to 4 rows, and from 3 rows
 * by the row rule): k just inside and outside its range; the filter hit (random,
 * sorted, NaN mix) and the radix fallback decided on the device when more
 * keys than the buffer holds are not above the threshold (all keys equal,
 * few distinct keys), or fewer than k (a sample unlike the row); rows on
 * either side of the row limit; 64-bit keys (two sorts); keys off a
 * 16-byte boundary (scalar head and tail). */
static void test_filter(void **state) {
    REQUIRE_GPU();
    (void)state;
    const warpsort_dtype_t dts[] = {WARPSORT_F32, WARPSORT_U64, WARPSORT_F64, WARPSORT_I32};
    const keygen_dist_t dists[] = {KEYGEN_RANDOM, KEYGEN_EQUAL,    KEYGEN_FEW,
                                   KEYGEN_SORTED, KEYGEN_REVERSED, KEYGEN_NAN_MIX};
    /* few candidates from k = 2: the read's grid ranks them (64-bit keys,
     * or k of a sample gap: 4 at 2^16 keys, just above 64 at 2^20 + 5) while the
     * threshold's rank in the sample is at most 64 (to k = 2048 at 2^20
     * keys), else one block takes them (64-bit keys: one warp sorts the
     * survivors up to k = 256, the block's two tile sorts above) */
    const size_t ks[] = {2, 15, 16, 64, 65, 100, 128, 129, 200, 256, 257, 1000, 2048, 4096, 4097};
    const size_t lens[] = {(1u << 16), (1u << 20) + 5};
    size_t at = 0;
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
        for (size_t li = 0; li < 2; li++)
            for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
                for (size_t di = 0; di < sizeof dists / sizeof dists[0]; di++, at++) {
                    /* all keys equal (the fallback) in every shape */
                    if (at % (g_quick ? 7 : 3) && dists[di] != KEYGEN_EQUAL) continue;
                    run_on(&wt_device_memory,
                           (tk_case_t){dts[d], (int)(at & 1), 1, lens[li], ks[ki], dists[di],
                                       400 + at, at & 2 ? 8 : 4, at % 5 == 0 ? 4 : 0, TK_BOTH});
                }
    /* rows: the filter path row by row (up to 4 rows at k <= 256, more
     * than 2 only for k > 128 or rows of 2^19 and k >= 16, any number
     * above k = 256), the warp path at 5 rows, at 3 below k = 16 or for
     * shorter rows up to k = 128 */
    const size_t shapes[][3] = {{4, 70001, 200},        {5, 70001, 200}, {3, 300007, 1000},
                                {6, 131072, 4096},      {2, 65536, 129}, {9, 100003, 300},
                                {2, 90001, 7},          {3, 90001, 7},   {4, 90001, 128},
                                {3, (1u << 19) + 1, 16}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t d = 0; d < 3; d++)
            run_on(&wt_device_memory,
                   (tk_case_t){dts[(s + d) % 4], (int)(d & 1), shapes[s][0], shapes[s][1],
                               shapes[s][2], d == 2 ? KEYGEN_EQUAL : dists[(s + d) % 6], 500 + s,
                               d & 1 ? 8 : 4, d == 1 ? 8 : 0, d == 2 ? TK_KEYS_ONLY : TK_BOTH});
    /* 32-bit keys: about 13 x n / 2^14 candidates at k = 4096, which the
     * one-block path narrows to at most 8192 (its largest tile); more than
     * it takes (about 9 x n / 2^14 pass at n = 2^25, k = 3500), so the
     * leaf sorts them; either order */
    for (int sm = 0; sm < 2; sm++)
        run_on(&wt_device_memory,
               (tk_case_t){sm ? WARPSORT_I32 : WARPSORT_F32, sm, 1, ((size_t)1 << 24) + 3, 4096,
                           KEYGEN_RANDOM, 710 + (size_t)sm, 4, 4, TK_BOTH});
    if (!g_quick)
        for (int sm = 0; sm < 2; sm++)
            run_on(&wt_device_memory,
                   (tk_case_t){sm ? WARPSORT_U32 : WARPSORT_F32, sm, 1, ((size_t)1 << 25) + 7, 3500,
                               KEYGEN_NAN_MIX, 700 + (size_t)sm, 8, 0, TK_BOTH});
    /* the fallback on rows of thousands of tiles (several per block of the
     * select's grid), both candidate layouts */
    run_on(&wt_device_memory, (tk_case_t){WARPSORT_F32, 1, 1, ((size_t)1 << 23) + 5, 1000,
                                          KEYGEN_EQUAL, 720, 8, 0, TK_BOTH});
    if (!g_quick)
        run_on(&wt_device_memory, (tk_case_t){WARPSORT_U64, 0, 1, ((size_t)1 << 23) + 5, 3000,
                                              KEYGEN_FEW, 721, 4, 4, TK_BOTH});
    /* keys off a 16-byte boundary */
    for (size_t off = 4; off <= 12; off += 4) {
        size_t user = off;
        const wt_memory_t shifted = {"device+offset", offset_alloc, offset_release,
                                     offset_copy,     offset_copy,  &user};
        run_on(&shifted, (tk_case_t){WARPSORT_F32, 1, 1, 200003, 300, KEYGEN_RANDOM, 600 + off, 4,
                                     0, TK_BOTH});
        if (off == 8)
            run_on(&shifted, (tk_case_t){WARPSORT_U64, 0, 1, 100001, 1000, KEYGEN_NAN_MIX, 610, 8,
                                         0, TK_BOTH});
    }
    /* Fewer than k keys not above the threshold: every 64th key (the
     * sample's positions for 2^20 keys and a sample of 2^14) is small and
     * distinct, the others equal and large, so the sample's threshold has
     * a few hundred keys at most below it; the fallback must still find
     * the top k (all the small keys, then the lowest-indexed large ones).
     * The same with the opposite order, and a second row that hits. */
    const size_t len = (size_t)1 << 20;
    float *hk = malloc(2 * len * sizeof(float));
    assert_non_null(hk);
    for (int sm = 0; sm < 2; sm++) {
        for (size_t i = 0; i < len; i++)
            hk[i] = i % 64 ? (sm ? 1e6f : -1e6f) : (sm ? 1.0f : -1.0f) * (float)(i / 64);
        keygen_fill(hk + len, len, WARPSORT_F32, KEYGEN_RANDOM, 77);
        const unsigned flags = sm ? WARPSORT_TOPK_SMALLEST : 0;
        compare_rows(hk, WARPSORT_F32, 4, 1, len, 4096, flags);
        compare_rows(hk, WARPSORT_F32, 4, 1, len, 300, flags);
        compare_rows(hk, WARPSORT_F32, 4, 2, len, 2000, flags);
    }
    free(hk);
}

/* The one-block candidate path's narrowing (32-bit keys, more candidates
 * than max(2k, 1024) within the buffer): random keys in [0, 1) oriented so
 * the best end is 1 (largest) or 0 (smallest), plus a group of G = 4k +
 * 2048 keys (every P-th, P odd) that the sample sees about G x 2^14 / n
 * times, so the threshold usually lands on the group: the group equal to
 * a key at about rank k / 2 (the k-th among the ties: the cut bin holds
 * them all down to the index bits), equal and better than every random
 * key (all candidates tie: the result is the group's k lowest indices),
 * NaNs of both signs, and alternating -0.0 / +0.0 at the best end. k from
 * the path's lowest to its highest (2^24 keys there); each row either hits
 * or falls back, both exact. */
static void test_filter_narrow(void **state) {
    REQUIRE_GPU();
    (void)state;
    const size_t ks[] = {16, 100, 1000, 4096};
    float *hk = malloc(((size_t)1 << 24) * sizeof(float));
    assert_non_null(hk);
    for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
        const size_t k = ks[ki], len = k > 1000 ? (size_t)1 << 24 : (size_t)1 << 22;
        if (g_quick && len > ((size_t)1 << 22)) continue;
        const size_t period = (len / (4 * k + 2048)) | 1;
        for (int pat = 0; pat < 4; pat++)
            for (int sm = 0; sm < 2; sm++) {
                const float best = sm ? 0.0f : 1.0f, worse = sm ? 1.0f : -1.0f;
                uint32_t x = 12345u + (uint32_t)(ki * 8 + (size_t)pat * 2 + (size_t)sm);
                for (size_t i = 0; i < len; i++) {
                    x = x * 1664525u + 1013904223u;
                    const float u = (float)(x >> 8) * (1.0f / 16777216.0f); /* [0, 1) */
                    hk[i] = sm ? u : 1.0f - u; /* near best: the best end */
                    if (i % period != 3) continue;
                    const size_t g = i / period;
                    hk[i] = pat == 0   ? best + worse * (float)(k / 2) / (float)len
                            : pat == 1 ? best - worse
                            : pat == 2 ? (g & 1 ? -NAN : NAN)
                                       : (g & 1 ? -0.0f : 0.0f);
                }
                if (pat == 3 && !sm)
                    for (size_t i = 0; i < len; i++) hk[i] = -hk[i]; /* zeros the largest */
                compare_rows(hk, WARPSORT_F32, 4, 1, len, k, sm ? WARPSORT_TOPK_SMALLEST : 0);
            }
    }
    free(hk);
}

/* The filter path's read ranks its candidates (32-bit keys from k = two
 * sample gaps) each among its bucket, split at the sample's best keys
 * (positions j x n / 2^14). Rows of 2^22 whose sample keys (from 0.5 up)
 * are better than every other key (below 0.5), plus G keys off the sample
 * better than all (2 up, or all equal to 2): the first bucket holds those
 * G (G = 3000: several chunks of the ranking's reads; G = 9000: more than
 * the buffer holds at k = 1000, so the row falls back, also exact); and
 * rows of keys of 4096 values (about four sample keys each), so the
 * sample's keys at the threshold tie and buckets share bounds (some
 * empty) and k spans several buckets; both orders. */
static void test_filter_buckets(void **state) {
    REQUIRE_GPU();
    (void)state;
    const size_t len = (size_t)1 << 22, S = (size_t)1 << 14;
    const size_t ks[] = {1000, 2048, 4096}; /* at least a sample gap: buckets */
    float *hk = malloc(len * sizeof(float));
    assert_non_null(hk);
    for (int pat = 0; pat < 5; pat++)
        for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
            for (int sm = 0; sm < 2; sm++) {
                if (g_quick && (ki + (size_t)sm) % 2) continue;
                const size_t group = pat < 2 ? 9000 : pat < 4 ? 3000 : 0;
                const size_t period = group ? (len / group) | 1 : 0;
                uint32_t x = 777u + (uint32_t)(pat * 16 + (int)ki * 2 + sm);
                for (size_t i = 0; i < len; i++) {
                    x = x * 1664525u + 1013904223u;
                    const float u = (float)(x >> 8) * (1.0f / 16777216.0f); /* [0, 1) */
                    hk[i] = pat == 4 ? (float)(x >> 20) : 0.5f * u;
                }
                if (pat < 4) {
                    for (size_t j = 0; j < S; j++) {
                        x = x * 1664525u + 1013904223u;
                        hk[j * len / S] = 0.5f + 0.5f * (float)(x >> 8) * (1.0f / 16777216.0f);
                    }
                    for (size_t i = 1; i < len && group; i += period) {
                        if ((i * S) % len < S) continue; /* a sample position */
                        x = x * 1664525u + 1013904223u;
                        hk[i] = pat % 2 ? 2.0f : 2.0f + (float)(x >> 8) * (1.0f / 16777216.0f);
                    }
                }
                if (sm)
                    for (size_t i = 0; i < len; i++) hk[i] = -hk[i]; /* the same keys best */
                compare_rows(hk, WARPSORT_F32, 4, 1, len, ks[ki], sm ? WARPSORT_TOPK_SMALLEST : 0);
            }
    free(hk);
}

/* A caller workspace: exactly the size asked suffices, one byte less on a
 * call that needs it fails and writes nothing. */
static void test_workspace(void **state) {
    REQUIRE_GPU();
    (void)state;
    /* (row blocks need no workspace: their rows are longer here) */
    const size_t shapes[][3] = {{1, 100000, 50}, {1, 100000, 3000}, {64, 100000, 32}};
    for (size_t s = 0; s < 3; s++) {
        const size_t rows = shapes[s][0], len = shapes[s][1], k = shapes[s][2];
        size_t bytes = 0;
        assert_int_equal(warpsort_topk_workspace_size(g_gpu, rows, len, WARPSORT_F32, 4, k, &bytes),
                         WARPSORT_OK);
        assert_true(bytes > 0);
        void *ws = NULL;
        CUDA_OK(cudaMalloc(&ws, bytes));
        assert_int_equal(warpsort_set_workspace(g_gpu, ws, bytes), WARPSORT_OK);
        run_on(&wt_device_memory,
               (tk_case_t){WARPSORT_F32, 0, rows, len, k, KEYGEN_RANDOM, s, 8, 4, TK_BOTH});
        /* too small: a clear error, outputs untouched */
        assert_int_equal(warpsort_set_workspace(g_gpu, ws, bytes - 256), WARPSORT_OK);
        float *keys = NULL, *out = NULL;
        CUDA_OK(cudaMalloc((void **)&keys, rows * len * sizeof(float)));
        CUDA_OK(cudaMemset(keys, 0, rows * len * sizeof(float)));
        CUDA_OK(cudaMalloc((void **)&out, rows * k * sizeof(float)));
        CUDA_OK(cudaMemset(out, 0x7B, rows * k * sizeof(float)));
        assert_int_equal(
            warpsort_topk_rows(g_gpu, keys, rows, len, WARPSORT_F32, k, 0, out, NULL, 0),
            WARPSORT_WORKSPACE_TOO_SMALL);
        assert_true(strlen(warpsort_last_error(g_gpu)) > 0);
        unsigned char *host = malloc(rows * k * sizeof(float));
        assert_non_null(host);
        CUDA_OK(cudaMemcpy(host, out, rows * k * sizeof(float), cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < rows * k * sizeof(float); i++) assert_int_equal(host[i], 0x7B);
        free(host);
        assert_int_equal(warpsort_set_workspace(g_gpu, NULL, 0), WARPSORT_OK);
        CUDA_OK(cudaFree(keys));
        CUDA_OK(cudaFree(out));
        CUDA_OK(cudaFree(ws));
    }
}

/* Captured in a CUDA graph on a user stream with a caller workspace (no
 * allocation, no synchronisation), launched twice, equal to the CPU. */
static void test_graph_capture(void **state) {
    REQUIRE_GPU();
    (void)state;
    cudaStream_t stream;
    CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
    cfg.backend = WARPSORT_BACKEND_CUDA;
    cfg.stream = stream;
    warpsort_context_t *ctx = NULL;
    assert_int_equal(warpsort_create(&ctx, &cfg), WARPSORT_OK);
    const size_t rows = 3, len = 50000, ks[2] = {64, 2000};
    const size_t n = rows * len;
    uint32_t *hk = malloc(n * 4), *want_k = malloc(rows * 2000 * 4),
             *got_k = malloc(rows * 2000 * 4);
    uint64_t *want_i = malloc(rows * 2000 * 8), *got_i = malloc(rows * 2000 * 8);
    assert_true(hk && want_k && got_k && want_i && got_i);
    keygen_fill(hk, n, WARPSORT_F32, KEYGEN_NAN_MIX, 42);
    void *dk, *dok, *doi;
    CUDA_OK(cudaMalloc(&dk, n * 4));
    CUDA_OK(cudaMalloc(&dok, rows * 2000 * 4));
    CUDA_OK(cudaMalloc(&doi, rows * 2000 * 8));
    CUDA_OK(cudaMemcpy(dk, hk, n * 4, cudaMemcpyHostToDevice));
    for (int p = 0; p < 2; p++) {
        const size_t k = ks[p];
        size_t bytes = 0;
        assert_int_equal(warpsort_topk_workspace_size(ctx, rows, len, WARPSORT_F32, 0, k, &bytes),
                         WARPSORT_OK);
        void *ws;
        CUDA_OK(cudaMalloc(&ws, bytes));
        assert_int_equal(warpsort_set_workspace(ctx, ws, bytes), WARPSORT_OK);
        cudaGraph_t graph;
        cudaGraphExec_t exec;
        CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
        const warpsort_status_t st = warpsort_topk_rows(ctx, dk, rows, len, WARPSORT_F32, k,
                                                        WARPSORT_TOPK_SMALLEST, dok, doi, 8);
        CUDA_OK(cudaStreamEndCapture(stream, &graph));
        if (st != WARPSORT_OK) fail_msg("captured call: %s", warpsort_last_error(ctx));
        CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
        for (int rep = 0; rep < 2; rep++) {
            CUDA_OK(cudaMemset(dok, 0, rows * k * 4));
            CUDA_OK(cudaGraphLaunch(exec, stream));
            CUDA_OK(cudaStreamSynchronize(stream));
            CUDA_OK(cudaMemcpy(got_k, dok, rows * k * 4, cudaMemcpyDeviceToHost));
            CUDA_OK(cudaMemcpy(got_i, doi, rows * k * 8, cudaMemcpyDeviceToHost));
            assert_int_equal(warpsort_topk_rows(g_cpu, hk, rows, len, WARPSORT_F32, k,
                                                WARPSORT_TOPK_SMALLEST, want_k, want_i, 8),
                             WARPSORT_OK);
            assert_memory_equal(got_k, want_k, rows * k * 4);
            assert_memory_equal(got_i, want_i, rows * k * 8);
        }
        CUDA_OK(cudaGraphExecDestroy(exec));
        CUDA_OK(cudaGraphDestroy(graph));
        assert_int_equal(warpsort_set_workspace(ctx, NULL, 0), WARPSORT_OK);
        CUDA_OK(cudaFree(ws));
    }
    warpsort_destroy(ctx);
    CUDA_OK(cudaFree(dk));
    CUDA_OK(cudaFree(dok));
    CUDA_OK(cudaFree(doi));
    CUDA_OK(cudaStreamDestroy(stream));
    free(hk);
    free(want_k);
    free(got_k);
    free(want_i);
    free(got_i);
}

/* The filter path captured in a CUDA graph: one row that hits and one
 * that falls back (all keys equal), decided on the device at every launch
 * of the graph; the keys are changed between launches so the other row
 * takes each branch on the second. */
static void test_filter_graph(void **state) {
    REQUIRE_GPU();
    (void)state;
    cudaStream_t stream;
    CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
    cfg.backend = WARPSORT_BACKEND_CUDA;
    cfg.stream = stream;
    warpsort_context_t *ctx = NULL;
    assert_int_equal(warpsort_create(&ctx, &cfg), WARPSORT_OK);
    const size_t rows = 2, len = 200000, k = 700, n = rows * len, m = rows * k;
    uint32_t *hk = malloc(n * 4), *want_k = malloc(m * 4), *got_k = malloc(m * 4);
    uint64_t *want_i = malloc(m * 8), *got_i = malloc(m * 8);
    assert_true(hk && want_k && got_k && want_i && got_i);
    void *dk, *dok, *doi, *ws;
    CUDA_OK(cudaMalloc(&dk, n * 4));
    CUDA_OK(cudaMalloc(&dok, m * 4));
    CUDA_OK(cudaMalloc(&doi, m * 8));
    size_t bytes = 0;
    assert_int_equal(warpsort_topk_workspace_size(ctx, rows, len, WARPSORT_F32, 0, k, &bytes),
                     WARPSORT_OK);
    CUDA_OK(cudaMalloc(&ws, bytes));
    assert_int_equal(warpsort_set_workspace(ctx, ws, bytes), WARPSORT_OK);
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    const warpsort_status_t st =
        warpsort_topk_rows(ctx, dk, rows, len, WARPSORT_F32, k, 0, dok, doi, 8);
    CUDA_OK(cudaStreamEndCapture(stream, &graph));
    if (st != WARPSORT_OK) fail_msg("captured call: %s", warpsort_last_error(ctx));
    CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
    for (int rep = 0; rep < 2; rep++) {
        keygen_fill(hk + (rep ? len : 0), len, WARPSORT_F32, KEYGEN_RANDOM, 90 + rep);
        keygen_fill(hk + (rep ? 0 : len), len, WARPSORT_F32, KEYGEN_EQUAL, 95 + rep);
        CUDA_OK(cudaMemcpy(dk, hk, n * 4, cudaMemcpyHostToDevice));
        CUDA_OK(cudaMemset(dok, 0, m * 4));
        CUDA_OK(cudaGraphLaunch(exec, stream));
        CUDA_OK(cudaStreamSynchronize(stream));
        CUDA_OK(cudaMemcpy(got_k, dok, m * 4, cudaMemcpyDeviceToHost));
        CUDA_OK(cudaMemcpy(got_i, doi, m * 8, cudaMemcpyDeviceToHost));
        assert_int_equal(
            warpsort_topk_rows(g_cpu, hk, rows, len, WARPSORT_F32, k, 0, want_k, want_i, 8),
            WARPSORT_OK);
        assert_memory_equal(got_k, want_k, m * 4);
        assert_memory_equal(got_i, want_i, m * 8);
    }
    CUDA_OK(cudaGraphExecDestroy(exec));
    CUDA_OK(cudaGraphDestroy(graph));
    warpsort_destroy(ctx);
    CUDA_OK(cudaFree(ws));
    CUDA_OK(cudaFree(dk));
    CUDA_OK(cudaFree(dok));
    CUDA_OK(cudaFree(doi));
    CUDA_OK(cudaStreamDestroy(stream));
    free(hk);
    free(want_k);
    free(got_k);
    free(want_i);
    free(got_i);
}

int main(int argc, char **argv) {
    g_quick = wt_cmocka_options(argc, argv);
    if (g_quick < 0) return 2;
    if (wt_gpu_probe(&g_gpu) < 0) return 1;
    warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
    cfg.backend = WARPSORT_BACKEND_CPU;
    if (warpsort_create(&g_cpu, &cfg) != WARPSORT_OK) return 2;

    static char names[3][WARPSORT_DTYPE_COUNT_][48];
    static const char *const kinds[3] = {"single", "rows", "values_memory"};
    const CMUnitTestFunction fns[3] = {test_single, test_rows, test_values_and_memory};
    static const struct CMUnitTest fixed[] = {
        {"gpu_topk_levels", test_levels, NULL, NULL, NULL},
        {"gpu_topk_paths", test_paths, NULL, NULL, NULL},
        {"gpu_topk_filter", test_filter, NULL, NULL, NULL},
        {"gpu_topk_rows_block", test_rows_block, NULL, NULL, NULL},
        {"gpu_topk_rows_thread_bar", test_rows_thread_bar, NULL, NULL, NULL},
        {"gpu_topk_rows_rest", test_rows_rest, NULL, NULL, NULL},
        {"gpu_topk_forced_paths", test_forced_paths, NULL, NULL, NULL},
        {"gpu_topk_filter_narrow", test_filter_narrow, NULL, NULL, NULL},
        {"gpu_topk_filter_buckets", test_filter_buckets, NULL, NULL, NULL},
        {"gpu_topk_filter_graph", test_filter_graph, NULL, NULL, NULL},
        {"gpu_topk_workspace", test_workspace, NULL, NULL, NULL},
        {"gpu_topk_graph_capture", test_graph_capture, NULL, NULL, NULL},
    };
    /* sized from the lists: a test added to fixed[] cannot overrun it */
    struct CMUnitTest tests[3 * WARPSORT_DTYPE_COUNT_ + sizeof fixed / sizeof fixed[0]];
    size_t count = 0;
    for (int f = 0; f < 3; f++)
        for (int d = 0; d < WARPSORT_DTYPE_COUNT_; d++) {
            snprintf(names[f][d], sizeof names[f][d], "gpu_topk_%s_%s", kinds[f],
                     warpsort_dtype_name((warpsort_dtype_t)d));
            tests[count++] =
                (struct CMUnitTest){names[f][d], fns[f], NULL, NULL, (void *)(uintptr_t)d};
        }
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) tests[count++] = fixed[i];
    const int failed = _cmocka_run_group_tests("gpu_topk", tests, count, NULL, NULL);
    const int skipped = g_gpu == NULL;
    warpsort_destroy(g_gpu);
    warpsort_destroy(g_cpu);
    return failed ? 1 : skipped ? WT_EXIT_SKIPPED : 0;
}
