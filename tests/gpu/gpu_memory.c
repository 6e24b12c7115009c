/*
 * gpu_memory.c - the GPU tests' memory hooks (gpu_memory.h).
 */
#include "gpu_memory.h"

#include <cuda_runtime_api.h>

#include "wt_cmocka.h"

static void *device_alloc(size_t bytes, void *user) {
    (void)user;
    void *p = NULL;
    if (cudaMalloc(&p, bytes ? bytes : 1) != cudaSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    return p;
}
static void device_release(void *p, void *user) {
    (void)user;
    (void)cudaFree(p);
}
static int device_upload(void *dst, const void *src, size_t bytes, void *user) {
    (void)user;
    return bytes && cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice) != cudaSuccess;
}
static int device_download(void *dst, const void *src, size_t bytes, void *user) {
    (void)user;
    return bytes && cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost) != cudaSuccess;
}
const wt_memory_t wt_device_memory = {"device",      device_alloc,    device_release,
                                      device_upload, device_download, NULL};

static void *pinned_alloc(size_t bytes, void *user) {
    (void)user;
    void *p = NULL;
    if (cudaMallocHost(&p, bytes ? bytes : 1) != cudaSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    return p;
}
static void pinned_release(void *p, void *user) {
    (void)user;
    (void)cudaFreeHost(p);
}
const wt_memory_t wt_pinned_memory = {"pinned host", pinned_alloc, pinned_release,
                                      wt_host_copy,  wt_host_copy, NULL};

int wt_gpu_probe(warpsort_context_t **keep) {
    warpsort_context_t *ctx = NULL;
    warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
    cfg.backend = WARPSORT_BACKEND_CUDA;
    const warpsort_status_t st = warpsort_create(&ctx, &cfg);
    if (keep)
        *keep = ctx;
    else
        warpsort_destroy(ctx);
    if (st == WARPSORT_OK) return 1;
    if (st == WARPSORT_BACKEND_UNAVAILABLE) {
        fprintf(stderr, "CUDA backend unavailable (%s): GPU tests skip\n", warpsort_create_error());
        return 0;
    }
    fprintf(stderr, "cannot create a CUDA context: %s (%s)\n", warpsort_status_name(st),
            warpsort_create_error());
    return -1;
}

warpsort_context_t *wt_gpu_context(size_t ring, size_t budget) {
    warpsort_context_t *ctx = NULL;
    warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
    cfg.backend = WARPSORT_BACKEND_CUDA;
    cfg.host_ring_bytes = ring;
    cfg.device_budget_bytes = budget;
    warpsort_status_t st = warpsort_create(&ctx, &cfg);
    if (st != WARPSORT_OK) fail_msg("warpsort_create: %s", warpsort_status_name(st));
    return ctx;
}
