/*
 * gpu_memory.h - where the GPU tests put the arrays under test: device
 * memory (cudaMalloc, copies through cudaMemcpy) and pinned host memory
 * (cudaMallocHost), as testkit memory hooks. Plain host memory is the
 * testkit's wt_host_memory.
 */
#ifndef WARPSORT_TEST_GPU_MEMORY_H
#define WARPSORT_TEST_GPU_MEMORY_H

#include "testkit.h"

extern const wt_memory_t wt_device_memory;
extern const wt_memory_t wt_pinned_memory;

#endif /* WARPSORT_TEST_GPU_MEMORY_H */
