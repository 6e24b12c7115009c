/*
 * pdl.cuh - programmatic dependent launch (compute capability 9.0 and up).
 *
 * A kernel launched with ws_pdl_attr may be scheduled while the kernel
 * before it in the stream (its primary) still runs, once every block of
 * the primary has called ws_pdl_release or exited. It saves most of the
 * launch gap between dependent kernels of one call. A cooperative launch
 * never starts early, with or without the attribute, so only ordinary
 * kernels are launched with it (the probe: bench/NOTES.md).
 *
 * Contract of a dependent kernel: before ws_pdl_wait returns it may only
 * read memory that no kernel still running writes (the caller's inputs,
 * which every earlier kernel of the stream finished with before the
 * primary started) and must write nothing. After it, everything the
 * primary (and, through it, every earlier kernel) wrote is visible.
 * Only the kernels of one call are chained: the first launch of a call is
 * an ordinary one, so a call never overlaps the caller's work.
 * Internal; CUDA translation units only.
 */
#ifndef WARPSORT_CUDA_PDL_CUH
#define WARPSORT_CUDA_PDL_CUH

#include <cuda_runtime.h>

#include "state.h"

/* Waits for the primary grid to complete and its writes to be visible
 * (no-op where the launch was an ordinary one, or below sm_90). */
__device__ __forceinline__ void ws_pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/* Lets this grid's dependent launch start now instead of at this block's
 * exit (no-op below sm_90 and when no dependent was launched). */
__device__ __forceinline__ void ws_pdl_release() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/* Fills *attr with the dependent-launch attribute and returns 1 where the
 * context uses it (st->pdl), else returns 0 (launch without it). */
static inline int ws_pdl_attr(const ws_cuda_state *st, cudaLaunchAttribute *attr) {
    if (!st->pdl) return 0;
    attr->id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr->val.programmaticStreamSerializationAllowed = 1;
    return 1;
}

#endif /* WARPSORT_CUDA_PDL_CUH */
