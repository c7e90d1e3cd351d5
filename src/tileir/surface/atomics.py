"""The atomics through an index tile: atomic_rmw, atomic_add and atomic_cas."""

from __future__ import annotations

from ..dev import dev, public
from ..values import Param, Tile
from ._util import h, info, refuse
from .memory import check_index


def _operands(p, index, what, *vals):
    if not isinstance(p, Param):
        raise refuse(f"{what} takes a kernel parameter, got {type(p).__name__}", "param(I32, pos)")
    if not isinstance(index, Tile):
        raise refuse(f"{what}'s index is a {type(index).__name__}, not an i32 tile", "arange, lanes, or a loaded tile")
    from .elementwise import _as_const

    out = [v if isinstance(v, Tile) else _as_const(v, p.dtype) for v in vals]
    return list(info(index)[1]), [h(v) for v in out]


@public
def atomic_rmw(p: Param, mode: str, index: Tile, v, mask=None, *, order: str = "relaxed") -> Tile:
    """Apply ``mode`` to element index[i, j, ..] of p and lane [i, j, ..] of ``v``, one indivisible
    transaction per lane, and answer what each element held BEFORE. ``mode``: and, or, xor, add,
    max, min, umax, umin (i32 / i64 buffers), addf (f16 bf16 f32 f64; bf16 needs sm_90), xchg (i32
    i64 f32 f64). Only the lanes ``mask`` selects take part. Two lanes may name one element; the
    order they arrive in is unspecified, so only an order-independent mode (add, and, or, xor, max,
    min, umax, umin) has one answer there -- not xchg, and not addf, whose rounding depends on it.
    ``order`` (relaxed, acquire, release, acq_rel): what the update orders besides itself. A block that
    writes a result and then counts itself done with ``acq_rel`` on the same parameter (one token chain)
    makes the result visible to the block whose count finds everyone done, and that block's later loads
    see it: how ``kernels.matmul_stream_k`` hands a cell's partial sums to the block that finishes it."""
    shape, (hv,) = _operands(p, index, "atomic_rmw", v)
    check_index(p, index, mask, "atomic_rmw")
    return Tile(dev().t_atomic_rmw(p.pos, p.dtype, mode, h(index), shape, hv,
                                   h(mask) if mask is not None else None, order))


@public
def atomic_add(p: Param, index: Tile, v, mask=None) -> None:
    """Add lane [i, j, ..] of ``v`` to element index[i, j, ..] of the integer buffer p where ``mask``
    selects it, throwing the old values away: the scatter-with-collisions a histogram is."""
    if isinstance(p, Param) and p.dtype not in ("i32", "i64"):
        raise refuse(f"atomic_add on a {p.dtype} buffer: it is the integer sum (i32 / i64)",
                     "atomic_rmw(p, 'addf', index, v) for a float one")
    atomic_rmw(p, "add", index, v, mask)


@public
def atomic_cas(p: Param, index: Tile, cmp, v, mask=None) -> Tile:
    """Compare element index[i, j, ..] of p with lane [i, j, ..] of ``cmp``, write the lane of ``v``
    where they are equal, and answer what was there either way, one indivisible transaction per lane
    (i32 i64 f32 f64). The comparison is on the BITS: a NaN matches only its own bit pattern, and
    the two zeros are two values."""
    shape, (hc, hv) = _operands(p, index, "atomic_cas", cmp, v)
    check_index(p, index, mask, "atomic_cas")
    return Tile(dev().t_atomic_cas(p.pos, p.dtype, h(index), shape, hc, hv, h(mask) if mask is not None else None))


__all__ = ["atomic_rmw", "atomic_add", "atomic_cas"]
