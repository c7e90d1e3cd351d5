"""Subtiles and joins (extract, insert, cat), the integer power (powi), the error function by
composition (erf), and a tile as its bytes (pack_bytes, unpack_bytes)."""

from __future__ import annotations

from ..dev import dev, public
from ..values import Tile
from ._util import dname, h, info, no_lit, refuse
from .index import as_idx


@public
def extract(t: Tile, to, indices) -> Tile:
    """The subtile of ``t`` of shape ``to`` whose SLICE number along dimension k is indices[k]:
    ``to`` divides t's shape in every dimension, there are shape[k] / to[k] slices along k, and the
    indices count slices, not elements (the dialect's wording). An index out of range is undefined
    behaviour on the device."""
    no_lit(t, "extract")
    d, s = info(t)
    return Tile(dev().t_extract(d, list(s), list(to), h(t), [as_idx(i).h for i in indices]))


@public
def insert(s: Tile, t: Tile, indices) -> Tile:
    """``t`` with its subtile whose slice number along dimension k is indices[k] replaced by ``s``
    (Tile IR's insert, bytecode 13.4): extract's other direction, so extract(insert(s, t, i),
    shape(s), i) is s and every lane outside that subtile is t's own."""
    no_lit(s, "insert")
    no_lit(t, "insert")
    ds, ss = info(s)
    dt, st = info(t)
    return Tile(dev().t_insert(dt, list(ss), list(st), h(s), h(t), [as_idx(i).h for i in indices]))


@public
def cat(a: Tile, b: Tile, dim: int) -> Tile:
    """``a`` and ``b`` joined along ``dim``: they agree in every other dimension, and the answer's
    ``dim`` is the sum of theirs (a power of two, as every tile dimension is)."""
    no_lit(a, "cat")
    no_lit(b, "cat")
    d, sa = info(a)
    sb = info(b)[1]
    return Tile(dev().t_cat(d, dim, list(sa), list(sb), h(a), h(b)))


@public
def powi(a: Tile, n: Tile) -> Tile:
    """Each lane of the float tile ``a`` raised to the INTEGER power in ``n`` (an i1, i8, i16 or
    i32 tile, read SIGNED: an i8 0xFF is -1): Tile IR's fpowi, bytecode 13.4. Exact tier, against
    the device's own sequence rather than the true power: right-to-left binary exponentiation to
    |n|, one correctly rounded product a step, the reciprocal for a negative n, and a^0 = 1 for
    every a, NaN included (up to 34 ulp from the correctly rounded power, measured). f16 and bf16
    run the f32 sequence and round once (measured on an H200, 1024 lanes each). The host answers
    that sequence (tileir.ref.second.ref_fpowi), bit for bit on the H200 over f64, f32, f16, bf16."""
    no_lit(a, "powi")
    no_lit(n, "powi")
    d, s = info(a)
    e, sn = info(n)
    shape = s if len(s) >= len(sn) else sn
    return Tile(dev().t_powi(d, e, list(shape), h(a), h(n)))


# Abramowitz and Stegun 7.1.26
_P = 0.3275911
_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


@public
def erf(a: Tile) -> Tile:
    """The error function of each lane, BY COMPOSITION (Abramowitz and Stegun 7.1.26): for
    x = |a|, t = 1 / (1 + 0.3275911 x), erf(x) = 1 - (a1 t + a2 t^2 + a3 t^3 + a4 t^4 + a5 t^5)
    exp(-x^2), within 1.5e-7 for every x >= 0, and the sign of a put back by a select (7.1.26
    holds for x >= 0 only). Tolerance tier and nothing else; the host second opinion is
    tileir.ref.second.ref_erf, a series accurate to about 1e-15, so a difference IS this error.
    Issues absf, mulf, addf, divf, negf, exp, subf, a float compare and a select; the constants
    are made where they are used, in a's format."""
    from .arith import abs as abs_
    from .arith import add, div, exp, lt, mul, neg, select, sub

    no_lit(a, "erf")
    d = info(a)[0]
    from ..dtypes import BY_NAME

    if not BY_NAME[d].is_float:
        raise refuse(f"erf of an {d} tile: erf is a float function", "int_to_float the tile first")
    x = abs_(a)
    t = div(1.0, add(1.0, mul(_P, x)))
    poly = mul(t, _A[4])
    for c in reversed(_A[:4]):
        poly = mul(t, add(c, poly))
    y = sub(1.0, mul(poly, exp(neg(mul(x, x)))))
    return select(lt(a, 0.0), neg(y), y)


@public
def pack_bytes(a: Tile) -> Tile:
    """The rank-1 i8 tile holding the BYTES of the rank-1 tile ``a`` (the dialect's pack, bytecode
    13.3): no bit moves, so the answer has lanes * bits / 8 lanes. ``a``'s format is not an 8-bit
    one (that is a bitcast); a sub-byte format (i4, f4E2M1FN) packs two lanes a byte, the EVEN
    lane in the low nibble."""
    no_lit(a, "pack_bytes")
    d, s = info(a)
    return Tile(dev().t_repack("pack", d, "i8", list(s), h(a)))


@public
def unpack_bytes(a: Tile, to_d) -> Tile:
    """The rank-1 tile of format ``to_d`` the rank-1 i8 tile ``a`` holds (the dialect's unpack,
    pack_bytes's inverse): lanes * 8 / bits(to_d) lanes, so a sub-byte format DOUBLES the count."""
    no_lit(a, "unpack_bytes")
    d, s = info(a)
    return Tile(dev().t_repack("unpack", d, dname(to_d), list(s), h(a)))


__all__ = ["extract", "insert", "cat", "powi", "erf", "pack_bytes", "unpack_bytes"]
