/* cpu_parallel.h - fork/join helper for the CPU backend. */
#ifndef WARPSORT_CPU_PARALLEL_H
#define WARPSORT_CPU_PARALLEL_H

#include <stddef.h>

/* Most workers one call uses, whatever cpu_threads says: bounds stack use. */
#define WS_CPU_MAX_THREADS 256u

typedef void (*ws_task_fn)(void *arg, unsigned thread);

/* Runs fn(arg, t) for t = 0 .. nthreads-1 and returns when all are done;
 * nthreads must not exceed WS_CPU_MAX_THREADS (more are not run).
 * Never fails: a worker that cannot be started runs on the calling thread,
 * so callers can rely on every task running once the data is being changed. */
void ws_parallel_run(unsigned nthreads, ws_task_fn fn, void *arg);

/* First index of chunk t when [0, n) is cut into nthreads near-equal chunks. */
static inline size_t ws_chunk_begin(size_t n, unsigned nthreads, unsigned t) {
    size_t q = n / nthreads, r = n % nthreads;
    return q * t + (t < r ? t : r);
}

#endif /* WARPSORT_CPU_PARALLEL_H */
