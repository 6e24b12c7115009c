/*
 * warpsort.h - sorting networks on NVIDIA GPUs, with a CPU backend.
 *
 * Plain C11 API. No CUDA types appear here: streams are passed as void*.
 *
 *   warpsort_context_t *ctx;
 *   warpsort_config_t cfg = WARPSORT_CONFIG_INIT;   // sets struct_size; backend AUTO
 *   if (warpsort_create(&ctx, &cfg) != WARPSORT_OK) ...
 *   warpsort_sort(ctx, keys, n, WARPSORT_F32, WARPSORT_ASCENDING);
 *   warpsort_destroy(ctx);
 */
#ifndef WARPSORT_H
#define WARPSORT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Public symbols are exported from the shared library; the rest stay hidden. */
#if defined(__GNUC__) || defined(__clang__)
#define WARPSORT_API __attribute__((visibility("default")))
#else
#define WARPSORT_API
#endif

/*======================================================================
 * Version
 *====================================================================*/
/* The one place the version is defined: CMakeLists.txt reads these three lines. */
#define WARPSORT_VERSION_MAJOR 0
#define WARPSORT_VERSION_MINOR 3
#define WARPSORT_VERSION_PATCH 0
/* One comparable code: MAJOR*10000 + MINOR*100 + PATCH. */
#define WARPSORT_VERSION_CODE \
    (WARPSORT_VERSION_MAJOR * 10000 + WARPSORT_VERSION_MINOR * 100 + WARPSORT_VERSION_PATCH)

/* Version of the library actually linked: "MAJOR.MINOR.PATCH". */
WARPSORT_API const char *warpsort_version(void);
/* WARPSORT_VERSION_CODE of the library actually linked. */
WARPSORT_API int warpsort_version_code(void);

/*======================================================================
 * Status codes
 * One list generates the enum, warpsort_status_name() and
 * warpsort_status_string(). Values are explicit and never reused.
 *====================================================================*/
#define WARPSORT_STATUS_LIST(X)                                                       \
    X(OK, 0, "success")                                                               \
    X(INVALID_ARGUMENT, 1, "invalid argument")                                        \
    X(NULL_POINTER, 2, "NULL pointer with a nonzero length")                          \
    X(UNSUPPORTED_DTYPE, 3, "unknown or unsupported data type")                       \
    X(MISALIGNED, 4, "pointer not aligned to its element size")                       \
    X(OVERLAP, 5, "input buffers overlap")                                            \
    X(OUT_OF_MEMORY, 6, "out of memory (host or device workspace)")                   \
    X(BACKEND_UNAVAILABLE, 7, "backend not built or no usable device")                \
    X(WORKSPACE_TOO_SMALL, 8, "caller-provided workspace is too small")               \
    X(CUDA_ERROR, 9, "CUDA runtime error")                                            \
    X(UNSUPPORTED, 10, "operation not supported by this backend for these arguments") \
    X(INTERNAL, 11, "internal error (a broken invariant: please report it)")

/* The X-macro expansion is no statement clang-format can see: */
/* clang-format off */
typedef enum warpsort_status {
#define WARPSORT_X_ENUM_(name, value, text) WARPSORT_##name = value,
    WARPSORT_STATUS_LIST(WARPSORT_X_ENUM_)
#undef WARPSORT_X_ENUM_
    WARPSORT_STATUS_COUNT_ /* sentinel: one past the largest code */
} warpsort_status_t;
/* clang-format on */

/* "WARPSORT_OUT_OF_MEMORY" etc. Unknown codes give "WARPSORT_UNKNOWN_STATUS". */
WARPSORT_API const char *warpsort_status_name(warpsort_status_t status);
/* Fixed human-readable text for a code. Never NULL. */
WARPSORT_API const char *warpsort_status_string(warpsort_status_t status);

/*======================================================================
 * Types
 *====================================================================*/
typedef enum warpsort_dtype {
    WARPSORT_U32 = 0,
    WARPSORT_I32 = 1,
    WARPSORT_F32 = 2,
    WARPSORT_U64 = 3,
    WARPSORT_I64 = 4,
    WARPSORT_F64 = 5,
    WARPSORT_DTYPE_COUNT_
} warpsort_dtype_t;

/* Bytes per element of a dtype (4 or 8), 0 for an unknown dtype. */
WARPSORT_API size_t warpsort_dtype_size(warpsort_dtype_t dtype);
/* "u32", "i32", "f32", "u64", "i64", "f64"; NULL for an unknown dtype. */
WARPSORT_API const char *warpsort_dtype_name(warpsort_dtype_t dtype);
/* Parses a name as above; returns WARPSORT_UNSUPPORTED_DTYPE if unknown. */
WARPSORT_API warpsort_status_t warpsort_dtype_from_name(const char *name, warpsort_dtype_t *dtype);

/* Sort flags, OR-ed together. */
#define WARPSORT_ASCENDING 0u
#define WARPSORT_DESCENDING 1u /* larger keys first (NaNs first for floats) */
#define WARPSORT_STABLE 2u     /* equal keys keep their input order */
/* Only for warpsort_workspace_size(): size the workspace of an argsort
 * (value_bytes is then the index size). */
#define WARPSORT_WORKSPACE_ARGSORT 4u

typedef enum warpsort_backend {
    WARPSORT_BACKEND_AUTO = 0, /* CUDA if built and a device is usable, else CPU */
    WARPSORT_BACKEND_CPU = 1,
    WARPSORT_BACKEND_CUDA = 2
} warpsort_backend_t;

/* Name of a backend: "auto", "cpu", "cuda"; NULL if unknown. */
WARPSORT_API const char *warpsort_backend_name(warpsort_backend_t backend);

/* Context settings. Always start from WARPSORT_CONFIG_INIT, which records
 * the size of the struct the caller was compiled with in struct_size, then
 * set the fields wanted:
 *
 *   warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
 *   cfg.backend = WARPSORT_BACKEND_CPU;
 *
 * Compatibility: fields are only ever appended, never reordered or removed.
 * warpsort_create reads the first struct_size bytes and gives every field
 * past them its WARPSORT_CONFIG_INIT default, so a program compiled against
 * an older header keeps working with a newer library. A struct_size the
 * library does not know (smaller than the first versioned layout, or larger
 * than its own struct: a newer header) is rejected with INVALID_ARGUMENT. */
typedef struct warpsort_config {
    size_t struct_size;         /* sizeof(warpsort_config_t), set by WARPSORT_CONFIG_INIT */
    warpsort_backend_t backend; /* which backend to use */
    int device;                 /* CUDA device ordinal (CUDA backend) */
    void *stream;               /* cudaStream_t to order work on; NULL = the default stream */
    unsigned cpu_threads;       /* CPU backend worker threads; 0 = one per online core */
    /* CUDA backend, host arrays: */
    size_t device_budget_bytes; /* device memory one call on host arrays may use for its
                                   workspace; 0 = the device's free memory. Arrays whose
                                   workspace does not fit are sorted out of core: sorted runs
                                   and key ranges kept in host memory (see "Host arrays"). */
    size_t host_ring_bytes;     /* pinned staging ring for pageable host arrays, allocated on
                                   first use and kept until warpsort_destroy; 0 = 128 MiB
                                   (4 slots of 32 MiB); at least 16 KiB */
    /* CUDA backend, host arrays larger than device's budget: the devices that share the
     * work (see "Host arrays on several GPUs"). device_count 0 = device alone (devices is
     * then ignored); 1 .. WARPSORT_MAX_DEVICES = devices[0 .. device_count), distinct
     * ordinals, copied by warpsort_create; WARPSORT_ALL_DEVICES (devices NULL) = every
     * device present when CUDA is initialised. Everything else (device arrays, host arrays
     * whose workspace fits device's budget, top-k, batched rows and segments) runs on
     * device only. */
    const int *devices;
    int device_count;
    /* New fields go here, at the end, with their default added to
     * WARPSORT_CONFIG_INIT (see src/core/context.c, ws_config_read). */
} warpsort_config_t;

#define WARPSORT_CONFIG_INIT \
    { sizeof(warpsort_config_t), WARPSORT_BACKEND_AUTO, 0, NULL, 0u, 0, 0, NULL, 0 }

/* config.device_count: every CUDA device present (config.devices NULL). */
#define WARPSORT_ALL_DEVICES (-1)
/* The most entries config.devices may list. */
#define WARPSORT_MAX_DEVICES 64

/* Opaque handle. One context may be used by one host thread at a time. */
typedef struct warpsort_context warpsort_context_t;

/*======================================================================
 * Context
 *====================================================================*/

/* Creates a context. config may be NULL (same as WARPSORT_CONFIG_INIT).
 * Returns INVALID_ARGUMENT for an unknown config->struct_size (a config not
 * started from WARPSORT_CONFIG_INIT), an unknown backend, a negative device or
 * a nonzero host_ring_bytes below 16 KiB, and BACKEND_UNAVAILABLE for backend
 * CUDA when the library was built without CUDA or the device is missing or
 * cannot run the library's kernels (built for other architectures); *ctx is
 * NULL on any failure. CUDA asked for by name is initialised here; AUTO
 * initialises it lazily, on the first call that needs the GPU, so a context
 * that only ever sorts small host arrays never creates a CUDA context: AUTO
 * sorts host arrays of fewer than 2,048 items on the CPU, where they take no
 * longer than a round trip to the GPU. Device pointers always go to the GPU.
 * When AUTO finds no usable device it takes the CPU backend for good and
 * says why in warpsort_last_error (after warpsort_get_backend, or after the
 * call that tried).
 * A device list (config devices / device_count) is checked here on every
 * build and backend: a device_count below WARPSORT_ALL_DEVICES or above
 * WARPSORT_MAX_DEVICES, devices NULL with device_count > 0 (NULL_POINTER),
 * devices not NULL with WARPSORT_ALL_DEVICES, a negative or a repeated
 * ordinal give INVALID_ARGUMENT. Where CUDA is initialised (here for backend
 * CUDA, on first use for AUTO), an ordinal with no device behind it gives
 * BACKEND_UNAVAILABLE, as a bad `device` does (AUTO then takes the CPU, with
 * the reason in warpsort_last_error). warpsort_create_error names the bad
 * entry ("devices[2] = 1 repeats devices[0]"). */
WARPSORT_API warpsort_status_t warpsort_create(warpsort_context_t **ctx,
                                               const warpsort_config_t *config);

/* Why the calling thread's last warpsort_create failed ("" after one that
 * succeeded, or before any): the detail that warpsort_last_error gives for
 * the calls of a context, for the call that could not make one. Per thread;
 * valid until that thread's next warpsort_create. Never NULL. */
WARPSORT_API const char *warpsort_create_error(void);

/* Frees the context and its cached workspace. NULL is a no-op. Waits for
 * work the context enqueued to finish first. */
WARPSORT_API void warpsort_destroy(warpsort_context_t *ctx);

/* The backend the context uses for work that can go to the GPU: CUDA or
 * CPU, never AUTO. With AUTO it initialises CUDA if no call has yet (as the
 * first large call would); ctx NULL gives AUTO. */
WARPSORT_API warpsort_backend_t warpsort_get_backend(const warpsort_context_t *ctx);

/* The backend the context's last sorting call ran on (AUTO before the
 * first): with AUTO, small host arrays run on the CPU even when the context
 * uses CUDA for the rest. Never initialises anything. */
WARPSORT_API warpsort_backend_t warpsort_last_backend(const warpsort_context_t *ctx);

/* Detailed message of the last failed call on this context ("" if none);
 * right after warpsort_create, why AUTO took the CPU backend. Valid until
 * the next call on the context. ctx NULL gives a fixed text. */
WARPSORT_API const char *warpsort_last_error(const warpsort_context_t *ctx);

/* Blocks until all work the context enqueued has finished. Returns the
 * first asynchronous error, if any. No-op on the CPU backend. */
WARPSORT_API warpsort_status_t warpsort_synchronize(warpsort_context_t *ctx);

/*======================================================================
 * Sorting
 *
 * Semantics, on every backend:
 *  - The output is a permutation of the input bit patterns.
 *  - Floats: -0.0 sorts before +0.0; NaNs (any sign, any payload) sort
 *    after +inf ascending and before everything descending; distinct NaN
 *    bit patterns have a fixed order among themselves. Two keys are
 *    "equal" only if their bits are identical.
 *  - WARPSORT_DESCENDING reverses the order exactly.
 *  - Not stable unless WARPSORT_STABLE is given (then equal keys keep their
 *    input order, in either direction; argsort is always stable).
 *  - n = 0 and n = 1 are valid; n is size_t end to end (up to SIZE_MAX / 32).
 *  - Pointers must be aligned to their element size. On the CUDA backend
 *    they may be device or host memory: device memory is sorted in place,
 *    asynchronously on the context's stream (call warpsort_synchronize);
 *    host memory is copied in, sorted and copied back before returning.
 *    On the CPU backend they must be host memory.
 *  - On any error the call says why (warpsort_last_error) and the inputs are
 *    left unchanged: arguments are checked and workspace is obtained before
 *    any data is touched. The one exception is an asynchronous CUDA failure
 *    on device memory, reported later by warpsort_synchronize, after which
 *    the device arrays' contents are unspecified.
 *
 * Host arrays (CUDA backend; keys and values both in host memory, pageable
 * or pinned): the call streams them through the device and returns when the
 * result is in place. Pageable memory is staged by cpu_threads host threads
 * through a pinned ring (config host_ring_bytes) while the copy engines move
 * the previous slot; pinned memory is copied directly; large arrays are cut
 * into pieces sorted as they arrive and merged on the device. An array whose
 * workspace exceeds device_budget_bytes (or the free device memory) is sorted
 * out of core: budget-sized runs are sorted on the device into host scratch,
 * then the output is produced range by range (exact rank splits of the runs,
 * so runs of equal keys of any length are fine) into the parts of that
 * scratch already read and a few spare blocks; that needs about n x (key +
 * value size) bytes of host memory plus (runs + 3) x 32 MiB. With a
 * caller-provided workspace (warpsort_set_workspace) the call never goes out
 * of core and fails with WORKSPACE_TOO_SMALL instead. Keys in host memory and
 * values in device memory (or the other way round) are staged whole.
 * Failure safety: nothing is written into the caller's host arrays until the
 * device has finished every sort and merge and reported no error (in core;
 * for arrays sorted in one piece without staging, i.e. up to 4 MiB, or
 * pinned and smaller than one ring slot, the copy back is queued behind
 * the sort on the context's stream instead, and a fault in the sort stops
 * it), or until the
 * complete result sits in host scratch (out of core); a failure before that
 * point (allocation, budget too small, CUDA error) leaves them
 * byte-identical. Only the final copy back itself (a device-to-host copy in
 * core, a host memcpy out of core) runs after that point.
 * Host arrays on several GPUs (config devices / device_count): an array whose
 * workspace does not fit `device`'s budget is sorted by one host thread per
 * listed device, each with its own stream, pinned ring, workspace and device
 * budget (device_budget_bytes applies to each device; 0 = each device's free
 * memory), on its own PCIe link. In core across the devices when every
 * device's equal share fits its budget in several pieces (about twice the
 * share's bytes): each device sorts its share, the shares are cut at exact
 * ranks, each device gathers its part of the output from the others (peer
 * copies; the call enables peer access between the listed devices where
 * they support it) and merges it, and each part is copied out to its place;
 * no host scratch is used. Otherwise out of core: phase 1 hands the runs
 * out to the devices as they come free, phase 2 the ranges, so both phases
 * run on all devices at once; runs are as long as the device with the least
 * room can sort, and the host scratch is that of the one-device path. Either
 * way the failure safety is the one-device path's (the caller's arrays are
 * written only once every device is done; each device other than `device`
 * adds a pinned ring of host_ring_bytes, its workspace and its context, kept
 * until warpsort_destroy); the call fails on the first failure of any
 * device, stops the others at their next piece, and names the device in
 * warpsort_last_error ("CUDA device D: ..."). With any list but `device`
 * alone, every failure that involves a device names it, in core too; only
 * the out-of-core steps on host memory alone (allocating the host scratch,
 * the final copy back) name none. The host staging threads (cpu_threads)
 * are shared out among the devices. Arrays whose workspace fits `device`'s
 * budget stay on `device` alone (one bus crossing each way already).
 * Diagnostics: with the environment variable WARPSORT_TRACE=FILE set, every
 * host-array call appends a timeline of its copies, staging threads, sorts
 * and merges to FILE (CSV; bench/plot.py --timeline draws it).
 *====================================================================*/

/* Sorts n keys of dtype in place. flags: WARPSORT_DESCENDING, WARPSORT_STABLE. */
WARPSORT_API warpsort_status_t warpsort_sort(warpsort_context_t *ctx, void *keys, size_t n,
                                             warpsort_dtype_t dtype, unsigned flags);

/* Sorts n keys of dtype out of place: keys_out receives keys_in sorted.
 * flags as warpsort_sort. keys_in is only read, never written (also on
 * failure), unless keys_in == keys_out, which is warpsort_sort in place;
 * otherwise the two must not overlap (OVERLAP). Both must be aligned to the
 * key size (keys_in may be NULL only with n = 0).
 * The result equals a copy followed by warpsort_sort, without the copy's
 * cost: on host memory the CUDA backend's pipeline stages from keys_in and
 * writes only keys_out (the time of the in-place sort), and the CPU
 * backend's first radix pass reads keys_in. Device memory (CUDA backend):
 * a device-to-device copy on the context's stream, then the in-place sort,
 * asynchronously. One array in host and the other in device memory is
 * accepted (staged as the sorts stage mixed arrays).
 * Failure: keys_in is never written. Argument errors, allocation failures
 * and budget errors leave keys_out unchanged, and so does every error on a
 * host keys_out (written only once the sort has succeeded). A CUDA error on
 * a device keys_out (at launch, or asynchronous and reported later by
 * warpsort_synchronize) leaves its contents unspecified. */
WARPSORT_API warpsort_status_t warpsort_sort_copy(warpsort_context_t *ctx, const void *keys_in,
                                                  void *keys_out, size_t n, warpsort_dtype_t dtype,
                                                  unsigned flags);

/* Sorts keys in place and applies the same permutation to values.
 * value_bytes is 4 or 8. keys and values must not overlap. */
WARPSORT_API warpsort_status_t warpsort_sort_pairs(warpsort_context_t *ctx, void *keys,
                                                   void *values, size_t n,
                                                   warpsort_dtype_t key_dtype, size_t value_bytes,
                                                   unsigned flags);

/* Writes to indices the positions that would sort keys (keys are not
 * modified): keys[indices[0]] <= keys[indices[1]] <= ... Stable.
 * index_bytes is 4 (uint32_t, requires n <= 2^32) or 8 (uint64_t). */
WARPSORT_API warpsort_status_t warpsort_argsort(warpsort_context_t *ctx, const void *keys,
                                                void *indices, size_t n, warpsort_dtype_t key_dtype,
                                                size_t index_bytes, unsigned flags);

/*======================================================================
 * Top-k
 *
 * The k best keys of an array, or of each of `rows` rows of `row_len`
 * keys (row r is keys[r*row_len .. r*row_len+row_len-1]), sorted best
 * first, with their indices (positions inside the array or row).
 *  - Default: the k largest in descending order (as torch.topk);
 *    WARPSORT_TOPK_SMALLEST: the k smallest in ascending order. The order
 *    is the library's (see "Sorting"): NaNs are the largest keys, so the
 *    largest put NaNs first; -0.0 is below +0.0.
 *  - Ties always go to the lower index, so the result is deterministic
 *    and k = n gives the stable sort of the whole array.
 *  - Outputs hold rows * k elements, row r's from r*k on: out_keys (the key
 *    bits), out_indices (index_bytes 4, uint32_t, needs row_len <= 2^32; or
 *    8, uint64_t) and, for the pairs form, out_values (values[idx] of the
 *    same row; value_bytes 4 or 8). Either of out_keys / out_indices may be
 *    NULL, not both; index_bytes is ignored when out_indices is NULL.
 *  - 1 <= k <= row_len, else INVALID_ARGUMENT. rows = 0 or row_len = 0
 *    with rows * row_len = 0 is an empty call (k is then not checked).
 *    Outputs must not overlap each other or the inputs.
 *  - Memory and errors as for the sorts: device or host memory on the CUDA
 *    backend (device outputs are written asynchronously on the context's
 *    stream), host memory on the CPU backend; on any error nothing is
 *    written. With a workspace set (warpsort_set_workspace, sized by
 *    warpsort_topk_workspace_size) a call on device memory neither
 *    allocates nor synchronises with the host: it can be captured in a
 *    CUDA graph.
 *====================================================================*/

/* Top-k flag (its own bit: never a sort flag): the k smallest, ascending. */
#define WARPSORT_TOPK_SMALLEST 0x100u

/* Top-k of one array of n keys. */
WARPSORT_API warpsort_status_t warpsort_topk(warpsort_context_t *ctx, const void *keys, size_t n,
                                             warpsort_dtype_t dtype, size_t k, unsigned flags,
                                             void *out_keys, void *out_indices, size_t index_bytes);

/* Top-k of each row of a rows x row_len matrix (rows * row_len keys). */
WARPSORT_API warpsort_status_t warpsort_topk_rows(warpsort_context_t *ctx, const void *keys,
                                                  size_t rows, size_t row_len,
                                                  warpsort_dtype_t dtype, size_t k, unsigned flags,
                                                  void *out_keys, void *out_indices,
                                                  size_t index_bytes);

/* As warpsort_topk_rows (rows = 1: one array), with a value per key:
 * out_values receives the values of the selected keys. values and
 * out_values may both be NULL (then value_bytes is ignored). */
WARPSORT_API warpsort_status_t warpsort_topk_pairs(warpsort_context_t *ctx, const void *keys,
                                                   const void *values, size_t rows, size_t row_len,
                                                   warpsort_dtype_t dtype, size_t value_bytes,
                                                   size_t k, unsigned flags, void *out_keys,
                                                   void *out_values, void *out_indices,
                                                   size_t index_bytes);

/* Bytes of workspace a top-k call on device memory needs on this context
 * (value_bytes 0 for keys alone). Host arrays are staged through the
 * workspace too: add rows * row_len * (key size + value size) and
 * rows * k * (key size + value size + 8), each rounded up to a multiple of
 * 256. 0 on the CPU backend. Returns a status only (ctx is const). */
WARPSORT_API warpsort_status_t warpsort_topk_workspace_size(const warpsort_context_t *ctx,
                                                            size_t rows, size_t row_len,
                                                            warpsort_dtype_t dtype,
                                                            size_t value_bytes, size_t k,
                                                            size_t *bytes);

/*======================================================================
 * Batched rows and segments
 *
 * Many independent sorts in one call: `rows` consecutive rows of `row_len`
 * items (row r is items r*row_len .. r*row_len+row_len-1), or segments of
 * one array of n items given by num_segments + 1 offsets (segment s is
 * items offsets[s] .. offsets[s+1]-1; an empty segment is legal). Each row
 * or segment is sorted on its own, with the semantics of "Sorting": every
 * dtype, WARPSORT_DESCENDING, WARPSORT_STABLE (the argsort form is always
 * stable), the output a permutation of the input bits. The argsort form
 * writes indices relative to each segment's start (as torch.sort(dim=-1)
 * and numpy.argsort(axis=-1) return them); index_bytes 4 needs every
 * segment to hold at most 2^32 items.
 *
 * Offsets are uint64_t, 8-byte aligned, and must satisfy offsets[0] = 0,
 * offsets[s] <= offsets[s+1], offsets[num_segments] = n. The first index i
 * that breaks one of these rules is "the first bad index": the call returns
 * INVALID_ARGUMENT naming it in warpsort_last_error and writes nothing.
 *  - Offsets in host memory (either backend) are checked on the host
 *    before anything is queued.
 *  - Offsets in device memory (CUDA backend) are checked on the device, by
 *    a kernel that records the first bad index in the workspace; every sort
 *    kernel of the call reads that verdict first and writes nothing if it
 *    is set. Without a caller workspace the call waits for the verdict
 *    (one 8-byte copy, before the sorts are queued) and reports it. With a
 *    caller workspace the call neither waits nor allocates (it can be
 *    captured in a CUDA graph); a bad offset then leaves the data
 *    untouched and is reported by warpsort_segments_check.
 * Memory as for the sorts: device memory is sorted asynchronously on the
 * context's stream; host arrays are copied in whole, sorted and copied back
 * (nothing is written to them unless the sort succeeded). For graph
 * capture use device memory for the arrays and the offsets, and set a
 * workspace of warpsort_segmented_workspace_size bytes.
 *====================================================================*/

/* Sorts each of `rows` rows of row_len keys in place. */
WARPSORT_API warpsort_status_t warpsort_sort_rows(warpsort_context_t *ctx, void *keys, size_t rows,
                                                  size_t row_len, warpsort_dtype_t dtype,
                                                  unsigned flags);
/* As warpsort_sort_rows, values (value_bytes 4 or 8) following their keys. */
WARPSORT_API warpsort_status_t warpsort_sort_rows_pairs(warpsort_context_t *ctx, void *keys,
                                                        void *values, size_t rows, size_t row_len,
                                                        warpsort_dtype_t dtype, size_t value_bytes,
                                                        unsigned flags);
/* Writes each row's argsort (indices 0 .. row_len-1 within the row) to
 * indices; keys are only read. */
WARPSORT_API warpsort_status_t warpsort_argsort_rows(warpsort_context_t *ctx, const void *keys,
                                                     void *indices, size_t rows, size_t row_len,
                                                     warpsort_dtype_t dtype, size_t index_bytes,
                                                     unsigned flags);

/* Sorts each segment of keys[0, n) in place; offsets holds num_segments + 1
 * entries (offsets = {0} with n = 0 for no segment). */
WARPSORT_API warpsort_status_t warpsort_sort_segments(warpsort_context_t *ctx, void *keys, size_t n,
                                                      const uint64_t *offsets, size_t num_segments,
                                                      warpsort_dtype_t dtype, unsigned flags);
/* As warpsort_sort_segments, values (value_bytes 4 or 8) following their keys. */
WARPSORT_API warpsort_status_t warpsort_sort_segments_pairs(
    warpsort_context_t *ctx, void *keys, void *values, size_t n, const uint64_t *offsets,
    size_t num_segments, warpsort_dtype_t dtype, size_t value_bytes, unsigned flags);
/* Segment-local argsort: indices[offsets[s] + j] is the position, relative
 * to offsets[s], of the j-th key of segment s in sorted order. Stable. */
WARPSORT_API warpsort_status_t warpsort_argsort_segments(
    warpsort_context_t *ctx, const void *keys, void *indices, size_t n, const uint64_t *offsets,
    size_t num_segments, warpsort_dtype_t dtype, size_t index_bytes, unsigned flags);

/* Bytes of workspace a batched call on device memory needs: n items in
 * num_segments segments (rows: rows * row_len items in `rows` segments),
 * value_bytes 0 for keys alone; for the argsort forms the index size with
 * WARPSORT_WORKSPACE_ARGSORT in flags. Host arrays are staged through the
 * workspace too: add n * key size, n * value size and, for host offsets,
 * (num_segments + 1) * 8, each rounded up to a multiple of 256. 0 on the
 * CPU backend. Returns a status only (ctx is const). */
WARPSORT_API warpsort_status_t warpsort_segmented_workspace_size(const warpsort_context_t *ctx,
                                                                 size_t n, size_t num_segments,
                                                                 warpsort_dtype_t dtype,
                                                                 size_t value_bytes, unsigned flags,
                                                                 size_t *bytes);

/* Waits for the context's stream, then reports the offsets verdict of the
 * last batched call on device offsets made with a caller workspace:
 * INVALID_ARGUMENT naming the first bad index (that call wrote nothing),
 * else OK. Call it before another call reuses the workspace. OK when there
 * is no such call (and always on the CPU backend). */
WARPSORT_API warpsort_status_t warpsort_segments_check(warpsort_context_t *ctx);

/*======================================================================
 * Advanced: workspace control (CUDA backend)
 * The context caches device workspace and grows it on demand. A caller
 * that forbids allocation on the hot path can ask the size a call needs and
 * hand in its own device buffer; the context then never allocates.
 *====================================================================*/

/* Bytes of workspace a sort of n keys in device memory needs on this
 * context's backend (value_bytes per value, 0 for keys only; for argsort,
 * the index size with WARPSORT_WORKSPACE_ARGSORT in flags). Arrays in host
 * memory are staged through the workspace too: add n * key size (and
 * n * value size) for them, each rounded up to a multiple of 256. 0 on the
 * CPU backend, which keeps host scratch of its own in the context. Returns a
 * status only (the context is const: warpsort_last_error is unchanged). */
WARPSORT_API warpsort_status_t warpsort_workspace_size(const warpsort_context_t *ctx, size_t n,
                                                       warpsort_dtype_t key_dtype,
                                                       size_t value_bytes, unsigned flags,
                                                       size_t *bytes);

/* Uses [ptr, ptr+bytes) (device memory, 256-byte aligned) as the workspace
 * from now on; the caller keeps ownership and must keep it alive while the
 * context may use it. ptr NULL returns to context-managed workspace.
 * A call that needs more than bytes fails with WORKSPACE_TOO_SMALL. On the
 * CPU backend ptr NULL succeeds (there is only its own host scratch) and any
 * other ptr fails with UNSUPPORTED. */
WARPSORT_API warpsort_status_t warpsort_set_workspace(warpsort_context_t *ctx, void *ptr,
                                                      size_t bytes);

#ifdef __cplusplus
}
#endif
#endif /* WARPSORT_H */
