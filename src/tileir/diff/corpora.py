"""The corpora of the layer-2 diff: values chosen to separate a right answer from a wrong one.

Every corpus is deterministic (a fixed seed), a power of two lanes long (a tile's extent), and
built from the values where implementations part ways: both zeros, both infinities, NaN, the
smallest and largest subnormal, the smallest normal, the largest finite value, one unit either
side of 1, negative dividends, the ends of the integer range, shift counts at the width's edges,
and ties of every rounding mode. The rest of each tile is filled from a seeded generator that
spreads over exponents rather than over values.
"""

from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np

from ..dtypes import BY_NAME, to_format

SEED = 20261130


def rng(salt: int = 0) -> np.random.Generator:
    return np.random.default_rng(SEED + salt)


def np_of(fmt) -> np.dtype:
    return BY_NAME[getattr(fmt, "name", fmt)].np


def finfo(fmt):
    return ml_dtypes.finfo(np_of(fmt))


def float_specials(fmt) -> np.ndarray:
    """The values of a float format where arithmetic goes wrong first (duplicates removed, order kept)."""
    fi = finfo(fmt)
    one = 1.0
    eps = float(fi.eps)
    vals = [0.0, -0.0, one, -one, np.inf, -np.inf, np.nan, float(fi.smallest_subnormal), -float(fi.smallest_subnormal),
            float(fi.tiny) - float(fi.smallest_subnormal), float(fi.tiny), -float(fi.tiny), float(fi.max),
            -float(fi.max), one + eps, one - eps / 2, 2.0, 0.5, 3.0, -7.5, 0.1, -0.1, 1e-3, 10.0, 2.5, -2.5, 1.5]
    out = to_format(BY_NAME[getattr(fmt, "name", fmt)], np.array(vals, dtype=np.float64))
    seen, keep = set(), []
    for v in out:
        key = v.tobytes()
        if key not in seen:
            seen.add(key)
            keep.append(v)
    return np.array(keep, dtype=out.dtype)


def spread_floats(n: int, fmt, salt: int = 0, lo: int = -30, hi: int = 30) -> np.ndarray:
    """``n`` finite values of ``fmt``: random signs, exponents uniform in [lo, hi), random significands."""
    r = rng(salt)
    x = r.uniform(1.0, 2.0, n) * np.exp2(r.integers(lo, hi, n)) * r.choice([-1.0, 1.0], n)
    return to_format(BY_NAME[getattr(fmt, "name", fmt)], x)


def fill(head: np.ndarray, n: int, rest: np.ndarray) -> np.ndarray:
    """``head`` then ``rest`` up to ``n`` lanes (``head`` first, cut if longer)."""
    head = np.asarray(head)
    if head.size >= n:
        return head[:n].copy()
    return np.concatenate([head, np.asarray(rest, dtype=head.dtype)[: n - head.size]])


def pairs(xs: np.ndarray, ys: np.ndarray | None = None) -> tuple:
    """Every (x, y) of the two lists, as two arrays."""
    ys = xs if ys is None else ys
    p = list(itertools.product(range(len(xs)), range(len(ys))))
    return xs[[i for i, _ in p]], ys[[j for _, j in p]]


def float_pairs(fmt, n: int, salt: int = 0) -> tuple:
    """n lanes of (a, b): every pair of the format's specials, then spread values."""
    s = float_specials(fmt)
    a, b = pairs(s)
    return fill(a, n, spread_floats(n, fmt, salt)), fill(b, n, spread_floats(n, fmt, salt + 1))


INT32_SPECIALS = np.array([0, 1, -1, 2, -2, 3, -3, 7, -7, 31, 32, 2**31 - 1, -(2**31), 2**31 - 2, -(2**31) + 1,
                           0x55555555, -0x55555556, 65536, -65536, 46341, -46341, 123456789, -987654321, 0x7FFF0000,
                           -0x10000, 255, -256, 1 << 30], dtype=np.int64).astype(np.int32)


def int32_spread(n: int, salt: int = 0) -> np.ndarray:
    """Integers of every magnitude: a random sign and a random bit length."""
    r = rng(salt)
    bits = r.integers(0, 32, n)
    mag = (r.integers(0, 2**31, n) >> (31 - bits)).astype(np.int64)
    return np.where(r.random(n) < 0.5, -mag, mag).astype(np.int32)


def int32_pairs(n: int, salt: int = 0) -> tuple:
    a, b = pairs(INT32_SPECIALS)
    return fill(a, n, int32_spread(n, salt)), fill(b, n, int32_spread(n, salt + 1))


def shift_counts(n: int, salt: int = 0) -> np.ndarray:
    """Shift counts in [0, 32): both edges (0, 1, 30, 31) first, then uniform."""
    head = np.resize(np.array([0, 1, 30, 31, 31, 0, 16, 15], dtype=np.int32), min(n, 64))
    return fill(head, n, rng(salt).integers(0, 32, n).astype(np.int32))


def nonzero_divisors(b: np.ndarray, a: np.ndarray) -> np.ndarray:
    """``b`` with zeros and the INT_MIN / -1 overflow replaced (both undefined on the device)."""
    b = b.copy()
    b[b == 0] = 3
    b[(a == np.int32(-(2**31))) & (b == -1)] = -2
    return b


__all__ = ["SEED", "rng", "np_of", "finfo", "float_specials", "spread_floats", "fill", "pairs", "float_pairs",
           "INT32_SPECIALS", "int32_spread", "int32_pairs", "shift_counts", "nonzero_divisors"]
