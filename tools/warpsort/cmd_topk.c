/* cmd_topk.c - `warpsort topk`: the k largest (or smallest) keys of a file or of each row. */
#include "cli.h"
#include "io.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

enum {
    OPT_K,
    OPT_DTYPE,
    OPT_OUTPUT,
    OPT_SMALLEST,
    OPT_ROW_LENGTH,
    OPT_INDICES_OUT,
    OPT_INDEX_BYTES,
    OPT_BACKEND,
    OPT_THREADS
};

static const cli_opt_t topk_opts[] = {
    {OPT_K, "k", 'k', 1},
    {OPT_DTYPE, "dtype", 0, 1},
    {OPT_OUTPUT, "output", 'o', 1},
    {OPT_SMALLEST, "smallest", 0, 0},
    {OPT_ROW_LENGTH, "row-length", 0, 1},
    {OPT_INDICES_OUT, "indices-out", 0, 1},
    {OPT_INDEX_BYTES, "index-bytes", 0, 1},
    {OPT_BACKEND, "backend", 0, 1},
    {OPT_THREADS, "threads", 0, 1},
};

/* Largest --threads accepted: far above any machine, low enough to catch typos. */
#define CLI_MAX_THREADS 65536

typedef struct topk_job {
    const char *input, *output, *indices_out;
    warpsort_dtype_t dtype;
    int have_dtype, have_k;
    size_t k, row_len, index_bytes;
    unsigned flags;
    warpsort_backend_t backend;
    unsigned threads;
} topk_job_t;

static int parse_topk_args(int argc, char **argv, topk_job_t *job) {
    cli_args_t args;
    cli_args_init(&args, "topk", argc, argv);
    const char *v;
    for (int id; (id = cli_next(&args, topk_opts, sizeof topk_opts / sizeof topk_opts[0], &v)) !=
                 CLI_ARG_END;) {
        int ok = 1;
        uint64_t u;
        switch (id) {
        case CLI_ARG_HELP: return cli_print_help("topk") == CLI_EXIT_OK ? -1 : 0;
        case CLI_ARG_ERROR: return 0;
        case CLI_ARG_POSITIONAL:
            if (job->input) {
                cli_error("topk: unexpected argument '%s' (one input FILE)", v);
                return 0;
            }
            job->input = v;
            break;
        case OPT_K: ok = job->have_k = cli_parse_size("-k", v, &job->k); break;
        case OPT_DTYPE: ok = job->have_dtype = cli_parse_dtype(v, &job->dtype); break;
        case OPT_OUTPUT: job->output = v; break;
        case OPT_SMALLEST: job->flags |= WARPSORT_TOPK_SMALLEST; break;
        case OPT_ROW_LENGTH:
            ok = cli_parse_size("--row-length", v, &job->row_len);
            if (ok && job->row_len == 0) {
                cli_error("topk: --row-length must be at least 1");
                ok = 0;
            }
            break;
        case OPT_INDICES_OUT: job->indices_out = v; break;
        case OPT_INDEX_BYTES:
            ok = (v[0] == '4' || v[0] == '8') && v[1] == '\0';
            if (ok)
                job->index_bytes = (size_t)(v[0] - '0');
            else
                cli_error("--index-bytes: must be 4 or 8, got '%s'", v);
            break;
        case OPT_BACKEND: ok = cli_parse_backend(v, &job->backend); break;
        case OPT_THREADS:
            ok = cli_parse_u64("--threads", v, CLI_MAX_THREADS, &u);
            job->threads = (unsigned)u;
            break;
        default: break;
        }
        if (!ok) return 0;
    }
    if (!job->input) {
        cli_error("topk: missing the input FILE (see 'warpsort topk --help')");
        return 0;
    }
    if (!job->have_dtype) {
        cli_error("topk: --dtype is required (u32, i32, f32, u64, i64 or f64)");
        return 0;
    }
    if (!job->have_k || job->k == 0) {
        cli_error("topk: -k K is required and must be at least 1");
        return 0;
    }
    if (!job->output && !job->indices_out) {
        cli_error("topk: nothing to write: give -o OUT and/or --indices-out FILE");
        return 0;
    }
    if (job->output && job->indices_out && io_same_file(job->output, job->indices_out)) {
        cli_error("topk: keys and indices would both be written to %s", job->output);
        return 0;
    }
    return 1;
}

/* Both outputs go to temporary files and are renamed only when both are
 * complete (see io.h): a failure or a signal leaves every destination as
 * it was. */
static int write_outputs(const topk_job_t *job, const void *keys, size_t key_bytes,
                         const void *indices, size_t index_bytes_total) {
    io_out_t kout, iout;
    io_out_t *first = NULL, *second = NULL;
    if (job->output) {
        if (!io_out_begin(&kout, job->output)) return 0;
        if (!io_out_write(&kout, keys, key_bytes, "writing keys") || !io_out_finish(&kout)) {
            io_out_abort(&kout);
            return 0;
        }
        first = &kout;
    }
    if (job->indices_out) {
        if (!io_out_begin(&iout, job->indices_out)) {
            if (first) io_out_abort(first);
            return 0;
        }
        if (!io_out_write(&iout, indices, index_bytes_total, "writing indices") ||
            !io_out_finish(&iout)) {
            io_out_abort(&iout);
            if (first) io_out_abort(first);
            return 0;
        }
        if (first)
            second = &iout;
        else
            first = &iout;
    }
    return io_out_commit_pair(first, second);
}

int cmd_topk(int argc, char **argv) {
    topk_job_t job = {0};
    job.index_bytes = 8;
    job.backend = WARPSORT_BACKEND_AUTO;
    int parsed = parse_topk_args(argc, argv, &job);
    if (parsed < 0) return CLI_EXIT_OK; /* --help */
    if (!parsed) return CLI_EXIT_ERROR;

    const size_t key_size = warpsort_dtype_size(job.dtype);
    size_t n = 0;
    char unit[32];
    snprintf(unit, sizeof unit, "dtype %s", warpsort_dtype_name(job.dtype));
    void *keys = NULL, *out_keys = NULL, *out_idx = NULL;
    warpsort_context_t *ctx = NULL;
    int status = CLI_EXIT_ERROR;

    /* An output that cannot be written is refused before the work, not after. */
    if ((job.output && !io_out_check(job.output)) ||
        (job.indices_out && !io_out_check(job.indices_out)))
        goto done;
    if (!io_read_array(job.input, key_size, unit, &keys, &n)) goto done;
    if (n == 0) {
        cli_error("%s: holds no keys, so there is no top %zu", job.input, job.k);
        goto done;
    }
    const size_t row_len = job.row_len ? job.row_len : n;
    if (n % row_len) {
        cli_error("%s: holds %zu keys, not a whole number of rows of %zu", job.input, n, row_len);
        goto done;
    }
    if (job.k > row_len) {
        cli_error("topk: -k %zu is larger than the %s of %zu keys", job.k,
                  job.row_len ? "row length" : "file", row_len);
        goto done;
    }
    const size_t rows = n / row_len, m = rows * job.k;
    out_keys = job.output ? malloc(m * key_size) : NULL;
    out_idx = job.indices_out ? malloc(m * job.index_bytes) : NULL;
    if ((job.output && !out_keys) || (job.indices_out && !out_idx)) {
        cli_error("topk: cannot allocate the results (%zu x %zu keys)", rows, job.k);
        goto done;
    }
    if (!cli_open_context(&ctx, job.backend, job.threads)) goto done;
    warpsort_status_t st = warpsort_topk_rows(ctx, keys, rows, row_len, job.dtype, job.k, job.flags,
                                              out_keys, out_idx, job.index_bytes);
    if (st == WARPSORT_OK) st = warpsort_synchronize(ctx);
    if (st != WARPSORT_OK) {
        char what[PATH_MAX + 16];
        snprintf(what, sizeof what, "topk %s", job.input);
        cli_lib_error(ctx, st, what);
        goto done;
    }
    if (!write_outputs(&job, out_keys, m * key_size, out_idx, m * job.index_bytes)) goto done;

    char backend[64];
    cli_describe_backend(ctx, job.threads, backend, sizeof backend);
    printf("top %zu %s of %zu row%s of %zu %s keys on %s -> %s%s%s\n", job.k,
           (job.flags & WARPSORT_TOPK_SMALLEST) ? "smallest" : "largest", rows,
           rows == 1 ? "" : "s", row_len, warpsort_dtype_name(job.dtype), backend,
           job.output ? job.output : "", job.output && job.indices_out ? ", " : "",
           job.indices_out ? job.indices_out : "");
    status = CLI_EXIT_OK;
done:
    warpsort_destroy(ctx);
    free(keys);
    free(out_keys);
    free(out_idx);
    return status;
}
