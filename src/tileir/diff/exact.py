"""Independent host answers for the exact tier, computed in exact rational arithmetic rather than
through numpy's or ml_dtypes' conversions: the correctly rounded value of a rational number in
every binary float format of the dialect under every IEEE rounding mode, a fused multiply-add
rounded once, integer-to-float conversion, the device's fpowi sequence, and the truncating integer
operations. The layer-2 tests hold the host reference (``tileir.ref``) to these.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..dtypes import BY_NAME

# format -> (significand bits p with the hidden one, emin, emax, has_inf, largest finite)
FORMATS = {
    "f64": (53, -1022, 1023, True, None),
    "f32": (24, -126, 127, True, None),
    "tf32": (11, -126, 127, True, None),
    "f16": (11, -14, 15, True, None),
    "bf16": (8, -126, 127, True, None),
    "f8E4M3FN": (4, -6, 8, False, 448.0),
    "f8E5M2": (3, -14, 15, True, None),
}


def largest(fmt: str) -> float:
    p, _, emax, _, mx = FORMATS[fmt]
    return mx if mx is not None else float((2 - Fraction(1, 2 ** (p - 1))) * Fraction(2) ** emax)


def _floor_log2(q: Fraction) -> int:
    e = q.numerator.bit_length() - q.denominator.bit_length()
    if Fraction(2) ** e > q:
        e -= 1
    return e


def round_fraction(q, fmt: str, mode: str = "nearest_even") -> float:
    """The rational ``q`` (a Fraction, int or finite float) rounded into ``fmt`` by ``mode``
    (nearest_even, nearest_away, zero, positive_inf, negative_inf), as a Python float. Overflow
    answers what the mode says (infinity, or the largest finite value toward zero); a format
    without infinities answers NaN where an infinity would be. Zero keeps no sign here: the
    callers decide the sign of an exact zero."""
    q = Fraction(q)
    if q == 0:
        return 0.0
    p, emin, _, has_inf, _ = FORMATS[fmt]
    neg = q < 0
    a = -q if neg else q
    e = max(_floor_log2(a), emin)
    scale = Fraction(2) ** (e - (p - 1))
    m = a / scale
    lo = m.numerator // m.denominator
    rem = m - lo
    if mode == "nearest_even":
        up = rem > Fraction(1, 2) or (rem == Fraction(1, 2) and lo % 2 == 1)
    elif mode == "nearest_away":
        up = rem >= Fraction(1, 2)
    elif mode == "zero":
        up = False
    elif mode == "positive_inf":
        up = rem > 0 and not neg
    elif mode == "negative_inf":
        up = rem > 0 and neg
    else:
        raise ValueError(mode)
    mag = (lo + (1 if up else 0)) * scale
    mx = Fraction(largest(fmt))
    if mag > mx:
        toward_zero = mode == "zero" or (mode == "positive_inf" and neg) or (mode == "negative_inf" and not neg)
        if toward_zero:
            mag = mx
        else:
            return math.nan if not has_inf else (-math.inf if neg else math.inf)
    v = float(mag)
    return -v if neg else v


def to_fmt_array(values, fmt: str) -> np.ndarray:
    """Python floats already in ``fmt`` as an array of the format's host dtype (no rounding happens)."""
    d = BY_NAME[fmt]
    arr = np.asarray(values, dtype=np.float64)
    return arr.astype(np.float32) if fmt == "tf32" else arr.astype(d.np)


def convert_float(x: float, fmt: str, mode: str = "nearest_even") -> float:
    """One float converted into ``fmt`` by ``mode``: NaN stays NaN, an infinity stays one (NaN in a
    format without infinities), a zero keeps its sign, the rest is rounded once from its exact value."""
    if math.isnan(x):
        return math.nan
    if math.isinf(x):
        if FORMATS[fmt][3]:
            return x
        return math.nan
    if x == 0:
        return x
    v = round_fraction(Fraction(x), fmt, mode)
    return math.copysign(0.0, x) if v == 0 else v


SATFINITE = ("f8E4M3FN", "f8E5M2")  # measured on the H200: ftof into these saturates at the largest finite
# measured: an f64 goes into these through the nearest f32 when rounding to nearest; toward zero
# it is truncated once (the second H200 run, 2026-11-29)
THROUGH_F32 = ("tf32", "f8E4M3FN", "f8E5M2")


def device_ftof(x: float, src: str, fmt: str, mode: str = "nearest_even") -> float:
    """What the H200 answers for ftof (bench/results/diff_h200.json, 2026-11-29): one correct rounding
    (convert_float), except that an f64 rounded to nearest into tf32 and the 8-bit formats goes
    through the nearest f32 (two roundings; toward zero it is truncated once), and a value past
    the 8-bit formats' range (an infinity included) saturates at the largest finite value of its
    sign (PTX's satfinite) where IEEE answers an infinity or NaN."""
    if src == "f64" and fmt in THROUGH_F32 and mode == "nearest_even" and math.isfinite(x):
        x = convert_float(x, "f32")
    if fmt in SATFINITE and not math.isnan(x) and abs(x) > largest(fmt):
        return math.copysign(largest(fmt), x)
    return convert_float(x, fmt, mode)


def convert_int(n: int, fmt: str) -> float:
    """An integer converted to ``fmt``, nearest even (itof)."""
    return round_fraction(Fraction(int(n)), fmt) if n else 0.0


def fma(a: float, b: float, c: float, fmt: str) -> float:
    """a * b + c rounded ONCE into ``fmt`` (nearest even), the IEEE zero and special rules kept."""
    if not all(math.isfinite(v) for v in (a, b, c)):
        with np.errstate(all="ignore"):
            return float(np.float64(a) * np.float64(b) + np.float64(c))
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if exact == 0:
        prod_neg = (math.copysign(1, a) * math.copysign(1, b)) < 0
        if a * b == 0 and c == 0:  # both terms are zeros: -0 only if both are -0
            return -0.0 if prod_neg and math.copysign(1, c) < 0 else 0.0
        return 0.0
    v = round_fraction(exact, fmt)
    return math.copysign(0.0, float(exact)) if v == 0 else v


def fpowi(a: float, n: int, fmt: str) -> float:
    """The device's fpowi, written independently: right-to-left binary exponentiation of ``a`` to
    |n|, each product rounded once into the working format (f32 for f16 / bf16, measured), then
    the correctly rounded reciprocal for a negative n; a^0 = 1 for every a."""
    work = "f32" if fmt in ("f16", "bf16") else fmt

    def rnd(x: float) -> float:
        if math.isnan(x) or math.isinf(x) or x == 0:
            return x
        return round_fraction(Fraction(x), work) if math.isfinite(x) else x

    def mul(x: float, y: float) -> float:
        if not (math.isfinite(x) and math.isfinite(y)):
            return x * y if not (math.isinf(x) and y == 0 or math.isinf(y) and x == 0) else math.nan
        exact = Fraction(x) * Fraction(y)
        if exact == 0:
            return math.copysign(0.0, math.copysign(1, x) * math.copysign(1, y))
        v = round_fraction(exact, work)
        return math.copysign(0.0, float(exact)) if v == 0 else v

    m = abs(int(n))
    r, base = 1.0, float(a)
    while m:
        if m & 1:
            r = mul(r, base)
        m >>= 1
        if m:
            base = mul(base, base)
    if n < 0:
        if r == 0:
            r = math.copysign(math.inf, r)
        elif math.isinf(r):
            r = math.copysign(0.0, r)
        elif not math.isnan(r):
            v = round_fraction(1 / Fraction(r), work)
            r = math.copysign(0.0, r) if v == 0 else v
    if work != fmt:
        r = convert_float(r, fmt)
    return r


def wrap(n: int, bits: int = 32) -> int:
    n &= (1 << bits) - 1
    return n - (1 << bits) if n >> (bits - 1) else n


def tdiv(a: int, b: int) -> int:
    """a / b rounded toward zero (C's and the dialect's divi)."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


__all__ = ["FORMATS", "largest", "round_fraction", "convert_float", "device_ftof", "convert_int", "fma", "fpowi",
           "wrap", "tdiv",
           "to_fmt_array"]
