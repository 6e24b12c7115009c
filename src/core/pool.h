/* pool.h - fork/join and a worker pool: the CPU backend's threads and the
 * GPU pipeline's staging threads. */
#ifndef WARPSORT_CORE_POOL_H
#define WARPSORT_CORE_POOL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Most workers one call uses, whatever cpu_threads says: bounds stack use. */
#define WS_CPU_MAX_THREADS 256u

typedef void (*ws_task_fn)(void *arg, unsigned thread);

/* Runs fn(arg, t) for t = 0 .. nthreads-1 and returns when all are done;
 * nthreads must not exceed WS_CPU_MAX_THREADS (more are not run).
 * Never fails: a worker that cannot be started runs on the calling thread,
 * so callers can rely on every task running once the data is being changed. */
void ws_parallel_run(unsigned nthreads, ws_task_fn fn, void *arg);

/* A pool of workers that outlive one fork/join, for callers that fork many
 * times a second on small work (the GPU pipeline stages 32 MiB slots: a
 * fresh pthread_create per worker per slot cost more than the copy). Owned
 * by whoever creates it (a context), never global. */
typedef struct ws_pool ws_pool;

/* Starts nthreads - 1 waiting workers (the caller is worker 0); NULL when
 * nthreads < 2 or nothing could be allocated or started. */
ws_pool *ws_pool_create(unsigned nthreads);
/* ws_parallel_run on the pool's workers: fn(arg, t) for t = 0 .. nthreads-1,
 * share 0 on the calling thread, shares beyond the pool's size on the
 * calling thread too. p NULL: same as ws_parallel_run. One caller at a time. */
void ws_pool_run(ws_pool *p, unsigned nthreads, ws_task_fn fn, void *arg);
/* Stops and joins the workers; NULL is fine. */
void ws_pool_destroy(ws_pool *p);

/* memcpy with non-temporal (streaming) stores on x86-64: the destination's
 * lines are written without being read into the cache first, which saves
 * a third of the memory traffic of a large copy whose destination is not
 * read again soon (a pinned staging slot the copy engine reads next). Plain
 * memcpy elsewhere and for the unaligned ends. Any sizes and alignments. */
void ws_copy_streaming(void *dst, const void *src, size_t bytes);

/* First index of chunk t when [0, n) is cut into nthreads near-equal chunks. */
static inline size_t ws_chunk_begin(size_t n, unsigned nthreads, unsigned t) {
    size_t q = n / nthreads, r = n % nthreads;
    return q * t + (t < r ? t : r);
}

#ifdef __cplusplus
}
#endif

#endif /* WARPSORT_CORE_POOL_H */
