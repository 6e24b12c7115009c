/*
 * cpu_segmented.c - CPU backend: batched rows and segments.
 *
 * Every segment is sorted by the backend's one array sort (cpu_sort.h:
 * insertion sort below 64 items, LSD radix sort above; stable), in memory
 * obtained before any item is touched, so a failure leaves the arrays as
 * they were. Segments below WS_SEG_BIG items are shared out to the workers
 * by item count (worker t takes the segments starting in its 1/T of the
 * array) and each is sorted on its worker's thread; longer ones are sorted
 * one after another with all the workers a single array of their length
 * gets, so a few huge segments do not leave cores idle.
 */
#define _POSIX_C_SOURCE 200809L /* posix_memalign */
#include "core/internal.h"
#include "core/pool.h"
#include "cpu/cpu_sort.h"

#include <stdint.h>
#include <stdlib.h>

/* From this length on a segment is sorted by all workers at once: below it
 * the radix sort gives a thread too little work (cpu_sort.c,
 * WS_MIN_KEYS_PER_THREAD). */
#define WS_SEG_BIG ((size_t)1 << 16)
/* A worker for the small segments must get at least this many items. */
#define WS_SEG_MIN_ITEMS_PER_THREAD ((size_t)1 << 14)

static size_t ws_seg_begin(const ws_seg_call_t *c, size_t s) {
    return c->offsets ? (size_t)c->offsets[s] : s * c->row_len;
}

/* First segment s in [0, S] whose start is >= x (starts do not decrease). */
static size_t ws_seg_first_from(const ws_seg_call_t *c, size_t x) {
    size_t lo = 0, hi = c->num_segments;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ws_seg_begin(c, mid) < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

struct ws_seg_job {
    const ws_seg_call_t *c;
    size_t kb, vb;
    unsigned nthreads;
    char *scratch;
    size_t stride; /* scratch bytes per worker */
};

/* One segment of the call on `threads` threads, in scratch. */
static void ws_seg_sort_one(const struct ws_seg_job *j, size_t b, size_t len, unsigned threads,
                            void *scratch) {
    const ws_seg_call_t *c = j->c;
    /* An argsort of one item still writes its index 0. */
    if (len < 2 && !(c->argsort && len == 1)) return;
    const char *kin = (const char *)c->keys_in + b * j->kb;
    char *k = c->keys ? (char *)c->keys + b * j->kb : NULL;
    char *v = c->values ? (char *)c->values + b * j->vb : NULL;
    ws_cpu_sort_in(kin, k, v, len, c->dtype, (unsigned)j->vb, c->flags, c->argsort, threads,
                   scratch);
}

/* Worker t: the small segments that start in its share of the items. */
static void ws_seg_small_task(void *arg, unsigned t) {
    const struct ws_seg_job *j = arg;
    const ws_seg_call_t *c = j->c;
    const size_t first = ws_seg_first_from(c, ws_chunk_begin(c->n, j->nthreads, t));
    const size_t last = t + 1 == j->nthreads
                            ? c->num_segments
                            : ws_seg_first_from(c, ws_chunk_begin(c->n, j->nthreads, t + 1));
    for (size_t s = first; s < last; s++) {
        const size_t b = ws_seg_begin(c, s), len = ws_seg_begin(c, s + 1) - b;
        if (len < WS_SEG_BIG) ws_seg_sort_one(j, b, len, 1, j->scratch + (size_t)t * j->stride);
    }
}

warpsort_status_t ws_cpu_segmented(warpsort_context_t *ctx, const ws_seg_call_t *c) {
    ws_seg_call_t call = *c;
    if (call.offsets) {
        warpsort_status_t st =
            ws_seg_check_offsets(ctx, call.offsets, call.num_segments, call.n, call.fn);
        if (st != WARPSORT_OK) return st;
    }
    /* One pass over the lengths: the longest small and big segment. */
    size_t max_small = 0, max_big = 0;
    if (call.offsets) {
        for (size_t s = 0; s < call.num_segments; s++) {
            const size_t len = (size_t)(call.offsets[s + 1] - call.offsets[s]);
            if (len < WS_SEG_BIG) {
                if (len > max_small) max_small = len;
            } else if (len > max_big) {
                max_big = len;
            }
        }
    } else if (call.row_len < WS_SEG_BIG) {
        max_small = call.row_len;
    } else {
        max_big = call.row_len;
    }
    if (call.argsort && call.value_bytes == 4 && max_big > (size_t)UINT32_MAX + 1)
        return ws_error(ctx, WARPSORT_INVALID_ARGUMENT,
                        "%s: a segment of %zu items needs 8-byte indices (index_bytes = 4 holds "
                        "2^32)",
                        call.fn, max_big);

    struct ws_seg_job job = {&call, warpsort_dtype_size(call.dtype), call.value_bytes, 1, NULL, 0};
    unsigned threads = ctx->cpu_threads;
    if (threads > WS_CPU_MAX_THREADS) threads = WS_CPU_MAX_THREADS;
    const size_t useful = call.n / WS_SEG_MIN_ITEMS_PER_THREAD;
    if ((size_t)threads > useful) threads = useful ? (unsigned)useful : 1u;
    job.nthreads = threads;
    const unsigned vb = (unsigned)call.value_bytes;
    job.stride =
        (ws_cpu_sort_in_bytes(max_small, call.dtype, vb, call.argsort, 1) + 63u) & ~(size_t)63u;
    const unsigned big_threads = max_big ? ws_cpu_threads_for(ctx, max_big) : 1u;
    const size_t big_bytes =
        max_big ? ws_cpu_sort_in_bytes(max_big, call.dtype, vb, call.argsort, big_threads) : 0;
    /* The small and the big segments run one after the other: one block. */
    size_t bytes = job.stride * threads;
    if (big_bytes > bytes) bytes = big_bytes;
    void *scratch = NULL;
    if (posix_memalign(&scratch, 64, bytes ? bytes : 64) != 0)
        return ws_error(ctx, WARPSORT_OUT_OF_MEMORY,
                        "%s (cpu): cannot allocate %zu bytes of scratch", call.fn, bytes);
    job.scratch = scratch;

    /* Nothing can fail from here on. */
    if (max_small) ws_parallel_run(threads, ws_seg_small_task, &job);
    if (max_big) {
        for (size_t s = 0; s < call.num_segments; s++) {
            const size_t b = ws_seg_begin(&call, s), len = ws_seg_begin(&call, s + 1) - b;
            if (len >= WS_SEG_BIG)
                ws_seg_sort_one(&job, b, len, ws_cpu_threads_for(ctx, len), scratch);
        }
    }
    free(scratch);
    return WARPSORT_OK;
}
