/*
 * out_of_core.cu - host arrays larger than the device budget (pipeline.cu's
 * overview): sorted runs through the in-core path, then output ranges cut
 * at exact ranks and sorted again in core, landing in scratch blocks that
 * are copied into the caller's arrays only at the end.
 */
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "core/keybits.h"
#include "pipe.h"

static uint64_t ws_host_key(const unsigned char *keys, size_t i, size_t kb, int kind, int desc) {
    if (kb == 4) {
        uint32_t x;
        memcpy(&x, keys + i * 4, 4);
        return ws_to_ordered32(x, kind, desc);
    }
    uint64_t x;
    memcpy(&x, keys + i * 8, 8);
    return ws_to_ordered64(x, kind, desc);
}

/* The sorted runs in host scratch: run q is items [q * run, ...) of keys. */
struct ws_runs {
    const unsigned char *keys;
    size_t n, run, count, kb;
    int kind, desc;
};
static size_t ws_run_len(const ws_runs *r, size_t q) {
    const size_t b = q * r->run;
    return r->n - b < r->run ? r->n - b : r->run;
}
/* First position of run q from `from` on whose ordered key is > v (upper)
 * or >= v. */
static size_t ws_run_bound(const ws_runs *r, size_t q, uint64_t v, int upper, size_t from) {
    const size_t base = q * r->run;
    size_t lo = from, hi = ws_run_len(r, q);
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        const uint64_t k = ws_host_key(r->keys, base + mid, r->kb, r->kind, r->desc);
        if (upper ? k <= v : k < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}
/* split[q] = how many items of run q are among the first k outputs, in the
 * order (key, run, position), given from[q], the same for fewer outputs.
 * Only positions from from[q] on are read: the blocks before them may hold
 * output by now. Clamping every bound at from[q] changes nothing: keys below
 * the earlier split's key lie inside every run's prefix, and items equal to
 * it that the prefix holds are the first in (run, position) order. */
static void ws_split_at(const ws_runs *r, size_t k, const size_t *from, size_t *split) {
    if (k >= r->n) {
        for (size_t q = 0; q < r->count; q++) split[q] = ws_run_len(r, q);
        return;
    }
    /* The smallest ordered key v with more than k items <= v. */
    uint64_t lo = 0, hi = r->kb == 4 ? 0xFFFFFFFFull : ~0ull;
    while (lo < hi) {
        const uint64_t mid = lo + (hi - lo) / 2;
        size_t upto = 0;
        for (size_t q = 0; q < r->count; q++) upto += ws_run_bound(r, q, mid, 1, from[q]);
        if (upto > k)
            hi = mid;
        else
            lo = mid + 1;
    }
    size_t left = k;
    for (size_t q = 0; q < r->count; q++) {
        split[q] = ws_run_bound(r, q, lo, 0, from[q]);
        left -= split[q]; /* items < v: at most k of them */
    }
    /* Items equal to v, dealt out in run order (stable). */
    for (size_t q = 0; q < r->count && left; q++) {
        const size_t equal = ws_run_bound(r, q, lo, 1, split[q]) - split[q];
        const size_t take = equal < left ? equal : left;
        split[q] += take;
        left -= take;
    }
}

/* Largest run whose workspace fits budget both in one piece and in
 * WS_MAX_PIECES (0 if none does): in eight pieces a run's sort overlaps its
 * copy in, at the price of a run about 4 % shorter (bench/NOTES.md). */
static size_t ws_run_fits(const warpsort_context_t *ctx, size_t m, size_t kb, size_t vb,
                          size_t budget) {
    return ws_job_layout_for(ctx, m, kb, vb, 1).total <= budget &&
           ws_job_layout_for(ctx, m, kb, vb, WS_MAX_PIECES).total <= budget;
}
static size_t ws_run_items(const warpsort_context_t *ctx, size_t n, size_t kb, size_t vb,
                           size_t budget) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo + 1) / 2;
        if (ws_run_fits(ctx, mid, kb, vb, budget))
            lo = mid;
        else
            hi = mid - 1;
    }
    /* The workspace grows with n only roughly (the merge cuts do not):
     * step down until it really fits. */
    while (lo > 0 && !ws_run_fits(ctx, lo, kb, vb, budget)) lo -= lo / 64 + 1;
    return lo;
}

/* Host scratch of the out-of-core sort: tens of GiB written once by the
 * staging threads. Huge pages (madvise: the kernel's default policy is often
 * 'madvise' only) make first-touch faults 512x rarer than with 4 KiB pages,
 * which otherwise dominate the sort (bench/NOTES.md), and the unmap cheap.
 * Elsewhere plain malloc. */
static unsigned char *ws_big_alloc(size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (bytes >= ((size_t)64 << 20)) {
        void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) return NULL;
        (void)madvise(m, bytes, MADV_HUGEPAGE); /* a hint: fine if refused */
        return (unsigned char *)m;
    }
#endif
    return (unsigned char *)malloc(bytes ? bytes : 1);
}
static void ws_big_free(unsigned char *m, size_t bytes) {
    if (!m) return;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (bytes >= ((size_t)64 << 20)) {
        (void)munmap(m, bytes);
        return;
    }
#endif
    free(m);
}

/* Faults the scratch in before the sort writes it, one contiguous share
 * per thread. Measured on the H100 machine (a VM, THP on madvise), 2^32
 * u32 keys: faults taken inside the staging copies (16 threads on
 * neighbouring 2 MiB pieces of each slot, so on the same page-table page
 * and its lock) held the copy-out to 3-11 ms per 32 MiB slot instead of
 * 1 ms; up front in 1 GiB shares the 32 GiB take 0.75 s when the VM has
 * used that memory before (5-6 s the first time: the hypervisor backs it),
 * and faulting 64 MiB steps while waiting for the device was slower. */
struct ws_touch_task {
    unsigned char *m;
    size_t bytes;
    unsigned threads;
};
static void ws_touch_part(void *arg, unsigned t) {
    const ws_touch_task *c = (const ws_touch_task *)arg;
    const size_t b = ws_chunk_begin(c->bytes, c->threads, t);
    const size_t e = ws_chunk_begin(c->bytes, c->threads, t + 1);
    for (size_t i = b; i < e; i += 4096) ((volatile unsigned char *)c->m)[i] = 0;
}
static void ws_prefault(const warpsort_context_t *ctx, ws_pipe *p, unsigned char *m, size_t bytes) {
    if (!m || !bytes) return;
    const unsigned t = ws_host_threads(ctx, ~(size_t)0);
    ws_touch_task c = {m, bytes, t};
    ws_pool_run(p->pool, t, ws_touch_part, &c);
}

struct ws_scratch {
    unsigned char *s1k, *s1v, *spk, *spv; /* S1 and the spare blocks */
    size_t kbytes, vbytes, spkbytes, spvbytes;
    size_t *cur, *next, *released; /* per run */
    size_t *ids, *free_ids;        /* output block -> block; the unused free blocks */
    ws_seg *segs;
};
static void ws_scratch_free(ws_scratch *s) {
    ws_big_free(s->s1k, s->kbytes);
    ws_big_free(s->s1v, s->vbytes);
    ws_big_free(s->spk, s->spkbytes);
    ws_big_free(s->spv, s->spvbytes);
    free(s->cur);
    free(s->next);
    free(s->released);
    free(s->ids);
    free(s->free_ids);
    free(s->segs);
}

/* The final copy: output block j (B items, the last one shorter) from its
 * block into the caller's array, blocks dealt out to the threads. */
struct ws_gather_task {
    unsigned char *dst;
    const ws_blockmap *map;
    int values;
    size_t esize, n, blocks;
    size_t next_block; /* taken with atomics, as in ws_copy_part */
};
static void ws_gather_part(void *arg, unsigned t) {
    (void)t;
    ws_gather_task *g = (ws_gather_task *)arg;
    for (;;) {
        const size_t j = __atomic_fetch_add(&g->next_block, 1, __ATOMIC_RELAXED);
        if (j >= g->blocks) return;
        const size_t first = j * g->map->items;
        const size_t len = g->n - first < g->map->items ? g->n - first : g->map->items;
        ws_copy_streaming(g->dst + first * g->esize,
                          ws_block_at(g->map, g->values, g->map->ids[j], g->esize), len * g->esize);
    }
}
static void ws_gather(const warpsort_context_t *ctx, ws_pipe *p, unsigned char *dst,
                      const ws_blockmap *map, int values, size_t esize, size_t n) {
    const size_t blocks = (n + map->items - 1) / map->items;
    const unsigned t = ws_host_threads(ctx, blocks);
    ws_gather_task g = {dst, map, values, esize, n, blocks, 0};
    ws_pool_run(p->pool, t, ws_gather_part, &g);
}

/* The out-of-core geometry: runs of `run` items (whole blocks), output
 * blocks of B items (a slot of keys), and the spare blocks a range may need. */
struct ws_ooc_shape {
    size_t run, B, count, s1_blocks, spares;
};

/* Host scratch S1 (n items), the spare blocks and the bookkeeping, touched
 * once by the staging threads so the faults are not paid inside a copy. */
static warpsort_status_t ws_ooc_scratch(warpsort_context_t *ctx, ws_pipe *p, const ws_job *top,
                                        const ws_ooc_shape *g, ws_scratch *s) {
    const size_t n = top->n, kb = top->kb, vb = top->vb;
    WS_TRY(ws_checkpoint(ctx, "host scratch"));
    s->kbytes = n * kb;
    s->vbytes = n * vb;
    s->spkbytes = top->keys_out ? g->spares * g->B * kb : 0;
    s->spvbytes = top->vals_out ? g->spares * g->B * vb : 0;
    s->s1k = ws_big_alloc(s->kbytes);
    s->s1v = vb ? ws_big_alloc(s->vbytes) : NULL;
    s->spk = s->spkbytes ? ws_big_alloc(s->spkbytes) : NULL;
    s->spv = s->spvbytes ? ws_big_alloc(s->spvbytes) : NULL;
    s->cur = (size_t *)calloc(g->count, sizeof(size_t));
    s->next = (size_t *)calloc(g->count, sizeof(size_t));
    s->released = (size_t *)calloc(g->count, sizeof(size_t));
    s->ids = (size_t *)calloc(g->s1_blocks, sizeof(size_t));
    s->free_ids = (size_t *)calloc(g->s1_blocks + g->spares, sizeof(size_t));
    s->segs = (ws_seg *)calloc(g->count, sizeof(ws_seg));
    if (!s->s1k || (vb && !s->s1v) || (s->spkbytes && !s->spk) || (s->spvbytes && !s->spv) ||
        !s->cur || !s->next || !s->released || !s->ids || !s->free_ids || !s->segs)
        return ws_error(ctx, WARPSORT_OUT_OF_MEMORY,
                        "cannot allocate %zu bytes of host scratch to sort %zu items out of core",
                        s->kbytes + s->vbytes + s->spkbytes + s->spvbytes, n);
    /* The pool comes with the ring; the scratch is always staged. */
    WS_TRY(ws_pipe_ring(ctx, p));
    const double t_touch = ws_trace_now(p);
    ws_prefault(ctx, p, s->s1k, s->kbytes);
    ws_prefault(ctx, p, s->s1v, s->vbytes);
    ws_prefault(ctx, p, s->spk, s->spkbytes);
    ws_prefault(ctx, p, s->spv, s->spvbytes);
    ws_trace_host(p, t_touch, "phase", "fault the scratch in");
    return WARPSORT_OK;
}

/* Sorts sub (a run or a range) in core under the budget. */
static warpsort_status_t ws_ooc_sort(warpsort_context_t *ctx, ws_pipe *p, const ws_job *sub,
                                     size_t budget, const char *what) {
    const unsigned pieces = ws_pieces_for(ctx, sub->n, sub->kb, sub->vb, p->slot_bytes, budget);
    if (!pieces) return ws_error(ctx, WARPSORT_INTERNAL, "out of core, %s: it does not fit", what);
    WS_TRY(ws_checkpoint(ctx, what));
    const double t0 = ws_trace_now(p);
    WS_TRY(ws_incore(ctx, p, sub, pieces));
    ws_trace_host(p, t0, "phase", what);
    return WARPSORT_OK;
}

/* Phase 1: runs, each sorted in core into S1. */
static warpsort_status_t ws_ooc_runs(warpsort_context_t *ctx, ws_pipe *p, const ws_job *top,
                                     const ws_ooc_shape *g, ws_scratch *s, size_t budget) {
    const size_t n = top->n, kb = top->kb, vb = top->vb;
    for (size_t q = 0; q < g->count; q++) {
        const size_t b = q * g->run, m = n - b < g->run ? n - b : g->run;
        ws_seg seg = {top->segs[0].keys + b * kb,
                      top->iota || !vb ? NULL : top->segs[0].vals + b * vb, m};
        ws_job sub = *top;
        sub.segs = &seg;
        sub.nsegs = 1;
        sub.n = m;
        sub.iota_base = top->iota_base + b;
        sub.keys_out = s->s1k + b * kb;
        sub.vals_out = vb ? s->s1v + b * vb : NULL;
        sub.keys_out_pinned = sub.vals_out_pinned = 0;
        WS_TRY(ws_ooc_sort(ctx, p, &sub, budget, "sorting a run"));
    }
    return WARPSORT_OK;
}

/* Range [k0, k1)'s pieces of every run into s->segs (returns their count);
 * the blocks of S1 the range reads to the end go to the free list: free once
 * its copy in is done, which is before its copy out starts. */
static size_t ws_ooc_gather_range(const ws_job *top, const ws_ooc_shape *g, ws_scratch *s,
                                  size_t *nfree) {
    const size_t kb = top->kb, vb = top->vb;
    const size_t last_short =
        top->n % g->B ? g->s1_blocks - 1 : g->s1_blocks; /* never handed out */
    size_t nsegs = 0;
    for (size_t q = 0; q < g->count; q++) {
        const size_t c = s->next[q] - s->cur[q];
        if (c) {
            const size_t at = q * g->run + s->cur[q];
            s->segs[nsegs++] = ws_seg{s->s1k + at * kb, vb ? s->s1v + at * vb : NULL, c};
        }
        for (const size_t done = s->next[q] / g->B; s->released[q] < done; s->released[q]++) {
            const size_t id = q * (g->run / g->B) + s->released[q];
            if (id != last_short) s->free_ids[(*nfree)++] = id;
        }
    }
    return nsegs;
}

/* Phase 2: ranges of `run` outputs at exact ranks, each gathered from every
 * run and sorted in core into blocks S1 no longer needs (the runs are read
 * front to back) or spare ones. */
static warpsort_status_t ws_ooc_ranges(warpsort_context_t *ctx, ws_pipe *p, const ws_job *top,
                                       const ws_ooc_shape *g, ws_scratch *s, const ws_blockmap *map,
                                       size_t budget) {
    const size_t n = top->n;
    const ws_runs runs = {s->s1k,   n, g->run, g->count, top->kb, ws_dtype_kind((int)top->dtype),
                          top->desc};
    size_t nfree = 0;
    for (size_t i = 0; i < g->spares; i++) s->free_ids[nfree++] = g->s1_blocks + i;
    for (size_t k0 = 0; k0 < n;) {
        const size_t k1 = n - k0 < g->run ? n : k0 + g->run;
        const double t0 = ws_trace_now(p);
        ws_split_at(&runs, k1, s->cur, s->next);
        ws_trace_host(p, t0, "phase", "split the runs");
        const size_t nsegs = ws_ooc_gather_range(top, g, s, &nfree);
        const size_t j0 = k0 / g->B, nb = (k1 - k0 + g->B - 1) / g->B;
        if (nfree < nb)
            return ws_error(ctx, WARPSORT_INTERNAL, "out of core: %zu free blocks for %zu", nfree,
                            nb);
        for (size_t j = 0; j < nb; j++) s->ids[j0 + j] = s->free_ids[--nfree];
        ws_blockmap range_map = *map;
        range_map.ids = s->ids + j0;
        ws_job sub = *top;
        sub.segs = s->segs;
        sub.nsegs = nsegs;
        sub.n = k1 - k0;
        sub.keys_in_pinned = sub.vals_in_pinned = 0;
        sub.iota = 0; /* the indices were made in phase 1 */
        sub.keys_out_pinned = sub.vals_out_pinned = 0;
        sub.out_map = &range_map; /* keys_out / vals_out: wanted or not, as the caller's */
        WS_TRY(ws_ooc_sort(ctx, p, &sub, budget, "sorting a range"));
        size_t *t = s->cur;
        s->cur = s->next;
        s->next = t;
        k0 = k1;
    }
    return WARPSORT_OK;
}

static warpsort_status_t ws_out_of_core_with(warpsort_context_t *ctx, ws_pipe *p, const ws_job *top,
                                             size_t budget, ws_scratch *s) {
    const size_t n = top->n, kb = top->kb, vb = top->vb;
    ws_ooc_shape g;
    g.run = ws_run_items(ctx, n, kb, vb, budget);
    if (g.run < WS_OOC_MIN_RUN) {
        const size_t one = ws_job_layout_for(ctx, WS_OOC_MIN_RUN, kb, vb, 1).total;
        const size_t most = ws_job_layout_for(ctx, WS_OOC_MIN_RUN, kb, vb, WS_MAX_PIECES).total;
        return ws_error(ctx, WARPSORT_OUT_OF_MEMORY,
                        "device budget of %zu bytes is too small: sorting out of core needs at "
                        "least %zu bytes for this key and value size",
                        budget, one > most ? one : most);
    }
    /* Runs (and so ranges) are whole blocks, so every range starts a block. */
    g.B = p->slot_bytes / kb;
    if (g.B > g.run) g.B = g.run;
    g.run -= g.run % g.B;
    g.count = (n + g.run - 1) / g.run;
    g.s1_blocks = (n + g.B - 1) / g.B;
    /* A range's output needs ceil(size / B) blocks; once it has been read,
     * every run has given back all its blocks but at most one partly read,
     * and the array's last block (short when B does not divide n) is never
     * handed out, so count + 3 spare blocks always suffice. */
    g.spares = g.count + 3;
    WS_TRY(ws_ooc_scratch(ctx, p, top, &g, s));
    WS_TRY(ws_ooc_runs(ctx, p, top, &g, s, budget));
    const ws_blockmap map = {{s->s1k, s->s1v}, {s->spk, s->spv}, g.s1_blocks, g.B, s->ids};
    WS_TRY(ws_ooc_ranges(ctx, p, top, &g, s, &map, budget));
    /* Final and complete: only now the caller's arrays change. */
    WS_TRY(ws_checkpoint(ctx, "writing the result back"));
    const double t_back = ws_trace_now(p);
    if (top->keys_out) ws_gather(ctx, p, top->keys_out, &map, 0, kb, n);
    if (top->vals_out) ws_gather(ctx, p, top->vals_out, &map, 1, vb, n);
    ws_trace_host(p, t_back, "phase", "copy back");
    return WARPSORT_OK;
}

warpsort_status_t ws_out_of_core(warpsort_context_t *ctx, ws_pipe *p, const ws_job *top,
                                 size_t budget) {
    ws_scratch s;
    memset(&s, 0, sizeof s);
    warpsort_status_t r = ws_out_of_core_with(ctx, p, top, budget, &s);
    ws_scratch_free(&s);
    return r;
}
