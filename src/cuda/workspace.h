/*
 * workspace.h - the context's device workspace: a buffer cached between
 * calls (grown on demand), or the caller's (warpsort_set_workspace), which
 * is never grown: a call that needs more fails with WORKSPACE_TOO_SMALL.
 * The router and the host pipeline both draw on it.
 * Internal; CUDA translation units only.
 */
#ifndef WARPSORT_CUDA_WORKSPACE_H
#define WARPSORT_CUDA_WORKSPACE_H

#include "state.h"

/* Makes sure `bytes` of workspace exist; fails without touching any data. */
warpsort_status_t ws_acquire(warpsort_context_t *ctx, size_t bytes, unsigned char **out);
/* Frees a cached buffer (not the caller's) and uses ptr (NULL: cache again). */
warpsort_status_t ws_workspace_set(warpsort_context_t *ctx, void *ptr, size_t bytes);
/* Frees a cached buffer at destruction (the context's device is current). */
void ws_workspace_release(ws_cuda_state *st);

#endif /* WARPSORT_CUDA_WORKSPACE_H */
