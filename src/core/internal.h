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
    warpsort_backend_t requested;    /* config: AUTO, CPU or CUDA */
    warpsort_backend_t backend;      /* resolved: CPU or CUDA; AUTO until CUDA was tried */
    warpsort_backend_t last_backend; /* the backend of the last sorting call; AUTO: none yet */
    int device;
    void *stream;
    unsigned cpu_threads;       /* resolved: >= 1 */
    size_t device_budget_bytes; /* config: 0 = free device memory */
    size_t host_ring_bytes;     /* config: 0 = default ring */
    int *devices;               /* config: out-of-core devices (owned copy); NULL with none */
    int device_count;           /* config: 0 none; WARPSORT_ALL_DEVICES until CUDA
                                   initialisation lists them (src/cuda/device.cu) */
    void *cuda;                 /* struct ws_cuda_state*, owned by src/cuda */
    void *cpu_scratch;          /* CPU backend scratch, kept for the next call */
    size_t cpu_scratch_bytes;
    ws_test_hooks hooks;     /* read once at creation (test_hooks.h) */
    const void *seg_verdict; /* src/cuda/segmented.cu: where the last batched call with a
                                   caller workspace left its device-offsets verdict; NULL none */
    char last_error[WS_ERROR_MAX];
};

/* Which backend a call on n items whose arrays are ptrs[0 .. count) runs on
 * (context.c): CPU, or CUDA with ctx->cuda ready, recorded as the context's
 * last backend. AUTO sends host arrays below WS_AUTO_CPU_BELOW items to the
 * CPU without initialising CUDA, and initialises CUDA on the first call that
 * needs it (no device: the CPU from then on). NULL pointers are skipped. */
warpsort_status_t ws_route(warpsort_context_t *ctx, size_t n, const void *const *ptrs, size_t count,
                           warpsort_backend_t *out);
/* Resolves AUTO now (initialising CUDA if there is a device), for calls
 * about the device workspace; then ctx->backend is CPU or CUDA. */
warpsort_status_t ws_resolve(warpsort_context_t *ctx);

/* Records a detailed message on ctx (may be NULL) and returns status. */
warpsort_status_t ws_error(warpsort_context_t *ctx, warpsort_status_t status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Number of online CPU cores (>= 1). */
unsigned ws_cpu_count(void);

/* One top-k call, validated by src/core/topk.c: rows >= 1, 1 <= k <=
 * row_len, values and out_values both NULL or both set (value_bytes then 4
 * or 8), out_keys or out_indices set (index_bytes 4 or 8 when the latter
 * is), nothing overlapping. */
typedef struct ws_topk_args {
    const void *keys, *values;
    size_t rows, row_len, k;
    warpsort_dtype_t dtype;
    size_t value_bytes, index_bytes;
    int smallest; /* 1: the k smallest ascending; 0: the k largest descending */
    void *out_keys, *out_values, *out_indices;
} ws_topk_args_t;

/* One batched call (rows or segments), validated by src/core/segmented.c
 * except for the offsets, which the backends check where they live. */
typedef struct ws_seg_call {
    const void *keys_in;     /* the keys read (== keys unless argsort) */
    void *keys;              /* sorted in place; NULL for argsort */
    void *values;            /* values, or argsort indices; NULL for keys alone */
    size_t n;                /* items in all */
    const uint64_t *offsets; /* num_segments + 1 offsets; NULL: rows of row_len */
    size_t num_segments;     /* segments (or rows), >= 1 */
    size_t row_len;          /* rows only */
    warpsort_dtype_t dtype;
    size_t value_bytes; /* value or index bytes; 0 for keys alone */
    unsigned flags;
    int argsort;    /* values receive segment-local indices */
    const char *fn; /* the public call, for messages */
} ws_seg_call_t;
/* Checks host offsets against the rules of warpsort.h (src/core/segmented.c):
 * INVALID_ARGUMENT naming the first bad index, else OK. */
warpsort_status_t ws_seg_check_offsets(warpsort_context_t *ctx, const uint64_t *offsets,
                                       size_t num_segments, size_t n, const char *fn);

/*--- CPU backend (src/cpu) ---*/
/* Arguments are already validated by core. values may be NULL (keys only). */
warpsort_status_t ws_cpu_sort_pairs(warpsort_context_t *ctx, void *keys, void *values, size_t n,
                                    warpsort_dtype_t dtype, size_t value_bytes, unsigned flags);
warpsort_status_t ws_cpu_argsort(warpsort_context_t *ctx, const void *keys, void *indices, size_t n,
                                 warpsort_dtype_t dtype, size_t index_bytes, unsigned flags);
/* keys_in sorted into keys_out (distinct, not overlapping; n >= 1): keys_in
 * only read, keys_out written only once nothing can fail. */
warpsort_status_t ws_cpu_sort_copy(warpsort_context_t *ctx, const void *keys_in, void *keys_out,
                                   size_t n, warpsort_dtype_t dtype, unsigned flags);
warpsort_status_t ws_cpu_topk(warpsort_context_t *ctx, const ws_topk_args_t *a);
/* Batched rows / segments (src/cpu/cpu_segmented.c); host offsets checked there. */
warpsort_status_t ws_cpu_segmented(warpsort_context_t *ctx, const ws_seg_call_t *c);

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
/* As ws_cpu_sort_copy; host or device memory, either array. */
warpsort_status_t ws_cuda_sort_copy(warpsort_context_t *ctx, const void *keys_in, void *keys_out,
                                    size_t n, warpsort_dtype_t dtype, unsigned flags);
warpsort_status_t ws_cuda_workspace_size(const warpsort_context_t *ctx, size_t n,
                                         warpsort_dtype_t dtype, size_t value_bytes, unsigned flags,
                                         size_t *bytes);
warpsort_status_t ws_cuda_set_workspace(warpsort_context_t *ctx, void *ptr, size_t bytes);
warpsort_status_t ws_cuda_synchronize(warpsort_context_t *ctx);
/* 1 if the device can address p (device or managed memory). */
int ws_cuda_device_pointer(const void *p);
/* Top-k (src/cuda/topk.cu); the size is for device-resident arrays. */
warpsort_status_t ws_cuda_topk(warpsort_context_t *ctx, const ws_topk_args_t *a);
warpsort_status_t ws_cuda_topk_workspace_size(const warpsort_context_t *ctx, size_t rows,
                                              size_t row_len, warpsort_dtype_t dtype,
                                              size_t value_bytes, size_t k, size_t *bytes);
/* Batched rows / segments (src/cuda/segmented.cu); the size is for
 * device-resident arrays (flags as warpsort_segmented_workspace_size). */
warpsort_status_t ws_cuda_segmented(warpsort_context_t *ctx, const ws_seg_call_t *c);
warpsort_status_t ws_cuda_segmented_workspace_size(const warpsort_context_t *ctx, size_t n,
                                                   size_t num_segments, warpsort_dtype_t dtype,
                                                   size_t value_bytes, unsigned flags,
                                                   size_t *bytes);
warpsort_status_t ws_cuda_segments_check(warpsort_context_t *ctx);
#endif

#ifdef __cplusplus
}
#endif
#endif /* WARPSORT_INTERNAL_H */
