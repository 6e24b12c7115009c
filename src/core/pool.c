/* pool.c - fork/join over pthreads. ws_parallel_run starts a fresh
 * set of threads per phase: a phase of a CPU sort moves megabytes, so the
 * tens of microseconds a pthread_create costs are noise. ws_pool keeps its
 * workers for callers that fork thousands of times (the GPU pipeline's
 * staging copies); a pool belongs to a context, never to the process (the
 * API promises no global mutable state). ws_copy_streaming is those
 * staging copies' inner loop. */
#define _POSIX_C_SOURCE 200809L
#include "core/pool.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) || defined(_M_X64)
#include <emmintrin.h>
#define WS_HAVE_SSE2_STREAM 1
#endif

void ws_copy_streaming(void *dst, const void *src, size_t bytes) {
#if WS_HAVE_SSE2_STREAM
    unsigned char *d = dst;
    const unsigned char *s = src;
    size_t head = (64 - ((uintptr_t)d & 63)) & 63;
    if (head > bytes) head = bytes;
    memcpy(d, s, head);
    d += head, s += head, bytes -= head;
    const size_t body = bytes & ~(size_t)63;
    for (size_t i = 0; i < body; i += 64) { /* a whole line per step: write-combined */
        const __m128i a = _mm_loadu_si128((const __m128i *)(s + i));
        const __m128i b = _mm_loadu_si128((const __m128i *)(s + i + 16));
        const __m128i c = _mm_loadu_si128((const __m128i *)(s + i + 32));
        const __m128i e = _mm_loadu_si128((const __m128i *)(s + i + 48));
        _mm_stream_si128((__m128i *)(d + i), a);
        _mm_stream_si128((__m128i *)(d + i + 16), b);
        _mm_stream_si128((__m128i *)(d + i + 32), c);
        _mm_stream_si128((__m128i *)(d + i + 48), e);
    }
    _mm_sfence(); /* streaming stores are weakly ordered: visible before we return */
    memcpy(d + body, s + body, bytes - body);
#else
    memcpy(dst, src, bytes);
#endif
}

struct ws_worker {
    ws_task_fn fn;
    void *arg;
    unsigned thread;
};

static void *ws_worker_main(void *p) {
    struct ws_worker *w = p;
    w->fn(w->arg, w->thread);
    return NULL;
}

void ws_parallel_run(unsigned nthreads, ws_task_fn fn, void *arg) {
    if (nthreads > WS_CPU_MAX_THREADS) nthreads = WS_CPU_MAX_THREADS;
    if (nthreads <= 1) {
        fn(arg, 0);
        return;
    }
    pthread_t tid[WS_CPU_MAX_THREADS];
    struct ws_worker work[WS_CPU_MAX_THREADS];
    unsigned char started[WS_CPU_MAX_THREADS];
    for (unsigned t = 1; t < nthreads; t++) {
        work[t] = (struct ws_worker){fn, arg, t};
        started[t] = pthread_create(&tid[t], NULL, ws_worker_main, &work[t]) == 0;
        if (!started[t]) fn(arg, t); /* out of threads: do that share here */
    }
    fn(arg, 0);
    for (unsigned t = 1; t < nthreads; t++)
        if (started[t]) pthread_join(tid[t], NULL);
}

struct ws_pool_worker {
    struct ws_pool *pool;
    unsigned thread;
    pthread_t tid;
};

struct ws_pool {
    pthread_mutex_t mu;
    pthread_cond_t work_cv, done_cv;
    unsigned long generation; /* bumped by every ws_pool_run */
    unsigned active;          /* shares 1 .. active-1 go to workers this round */
    unsigned pending;         /* worker shares of this round not finished */
    int quit;
    ws_task_fn fn;
    void *arg;
    unsigned workers; /* started: threads 1 .. workers */
    struct ws_pool_worker w[];
};

static void *ws_pool_main(void *pw) {
    struct ws_pool_worker *me = pw;
    struct ws_pool *p = me->pool;
    unsigned long seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->generation == seen && !p->quit) pthread_cond_wait(&p->work_cv, &p->mu);
        if (p->quit) break;
        seen = p->generation;
        if (me->thread >= p->active) continue;
        ws_task_fn fn = p->fn;
        void *arg = p->arg;
        pthread_mutex_unlock(&p->mu);
        fn(arg, me->thread);
        pthread_mutex_lock(&p->mu);
        if (--p->pending == 0) pthread_cond_signal(&p->done_cv);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

ws_pool *ws_pool_create(unsigned nthreads) {
    if (nthreads > WS_CPU_MAX_THREADS) nthreads = WS_CPU_MAX_THREADS;
    if (nthreads < 2) return NULL;
    struct ws_pool *p = calloc(1, sizeof *p + (nthreads - 1) * sizeof p->w[0]);
    if (!p) return NULL;
    if (pthread_mutex_init(&p->mu, NULL) != 0) {
        free(p);
        return NULL;
    }
    if (pthread_cond_init(&p->work_cv, NULL) != 0) {
        pthread_mutex_destroy(&p->mu);
        free(p);
        return NULL;
    }
    if (pthread_cond_init(&p->done_cv, NULL) != 0) {
        pthread_cond_destroy(&p->work_cv);
        pthread_mutex_destroy(&p->mu);
        free(p);
        return NULL;
    }
    for (unsigned t = 1; t < nthreads; t++) {
        p->w[p->workers] = (struct ws_pool_worker){p, t, 0};
        if (pthread_create(&p->w[p->workers].tid, NULL, ws_pool_main, &p->w[p->workers]) != 0)
            break;
        p->workers++;
    }
    if (!p->workers) {
        ws_pool_destroy(p);
        return NULL;
    }
    return p;
}

void ws_pool_run(ws_pool *p, unsigned nthreads, ws_task_fn fn, void *arg) {
    if (!p) {
        ws_parallel_run(nthreads, fn, arg);
        return;
    }
    if (nthreads > WS_CPU_MAX_THREADS) nthreads = WS_CPU_MAX_THREADS;
    if (nthreads <= 1) {
        fn(arg, 0);
        return;
    }
    const unsigned active = nthreads < p->workers + 1 ? nthreads : p->workers + 1;
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->arg = arg;
    p->active = active;
    p->pending = active - 1;
    p->generation++;
    pthread_cond_broadcast(&p->work_cv);
    pthread_mutex_unlock(&p->mu);
    fn(arg, 0);
    for (unsigned t = active; t < nthreads; t++) fn(arg, t); /* more shares than workers */
    pthread_mutex_lock(&p->mu);
    while (p->pending) pthread_cond_wait(&p->done_cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

void ws_pool_destroy(ws_pool *p) {
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->quit = 1;
    pthread_cond_broadcast(&p->work_cv);
    pthread_mutex_unlock(&p->mu);
    for (unsigned i = 0; i < p->workers; i++) pthread_join(p->w[i].tid, NULL);
    pthread_cond_destroy(&p->done_cv);
    pthread_cond_destroy(&p->work_cv);
    pthread_mutex_destroy(&p->mu);
    free(p);
}
