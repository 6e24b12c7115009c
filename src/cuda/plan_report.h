/*
 * plan_report.h - the passes over device memory that the CUDA backend's plan
 * (plan.cuh) makes for one call, so that the bench reports the library's own
 * byte counts instead of a model of its own. Internal.
 */
#ifndef WARPSORT_CUDA_PLAN_REPORT_H
#define WARPSORT_CUDA_PLAN_REPORT_H

#include <stddef.h>

#include "warpsort.h"

typedef struct ws_pass_bytes {
    char name[32];
    unsigned long long read, written; /* bytes */
} ws_pass_bytes;

#ifdef __cplusplus
extern "C" {
#endif
/* Fills out[0 .. min(count, cap)) with the passes a device-memory sort of n
 * items (key_bytes, value_bytes) makes on ctx's device, in order, and
 * returns their count (0 for a context not on the CUDA backend). Planned
 * figures: a sample-sort level past the first is sized as if every bucket
 * of the one before needed it (an upper bound), and small reads (samples,
 * counts, merge cuts) are left out. */
size_t ws_plan_passes(const warpsort_context_t *ctx, size_t n, size_t key_bytes, size_t value_bytes,
                      ws_pass_bytes *out, size_t cap);
#ifdef __cplusplus
}
#endif

#endif /* WARPSORT_CUDA_PLAN_REPORT_H */
