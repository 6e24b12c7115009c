/*
 * staging.cu - host <-> device copies of a job: direct (pinned memory, or
 * small enough for the driver's own staging), or through the pinned ring,
 * slot by slot, host threads copying one slot while the copy engine moves
 * another. The staging copies use streaming stores: they are bound by host
 * memory traffic, and skipping the read of each destination line saves a
 * third of it (bench/NOTES.md).
 */
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "pipe.h"

unsigned char *ws_block_at(const ws_blockmap *m, int values, size_t id, size_t esize) {
    return id < m->s1_blocks ? m->s1[values] + id * m->items * esize
                             : m->spare[values] + (id - m->s1_blocks) * m->items * esize;
}

/* Threads take WS_COPY_STEP-byte steps of a copy from a shared counter
 * rather than one fixed share each: a worker that wakes late or is
 * preempted (16 workers on 16 cores share them with the driver's threads)
 * then delays one step, not the whole slot while the others wait. */
#define WS_COPY_STEP ((size_t)256 << 10)
struct ws_copy_task {
    unsigned char *dst;
    const unsigned char *src;
    size_t bytes;
    size_t next_step; /* taken with atomics */
};
static void ws_copy_part(void *arg, unsigned t) {
    (void)t;
    ws_copy_task *c = (ws_copy_task *)arg;
    for (;;) {
        const size_t b = __atomic_fetch_add(&c->next_step, 1, __ATOMIC_RELAXED) * WS_COPY_STEP;
        if (b >= c->bytes) return;
        const size_t len = c->bytes - b < WS_COPY_STEP ? c->bytes - b : WS_COPY_STEP;
        ws_copy_streaming(c->dst + b, c->src + b, len);
    }
}
/* Host threads for a task of `useful` shares: cpu_threads (while workers on
 * several devices run, this worker's share of them), at most
 * WS_CPU_MAX_THREADS and `useful`, at least 1. */
unsigned ws_host_threads(const warpsort_context_t *ctx, size_t useful) {
    size_t t = ctx->cpu_threads < WS_CPU_MAX_THREADS ? ctx->cpu_threads : WS_CPU_MAX_THREADS;
    const unsigned share = ws_state(ctx)->thread_share;
    if (share && t > share) t = share;
    if (t > useful) t = useful;
    return t < 1 ? 1u : (unsigned)t;
}
/* A copy by up to cpu_threads threads (the pipeline's pool when it has
 * one), one per WS_COPY_GRAIN bytes. */
static void ws_host_copy(const warpsort_context_t *ctx, ws_pipe *p, void *dst, const void *src,
                         size_t bytes) {
    const unsigned t = ws_host_threads(ctx, bytes / WS_COPY_GRAIN);
    ws_copy_task c = {(unsigned char *)dst, (const unsigned char *)src, bytes, 0};
    ws_pool_run(p->pool, t, ws_copy_part, &c);
}
/* Fault a pageable output in before the result is copied into it, one
 * contiguous share per thread: first-touch faults taken inside the
 * staging copies (threads on neighbouring steps of each slot, so on the
 * same page-table page and its lock) make the copy out of a fresh array
 * several times slower (bench/NOTES.md). MADV_POPULATE_WRITE (Linux 5.14)
 * maps the pages writable without writing them, so the caller's bytes stay
 * as they are until the sort has succeeded; elsewhere, or where the kernel
 * refuses it, the faults stay in the copy. */
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
struct ws_populate_task {
    unsigned char *m; /* page-aligned */
    size_t bytes;
    unsigned threads;
};
static void ws_populate_part(void *arg, unsigned t) {
    const ws_populate_task *c = (const ws_populate_task *)arg;
    const size_t page = 4096;
    /* shares of whole pages */
    const size_t pages = c->bytes / page;
    const size_t b = ws_chunk_begin(pages, c->threads, t) * page;
    const size_t e = ws_chunk_begin(pages, c->threads, t + 1) * page;
    if (e > b) (void)madvise(c->m + b, e - b, MADV_POPULATE_WRITE);
}
#endif
void ws_populate_output(const warpsort_context_t *ctx, ws_pipe *p, void *dst, size_t bytes) {
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
    const uintptr_t page = 4096, a = (uintptr_t)dst;
    const uintptr_t lo = (a + page - 1) & ~(page - 1), hi = (a + bytes) & ~(page - 1);
    if (bytes < WS_POPULATE_MIN_BYTES || hi <= lo) return;
    const unsigned t = ws_host_threads(ctx, ~(size_t)0);
    ws_populate_task c = {(unsigned char *)lo, (size_t)(hi - lo), t};
    ws_pool_run(p->pool, t, ws_populate_part, &c);
#else
    (void)ctx;
    (void)p;
    (void)dst;
    (void)bytes;
#endif
}

warpsort_status_t ws_h2d(warpsort_context_t *ctx, ws_pipe *p, unsigned char *dst,
                         const unsigned char *src, size_t bytes, int direct) {
    if (!bytes) return WARPSORT_OK;
    if (direct) {
        const unsigned sp = ws_trace_dev_begin(p, p->in_s);
        WS_CUDA_TRY(ctx, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, p->in_s));
        ws_trace_dev_end(p, sp, p->in_s, "h2d", "copy in");
        return WARPSORT_OK;
    }
    for (size_t off = 0; off < bytes; off += p->slot_bytes) {
        const size_t len = bytes - off < p->slot_bytes ? bytes - off : p->slot_bytes;
        const unsigned s = p->next_slot;
        p->next_slot = (s + 1) % WS_RING_SLOTS;
        unsigned char *slot = p->ring + (size_t)s * p->slot_bytes;
        double t0 = ws_trace_now(p);
        WS_CUDA_TRY(ctx, cudaEventSynchronize(p->slot_ev[s])); /* its last DMA is done */
        ws_trace_host(p, t0, "host", "wait for a slot");
        t0 = ws_trace_now(p);
        ws_host_copy(ctx, p, slot, src + off, len);
        ws_trace_host(p, t0, "host", "stage in");
        const unsigned sp = ws_trace_dev_begin(p, p->h2d);
        WS_CUDA_TRY(ctx, cudaMemcpyAsync(dst + off, slot, len, cudaMemcpyHostToDevice, p->h2d));
        ws_trace_dev_end(p, sp, p->h2d, "h2d", "copy in");
        WS_CUDA_TRY(ctx, cudaEventRecord(p->slot_ev[s], p->h2d));
    }
    return WARPSORT_OK;
}

/* Where byte off of a job's output goes: dst + off, or through the block
 * map; *room is how many bytes from there on stay contiguous. */
static unsigned char *ws_out_at(unsigned char *dst, const ws_blockmap *map, int values,
                                size_t esize, size_t off, size_t *room) {
    if (!map) {
        *room = ~(size_t)0;
        return dst + off;
    }
    const size_t item = off / esize, w = item % map->items;
    *room = (map->items - w) * esize;
    return ws_block_at(map, values, map->ids[item / map->items], esize) + w * esize;
}

/* Device -> host on the d2h stream; through the ring, the DMA into the next
 * WS_RING_SLOTS - 1 slots runs while host threads copy one out. The output
 * is dst, or the blocks of map (values: which array of it; esize: bytes an
 * item). Returns once the bytes are in place. */
warpsort_status_t ws_d2h(warpsort_context_t *ctx, ws_pipe *p, unsigned char *dst,
                         const unsigned char *src, size_t bytes, int direct, const ws_blockmap *map,
                         int values, size_t esize) {
    if (!bytes) return WARPSORT_OK;
    if (direct) {
        for (size_t off = 0, room = 0; off < bytes;) {
            unsigned char *to = ws_out_at(dst, map, values, esize, off, &room);
            const size_t len = bytes - off < room ? bytes - off : room;
            const unsigned sp = ws_trace_dev_begin(p, p->out_s);
            WS_CUDA_TRY(ctx, cudaMemcpyAsync(to, src + off, len, cudaMemcpyDeviceToHost, p->out_s));
            ws_trace_dev_end(p, sp, p->out_s, "d2h", "copy out");
            off += len;
        }
        WS_CUDA_TRY(ctx, cudaStreamSynchronize(p->out_s));
        return WARPSORT_OK;
    }
    /* Chunk i uses slot (next_slot + i) % SLOTS; a chunk ends at a slot's
     * size or where the output stops being contiguous. */
    const size_t slot = p->slot_bytes;
    struct {
        unsigned char *to;
        size_t len;
    } inflight[WS_RING_SLOTS];
    size_t issued = 0, done = 0, issue_off = 0, room = 0;
    while (done < issued || issue_off < bytes) {
        for (; issue_off < bytes && issued < done + WS_RING_SLOTS; issued++) {
            const unsigned s = (unsigned)((p->next_slot + issued) % WS_RING_SLOTS);
            unsigned char *to = ws_out_at(dst, map, values, esize, issue_off, &room);
            size_t len = bytes - issue_off < slot ? bytes - issue_off : slot;
            if (len > room) len = room;
            WS_CUDA_TRY(ctx, cudaEventSynchronize(p->slot_ev[s])); /* chunk issued - SLOTS is out */
            const unsigned sp = ws_trace_dev_begin(p, p->d2h);
            WS_CUDA_TRY(ctx, cudaMemcpyAsync(p->ring + (size_t)s * slot, src + issue_off, len,
                                             cudaMemcpyDeviceToHost, p->d2h));
            ws_trace_dev_end(p, sp, p->d2h, "d2h", "copy out");
            WS_CUDA_TRY(ctx, cudaEventRecord(p->slot_ev[s], p->d2h));
            inflight[issued % WS_RING_SLOTS].to = to;
            inflight[issued % WS_RING_SLOTS].len = len;
            issue_off += len;
        }
        const unsigned s = (unsigned)((p->next_slot + done) % WS_RING_SLOTS);
        double t0 = ws_trace_now(p);
        WS_CUDA_TRY(ctx, cudaEventSynchronize(p->slot_ev[s]));
        ws_trace_host(p, t0, "host", "wait for a slot");
        t0 = ws_trace_now(p);
        ws_host_copy(ctx, p, inflight[done % WS_RING_SLOTS].to, p->ring + (size_t)s * slot,
                     inflight[done % WS_RING_SLOTS].len);
        ws_trace_host(p, t0, "host", "stage out");
        done++;
    }
    p->next_slot = (unsigned)((p->next_slot + issued) % WS_RING_SLOTS);
    return WARPSORT_OK;
}
