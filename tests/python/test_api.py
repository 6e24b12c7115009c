"""warpsort's Python API beyond the peer suites: errors, argument checks,
layouts, the DLPack consumer (on CPU producers), contexts and return types."""
import threading

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import warpsort as ws
from warpsort import _warpsort as _C
from conftest import assert_bits_equal, ref_argsort


def test_version_and_backend():
    # include/warpsort.h is the one place the version is defined.
    import pathlib, re
    header = pathlib.Path(__file__).resolve().parents[2] / "include" / "warpsort.h"
    parts = dict(re.findall(r"#define WARPSORT_VERSION_(MAJOR|MINOR|PATCH) (\d+)",
                            header.read_text()))
    assert ws.__version__ == "{MAJOR}.{MINOR}.{PATCH}".format(**parts)
    assert ws.backend() in ("cpu", "cuda")


@pytest.mark.parametrize("axis", [2, -3, 5])
def test_bad_axis_is_value_error(axis):
    a = np.zeros((2, 3), dtype=np.float32)
    for f in (ws.sort, ws.argsort):
        with pytest.raises(ValueError):
            f(a, axis=axis)
    with pytest.raises(ValueError):
        ws.top_k(a, 1, axis=axis)


def test_zero_dim():
    a = np.array(3.0)
    with pytest.raises(ValueError):  # as numpy.sort: no axis -1 on a 0-d array
        ws.sort(a)
    assert_array_equal(ws.sort(a, axis=None), [3.0])
    assert_array_equal(ws.argsort(a, axis=None), [0])


def test_python_lists():
    assert_array_equal(ws.sort([3, 1, 2]), [1, 2, 3])
    assert ws.sort([3.5, 1.0]).dtype == np.float64


@pytest.mark.parametrize("k", [0, -1, 6])
def test_top_k_bad_k(k):
    with pytest.raises(ValueError, match="k must be in"):
        ws.top_k(np.arange(5, dtype=np.int32), k)


def test_top_k_k_type():
    with pytest.raises(TypeError):
        ws.top_k(np.arange(5, dtype=np.int32), 2.0)
    with pytest.raises(TypeError):
        ws.top_k(np.arange(5, dtype=np.int32), True)
    v, i = ws.top_k(np.arange(5, dtype=np.int32), np.int64(2))
    assert_array_equal(v, [4, 3])


def test_top_k_nans_and_ties():
    # as torch.topk: NaN largest; ties -> lower index first
    a = np.array([1.0, np.nan, 3.0, 3.0, -np.inf, np.nan], dtype=np.float32)
    v, i = ws.top_k(a, 4)
    assert_array_equal(i, [1, 5, 2, 3])
    assert np.isnan(v[:2]).all() and (v[2:] == 3.0).all()
    v, i = ws.top_k(a, 3, largest=False)
    assert_array_equal(i, [4, 0, 2])
    assert i.dtype == np.int64


def test_top_k_axis():
    a = np.array([[5, 1, 4], [2, 8, 3]], dtype=np.int64)
    v, i = ws.top_k(a, 1, axis=0)
    assert_array_equal(v, [[5, 8, 4]])
    assert_array_equal(i, [[0, 1, 0]])
    v, i = ws.top_k(a, 2, axis=None)
    assert_array_equal(v, [8, 5])
    assert_array_equal(i, [4, 0])


def test_sort_pairs_errors():
    k = np.arange(4, dtype=np.uint32)
    with pytest.raises(ValueError, match="shape"):
        ws.sort_pairs(k, np.arange(5, dtype=np.uint32))
    with pytest.raises(TypeError, match="4- or 8-byte"):
        ws.sort_pairs(k, np.arange(4, dtype=np.int16))
    with pytest.raises(TypeError):
        ws.sort_pairs(k, np.array([None] * 4, dtype=object))
    with pytest.raises(TypeError):
        ws.sort_pairs(k.astype(np.int8), k)


def test_sort_pairs_numpy_order_keeps_key_bits():
    k = np.array([0.0, -0.0, 1.0, -0.0, 0.0])
    v = np.arange(5, dtype=np.int64)
    ko, vo = ws.sort_pairs(k, v, numpy_order=True)
    assert_array_equal(vo, [0, 1, 3, 4, 2])
    assert_bits_equal(ko, k[[0, 1, 3, 4, 2]])
    ko, vo = ws.sort_pairs(k, v)
    assert_array_equal(vo, [1, 3, 0, 4, 2])


def test_result_layout_and_input_untouched():
    rng = np.random.default_rng(1)
    a = rng.integers(-100, 100, size=(4, 5, 6)).astype(np.int32)
    f = np.asfortranarray(a)
    keep = f.copy()
    for axis in range(3):
        s = ws.sort(f, axis=axis)
        assert_array_equal(s, np.sort(a, axis=axis))
        assert_array_equal(ws.argsort(f, axis=axis), np.argsort(a, axis=axis, kind="stable"))
    assert_array_equal(f, keep)
    # unaligned input is copied to an aligned buffer
    buf = np.zeros(4 * 10 + 1, dtype=np.uint8)
    u = buf[1:].view(np.int32)
    u[:] = np.arange(10)[::-1]
    assert not u.flags.aligned
    assert_array_equal(ws.sort(u), np.arange(10))
    assert_array_equal(ws.argsort(u), np.arange(10)[::-1])


def test_readonly_input():
    a = np.arange(10, dtype=np.float64)[::-1].copy()
    a.flags.writeable = False
    assert_array_equal(ws.sort(a), np.arange(10))
    assert_array_equal(ws.argsort(a), np.arange(10)[::-1])


def test_library_error_message_is_raised():
    # a context call with a bad dtype code reaches the library and carries its message
    cap = _C.create(_C.BACKEND_CPU, 0, 0)
    a = np.arange(4, dtype=np.uint32)
    with pytest.raises(TypeError):
        _C.sort_rows(cap, a.__array_interface__["data"][0], 1, 4, 99, 0)
    idx = np.empty(4, dtype=np.int64)
    with pytest.raises(ValueError, match="WARPSORT_"):  # misaligned indices
        _C.argsort_rows(cap, a.__array_interface__["data"][0],
                        idx.__array_interface__["data"][0] + 1, 1, 4, 0, 8, 0)
    assert "align" in _C.last_error(cap).lower()
    with pytest.raises(ValueError):
        _C.argsort_rows(cap, 0, 0, 1, 4, 0, 8, 0)  # NULL with n > 0


def test_cuda_backend_unavailable_message():
    if ws.backend() == "cuda":
        pytest.skip("this build has a usable CUDA device")
    with pytest.raises(ws.WarpsortError, match="CUDA backend"):
        _C.create(_C.BACKEND_CUDA, 0, 0)


@pytest.mark.parametrize("versioned", [True, False])
def test_dlpack_import_cpu_producer(versioned):
    # numpy exports DLPack; the extension's consumer reads it and owns the tensor
    a = np.arange(12, dtype=np.float32).reshape(3, 4)[:, 1:]
    kw = {"max_version": (1, 0)} if versioned else {}
    try:
        cap = a.__dlpack__(**kw)
    except TypeError:
        pytest.skip("this numpy has no versioned DLPack export")
    owner, addr, dev_type, dev_id, code, bits, lanes, shape, strides, ro = _C.dlpack_import(cap)
    assert (dev_type, dev_id, code, bits, lanes) == (1, 0, 2, 32, 1)
    assert addr == a.__array_interface__["data"][0]
    assert shape == (3, 3) and strides == (4, 1)
    assert ro is False
    with pytest.raises(TypeError):  # consumed: a capsule is read once
        _C.dlpack_import(cap)
    del owner  # calls numpy's deleter


def test_dlpack_import_rejects_other_objects():
    with pytest.raises(TypeError):
        _C.dlpack_import(object())


def test_host_dlpack_producer_goes_through_numpy():
    class Producer:
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, **kw):
            return self.a.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    out = ws.sort(Producer(np.array([3, 1, 2], dtype=np.int64)))
    assert isinstance(out, np.ndarray)
    assert_array_equal(out, [1, 2, 3])


def test_threads_share_cached_contexts():
    rng = np.random.default_rng(7)
    arrays = [rng.standard_normal(5000).astype(np.float32) for _ in range(8)]
    results = [None] * len(arrays)

    def work(i):
        for _ in range(5):
            results[i] = ws.argsort(arrays[i])

    ts = [threading.Thread(target=work, args=(i,)) for i in range(len(arrays))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for a, r in zip(arrays, results):
        assert_array_equal(r, ref_argsort(a))
    ws.clear_cache()
    assert_array_equal(ws.sort(arrays[0]), np.sort(arrays[0]))


def test_docstring_examples():
    # the examples in warpsort's docstrings are run as written
    import doctest

    res = doctest.testmod(ws, extraglobs={"warpsort": ws, "np": np}, verbose=False)
    assert res.attempted >= 15
    assert res.failed == 0
