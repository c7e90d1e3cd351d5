"""The host's arithmetic for the element-wise operations: the numpy functions the rows of
``tileir.elementwise`` name as their host rules, and what they share (rounding once into a format,
by a mode; the unsigned reading of an integer lane; truncating division).

Device facts they honour (the spec's, where it states them): float add/sub/mul/div/sqrt/fma are
correctly rounded in the operand's format; integer arithmetic wraps; divi/remi truncate toward zero
(the remainder takes the dividend's sign); mulhii reads its operands unsigned; shri copies the sign
and shru shifts in zeros; itof reads the integer signed and rounds once to nearest even; ftoi
truncates (out of range and NaN saturate: the plain conversion's such lanes are undefined on the
device); exti widens unsigned, extis signed; trunci keeps the low bits; bitcast moves no bit.

Nothing here imports tileir beyond ``dtypes``: the families' host rules (``ref.core`` registered)
call these, and so do the tests that hold them to exact references.
"""

from __future__ import annotations

import math
from fractions import Fraction

import ml_dtypes
import numpy as np

from .dtypes import BY_NAME, to_format, wrap_int

# ---- floats -------------------------------------------------------------------------------------


F32_TINY = float(np.finfo(np.float32).tiny)  # 2^-126, f32's least normal magnitude


def flush_subnormals(x: np.ndarray, dtype: str) -> np.ndarray:
    """``flush_to_zero`` as the dialect defines it for f32: each subnormal lane becomes the zero of its
    sign (the other formats are answered unchanged: the flag is f32's)."""
    x = np.asarray(x)
    if dtype != "f32":
        return x
    return np.where(np.abs(x) < F32_TINY, np.copysign(0.0, x), x).astype(x.dtype)


def work(dtype: str):
    """The numpy dtype a correctly rounded float op computes in before rounding to ``dtype``: f64
    for f64, f32 for the rest (exact for + - * / sqrt: f32 carries more than twice the narrow
    formats' precision)."""
    return np.float64 if dtype == "f64" else np.float32


def fma_exact(a, b, c, dtype: str):
    """a * b + c rounded once into ``dtype``: the product and sum are taken in f64 rounded to
    odd, which then rounds to any format of at most 51 significand bits correctly."""
    a64, b64, c64 = (np.asarray(x, dtype=np.float64) for x in (a, b, c))
    if dtype == "f64":
        fma = getattr(math, "fma", None)
        if fma is not None:
            return np.vectorize(fma, otypes=[np.float64])(a64, b64, c64)

        def one(x, y, z):
            if not all(map(math.isfinite, (x, y, z))):
                # a finite product is exact, never infinite: fma(MAX, MAX, -inf) is -inf, not
                # inf + -inf (campaign 2's seed 2847); an infinite or NaN operand rules as IEEE says
                return z if math.isfinite(x) and math.isfinite(y) else x * y + z
            exact = Fraction(x) * Fraction(y) + Fraction(z)
            if exact == 0:  # IEEE: -0 only when the product and the addend are both -0 (nearest even)
                p_neg = (math.copysign(1, x) * math.copysign(1, y)) < 0
                return -0.0 if (x * y == 0 and z == 0 and p_neg and math.copysign(1, z) < 0) else 0.0
            try:
                return float(exact)  # int / int true division: correctly rounded
            except OverflowError:
                return math.inf if exact > 0 else -math.inf

        return np.vectorize(one, otypes=[np.float64])(a64, b64, c64)
    p = a64 * b64  # exact: each operand carries at most 24 significand bits
    s = p + c64
    bb = s - p
    err = (p - (s - bb)) + (c64 - bb)
    finite = np.isfinite(s)
    inexact = (err != 0) & finite
    toward_zero = inexact & (np.sign(err) != np.sign(s)) & (s != 0)
    t = np.where(toward_zero, np.nextafter(s, 0.0), s)
    bits = t.view(np.int64)
    odd = np.where(inexact, bits | 1, bits)
    return to_format(BY_NAME[dtype], odd.view(np.float64))


def quiet_nans(x):
    """``x`` with every NaN quiet. numpy's fmax / fmin answer NaN for a SIGNALLING NaN operand (C's fmax,
    IEEE 754-2008's maxNum), where the H200's maxf / minf answer the other operand for it as for a quiet
    one (campaign 5's 109018: a scan max over f16 bits a pack made, one lane an sNaN: the H200 kept the
    running 3738, the host answered NaN and then restarted from the next element)."""
    x = np.asarray(x)
    if x.dtype.kind != "f" or not np.isnan(x).any():
        return x
    return np.where(np.isnan(x), np.array(np.nan, x.dtype), x)


def maxmin(x, y, is_max: bool, propagate_nan: bool):
    """maxf / minf: without propagate_nan a NaN operand (quiet or signalling) answers the other operand,
    with it NaN; two
    zeros of opposite signs answer +0 (max) and -0 (min) whichever comes first (measured on the H200,
    IEEE 754-2019's maximum / minimum; numpy answers one of the operands)."""
    f: np.ufunc
    if propagate_nan:
        f = np.maximum if is_max else np.minimum
    else:
        f = np.fmax if is_max else np.fmin
        x, y = quiet_nans(x), quiet_nans(y)
    z = f(x, y)
    zeros = (x == 0) & (y == 0) & (np.signbit(x) != np.signbit(y))
    return np.where(zeros, 0.0 if is_max else -0.0, z)


def _odd64(v) -> float:
    """The rational ``v`` (nonzero, inside f64's range) rounded to f64 by ODD: truncated, and the last
    bit set where that lost anything. An odd f64 lies strictly between the same two neighbours of
    any format of at most 51 significand bits as ``v`` does, so one more rounding by any mode into
    such a format is the correct rounding of ``v`` itself."""
    f = float(v)  # int / int true division: correctly rounded to nearest
    if Fraction(f) == v:
        return f
    if abs(Fraction(f)) > abs(v):
        f = float(np.nextafter(f, 0.0))
    return float((np.float64(f).view(np.int64) | np.int64(1)).view(np.float64))


def _f64_directed(v, mode: str) -> float:
    """The rational ``v`` (nonzero) rounded into f64 by ``mode``."""
    try:
        f = float(v)
    except OverflowError:
        f = math.inf if v > 0 else -math.inf
    if math.isinf(f):  # past the range: infinity, or the largest finite value where the mode holds back
        big = np.finfo(np.float64).max
        keep = (v > 0 and mode == "positive_inf") or (v < 0 and mode == "negative_inf")
        return f if keep else (float(big) if v > 0 else -float(big))
    if f == 0:
        f = 0.0 if v > 0 else -0.0
    e = Fraction(f)
    if mode == "positive_inf" and e < v or mode == "negative_inf" and e > v:
        f = float(np.nextafter(f, math.inf if mode == "positive_inf" else -math.inf))
    elif mode == "zero" and abs(e) > abs(v):
        f = float(np.nextafter(f, 0.0))
        f = (0.0 if v > 0 else -0.0) if f == 0 else f
    return f


def directed(exact_op, name: str, x: np.ndarray, y: np.ndarray, dtype: str, mode: str) -> np.ndarray:
    """A binary float op of the f64 lanes ``x``, ``y`` (values of ``dtype``) rounded ONCE into
    ``dtype`` by the directed ``mode`` (zero, negative_inf, positive_inf), as IEEE 754 defines each:
    ``exact_op`` of the two lanes as rationals (Fraction), then f64 by odd and the format by the
    mode, or f64 itself straight from the rational. Infinities, NaNs and division by zero are
    exact in every mode (``exact_op`` of the f64 lanes); an exact zero sum is +0 except toward -inf,
    where it is -0 (IEEE 754 6.3), but a sum of two zeros of one sign (x + x) keeps that sign in
    every mode: -0 + -0 is -0 and +0 + +0 is +0 (campaign 2's seed 376); a zero product or quotient
    has the operands' sign. ``name`` is the recorded op (addf subf mulf divf)."""
    d = BY_NAME[dtype]
    shape = x.shape
    xs, ys = x.ravel(), y.ravel()
    out: np.ndarray = np.empty(xs.size, np.float64)  # flat here, x's shape at the end
    odd = d.name != "f64"
    with np.errstate(all="ignore"):
        plain = exact_op(xs, ys)
    for i, (p, q) in enumerate(zip(xs.tolist(), ys.tolist())):
        if not (math.isfinite(p) and math.isfinite(q)) or (name == "divf" and q == 0):
            out[i] = plain[i]
            continue
        v = exact_op(Fraction(p), Fraction(q))
        if v == 0:
            if name in ("mulf", "divf"):
                out[i] = math.copysign(0.0, p) * math.copysign(1.0, q)
            else:
                qq = -q if name == "subf" else q
                same = math.copysign(1, p) == math.copysign(1, qq)  # two zeros of one sign: x + x
                out[i] = math.copysign(0.0, p) if same else -0.0 if mode == "negative_inf" else 0.0
            continue
        out[i] = _odd64(v) if odd else _f64_directed(v, mode)
    out = out.reshape(shape)
    if not odd:
        return out
    # zeros and specials pass through round_mode unchanged (they are exact); the odd values round once
    with np.errstate(all="ignore"):
        return round_mode(out, d, mode)


# ---- conversions --------------------------------------------------------------------------------


def _neighbour(v: np.ndarray, d, up: bool) -> np.ndarray:
    """The next value of format ``d`` above (``up``) or below each lane of ``v`` (held in d's dtype)."""
    if d.name == "tf32":  # tf32 lives in f32 lanes with 13 low bits zero: step by 2^13 in the pattern
        bits = v.view(np.uint32).astype(np.int64)
        neg = (bits >> 31) & 1
        mag = bits & 0x7FFFFFFF
        away = up != neg.astype(bool)  # up from a positive value (or down from a negative) grows it
        zero = mag == 0
        mag = np.where(away, mag + (1 << 13), np.where(zero, 1 << 13, mag - (1 << 13)))
        neg = np.where(zero, 0 if up else 1, neg)
        return ((neg << 31) | mag).astype(np.uint32).view(np.float32)
    return np.nextafter(v, np.asarray(np.inf if up else -np.inf, dtype=v.dtype))


SATFINITE = ("f8E4M3FN", "f8E5M2")
THROUGH_F32 = ("tf32", "f8E4M3FN", "f8E5M2")


def device_ftof(x: np.ndarray, src: str, d, mode: str) -> np.ndarray:
    """ftof as the H200 answers it (measured, bench/results/diff_h200.json): an f64 rounded to
    nearest into tf32 and the 8-bit floats goes through the nearest f32 (two roundings; into f16 and
    bf16 once; toward zero, truncated once), and a value
    past the 8-bit floats' range saturates at their largest finite value (PTX's satfinite)."""
    x = np.asarray(x, dtype=np.float64)
    if src == "f64" and d.name in THROUGH_F32 and mode == "nearest_even":
        with np.errstate(over="ignore"):
            x = x.astype(np.float32).astype(np.float64)
    if d.name in SATFINITE:
        top = float(ml_dtypes.finfo(d.np_dtype).max)
        x = np.where(np.isnan(x), x, np.clip(x, -top, top))
    return round_mode(x, d, mode)


def round_mode(x: np.ndarray, d, mode: str) -> np.ndarray:
    """``x`` (f64) rounded into format ``d`` by ``mode``: the correctly rounded nearest value, then
    one step of d toward the wanted side where it landed on the wrong one; nearest_away moves a tie
    to the neighbour farther from zero."""
    near = to_format(d, x)
    if mode == "nearest_even":
        return near
    back = near.astype(np.float64)
    up = _neighbour(near, d, True).astype(np.float64)
    down = _neighbour(near, d, False).astype(np.float64)
    fin = np.isfinite(x)
    if mode == "positive_inf":
        out = np.where(fin & (back < x), up, back)
    elif mode == "negative_inf":
        out = np.where(fin & (back > x), down, back)
    elif mode == "zero":
        out = np.where(fin & (np.abs(back) > np.abs(x)), np.where(x > 0, down, up), back)
    else:  # nearest_away: a tie goes to the neighbour farther from zero
        other = np.where(x > back, up, down)
        tie = fin & (x != back) & (np.abs(x - back) == np.abs(other - x))
        out = np.where(tie & (np.abs(other) > np.abs(back)), other, back)
    return to_format(d, out)


def int_to_float(x: np.ndarray, t) -> np.ndarray:
    """Signed integers into float format ``t``, rounded once: an i64 beyond 2^53 goes through a
    round-to-odd f64 (its exact integer checked in Python), so the last rounding is the only one."""
    x = np.asarray(x).astype(np.int64)
    if np.all(np.abs(x.astype(np.float64)) < 2.0 ** 53):
        return to_format(t, x.astype(np.float64))
    if t.name == "f64":
        return np.vectorize(lambda i: float(int(i)), otypes=[np.float64])(x)

    def odd(i):
        i = int(i)
        r = float(i)  # nearest (Python's int -> float is correctly rounded)
        if int(r) == i:
            return r
        tz = r if abs(int(r)) < abs(i) else np.nextafter(r, 0.0)
        b = np.float64(tz).view(np.int64) | 1
        return float(np.int64(b).view(np.float64))

    return to_format(t, np.vectorize(odd, otypes=[np.float64])(x))


def float_to_int(v: np.ndarray, t, saturating: bool) -> np.ndarray:
    """Truncation toward zero into integer format ``t``; out of range (and NaN) saturate: the plain
    conversion's such lanes are undefined on the device, and the host answers the saturated value."""
    lo, hi = -(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1
    v = np.asarray(v, dtype=np.float64)
    tr = np.trunc(v)
    over = tr >= 2.0 ** (t.bits - 1)
    under = tr < -(2.0 ** (t.bits - 1))
    mid = ~(over | under | np.isnan(v))
    out = np.zeros(v.shape, dtype=np.int64)
    out[mid] = tr[mid].astype(np.int64)
    out[over] = hi
    out[under] = lo
    return wrap_int(t, out)


# ---- integers -----------------------------------------------------------------------------------


def unsigned(x: np.ndarray, bits: int) -> np.ndarray:
    """The unsigned reading of signed int64 lanes of a ``bits``-wide format, as np.uint64 (an i64
    lane past 2^63 included: masking an int64 array with the Python int 2^64 - 1 overflows numpy's
    C long)."""
    u = np.asarray(x).astype(np.int64).astype(np.uint64)  # two's complement: -1 reads 2^64 - 1
    return u if bits >= 64 else u & np.uint64((1 << bits) - 1)


def trunc_div(x, y):
    """x / y rounded toward zero (a zero divisor answers 0: undefined on the device), on int64
    lanes. The magnitudes are taken as np.uint64: np.abs of the i64 minimum is itself, negative
    (campaign 2's seeds 2213, 6355, 9220: divi of -2^63)."""
    safe = np.where(y == 0, 1, y)

    def mag(v):
        u = np.asarray(v).astype(np.int64).astype(np.uint64)
        return np.where(np.asarray(v) < 0, ~u + np.uint64(1), u)

    q = mag(x) // mag(safe)
    return np.where((x < 0) ^ (safe < 0), (~q + np.uint64(1)).astype(np.int64), q.astype(np.int64))


def as_i64(n: int) -> int:
    """A Python integer below 2^64 read as a signed 64-bit one (its two's complement)."""
    n &= (1 << 64) - 1
    return n - (1 << 64) if n >> 63 else n


def mul_low(x, y, bits: int):
    """The low ``bits`` of the product (numpy's int64 product is exact below 2^63: widths to 32)."""
    if bits <= 32:
        return x * y
    return np.vectorize(lambda p, q: ((int(p) * int(q) + (1 << 63)) % (1 << 64)) - (1 << 63),
                        otypes=[np.int64])(x, y)


def mul_high(x, y, bits: int):
    """The high half of the product of the UNSIGNED readings."""
    ux, uy = unsigned(x, bits), unsigned(y, bits)
    if bits > 32:
        return np.vectorize(lambda p, q: as_i64((int(p) * int(q)) >> bits), otypes=[np.int64])(ux, uy)
    return ((ux * uy) >> np.uint64(bits)).astype(np.int64)


__all__ = ["work", "fma_exact", "maxmin", "directed", "device_ftof", "round_mode", "int_to_float", "float_to_int",
           "unsigned", "trunc_div", "as_i64", "mul_low", "mul_high", "SATFINITE", "THROUGH_F32"]
