"""warpsort: sorting networks on NVIDIA GPUs (with a CPU backend) for Python arrays.

Functions in the array-API / NumPy shape::

    >>> import numpy as np, warpsort
    >>> warpsort.sort(np.array([3.0, -0.0, np.nan, 0.0, -1.0]))
    array([-1., -0.,  0.,  3., nan])
    >>> warpsort.argsort(np.array([30, 10, 20], dtype=np.uint32))
    array([1, 2, 0])
    >>> warpsort.top_k(np.array([1, 5, 3, 5], dtype=np.int32), 2)
    (array([5, 5], dtype=int32), array([1, 3]))

Arrays: NumPy arrays (and CPU tensors of PyTorch / JAX) are sorted in host
memory -- by the CUDA backend's host pipeline when the package was built with
CUDA and a GPU is present, else by the CPU backend -- and come back as the same
type. CuPy arrays, PyTorch CUDA tensors and JAX GPU arrays are taken through
DLPack (``__cuda_array_interface__`` as a fallback), sorted on the consumer's
current stream and returned as the same array type. Key dtypes: uint32, int32,
float32, uint64, int64, float64; others raise TypeError.

Order: NaNs sort after +inf ascending (first descending), -0.0 before +0.0,
``descending=True`` reverses the order exactly and ``stable=True`` keeps equal
keys in input order in either direction. NumPy treats -0.0 and +0.0 (and all
NaNs) as equal, so a stable argsort over mixed signed zeros differs from
``numpy.argsort(kind="stable")``; ``numpy_order=True`` gives NumPy's order.

Layout: the sorted axis is made the last, C-contiguous axis of a copy (made
once, and only where needed: sort always copies, argsort of an array already
contiguous along the axis does not); results for another axis are views of
that buffer with the axis moved back (``np.ascontiguousarray`` if you need C
order). Internally every operation works on a contiguous (rows, row_len)
block with one library call: the batched-rows calls (``warpsort_sort_rows``,
``warpsort_sort_rows_pairs``, ``warpsort_argsort_rows``, ``warpsort_topk_rows``)
for several rows, the single-array calls for one (``_sort_rows`` and friends
below).
"""

import atexit
import operator
import threading
from collections import OrderedDict

from . import _warpsort as _C

# Contexts cached past the interpreter's end are not destroyed (_warpsort.c,
# at_exit): their streams may be gone by then.
atexit.register(_C.at_exit)
from ._arrays import FLOAT_CODES, adapter_for, fast_sorts, normalize_axis

__all__ = ["sort", "argsort", "sort_pairs", "top_k", "backend", "clear_cache", "WarpsortError"]
__version__ = _C.version()

WarpsortError = _C.WarpsortError

#======================================================================
# Contexts: one per (backend, device, stream), a few kept
#======================================================================
# A warpsort context is bound to one device and stream at creation and may be
# used by one thread at a time: each cached entry carries its own lock. The
# cache is small and least-recently-used; clear_cache() empties it.
# _last holds the most recently used (key, entry): a call on the same device
# and stream as the one before (the common case) takes it without the lock
# (reading one module global is atomic); it is always also the newest entry
# of _cache, so the least-recently-used order stays right.
_CACHE_SIZE = 8
_cache = OrderedDict()
_cache_lock = threading.Lock()
_last = (None, None)


def _context(key):
    global _last
    last_key, entry = _last
    if last_key == key:
        return entry
    with _cache_lock:
        entry = _cache.get(key)
        if entry is not None:
            _cache.move_to_end(key)
            _last = (key, entry)
            return entry
    entry = (_C.create(*key), threading.Lock())
    with _cache_lock:
        entry = _cache.setdefault(key, entry)
        _cache.move_to_end(key)
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
        _last = (key, entry)
    return entry


def clear_cache():
    """Destroys the cached library contexts (and their device workspace).

    Each waits for the work it queued (a call still running keeps its own
    until it returns). The next call creates a new one.
    """
    global _last
    with _cache_lock:
        _last = (None, None)
        _cache.clear()


def backend():
    """Backend that sorts NumPy (host) arrays: ``"cuda"`` or ``"cpu"``.

    >>> import warpsort
    >>> warpsort.backend() in ("cpu", "cuda")
    True
    """
    cap, _ = _context((_C.BACKEND_AUTO, 0, 0))
    return _C.backend_name(cap)


#======================================================================
# Row operations: each takes contiguous (rows, row_len) blocks and makes one
# library call for the whole block (the extension picks the batched-rows call
# for rows > 1, the single-array call for one row). An empty block makes none.
#======================================================================
def _block(ad, a, stream, writable):
    """(owner, address, rows, row_len) of a C-contiguous array sorted along its last axis."""
    shape = tuple(a.shape)
    row_len = shape[-1]
    rows = 1
    for n in shape[:-1]:
        rows *= n
    owner, addr = ad.address(a, stream, writable) if rows * row_len else (None, 0)
    return owner, addr, rows, row_len


def _sort_rows(ad, ctx, stream, keys, code, flags):
    """Sorts each row of keys in place (warpsort_sort_rows)."""
    cap, lock = ctx
    _own, addr, rows, row_len = _block(ad, keys, stream, True)
    if rows * row_len:
        with lock:
            _C.sort_rows(cap, addr, rows, row_len, code, flags)
            ad.finish(cap)


def _sort_pairs_rows(ad, ctx, stream, keys, values, code, value_bytes, flags):
    """Sorts each row of keys in place, permuting the same row of values alike
    (warpsort_sort_rows_pairs)."""
    cap, lock = ctx
    _ok, kaddr, rows, row_len = _block(ad, keys, stream, True)
    _ov, vaddr, _, _ = _block(ad, values, stream, True)
    if rows * row_len:
        with lock:
            _C.sort_pairs_rows(cap, kaddr, vaddr, rows, row_len, code, value_bytes, flags)
            ad.finish(cap)


def _argsort_rows(ad, ctx, stream, keys, indices, code, flags):
    """Writes into each row of indices (int64 or int32) the row-local sorting
    permutation (warpsort_argsort_rows; always stable)."""
    cap, lock = ctx
    _ok, kaddr, rows, row_len = _block(ad, keys, stream, False)
    _oi, iaddr, _, _ = _block(ad, indices, stream, True)
    if rows * row_len:
        with lock:
            _C.argsort_rows(cap, kaddr, iaddr, rows, row_len, code, ad.itemsize(indices), flags)
            ad.finish(cap)


def _top_k_rows(ad, ctx, stream, keys, code, k, largest):
    """(values, indices) of shape (..., k): the k largest (smallest) keys of
    each row, best first, and their row-local positions (warpsort_topk_rows).

    The library's rules: its key order (NaNs largest, -0.0 below +0.0) and
    ties to the lower index -- the first k of a stable descending (ascending)
    argsort of the row.
    """
    cap, lock = ctx
    _ok, kaddr, rows, row_len = _block(ad, keys, stream, False)
    shape = tuple(keys.shape[:-1]) + (k,)
    values = ad.empty_as(shape, keys)
    indices = ad.empty(shape, ad.index_dtype(keys), keys)
    if rows * row_len:
        _ov, vaddr = ad.address(values, stream, True)
        _oi, iaddr = ad.address(indices, stream, True)
        with lock:
            _C.topk_rows(cap, kaddr, vaddr, iaddr, rows, row_len, code, k,
                         0 if largest else _C.TOPK_SMALLEST, ad.itemsize(indices))
            ad.finish(cap)
    return values, indices


#======================================================================
# Public API
#======================================================================
def _flags(descending, stable):
    return (_C.DESCENDING if descending else 0) | (_C.STABLE if stable else 0)


def _prepare(x, axis):
    """(adapter, array, axis) with axis=None flattened and axis normalised."""
    ad, x = adapter_for(x)
    x = ad.prepare(x)
    if ad.is_object(x):
        raise TypeError("warpsort does not sort object arrays")
    if axis is None:
        return ad, ad.flatten(x), 0
    return ad, x, normalize_axis(axis, len(x.shape))


def _numpy_order_applies(code, numpy_order):
    return bool(numpy_order) and code in FLOAT_CODES


def sort(x, /, *, axis=-1, descending=False, stable=True, numpy_order=False, inplace=False):
    """Returns a sorted copy of x along axis (with inplace=True: sorts x itself).

    Along an axis of a 2-D or N-D array every row is sorted by one library
    call (warpsort_sort_rows). One contiguous row (a 1-D array, or
    axis=None) is sorted by warpsort_sort_copy from x into the new array:
    x is read where it is, with no copy made first.

    Parameters
    ----------
    x : array
        NumPy array (or anything ``numpy.asarray`` takes), PyTorch tensor,
        CuPy array or JAX array of uint32, int32, float32, uint64, int64 or
        float64.
    axis : int or None
        Axis to sort along (default last); None sorts the flattened array.
    descending : bool
        Larger keys first (NaNs first for floats).
    stable : bool
        Keep equal keys (identical bits) in input order.
    numpy_order : bool
        Floats only: order as NumPy does, -0.0 and +0.0 equal and all NaNs
        equal (with stable=True, they keep input order instead of -0.0 first);
        costs a canonicalised copy of the keys and a key-value sort.
    inplace : bool
        Sort x's own memory and return x (as ``ndarray.sort`` /
        ``torch.Tensor.sort_``-style in-place ops): no new array of x's size
        is allocated, and host memory already in use is not page-faulted
        again. NumPy arrays, PyTorch tensors (CPU or CUDA; not ones that
        require grad) and CuPy arrays; JAX arrays are immutable (TypeError),
        as are lists (TypeError); a read-only array is a ValueError. When x is
        not C-contiguous along the axis (or not in native byte order), a
        contiguous copy is sorted and written back into x.

    Returns the same array type, dtype and shape as x (x itself with inplace=True).

    >>> import numpy as np, warpsort
    >>> warpsort.sort(np.array([[3, 1, 2], [0, 5, 4]], dtype=np.int32))
    array([[1, 2, 3],
           [0, 4, 5]], dtype=int32)
    >>> warpsort.sort(np.array([[3, 1], [0, 5]], dtype=np.int64), axis=0)
    array([[0, 1],
           [3, 5]])
    >>> warpsort.sort(np.array([0.5, np.nan, -2.0]), descending=True)
    array([ nan,  0.5, -2. ])
    >>> warpsort.sort(np.array([0.0, -0.0]), numpy_order=True)
    array([ 0., -0.])
    >>> a = np.array([3, 1, 2], dtype=np.uint32)
    >>> warpsort.sort(a, inplace=True) is a, a
    (True, array([1, 2, 3], dtype=uint32))
    """
    if inplace:
        return _sort_inplace(x, axis, descending, stable, numpy_order)
    # One C-contiguous row (1-D, or axis=None): a fresh output and one
    # warpsort_sort_copy, which reads x where it is (keys alone: stable is moot).
    fast = fast_sorts.get(type(x))
    if fast is not None and not numpy_order:
        job = fast(x, axis)
        if job is not None:
            src, out, dst, n, code, key = job
            if n:
                cap, lock = _context(key)
                with lock:
                    _C.sort_copy(cap, src, dst, n, code, _C.DESCENDING if descending else 0)
            return out
    ad, x, axis = _prepare(x, axis)
    code = ad.key_code(x)
    m = ad.moved(x, axis)
    key = ad.context_key(x)
    ctx = _context(key)
    stream = key[2] if ad.on_device else None
    if stable and _numpy_order_applies(code, numpy_order):
        keys = ad.canonical(m)
        out = ad.fresh(m)
        _sort_pairs_rows(ad, ctx, stream, keys, out, code, ad.itemsize(out), _flags(descending, True))
    else:
        out = ad.fresh(m)
        _sort_rows(ad, ctx, stream, out, code, _flags(descending, stable))
    return ad.restore(out, axis)


def _sort_inplace(x, axis, descending, stable, numpy_order):
    """sort(x, inplace=True): sorts x's memory along axis and returns x."""
    ad, a = adapter_for(x)
    t = ad.target(x, a)  # the array over x's memory, or raises
    code = ad.key_code(t)
    if axis is None:
        # Sorted as one flat row in C order: a view where t is directly sortable,
        # else a flat copy written back in t's shape.
        m = t
        block = t.reshape(-1) if ad.direct(t) else ad.work_copy(t).reshape(-1)
        back = None if ad.direct(t) else block.reshape(tuple(t.shape))
    else:
        axis = normalize_axis(axis, len(t.shape))
        m = ad.moved(t, axis)
        block = m if ad.direct(m) else ad.work_copy(m)
        back = None if block is m else block
    key = ad.context_key(t)
    ctx = _context(key)
    stream = key[2] if ad.on_device else None
    if stable and _numpy_order_applies(code, numpy_order):
        keys = ad.canonical(block)
        _sort_pairs_rows(ad, ctx, stream, keys, block, code, ad.itemsize(block), _flags(descending, True))
    else:
        _sort_rows(ad, ctx, stream, block, code, _flags(descending, stable))
    if back is not None:
        ad.write_back(m, back)
    ad.modified(x)
    return x


def argsort(x, /, *, axis=-1, descending=False, stable=True, numpy_order=False):
    """Returns the int64 indices that sort x along axis (row-local, as NumPy).

    One library call for all rows (warpsort_argsort_rows, 8-byte indices).

    Always stable (the library's argsort is): equal keys keep input order in
    either direction, so ``stable=False`` gives the same result. Parameters
    as for :func:`sort`. JAX without jax_enable_x64 gets int32 indices.

    >>> import numpy as np, warpsort
    >>> warpsort.argsort(np.array([[3, 1, 2], [0, 5, 4]], dtype=np.int32))
    array([[1, 2, 0],
           [0, 2, 1]])
    >>> warpsort.argsort(np.array([2.0, 1.0, 2.0]), descending=True)
    array([0, 2, 1])
    >>> warpsort.argsort(np.array([0.0, -0.0]))                  # -0.0 first
    array([1, 0])
    >>> warpsort.argsort(np.array([0.0, -0.0]), numpy_order=True)  # equal: input order
    array([0, 1])
    """
    del stable  # argsort is always stable
    ad, x, axis = _prepare(x, axis)
    code = ad.key_code(x)
    m = ad.moved(x, axis)
    key = ad.context_key(x)
    ctx = _context(key)
    stream = key[2] if ad.on_device else None
    keys = ad.canonical(m) if _numpy_order_applies(code, numpy_order) else ad.contiguous(m)
    indices = ad.empty(keys.shape, ad.index_dtype(x), keys)
    _argsort_rows(ad, ctx, stream, keys, indices, code, _flags(descending, True))
    return ad.restore(indices, axis)


def sort_pairs(keys, values, /, *, axis=-1, descending=False, stable=True, numpy_order=False):
    """Sorts keys along axis and permutes values alike; returns (keys, values).

    One library call for all rows (warpsort_sort_rows_pairs).

    values must be an array of the same library and shape as keys, of any
    dtype with 4- or 8-byte elements (moved as raw bits). Other parameters as
    for :func:`sort`.

    >>> import numpy as np, warpsort
    >>> k, v = warpsort.sort_pairs(np.array([3, 1, 2], dtype=np.uint32),
    ...                            np.array([30.0, 10.0, 20.0], dtype=np.float32))
    >>> k, v
    (array([1, 2, 3], dtype=uint32), array([10., 20., 30.], dtype=float32))
    """
    ad, keys, axis_k = _prepare(keys, axis)
    vad, values, _ = _prepare(values, axis)
    if vad is not ad:
        raise TypeError("sort_pairs: keys and values must be arrays of the same library")
    if tuple(keys.shape) != tuple(values.shape):
        raise ValueError(f"sort_pairs: keys shape {tuple(keys.shape)} != values shape {tuple(values.shape)}")
    code = ad.key_code(keys)
    vbytes = ad.itemsize(values)
    if vbytes not in (4, 8):
        raise TypeError(f"sort_pairs: values must have 4- or 8-byte elements; got {ad.dtype_name(values)}")
    key = ad.context_key(keys)
    if ad.on_device and ad.context_key(values) != key:
        raise ValueError("sort_pairs: keys and values must be on the same device")
    ctx = _context(key)
    stream = key[2] if ad.on_device else None
    mk, mv = ad.moved(keys, axis_k), ad.moved(values, axis_k)
    out_v = ad.fresh(mv)
    if stable and _numpy_order_applies(code, numpy_order):
        # Sort canonical keys with the positions, then gather the original keys:
        # the output keys keep their own bit patterns.
        canon = ad.canonical(mk)
        order = ad.empty(canon.shape, ad.index_dtype(keys), canon)
        _argsort_rows(ad, ctx, stream, canon, order, code, _flags(descending, True))
        out_k = ad.take_last(ad.contiguous(mk), order)
        out_v = ad.take_last(out_v, order)
    else:
        out_k = ad.fresh(mk)
        _sort_pairs_rows(ad, ctx, stream, out_k, out_v, code, vbytes, _flags(descending, stable))
    return ad.restore(out_k, axis_k), ad.restore(out_v, axis_k)


def top_k(x, k, /, *, axis=-1, largest=True):
    """Returns (values, indices) of the k largest (or smallest) entries along axis.

    The library's top-k (warpsort_topk_rows: one call for all rows along the
    axis). Sorted: largest first when largest=True (NaNs count as largest, as
    torch.topk), smallest first otherwise (NaNs last); -0.0 is below +0.0.
    Ties: the lower index first, so the result is the first k of a stable
    argsort (descending for largest). k must be in [1, n] for
    n = x.shape[axis]; axis=None flattens. Results have x's shape with k
    along axis. Indices are int64 (int32 for JAX without jax_enable_x64).

    >>> import numpy as np, warpsort
    >>> warpsort.top_k(np.array([[1.0, 4.0, 2.0], [9.0, 7.0, 8.0]]), 2)
    (array([[4., 2.],
           [9., 8.]]), array([[1, 2],
           [0, 2]]))
    >>> warpsort.top_k(np.array([5, 1, 3], dtype=np.uint64), 1, largest=False)
    (array([1], dtype=uint64), array([1]))
    >>> warpsort.top_k(np.array([2.0, np.nan, 2.0, -0.0, 0.0]), 3)
    (array([nan,  2.,  2.]), array([1, 0, 2]))
    >>> warpsort.top_k(np.array([[3, 1], [0, 5], [4, 2]], dtype=np.int32), 1, axis=0)
    (array([[4, 5]], dtype=int32), array([[2, 1]]))
    """
    ad, x, axis = _prepare(x, axis)
    code = ad.key_code(x)
    n = x.shape[axis]
    if isinstance(k, bool):
        raise TypeError("top_k: k must be an integer")
    k = operator.index(k)
    if not 1 <= k <= n:
        raise ValueError(f"top_k: k must be in [1, {n}] (the length of axis {axis}); got {k}")
    key = ad.context_key(x)
    ctx = _context(key)
    stream = key[2] if ad.on_device else None
    keys = ad.contiguous(ad.moved(x, axis))
    values, indices = _top_k_rows(ad, ctx, stream, keys, code, k, largest)
    return ad.restore(values, axis), ad.restore(indices, axis)
