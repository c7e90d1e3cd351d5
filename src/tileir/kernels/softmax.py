"""Row softmax over f32 rows of any length, on cells: one block a row.

A row that fits one tile (up to ``max_tile`` lanes, rounded up to a power of two) is one cell,
read once with its tail padded with -inf, so exp of the tail is 0 and the sum ignores it. A
longer row is cut into cells along a FREE dimension and walked three times (max, sum of
exponentials, write), each a d_range over the row's cells; its output is written through a view
of a Shared parameter (an Out's cell must follow the grid in every dimension).
"""

from __future__ import annotations

import math

import numpy as np

from .. import surface as ti
from ..dtypes import F32
from ..ir import DYN_DIM, PadNegInf
from ..kernel import kernel
from ..markers import FREE_AXIS, In, Out, Shared, cells
from .entry_hints import entry_hints
from .registry import Case, register


def _pow2_at_least(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def _tile(cols, max_tile):
    return min(_pow2_at_least(cols), max_tile)


def _x(cols, max_tile):
    t = _tile(cols, max_tile)
    if t >= cols:  # a row is one cell: lanes past the row read -inf, so exp() of them is 0
        return In(F32, cells([DYN_DIM, cols], [1, t], pad=PadNegInf))
    return In(F32, cells([DYN_DIM, cols], [1, t], along=[0, FREE_AXIS], pad=PadNegInf))


def _y(cols, max_tile):
    t = _tile(cols, max_tile)
    return Out(F32, cells([DYN_DIM, cols], [1, t])) if t >= cols else Shared(F32)


@kernel(hints=entry_hints, tuned=("max_tile", "warps", "occupancy"))
def softmax(x=_x, y=_y, *, cols: int, max_tile: int = 4096, warps: int = 0, occupancy: int = 0):
    """y[r, :] = softmax(x[r, :]) for a row-major f32 matrix of any number of rows (one block a
    row: the rows are DYN_DIM, so one cubin serves every row count) and ``cols`` columns.
    warps / occupancy: entry hints (0: tileiras decides)."""
    t = _tile(cols, max_tile)
    if t >= cols:
        row = ti.load_cell(x)
        e = ti.exp(row - ti.reduce_max(row, keepdims=True))
        ti.store_cell(y, e / ti.reduce_sum(e, keepdims=True))
        return
    # a long row: walked in cells of t (the FREE dimension) three times -- max, sum, write
    rows = ti.extent_of(x, 0)
    out = ti.partition_view(ti.tensor_view_dyn(y, 0, [ti.Dyn(rows), cols], [cols, 1]), [1, t])
    r = ti.block_id(0)
    chunks = ti.blocks_of(x, 1)
    mx = ti.carry(ti.full([1, t], -math.inf, F32))
    for j in ti.d_range(0, chunks):
        ti.set(mx, ti.max(ti.get(mx), ti.load_at(x, [j])))
    row_max = ti.reduce_max(ti.get(mx), keepdims=True)
    acc = ti.carry(ti.full([1, t], 0.0, F32))
    for j in ti.d_range(0, chunks):
        ti.set(acc, ti.get(acc) + ti.exp(ti.load_at(x, [j]) - row_max))
    total = ti.reduce_sum(ti.get(acc), keepdims=True)
    for j in ti.d_range(0, chunks):
        ti.store_view(out, [r, j], ti.exp(ti.load_at(x, [j]) - row_max) / total)


def _inputs(size, rng):
    rows, cols = size
    return [rng.standard_normal((rows, cols)).astype(np.float32) * 4, np.zeros((rows, cols), np.float32)]


def _expected(args):
    x = args[0].astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _size(n):
    return (n, n) if isinstance(n, int) else tuple(n)


register(Case("softmax", softmax, "row softmax, f32, any row length (tail masked)", (64, 1000),
              lambda s: {"cols": _size(s)[1]}, lambda s, rng: _inputs(_size(s), rng),
              _expected, output=1, rtol=1e-5, atol=1e-6))
