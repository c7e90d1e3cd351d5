"""Parameter markers: how a kernel declares what each block reads and writes.

    @ti.kernel
    def softmax(x=In(F32, cells([DYN_DIM, 1000], [1, 1024], pad=PadNegInf)),
                y=Out(F32, cells([DYN_DIM, 1000], [1, 1024]))):
        row = ti.load_cell(x)                  # this block's cell; lanes past 1000 read -inf
        e = ti.exp(row - ti.reduce_max(row))
        ti.store_cell(y, e / ti.reduce_sum(e))

    softmax(x, y)                              # the grid follows from the markers and x's shape

``cells(extent, tile, along, pad)`` cuts a parameter's row-major tensor of ``extent`` into cells
of ``tile``; dimension d of a cell follows grid axis ``along[d]`` (by default d), or no axis
(``FREE_AXIS``: the kernel names the cell, e.g. the K loop of a matmul). A ``DYN_DIM`` extent is
not in the kernel: it is the grid's blocks along the axis the dimension follows times its tile,
so one cubin serves every extent that is a whole number of tiles.

* ``In(fmt, cells)``: read through its cells (load_cell, load_at) or retile; never written.
* ``Out(fmt, cells)``: written through its cells (store_cell, store_sub) and nothing else: each
  block writes its own cell, which the recording enforces.
* ``Shared(fmt)``: a buffer every block may read and write anywhere (load, store, scatter,
  atomics, views): the escape hatch, with the ordering and overlap left to the kernel.
* ``Whole(fmt)``: a buffer read anywhere (load, views), never written.
* ``ByValue(fmt)`` / ``ByPtr(fmt)``: a scalar, or a buffer with no rules (trace_kernel's own).

A parameter default may also be a function of the kernel's configuration returning a marker, so a
static extent can come from a keyword-only argument: ``x=lambda cols: In(F32, cells([DYN_DIM, cols], ...))``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .dtypes import dtype as _dtype
from .errors import TileirError
from .ir import DYN_DIM, KParam, NoPadding, Padding

FREE_AXIS = -1


@dataclass(frozen=True)
class Cells:
    extent: tuple
    tile: tuple
    along: tuple
    pad: Padding = NoPadding

    @property
    def rank(self) -> int:
        return len(self.tile)

    def axis_of(self, d: int):
        a = self.along[d]
        return None if a == FREE_AXIS else a


def cells(extent, tile, along=None, pad: Padding = NoPadding) -> Cells:
    """A parameter's tensor of ``extent`` (row-major; DYN_DIM where the grid decides) cut into cells
    of ``tile`` (powers of two), dimension d following grid axis ``along[d]`` or FREE_AXIS."""
    extent, tile = tuple(extent), tuple(tile)
    if len(extent) != len(tile) or not tile:
        raise TileirError(f"cells({list(extent)}, {list(tile)}): one tile dimension per extent")
    along = tuple(range(len(tile))) if along is None else tuple(along)
    if len(along) != len(tile):
        raise TileirError(f"cells: along has {len(along)} entries for {len(tile)} dimensions")
    for t in tile:
        if t <= 0 or t & (t - 1):
            raise TileirError(f"cells: tile {list(tile)} — cell dimensions are powers of two",
                              fix="a power of two; the edge cells are padded")
    for e, a in zip(extent, along):
        if e != DYN_DIM and (not isinstance(e, int) or e <= 0):
            raise TileirError(f"cells: extent {e} — an extent is a positive int or DYN_DIM")
        if a not in (FREE_AXIS, 0, 1, 2):
            raise TileirError(f"cells: along {a} — a dimension follows grid axis 0, 1 or 2, or FREE_AXIS")
        if e == DYN_DIM and a == FREE_AXIS:
            raise TileirError("cells: a DYN_DIM extent must follow a grid axis (it is that axis's blocks times "
                              "the tile)", fix="a static extent for a dimension the kernel walks itself")
    axes = [a for a in along if a != FREE_AXIS]
    if len(axes) != len(set(axes)):
        raise TileirError(f"cells: along {list(along)} — two dimensions follow one grid axis")
    return Cells(extent, tile, along, pad if isinstance(pad, Padding) else Padding(pad))


@dataclass(frozen=True)
class Marker:
    role: str  # In | Out | Shared | Whole
    dtype: str
    cells: Cells | None = field(default=None)

    @property
    def kparam(self) -> KParam:
        return KParam(self.dtype, True)

    @property
    def readable(self) -> bool:
        return self.role in ("In", "Shared", "Whole", "Out")

    @property
    def writable_freely(self) -> bool:
        return self.role == "Shared"


def In(d, c: Cells | None = None) -> Marker:  # noqa: N802  (the spec's marker names)
    """An input read through its cells."""
    if c is None:
        raise TileirError("In(fmt, cells(...)): an In is cut into cells", fix="Whole(fmt) for a buffer read anywhere")
    return Marker("In", _dtype(d).name, c)


def Out(d, c: Cells | None = None) -> Marker:  # noqa: N802
    """An output each block writes its own cell of."""
    if c is None:
        raise TileirError("Out(fmt, cells(...)): an Out is cut into cells", fix="Shared(fmt) for free writes")
    return Marker("Out", _dtype(d).name, c)


def Shared(d) -> Marker:  # noqa: N802
    """A buffer read and written anywhere, by any block."""
    return Marker("Shared", _dtype(d).name)


def Whole(d) -> Marker:  # noqa: N802
    """A buffer read anywhere, never written."""
    return Marker("Whole", _dtype(d).name)


def kparam_of(m) -> KParam:
    return m.kparam if isinstance(m, Marker) else m


def extents_at_launch(marker: Marker, shape) -> list:
    """The extent of each dimension for an argument of ``shape``: the marker's static extents must
    match; a DYN_DIM one is the argument's (a whole number of tiles)."""
    c = marker.cells
    if shape is None:
        return list(c.extent)
    shape = tuple(shape)
    if len(shape) != c.rank:
        raise TileirError(f"an argument of shape {list(shape)} for a rank-{c.rank} marker")
    out = []
    for d, (e, t, s) in enumerate(zip(c.extent, c.tile, shape)):
        if e == DYN_DIM:
            if s % t:
                raise TileirError(f"dimension {d} is DYN_DIM with tile {t}, and the argument's extent {s} is not a "
                                  "whole number of tiles (a dynamic extent is the grid's blocks times the tile)",
                                  fix=f"pad the array to a multiple of {t}, or give the extent statically")
            out.append(s)
        else:
            if s != e:
                raise TileirError(f"dimension {d} of the argument is {s}, and the marker says {e}")
            out.append(e)
    return out


def grid_from_markers(markers, shapes) -> tuple:
    """The launch grid the markers imply: along each axis, the cell count of every dimension that
    follows it (they must agree)."""
    grid = {}
    for m, shape in zip(markers, shapes):
        if not isinstance(m, Marker) or m.cells is None:
            continue
        ext = extents_at_launch(m, shape)
        for d, e in enumerate(ext):
            a = m.cells.axis_of(d)
            if a is None:
                continue
            n = -(-e // m.cells.tile[d])
            if grid.setdefault(a, n) != n:
                raise TileirError(f"the markers disagree on grid axis {a}: {grid[a]} blocks and {n} blocks",
                                  fix="cells whose dimensions along one axis cover the same number of tiles")
    if not grid:
        raise TileirError("no marker has cells to derive the grid from", fix="pass grid=(x, y, z)")
    n_axes = max(grid) + 1
    return tuple(grid.get(a, 1) for a in range(n_axes))


__all__ = ["FREE_AXIS", "DYN_DIM", "Cells", "cells", "Marker", "In", "Out", "Shared", "Whole", "kparam_of",
           "grid_from_markers", "extents_at_launch"]
