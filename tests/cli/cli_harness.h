/*
 * cli_harness.h - runs the built warpsort CLI in a scratch directory and
 * captures its exit status, stdout and stderr, for the cmocka CLI tests.
 */
#ifndef WARPSORT_TEST_CLI_HARNESS_H
#define WARPSORT_TEST_CLI_HARNESS_H

#include "warpsort.h"

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cli {
    char dir[PATH_MAX];       /* scratch directory the CLI runs in (its cwd) */
    char capture[PATH_MAX];   /* sibling directory holding stdout/stderr captures */
    int exit_code;            /* -1 if killed by a signal */
    int term_signal;          /* the signal that killed the last run, 0 if none */
    char *out, *err;          /* captured output of the last run, NUL-terminated */
    const char *env_progress; /* value for WARPSORT_PROGRESS, NULL = unset */
    long long fsize_limit;    /* RLIMIT_FSIZE in bytes for the run, 0 = unchanged */
    const char *preload;      /* shared object for LD_PRELOAD, NULL = none */
    unsigned run_as;          /* uid and gid to run as (needs root), 0 = unchanged */
} cli_t;

/* cmocka setup/teardown: a fresh scratch directory per test. */
int cli_setup(void **state);
int cli_teardown(void **state);

/* Runs `warpsort args...` (NULL-terminated) in c->dir; returns the exit code. */
int cli_run(cli_t *c, ...);

/* Files inside the scratch directory (names relative to it). */
void cli_write(cli_t *c, const char *name, const void *data, size_t bytes);
/* Whole file; *bytes gets its size. Fails the test if unreadable. */
void *cli_read(cli_t *c, const char *name, size_t *bytes);
int cli_exists(cli_t *c, const char *name);
void cli_mkdir(cli_t *c, const char *name);
/* Number of directory entries other than . and .. whose name contains
 * fragment (NULL: all entries). */
size_t cli_count_entries(cli_t *c, const char *fragment);

/* The last run failed with exit 2 and exactly one stderr line
 * "warpsort: ..." containing each NULL-terminated fragment. */
void cli_assert_error(cli_t *c, ...);
/* text is exactly one newline-terminated line. */
void cli_assert_one_line(const char *text);
void cli_assert_contains(const char *text, const char *fragment);

/*--- results, judged by the independent test oracle (tests/common/testkit.h) ---*/

/* keys sorted in the documented order (desc: descending). */
int test_is_sorted(const void *keys, size_t n, warpsort_dtype_t dtype, int desc);
/* a and b hold the same bit patterns with the same counts. */
int test_same_multiset(const void *a, const void *b, size_t n, size_t elem_size);

#endif /* WARPSORT_TEST_CLI_HARNESS_H */
