/*
 * test_split.cu - the exact cut of sorted runs (src/cuda/pipeline/split.cu,
 * ws_split_at) checked on the host against a brute-force oracle: the out-of-
 * core path cuts its ranges with it and the spread path its parts, and a
 * wrong cut loses or repeats items. Host runs need no CUDA call, so this
 * runs with or without a GPU, in CI too.
 *
 * For runs of every length pattern (one run, a short last run, runs of one
 * item), keys from tiny alphabets (most items tie), all equal, distinct,
 * u32 and u64 bits in both orders, every rank k: split[q] must be the
 * items of run q among the first k in the order (key, run, position), both
 * from zeros and chained from the previous rank's cut (as phase 2 does).
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/pipeline/pipe.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static int g_quick;
static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static uint64_t next_rand(void) {
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return g_rng;
}

static uint64_t ordered(const unsigned char *keys, size_t i, size_t kb, int kind, int desc) {
    if (kb == 4) {
        uint32_t x;
        memcpy(&x, keys + i * 4, 4);
        return ws_to_ordered32(x, kind, desc);
    }
    uint64_t x;
    memcpy(&x, keys + i * 8, 8);
    return ws_to_ordered64(x, kind, desc);
}

/* The oracle: how many items of each run are among the first k, by
 * counting, for every item, the items that precede it in (key, run,
 * position) order. */
static void oracle(const ws_runs *r, size_t k, size_t *want) {
    for (size_t q = 0; q < r->count; q++) {
        want[q] = 0;
        for (size_t i = 0; i < ws_run_len(r, q); i++) {
            const uint64_t v = ordered(r->keys, q * r->run + i, r->kb, r->kind, r->desc);
            size_t before = 0;
            for (size_t p = 0; p < r->count; p++) {
                const size_t len = ws_run_len(r, p);
                for (size_t j = 0; j < len; j++) {
                    const uint64_t u = ordered(r->keys, p * r->run + j, r->kb, r->kind, r->desc);
                    before += u < v || (u == v && (p < q || (p == q && j < i)));
                }
            }
            want[q] += before < k;
        }
    }
}

/* Runs of `run` items (the last shorter) over n keys drawn from `alphabet`
 * values (0: distinct), each run sorted in the library's order. */
static void make_runs(unsigned char *keys, size_t n, size_t run, size_t kb, int kind, int desc,
                      uint64_t alphabet) {
    for (size_t i = 0; i < n; i++) {
        const uint64_t x = alphabet ? next_rand() % alphabet * 0x1000193ull : next_rand();
        if (kb == 4) {
            const uint32_t y = (uint32_t)x;
            memcpy(keys + i * 4, &y, 4);
        } else {
            memcpy(keys + i * 8, &x, 8);
        }
    }
    for (size_t b = 0; b < n; b += run) { /* insertion sort each run */
        const size_t e = n - b < run ? n : b + run;
        for (size_t i = b + 1; i < e; i++)
            for (size_t j = i; j > b; j--) {
                unsigned char *x = keys + (j - 1) * kb, *y = keys + j * kb;
                if (ordered(keys, j - 1, kb, kind, desc) <= ordered(keys, j, kb, kind, desc)) break;
                unsigned char t[8];
                memcpy(t, x, kb);
                memcpy(x, y, kb);
                memcpy(y, t, kb);
            }
    }
}

static void check_case(size_t n, size_t run, size_t kb, int kind, int desc, uint64_t alphabet) {
    unsigned char *keys = (unsigned char *)malloc(n * kb + 8);
    assert_non_null(keys);
    make_runs(keys, n, run, kb, kind, desc, alphabet);
    ws_runs r;
    memset(&r, 0, sizeof r);
    r.keys = keys;
    r.n = n;
    r.run = run;
    r.count = (n + run - 1) / run;
    r.kb = kb;
    r.kind = kind;
    r.desc = desc;
    r.err = cudaSuccess;
    assert_true(r.count <= 64);
    size_t *want = (size_t *)calloc(3 * r.count + 3, sizeof(size_t));
    assert_non_null(want);
    size_t *got = want + r.count + 1, *chain = got + r.count + 1;
    for (size_t k = 0; k <= n; k++) {
        oracle(&r, k, want);
        size_t from[64] = {0};
        ws_split_at(&r, k, from, got);
        size_t sum = 0;
        for (size_t q = 0; q < r.count; q++) {
            if (got[q] != want[q])
                fail_msg("n=%zu run=%zu kb=%zu kind=%d desc=%d alphabet=%llu k=%zu: run %zu cut at "
                         "%zu, not %zu",
                         n, run, kb, kind, desc, (unsigned long long)alphabet, k, q, got[q],
                         want[q]);
            sum += got[q];
        }
        assert_int_equal(sum, k);
        /* chained: from the previous rank's cut, reading only past it */
        size_t prev[64];
        memcpy(prev, chain, r.count * sizeof *prev);
        ws_split_at(&r, k, prev, chain);
        for (size_t q = 0; q < r.count; q++)
            if (chain[q] != want[q])
                fail_msg("chained, n=%zu run=%zu k=%zu: run %zu cut at %zu, not %zu", n, run, k, q,
                         chain[q], want[q]);
    }
    free(want);
    free(keys);
}

static void test_split_matches_oracle(void **state) {
    (void)state;
    const size_t shapes[][2] = {{1, 1}, {7, 7}, {40, 13}, {64, 16}, {97, 10}, {33, 1}, {120, 40}};
    const uint64_t alphabets[] = {1, 2, 3, 7, 0};
    const int kinds[] = {0, 1, 2}; /* unsigned, signed, float (ws_dtype_kind) */
    size_t cases = 0;
    for (size_t s = 0; s < COUNT(shapes); s++)
        for (size_t a = 0; a < COUNT(alphabets); a++)
            for (size_t kbi = 0; kbi < 2; kbi++)
                for (size_t ki = 0; ki < COUNT(kinds); ki++)
                    for (int desc = 0; desc < 2; desc++) {
                        if (g_quick && (ki || desc) && s % 2) continue;
                        check_case(shapes[s][0], shapes[s][1], kbi ? 8 : 4, kinds[ki], desc,
                                   alphabets[a]);
                        cases++;
                    }
    print_message("%zu run sets, every rank of each\n", cases);
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) {
            g_quick = 1;
        } else {
            fprintf(stderr, "usage: %s [--quick]\n", argv[0]);
            return 2;
        }
    }
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_split_matches_oracle)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
