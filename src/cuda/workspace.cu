/* workspace.cu - the context's device workspace (workspace.h). */
#include <stdint.h>

#include "check.cuh"
#include "workspace.h"

warpsort_status_t ws_acquire(warpsort_context_t *ctx, size_t bytes, unsigned char **out) {
    ws_cuda_state *st = ws_state(ctx);
    *out = (unsigned char *)st->workspace;
    if (bytes <= st->workspace_bytes) return WARPSORT_OK;
    if (st->workspace_external)
        return ws_error(ctx, WARPSORT_WORKSPACE_TOO_SMALL,
                        "workspace of %zu bytes given, this call needs %zu", st->workspace_bytes,
                        bytes);
    /* cudaFree waits for work still using the old buffer. */
    if (st->workspace) {
        cudaError_t err = cudaFree(st->workspace);
        st->workspace = NULL;
        st->workspace_bytes = 0;
        if (err != cudaSuccess) return ws_cuda_fail(ctx, err, "cudaFree(workspace)");
    }
    void *p = NULL;
    cudaError_t err = cudaMalloc(&p, bytes);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        return ws_error(ctx, WARPSORT_OUT_OF_MEMORY,
                        "cannot allocate %zu bytes of device workspace: %s", bytes,
                        cudaGetErrorString(err));
    }
    st->workspace = p;
    st->workspace_bytes = bytes;
    *out = (unsigned char *)p;
    return WARPSORT_OK;
}

warpsort_status_t ws_workspace_set(warpsort_context_t *ctx, void *ptr, size_t bytes) {
    ws_cuda_state *st = ws_state(ctx);
    if (ptr && (uintptr_t)ptr % 256)
        return ws_error(ctx, WARPSORT_MISALIGNED,
                        "warpsort_set_workspace: %p is not 256-byte aligned", ptr);
    if (st->workspace && !st->workspace_external) {
        cudaError_t err = cudaFree(st->workspace);
        st->workspace = NULL;
        st->workspace_bytes = 0;
        if (err != cudaSuccess) return ws_cuda_fail(ctx, err, "cudaFree(workspace)");
    }
    st->workspace = ptr;
    st->workspace_bytes = ptr ? bytes : 0;
    st->workspace_external = ptr != NULL;
    return WARPSORT_OK;
}

void ws_workspace_release(ws_cuda_state *st) {
    if (st->workspace && !st->workspace_external) (void)cudaFree(st->workspace);
    st->workspace = NULL;
    st->workspace_bytes = 0;
}
