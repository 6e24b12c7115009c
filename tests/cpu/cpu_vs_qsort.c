/*
 * cpu_vs_qsort.c - times the CPU backend against glibc qsort on random u32
 * keys (not a test; the official benchmark is `warpsort bench`).
 *   cpu_vs_qsort [log2_n=24] [repeats=5] [cpu_threads=0]
 * Each repeat sorts fresh random keys with both; the best wall time of each
 * is reported, so background load on a shared machine hurts both alike.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testkit.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    unsigned log2n = argc > 1 ? (unsigned)atoi(argv[1]) : 24u;
    int repeats = argc > 2 ? atoi(argv[2]) : 5;
    warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
    cfg.backend = WARPSORT_BACKEND_CPU;
    cfg.cpu_threads = argc > 3 ? (unsigned)atoi(argv[3]) : 0u;
    if (log2n > 34 || repeats < 1) {
        fprintf(stderr, "usage: %s [log2_n=24] [repeats=5] [cpu_threads=0]\n", argv[0]);
        return 2;
    }
    const size_t n = (size_t)1 << log2n;
    uint32_t *keys = malloc(n * sizeof *keys), *copy = malloc(n * sizeof *copy);
    warpsort_context_t *ctx = NULL;
    if (!keys || !copy || warpsort_create(&ctx, &cfg) != WARPSORT_OK) {
        fprintf(stderr, "setup failed\n");
        return 1;
    }
    double best_ws = 1e30, best_q = 1e30;
    for (int r = 0; r < repeats; r++) {
        keygen_fill(keys, n, WARPSORT_U32, KEYGEN_RANDOM, (uint64_t)r);
        memcpy(copy, keys, n * sizeof *keys);
        double t0 = now();
        warpsort_status_t st = warpsort_sort(ctx, keys, n, WARPSORT_U32, 0);
        double t_ws = now() - t0;
        t0 = now();
        qsort(copy, n, sizeof *copy, cmp_u32);
        double t_q = now() - t0;
        if (st != WARPSORT_OK || memcmp(keys, copy, n * sizeof *keys) != 0) {
            fprintf(stderr, "mismatch with qsort (status %s)\n", warpsort_status_name(st));
            return 1;
        }
        if (t_ws < best_ws) best_ws = t_ws;
        if (t_q < best_q) best_q = t_q;
    }
    printf("n = 2^%u random u32, best of %d, cpu_threads = %u (0 = all cores)\n", log2n, repeats,
           cfg.cpu_threads);
    printf("warpsort cpu: %8.1f ms  %7.1f Mkeys/s\n", best_ws * 1e3, (double)n / best_ws * 1e-6);
    printf("glibc qsort:  %8.1f ms  %7.1f Mkeys/s\n", best_q * 1e3, (double)n / best_q * 1e-6);
    printf("speedup:      %8.1fx\n", best_q / best_ws);
    warpsort_destroy(ctx);
    free(keys);
    free(copy);
    return 0;
}
