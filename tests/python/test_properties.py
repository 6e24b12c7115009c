"""Hypothesis property tests: warpsort against NumPy over every dtype, shape,
axis and order, with NaNs (any sign and payload), infinities and signed zeros.

Oracles: numpy.sort / numpy.argsort(kind="stable") where NumPy's order is
warpsort's (values compare equal; numpy_order=True argsorts), and the test's
own key-order oracle (conftest.ref_argsort) for bit-exact results.
"""
import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numpy.testing import assert_array_equal

import warpsort as ws
from conftest import KEY_DTYPES, assert_bits_equal, ref_argsort, ref_sort


@st.composite
def arrays_and_axis(draw, max_dims=3, max_side=40):
    dtype = np.dtype(draw(st.sampled_from(KEY_DTYPES)))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=max_dims, min_side=0, max_side=max_side))
    if dtype.kind == "f":
        # few distinct values so ties, signed zeros and NaN payloads meet
        pool = draw(st.lists(hnp.from_dtype(dtype, allow_nan=True, allow_infinity=True),
                             min_size=1, max_size=8))
        pool += [dtype.type(0.0), dtype.type(-0.0), dtype.type(np.nan)]
        x = draw(hnp.arrays(dtype, shape, elements=st.sampled_from(pool)))
        if draw(st.booleans()):  # negative and payload NaNs by their bits
            u = np.uint32 if dtype.itemsize == 4 else np.uint64
            bits = x.view(u).copy()
            nan_pat = draw(st.sampled_from([0xFFC00000, 0x7F800001, 0xFFFFFFFF]
                                           if dtype.itemsize == 4 else
                                           [0xFFF8000000000000, 0x7FF0000000000001, 0xFFFFFFFFFFFFFFFF]))
            mask = draw(hnp.arrays(np.bool_, shape))
            bits[mask] = u(nan_pat)
            x = bits.view(dtype)
    else:
        x = draw(hnp.arrays(dtype, shape, elements=hnp.from_dtype(dtype) | st.sampled_from(
            [dtype.type(0), dtype.type(1), np.iinfo(dtype).min, np.iinfo(dtype).max])))
    if x.ndim == 0:
        axis = None
    else:
        axis = draw(st.none() | st.integers(-x.ndim, x.ndim - 1))
    if draw(st.booleans()) and x.ndim >= 2:  # non-contiguous input
        x = np.swapaxes(x, 0, -1)
    return x, axis


orders = st.tuples(st.booleans(), st.booleans())  # (descending, stable)


def _ref_axis(x, axis):
    return (x.reshape(-1), 0) if axis is None else (x, axis)


@given(arrays_and_axis(), orders)
def test_sort_matches_oracle_and_numpy(xa, order):
    x, axis = xa
    descending, stable = order
    got = ws.sort(x, axis=axis, descending=descending, stable=stable)
    rx, rax = _ref_axis(x, axis)
    assert_bits_equal(got, ref_sort(rx, rax, descending))
    want = np.sort(x, axis=axis)
    if descending:
        want = np.flip(want, axis=rax)
    assert_array_equal(got, want)  # NaN == NaN, -0.0 == +0.0 here


@given(arrays_and_axis(), orders)
def test_argsort_matches_oracle(xa, order):
    x, axis = xa
    descending, stable = order
    got = ws.argsort(x, axis=axis, descending=descending, stable=stable)
    rx, rax = _ref_axis(x, axis)
    assert got.dtype == np.int64
    assert_array_equal(got, ref_argsort(rx, rax, descending))


@given(arrays_and_axis())
def test_argsort_numpy_order_matches_numpy_stable(xa):
    x, axis = xa
    got = ws.argsort(x, axis=axis, numpy_order=True)
    assert_array_equal(got, np.argsort(x, axis=axis, kind="stable"))
    s = ws.sort(x, axis=axis, numpy_order=True)
    assert_bits_equal(s, np.sort(x, axis=axis, kind="stable"))


@given(arrays_and_axis(max_dims=2), orders, st.sampled_from(["u4", "i8", "f4", "f8", "c8"]))
def test_sort_pairs_matches_oracle(xa, order, vdt):
    x, axis = xa
    descending, stable = order
    v = np.arange(x.size).reshape(x.shape).astype(vdt)
    k_out, v_out = ws.sort_pairs(x, v, axis=axis, descending=descending, stable=stable)
    rx, rax = _ref_axis(x, axis)
    rv = v.reshape(-1) if axis is None else v
    perm = ref_argsort(rx, rax, descending)
    assert_bits_equal(k_out, np.take_along_axis(rx, perm, rax))
    if stable:
        assert_array_equal(v_out, np.take_along_axis(rv, perm, rax))
    else:
        # equal keys may swap their values: each value must still name (as the flat
        # position it was made from) a key with the output key's bits, and each row's
        # values must be a permutation of the input row's.
        pos = (v_out.real if v_out.dtype.kind == "c" else v_out).astype(np.int64)
        assert_bits_equal(rx.reshape(-1)[pos] if rx.size else k_out, k_out)
        assert_array_equal(np.sort(v_out, axis=rax), np.sort(rv, axis=rax))


@given(arrays_and_axis(max_dims=2), st.booleans(), st.data())
def test_top_k_matches_oracle(xa, largest, data):
    x, axis = xa
    rx, rax = _ref_axis(x, axis)
    n = rx.shape[rax] if rx.ndim else 1
    if n == 0:
        return
    k = data.draw(st.integers(1, n), label="k")
    vals, idx = ws.top_k(x, k, axis=axis, largest=largest)
    perm = np.take(ref_argsort(rx, rax, descending=largest), np.arange(k), axis=rax)
    assert_array_equal(idx, perm)
    assert_bits_equal(vals, np.take_along_axis(rx, perm, rax))
