"""The pointer surface: tiles of pointers a body names and walks (ptrs, ptr_offset, the three
conversions), loads and stores through them, and gather / scatter through an index tile."""

from __future__ import annotations

from ..dev import dev, public
from ..values import Param, Ptrs, Tile
from ._util import dname, h, info, refuse
from .memory import check_index


def _param(p, what) -> Param:
    if not isinstance(p, Param):
        raise refuse(f"{what} takes a kernel parameter, got {type(p).__name__}",
                     "param(F32, pos) or the kernel's argument")
    return p


def _opt(x, dtype=None):
    """An optional mask / pad as a handle; a host number for a pad becomes a constant of ``dtype``."""
    if x is None:
        return None
    if dtype is not None and not isinstance(x, (Tile, Ptrs)):
        from .elementwise import _as_const

        x = _as_const(x, dtype)
    return h(x)


def _ptrs(ps, what):
    if not isinstance(ps, (Ptrs, Tile)):
        raise refuse(f"{what} takes a tile of pointers, got {type(ps).__name__}",
                     "ptrs(p, shape), global_ptrs(sym, d, shape), alloca_ptrs(...) or int_to_ptr(v, d)")
    d, shape = info(ps)
    return d, list(shape), h(ps)


@public
def ptrs(p: Param, shape) -> Ptrs:
    """The tile of ``shape`` every lane of which holds p's own address: the reshape and broadcast
    every address ladder opens with, as a value a body can name and ptr_offset can move."""
    p = _param(p, "ptrs")
    return Ptrs(dev().t_ptrs(p.pos, p.dtype, list(shape)))


@public
def ptr_offset(ps, offs: Tile) -> Ptrs:
    """``ps`` advanced by ``offs``, in ELEMENTS of the pointee format: lane i is lane i of ps plus
    offs[i] elements (an i32 tile; i64 is taken too). A rank-0 side is widened to the other's shape."""
    d, shape, hp = _ptrs(ps, "ptr_offset")
    if not isinstance(offs, Tile):
        raise refuse(f"ptr_offset's offsets are a {type(offs).__name__}, not a tile", "an i32 tile: arange(n), lanes")
    return Ptrs(dev().t_ptr_offset(d, shape, hp, h(offs)))


@public
def ptr_to_int(ps) -> Tile:
    """``ps`` as a tile of i64 addresses, to be read UNSIGNED; int_to_ptr is the inverse. On the
    host reference the addresses are fake ones (a buffer at (k + 1) << 40): differences are byte
    distances as on the device, absolute values are not the device's."""
    d, shape, hp = _ptrs(ps, "ptr_to_int")
    return Tile(dev().t_ptr_to_int(d, shape, hp))


@public
def int_to_ptr(v: Tile, d) -> Ptrs:
    """A tile of i64 addresses as pointers to ``d``: the inverse of ptr_to_int, so an address can
    be computed. A write through what this answers cannot be followed back to a parameter, and is
    refused in a kernel with an In or an Out parameter."""
    if not isinstance(v, Tile):
        raise refuse(f"int_to_ptr takes an i64 tile, got {type(v).__name__}", "ptr_to_int(ps) answers one")
    _, shape = info(v)
    return Ptrs(dev().t_int_to_ptr(dname(d), list(shape), h(v)))


@public
def ptr_to_ptr(ps, to_d) -> Ptrs:
    """``ps`` reinterpreted as pointers to ``to_d``: the same addresses, another element format (what
    a later ptr_offset counts in and load_ptrs reads). Nothing is converted or read."""
    d, shape, hp = _ptrs(ps, "ptr_to_ptr")
    return Ptrs(dev().t_ptr_to_ptr(d, dname(to_d), shape, hp))


@public
def load_ptrs(ps, mask=None, pad=None) -> Tile:
    """The tile the pointers in ``ps`` point at, shaped like ps; in the token chain where load is.
    ``mask`` / ``pad`` (beyond the spec, as on load): only lanes whose bit is 1 are read, the others
    answer the pad."""
    d, shape, hp = _ptrs(ps, "load_ptrs")
    return Tile(dev().t_load_ptrs(d, shape, hp, _opt(mask), _opt(pad, d)))


@public
def store_ptrs(ps, v: Tile, mask=None) -> None:
    """Write ``v`` through the pointers in ``ps`` (a rank-0 v is widened); in the token chain where
    store is. A write into an Out (its writes are its cells') or an In is refused, as is one
    through pointers the recording cannot follow while any parameter is an In or an Out."""
    d, shape, hp = _ptrs(ps, "store_ptrs")
    if not isinstance(v, Tile):
        from .elementwise import _as_const

        v = _as_const(v, d)
    dev().t_store_ptrs(d, shape, hp, h(v), _opt(mask))


@public
def gather(p: Param, index: Tile, mask=None, pad=None) -> Tile:
    """The tile of p's format whose lane [i, j, ..] is element index[i, j, ..] of p, shaped like the
    i32 ``index``. Without a mask every index must be inside p; with one, a lane whose bit is 0 is
    not read and answers the matching lane of ``pad`` (rank 0 widens). A pad without a mask is
    refused."""
    p = _param(p, "gather")
    if not isinstance(index, Tile):
        raise refuse(f"gather's index is a {type(index).__name__}, not an i32 tile", "arange, lanes, or a loaded tile")
    _, shape = info(index)
    check_index(p, index, mask, "gather")
    return Tile(dev().t_gather(p.pos, p.dtype, h(index), list(shape), _opt(mask), _opt(pad, p.dtype)))


@public
def scatter(p: Param, index: Tile, v: Tile, mask=None) -> None:
    """Write lane [i, j, ..] of ``v`` to element index[i, j, ..] of p. NO TWO WRITTEN LANES MAY NAME
    ONE ELEMENT: the lanes of one store are unordered on the device, so a duplicate has no answer
    (the host writes in row-major lane order, the last lane winning). A masked-off lane leaves memory
    as it was. A scatter is not a cell write: into an In or an Out it is refused."""
    p = _param(p, "scatter")
    if not isinstance(index, Tile):
        raise refuse(f"scatter's index is a {type(index).__name__}, not an i32 tile", "arange, lanes, or a loaded tile")
    _, shape = info(index)
    if not isinstance(v, Tile):
        from .elementwise import _as_const

        v = _as_const(v, p.dtype)
    check_index(p, index, mask, "scatter")
    dev().t_scatter(p.pos, p.dtype, h(index), list(shape), h(v), _opt(mask))


__all__ = ["ptrs", "ptr_offset", "ptr_to_int", "int_to_ptr", "ptr_to_ptr", "load_ptrs", "store_ptrs", "gather",
           "scatter"]
