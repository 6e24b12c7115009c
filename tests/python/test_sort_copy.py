"""sort(x) of one contiguous row (a 1-D array, or axis=None): the out-of-place
library call warpsort_sort_copy into a fresh output, with no copy of the input
first; the other layouts still take the general path. Also the extension's
np_data (NumPy addresses without __array_interface__) and sort_copy's own
errors. The oracle is conftest's ref_sort (the library's order written in
NumPy)."""
import numpy as np
import pytest

import warpsort as ws
from conftest import KEY_DTYPES, KEY_DTYPE_IDS, assert_bits_equal, ref_sort, sample_keys
from warpsort import _warpsort as _C
from warpsort._arrays import np_address


class _Recorder:
    """Stands in for the extension module: records the sorting calls by name."""

    def __init__(self):
        self.calls = []

    def __getattr__(self, name):
        f = getattr(_C, name)
        if name not in ("sort_copy", "sort_rows", "sort_pairs_rows"):
            return f

        def record(*args):
            self.calls.append(name)
            return f(*args)

        return record


@pytest.mark.parametrize("dtype", KEY_DTYPES, ids=KEY_DTYPE_IDS)
@pytest.mark.parametrize("n", [0, 1, 2, 63, 64, 65, 1000, 2047, 2048, 2049, 70001])
@pytest.mark.parametrize("descending", [False, True])
def test_one_row_every_dtype(monkeypatch, dtype, n, descending):
    rec = _Recorder()
    monkeypatch.setattr(ws, "_C", rec)
    a = sample_keys(dtype, (n,), n + 5)
    keep = a.copy()
    for axis in (-1, 0, None):
        rec.calls.clear()
        out = ws.sort(a, axis=axis, descending=descending)
        assert out.dtype == a.dtype and out.shape == (n,)
        assert_bits_equal(out, ref_sort(a, 0, descending))
        assert not np.shares_memory(out, a)
        assert rec.calls == (["sort_copy"] if n else [])
    assert_bits_equal(a, keep)  # the input is only read


@pytest.mark.parametrize("shape", [(), (7, 9), (3, 0), (2, 3, 40)])
def test_flattened_contiguous(monkeypatch, shape):
    rec = _Recorder()
    monkeypatch.setattr(ws, "_C", rec)
    a = sample_keys(np.float64, shape, 3)
    out = ws.sort(a, axis=None)
    assert out.shape == (a.size,)
    assert_bits_equal(out, ref_sort(a.reshape(-1), 0))
    assert rec.calls == (["sort_copy"] if a.size else [])
    assert np.sort(a, axis=None).shape == out.shape  # NumPy's shape for axis=None


def test_general_path_layouts(monkeypatch):
    # Strided, misaligned, byte-swapped, read-only, N-D along an axis, numpy_order: all
    # sorted right; the ones that are not one aligned contiguous native row are copied
    # once and sorted in place (sort_rows / sort_pairs_rows).
    rec = _Recorder()
    monkeypatch.setattr(ws, "_C", rec)
    base = sample_keys(np.float32, (4001,), 9)
    strided = base[::2]
    raw = np.zeros(4 * 1000 + 1, dtype=np.uint8)
    misaligned = raw[1:].view(np.float32)
    misaligned[...] = base[:1000]
    swapped = base.astype(">f4")
    readonly = base.copy()
    readonly.flags.writeable = False
    cases = [(strided, "sort_rows"), (misaligned, "sort_rows"), (swapped, "sort_rows"),
             (readonly, "sort_copy")]
    for a, call in cases:
        rec.calls.clear()
        assert_bits_equal(ws.sort(a), ref_sort(a.astype("=f4"), 0))
        assert rec.calls == [call]
    rec.calls.clear()
    two = sample_keys(np.int32, (30, 40), 4)
    assert_bits_equal(ws.sort(two), ref_sort(two, -1))
    assert_bits_equal(ws.sort(two, axis=0), ref_sort(two, 0))
    assert rec.calls == ["sort_rows", "sort_rows"]
    rec.calls.clear()
    z = np.array([0.0, -0.0, 1.0, -0.0], dtype=np.float64)
    assert_bits_equal(ws.sort(z, numpy_order=True), np.sort(z, kind="stable"))
    assert rec.calls == ["sort_pairs_rows"]


def test_errors_unchanged():
    with pytest.raises(TypeError, match="float16"):
        ws.sort(np.zeros(10, np.float16))
    with pytest.raises(ValueError):  # AxisError
        ws.sort(np.zeros(10, np.float32), axis=1)
    with pytest.raises(ValueError):
        ws.sort(np.zeros(10, np.float32), axis=-2)
    with pytest.raises(TypeError):
        ws.sort(np.zeros(10, np.float32), axis=0.5)
    with pytest.raises(TypeError, match="object"):
        ws.sort(np.array([1, 2], dtype=object))


def test_ndarray_subclass_and_lists():
    class Sub(np.ndarray):
        pass

    s = np.arange(10, dtype=np.float64)[::-1].copy().view(Sub)  # the general path; np_data takes it
    assert_bits_equal(np.asarray(ws.sort(s)), np.arange(10, dtype=np.float64))
    assert ws.sort([3, 1, 2]).tolist() == [1, 2, 3]


def test_np_data_matches_array_interface():
    assert np_address is _C.np_data  # the check at import passed on this NumPy
    arrays = [np.arange(12, dtype=np.uint32).reshape(3, 4)[1:, ::2], np.zeros(0, np.int64),
              np.arange(5.0)[::-1], np.zeros((2, 2), np.float32).T, np.full((), 3.0)]
    for a in arrays:
        assert _C.np_data(a) == a.__array_interface__["data"][0]
    for bad in ([1, 2], memoryview(b"ab"), None):
        with pytest.raises(TypeError, match="ndarray"):
            _C.np_data(bad)


def test_sort_copy_extension_errors():
    cap = _C.create(_C.BACKEND_CPU, 0, 0)
    a = np.arange(8, dtype=np.uint32)[::-1].copy()
    addr = a.__array_interface__["data"][0]
    with pytest.raises(ValueError, match="WARPSORT_OVERLAP"):
        _C.sort_copy(cap, addr, addr + 4, 7, 0, 0)
    with pytest.raises(ValueError, match="WARPSORT_MISALIGNED"):
        _C.sort_copy(cap, addr, addr + 2 + 64, 1, 0, 0)
    with pytest.raises(TypeError, match="WARPSORT_UNSUPPORTED_DTYPE"):
        _C.sort_copy(cap, addr, addr, 8, 99, 0)
    with pytest.raises(ValueError, match=">= 0"):
        _C.sort_copy(cap, addr, addr, -1, 0, 0)
    assert a.tolist() == list(range(8))[::-1]  # nothing written by a refused call
    out = np.empty_like(a)
    _C.sort_copy(cap, addr, out.__array_interface__["data"][0], 8, 0, _C.DESCENDING)
    assert out.tolist() == list(range(8))[::-1]
    _C.sort_copy(cap, addr, addr, 8, 0, 0)  # in place
    assert a.tolist() == list(range(8))
