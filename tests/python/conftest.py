"""Shared helpers of the warpsort Python peer tests.

ordered_bits() is the test's own statement of the library's key order
(include/warpsort/keybits.h, written again here in NumPy): unsigned keys as
they are, signed keys with the sign bit flipped, floats with the usual flip
(negatives inverted, positives with the sign bit set) rotated so that every
NaN, whatever its sign, sorts after +inf. ref_argsort() is the oracle: a
stable NumPy argsort of those bits.
"""
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

# database=None: no .hypothesis folder in the work tree (failures print their example).
settings.register_profile(
    "warpsort", max_examples=60, deadline=None, database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("warpsort-long", max_examples=600, deadline=None, database=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "warpsort"))

KEY_DTYPES = [np.uint32, np.int32, np.float32, np.uint64, np.int64, np.float64]
KEY_DTYPE_IDS = ["u32", "i32", "f32", "u64", "i64", "f64"]
UNSUPPORTED_DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.float16,
                      np.complex64, np.complex128, np.longdouble]


def _uint(dtype):
    return np.uint32 if np.dtype(dtype).itemsize == 4 else np.uint64


def ordered_bits(a):
    """Unsigned integers whose order is warpsort's ascending key order."""
    a = np.ascontiguousarray(a)
    u = _uint(a.dtype)
    bits = a.view(u)
    width = np.dtype(u).itemsize * 8
    sign = u(1 << (width - 1))
    if a.dtype.kind == "u":
        return bits.copy()
    if a.dtype.kind == "i":
        return bits ^ sign
    neg_nans = u((1 << (23 if width == 32 else 52)) - 1)
    flipped = np.where(bits & sign, ~bits, bits | sign)
    return (flipped - neg_nans).astype(u)  # wraps: negative NaNs land above +NaNs


def ref_argsort(a, axis=-1, descending=False):
    """Stable argsort in warpsort's order along axis (descending: equal keys keep input order)."""
    o = ordered_bits(a)
    if descending:
        o = ~o
    return np.argsort(o, axis=axis, kind="stable")


def ref_sort(a, axis=-1, descending=False):
    return np.take_along_axis(a, ref_argsort(a, axis, descending), axis=axis)


def sample_keys(dtype, shape, seed, zero_steps=(11, 13), tie_step=3):
    """Random keys with ties (integers rounded down to multiples of tie_step)
    and, for floats, NaNs every 7th item and -0.0 / +0.0 every zero_steps[0] /
    zero_steps[1]-th item (offsets 1 and 2)."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        a = rng.standard_normal(shape).astype(dtype)
        a.flat[::7] = np.nan
        a.flat[1 :: zero_steps[0]] = -0.0
        a.flat[2 :: zero_steps[1]] = 0.0
        return a
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True) // tie_step * tie_step


def assert_bits_equal(got, want):
    """Same dtype, shape and bit patterns (so -0.0 != +0.0, NaN payloads count)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    u = _uint(got.dtype) if got.dtype.itemsize in (4, 8) else None
    if u is None:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_array_equal(np.ascontiguousarray(got).view(u), np.ascontiguousarray(want).view(u))


def device_lib(name):
    """(module, device) for a GPU array library, or skip."""
    if name == "torch":
        torch = pytest.importorskip("torch")
        if not torch.cuda.is_available():
            pytest.skip("torch: no CUDA device")
        return torch
    if name == "cupy":
        cupy = pytest.importorskip("cupy")
        try:
            if cupy.cuda.runtime.getDeviceCount() < 1:
                pytest.skip("cupy: no CUDA device")
        except Exception as e:  # no driver
            pytest.skip(f"cupy: no CUDA device ({e})")
        return cupy
    if name == "jax":
        jax = pytest.importorskip("jax")
        try:
            if not jax.devices("gpu"):
                pytest.skip("jax: no GPU device")
        except RuntimeError as e:
            pytest.skip(f"jax: no GPU device ({e})")
        return jax
    raise ValueError(name)
