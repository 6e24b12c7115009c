/* cli.c - error reporting, option and number parsing, context set-up. */
#include "cli.h"

#include "core/pool.h" /* WS_CPU_MAX_THREADS: the library's cap */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void cli_error(const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* Callers pass file names and library text: keep the promise of one line. */
    for (char *p = msg; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    fprintf(stderr, "warpsort: %s\n", msg);
}

void cli_lib_error(const warpsort_context_t *ctx, warpsort_status_t status, const char *what) {
    const char *detail = ctx ? warpsort_last_error(ctx) : "";
    if (!detail || !*detail) detail = warpsort_status_string(status);
    cli_error("%s: %s: %s", what, warpsort_status_name(status), detail);
}

/*--- option parsing ---*/

void cli_args_init(cli_args_t *args, const char *command, int argc, char **argv) {
    args->command = command;
    args->argc = argc;
    args->argv = argv;
    args->next = 1; /* argv[0] is the subcommand */
    args->only_positional = 0;
}

static const cli_opt_t *find_long(const cli_opt_t *opts, size_t num, const char *name,
                                  size_t name_len) {
    for (size_t i = 0; i < num; i++)
        if (strlen(opts[i].name) == name_len && strncmp(opts[i].name, name, name_len) == 0)
            return &opts[i];
    return NULL;
}

int cli_next(cli_args_t *args, const cli_opt_t *opts, size_t num_opts, const char **value) {
    *value = NULL;
    if (args->next >= args->argc) return CLI_ARG_END;
    char *arg = args->argv[args->next++];

    /* "-" alone is a positional argument by convention; "--" ends options. */
    if (args->only_positional || arg[0] != '-' || arg[1] == '\0') {
        *value = arg;
        return CLI_ARG_POSITIONAL;
    }
    if (strcmp(arg, "--") == 0) {
        args->only_positional = 1;
        return cli_next(args, opts, num_opts, value);
    }
    if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) return CLI_ARG_HELP;

    const cli_opt_t *opt = NULL;
    const char *inline_value = NULL;
    if (arg[1] == '-') {
        const char *name = arg + 2;
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        opt = find_long(opts, num_opts, name, len);
        if (!opt) {
            cli_error("%s: unknown option '--%.*s' (see 'warpsort %s --help')", args->command,
                      (int)len, name, args->command);
            return CLI_ARG_ERROR;
        }
        if (eq) inline_value = eq + 1;
    } else {
        for (size_t i = 0; i < num_opts; i++)
            if (opts[i].short_name && opts[i].short_name == arg[1]) opt = &opts[i];
        if (!opt) {
            cli_error("%s: unknown option '-%c' (see 'warpsort %s --help')", args->command, arg[1],
                      args->command);
            return CLI_ARG_ERROR;
        }
        if (arg[2] != '\0') {
            if (!opt->takes_value) {
                cli_error("%s: option '-%c' takes no value (got '%s')", args->command, arg[1], arg);
                return CLI_ARG_ERROR;
            }
            inline_value = arg + 2; /* "-ofile" */
        }
    }

    if (!opt->takes_value) {
        if (inline_value) {
            cli_error("%s: option '--%s' takes no value", args->command, opt->name);
            return CLI_ARG_ERROR;
        }
        return opt->id;
    }
    if (inline_value) {
        *value = inline_value;
    } else if (args->next < args->argc) {
        *value = args->argv[args->next++];
    } else {
        cli_error("%s: option '--%s' needs a value", args->command, opt->name);
        return CLI_ARG_ERROR;
    }
    return opt->id;
}

/*--- numbers ---*/

/* Parses leading decimal digits; 0 on overflow or no digits. */
static int parse_digits(const char **p, uint64_t *out) {
    const char *s = *p;
    uint64_t v = 0;
    if (*s < '0' || *s > '9') return 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10) return 0;
        v = v * 10 + d;
    }
    *p = s;
    *out = v;
    return 1;
}

static int parse_size_term(const char **p, uint64_t *out) {
    uint64_t base;
    if (!parse_digits(p, &base)) return 0;
    if (**p == '^') {
        uint64_t exp, v = 1;
        (*p)++;
        if (!parse_digits(p, &exp)) return 0;
        /* 0^k and 1^k need no loop; any larger base overflows by k = 64. */
        if (base <= 1) {
            *out = exp == 0 ? 1 : base;
            return 1;
        }
        if (exp > 64) return 0;
        for (uint64_t i = 0; i < exp; i++) {
            if (base != 0 && v > UINT64_MAX / base) return 0;
            v *= base;
        }
        *out = v;
        return 1;
    }
    unsigned shift = 0;
    switch (**p) {
    case 'k':
    case 'K': shift = 10; break;
    case 'm':
    case 'M': shift = 20; break;
    case 'g':
    case 'G': shift = 30; break;
    case 't':
    case 'T': shift = 40; break;
    default: break;
    }
    if (shift) {
        (*p)++;
        if (**p == 'i') (*p)++; /* "16Mi" means the same */
        if (base > (UINT64_MAX >> shift)) return 0;
        base <<= shift;
    }
    *out = base;
    return 1;
}

int cli_parse_size(const char *option, const char *text, size_t *out) {
    const char *p = text;
    uint64_t v;
    int ok = parse_size_term(&p, &v);
    if (ok && (*p == '+' || *p == '-')) {
        char sign = *p++;
        uint64_t off;
        ok = parse_digits(&p, &off);
        if (ok && sign == '+') ok = off <= UINT64_MAX - v, v += off;
        if (ok && sign == '-') ok = off <= v, v -= off;
    }
    if (!ok || *p != '\0' || v > SIZE_MAX) {
        cli_error("%s: bad size '%s' (examples: 1000, 16M, 2^24, 2^24+1)", option, text);
        return 0;
    }
    *out = (size_t)v;
    return 1;
}

int cli_parse_u64(const char *option, const char *text, uint64_t max, uint64_t *out) {
    const char *p = text;
    uint64_t v;
    if (!parse_digits(&p, &v) || *p != '\0') {
        cli_error("%s: bad number '%s'", option, text);
        return 0;
    }
    if (v > max) {
        cli_error("%s: %s is too large (at most %llu)", option, text, (unsigned long long)max);
        return 0;
    }
    *out = v;
    return 1;
}

int cli_parse_dtype(const char *text, warpsort_dtype_t *out) {
    if (warpsort_dtype_from_name(text, out) != WARPSORT_OK) {
        cli_error("unknown dtype '%s' (use u32, i32, f32, u64, i64 or f64)", text);
        return 0;
    }
    return 1;
}

int cli_parse_backend(const char *text, warpsort_backend_t *out) {
    static const warpsort_backend_t all[] = {WARPSORT_BACKEND_AUTO, WARPSORT_BACKEND_CPU,
                                             WARPSORT_BACKEND_CUDA};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (strcmp(text, warpsort_backend_name(all[i])) == 0) {
            *out = all[i];
            return 1;
        }
    }
    cli_error("unknown backend '%s' (use auto, cpu or cuda)", text);
    return 0;
}

int cli_parse_value_bytes(const char *text, size_t *out) {
    if (strcmp(text, "4") == 0 || strcmp(text, "8") == 0) {
        *out = (size_t)(text[0] - '0');
        return 1;
    }
    cli_error("--value-bytes: must be 4 or 8, got '%s'", text);
    return 0;
}

/*--- context ---*/

int cli_open_context(warpsort_context_t **ctx, warpsort_backend_t backend, unsigned threads) {
    return cli_open_context_budget(ctx, backend, threads, 0);
}

int cli_open_context_budget(warpsort_context_t **ctx, warpsort_backend_t backend, unsigned threads,
                            size_t device_budget) {
    return cli_open_context_devices(ctx, backend, threads, device_budget, NULL, 0);
}

int cli_open_context_devices(warpsort_context_t **ctx, warpsort_backend_t backend, unsigned threads,
                             size_t device_budget, const int *devices, int device_count) {
    warpsort_config_t config = WARPSORT_CONFIG_INIT;
    config.backend = backend;
    config.cpu_threads = threads;
    config.device_budget_bytes = device_budget;
    config.devices = device_count > 0 ? devices : NULL;
    config.device_count = device_count;
    /* The first listed device also sorts what fits it, in core. */
    if (device_count > 0) config.device = devices[0];
    warpsort_status_t st = warpsort_create(ctx, &config);
    if (st != WARPSORT_OK) {
        char why[600] = "";
        if (*warpsort_create_error()) snprintf(why, sizeof why, " (%s)", warpsort_create_error());
        cli_error("cannot use backend %s: %s: %s%s", warpsort_backend_name(backend),
                  warpsort_status_name(st), warpsort_status_string(st), why);
        return 0;
    }
    return 1;
}

int cli_parse_devices(const char *option, const char *text, int *devices, int *count) {
    if (strcmp(text, "all") == 0) {
        *count = WARPSORT_ALL_DEVICES;
        return 1;
    }
    int n = 0;
    for (const char *p = text;;) {
        uint64_t v;
        const char *start = p;
        if (!parse_digits(&p, &v) || (*p != ',' && *p != '\0')) {
            cli_error("%s: bad device list '%s' at '%s' (all, or device numbers like 0,1)", option,
                      text, start);
            return 0;
        }
        if (v > 1023) {
            cli_error("%s: device %llu in '%s' is out of range", option, (unsigned long long)v,
                      text);
            return 0;
        }
        if (n == WARPSORT_MAX_DEVICES) {
            cli_error("%s: more than %d devices in '%s'", option, WARPSORT_MAX_DEVICES, text);
            return 0;
        }
        for (int i = 0; i < n; i++)
            if (devices[i] == (int)v) {
                cli_error("%s: device %d appears twice in '%s'", option, devices[i], text);
                return 0;
            }
        devices[n++] = (int)v;
        if (*p == '\0') break;
        p++;
    }
    *count = n;
    return 1;
}

void cli_describe_backend(const warpsort_context_t *ctx, unsigned threads, char *buf, size_t len) {
    /* The backend that ran the last call; before any, the one the context
     * uses for the GPU's work (AUTO sends small host arrays to the CPU). */
    warpsort_backend_t b = warpsort_last_backend(ctx);
    if (b == WARPSORT_BACKEND_AUTO) b = warpsort_get_backend(ctx);
    if (b == WARPSORT_BACKEND_CPU) {
        /* Same default and cap as the library: one worker per online core,
         * never more than WS_CPU_MAX_THREADS. */
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        unsigned t = threads ? threads : (cores > 0 ? (unsigned)cores : 1u);
        if (t > WS_CPU_MAX_THREADS) t = WS_CPU_MAX_THREADS;
        snprintf(buf, len, "cpu (%u thread%s)", t, t == 1 ? "" : "s");
    } else {
        snprintf(buf, len, "%s", warpsort_backend_name(b));
    }
}

void cli_auto_reason(warpsort_context_t *ctx, warpsort_backend_t requested, char *buf, size_t len) {
    buf[0] = '\0';
    if (requested != WARPSORT_BACKEND_AUTO || warpsort_get_backend(ctx) != WARPSORT_BACKEND_CPU)
        return;
    snprintf(buf, len, "%s", warpsort_last_error(ctx));
}

/*--- misc ---*/

double cli_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void cli_format_rate(double per_second, char *buf, size_t len) {
    if (per_second >= 1e9)
        snprintf(buf, len, "%.2f G", per_second / 1e9);
    else if (per_second >= 1e6)
        snprintf(buf, len, "%.2f M", per_second / 1e6);
    else if (per_second >= 1e3)
        snprintf(buf, len, "%.2f K", per_second / 1e3);
    else
        snprintf(buf, len, "%.2f ", per_second);
}

void cli_format_seconds(double seconds, char *buf, size_t len) {
    if (seconds >= 1.0)
        snprintf(buf, len, "%.3f s", seconds);
    else if (seconds >= 1e-3)
        snprintf(buf, len, "%.3f ms", seconds * 1e3);
    else
        snprintf(buf, len, "%.1f us", seconds * 1e6);
}
