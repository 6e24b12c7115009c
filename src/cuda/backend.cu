/*
 * backend.cu - the CUDA backend's router: the only file the C API enters
 * (through core/internal.h's ws_cuda_* entries). It picks where a call runs
 * and calls down:
 *
 *   keys (and values) in device memory    the leaf, on the caller's arrays
 *   everything in host memory             the host pipeline (pipeline/),
 *                                         in core or out of core
 *   split between host and device         staged whole into the workspace,
 *                                         then the leaf
 *
 * One plan per call (ws_plan_make) sizes the workspace and drives the leaf.
 * Device calls are asynchronous on the context's stream; calls that touch
 * host memory return when the result is in place, and never write it before
 * the device has finished, so a failure leaves it as it was.
 */
#include <stdlib.h>
#include <string.h>

#include "check.cuh"
#include "device_sort.h"
#include "iota.h"
#include "pipeline/pipeline.h"
#include "side_streams.h"
#include "state.h"
#include "workspace.h"

int ws_cuda_device_pointer(const void *p) {
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
}

/* A call's workspace: the sort's own (the plan's layout, at 0), then device
 * copies of host arrays (and, for argsort, of the keys). */
struct ws_call_layout {
    size_t keys_off, vals_off, total;
};
static ws_call_layout ws_call_layout_for(const ws_plan_t *p, int stage_keys, int stage_vals) {
    ws_call_layout l;
    l.keys_off = ws_align256(p->lay.total);
    l.vals_off = l.keys_off + (stage_keys ? ws_align256(p->n * p->key_bytes) : 0);
    l.total = l.vals_off + (stage_vals ? ws_align256(p->n * p->value_bytes) : 0);
    return l;
}

/* Runs the call's plan on device-resident arrays. */
static warpsort_status_t ws_run_leaf(warpsort_context_t *ctx, const ws_plan_t *p, void *keys,
                                     void *vals, warpsort_dtype_t dtype, unsigned flags,
                                     unsigned char *ws) {
    const char *failed = NULL;
    const cudaError_t err =
        ws_device_sort(p, keys, vals, dtype, (flags & WARPSORT_DESCENDING) != 0,
                       (flags & WARPSORT_STABLE) != 0, ws, ws_state(ctx)->stream, &failed);
    if (err != cudaSuccess) return ws_cuda_fail(ctx, err, failed);
    return WARPSORT_OK;
}

/* Copies staged results back to host arrays once the device is done. */
static warpsort_status_t ws_copy_back(warpsort_context_t *ctx, void *dst, const void *src,
                                      size_t bytes) {
    const cudaStream_t s = ws_state(ctx)->stream;
    WS_CUDA_TRY(ctx, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, s));
    return WARPSORT_OK;
}

static warpsort_status_t ws_sort_pairs_routed(warpsort_context_t *ctx, void *keys, void *values,
                                              size_t n, warpsort_dtype_t dtype, size_t vb,
                                              unsigned flags) {
    ws_cuda_state *st = ws_state(ctx);
    const size_t kb = warpsort_dtype_size(dtype);
    const int stage_keys = !ws_cuda_device_pointer(keys);
    const int stage_vals = vb && !ws_cuda_device_pointer(values);
    if (stage_keys && (stage_vals || !vb))
        return ws_pipe_sort_pairs(ctx, keys, values, n, dtype, vb, flags);
    const ws_plan_t plan = ws_plan_make(&st->dev, n, kb, vb);
    const ws_call_layout l = ws_call_layout_for(&plan, stage_keys, stage_vals);
    unsigned char *ws = NULL;
    WS_TRY(ws_acquire(ctx, l.total, &ws));
    void *dkeys = stage_keys ? (void *)(ws + l.keys_off) : keys;
    void *dvals = stage_vals ? (void *)(ws + l.vals_off) : values;
    if (stage_keys)
        WS_CUDA_TRY(ctx, cudaMemcpyAsync(dkeys, keys, n * kb, cudaMemcpyDefault, st->stream));
    if (stage_vals)
        WS_CUDA_TRY(ctx, cudaMemcpyAsync(dvals, values, n * vb, cudaMemcpyDefault, st->stream));
    WS_TRY(ws_run_leaf(ctx, &plan, dkeys, vb ? dvals : NULL, dtype, flags, ws));
    if (!stage_keys && !stage_vals) return WARPSORT_OK; /* asynchronous */
    /* Host arrays: wait for the sort before touching them. */
    WS_CUDA_TRY(ctx, cudaStreamSynchronize(st->stream));
    if (stage_keys) WS_TRY(ws_copy_back(ctx, keys, dkeys, n * kb));
    if (stage_vals) WS_TRY(ws_copy_back(ctx, values, dvals, n * vb));
    WS_CUDA_TRY(ctx, cudaStreamSynchronize(st->stream));
    return WARPSORT_OK;
}

/* keys_in sorted into keys_out (distinct). Both in host memory: the host
 * pipeline, which stages from one and writes the other. keys_in in device
 * memory: the leaf reads it and leaves the result in keys_out when that is
 * device memory, or in the workspace when it is host memory (copied back
 * once the device is done, so a failure leaves keys_out as it was); no copy
 * of keys_in is made. keys_in in host memory: copied on the stream into
 * keys_out (device memory), then sorted there in place. */
static warpsort_status_t ws_sort_copy_routed(warpsort_context_t *ctx, const void *keys_in,
                                             void *keys_out, size_t n, warpsort_dtype_t dtype,
                                             unsigned flags) {
    ws_cuda_state *st = ws_state(ctx);
    const size_t kb = warpsort_dtype_size(dtype);
    const int host_in = !ws_cuda_device_pointer(keys_in);
    const int host_out = !ws_cuda_device_pointer(keys_out);
    if (host_in && host_out) {
        if (n > 1) return ws_pipe_sort_copy(ctx, keys_in, keys_out, n, dtype, flags);
        memcpy(keys_out, keys_in, n * kb); /* one key is sorted */
        return WARPSORT_OK;
    }
    const ws_plan_t plan = ws_plan_make(&st->dev, n, kb, 0);
    const ws_call_layout l = ws_call_layout_for(&plan, host_out, 0);
    unsigned char *ws = NULL;
    if (n > 1 || host_out) WS_TRY(ws_acquire(ctx, l.total, &ws));
    void *dkeys = host_out ? (void *)(ws + l.keys_off) : keys_out;
    if (n > 1 && !host_in) {
        const char *failed = NULL;
        const cudaError_t err =
            ws_device_sort_from(&plan, keys_in, NULL, dkeys, NULL, dtype,
                                (flags & WARPSORT_DESCENDING) != 0, 0, ws, st->stream, &failed);
        if (err != cudaSuccess) return ws_cuda_fail(ctx, err, failed);
    } else {
        WS_CUDA_TRY(ctx, cudaMemcpyAsync(dkeys, keys_in, n * kb, cudaMemcpyDefault, st->stream));
        if (n > 1) WS_TRY(ws_run_leaf(ctx, &plan, dkeys, NULL, dtype, flags, ws));
    }
    if (!host_in && !host_out) return WARPSORT_OK; /* asynchronous */
    /* Host memory: wait for the sort before touching keys_out (or returning
     * while keys_in may still be read). */
    WS_CUDA_TRY(ctx, cudaStreamSynchronize(st->stream));
    if (host_out) {
        WS_TRY(ws_copy_back(ctx, keys_out, dkeys, n * kb));
        WS_CUDA_TRY(ctx, cudaStreamSynchronize(st->stream));
    }
    return WARPSORT_OK;
}

/* An argsort's workspace: the sort's own, the copy of the keys it sorts,
 * the indices it sorts with them, and the caller's indices staged when they
 * are in host memory. 8-byte indices of up to 2^32 items travel as 4 bytes
 * (a narrower pair sorts faster) and are widened once at the end. */
struct ws_argsort_layout {
    ws_plan_t plan;
    int narrow;
    size_t keys_off, idx_off, out_off, total;
};
static ws_argsort_layout ws_argsort_layout_for(const ws_cuda_state *st, size_t n, size_t kb,
                                               size_t ib, int stage_idx) {
    ws_argsort_layout l;
    l.narrow = ib == 8 && n <= (size_t)UINT32_MAX + 1;
    l.plan = ws_plan_make(&st->dev, n, kb, l.narrow ? 4 : ib);
    l.keys_off = ws_align256(l.plan.lay.total);
    l.idx_off = l.keys_off + ws_align256(n * kb);
    /* The sort's indices: in the caller's array unless narrowed or staged;
     * narrowed and staged, the widened ones need room of their own. */
    l.out_off = l.idx_off + (l.narrow ? ws_align256(n * 4) : stage_idx ? ws_align256(n * ib) : 0);
    l.total = l.out_off + (l.narrow && stage_idx ? ws_align256(n * ib) : 0);
    return l;
}

static warpsort_status_t ws_argsort_routed(warpsort_context_t *ctx, const void *keys, void *indices,
                                           size_t n, warpsort_dtype_t dtype, size_t ib,
                                           unsigned flags) {
    ws_cuda_state *st = ws_state(ctx);
    const size_t kb = warpsort_dtype_size(dtype);
    const int stage_idx = !ws_cuda_device_pointer(indices);
    const int host_keys = !ws_cuda_device_pointer(keys);
    if (stage_idx && host_keys) return ws_pipe_argsort(ctx, keys, indices, n, dtype, ib, flags);
    /* The keys are always copied: argsort must not reorder them. */
    const ws_argsort_layout l = ws_argsort_layout_for(st, n, kb, ib, stage_idx);
    unsigned char *ws = NULL;
    WS_TRY(ws_acquire(ctx, l.total, &ws));
    void *dkeys = ws + l.keys_off;
    /* Where the sort's indices live, and where the caller's end up. */
    void *sidx = l.narrow || stage_idx ? (void *)(ws + l.idx_off) : indices;
    void *didx = !stage_idx ? indices : l.narrow ? (void *)(ws + l.out_off) : sidx;
    WS_CUDA_TRY(ctx, cudaMemcpyAsync(dkeys, keys, n * kb, cudaMemcpyDefault, st->stream));
    WS_CUDA_TRY(ctx, ws_iota(sidx, n, 0, l.narrow ? 4 : ib, st->dev.sm_count, st->stream));
    /* Stable: the indices are the tie-break, so equal keys keep input order. */
    WS_TRY(ws_run_leaf(ctx, &l.plan, dkeys, sidx, dtype, flags | WARPSORT_STABLE, ws));
    if (l.narrow)
        WS_CUDA_TRY(ctx, ws_widen_indices((const uint32_t *)sidx, (uint64_t *)didx, n,
                                          st->dev.sm_count, st->stream));
    if (!stage_idx && !host_keys) return WARPSORT_OK; /* asynchronous */
    WS_CUDA_TRY(ctx, cudaStreamSynchronize(st->stream));
    if (stage_idx) {
        WS_TRY(ws_copy_back(ctx, indices, didx, n * ib));
        WS_CUDA_TRY(ctx, cudaStreamSynchronize(st->stream));
    }
    return WARPSORT_OK;
}

/*=== the entries core/internal.h declares ===*/

warpsort_status_t ws_cuda_sort_pairs(warpsort_context_t *ctx, void *keys, void *values, size_t n,
                                     warpsort_dtype_t dtype, size_t value_bytes, unsigned flags) {
    ws_device_guard g;
    cudaError_t err = ws_enter_device(ctx->device, &g);
    if (err != cudaSuccess) return ws_cuda_fail(ctx, err, "cudaSetDevice");
    const warpsort_status_t s =
        ws_sort_pairs_routed(ctx, keys, values, n, dtype, values ? value_bytes : 0, flags);
    ws_leave_device(&g);
    return s;
}

warpsort_status_t ws_cuda_sort_copy(warpsort_context_t *ctx, const void *keys_in, void *keys_out,
                                    size_t n, warpsort_dtype_t dtype, unsigned flags) {
    ws_device_guard g;
    cudaError_t err = ws_enter_device(ctx->device, &g);
    if (err != cudaSuccess) return ws_cuda_fail(ctx, err, "cudaSetDevice");
    const warpsort_status_t s = ws_sort_copy_routed(ctx, keys_in, keys_out, n, dtype, flags);
    ws_leave_device(&g);
    return s;
}

warpsort_status_t ws_cuda_argsort(warpsort_context_t *ctx, const void *keys, void *indices,
                                  size_t n, warpsort_dtype_t dtype, size_t index_bytes,
                                  unsigned flags) {
    ws_device_guard g;
    cudaError_t err = ws_enter_device(ctx->device, &g);
    if (err != cudaSuccess) return ws_cuda_fail(ctx, err, "cudaSetDevice");
    const warpsort_status_t s = ws_argsort_routed(ctx, keys, indices, n, dtype, index_bytes, flags);
    ws_leave_device(&g);
    return s;
}

warpsort_status_t ws_cuda_workspace_size(const warpsort_context_t *ctx, size_t n,
                                         warpsort_dtype_t dtype, size_t value_bytes, unsigned flags,
                                         size_t *bytes) {
    const size_t kb = warpsort_dtype_size(dtype);
    /* Argsort keeps the caller's keys and sorts a copy (device indices). */
    if (flags & WARPSORT_WORKSPACE_ARGSORT) {
        *bytes = ws_argsort_layout_for(ws_state(ctx), n, kb, value_bytes, 0).total;
        return WARPSORT_OK;
    }
    const ws_plan_t plan = ws_plan_make(&ws_state(ctx)->dev, n, kb, value_bytes);
    *bytes = ws_call_layout_for(&plan, 0, 0).total;
    return WARPSORT_OK;
}

warpsort_status_t ws_cuda_set_workspace(warpsort_context_t *ctx, void *ptr, size_t bytes) {
    ws_device_guard g;
    cudaError_t err = ws_enter_device(ctx->device, &g);
    if (err != cudaSuccess) return ws_cuda_fail(ctx, err, "cudaSetDevice");
    const warpsort_status_t s = ws_workspace_set(ctx, ptr, bytes);
    ws_leave_device(&g);
    return s;
}

warpsort_status_t ws_cuda_synchronize(warpsort_context_t *ctx) {
    ws_device_guard g;
    cudaError_t err = ws_enter_device(ctx->device, &g);
    if (err == cudaSuccess) err = cudaStreamSynchronize(ws_state(ctx)->stream);
    ws_leave_device(&g);
    if (err != cudaSuccess) return ws_cuda_fail(ctx, err, "cudaStreamSynchronize");
    return WARPSORT_OK;
}

void ws_cuda_destroy(warpsort_context_t *ctx) {
    ws_cuda_state *st = ws_state(ctx);
    if (!st) return;
    ws_device_guard g;
    if (ws_enter_device(ctx->device, &g) == cudaSuccess) {
        (void)cudaStreamSynchronize(st->stream);
        ws_pipe_destroy(ctx); /* and the out-of-core workers */
        ws_workspace_release(st);
        ws_sides_destroy(st);
        if (st->own_stream) (void)cudaStreamDestroy(st->stream);
        ws_leave_device(&g);
    }
    (void)cudaGetLastError();
    free(st);
    ctx->cuda = NULL;
}
