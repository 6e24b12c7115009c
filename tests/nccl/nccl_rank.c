/* nccl_rank.c - a rank of a run started by ws_nccl_launch (nccl_rank.h). */
#define _POSIX_C_SOURCE 200809L
#include "nccl_rank.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int nr_int_env(const char *name, int *out) {
    const char *s = getenv(name);
    if (!s || !*s) return 0;
    char *end = NULL;
    const long v = strtol(s, &end, 10);
    if (*end || v < 0 || v > 1 << 20) return 0;
    *out = (int)v;
    return 1;
}

int nr_from_env(int *rank, int *nranks, const char **id_file) {
    *id_file = getenv("WARPSORT_NCCL_ID_FILE");
    return nr_int_env("WARPSORT_NCCL_RANK", rank) && nr_int_env("WARPSORT_NCCL_NRANKS", nranks) &&
           *nranks >= 1 && *rank < *nranks && *id_file && **id_file;
}

static int nr_write_id(const ncclUniqueId *id, const char *path, char *err, size_t len) {
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f || fwrite(id, sizeof *id, 1, f) != 1 || fclose(f) != 0) {
        snprintf(err, len, "cannot write %s: %s", tmp, strerror(errno));
        return -1;
    }
    if (rename(tmp, path) != 0) {
        snprintf(err, len, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
        return -1;
    }
    return 0;
}

static int nr_read_id(ncclUniqueId *id, const char *path, int timeout_s, char *err, size_t len) {
    const struct timespec pause = {0, 10 * 1000 * 1000};
    for (long waited_ms = 0; waited_ms <= (long)timeout_s * 1000; waited_ms += 10) {
        FILE *f = fopen(path, "rb");
        if (f) {
            const size_t got = fread(id, sizeof *id, 1, f);
            fclose(f);
            if (got == 1) return 0;
        }
        nanosleep(&pause, NULL);
    }
    snprintf(err, len, "no ncclUniqueId in %s after %d s (is rank 0 running?)", path, timeout_s);
    return -1;
}

int nr_comm_init(ncclComm_t *comm, int rank, int nranks, const char *id_file, int timeout_s,
                 char *err, size_t err_len) {
    ncclUniqueId id;
    if (rank == 0) {
        const ncclResult_t r = ncclGetUniqueId(&id);
        if (r != ncclSuccess) {
            snprintf(err, err_len, "ncclGetUniqueId: %s", ncclGetErrorString(r));
            return -1;
        }
        if (nr_write_id(&id, id_file, err, err_len)) return -1;
    } else if (nr_read_id(&id, id_file, timeout_s, err, err_len)) {
        return -1;
    }
    const ncclResult_t r = ncclCommInitRank(comm, nranks, id, rank);
    if (r != ncclSuccess) {
        snprintf(err, err_len, "ncclCommInitRank (rank %d of %d): %s", rank, nranks,
                 ncclGetErrorString(r));
        return -1;
    }
    return 0;
}
