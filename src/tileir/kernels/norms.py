"""Row normalisations over f16 or f32 rows of any length, on cells, one block a row, statistics in f32:

* ``layernorm``: y = (x - mean(x)) / sqrt(var(x) + eps) * w + b (the biased variance, as torch's);
* ``rmsnorm``:   y = x / sqrt(mean(x^2) + eps) * w.

The rows are DYN_DIM, so one cubin serves every row count. A row that fits one tile (up to
``max_tile`` lanes, rounded up to a power of two) is one cell, read once with its tail padded with
zeros; the padded lanes hold x - mean = -mean after centring, so layernorm masks them out of the
variance with a coordinate mask (zero padding alone is not enough there; rmsnorm's x^2 of a zero
is zero). A longer row is walked in cells along a FREE dimension (as softmax does): the whole cells
without a mask, the last partial cell with one, and the output written through a view of a Shared
parameter (an Out's cell must follow the grid in every dimension).
"""

from __future__ import annotations

import numpy as np

from .. import surface as ti
from ..dtypes import F16, F32, dtype
from ..ir import DYN_DIM, PadZero
from ..kernel import kernel
from ..markers import FREE_AXIS, In, Out, Shared, cells
from .entry_hints import entry_hints
from .registry import Case, register


def _pow2_at_least(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def _tile(cols, max_tile):
    return min(_pow2_at_least(cols), max_tile)


def _x(cols, fmt="f32", max_tile=8192):
    t = _tile(cols, max_tile)
    if t >= cols:  # a row is one cell
        return In(fmt, cells([DYN_DIM, cols], [1, t], pad=PadZero))
    return In(fmt, cells([DYN_DIM, cols], [1, t], along=[0, FREE_AXIS], pad=PadZero))


def _vec(cols, fmt="f32", max_tile=8192):
    """A weight or bias: [cols], read in the row's cells (no grid axis: every block reads them all)."""
    return In(fmt, cells([cols], [_tile(cols, max_tile)], along=[FREE_AXIS], pad=PadZero))


def _y(cols, fmt="f32", max_tile=8192):
    t = _tile(cols, max_tile)
    return Out(fmt, cells([DYN_DIM, cols], [1, t])) if t >= cols else Shared(fmt)


def _row(v, j, t):
    """Cell j of a [cols] parameter as a [1, t] f32 row."""
    return ti.reshape(ti.to(ti.load_at(v, [j]), F32), [1, t])


def _out_view(x, y, cols, t):
    rows = ti.extent_of(x, 0)
    return ti.partition_view(ti.tensor_view_dyn(y, 0, [ti.Dyn(rows), cols], [cols, 1]), [1, t])


def _chunk_sum(x, fn, lo, hi, t):
    """sum over the row's cells j in [lo, hi) of fn(cell j as f32, j): a [1, t] f32 carry."""
    acc = ti.carry(ti.full([1, t], 0.0, F32))
    for j in ti.d_range(lo, hi):
        ti.set(acc, ti.get(acc) + fn(ti.to(ti.load_at(x, [j]), F32), j))
    return ti.get(acc)


def _walk(x, cols, t, fn):
    """The sum of fn(cell, j) over every cell of a long row, [1, 1]: the whole cells in a loop, the
    last partial cell (if any) once, with fn told its lanes past ``cols`` (a mask) so it can drop them."""
    whole, tail = divmod(cols, t)
    s = _chunk_sum(x, lambda c, j: fn(c, None), 0, whole, t)
    if tail:
        c = ti.to(ti.load_at(x, [whole]), F32)
        s = s + fn(c, ti.axis_mask(whole * t, [1, t], 1, cols))
    return ti.reduce_sum(s, keepdims=True)


@kernel(hints=entry_hints, tuned=("max_tile", "warps", "occupancy"))
def layernorm(x=_x, w=_vec, b=_vec, y=_y, *, cols: int, eps: float = 1e-5, fmt: str = "f32",
              max_tile: int = 8192, warps: int = 0, occupancy: int = 0):
    """y[r, :] = (x[r, :] - mean) / sqrt(var + eps) * w + b over a row-major matrix of any number
    of rows (DYN_DIM, one block a row) and ``cols`` columns, in f16 or f32 (``fmt``), with f32
    statistics (the biased variance). warps / occupancy: entry hints (0: tileiras decides)."""
    t = _tile(cols, max_tile)
    inv_n = 1.0 / cols
    if t >= cols:
        row, wr, br = ti.to(ti.load_cell(x), F32), _row(w, 0, t), _row(b, 0, t)  # three loads, none waits
        mean = ti.reduce_sum(row, keepdims=True) * inv_n
        d = row - mean
        if t > cols:  # the padded lanes hold -mean now: out of the variance
            d = ti.select(ti.axis_mask(0, [1, t], 1, cols), d, 0.0)
        rstd = ti.rsqrt(ti.reduce_sum(d * d, keepdims=True) * inv_n + eps)
        ti.store_cell(y, ti.to(ti.fma(d * rstd, wr, br), fmt))
        return
    # a long row: walked three times -- the sum, the centred squares, the write
    mean = _walk(x, cols, t, lambda c, m: c) * inv_n

    def sq(c, m):
        d = c - mean
        if m is not None:
            d = ti.select(m, d, 0.0)
        return d * d

    rstd = ti.rsqrt(_walk(x, cols, t, sq) * inv_n + eps)
    out = _out_view(x, y, cols, t)
    r = ti.block_id(0)
    for j in ti.d_range(0, ti.blocks_of(x, 1)):
        c, wr, br = ti.to(ti.load_at(x, [j]), F32), _row(w, j, t), _row(b, j, t)
        ti.store_view(out, [r, j], ti.to(ti.fma((c - mean) * rstd, wr, br), fmt))


@kernel(hints=entry_hints, tuned=("max_tile", "warps", "occupancy"))
def rmsnorm(x=_x, w=_vec, y=_y, *, cols: int, eps: float = 1e-6, fmt: str = "f32", max_tile: int = 8192,
            warps: int = 0, occupancy: int = 0):
    """y[r, :] = x[r, :] / sqrt(mean(x[r, :]^2) + eps) * w, f16 or f32 rows (f32 statistics), any
    number of rows (DYN_DIM) and ``cols`` columns."""
    t = _tile(cols, max_tile)
    inv_n = 1.0 / cols
    if t >= cols:
        row, wr = ti.to(ti.load_cell(x), F32), _row(w, 0, t)
        rs = ti.rsqrt(ti.reduce_sum(row * row, keepdims=True) * inv_n + eps)
        ti.store_cell(y, ti.to(row * rs * wr, fmt))
        return
    # zero padding is enough here: the square of a padded lane is 0
    ss = ti.reduce_sum(_chunk_sum(x, lambda c, j: c * c, 0, ti.blocks_of(x, 1), t), keepdims=True)
    rs = ti.rsqrt(ss * inv_n + eps)
    out = _out_view(x, y, cols, t)
    r = ti.block_id(0)
    for j in ti.d_range(0, ti.blocks_of(x, 1)):
        c = ti.to(ti.load_at(x, [j]), F32)
        ti.store_view(out, [r, j], ti.to(c * rs * _row(w, j, t), fmt))


# ---- cases ---------------------------------------------------------------------------------------


def _size(s):
    return (s, s) if isinstance(s, int) else tuple(s)


def _ln_case(fmt, rtol, atol, eps=1e-5):
    npd = dtype(fmt).np

    def inputs(s, rng):
        rows, cols = _size(s)
        x = (rng.standard_normal((rows, cols)) * 2 + 0.5).astype(npd)
        w = (1 + 0.5 * rng.standard_normal(cols)).astype(npd)
        b = rng.standard_normal(cols).astype(npd)
        return [x, w, b, np.zeros((rows, cols), npd)]

    def expected(args):
        x, w, b = (a.astype(np.float64) for a in args[:3])
        mu = x.mean(axis=1, keepdims=True)
        var = ((x - mu) ** 2).mean(axis=1, keepdims=True)
        return (x - mu) / np.sqrt(var + eps) * w + b

    name = dtype(fmt).name
    return register(Case(f"layernorm_{name}", layernorm, f"layernorm forward, {name} rows, f32 statistics, any row "
                         "length", (64, 1000), lambda s: {"cols": _size(s)[1], "eps": eps, "fmt": name}, inputs,
                         expected, output=3, rtol=rtol, atol=atol))


def _rms_case(fmt, rtol, atol, eps=1e-6):
    npd = dtype(fmt).np

    def inputs(s, rng):
        rows, cols = _size(s)
        x = (rng.standard_normal((rows, cols)) * 2).astype(npd)
        w = (1 + 0.5 * rng.standard_normal(cols)).astype(npd)
        return [x, w, np.zeros((rows, cols), npd)]

    def expected(args):
        x, w = (a.astype(np.float64) for a in args[:2])
        return x / np.sqrt((x * x).mean(axis=1, keepdims=True) + eps) * w

    name = dtype(fmt).name
    return register(Case(f"rmsnorm_{name}", rmsnorm, f"rmsnorm, {name} rows, f32 statistics, any row length",
                         (64, 1000), lambda s: {"cols": _size(s)[1], "eps": eps, "fmt": name}, inputs, expected,
                         output=2, rtol=rtol, atol=atol))


_ln_case(F32, 1e-4, 1e-4)
_ln_case(F16, 1e-2, 1e-2)
_rms_case(F32, 1e-4, 1e-4)
_rms_case(F16, 1e-2, 1e-2)
