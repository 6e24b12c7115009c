/*
 * gen.h - deterministic test data: a seeded generator and the key
 * distributions `gen`, `bench` and `run` share.
 */
#ifndef WARPSORT_CLI_GEN_H
#define WARPSORT_CLI_GEN_H

#include "warpsort.h"

#include <stddef.h>
#include <stdint.h>

typedef enum gen_dist {
    GEN_RANDOM,   /* uniform bits; floats: every finite pattern (NaN/inf redrawn) */
    GEN_SORTED,   /* random, then ascending in the library's order */
    GEN_REVERSED, /* random, then descending */
    GEN_EQUAL,    /* one random key repeated */
    GEN_FEW,      /* 16 distinct random keys */
    GEN_NANMIX,   /* random with 1 in 4 special: NaNs of both signs, +-0, +-inf,
                     subnormals; integers: min, max, 0, +-1 */
    GEN_IOTA,     /* 0, 1, 2, ... (handy as a values file: each key's origin) */
    GEN_DIST_COUNT_
} gen_dist_t;

const char *gen_dist_name(gen_dist_t dist);
/* 1 if known; reports the error otherwise. */
int gen_dist_from_name(const char *name, gen_dist_t *dist);
/* "random, sorted, reversed, ..." for help and errors. */
const char *gen_dist_list(void);

/* 1 if dist can make n keys of dtype; else reports why (as command) and
 * returns 0. iota is limited to the positions the dtype holds exactly. */
int gen_check(gen_dist_t dist, warpsort_dtype_t dtype, size_t n, const char *command);

/* Fills keys[0..n) with a distribution; the same seed always gives the same
 * bytes. Returns 0 if out of memory (sorted/reversed need scratch space). */
int gen_fill(void *keys, size_t n, warpsort_dtype_t dtype, gen_dist_t dist, uint64_t seed);

#endif /* WARPSORT_CLI_GEN_H */
