/*
 * check.cuh - the one error-check header of the CUDA backend's host code.
 *
 * ws_cuda_fail turns a CUDA error into the library's status and message;
 * WS_CUDA_TRY returns it from the enclosing function, WS_TRY forwards a
 * status. The leaf (device_sort.h) returns cudaError_t and names the failing
 * step instead, so it needs no context: its callers use WS_CUDA_TRY_AT.
 * Internal; CUDA translation units only.
 */
#ifndef WARPSORT_CUDA_CHECK_CUH
#define WARPSORT_CUDA_CHECK_CUH

#include <cuda_runtime.h>

#include "core/internal.h"

/* Clears a non-sticky error, records "what: reason" on ctx and returns
 * OUT_OF_MEMORY for an allocation failure, CUDA_ERROR otherwise. */
warpsort_status_t ws_cuda_fail(warpsort_context_t *ctx, cudaError_t err, const char *what);

#define WS_CUDA_TRY_AT(ctx, call, what)                                          \
    do {                                                                         \
        cudaError_t ws_err_ = (call);                                            \
        if (ws_err_ != cudaSuccess) return ws_cuda_fail((ctx), ws_err_, (what)); \
    } while (0)
#define WS_CUDA_TRY(ctx, call) WS_CUDA_TRY_AT(ctx, call, #call)

#define WS_TRY(expr)                            \
    do {                                        \
        warpsort_status_t ws_s_ = (expr);       \
        if (ws_s_ != WARPSORT_OK) return ws_s_; \
    } while (0)

/* Makes a device current for the length of a call and restores the
 * caller's afterwards. */
struct ws_device_guard {
    int previous;
    int changed;
};
static inline cudaError_t ws_enter_device(int device, ws_device_guard *g) {
    g->changed = 0;
    cudaError_t err = cudaGetDevice(&g->previous);
    if (err != cudaSuccess) return err;
    if (g->previous != device) {
        err = cudaSetDevice(device);
        g->changed = err == cudaSuccess;
    }
    return err;
}
static inline void ws_leave_device(ws_device_guard *g) {
    if (g->changed) (void)cudaSetDevice(g->previous);
}

#endif /* WARPSORT_CUDA_CHECK_CUH */
