/* topk.c - the top-k entry points: argument checks, then the backend. */
#include "internal.h"

#include <stddef.h>
#include <stdint.h>

#define WS_TOPK_KNOWN_FLAGS WARPSORT_TOPK_SMALLEST
/* As for the sorts: every byte count a backend computes fits a size_t. */
#define WS_TOPK_MAX_N (SIZE_MAX / 32)

static int ws_topk_overlap(const void *a, size_t abytes, const void *b, size_t bbytes) {
    if (!a || !b || !abytes || !bbytes) return 0;
    uintptr_t pa = (uintptr_t)a, pb = (uintptr_t)b;
    return pa < pb + bbytes && pb < pa + abytes;
}

/* An element size of 4 or 8 and an aligned, non-NULL pointer. */
static warpsort_status_t ws_topk_check_array(warpsort_context_t *ctx, const void *p, size_t bytes,
                                             const char *what, const char *fn) {
    if (bytes != 4 && bytes != 8)
        return ws_error(ctx, WARPSORT_INVALID_ARGUMENT, "%s: %s size must be 4 or 8, got %zu", fn,
                        what, bytes);
    if (!p) return ws_error(ctx, WARPSORT_NULL_POINTER, "%s: %s is NULL", fn, what);
    if ((uintptr_t)p % bytes)
        return ws_error(ctx, WARPSORT_MISALIGNED, "%s: %s %p not aligned to %zu bytes", fn, what, p,
                        bytes);
    return WARPSORT_OK;
}

/* Everything but the empty call; a->keys etc. are set, n = rows * row_len. */
static warpsort_status_t ws_topk_check(warpsort_context_t *ctx, const ws_topk_args_t *a,
                                       unsigned flags, const char *fn) {
    const size_t kb = warpsort_dtype_size(a->dtype);
    if (kb == 0)
        return ws_error(ctx, WARPSORT_UNSUPPORTED_DTYPE, "%s: unknown key dtype %d", fn,
                        (int)a->dtype);
    if (flags & ~(unsigned)WS_TOPK_KNOWN_FLAGS)
        return ws_error(ctx, WARPSORT_INVALID_ARGUMENT,
                        "%s: unknown flag bits 0x%x (top-k takes WARPSORT_TOPK_SMALLEST)", fn,
                        flags & ~(unsigned)WS_TOPK_KNOWN_FLAGS);
    if (a->row_len && a->rows > WS_TOPK_MAX_N / a->row_len)
        return ws_error(ctx, WARPSORT_INVALID_ARGUMENT, "%s: %zu rows of %zu keys is too large", fn,
                        a->rows, a->row_len);
    if (a->k == 0 || a->k > a->row_len)
        return ws_error(ctx, WARPSORT_INVALID_ARGUMENT,
                        "%s: k = %zu must be between 1 and the row length %zu", fn, a->k,
                        a->row_len);
    warpsort_status_t st = ws_topk_check_array(ctx, a->keys, kb, "keys", fn);
    if (st != WARPSORT_OK) return st;
    if (!a->out_keys && !a->out_indices)
        return ws_error(ctx, WARPSORT_NULL_POINTER,
                        "%s: out_keys and out_indices are both NULL (nothing to write)", fn);
    if (a->out_keys && (st = ws_topk_check_array(ctx, a->out_keys, kb, "out_keys", fn))) return st;
    if (a->out_indices &&
        (st = ws_topk_check_array(ctx, a->out_indices, a->index_bytes, "out_indices", fn)))
        return st;
    if (a->out_indices && a->index_bytes == 4 && a->row_len > (size_t)UINT32_MAX + 1)
        return ws_error(ctx, WARPSORT_INVALID_ARGUMENT,
                        "%s: rows of %zu keys need 8-byte indices (index_bytes = 4 holds 2^32)", fn,
                        a->row_len);
    if ((a->values == NULL) != (a->out_values == NULL))
        return ws_error(ctx, WARPSORT_NULL_POINTER, "%s: %s is NULL but %s is not", fn,
                        a->values ? "out_values" : "values", a->values ? "values" : "out_values");
    if (a->values) {
        if ((st = ws_topk_check_array(ctx, a->values, a->value_bytes, "values", fn)) ||
            (st = ws_topk_check_array(ctx, a->out_values, a->value_bytes, "out_values", fn)))
            return st;
    }
    /* Outputs against each other and against the inputs. */
    const size_t n = a->rows * a->row_len, m = a->rows * a->k;
    const struct {
        const void *p;
        size_t bytes;
        const char *name;
    } arr[5] = {
        {a->out_keys, m * kb, "out_keys"},
        {a->out_indices, a->out_indices ? m * a->index_bytes : 0, "out_indices"},
        {a->out_values, a->values ? m * a->value_bytes : 0, "out_values"},
        {a->keys, n * kb, "keys"},
        {a->values, a->values ? n * a->value_bytes : 0, "values"},
    };
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 5; j++)
            if (ws_topk_overlap(arr[i].p, arr[i].bytes, arr[j].p, arr[j].bytes))
                return ws_error(ctx, WARPSORT_OVERLAP, "%s: %s and %s overlap", fn, arr[i].name,
                                arr[j].name);
    return WARPSORT_OK;
}

static warpsort_status_t ws_topk_entry(warpsort_context_t *ctx, ws_topk_args_t *a, unsigned flags,
                                       const char *fn) {
    if (!ctx) return WARPSORT_INVALID_ARGUMENT;
    ctx->last_error[0] = '\0';
    if (!a->values) a->value_bytes = 0;
    if (!a->out_indices) a->index_bytes = 0;
    a->smallest = (flags & WARPSORT_TOPK_SMALLEST) != 0;
    if (a->rows == 0 || a->row_len == 0) {
        /* Nothing to select; still refuse what no call may pass. */
        if (warpsort_dtype_size(a->dtype) == 0)
            return ws_error(ctx, WARPSORT_UNSUPPORTED_DTYPE, "%s: unknown key dtype %d", fn,
                            (int)a->dtype);
        if (flags & ~(unsigned)WS_TOPK_KNOWN_FLAGS)
            return ws_error(ctx, WARPSORT_INVALID_ARGUMENT, "%s: unknown flag bits 0x%x", fn,
                            flags & ~(unsigned)WS_TOPK_KNOWN_FLAGS);
        return WARPSORT_OK;
    }
    warpsort_status_t st = ws_topk_check(ctx, a, flags, fn);
    if (st != WARPSORT_OK) return st;
    const void *const arrays[5] = {a->keys, a->values, a->out_keys, a->out_values, a->out_indices};
    warpsort_backend_t b;
    st = ws_route(ctx, a->rows * a->row_len, arrays, 5, &b);
    if (st != WARPSORT_OK) return st;
#ifdef WARPSORT_HAVE_CUDA
    if (b == WARPSORT_BACKEND_CUDA) return ws_cuda_topk(ctx, a);
#endif
    return ws_cpu_topk(ctx, a);
}

warpsort_status_t warpsort_topk(warpsort_context_t *ctx, const void *keys, size_t n,
                                warpsort_dtype_t dtype, size_t k, unsigned flags, void *out_keys,
                                void *out_indices, size_t index_bytes) {
    ws_topk_args_t a = {keys, NULL, 1, n, k, dtype, 0, index_bytes, 0, out_keys, NULL, out_indices};
    return ws_topk_entry(ctx, &a, flags, "warpsort_topk");
}

warpsort_status_t warpsort_topk_rows(warpsort_context_t *ctx, const void *keys, size_t rows,
                                     size_t row_len, warpsort_dtype_t dtype, size_t k,
                                     unsigned flags, void *out_keys, void *out_indices,
                                     size_t index_bytes) {
    ws_topk_args_t a = {keys, NULL,        rows, row_len,  k,    dtype,
                        0,    index_bytes, 0,    out_keys, NULL, out_indices};
    return ws_topk_entry(ctx, &a, flags, "warpsort_topk_rows");
}

warpsort_status_t warpsort_topk_pairs(warpsort_context_t *ctx, const void *keys, const void *values,
                                      size_t rows, size_t row_len, warpsort_dtype_t dtype,
                                      size_t value_bytes, size_t k, unsigned flags, void *out_keys,
                                      void *out_values, void *out_indices, size_t index_bytes) {
    ws_topk_args_t a = {keys,        values,      rows, row_len,  k,          dtype,
                        value_bytes, index_bytes, 0,    out_keys, out_values, out_indices};
    return ws_topk_entry(ctx, &a, flags, "warpsort_topk_pairs");
}

warpsort_status_t warpsort_topk_workspace_size(const warpsort_context_t *ctx, size_t rows,
                                               size_t row_len, warpsort_dtype_t dtype,
                                               size_t value_bytes, size_t k, size_t *bytes) {
    if (!ctx || !bytes) return WARPSORT_INVALID_ARGUMENT;
    if (warpsort_dtype_size(dtype) == 0) return WARPSORT_UNSUPPORTED_DTYPE;
    if (value_bytes != 0 && value_bytes != 4 && value_bytes != 8) return WARPSORT_INVALID_ARGUMENT;
    if (row_len && rows > WS_TOPK_MAX_N / row_len) return WARPSORT_INVALID_ARGUMENT;
    *bytes = 0;
    if (rows == 0 || row_len == 0) return WARPSORT_OK;
    if (k == 0 || k > row_len) return WARPSORT_INVALID_ARGUMENT;
#ifdef WARPSORT_HAVE_CUDA
    warpsort_status_t st = ws_resolve((warpsort_context_t *)ctx);
    if (st != WARPSORT_OK) return st;
    if (ctx->backend == WARPSORT_BACKEND_CUDA)
        return ws_cuda_topk_workspace_size(ctx, rows, row_len, dtype, value_bytes, k, bytes);
#endif
    return WARPSORT_OK;
}
