/* context.c - context lifetime, argument checks and backend dispatch. */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef WARPSORT_HAVE_CUDA
#include <dlfcn.h>
#include <stdatomic.h>
#endif

#define WS_KNOWN_FLAGS (WARPSORT_DESCENDING | WARPSORT_STABLE)
/* Largest n: every byte count a backend computes (keys, values, staging
 * copies: at most 32 bytes per item) then fits in a size_t. */
#define WS_MAX_N (SIZE_MAX / 32)
/* AUTO: host inputs below this many items sort on the CPU: there they take
 * no longer than a round trip through a warm GPU context, and they never pay
 * for creating one (bench/NOTES.md, "AUTO crossover"). */
#define WS_AUTO_CPU_BELOW ((size_t)1 << 11)

unsigned ws_cpu_count(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1u;
}

/* The first versioned layout (0.1: struct_size through cpu_threads). Every
 * later layout only appends fields, so any size from here up to
 * sizeof(warpsort_config_t) is a config some header version produced. */
#define WS_CONFIG_FIRST_SIZE (offsetof(warpsort_config_t, cpu_threads) + sizeof(unsigned))

/* Copies the caller's config over the defaults, struct_size bytes of it:
 * fields appended after the caller's header was written keep their
 * WARPSORT_CONFIG_INIT defaults. 0 if struct_size is not a known layout
 * (garbage, or a newer header than this library). */
static int ws_config_read(const warpsort_config_t *config, warpsort_config_t *out) {
    static const warpsort_config_t defaults = WARPSORT_CONFIG_INIT;
    *out = defaults;
    if (!config) return 1;
    if (config->struct_size < WS_CONFIG_FIRST_SIZE || config->struct_size > sizeof *out) return 0;
    memcpy(out, config, config->struct_size);
    out->struct_size = sizeof *out;
    return 1;
}

/* Why this thread's last warpsort_create failed: a context cannot carry the
 * message of the call that could not make it. Per thread, so concurrent
 * creates never see each other's text. */
static _Thread_local char ws_create_message[WS_ERROR_MAX];

const char *warpsort_create_error(void) { return ws_create_message; }

static warpsort_status_t ws_create_fail(warpsort_status_t st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static warpsort_status_t ws_create_fail(warpsort_status_t st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ws_create_message, sizeof ws_create_message, fmt, ap);
    va_end(ap);
    return st;
}

/* The device list's rules that need no device (warpsort.h, warpsort_create);
 * the ordinals' range is checked where CUDA is initialised. */
static warpsort_status_t ws_check_device_list(const warpsort_config_t *c) {
    const int count = c->device_count;
    if (count == 0) return WARPSORT_OK;
    if (count == WARPSORT_ALL_DEVICES) {
        if (c->devices)
            return ws_create_fail(WARPSORT_INVALID_ARGUMENT,
                                  "device_count = WARPSORT_ALL_DEVICES takes devices = NULL");
        return WARPSORT_OK;
    }
    if (count < 0 || count > WARPSORT_MAX_DEVICES)
        return ws_create_fail(WARPSORT_INVALID_ARGUMENT,
                              "device_count = %d: 0, WARPSORT_ALL_DEVICES or 1 to %d", count,
                              WARPSORT_MAX_DEVICES);
    if (!c->devices)
        return ws_create_fail(WARPSORT_NULL_POINTER, "devices is NULL with device_count = %d",
                              count);
    for (int i = 0; i < count; i++) {
        if (c->devices[i] < 0)
            return ws_create_fail(WARPSORT_INVALID_ARGUMENT, "devices[%d] = %d is negative", i,
                                  c->devices[i]);
        for (int k = 0; k < i; k++)
            if (c->devices[k] == c->devices[i])
                return ws_create_fail(WARPSORT_INVALID_ARGUMENT,
                                      "devices[%d] = %d repeats devices[%d]", i, c->devices[i], k);
    }
    return WARPSORT_OK;
}

static void ws_context_free(warpsort_context_t *ctx) {
    free(ctx->devices);
    free(ctx->cpu_scratch);
    free(ctx);
}

warpsort_status_t warpsort_create(warpsort_context_t **out, const warpsort_config_t *user_config) {
    ws_create_message[0] = '\0';
    if (!out) return ws_create_fail(WARPSORT_NULL_POINTER, "ctx is NULL");
    *out = NULL;
    warpsort_config_t cfg;
    if (!ws_config_read(user_config, &cfg))
        return ws_create_fail(WARPSORT_INVALID_ARGUMENT,
                              "config->struct_size = %zu is no layout this library knows "
                              "(start from WARPSORT_CONFIG_INIT)",
                              user_config->struct_size);
    const warpsort_config_t *config = &cfg;
    if (config->backend != WARPSORT_BACKEND_AUTO && config->backend != WARPSORT_BACKEND_CPU &&
        config->backend != WARPSORT_BACKEND_CUDA)
        return ws_create_fail(WARPSORT_INVALID_ARGUMENT, "unknown backend %d",
                              (int)config->backend);
    if (config->device < 0)
        return ws_create_fail(WARPSORT_INVALID_ARGUMENT, "device = %d is negative", config->device);
    if (config->host_ring_bytes && config->host_ring_bytes < 16384)
        return ws_create_fail(WARPSORT_INVALID_ARGUMENT,
                              "host_ring_bytes = %zu: 0 (the default) or at least 16384",
                              config->host_ring_bytes);
    warpsort_status_t list_st = ws_check_device_list(config);
    if (list_st != WARPSORT_OK) return list_st;

    warpsort_context_t *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return ws_create_fail(WARPSORT_OUT_OF_MEMORY, "cannot allocate the context");
    if (config->device_count > 0) {
        ctx->devices = malloc((size_t)config->device_count * sizeof(int));
        if (!ctx->devices) {
            free(ctx);
            return ws_create_fail(WARPSORT_OUT_OF_MEMORY, "cannot allocate the device list");
        }
        memcpy(ctx->devices, config->devices, (size_t)config->device_count * sizeof(int));
    }
    ctx->device_count = config->device_count;
    ctx->device = config->device;
    ctx->stream = config->stream;
    ctx->cpu_threads = config->cpu_threads ? config->cpu_threads : ws_cpu_count();
    ctx->device_budget_bytes = config->device_budget_bytes;
    ctx->host_ring_bytes = config->host_ring_bytes;
    ctx->requested = config->backend;
    ctx->backend = config->backend;
    ctx->last_backend = WARPSORT_BACKEND_AUTO;
    ws_test_hooks_read(&ctx->hooks);

#ifdef WARPSORT_HAVE_CUDA
    /* CUDA asked for by name: initialised now, so a missing device is an
     * error here. AUTO initialises it on the first call that needs it. */
    if (config->backend == WARPSORT_BACKEND_CUDA) {
        warpsort_status_t st = ws_cuda_init(ctx);
        if (st != WARPSORT_OK) {
            ws_create_fail(st, "%s", ctx->last_error);
            ws_context_free(ctx);
            return st;
        }
    }
#else
    if (config->backend == WARPSORT_BACKEND_CUDA) {
        ws_context_free(ctx);
        return ws_create_fail(WARPSORT_BACKEND_UNAVAILABLE,
                              "backend CUDA: this library was built without the CUDA backend");
    }
    if (config->backend == WARPSORT_BACKEND_AUTO)
        ws_error(ctx, WARPSORT_OK, "AUTO chose the CPU backend: built without the CUDA backend");
    ctx->backend = WARPSORT_BACKEND_CPU;
#endif
    *out = ctx;
    return WARPSORT_OK;
}

void warpsort_destroy(warpsort_context_t *ctx) {
    if (!ctx) return;
#ifdef WARPSORT_HAVE_CUDA
    if (ctx->cuda) ws_cuda_destroy(ctx);
#endif
    ws_context_free(ctx);
}

#ifdef WARPSORT_HAVE_CUDA
/* AUTO's first call that needs the GPU: CUDA from now on, or the CPU from
 * now on with the reason kept in last_error. */
static warpsort_status_t ws_resolve_auto(warpsort_context_t *ctx) {
    if (ctx->backend != WARPSORT_BACKEND_AUTO) return WARPSORT_OK;
    warpsort_status_t st = ws_cuda_init(ctx);
    if (st == WARPSORT_OK) {
        ctx->backend = WARPSORT_BACKEND_CUDA;
        return WARPSORT_OK;
    }
    if (st != WARPSORT_BACKEND_UNAVAILABLE) return st;
    char reason[WS_ERROR_MAX];
    memcpy(reason, ctx->last_error, sizeof reason);
    ws_error(ctx, WARPSORT_OK, "AUTO chose the CPU backend: %s", reason);
    ctx->backend = WARPSORT_BACKEND_CPU;
    return WARPSORT_OK;
}

/* Whether the CUDA driver is loaded in this process. Until something (this
 * library or another) has initialised CUDA, no pointer can be device or
 * managed memory, so AUTO may send a small input to the CPU without paying
 * for a CUDA context. */
static int ws_cuda_driver_loaded(void) {
    /* Once loaded it stays loaded (the runtime never unloads the driver):
     * remembered, so a hot path of small calls pays the loader lock once. */
    static _Atomic int loaded;
    if (atomic_load_explicit(&loaded, memory_order_relaxed)) return 1;
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!h) return 0;
    dlclose(h);
    atomic_store_explicit(&loaded, 1, memory_order_relaxed);
    return 1;
}

static int ws_host_pointers(const void *const *ptrs, size_t count) {
    if (!ws_cuda_driver_loaded()) return 1;
    for (size_t i = 0; i < count; i++)
        if (ptrs[i] && ws_cuda_device_pointer(ptrs[i])) return 0;
    return 1;
}

/* AUTO's choice for one call (ws_route). */
static warpsort_status_t ws_route_auto(warpsort_context_t *ctx, size_t n, const void *const *ptrs,
                                       size_t count, warpsort_backend_t *out) {
    const int small = n < WS_AUTO_CPU_BELOW;
    *out = WARPSORT_BACKEND_CPU;
    if (small && !ctx->cuda && ws_host_pointers(ptrs, count)) return WARPSORT_OK;
    warpsort_status_t st = ws_resolve_auto(ctx);
    if (st != WARPSORT_OK) return st;
    if (ctx->backend == WARPSORT_BACKEND_CPU || (small && ws_host_pointers(ptrs, count)))
        return WARPSORT_OK;
    *out = WARPSORT_BACKEND_CUDA;
    return WARPSORT_OK;
}
#endif

warpsort_status_t ws_resolve(warpsort_context_t *ctx) {
#ifdef WARPSORT_HAVE_CUDA
    return ws_resolve_auto(ctx);
#else
    (void)ctx;
    return WARPSORT_OK;
#endif
}

warpsort_status_t ws_route(warpsort_context_t *ctx, size_t n, const void *const *ptrs, size_t count,
                           warpsort_backend_t *out) {
    warpsort_status_t st = WARPSORT_OK;
    *out = WARPSORT_BACKEND_CPU;
#ifdef WARPSORT_HAVE_CUDA
    if (ctx->requested == WARPSORT_BACKEND_CUDA)
        *out = WARPSORT_BACKEND_CUDA;
    else if (ctx->requested == WARPSORT_BACKEND_AUTO)
        st = ws_route_auto(ctx, n, ptrs, count, out);
#else
    (void)n;
    (void)ptrs;
    (void)count;
#endif
    if (st == WARPSORT_OK) ctx->last_backend = *out;
    return st;
}

warpsort_backend_t warpsort_get_backend(const warpsort_context_t *cctx) {
    if (!cctx) return WARPSORT_BACKEND_AUTO;
#ifdef WARPSORT_HAVE_CUDA
    /* The context's caches are not part of its observable state: resolving
     * AUTO here is what the first large call would do anyway. */
    warpsort_context_t *ctx = (warpsort_context_t *)cctx;
    if (ws_resolve_auto(ctx) != WARPSORT_OK) return WARPSORT_BACKEND_CPU;
#endif
    return cctx->backend;
}

warpsort_backend_t warpsort_last_backend(const warpsort_context_t *ctx) {
    return ctx ? ctx->last_backend : WARPSORT_BACKEND_AUTO;
}

warpsort_status_t warpsort_synchronize(warpsort_context_t *ctx) {
    if (!ctx) return WARPSORT_INVALID_ARGUMENT;
    ctx->last_error[0] = '\0';
#ifdef WARPSORT_HAVE_CUDA
    if (ctx->cuda) return ws_cuda_synchronize(ctx);
#endif
    return WARPSORT_OK;
}

/*--- argument checks: every entry point validates before touching data ---*/

static int ws_overlap(const void *a, size_t abytes, const void *b, size_t bbytes) {
    uintptr_t pa = (uintptr_t)a, pb = (uintptr_t)b;
    return pa < pb + bbytes && pb < pa + abytes;
}

static warpsort_status_t ws_check_keys(warpsort_context_t *ctx, const void *keys, size_t n,
                                       warpsort_dtype_t dtype, unsigned flags, const char *fn) {
    size_t ks = warpsort_dtype_size(dtype);
    if (ks == 0)
        return ws_error(ctx, WARPSORT_UNSUPPORTED_DTYPE, "%s: unknown key dtype %d", fn,
                        (int)dtype);
    if (flags & ~(unsigned)WS_KNOWN_FLAGS)
        return ws_error(ctx, WARPSORT_INVALID_ARGUMENT, "%s: unknown flag bits 0x%x", fn,
                        flags & ~(unsigned)WS_KNOWN_FLAGS);
    if (n > WS_MAX_N)
        return ws_error(ctx, WARPSORT_INVALID_ARGUMENT, "%s: n = %zu is too large", fn, n);
    if (n > 0 && !keys)
        return ws_error(ctx, WARPSORT_NULL_POINTER, "%s: keys is NULL with n = %zu", fn, n);
    if ((uintptr_t)keys % ks)
        return ws_error(ctx, WARPSORT_MISALIGNED, "%s: keys %p not aligned to %zu bytes", fn, keys,
                        ks);
    return WARPSORT_OK;
}

static warpsort_status_t ws_check_second(warpsort_context_t *ctx, const void *keys,
                                         const void *second, size_t n, warpsort_dtype_t dtype,
                                         size_t bytes, const char *what, const char *fn) {
    if (bytes != 4 && bytes != 8)
        return ws_error(ctx, WARPSORT_INVALID_ARGUMENT, "%s: %s size must be 4 or 8, got %zu", fn,
                        what, bytes);
    if (n > 0 && !second)
        return ws_error(ctx, WARPSORT_NULL_POINTER, "%s: %s is NULL with n = %zu", fn, what, n);
    if ((uintptr_t)second % bytes)
        return ws_error(ctx, WARPSORT_MISALIGNED, "%s: %s %p not aligned to %zu bytes", fn, what,
                        second, bytes);
    if (n > 0 && ws_overlap(keys, n * warpsort_dtype_size(dtype), second, n * bytes))
        return ws_error(ctx, WARPSORT_OVERLAP, "%s: keys and %s overlap", fn, what);
    return WARPSORT_OK;
}

/* Keys-only and pairs share one backend entry (values NULL = keys only). */
static warpsort_status_t ws_dispatch_sort_pairs(warpsort_context_t *ctx, void *keys, void *values,
                                                size_t n, warpsort_dtype_t dtype,
                                                size_t value_bytes, unsigned flags) {
    const void *const arrays[2] = {keys, values};
    warpsort_backend_t b;
    warpsort_status_t st = ws_route(ctx, n, arrays, 2, &b);
    if (st != WARPSORT_OK) return st;
#ifdef WARPSORT_HAVE_CUDA
    if (b == WARPSORT_BACKEND_CUDA)
        return ws_cuda_sort_pairs(ctx, keys, values, n, dtype, value_bytes, flags);
#endif
    return ws_cpu_sort_pairs(ctx, keys, values, n, dtype, value_bytes, flags);
}

warpsort_status_t warpsort_sort(warpsort_context_t *ctx, void *keys, size_t n,
                                warpsort_dtype_t dtype, unsigned flags) {
    if (!ctx) return WARPSORT_INVALID_ARGUMENT;
    ctx->last_error[0] = '\0';
    warpsort_status_t st = ws_check_keys(ctx, keys, n, dtype, flags, "warpsort_sort");
    if (st != WARPSORT_OK || n < 2) return st;
    /* Keys alone are never distinguishable when equal: stable changes nothing. */
    return ws_dispatch_sort_pairs(ctx, keys, NULL, n, dtype, 0, flags & ~(unsigned)WARPSORT_STABLE);
}

warpsort_status_t warpsort_sort_copy(warpsort_context_t *ctx, const void *keys_in, void *keys_out,
                                     size_t n, warpsort_dtype_t dtype, unsigned flags) {
    static const char fn[] = "warpsort_sort_copy";
    if (!ctx) return WARPSORT_INVALID_ARGUMENT;
    ctx->last_error[0] = '\0';
    if (keys_in == keys_out) return warpsort_sort(ctx, keys_out, n, dtype, flags);
    warpsort_status_t st = ws_check_keys(ctx, keys_in, n, dtype, flags, fn);
    if (st != WARPSORT_OK) return st;
    const size_t ks = warpsort_dtype_size(dtype);
    if (n > 0 && !keys_out)
        return ws_error(ctx, WARPSORT_NULL_POINTER, "%s: keys_out is NULL with n = %zu", fn, n);
    if ((uintptr_t)keys_out % ks)
        return ws_error(ctx, WARPSORT_MISALIGNED, "%s: keys_out %p not aligned to %zu bytes", fn,
                        keys_out, ks);
    if (n > 0 && ws_overlap(keys_in, n * ks, keys_out, n * ks))
        return ws_error(ctx, WARPSORT_OVERLAP, "%s: keys_in and keys_out overlap (and differ)", fn);
    if (n == 0) return WARPSORT_OK;
    const void *const arrays[2] = {keys_in, keys_out};
    warpsort_backend_t b;
    st = ws_route(ctx, n, arrays, 2, &b);
    if (st != WARPSORT_OK) return st;
    /* Keys alone are never distinguishable when equal: stable changes nothing. */
    flags &= ~(unsigned)WARPSORT_STABLE;
#ifdef WARPSORT_HAVE_CUDA
    if (b == WARPSORT_BACKEND_CUDA)
        return ws_cuda_sort_copy(ctx, keys_in, keys_out, n, dtype, flags);
#endif
    return ws_cpu_sort_copy(ctx, keys_in, keys_out, n, dtype, flags);
}

warpsort_status_t warpsort_sort_pairs(warpsort_context_t *ctx, void *keys, void *values, size_t n,
                                      warpsort_dtype_t dtype, size_t value_bytes, unsigned flags) {
    static const char fn[] = "warpsort_sort_pairs";
    if (!ctx) return WARPSORT_INVALID_ARGUMENT;
    ctx->last_error[0] = '\0';
    warpsort_status_t st = ws_check_keys(ctx, keys, n, dtype, flags, fn);
    if (st == WARPSORT_OK)
        st = ws_check_second(ctx, keys, values, n, dtype, value_bytes, "values", fn);
    if (st != WARPSORT_OK || n < 2) return st;
    return ws_dispatch_sort_pairs(ctx, keys, values, n, dtype, value_bytes, flags);
}

warpsort_status_t warpsort_argsort(warpsort_context_t *ctx, const void *keys, void *indices,
                                   size_t n, warpsort_dtype_t dtype, size_t index_bytes,
                                   unsigned flags) {
    static const char fn[] = "warpsort_argsort";
    if (!ctx) return WARPSORT_INVALID_ARGUMENT;
    ctx->last_error[0] = '\0';
    warpsort_status_t st = ws_check_keys(ctx, keys, n, dtype, flags, fn);
    if (st == WARPSORT_OK)
        st = ws_check_second(ctx, keys, indices, n, dtype, index_bytes, "indices", fn);
    if (st != WARPSORT_OK) return st;
    if (index_bytes == 4 && n > (size_t)UINT32_MAX + 1)
        return ws_error(ctx, WARPSORT_INVALID_ARGUMENT,
                        "%s: n = %zu needs 8-byte indices (index_bytes = 4 holds 2^32)", fn, n);
    if (n == 0) return WARPSORT_OK;
    const void *const arrays[2] = {keys, indices};
    warpsort_backend_t b;
    st = ws_route(ctx, n, arrays, 2, &b);
    if (st != WARPSORT_OK) return st;
#ifdef WARPSORT_HAVE_CUDA
    if (b == WARPSORT_BACKEND_CUDA)
        return ws_cuda_argsort(ctx, keys, indices, n, dtype, index_bytes, flags);
#endif
    return ws_cpu_argsort(ctx, keys, indices, n, dtype, index_bytes, flags);
}

warpsort_status_t warpsort_workspace_size(const warpsort_context_t *ctx, size_t n,
                                          warpsort_dtype_t dtype, size_t value_bytes,
                                          unsigned flags, size_t *bytes) {
    if (!ctx || !bytes) return WARPSORT_INVALID_ARGUMENT;
    if (warpsort_dtype_size(dtype) == 0) return WARPSORT_UNSUPPORTED_DTYPE;
    if (value_bytes != 0 && value_bytes != 4 && value_bytes != 8) return WARPSORT_INVALID_ARGUMENT;
    if (flags & ~(unsigned)(WS_KNOWN_FLAGS | WARPSORT_WORKSPACE_ARGSORT))
        return WARPSORT_INVALID_ARGUMENT;
    /* An argsort always writes indices: their size is value_bytes. */
    if ((flags & WARPSORT_WORKSPACE_ARGSORT) && value_bytes == 0) return WARPSORT_INVALID_ARGUMENT;
    if (n > WS_MAX_N) return WARPSORT_INVALID_ARGUMENT;
    *bytes = 0;
#ifdef WARPSORT_HAVE_CUDA
    /* The workspace is for device calls: AUTO resolves here (a caller that
     * sizes a workspace is about to use the GPU). */
    warpsort_status_t st = ws_resolve((warpsort_context_t *)ctx);
    if (st != WARPSORT_OK) return st;
    if (ctx->backend == WARPSORT_BACKEND_CUDA)
        return ws_cuda_workspace_size(ctx, n, dtype, value_bytes, flags, bytes);
#endif
    (void)n; /* the CPU backend keeps host scratch of its own */
    return WARPSORT_OK;
}

warpsort_status_t warpsort_set_workspace(warpsort_context_t *ctx, void *ptr, size_t bytes) {
    if (!ctx) return WARPSORT_INVALID_ARGUMENT;
    ctx->last_error[0] = '\0';
#ifdef WARPSORT_HAVE_CUDA
    warpsort_status_t st = ws_resolve(ctx);
    if (st != WARPSORT_OK) return st;
    if (ctx->backend == WARPSORT_BACKEND_CUDA) return ws_cuda_set_workspace(ctx, ptr, bytes);
#endif
    (void)bytes;
    /* NULL asks for context-managed workspace, which the CPU backend always has. */
    if (!ptr) return WARPSORT_OK;
    return ws_error(ctx, WARPSORT_UNSUPPORTED,
                    "warpsort_set_workspace: the CPU backend has no device workspace");
}
