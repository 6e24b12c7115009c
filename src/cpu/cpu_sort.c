/*
 * cpu_sort.c - CPU backend: parallel LSD radix sort over ordered key bits.
 *
 * Keys are mapped to ordered unsigned bits (core/keybits.h) as the first pass
 * reads them and mapped back as the last pass writes them, so one integer
 * radix sort serves every dtype and both orders, and the output is exactly a
 * permutation of the input bit patterns.
 *
 * Each pass: every thread counts the digit over its own chunk, offsets are
 * taken bucket-major / thread-minor, every thread scatters its chunk in input
 * order. That makes each pass stable, so the whole sort is stable: STABLE
 * costs nothing and argsort is stable as the API promises.
 *
 * A first pass counts every digit at once (reading the caller's keys, writing
 * at most a copy into scratch); a digit that is the same for all keys (one
 * bucket holds all n) is skipped. All memory is obtained before any key is
 * read, so an allocation failure leaves the caller's arrays untouched and
 * unread, however large n is; after that nothing can fail.
 */
#define _DEFAULT_SOURCE /* madvise(MADV_HUGEPAGE) */
#include "core/internal.h"
#include "core/keybits.h"
#include "core/pool.h"
#include "cpu/cpu_sort.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/*--- tuning ---*/
/* 11-bit digits: 3 passes for 32-bit keys, 6 for 64-bit. With the
 * write-combining scatter the 2048 buckets cost little more per pass than
 * 256 do, so fewer passes win (bench/NOTES.md, "CPU backend"). */
#define WS_DIGIT_BITS 11u
#define WS_BUCKETS (1u << WS_DIGIT_BITS)
#define WS_DIGIT_MASK ((uint64_t)WS_BUCKETS - 1u)
#define WS_MAX_DIGITS ((64u + WS_DIGIT_BITS - 1u) / WS_DIGIT_BITS)
/* Below this, insertion sort (stable, no allocation) beats the radix setup
 * (zeroing and prefixing up to 6 x 2048 counters). */
#define WS_SMALL_N 64u
/* Scatters whose output reaches this go through write-combining lines and
 * non-temporal stores; below it the data stays in cache, where plain stores
 * are as fast or faster (bench/NOTES.md, "CPU backend"). */
#define WS_SWC_MIN_BYTES ((size_t)4 << 20)
/* A thread must get at least this many keys to pay for its creation. */
#define WS_MIN_KEYS_PER_THREAD ((size_t)1 << 16)

struct ws_radix {
    size_t n;
    unsigned nthreads;
    unsigned key_bytes;   /* 4 or 8 */
    unsigned value_bytes; /* 0 (keys only), 4 or 8 */
    int kind, desc;       /* keybits.h conversion of this dtype and order */
    unsigned ndigits;
    size_t *hist;       /* [nthreads][ndigits][WS_BUCKETS]: counts, then offsets */
    struct ws_swc *swc; /* [nthreads] write-combining lines; NULL: plain scatter */
    /* the pass being run */
    const void *src_keys;
    const void *src_values; /* unused when iota */
    void *dst_keys;         /* NULL: keys are not needed after this pass (argsort) */
    void *dst_values;
    unsigned digit;
    int encode;      /* src_keys hold user bits: convert to ordered on read */
    int decode;      /* convert ordered bits back to user bits on write */
    int iota;        /* values are the source index (first argsort pass) */
    void *copy_keys; /* counting also copies the user's keys here (NULL: no) */
};

static size_t *ws_hist(const struct ws_radix *rs, unsigned t, unsigned d) {
    return rs->hist + ((size_t)t * rs->ndigits + d) * WS_BUCKETS;
}

static void ws_chunk(const struct ws_radix *rs, unsigned t, size_t *lo, size_t *hi) {
    *lo = ws_chunk_begin(rs->n, rs->nthreads, t);
    *hi = ws_chunk_begin(rs->n, rs->nthreads, t + 1);
}

/*--- counting ---*/

/* Counts every digit of the user's keys over this thread's chunk (read only). */
static void ws_count_all_task(void *arg, unsigned t) {
    struct ws_radix *rs = arg;
    size_t lo, hi;
    ws_chunk(rs, t, &lo, &hi);
    size_t *restrict h = ws_hist(rs, t, 0);
    memset(h, 0, (size_t)rs->ndigits * WS_BUCKETS * sizeof *h);
    const int kind = rs->kind, desc = rs->desc;
    if (rs->key_bytes == 4) {
        const uint32_t *restrict k = rs->src_keys;
        uint32_t *restrict copy = rs->copy_keys;
        for (size_t i = lo; i < hi; i++) {
            if (copy) copy[i] = k[i];
            uint32_t o = ws_to_ordered32(k[i], kind, desc);
            for (unsigned d = 0; d < (32u + WS_DIGIT_BITS - 1u) / WS_DIGIT_BITS; d++)
                h[d * WS_BUCKETS + ((o >> (d * WS_DIGIT_BITS)) & WS_DIGIT_MASK)]++;
        }
    } else {
        const uint64_t *restrict k = rs->src_keys;
        uint64_t *restrict copy = rs->copy_keys;
        for (size_t i = lo; i < hi; i++) {
            if (copy) copy[i] = k[i];
            uint64_t o = ws_to_ordered64(k[i], kind, desc);
            for (unsigned d = 0; d < WS_MAX_DIGITS; d++)
                h[d * WS_BUCKETS + ((o >> (d * WS_DIGIT_BITS)) & WS_DIGIT_MASK)]++;
        }
    }
}

/* Counts the current digit of already-ordered keys over this thread's chunk. */
static void ws_count_digit_task(void *arg, unsigned t) {
    struct ws_radix *rs = arg;
    size_t lo, hi;
    ws_chunk(rs, t, &lo, &hi);
    size_t *restrict h = ws_hist(rs, t, rs->digit);
    memset(h, 0, WS_BUCKETS * sizeof *h);
    const unsigned shift = rs->digit * WS_DIGIT_BITS;
    if (rs->key_bytes == 4) {
        const uint32_t *restrict k = rs->src_keys;
        for (size_t i = lo; i < hi; i++) h[(k[i] >> shift) & WS_DIGIT_MASK]++;
    } else {
        const uint64_t *restrict k = rs->src_keys;
        for (size_t i = lo; i < hi; i++) h[(k[i] >> shift) & WS_DIGIT_MASK]++;
    }
}

/* Turns the counts of rs->digit into each thread's first output position per
 * bucket: bucket-major, thread-minor, which is what makes the pass stable. */
static void ws_prefix(struct ws_radix *rs) {
    size_t running = 0;
    for (unsigned b = 0; b < WS_BUCKETS; b++) {
        for (unsigned t = 0; t < rs->nthreads; t++) {
            size_t *h = ws_hist(rs, t, rs->digit);
            size_t c = h[b];
            h[b] = running;
            running += c;
        }
    }
}

/* Lists the digits that vary across the keys, least significant first.
 * Reads the whole-array counts of ws_count_all_task. */
static unsigned ws_plan_passes(const struct ws_radix *rs, unsigned *digits) {
    unsigned passes = 0;
    for (unsigned d = 0; d < rs->ndigits; d++) {
        int constant = 0;
        for (unsigned b = 0; b < WS_BUCKETS && !constant; b++) {
            size_t total = 0;
            for (unsigned t = 0; t < rs->nthreads; t++) total += ws_hist(rs, t, d)[b];
            constant = total == rs->n;
        }
        if (!constant) digits[passes++] = d;
    }
    return passes;
}

/*--- scatter ---*/

/* Software write-combining. A scatter into thousands of buckets touches a
 * new cache line every few keys and stalls on the read-for-ownership of
 * each; staging one line per bucket and array and writing full lines with
 * non-temporal stores avoids those reads (bench/NOTES.md, "CPU backend").
 * Lines a thread owns only in part (at the edges of its region of a bucket)
 * are written with plain stores. */
struct ws_swc {
    _Alignas(64) unsigned char key_lines[WS_BUCKETS][64];
    _Alignas(64) unsigned char value_lines[WS_BUCKETS][64];
    size_t region_start[WS_BUCKETS]; /* this thread's first position per bucket */
};

static inline void ws_stream_line(unsigned char *dst, const unsigned char *line) {
#if defined(__SSE2__)
    const __m128i *s = (const __m128i *)(const void *)line;
    __m128i *d = (__m128i *)(void *)dst;
    _mm_stream_si128(d + 0, _mm_load_si128(s + 0));
    _mm_stream_si128(d + 1, _mm_load_si128(s + 1));
    _mm_stream_si128(d + 2, _mm_load_si128(s + 2));
    _mm_stream_si128(d + 3, _mm_load_si128(s + 3));
#else
    memcpy(dst, line, 64);
#endif
}

/* Writes the staged elements of positions [first, last] with plain stores.
 * q: the array's misalignment in elements, so position p sits in slot
 * (p + q) mod (64 / es) of its line. */
static void ws_copy_staged(unsigned char *dst, const unsigned char *line, size_t first, size_t last,
                           size_t q, unsigned es) {
    const size_t slots = 64u / es;
    for (size_t p = first; p <= last; p++)
        memcpy(dst + p * es, line + ((p + q) & (slots - 1)) * es, es);
}

/* Stages element bits for position p of bucket b; writes the line once its
 * last slot is filled. */
static inline __attribute__((always_inline)) void
ws_stage(unsigned char *dst, unsigned char (*lines)[64], const size_t *region_start, size_t b,
         size_t p, size_t q, const unsigned es, uint64_t bits) {
    const unsigned slots = 64u / es;
    const unsigned slot = (unsigned)((p + q) & (slots - 1));
    if (es == 4)
        ((uint32_t *)(void *)lines[b])[slot] = (uint32_t)bits;
    else
        ((uint64_t *)(void *)lines[b])[slot] = bits;
    if (slot == slots - 1) {
        /* the line spans positions p - slot .. p; full if all are this thread's */
        if (p - region_start[b] >= slot)
            ws_stream_line(dst + (p - slot) * es, lines[b]);
        else
            ws_copy_staged(dst, lines[b], region_start[b], p, q, es);
    }
}

/* Writes what is still staged at the end of a thread's scatter. */
static void ws_flush_staged(unsigned char *dst, unsigned char (*lines)[64],
                            const size_t *region_start, const size_t *offs, size_t q, unsigned es) {
    const size_t slots = 64u / es;
    for (size_t b = 0; b < WS_BUCKETS; b++) {
        size_t next = offs[b], start = region_start[b];
        size_t pending = (next + q) & (slots - 1); /* staged positions of the open line */
        if (next == start || pending == 0) continue;
        size_t first = next - start >= pending ? next - pending : start;
        ws_copy_staged(dst, lines[b], first, next - 1, q, es);
    }
}

/* One body for every key width / value width / conversion / store mode; the
 * dispatcher below calls it with constants so each combination compiles to
 * its own branch-free loop. */
static inline __attribute__((always_inline)) void
ws_scatter_impl(const struct ws_radix *rs, struct ws_swc *restrict swc, size_t lo, size_t hi,
                size_t *restrict offs, const unsigned kb, const unsigned vb, const int enc,
                const int dec, const int iota, const int wc) {
    const unsigned shift = rs->digit * WS_DIGIT_BITS;
    const int kind = rs->kind, desc = rs->desc;
    const uint32_t *restrict sk32 = rs->src_keys;
    const uint64_t *restrict sk64 = rs->src_keys;
    uint32_t *restrict dk32 = rs->dst_keys;
    uint64_t *restrict dk64 = rs->dst_keys;
    const uint32_t *restrict sv32 = rs->src_values;
    const uint64_t *restrict sv64 = rs->src_values;
    uint32_t *restrict dv32 = rs->dst_values;
    uint64_t *restrict dv64 = rs->dst_values;
    const int store_keys = rs->dst_keys != NULL;
    const size_t qk = ((uintptr_t)rs->dst_keys & 63u) / kb;
    const size_t qv = vb ? ((uintptr_t)rs->dst_values & 63u) / vb : 0;
    if (wc) memcpy(swc->region_start, offs, sizeof swc->region_start);
    for (size_t i = lo; i < hi; i++) {
        uint64_t raw = kb == 4 ? sk32[i] : sk64[i];
        uint64_t o = !enc      ? raw
                     : kb == 4 ? ws_to_ordered32((uint32_t)raw, kind, desc)
                               : ws_to_ordered64(raw, kind, desc);
        const size_t b = (size_t)((o >> shift) & WS_DIGIT_MASK);
        const size_t p = offs[b]++;
        if (store_keys) {
            /* encode then decode in one pass is the identity: store the raw bits */
            uint64_t out = (enc && dec) ? raw
                           : !dec       ? o
                           : kb == 4    ? ws_from_ordered32((uint32_t)o, kind, desc)
                                        : ws_from_ordered64(o, kind, desc);
            if (wc)
                ws_stage(rs->dst_keys, swc->key_lines, swc->region_start, b, p, qk, kb, out);
            else if (kb == 4)
                dk32[p] = (uint32_t)out;
            else
                dk64[p] = out;
        }
        if (vb) {
            uint64_t v = iota ? (uint64_t)i : vb == 4 ? sv32[i] : sv64[i];
            if (wc)
                ws_stage(rs->dst_values, swc->value_lines, swc->region_start, b, p, qv, vb, v);
            else if (vb == 4)
                dv32[p] = (uint32_t)v;
            else
                dv64[p] = v;
        }
    }
    if (wc) {
        if (store_keys)
            ws_flush_staged(rs->dst_keys, swc->key_lines, swc->region_start, offs, qk, kb);
        if (vb) ws_flush_staged(rs->dst_values, swc->value_lines, swc->region_start, offs, qv, vb);
#if defined(__SSE2__)
        _mm_sfence(); /* non-temporal stores are weakly ordered: publish before joining */
#endif
    }
}

#define WS_SCATTER_WC(KB, VB, ENC, DEC, IOTA)                                   \
    do {                                                                        \
        if (swc)                                                                \
            ws_scatter_impl(rs, swc, lo, hi, offs, KB, VB, ENC, DEC, IOTA, 1);  \
        else                                                                    \
            ws_scatter_impl(rs, NULL, lo, hi, offs, KB, VB, ENC, DEC, IOTA, 0); \
    } while (0)

#define WS_SCATTER_MODES(KB, VB)            \
    do {                                    \
        if (rs->encode && rs->decode)       \
            WS_SCATTER_WC(KB, VB, 1, 1, 0); \
        else if (rs->encode && rs->iota)    \
            WS_SCATTER_WC(KB, VB, 1, 0, 1); \
        else if (rs->iota)                  \
            WS_SCATTER_WC(KB, VB, 0, 0, 1); \
        else if (rs->encode)                \
            WS_SCATTER_WC(KB, VB, 1, 0, 0); \
        else if (rs->decode)                \
            WS_SCATTER_WC(KB, VB, 0, 1, 0); \
        else                                \
            WS_SCATTER_WC(KB, VB, 0, 0, 0); \
    } while (0)

static void ws_scatter_task(void *arg, unsigned t) {
    struct ws_radix *rs = arg;
    size_t lo, hi;
    ws_chunk(rs, t, &lo, &hi);
    size_t *offs = ws_hist(rs, t, rs->digit);
    struct ws_swc *swc = rs->swc ? &rs->swc[t] : NULL;
    if (rs->key_bytes == 4) {
        if (rs->value_bytes == 0)
            WS_SCATTER_MODES(4u, 0u);
        else if (rs->value_bytes == 4)
            WS_SCATTER_MODES(4u, 4u);
        else
            WS_SCATTER_MODES(4u, 8u);
    } else {
        if (rs->value_bytes == 0)
            WS_SCATTER_MODES(8u, 0u);
        else if (rs->value_bytes == 4)
            WS_SCATTER_MODES(8u, 4u);
        else
            WS_SCATTER_MODES(8u, 8u);
    }
}

/* Runs pass p of the sort over digits[p] from src_* to dst_*. The first
 * pass uses the whole-array counts; with one thread those serve every pass
 * (the global histogram of a digit does not depend on the order). Counting
 * the next digit inside the scatter instead of in a read pass gains nothing:
 * the scatter is bound by memory, not by instructions. */
static void ws_run_pass(struct ws_radix *rs, const unsigned *digits, unsigned p) {
    rs->digit = digits[p];
    if (p > 0 && rs->nthreads > 1) ws_parallel_run(rs->nthreads, ws_count_digit_task, rs);
    ws_prefix(rs);
    ws_parallel_run(rs->nthreads, ws_scatter_task, rs);
}

/* Copies this thread's chunk of src_keys / src_values (those not NULL) to
 * dst_keys / dst_values. */
static void ws_copy_task(void *arg, unsigned t) {
    struct ws_radix *rs = arg;
    size_t lo, hi;
    ws_chunk(rs, t, &lo, &hi);
    if (hi == lo) return;
    if (rs->src_keys)
        memcpy((char *)rs->dst_keys + lo * rs->key_bytes,
               (const char *)rs->src_keys + lo * rs->key_bytes, (hi - lo) * rs->key_bytes);
    if (rs->value_bytes && rs->src_values)
        memcpy((char *)rs->dst_values + lo * rs->value_bytes,
               (const char *)rs->src_values + lo * rs->value_bytes, (hi - lo) * rs->value_bytes);
}

/* Writes 0, 1, ..., n-1 as this thread's chunk of dst_values. */
static void ws_iota_task(void *arg, unsigned t) {
    struct ws_radix *rs = arg;
    size_t lo, hi;
    ws_chunk(rs, t, &lo, &hi);
    if (rs->value_bytes == 4) {
        uint32_t *v = rs->dst_values;
        for (size_t i = lo; i < hi; i++) v[i] = (uint32_t)i;
    } else {
        uint64_t *v = rs->dst_values;
        for (size_t i = lo; i < hi; i++) v[i] = (uint64_t)i;
    }
}

/*--- small n: stable insertion sort, no allocation ---*/

/* Element i of an array of 4- or 8-byte words (0 bytes: no array, reads 0
 * and ignores writes, so keys-only calls pass values = NULL, vb = 0). */
static uint64_t ws_get(const void *a, size_t i, unsigned bytes) {
    return bytes == 4 ? ((const uint32_t *)a)[i] : bytes == 8 ? ((const uint64_t *)a)[i] : 0;
}
static void ws_put(void *a, size_t i, unsigned bytes, uint64_t v) {
    if (bytes == 4)
        ((uint32_t *)a)[i] = (uint32_t)v;
    else if (bytes == 8)
        ((uint64_t *)a)[i] = v;
}

static void ws_insertion_sort(void *keys, void *values, size_t n, unsigned kb, unsigned vb,
                              int kind, int desc) {
    for (size_t i = 1; i < n; i++) {
        uint64_t key = ws_get(keys, i, kb), val = ws_get(values, i, vb);
        uint64_t o = ws_load_ordered(keys, i, kb, kind, desc);
        size_t j = i;
        /* strict > keeps equal keys in input order */
        for (; j > 0 && ws_load_ordered(keys, j - 1, kb, kind, desc) > o; j--) {
            ws_put(keys, j, kb, ws_get(keys, j - 1, kb));
            ws_put(values, j, vb, ws_get(values, j - 1, vb));
        }
        ws_put(keys, j, kb, key);
        ws_put(values, j, vb, val);
    }
}

static void ws_insertion_argsort(const void *keys, void *indices, size_t n, unsigned kb,
                                 unsigned ib, int kind, int desc) {
    for (size_t i = 0; i < n; i++) {
        uint64_t o = ws_load_ordered(keys, i, kb, kind, desc);
        size_t j = i;
        for (; j > 0; j--) {
            size_t prev = (size_t)ws_get(indices, j - 1, ib);
            if (ws_load_ordered(keys, prev, kb, kind, desc) <= o) break;
            ws_put(indices, j, ib, prev);
        }
        ws_put(indices, j, ib, i);
    }
}

/*--- entry points ---*/

/* Scratch is written once per pass in one scattered stream per bucket; on large
 * buffers transparent huge pages halve the cost of first touch and spare TLB
 * misses (bench/NOTES.md, "CPU backend"). Where THP is unavailable the hint is
 * ignored. */
#define WS_HUGE_PAGE ((size_t)2 << 20)
static void *ws_scratch_alloc(size_t bytes) {
    if (bytes < 4 * WS_HUGE_PAGE) return malloc(bytes ? bytes : 1);
    void *p = NULL;
    if (posix_memalign(&p, WS_HUGE_PAGE, bytes) != 0) return NULL;
#ifdef MADV_HUGEPAGE
    (void)madvise(p, bytes & ~(WS_HUGE_PAGE - 1), MADV_HUGEPAGE);
#endif
    return p;
}

/* The context keeps its scratch between calls, so a loop of sorts pays for
 * allocation and first touch once (first touch dominates a fresh buffer:
 * bench/NOTES.md, "CPU backend"). It grows on demand and is freed by
 * warpsort_destroy. */
static char *ws_cpu_scratch(warpsort_context_t *ctx, size_t bytes) {
    if (bytes <= ctx->cpu_scratch_bytes) return ctx->cpu_scratch;
    free(ctx->cpu_scratch);
    ctx->cpu_scratch = ws_scratch_alloc(bytes);
    ctx->cpu_scratch_bytes = ctx->cpu_scratch ? bytes : 0;
    return ctx->cpu_scratch;
}

static unsigned ws_threads_for(const warpsort_context_t *ctx, size_t n) {
    size_t useful = n / WS_MIN_KEYS_PER_THREAD;
    unsigned t = ctx->cpu_threads;
    if (t > WS_CPU_MAX_THREADS) t = WS_CPU_MAX_THREADS;
    if ((size_t)t > useful) t = (unsigned)useful;
    return t ? t : 1u;
}

/* Fills the per-call fields of rs: n, sizes, order, digit count. */
static void ws_radix_init(struct ws_radix *rs, size_t n, warpsort_dtype_t dtype,
                          unsigned value_bytes, unsigned flags) {
    memset(rs, 0, sizeof *rs);
    rs->n = n;
    rs->nthreads = 1;
    rs->key_bytes = (unsigned)warpsort_dtype_size(dtype);
    rs->value_bytes = value_bytes;
    rs->kind = ws_dtype_kind(dtype);
    rs->desc = (flags & WARPSORT_DESCENDING) != 0;
    rs->ndigits = (rs->key_bytes * 8u + WS_DIGIT_BITS - 1u) / WS_DIGIT_BITS;
}

static void ws_radix_end(struct ws_radix *rs) {
    free(rs->hist);
    free(rs->swc);
}

/* Sets up rs and allocates its counters and a scratch block of
 * n * scratch_per_key bytes (NULL when n is too large to size). Nothing is
 * read or written on failure, so an OUT_OF_MEMORY leaves the caller's data
 * untouched, however large n is. */
static warpsort_status_t ws_radix_begin(warpsort_context_t *ctx, struct ws_radix *rs, size_t n,
                                        warpsort_dtype_t dtype, unsigned value_bytes,
                                        unsigned flags, size_t scratch_per_key, char **scratch,
                                        const char *fn) {
    ws_radix_init(rs, n, dtype, value_bytes, flags);
    rs->nthreads = ws_threads_for(ctx, n);
    rs->hist = malloc((size_t)rs->nthreads * rs->ndigits * WS_BUCKETS * sizeof *rs->hist);
    *scratch = n <= SIZE_MAX / scratch_per_key ? ws_cpu_scratch(ctx, n * scratch_per_key) : NULL;
    /* n * bytes of one pass, compared without the product (n may be huge) */
    const int use_swc = n >= WS_SWC_MIN_BYTES / (rs->key_bytes + value_bytes);
    void *swc = NULL;
    if (use_swc && posix_memalign(&swc, 64, (size_t)rs->nthreads * sizeof(struct ws_swc)) != 0)
        swc = NULL;
    rs->swc = swc;
    if (!rs->hist || !*scratch || (use_swc && !swc)) {
        ws_radix_end(rs);
        return ws_error(ctx, WARPSORT_OUT_OF_MEMORY,
                        "%s: cannot allocate %zu x %zu bytes of scratch for %zu keys", fn, n,
                        scratch_per_key, n);
    }
    return WARPSORT_OK;
}

/* Counts every digit of keys (read only) and lists the digits to sort on. */
static unsigned ws_count_and_plan(struct ws_radix *rs, const void *keys, unsigned *digits) {
    rs->src_keys = keys;
    ws_parallel_run(rs->nthreads, ws_count_all_task, rs);
    return ws_plan_passes(rs, digits);
}

/* The radix sort of keys (and values, if vb) in place, given rs set up for
 * n >= WS_SMALL_N and n * (kb + vb) bytes of scratch. Cannot fail. */
static void ws_sort_pairs_radix(struct ws_radix *rs, void *keys, void *values, char *scratch) {
    const size_t n = rs->n;
    const unsigned kb = rs->key_bytes, vb = rs->value_bytes;
    /* The wider array goes first so both halves stay aligned. */
    void *scratch_keys = kb >= vb ? scratch : scratch + n * (size_t)vb;
    void *scratch_values = !vb ? NULL : kb >= vb ? scratch + n * (size_t)kb : scratch;

    /* The passes ping-pong between the caller's arrays and scratch; an odd
     * count would end in scratch and need a copy back. 32-bit keys have 3
     * digits, so their counting pass also copies the keys to scratch (a
     * write, where copying back is a read and a write); when the count is
     * odd the passes then start from scratch and end in the caller's. */
    if (rs->ndigits & 1) rs->copy_keys = scratch_keys;
    unsigned digits[WS_MAX_DIGITS];
    const unsigned passes = ws_count_and_plan(rs, keys, digits);
    /* passes == 0: every key has the same bits, already sorted (stably). */
    const unsigned start = (passes & 1) && rs->copy_keys ? 1u : 0u;
    if (start && vb) { /* the values go along */
        rs->src_keys = NULL;
        rs->src_values = values;
        rs->dst_values = scratch_values;
        ws_parallel_run(rs->nthreads, ws_copy_task, rs);
    }
    const int identity = rs->kind == 0 && !rs->desc;
    void *buf_keys[2] = {keys, scratch_keys};
    void *buf_values[2] = {values, scratch_values};
    for (unsigned p = 0; p < passes; p++) {
        rs->src_keys = buf_keys[(p + start) & 1];
        rs->src_values = buf_values[(p + start) & 1];
        rs->dst_keys = buf_keys[(p + start + 1) & 1];
        rs->dst_values = buf_values[(p + start + 1) & 1];
        rs->encode = p == 0 && !identity;
        rs->decode = p == passes - 1 && !identity;
        ws_run_pass(rs, digits, p);
    }
    if ((passes + start) & 1) { /* the result is in scratch, already decoded */
        rs->src_keys = scratch_keys;
        rs->src_values = scratch_values;
        rs->dst_keys = keys;
        rs->dst_values = values;
        ws_parallel_run(rs->nthreads, ws_copy_task, rs);
    }
}

/* The radix argsort of keys (read only) into indices, given rs set up for
 * n >= WS_SMALL_N and n * (2 kb + ib) bytes of scratch. Cannot fail. */
static void ws_argsort_radix(struct ws_radix *rs, const void *keys, void *indices, char *scratch) {
    const size_t n = rs->n;
    const unsigned kb = rs->key_bytes, ib = rs->value_bytes;
    /* Ordered keys ping-pong between two scratch buffers (the caller's keys
     * are const); indices between scratch and the caller's array, arranged
     * so the last pass lands in the caller's. */
    const int keys_first = kb >= ib; /* the wider arrays first keep all aligned */
    char *key_area = keys_first ? scratch : scratch + n * (size_t)ib;
    void *key_buf[2] = {key_area, key_area + n * (size_t)kb};
    void *index_buf[2] = {indices, keys_first ? scratch + 2u * n * kb : scratch};

    unsigned digits[WS_MAX_DIGITS];
    const unsigned passes = ws_count_and_plan(rs, keys, digits);
    if (passes == 0) { /* all keys equal: the identity permutation is the stable order */
        rs->dst_values = indices;
        ws_parallel_run(rs->nthreads, ws_iota_task, rs);
    }
    for (unsigned p = 0; p < passes; p++) {
        rs->src_keys = p == 0 ? keys : key_buf[(p - 1) & 1];
        rs->dst_keys = p == passes - 1 ? NULL : key_buf[p & 1]; /* last pass: keys unused */
        rs->src_values = p == 0 ? NULL : index_buf[(passes - p) & 1];
        rs->dst_values = index_buf[(passes - 1 - p) & 1];
        rs->encode = p == 0;
        rs->decode = 0;
        rs->iota = p == 0;
        ws_run_pass(rs, digits, p);
    }
}

warpsort_status_t ws_cpu_sort_pairs(warpsort_context_t *ctx, void *keys, void *values, size_t n,
                                    warpsort_dtype_t dtype, size_t value_bytes, unsigned flags) {
    /* Keys-only sorts come here too: name the call the caller made. */
    const char *fn = values ? "warpsort_sort_pairs (cpu)" : "warpsort_sort (cpu)";
    const unsigned kb = (unsigned)warpsort_dtype_size(dtype);
    const unsigned vb = values ? (unsigned)value_bytes : 0u;
    const int kind = ws_dtype_kind(dtype), desc = (flags & WARPSORT_DESCENDING) != 0;
    if (n < WS_SMALL_N) {
        ws_insertion_sort(keys, values, n, kb, vb, kind, desc);
        return WARPSORT_OK;
    }

    struct ws_radix rs;
    char *scratch;
    warpsort_status_t st =
        ws_radix_begin(ctx, &rs, n, dtype, vb, flags, (size_t)kb + vb, &scratch, fn);
    if (st != WARPSORT_OK) return st;
    ws_sort_pairs_radix(&rs, keys, values, scratch);
    ws_radix_end(&rs);
    return WARPSORT_OK;
}

/* The radix sort of keys_in (read only) into keys_out, given rs set up for
 * n >= WS_SMALL_N and n * kb bytes of scratch. The passes ping-pong between
 * keys_out and scratch, the first reading keys_in and the last writing
 * keys_out, so no pass copies: the out-of-place sort moves no more data
 * than the in-place one (which copies to scratch when the pass count is
 * odd). Cannot fail. */
static void ws_sort_copy_radix(struct ws_radix *rs, const void *keys_in, void *keys_out,
                               char *scratch) {
    unsigned digits[WS_MAX_DIGITS];
    const unsigned passes = ws_count_and_plan(rs, keys_in, digits);
    if (passes == 0) { /* every key has the same bits: the input is the result */
        rs->src_keys = keys_in;
        rs->dst_keys = keys_out;
        ws_parallel_run(rs->nthreads, ws_copy_task, rs);
        return;
    }
    const int identity = rs->kind == 0 && !rs->desc;
    void *buf[2] = {keys_out, scratch}; /* pass p writes buf[(passes - 1 - p) & 1] */
    for (unsigned p = 0; p < passes; p++) {
        rs->src_keys = p == 0 ? keys_in : buf[(passes - p) & 1];
        rs->dst_keys = buf[(passes - 1 - p) & 1];
        rs->encode = p == 0 && !identity;
        rs->decode = p == passes - 1 && !identity;
        ws_run_pass(rs, digits, p);
    }
}

warpsort_status_t ws_cpu_sort_copy(warpsort_context_t *ctx, const void *keys_in, void *keys_out,
                                   size_t n, warpsort_dtype_t dtype, unsigned flags) {
    static const char fn[] = "warpsort_sort_copy (cpu)";
    const unsigned kb = (unsigned)warpsort_dtype_size(dtype);
    if (n < WS_SMALL_N) {
        memcpy(keys_out, keys_in, n * kb);
        ws_insertion_sort(keys_out, NULL, n, kb, 0, ws_dtype_kind(dtype),
                          (flags & WARPSORT_DESCENDING) != 0);
        return WARPSORT_OK;
    }
    struct ws_radix rs;
    char *scratch;
    warpsort_status_t st = ws_radix_begin(ctx, &rs, n, dtype, 0, flags, kb, &scratch, fn);
    if (st != WARPSORT_OK) return st;
    ws_sort_copy_radix(&rs, keys_in, keys_out, scratch);
    ws_radix_end(&rs);
    return WARPSORT_OK;
}

warpsort_status_t ws_cpu_argsort(warpsort_context_t *ctx, const void *keys, void *indices, size_t n,
                                 warpsort_dtype_t dtype, size_t index_bytes, unsigned flags) {
    static const char fn[] = "warpsort_argsort (cpu)";
    const unsigned kb = (unsigned)warpsort_dtype_size(dtype);
    const unsigned ib = (unsigned)index_bytes;
    const int kind = ws_dtype_kind(dtype), desc = (flags & WARPSORT_DESCENDING) != 0;
    if (n < WS_SMALL_N) {
        ws_insertion_argsort(keys, indices, n, kb, ib, kind, desc);
        return WARPSORT_OK;
    }
    struct ws_radix rs;
    char *scratch;
    warpsort_status_t st =
        ws_radix_begin(ctx, &rs, n, dtype, ib, flags, 2u * kb + ib, &scratch, fn);
    if (st != WARPSORT_OK) return st;
    ws_argsort_radix(&rs, keys, indices, scratch);
    ws_radix_end(&rs);
    return WARPSORT_OK;
}

/*--- one array in caller memory (batched rows and segments) ---*/

#define WS_ALIGN64(x) (((x) + 63u) & ~(size_t)63u)

/* Where ws_cpu_sort_in places its parts inside the caller's scratch. */
struct ws_in_layout {
    size_t hist, swc, data, total;
};
static struct ws_in_layout ws_in_layout_for(size_t n, warpsort_dtype_t dtype, unsigned value_bytes,
                                            int argsort, unsigned nthreads) {
    const size_t kb = warpsort_dtype_size(dtype);
    const size_t ndigits = (kb * 8u + WS_DIGIT_BITS - 1u) / WS_DIGIT_BITS;
    const int use_swc = n >= WS_SWC_MIN_BYTES / (kb + value_bytes);
    struct ws_in_layout l;
    l.hist = 0;
    l.swc = WS_ALIGN64(l.hist + (size_t)nthreads * ndigits * WS_BUCKETS * sizeof(size_t));
    l.data = WS_ALIGN64(l.swc + (use_swc ? (size_t)nthreads * sizeof(struct ws_swc) : 0));
    l.total = l.data + n * ((argsort ? 2u : 1u) * kb + value_bytes);
    return l;
}

unsigned ws_cpu_threads_for(const warpsort_context_t *ctx, size_t n) {
    return ws_threads_for(ctx, n);
}

size_t ws_cpu_sort_in_bytes(size_t n, warpsort_dtype_t dtype, unsigned value_bytes, int argsort,
                            unsigned nthreads) {
    return ws_in_layout_for(n, dtype, value_bytes, argsort, nthreads).total;
}

void ws_cpu_sort_in(const void *keys_in, void *keys, void *values, size_t n, warpsort_dtype_t dtype,
                    unsigned value_bytes, unsigned flags, int argsort, unsigned nthreads,
                    void *scratch) {
    const unsigned kb = (unsigned)warpsort_dtype_size(dtype);
    const int kind = ws_dtype_kind(dtype), desc = (flags & WARPSORT_DESCENDING) != 0;
    if (n < WS_SMALL_N) {
        if (argsort)
            ws_insertion_argsort(keys_in, values, n, kb, value_bytes, kind, desc);
        else
            ws_insertion_sort(keys, values, n, kb, value_bytes, kind, desc);
        return;
    }
    if (nthreads < 1) nthreads = 1;
    if (nthreads > WS_CPU_MAX_THREADS) nthreads = WS_CPU_MAX_THREADS;
    const struct ws_in_layout l = ws_in_layout_for(n, dtype, value_bytes, argsort, nthreads);
    struct ws_radix rs;
    ws_radix_init(&rs, n, dtype, value_bytes, flags);
    rs.nthreads = nthreads;
    rs.hist = (size_t *)(void *)((char *)scratch + l.hist);
    rs.swc = l.data > l.swc ? (struct ws_swc *)(void *)((char *)scratch + l.swc) : NULL;
    char *data = (char *)scratch + l.data;
    if (argsort)
        ws_argsort_radix(&rs, keys_in, values, data);
    else
        ws_sort_pairs_radix(&rs, keys, values, data);
}
