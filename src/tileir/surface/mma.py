"""Matrix multiply-accumulate over the dialect's table of formats."""

from __future__ import annotations

from ..dev import dev, public
from ..dtypes import F32, float_dtype
from ..values import Lit, Tile
from ._util import h, info, refuse


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
