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
(``FREE_AXIS``: the kernel names the cell, e.g. the K loop of a matmul). An extent is a number
(fixed when the kernel records) or a **run-time size**: a name (``"M"``), which every argument
that names it must agree on, or ``DYN_DIM``, that argument's own. A run-time size is not in the
kernel's configuration: the launch reads it (and every stride but the last dimension's) off the
arrays and passes it as a hidden by-value parameter (``tileir.sizes``), so one cubin serves every
size. The last cell along a dimension may be partial: its lanes past the extent read the pad on a
load and are not written on a store, on the device and on the host reference alike.

* ``In(fmt, cells)``: read through its cells (load_cell, load_at) or retile; never written.
* ``Out(fmt, cells)``: written through its cells (store_cell, store_sub) and nothing else: each
  block writes its own cell, which the recording enforces.
* ``Shared(fmt)``: a buffer every block may read and write anywhere (load, store, scatter,
  atomics, views): the escape hatch, with the ordering and overlap left to the kernel.
* ``Whole(fmt)``: a buffer read anywhere (load, views), never written.
* ``ByValue(fmt)`` / ``ByPtr(fmt)``: a scalar, or a buffer with no rules (trace_kernel's own).

``Shared(fmt, shape)`` and ``Whole(fmt, shape)`` may declare their array's extents the same way
(``Whole(F32, ["N"])``), so ``extent_of`` and ``array_view`` work on them and the launch checks them.

A parameter default may also be a function of the kernel's configuration returning a marker, so a
tile can come from a keyword-only argument: ``x=lambda t: In(F32, cells(["R", "C"], [1, t]))``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .dtypes import dtype as _dtype
from .errors import TileirError
from .ir import DYN_DIM, KParam, NoPadding, Padding, as_padding

FREE_AXIS = -1


@dataclass(frozen=True)
class Cells:
    extent: tuple
    tile: tuple
    along: tuple
    pad: Padding = NoPadding
    one_cell: tuple = ()  # dimensions one cell covers whole: the launch refuses an extent past the tile

    @property
    def rank(self) -> int:
        return len(self.tile)

    def axis_of(self, d: int):
        a = self.along[d]
        return None if a == FREE_AXIS else a


def is_runtime(e) -> bool:
    """Whether an extent is a run-time size (a name, or DYN_DIM) rather than a fixed number."""
    return isinstance(e, str) or e == DYN_DIM


def check_extent(extent, what: str) -> tuple:
    """``extent`` as a tuple of positive ints, size names and DYN_DIMs, or a TileirError."""
    extent = tuple(extent)
    if not extent:
        raise TileirError(f"{what}: an array has at least one dimension")
    for e in extent:
        if isinstance(e, str):
            if not e.isidentifier():
                raise TileirError(f"{what}: the size name {e!r} is not an identifier",
                                  fix="a name such as 'M' or 'rows'")
        elif isinstance(e, bool) or not isinstance(e, int) or (e != DYN_DIM and e <= 0):
            raise TileirError(f"{what}: extent {e!r} -- an extent is a positive int (fixed when the kernel records), "
                              "a size name such as 'M' (read from the arrays at launch), or DYN_DIM",
                              fix="a name for a size that changes from call to call")
    return extent


def _plain_extent(extent) -> bool:
    """Whether check_extent would pass ``extent`` as it is: positive ints, DYN_DIM, identifiers."""
    if not extent:
        return False
    for e in extent:
        t = type(e)
        if not ((t is int and (e > 0 or e == DYN_DIM)) or (t is str and e.isidentifier())):
            return False
    return True


def cells(extent, tile, along=None, pad: Padding = NoPadding, one_cell=()) -> Cells:
    """A parameter's row-major tensor of ``extent`` (each a fixed int, a run-time size name such as
    ``"M"``, or DYN_DIM) cut into cells of ``tile`` (powers of two; the last cell along a dimension
    may be partial), dimension d following grid axis ``along[d]`` or FREE_AXIS. ``one_cell``: the
    dimensions a single cell covers whole (a program that needs no walk along them): a launch whose
    extent there is past the tile is refused."""
    if type(extent) in (tuple, list) and _plain_extent(extent):
        # nothing to refuse, so no refusal's text is made (a marker function runs per recording)
        extent, tile = tuple(extent), tuple(tile)
    else:
        extent, tile = check_extent(extent, f"cells({list(extent)}, {list(tile)})"), tuple(tile)
    if len(extent) != len(tile) or not tile:
        raise TileirError(f"cells({list(extent)}, {list(tile)}): one tile dimension per extent")
    along = tuple(range(len(tile))) if along is None else tuple(along)
    if len(along) != len(tile):
        raise TileirError(f"cells: along has {len(along)} entries for {len(tile)} dimensions")
    for t in tile:
        if isinstance(t, bool) or not isinstance(t, int):
            raise TileirError(f"cells: tile {list(tile)} -- a cell dimension is an int, not {type(t).__name__} {t!r}",
                              fix=f"int({t!r})" if isinstance(t, float) and t == int(t) else "a power-of-two int")
        if t <= 0 or t & (t - 1):
            raise TileirError(f"cells: tile {list(tile)} — cell dimensions are powers of two",
                              fix="a power of two; the edge cells are padded")
    for a in along:
        if a not in (FREE_AXIS, 0, 1, 2):
            raise TileirError(f"cells: along {a} — a dimension follows grid axis 0, 1 or 2, or FREE_AXIS")
    axes = [a for a in along if a != FREE_AXIS]
    if len(axes) != len(set(axes)):
        raise TileirError(f"cells: along {list(along)} — two dimensions follow one grid axis")
    one_cell = tuple(one_cell)
    for d in one_cell:
        if isinstance(d, bool) or not isinstance(d, int) or not 0 <= d < len(tile):
            raise TileirError(f"cells: one_cell {list(one_cell)} -- {d!r} is not a dimension of {list(extent)}",
                              fix=f"dimension numbers from 0 to {len(tile) - 1}")
        if not is_runtime(extent[d]) and extent[d] > tile[d]:
            raise TileirError(f"cells({list(extent)}, {list(tile)}): dimension {d} is {extent[d]}, past the one "
                              f"cell of {tile[d]} that one_cell says covers it",
                              fix=f"a tile of at least {extent[d]} there, or leave dimension {d} out of one_cell")
    return Cells(extent, tile, along, as_padding(pad, "pad", "cells"), one_cell)


@dataclass(frozen=True)
class Marker:
    role: str  # In | Out | Shared | Whole
    dtype: str
    cells: Cells | None = field(default=None)
    shape: tuple | None = field(default=None)  # a Shared / Whole array's declared extents

    @property
    def extent(self) -> tuple | None:
        """The declared extents of the parameter's array (its cells', or its shape), or None."""
        return self.cells.extent if self.cells is not None else self.shape

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


def Shared(d, shape=None) -> Marker:  # noqa: N802
    """A buffer read and written anywhere, by any block; ``shape`` (optional) declares its extents
    like cells' (ints, size names, DYN_DIM)."""
    return Marker("Shared", _dtype(d).name, None, None if shape is None else check_extent(shape, "Shared(fmt, shape)"))


def Whole(d, shape=None) -> Marker:  # noqa: N802
    """A buffer read anywhere, never written; ``shape`` (optional) declares its extents."""
    return Marker("Whole", _dtype(d).name, None, None if shape is None else check_extent(shape, "Whole(fmt, shape)"))


def kparam_of(m) -> KParam:
    return m.kparam if isinstance(m, Marker) else m


__all__ = ["FREE_AXIS", "DYN_DIM", "Cells", "cells", "Marker", "In", "Out", "Shared", "Whole", "kparam_of",
           "is_runtime"]
