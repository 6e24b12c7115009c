/*
 * ws_nccl_launch - starts N copies of a program as the ranks of one NCCL
 * job on this machine, without MPI:
 *
 *   ws_nccl_launch [-n N] [--timeout S] [--] PROGRAM [ARGS...]
 *
 * Each copy gets WARPSORT_NCCL_RANK (0 .. N-1), WARPSORT_NCCL_NRANKS (N)
 * and WARPSORT_NCCL_ID_FILE, a file in a fresh private folder where rank 0
 * writes the ncclUniqueId and the others read it (tests/nccl/nccl_rank.h);
 * NCCL_NVLS_ENABLE=0 unless already set. A program picks its GPU itself
 * (the tests take device RANK). Output goes straight to the terminal.
 *
 * Exit status: 0 when every rank exits 0; 77 when every rank exits 77
 * (skipped: too few GPUs); 124 on the timeout (default 1800 s); otherwise
 * the first failing rank's status (128 + signal for a signal). When one
 * rank fails the others may wait in NCCL for it forever, so they get
 * SIGTERM (SIGKILL 5 s later).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WL_MAX_RANKS 64

static void wl_usage(void) {
    fprintf(stderr, "usage: ws_nccl_launch [-n N] [--timeout S] [--] PROGRAM [ARGS...]\n"
                    "  starts N ranks (default 2) of PROGRAM; see tests/nccl/ws_nccl_launch.c\n");
}

static double wl_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Signals every rank still running; after `grace` s, SIGKILL. */
static void wl_stop(pid_t *pids, int n, int *alive, double grace) {
    for (int i = 0; i < n; i++)
        if (alive[i]) kill(pids[i], SIGTERM);
    const double until = wl_now() + grace;
    for (;;) {
        int left = 0;
        for (int i = 0; i < n; i++) {
            if (!alive[i]) continue;
            if (waitpid(pids[i], NULL, WNOHANG) == pids[i])
                alive[i] = 0;
            else
                left++;
        }
        if (!left) return;
        if (wl_now() > until) break;
        const struct timespec pause = {0, 50 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    for (int i = 0; i < n; i++)
        if (alive[i]) {
            kill(pids[i], SIGKILL);
            waitpid(pids[i], NULL, 0);
            alive[i] = 0;
        }
}

int main(int argc, char **argv) {
    int n = 2, first = 1;
    double timeout = 1800;
    while (first < argc && argv[first][0] == '-') {
        if (!strcmp(argv[first], "--")) {
            first++;
            break;
        } else if (!strcmp(argv[first], "-n") && first + 1 < argc) {
            n = atoi(argv[first + 1]);
            first += 2;
        } else if (!strcmp(argv[first], "--timeout") && first + 1 < argc) {
            timeout = atof(argv[first + 1]);
            first += 2;
        } else {
            wl_usage();
            return 2;
        }
    }
    if (first >= argc || n < 1 || n > WL_MAX_RANKS || !(timeout > 0)) {
        wl_usage();
        return 2;
    }
    char dir[] = "/tmp/ws_nccl_launch_XXXXXX";
    if (!mkdtemp(dir)) {
        fprintf(stderr, "ws_nccl_launch: mkdtemp: %s\n", strerror(errno));
        return 2;
    }
    char id_file[sizeof dir + 16], nranks[16];
    snprintf(id_file, sizeof id_file, "%s/nccl_id", dir);
    snprintf(nranks, sizeof nranks, "%d", n);
    setenv("NCCL_NVLS_ENABLE", "0", 0);
    setenv("WARPSORT_NCCL_NRANKS", nranks, 1);
    setenv("WARPSORT_NCCL_ID_FILE", id_file, 1);
    fflush(NULL);

    pid_t pids[WL_MAX_RANKS];
    int alive[WL_MAX_RANKS] = {0}, codes[WL_MAX_RANKS];
    int started = 0, status = 0;
    for (int r = 0; r < n; r++) {
        const pid_t pid = fork();
        if (pid < 0) {
            fprintf(stderr, "ws_nccl_launch: fork: %s\n", strerror(errno));
            status = 2;
            break;
        }
        if (pid == 0) {
            char rank[16];
            snprintf(rank, sizeof rank, "%d", r);
            setenv("WARPSORT_NCCL_RANK", rank, 1);
            execvp(argv[first], argv + first);
            fprintf(stderr, "ws_nccl_launch: cannot run %s: %s\n", argv[first], strerror(errno));
            _exit(127);
        }
        pids[r] = pid;
        alive[r] = 1;
        codes[r] = -1;
        started++;
    }
    const double deadline = wl_now() + timeout;
    int running = started, skipped = 0;
    while (running && status == 0) {
        int st = 0;
        const pid_t pid = waitpid(-1, &st, WNOHANG);
        if (pid <= 0) {
            if (wl_now() > deadline) {
                fprintf(stderr, "ws_nccl_launch: timeout after %.0f s, stopping the ranks\n",
                        timeout);
                status = 124;
                break;
            }
            const struct timespec pause = {0, 20 * 1000 * 1000};
            nanosleep(&pause, NULL);
            continue;
        }
        for (int r = 0; r < started; r++) {
            if (pids[r] != pid) continue;
            alive[r] = 0;
            running--;
            codes[r] = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            if (codes[r] == 77) skipped++;
            if (codes[r] != 0 && codes[r] != 77) {
                fprintf(stderr, "ws_nccl_launch: rank %d exited with %d, stopping the others\n", r,
                        codes[r]);
                status = codes[r];
            }
        }
    }
    if (status) wl_stop(pids, started, alive, 5.0);
    char tmp[sizeof id_file + 8];
    snprintf(tmp, sizeof tmp, "%s.tmp", id_file);
    unlink(tmp);
    unlink(id_file);
    rmdir(dir);
    if (status) return status;
    if (skipped == started) return 77;
    if (skipped) {
        fprintf(stderr, "ws_nccl_launch: %d of %d ranks skipped, the others ran\n", skipped,
                started);
        return 1;
    }
    return 0;
}
