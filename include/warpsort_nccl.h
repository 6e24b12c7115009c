/*
 * warpsort_nccl.h - one sort across the GPUs of an NCCL communicator.
 *
 * A separate library (warpsort_nccl, linked with warpsort and NCCL), so the
 * core library never needs NCCL. Keys (or key/value pairs) spread over the
 * ranks of a communicator the caller made, one GPU per rank, in one process
 * (ncclCommInitAll) or many (ncclCommInitRank), come back in one global
 * order: rank r holds the r-th part, every part of an exactly known size.
 *
 *   ncclComm_t comm;       // the caller's, on the GPU of ctx
 *   size_t n_out;
 *   warpsort_nccl_sort(ctx, comm, d_in, n_in, d_out, capacity, &n_out,
 *                      WARPSORT_F32, WARPSORT_ASCENDING, stream);
 *   // every rank calls, each with its own ctx, comm, arrays and stream
 *
 * docs/multi-gpu.md describes the algorithm, a time model and how to start
 * ranks in one process or several (tests/nccl/ws_nccl_launch).
 */
#ifndef WARPSORT_NCCL_H
#define WARPSORT_NCCL_H

#include <cuda_runtime.h>
#include <nccl.h>
#include <stddef.h>

#include "warpsort.h"

#ifdef __cplusplus
extern "C" {
#endif

#define WARPSORT_NCCL_API WARPSORT_API

/*======================================================================
 * Contract, for every call below
 *
 * Collective: every rank of comm makes the same call (the same function,
 * dtype, value_bytes and flags), each from its own host thread when the
 * ranks share a process, with its own context, arrays and stream.
 *  - ctx: a context on the CUDA backend (or AUTO that resolves to it) whose
 *    device is the communicator's GPU on this rank; its workspace holds the
 *    scratch (about 2 x n_in + n_out items, n_out more with three ranks or
 *    more, and for keys alone a send buffer of n_in and band buffers of
 *    a few % of n_out; warpsort_nccl_workspace_size gives the bytes), grown
 *    as warpsort's calls grow it, or the caller's (warpsort_set_workspace):
 *    then a call that needs more fails with WORKSPACE_TOO_SMALL.
 *  - comm: a blocking communicator (the default of ncclCommInit*), one GPU
 *    per rank; nranks >= 1.
 *  - Arrays: device memory of this rank's GPU. keys_in / values_in (n_in
 *    items, n_in may be 0) are only read; keys_out / values_out hold
 *    out_capacity items and must not overlap the inputs or each other.
 *  - Result: with n_total the sum of every rank's n_in, rank r receives
 *    *n_out = warpsort_nccl_output_count(n_total, nranks, r) items, the
 *    r-th part of the global order (the library's order: floats with -0.0
 *    before +0.0 and NaNs last ascending, first descending; descending is
 *    the exact reverse). So the last key of rank r sorts no later than the
 *    first key of rank r + 1, whatever the distribution, all-equal included.
 *  - Ties are split by (rank, position): equal keys keep the order of the
 *    rank that held them, then of their position there. The sort is stable
 *    in that sense (WARPSORT_STABLE is accepted and changes nothing).
 *  - flags: WARPSORT_ASCENDING / WARPSORT_DESCENDING, WARPSORT_STABLE.
 *  - stream: every kernel, copy and NCCL call of this rank goes there. The
 *    call returns once the work is enqueued; the output is ready when the
 *    stream reaches that point. It orders itself after work already queued
 *    on the context's stream, and that stream after it, so the context's
 *    workspace is never used by two calls at once.
 *  - Host synchronisation: the call waits for its stream three times (the
 *    item counts and arguments of every rank; the agreed status; the split
 *    points or, keys alone, the bucket counts of the partition, whose
 *    send/receive counts NCCL takes on the host; a partition the keys do
 *    not fit adds the split points' wait), so it can
 *    not be captured in a CUDA graph, and ranks sharing a process need one
 *    host thread each (not ncclGroupStart around the calls).
 *  - Errors: the library's status, the reason in warpsort_last_error(ctx)
 *    (NCCL's own text, ncclGetErrorString and ncclGetLastError, for an
 *    NCCL failure, reported as CUDA_ERROR; INVALID_ARGUMENT for NCCL's
 *    invalid-argument and invalid-usage codes). A rank that rejects its
 *    arguments, lacks out_capacity or cannot get its workspace tells the
 *    others before any data moves: every rank returns the same status (the
 *    largest code among the ranks') and *n_out, and nothing has been written
 *    to any output. The inputs are never written. Two failures are local
 *    only, since no collective can carry them: ctx or comm NULL (returns
 *    INVALID_ARGUMENT at once), and a failure of the communicator itself
 *    or of a kernel after the data started moving (the other ranks may then
 *    wait in NCCL: abort the communicator, ncclCommAbort).
 *====================================================================*/

/* Items rank `rank` of `nranks` holds after a sort of n_total items:
 * n_total / nranks, plus one for the first n_total % nranks ranks. 0 for
 * nranks < 1 or rank outside [0, nranks). */
WARPSORT_NCCL_API size_t warpsort_nccl_output_count(size_t n_total, int nranks, int rank);

/* Sorts the keys of every rank into one global order (see "Contract").
 * *n_out receives this rank's output count (also on a collective error,
 * once the ranks' counts were exchanged; 0 before that). */
WARPSORT_NCCL_API warpsort_status_t warpsort_nccl_sort(warpsort_context_t *ctx, ncclComm_t comm,
                                                       const void *keys_in, size_t n_in,
                                                       void *keys_out, size_t out_capacity,
                                                       size_t *n_out, warpsort_dtype_t dtype,
                                                       unsigned flags, cudaStream_t stream);

/* As warpsort_nccl_sort, values (value_bytes 4 or 8) following their keys:
 * values_out[i] is the value that came with keys_out[i]. */
WARPSORT_NCCL_API warpsort_status_t warpsort_nccl_sort_pairs(
    warpsort_context_t *ctx, ncclComm_t comm, const void *keys_in, const void *values_in,
    size_t n_in, void *keys_out, void *values_out, size_t out_capacity, size_t *n_out,
    warpsort_dtype_t dtype, size_t value_bytes, unsigned flags, cudaStream_t stream);

/* Bytes of context workspace one rank's call needs: n_in items in, n_out
 * out (warpsort_nccl_output_count), value_bytes 0 for keys alone, on a
 * communicator of nranks. For warpsort_set_workspace (then the call does
 * not allocate workspace; it still takes a few KiB for its control words
 * from the stream-ordered allocator, cudaMallocAsync). */
WARPSORT_NCCL_API warpsort_status_t warpsort_nccl_workspace_size(const warpsort_context_t *ctx,
                                                                 int nranks, size_t n_in,
                                                                 size_t n_out,
                                                                 warpsort_dtype_t dtype,
                                                                 size_t value_bytes, size_t *bytes);

#ifdef __cplusplus
}
#endif
#endif /* WARPSORT_NCCL_H */
