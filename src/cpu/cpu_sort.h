/* cpu_sort.h - the CPU backend's sort of one array in caller memory, for
 * callers that sort many arrays in one call (cpu_segmented.c). The same
 * radix sort / insertion sort as ws_cpu_sort_pairs and ws_cpu_argsort
 * (cpu_sort.c): stable, every dtype, both orders. */
#ifndef WARPSORT_CPU_SORT_H
#define WARPSORT_CPU_SORT_H

#include "core/internal.h"

/* Worker threads ws_cpu_sort_pairs would use for n items on ctx (>= 1). */
unsigned ws_cpu_threads_for(const warpsort_context_t *ctx, size_t n);

/* Bytes of scratch ws_cpu_sort_in needs for an array of up to n items
 * sorted by nthreads threads (value_bytes: values or indices, 0 for keys
 * alone). */
size_t ws_cpu_sort_in_bytes(size_t n, warpsort_dtype_t dtype, unsigned value_bytes, int argsort,
                            unsigned nthreads);

/* Sorts n items with nthreads threads (1: the calling thread only) in
 * scratch of ws_cpu_sort_in_bytes(n, ..., nthreads) bytes, 64-byte
 * aligned; allocates nothing and cannot fail. Sort: keys (== keys_in) in
 * place, values (NULL, value_bytes 0: none) following. Argsort: keys_in only
 * read, values receive indices 0 .. n-1 in sorted order (value_bytes 4 or
 * 8). */
void ws_cpu_sort_in(const void *keys_in, void *keys, void *values, size_t n, warpsort_dtype_t dtype,
                    unsigned value_bytes, unsigned flags, int argsort, unsigned nthreads,
                    void *scratch);

#endif /* WARPSORT_CPU_SORT_H */
