"""Folds of two tiles at once: d_reduce2 (a value and its index, the argmax / argmin shape) and
d_scan2 (two tiles of one format, the first-order linear recurrence shape).

Both ride on ops/reduce.py's recorder, which takes any number of operands: the region's arguments
are (accumulator, element) per operand, operand by operand, and the host folds them left with the
body as recorded (reversed for a reverse scan). The bodies here see the two accumulators first and
then the two elements, which is the order the spec writes them in.
"""

from __future__ import annotations

from ..dev import body, dev, public
from ..values import Tile
from ._util import h, info, refuse
from .reduce import _identity


def _two(r, what: str):
    if not isinstance(r, (tuple, list)) or len(r) != 2 or not all(isinstance(x, Tile) for x in r):
        raise refuse(f"{what}'s body must answer two tiles (the new accumulator of each operand), got {r!r}",
                     "return (acc_a, acc_b)")
    return [h(r[0]), h(r[1])]


@public
def d_reduce2(values: Tile, idxs: Tile, value_identity: float, index_identity: int, fn, dim: int = -1):
    """d_reduce over a tile of values and the i32 index tile beside it, which travel through one
    fold together: ``fn(acc_v, acc_i, elem_v, elem_i)`` answers ``(new_v, new_i)``, all rank 0.
    Answers the two reductions, ``dim`` dropped. As for d_reduce the fold's order is not
    specified: the body must be associative and commutative (an argmax that breaks ties by the
    smaller index is). The host folds left."""
    dv, shape = info(values)
    di, ishape = info(idxs)
    if di != "i32":
        raise refuse(f"d_reduce2's index tile is {di}; it is an i32 tile",
                     "an i32 tile of lane numbers: broadcast(arange(n), shape), or float_to_int(t, I32)")
    if ishape != shape:
        raise refuse(f"d_reduce2 of a {list(shape)} value tile and a {list(ishape)} index tile: the two have one "
                     "shape", "broadcast(arange(n), shape) for the lane numbers along the last dimension")
    d = dev()
    args = d.t_reduce_begin(dim, list(shape), [_identity(dv, value_identity), _identity("i32", index_identity)],
                            [h(values), h(idxs)])
    av, ev, ai, ei = args
    with body():
        r = fn(Tile(av), Tile(ai), Tile(ev), Tile(ei))
    rv, ri = d.t_reduce_end(_two(r, "d_reduce2"))
    return Tile(rv), Tile(ri)


@public
def d_scan2(a: Tile, b: Tile, a_identity: float, b_identity: float, fn, dim: int = -1, reverse: bool = False):
    """d_scan over two tiles of ONE format at once: ``fn(acc_a, acc_b, elem_a, elem_b)`` answers
    ``(new_a, new_b)``, all rank 0, and position j of the answers is the fold of everything at or
    before j (after it with ``reverse``). The body need not commute. The dialect's prose says a
    scan takes one tile; its verifier and tileiras take two, and the device answers them right
    (measured, the spec says). The host folds left (from the far end with ``reverse``); a float
    scan is tolerance tier, as d_scan is."""
    da, shape = info(a)
    db, bshape = info(b)
    if da != db:
        raise refuse(f"d_scan2 of a {da} tile and a {db} tile: both operands have one format",
                     f"convert one first (to(b, {da.upper()}) or float_to_float)")
    if bshape != shape:
        raise refuse(f"d_scan2 of a {list(shape)} tile and a {list(bshape)} tile: the two have one shape",
                     "broadcast or reshape one of them")
    d = dev()
    args = d.t_scan_begin(dim, reverse, list(shape), [_identity(da, a_identity), _identity(db, b_identity)],
                          [h(a), h(b)])
    aa, ea, ab, eb = args
    with body():
        r = fn(Tile(aa), Tile(ab), Tile(ea), Tile(eb))
    ra, rb = d.t_scan_end(_two(r, "d_scan2"))
    return Tile(ra), Tile(rb)


__all__ = ["d_reduce2", "d_scan2"]
