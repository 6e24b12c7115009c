/* main.c - the warpsort command: help, version and subcommand dispatch. */
#include "cli.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

static const char tool_help[] =
    "usage: warpsort <command> [options]\n"
    "\n"
    "Sorts raw binary arrays of keys with bitonic sorting networks on an NVIDIA GPU,\n"
    "or on the CPU where no GPU is usable.\n"
    "\n"
    "commands:\n"
    "  run     generate keys, sort them with the best backend, verify, report speed\n"
    "  gen     write generated keys to a binary file\n"
    "  sort    sort a binary file of keys (and a values file along with them)\n"
    "  topk    the k largest (or smallest) keys of a file, or of each row, with indices\n"
    "  check   tell whether a file is sorted (and a permutation of another file)\n"
    "  bench   time repeated sorts, optionally against glibc qsort\n"
    "  help    show the help of a command: warpsort help sort\n"
    "\n"
    "options:\n"
    "  -h, --help      show this help; 'warpsort <command> --help' for a command\n"
    "  -V, --version   print the library version\n"
    "\n"
    "Files are raw arrays in native byte order (little-endian on x86-64 and arm64)\n"
    "of one dtype: u32 i32 f32 u64 i64 f64. Sizes: 1000, 16M (16*2^20), 2^24, 2^24+1.\n"
    "Exit status: 0 success, 1 check found a problem or a result was wrong, 2 error.\n";

static const char run_help[] =
    "usage: warpsort run [options]\n"
    "\n"
    "The main job: generates keys (2^24 random u32 by default), sorts them with the\n"
    "best backend present (CUDA if a GPU is usable, else the CPU), verifies the result\n"
    "(sorted, the input's bit patterns by an order-free hash, equal to the CPU\n"
    "backend's sort) and prints backend, n, time and keys/s.\n"
    "\n"
    "  -n, --count N       number of keys (default 2^24)\n"
    "      --dtype T       u32 (default), i32, f32, u64, i64, f64\n"
    "      --dist D        distribution (default random): see 'warpsort help gen'\n"
    "      --seed S        generator seed (default 1)\n"
    "      --desc          descending order\n"
    "      --backend B     auto (default), cpu or cuda\n"
    "      --threads N     CPU backend worker threads (default: one per core;\n"
    "                      the library uses at most 256)\n";

static const char gen_help[] =
    "usage: warpsort gen -o FILE [options]\n"
    "\n"
    "Writes N keys as a raw array; the same seed always gives the same bytes.\n"
    "\n"
    "  -o, --output FILE   file to write, replaced atomically; must be a regular file\n"
    "                      or new (FIFOs and devices are refused: see 'help sort')\n"
    "  -n, --count N       number of keys (default 2^20)\n"
    "      --dtype T       u32 (default), i32, f32, u64, i64, f64\n"
    "      --dist D        random (default): uniform bits; floats finite and normal\n"
    "                      sorted, reversed: ascending / descending, ~1 in 8 repeated\n"
    "                      equal: one key repeated; few: 16 distinct keys\n"
    "                      nan-mix: random with 1 in 2 special keys (floats: NaNs of\n"
    "                        both signs, +-0, +-inf, subnormals; integers: extremes)\n"
    "                      narrow: random in one 2^24-wide band (low 3 bytes vary)\n"
    "                      iota: 0, 1, 2, ... (e.g. a values file of original indices)\n"
    "                      two: two random keys, each half the time\n"
    "                      skewed: one random key 90 % of the time, the rest random\n"
    "                      exponential: small values, exponentially distributed\n"
    "                      all-but-one: one random key everywhere but one position\n"
    "      --seed S        generator seed (default 1)\n";

static const char sort_help[] =
    "usage: warpsort sort FILE --dtype T [-o OUT] [options]\n"
    "\n"
    "Sorts the keys in FILE. Each output is written to a temporary file in its own\n"
    "directory and renamed over the destination when complete: a destination holds\n"
    "either its old bytes or the whole result, never part of it; with --values no\n"
    "signal can leave one output changed and the other not. A destination must be\n"
    "a regular file or new: FIFOs, devices and sockets (/dev/stdout on a pipe or\n"
    "terminal) are refused, as are files you may not write and files with no write\n"
    "permission bit (even for root). A replaced file keeps its mode, and its owner\n"
    "where the process may set it. Exit 2, nothing changed, on any of these.\n"
    "\n"
    "      --dtype T           key type: u32 i32 f32 u64 i64 f64 (required)\n"
    "  -o, --output OUT        write sorted keys to OUT (default: replace FILE)\n"
    "      --desc              descending order (larger keys first, NaNs first)\n"
    "      --stable            equal keys keep their input order\n"
    "      --values VFILE      values to permute along with the keys, one per key\n"
    "      --value-bytes B     bytes per value: 4 (default) or 8\n"
    "      --values-out VOUT   write the permuted values to VOUT (default: replace VFILE)\n"
    "      --backend B         auto (default), cpu or cuda\n"
    "      --threads N         CPU backend worker threads (default: one per core;\n"
    "                          the library uses at most 256)\n"
    "      --device-budget SIZE  CUDA backend: device memory the sort may use, in bytes\n"
    "                          (16M = 16 MiB; default: the free memory); larger files are\n"
    "                          sorted out of core, through host memory\n"
    "      --devices all|LIST  CUDA backend: sort files larger than the device budget on\n"
    "                          these GPUs at once (LIST: distinct numbers, e.g. 0,1; all:\n"
    "                          every GPU), each under its own budget: in core across them\n"
    "                          when each holds its share, else out of core; the first\n"
    "                          listed (device 0 for all) sorts files that fit it. Implies\n"
    "                          --backend cuda; a number with no GPU behind it is an\n"
    "                          error (exit 2, nothing written)\n"
    "      --row-length L      sort each row of L keys on its own (the keys must be\n"
    "                          whole rows; values, if any, follow within the row)\n"
    "      --offsets OFILE     sort each segment on its own: OFILE holds S + 1 u64\n"
    "                          offsets (native byte order), 0 first, the key count\n"
    "                          last, never decreasing; segment s is keys\n"
    "                          offsets[s] .. offsets[s+1]-1 (a bad offset is an\n"
    "                          error naming its index; nothing is written)\n"
    "\n"
    "Order: -0.0 before +0.0; NaNs (any sign) after +inf ascending, first descending.\n";

static const char topk_help[] =
    "usage: warpsort topk FILE --dtype T -k K [-o OUT] [--indices-out F] [options]\n"
    "\n"
    "Writes the k largest keys of FILE in descending order (or the k smallest in\n"
    "ascending order), or of each row of --row-length L keys (rows * k results, row\n"
    "by row), and/or their indices inside the file or row. Ties go to the lower\n"
    "index. Outputs are replaced atomically, as by 'sort' (see 'help sort').\n"
    "\n"
    "      --dtype T           key type: u32 i32 f32 u64 i64 f64 (required)\n"
    "  -k, --k K               how many keys per row (1 .. row length; required)\n"
    "      --smallest          the k smallest, ascending (default: the largest)\n"
    "      --row-length L      rows of L keys (default: the whole file is one row)\n"
    "  -o, --output OUT        write the selected keys to OUT\n"
    "      --indices-out F     write their indices to F (at least one output is needed)\n"
    "      --index-bytes B     bytes per index: 8 (default, u64) or 4 (u32)\n"
    "      --backend B         auto (default), cpu or cuda\n"
    "      --threads N         CPU backend worker threads (default: one per core;\n"
    "                          the library uses at most 256)\n"
    "\n"
    "Order: NaNs are the largest keys (first with the default); -0.0 before +0.0.\n";

static const char check_help[] =
    "usage: warpsort check FILE --dtype T [--desc] [--perm-of ORIG]\n"
    "\n"
    "Prints a one-line verdict. Exit 0: sorted (and a permutation of ORIG);\n"
    "1: not sorted or not a permutation; 2: error.\n"
    "\n"
    "      --dtype T       key type: u32 i32 f32 u64 i64 f64 (required)\n"
    "      --desc          check descending order\n"
    "      --perm-of ORIG  also check FILE holds exactly the bit patterns of ORIG\n";

static const char bench_help[] =
    "usage: warpsort bench [options]\n"
    "\n"
    "Generates keys, sorts fresh copies of them R times after a warm-up and prints\n"
    "the best and median keys/s; every run is verified (sorted, a permutation of the\n"
    "input, values following keys). The CUDA backend is timed on host memory,\n"
    "end to end, including the copies to and from the device.\n"
    "\n"
    "  -n, --count N       number of keys (default 2^24)\n"
    "      --dtype T       u32 (default), i32, f32, u64, i64, f64\n"
    "      --dist D        distribution (default random): see 'warpsort help gen'\n"
    "      --seed S        generator seed (default 1)\n"
    "      --repeat R      timed runs (default 7)\n"
    "      --warmup W      untimed runs first (default 1)\n"
    "      --desc          descending order\n"
    "      --stable        stable sort\n"
    "      --pairs         sort key/value pairs (values: original indices)\n"
    "      --value-bytes B bytes per value with --pairs: 4 (default) or 8\n"
    "      --qsort         also time glibc qsort (keys only) and print the speedup\n"
    "      --backend B     auto (default), cpu or cuda\n"
    "      --threads N     CPU backend worker threads (default: one per core;\n"
    "                      the library uses at most 256)\n";

static const struct {
    const char *name;
    const char *help;
    int (*run)(int argc, char **argv);
} commands[] = {
    {"run", run_help, cmd_run},       {"gen", gen_help, cmd_gen},
    {"sort", sort_help, cmd_sort},    {"topk", topk_help, cmd_topk},
    {"check", check_help, cmd_check}, {"bench", bench_help, cmd_bench},
};
#define NUM_COMMANDS (sizeof commands / sizeof commands[0])

const char *cli_command_help(const char *command) {
    for (size_t i = 0; i < NUM_COMMANDS; i++)
        if (strcmp(commands[i].name, command) == 0) return commands[i].help;
    return NULL;
}

int cli_print_help(const char *command) {
    const char *help = command ? cli_command_help(command) : tool_help;
    if (!help) {
        cli_error("unknown command '%s' (commands: run gen sort topk check bench help)", command);
        return CLI_EXIT_ERROR;
    }
    fputs(help, stdout);
    return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_ERROR;
}

/* Results go to stdout: a write error there (a full disk, a closed pipe)
 * must fail the command, not vanish with exit status 0. */
static int finish_stdout(int status) {
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_error("writing to standard output: %s", strerror(errno));
        return CLI_EXIT_ERROR;
    }
    return status;
}

static int run_command(int argc, char **argv) {
    if (argc < 2) {
        fputs(tool_help, stderr);
        return CLI_EXIT_ERROR;
    }
    const char *first = argv[1];
    if (strcmp(first, "-h") == 0 || strcmp(first, "--help") == 0) return cli_print_help(NULL);
    if (strcmp(first, "-V") == 0 || strcmp(first, "--version") == 0) {
        printf("warpsort %s\n", warpsort_version());
        return CLI_EXIT_OK;
    }
    if (strcmp(first, "help") == 0) {
        if (argc > 3) {
            cli_error("help: takes at most one command name");
            return CLI_EXIT_ERROR;
        }
        return cli_print_help(argc == 3 ? argv[2] : NULL);
    }
    for (size_t i = 0; i < NUM_COMMANDS; i++)
        if (strcmp(commands[i].name, first) == 0) return commands[i].run(argc - 1, argv + 1);
    if (first[0] == '-')
        cli_error("unknown option '%s' (see 'warpsort --help')", first);
    else
        cli_error("unknown command '%s' (commands: run gen sort topk check bench help)", first);
    return CLI_EXIT_ERROR;
}

int main(int argc, char **argv) {
    /* Past the file-size limit (ulimit -f) a write then fails with EFBIG and
     * is reported like a full disk (exit 2, temporary file removed) instead
     * of SIGXFSZ killing the process and leaving the temporary file behind. */
    signal(SIGXFSZ, SIG_IGN);
    return finish_stdout(run_command(argc, argv));
}
