/*
 * test_gpu_fuzz.c - random cases on the CUDA backend, each judged by the
 * independent oracle and compared byte for byte with the CPU backend
 * wherever the order is determined (testkit.h, segmented_cases.h,
 * topk_cases.h): flat sorts, batched rows and segments, top-k. The fixed
 * suites pin every path switch the code knows of; this one draws shapes
 * nobody wrote down (sizes a few items either side of powers of two and
 * class edges, mixes of segment lengths, k against row lengths), every
 * dtype, distribution, flag, value and index width, and device, pinned
 * and pageable memory.
 *
 * Case i of seed s is a function of (s, i) alone, so a failure names the
 * environment that runs it again by itself:
 *   WARPSORT_FUZZ_SECONDS  time budget of the three tests together
 *                          (default 30, --quick 12)
 *   WARPSORT_FUZZ_SEED     the seed (default: from the clock, printed)
 *   WARPSORT_FUZZ_CASE     run only this case of each test
 *   WARPSORT_FUZZ_MAX_LOG  largest array, log2 items (default 25, quick 22)
 *   WARPSORT_FUZZ_BACKEND  cpu: the same cases (host memory only) on the
 *                          CPU backend, judged by the oracle alone; ctest
 *                          cpu_fuzz runs it with a fixed seed, so CI, which
 *                          has no GPU, fuzzes the CPU backend the same way
 *                          every time
 *
 * Standalone (--quick, --filter); without a CUDA backend or device every
 * test reports SKIPPED and the program exits 77 (but for the CPU run).
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../cpu/segmented_cases.h"
#include "../cpu/topk_cases.h"
#include "gpu_memory.h"
#include "wt_cmocka.h"

#define WT_EXIT_SKIPPED 77

static warpsort_context_t *g_ctx; /* under test; NULL: no CUDA backend or device */
static warpsort_context_t *g_ref; /* the CPU backend, the byte-for-byte reference; NULL
                                     when g_ctx is the CPU backend itself */
static int g_cpu_run;             /* WARPSORT_FUZZ_BACKEND=cpu */
static uint64_t g_seed;
static double g_seconds;      /* each test's share of the budget */
static long long g_only = -1; /* WARPSORT_FUZZ_CASE */
static int g_max_log;

/*--- drawing ---*/

typedef struct {
    uint64_t s;
} rng_t;

static uint64_t rnd(rng_t *r) { return wt_mix(r->s++); }
/* Uniform in [0, m) (m > 0). */
static size_t below(rng_t *r, size_t m) { return (size_t)(rnd(r) % m); }
/* Uniform in [lo, hi]. */
static size_t between(rng_t *r, size_t lo, size_t hi) { return lo + below(r, hi - lo + 1); }
/* 1 with probability p / 100. */
static int chance(rng_t *r, unsigned p) { return below(r, 100) < p; }

/* A size up to 2^max_log: log-uniform, or a few items either side of a
 * power of two (every path switch of the library is one), or tiny. */
static size_t draw_size(rng_t *r, int max_log) {
    const size_t top = (size_t)1 << max_log;
    size_t n;
    switch (below(r, 3)) {
    case 0: {
        const int b = (int)below(r, (size_t)max_log + 1);
        n = ((size_t)1 << b) + below(r, (size_t)1 << b);
        break;
    }
    case 1: {
        const size_t p = (size_t)1 << between(r, 2, (size_t)max_log);
        const size_t d = between(r, 0, 3);
        n = chance(r, 50) ? p + d : p - (d < p ? d : 0);
        break;
    }
    default: n = below(r, 70); break;
    }
    return n > top ? top : n;
}

static const wt_memory_t *draw_memory(rng_t *r) {
    const size_t m = below(r, 20);
    if (g_cpu_run) return &wt_host_memory;
    return m == 0 ? &wt_pinned_memory : m <= 2 ? &wt_host_memory : &wt_device_memory;
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Appends the failed case and its memory to msg (the reason); returns 1. */
static int failed_case(char *msg, size_t len, const char *what, const wt_memory_t *mem) {
    const size_t used = strlen(msg);
    snprintf(msg + used, len - used, " [%s, %s memory]", what, mem->name);
    return 1;
}

/* Runs case i = 0, 1, ... of `what` until the test's share of the budget
 * is spent (or case WARPSORT_FUZZ_CASE alone); one(rng, msg) draws and
 * runs a case, returning 0 or 1 with msg set. Fails the test at the first
 * failing case, naming how to run it again. */
typedef int (*fuzz_case_fn)(rng_t *r, char *msg, size_t len);

static void fuzz_loop(const char *what, uint64_t stream, fuzz_case_fn one) {
    WT_REQUIRE_GPU(g_ctx);
    const double end = now_s() + g_seconds;
    long long i = g_only >= 0 ? g_only : 0, ran = 0;
    char msg[1024];
    do {
        rng_t r = {wt_mix(g_seed ^ stream) + (uint64_t)i * 0x9E3779B97F4A7C15ull};
        msg[0] = 0;
        if (one(&r, msg, sizeof msg))
            fail_msg("%s case %lld failed (%sWARPSORT_FUZZ_SEED=%llu WARPSORT_FUZZ_CASE=%lld "
                     "--filter 'gpu_fuzz_%s'): %s",
                     what, i, g_cpu_run ? "WARPSORT_FUZZ_BACKEND=cpu " : "",
                     (unsigned long long)g_seed, i, what, msg);
        ran++;
        i++;
    } while (g_only < 0 && now_s() < end);
    print_message("%s: %lld cases passed\n", what, ran);
}

/*--- flat sorts ---*/

static int sort_case(rng_t *r, char *msg, size_t len) {
    wt_case_t c;
    c.op = (wt_op_t)below(r, WT_OP_COUNT);
    c.dtype = (warpsort_dtype_t)below(r, WARPSORT_DTYPE_COUNT_);
    c.second_bytes = chance(r, 50) ? 4 : 8;
    c.flags = (unsigned)below(r, 4);
    c.dist = (keygen_dist_t)below(r, KEYGEN_DIST_COUNT);
    c.seed = rnd(r);
    const wt_memory_t *mem = draw_memory(r);
    /* host arrays of every size take the staging pipeline: keep them
     * smaller, so the budget covers more shapes */
    c.n = draw_size(r, mem == &wt_device_memory ? g_max_log : g_max_log - 2);
    if (c.op == WT_OP_ARGSORT && c.second_bytes == 4 && c.n > 0xFFFFFFFFull) c.second_bytes = 8;
    if (wt_run_case(g_ctx, mem, &c, g_ref, msg, len) == 0) return 0;
    char what[200];
    wt_case_describe(&c, what, sizeof what);
    return failed_case(msg, len, what, mem);
}

static void test_sorts(void **state) {
    (void)state;
    fuzz_loop("sorts", 1, sort_case);
}

/*--- batched rows and segments ---*/

/* One segment length: a class edge +-1 (4 << c, c = 0 .. 13: every short
 * class, the cluster pairs and the first long lengths), a length up to a
 * cap drawn per call, or empty. */
static size_t draw_length(rng_t *r, size_t cap) {
    const size_t m = below(r, 10);
    size_t len;
    if (m == 0) {
        len = 0;
    } else if (m <= 3) {
        const size_t edge = (size_t)4 << below(r, 14);
        len = edge - 1 + below(r, 3);
    } else {
        len = between(r, 1, cap);
    }
    return len;
}

static int segments_case(rng_t *r, char *msg, size_t len) {
    sg_case_t c;
    memset(&c, 0, sizeof c);
    c.op = (wt_op_t)below(r, WT_OP_COUNT);
    c.dtype = (warpsort_dtype_t)below(r, WARPSORT_DTYPE_COUNT_);
    c.second_bytes = chance(r, 50) ? 4 : 8;
    c.flags = (unsigned)below(r, 4);
    c.dist = (keygen_dist_t)below(r, KEYGEN_DIST_COUNT);
    c.seed = rnd(r);
    /* most calls small (the oracle checks every segment on the host), one
     * in four up to the largest array */
    const size_t most = (size_t)1 << (chance(r, 25) || g_max_log < 25 ? g_max_log : 20);
    size_t *lengths = NULL;
    if (chance(r, 40)) {
        /* equal rows: any length (the leaf's rows from 2^21 on, a few
         * either side of it), as many as fit */
        c.row_len = chance(r, 20) ? ((size_t)1 << 21) - 1 + below(r, 3) : draw_size(r, 22);
        if (c.row_len == 0) c.row_len = 1;
        const size_t fit = most / c.row_len;
        if (fit == 0)
            c.row_len = most, c.num_segments = 1;
        else
            c.num_segments = between(r, 1, fit < 5000 ? fit : 5000);
    } else {
        /* offsets: many segments of mixed lengths, or a few huge ones
         * beside tiny ones */
        const size_t count = chance(r, 15) ? between(r, 1, 8) : between(r, 1, 20000);
        const size_t caps[] = {32, 300, 2048, 20000, 70000, (size_t)1 << 20, (size_t)1 << 23};
        const size_t cap = caps[below(r, sizeof caps / sizeof caps[0])];
        lengths = malloc(count * sizeof *lengths);
        if (!lengths) {
            snprintf(msg, len, "out of host memory");
            return 1;
        }
        size_t n = 0;
        for (size_t s = 0; s < count; s++) {
            size_t l = draw_length(r, cap);
            if (l > most - n) l = most - n;
            lengths[s] = l;
            n += l;
        }
        c.lengths = lengths;
        c.num_segments = count;
    }
    const wt_memory_t *mem = draw_memory(r);
    /* offsets in host memory beside device arrays too */
    const wt_memory_t *offs = mem == &wt_device_memory && chance(r, 20) ? &wt_host_memory : mem;
    const int bad = sg_run_case(g_ctx, mem, offs, &c, g_ref, msg, len);
    if (bad) {
        char what[300];
        sg_describe(&c, what, sizeof what);
        const size_t used = strlen(msg);
        snprintf(msg + used, len - used, " [%s, %s memory, %s offsets%s]", what, mem->name,
                 offs->name, c.lengths ? "" : ", rows");
        if (c.lengths && c.num_segments <= 8) {
            for (size_t s = 0; s < c.num_segments; s++) {
                const size_t u = strlen(msg);
                snprintf(msg + u, len - u, " %zu", c.lengths[s]);
            }
        }
    }
    free(lengths);
    return bad;
}

static void test_segments(void **state) {
    (void)state;
    fuzz_loop("segments", 2, segments_case);
}

/*--- top-k ---*/

static int topk_case(rng_t *r, char *msg, size_t len) {
    tk_case_t c;
    memset(&c, 0, sizeof c);
    c.dtype = (warpsort_dtype_t)below(r, WARPSORT_DTYPE_COUNT_);
    c.smallest = (int)below(r, 2);
    c.dist = (keygen_dist_t)below(r, KEYGEN_DIST_COUNT);
    c.seed = rnd(r);
    c.index_bytes = chance(r, 50) ? 4 : 8;
    c.value_bytes = chance(r, 70) ? 0 : chance(r, 50) ? 4 : 8;
    c.outputs = chance(r, 80) ? TK_BOTH : chance(r, 50) ? TK_KEYS_ONLY : TK_INDICES_ONLY;
    /* the reference sorts every row on the host, one thread: 2^(max_log -
     * 3) items in all */
    const int top_log = g_max_log - 3;
    const size_t most = (size_t)1 << top_log;
    if (chance(r, 50)) {
        c.rows = 1;
        c.row_len = draw_size(r, top_log);
    } else {
        c.row_len = draw_size(r, top_log < 18 ? top_log : 18);
        if (c.row_len == 0) c.row_len = 1;
        const size_t fit = most / c.row_len;
        c.rows = between(r, 1, fit < 20000 ? fit : 20000);
    }
    if (c.row_len == 0) c.row_len = 1;
    /* k: small, around a power of two, a fraction of the row, or all of it */
    switch (below(r, 5)) {
    case 0: c.k = between(r, 1, 40); break;
    case 1: {
        const size_t p = (size_t)1 << below(r, 17);
        c.k = p - 1 + below(r, 3);
        break;
    }
    case 2: c.k = c.row_len >> below(r, 12); break;
    case 3: c.k = c.row_len - below(r, 2); break;
    default: c.k = between(r, 1, 5000); break;
    }
    if (c.k == 0) c.k = 1;
    if (c.k > c.row_len) c.k = c.row_len;
    const wt_memory_t *mem = draw_memory(r);
    if (tk_run_case(g_ctx, mem, &c, g_ref, msg, len) == 0) return 0;
    char what[200];
    tk_describe(&c, what, sizeof what);
    return failed_case(msg, len, what, mem);
}

static void test_topk(void **state) {
    (void)state;
    fuzz_loop("topk", 3, topk_case);
}

static double env_double(const char *name, double fallback) {
    const char *v = getenv(name);
    return v && *v ? strtod(v, NULL) : fallback;
}

int main(int argc, char **argv) {
    const int quick = wt_cmocka_options(argc, argv);
    if (quick < 0) return 2;
    const char *backend = getenv("WARPSORT_FUZZ_BACKEND");
    g_cpu_run = backend && strcmp(backend, "cpu") == 0;
    if (backend && *backend && !g_cpu_run && strcmp(backend, "cuda") != 0) {
        fprintf(stderr, "WARPSORT_FUZZ_BACKEND must be cpu or cuda\n");
        return 2;
    }
    const char *seed = getenv("WARPSORT_FUZZ_SEED");
    g_seed = seed && *seed ? strtoull(seed, NULL, 0) : (uint64_t)time(NULL);
    const char *only = getenv("WARPSORT_FUZZ_CASE");
    if (only && *only) g_only = strtoll(only, NULL, 0);
    g_seconds = env_double("WARPSORT_FUZZ_SECONDS", quick ? 12 : 30) / 3;
    g_max_log = (int)env_double("WARPSORT_FUZZ_MAX_LOG", quick ? 22 : 25);
    if (g_max_log < 4 || g_max_log > 30) {
        fprintf(stderr, "WARPSORT_FUZZ_MAX_LOG must be 4 .. 30\n");
        return 2;
    }
    fprintf(stderr, "gpu_fuzz: %sWARPSORT_FUZZ_SEED=%llu, %.0f s a test, arrays up to 2^%d\n",
            g_cpu_run ? "WARPSORT_FUZZ_BACKEND=cpu " : "", (unsigned long long)g_seed, g_seconds,
            g_max_log);
    warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
    cfg.backend = WARPSORT_BACKEND_CPU;
    warpsort_context_t *cpu = NULL;
    if (warpsort_create(&cpu, &cfg) != WARPSORT_OK) return 2;
    if (g_cpu_run) {
        g_ctx = cpu;
    } else {
        g_ref = cpu;
        if (wt_gpu_probe(&g_ctx) < 0) return 1;
    }
    const struct CMUnitTest tests[] = {
        {"gpu_fuzz_sorts", test_sorts, NULL, NULL, NULL},
        {"gpu_fuzz_segments", test_segments, NULL, NULL, NULL},
        {"gpu_fuzz_topk", test_topk, NULL, NULL, NULL},
    };
    const int failed = _cmocka_run_group_tests("gpu_fuzz", tests, 3, NULL, NULL);
    const int skipped = g_ctx == NULL;
    if (g_ctx != cpu) warpsort_destroy(g_ctx);
    warpsort_destroy(cpu);
    return failed ? 1 : skipped ? WT_EXIT_SKIPPED : 0;
}
