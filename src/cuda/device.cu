/*
 * device.cu - the CUDA backend's initialisation for one context: find the
 * device, read its limits, pick its row of the tuning table, check that this
 * build's kernels run there, and fill ws_cuda_state (state.h).
 */
#include <stdlib.h>

#include "check.cuh"
#include "device_sort.h"
#include "state.h"

#ifndef WARPSORT_CUDA_ARCHS
#define WARPSORT_CUDA_ARCHS "unknown"
#endif

warpsort_status_t ws_cuda_fail(warpsort_context_t *ctx, cudaError_t err, const char *what) {
    (void)cudaGetLastError(); /* a non-sticky error must not fail the next call */
    if (err == cudaErrorMemoryAllocation)
        return ws_error(ctx, WARPSORT_OUT_OF_MEMORY, "%s: %s", what, cudaGetErrorString(err));
    return ws_error(ctx, WARPSORT_CUDA_ERROR, "%s: %s (%s)", what, cudaGetErrorName(err),
                    cudaGetErrorString(err));
}

/* The one place that maps a device to its row of tuning.cuh: the first
 * family (most shared memory first) whose needs the device's limits meet,
 * or WS_FAMILY_COUNT when none does. */
static int ws_select_family(const ws_device_limits *lim) {
    for (int f = 0; f < WS_FAMILY_COUNT; f++) {
        const ws_family_info fi = ws_family_of(f);
        if (lim->smem_block >= fi.smem_block && lim->smem_sm >= fi.smem_sm) return f;
    }
    return WS_FAMILY_COUNT;
}

/* Reads the limits of ctx->device, capped by the smem_limit test hook (as a
 * chip of 8.x or 9.x with that opt-in limit reports them). */
static warpsort_status_t ws_read_limits(warpsort_context_t *ctx, ws_device_limits *lim, int *sms) {
    int v[5] = {0, 0, 0, 0, 0};
    const cudaDeviceAttr attrs[5] = {
        cudaDevAttrMultiProcessorCount, cudaDevAttrComputeCapabilityMajor,
        cudaDevAttrComputeCapabilityMinor, cudaDevAttrMaxSharedMemoryPerBlockOptin,
        cudaDevAttrMaxSharedMemoryPerMultiprocessor};
    for (int i = 0; i < 5; i++) {
        cudaError_t err = cudaDeviceGetAttribute(&v[i], attrs[i], ctx->device);
        if (err != cudaSuccess) {
            (void)cudaGetLastError();
            return ws_error(ctx, WARPSORT_BACKEND_UNAVAILABLE,
                            "CUDA device %d: cudaDeviceGetAttribute: %s", ctx->device,
                            cudaGetErrorString(err));
        }
    }
    *sms = v[0];
    lim->cc_major = v[1];
    lim->cc_minor = v[2];
    lim->smem_block = (size_t)v[3];
    lim->smem_sm = (size_t)v[4];
    lim->smem_forced = 0;
    const ws_test_hooks *h = &ctx->hooks;
    if (h->smem_limit_bad[0])
        return ws_error(ctx, WARPSORT_INVALID_ARGUMENT,
                        "WARPSORT_SMEM_LIMIT=%s (a test hook): not a byte count",
                        h->smem_limit_bad);
    if (h->smem_limit) {
        const size_t b = h->smem_limit;
        lim->smem_block = lim->smem_block < b ? lim->smem_block : b;
        lim->smem_sm = lim->smem_sm < b + 1024 ? lim->smem_sm : b + 1024;
        lim->smem_forced = 1;
    }
    return WARPSORT_OK;
}

/* Whether the library's kernels can run on the device: a build with neither
 * machine code for the chip nor PTX its driver can compile fails here, at
 * initialisation, instead of at the first sort. */
static cudaError_t ws_probe_kernel_image(const warpsort_context_t *ctx) {
    if (ctx->hooks.force_no_kernel_image) return cudaErrorNoKernelImageForDevice;
    ws_device_guard g;
    cudaError_t err = ws_enter_device(ctx->device, &g);
    if (err == cudaSuccess) err = ws_merge_probe_image();
    ws_leave_device(&g);
    return err;
}

/* The sample sort's limits: the tuning table's, narrowed by test hooks. */
static ws_sample_limits ws_sample_limits_of(const ws_test_hooks *h) {
    ws_sample_limits l = {
        WS_SAMPLE_MIN_N, WS_SAMPLE_MIN_N_KEYS, WS_TREE_SLOTS_MAX - 1, WS_MAX_LEVELS, 0, 0};
    if (h->sample_min_n) l.min_n = l.min_n_keys = h->sample_min_n, l.min_n_exact = 1;
    if (h->sample_splitters) l.splitters = h->sample_splitters;
    l.wide = l.splitters >= (1u << WS_TREE_LOG_NARROW) && h->sample_splitters != 0;
    if (h->sample_levels) l.levels = h->sample_levels;
    return l;
}

static warpsort_status_t ws_find_device(warpsort_context_t *ctx) {
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {
        (void)cudaGetLastError();
        return ws_error(ctx, WARPSORT_BACKEND_UNAVAILABLE, "no CUDA device: %s",
                        err != cudaSuccess ? cudaGetErrorString(err) : "none found");
    }
    if (ctx->device >= count)
        return ws_error(ctx, WARPSORT_BACKEND_UNAVAILABLE, "CUDA device %d requested, %d present",
                        ctx->device, count);
    /* The out-of-core device list (core checked the rest): every device, or
     * ordinals that exist. */
    if (ctx->device_count == WARPSORT_ALL_DEVICES) {
        if (count > WARPSORT_MAX_DEVICES) count = WARPSORT_MAX_DEVICES;
        int *all = (int *)malloc((size_t)count * sizeof(int));
        if (!all) return ws_error(ctx, WARPSORT_OUT_OF_MEMORY, "cannot allocate the device list");
        for (int i = 0; i < count; i++) all[i] = i;
        free(ctx->devices);
        ctx->devices = all;
        ctx->device_count = count;
    }
    for (int i = 0; i < ctx->device_count; i++)
        if (ctx->devices[i] >= count)
            return ws_error(ctx, WARPSORT_BACKEND_UNAVAILABLE,
                            "devices[%d] = %d: CUDA device %d requested, %d present", i,
                            ctx->devices[i], ctx->devices[i], count);
    return WARPSORT_OK;
}

warpsort_status_t ws_cuda_init(warpsort_context_t *ctx) {
    WS_TRY(ws_find_device(ctx));
    int sms = 0;
    ws_device_limits lim;
    WS_TRY(ws_read_limits(ctx, &lim, &sms));
    const int family = ws_select_family(&lim);
    if (family == WS_FAMILY_COUNT)
        return ws_error(ctx, WARPSORT_BACKEND_UNAVAILABLE,
                        "CUDA device %d offers %zu bytes of shared memory per block%s; warpsort "
                        "needs %zu",
                        ctx->device, lim.smem_block,
                        lim.smem_forced ? " (WARPSORT_SMEM_LIMIT)" : "",
                        ws_family_of(WS_FAMILY_COUNT - 1).smem_block);
    cudaError_t err = ws_probe_kernel_image(ctx);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        return ws_error(ctx, WARPSORT_BACKEND_UNAVAILABLE,
                        "CUDA device %d (compute capability %d.%d) cannot run warpsort's "
                        "kernels: %s (%s); this build has code for CUDA architectures %s",
                        ctx->device, lim.cc_major, lim.cc_minor, cudaGetErrorName(err),
                        cudaGetErrorString(err), WARPSORT_CUDA_ARCHS);
    }
    ws_cuda_state *st = (ws_cuda_state *)calloc(1, sizeof *st);
    if (!st) return ws_error(ctx, WARPSORT_OUT_OF_MEMORY, "cannot allocate the CUDA state");
    st->stream = (cudaStream_t)ctx->stream;
    st->limits = lim;
    st->dev.family = family;
    st->dev.sm_count = sms;
    st->dev.sample = ws_sample_limits_of(&ctx->hooks);
    st->dev.no_coop = ctx->hooks.no_coop;
    st->dev.seg_no_radix = ctx->hooks.seg_no_radix;
    st->dev.seg_no_cluster = ctx->hooks.seg_no_cluster;
    st->dev.merge_no_radix = ctx->hooks.merge_no_radix;
    st->dev.pdl = lim.cc_major >= 9 && !ctx->hooks.no_pdl;
    ws_device_guard g;
    st->dev.sample_ok = ws_enter_device(ctx->device, &g) == cudaSuccess && ws_sample_kernels_ok();
    ws_leave_device(&g);
    (void)cudaGetLastError();
    ctx->cuda = st;
    return WARPSORT_OK;
}

const char *ws_cuda_family_name(const warpsort_context_t *ctx) {
    return ws_family_of(ws_state(ctx)->dev.family).name;
}
