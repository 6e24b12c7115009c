/*
 * test_nccl_plan.cu - the partition-first route's plan (src/nccl/partition.cu,
 * ws_pt_plan_for) checked on the host: it is host code with no CUDA or NCCL
 * call, so this runs with or without a GPU, in CI too. Over 2 to 16 ranks,
 * sizes from a few keys to 2^36 and even, uneven and one-rank inputs, every
 * plan the route takes must hold what its kernels and buffers rely on:
 *   - p K + p - 1 buckets (at most WS_PT_MAX_BUCKETS, one byte a bucket in
 *     the scatter), 1 <= K <= WS_PT_MAX_PARTS;
 *   - the sample: each rank's share in order, none above its input, all of
 *     a small input, at most 16 x 2^20 in all;
 *   - the splitters: B - 1 places in the sorted sample, non-decreasing and
 *     inside it; each band lo < hi with its boundary's expected place
 *     between them;
 *   - the band buffer: twice the keys a band's share of the sample stands
 *     for fits it, and it never exceeds n_total;
 *   - the workspace: what warpsort_nccl_workspace_size reserves without
 *     the plan covers what the call's plan needs, for every rank;
 * and the route's gates: keys alone, 2..16 ranks, WARPSORT_NCCL_ROUTE,
 * 2^22 keys a rank by default, and the parts the docs name (four for 2^29
 * keys a rank, two for 2^28).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka.h needs the three headers above first; it declares C functions
 * without extern "C" */
extern "C" {
#include <cmocka.h>
}
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "cuda/state.h"
#include "nccl/nccl_sort.h"
#include "warpsort_nccl.h"

/* A context whose CUDA state is an H100's (132 SMs) as the plan sees it. */
static ws_cuda_state g_state;
static warpsort_context_t g_ctx;

static void setup_device(void) {
    memset(&g_state, 0, sizeof g_state);
    g_state.dev.family = WS_FAMILY_SM90;
    g_state.dev.sm_count = 132;
    g_state.dev.sample_ok = 1;
    g_state.dev.no_coop = 0;
    ws_sample_limits lim = {WS_SAMPLE_MIN_N, WS_SAMPLE_MIN_N_KEYS, WS_TREE_SLOTS_MAX - 1,
                            WS_MAX_LEVELS, 0};
    g_state.dev.sample = lim;
    memset(&g_ctx, 0, sizeof g_ctx);
    g_ctx.backend = WARPSORT_BACKEND_CUDA;
    g_ctx.cuda = &g_state;
}

static ws_nccl_call call_of(int p, int r, size_t kb, size_t vb) {
    ws_nccl_call c;
    memset(&c, 0, sizeof c);
    c.ctx = &g_ctx;
    c.nranks = p;
    c.rank = r;
    c.kb = kb;
    c.vb = vb;
    c.pairs = vb != 0;
    return c;
}

/* Input shapes: even, a ramp (rank r holds r + 1 shares), one rank holding
 * everything, and the last rank short by most of its share. */
enum { SHAPE_EVEN, SHAPE_RAMP, SHAPE_ONE, SHAPE_SHORT, SHAPES };
static void shape_counts(int shape, int p, uint64_t n_total, uint64_t *n_in) {
    uint64_t left = n_total, weights = 0;
    for (int r = 0; r < p; r++) weights += shape == SHAPE_RAMP ? (uint64_t)(r + 1) : 1;
    for (int r = 0; r < p; r++) {
        uint64_t v;
        if (shape == SHAPE_ONE)
            v = r == 0 ? n_total : 0;
        else if (shape == SHAPE_RAMP)
            v = (uint64_t)((double)n_total * (double)(r + 1) / (double)weights);
        else if (shape == SHAPE_SHORT && r == p - 1)
            v = n_total / (uint64_t)p / 16;
        else
            v = n_total / (uint64_t)p;
        v = v < left ? v : left;
        n_in[r] = v;
        left -= v;
    }
    n_in[0] += left; /* every key somewhere */
}

#define CHECK(cond)                                                                           \
    do {                                                                                      \
        if (!(cond))                                                                          \
            fail_msg("p=%d n_total=%llu shape=%d kb=%zu: %s", p, (unsigned long long)n_total, \
                     shape, kb, #cond);                                                       \
    } while (0)

static int g_plans; /* plans that took the route */

static void check_plan(int p, uint64_t n_total, int shape, size_t kb) {
    uint64_t n_in[WS_PT_MAX_RANKS];
    shape_counts(shape, p, n_total, n_in);
    const ws_nccl_call c0 = call_of(p, 0, kb, 0);
    ws_pt_plan pl;
    if (!ws_pt_plan_for(&c0, n_in, n_total, &pl)) return; /* sort-first: nothing to hold */
    g_plans++;
    CHECK(pl.p == p);
    CHECK(pl.K >= 1 && pl.K <= WS_PT_MAX_PARTS);
    CHECK(pl.B == p * pl.K + p - 1);
    CHECK(pl.B <= WS_PT_MAX_BUCKETS && pl.B <= 255);
    const uint64_t S = pl.s_at[p];
    CHECK(pl.s_at[0] == 0);
    for (int r = 0; r < p; r++) {
        CHECK(pl.s_at[r + 1] >= pl.s_at[r]);
        CHECK(pl.s_at[r + 1] - pl.s_at[r] <= n_in[r]);
    }
    CHECK(S >= 2 && S <= ((uint64_t)16 << 20));
    if (n_total <= ((uint64_t)1 << 20)) CHECK(S == n_total);
    for (int i = 0; i + 1 < pl.B; i++) {
        CHECK(pl.pos[i] < S);
        if (i) CHECK(pl.pos[i] >= pl.pos[i - 1]);
    }
    CHECK(pl.band_cap <= n_total);
    for (int j = 0; j + 1 < p; j++) {
        const int at = j * (pl.K + 1) + pl.K - 1; /* the band's lo, then hi */
        const uint64_t lo = pl.pos[at], hi = pl.pos[at + 1];
        CHECK(lo < hi);
        const double t = (double)ws_nccl_boundary(n_total, p, j) / (double)n_total * (double)S;
        CHECK((double)lo < t && t < (double)hi);
        CHECK((double)(hi - lo) / (double)S * (double)n_total * 2.0 <= (double)pl.band_cap);
    }
    /* The reserve made without the plan covers the call's for every rank. */
    for (int r = 0; r < p; r++) {
        const ws_nccl_call c = call_of(p, r, kb, 0);
        const size_t n_out = warpsort_nccl_output_count((size_t)n_total, p, r);
        const size_t need = ws_pt_workspace(&c, &pl, (size_t)n_in[r], n_out);
        const size_t bound = ws_pt_workspace_bound(&g_state, p, (size_t)n_in[r], n_out, kb);
        CHECK(need > 0 && need <= bound);
    }
}

static void test_plans(void **state) {
    (void)state;
    setup_device();
    unsetenv("WARPSORT_NCCL_PARTS");
    setenv("WARPSORT_NCCL_ROUTE", "partition", 1); /* every size the plan allows */
    const int ranks[] = {2, 3, 4, 5, 8, 13, 16};
    for (size_t pi = 0; pi < sizeof ranks / sizeof ranks[0]; pi++)
        for (double lg = 1.0; lg <= 36.0; lg += 0.37)
            for (int shape = 0; shape < SHAPES; shape++)
                for (size_t kb = 4; kb <= 8; kb += 4)
                    check_plan(ranks[pi], (uint64_t)pow(2.0, lg) + (uint64_t)shape, shape, kb);
    unsetenv("WARPSORT_NCCL_ROUTE");
    /* Most sizes from a few hundred keys take the route (fewer keys than
     * the bands need do not). */
    printf("%d plans checked\n", g_plans);
    assert_true(g_plans > 2000);
}

static void test_gates(void **state) {
    (void)state;
    setup_device();
    unsetenv("WARPSORT_NCCL_PARTS");
    unsetenv("WARPSORT_NCCL_ROUTE");
    uint64_t n_in[WS_PT_MAX_RANKS + 1];
    ws_pt_plan pl;
    const uint64_t big = (uint64_t)1 << 29;
    for (int r = 0; r <= WS_PT_MAX_RANKS; r++) n_in[r] = big;
    ws_nccl_call c = call_of(2, 0, 4, 0);
    assert_int_equal(ws_pt_plan_for(&c, n_in, 2 * big, &pl), 1);
    assert_int_equal(pl.K, 4); /* docs/multi-gpu.md: 2^29 u32 keys a rank */
    n_in[0] = n_in[1] = big / 2;
    c.kb = 8;
    assert_int_equal(ws_pt_plan_for(&c, n_in, big, &pl), 1);
    assert_int_equal(pl.K, 2); /* 2^28 u64 keys a rank */
    /* Below 2^22 keys a rank by default, the sort-first route. */
    n_in[0] = n_in[1] = ((uint64_t)1 << 22) - 1;
    assert_int_equal(ws_pt_plan_for(&c, n_in, 2 * n_in[0], &pl), 0);
    setenv("WARPSORT_NCCL_ROUTE", "partition", 1);
    assert_int_equal(ws_pt_plan_for(&c, n_in, 2 * n_in[0], &pl), 1);
    setenv("WARPSORT_NCCL_ROUTE", "sort-first", 1);
    n_in[0] = n_in[1] = big;
    assert_int_equal(ws_pt_plan_for(&c, n_in, 2 * big, &pl), 0);
    unsetenv("WARPSORT_NCCL_ROUTE");
    /* Pairs, one rank and more than sixteen take the sort-first route. */
    ws_nccl_call pairs = call_of(2, 0, 4, 4);
    assert_int_equal(ws_pt_plan_for(&pairs, n_in, 2 * big, &pl), 0);
    ws_nccl_call one = call_of(1, 0, 4, 0);
    assert_int_equal(ws_pt_plan_for(&one, n_in, big, &pl), 0);
    ws_nccl_call many = call_of(WS_PT_MAX_RANKS + 1, 0, 4, 0);
    assert_int_equal(ws_pt_plan_for(&many, n_in, big * (WS_PT_MAX_RANKS + 1), &pl), 0);
    /* WARPSORT_NCCL_PARTS sets K, within 1..WS_PT_MAX_PARTS. */
    setenv("WARPSORT_NCCL_PARTS", "3", 1);
    assert_int_equal(ws_pt_plan_for(&c, n_in, 2 * big, &pl), 1);
    assert_int_equal(pl.K, 3);
    setenv("WARPSORT_NCCL_PARTS", "99", 1);
    assert_int_equal(ws_pt_plan_for(&c, n_in, 2 * big, &pl), 1);
    assert_int_equal(pl.K, WS_PT_MAX_PARTS);
    unsetenv("WARPSORT_NCCL_PARTS");
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--filter") == 0 && i + 1 < argc) {
            cmocka_set_test_filter(argv[++i]);
        } else if (strcmp(argv[i], "--quick") != 0) {
            fprintf(stderr, "usage: %s [--quick] [--filter PATTERN]\n", argv[0]);
            return 2;
        }
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plans),
        cmocka_unit_test(test_gates),
    };
    return cmocka_run_group_tests_name("nccl_plan", tests, NULL, NULL);
}
