"""Block ids, index arithmetic, lanes and masks: where a block is and which elements it touches."""

from __future__ import annotations

from ..dev import dev, public
from ..values import Idx, Tile
from ._util import h, refuse, shape_of


@public
def block_id(axis: int) -> Idx:
    """The block index along ``axis`` (0, 1 or 2)."""
    return Idx(dev().t_block_id(axis))


@public
def num_blocks(axis: int) -> Idx:
    """The number of tile blocks along ``axis``: the extent of the grid this kernel runs on."""
    return Idx(dev().t_num_blocks(axis))


@public
def idx_const(value: int) -> Idx:
    """The scalar index holding the host constant ``value``, fixed when the kernel records."""
    return Idx(dev().t_idx_const(int(value)))


def as_idx(x) -> Idx:
    """An index operand: an Idx, or a host int made an ``idx_const`` (as Idx's operators take)."""
    if isinstance(x, Idx):
        return x
    if isinstance(x, int) and not isinstance(x, bool):
        return idx_const(x)
    if isinstance(x, Tile):
        raise refuse("a Tile where an index is wanted", "idx_of(t) for a rank-0 i32 tile")
    raise refuse(f"{x!r} is not an index", "an Idx or a host int")


@public
def idx_add(a: Idx | int, b: Idx | int) -> Idx:
    """The sum of two index tiles."""
    return Idx(dev().t_idx_add(as_idx(a).h, as_idx(b).h))


@public
def idx_mul(a: Idx | int, b: Idx | int) -> Idx:
    """The product of two index tiles."""
    return Idx(dev().t_idx_mul(as_idx(a).h, as_idx(b).h))


@public
def idx_sub(a: Idx | int, b: Idx | int) -> Idx:
    """The difference a - b of two index tiles."""
    return Idx(dev().t_binaryi("subi", "i32", [], as_idx(a).h, as_idx(b).h))


@public
def idx_div(a: Idx | int, b: Idx | int) -> Idx:
    """The quotient a / b of two index tiles, rounded toward zero."""
    return Idx(dev().t_binaryi("divi", "i32", [], as_idx(a).h, as_idx(b).h))


@public
def idx_rem(a: Idx | int, b: Idx | int) -> Idx:
    """The remainder of a / b, of a's sign."""
    return Idx(dev().t_binaryi("remi", "i32", [], as_idx(a).h, as_idx(b).h))


@public
def tile_at(idx: Idx | int, n: int) -> Idx:
    """The element offset of tile block ``idx`` in a run of ``n``-element tiles: idx * n."""
    return idx_mul(as_idx(idx), idx_const(n))


def idx_of(t: Tile) -> Idx:
    """A rank-0 i32 Tile as an index (the rank is held where the index is used)."""
    return Idx(h(t))


def idx_as_tile(i: Idx) -> Tile:
    """An index as the rank-0 i32 tile every element-wise operation takes."""
    return Tile(as_idx(i).h)


def row_major(shape) -> list:
    """The row-major strides of ``shape``: the suffix products, [1] for a one-dimensional tile."""
    out, acc = [], 1
    for d in reversed(list(shape)):
        out.append(acc)
        acc *= d
    return list(reversed(out))


def permute(strides, perm) -> list:
    """The strides of a permuted view: dimension k of the view is dimension perm[k] of the array.
    A layout, not an instruction (``permute_tile`` moves a tile in registers)."""
    return [strides[p] for p in perm]


def axis_strides(rank: int, axis: int, step: int) -> list:
    """The strides that walk one axis and hold the others still: ``step`` at ``axis``, 0 elsewhere."""
    return [step if k == axis else 0 for k in range(rank)]


@public
def lanes_strided(base, shape, strides) -> Tile:
    """The i32 tile of element offsets a tile at ``base`` laid out by ``strides`` reads."""
    return Tile(dev().t_lanes(as_idx(base).h, list(shape), list(strides)))


@public
def lanes(base, shape) -> Tile:
    """``lanes_strided`` over a contiguous tile: [base, base + 1, ..] in row-major order."""
    return lanes_strided(base, shape, row_major(shape))


@public
def arange(n: int) -> Tile:
    """The n-wide i32 tile [0, 1, .., n-1]."""
    return Tile(dev().t_iota(n))


def _limit_tile(limit):
    from .arith import i_const

    if isinstance(limit, int) and not isinstance(limit, bool):
        return i_const(limit)
    if isinstance(limit, Idx):
        return idx_as_tile(limit)
    return limit


@public
def tail_mask(base, shape, limit) -> Tile:
    """The lanes at ``base`` inside a buffer of ``limit`` elements: lanes(base, shape) < limit.
    ``limit`` is a host int, or an Idx the device computed (a length passed by value)."""
    from .arith import lt_i

    return lt_i(lanes(base, shape), _limit_tile(limit))


@public
def coord(base, shape, axis: int, step: int = 1) -> Tile:
    """The i32 tile whose lane holds its coordinate along ``axis``, counted from ``base`` by ``step``."""
    return lanes_strided(base, shape, axis_strides(len(shape), axis, step))


@public
def axis_mask(base, shape, axis: int, limit) -> Tile:
    """The lanes whose ``axis`` coordinate, counted from ``base``, is below ``limit``."""
    from .arith import lt_i

    return lt_i(coord(base, shape, axis, 1), _limit_tile(limit))


@public
def in_range(c: Tile, lo: int, hi: int) -> Tile:
    """The lanes whose coordinate satisfies lo <= c < hi."""
    from .arith import ge_i, i_const, lt_i

    return and_mask(ge_i(c, i_const(lo)), lt_i(c, i_const(hi)))


@public
def and_mask(a: Tile, b: Tile) -> Tile:
    """The lanes both masks select (a select: where a is 1 choose b, else 0)."""
    from .arith import bool_const, select

    return select(a, b, bool_const(False))


@public
def or_mask(a: Tile, b: Tile) -> Tile:
    """The lanes either mask selects (a select: where a is 1 choose 1, else b)."""
    from .arith import bool_const, select

    return select(a, bool_const(True), b)


def _shape(x):
    return shape_of(x)
