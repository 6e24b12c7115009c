/*
 * pipeline.h - what src/cuda/sort.cu and src/cuda/pipeline.cu share: the
 * backend state, the device sort as a black box, and the host-array pipeline.
 * Internal; C++ (nvcc) translation units only.
 */
#ifndef WARPSORT_CUDA_PIPELINE_H
#define WARPSORT_CUDA_PIPELINE_H

#include <cuda_runtime.h>

#include "core/internal.h"
#include "plan.cuh"

struct ws_pipe; /* pipeline.cu: ring, streams, events; created on first use */

/* What the device offers, read once at context creation (ws_cuda_init).
 * WARPSORT_SMEM_LIMIT (tests only) caps the shared memory, so the rows of
 * smaller chips can run on a larger one. */
struct ws_device_limits {
    int cc_major, cc_minor; /* compute capability */
    size_t smem_block;      /* opt-in shared memory per block, bytes */
    size_t smem_sm;         /* shared memory per SM, bytes */
    int smem_forced;        /* 1: WARPSORT_SMEM_LIMIT capped the two above */
};

struct ws_cuda_state {
    cudaStream_t stream;
    int sm_count;
    ws_device_limits limits;
    int family;                     /* row of tuning.cuh for this device: ws_select_family */
    ws_sample_limits sample_limits; /* sample-sort plan limits (plan.cuh) */
    int sample_ok;                  /* 1: the sample kernels have code for this device */
    void *workspace;   /* device buffer: cached (owned) or the caller's */
    size_t workspace_bytes;
    int workspace_external;
    ws_pipe *pipe;     /* host-array pipeline, NULL until a call needs it */
    unsigned test_fail_countdown; /* test hook: the Nth pipeline checkpoint fails */
};

/*--- provided by sort.cu ---*/
warpsort_status_t ws_cuda_fail(warpsort_context_t *ctx, cudaError_t err, const char *what);
/* Bytes of workspace ws_sort_any needs for n items on ctx (its plan). */
size_t ws_sort_workspace_bytes(const warpsort_context_t *ctx, size_t n, size_t key_bytes,
                               size_t value_bytes);
/* The device sort, a black box: sorts n device-resident items in place
 * (vals NULL = keys only) on stream, given ws_sort_workspace_bytes of ws.
 * Asynchronous; launch errors come back as a status. */
warpsort_status_t ws_sort_any(warpsort_context_t *ctx, void *keys, void *vals, size_t n,
                              warpsort_dtype_t dtype, size_t value_bytes, bool stable, int desc,
                              unsigned char *ws, cudaStream_t stream);
/* Makes sure `bytes` of workspace exist (growing the cached buffer unless it
 * is the caller's); fails without touching any data. */
warpsort_status_t ws_acquire(warpsort_context_t *ctx, size_t bytes, unsigned char **out);

/*--- provided by pipeline.cu ---*/
/* Host arrays: keys (and values, if not NULL) both in host memory, pageable
 * or pinned. Sorted in place; returns when the result is in place. */
warpsort_status_t ws_pipe_sort_pairs(warpsort_context_t *ctx, void *keys, void *values, size_t n,
                                     warpsort_dtype_t dtype, size_t value_bytes, unsigned flags);
/* Argsort with keys and indices both in host memory; keys are only read. */
warpsort_status_t ws_pipe_argsort(warpsort_context_t *ctx, const void *keys, void *indices,
                                  size_t n, warpsort_dtype_t dtype, size_t index_bytes,
                                  unsigned flags);
/* Frees the ring, streams and events (the context's device is current). */
void ws_pipe_destroy(warpsort_context_t *ctx);
/* 1 if p is host memory the copy engines can read directly (pinned or
 * registered), 0 for pageable memory. */
int ws_host_is_pinned(const void *p);

extern "C" {
/* Test hook (tests/gpu/test_gpu_pipeline.c): the k-th checkpoint the
 * pipeline passes from now on fails as an allocation failure would
 * (OUT_OF_MEMORY); 0 turns it off. Checkpoints sit at every allocation,
 * before every piece, run and range, and just before results are written
 * back. No effect on a CPU context. */
void ws_pipeline_test_fail_at(warpsort_context_t *ctx, unsigned k);
}

#endif /* WARPSORT_CUDA_PIPELINE_H */
