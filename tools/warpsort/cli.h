/*
 * cli.h - shared pieces of the warpsort command-line tool: exit codes,
 * error reporting, option parsing, number parsing, timing.
 */
#ifndef WARPSORT_CLI_H
#define WARPSORT_CLI_H

#include "warpsort.h"

#include <stddef.h>
#include <stdint.h>

/* Exit status of every subcommand. */
enum {
    CLI_EXIT_OK = 0,
    CLI_EXIT_NO = 1,    /* check: not sorted / not a permutation; bench/run: wrong result */
    CLI_EXIT_ERROR = 2, /* usage error, I/O error, library error */
};

/* Prints "warpsort: <message>" as one line on stderr. */
void cli_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* Reports a failed library call: "warpsort: <what>: WARPSORT_X: <detail>". */
void cli_lib_error(const warpsort_context_t *ctx, warpsort_status_t status, const char *what);

/*--- option parsing ---*/

typedef struct cli_opt {
    int id;           /* returned by cli_next */
    const char *name; /* long name without "--" */
    char short_name;  /* 0 if none */
    int takes_value;
} cli_opt_t;

typedef struct cli_args {
    const char *command; /* for messages: "sort" */
    int argc;
    char **argv;
    int next;            /* index of the next argv element */
    int only_positional; /* after "--" */
} cli_args_t;

enum {
    CLI_ARG_END = -1,        /* no arguments left */
    CLI_ARG_POSITIONAL = -2, /* *value is a positional argument */
    CLI_ARG_HELP = -3,       /* -h / --help */
    CLI_ARG_ERROR = -4,      /* unknown option or missing value; already reported */
};

void cli_args_init(cli_args_t *args, const char *command, int argc, char **argv);
/* Returns an option id (with *value set when the option takes one), or one
 * of the CLI_ARG_* codes. Accepts --name=value, --name value, -x value. */
int cli_next(cli_args_t *args, const cli_opt_t *opts, size_t num_opts, const char **value);

/*--- values of options (each reports its own error) ---*/

/* Sizes: "1000", "16M" (binary suffixes K M G T), "2^24", with an optional
 * "+k" or "-k" offset ("2^24+1"). */
int cli_parse_size(const char *option, const char *text, size_t *out);
int cli_parse_u64(const char *option, const char *text, uint64_t max, uint64_t *out);
int cli_parse_dtype(const char *text, warpsort_dtype_t *out);
int cli_parse_backend(const char *text, warpsort_backend_t *out);
int cli_parse_value_bytes(const char *text, size_t *out);

/*--- library context ---*/

/* Creates a context for backend with threads CPU workers (0 = one per core). */
int cli_open_context(warpsort_context_t **ctx, warpsort_backend_t backend, unsigned threads);
/* The same with a device-memory budget in bytes for host arrays (0 = the
 * free device memory; larger arrays are sorted out of core). */
int cli_open_context_budget(warpsort_context_t **ctx, warpsort_backend_t backend, unsigned threads,
                            size_t device_budget);
/* The same with the devices that sort host arrays out of core (count 0:
 * none; WARPSORT_ALL_DEVICES: every device; see warpsort_config_t). */
int cli_open_context_devices(warpsort_context_t **ctx, warpsort_backend_t backend, unsigned threads,
                             size_t device_budget, const int *devices, int device_count);
/* Parses --devices: "all" (*count = WARPSORT_ALL_DEVICES) or a comma list of
 * distinct device ordinals ("0,1"), at most WARPSORT_MAX_DEVICES of them. */
int cli_parse_devices(const char *option, const char *text, int *devices, int *count);
/* "cpu (2 threads)" or "cuda". */
void cli_describe_backend(const warpsort_context_t *ctx, unsigned threads, char *buf, size_t len);
/* Where the backend was left to AUTO and it took the CPU, why (the library's
 * reason: no CUDA backend in this build, no usable device ...) into buf;
 * else "". Resolves AUTO (warpsort_get_backend), so call it before the
 * first sort, whose start clears the reason. */
void cli_auto_reason(warpsort_context_t *ctx, warpsort_backend_t requested, char *buf, size_t len);

/*--- misc ---*/

double cli_now(void); /* monotonic seconds */
/* "123.4 M" style rate with a unit suffix in buf. */
void cli_format_rate(double per_second, char *buf, size_t len);
/* "1.234 s" / "12.3 ms" */
void cli_format_seconds(double seconds, char *buf, size_t len);

/* Subcommands (argv[0] is the subcommand name). */
int cmd_gen(int argc, char **argv);
int cmd_sort(int argc, char **argv);
int cmd_topk(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_run(int argc, char **argv);

/* Help text of a subcommand (NULL if unknown), printed by main and the
 * commands themselves on --help. */
const char *cli_command_help(const char *command);
int cli_print_help(const char *command);

#endif /* WARPSORT_CLI_H */
