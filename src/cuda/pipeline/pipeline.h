/*
 * pipeline.h - the host pipeline's entry, for the router (backend.cu):
 * keys (and values or indices) in host memory, pageable or pinned, sorted
 * through the device, in core or out of core. The pipeline calls the leaf
 * (device_sort.h), never the router.
 * Internal; CUDA translation units only.
 */
#ifndef WARPSORT_CUDA_PIPELINE_H
#define WARPSORT_CUDA_PIPELINE_H

#include "core/internal.h"

/* Keys (and values, if not NULL) both in host memory. Sorted in place;
 * returns when the result is in place. */
warpsort_status_t ws_pipe_sort_pairs(warpsort_context_t *ctx, void *keys, void *values, size_t n,
                                     warpsort_dtype_t dtype, size_t value_bytes, unsigned flags);
/* keys_in sorted into keys_out, both in host memory, distinct and not
 * overlapping: the pieces are staged from keys_in and the result copied out
 * into keys_out (nothing written before the device is done); keys_in is
 * only read. Returns when the result is in place. */
warpsort_status_t ws_pipe_sort_copy(warpsort_context_t *ctx, const void *keys_in, void *keys_out,
                                    size_t n, warpsort_dtype_t dtype, unsigned flags);
/* Argsort with keys and indices both in host memory; keys are only read. */
warpsort_status_t ws_pipe_argsort(warpsort_context_t *ctx, const void *keys, void *indices,
                                  size_t n, warpsort_dtype_t dtype, size_t index_bytes,
                                  unsigned flags);
/* Frees the ring, streams and events (the context's device is current). */
void ws_pipe_destroy(warpsort_context_t *ctx);

#ifdef __cplusplus
extern "C" {
#endif
/* Test hook (tests/gpu/test_gpu_pipeline.c; core/test_hooks.h lists every
 * hook): the k-th checkpoint the pipeline passes from now on fails as an
 * allocation failure would (OUT_OF_MEMORY); 0 turns it off. Checkpoints sit
 * at every allocation, before every piece, run and range, and just before
 * results are written back. No effect on a CPU context. */
void ws_pipeline_test_fail_at(warpsort_context_t *ctx, unsigned k);
#ifdef __cplusplus
}
#endif

#endif /* WARPSORT_CUDA_PIPELINE_H */
