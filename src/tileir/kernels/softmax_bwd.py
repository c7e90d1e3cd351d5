"""Row softmax backward: dx = y * (dy - sum(dy * y)) over the last dimension of row-major [R, C]
matrices y (the forward's output), dy (the gradient of y) and dx, of f32, f16 or bf16 (``fmt``),
computed in f32, ``rows`` rows a block (narrow rows share a block, as in the forward). R and C
are run-time sizes read off the arrays, so one cubin per configuration serves every shape, and
each array may have a row stride of its own.

Why it is right: y_j = e_j / sum(e), so dy_j/dx_i = y_j (delta_ij - y_i) and
dx_i = sum_j dy_j y_j (delta_ij - y_i) = y_i (dy_i - sum_j dy_j y_j).

A row is walked in chunks of ``max_tile`` lanes (a FREE dimension, the tails padded with zeros,
so a padded lane adds 0 to the dot product). The first walk sums dy * y and carries the chunk
it loaded last; the second writes every chunk but the last from a fresh load and the last from
that carry. ``one_chunk`` records the program for a row that fits one chunk: one read of y and
dy, one write, nothing carried (the sizing rule picks it, as for the forward).
"""

from __future__ import annotations

import numpy as np

from .. import surface as ti
from ..dtypes import BF16, F16, F32, dtype
from ..ir import PadZero
from ..kernel import kernel
from ..markers import FREE_AXIS, In, Shared, cells
from .entry_hints import entry_hints
from .registry import Case, register


def _row_in(fmt="f32", max_tile=4096, rows=1, one_chunk=False):
    return In(fmt, cells(["R", "C"], [rows, max_tile], along=[0, FREE_AXIS], pad=PadZero,
                         one_cell=(1,) if one_chunk else ()))


def _dx(fmt="f32"):
    return Shared(fmt, ["R", "C"])


@kernel(hints=entry_hints, tuned=("max_tile", "rows", "one_chunk", "warps", "occupancy"))
def softmax_bwd(y=_row_in, dy=_row_in, dx=_dx, *, fmt: str = "f32", max_tile: int = 4096, rows: int = 1,
                one_chunk: bool = False, warps: int = 0, occupancy: int = 0):
    """dx[r, :] = y[r, :] * (dy[r, :] - sum(dy[r, :] * y[r, :])) for [R, C] arrays of ``fmt`` (f32,
    f16 or bf16; f32 arithmetic), any R and C; rows walked in chunks of ``max_tile``, ``rows`` rows
    a block (a [rows, max_tile] cell; the rows past R read zeros and are never written).
    one_chunk: the program for rows of at most ``max_tile`` (no walk, nothing carried; a wider row
    is refused). warps / occupancy: entry hints (0: tileiras decides)."""
    t, n = max_tile, rows
    r = ti.block_id(0)
    out = ti.partition_view(ti.array_view(dx), [n, t])
    if one_chunk:
        yc, dyc = ti.to(ti.load_at(y, [0]), F32), ti.to(ti.load_at(dy, [0]), F32)
        ti.store_view(out, [r, 0], ti.to(yc * (dyc - ti.reduce_sum(yc * dyc, keepdims=True)), fmt))
        return
    chunks = ti.blocks_of(y, 1)
    last = ti.idx_sub(chunks, 1)
    dot = ti.carry(ti.full([n, t], 0.0, F32))
    y_last = ti.carry(ti.full([n, t], 0.0, F32))
    dy_last = ti.carry(ti.full([n, t], 0.0, F32))
    for j in ti.d_range(0, chunks):
        yc, dyc = ti.to(ti.load_at(y, [j]), F32), ti.to(ti.load_at(dy, [j]), F32)
        ti.set(dot, ti.get(dot) + yc * dyc)
        ti.set(y_last, yc)
        ti.set(dy_last, dyc)
    total = ti.reduce_sum(ti.get(dot), keepdims=True)
    for j in ti.d_range(0, last):
        yc, dyc = ti.to(ti.load_at(y, [j]), F32), ti.to(ti.load_at(dy, [j]), F32)
        ti.store_view(out, [r, j], ti.to(yc * (dyc - total), fmt))
    ti.store_view(out, [r, last], ti.to(ti.get(y_last) * (ti.get(dy_last) - total), fmt))


def row_tile(cols: int, max_tile: int = 4096) -> int:
    """The chunk a row of ``cols`` wants: the smallest power of two covering it, at most max_tile."""
    return min(max(1, 1 << (int(cols) - 1).bit_length()), max_tile)


def reference(y, dy):
    """softmax backward in f64 (numpy): y * (dy - sum(dy * y, row))."""
    y, dy = np.asarray(y, np.float64), np.asarray(dy, np.float64)
    return y * (dy - (dy * y).sum(axis=-1, keepdims=True))


# ---- cases ---------------------------------------------------------------------------------------


def _size(n):
    return (n, n) if isinstance(n, int) else tuple(n)


def _case(name, fmt, rtol, atol):
    npd = dtype(fmt).np

    def inputs(size, rng):
        rows, cols = _size(size)
        x = rng.standard_normal((rows, cols)) * 3
        e = np.exp(x - x.max(axis=1, keepdims=True))
        y = e / e.sum(axis=1, keepdims=True)
        return [y.astype(npd), rng.standard_normal((rows, cols)).astype(npd), np.zeros((rows, cols), npd)]

    def expected(args):
        return reference(args[0], args[1])

    spelled = {} if fmt == F32 else {"fmt": dtype(fmt).name}
    return register(Case(name, softmax_bwd, f"row softmax backward, {dtype(fmt).name} rows, f32 arithmetic, any R "
                         "and C", (64, 1000), lambda s: dict(spelled), inputs, expected, output=2, rtol=rtol,
                         atol=atol))


_case("softmax_bwd", F32, 1e-5, 1e-6)
_case("softmax_bwd_f16", F16, 1e-2, 2e-3)
_case("softmax_bwd_bf16", BF16, 2e-2, 1e-2)
