"""Tensor views and partition views: the addressing that lets tileiras use the bulk copy engines."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from ..dev import dev, public
from ..ir import DYN_DIM, NoPadding, Padding
from ..values import GridView, Idx, Param, TensorView, Tile
from ._util import h, info, refuse
from .index import as_idx


@dataclass(frozen=True)
class Fixed:
    """A tensor_view dimension the type states."""

    n: int


@dataclass(frozen=True)
class Dyn:
    """A tensor_view dimension the kernel computed (prints ?; make_tensor_view takes it as an operand)."""

    v: Idx


Dim = Union[Fixed, Dyn]  # one dimension of a tensor_view_dyn


def dim_extent(d) -> int:
    """The extent of a Dim as the type states it: the constant, or DYN_DIM."""
    return DYN_DIM if isinstance(d, Dyn) else (d.n if isinstance(d, Fixed) else int(d))


def dim_operands(ds) -> list:
    """The handles of the dynamic entries of ``ds``, in order."""
    return [as_idx(d.v).h for d in ds if isinstance(d, Dyn)]


@public
def tensor_view(p: Param, base, shape, strides) -> TensorView:
    """The tensor_view over p's buffer starting ``base`` elements in, ``shape`` elements along each
    dimension and ``strides`` elements between neighbours (each strictly positive)."""
    return TensorView(dev().t_tensor_view(p.pos, p.dtype, as_idx(base).h, list(shape), list(strides), [], []))


@public
def tensor_view_dyn(p: Param, base, shape, strides) -> TensorView:
    """tensor_view with dimensions the kernel computes: ``Fixed(n)`` or ``Dyn(idx)`` per entry (an int
    is Fixed). One cubin then serves every tensor of that rank."""
    return TensorView(dev().t_tensor_view(p.pos, p.dtype, as_idx(base).h, [dim_extent(d) for d in shape],
                                          [dim_extent(d) for d in strides], dim_operands(shape),
                                          dim_operands(strides)))


@public
def partition_view(tv: TensorView, tile_shape, dim_map=None, padding: Padding = NoPadding) -> GridView:
    """``tv`` cut into a grid of ``tile_shape`` tiles; ``dim_map[k]`` is the tensor dimension tile
    dimension k runs along (identity by default); ``padding`` is what a lane past the tensor reads."""
    if not isinstance(tv, TensorView):
        raise refuse("partition_view takes a TensorView", "tensor_view(p, base, shape, strides)")
    d = dev().t_shape_of(tv.h)[0]
    return GridView(dev().t_partition_view(d, tv.h, list(tile_shape), None if dim_map is None else list(dim_map),
                                           padding))


@public
def load_view(v: GridView, indices, inbounds=()) -> Tile:
    """The tile of ``v``'s grid at ``indices`` (one a tile dimension); lanes past the tensor read
    the padding value. ``inbounds`` (one bool a dimension) PROMISES no tile is cut by the edge there."""
    d = dev().t_shape_of(v.h)[0]
    return Tile(dev().t_load_view(d, v.h, [as_idx(i).h for i in indices], list(inbounds)))


@public
def store_view(v: GridView, indices, t: Tile, inbounds=()) -> None:
    """``t`` written into the tile of ``v``'s grid at ``indices``; lanes past the tensor are not written."""
    d = dev().t_shape_of(v.h)[0]
    dev().t_store_view(d, v.h, [as_idx(i).h for i in indices], h(t), list(inbounds))


@public
def tensor_dim(tv: TensorView, dim: int) -> Idx:
    """The extent of ``tv`` along ``dim``, asked of the device (a ? dimension's operand value)."""
    return Idx(dev().t_tensor_shape(tv.h, dim))


@public
def index_space_dim(v: GridView, dim: int) -> Idx:
    """The extent of ``v``'s grid along tile dimension ``dim``, asked of the device."""
    return Idx(dev().t_index_space_shape(v.h, dim))


def view_grid(shape, tile_shape, dim_map=None) -> list:
    """The grid a partition view cuts ``shape`` into: ceil(shape[dim_map[k]] / tile_shape[k])."""
    dim_map = list(range(len(tile_shape))) if dim_map is None else dim_map
    return [-(-shape[d] // t) for t, d in zip(tile_shape, dim_map)]


def strided_grid(shape, traversal, dim_map=None) -> list:
    """The grid of a strided view: ceil(shape[dim_map[k]] / traversal[k]), partial tiles included."""
    return view_grid(shape, traversal, dim_map)


def inbounds_note(inbounds) -> str:
    """The suffix a recorded view access carries in a log when it promises inbounds, else nothing."""
    return f" inbounds={list(inbounds)}" if any(inbounds) else ""


def _unused(x):
    return info(x)
