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

/* The first statement of a kernel of a chain (the sample sort's and the
 * merge path's launches): it waits for the kernel before it, so it keeps
 * the contract above whatever it reads and writes, then lets the next one
 * be scheduled. Only the launch gap overlaps; the kernels' work stays in
 * stream order. A no-op for an ordinary launch.
 * A kernel whose next launch is a small grid of latency-bound blocks (the
 * merge passes' cuts) starts with ws_pdl_wait alone instead: released
 * early, those blocks pile onto the first SMs this grid's last blocks
 * free, and run slower there than spread over the GPU as a launch at its
 * end places them (bench/NOTES.md, forty-fourth session). */
__device__ __forceinline__ void ws_pdl_chain() {
    ws_pdl_wait();
    ws_pdl_release();
}

/* Fills *attr with the dependent-launch attribute and returns 1 where on
 * (ws_device_info.pdl, copied into the plan), else returns 0 (launch
 * without it). */
static inline unsigned ws_pdl_attr(int on, cudaLaunchAttribute *attr) {
    if (!on) return 0;
    attr->id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr->val.programmaticStreamSerializationAllowed = 1;
    return 1;
}

/* A launch's configuration with the nattr attributes at attr. */
static inline cudaLaunchConfig_t ws_launch_config(unsigned grid, unsigned threads, size_t smem,
                                                  cudaStream_t stream, cudaLaunchAttribute *attr,
                                                  unsigned nattr) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(grid);
    cfg.blockDim = dim3(threads);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream;
    cfg.attrs = nattr ? attr : nullptr;
    cfg.numAttrs = nattr;
    return cfg;
}

/* kernel<<<grid, threads, smem, stream>>>(args...), a dependent launch
 * when dep (the kernel then starts with ws_pdl_chain or ws_pdl_wait);
 * returns the launch's error. */
template <typename... P, typename... A>
static inline cudaError_t ws_launch(void (*kernel)(P...), unsigned grid, unsigned threads,
                                    size_t smem, cudaStream_t stream, int dep, A... args) {
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t cfg =
        ws_launch_config(grid, threads, smem, stream, &attr, ws_pdl_attr(dep, &attr));
    return cudaLaunchKernelEx(&cfg, kernel, args...);
}

#endif /* WARPSORT_CUDA_PDL_CUH */
