"""Reading and writing a parameter through its cells (the markers of markers.py)."""

from __future__ import annotations

from ..dev import dev, public
from ..ir import Padding, PadZero
from ..values import GridView, Idx, Param, TensorView, Tile
from ._util import h, info, refuse
from .index import as_idx


def _param(p) -> Param:
    if not isinstance(p, Param):
        raise refuse(f"expected a kernel parameter, got {type(p).__name__}")
    return p


@public
def load_cell(p: Param) -> Tile:
    """This block's cell of ``p``: the tile of p's marker at the block ids of the grid axes its
    dimensions follow; lanes past the extent read the marker's padding value."""
    p = _param(p)
    view, idx = dev().t_cell_view(p.pos, p.dtype, [])
    return Tile(dev().t_load_view(p.dtype, view, idx, []))


@public
def load_at(p: Param, free) -> Tile:
    """load_cell for a parameter some of whose dimensions follow no grid axis: ``free`` names the
    cell along each of those, in dimension order (e.g. a matmul's A read ``load_at(a, [k])``)."""
    p = _param(p)
    view, idx = dev().t_cell_view(p.pos, p.dtype, [as_idx(i).h for i in free])
    return Tile(dev().t_load_view(p.dtype, view, idx, []))


@public
def store_cell(p: Param, t) -> None:
    """``t`` written into this block's cell of ``p`` (an Out); lanes past the extent are not written;
    a rank-0 ``t`` fills the cell."""
    p = _param(p)
    view, idx = dev().t_cell_view(p.pos, p.dtype, [])
    if not isinstance(t, Tile):
        from .elementwise import _as_const

        t = _as_const(t, p.dtype)
    dev().t_store_view(p.dtype, view, idx, h(t), [])


@public
def store_sub(p: Param, at, t: Tile) -> None:
    """``t`` written into piece ``at`` of this block's cell of ``p`` (an Out): the cell is cut into
    pieces shaped like ``t``, and ``at`` (host ints) numbers one along each dimension."""
    p = _param(p)
    view, idx = dev().t_sub_view(p.pos, p.dtype, list(info(t)[1]), [int(a) for a in at])
    dev().t_store_view(p.dtype, view, idx, h(t), [])


@public
def zeros(p, dtype=None) -> Tile:
    """A tile shaped like one cell of ``p``, in p's format, every lane zero. ``zeros(shape, fmt)``
    (a list of ints and a format, float or integer) is ``full(shape, 0, fmt)``, Triton's spelling."""
    if isinstance(p, (list, tuple)):
        if dtype is None:
            raise refuse(f"zeros({list(p)}) without a format", f"zeros({list(p)}, F32) (or I32, F16 ...)")
        from .arith import full

        return full(list(p), 0, dtype)
    if dtype is not None:
        raise refuse("zeros(p, fmt): a parameter's cell is in the parameter's own format", "zeros(p)")
    p = _param(p)
    return Tile(dev().t_cell_fill(p.pos, 0.0))


@public
def fill(p: Param, v: float) -> Tile:
    """A tile shaped like one cell of ``p``, every lane ``v`` (a whole number for an integer format)."""
    p = _param(p)
    return Tile(dev().t_cell_fill(p.pos, v))


@public
def retile(p: Param, extent, tile, pad: Padding = PadZero) -> GridView:
    """``p``'s row-major tensor of ``extent`` cut into tiles of ``tile``, padded with ``pad``: a grid
    view load_view reads at any index (read only) -- a parameter read a second way."""
    p = _param(p)
    return GridView(dev().t_retile(p.pos, p.dtype, list(extent), list(tile), pad))


@public
def array_view(p: Param) -> TensorView:
    """The tensor view of ``p``'s whole array as its marker declares it (cells' extent, or
    ``Shared`` / ``Whole`` with a shape): run-time sizes and strides as the launch passes them.
    Cut it with ``partition_view`` to read or write tiles anywhere (a Shared's writes)."""
    p = _param(p)
    return TensorView(dev().t_array_view(p.pos, p.dtype))


@public
def extent_of(p: Param, dim: int) -> Idx:
    """How many elements p's array has along ``dim``: the marker's number, or the run-time size
    the launch read off the array."""
    p = _param(p)
    return Idx(dev().t_extent_of(p.pos, dim, False))


@public
def blocks_of(p: Param, dim: int) -> Idx:
    """How many cells ``p`` is cut into along ``dim`` (the loop bound over a FREE dimension)."""
    p = _param(p)
    return Idx(dev().t_extent_of(p.pos, dim, True))
