/*
 * warpsort/device.cuh - the whole public device API in one include: key
 * traits, warp sort, block sort, block merge, segment sorts, warp
 * primitives, and the shared-memory layout they use. CUDA C++17, header-only, namespace
 * warpsort; see docs/device-api.md.
 */
#ifndef WARPSORT_DEVICE_CUH
#define WARPSORT_DEVICE_CUH

#include "block_merge.cuh"
#include "block_sort.cuh"
#include "key_traits.cuh"
#include "segment_sort.cuh"
#include "smem_layout.cuh"
#include "warp_ops.cuh"
#include "warp_sort.cuh"

#endif /* WARPSORT_DEVICE_CUH */
