"""Reshape, broadcast, permute_tile and transpose of a tile in registers; ``widen``, the operators' and
fma's rule for operands whose shapes differ only in 1s."""

from __future__ import annotations

import builtins

from ..dev import dev, public
from ..values import Tile
from ._util import h, info, no_lit


@public
def reshape(t: Tile, shape) -> Tile:
    """``t``'s lanes regrouped into ``shape`` in row-major order (as many lanes; powers of two)."""
    no_lit(t, "reshape")
    d, s = info(t)
    return Tile(dev().t_reshape(d, list(s), list(shape), h(t)))


@public
def broadcast(t: Tile, shape) -> Tile:
    """``t`` widened to ``shape``: every dimension of length 1 takes its length in ``shape``; the
    rank stays; a rank-0 ``t`` widens to any shape."""
    no_lit(t, "broadcast")
    d, s = info(t)
    return Tile(dev().t_broadcast(d, list(s), list(shape), h(t)))


@public
def permute_tile(t: Tile, perm) -> Tile:
    """``t`` with dimension k of the answer being dimension perm[k] of ``t`` (rank >= 2): the
    dialect's permute, which moves a tile in registers."""
    d, s = info(t)
    return Tile(dev().t_permute(d, list(s), list(perm), h(t)))


@public
def transpose(t: Tile) -> Tile:
    """The rank-2 ``t`` with its two dimensions exchanged: permute_tile(t, [1, 0])."""
    return permute_tile(t, [1, 0])


def widen(*xs):
    """Equal-rank tile operands whose shapes differ only where some have length 1 meet at the
    larger shape, each widened with an explicit broadcast (numpy's rule, for the operators and fma:
    the other named functions keep the spec's rank-0 rule and refuse anything else). Numbers and
    rank-0 tiles are left to the rank-0 rule."""
    shapes = [info(x)[1] for x in xs if isinstance(x, Tile)]
    shapes = [s for s in shapes if s]
    if len(set(shapes)) < 2 or len({len(s) for s in shapes}) != 1:
        return xs
    if any(len({d for d in dims if d != 1}) > 1 for dims in zip(*shapes)):
        return xs  # let the named function refuse it with its own words
    shape = [builtins.max(dims) for dims in zip(*shapes)]
    return tuple(broadcast(x, shape) if isinstance(x, Tile) and info(x)[1] and list(info(x)[1]) != shape else x
                 for x in xs)
