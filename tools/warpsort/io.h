/*
 * io.h - whole-file reads and all-or-nothing writes of raw arrays.
 *
 * Outputs are written to a hidden temporary file in the destination's own
 * directory and renamed over the destination only once complete, so a
 * destination is always either its old bytes or the full new result. On
 * failure (or SIGINT/SIGTERM/SIGHUP) the temporary file is removed.
 *
 * A destination must be a regular file or not exist yet: FIFOs, devices
 * and sockets are refused, as are files the process may not write and
 * files with no write permission bit at all (even for root). A replaced
 * file keeps its mode, and its owner and group where the process may set
 * them. main() ignores SIGXFSZ, so a write past the file-size limit fails
 * with EFBIG like a full disk instead of killing the process.
 */
#ifndef WARPSORT_CLI_IO_H
#define WARPSORT_CLI_IO_H

#include <stddef.h>

/* Reads path into a new buffer (free with free()). The size must be a
 * multiple of elem_size; unit names the element for the error message
 * ("dtype u32", "value size 8"). Returns 1 on success, 0 after reporting. */
int io_read_array(const char *path, size_t elem_size, const char *unit, void **data, size_t *count);

typedef struct io_out {
    char *path; /* destination (symlinks resolved to their target) */
    char *tmp;  /* temporary file, NULL once committed or aborted */
    int fd;
} io_out_t;

/* Checks that path may be written (see above) without creating anything,
 * so a command can refuse before doing its work. Reports and returns 0 if not. */
int io_out_check(const char *path);

/* Checks path again and creates its temporary file. */
int io_out_begin(io_out_t *out, const char *path);
int io_out_write(io_out_t *out, const void *data, size_t bytes, const char *label);
/* Flushes the temporary file to disk and closes it; ready to commit. */
int io_out_finish(io_out_t *out);
/* Renames the finished temporary file over the destination. */
int io_out_commit(io_out_t *out);
/* Renames first, then second (may be NULL), with SIGINT/SIGTERM/SIGHUP held
 * back across both, so a signal leaves both files old or both new. If the
 * first rename fails neither changes; if the second fails it says so. */
int io_out_commit_pair(io_out_t *first, io_out_t *second);
/* Removes the temporary file, if any; the destination is untouched. */
void io_out_abort(io_out_t *out);

/* begin + write + finish + commit, aborting on any failure. */
int io_write_file(const char *path, const void *data, size_t bytes, const char *label);

/* 1 if a and b name the same existing file (same device and inode). */
int io_same_file(const char *a, const char *b);

#endif /* WARPSORT_CLI_IO_H */
