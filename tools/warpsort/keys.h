/*
 * keys.h - the CLI's view of key order, and how it checks results.
 *
 * The CLI is product code, so it checks with the library's own parts: order
 * comes from src/core/keybits.h (the definition both backends sort by), and a
 * reference result is the input sorted by the CPU backend. An order-free
 * hash of the bit patterns adds a permutation check that shares no code with
 * either backend, so a CPU-backend result is not only compared with itself.
 * The independent oracle that checks the library itself lives in the tests
 * (tests/common/testkit.h).
 */
#ifndef WARPSORT_CLI_KEYS_H
#define WARPSORT_CLI_KEYS_H

#include "warpsort.h"

#include <stddef.h>
#include <stdint.h>

/* Room for a library message (WS_ERROR_MAX) and a prefix. */
#define KEYS_WHY_MAX 600

/* Index i >= 1 of the first key that sorts before keys[i-1], or n if the
 * array is sorted. */
size_t keys_first_unsorted(const void *keys, size_t n, warpsort_dtype_t dtype, int desc);

/* Sorts keys in place with the library's CPU backend (desc: descending).
 * Returns WARPSORT_OK or the library's status; *why then holds its message. */
warpsort_status_t keys_cpu_sort(void *keys, size_t n, warpsort_dtype_t dtype, int desc, char *why,
                                size_t why_len);

/* Whether a and b (n elements of dtype each) hold the same bit patterns with
 * the same multiplicities, by sorting copies with the CPU backend. Returns 1
 * yes, 0 no, -1 on failure (*why says why). On "no", *sorted_rank is the
 * first rank at which they differ. */
int keys_same_multiset(const void *a, const void *b, size_t n, warpsort_dtype_t dtype,
                       size_t *sorted_rank, char *why, size_t why_len);

/* Order-independent 128-bit hash of the bit patterns of n keys of
 * key_bytes: equal multisets give equal hashes, and a lost, duplicated or
 * changed key changes it with overwhelming probability. */
typedef struct keys_hash {
    uint64_t sum1, sum2;
} keys_hash_t;
keys_hash_t keys_multiset_hash(const void *keys, size_t n, size_t key_bytes);

/* Human-readable keys[i]: "42", "-7", "-0 (0x80000000)", "nan (0x7fc00000)". */
void keys_format(const void *keys, size_t i, warpsort_dtype_t dtype, char *buf, size_t len);

#endif /* WARPSORT_CLI_KEYS_H */
