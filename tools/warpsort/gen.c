/* gen.c - distribution names, limits and progress for the CLI, see gen.h. */
#include "gen.h"

#include "cli.h"
#include "progress.h"

#include <string.h>

const char *gen_dist_list(void) {
    static char list[160];
    if (!list[0]) {
        for (unsigned d = 0; d < KEYGEN_DIST_COUNT; d++) {
            if (d) strcat(list, ", ");
            strcat(list, keygen_dist_name((keygen_dist_t)d));
        }
    }
    return list;
}

int gen_dist_from_name(const char *name, keygen_dist_t *dist) {
    if (keygen_dist_from_name(name, dist)) return 1;
    cli_error("unknown distribution '%s' (use %s)", name, gen_dist_list());
    return 0;
}

int gen_check(keygen_dist_t dist, warpsort_dtype_t dtype, size_t n, const char *command) {
    if (dist != KEYGEN_IOTA) return 1;
    /* iota's keys must be distinct, exact original positions. */
    uint64_t limit;
    switch (dtype) {
    case WARPSORT_U32: limit = (uint64_t)1 << 32; break;
    case WARPSORT_I32: limit = (uint64_t)1 << 31; break;
    case WARPSORT_F32: limit = (uint64_t)1 << 24; break;
    case WARPSORT_F64: limit = (uint64_t)1 << 53; break;
    case WARPSORT_I64: limit = (uint64_t)1 << 63; break;
    default: return 1;
    }
    if ((uint64_t)n <= limit) return 1;
    cli_error("%s: --dist iota holds exact positions only up to %llu keys of %s; use a wider dtype",
              command, (unsigned long long)limit, warpsort_dtype_name(dtype));
    return 0;
}

/* Progress granularity: cheap to check, fine enough for a smooth bar. */
#define GEN_BLOCK ((size_t)1 << 20)

void gen_fill(void *keys, size_t n, warpsort_dtype_t dtype, keygen_dist_t dist, uint64_t seed) {
    keygen_t g = keygen_init(dist, (int)dtype, seed, n);
    progress_t bar;
    progress_begin(&bar, "generating", n);
    for (size_t start = 0; start < n; start += GEN_BLOCK) {
        size_t count = n - start < GEN_BLOCK ? n - start : GEN_BLOCK;
        keygen_fill_range(&g, keys, start, count);
        progress_update(&bar, start + count);
    }
    progress_end(&bar);
}
