"""sort(x, inplace=True): x's own memory is sorted and x returned, for every
layout (contiguous, strided views, transposes, non-native byte order, axis=None
over a non-contiguous array), checked bit for bit against the oracle and
against sort() without inplace; misuse raises."""
import numpy as np
import pytest

import warpsort as ws
from conftest import KEY_DTYPES, KEY_DTYPE_IDS, assert_bits_equal, ref_sort, sample_keys


def _sample(dtype, shape, seed):
    return sample_keys(dtype, shape, seed, zero_steps=(5, 9), tie_step=5)


def _views(base):
    """(name, view of base) pairs: the layouts an in-place sort must handle."""
    yield "whole", base
    if base.ndim >= 2:
        yield "transposed", base.T
        yield "row-strided", base[::2]
        yield "col-strided", base[:, 1::3]
    else:
        yield "strided", base[::3]
        yield "reversed", base[::-1]


@pytest.mark.parametrize("dtype", KEY_DTYPES, ids=KEY_DTYPE_IDS)
@pytest.mark.parametrize("shape", [(0,), (1,), (1000,), (17, 40), (4, 6, 9)])
@pytest.mark.parametrize("descending", [False, True])
def test_inplace_matches_oracle(dtype, shape, descending):
    for axis in [None] + list(range(-len(shape), len(shape))):
        base0 = _sample(dtype, shape, 11)
        for name, _ in _views(base0):
            base = base0.copy()
            view = dict(_views(base))[name]
            before = view.copy()
            outside = base.copy()
            got = ws.sort(view, axis=axis, descending=descending, inplace=True)
            assert got is view, (name, axis)
            if axis is None:
                want = ref_sort(before.reshape(-1), 0, descending).reshape(before.shape)
            else:
                want = ref_sort(before, axis, descending)
            assert_bits_equal(view, want)
            assert_bits_equal(view, np.reshape(ws.sort(before, axis=axis, descending=descending),
                                               before.shape))
            # Memory outside the view is untouched.
            mask = np.ones(base.shape, bool)
            dict(_views(mask))[name][...] = False
            assert_bits_equal(base[mask], outside[mask])


@pytest.mark.parametrize("order", [">", "<"])
@pytest.mark.parametrize("axis", [0, 1, None])
def test_inplace_byte_order(order, axis):
    a = _sample(np.float64, (30, 7), 3)
    x = a.astype(np.dtype(np.float64).newbyteorder(order))
    assert ws.sort(x, axis=axis, inplace=True) is x
    assert x.dtype == np.dtype(np.float64).newbyteorder(order)
    want = ref_sort(a.reshape(-1), 0).reshape(a.shape) if axis is None else ref_sort(a, axis)
    assert_bits_equal(x.astype(np.float64), want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_inplace_numpy_order(dtype):
    a = np.array([0.0, -0.0, np.nan, 1.0, -0.0, 0.0, -np.nan] * 30, dtype=dtype).reshape(10, 21)
    for axis in (0, 1, None):
        x = a.copy()
        ws.sort(x, axis=axis, numpy_order=True, inplace=True)
        assert_bits_equal(x, np.sort(a, axis=axis, kind="stable").reshape(a.shape))
        y = a.copy()
        ws.sort(y.T, axis=axis, numpy_order=True, inplace=True)
        assert_bits_equal(y.T, np.sort(a.T, axis=axis, kind="stable").reshape(a.T.shape))


def test_inplace_errors():
    with pytest.raises(TypeError, match="inplace"):
        ws.sort([3, 1, 2], inplace=True)
    ro = np.arange(5, dtype=np.int64)[::-1]
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        ws.sort(ro, inplace=True)
    assert list(ro) == [4, 3, 2, 1, 0]
    with pytest.raises(TypeError):
        ws.sort(np.zeros(4, np.int16), inplace=True)
    with pytest.raises(TypeError):
        ws.sort(np.zeros(4, object), inplace=True)
    with pytest.raises(ValueError):
        ws.sort(np.zeros((3, 4), np.int32), axis=2, inplace=True)
    x = np.array(5.0)
    with pytest.raises(ValueError):
        ws.sort(x, inplace=True)  # a 0-d array has no axis -1, as numpy.sort
    assert ws.sort(x, axis=None, inplace=True) is x


def test_inplace_stable_flag_and_no_new_array():
    # stable=False may reorder equal keys; the values are still the sorted ones.
    a = _sample(np.int32, (5000,), 9)
    x = a.copy()
    ptr = x.__array_interface__["data"][0]
    ws.sort(x, stable=False, descending=True, inplace=True)
    assert x.__array_interface__["data"][0] == ptr
    assert_bits_equal(x, ref_sort(a, 0, True))


def test_inplace_torch_cpu():
    torch = pytest.importorskip("torch")
    a = _sample(np.float32, (6, 50), 5)
    t = torch.from_numpy(a.copy())
    assert ws.sort(t, axis=0, inplace=True) is t
    assert_bits_equal(t.numpy(), ref_sort(a, 0))
    tt = torch.from_numpy(a.copy()).T  # non-contiguous: copy and write back
    ws.sort(tt, inplace=True)
    assert_bits_equal(tt.numpy(), ref_sort(a.T, -1))
    g = torch.zeros(3, requires_grad=True)
    with pytest.raises(ValueError, match="requires grad"):
        ws.sort(g, inplace=True)
    # Autograd sees the change: a graph that saved the tensor refuses to backpropagate.
    w = torch.ones(4, requires_grad=True)
    s = torch.tensor([3.0, 1.0, 2.0, 0.0])
    y = (w * s).sum()
    ws.sort(s, inplace=True)
    if hasattr(torch.autograd.graph, "increment_version"):
        with pytest.raises(RuntimeError):
            y.backward()


def test_inplace_jax_rejected():
    jax = pytest.importorskip("jax")
    with pytest.raises(TypeError, match="in place"):
        ws.sort(jax.numpy.arange(4.0), inplace=True)
