/*
 * device_sort.cu - the leaf's entry (device_sort.h): runs the plan's path.
 */
#include "device_sort.h"

#include "core/keybits.h"

cudaError_t ws_device_sort_from(const ws_plan_t *plan, const void *keys_in, const void *vals_in,
                                void *keys, void *vals, warpsort_dtype_t dtype, int descending,
                                int stable, void *workspace, cudaStream_t stream,
                                const char **failed) {
    const warpsort::key_codec codec = {ws_dtype_kind(dtype), descending};
    const char *what = "device sort";
    /* Keys alone: the codec is a bijection, so equal keys are identical bits
     * and any order of them is the stable one; the unstable kernels (fewer
     * registers, block atomics) give the same bytes. */
    const bool st = stable && plan->value_bytes > 0;
    unsigned char *ws = (unsigned char *)workspace;
    void *v = plan->value_bytes ? vals : nullptr;
    const void *vin = plan->value_bytes ? vals_in : nullptr;
    /* The small path would take a NULL vals_in for "generate positions". */
    if (plan->n && plan->value_bytes && (!vals_in || !vals)) {
        if (failed) *failed = "device sort: values without an array";
        return cudaErrorInvalidValue;
    }
    cudaError_t err;
    switch (plan->path) {
    case WS_PATH_SMALL:
        err = ws_small_sort_run(plan, keys_in, vin, keys, v, codec, st, stream, &what);
        break;
    case WS_PATH_COOP:
        err = ws_coop_sort_run(plan, keys_in, vin, keys, v, codec, st, ws, stream, &what);
        break;
    case WS_PATH_SAMPLE:
        err = ws_sample_sort_run(plan, keys_in, vin, keys, v, codec, st, ws, stream, &what);
        break;
    default:
        err = ws_merge_sort_run(plan, keys_in, vin, keys, v, codec, st, ws, stream, &what);
        break;
    }
    if (failed) *failed = what;
    return err;
}

cudaError_t ws_device_sort(const ws_plan_t *plan, void *keys, void *vals, warpsort_dtype_t dtype,
                           int descending, int stable, void *workspace, cudaStream_t stream,
                           const char **failed) {
    return ws_device_sort_from(plan, keys, vals, keys, vals, dtype, descending, stable, workspace,
                               stream, failed);
}
