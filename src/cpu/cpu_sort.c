/* placeholder until the CPU backend lands */
#include "core/internal.h"
warpsort_status_t ws_cpu_sort_pairs(warpsort_context_t *ctx, void *keys, void *values, size_t n,
                                    warpsort_dtype_t dtype, size_t value_bytes, unsigned flags) {
    (void)keys; (void)values; (void)n; (void)dtype; (void)value_bytes; (void)flags;
    return ws_error(ctx, WARPSORT_INTERNAL, "not yet");
}
warpsort_status_t ws_cpu_argsort(warpsort_context_t *ctx, const void *keys, void *indices,
                                 size_t n, warpsort_dtype_t dtype, size_t index_bytes,
                                 unsigned flags) {
    (void)keys; (void)indices; (void)n; (void)dtype; (void)index_bytes; (void)flags;
    return ws_error(ctx, WARPSORT_INTERNAL, "not yet");
}
