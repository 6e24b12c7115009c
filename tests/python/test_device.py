"""Device arrays: PyTorch CUDA tensors, CuPy arrays and JAX GPU arrays, taken
through DLPack and sorted on the consumer's current stream; results must be
the same array type on the same device and agree with the oracle (computed on
the host). Every test skips without the library or a CUDA device (and the
whole file without a CUDA build of warpsort: the CPU backend cannot sort
device memory)."""
import numpy as np
import pytest
from numpy.testing import assert_array_equal

import warpsort as ws
from conftest import KEY_DTYPES, KEY_DTYPE_IDS, assert_bits_equal, device_lib, ref_argsort, ref_sort, sample_keys

LIBS = ["torch", "cupy", "jax"]


def _to_device(lib, name, a):
    if name == "torch":
        return lib.from_numpy(np.ascontiguousarray(a)).cuda()
    if name == "cupy":
        return lib.asarray(a)
    return lib.device_put(a, lib.devices("gpu")[0])


def _to_host(name, x):
    if name == "torch":
        return x.cpu().numpy()
    if name == "cupy":
        return x.get()
    return np.asarray(x)


@pytest.fixture(params=LIBS)
def dev(request):
    lib = device_lib(request.param)
    if ws.backend() != "cuda":
        pytest.skip("warpsort was built without CUDA (or sees no device)")
    if request.param == "jax":
        import jax

        jax.config.update("jax_enable_x64", True)
    return request.param, lib


_sample = sample_keys  # NaNs, signed zeros, ties (conftest)


@pytest.mark.parametrize("dtype", KEY_DTYPES, ids=KEY_DTYPE_IDS)
@pytest.mark.parametrize("shape,axis", [((1000,), -1), ((70, 33), 1), ((70, 33), 0), ((5, 4, 300), 1),
                                        ((0, 5), -1), ((3000,), None)])
def test_sort_argsort_device(dev, dtype, shape, axis):
    # peer: test_properties.test_sort_matches_oracle_and_numpy / test_argsort_matches_oracle
    name, lib = dev
    a = _sample(dtype, shape, 1)
    x = _to_device(lib, name, a)
    ra, rax = (a.reshape(-1), 0) if axis is None else (a, axis)
    for descending in (False, True):
        s = ws.sort(x, axis=axis, descending=descending)
        assert type(s) is type(x)
        assert_bits_equal(_to_host(name, s), ref_sort(ra, rax, descending))
        i = ws.argsort(x, axis=axis, descending=descending)
        assert type(i) is type(x)
        assert_array_equal(_to_host(name, i), ref_argsort(ra, rax, descending))
    assert_bits_equal(_to_host(name, x), a)  # input untouched


@pytest.mark.parametrize("dtype", [np.float32, np.int64], ids=["f32", "i64"])
def test_top_k_and_pairs_device(dev, dtype):
    name, lib = dev
    a = _sample(dtype, (40, 257), 2)
    x = _to_device(lib, name, a)
    v, i = ws.top_k(x, 10, axis=-1)
    perm = ref_argsort(a, -1, True)[:, :10]
    assert_array_equal(_to_host(name, i), perm)
    assert_bits_equal(_to_host(name, v), np.take_along_axis(a, perm, -1))
    vals = _to_device(lib, name, np.arange(a.size, dtype=np.int32).reshape(a.shape))
    k_out, v_out = ws.sort_pairs(x, vals, axis=0)
    perm = ref_argsort(a, 0)
    assert_bits_equal(_to_host(name, k_out), np.take_along_axis(a, perm, 0))
    assert_array_equal(_to_host(name, v_out), np.take_along_axis(np.arange(a.size).reshape(a.shape), perm, 0))


@pytest.mark.parametrize("dtype", [np.uint32, np.float64], ids=["u32", "f64"])
@pytest.mark.parametrize("shape,axis,k", [((40, 257), -1, 1), ((40, 257), -1, 257), ((40, 257), 0, 7),
                                          ((3, 5, 100), 1, 5), ((64, 1), -1, 1), ((1, 5000), -1, 100),
                                          ((5000,), None, 5000), ((0, 9), -1, 4)])
def test_top_k_batched_device(dev, dtype, shape, axis, k):
    # peer: test_batched.test_top_k_batched (warpsort_topk_rows on device pointers)
    name, lib = dev
    a = _sample(dtype, shape, 4)
    x = _to_device(lib, name, a)
    ra, rax = (a.reshape(-1), 0) if axis is None else (a, axis)
    for largest in (True, False):
        v, i = ws.top_k(x, k, axis=axis, largest=largest)
        assert type(v) is type(x) and type(i) is type(x)
        perm = np.take(ref_argsort(ra, rax, largest), np.arange(k), axis=rax)
        assert_array_equal(_to_host(name, i), perm)
        assert_bits_equal(_to_host(name, v), np.take_along_axis(ra, perm, rax))


def test_numpy_order_device(dev):
    name, lib = dev
    a = np.array([0.0, -0.0, np.nan, 1.0, -0.0, 0.0] * 50, dtype=np.float32)
    x = _to_device(lib, name, a)
    assert_array_equal(_to_host(name, ws.argsort(x, numpy_order=True)), np.argsort(a, kind="stable"))
    assert_bits_equal(_to_host(name, ws.sort(x, numpy_order=True)), np.sort(a, kind="stable"))


@pytest.mark.parametrize("name", ["torch", "cupy"])
def test_current_stream_is_used(name):
    # The sort is queued on the consumer's non-default current stream: the result is
    # right when read on that stream after work queued on it before the sort. That work
    # (x * -1.0) writes a new buffer with values unlike the input's, so a sort queued
    # elsewhere would read it unwritten. The GPU multiply turns every NaN into the
    # canonical GPU NaN, so the reference is built from x as the sort received it, read
    # back on that stream after the sort (which leaves x untouched).
    lib = device_lib(name)
    if ws.backend() != "cuda":
        pytest.skip("warpsort was built without CUDA (or sees no device)")
    a = _sample(np.float32, (1 << 20,), 3)
    if name == "torch":
        s = lib.cuda.Stream()
        with lib.cuda.stream(s):
            assert lib.cuda.current_stream().cuda_stream != 0
            x = lib.from_numpy(a).cuda(non_blocking=False)
            x = x * -1.0  # queued on s right before the sort
            out = ws.sort(x)
            idx = ws.argsort(x)
            s.synchronize()
            xs, got, gi = x.cpu().numpy(), out.cpu().numpy(), idx.cpu().numpy()
    else:
        s = lib.cuda.Stream(non_blocking=True)
        with s:
            x = lib.asarray(a) * -1.0  # queued on s right before the sort
            out = ws.sort(x)
            idx = ws.argsort(x)
            s.synchronize()
            xs, got, gi = x.get(stream=s), out.get(stream=s), idx.get(stream=s)
    assert not np.array_equal(xs[~np.isnan(xs)], a[~np.isnan(a)])  # the multiply changed the values
    assert_bits_equal(got, ref_sort(xs))
    assert_array_equal(gi, ref_argsort(xs))


@pytest.mark.parametrize("name", ["torch", "cupy"])
def test_dlpack_import_device(name):
    lib = device_lib(name)
    from warpsort import _warpsort as _C
    from warpsort._arrays import adapter_for, dlpack_address

    a = _to_device(lib, name, np.arange(10, dtype=np.float64))
    owner, addr, dev_type, dev_id, code, bits, lanes, shape, strides, ro = _C.dlpack_import(
        a.__dlpack__(stream=1))
    want = a.data_ptr() if name == "torch" else a.data.ptr
    assert (addr, dev_type, code, bits, shape) == (want, 2, 2, 64, (10,))
    # The fast path (the library's own accessors) and the generic DLPack route agree
    # on the address and on the current stream.
    ad, x = adapter_for(a)
    assert ad.address(x, None, True)[1] == want == dlpack_address(x, 1, True)[1]
    current = (lib.cuda.current_stream().cuda_stream if name == "torch"
               else lib.cuda.get_current_stream().ptr)
    assert ad.context_key(x)[1:] == (0, current)


@pytest.mark.parametrize("name", ["torch", "cupy"])
def test_inplace_device(name):
    # sort(x, inplace=True) sorts the device memory of x (and of strided views of it).
    lib = device_lib(name)
    if ws.backend() != "cuda":
        pytest.skip("warpsort was built without CUDA (or sees no device)")
    a = _sample(np.float32, (64, 300), 6)
    x = _to_device(lib, name, a)
    ptr = x.data_ptr() if name == "torch" else x.data.ptr
    assert ws.sort(x, axis=-1, inplace=True) is x
    assert (x.data_ptr() if name == "torch" else x.data.ptr) == ptr
    assert_bits_equal(_to_host(name, x), ref_sort(a, -1))
    x = _to_device(lib, name, a)
    v = x.T  # not contiguous along axis 0 of the view
    ws.sort(v, axis=0, descending=True, inplace=True)
    assert_bits_equal(_to_host(name, x), ref_sort(a, 1, True))
    x = _to_device(lib, name, a)
    ws.sort(x[::2], axis=None, inplace=True)
    want = a.copy()
    want[::2] = ref_sort(a[::2].reshape(-1), 0).reshape(a[::2].shape)
    assert_bits_equal(_to_host(name, x), want)


def test_torch_cpu_tensor_roundtrip():
    torch = pytest.importorskip("torch")
    t = torch.tensor([3.0, 1.0, 2.0], requires_grad=True)
    out = ws.sort(t)
    assert isinstance(out, torch.Tensor)
    assert out.tolist() == [1.0, 2.0, 3.0]
    assert ws.argsort(t).dtype == torch.int64


def test_jax_device_inplace_rejected(dev):
    name, lib = dev
    if name != "jax":
        pytest.skip("JAX only")
    with pytest.raises(TypeError, match="in place"):
        ws.sort(_to_device(lib, name, np.arange(5.0)), inplace=True)
