/*
 * rename_signal_shim.c - LD_PRELOAD library for the CLI tests: wraps
 * rename() and raises SIGINT right after the first rename that succeeds,
 * as a Ctrl-C landing between the two renames of `sort --values` would.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>

typedef int (*rename_fn)(const char *, const char *);

int rename(const char *from, const char *to) {
    static rename_fn real;
    static int raised;
    if (!real) {
        void *sym = dlsym(RTLD_NEXT, "rename");
        if (!sym) return -1;
        *(void **)&real = sym; /* POSIX: object pointer to function pointer */
    }
    int rc = real(from, to);
    if (rc == 0 && !raised) {
        raised = 1;
        raise(SIGINT);
    }
    return rc;
}
