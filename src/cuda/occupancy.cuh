/*
 * occupancy.cuh - blocks of a kernel one SM holds at once, asked of the
 * runtime once per device and kernel and remembered: the co-resident grid
 * of a cooperative launch without an occupancy query on every call.
 * Internal; CUDA translation units only.
 */
#ifndef WARPSORT_CUDA_OCCUPANCY_CUH
#define WARPSORT_CUDA_OCCUPANCY_CUH

#include <cuda_runtime.h>
#include <stddef.h>

/* Devices whose answers are remembered (others ask every time). */
#define WS_OCC_MAX_DEVICES 64

/* Blocks of `kernel` (`threads` each, `smem` bytes of dynamic shared
 * memory) that one SM of `device` holds at once, remembered in known[]
 * (the caller's array of WS_OCC_MAX_DEVICES, one per kernel and launch
 * shape: a kernel's registers never change). cudaErrorCooperativeLaunchTooLarge
 * when not one block fits an SM. Thread-safe: a race asks twice and
 * stores the same answer. */
static inline cudaError_t ws_blocks_per_sm(const void *kernel, int threads, size_t smem, int device,
                                           int *known, int *per_sm) {
    const int slot = device >= 0 && device < WS_OCC_MAX_DEVICES;
    int b = slot ? __atomic_load_n(&known[device], __ATOMIC_RELAXED) : 0;
    if (b == 0) {
        const cudaError_t err =
            cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, kernel, threads, smem);
        if (err != cudaSuccess) return err;
        if (b < 1) return cudaErrorCooperativeLaunchTooLarge;
        if (slot) __atomic_store_n(&known[device], b, __ATOMIC_RELAXED);
    }
    *per_sm = b;
    return cudaSuccess;
}

#endif /* WARPSORT_CUDA_OCCUPANCY_CUH */
