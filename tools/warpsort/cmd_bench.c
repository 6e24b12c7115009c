/* cmd_bench.c - `warpsort bench` (timed repeats, optional qsort rival) and
 * `warpsort run` (the main job: one verified sort with the best backend). */
#include "cli.h"
#include "core/keybits.h" /* the qsort rival compares the library's ordered bits */
#include "gen.h"
#include "keys.h"
#include "progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    OPT_COUNT,
    OPT_DTYPE,
    OPT_DIST,
    OPT_SEED,
    OPT_REPEAT,
    OPT_WARMUP,
    OPT_DESC,
    OPT_STABLE,
    OPT_PAIRS,
    OPT_VALUE_BYTES,
    OPT_QSORT,
    OPT_BACKEND,
    OPT_THREADS
};

static const cli_opt_t bench_opts[] = {
    {OPT_COUNT, "count", 'n', 1},   {OPT_DTYPE, "dtype", 0, 1},
    {OPT_DIST, "dist", 0, 1},       {OPT_SEED, "seed", 0, 1},
    {OPT_REPEAT, "repeat", 0, 1},   {OPT_WARMUP, "warmup", 0, 1},
    {OPT_DESC, "desc", 0, 0},       {OPT_STABLE, "stable", 0, 0},
    {OPT_PAIRS, "pairs", 0, 0},     {OPT_VALUE_BYTES, "value-bytes", 0, 1},
    {OPT_QSORT, "qsort", 0, 0},     {OPT_BACKEND, "backend", 0, 1},
    {OPT_THREADS, "threads", 0, 1},
};
/* `run` takes the subset that describes one job. */
static const cli_opt_t run_opts[] = {
    {OPT_COUNT, "count", 'n', 1},   {OPT_DTYPE, "dtype", 0, 1}, {OPT_DIST, "dist", 0, 1},
    {OPT_SEED, "seed", 0, 1},       {OPT_DESC, "desc", 0, 0},   {OPT_BACKEND, "backend", 0, 1},
    {OPT_THREADS, "threads", 0, 1},
};

#define CLI_MAX_THREADS 65536
#define CLI_MAX_REPEAT 1000000

typedef struct bench_config {
    size_t n;
    warpsort_dtype_t dtype;
    keygen_dist_t dist;
    uint64_t seed;
    uint64_t repeat, warmup;
    unsigned flags;
    int pairs, qsort;
    size_t value_bytes;
    warpsort_backend_t backend;
    unsigned threads;
} bench_config_t;

static int parse_bench_args(const char *command, const cli_opt_t *opts, size_t num_opts, int argc,
                            char **argv, bench_config_t *cfg) {
    cli_args_t args;
    cli_args_init(&args, command, argc, argv);
    const char *v;
    for (int id; (id = cli_next(&args, opts, num_opts, &v)) != CLI_ARG_END;) {
        int ok = 1;
        uint64_t num;
        switch (id) {
        case CLI_ARG_HELP: return cli_print_help(command) == CLI_EXIT_OK ? -1 : 0;
        case CLI_ARG_ERROR: return 0;
        case CLI_ARG_POSITIONAL:
            cli_error("%s: unexpected argument '%s' (see 'warpsort %s --help')", command, v,
                      command);
            return 0;
        case OPT_COUNT: ok = cli_parse_size("-n", v, &cfg->n); break;
        case OPT_DTYPE: ok = cli_parse_dtype(v, &cfg->dtype); break;
        case OPT_DIST: ok = gen_dist_from_name(v, &cfg->dist); break;
        case OPT_SEED: ok = cli_parse_u64("--seed", v, UINT64_MAX, &cfg->seed); break;
        case OPT_REPEAT:
            ok = cli_parse_u64("--repeat", v, CLI_MAX_REPEAT, &cfg->repeat);
            if (ok && cfg->repeat == 0) {
                cli_error("--repeat: needs at least 1 timed run");
                ok = 0;
            }
            break;
        case OPT_WARMUP: ok = cli_parse_u64("--warmup", v, CLI_MAX_REPEAT, &cfg->warmup); break;
        case OPT_DESC: cfg->flags |= WARPSORT_DESCENDING; break;
        case OPT_STABLE: cfg->flags |= WARPSORT_STABLE; break;
        case OPT_PAIRS: cfg->pairs = 1; break;
        case OPT_VALUE_BYTES: ok = cli_parse_value_bytes(v, &cfg->value_bytes); break;
        case OPT_QSORT: cfg->qsort = 1; break;
        case OPT_BACKEND: ok = cli_parse_backend(v, &cfg->backend); break;
        case OPT_THREADS:
            ok = cli_parse_u64("--threads", v, CLI_MAX_THREADS, &num);
            cfg->threads = (unsigned)num;
            break;
        default: break;
        }
        if (!ok) return 0;
    }
    /* 0 until given: sort rejects --value-bytes without values, and so does bench. */
    if (cfg->value_bytes && !cfg->pairs) {
        cli_error("--value-bytes: only with --pairs");
        return 0;
    }
    if (!cfg->value_bytes) cfg->value_bytes = 4;
    return 1;
}

/*--- data ---*/

static void *alloc_or_report(const char *command, size_t count, size_t size) {
    if (size && count > SIZE_MAX / size) {
        cli_error("%s: %zu elements of %zu bytes do not fit in memory", command, count, size);
        return NULL;
    }
    void *p = malloc(count ? count * size : 1);
    if (!p) cli_error("%s: out of memory for %zu elements of %zu bytes", command, count, size);
    return p;
}

/* Values are each key's original index: verifying that they follow their keys
 * then needs no second copy of the data. */
static void fill_indices(void *values, size_t n, size_t value_bytes) {
    for (size_t i = 0; i < n; i++) {
        if (value_bytes == 4)
            ((uint32_t *)values)[i] = (uint32_t)i;
        else
            ((uint64_t *)values)[i] = (uint64_t)i;
    }
}

static uint64_t value_at(const void *values, size_t i, size_t value_bytes) {
    return value_bytes == 4 ? ((const uint32_t *)values)[i] : ((const uint64_t *)values)[i];
}

/* The input's reference: sorted by the CPU backend, and its multiset hash. */
typedef struct reference {
    void *sorted;
    keys_hash_t hash;
} reference_t;

static int make_reference(const char *command, const void *orig, size_t n, warpsort_dtype_t dtype,
                          unsigned flags, reference_t *ref) {
    size_t ks = warpsort_dtype_size(dtype);
    memcpy(ref->sorted, orig, n * ks);
    char why[KEYS_WHY_MAX];
    if (keys_cpu_sort(ref->sorted, n, dtype, (flags & WARPSORT_DESCENDING) != 0, why, sizeof why) !=
        WARPSORT_OK) {
        cli_error("%s: the reference sort (CPU backend) failed: %s", command, why);
        return 0;
    }
    ref->hash = keys_multiset_hash(orig, n, ks);
    return 1;
}

/* Checks out against the reference: sorted in the library's order, the
 * same bit patterns as the input by the order-free hash, equal to the CPU
 * backend's result; with values, that each value is the original index of
 * its key, used once, increasing among equal keys when stable. Prints one
 * loud line and returns 0 on the first problem. */
static int verify_result(const char *command, const char *who, const void *orig,
                         const reference_t *ref, const void *out, const void *values, size_t n,
                         warpsort_dtype_t dtype, size_t value_bytes, unsigned flags) {
    size_t ks = warpsort_dtype_size(dtype);
    int desc = (flags & WARPSORT_DESCENDING) != 0;
    size_t bad = keys_first_unsorted(out, n, dtype, desc);
    if (bad != n) {
        char a[64], b[64];
        keys_format(out, bad - 1, dtype, a, sizeof a);
        keys_format(out, bad, dtype, b, sizeof b);
        cli_error("%s: WRONG RESULT from %s: not sorted: key %zu = %s sorts before key %zu = %s",
                  command, who, bad, b, bad - 1, a);
        return 0;
    }
    keys_hash_t h = keys_multiset_hash(out, n, ks);
    if (h.sum1 != ref->hash.sum1 || h.sum2 != ref->hash.sum2) {
        cli_error("%s: WRONG RESULT from %s: sorted but not a permutation of the input (its "
                  "bit patterns hash differently)",
                  command, who);
        return 0;
    }
    /* A sorted array is unique (equal keys have identical bits), so it must
     * equal the CPU backend's result bit for bit. */
    if (memcmp(out, ref->sorted, n * ks) != 0) {
        size_t i = 0;
        while (memcmp((const char *)out + i * ks, (const char *)ref->sorted + i * ks, ks) == 0) i++;
        cli_error("%s: WRONG RESULT from %s: sorted but not a permutation of the input "
                  "(first difference from the CPU backend's sort at key %zu)",
                  command, who, i);
        return 0;
    }
    if (!values) return 1;
    unsigned char *seen = calloc(n ? n : 1, 1);
    if (!seen) {
        cli_error("%s: out of memory verifying values", command);
        return 0;
    }
    int ok = 1;
    for (size_t i = 0; i < n && ok; i++) {
        uint64_t v = value_at(values, i, value_bytes);
        if (v >= n || seen[v]) {
            cli_error("%s: WRONG RESULT from %s: value %zu = %llu is %s", command, who, i,
                      (unsigned long long)v, v >= n ? "not an input index" : "duplicated");
            ok = 0;
        } else if (memcmp((const char *)orig + v * ks, (const char *)out + i * ks, ks) != 0) {
            cli_error("%s: WRONG RESULT from %s: value %zu does not follow its key (it came "
                      "with input key %llu)",
                      command, who, i, (unsigned long long)v);
            ok = 0;
        } else if ((flags & WARPSORT_STABLE) && i > 0 &&
                   memcmp((const char *)out + i * ks, (const char *)out + (i - 1) * ks, ks) == 0 &&
                   value_at(values, i - 1, value_bytes) > v) {
            cli_error("%s: WRONG RESULT from %s: not stable: equal keys %zu and %zu swapped their "
                      "input order",
                      command, who, i - 1, i);
            ok = 0;
        }
        if (ok) seen[v] = 1;
    }
    free(seen);
    return ok;
}

/*--- glibc qsort rival: comparators on the same ordered bits as the library ---*/

#define QSORT_CMP(name, T, to_ordered, kind, desc)   \
    static int name(const void *a, const void *b) {  \
        T x = to_ordered(*(const T *)a, kind, desc); \
        T y = to_ordered(*(const T *)b, kind, desc); \
        return (x > y) - (x < y);                    \
    }
QSORT_CMP(cmp_u32_asc, uint32_t, ws_to_ordered32, 0, 0)
QSORT_CMP(cmp_u32_desc, uint32_t, ws_to_ordered32, 0, 1)
QSORT_CMP(cmp_i32_asc, uint32_t, ws_to_ordered32, 1, 0)
QSORT_CMP(cmp_i32_desc, uint32_t, ws_to_ordered32, 1, 1)
QSORT_CMP(cmp_f32_asc, uint32_t, ws_to_ordered32, 2, 0)
QSORT_CMP(cmp_f32_desc, uint32_t, ws_to_ordered32, 2, 1)
QSORT_CMP(cmp_u64_asc, uint64_t, ws_to_ordered64, 0, 0)
QSORT_CMP(cmp_u64_desc, uint64_t, ws_to_ordered64, 0, 1)
QSORT_CMP(cmp_i64_asc, uint64_t, ws_to_ordered64, 1, 0)
QSORT_CMP(cmp_i64_desc, uint64_t, ws_to_ordered64, 1, 1)
QSORT_CMP(cmp_f64_asc, uint64_t, ws_to_ordered64, 2, 0)
QSORT_CMP(cmp_f64_desc, uint64_t, ws_to_ordered64, 2, 1)

typedef int (*qsort_cmp_fn)(const void *, const void *);
static const qsort_cmp_fn qsort_cmps[WARPSORT_DTYPE_COUNT_][2] = {
    [WARPSORT_U32] = {cmp_u32_asc, cmp_u32_desc}, [WARPSORT_I32] = {cmp_i32_asc, cmp_i32_desc},
    [WARPSORT_F32] = {cmp_f32_asc, cmp_f32_desc}, [WARPSORT_U64] = {cmp_u64_asc, cmp_u64_desc},
    [WARPSORT_I64] = {cmp_i64_asc, cmp_i64_desc}, [WARPSORT_F64] = {cmp_f64_asc, cmp_f64_desc},
};

/*--- timing ---*/

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct timing {
    double best, median;
} timing_t;

static timing_t summarize(double *times, size_t count) {
    qsort(times, count, sizeof *times, cmp_double);
    timing_t t;
    t.best = times[0];
    t.median = count % 2 ? times[count / 2] : 0.5 * (times[count / 2 - 1] + times[count / 2]);
    return t;
}

static void print_timing(const char *who, timing_t t, size_t n) {
    char best[32], median[32], best_rate[32], median_rate[32];
    cli_format_seconds(t.best, best, sizeof best);
    cli_format_seconds(t.median, median, sizeof median);
    cli_format_rate(t.best > 0 ? (double)n / t.best : 0.0, best_rate, sizeof best_rate);
    cli_format_rate(t.median > 0 ? (double)n / t.median : 0.0, median_rate, sizeof median_rate);
    printf("%-9s best %10s  %12skeys/s   median %10s  %12skeys/s\n", who, best, best_rate, median,
           median_rate);
}

static const char host_memory_note[] =
    "note:     the cuda backend is timed on host memory, end to end, including the copies to\n"
    "          and from the device\n";

/*--- bench ---*/

/* --qsort: glibc qsort on the same input, the same runs, each verified;
 * prints its timing and the speedup over ws. 0 if a result is wrong. */
static int bench_qsort(const bench_config_t *cfg, const void *orig, void *work,
                       const reference_t *ref, double *times, timing_t ws) {
    const size_t n = cfg->n, ks = warpsort_dtype_size(cfg->dtype);
    const size_t runs = (size_t)(cfg->warmup + cfg->repeat);
    const int desc = (cfg->flags & WARPSORT_DESCENDING) != 0;
    progress_t bar;
    progress_begin(&bar, "qsort", runs);
    for (size_t r = 0; r < runs; r++) {
        memcpy(work, orig, n * ks);
        double t0 = cli_now();
        qsort(work, n, ks, qsort_cmps[cfg->dtype][desc]);
        double t1 = cli_now();
        if (r >= cfg->warmup) times[r - cfg->warmup] = t1 - t0;
        if (!verify_result("bench", "qsort", orig, ref, work, NULL, n, cfg->dtype, cfg->value_bytes,
                           cfg->flags)) {
            progress_end(&bar);
            return 0;
        }
        progress_update(&bar, r + 1);
    }
    progress_end(&bar);
    timing_t qs = summarize(times, (size_t)cfg->repeat);
    print_timing("qsort", qs, n);
    printf("speedup:  %.2fx over glibc qsort (median), %.2fx (best)\n",
           ws.median > 0 ? qs.median / ws.median : 0.0, ws.best > 0 ? qs.best / ws.best : 0.0);
    return 1;
}

int cmd_bench(int argc, char **argv) {
    bench_config_t cfg = {0};
    cfg.n = (size_t)1 << 24;
    cfg.dtype = WARPSORT_U32;
    cfg.dist = KEYGEN_RANDOM;
    cfg.seed = 1;
    cfg.repeat = 7;
    cfg.warmup = 1;
    cfg.backend = WARPSORT_BACKEND_AUTO;
    int parsed = parse_bench_args("bench", bench_opts, sizeof bench_opts / sizeof bench_opts[0],
                                  argc, argv, &cfg);
    if (parsed < 0) return CLI_EXIT_OK;
    if (!parsed) return CLI_EXIT_ERROR;
    if (cfg.qsort && cfg.pairs) {
        cli_error("bench: --qsort times keys-only sorts; drop --pairs or --qsort");
        return CLI_EXIT_ERROR;
    }
    if (cfg.pairs && cfg.value_bytes == 4 && cfg.n > (size_t)UINT32_MAX) {
        cli_error("bench: %zu original indices do not fit in 4-byte values; use --value-bytes 8",
                  cfg.n);
        return CLI_EXIT_ERROR;
    }

    size_t n = cfg.n, ks = warpsort_dtype_size(cfg.dtype), vb = cfg.value_bytes;
    int desc = (cfg.flags & WARPSORT_DESCENDING) != 0;
    void *orig = NULL, *work = NULL, *vals = NULL;
    reference_t ref = {NULL, {0, 0}};
    double *times = NULL;
    warpsort_context_t *ctx = NULL;
    int status = CLI_EXIT_ERROR;
    size_t runs = (size_t)(cfg.warmup + cfg.repeat);

    if (!gen_check(cfg.dist, cfg.dtype, n, "bench")) goto done;
    if (!(orig = alloc_or_report("bench", n, ks)) || !(work = alloc_or_report("bench", n, ks)) ||
        !(ref.sorted = alloc_or_report("bench", n, ks)) ||
        !(times = alloc_or_report("bench", (size_t)cfg.repeat, sizeof *times)))
        goto done;
    if (cfg.pairs && !(vals = alloc_or_report("bench", n, vb))) goto done;
    gen_fill(orig, n, cfg.dtype, cfg.dist, cfg.seed);
    if (!make_reference("bench", orig, n, cfg.dtype, cfg.flags, &ref)) goto done;
    if (!cli_open_context(&ctx, cfg.backend, cfg.threads)) goto done;

    char backend[64], why[300];
    cli_auto_reason(ctx, cfg.backend, why, sizeof why);
    cli_describe_backend(ctx, cfg.threads, backend, sizeof backend);
    printf("warpsort bench: %zu %s keys (%s, seed %llu), %s%s, %s\n", n,
           warpsort_dtype_name(cfg.dtype), keygen_dist_name(cfg.dist), (unsigned long long)cfg.seed,
           desc ? "descending" : "ascending", (cfg.flags & WARPSORT_STABLE) ? ", stable" : "",
           cfg.pairs ? (vb == 4 ? "with 4-byte values" : "with 8-byte values") : "keys only");
    printf("backend:  %s; %llu timed runs after %llu warm-up\n", backend,
           (unsigned long long)cfg.repeat, (unsigned long long)cfg.warmup);
    if (why[0]) printf("why:      %s\n", why);
    fflush(stdout);

    progress_t bar;
    progress_begin(&bar, "warpsort", runs);
    for (size_t r = 0; r < runs; r++) {
        /* Every run sorts a fresh copy: sorted input would flatter later runs. */
        memcpy(work, orig, n * ks);
        if (vals) fill_indices(vals, n, vb);
        double t0 = cli_now();
        warpsort_status_t st =
            vals ? warpsort_sort_pairs(ctx, work, vals, n, cfg.dtype, vb, cfg.flags)
                 : warpsort_sort(ctx, work, n, cfg.dtype, cfg.flags);
        if (st == WARPSORT_OK) st = warpsort_synchronize(ctx);
        double t1 = cli_now();
        if (st != WARPSORT_OK) {
            progress_end(&bar);
            cli_lib_error(ctx, st, "bench: sort");
            goto done;
        }
        if (r >= cfg.warmup) times[r - cfg.warmup] = t1 - t0;
        /* Checked outside the timed region, after every run: a wrong result is
         * reported whichever run produced it. */
        if (!verify_result("bench", "warpsort", orig, &ref, work, vals, n, cfg.dtype, vb,
                           cfg.flags)) {
            progress_end(&bar);
            status = CLI_EXIT_NO;
            goto done;
        }
        progress_update(&bar, r + 1);
    }
    progress_end(&bar);
    timing_t ws = summarize(times, (size_t)cfg.repeat);
    print_timing("warpsort", ws, n);

    if (cfg.qsort && !bench_qsort(&cfg, orig, work, &ref, times, ws)) {
        status = CLI_EXIT_NO;
        goto done;
    }
    if (warpsort_last_backend(ctx) == WARPSORT_BACKEND_CUDA) fputs(host_memory_note, stdout);
    printf("verified: all %zu warpsort runs%s sorted and a permutation of the input%s\n", runs,
           cfg.qsort ? " and all qsort runs" : "",
           vals ? ((cfg.flags & WARPSORT_STABLE) ? ", values following their keys stably"
                                                 : ", values following their keys")
                : "");
    status = CLI_EXIT_OK;
done:
    warpsort_destroy(ctx);
    free(orig);
    free(work);
    free(ref.sorted);
    free(vals);
    free(times);
    return status;
}

/*--- run ---*/

/* A first sort pays one-time costs (CUDA context, module loading, thread
 * start-up); a small untimed sort first keeps them out of the reported time. */
#define RUN_WARMUP_KEYS ((size_t)1 << 16)

int cmd_run(int argc, char **argv) {
    bench_config_t cfg = {0};
    cfg.n = (size_t)1 << 24;
    cfg.dtype = WARPSORT_U32;
    cfg.dist = KEYGEN_RANDOM;
    cfg.seed = 1;
    cfg.backend = WARPSORT_BACKEND_AUTO;
    int parsed =
        parse_bench_args("run", run_opts, sizeof run_opts / sizeof run_opts[0], argc, argv, &cfg);
    if (parsed < 0) return CLI_EXIT_OK;
    if (!parsed) return CLI_EXIT_ERROR;

    size_t n = cfg.n, ks = warpsort_dtype_size(cfg.dtype);
    int desc = (cfg.flags & WARPSORT_DESCENDING) != 0;
    void *orig = NULL, *work = NULL;
    reference_t ref = {NULL, {0, 0}};
    warpsort_context_t *ctx = NULL;
    int status = CLI_EXIT_ERROR;

    if (!gen_check(cfg.dist, cfg.dtype, n, "run")) goto done;
    if (!(orig = alloc_or_report("run", n, ks)) || !(work = alloc_or_report("run", n, ks)) ||
        !(ref.sorted = alloc_or_report("run", n, ks)))
        goto done;
    gen_fill(orig, n, cfg.dtype, cfg.dist, cfg.seed);
    if (!cli_open_context(&ctx, cfg.backend, cfg.threads)) goto done;
    char why[300];
    cli_auto_reason(ctx, cfg.backend, why, sizeof why);

    /* The warm-up goes where the timed sort will (AUTO routes small host
     * arrays to the CPU), so the backend is named after it. */
    size_t warm = n < RUN_WARMUP_KEYS ? n : RUN_WARMUP_KEYS;
    memcpy(work, orig, warm * ks);
    warpsort_status_t st = warpsort_sort(ctx, work, warm, cfg.dtype, cfg.flags);
    if (st == WARPSORT_OK) st = warpsort_synchronize(ctx);
    if (st != WARPSORT_OK) {
        cli_lib_error(ctx, st, "run: sort");
        goto done;
    }
    char backend[64];
    cli_describe_backend(ctx, cfg.threads, backend, sizeof backend);
    printf("warpsort %s run: %zu %s keys (%s, seed %llu), %s\n", warpsort_version(), n,
           warpsort_dtype_name(cfg.dtype), keygen_dist_name(cfg.dist), (unsigned long long)cfg.seed,
           desc ? "descending" : "ascending");
    printf("backend:  %s\n", backend);
    if (why[0]) printf("why:      %s\n", why);
    fflush(stdout);

    memcpy(work, orig, n * ks);
    double t0 = cli_now();
    st = warpsort_sort(ctx, work, n, cfg.dtype, cfg.flags);
    if (st == WARPSORT_OK) st = warpsort_synchronize(ctx);
    double seconds = cli_now() - t0;
    if (st != WARPSORT_OK) {
        cli_lib_error(ctx, st, "run: sort");
        goto done;
    }
    char time_text[32], rate[32];
    cli_format_seconds(seconds, time_text, sizeof time_text);
    cli_format_rate(seconds > 0 ? (double)n / seconds : 0.0, rate, sizeof rate);
    printf("sorted:   %zu keys in %s = %skeys/s\n", n, time_text, rate);
    if (warpsort_last_backend(ctx) == WARPSORT_BACKEND_CUDA) fputs(host_memory_note, stdout);
    fflush(stdout);

    if (!make_reference("run", orig, n, cfg.dtype, cfg.flags, &ref)) goto done;
    if (!verify_result("run", "warpsort", orig, &ref, work, NULL, n, cfg.dtype, 0, cfg.flags)) {
        status = CLI_EXIT_NO;
        goto done;
    }
    printf("verified: sorted %s and a permutation of the input (same bit patterns by hash, "
           "equal to the CPU backend's sort)\n",
           desc ? "descending" : "ascending");
    status = CLI_EXIT_OK;
done:
    warpsort_destroy(ctx);
    free(orig);
    free(work);
    free(ref.sorted);
    return status;
}
