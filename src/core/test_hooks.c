/* test_hooks.c - reads the test hooks (test_hooks.h) from the environment. */
#include "test_hooks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ws_test_hooks_read(ws_test_hooks *h) {
    memset(h, 0, sizeof *h);
    const char *v = getenv("WARPSORT_SAMPLE_MIN_N");
    /* "0" asks for the sample sort at every size: 1 keeps "unset" distinct. */
    if (v && *v) {
        const unsigned long long m = strtoull(v, NULL, 0);
        h->sample_min_n = m ? (size_t)m : 1;
    }
    v = getenv("WARPSORT_SAMPLE_SPLITTERS");
    if (v && *v) {
        const unsigned long s = strtoul(v, NULL, 0);
        h->sample_splitters = s < 1 ? 1u : s > 1023 ? 1023u : (unsigned)s;
    }
    v = getenv("WARPSORT_SAMPLE_LEVELS");
    if (v && *v) {
        const long s = strtol(v, NULL, 0);
        h->sample_levels = s < 1 ? 1 : s > 4 ? 4 : (int)s;
    }
    v = getenv("WARPSORT_SMEM_LIMIT");
    if (v && *v) {
        char *end = NULL;
        const unsigned long long b = strtoull(v, &end, 10);
        if (*end != '\0' || b == 0 || b > ((size_t)1 << 30))
            snprintf(h->smem_limit_bad, sizeof h->smem_limit_bad, "%s", v);
        else
            h->smem_limit = (size_t)b;
    }
    v = getenv("WARPSORT_FORCE_NO_KERNEL_IMAGE");
    h->force_no_kernel_image = v && *v && strcmp(v, "0") != 0;
    v = getenv("WARPSORT_TEST_OOC_WORKERS");
    if (v && *v) {
        const unsigned long k = strtoul(v, NULL, 10);
        h->ooc_workers = k < 2 ? 0u : k > 16 ? 16u : (unsigned)k;
    }
    v = getenv("WARPSORT_TEST_SPREAD");
    h->spread = v && *v && strcmp(v, "0") != 0;
    v = getenv("WARPSORT_TOPK_PATH");
    if (v && *v) {
        static const char *const names[] = {"rows",  "rows-narrow",   "warp",          "filter",
                                            "radix", "filter-narrow", "filter-single", "rows-l2"};
        for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++)
            if (strcmp(v, names[i]) == 0) h->topk_path = WS_TOPK_PATH_ROWS + i;
    }
    v = getenv("WARPSORT_NO_PDL");
    h->no_pdl = v && *v && strcmp(v, "0") != 0;
    v = getenv("WARPSORT_NO_COOP");
    h->no_coop = v && *v && strcmp(v, "0") != 0;
    v = getenv("WARPSORT_SEG_NO_RADIX");
    h->seg_no_radix = v && *v && strcmp(v, "0") != 0;
    v = getenv("WARPSORT_SEG_NO_CLUSTER");
    h->seg_no_cluster = v && *v && strcmp(v, "0") != 0;
    v = getenv("WARPSORT_MERGE_NO_RADIX");
    h->merge_no_radix = v && *v && strcmp(v, "0") != 0;
    v = getenv("WARPSORT_ONE_STREAM");
    h->one_stream = v && *v && strcmp(v, "0") != 0;
    v = getenv("WARPSORT_TRACE");
    if (v && *v && strlen(v) < sizeof h->trace_path) strcpy(h->trace_path, v);
}
