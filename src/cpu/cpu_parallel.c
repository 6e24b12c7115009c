/* cpu_parallel.c - fork/join over pthreads, one fresh set of threads per phase.
 * A phase of a sort that is worth threading moves megabytes, so the tens of
 * microseconds a pthread_create costs are noise, and no pool state outlives
 * the call (the API promises no global mutable state). */
#define _POSIX_C_SOURCE 200809L
#include "cpu/cpu_parallel.h"

#include <pthread.h>

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
