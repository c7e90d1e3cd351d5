"""Reshape, broadcast, permute_tile and transpose of a tile in registers."""

from __future__ import annotations

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
