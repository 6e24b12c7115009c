"""The array-API test suite's sorting tests, rewritten against warpsort.

Upstream: data-apis/array-api-tests, array_api_tests/test_sorting_functions.py
(test_argsort, test_sort). As upstream: arrays of the real dtypes (here the six
warpsort has), at least one dimension and no empty side, no NaNs and no zeros
(upstream's TODO: signed zeros and NaNs are tested in test_properties.py);
kwargs axis, descending and stable drawn; every 1-D slice along the axis is
checked against Python's sorted() of its elements (stable: reverse=True keeps
equal elements in input order, which warpsort's descending does too).
"""
import itertools

import numpy as np
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import warpsort as ws
from conftest import KEY_DTYPES

real_arrays = hnp.arrays(
    dtype=st.sampled_from(KEY_DTYPES),
    shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=6),
    elements={"allow_nan": False},
)


def _kwargs(data, ndim):
    kw = {}
    if data.draw(st.booleans(), label="pass axis"):
        kw["axis"] = data.draw(st.integers(-ndim, ndim - 1), label="axis")
    if data.draw(st.booleans(), label="pass descending"):
        kw["descending"] = data.draw(st.booleans(), label="descending")
    if data.draw(st.booleans(), label="pass stable"):
        kw["stable"] = data.draw(st.booleans(), label="stable")
    return kw


def _slices(shape, axis):
    """For each 1-D slice along axis: the list of its index tuples (upstream sh.axes_ndindex)."""
    others = [range(n) if i != axis else [slice(None)] for i, n in enumerate(shape)]
    for base in itertools.product(*others):
        yield [tuple(j if i == axis else b for i, b in enumerate(base)) for j in range(shape[axis])]


def _scalar(x, idx):
    return float(x[idx]) if x.dtype.kind == "f" else int(x[idx])


@given(x=real_arrays, data=st.data())
def test_argsort(x, data):
    # upstream: array_api_tests/test_sorting_functions.py::test_argsort
    if x.dtype.kind == "f":
        assume(not np.any(x == 0.0))
    kw = _kwargs(data, x.ndim)
    out = ws.argsort(x, **kw)
    assert out.dtype == np.int64  # default index dtype
    assert out.shape == x.shape
    axis = kw.get("axis", -1) % x.ndim
    descending = kw.get("descending", False)
    for indices in _slices(x.shape, axis):
        elements = [_scalar(x, idx) for idx in indices]
        orders = list(range(len(elements)))
        sorders = sorted(orders, key=elements.__getitem__, reverse=descending)
        if kw.get("stable", True):
            for idx, o in zip(indices, sorders):
                assert int(out[idx]) == o, (idx, kw)
        else:
            # unstable: each output index must point at an element of the right value
            selements = [elements[o] for o in sorders]
            for idx, e in zip(indices, selements):
                assert elements[int(out[idx])] == e, (idx, kw)


@given(x=real_arrays, data=st.data())
def test_sort(x, data):
    # upstream: array_api_tests/test_sorting_functions.py::test_sort
    if x.dtype.kind == "f":
        assume(not np.any(x == 0.0))
    kw = _kwargs(data, x.ndim)
    out = ws.sort(x, **kw)
    assert out.dtype == x.dtype
    assert out.shape == x.shape
    axis = kw.get("axis", -1) % x.ndim
    for indices in _slices(x.shape, axis):
        elements = [_scalar(x, idx) for idx in indices]
        orders = sorted(range(len(elements)), key=elements.__getitem__,
                        reverse=kw.get("descending", False))
        for out_idx, o in zip(indices, orders):
            assert out[out_idx] == x[indices[o]], (out_idx, kw)
