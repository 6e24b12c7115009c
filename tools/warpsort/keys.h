/*
 * keys.h - the CLI's view of key order, and its own reference sort.
 *
 * Order comes from src/core/keybits.h, the library's single definition, so
 * `check` judges files exactly as the library sorts them. The reference sort
 * is an independent LSD radix sort on those ordered bits: `bench` and `run`
 * verify the library against it rather than against the library itself.
 */
#ifndef WARPSORT_CLI_KEYS_H
#define WARPSORT_CLI_KEYS_H

#include "warpsort.h"

#include <stddef.h>
#include <stdint.h>

/* Ordered bits of keys[i]: smaller means sorts earlier in that order. */
uint64_t keys_ordered(const void *keys, size_t i, warpsort_dtype_t dtype, int desc);

/* Index i >= 1 of the first key that sorts before keys[i-1], or n if the
 * array is sorted. */
size_t keys_first_unsorted(const void *keys, size_t n, warpsort_dtype_t dtype, int desc);

/* Sorts keys in place (stable LSD radix on ordered bits). 0 if out of memory. */
int keys_reference_sort(void *keys, size_t n, warpsort_dtype_t dtype, int desc);

/* Whether a and b (n elements of dtype each) hold the same bit patterns with
 * the same multiplicities. Returns 1 yes, 0 no, -1 out of memory.
 * On "no", *sorted_rank is the first rank at which they differ. */
int keys_same_multiset(const void *a, const void *b, size_t n, warpsort_dtype_t dtype,
                       size_t *sorted_rank);

/* Human-readable keys[i]: "42", "-7", "-0 (0x80000000)", "nan (0x7fc00000)". */
void keys_format(const void *keys, size_t i, warpsort_dtype_t dtype, char *buf, size_t len);

#endif /* WARPSORT_CLI_KEYS_H */
