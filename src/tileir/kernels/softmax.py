"""Row softmax over f32 rows of any length: one block a row.

A row that fits one tile (up to ``max_tile`` lanes, rounded up to a power of two) is read once
with its tail padded with -inf, so exp of the tail is 0 and the sum ignores it. A longer row is
walked in tiles three times (max, sum of exponentials, write), each a d_range over the row.
"""

from __future__ import annotations

import math

import numpy as np

from .. import surface as ti
from ..dtypes import F32
from ..kernel import kernel
from ..prog import ByPtr
from .registry import Case, register


def _pow2_at_least(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


@kernel(grid=lambda rows, cols, max_tile: (rows,))
def softmax(x=ByPtr(F32), y=ByPtr(F32), *, rows: int, cols: int, max_tile: int = 4096):
    """y[r, :] = softmax(x[r, :]) for a row-major rows x cols f32 matrix."""
    row = ti.block_id(0)
    base = ti.tile_at(row, cols)
    tile = min(_pow2_at_least(cols), max_tile)
    neg_inf = ti.f_const(F32, -math.inf)
    if tile >= cols:
        m = ti.lt_i(ti.arange(tile), ti.i_const(cols)) if tile != cols else None
        v = ti.load(x, base, [tile], mask=m, pad=neg_inf if m is not None else None)
        e = ti.exp(v - ti.reduce_max(v))
        ti.store(y, base, e / ti.reduce_sum(e), mask=m)
        return
    chunks = -(-cols // tile)

    def chunk(j):
        start = ti.idx_add(base, ti.tile_at(j, tile))
        m = ti.lt_i(ti.arange(tile), ti.idx_as_tile(ti.idx_sub(ti.idx_const(cols), ti.tile_at(j, tile))))
        return start, m

    mx = ti.carry(ti.full([tile], -math.inf, F32))
    for j in ti.d_range(0, chunks):
        start, m = chunk(j)
        ti.set(mx, ti.max(ti.get(mx), ti.load(x, start, [tile], mask=m, pad=neg_inf)))
    row_max = ti.reduce_max(ti.get(mx))
    acc = ti.carry(ti.full([tile], 0.0, F32))
    for j in ti.d_range(0, chunks):
        start, m = chunk(j)
        ti.set(acc, ti.get(acc) + ti.exp(ti.load(x, start, [tile], mask=m, pad=neg_inf) - row_max))
    total = ti.reduce_sum(ti.get(acc))
    for j in ti.d_range(0, chunks):
        start, m = chunk(j)
        v = ti.load(x, start, [tile], mask=m, pad=neg_inf)
        ti.store(y, start, ti.exp(v - row_max) / total, mask=m)


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
              lambda s: {"rows": _size(s)[0], "cols": _size(s)[1]}, lambda s, rng: _inputs(_size(s), rng),
              _expected, output=1, rtol=1e-5, atol=1e-6))
