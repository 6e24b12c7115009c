/*
 * nccl_rank.h - one rank of a multi-process run started by ws_nccl_launch
 * (tests/nccl/ws_nccl_launch.c, docs/multi-gpu.md): the rank, the number of
 * ranks and the ncclUniqueId file come from the environment the launcher
 * sets; rank 0 writes the id, the others wait for it.
 *
 *   WARPSORT_NCCL_RANK     this process's rank, 0 .. NRANKS - 1
 *   WARPSORT_NCCL_NRANKS   number of ranks
 *   WARPSORT_NCCL_ID_FILE  where rank 0 publishes the ncclUniqueId
 */
#ifndef WARPSORT_TESTS_NCCL_RANK_H
#define WARPSORT_TESTS_NCCL_RANK_H

#include <nccl.h>
#include <stddef.h>

/* 1 and the three values when the launcher's variables are set and valid,
 * else 0. */
int nr_from_env(int *rank, int *nranks, const char **id_file);

/* Makes this process's communicator on the current device: rank 0 creates
 * the id and writes it to id_file (atomically, through a rename), every
 * other rank waits up to timeout_s seconds for it. 0 on success, else -1
 * with a message in err. */
int nr_comm_init(ncclComm_t *comm, int rank, int nranks, const char *id_file, int timeout_s,
                 char *err, size_t err_len);

#endif /* WARPSORT_TESTS_NCCL_RANK_H */
