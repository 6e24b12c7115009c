/*
 * wt_cmocka.h - command line shared by the cmocka test programs, so a test
 * binary copied to another machine runs standalone:
 *   --filter PATTERN   run only tests whose name matches (cmocka wildcards * ?)
 *   --quick            smaller matrix (also WARPSORT_TEST_QUICK=1)
 * WARPSORT_TEST_FILTER=PATTERN in the environment works like --filter
 * (ctest uses it to split one binary into several entries).
 */
#ifndef WARPSORT_WT_CMOCKA_H
#define WARPSORT_WT_CMOCKA_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka.h needs the three headers above first */
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parses the options above; returns 1 if the quick mode was asked for, or -1
 * after printing usage for an unknown option. */
static inline int wt_cmocka_options(int argc, char **argv) {
    int quick = 0;
    const char *env_quick = getenv("WARPSORT_TEST_QUICK");
    if (env_quick && *env_quick && strcmp(env_quick, "0") != 0) quick = 1;
    const char *filter = getenv("WARPSORT_TEST_FILTER");
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            quick = 1;
        } else if (strcmp(argv[i], "--filter") == 0 && i + 1 < argc) {
            filter = argv[++i];
        } else {
            fprintf(stderr,
                    "usage: %s [--quick] [--filter PATTERN]\n"
                    "  env: WARPSORT_TEST_FILTER=PATTERN, WARPSORT_TEST_QUICK=1\n",
                    argv[0]);
            return -1;
        }
    }
    if (filter && *filter) cmocka_set_test_filter(filter);
    return quick;
}

#endif /* WARPSORT_WT_CMOCKA_H */
