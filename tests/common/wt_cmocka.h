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

#include "testkit.h"

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

/* Inside a cmocka test: runs case c on ctx with arrays in mem, checked
 * against the oracle context (wt_run_case), and fails the test with the
 * case and the reason when it does not hold. */
static inline void wt_require_case(warpsort_context_t *ctx, const wt_memory_t *mem,
                                   const wt_case_t *c, warpsort_context_t *oracle) {
    char msg[512];
    if (wt_run_case(ctx, mem, c, oracle, msg, sizeof msg) != 0) {
        char what[160];
        wt_case_describe(c, what, sizeof what);
        fail_msg("[%s memory] %s: %s", mem->name, what, msg);
    }
}

/* One test of the property matrix: an operation, dtype, second size and
 * flags; the test function runs it over its suite's sizes. */
typedef struct wt_prop_param {
    wt_op_t op;
    warpsort_dtype_t dtype;
    size_t second_bytes;
    unsigned flags;
    char name[64];
} wt_prop_param_t;

/* The matrix every backend is held to: keys, pairs with 4- and 8-byte
 * values, argsort with 4- and 8-byte indices, x dtype x order x stable. */
#define WT_PROP_OPS 5
#define WT_PROP_TESTS (WT_PROP_OPS * WARPSORT_DTYPE_COUNT_ * 4)

/* Fills params and tests with the WT_PROP_TESTS tests of the matrix, named
 * prefix + "pairs_v4_f32_desc_stable" etc., each running fn with its param
 * as state. Returns the number of tests written. */
static inline size_t wt_prop_tests(wt_prop_param_t *params, struct CMUnitTest *tests,
                                   const char *prefix, CMUnitTestFunction fn) {
    static const struct {
        wt_op_t op;
        size_t second_bytes;
        const char *label;
    } ops[WT_PROP_OPS] = {{WT_OP_SORT, 0, "sort"},
                          {WT_OP_PAIRS, 4, "pairs_v4"},
                          {WT_OP_PAIRS, 8, "pairs_v8"},
                          {WT_OP_ARGSORT, 4, "argsort_i4"},
                          {WT_OP_ARGSORT, 8, "argsort_i8"}};
    size_t count = 0;
    for (size_t o = 0; o < WT_PROP_OPS; o++) {
        for (int d = 0; d < WARPSORT_DTYPE_COUNT_; d++) {
            for (unsigned flags = 0; flags < 4; flags++) { /* DESCENDING x STABLE */
                wt_prop_param_t *p = &params[count];
                p->op = ops[o].op;
                p->dtype = (warpsort_dtype_t)d;
                p->second_bytes = ops[o].second_bytes;
                p->flags = flags;
                snprintf(p->name, sizeof p->name, "%s%s_%s_%s%s", prefix, ops[o].label,
                         warpsort_dtype_name(p->dtype),
                         (flags & WARPSORT_DESCENDING) ? "desc" : "asc",
                         (flags & WARPSORT_STABLE) ? "_stable" : "");
                tests[count] = (struct CMUnitTest){p->name, fn, NULL, NULL, p};
                count++;
            }
        }
    }
    return count;
}

#endif /* WARPSORT_WT_CMOCKA_H */
