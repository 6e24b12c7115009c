/*
 * device_sort.h - the leaf of the CUDA backend: sort n items that are
 * already in device memory.
 *
 *   plan       ws_plan_make (plan.cuh): path, shapes, workspace layout
 *   bytes      plan.lay.total: the workspace the run needs
 *   run        ws_device_sort_from: enqueue the plan's launches on a stream,
 *              reading the input from one pair of arrays and leaving the
 *              result in another (ws_device_sort: the same pair, in place)
 *
 * The leaf knows nothing of contexts, host memory or the router: it takes
 * device pointers, a workspace and a stream, and returns the CUDA error of
 * the step that failed (naming it in *failed). Everything above it (the
 * router, backend.cu; the host pipeline, pipeline/; segmented and top-k
 * calls) calls down into it; it calls nothing above.
 * Internal; CUDA translation units only.
 */
#ifndef WARPSORT_CUDA_DEVICE_SORT_H
#define WARPSORT_CUDA_DEVICE_SORT_H

#include <cuda_runtime.h>

#include "plan.cuh"
#include "warpsort.h"
#include "warpsort/key_traits.cuh"

/* Sorts plan->n device-resident items from keys_in (vals_in) into keys
 * (vals): keys of plan->key_bytes (dtype) and, when plan->value_bytes > 0,
 * values by the same permutation. keys_in and vals_in are only read; each
 * is either the output array itself (in place) or an array that does not
 * overlap any output or the workspace. The first pass of every path reads
 * the input directly, so no copy of it is made. With values, vals_in must
 * not be NULL (cudaErrorInvalidValue; an empty n needs no arrays).
 * workspace: plan->lay.total bytes, 256-byte aligned (NULL when 0); the
 * same size in place or not. Asynchronous on stream; nothing is allocated
 * and nothing waits. */
cudaError_t ws_device_sort_from(const ws_plan_t *plan, const void *keys_in, const void *vals_in,
                                void *keys, void *vals, warpsort_dtype_t dtype, int descending,
                                int stable, void *workspace, cudaStream_t stream,
                                const char **failed);

/* ws_device_sort_from in place: keys_in = keys, vals_in = vals. */
cudaError_t ws_device_sort(const ws_plan_t *plan, void *keys, void *vals, warpsort_dtype_t dtype,
                           int descending, int stable, void *workspace, cudaStream_t stream,
                           const char **failed);

/* The paths (small_sort.cu, coop_sort.cu, merge_sort.cu, sample_sort.cu), for
 * ws_device_sort_from: each reads keys_in / vals_in in its first pass only
 * and leaves the result in keys / vals (vals NULL for keys alone). */
cudaError_t ws_merge_sort_run(const ws_plan_t *p, const void *keys_in, const void *vals_in,
                              void *keys, void *vals, warpsort::key_codec codec, bool stable,
                              unsigned char *ws, cudaStream_t stream, const char **what);
cudaError_t ws_coop_sort_run(const ws_plan_t *p, const void *keys_in, const void *vals_in,
                             void *keys, void *vals, warpsort::key_codec codec, bool stable,
                             unsigned char *ws, cudaStream_t stream, const char **what);
cudaError_t ws_small_sort_run(const ws_plan_t *p, const void *keys_in, const void *vals_in,
                              void *keys, void *vals, warpsort::key_codec codec, bool stable,
                              cudaStream_t stream, const char **what);
cudaError_t ws_sample_sort_run(const ws_plan_t *p, const void *keys_in, const void *vals_in,
                               void *keys, void *vals, warpsort::key_codec codec, bool stable,
                               unsigned char *ws, cudaStream_t stream, const char **what);

/* Device checks at initialisation (device.cu): whether this build's kernels
 * run on the current device at all, and whether the sample sort's do. */
cudaError_t ws_merge_probe_image(void);
int ws_sample_kernels_ok(void);

#endif /* WARPSORT_CUDA_DEVICE_SORT_H */
