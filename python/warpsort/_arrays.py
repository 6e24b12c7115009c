"""Array adapters: how warpsort takes NumPy, PyTorch, CuPy and JAX arrays.

Each adapter turns an array into what the C extension needs -- a C-contiguous
block whose last axis is the one sorted, its address, and a context for the
array's device and stream -- and allocates outputs with the array's own library,
so results come back as the same array type.

Addresses:
  * NumPy (host memory): ``__array_interface__["data"]``. The extension is on
    the stable ABI of 3.9, which has no buffer protocol (that arrived in the
    limited API of 3.11), so NumPy arrays are prepared with NumPy itself
    (moveaxis, a contiguous copy) and only their address crosses into C.
  * Device arrays: ``__dlpack__(stream=..., max_version=(1, 0))`` -- a versioned
    DLPack 1.x capsule, or an unversioned one from older producers -- consumed
    by the extension, which keeps the producer's tensor alive until the call
    is done; ``__cuda_array_interface__`` when an array has no ``__dlpack__``.
  * Streams (DLPack stream protocol): the consumer's current stream is passed
    as ``stream=`` (torch.cuda.current_stream(), cupy.cuda.get_current_stream();
    the legacy default stream, handle 0, is passed as 1 as the protocol asks)
    and the sort is queued on that same stream, without a host synchronisation.
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

    def moved(self, x, axis):
        return x if axis == x.ndim - 1 else self._moveaxis(x, axis, -1)

    def restore(self, a, axis):
        return a if axis == a.ndim - 1 else self._moveaxis(a, -1, axis)


class NumpyAdapter(_Adapter):
    """Host arrays: NumPy, and CPU tensors of other libraries through NumPy.

    wrap turns a NumPy result back into the caller's type (torch.from_numpy,
    jax.numpy.asarray); None keeps NumPy.
    """

    on_device = False

    def __init__(self, wrap=None):
        super().__init__()
        self.wrap = wrap

    def prepare(self, x):
        x = np.asarray(x)
        if not x.dtype.isnative:  # the library reads native byte order
            x = x.astype(x.dtype.newbyteorder("="))
        return x

    def dtype_name(self, x):
        return x.dtype.name

    def itemsize(self, x):
        return x.dtype.itemsize

    def is_object(self, x):
        return x.dtype.kind == "O"

    def flatten(self, x):
        return x.reshape(-1)

    _moveaxis = staticmethod(np.moveaxis)

    def fresh(self, m):
        return np.array(m, order="C", copy=True)

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

    def address(self, a, stream, writable):
        return a, a.__array_interface__["data"][0]

    def stream(self, x):
        return None

    def finish(self, ctx):
        pass  # host-array calls return once the result is in place


class TorchAdapter(_Adapter):
    """PyTorch CUDA tensors: outputs from torch, work on the current stream."""

    on_device = True

    def __init__(self, torch):
        super().__init__()
        self.torch = torch

    def prepare(self, x):
        return x.detach()  # sorting is not differentiable here; DLPack refuses grad tensors

    def dtype_name(self, x):
        return str(x.dtype).rsplit(".", 1)[-1]

    def itemsize(self, x):
        return x.element_size()

    def is_object(self, x):
        return False

    def flatten(self, x):
        return x.reshape(-1)

    @staticmethod
    def _moveaxis(x, src, dst):
        return x.movedim(src, dst)

    def fresh(self, m):
        return m.clone(memory_format=self.torch.contiguous_format)

    def contiguous(self, m):
        return m.contiguous()

    def empty(self, shape, dtype_name, like):
        return self.torch.empty(tuple(shape), dtype=getattr(self.torch, dtype_name), device=like.device)

    def empty_as(self, shape, like):
        return self.torch.empty(tuple(shape), dtype=like.dtype, device=like.device)

    def index_dtype(self, like):
        return "int64"

    def canonical(self, m):
        c = m + 0.0
        return self.torch.where(self.torch.isnan(c), float("nan"), c).contiguous()

    def take_last(self, a, idx):
        return self.torch.gather(a, -1, idx)

    def stream(self, x):
        return self.torch.cuda.current_stream(x.device).cuda_stream

    def context_key(self, x):
        return (_C.BACKEND_CUDA, x.device.index or 0, self.stream(x))

    def address(self, a, stream, writable):
        return dlpack_address(a, _stream_arg(stream), writable)

    def finish(self, ctx):
        pass  # queued on torch's current stream, like a torch op


class CupyAdapter(_Adapter):
    """CuPy arrays: outputs from cupy, work on cupy's current stream."""

    on_device = True

    def __init__(self, cupy):
        super().__init__()
        self.cupy = cupy
        self._moveaxis = cupy.moveaxis

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


    def fresh(self, m):
        with m.device:
            return m.copy(order="C")

    def contiguous(self, m):
        with m.device:
            return self.cupy.ascontiguousarray(m)

    def empty(self, shape, dtype_name, like):
        with like.device:
            return self.cupy.empty(tuple(shape), dtype=dtype_name)

    def empty_as(self, shape, like):
        with like.device:
            return self.cupy.empty(tuple(shape), dtype=like.dtype)

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

    def stream(self, x):
        with x.device:
            return self.cupy.cuda.get_current_stream().ptr

    def context_key(self, x):
        return (_C.BACKEND_CUDA, x.device.id, self.stream(x))

    def address(self, a, stream, writable):
        return dlpack_address(a, _stream_arg(stream), writable)

    def finish(self, ctx):
        pass


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


_adapters = {}


def adapter_for(x):
    """(adapter, array) for any input: device arrays by their library, the rest through NumPy."""
    if isinstance(x, np.ndarray):
        return _NUMPY, x
    lib = type(x).__module__.split(".", 1)[0]
    if lib == "torch":
        import torch

        if x.device.type == "cuda":
            return _cached("torch", lambda: TorchAdapter(torch)), x
        if x.device.type == "cpu":
            return _cached("torch-cpu", lambda: NumpyAdapter(torch.from_numpy)), x.detach().numpy()
        raise TypeError(f"warpsort: torch tensors on {x.device.type} are not supported (cpu, cuda)")
    if lib == "cupy":
        import cupy

        return _cached("cupy", lambda: CupyAdapter(cupy)), x
    if lib in ("jax", "jaxlib"):
        import jax

        platform = next(iter(x.devices())).platform
        if platform in ("gpu", "cuda"):
            return _cached("jax", lambda: JaxAdapter(jax)), x
        if platform == "cpu":
            return _cached("jax-cpu", lambda: NumpyAdapter(jax.numpy.asarray)), np.asarray(x)
        raise TypeError(f"warpsort: JAX arrays on {platform} are not supported (cpu, gpu)")
    if hasattr(x, "__cuda_array_interface__"):
        raise TypeError(
            f"warpsort: CUDA arrays of type {type(x).__name__} are not supported "
            "(PyTorch, CuPy and JAX are); convert with cupy.asarray or torch.as_tensor"
        )
    if hasattr(x, "__dlpack__") and not hasattr(x, "__array__"):
        return _NUMPY, np.from_dlpack(x)  # host memory; a device producer raises here
    return _NUMPY, x


def _cached(name, make):
    a = _adapters.get(name)
    if a is None:
        a = _adapters[name] = make()
    return a


_NUMPY = NumpyAdapter()
