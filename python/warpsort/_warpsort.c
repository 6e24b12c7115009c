/*
 * _warpsort.c - the CPython extension behind `import warpsort`.
 *
 * Built against the stable ABI (Py_LIMITED_API = 3.9, one abi3 wheel for
 * every CPython >= 3.9), so it never touches array objects itself: the
 * Python layer (warpsort/_arrays.py) turns NumPy, PyTorch, CuPy and JAX
 * arrays into contiguous (rows, row_len) blocks and hands this module their
 * addresses as integers. This module owns three things only:
 *   - contexts (warpsort_context_t in a capsule, destroyed with it);
 *   - the row calls: one library call per (rows, row_len) block (the
 *     batched-rows and top-k calls), with the GIL released, errors raised
 *     with the library's message;
 *   - DLPack import: a producer's capsule ("dltensor_versioned" or
 *     "dltensor") is consumed (renamed "used_...") and its managed tensor
 *     moved into an owner capsule that calls the producer's deleter when
 *     the Python layer drops it.
 * The DLPack declarations below are written from the DLPack specification
 * (v1.0 ABI); only the fields read here matter, but the layouts are whole.
 */
#ifndef Py_LIMITED_API
#define Py_LIMITED_API 0x03090000
#endif
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <string.h>

#include "warpsort.h"

/*======================================================================
 * DLPack ABI (from the specification)
 *====================================================================*/
typedef struct {
    int32_t device_type; /* DLDeviceType: 1 CPU, 2 CUDA, 3 CUDA host, 13 CUDA managed, ... */
    int32_t device_id;
} ws_dl_device;

typedef struct {
    uint8_t code; /* 0 int, 1 uint, 2 float, 4 bfloat, 5 complex, 6 bool */
    uint8_t bits;
    uint16_t lanes;
} ws_dl_dtype;

typedef struct {
    void *data;
    ws_dl_device device;
    int32_t ndim;
    ws_dl_dtype dtype;
    int64_t *shape;
    int64_t *strides; /* in elements; NULL = compact row-major */
    uint64_t byte_offset;
} ws_dl_tensor;

typedef struct ws_dl_managed {
    ws_dl_tensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct ws_dl_managed *self);
} ws_dl_managed;

typedef struct {
    uint32_t major;
    uint32_t minor;
} ws_dl_version;

typedef struct ws_dl_managed_versioned {
    ws_dl_version version;
    void *manager_ctx;
    void (*deleter)(struct ws_dl_managed_versioned *self);
    uint64_t flags;
    ws_dl_tensor dl_tensor;
} ws_dl_managed_versioned;

#define WS_DL_FLAG_READ_ONLY (1ull << 0)

/*======================================================================
 * Errors
 *====================================================================*/
static PyObject *ws_error; /* warpsort.WarpsortError (RuntimeError) */

/* Raises the exception for a failed call: TypeError for a dtype, ValueError
 * for bad arguments, MemoryError for allocation, WarpsortError otherwise;
 * the text carries the library's own message. Returns NULL. */
static PyObject *ws_raise(warpsort_status_t st, const warpsort_context_t *ctx, const char *what) {
    PyObject *type = ws_error;
    switch (st) {
    case WARPSORT_UNSUPPORTED_DTYPE: type = PyExc_TypeError; break;
    case WARPSORT_INVALID_ARGUMENT:
    case WARPSORT_NULL_POINTER:
    case WARPSORT_MISALIGNED:
    case WARPSORT_OVERLAP: type = PyExc_ValueError; break;
    case WARPSORT_OUT_OF_MEMORY: type = PyExc_MemoryError; break;
    default: break;
    }
    const char *detail = ctx ? warpsort_last_error(ctx) : "";
    if (detail && detail[0])
        PyErr_Format(type, "%s: %s (%s)", what, detail, warpsort_status_name(st));
    else
        PyErr_Format(type, "%s: %s (%s)", what, warpsort_status_string(st),
                     warpsort_status_name(st));
    return NULL;
}

/*======================================================================
 * Contexts
 *====================================================================*/
static const char ws_ctx_name[] = "warpsort._context";

/* Set by at_exit() (registered with Python's atexit): from then on the
 * interpreter is finalizing, the array libraries may already have destroyed
 * the streams cached contexts were made for, and a context's destroy (which
 * waits on its stream) could crash; the process is ending and the driver
 * frees everything, so contexts are left alone. */
static int ws_exiting = 0;

static PyObject *ws_at_exit(PyObject *self, PyObject *noargs) {
    (void)self;
    (void)noargs;
    ws_exiting = 1;
    Py_RETURN_NONE;
}

static void ws_ctx_destroy(PyObject *cap) {
    warpsort_context_t *ctx = (warpsort_context_t *)PyCapsule_GetPointer(cap, ws_ctx_name);
    if (!ctx) {
        PyErr_Clear();
        return;
    }
    if (ws_exiting) return;
    /* warpsort_destroy waits for the context's queued work: let other
     * Python threads run meanwhile. */
    Py_BEGIN_ALLOW_THREADS warpsort_destroy(ctx);
    Py_END_ALLOW_THREADS
}

static warpsort_context_t *ws_ctx_get(PyObject *cap) {
    return (warpsort_context_t *)PyCapsule_GetPointer(cap, ws_ctx_name);
}

/* create(backend, device, stream) -> context capsule.
 * backend: 0 auto, 1 cpu, 2 cuda; stream: a cudaStream_t as an integer (0 = default). */
static PyObject *ws_create(PyObject *self, PyObject *args) {
    (void)self;
    int backend, device;
    unsigned long long stream;
    if (!PyArg_ParseTuple(args, "iiK", &backend, &device, &stream)) return NULL;
    warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
    cfg.backend = (warpsort_backend_t)backend;
    cfg.device = device;
    cfg.stream = (void *)(uintptr_t)stream;
    warpsort_context_t *ctx = NULL;
    warpsort_status_t st;
    Py_BEGIN_ALLOW_THREADS st = warpsort_create(&ctx, &cfg);
    Py_END_ALLOW_THREADS if (st != WARPSORT_OK) {
        if (st == WARPSORT_BACKEND_UNAVAILABLE)
            PyErr_Format(ws_error,
                         "warpsort_create(backend=%s, device=%d): %s (%s); the CUDA backend needs "
                         "a build with nvcc and a device the build has code for",
                         warpsort_backend_name(cfg.backend) ? warpsort_backend_name(cfg.backend)
                                                            : "?",
                         device, warpsort_status_string(st), warpsort_status_name(st));
        else
            ws_raise(st, NULL, "warpsort_create");
        return NULL;
    }
    PyObject *cap = PyCapsule_New(ctx, ws_ctx_name, ws_ctx_destroy);
    if (!cap) warpsort_destroy(ctx);
    return cap;
}

/* backend_name(ctx) -> "cpu" or "cuda" */
static PyObject *ws_backend_name(PyObject *self, PyObject *cap) {
    (void)self;
    warpsort_context_t *ctx = ws_ctx_get(cap);
    if (!ctx) return NULL;
    return PyUnicode_FromString(warpsort_backend_name(warpsort_get_backend(ctx)));
}

/* last_error(ctx) -> str (after create: why AUTO took the CPU backend) */
static PyObject *ws_last_error(PyObject *self, PyObject *cap) {
    (void)self;
    warpsort_context_t *ctx = ws_ctx_get(cap);
    if (!ctx) return NULL;
    return PyUnicode_FromString(warpsort_last_error(ctx));
}

/* synchronize(ctx): waits for the context's queued work; raises its error. */
static PyObject *ws_synchronize(PyObject *self, PyObject *cap) {
    (void)self;
    warpsort_context_t *ctx = ws_ctx_get(cap);
    if (!ctx) return NULL;
    warpsort_status_t st;
    Py_BEGIN_ALLOW_THREADS st = warpsort_synchronize(ctx);
    Py_END_ALLOW_THREADS if (st != WARPSORT_OK) return ws_raise(st, ctx, "warpsort_synchronize");
    Py_RETURN_NONE;
}

/*======================================================================
 * Row calls: one library call for a whole contiguous (rows, row_len) block
 *
 * rows > 1 goes to the library's batched calls (warpsort_sort_rows,
 * warpsort_sort_rows_pairs, warpsort_argsort_rows, warpsort_topk_rows),
 * which sort every row in one call; rows = 1 to the single-array calls
 * (warpsort_sort, ..., warpsort_topk), which are the library's paths for
 * one long array (on a GPU: the host pipeline for host memory, the
 * full-device sorts for device memory). Addresses are device or host
 * pointers alike; the library tells them apart.
 *====================================================================*/

/* rows and row_len must be >= 0 (they become size_t); the library checks
 * the rest (dtype, sizes, alignment, overlap) and says why it refuses. */
static int ws_check_block(Py_ssize_t rows, Py_ssize_t row_len) {
    if (rows < 0 || row_len < 0) {
        PyErr_SetString(PyExc_ValueError, "rows and row_len must be >= 0");
        return -1;
    }
    return 0;
}

#define WS_PTR(a) ((void *)(uintptr_t)(a))

/* sort_rows(ctx, keys_addr, rows, row_len, dtype, flags): sorts each row in place. */
static PyObject *ws_sort_rows(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *cap;
    unsigned long long keys;
    Py_ssize_t rows, row_len;
    int dtype;
    unsigned flags;
    if (!PyArg_ParseTuple(args, "OKnniI", &cap, &keys, &rows, &row_len, &dtype, &flags))
        return NULL;
    warpsort_context_t *ctx = ws_ctx_get(cap);
    if (!ctx || ws_check_block(rows, row_len) < 0) return NULL;
    warpsort_status_t st;
    Py_BEGIN_ALLOW_THREADS if (rows == 1) st =
        warpsort_sort(ctx, WS_PTR(keys), (size_t)row_len, (warpsort_dtype_t)dtype, flags);
    else st = warpsort_sort_rows(ctx, WS_PTR(keys), (size_t)rows, (size_t)row_len,
                                 (warpsort_dtype_t)dtype, flags);
    Py_END_ALLOW_THREADS if (st != WARPSORT_OK) return ws_raise(
        st, ctx, rows == 1 ? "warpsort_sort" : "warpsort_sort_rows");
    Py_RETURN_NONE;
}

/* sort_copy(ctx, src_addr, dst_addr, n, dtype, flags): dst receives src sorted
 * (warpsort_sort_copy: src only read; src == dst sorts in place). The out-of-place
 * sort of one array: no copy of the input on the caller's side. */
static PyObject *ws_sort_copy(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *cap;
    unsigned long long src, dst;
    Py_ssize_t n;
    int dtype;
    unsigned flags;
    if (!PyArg_ParseTuple(args, "OKKniI", &cap, &src, &dst, &n, &dtype, &flags)) return NULL;
    warpsort_context_t *ctx = ws_ctx_get(cap);
    if (!ctx || ws_check_block(1, n) < 0) return NULL;
    warpsort_status_t st;
    Py_BEGIN_ALLOW_THREADS st = warpsort_sort_copy(ctx, WS_PTR(src), WS_PTR(dst), (size_t)n,
                                                   (warpsort_dtype_t)dtype, flags);
    Py_END_ALLOW_THREADS if (st != WARPSORT_OK) return ws_raise(st, ctx, "warpsort_sort_copy");
    Py_RETURN_NONE;
}

/* sort_pairs_rows(ctx, keys_addr, values_addr, rows, row_len, dtype, value_bytes, flags):
 * sorts each row of keys in place, permuting the same row of values alike. */
static PyObject *ws_sort_pairs_rows(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *cap;
    unsigned long long keys, values;
    Py_ssize_t rows, row_len, value_bytes;
    int dtype;
    unsigned flags;
    if (!PyArg_ParseTuple(args, "OKKnninI", &cap, &keys, &values, &rows, &row_len, &dtype,
                          &value_bytes, &flags))
        return NULL;
    warpsort_context_t *ctx = ws_ctx_get(cap);
    if (!ctx || ws_check_block(rows, row_len) < 0) return NULL;
    if (value_bytes != 4 && value_bytes != 8) {
        PyErr_SetString(PyExc_TypeError, "values must have 4- or 8-byte elements");
        return NULL;
    }
    warpsort_status_t st;
    Py_BEGIN_ALLOW_THREADS if (rows == 1) st =
        warpsort_sort_pairs(ctx, WS_PTR(keys), WS_PTR(values), (size_t)row_len,
                            (warpsort_dtype_t)dtype, (size_t)value_bytes, flags);
    else st =
        warpsort_sort_rows_pairs(ctx, WS_PTR(keys), WS_PTR(values), (size_t)rows, (size_t)row_len,
                                 (warpsort_dtype_t)dtype, (size_t)value_bytes, flags);
    Py_END_ALLOW_THREADS if (st != WARPSORT_OK) return ws_raise(
        st, ctx, rows == 1 ? "warpsort_sort_pairs" : "warpsort_sort_rows_pairs");
    Py_RETURN_NONE;
}

/* argsort_rows(ctx, keys_addr, indices_addr, rows, row_len, dtype, index_bytes, flags):
 * indices are row-local (0 .. row_len-1), as numpy.argsort along an axis. */
static PyObject *ws_argsort_rows(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *cap;
    unsigned long long keys, indices;
    Py_ssize_t rows, row_len, index_bytes;
    int dtype;
    unsigned flags;
    if (!PyArg_ParseTuple(args, "OKKnninI", &cap, &keys, &indices, &rows, &row_len, &dtype,
                          &index_bytes, &flags))
        return NULL;
    warpsort_context_t *ctx = ws_ctx_get(cap);
    if (!ctx || ws_check_block(rows, row_len) < 0) return NULL;
    if (index_bytes != 4 && index_bytes != 8) {
        PyErr_SetString(PyExc_ValueError, "index_bytes must be 4 or 8");
        return NULL;
    }
    warpsort_status_t st;
    Py_BEGIN_ALLOW_THREADS if (rows == 1) st =
        warpsort_argsort(ctx, WS_PTR(keys), WS_PTR(indices), (size_t)row_len,
                         (warpsort_dtype_t)dtype, (size_t)index_bytes, flags);
    else st =
        warpsort_argsort_rows(ctx, WS_PTR(keys), WS_PTR(indices), (size_t)rows, (size_t)row_len,
                              (warpsort_dtype_t)dtype, (size_t)index_bytes, flags);
    Py_END_ALLOW_THREADS if (st != WARPSORT_OK) return ws_raise(
        st, ctx, rows == 1 ? "warpsort_argsort" : "warpsort_argsort_rows");
    Py_RETURN_NONE;
}

/* topk_rows(ctx, keys_addr, out_keys_addr, out_indices_addr, rows, row_len, dtype, k, flags,
 *           index_bytes): the k best keys of each row, best first, into rows x k outputs
 * (out_keys and out_indices row r from r*k on); indices are row-local. flags: 0 (the k
 * largest, descending) or TOPK_SMALLEST (the k smallest, ascending); ties go to the
 * lower index. An output address of 0 is not written. */
static PyObject *ws_topk_rows(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *cap;
    unsigned long long keys, out_keys, out_indices;
    Py_ssize_t rows, row_len, k, index_bytes;
    int dtype;
    unsigned flags;
    if (!PyArg_ParseTuple(args, "OKKKnninIn", &cap, &keys, &out_keys, &out_indices, &rows, &row_len,
                          &dtype, &k, &flags, &index_bytes))
        return NULL;
    warpsort_context_t *ctx = ws_ctx_get(cap);
    if (!ctx || ws_check_block(rows, row_len) < 0) return NULL;
    if (k < 0) {
        PyErr_SetString(PyExc_ValueError, "k must be >= 0");
        return NULL;
    }
    if (index_bytes != 4 && index_bytes != 8) {
        PyErr_SetString(PyExc_ValueError, "index_bytes must be 4 or 8");
        return NULL;
    }
    warpsort_status_t st;
    Py_BEGIN_ALLOW_THREADS if (rows == 1) st =
        warpsort_topk(ctx, WS_PTR(keys), (size_t)row_len, (warpsort_dtype_t)dtype, (size_t)k, flags,
                      WS_PTR(out_keys), WS_PTR(out_indices), (size_t)index_bytes);
    else st = warpsort_topk_rows(ctx, WS_PTR(keys), (size_t)rows, (size_t)row_len,
                                 (warpsort_dtype_t)dtype, (size_t)k, flags, WS_PTR(out_keys),
                                 WS_PTR(out_indices), (size_t)index_bytes);
    Py_END_ALLOW_THREADS if (st != WARPSORT_OK) return ws_raise(
        st, ctx, rows == 1 ? "warpsort_topk" : "warpsort_topk_rows");
    Py_RETURN_NONE;
}

/*======================================================================
 * NumPy array addresses
 *
 * The 3.9 limited API has no buffer protocol, and __array_interface__
 * builds a dict per call (about 2 us, more than a small sort). NumPy's
 * array object starts with the fields every compiled NumPy extension reads
 * directly (PyArray_DATA and friends inline them): NumPy's own ABI, the same
 * in 1.x and 2.x. np_data reads the data pointer there, for objects of the
 * ndarray type registered by np_register (the Python layer checks the
 * result against __array_interface__ for several arrays at import and uses
 * __array_interface__ instead if they ever disagree).
 *====================================================================*/
typedef struct {
    PyObject ob_base;
    char *data;
    int nd;
    Py_ssize_t *dimensions;
    Py_ssize_t *strides;
    PyObject *base;
    PyObject *descr;
    int flags;
} ws_np_fields;

static PyObject *ws_np_type; /* numpy.ndarray, set by np_register */

/* np_register(numpy.ndarray): the type np_data accepts (and its subclasses). */
static PyObject *ws_np_register(PyObject *self, PyObject *type) {
    (void)self;
    if (!PyType_Check(type)) {
        PyErr_SetString(PyExc_TypeError, "np_register expects numpy.ndarray");
        return NULL;
    }
    PyObject *old = ws_np_type;
    Py_INCREF(type);
    ws_np_type = type;
    Py_XDECREF(old);
    Py_RETURN_NONE;
}

/* np_data(a) -> address of a NumPy array's first element (as
 * __array_interface__["data"][0]). */
static PyObject *ws_np_data(PyObject *self, PyObject *a) {
    (void)self;
    if (!ws_np_type || !PyObject_TypeCheck(a, (PyTypeObject *)ws_np_type)) {
        PyErr_SetString(PyExc_TypeError, "np_data expects a numpy.ndarray (after np_register)");
        return NULL;
    }
    return PyLong_FromUnsignedLongLong(
        (unsigned long long)(uintptr_t)((const ws_np_fields *)(const void *)a)->data);
}

/*======================================================================
 * DLPack import
 *====================================================================*/
static const char ws_owner_v_name[] = "warpsort._dlpack_owner_versioned";
static const char ws_owner_name[] = "warpsort._dlpack_owner";

static void ws_owner_v_destroy(PyObject *cap) {
    ws_dl_managed_versioned *m =
        (ws_dl_managed_versioned *)PyCapsule_GetPointer(cap, ws_owner_v_name);
    if (!m) {
        PyErr_Clear();
        return;
    }
    if (m->deleter) m->deleter(m);
}

static void ws_owner_destroy(PyObject *cap) {
    ws_dl_managed *m = (ws_dl_managed *)PyCapsule_GetPointer(cap, ws_owner_name);
    if (!m) {
        PyErr_Clear();
        return;
    }
    if (m->deleter) m->deleter(m);
}

static PyObject *ws_int64_tuple(const int64_t *v, int32_t n) {
    PyObject *t = PyTuple_New(n);
    if (!t) return NULL;
    for (int32_t i = 0; i < n; i++) {
        PyObject *x = PyLong_FromLongLong(v[i]);
        if (!x) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SetItem(t, i, x); /* steals x */
    }
    return t;
}

/* dlpack_import(capsule) -> (owner, data_addr, device_type, device_id, dtype_code, bits, lanes,
 *                            shape, strides_or_None, readonly)
 * Consumes the capsule (renames it "used_dltensor[_versioned]"), so the producer's
 * capsule destructor no longer frees the tensor: the returned owner does, when it
 * is released. data_addr already includes byte_offset. */
static PyObject *ws_dlpack_import(PyObject *self, PyObject *cap) {
    (void)self;
    const ws_dl_tensor *t;
    PyObject *owner;
    int readonly = 0;
    if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
        ws_dl_managed_versioned *m =
            (ws_dl_managed_versioned *)PyCapsule_GetPointer(cap, "dltensor_versioned");
        if (!m) return NULL;
        if (m->version.major != 1) {
            /* Not renamed: the producer's capsule destructor still frees it. */
            PyErr_Format(PyExc_BufferError, "DLPack %u.%u tensor: this module reads DLPack 1.x",
                         (unsigned)m->version.major, (unsigned)m->version.minor);
            return NULL;
        }
        if (PyCapsule_SetName(cap, "used_dltensor_versioned") < 0) return NULL;
        owner = PyCapsule_New(m, ws_owner_v_name, ws_owner_v_destroy);
        if (!owner) {
            if (m->deleter) m->deleter(m);
            return NULL;
        }
        t = &m->dl_tensor;
        readonly = (m->flags & WS_DL_FLAG_READ_ONLY) != 0;
    } else if (PyCapsule_IsValid(cap, "dltensor")) {
        ws_dl_managed *m = (ws_dl_managed *)PyCapsule_GetPointer(cap, "dltensor");
        if (!m) return NULL;
        if (PyCapsule_SetName(cap, "used_dltensor") < 0) return NULL;
        owner = PyCapsule_New(m, ws_owner_name, ws_owner_destroy);
        if (!owner) {
            if (m->deleter) m->deleter(m);
            return NULL;
        }
        t = &m->dl_tensor;
    } else {
        PyErr_SetString(
            PyExc_TypeError,
            "expected an unconsumed DLPack capsule (\"dltensor_versioned\" or \"dltensor\")");
        return NULL;
    }
    if (t->ndim < 0 || (t->ndim > 0 && !t->shape)) {
        Py_DECREF(owner);
        PyErr_SetString(PyExc_BufferError, "malformed DLPack tensor (ndim/shape)");
        return NULL;
    }
    PyObject *shape = ws_int64_tuple(t->shape, t->ndim);
    PyObject *strides = NULL;
    if (shape) {
        if (t->strides)
            strides = ws_int64_tuple(t->strides, t->ndim);
        else {
            strides = Py_None;
            Py_INCREF(strides);
        }
    }
    if (!shape || !strides) {
        Py_XDECREF(shape);
        Py_DECREF(owner);
        return NULL;
    }
    unsigned long long addr =
        (unsigned long long)(uintptr_t)t->data + (unsigned long long)t->byte_offset;
    /* N steals owner, shape and strides. */
    return Py_BuildValue("NKiiiiiNNO", owner, addr, (int)t->device.device_type,
                         (int)t->device.device_id, (int)t->dtype.code, (int)t->dtype.bits,
                         (int)t->dtype.lanes, shape, strides, readonly ? Py_True : Py_False);
}

/*======================================================================
 * Module
 *====================================================================*/
static PyObject *ws_version(PyObject *self, PyObject *unused) {
    (void)self;
    (void)unused;
    return PyUnicode_FromString(warpsort_version());
}

static PyMethodDef ws_methods[] = {
    {"at_exit", ws_at_exit, METH_NOARGS, "at_exit() -> None: stop destroying contexts (exit)"},
    {"create", ws_create, METH_VARARGS, "create(backend, device, stream) -> context capsule"},
    {"backend_name", ws_backend_name, METH_O, "backend_name(ctx) -> 'cpu' or 'cuda'"},
    {"last_error", ws_last_error, METH_O, "last_error(ctx) -> the context's last message"},
    {"synchronize", ws_synchronize, METH_O, "synchronize(ctx): wait for queued work"},
    {"sort_rows", ws_sort_rows, METH_VARARGS,
     "sort_rows(ctx, keys_addr, rows, row_len, dtype, flags): sort each row in place"},
    {"sort_copy", ws_sort_copy, METH_VARARGS,
     "sort_copy(ctx, src_addr, dst_addr, n, dtype, flags): dst receives src sorted"},
    {"np_register", ws_np_register, METH_O, "np_register(numpy.ndarray): the type np_data reads"},
    {"np_data", ws_np_data, METH_O, "np_data(ndarray) -> address of its first element"},
    {"sort_pairs_rows", ws_sort_pairs_rows, METH_VARARGS,
     "sort_pairs_rows(ctx, keys_addr, values_addr, rows, row_len, dtype, value_bytes, flags)"},
    {"argsort_rows", ws_argsort_rows, METH_VARARGS,
     "argsort_rows(ctx, keys_addr, indices_addr, rows, row_len, dtype, index_bytes, flags)"},
    {"topk_rows", ws_topk_rows, METH_VARARGS,
     "topk_rows(ctx, keys_addr, out_keys_addr, out_indices_addr, rows, row_len, dtype, k, flags, "
     "index_bytes)"},
    {"dlpack_import", ws_dlpack_import, METH_O,
     "dlpack_import(capsule) -> (owner, addr, device_type, device_id, code, bits, lanes, shape, "
     "strides, readonly)"},
    {"version", ws_version, METH_NOARGS, "version() -> the linked library's version string"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef ws_module = {
    PyModuleDef_HEAD_INIT,
    "_warpsort",
    "warpsort C extension (stable ABI); see warpsort/__init__.py",
    -1,
    ws_methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC PyInit__warpsort(void); /* the one exported symbol */
PyMODINIT_FUNC PyInit__warpsort(void) {
    PyObject *m = PyModule_Create(&ws_module);
    if (!m) return NULL;
    ws_error = PyErr_NewExceptionWithDoc("warpsort.WarpsortError",
                                         "A warpsort library call failed (CUDA error, backend "
                                         "unavailable, internal error); the text is the library's.",
                                         PyExc_RuntimeError, NULL);
    if (!ws_error || PyModule_AddObject(m, "WarpsortError", ws_error) < 0) {
        Py_XDECREF(ws_error);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(ws_error); /* PyModule_AddObject stole one reference; keep ours */
    if (PyModule_AddIntConstant(m, "ASCENDING", WARPSORT_ASCENDING) < 0 ||
        PyModule_AddIntConstant(m, "DESCENDING", WARPSORT_DESCENDING) < 0 ||
        PyModule_AddIntConstant(m, "STABLE", WARPSORT_STABLE) < 0 ||
        PyModule_AddIntConstant(m, "TOPK_SMALLEST", WARPSORT_TOPK_SMALLEST) < 0 ||
        PyModule_AddIntConstant(m, "BACKEND_AUTO", WARPSORT_BACKEND_AUTO) < 0 ||
        PyModule_AddIntConstant(m, "BACKEND_CPU", WARPSORT_BACKEND_CPU) < 0 ||
        PyModule_AddIntConstant(m, "BACKEND_CUDA", WARPSORT_BACKEND_CUDA) < 0 ||
        PyModule_AddIntConstant(m, "VERSION_CODE", WARPSORT_VERSION_CODE) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
