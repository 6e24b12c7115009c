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
 * and the route's gates: keys alone, 3..16 ranks by default (2..16 asked), WARPSORT_NCCL_ROUTE,
 * 2^22 keys a rank by default, and the parts the docs name (four for 2^29
 * keys a rank, two for 2^28). Then the counts: u32 keys of 2 to 16 ranks
 * through a host copy of the sample, the splitters and the bucket counts,
 * into ws_pt_check on every rank, which must agree; where the route holds,
 * every rank's output assembled as the device does it (band tails and
 * heads, parts) must be its slice of the sorted keys, and every rank's
 * exchange plan must pair with every other's and fill its buffers exactly.
 */
/* cmocka.h (included by wt_cmocka.h) declares C functions without
 * extern "C" */
extern "C" {
#include "wt_cmocka.h"
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
    ws_sample_limits lim = {
        WS_SAMPLE_MIN_N, WS_SAMPLE_MIN_N_KEYS, WS_TREE_SLOTS_MAX - 1, WS_MAX_LEVELS, 0, 0};
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
    /* Two ranks sort first by default, three or more partition first. */
    ws_nccl_call c = call_of(2, 0, 4, 0);
    assert_int_equal(ws_pt_plan_for(&c, n_in, 2 * big, &pl), 0);
    ws_nccl_call c3 = call_of(3, 0, 4, 0);
    assert_int_equal(ws_pt_plan_for(&c3, n_in, 3 * big, &pl), 1);
    assert_int_equal(pl.K, 4); /* docs/multi-gpu.md: 2^29 u32 keys a rank */
    setenv("WARPSORT_NCCL_ROUTE", "partition", 1);
    assert_int_equal(ws_pt_plan_for(&c, n_in, 2 * big, &pl), 1);
    assert_int_equal(pl.K, 4);
    n_in[0] = n_in[1] = big / 2;
    c.kb = 8;
    assert_int_equal(ws_pt_plan_for(&c, n_in, big, &pl), 1);
    assert_int_equal(pl.K, 2); /* 2^28 u64 keys a rank */
    unsetenv("WARPSORT_NCCL_ROUTE");
    /* Below 2^22 keys a rank by default, the sort-first route. */
    for (int r = 0; r < 3; r++) n_in[r] = ((uint64_t)1 << 22) - 1;
    c3.kb = 8;
    assert_int_equal(ws_pt_plan_for(&c3, n_in, 3 * n_in[0], &pl), 0);
    setenv("WARPSORT_NCCL_ROUTE", "partition", 1);
    assert_int_equal(ws_pt_plan_for(&c3, n_in, 3 * n_in[0], &pl), 1);
    setenv("WARPSORT_NCCL_ROUTE", "sort-first", 1);
    for (int r = 0; r < 3; r++) n_in[r] = big;
    assert_int_equal(ws_pt_plan_for(&c3, n_in, 3 * big, &pl), 0);
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
    assert_int_equal(ws_pt_plan_for(&c3, n_in, 3 * big, &pl), 1);
    assert_int_equal(pl.K, 3);
    setenv("WARPSORT_NCCL_PARTS", "99", 1);
    assert_int_equal(ws_pt_plan_for(&c3, n_in, 3 * big, &pl), 1);
    assert_int_equal(pl.K, WS_PT_MAX_PARTS);
    unsetenv("WARPSORT_NCCL_PARTS");
}

/*--- the counts: the route's assembly simulated on the host ---*/

/* The sample kernel's place of item i of a rank's s sample keys among its
 * n (ws_pt_sample). */
static uint64_t sample_at(uint64_t i, uint64_t n, uint64_t s) {
    const uint64_t q = n / s, rem = n % s, at = i * q + i * rem / s + q / 2;
    return at < n ? at : n - 1;
}
static int cmp_u32(const void *a, const void *b) {
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}
static size_t bucket_of(const uint32_t *split, int ns, uint32_t x) {
    size_t lo = 0, hi = (size_t)ns; /* splitters <= x */
    while (lo < hi) {
        const size_t mid = (lo + hi) / 2;
        if (split[mid] <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

enum { KEYS_RANDOM, KEYS_RANKED, KEYS_EQUAL, KEYS_FEW };

/* What a non-empty message of rank r carries: the bucket a send reads
 * (the non-empty one the scatter put at that place: empty pieces share
 * places with the next), or the bucket a receive's slot is for. */
static int msg_bucket(const ws_pt_plan *pl, int r, const ws_pt_exchange *x, const ws_pt_sizes *z,
                      const uint64_t *cnt, const ws_pt_xmsg *m) {
    const int K = pl->K;
    if (!m->recv) {
        for (int b = 0; b < pl->B; b++)
            if (x->dst[b].buf == m->buf && x->dst[b].at == m->at && cnt[(size_t)r * pl->B + b])
                return b;
        return -1;
    }
    if (m->buf == WS_PT_BAND0) return (r - 1) * (K + 1) + K;
    if (m->buf == WS_PT_BAND1) return r * (K + 1) + K;
    for (int k = 0; k < K; k++)
        if (m->at >= z->part_at[k] && m->at < z->part_at[k] + z->part_n[k]) return r * (K + 1) + k;
    return -1;
}

/* Every rank's exchange plan (ws_pt_exchange_plan): in every round the
 * sends of q to t and the receives of t from q pair up in order, bucket and
 * count; a send reads exactly a piece the scatter wrote; on every rank the
 * scatter's places and the receives never overlap, stay inside their
 * buffers, and fill the receive buffer's parts and both bands exactly. */
static void check_exchange(const ws_pt_plan *pl, int p, const uint64_t *n_in, uint64_t n_total,
                           const uint64_t *cnt, const ws_pt_sizes *z) {
    const int shape = 0, B = pl->B, K = pl->K;
    const size_t kb = 4;
    ws_pt_exchange *x = (ws_pt_exchange *)malloc((size_t)p * sizeof(ws_pt_exchange));
    for (int r = 0; r < p; r++) ws_pt_exchange_plan(pl, r, cnt, &z[r], kb, &x[r]);
    for (int round = 0; round <= K; round++)
        for (int q = 0; q < p; q++)
            for (int t = 0; t < p; t++) {
                if (q == t) continue;
                int i = x[q].round_at[round], j = x[t].round_at[round];
                for (;;) {
                    while (i < x[q].round_at[round + 1] &&
                           (x[q].msg[i].recv || x[q].msg[i].peer != t || !x[q].msg[i].n))
                        i++;
                    while (j < x[t].round_at[round + 1] &&
                           (!x[t].msg[j].recv || x[t].msg[j].peer != q || !x[t].msg[j].n))
                        j++;
                    const int more_i = i < x[q].round_at[round + 1];
                    const int more_j = j < x[t].round_at[round + 1];
                    CHECK(more_i == more_j);
                    if (!more_i || !more_j) break;
                    const ws_pt_xmsg &snd = x[q].msg[i], &rcv = x[t].msg[j];
                    const int b = msg_bucket(pl, q, &x[q], &z[q], cnt, &snd);
                    CHECK(b >= 0 && cnt[(size_t)q * B + b] == snd.n);
                    CHECK(b == msg_bucket(pl, t, &x[t], &z[t], cnt, &rcv));
                    CHECK(snd.n == rcv.n);
                    i++, j++;
                }
            }
    for (int r = 0; r < p; r++) {
        const size_t n_out = warpsort_nccl_output_count((size_t)n_total, p, r);
        const uint64_t cap[WS_PT_BUFS] = {n_in[r] + (uint64_t)B * 4, n_out, pl->band_cap,
                                          pl->band_cap};
        uint64_t parts = 0;
        for (int k = 0; k < K; k++) parts += z[r].part_n[k];
        const uint64_t fill[WS_PT_BUFS] = {0, parts, z[r].band_n[0], z[r].band_n[1]};
        /* the places written: the scatter's and the receives' */
        struct span {
            int buf;
            uint64_t at, n;
        } w[WS_PT_MAX_BUCKETS + (WS_PT_MAX_PARTS + 1) * WS_PT_ROUND_MSGS];
        int nw = 0;
        for (int b = 0; b < B; b++)
            if (cnt[(size_t)r * B + b])
                w[nw++] = span{x[r].dst[b].buf, x[r].dst[b].at, cnt[(size_t)r * B + b]};
        for (int i = 0; i < x[r].round_at[K + 1]; i++)
            if (x[r].msg[i].recv && x[r].msg[i].n)
                w[nw++] = span{x[r].msg[i].buf, x[r].msg[i].at, x[r].msg[i].n};
        uint64_t covered[WS_PT_BUFS] = {0, 0, 0, 0};
        for (int a = 0; a < nw; a++) {
            CHECK(w[a].at + w[a].n <= cap[w[a].buf]);
            covered[w[a].buf] += w[a].n;
            for (int b = a + 1; b < nw; b++)
                if (w[a].buf == w[b].buf)
                    CHECK(w[a].at + w[a].n <= w[b].at || w[b].at + w[b].n <= w[a].at);
        }
        for (int f = WS_PT_RECV; f < WS_PT_BUFS; f++) CHECK(covered[f] == fill[f]);
        for (int a = 0; a < nw; a++)
            if (w[a].buf == WS_PT_RECV)
                CHECK(w[a].at + w[a].n <= parts);
            else if (w[a].buf != WS_PT_SEND)
                CHECK(w[a].at + w[a].n <= fill[w[a].buf]);
    }
    free(x);
}

/* p ranks of u32 keys (ascending: ordered bits are the keys) through the
 * plan, a host copy of the sample, the splitters and the counts, and
 * ws_pt_check on every rank. The verdict must be the same everywhere; where
 * the route holds, rank r's output as the device assembles it (the tail of
 * band r - 1 past its cut, the parts, the head of band r) must be slice r of
 * the sorted keys, and each band's two cuts must meet. */
static int run_counts(int p, uint64_t per, int keys_kind, uint64_t seed) {
    const int shape = keys_kind; /* for CHECK's message */
    const size_t kb = 4;
    uint64_t n_in[WS_PT_MAX_RANKS] = {0}, n_total = 0;
    uint32_t *keys[WS_PT_MAX_RANKS] = {NULL};
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (int r = 0; r < p; r++) {
        n_in[r] = per + (uint64_t)r * 37; /* uneven */
        keys[r] = (uint32_t *)malloc(n_in[r] * sizeof(uint32_t));
        for (uint64_t i = 0; i < n_in[r]; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            keys[r][i] = keys_kind == KEYS_RANDOM   ? (uint32_t)(x >> 32)
                         : keys_kind == KEYS_RANKED ? (uint32_t)((uint64_t)r * 1000003u + i)
                         : keys_kind == KEYS_EQUAL  ? 7u
                                                    : (uint32_t)(x >> 60);
        }
        n_total += n_in[r];
    }
    const ws_nccl_call c0 = call_of(p, 0, kb, 0);
    ws_pt_plan pl;
    CHECK(ws_pt_plan_for(&c0, n_in, n_total, &pl));
    const uint64_t S = pl.s_at[p];
    uint32_t *sample = (uint32_t *)malloc(S * sizeof(uint32_t));
    for (int r = 0; r < p; r++) {
        const uint64_t s_r = pl.s_at[r + 1] - pl.s_at[r];
        for (uint64_t i = 0; i < s_r; i++)
            sample[pl.s_at[r] + i] = keys[r][sample_at(i, n_in[r], s_r)];
    }
    qsort(sample, S, sizeof(uint32_t), cmp_u32);
    const int B = pl.B, ns = B - 1;
    uint32_t split[WS_PT_MAX_BUCKETS];
    for (int i = 0; i < ns; i++) split[i] = sample[pl.pos[i]];
    uint64_t *cnt = (uint64_t *)calloc((size_t)p * B, sizeof(uint64_t));
    /* every bucket's keys of all ranks, for the assembly */
    uint32_t **bk = (uint32_t **)calloc((size_t)B, sizeof(uint32_t *));
    uint64_t *bn = (uint64_t *)calloc((size_t)B, sizeof(uint64_t));
    for (int r = 0; r < p; r++)
        for (uint64_t i = 0; i < n_in[r]; i++)
            cnt[(size_t)r * B + bucket_of(split, ns, keys[r][i])]++;
    for (int b = 0; b < B; b++) {
        for (int r = 0; r < p; r++) bn[b] += cnt[(size_t)r * B + b];
        bk[b] = (uint32_t *)malloc((bn[b] ? bn[b] : 1) * sizeof(uint32_t));
        bn[b] = 0;
    }
    for (int r = 0; r < p; r++)
        for (uint64_t i = 0; i < n_in[r]; i++) {
            const size_t b = bucket_of(split, ns, keys[r][i]);
            bk[b][bn[b]++] = keys[r][i];
        }
    for (int b = 0; b < B; b++) qsort(bk[b], bn[b], sizeof(uint32_t), cmp_u32);
    ws_pt_sizes z[WS_PT_MAX_RANKS];
    int verdict = -1;
    for (int r = 0; r < p; r++) {
        const ws_nccl_call c = call_of(p, r, kb, 0);
        const size_t n_out = warpsort_nccl_output_count((size_t)n_total, p, r);
        const int ok = ws_pt_check(&c, &pl, cnt, n_total, n_out, &z[r]);
        CHECK(verdict < 0 || ok == verdict);
        verdict = ok;
    }
    if (verdict) {
        /* the sorted keys of all ranks: the reference */
        uint32_t *all = (uint32_t *)malloc(n_total * sizeof(uint32_t));
        uint64_t at = 0;
        for (int r = 0; r < p; r++)
            for (uint64_t i = 0; i < n_in[r]; i++) all[at++] = keys[r][i];
        qsort(all, n_total, sizeof(uint32_t), cmp_u32);
        at = 0;
        for (int r = 0; r < p; r++) {
            const size_t n_out = warpsort_nccl_output_count((size_t)n_total, p, r);
            const uint64_t start = at;
            if (r > 0) { /* the tail of band r - 1 */
                const int b = (r - 1) * (pl.K + 1) + pl.K;
                CHECK(z[r].band_n[0] == bn[b] && z[r - 1].band_n[1] == bn[b]);
                CHECK(z[r].band_from == z[r - 1].head);
                CHECK(z[r - 1].head + z[r].tail == bn[b]);
                for (uint64_t i = z[r].band_from; i < bn[b]; i++) CHECK(bk[b][i] == all[at++]);
            }
            for (int k = 0; k < pl.K; k++) {
                const int b = r * (pl.K + 1) + k;
                CHECK(z[r].part_n[k] == bn[b]);
                CHECK(z[r].part_at[k] == at - start - z[r].tail);
                for (uint64_t i = 0; i < bn[b]; i++) CHECK(bk[b][i] == all[at++]);
            }
            if (r + 1 < p) { /* the head of band r */
                const int b = r * (pl.K + 1) + pl.K;
                for (uint64_t i = 0; i < z[r].head; i++) CHECK(bk[b][i] == all[at++]);
            }
            CHECK(at - start == n_out);
        }
        CHECK(at == n_total);
        free(all);
        check_exchange(&pl, p, n_in, n_total, cnt, z);
    }
    for (int b = 0; b < B; b++) free(bk[b]);
    free(bk);
    free(bn);
    free(cnt);
    free(sample);
    for (int r = 0; r < p; r++) free(keys[r]);
    return verdict;
}

static void test_counts(void **state) {
    (void)state;
    setup_device();
    setenv("WARPSORT_NCCL_ROUTE", "partition", 1);
    const int ranks[] = {2, 3, 4, 5, 8, 16};
    for (size_t pi = 0; pi < sizeof ranks / sizeof ranks[0]; pi++) {
        const int p = ranks[pi];
        for (int parts = 1; parts <= 4; parts += 3) {
            char v[8];
            snprintf(v, sizeof v, "%d", parts);
            setenv("WARPSORT_NCCL_PARTS", v, 1);
            /* a drawn sample (2^20 keys of more; up to four ranks, where
             * it stays 2^20), and all of a smaller input */
            const uint64_t pers[] = {(uint64_t)3 << 19, (uint64_t)1 << 16, 5003};
            for (int si = p <= 4 ? 0 : 1; si < 3; si++) {
                const uint64_t n_total = pers[si] * (uint64_t)p;
                const int shape = 0;
                const size_t kb = 4;
                CHECK(run_counts(p, pers[si], KEYS_RANDOM, 11 + (uint64_t)p) == 1);
                CHECK(run_counts(p, pers[si], KEYS_RANKED, 12) == 1);
                CHECK(run_counts(p, pers[si], KEYS_EQUAL, 13) == 0);
                (void)run_counts(p, pers[si], KEYS_FEW, 14); /* either way, alike */
            }
        }
    }
    unsetenv("WARPSORT_NCCL_PARTS");
    unsetenv("WARPSORT_NCCL_ROUTE");
}

int main(int argc, char **argv) {
    if (wt_cmocka_options(argc, argv) < 0) return 2;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plans),
        cmocka_unit_test(test_gates),
        cmocka_unit_test(test_counts),
    };
    return cmocka_run_group_tests_name("nccl_plan", tests, NULL, NULL);
}
