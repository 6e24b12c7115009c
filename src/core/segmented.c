/* segmented.c - batched rows and segments: argument checks and dispatch.
 *
 * Every public batched call becomes one ws_seg_call_t (rows are segments
 * with computed offsets) and goes to the backend. The offsets themselves are
 * checked by the backend, which knows where they live: on the host here
 * (ws_seg_check_offsets), on the device by a kernel (src/cuda/segmented.cu).
 */
#include "internal.h"

#include <stddef.h>
#include <stdint.h>

#define WS_SEG_FLAGS (WARPSORT_DESCENDING | WARPSORT_STABLE)
/* As context.c: every byte count a backend computes fits in a size_t. */
#define WS_SEG_MAX_N (SIZE_MAX / 32)

warpsort_status_t ws_seg_check_offsets(warpsort_context_t *ctx, const uint64_t *offsets,
                                       size_t num_segments, size_t n, const char *fn) {
    if (offsets[0] != 0)
        return ws_error(ctx, WARPSORT_INVALID_ARGUMENT,
                        "%s: bad offset at index 0: offsets[0] = %llu, must be 0", fn,
                        (unsigned long long)offsets[0]);
    for (size_t i = 1; i <= num_segments; i++) {
        if (offsets[i] < offsets[i - 1])
            return ws_error(ctx, WARPSORT_INVALID_ARGUMENT,
                            "%s: bad offset at index %zu: offsets[%zu] = %llu is below "
                            "offsets[%zu] = %llu (offsets must not decrease)",
                            fn, i, i, (unsigned long long)offsets[i], i - 1,
                            (unsigned long long)offsets[i - 1]);
    }
    if (offsets[num_segments] != (uint64_t)n)
        return ws_error(ctx, WARPSORT_INVALID_ARGUMENT,
                        "%s: bad offset at index %zu: offsets[%zu] = %llu, must be n = %zu", fn,
                        num_segments, num_segments, (unsigned long long)offsets[num_segments], n);
    return WARPSORT_OK;
}

static int ws_seg_overlap(const void *a, size_t abytes, const void *b, size_t bbytes) {
    uintptr_t pa = (uintptr_t)a, pb = (uintptr_t)b;
    return pa < pb + bbytes && pb < pa + abytes;
}

/* Checks everything but the offsets' values; 1 item arrays and n = 0 pass. */
static warpsort_status_t ws_seg_check(warpsort_context_t *ctx, const ws_seg_call_t *c) {
    const char *fn = c->fn;
    const size_t ks = warpsort_dtype_size(c->dtype);
    if (ks == 0)
        return ws_error(ctx, WARPSORT_UNSUPPORTED_DTYPE, "%s: unknown key dtype %d", fn,
                        (int)c->dtype);
    if (c->flags & ~(unsigned)WS_SEG_FLAGS)
        return ws_error(ctx, WARPSORT_INVALID_ARGUMENT, "%s: unknown flag bits 0x%x", fn,
                        c->flags & ~(unsigned)WS_SEG_FLAGS);
    if (c->n > WS_SEG_MAX_N)
        return ws_error(ctx, WARPSORT_INVALID_ARGUMENT, "%s: n = %zu is too large", fn, c->n);
    if (c->n > 0 && !c->keys_in)
        return ws_error(ctx, WARPSORT_NULL_POINTER, "%s: keys is NULL with n = %zu", fn, c->n);
    if ((uintptr_t)c->keys_in % ks)
        return ws_error(ctx, WARPSORT_MISALIGNED, "%s: keys %p not aligned to %zu bytes", fn,
                        c->keys_in, ks);
    const char *what = c->argsort ? "indices" : "values";
    if (c->argsort || c->values || c->value_bytes) {
        const size_t vb = c->value_bytes;
        if (vb != 4 && vb != 8)
            return ws_error(ctx, WARPSORT_INVALID_ARGUMENT, "%s: %s size must be 4 or 8, got %zu",
                            fn, what, vb);
        if (c->n > 0 && !c->values)
            return ws_error(ctx, WARPSORT_NULL_POINTER, "%s: %s is NULL with n = %zu", fn, what,
                            c->n);
        if ((uintptr_t)c->values % vb)
            return ws_error(ctx, WARPSORT_MISALIGNED, "%s: %s %p not aligned to %zu bytes", fn,
                            what, c->values, vb);
        if (c->n > 0 && ws_seg_overlap(c->keys_in, c->n * ks, c->values, c->n * vb))
            return ws_error(ctx, WARPSORT_OVERLAP, "%s: keys and %s overlap", fn, what);
    }
    if (!c->offsets) return WARPSORT_OK; /* rows */
    if ((uintptr_t)c->offsets % 8)
        return ws_error(ctx, WARPSORT_MISALIGNED, "%s: offsets %p not aligned to 8 bytes", fn,
                        (const void *)c->offsets);
    if (c->num_segments >= SIZE_MAX / 8)
        return ws_error(ctx, WARPSORT_INVALID_ARGUMENT, "%s: num_segments = %zu is too large", fn,
                        c->num_segments);
    const size_t ob = (c->num_segments + 1) * 8;
    if (c->n > 0 && ws_seg_overlap(c->keys_in, c->n * ks, c->offsets, ob))
        return ws_error(ctx, WARPSORT_OVERLAP, "%s: keys and offsets overlap", fn);
    if (c->n > 0 && c->values && ws_seg_overlap(c->values, c->n * c->value_bytes, c->offsets, ob))
        return ws_error(ctx, WARPSORT_OVERLAP, "%s: %s and offsets overlap", fn, what);
    return WARPSORT_OK;
}

static warpsort_status_t ws_seg_run(warpsort_context_t *ctx, ws_seg_call_t *c) {
    if (!ctx) return WARPSORT_INVALID_ARGUMENT;
    ctx->last_error[0] = '\0';
    warpsort_status_t st = ws_seg_check(ctx, c);
    if (st != WARPSORT_OK) return st;
    /* Local indices must fit; segments by offsets are checked by the
     * backends once the offsets are known good. */
    if (c->argsort && c->value_bytes == 4 && !c->offsets && c->row_len > (size_t)UINT32_MAX + 1)
        return ws_error(ctx, WARPSORT_INVALID_ARGUMENT,
                        "%s: row_len = %zu needs 8-byte indices (index_bytes = 4 holds 2^32)",
                        c->fn, c->row_len);
    /* Keys alone: equal keys are identical bits, stable changes nothing. */
    if (!c->argsort && !c->values) {
        c->value_bytes = 0;
        c->flags &= ~(unsigned)WARPSORT_STABLE;
    }
    if (c->offsets == NULL && (c->num_segments == 0 || c->row_len == 0)) return WARPSORT_OK;
    const void *const arrays[4] = {c->keys_in, c->keys, c->values, c->offsets};
    warpsort_backend_t b;
    st = ws_route(ctx, c->n, arrays, 4, &b);
    if (st != WARPSORT_OK) return st;
#ifdef WARPSORT_HAVE_CUDA
    if (b == WARPSORT_BACKEND_CUDA) return ws_cuda_segmented(ctx, c);
#endif
    return ws_cpu_segmented(ctx, c);
}

/* A rows call as segments of computed offsets; rows * row_len must fit. */
static warpsort_status_t ws_rows_call(warpsort_context_t *ctx, ws_seg_call_t *c, size_t rows,
                                      size_t row_len) {
    if (!ctx) return WARPSORT_INVALID_ARGUMENT;
    if (row_len != 0 && rows > WS_SEG_MAX_N / row_len) {
        ctx->last_error[0] = '\0';
        return ws_error(ctx, WARPSORT_INVALID_ARGUMENT,
                        "%s: rows x row_len = %zu x %zu is too large", c->fn, rows, row_len);
    }
    c->n = rows * row_len;
    c->num_segments = rows;
    c->row_len = row_len;
    return ws_seg_run(ctx, c);
}

warpsort_status_t warpsort_sort_rows(warpsort_context_t *ctx, void *keys, size_t rows,
                                     size_t row_len, warpsort_dtype_t dtype, unsigned flags) {
    ws_seg_call_t c = {keys, keys, NULL, 0, NULL, 0, 0, dtype, 0, flags, 0, "warpsort_sort_rows"};
    return ws_rows_call(ctx, &c, rows, row_len);
}

warpsort_status_t warpsort_sort_rows_pairs(warpsort_context_t *ctx, void *keys, void *values,
                                           size_t rows, size_t row_len, warpsort_dtype_t dtype,
                                           size_t value_bytes, unsigned flags) {
    ws_seg_call_t c = {keys, keys,  values,      0,     NULL, 0,
                       0,    dtype, value_bytes, flags, 0,    "warpsort_sort_rows_pairs"};
    return ws_rows_call(ctx, &c, rows, row_len);
}

warpsort_status_t warpsort_argsort_rows(warpsort_context_t *ctx, const void *keys, void *indices,
                                        size_t rows, size_t row_len, warpsort_dtype_t dtype,
                                        size_t index_bytes, unsigned flags) {
    ws_seg_call_t c = {keys, NULL,  indices,     0,     NULL, 0,
                       0,    dtype, index_bytes, flags, 1,    "warpsort_argsort_rows"};
    return ws_rows_call(ctx, &c, rows, row_len);
}

static warpsort_status_t ws_segments_call(warpsort_context_t *ctx, ws_seg_call_t *c) {
    if (!ctx) return WARPSORT_INVALID_ARGUMENT;
    if (!c->offsets) {
        ctx->last_error[0] = '\0';
        return ws_error(ctx, WARPSORT_NULL_POINTER,
                        "%s: offsets is NULL (it holds num_segments + 1 entries)", c->fn);
    }
    return ws_seg_run(ctx, c);
}

warpsort_status_t warpsort_sort_segments(warpsort_context_t *ctx, void *keys, size_t n,
                                         const uint64_t *offsets, size_t num_segments,
                                         warpsort_dtype_t dtype, unsigned flags) {
    ws_seg_call_t c = {keys, keys,  NULL, n,     offsets, num_segments,
                       0,    dtype, 0,    flags, 0,       "warpsort_sort_segments"};
    return ws_segments_call(ctx, &c);
}

warpsort_status_t warpsort_sort_segments_pairs(warpsort_context_t *ctx, void *keys, void *values,
                                               size_t n, const uint64_t *offsets,
                                               size_t num_segments, warpsort_dtype_t dtype,
                                               size_t value_bytes, unsigned flags) {
    ws_seg_call_t c = {keys, keys,  values,      n,     offsets, num_segments,
                       0,    dtype, value_bytes, flags, 0,       "warpsort_sort_segments_pairs"};
    return ws_segments_call(ctx, &c);
}

warpsort_status_t warpsort_argsort_segments(warpsort_context_t *ctx, const void *keys,
                                            void *indices, size_t n, const uint64_t *offsets,
                                            size_t num_segments, warpsort_dtype_t dtype,
                                            size_t index_bytes, unsigned flags) {
    ws_seg_call_t c = {keys, NULL,  indices,     n,     offsets, num_segments,
                       0,    dtype, index_bytes, flags, 1,       "warpsort_argsort_segments"};
    return ws_segments_call(ctx, &c);
}

warpsort_status_t warpsort_segmented_workspace_size(const warpsort_context_t *ctx, size_t n,
                                                    size_t num_segments, warpsort_dtype_t dtype,
                                                    size_t value_bytes, unsigned flags,
                                                    size_t *bytes) {
    if (!ctx || !bytes) return WARPSORT_INVALID_ARGUMENT;
    if (warpsort_dtype_size(dtype) == 0) return WARPSORT_UNSUPPORTED_DTYPE;
    if (value_bytes != 0 && value_bytes != 4 && value_bytes != 8) return WARPSORT_INVALID_ARGUMENT;
    if (flags & ~(unsigned)(WS_SEG_FLAGS | WARPSORT_WORKSPACE_ARGSORT))
        return WARPSORT_INVALID_ARGUMENT;
    if ((flags & WARPSORT_WORKSPACE_ARGSORT) && value_bytes == 0) return WARPSORT_INVALID_ARGUMENT;
    if (n > WS_SEG_MAX_N || num_segments >= SIZE_MAX / 8) return WARPSORT_INVALID_ARGUMENT;
    *bytes = 0;
#ifdef WARPSORT_HAVE_CUDA
    warpsort_status_t st = ws_resolve((warpsort_context_t *)ctx);
    if (st != WARPSORT_OK) return st;
    if (ctx->backend == WARPSORT_BACKEND_CUDA)
        return ws_cuda_segmented_workspace_size(ctx, n, num_segments, dtype, value_bytes, flags,
                                                bytes);
#endif
    return WARPSORT_OK;
}

warpsort_status_t warpsort_segments_check(warpsort_context_t *ctx) {
    if (!ctx) return WARPSORT_INVALID_ARGUMENT;
    ctx->last_error[0] = '\0';
#ifdef WARPSORT_HAVE_CUDA
    if (ctx->cuda) return ws_cuda_segments_check(ctx);
#endif
    return WARPSORT_OK;
}
