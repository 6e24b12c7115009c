/*
 * test_parallel.c - src/core/pool.c: fork/join and the worker pool
 * the GPU pipeline stages with. Every share runs exactly once per round,
 * whatever the pool's size against the shares asked for. And the staging
 * copy with streaming stores: byte-exact, nothing written outside its range.
 */
#include <stdlib.h>
#include <string.h>

#include "core/pool.h"
#include "wt_cmocka.h"

#define MAX_SHARES 64

struct tally {
    int hits[MAX_SHARES];
};
static void count_share(void *arg, unsigned t) {
    struct tally *c = arg;
    __atomic_fetch_add(&c->hits[t], 1, __ATOMIC_RELAXED);
}

static void expect_once(const struct tally *c, unsigned shares, int rounds) {
    for (unsigned t = 0; t < MAX_SHARES; t++) assert_int_equal(c->hits[t], t < shares ? rounds : 0);
}

static void test_parallel_run(void **state) {
    (void)state;
    for (unsigned shares = 1; shares <= 20; shares += 3) {
        struct tally c;
        memset(&c, 0, sizeof c);
        ws_parallel_run(shares, count_share, &c);
        expect_once(&c, shares, 1);
    }
}

static void test_pool_rounds(void **state) {
    (void)state;
    const unsigned sizes[] = {2, 3, 8, 17};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        ws_pool *p = ws_pool_create(sizes[i]);
        assert_non_null(p);
        /* Fewer, as many and more shares than the pool has threads, many
         * rounds back to back (a worker that missed a wake-up would hang or
         * leave a share at zero). */
        const unsigned asks[] = {1, 2, sizes[i] - 1, sizes[i], sizes[i] + 5, MAX_SHARES};
        for (size_t a = 0; a < sizeof asks / sizeof asks[0]; a++) {
            struct tally c;
            memset(&c, 0, sizeof c);
            for (int r = 0; r < 300; r++) ws_pool_run(p, asks[a], count_share, &c);
            expect_once(&c, asks[a], 300);
        }
        ws_pool_destroy(p);
    }
}

static void test_pool_edges(void **state) {
    (void)state;
    assert_null(ws_pool_create(0));
    assert_null(ws_pool_create(1));
    ws_pool_destroy(NULL);
    struct tally c;
    memset(&c, 0, sizeof c);
    ws_pool_run(NULL, 5, count_share, &c); /* no pool: a fresh fork/join */
    expect_once(&c, 5, 1);
}

/* Every size from 0 to a few lines past 64 bytes, at every source and
 * destination offset within a line, then a few large ones: the aligned body
 * and the unaligned head and tail must all land, and the guard bytes around
 * the destination stay as they were. */
static void check_copy(unsigned char *dst, const unsigned char *src, size_t doff, size_t soff,
                       size_t n, size_t cap) {
    memset(dst, 0xA5, cap);
    ws_copy_streaming(dst + doff, src + soff, n);
    if (n) assert_memory_equal(dst + doff, src + soff, n);
    for (size_t i = 0; i < doff; i++) assert_int_equal(dst[i], 0xA5);
    for (size_t i = doff + n; i < cap; i++) assert_int_equal(dst[i], 0xA5);
}
static void test_copy_streaming(void **state) {
    (void)state;
    const size_t cap = ((size_t)3 << 20) + 512;
    unsigned char *src = malloc(cap), *dst = malloc(cap);
    assert_true(src && dst);
    for (size_t i = 0; i < cap; i++) src[i] = (unsigned char)(i * 131 + (i >> 9));
    for (size_t n = 0; n <= 200; n++)
        for (size_t doff = 0; doff < 64; doff += 7)
            for (size_t soff = 0; soff < 64; soff += 13) check_copy(dst, src, doff, soff, n, 400);
    const size_t big[] = {4096, 65536 + 33, (size_t)1 << 20, ((size_t)3 << 20) - 17};
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++)
        for (size_t doff = 0; doff < 128; doff += 61) check_copy(dst, src, doff, 3, big[i], cap);
    free(src);
    free(dst);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parallel_run),
        cmocka_unit_test(test_pool_rounds),
        cmocka_unit_test(test_pool_edges),
        cmocka_unit_test(test_copy_streaming),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
