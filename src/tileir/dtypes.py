"""The element formats of Tile IR, their widths, and host rounding through ml_dtypes.

Every format the spec names exists here as a module constant (``F32``, ``BF16`` ...). A format
knows its Tile IR name, its width in bits, whether it is a float, and the numpy dtype the host
reference computes in (ml_dtypes for the narrow floats and for i4).
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np
from numpy.typing import DTypeLike

from .errors import TileirError


@dataclass(frozen=True)
class Dtype:
    """One Tile IR element format: ``name`` as the dialect spells it (``f32``, ``i1``)."""

    name: str
    bits: int
    is_float: bool
    np_dtype: DTypeLike  # the numpy / ml_dtypes dtype the host reference holds lanes in

    def __repr__(self) -> str:
        return self.name.upper()

    def __str__(self) -> str:
        return self.name

    @property
    def np(self) -> np.dtype:
        return np.dtype(self.np_dtype)

    def round(self, value: float) -> float:
        """``value`` rounded to this format, nearest even, as a Python number."""
        return host_round(self, value)


F64 = Dtype("f64", 64, True, np.float64)
F32 = Dtype("f32", 32, True, np.float32)
# tf32 has no host dtype of its own: lanes live in float32 and are rounded to 10 fraction bits.
TF32 = Dtype("tf32", 19, True, np.float32)
F16 = Dtype("f16", 16, True, np.float16)
BF16 = Dtype("bf16", 16, True, ml_dtypes.bfloat16)
F8E4M3FN = Dtype("f8E4M3FN", 8, True, ml_dtypes.float8_e4m3fn)
F8E5M2 = Dtype("f8E5M2", 8, True, ml_dtypes.float8_e5m2)
F8E8M0FNU = Dtype("f8E8M0FNU", 8, True, ml_dtypes.float8_e8m0fnu)
F4E2M1FN = Dtype("f4E2M1FN", 4, True, ml_dtypes.float4_e2m1fn)
I64 = Dtype("i64", 64, False, np.int64)
I32 = Dtype("i32", 32, False, np.int32)
I16 = Dtype("i16", 16, False, np.int16)
I8 = Dtype("i8", 8, False, np.int8)
I4 = Dtype("i4", 4, False, ml_dtypes.int4)
I1 = Dtype("i1", 1, False, np.bool_)

BOOL = I1  # the spec's Tile[Bool]: a mask is an i1 tile

ALL_DTYPES = (F64, F32, TF32, F16, BF16, F8E4M3FN, F8E5M2, F8E8M0FNU, F4E2M1FN,
              I64, I32, I16, I8, I4, I1)
BY_NAME = {d.name: d for d in ALL_DTYPES}

# The formats a float constant, a full() and an mma accumulator may be made in (the spec's
# FloatDtype): the dialect's arithmetic floats. f8E8M0FNU (exponent only) and f4E2M1FN
# (sub-byte) are kept out on purpose, so full(F8E8M0FNU ...) is a refusal, not a surprise.
ARITH_FLOATS = (F64, F32, TF32, F16, BF16, F8E4M3FN, F8E5M2)


def dtype(name_or_dtype: Dtype | str) -> Dtype:
    """The Dtype for a name (``"f32"``) or a Dtype; refuses anything else by name."""
    if isinstance(name_or_dtype, Dtype):
        return name_or_dtype
    try:
        return BY_NAME[name_or_dtype]
    except (KeyError, TypeError):
        raise TileirError(f"unknown element format {name_or_dtype!r}; the formats are "
                          + ", ".join(BY_NAME)) from None


def is_float_dtype(name: object) -> bool:
    """Whether ``name`` is one of the dialect's floating point formats."""
    # a key that is no str is simply not found
    d = BY_NAME.get(name if isinstance(name, str) else getattr(name, "name", None))  # type: ignore[arg-type]
    return bool(d and d.is_float)


def float_dtype(d: Dtype | str) -> Dtype:
    """``d`` as one of the arithmetic float formats a constant can be made in, or a refusal."""
    d = dtype(d)
    if d not in ARITH_FLOATS:
        raise TileirError(f"{d.name} is not a format a float constant can be made in; use one of "
                          + ", ".join(x.name for x in ARITH_FLOATS))
    return d


def _round_tf32(x: np.ndarray) -> np.ndarray:
    """float32 lanes rounded to tf32's 10 fraction bits, nearest even; inf and NaN kept."""
    x = np.asarray(x, dtype=np.float32)
    bits = x.view(np.uint32).astype(np.uint64)
    finite = np.isfinite(x)
    lsb = (bits >> 13) & 1
    rounded = ((bits + 0xFFF + lsb) >> 13) << 13
    out = np.where(finite, rounded, bits).astype(np.uint32)
    return out.view(np.float32)


class FloatDtype:
    """The spec's trait of the float formats a constant can be made in (ARITH_FLOATS): in Python
    the format is a value, so the trait is ``float_dtype`` (the witness) and ``host_float``."""

    members = ARITH_FLOATS


def host_float(v) -> float:
    """A host value of a float format as a Python float."""
    return float(v)


def f64_to_f32_odd(x) -> np.ndarray:
    """f64 values rounded to f32 toward zero with the last bit set where inexact (round to odd):
    rounding that once more to any format of at most 22 significand bits is the correctly rounded
    answer, where rounding through the nearest f32 would round twice (ml_dtypes converts an f64
    into the narrow formats through f32)."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        y = x.astype(np.float32)
    yd = y.astype(np.float64)
    inexact = (yd != x) & np.isfinite(x)
    toward_zero = inexact & (np.abs(yd) > np.abs(x))
    t = np.where(toward_zero, np.nextafter(y, np.float32(0)), y)
    bits = t.view(np.uint32)
    return np.where(inexact, bits | np.uint32(1), bits).astype(np.uint32).view(np.float32)


def to_format(d: Dtype | str, values) -> np.ndarray:
    """``values`` as an array of format ``d`` (nearest even for floats, wrapped for ints); an f64
    value is rounded once, correctly, into every format."""
    d = dtype(d)
    if d is TF32:
        return _round_tf32(f64_to_f32_odd(np.asarray(values, dtype=np.float64)))
    if d.is_float:
        x = np.asarray(values, dtype=np.float64)
        if d.bits < 32:  # through f32 rounded to odd, so the narrow rounding is the only one
            return f64_to_f32_odd(x).astype(d.np_dtype)
        return x.astype(d.np_dtype)
    if d is I1:
        return (np.asarray(values).astype(np.int64) & 1).astype(np.bool_)
    arr = np.asarray(values)
    if arr.dtype.kind == "f":
        arr = np.trunc(arr)
    return wrap_int(d, arr.astype(np.int64))


def wrap_int(d: Dtype | str, values) -> np.ndarray:
    """Integers reduced modulo 2^bits and read signed, as the device's integer formats hold them."""
    d = dtype(d)
    v = np.asarray(values).astype(np.int64)
    if d.bits >= 64:
        return v
    if d is I1:
        return (v & 1).astype(np.bool_)
    m = np.int64(1) << np.int64(d.bits)
    half = np.int64(1) << np.int64(d.bits - 1)
    w = ((v + half) % m) - half
    return w.astype(d.np_dtype)


def wrap_int_scalar(d: Dtype | str, value: int) -> int:
    """``int(wrap_int(d, value))`` for one Python int, without numpy's per-call cost (every index
    constant of a recording passes here)."""
    d = dtype(d)
    if not -(1 << 63) <= value < (1 << 63):
        return int(wrap_int(d, value))  # numpy's own refusal of a number int64 cannot hold
    if d.bits >= 64:
        return value
    if d is I1:
        return value & 1
    half = 1 << (d.bits - 1)
    return (value + half) % (half << 1) - half


def host_round(d: Dtype | str, value: float) -> float:
    """A host number rounded to format ``d`` where it is made: f_const(BF16, 0.1) is 0.10009765625."""
    d = dtype(d)
    if not d.is_float:
        return wrap_int_scalar(d, int(value))
    return float(to_format(d, value))
