/*
 * cpu_topk.c - CPU backend: top-k of an array or of every row.
 *
 * Items are (ordered key, index) pairs compared lexicographically, the key
 * in "smaller is better" orientation (descending bits for the largest), so
 * the lower index wins ties and the order is total. Per row or per chunk a
 * bounded max-heap of the k best seen so far is kept: a key that is not
 * strictly better than the heap's worst is rejected with one compare (the
 * indices only grow, so an equal key always loses), and most keys of an
 * unordered input are (O(n + k log k log(n/k)) expected; O(n log k) for
 * an input that improves all the time). Heap extraction leaves the k
 * survivors sorted best first.
 *
 * Work is spread over the context's threads by rows, or, for one long row,
 * by chunks whose sorted top-k runs are then merged. One long row with a
 * large k (more than an eighth of it) is the stable radix argsort of the
 * whole row (cpu_sort.c) cut at k: linear, and exact in its tie order.
 *
 * All memory is obtained before any output is written, so a failure leaves
 * the outputs untouched.
 */
#include "core/internal.h"
#include "core/keybits.h"
#include "core/pool.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*--- tuning ---*/
/* A thread must get at least this many keys to pay for its start. */
#define WS_TOPK_MIN_KEYS_PER_THREAD ((size_t)1 << 16)
/* One row with k above row_len / WS_TOPK_SORT_RATIO, and at least
 * WS_TOPK_SORT_MIN_N keys, is argsorted whole: the heap would take most
 * keys in at log k each. */
#define WS_TOPK_SORT_RATIO 8u
#define WS_TOPK_SORT_MIN_N ((size_t)1 << 12)

typedef struct ws_titem {
    uint64_t o; /* ordered key bits, smaller is better */
    uint64_t i; /* index in the row */
} ws_titem;

static inline int ws_worse(ws_titem a, ws_titem b) {
    return a.o > b.o || (a.o == b.o && a.i > b.i);
}

/* Restores the max-heap (worst item on top) below pos of h[0, m). */
static void ws_sift_down(ws_titem *h, size_t m, size_t pos) {
    ws_titem x = h[pos];
    for (;;) {
        size_t c = 2 * pos + 1;
        if (c >= m) break;
        if (c + 1 < m && ws_worse(h[c + 1], h[c])) c++;
        if (!ws_worse(h[c], x)) break;
        h[pos] = h[c];
        pos = c;
    }
    h[pos] = x;
}

struct ws_topk_job {
    const ws_topk_args_t *a;
    unsigned kb; /* key bytes */
    int kind;    /* keybits.h kind of the dtype */
    int desc;    /* 1: descending bits (the largest are best) */
    unsigned nthreads;
    ws_titem *heaps; /* [nthreads][k] */
    size_t *run_len; /* chunks of one row: items in each thread's run */
};

/* The m = min(k, hi - lo) best items of row positions [lo, hi) of row
 * (keys of the row from `keys` on), sorted best first into h[0, m). */
static size_t ws_select_range(const struct ws_topk_job *j, const void *keys, size_t lo, size_t hi,
                              ws_titem *h) {
    const size_t k = j->a->k;
    const size_t m = hi - lo < k ? hi - lo : k;
    const int kind = j->kind, desc = j->desc;
    for (size_t x = 0; x < m; x++) {
        h[x].o = ws_load_ordered(keys, lo + x, j->kb, kind, desc);
        h[x].i = lo + x;
    }
    for (size_t x = m / 2; x-- > 0;) ws_sift_down(h, m, x);
    /* Indices only grow: a key equal to the worst's loses its tie. */
    if (j->kb == 4) {
        const uint32_t *restrict kp = keys;
        for (size_t i = lo + m; i < hi; i++) {
            const uint64_t o = ws_to_ordered32(kp[i], kind, desc);
            if (o < h[0].o) {
                h[0].o = o;
                h[0].i = i;
                ws_sift_down(h, m, 0);
            }
        }
    } else {
        const uint64_t *restrict kp = keys;
        for (size_t i = lo + m; i < hi; i++) {
            const uint64_t o = ws_to_ordered64(kp[i], kind, desc);
            if (o < h[0].o) {
                h[0].o = o;
                h[0].i = i;
                ws_sift_down(h, m, 0);
            }
        }
    }
    /* Heap extraction: the worst goes last, leaving h sorted best first. */
    for (size_t end = m; end > 1; end--) {
        ws_titem t = h[0];
        h[0] = h[end - 1];
        h[end - 1] = t;
        ws_sift_down(h, end - 1, 0);
    }
    return m;
}

/* Writes rank r of row `row`: the item's key bits, index and value. */
static void ws_emit(const ws_topk_args_t *a, unsigned kb, size_t row, size_t r, ws_titem it) {
    const size_t src = row * a->row_len + (size_t)it.i, dst = row * a->k + r;
    if (a->out_keys) {
        if (kb == 4)
            ((uint32_t *)a->out_keys)[dst] = ((const uint32_t *)a->keys)[src];
        else
            ((uint64_t *)a->out_keys)[dst] = ((const uint64_t *)a->keys)[src];
    }
    if (a->out_indices) {
        if (a->index_bytes == 4)
            ((uint32_t *)a->out_indices)[dst] = (uint32_t)it.i;
        else
            ((uint64_t *)a->out_indices)[dst] = it.i;
    }
    if (a->out_values) {
        if (a->value_bytes == 4)
            ((uint32_t *)a->out_values)[dst] = ((const uint32_t *)a->values)[src];
        else
            ((uint64_t *)a->out_values)[dst] = ((const uint64_t *)a->values)[src];
    }
}

/* Thread t selects and writes its share of the rows. */
static void ws_rows_task(void *arg, unsigned t) {
    const struct ws_topk_job *j = arg;
    const ws_topk_args_t *a = j->a;
    ws_titem *h = j->heaps + (size_t)t * a->k;
    const size_t first = ws_chunk_begin(a->rows, j->nthreads, t);
    const size_t last = ws_chunk_begin(a->rows, j->nthreads, t + 1);
    for (size_t row = first; row < last; row++) {
        const void *keys = (const char *)a->keys + row * a->row_len * j->kb;
        ws_select_range(j, keys, 0, a->row_len, h);
        for (size_t r = 0; r < a->k; r++) ws_emit(a, j->kb, row, r, h[r]);
    }
}

/* Thread t selects the best of its chunk of the one row into its run. */
static void ws_chunk_task(void *arg, unsigned t) {
    const struct ws_topk_job *j = arg;
    const ws_topk_args_t *a = j->a;
    const size_t lo = ws_chunk_begin(a->row_len, j->nthreads, t);
    const size_t hi = ws_chunk_begin(a->row_len, j->nthreads, t + 1);
    j->run_len[t] = ws_select_range(j, a->keys, lo, hi, j->heaps + (size_t)t * a->k);
}

/* Merges the threads' sorted runs, writing the first k: a min-heap of run
 * heads (heap[] holds run numbers, best head on top). */
static void ws_merge_runs(const struct ws_topk_job *j, unsigned *heap, size_t *pos) {
    const ws_topk_args_t *a = j->a;
    const size_t k = a->k;
    unsigned m = 0;
    for (unsigned t = 0; t < j->nthreads; t++) {
        pos[t] = 0;
        if (j->run_len[t]) heap[m++] = t;
    }
#define WS_HEAD(t) (j->heaps[(size_t)(t)*k + pos[t]])
    /* sift-down of a min-heap of run heads */
#define WS_SIFT(start)                                                                  \
    do {                                                                                \
        unsigned p_ = (start), x_ = heap[p_];                                           \
        for (;;) {                                                                      \
            unsigned c_ = 2 * p_ + 1;                                                   \
            if (c_ >= m) break;                                                         \
            if (c_ + 1 < m && ws_worse(WS_HEAD(heap[c_]), WS_HEAD(heap[c_ + 1]))) c_++; \
            if (!ws_worse(WS_HEAD(x_), WS_HEAD(heap[c_]))) break;                       \
            heap[p_] = heap[c_];                                                        \
            p_ = c_;                                                                    \
        }                                                                               \
        heap[p_] = x_;                                                                  \
    } while (0)
    for (unsigned x = m / 2; x-- > 0;) WS_SIFT(x);
    for (size_t r = 0; r < k; r++) {
        const unsigned t = heap[0];
        ws_emit(a, j->kb, 0, r, WS_HEAD(t));
        if (++pos[t] == j->run_len[t]) heap[0] = heap[--m];
        if (m) WS_SIFT(0);
    }
#undef WS_SIFT
#undef WS_HEAD
}

/* One long row, large k: the stable argsort of the row, cut at k. */
static warpsort_status_t ws_topk_by_argsort(warpsort_context_t *ctx, const ws_topk_args_t *a) {
    const size_t n = a->row_len;
    uint64_t *idx = malloc(n * sizeof *idx);
    if (!idx)
        return ws_error(ctx, WARPSORT_OUT_OF_MEMORY,
                        "warpsort_topk (cpu): cannot allocate %zu bytes of indices",
                        n * sizeof *idx);
    /* Stable in either direction: equal keys keep index order. */
    warpsort_status_t st = ws_cpu_argsort(ctx, a->keys, idx, n, a->dtype, sizeof *idx,
                                          a->smallest ? 0u : WARPSORT_DESCENDING);
    if (st == WARPSORT_OK) {
        const unsigned kb = (unsigned)warpsort_dtype_size(a->dtype);
        for (size_t r = 0; r < a->k; r++) ws_emit(a, kb, 0, r, (ws_titem){0, idx[r]});
    }
    free(idx);
    return st;
}

static unsigned ws_topk_threads(const warpsort_context_t *ctx, size_t n, size_t parts) {
    size_t useful = n / WS_TOPK_MIN_KEYS_PER_THREAD;
    if (useful > parts) useful = parts;
    unsigned t = ctx->cpu_threads;
    if (t > WS_CPU_MAX_THREADS) t = WS_CPU_MAX_THREADS;
    if ((size_t)t > useful) t = (unsigned)useful;
    return t ? t : 1u;
}

warpsort_status_t ws_cpu_topk(warpsort_context_t *ctx, const ws_topk_args_t *a) {
    static const char fn[] = "warpsort_topk (cpu)";
    const size_t n = a->rows * a->row_len;
    if (a->rows == 1 && a->row_len >= WS_TOPK_SORT_MIN_N && a->k > a->row_len / WS_TOPK_SORT_RATIO)
        return ws_topk_by_argsort(ctx, a);

    struct ws_topk_job j;
    j.a = a;
    j.kb = (unsigned)warpsort_dtype_size(a->dtype);
    j.kind = ws_dtype_kind(a->dtype);
    j.desc = !a->smallest;
    /* One row: chunks of it, each long enough to hold k. */
    const size_t parts = a->rows > 1 ? a->rows : a->row_len / a->k;
    j.nthreads = ws_topk_threads(ctx, n, parts);
    j.heaps = NULL;
    j.run_len = NULL;
    unsigned *merge_heap = NULL;
    if (a->k <= SIZE_MAX / sizeof(ws_titem) / j.nthreads)
        j.heaps = malloc((size_t)j.nthreads * a->k * sizeof(ws_titem));
    const int chunked = a->rows == 1 && j.nthreads > 1;
    if (chunked) {
        j.run_len = malloc(2 * (size_t)j.nthreads * sizeof *j.run_len);
        merge_heap = malloc((size_t)j.nthreads * sizeof *merge_heap);
    }
    if (!j.heaps || (chunked && (!j.run_len || !merge_heap))) {
        free(j.heaps);
        free(j.run_len);
        free(merge_heap);
        return ws_error(ctx, WARPSORT_OUT_OF_MEMORY,
                        "%s: cannot allocate %u x %zu items of selection heaps", fn, j.nthreads,
                        a->k);
    }
    if (chunked) {
        ws_parallel_run(j.nthreads, ws_chunk_task, &j);
        ws_merge_runs(&j, merge_heap, j.run_len + j.nthreads);
    } else {
        ws_parallel_run(j.nthreads, ws_rows_task, &j);
    }
    free(j.heaps);
    free(j.run_len);
    free(merge_heap);
    return WARPSORT_OK;
}
