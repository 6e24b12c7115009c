"""Array adapters: how warpsort takes NumPy, PyTorch, CuPy and JAX arrays.

Each adapter turns an array into what the C extension needs -- a C-contiguous
block whose last axis is the one sorted, its address, and a context for the
array's device and stream -- and allocates outputs with the array's own library,
so results come back as the same array type.

Addresses:
  * NumPy (host memory): the extension's ``np_data`` (the data pointer read
    from NumPy's array object, checked at import against
    ``__array_interface__["data"]``, which is the fallback; that builds a dict
    per call, about 2 us). The extension is on the stable ABI of 3.9, which has
    no buffer protocol (that arrived in the limited API of 3.11), so NumPy
    arrays are prepared with NumPy itself (moveaxis, a contiguous copy) and
    only their address crosses into C.
  * PyTorch CUDA tensors and CuPy arrays (the fast path): the library's own
    accessors -- ``data_ptr()`` / ``get_device()`` and the raw current stream
    for torch, ``data.ptr`` / ``data.device_id`` and
    ``get_current_stream(device).ptr`` for CuPy. Every address taken is of an
    array this call made or checked C-contiguous, the Python object is held
    for the whole call, and the work is queued on the library's current
    stream of that device, where the library itself orders its ops and frees
    memory -- exactly what a torch or CuPy op relies on, so no DLPack export
    (a capsule, a stream object and several checks per array) is needed.
  * Other device arrays (JAX, and the generic route):
    ``__dlpack__(stream=..., max_version=(1, 0))`` -- a versioned DLPack 1.x
    capsule, or an unversioned one from older producers -- consumed by the
    extension, which keeps the producer's tensor alive until the call is done;
    ``__cuda_array_interface__`` when an array has no ``__dlpack__``
    (``dlpack_address``). With ``stream=`` the producer orders its pending
    work before that stream (the DLPack stream protocol; the legacy default
    stream, handle 0, is passed as 1 as the protocol asks).
  * Streams: the sort is queued on the consumer's current stream
    (torch.cuda.current_stream(), cupy.cuda.get_current_stream()) without a
    host synchronisation.
"""

import operator

import numpy as np

from . import _warpsort as _C

# Key dtype name -> warpsort_dtype_t code (include/warpsort.h).
KEY_CODES = {"uint32": 0, "int32": 1, "float32": 2, "uint64": 3, "int64": 4, "float64": 5}
FLOAT_CODES = (KEY_CODES["float32"], KEY_CODES["float64"])  # numpy_order applies to these

try:  # NumPy >= 1.25
    from numpy.exceptions import AxisError
except ImportError:  # pragma: no cover - older NumPy
    AxisError = np.AxisError

# DLPack device types (DLDeviceType) whose memory the CUDA backend can sort.
_DL_CUDA, _DL_CUDA_HOST, _DL_CUDA_MANAGED = 2, 3, 13


def _np_data_checked():
    """The extension's np_data if it agrees with __array_interface__ on every
    probe (offset, transposed, reversed and empty arrays), else the protocol."""

    def interface(a):
        return a.__array_interface__["data"][0]

    _C.np_register(np.ndarray)
    probes = (np.arange(7, dtype=np.float64)[2:], np.zeros((3, 4), np.int32).T,
              np.arange(10, dtype=np.uint64)[::-3], np.empty(0, np.uint32), np.zeros((2, 3), np.float32))
    if all(_C.np_data(a) == interface(a) for a in probes):
        return _C.np_data
    return interface  # pragma: no cover - a NumPy whose array object differs


np_address = _np_data_checked()

def key_code(dtype_name):
    """warpsort dtype code of a key dtype name; TypeError if unsupported."""
    code = KEY_CODES.get(dtype_name)
    if code is None:
        raise TypeError(
            f"warpsort sorts uint32, int32, float32, uint64, int64 and float64 keys; got {dtype_name}"
        )
    return code


def normalize_axis(axis, ndim):
    """axis as an int in [0, ndim); AxisError (a ValueError) when out of range."""
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise AxisError(axis, ndim)
    return axis % ndim


def _stream_arg(handle):
    """The DLPack stream= value for a CUDA stream handle (0, the legacy default, is 1)."""
    return 1 if handle == 0 else handle


def _compact(shape, strides):
    """True if element strides describe a C-contiguous layout of shape."""
    if strides is None:
        return True
    expect = 1
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1 and s != expect:
            return False
        expect *= n
    return True


def dlpack_address(a, stream, writable):
    """(owner, address) of a C-contiguous CUDA array, taken through DLPack.

    owner keeps the producer's memory alive; drop it after the call. stream is
    the DLPack stream= argument (None: no synchronisation requested).
    """
    if hasattr(a, "__dlpack__"):
        kwargs = {} if stream is None else {"stream": stream}
        try:
            cap = a.__dlpack__(max_version=(1, 0), **kwargs)
        except TypeError:  # producer without versioned DLPack
            cap = a.__dlpack__(**kwargs)
        owner, addr, dev_type, _dev_id, _code, _bits, lanes, shape, strides, ro = _C.dlpack_import(cap)
        if dev_type not in (_DL_CUDA, _DL_CUDA_HOST, _DL_CUDA_MANAGED):
            raise BufferError(f"DLPack device type {dev_type} is not CUDA memory")
        if lanes != 1 or not _compact(shape, strides):
            raise BufferError("warpsort needs a C-contiguous array (internal: it makes one)")
        if writable and ro:
            raise BufferError("DLPack tensor is read-only")
        return owner, addr
    cai = a.__cuda_array_interface__
    addr, ro = cai["data"]
    if cai.get("strides") is not None:
        item = np.dtype(cai["typestr"]).itemsize
        if not _compact(cai["shape"], [s // item for s in cai["strides"]]):
            raise BufferError("warpsort needs a C-contiguous array (internal: it makes one)")
    if writable and ro:
        raise BufferError("CUDA array interface: read-only array")
    return a, addr


class _Adapter:
    """What every adapter shares: the key code of an array's dtype, looked up
    once per dtype object (the hot path makes no string work), and moving the
    sorted axis last and back, which is nothing when it already is last."""

    def __init__(self):
        self._codes = {}

    def key_code(self, x):
        """warpsort dtype code of x's dtype; TypeError if unsupported."""
        dt = x.dtype
        code = self._codes.get(dt)
        if code is None:
            code = self._codes[dt] = key_code(self.dtype_name(x))
        return code

    # Arrays with a NumPy-style dtype (NumPy, CuPy, JAX): the defaults;
    # adapters whose arrays differ override them.
    def prepare(self, x):
        return x

    def dtype_name(self, x):
        return x.dtype.name

    def itemsize(self, x):
        return x.dtype.itemsize

    def is_object(self, x):
        return False

    def flatten(self, x):
        return x.reshape(-1)

    def moved(self, x, axis):
        return x if axis == x.ndim - 1 else self._moveaxis(x, axis, -1)

    def restore(self, a, axis):
        return a if axis == a.ndim - 1 else self._moveaxis(a, -1, axis)

    def address(self, a, stream, writable):
        """(owner, address) of a C-contiguous array: the generic route, DLPack."""
        return dlpack_address(a, _stream_arg(stream), writable)

    # In-place sorting (sort(..., inplace=True)): target() is the array whose
    # memory is x's, or raises; direct(m) says whether the library may sort m's
    # memory as it is (else a contiguous copy is sorted and write_back()
    # copies it into m).
    def target(self, x, a):
        raise TypeError(f"sort(inplace=True): {type(x).__name__} arrays cannot be sorted in place")

    def modified(self, x):
        pass  # x's memory was written in place: nothing to tell its library


class NumpyAdapter(_Adapter):
    """Host arrays: NumPy, and CPU tensors of other libraries through NumPy.

    wrap turns a NumPy result back into the caller's type (torch.from_numpy,
    jax.numpy.asarray); None keeps NumPy.
    """

    on_device = False

    def __init__(self, wrap=None, shares=False):
        super().__init__()
        self.wrap = wrap
        self.shares = shares  # the NumPy array handed over is a view of the caller's memory

    def prepare(self, x):
        x = np.asarray(x)
        if not x.dtype.isnative:  # the library reads native byte order
            x = x.astype(x.dtype.newbyteorder("="))
        return x

    def is_object(self, x):
        return x.dtype.kind == "O"

    _moveaxis = staticmethod(np.moveaxis)

    def fresh(self, m):
        # The one copy of the input: a new C-ordered array (empty_like(order="C")
        # inside NumPy) filled once from m, which may be a strided view. np.sort's
        # semantics: the result is a new array.
        return m.copy(order="C")

    def contiguous(self, m):
        return np.require(m, requirements=["C", "A"])

    def empty(self, shape, dtype_name, like):
        return np.empty(shape, dtype=dtype_name)

    def empty_as(self, shape, like):
        return np.empty(shape, dtype=like.dtype)

    def index_dtype(self, like):
        return "int64"

    def canonical(self, m):
        # -0.0 + 0.0 = +0.0; every NaN -> the one quiet NaN. A fresh C-contiguous copy.
        with np.errstate(invalid="ignore"):  # signalling NaNs
            c = np.add(m, m.dtype.type(0), order="C")
        c[np.isnan(c)] = np.nan
        return c

    def take_last(self, a, idx):
        return np.take_along_axis(a, idx, axis=-1)

    def restore(self, a, axis):
        if axis != a.ndim - 1:
            a = np.moveaxis(a, -1, axis)
        return self.wrap(a) if self.wrap else a

    def context_key(self, x):
        return (_C.BACKEND_AUTO, 0, 0)

    def target(self, x, a):
        # a is x itself (ndarray) or a NumPy view of a torch CPU tensor's memory;
        # anything else (a list, a JAX CPU array) has no memory to sort in place.
        if not (isinstance(a, np.ndarray) and (a is x or self.shares)):
            raise TypeError(f"sort(inplace=True) needs an array; got {type(x).__name__}")
        if not a.flags.writeable:
            raise ValueError("sort(inplace=True): the array is read-only")
        if a.dtype.kind == "O":
            raise TypeError("warpsort does not sort object arrays")
        return a

    def direct(self, m):
        return m.flags.c_contiguous and m.dtype.isnative

    def work_copy(self, m):
        return m.astype(m.dtype.newbyteorder("="), order="C")  # one copy, native order

    def write_back(self, m, block):
        np.copyto(m, block)  # converts to m's byte order where it differs

    def address(self, a, stream, writable):
        return a, np_address(a)

    def stream(self, x):
        return None

    def finish(self, ctx):
        pass  # host-array calls return once the result is in place


class TorchCpuAdapter(NumpyAdapter):
    """PyTorch CPU tensors: sorted through a NumPy view of their memory."""

    def __init__(self, torch):
        super().__init__(torch.from_numpy, shares=True)
        self.torch = torch

    def target(self, x, a):
        if x.requires_grad:
            raise ValueError("sort(inplace=True): the tensor requires grad (torch forbids in-place "
                             "changes of such tensors); detach it first")
        if x.is_neg():
            raise ValueError("sort(inplace=True): a lazily negated tensor view; resolve_neg() it first")
        return super().target(x, a)

    def modified(self, x):
        TorchAdapter.modified(self, x)


class TorchAdapter(_Adapter):
    """PyTorch CUDA tensors: outputs from torch, work on the current stream.

    Fast path: addresses from ``data_ptr()`` (every tensor addressed was made
    or checked contiguous by this call), the device from ``get_device()`` and
    the stream from ``torch._C._cuda_getCurrentRawStream(device)`` (the raw
    ``cudaStream_t`` of ``torch.cuda.current_stream(device)``, without building
    a ``torch.cuda.Stream``; the public call where torch lacks it).
    """

    on_device = True

    def __init__(self, torch):
        super().__init__()
        self.torch = torch
        self._strided = torch.strided
        self._contiguous_format = torch.contiguous_format
        self._dtypes = {"int64": torch.int64, "int32": torch.int32}
        self._empty = torch.empty
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        if raw is None:  # pragma: no cover - torch without the raw-stream binding
            current = torch.cuda.current_stream
            raw = lambda device: current(device).cuda_stream  # noqa: E731
        self._raw_stream = raw

    def prepare(self, x):
        if x.layout is not self._strided:
            raise TypeError(f"warpsort: torch tensors of layout {x.layout} are not supported (strided)")
        if x.requires_grad:
            x = x.detach()  # sorting is not differentiable here
        if x.is_neg():  # a lazily negated view: its memory holds the un-negated values
            x = x.resolve_neg()
        return x

    def dtype_name(self, x):
        return str(x.dtype).rsplit(".", 1)[-1]

    def itemsize(self, x):
        return x.element_size()

    @staticmethod
    def _moveaxis(x, src, dst):
        return x.movedim(src, dst)

    def fresh(self, m):
        return m.clone(memory_format=self._contiguous_format)

    def contiguous(self, m):
        return m.contiguous()

    def empty(self, shape, dtype_name, like):
        return self._empty(tuple(shape), dtype=self._dtypes.get(dtype_name) or getattr(self.torch, dtype_name),
                           device=like.device)

    def empty_as(self, shape, like):
        return self._empty(tuple(shape), dtype=like.dtype, device=like.device)

    def index_dtype(self, like):
        return "int64"

    def canonical(self, m):
        c = m + 0.0
        return self.torch.where(self.torch.isnan(c), float("nan"), c).contiguous()

    def take_last(self, a, idx):
        return self.torch.gather(a, -1, idx)

    def stream(self, x):
        return self._raw_stream(x.get_device())

    def context_key(self, x):
        device = x.get_device()
        return (_C.BACKEND_CUDA, device, self._raw_stream(device))

    def address(self, a, stream, writable):
        return a, a.data_ptr()

    def finish(self, ctx):
        pass  # queued on torch's current stream, like a torch op

    def target(self, x, a):
        if x.requires_grad:
            raise ValueError("sort(inplace=True): the tensor requires grad (torch forbids in-place "
                             "changes of such tensors); detach it first")
        self.prepare(x)  # layout check
        return x

    def direct(self, m):
        return m.is_contiguous() and not m.is_neg()

    def work_copy(self, m):
        return m.resolve_neg().contiguous()

    def write_back(self, m, block):
        m.copy_(block)

    def modified(self, x):
        # Written through its address: tell autograd, as an in-place torch op does
        # (a graph that saved x then refuses to backpropagate through stale values).
        bump = getattr(self.torch.autograd.graph, "increment_version", None)
        if bump is not None:
            bump(x)


class CupyAdapter(_Adapter):
    """CuPy arrays: outputs from cupy, work on cupy's current stream.

    Fast path: addresses from ``data.ptr`` (every array addressed was made or
    checked C-contiguous by this call), the device from ``data.device_id`` and
    the stream from ``cupy.cuda.get_current_stream(device_id).ptr``. CuPy
    allocates on the current device, so outputs are made inside
    ``with x.device`` only when x lives on another one.
    """

    on_device = True

    def __init__(self, cupy):
        super().__init__()
        self.cupy = cupy
        self._moveaxis = cupy.moveaxis
        self._current_device = cupy.cuda.runtime.getDevice
        self._get_stream = cupy.cuda.get_current_stream
        self._stream_takes_device = True  # CuPy >= 13: get_current_stream(device_id)

    def fresh(self, m):
        if m.data.device_id == self._current_device():
            return m.copy(order="C")
        with m.device:
            return m.copy(order="C")

    def contiguous(self, m):
        if m.flags.c_contiguous:
            return m
        with m.device:
            return self.cupy.ascontiguousarray(m)

    def empty(self, shape, dtype_name, like):
        if like.data.device_id == self._current_device():
            return self.cupy.empty(tuple(shape), dtype=dtype_name)
        with like.device:
            return self.cupy.empty(tuple(shape), dtype=dtype_name)

    def empty_as(self, shape, like):
        return self.empty(shape, like.dtype, like)

    def index_dtype(self, like):
        return "int64"

    def canonical(self, m):
        cp = self.cupy
        with m.device:
            c = cp.add(m, m.dtype.type(0))
            return cp.ascontiguousarray(cp.where(cp.isnan(c), m.dtype.type("nan"), c))

    def take_last(self, a, idx):
        with a.device:
            return self.cupy.take_along_axis(a, idx, axis=-1)

    def _stream_of(self, device):
        if self._stream_takes_device:
            try:
                return self._get_stream(device).ptr
            except TypeError:  # pragma: no cover - CuPy < 13: no device_id argument
                self._stream_takes_device = False
        with self.cupy.cuda.Device(device):
            return self._get_stream().ptr

    def stream(self, x):
        return self._stream_of(x.data.device_id)

    def context_key(self, x):
        device = x.data.device_id
        return (_C.BACKEND_CUDA, device, self._stream_of(device))

    def address(self, a, stream, writable):
        return a, a.data.ptr

    def finish(self, ctx):
        pass

    def target(self, x, a):
        return x

    def direct(self, m):
        return m.flags.c_contiguous

    def work_copy(self, m):
        return self.fresh(m)

    def write_back(self, m, block):
        with m.device:
            m[...] = block


class JaxAdapter(_Adapter):
    """JAX GPU arrays. JAX has no current stream to join and its arrays are
    immutable, so every result is a buffer this call created itself (a copy,
    or fresh zeros) and filled on the device's default stream; the call then
    waits for the sort before JAX sees the buffer. Without jax_enable_x64,
    JAX has no 64-bit types: indices come back as int32."""

    on_device = True

    def __init__(self, jax):
        import jax.numpy as jnp

        super().__init__()
        self.jax = jax
        self.jnp = jnp
        self._moveaxis = jnp.moveaxis

    @staticmethod
    def _device(a):
        return next(iter(a.devices()))

    def fresh(self, m):
        c = self.jnp.array(m, copy=True)
        c.block_until_ready()
        return c

    def contiguous(self, m):
        m.block_until_ready()  # JAX arrays are dense row-major
        return m

    def empty(self, shape, dtype_name, like):
        with self.jax.default_device(self._device(like)):
            z = self.jnp.zeros(tuple(shape), dtype=dtype_name)
        z.block_until_ready()
        return z

    def empty_as(self, shape, like):
        return self.empty(shape, like.dtype, like)

    def index_dtype(self, like):
        return self.jnp.zeros((), dtype="int64").dtype.name  # int32 without jax_enable_x64

    def canonical(self, m):
        jnp = self.jnp
        c = m + jnp.zeros((), m.dtype)
        c = jnp.where(jnp.isnan(c), jnp.array(jnp.nan, m.dtype), c)
        c.block_until_ready()
        return c

    def take_last(self, a, idx):
        return self.jnp.take_along_axis(a, idx, axis=-1)

    def stream(self, x):
        return 0

    def context_key(self, x):
        d = self._device(x)
        return (_C.BACKEND_CUDA, getattr(d, "local_hardware_id", None) or 0, 0)

    def address(self, a, stream, writable):
        # JAX buffers created by this call: writing them before JAX reads them is safe.
        return dlpack_address(a, None, False)

    def finish(self, ctx):
        _C.synchronize(ctx)


#======================================================================
# sort(x)'s fast path: a new sorted array from one row
#======================================================================
# fast_sorts maps an array type to a function (x, axis) that returns
# (src_address, out, out_address, n, dtype_code, context_key) when sort(x,
# axis=axis) is the out-of-place sort of one C-contiguous row -- a 1-D array
# along its axis, or any C-contiguous array with axis=None -- or None for the
# general path (another axis, a strided, misaligned or byte-swapped array, an
# unsupported dtype, which the general path then reports). out is a fresh 1-D array of n
# elements; the caller makes one library call, warpsort_sort_copy, which
# reads the input where it is and writes out: no copy of the input first
# (on the host a single-threaded copy into fresh pages cost more than the
# sort itself). Checks are attribute reads, cheapest first.
_HOST_KEY = (_C.BACKEND_AUTO, 0, 0)
_np_empty = np.empty


def _native_codes(dtype_of):
    """{dtype object: code} of the six key dtypes in native byte order
    (dtype_of(name): the library's dtype, or None where it has none)."""
    codes = {}
    for name, code in KEY_CODES.items():
        dt = dtype_of(name)
        if dt is not None:
            codes[dt] = code
    return codes


_NP_CODES = _native_codes(np.dtype)  # a byte-swapped dtype is not equal to these


def _numpy_sort_new(x, axis):
    if x.ndim != 1:
        if axis is not None:
            return None
    elif axis is not None and (type(axis) is not int or not -1 <= axis <= 0):
        return None
    code = _NP_CODES.get(x.dtype)
    if code is None:
        return None
    flags = x.flags
    if not (flags.c_contiguous and flags.aligned):
        return None
    n = x.size
    out = _np_empty(n, x.dtype)
    return np_address(x), out, np_address(out), n, code, _HOST_KEY


fast_sorts = {np.ndarray: _numpy_sort_new}


def _torch_sort_new(ad, strided):
    codes = _native_codes(lambda name: getattr(ad.torch, name, None))
    raw_stream, cuda = ad._raw_stream, _C.BACKEND_CUDA

    def sort_new(x, axis):
        if not x.is_cuda:
            return None  # CPU tensors: the general path, through NumPy
        if x.ndim != 1:
            if axis is not None:
                return None
        elif axis is not None and (type(axis) is not int or not -1 <= axis <= 0):
            return None
        code = codes.get(x.dtype)
        # A lazily negated view's memory holds the un-negated values. requires_grad
        # needs nothing: the result is a new tensor outside the graph, as detach() gives.
        if code is None or x.layout is not strided or x.is_neg() or not x.is_contiguous():
            return None
        device = x.get_device()
        n = x.numel()
        out = x.new_empty((n,))
        return x.data_ptr(), out, out.data_ptr(), n, code, (cuda, device, raw_stream(device))

    return sort_new


def _cupy_sort_new(ad, cupy):
    codes, current_device, cuda = _NP_CODES, ad._current_device, _C.BACKEND_CUDA
    empty = cupy.empty

    def sort_new(x, axis):
        if x.ndim != 1:
            if axis is not None:
                return None
        elif axis is not None and (type(axis) is not int or not -1 <= axis <= 0):
            return None
        code = codes.get(x.dtype)
        if code is None or not x.flags.c_contiguous:
            return None
        data = x.data
        device = data.device_id
        n = x.size
        if device == current_device():
            out = empty(n, x.dtype)
        else:
            with x.device:
                out = empty(n, x.dtype)
        return data.ptr, out, out.data.ptr, n, code, (cuda, device, ad._stream_of(device))

    return sort_new


def _numpy_route(x):
    return _NUMPY, x


def _generic_route(x):
    if isinstance(x, np.ndarray):  # ndarray subclasses
        return _NUMPY, x
    if hasattr(x, "__cuda_array_interface__"):
        raise TypeError(
            f"warpsort: CUDA arrays of type {type(x).__name__} are not supported "
            "(PyTorch, CuPy and JAX are); convert with cupy.asarray or torch.as_tensor"
        )
    if hasattr(x, "__dlpack__") and not hasattr(x, "__array__"):
        return _NUMPY, np.from_dlpack(x)  # host memory; a device producer raises here
    return _NUMPY, x


def _torch_route():
    import torch

    cuda = TorchAdapter(torch)
    cpu = TorchCpuAdapter(torch)
    hip = getattr(torch.version, "hip", None)

    if not hip:
        fast_sorts[torch.Tensor] = _torch_sort_new(cuda, torch.strided)

    def route(x):
        if x.is_cuda and not hip:
            return cuda, x
        if x.device.type == "cpu":
            return cpu, x.detach().resolve_neg().numpy()
        if hip:
            raise TypeError("warpsort: torch tensors on ROCm devices are not supported (CUDA only)")
        raise TypeError(f"warpsort: torch tensors on {x.device.type} are not supported (cpu, cuda)")

    return route


def _cupy_route():
    import cupy

    if getattr(cupy.cuda.runtime, "is_hip", False):
        def route(x):
            raise TypeError("warpsort: CuPy arrays on ROCm devices are not supported (CUDA only)")
        return route
    ad = CupyAdapter(cupy)
    fast_sorts[cupy.ndarray] = _cupy_sort_new(ad, cupy)
    return lambda x: (ad, x)


def _jax_route():
    import jax

    gpu = None
    cpu = NumpyAdapter(jax.numpy.asarray)

    def route(x):
        nonlocal gpu
        platform = next(iter(x.devices())).platform
        if platform in ("gpu", "cuda"):
            if gpu is None:
                gpu = JaxAdapter(jax)
            return gpu, x
        if platform == "cpu":
            return cpu, np.asarray(x)
        raise TypeError(f"warpsort: JAX arrays on {platform} are not supported (cpu, gpu)")

    return route


_route_makers = {"torch": _torch_route, "cupy": _cupy_route, "jax": _jax_route, "jaxlib": _jax_route}
_library_routes = {}  # library name -> route, made on first use (imports the library once)
_routes = {np.ndarray: _numpy_route}  # type -> route: one dict lookup per call after the first


def adapter_for(x):
    """(adapter, array) for any input: device arrays by their library, the rest through NumPy.

    The route is looked up by the input's type (its library's adapter is made,
    and the library imported, on the first array of that type).
    """
    t = type(x)
    route = _routes.get(t)
    if route is None:
        lib = t.__module__.split(".", 1)[0]
        make = _route_makers.get(lib)
        if make is None:
            route = _generic_route
        else:
            route = _library_routes.get(lib)
            if route is None:
                route = _library_routes[lib] = make()
        _routes[t] = route
    return route(x)


_NUMPY = NumpyAdapter()
