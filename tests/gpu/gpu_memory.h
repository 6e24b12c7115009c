/*
 * gpu_memory.h - where the GPU tests put the arrays under test: device
 * memory (cudaMalloc, copies through cudaMemcpy) and pinned host memory
 * (cudaMallocHost), as testkit memory hooks (plain host memory is the
 * testkit's wt_host_memory); the checks every GPU test program uses, and
 * its CUDA context.
 */
#ifndef WARPSORT_TEST_GPU_MEMORY_H
#define WARPSORT_TEST_GPU_MEMORY_H

#include "testkit.h"

extern const wt_memory_t wt_device_memory;
extern const wt_memory_t wt_pinned_memory;

/* Inside a cmocka test: a CUDA-backend context with this pinned ring and
 * device budget for host arrays (0: the defaults); fails the test if it
 * cannot be made. */
warpsort_context_t *wt_gpu_context(size_t ring, size_t budget);

/* In main, before the tests: makes the suite's CUDA-backend context (into
 * *keep when keep is not NULL, else it is destroyed at once: a probe).
 * Returns 1 with a context, 0 when the backend or a device is missing (the
 * GPU tests then skip; *keep is NULL), -1 when a device is there but no
 * context can be made (the suite must fail, not skip). Says which on
 * stderr. */
int wt_gpu_probe(warpsort_context_t **keep);

/* Inside a cmocka test: skip it when have_gpu is false (no CUDA backend or
 * device), fail it when a CUDA call fails. */
#define WT_REQUIRE_GPU(have_gpu)                                   \
    do {                                                           \
        if (!(have_gpu)) {                                         \
            print_message("no CUDA backend or device: skipped\n"); \
            skip();                                                \
        }                                                          \
    } while (0)
#define CUDA_OK(call)                                                             \
    do {                                                                          \
        cudaError_t e_ = (call);                                                  \
        if (e_ != cudaSuccess) fail_msg("%s: %s", #call, cudaGetErrorString(e_)); \
    } while (0)

#endif /* WARPSORT_TEST_GPU_MEMORY_H */
