/*
 * out_of_core.cu - host arrays larger than the device budget (pipeline.cu's
 * overview): sorted runs through the in-core path, then output ranges cut
 * at exact ranks and sorted again in core, landing in scratch blocks that
 * are copied into the caller's arrays only at the end.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "pipe.h"

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
    size_t *released;       /* per run: its blocks handed to the free list */
    size_t *ids, *free_ids; /* output block -> block; the unused free blocks */
    size_t *starts;         /* phase 2: the ring of range starts (ws_ooc) */
    unsigned char *read;    /* phase 2: the ring's "read to the end" flags */
    ws_seg *segs;           /* phase 2: each worker's pieces of its range */
};
static void ws_scratch_free(ws_scratch *s) {
    ws_big_free(s->s1k, s->kbytes);
    ws_big_free(s->s1v, s->vbytes);
    ws_big_free(s->spk, s->spkbytes);
    ws_big_free(s->spv, s->spvbytes);
    free(s->released);
    free(s->ids);
    free(s->free_ids);
    free(s->starts);
    free(s->read);
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
 * blocks of B items (a slot of keys), the spare blocks a range may need, the
 * workers and phase 2's ring of range starts (ws_ooc). */
struct ws_ooc_shape {
    size_t run, B, count, s1_blocks, spares, ranges, ring;
    unsigned workers;
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
    s->released = (size_t *)calloc(g->count, sizeof(size_t));
    s->ids = (size_t *)calloc(g->s1_blocks, sizeof(size_t));
    s->free_ids = (size_t *)calloc(g->s1_blocks + g->spares, sizeof(size_t));
    s->starts = (size_t *)calloc(g->ring * g->count, sizeof(size_t));
    s->read = (unsigned char *)calloc(g->ring, 1);
    s->segs = (ws_seg *)calloc((size_t)g->workers * g->count, sizeof(ws_seg));
    if (!s->s1k || (vb && !s->s1v) || (s->spkbytes && !s->spk) || (s->spvbytes && !s->spv) ||
        !s->released || !s->ids || !s->free_ids || !s->starts || !s->read || !s->segs)
        return ws_error(ctx, WARPSORT_OUT_OF_MEMORY,
                        "cannot allocate %zu bytes of host scratch to sort %zu items out of core",
                        s->kbytes + s->vbytes + s->spkbytes + s->spvbytes, n);
    /* The pool comes with the ring; the scratch is always staged. The ring
     * is ctx's as a worker too: a failure names its device. */
    WS_TRY(ws_on_device(ctx, ctx->device, ws_pipe_ring(ctx, p)));
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

/* What the workers share. Phase 1 takes runs from next_run (atomic). Phase 2,
 * under mu: ranges are handed out in order (next_range), each with the cut
 * at its end found from the cut at its start (ws_split_at reads only
 * positions at or past the start, which no range has landed in yet: a block
 * is written only once every range that reads it has been read, below).
 * Ranges are read and land out of order. Range i's start cut lives in slot
 * i % ring of s->starts from when range i - 1 is handed out until every
 * range before i has been read (the watermark passes i); a range is handed
 * out only while that keeps at most `ring` cuts alive.
 *
 * Landing: a range that has been read (its job's before_out hook, called once
 * the device is done with its input) marks itself read; the watermark moves
 * past every read range at its front, and every block of run q below the cut
 * at the watermark goes to the free list (all ranges that read it have been
 * read); then the range takes its output blocks, waiting while too few are
 * free. No range ever waits on a range behind it that is still reading for
 * long: once every range handed out has been read, the watermark is at the
 * next range, at most count + 1 blocks of S1 below it are still held (a part
 * read block per run, the array's last short block) and so count + 3 spare
 * blocks leave enough for every waiting range (the one-worker argument of
 * ws_out_of_core_with). If that ever failed, the waiting ranges report it
 * (INTERNAL) instead of waiting for good. */
struct ws_ooc_slot; /* a worker's current range */
struct ws_ooc {
    warpsort_context_t *ctx;
    const ws_job *top;
    ws_ooc_shape g;
    ws_scratch *s;
    ws_runs runs;
    ws_blockmap map;
    size_t next_run; /* phase 1, taken with atomics */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t next_range, watermark; /* ranges handed out; ranges below it all read */
    size_t holding, waiting;      /* ranges handed out and not finished; those waiting to land */
    size_t nfree;                 /* free_ids[0 .. nfree): blocks free to land in */
};
struct ws_ooc_slot {
    ws_ooc *o;
    ws_worker *w;
    size_t range, nsegs, j0, nb;
};

/* Hands range i's blocks of S1 below the watermark's cut to the free list
 * (the array's last block, short when B does not divide n, never: it cannot
 * hold B items). Under mu. */
static void ws_ooc_release(ws_ooc *o) {
    const ws_ooc_shape *g = &o->g;
    ws_scratch *s = o->s;
    const size_t last_short = o->top->n % g->B ? g->s1_blocks - 1 : g->s1_blocks;
    const size_t *cut = s->starts + (o->watermark % g->ring) * g->count;
    for (size_t q = 0; q < g->count; q++)
        for (const size_t done = cut[q] / g->B; s->released[q] < done; s->released[q]++) {
            const size_t id = q * (g->run / g->B) + s->released[q];
            if (id != last_short) s->free_ids[o->nfree++] = id;
        }
}

static void ws_ooc_wake(void *arg) {
    ws_ooc *o = (ws_ooc *)arg;
    pthread_mutex_lock(&o->mu);
    pthread_cond_broadcast(&o->cv);
    pthread_mutex_unlock(&o->mu);
}

static warpsort_status_t ws_ooc_stopped(ws_ooc *o, ws_worker *w) {
    pthread_mutex_unlock(&o->mu);
    return ws_error(w->ctx, WARPSORT_INTERNAL, "out of core: stopped, another worker failed");
}

/* The next range for worker sl->w: its cuts and pieces of every run (in
 * s->segs, the worker's share); *got 0 when none is left. */
static warpsort_status_t ws_ooc_take(ws_ooc *o, ws_ooc_slot *sl, int *got) {
    const ws_ooc_shape *g = &o->g;
    ws_scratch *s = o->s;
    const size_t kb = o->top->kb, vb = o->top->vb, n = o->top->n;
    *got = 0;
    /* Traced: the mutex (another worker may be splitting) and the ring. */
    const double t_take = ws_trace_now(sl->w->p);
    pthread_mutex_lock(&o->mu);
    while (!ws_workers_stopped(sl->w->ctx) && o->next_range < g->ranges &&
           o->next_range + 1 - o->watermark >= g->ring)
        pthread_cond_wait(&o->cv, &o->mu);
    ws_trace_host(sl->w->p, t_take, "host", "wait to take a range");
    if (ws_workers_stopped(sl->w->ctx)) return ws_ooc_stopped(o, sl->w);
    if (o->next_range == g->ranges) {
        pthread_mutex_unlock(&o->mu);
        return WARPSORT_OK;
    }
    const size_t i = o->next_range++, k0 = i * g->run, k1 = n - k0 < g->run ? n : k0 + g->run;
    const size_t *from = s->starts + (i % g->ring) * g->count;
    size_t *to = s->starts + ((i + 1) % g->ring) * g->count;
    const double t0 = ws_trace_now(sl->w->p);
    ws_split_at(&o->runs, k1, from, to);
    ws_trace_host(sl->w->p, t0, "phase", "split the runs");
    ws_seg *segs = s->segs + (size_t)sl->w->index * g->count;
    sl->nsegs = 0;
    for (size_t q = 0; q < g->count; q++)
        if (to[q] > from[q]) {
            const size_t at = q * g->run + from[q];
            segs[sl->nsegs++] =
                ws_seg{s->s1k + at * kb, vb ? s->s1v + at * vb : NULL, to[q] - from[q]};
        }
    s->read[i % g->ring] = 0;
    o->holding++;
    pthread_mutex_unlock(&o->mu);
    sl->range = i;
    sl->j0 = k0 / g->B;
    sl->nb = (k1 - k0 + g->B - 1) / g->B;
    *got = 1;
    return WARPSORT_OK;
}

/* The range's before_out hook (pipe.h): it has been read; land it. */
static warpsort_status_t ws_ooc_land(void *arg) {
    ws_ooc_slot *sl = (ws_ooc_slot *)arg;
    ws_ooc *o = sl->o;
    const ws_ooc_shape *g = &o->g;
    ws_scratch *s = o->s;
    const double t_land = ws_trace_now(sl->w->p);
    pthread_mutex_lock(&o->mu);
    s->read[sl->range % g->ring] = 1;
    const size_t before = o->watermark;
    while (o->watermark < o->next_range && s->read[o->watermark % g->ring]) o->watermark++;
    if (o->watermark != before) {
        ws_ooc_release(o);
        pthread_cond_broadcast(&o->cv);
    }
    o->waiting++;
    while (o->nfree < sl->nb && !ws_workers_stopped(sl->w->ctx)) {
        if (o->waiting == o->holding) {
            const size_t nfree = o->nfree;
            o->waiting--;
            pthread_mutex_unlock(&o->mu);
            return ws_error(sl->w->ctx, WARPSORT_INTERNAL, "out of core: %zu free blocks for %zu",
                            nfree, sl->nb);
        }
        pthread_cond_wait(&o->cv, &o->mu);
    }
    o->waiting--;
    if (ws_workers_stopped(sl->w->ctx)) return ws_ooc_stopped(o, sl->w);
    for (size_t j = 0; j < sl->nb; j++) s->ids[sl->j0 + j] = s->free_ids[--o->nfree];
    pthread_mutex_unlock(&o->mu);
    ws_trace_host(sl->w->p, t_land, "host", "wait for blocks to land in");
    return WARPSORT_OK;
}

/* Phase 1, one worker: runs taken in turn, each sorted in core into S1. */
static warpsort_status_t ws_ooc_runs(ws_worker *w, void *arg) {
    ws_ooc *o = (ws_ooc *)arg;
    const ws_job *top = o->top;
    const size_t n = top->n, kb = top->kb, vb = top->vb;
    for (;;) {
        const size_t q = __atomic_fetch_add(&o->next_run, 1, __ATOMIC_RELAXED);
        if (q >= o->g.count) return WARPSORT_OK;
        const size_t b = q * o->g.run, m = n - b < o->g.run ? n - b : o->g.run;
        ws_seg seg;
        ws_job sub = ws_job_slice(top, b, m, &seg);
        sub.keys_out = o->s->s1k + b * kb;
        sub.vals_out = vb ? o->s->s1v + b * vb : NULL;
        sub.keys_out_pinned = sub.vals_out_pinned = 0;
        WS_TRY(ws_ooc_sort(w->ctx, w->p, &sub, w->budget, "sorting a run"));
    }
}

/* Phase 2, one worker: ranges of `run` outputs at exact ranks, each
 * gathered from every run, sorted in core and landed (ws_ooc_land). */
static warpsort_status_t ws_ooc_ranges(ws_worker *w, void *arg) {
    ws_ooc *o = (ws_ooc *)arg;
    ws_ooc_slot sl = {o, w, 0, 0, 0, 0};
    for (;;) {
        int got = 0;
        WS_TRY(ws_ooc_take(o, &sl, &got));
        if (!got) return WARPSORT_OK;
        ws_blockmap range_map = o->map;
        range_map.ids = o->s->ids + sl.j0;
        ws_job sub = *o->top;
        sub.segs = o->s->segs + (size_t)w->index * o->g.count;
        sub.nsegs = sl.nsegs;
        sub.n = sl.range + 1 == o->g.ranges ? o->top->n - sl.range * o->g.run : o->g.run;
        sub.keys_in_pinned = sub.vals_in_pinned = 0;
        sub.iota = 0; /* the indices were made in phase 1 */
        sub.keys_out_pinned = sub.vals_out_pinned = 0;
        sub.out_map = &range_map; /* keys_out / vals_out: wanted or not, as the caller's */
        sub.before_out = ws_ooc_land;
        sub.before_out_arg = &sl;
        const warpsort_status_t r = ws_ooc_sort(w->ctx, w->p, &sub, w->budget, "sorting a range");
        pthread_mutex_lock(&o->mu);
        o->holding--;
        pthread_cond_broadcast(&o->cv);
        pthread_mutex_unlock(&o->mu);
        if (r != WARPSORT_OK) return r;
    }
}

/* The longest run every worker can sort in core under its own budget. */
static warpsort_status_t ws_ooc_run_length(warpsort_context_t *ctx, const ws_job *top,
                                           const ws_worker *ws, unsigned count, size_t *run) {
    const size_t n = top->n, kb = top->kb, vb = top->vb;
    *run = n;
    for (unsigned i = 0; i < count; i++) {
        const size_t r = ws_run_items(ws[i].ctx, n, kb, vb, ws[i].budget);
        if (r < WS_OOC_MIN_RUN) {
            const size_t one = ws_job_layout_for(ws[i].ctx, WS_OOC_MIN_RUN, kb, vb, 1).total;
            const size_t most =
                ws_job_layout_for(ws[i].ctx, WS_OOC_MIN_RUN, kb, vb, WS_MAX_PIECES).total;
            char dev[48] = "";
            if (count > 1 || ws[i].ctx != ctx)
                snprintf(dev, sizeof dev, " on CUDA device %d", ws[i].ctx->device);
            return ws_error(ctx, WARPSORT_OUT_OF_MEMORY,
                            "device budget of %zu bytes%s is too small: sorting out of core "
                            "needs at least %zu bytes for this key and value size",
                            ws[i].budget, dev, one > most ? one : most);
        }
        if (r < *run) *run = r;
    }
    return WARPSORT_OK;
}

static warpsort_status_t ws_out_of_core_with(warpsort_context_t *ctx, ws_pipe *p, const ws_job *top,
                                             ws_worker *workers, unsigned count, ws_scratch *s) {
    const size_t n = top->n, kb = top->kb, vb = top->vb;
    ws_ooc_shape g;
    g.workers = count;
    WS_TRY(ws_ooc_run_length(ctx, top, workers, g.workers, &g.run));
    /* Runs (and so ranges) are whole blocks, so every range starts a block. */
    g.B = p->slot_bytes / kb;
    if (g.B > g.run) g.B = g.run;
    g.run -= g.run % g.B;
    g.count = (n + g.run - 1) / g.run;
    g.ranges = g.count;
    g.s1_blocks = (n + g.B - 1) / g.B;
    /* A range's output needs ceil(size / B) blocks; once it has been read,
     * every run has given back all its blocks but at most one partly read,
     * and the array's last block (short when B does not divide n) is never
     * handed out, so count + 3 spare blocks always suffice: with one worker
     * each range lands right after it has been read; with several, once all
     * ranges handed out have been read (ws_ooc). */
    g.spares = g.count + 3;
    /* Range starts alive at once: one per worker's range and as many again
     * for ranges read ahead of the watermark, plus the next range's. */
    g.ring = 2 * (size_t)g.workers + 2;
    WS_TRY(ws_ooc_scratch(ctx, p, top, &g, s));
    ws_ooc o;
    memset(&o, 0, sizeof o);
    o.ctx = ctx;
    o.top = top;
    o.g = g;
    o.s = s;
    o.runs.keys = s->s1k;
    o.runs.n = n;
    o.runs.run = g.run;
    o.runs.count = g.count;
    o.runs.kb = kb;
    o.runs.kind = ws_dtype_kind((int)top->dtype);
    o.runs.desc = top->desc;
    o.runs.err = cudaSuccess; /* host runs: dev and dev_len NULL (o is zeroed) */
    o.map = ws_blockmap{{s->s1k, s->s1v}, {s->spk, s->spv}, g.s1_blocks, g.B, s->ids};
    for (size_t i = 0; i < g.spares; i++) s->free_ids[o.nfree++] = g.s1_blocks + i;
    if (pthread_mutex_init(&o.mu, NULL) != 0)
        return ws_error(ctx, WARPSORT_OUT_OF_MEMORY, "out of core: cannot make a mutex");
    if (pthread_cond_init(&o.cv, NULL) != 0) {
        pthread_mutex_destroy(&o.mu);
        return ws_error(ctx, WARPSORT_OUT_OF_MEMORY, "out of core: cannot make a condition");
    }
    warpsort_status_t r = ws_workers_run(ctx, ws_ooc_runs, ws_ooc_wake, &o);
    if (r == WARPSORT_OK) r = ws_workers_run(ctx, ws_ooc_ranges, ws_ooc_wake, &o);
    pthread_cond_destroy(&o.cv);
    pthread_mutex_destroy(&o.mu);
    WS_TRY(r);
    /* Final and complete: only now the caller's arrays change. */
    WS_TRY(ws_checkpoint(ctx, "writing the result back"));
    const double t_back = ws_trace_now(p);
    if (top->keys_out) ws_gather(ctx, p, top->keys_out, &o.map, 0, kb, n);
    if (top->vals_out) ws_gather(ctx, p, top->vals_out, &o.map, 1, vb, n);
    ws_trace_host(p, t_back, "phase", "copy back");
    return WARPSORT_OK;
}

warpsort_status_t ws_out_of_core(warpsort_context_t *ctx, ws_pipe *p, const ws_job *top,
                                 ws_worker *workers, unsigned count) {
    ws_scratch s;
    memset(&s, 0, sizeof s);
    warpsort_status_t r = ws_out_of_core_with(ctx, p, top, workers, count, &s);
    ws_scratch_free(&s);
    return r;
}
