/* cmd_check.c - `warpsort check`: is a file sorted, and a permutation of another? */
#include "cli.h"
#include "io.h"
#include "keys.h"

#include <stdio.h>
#include <stdlib.h>

enum { OPT_DTYPE, OPT_DESC, OPT_PERM_OF };

static const cli_opt_t check_opts[] = {
    {OPT_DTYPE, "dtype", 0, 1},
    {OPT_DESC, "desc", 0, 0},
    {OPT_PERM_OF, "perm-of", 0, 1},
};

/* The command line of 'check'. */
typedef struct {
    const char *file, *perm_of;
    warpsort_dtype_t dtype;
    int desc;
} check_job_t;

/* Parses argv into *job: 1 to go on, else the exit status (help: -1 after
 * printing it). */
static int check_parse(int argc, char **argv, check_job_t *job, int *exit_status) {
    int have_dtype = 0;
    job->file = job->perm_of = NULL;
    job->dtype = WARPSORT_U32;
    job->desc = 0;
    cli_args_t args;
    cli_args_init(&args, "check", argc, argv);
    const char *v;
    for (int id; (id = cli_next(&args, check_opts, sizeof check_opts / sizeof check_opts[0], &v)) !=
                 CLI_ARG_END;) {
        int ok = 1;
        switch (id) {
        case CLI_ARG_HELP: *exit_status = cli_print_help("check"); return 0;
        case CLI_ARG_ERROR: *exit_status = CLI_EXIT_ERROR; return 0;
        case CLI_ARG_POSITIONAL:
            if (job->file) {
                cli_error("check: unexpected argument '%s' (one FILE; compare with --perm-of)", v);
                *exit_status = CLI_EXIT_ERROR;
                return 0;
            }
            job->file = v;
            break;
        case OPT_DTYPE: ok = have_dtype = cli_parse_dtype(v, &job->dtype); break;
        case OPT_DESC: job->desc = 1; break;
        case OPT_PERM_OF: job->perm_of = v; break;
        default: break;
        }
        if (!ok) {
            *exit_status = CLI_EXIT_ERROR;
            return 0;
        }
    }
    *exit_status = CLI_EXIT_ERROR;
    if (!job->file) {
        cli_error("check: missing the FILE to check (see 'warpsort check --help')");
        return 0;
    }
    if (!have_dtype) {
        cli_error("check: --dtype is required (u32, i32, f32, u64, i64 or f64)");
        return 0;
    }
    return 1;
}

int cmd_check(int argc, char **argv) {
    check_job_t job;
    int parse_status;
    if (!check_parse(argc, argv, &job, &parse_status)) return parse_status;
    const char *file = job.file, *perm_of = job.perm_of;
    const warpsort_dtype_t dtype = job.dtype;
    const int desc = job.desc;

    size_t size = warpsort_dtype_size(dtype), n = 0, n_orig = 0;
    const char *dname = warpsort_dtype_name(dtype), *order = desc ? "descending" : "ascending";
    char unit[32];
    snprintf(unit, sizeof unit, "dtype %s", dname);
    void *keys = NULL, *orig = NULL;
    int status = CLI_EXIT_ERROR;
    if (!io_read_array(file, size, unit, &keys, &n)) goto done;
    if (perm_of && !io_read_array(perm_of, size, unit, &orig, &n_orig)) goto done;

    /* Both properties are decided before printing, so the verdict is one line. */
    size_t bad = keys_first_unsorted(keys, n, dtype, desc);
    int sorted = bad == n;
    int is_perm = 1;
    size_t rank = 0;
    if (perm_of) {
        char why[KEYS_WHY_MAX] = "";
        is_perm =
            n == n_orig ? keys_same_multiset(keys, orig, n, dtype, &rank, why, sizeof why) : 0;
        if (is_perm < 0) {
            cli_error("check: comparing %zu keys with %s: %s", n, perm_of, why);
            goto done;
        }
    }

    char perm_note[512] = "";
    if (perm_of && is_perm)
        snprintf(perm_note, sizeof perm_note, ", a permutation of %s", perm_of);
    else if (perm_of && n != n_orig)
        snprintf(perm_note, sizeof perm_note, "not a permutation of %s (%zu keys vs %zu)", perm_of,
                 n, n_orig);
    else if (perm_of)
        snprintf(perm_note, sizeof perm_note,
                 "not a permutation of %s (their bit patterns differ at sorted rank %zu)", perm_of,
                 rank);

    if (sorted && is_perm) {
        printf("sorted: %s (%zu %s keys, %s%s)\n", file, n, dname, order, perm_note);
        status = CLI_EXIT_OK;
    } else if (sorted) {
        printf("sorted %s, but %s: %s\n", order, perm_note, file);
        status = CLI_EXIT_NO;
    } else {
        char a[64], b[64];
        keys_format(keys, bad - 1, dtype, a, sizeof a);
        keys_format(keys, bad, dtype, b, sizeof b);
        printf("not sorted: %s: key %zu = %s sorts before key %zu = %s in %s %s order%s%s\n", file,
               bad, b, bad - 1, a, dname, order, perm_of && !is_perm ? "; also " : "",
               perm_of && !is_perm ? perm_note : "");
        status = CLI_EXIT_NO;
    }
done:
    free(keys);
    free(orig);
    return status;
}
