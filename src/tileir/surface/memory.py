"""Parameters and the pointer path's load and store."""

from __future__ import annotations

from ..dev import dev, public
from ..dtypes import dtype as _dtype
from ..values import Param, Tile
from ._util import dname, h, info, refuse
from .index import as_idx, row_major


def param(d, pos: int) -> Param:
    """Parameter ``pos`` of the entry, of format ``d``. Positions count from zero and must agree
    with the kernel's parameter list; a load or store that disagrees is refused."""
    return Param(pos, _dtype(d).name)


def position(p: Param) -> int:
    """The position ``p`` was declared at."""
    return p.pos


def param_dtype(p: Param) -> str:
    """The dtype name ``p`` was declared with."""
    return p.dtype


def _param(p) -> Param:
    if not isinstance(p, Param):
        raise refuse(f"expected a kernel parameter, got {type(p).__name__}", "param(F32, pos) or the kernel's argument")
    return p


@public
def scalar(p: Param) -> Tile:
    """Parameter ``p`` read as a rank-0 tile: the value the launch passed by value. Nothing is
    loaded and reading it twice reads one SSA value."""
    p = _param(p)
    return Tile(dev().t_scalar(p.pos, p.dtype))


def _hints(hints):
    return tuple((arch, tuple(items)) for arch, items in (hints or ()))


@public
def load(p: Param, base, shape, strides=None, mask=None, pad=None, hints=()) -> Tile:
    """The tile of p's format and ``shape`` whose element [i, j, ..] is element
    base + i*strides[0] + j*strides[1] + .. of p (strides None: row_major(shape), a contiguous
    tile). ``mask`` reads only the lanes whose bit is 1; ``pad`` (a tile of p's format, rank 0
    widens) is what a masked-off lane answers. A pad with no mask is refused."""
    p = _param(p)
    shape = list(shape)
    strides = row_major(shape) if strides is None else list(strides)
    if pad is not None and not isinstance(pad, Tile):
        from .elementwise import _as_const

        pad = _as_const(pad, p.dtype)
    _check_bounds(p, base, shape, strides, mask, "load")
    return Tile(dev().t_load(p.pos, p.dtype, as_idx(base).h, shape, strides,
                             h(mask) if mask is not None else None, h(pad) if pad is not None else None,
                             _hints(hints)))


@public
def store(p: Param, base, v: Tile, strides=None, mask=None, hints=()) -> None:
    """Write tile ``v`` at ``base`` (its shape is v's own; a rank-0 v is refused). ``mask`` writes
    only the lanes whose bit is 1 and leaves memory as it was under the rest."""
    p = _param(p)
    d, shape = info(v)
    strides = row_major(shape) if strides is None else list(strides)
    _check_bounds(p, base, list(shape), strides, mask, "store")
    dev().t_store(p.pos, p.dtype, as_idx(base).h, list(shape), strides, h(v),
                  h(mask) if mask is not None else None, _hints(hints))


def _span(p: Param):
    """The hidden span of ``p``'s array in a bounds-checked recording (TILEIR_CHECK_BOUNDS), else None."""
    return getattr(dev(), "checked_span", lambda _p: None)(p.pos)


def _assert_inside(p: Param, offs: Tile, span, mask, what: str) -> None:
    """Assert every lane of the i32 element offsets ``offs`` (under ``mask``) lies in [0, span) of
    the array passed for ``p``: the device stops with the assert's words, the host reference names
    the block and the first bad lane."""
    from .arith import bool_const, ge_i, i_const, lt_i, select
    from .debug import d_assert
    from .index import and_mask

    inside = and_mask(ge_i(offs, i_const(0)), lt_i(offs, Tile(span)))
    if mask is not None:
        inside = select(mask, inside, bool_const(True))
    d_assert(inside, f"{what} of parameter {p.name} outside the array passed (TILEIR_CHECK_BOUNDS)")


def _check_bounds(p: Param, base, shape, strides, mask, what: str) -> None:
    """In a bounds-checked recording, the lanes a pointer load or store touches, checked."""
    span = _span(p)
    if span is None or not shape or any(not isinstance(s, int) for s in strides):
        return
    from .index import lanes_strided

    _assert_inside(p, lanes_strided(as_idx(base), shape, strides), span, mask, what)


def check_index(p: Param, index: Tile, mask, what: str) -> None:
    """In a bounds-checked recording, the selected lanes of an index tile (gather, scatter, the
    atomics), checked."""
    span = _span(p)
    if span is not None and info(index)[0] == "i32":  # another index format: the operation refuses it itself
        _assert_inside(p, index, span, mask, what)


__all__ = ["param", "position", "param_dtype", "scalar", "load", "store", "dname"]
