/*
 * internal.h - host-side internals shared by core and the backends.
 * Nothing here is public API.
 */
#ifndef WARPSORT_INTERNAL_H
#define WARPSORT_INTERNAL_H

#include "warpsort.h"
#include "keybits.h" /* ws_dtype_kind */
#include "test_hooks.h"

#include <stdarg.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WS_ERROR_MAX 512

struct warpsort_context {
    warpsort_backend_t requested; /* config: AUTO, CPU or CUDA */
    warpsort_backend_t backend;   /* resolved: CPU or CUDA; AUTO until CUDA was tried */
    warpsort_backend_t last_backend; /* the backend of the last sorting call; AUTO: none yet */
    int device;
    void *stream;
    unsigned cpu_threads;       /* resolved: >= 1 */
    size_t device_budget_bytes; /* config: 0 = free device memory */
    size_t host_ring_bytes;     /* config: 0 = default ring */
    void *cuda;                 /* struct ws_cuda_state*, owned by src/cuda */
    void *cpu_scratch;          /* CPU backend scratch, kept for the next call */
    size_t cpu_scratch_bytes;
    ws_test_hooks hooks;        /* read once at creation (test_hooks.h) */
    char last_error[WS_ERROR_MAX];
};

/* Which backend a call on n items at these pointers runs on (context.c):
 * CPU, or CUDA with ctx->cuda ready. AUTO sends host inputs below
 * WS_AUTO_CPU_BELOW items to the CPU without initialising CUDA, and
 * initialises CUDA on the first call that needs it (no device: the CPU from
 * then on). Pointers may be NULL (not part of the call). */
warpsort_status_t ws_route(warpsort_context_t *ctx, size_t n, const void *a, const void *b,
                           warpsort_backend_t *out);

/* Records a detailed message on ctx (may be NULL) and returns status. */
warpsort_status_t ws_error(warpsort_context_t *ctx, warpsort_status_t status, const char *fmt,
                           ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;


/* Number of online CPU cores (>= 1). */
unsigned ws_cpu_count(void);

/*--- CPU backend (src/cpu) ---*/
/* Arguments are already validated by core. values may be NULL (keys only). */
warpsort_status_t ws_cpu_sort_pairs(warpsort_context_t *ctx, void *keys, void *values, size_t n,
                                    warpsort_dtype_t dtype, size_t value_bytes, unsigned flags);
warpsort_status_t ws_cpu_argsort(warpsort_context_t *ctx, const void *keys, void *indices,
                                 size_t n, warpsort_dtype_t dtype, size_t index_bytes,
                                 unsigned flags);

/*--- CUDA backend (src/cuda), present when WARPSORT_HAVE_CUDA ---*/
#ifdef WARPSORT_HAVE_CUDA
/* Initialises ctx->cuda for ctx->device (src/cuda/device.cu): reads the
 * device's limits, picks its row of the tuning table, checks that the
 * kernels can run there. BACKEND_UNAVAILABLE, the reason in
 * ctx->last_error, if the device is missing or cannot run them. */
warpsort_status_t ws_cuda_init(warpsort_context_t *ctx);
void ws_cuda_destroy(warpsort_context_t *ctx);
/* Name of the tuning-table row the context's device got ("sm_90", ...). */
const char *ws_cuda_family_name(const warpsort_context_t *ctx);
warpsort_status_t ws_cuda_sort_pairs(warpsort_context_t *ctx, void *keys, void *values, size_t n,
                                     warpsort_dtype_t dtype, size_t value_bytes, unsigned flags);
warpsort_status_t ws_cuda_argsort(warpsort_context_t *ctx, const void *keys, void *indices,
                                  size_t n, warpsort_dtype_t dtype, size_t index_bytes,
                                  unsigned flags);
warpsort_status_t ws_cuda_workspace_size(const warpsort_context_t *ctx, size_t n,
                                         warpsort_dtype_t dtype, size_t value_bytes,
                                         unsigned flags, size_t *bytes);
warpsort_status_t ws_cuda_set_workspace(warpsort_context_t *ctx, void *ptr, size_t bytes);
warpsort_status_t ws_cuda_synchronize(warpsort_context_t *ctx);
/* 1 if the device can address p (device or managed memory). */
int ws_cuda_device_pointer(const void *p);
#endif

#ifdef __cplusplus
}
#endif
#endif /* WARPSORT_INTERNAL_H */
