/*
 * gen.h - the CLI's side of input generation: names on the command line,
 * limits, and a progress bar around src/core/keygen.h, the generator the
 * tests and the benchmark harness use too (one set of distributions).
 */
#ifndef WARPSORT_CLI_GEN_H
#define WARPSORT_CLI_GEN_H

#include "core/keygen.h"
#include "warpsort.h"

#include <stddef.h>
#include <stdint.h>

/* 1 and *dist if name is a distribution; reports the error otherwise. */
int gen_dist_from_name(const char *name, keygen_dist_t *dist);
/* "random, sorted, reversed, ..." for help and errors. */
const char *gen_dist_list(void);

/* 1 if dist can make n keys of dtype; else reports why (as command) and
 * returns 0. iota is limited to the positions the dtype holds exactly. */
int gen_check(keygen_dist_t dist, warpsort_dtype_t dtype, size_t n, const char *command);

/* Fills keys[0..n) with a distribution (a progress bar on a terminal); the
 * same seed always gives the same bytes. */
void gen_fill(void *keys, size_t n, warpsort_dtype_t dtype, keygen_dist_t dist, uint64_t seed);

#endif /* WARPSORT_CLI_GEN_H */
