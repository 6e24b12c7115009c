/* cmd_gen.c - `warpsort gen`: write generated keys to a file. */
#include "cli.h"
#include "gen.h"
#include "io.h"

#include <stdio.h>
#include <stdlib.h>

enum { OPT_OUTPUT, OPT_COUNT, OPT_DTYPE, OPT_DIST, OPT_SEED };

static const cli_opt_t gen_opts[] = {
    {OPT_OUTPUT, "output", 'o', 1}, {OPT_COUNT, "count", 'n', 1}, {OPT_DTYPE, "dtype", 0, 1},
    {OPT_DIST, "dist", 0, 1},       {OPT_SEED, "seed", 0, 1},
};

int cmd_gen(int argc, char **argv) {
    const char *output = NULL;
    size_t n = (size_t)1 << 20;
    warpsort_dtype_t dtype = WARPSORT_U32;
    keygen_dist_t dist = KEYGEN_RANDOM;
    uint64_t seed = 1;

    cli_args_t args;
    cli_args_init(&args, "gen", argc, argv);
    const char *v;
    for (int id; (id = cli_next(&args, gen_opts, sizeof gen_opts / sizeof gen_opts[0], &v)) !=
                 CLI_ARG_END;) {
        int ok = 1;
        switch (id) {
        case CLI_ARG_HELP: return cli_print_help("gen");
        case CLI_ARG_ERROR: return CLI_EXIT_ERROR;
        case CLI_ARG_POSITIONAL:
            cli_error("gen: unexpected argument '%s' (the output file goes after -o)", v);
            return CLI_EXIT_ERROR;
        case OPT_OUTPUT: output = v; break;
        case OPT_COUNT: ok = cli_parse_size("-n", v, &n); break;
        case OPT_DTYPE: ok = cli_parse_dtype(v, &dtype); break;
        case OPT_DIST: ok = gen_dist_from_name(v, &dist); break;
        case OPT_SEED: ok = cli_parse_u64("--seed", v, UINT64_MAX, &seed); break;
        default: break;
        }
        if (!ok) return CLI_EXIT_ERROR;
    }
    if (!output) {
        cli_error("gen: -o FILE is required");
        return CLI_EXIT_ERROR;
    }

    if (!gen_check(dist, dtype, n, "gen")) return CLI_EXIT_ERROR;
    if (!io_out_check(output)) return CLI_EXIT_ERROR; /* before the work, not after */
    size_t size = warpsort_dtype_size(dtype);
    if (n > SIZE_MAX / size) {
        cli_error("gen: %zu keys of %zu bytes do not fit in memory", n, size);
        return CLI_EXIT_ERROR;
    }
    void *keys = malloc(n ? n * size : 1);
    if (!keys) {
        cli_error("gen: out of memory for %zu keys", n);
        return CLI_EXIT_ERROR;
    }
    gen_fill(keys, n, dtype, dist, seed);
    int ok = io_write_file(output, keys, n * size, "writing");
    free(keys);
    if (!ok) return CLI_EXIT_ERROR;
    printf("wrote %zu %s keys (%s, seed %llu) to %s\n", n, warpsort_dtype_name(dtype),
           keygen_dist_name(dist), (unsigned long long)seed, output);
    return CLI_EXIT_OK;
}
