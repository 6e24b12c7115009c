/* dtype.c - the dtype and backend tables. */
#include "internal.h"

#include <string.h>

static const struct {
    const char *name;
    size_t size;
} ws_dtypes[WARPSORT_DTYPE_COUNT_] = {
    [WARPSORT_U32] = {"u32", 4}, [WARPSORT_I32] = {"i32", 4}, [WARPSORT_F32] = {"f32", 4},
    [WARPSORT_U64] = {"u64", 8}, [WARPSORT_I64] = {"i64", 8}, [WARPSORT_F64] = {"f64", 8},
};

static int ws_dtype_valid(warpsort_dtype_t d) {
    return (int)d >= 0 && (int)d < WARPSORT_DTYPE_COUNT_;
}

size_t warpsort_dtype_size(warpsort_dtype_t dtype) {
    return ws_dtype_valid(dtype) ? ws_dtypes[dtype].size : 0;
}

const char *warpsort_dtype_name(warpsort_dtype_t dtype) {
    return ws_dtype_valid(dtype) ? ws_dtypes[dtype].name : NULL;
}

warpsort_status_t warpsort_dtype_from_name(const char *name, warpsort_dtype_t *dtype) {
    if (!name || !dtype) return WARPSORT_NULL_POINTER;
    for (int i = 0; i < WARPSORT_DTYPE_COUNT_; i++) {
        if (strcmp(name, ws_dtypes[i].name) == 0) {
            *dtype = (warpsort_dtype_t)i;
            return WARPSORT_OK;
        }
    }
    return WARPSORT_UNSUPPORTED_DTYPE;
}

const char *warpsort_backend_name(warpsort_backend_t backend) {
    switch (backend) {
    case WARPSORT_BACKEND_AUTO: return "auto";
    case WARPSORT_BACKEND_CPU: return "cpu";
    case WARPSORT_BACKEND_CUDA: return "cuda";
    }
    return NULL;
}
