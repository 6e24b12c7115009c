/* cmd_sort.c - `warpsort sort`: sort a file of keys (and values) with the library. */
#include "cli.h"
#include "io.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    OPT_DTYPE,
    OPT_OUTPUT,
    OPT_DESC,
    OPT_STABLE,
    OPT_VALUES,
    OPT_VALUE_BYTES,
    OPT_VALUES_OUT,
    OPT_BACKEND,
    OPT_THREADS,
    OPT_DEVICE_BUDGET,
    OPT_ROW_LENGTH,
    OPT_OFFSETS,
    OPT_DEVICES
};

static const cli_opt_t sort_opts[] = {
    {OPT_DTYPE, "dtype", 0, 1},
    {OPT_OUTPUT, "output", 'o', 1},
    {OPT_DESC, "desc", 0, 0},
    {OPT_STABLE, "stable", 0, 0},
    {OPT_VALUES, "values", 0, 1},
    {OPT_VALUE_BYTES, "value-bytes", 0, 1},
    {OPT_VALUES_OUT, "values-out", 0, 1},
    {OPT_BACKEND, "backend", 0, 1},
    {OPT_THREADS, "threads", 0, 1},
    {OPT_DEVICE_BUDGET, "device-budget", 0, 1},
    {OPT_ROW_LENGTH, "row-length", 0, 1},
    {OPT_OFFSETS, "offsets", 0, 1},
    {OPT_DEVICES, "devices", 0, 1},
};

/* Largest --threads accepted: far above any machine, low enough to catch typos. */
#define CLI_MAX_THREADS 65536

typedef struct sort_job {
    const char *input, *output, *values, *values_out;
    warpsort_dtype_t dtype;
    int have_dtype, have_value_bytes, have_backend;
    size_t value_bytes;
    unsigned flags;
    warpsort_backend_t backend;
    unsigned threads;
    size_t device_budget;              /* bytes; 0 = free device memory */
    uint64_t row_length;               /* rows of this many keys; 0 = one array */
    const char *offsets;               /* segments by num_segments + 1 u64 offsets; NULL = none */
    int devices[WARPSORT_MAX_DEVICES]; /* --devices: out of core on these; */
    int device_count;                  /* 0 none, WARPSORT_ALL_DEVICES all */
} sort_job_t;

static int parse_sort_args(int argc, char **argv, sort_job_t *job) {
    cli_args_t args;
    cli_args_init(&args, "sort", argc, argv);
    const char *v;
    for (int id; (id = cli_next(&args, sort_opts, sizeof sort_opts / sizeof sort_opts[0], &v)) !=
                 CLI_ARG_END;) {
        int ok = 1;
        uint64_t threads;
        switch (id) {
        case CLI_ARG_HELP: return cli_print_help("sort") == CLI_EXIT_OK ? -1 : 0;
        case CLI_ARG_ERROR: return 0;
        case CLI_ARG_POSITIONAL:
            if (job->input) {
                cli_error("sort: unexpected argument '%s' (one input FILE; output goes after -o)",
                          v);
                return 0;
            }
            job->input = v;
            break;
        case OPT_DTYPE: ok = job->have_dtype = cli_parse_dtype(v, &job->dtype); break;
        case OPT_OUTPUT: job->output = v; break;
        case OPT_DESC: job->flags |= WARPSORT_DESCENDING; break;
        case OPT_STABLE: job->flags |= WARPSORT_STABLE; break;
        case OPT_VALUES: job->values = v; break;
        case OPT_VALUE_BYTES:
            ok = job->have_value_bytes = cli_parse_value_bytes(v, &job->value_bytes);
            break;
        case OPT_VALUES_OUT: job->values_out = v; break;
        case OPT_BACKEND: ok = job->have_backend = cli_parse_backend(v, &job->backend); break;
        case OPT_THREADS:
            ok = cli_parse_u64("--threads", v, CLI_MAX_THREADS, &threads);
            job->threads = (unsigned)threads;
            break;
        case OPT_DEVICE_BUDGET:
            ok = cli_parse_size("--device-budget", v, &job->device_budget);
            break;
        case OPT_ROW_LENGTH:
            ok = cli_parse_u64("--row-length", v, UINT64_MAX, &job->row_length);
            if (ok && job->row_length == 0) {
                cli_error("sort: --row-length must be at least 1");
                ok = 0;
            }
            break;
        case OPT_OFFSETS: job->offsets = v; break;
        case OPT_DEVICES:
            ok = cli_parse_devices("--devices", v, job->devices, &job->device_count);
            break;
        default: break;
        }
        if (!ok) return 0;
    }
    if (!job->input) {
        cli_error("sort: missing the input FILE (see 'warpsort sort --help')");
        return 0;
    }
    if (!job->have_dtype) {
        cli_error("sort: --dtype is required (u32, i32, f32, u64, i64 or f64)");
        return 0;
    }
    if (!job->values && (job->values_out || job->have_value_bytes)) {
        cli_error("sort: --values-out and --value-bytes need --values VFILE");
        return 0;
    }
    if (job->device_count && job->backend == WARPSORT_BACKEND_CPU) {
        cli_error("sort: --devices picks CUDA devices; --backend cpu uses none");
        return 0;
    }
    /* Devices asked for by number mean the GPU: a bad one is an error, not a
     * quiet fall back to the CPU (which --backend auto would make). */
    if (job->device_count && !job->have_backend) job->backend = WARPSORT_BACKEND_CUDA;
    if (job->row_length && job->offsets) {
        cli_error("sort: --row-length and --offsets exclude each other");
        return 0;
    }
    if (!job->output) job->output = job->input;
    if (job->values && !job->values_out) job->values_out = job->values;
    if (job->values && io_same_file(job->input, job->values)) {
        cli_error("sort: %s is given as both the keys and the values file", job->input);
        return 0;
    }
    if (job->values && io_same_file(job->output, job->values_out)) {
        cli_error("sort: keys and values would both be written to %s", job->output);
        return 0;
    }
    return 1;
}

/* Writes both outputs to temporary files first and renames them only when
 * both are complete, so a failure or a signal leaves every destination as it
 * was (or, once renaming has begun, both new). */
static int write_outputs(const sort_job_t *job, const void *keys, size_t key_bytes,
                         const void *values, size_t value_bytes_total) {
    io_out_t kout, vout;
    if (!io_out_begin(&kout, job->output)) return 0;
    if (!io_out_write(&kout, keys, key_bytes, "writing keys") || !io_out_finish(&kout)) {
        io_out_abort(&kout);
        return 0;
    }
    if (values) {
        if (!io_out_begin(&vout, job->values_out)) {
            io_out_abort(&kout);
            return 0;
        }
        if (!io_out_write(&vout, values, value_bytes_total, "writing values") ||
            !io_out_finish(&vout)) {
            io_out_abort(&vout);
            io_out_abort(&kout);
            return 0;
        }
    }
    return io_out_commit_pair(&kout, values ? &vout : NULL);
}

/* The library call the job asks for: one array, rows, or segments. */
static warpsort_status_t sort_call(warpsort_context_t *ctx, const sort_job_t *job, void *keys,
                                   void *values, size_t n, const uint64_t *offsets,
                                   size_t num_offsets) {
    if (job->row_length) {
        const size_t len = (size_t)job->row_length, rows = n / len;
        return values ? warpsort_sort_rows_pairs(ctx, keys, values, rows, len, job->dtype,
                                                 job->value_bytes, job->flags)
                      : warpsort_sort_rows(ctx, keys, rows, len, job->dtype, job->flags);
    }
    if (offsets)
        return values ? warpsort_sort_segments_pairs(ctx, keys, values, n, offsets, num_offsets - 1,
                                                     job->dtype, job->value_bytes, job->flags)
                      : warpsort_sort_segments(ctx, keys, n, offsets, num_offsets - 1, job->dtype,
                                               job->flags);
    return values
               ? warpsort_sort_pairs(ctx, keys, values, n, job->dtype, job->value_bytes, job->flags)
               : warpsort_sort(ctx, keys, n, job->dtype, job->flags);
}

int cmd_sort(int argc, char **argv) {
    sort_job_t job = {0};
    job.value_bytes = 4;
    job.backend = WARPSORT_BACKEND_AUTO;
    int parsed = parse_sort_args(argc, argv, &job);
    if (parsed < 0) return CLI_EXIT_OK; /* --help */
    if (!parsed) return CLI_EXIT_ERROR;

    size_t key_size = warpsort_dtype_size(job.dtype), n = 0, num_values = 0;
    char unit[32];
    snprintf(unit, sizeof unit, "dtype %s", warpsort_dtype_name(job.dtype));
    void *keys = NULL, *values = NULL;
    uint64_t *offsets = NULL;
    size_t num_offsets = 0;
    warpsort_context_t *ctx = NULL;
    int status = CLI_EXIT_ERROR;

    /* An output that cannot be written is refused before the work, not after. */
    if (!io_out_check(job.output) || (job.values && !io_out_check(job.values_out))) goto done;
    if (!io_read_array(job.input, key_size, unit, &keys, &n)) goto done;
    if (job.values) {
        snprintf(unit, sizeof unit, "%zu-byte values", job.value_bytes);
        if (!io_read_array(job.values, job.value_bytes, unit, &values, &num_values)) goto done;
        if (num_values != n) {
            cli_error("%s: holds %zu values of %zu bytes, but %s holds %zu keys", job.values,
                      num_values, job.value_bytes, job.input, n);
            goto done;
        }
    }
    if (job.row_length && n % job.row_length) {
        cli_error("%s: %zu keys are not whole rows of --row-length %llu", job.input, n,
                  (unsigned long long)job.row_length);
        goto done;
    }
    if (job.offsets) {
        void *raw = NULL;
        if (!io_read_array(job.offsets, sizeof(uint64_t), "u64 offsets", &raw, &num_offsets))
            goto done;
        offsets = raw;
        if (num_offsets == 0) {
            cli_error("%s: no offsets (it holds num_segments + 1 u64 offsets, the first 0 and "
                      "the last the number of keys)",
                      job.offsets);
            goto done;
        }
    }
    if (!cli_open_context_devices(&ctx, job.backend, job.threads, job.device_budget, job.devices,
                                  job.device_count))
        goto done;

    warpsort_status_t st = sort_call(ctx, &job, keys, values, n, offsets, num_offsets);
    if (st == WARPSORT_OK) st = warpsort_synchronize(ctx);
    if (st != WARPSORT_OK) {
        char what[PATH_MAX + 16];
        snprintf(what, sizeof what, "sort %s", job.input);
        cli_lib_error(ctx, st, what);
        goto done;
    }
    if (!write_outputs(&job, keys, n * key_size, values, n * job.value_bytes)) goto done;

    char backend[320];
    cli_describe_backend(ctx, job.threads, backend, sizeof backend);
    char batch[64] = "";
    if (job.row_length)
        snprintf(batch, sizeof batch, " in %zu rows", n / (size_t)job.row_length);
    else if (job.offsets)
        snprintf(batch, sizeof batch, " in %zu segments", num_offsets - 1);
    if (job.device_count && warpsort_last_backend(ctx) == WARPSORT_BACKEND_CUDA) {
        size_t len = strlen(backend);
        if (job.device_count == WARPSORT_ALL_DEVICES)
            snprintf(backend + len, sizeof backend - len, " (devices: all)");
        for (int i = 0; i < job.device_count && len + 16 < sizeof backend; i++) {
            snprintf(backend + len, sizeof backend - len, "%s%d%s", i ? "," : " (devices ",
                     job.devices[i], i + 1 == job.device_count ? ")" : "");
            len = strlen(backend);
        }
    }
    printf("sorted %zu %s keys%s%s %s%s on %s -> %s\n", n, warpsort_dtype_name(job.dtype), batch,
           values ? " with values" : "",
           (job.flags & WARPSORT_DESCENDING) ? "descending" : "ascending",
           (job.flags & WARPSORT_STABLE) ? " (stable)" : "", backend, job.output);
    status = CLI_EXIT_OK;
done:
    warpsort_destroy(ctx);
    free(keys);
    free(values);
    free(offsets);
    return status;
}
