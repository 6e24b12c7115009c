"""The batched paths: along an axis of a 2-D or N-D array every operation is
one library call over the contiguous (rows, row_len) block -- the batched-rows
calls (warpsort_sort_rows, warpsort_sort_rows_pairs, warpsort_argsort_rows,
warpsort_topk_rows) for several rows, the single-array calls for one row.

Checked against NumPy (numpy.sort / numpy.argsort(kind="stable"), and the
key-order oracle of conftest for bit-exact results): 2-D and 3-D arrays along
the last axis, axis 0 and a middle axis, rows of length 0 and 1, no rows,
one row, k = 1 and k = row_len, ties and NaNs; and that each call reaches the
extension once with the whole block.
"""
import numpy as np
import pytest
from numpy.testing import assert_array_equal

import warpsort as ws
from warpsort import _warpsort as _C
from conftest import KEY_DTYPES, KEY_DTYPE_IDS, assert_bits_equal, ref_argsort, ref_sort

SHAPES_AXES = [
    ((7, 33), -1), ((7, 33), 0), ((1, 50), -1), ((50, 1), -1), ((50, 1), 0),
    ((3, 4, 65), -1), ((3, 4, 65), 0), ((3, 4, 65), 1), ((5, 0), -1), ((0, 5), -1),
    ((0, 5), 0), ((4, 3, 0), 1), ((2, 300, 2), 1),
]


def _sample(dtype, shape, seed, distinct=None):
    """Keys with ties (few distinct values), and NaNs / signed zeros for floats."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    size = int(np.prod(shape))
    if dtype.kind == "f":
        pool = np.array([-np.inf, -1.5, -0.0, 0.0, 2.25, np.inf, np.nan, 7.0], dtype=dtype)
        nan_bits = (0xFFC00000 if dtype.itemsize == 4 else 0xFFF8000000000000)
        a = rng.choice(pool, size=size)
        u = np.uint32 if dtype.itemsize == 4 else np.uint64
        bits = a.view(u)
        bits[rng.random(size) < 0.05] = u(nan_bits)  # a negative NaN as well
        return bits.view(dtype).reshape(shape)
    info = np.iinfo(dtype)
    pool = np.array([info.min, -3 if info.min else 3, 0, 1, 1, 5, info.max], dtype=dtype)
    return rng.choice(pool, size=size).reshape(shape)


@pytest.mark.parametrize("dtype", KEY_DTYPES, ids=KEY_DTYPE_IDS)
@pytest.mark.parametrize("shape,axis", SHAPES_AXES)
def test_sort_argsort_batched(dtype, shape, axis):
    a = _sample(dtype, shape, 11)
    for descending in (False, True):
        for stable in (False, True):
            s = ws.sort(a, axis=axis, descending=descending, stable=stable)
            assert_bits_equal(s, ref_sort(a, axis, descending))
            want = np.sort(a, axis=axis)
            assert_array_equal(s, np.flip(want, axis=axis) if descending else want)
        i = ws.argsort(a, axis=axis, descending=descending)
        assert i.dtype == np.int64 and i.shape == a.shape
        assert_array_equal(i, ref_argsort(a, axis, descending))
    assert_array_equal(ws.argsort(a, axis=axis, numpy_order=True), np.argsort(a, axis=axis, kind="stable"))
    assert_bits_equal(ws.sort(a, axis=axis, numpy_order=True), np.sort(a, axis=axis, kind="stable"))


@pytest.mark.parametrize("dtype", [np.uint32, np.float32, np.int64, np.float64], ids=["u32", "f32", "i64", "f64"])
@pytest.mark.parametrize("shape,axis", SHAPES_AXES)
@pytest.mark.parametrize("vdt", ["i4", "f8"])
def test_sort_pairs_batched(dtype, shape, axis, vdt):
    a = _sample(dtype, shape, 12)
    v = np.arange(a.size).reshape(shape).astype(vdt)
    for descending in (False, True):
        ko, vo = ws.sort_pairs(a, v, axis=axis, descending=descending)
        perm = ref_argsort(a, axis, descending)
        assert_bits_equal(ko, np.take_along_axis(a, perm, axis))
        assert_bits_equal(vo, np.take_along_axis(v, perm, axis))
        ko, vo = ws.sort_pairs(a, v, axis=axis, descending=descending, stable=False)
        assert_bits_equal(ko, np.take_along_axis(a, perm, axis))
        # unstable: equal keys may swap values, each row's values stay a permutation
        assert_array_equal(np.sort(vo, axis=axis), np.sort(v, axis=axis))
    ko, vo = ws.sort_pairs(a, v, axis=axis, numpy_order=True)
    perm = np.argsort(a, axis=axis, kind="stable")
    assert_bits_equal(vo, np.take_along_axis(v, perm, axis))
    assert_bits_equal(ko, np.take_along_axis(a, perm, axis))


def _top_k_ref(a, k, axis, largest):
    perm = np.take(ref_argsort(a, axis, descending=largest), np.arange(k), axis=axis)
    return np.take_along_axis(a, perm, axis), perm


@pytest.mark.parametrize("dtype", KEY_DTYPES, ids=KEY_DTYPE_IDS)
@pytest.mark.parametrize("shape,axis", [s for s in SHAPES_AXES if s[0][s[1]] > 0])
def test_top_k_batched(dtype, shape, axis):
    a = _sample(dtype, shape, 13)
    n = shape[axis]
    for k in sorted({1, 2, n // 2, n} & set(range(1, n + 1))):
        for largest in (True, False):
            v, i = ws.top_k(a, k, axis=axis, largest=largest)
            rv, ri = _top_k_ref(a, k, axis, largest)
            assert i.dtype == np.int64
            assert_array_equal(i, ri)
            assert_bits_equal(v, rv)
            # NumPy: the values are numpy.sort's first (last) k, NaNs last ascending
            want = np.sort(a, axis=axis)
            want = np.flip(want, axis=axis) if largest else want
            assert_array_equal(v, np.take(want, np.arange(k), axis=axis))


def test_top_k_rules_match_numpy_stable_argsort():
    # Ties go to the lower index and NaNs are the largest keys (the library's rules):
    # largest=True is the first k of a stable argsort of the negated keys (NaNs as +inf
    # beyond inf), largest=False the first k of numpy.argsort(kind="stable").
    a = np.array([[2.0, np.nan, 2.0, 1.0, np.nan, 3.0, 1.0],
                  [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
                  [np.nan, np.nan, 0.5, 0.5, -1.0, -1.0, 9.0]])
    v, i = ws.top_k(a, 4)
    assert_array_equal(i, [[1, 4, 5, 0], [0, 1, 2, 3], [0, 1, 6, 2]])
    key = np.where(np.isnan(a), -np.inf, -a)
    assert_array_equal(i, np.argsort(key, axis=-1, kind="stable")[:, :4])
    v, i = ws.top_k(a, 4, largest=False)
    assert_array_equal(i, np.argsort(a, axis=-1, kind="stable")[:, :4])
    assert_array_equal(i, [[3, 6, 0, 2], [0, 1, 2, 3], [4, 5, 2, 3]])
    v, i = ws.top_k(a, 7, largest=False)  # k = row_len: the stable sort, NaNs last
    assert_array_equal(v, np.sort(a, axis=-1))
    # -0.0 is below +0.0: the smallest is -0.0 wherever it stands
    z = np.array([[0.0, -0.0, 0.0], [-0.0, 0.0, -0.0]], dtype=np.float32)
    v, i = ws.top_k(z, 1, largest=False)
    assert_array_equal(i, [[1], [0]])
    v, i = ws.top_k(z, 1)
    assert_array_equal(i, [[0], [1]])


def test_top_k_zero_rows_and_bad_k():
    v, i = ws.top_k(np.zeros((0, 5), dtype=np.float32), 3)
    assert v.shape == (0, 3) and i.shape == (0, 3) and v.dtype == np.float32 and i.dtype == np.int64
    v, i = ws.top_k(np.zeros((2, 0, 4), dtype=np.int32), 2)
    assert v.shape == (2, 0, 2)
    for k in (0, 6):
        with pytest.raises(ValueError, match="k must be in"):
            ws.top_k(np.zeros((3, 5), dtype=np.float32), k)
    with pytest.raises(ValueError, match="k must be in"):
        ws.top_k(np.zeros((3, 0), dtype=np.float32), 1)


def test_large_rows_batched():
    # longer rows than the small-shape cases, several of them, one call
    rng = np.random.default_rng(5)
    a = rng.integers(0, 1000, size=(6, 70000)).astype(np.uint64)
    assert_array_equal(ws.sort(a), np.sort(a, axis=-1))
    assert_array_equal(ws.argsort(a, descending=True), ref_argsort(a, -1, True))
    v, i = ws.top_k(a, 100)
    assert_array_equal(i, ref_argsort(a, -1, True)[:, :100])


class _Recorder:
    """Stands in for the extension module: records each row call (and sort_copy,
    the out-of-place sort of one row), then makes it."""

    def __init__(self):
        self.calls = []

    def __getattr__(self, name):
        f = getattr(_C, name)
        if not name.endswith("_rows") and name != "sort_copy":
            return f

        def record(*args):
            self.calls.append((name, args))
            return f(*args)

        return record


@pytest.mark.parametrize("shape,axis,rows,row_len", [
    ((6, 5, 40), -1, 30, 40), ((6, 5, 40), 0, 200, 6), ((6, 5, 40), 1, 240, 5),
    ((1, 40), -1, 1, 40), ((40,), None, 1, 40), ((8, 1), -1, 8, 1),
])
def test_one_call_per_block(monkeypatch, shape, axis, rows, row_len):
    rec = _Recorder()
    monkeypatch.setattr(ws, "_C", rec)
    a = _sample(np.float32, shape, 14)
    ws.sort(a, axis=axis)
    ws.argsort(a, axis=axis)
    ws.sort_pairs(a, a.view(np.int32), axis=axis)
    ws.top_k(a, 1, axis=axis)
    # One contiguous row of a 1-D array or axis=None: sort_copy (out of place, no copy first).
    first = "sort_copy" if len(shape) == 1 or axis is None else "sort_rows"
    assert [name for name, _ in rec.calls] == [first, "argsort_rows", "sort_pairs_rows", "topk_rows"]
    for name, args in rec.calls:
        r, n = ((1, args[3]) if name == "sort_copy" else (args[2], args[3]) if name == "sort_rows"
                else (args[3], args[4]) if name != "topk_rows" else (args[4], args[5]))
        assert (r, n) == (rows, row_len), name
    assert rec.calls[1][1][6] == 8  # argsort: int64 indices
    assert rec.calls[3][1][9] == 8  # top_k: int64 indices
    rec.calls.clear()
    ws.top_k(a, 1, axis=axis, largest=False)
    assert rec.calls[0][1][8] == _C.TOPK_SMALLEST
    rec.calls.clear()
    ws.sort(np.zeros((0, 5), dtype=np.float32))
    ws.argsort(np.zeros((4, 0), dtype=np.float32))
    assert rec.calls == []  # an empty block makes no call


def test_topk_rows_extension_errors():
    cap = _C.create(_C.BACKEND_CPU, 0, 0)
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    v = np.empty((3, 2), dtype=np.float32)
    i = np.empty((3, 2), dtype=np.int64)
    addr = lambda x: x.__array_interface__["data"][0]  # noqa: E731
    _C.topk_rows(cap, addr(a), addr(v), addr(i), 3, 4, 2, 2, 0, 8)
    assert_array_equal(v, [[3, 2], [7, 6], [11, 10]])
    assert_array_equal(i, [[3, 2]] * 3)
    _C.topk_rows(cap, addr(a), 0, addr(i), 3, 4, 2, 2, _C.TOPK_SMALLEST, 8)  # no out_keys
    assert_array_equal(i, [[0, 1]] * 3)
    with pytest.raises(ValueError, match="WARPSORT_INVALID_ARGUMENT"):  # k > row_len
        _C.topk_rows(cap, addr(a), addr(v), addr(i), 3, 4, 2, 5, 0, 8)
    assert "k = 5" in _C.last_error(cap)
    with pytest.raises(ValueError, match="WARPSORT_INVALID_ARGUMENT"):  # a sort flag
        _C.topk_rows(cap, addr(a), addr(v), addr(i), 3, 4, 2, 2, _C.DESCENDING, 8)
    with pytest.raises(ValueError, match="WARPSORT_OVERLAP"):
        _C.topk_rows(cap, addr(a), addr(a), addr(i), 3, 4, 2, 2, 0, 8)
    with pytest.raises(ValueError):
        _C.topk_rows(cap, addr(a), addr(v), addr(i), -1, 4, 2, 2, 0, 8)
    with pytest.raises(TypeError):  # unknown dtype code: the library's UNSUPPORTED_DTYPE
        _C.sort_rows(cap, addr(a), 3, 4, 99, 0)
    with pytest.raises(ValueError, match="warpsort_sort_rows_pairs"):  # keys and values overlap
        _C.sort_pairs_rows(cap, addr(a), addr(a), 3, 4, 2, 4, 0)
