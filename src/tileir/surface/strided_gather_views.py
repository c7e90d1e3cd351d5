"""The strided view, the gather/scatter view and what moves through it, and the atomic reduction
into a tile of a grid."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from ..dev import dev, public
from ..ir import NoPadding, Padding
from ..values import GatherScatterView, GridView, Idx, TensorView, Tile
from ._util import h, refuse
from .index import as_idx


@dataclass(frozen=True)
class At:
    """A gather/scatter index at a dimension that is not the sparse one (an Idx or a host int): the
    ELEMENT offset the tile starts at along that dimension. Measured (H200, tileiras 13.4.92): the
    device reads At(i) as an element offset, not as a tile index as a partition view's index is."""

    i: object


@dataclass(frozen=True)
class Rows:
    """The gather/scatter index at the sparse dimension: a rank-1 i32 tile of ROW NUMBERS, as long
    as the tile is along that dimension; lane j of the tile is row t[j] of the tensor."""

    t: Tile


GatherIdx = Union[At, Rows]  # one index of a gather/scatter load or store


def _tv(tv, what: str) -> TensorView:
    if not isinstance(tv, TensorView):
        raise refuse(f"{what} takes a TensorView", "tensor_view(p, base, shape, strides)")
    return tv


@public
def strided_view(tv: TensorView, tile_shape, traversal, dim_map=None, padding: Padding = NoPadding) -> GridView:
    """``tv`` cut into a grid of ``tile_shape`` tiles that ADVANCES by ``traversal``: grid index i
    along tile dimension k starts traversal[k] * i elements along tensor dimension dim_map[k] and
    reads tile_shape[k] of them, so tiles overlap (a shorter traversal) or skip (a longer one).
    Every traversal stride is strictly positive; the grid is strided_grid(shape, traversal),
    partial tiles included. traversal == tile_shape is partition_view written the long way."""
    _tv(tv, "strided_view")
    d = dev().t_shape_of(tv.h)[0]
    return GridView(dev().t_strided_view(d, tv.h, list(tile_shape), list(traversal),
                                         None if dim_map is None else list(dim_map), padding))


@public
def gather_scatter_view(tv: TensorView, tile_shape, sparse_dim: int, padding: Padding = NoPadding) -> GatherScatterView:
    """``tv`` read a row at a time along ``sparse_dim``: load_gather collects tile_shape[sparse_dim]
    rows chosen while the kernel runs (a Rows index) and stacks them into the tile; every other
    dimension takes the element offset the tile starts at (At; measured, see At). No dim_map."""
    _tv(tv, "gather_scatter_view")
    d = dev().t_shape_of(tv.h)[0]
    return GatherScatterView(dev().t_gather_view(d, tv.h, list(tile_shape), sparse_dim, padding))


def _gather_indices(v, indices, what: str) -> list:
    if not isinstance(v, GatherScatterView):
        raise refuse(f"{what} takes a GatherScatterView", "gather_scatter_view(tv, tile_shape, sparse_dim)")
    out = []
    for x in indices:
        if isinstance(x, Rows):
            out.append(h(x.t))
        elif isinstance(x, At):
            out.append(as_idx(x.i).h)
        elif isinstance(x, (Idx, int)) and not isinstance(x, bool):
            out.append(as_idx(x).h)
        else:
            raise refuse(f"{what}: {x!r} is not a gather/scatter index", "At(i) for a tile index, Rows(t) at the "
                         "sparse dimension")
    return out


@public
def load_gather(v: GatherScatterView, indices) -> Tile:
    """The tile ``v`` gathers at ``indices`` (At or Rows, one a dimension): the rows named by the
    Rows entry at the sparse dimension, each cut to the tile starting at the At offsets of the others. In
    the token chain where every load is; lanes past the tensor read the view's padding."""
    hs = _gather_indices(v, indices, "load_gather")
    d = dev().t_shape_of(v.h)[0]
    return Tile(dev().t_load_view(d, v.h, hs, []))


@public
def store_gather(v: GatherScatterView, indices, t: Tile) -> None:
    """``t`` scattered back the way load_gather collects: row k of the tile goes to the row the
    Rows entry names at k (lanes past the tensor are not written). Two lanes naming one row have no
    defined order."""
    hs = _gather_indices(v, indices, "store_gather")
    d = dev().t_shape_of(v.h)[0]
    dev().t_store_view(d, v.h, hs, h(t), [])


@public
def atomic_red_view(v: GridView, indices, mode: str, scope: str, t: Tile) -> None:
    """``t`` reduced into the tile of ``v``'s grid at ``indices``, element by element and
    ATOMICALLY (atomic_red_view_tko): answers nothing, so blocks reducing into one tile get an
    answer that does not depend on their order. ``mode``: and, or, xor, add, addf, max, min, umax,
    umin (xchg is refused); ``scope``: tl_blk or device; relaxed ordering, the only one allowed. A
    view carrying a padding value is refused."""
    if not isinstance(v, GridView):
        raise refuse("atomic_red_view takes a partition or strided view (a GridView)",
                     "partition_view(tv, tile_shape) with NoPadding")
    d = dev().t_shape_of(v.h)[0]
    dev().t_atomic_red_view(d, v.h, [as_idx(i).h for i in indices], mode, scope, h(t))


__all__ = ["At", "Rows", "strided_view", "gather_scatter_view", "load_gather", "store_gather", "atomic_red_view"]
