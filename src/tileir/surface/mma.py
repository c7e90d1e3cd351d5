"""Matrix multiply-accumulate over the dialect's table of formats."""

from __future__ import annotations

from ..dev import dev, public
from ..dtypes import F32, float_dtype
from ..values import Lit, Tile
from ._util import h, info, refuse  # noqa: F401


@public
def mma(a: Tile, b: Tile, acc, acc_dtype=F32) -> Tile:
    """a @ b + acc: a is [m, k], b is [k, n], acc and the answer [m, n]. The operands share one
    format and the accumulator may have another, from the dialect's table (f16 into f16 or f32,
    bf16 into f32, tf32 into f32, f32 into f32, f64 into f64, f8 into f16 or f32); any other pair
    is refused with the table. A rank-0 or format-less (``lit``/number) accumulator is made in
    ``acc_dtype``. Tolerance tier: the order of the sum over k is not specified."""
    da, sa = info(a)
    db, sb = info(b)
    if len(sa) != 2 or len(sb) != 2:
        raise refuse(f"mma of a {list(sa)} and a {list(sb)} tile: both operands are rank 2")
    m, k = sa
    k2, n = sb
    if k != k2:
        raise refuse(f"mma of a [{m}, {k}] and a [{k2}, {n}] tile: a's K must be b's K")
    if isinstance(acc, (Lit, int, float)):
        v = acc.value if isinstance(acc, Lit) else float(acc)
        acc = Tile(dev().t_constf(float_dtype(acc_dtype).name, [m, n], v))
    dc = info(acc)[0]
    return Tile(dev().t_mmaf(da, dc, m, k, n, h(a), h(b), h(acc)))


@public
def mmai(a: Tile, b: Tile, c) -> Tile:
    """The INTEGER a @ b + c: i8 [m, k] by i8 [k, n] into i32 [m, n], both operands read SIGNED.
    Exact: every partial product fits 15 bits and the sum is modulo 2^32 whatever the order."""
    _, sa = info(a)
    _, sb = info(b)
    if len(sa) != 2 or len(sb) != 2 or sa[1] != sb[0]:
        raise refuse(f"mmai of a {list(sa)} and a {list(sb)} tile: a is [m, k] and b [k, n]")
    m, k = sa
    n = sb[1]
    if isinstance(c, (int, float)):
        c = Tile(dev().t_consti("i32", [m, n], int(c)))
    return Tile(dev().t_mmai(m, k, n, h(a), h(b), h(c)))


@public
def mma_scaled(a: Tile, b: Tile, c, sa: Tile, sb: Tile) -> Tile:
    """The block-scaled a @ b + c into f32: a [m, k], b [k, n], scale tiles sa [m, k/block] and
    sb [k/block, n], each scale multiplying a run of ``block`` elements along K (block read off
    sa). The dialect's table: f8E4M3FN, f8E5M2 or f4E2M1FN scaled by f8E8M0FNU; f4E2M1FN by
    f8E4M3FN. Those formats need sm_100 or later."""
    da, (m, k) = info(a)
    _, (_, n) = info(b)
    ds, ssa = info(sa)
    block = k // ssa[1] if len(ssa) == 2 and ssa[1] else 0
    if not block or k % ssa[1]:
        raise refuse(f"mma_scaled: sa is {list(ssa)}, which does not cut K={k} into equal runs")
    if isinstance(c, (int, float, Lit)):
        v = c.value if isinstance(c, Lit) else float(c)
        c = Tile(dev().t_constf("f32", [m, n], v))
    return Tile(dev().t_mmaf_scaled(da, ds, [m, k, n, block], h(a), h(b), h(c), h(sa), h(sb)))
