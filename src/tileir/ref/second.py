"""Second opinions: host functions computed independently of numpy's and the device's libraries,
for the operations whose device answer is an approximation or a particular sequence.

* ``ref_erf``: the error function by the everywhere-convergent series
  erf(x) = 2/sqrt(pi) * exp(-x^2) * sum_n 2^n x^(2n+1) / (1*3*...*(2n+1)), whose terms are all
  positive (no cancellation); a few units of 1e-16 from the true value on every double.
* ``ref_sin``: the sine by an exact range reduction (x - k*pi/2 in integer arithmetic against
  pi to 1300 bits, Machin's formula) and a Taylor series on [-pi/4, pi/4].
* ``ref_fpowi``: Tile IR's fpowi as the device computes it (measured; the spec's ref_fpowi):
  right-to-left binary exponentiation of a to |n|, one correctly rounded product a step in the
  operand's format, the reciprocal (correctly rounded) for a negative n, and a^0 = 1 for every a,
  NaN included. f16 and bf16 run that sequence in f32 and round once at the end (measured on an
  H200, tileiras 13.4.92, sm_90: an f16 sequence rounded at every step differs on 1.1^17).
"""

from __future__ import annotations

import math

import numpy as np

from ..dtypes import BY_NAME, to_format

_PI_BITS = 1300
_pi_fixed = None


def _atan_inv(n: int, bits: int) -> int:
    """atan(1/n) * 2^bits, by its alternating series in integers."""
    one = 1 << (bits + 16)
    total, term, k, sign = 0, one // n, 1, 1
    n2 = n * n
    while term:
        total += sign * (term // k)
        term //= n2
        k += 2
        sign = -sign
    return total >> 16


def _pi() -> int:
    """pi * 2^_PI_BITS (Machin: pi = 16 atan(1/5) - 4 atan(1/239))."""
    global _pi_fixed
    if _pi_fixed is None:
        _pi_fixed = 16 * _atan_inv(5, _PI_BITS) - 4 * _atan_inv(239, _PI_BITS)
    return _pi_fixed


def _reduce(x: float) -> tuple[int, float]:
    """(k mod 4, r) with x = k*pi/2 + r and |r| <= pi/4, the reduction done in integers."""
    m, e = math.frexp(x)  # x = m * 2^e, 0.5 <= |m| < 1
    mi = int(m * (1 << 53))
    e -= 53  # x = mi * 2^e exactly, and e >= -1127 > -_PI_BITS
    xf = mi << (e + _PI_BITS)  # x * 2^B, exact
    half_pi = _pi() >> 1  # pi/2 * 2^B
    k = (2 * xf + half_pi) // (2 * half_pi)  # round(x / (pi/2))
    r = xf - k * half_pi  # r * 2^B, |r| <= pi/4
    return int(k % 4), r / (1 << _PI_BITS)  # int / int is correctly rounded


def _sin_taylor(r: float) -> float:
    s, term, r2, n = r, r, r * r, 1
    while True:
        term *= -r2 / ((2 * n) * (2 * n + 1))
        if abs(term) < 1e-40:
            break
        s += term
        n += 1
    return s


def _cos_taylor(r: float) -> float:
    s, term, r2, n = 1.0, 1.0, r * r, 1
    while True:
        term *= -r2 / ((2 * n - 1) * (2 * n))
        if abs(term) < 1e-40:
            break
        s += term
        n += 1
    return s


def _sin1(x: float) -> float:
    if not math.isfinite(x):
        return math.nan
    if x == 0.0:
        return x  # keeps -0
    q, r = _reduce(x)
    return (_sin_taylor(r), _cos_taylor(r), -_sin_taylor(r), -_cos_taylor(r))[q]


def ref_sin(x):
    """The sine of each lane of ``x`` (f64), by an exact range reduction and a Taylor series."""
    arr = np.asarray(x, dtype=np.float64)
    out = np.vectorize(_sin1, otypes=[np.float64])(arr) if arr.size else arr.copy()
    return out if arr.ndim else float(out)


_TWO_OVER_SQRT_PI = 1.1283791670955126


def _erf1(x: float) -> float:
    if math.isnan(x):
        return x
    ax = abs(x)
    if ax >= 6.0:  # erfc(6) < 2.2e-17: 1 to the last bit of a double
        y = 1.0
    elif ax == 0.0:
        return x  # keeps -0
    else:
        x2 = ax * ax
        term, k, total = ax, 0, ax
        terms = [term]
        while k < x2 or term > 1e-18 * total:
            k += 1
            term *= 2.0 * x2 / (2 * k + 1)
            total += term
            terms.append(term)
        y = _TWO_OVER_SQRT_PI * math.exp(-x2) * math.fsum(terms)
        y = min(y, 1.0)
    return math.copysign(y, x)


def ref_erf(x):
    """The error function of each lane of ``x`` (f64), to a few units of 1e-16."""
    arr = np.asarray(x, dtype=np.float64)
    out = np.vectorize(_erf1, otypes=[np.float64])(arr) if arr.size else arr.copy()
    return out if arr.ndim else float(out)


def ref_fpowi(a, n, dtype="f64"):
    """Tile IR's fpowi of float lanes ``a`` (held in format ``dtype``) to integer lanes ``n``:
    right-to-left binary exponentiation of a to |n|, each product rounded once into ``dtype``,
    then the correctly rounded reciprocal where n < 0; a^0 is 1.0 for every a, NaN included.
    f16 and bf16 lanes run the f32 sequence and are rounded into their format once, at the end."""
    d = BY_NAME[getattr(dtype, "name", dtype)]
    if d.name in ("f16", "bf16"):  # measured (H200, sm_90): the sequence runs in f32, rounded once at the end
        return to_format(d, ref_fpowi(to_format(d, np.asarray(a)).astype(np.float32), n, "f32"))
    a = to_format(d, np.asarray(a))
    n = np.asarray(n).astype(np.int64)
    a, n = np.broadcast_arrays(a, n)
    work = np.float64 if d.name == "f64" else np.float32

    def rnd(x):
        return to_format(d, x).astype(work)

    base = a.astype(work)
    m = np.abs(n)
    r = np.ones(a.shape, dtype=work)
    with np.errstate(all="ignore"):
        while np.any(m):
            odd = (m & 1) == 1
            r = np.where(odd, rnd(r * base), r)
            m = m >> 1
            base = np.where(m > 0, rnd(base * base), base)
        r = np.where(n < 0, rnd(np.asarray(1.0, dtype=work) / r), r)
    return to_format(d, r)


__all__ = ["ref_erf", "ref_sin", "ref_fpowi"]
