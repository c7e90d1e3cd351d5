"""Row normalisations over the last dimension of a row-major [R, C] matrix of f32, f16 or bf16
(``fmt``), one block a row, statistics in f32:

* ``layernorm``: y = (x - mean(x)) / sqrt(var(x) + eps) * w + b (the biased variance, as torch's);
* ``rmsnorm``:   y = x / sqrt(mean(x^2) + eps) * w.

R and C are run-time sizes read off the arrays (w and b are [C]), so one cubin per configuration
serves every shape, and x and y may each have a row stride of their own. A row is walked in
chunks of ``max_tile`` lanes (a FREE dimension, the tail padded with zeros); the first walk sums
(x, or x^2) and carries the chunk it loaded last, so a row that fits one chunk is read once --
the single-tile kernel -- and a longer one costs one more read (rmsnorm) or two (layernorm: the
centred squares, then the write) of all but its last chunk. Layernorm's centred padded lanes hold
-mean, so the last chunk's are masked out of the variance by their column (rmsnorm's x^2 of a
padded zero is zero already). 1 / C is computed on the device from the run-time C. y is written
through a view of its array (Shared), which clips the partial last chunk.
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


def _x(fmt="f32", max_tile=8192, rows=1, one_chunk=False):
    return In(fmt, cells(["R", "C"], [rows, max_tile], along=[0, FREE_AXIS], pad=PadZero,
                         one_cell=(1,) if one_chunk else ()))


def _vec(fmt="f32", max_tile=8192):
    """A weight or bias: [C], read in the row's chunks (no grid axis: every block reads them all)."""
    return In(fmt, cells(["C"], [max_tile], along=[FREE_AXIS], pad=PadZero))


def _y(fmt="f32"):
    return Shared(fmt, ["R", "C"])


def _chunk(x, j):
    """Chunk j of this block's row of x, as f32."""
    return ti.to(ti.load_at(x, [j]), F32)


def _row(v, j, t):
    """Chunk j of a [C] parameter as a [1, t] f32 row."""
    return ti.reshape(ti.to(ti.load_at(v, [j]), F32), [1, t])


class _Walk:
    """What both norms share: the row's chunks, the last one's index, 1 / C, and the output view
    (a block's ``n`` rows at once). ``one``: the row is one chunk (the configuration's one_chunk):
    no walks, the last chunk is chunk 0."""

    def __init__(self, x, y, t, n=1, one=False):
        self.t, self.n, self.one = t, n, one
        self.r = ti.block_id(0)
        self.chunks = None if one else ti.blocks_of(x, 1)
        self.last = 0 if self.chunks is None else ti.idx_sub(self.chunks, 1)
        self.cols = ti.extent_of(x, 1)
        self.inv_n = 1.0 / ti.int_to_float(ti.idx_as_tile(self.cols), F32)
        self.out = ti.partition_view(ti.array_view(y), [n, t])

    def sum_and_last(self, x, fn):
        """([n, t] sums over the rows' chunks of fn(chunk), the last chunk as f32): one read of every
        chunk."""
        if self.one:
            c = _chunk(x, 0)
            return fn(c), c
        acc = ti.carry(ti.full([self.n, self.t], 0.0, F32))
        kept = ti.carry(ti.full([self.n, self.t], 0.0, F32))
        for j in ti.d_range(0, self.chunks):
            c = _chunk(x, j)
            ti.set(acc, ti.get(acc) + fn(c))
            ti.set(kept, c)
        return ti.get(acc), ti.get(kept)

    def whole_chunks(self):
        """The chunks before the last (every lane inside the row), to loop over: none for one chunk."""
        return () if self.one else ti.d_range(0, self.last)

    def store(self, j, v, fmt):
        ti.store_view(self.out, [self.r, j], ti.to(v, fmt))


@kernel(hints=entry_hints, tuned=("max_tile", "rows", "one_chunk", "warps", "occupancy"))
def layernorm(x=_x, w=_vec, b=_vec, y=_y, *, eps: float = 1e-5, fmt: str = "f32", max_tile: int = 8192,
              rows: int = 1, one_chunk: bool = False, warps: int = 0, occupancy: int = 0):
    """y[r, :] = (x[r, :] - mean) / sqrt(var + eps) * w + b for [R, C] arrays of ``fmt`` (f32, f16
    or bf16) and [C] weights and biases, f32 statistics (the biased variance), any R and C.
    rows: rows a block (a [rows, max_tile] cell, for narrow rows; those past R are not written).
    one_chunk: the program for rows of at most ``max_tile`` (no walk; a wider row is refused).
    warps / occupancy: entry hints (0: tileiras decides)."""
    walk, t = _Walk(x, y, max_tile, rows, one_chunk), max_tile
    w_last, b_last = ti.load_at(w, [walk.last]), ti.load_at(b, [walk.last])  # issued before the row's reads
    s, x_last = walk.sum_and_last(x, lambda c: c)
    mean = ti.reduce_sum(s, keepdims=True) * walk.inv_n
    sq = None if one_chunk else ti.carry(ti.full([rows, t], 0.0, F32))
    if sq is not None:  # more than one chunk
        for j in walk.whole_chunks():  # the whole chunks: no lane past C
            d = _chunk(x, j) - mean
            ti.set(sq, ti.get(sq) + d * d)
    inside = ti.axis_mask(ti.tile_at(walk.last, t), [rows, t], 1, walk.cols)
    d_last = ti.select(inside, x_last - mean, 0.0)  # the padded lanes hold -mean: out of the variance
    squares = d_last * d_last if sq is None else ti.get(sq) + d_last * d_last
    rstd = ti.rsqrt(ti.reduce_sum(squares, keepdims=True) * walk.inv_n + eps)
    for j in walk.whole_chunks():
        walk.store(j, ti.fma((_chunk(x, j) - mean) * rstd, _row(w, j, t), _row(b, j, t)), fmt)
    wr, br = (ti.reshape(ti.to(v, F32), [1, t]) for v in (w_last, b_last))
    walk.store(walk.last, ti.fma(d_last * rstd, wr, br), fmt)


@kernel(hints=entry_hints, tuned=("max_tile", "rows", "one_chunk", "warps", "occupancy"))
def rmsnorm(x=_x, w=_vec, y=_y, *, eps: float = 1e-6, fmt: str = "f32", max_tile: int = 8192, rows: int = 1,
            one_chunk: bool = False, warps: int = 0, occupancy: int = 0):
    """y[r, :] = x[r, :] / sqrt(mean(x[r, :]^2) + eps) * w for [R, C] arrays of ``fmt`` (f32, f16 or
    bf16) and a [C] weight, f32 statistics, any R and C; ``rows`` rows a block; ``one_chunk``: the
    program for rows of at most ``max_tile``."""
    walk, t = _Walk(x, y, max_tile, rows, one_chunk), max_tile
    w_last = ti.load_at(w, [walk.last])
    ss, x_last = walk.sum_and_last(x, lambda c: c * c)  # a padded lane's square is 0
    rs = ti.rsqrt(ti.reduce_sum(ss, keepdims=True) * walk.inv_n + eps)
    for j in walk.whole_chunks():
        walk.store(j, _chunk(x, j) * rs * _row(w, j, t), fmt)
    walk.store(walk.last, x_last * rs * ti.reshape(ti.to(w_last, F32), [1, t]), fmt)


# ---- cases ---------------------------------------------------------------------------------------


def _size(s):
    return (s, s) if isinstance(s, int) else tuple(s)


def _spelled(fmt, eps, default_eps):
    """The case's configuration: only what differs from the kernel's defaults (no tiles: the
    kernel's own, or the tuned table's on a GPU)."""
    cfg = {} if fmt == F32 else {"fmt": dtype(fmt).name}
    return cfg if eps == default_eps else dict(cfg, eps=eps)


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
    cfg = _spelled(fmt, eps, 1e-5)
    return register(Case(f"layernorm_{name}", layernorm, f"layernorm forward, {name} rows, f32 statistics, any R "
                         "and C", (64, 1000), lambda s: dict(cfg), inputs, expected, output=3, rtol=rtol, atol=atol))


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
    cfg = _spelled(fmt, eps, 1e-6)
    return register(Case(f"rmsnorm_{name}", rmsnorm, f"rmsnorm, {name} rows, f32 statistics, any R and C",
                         (64, 1000), lambda s: dict(cfg), inputs, expected, output=2, rtol=rtol, atol=atol))


_ln_case(F32, 1e-4, 1e-4)
_ln_case(F16, 1e-2, 1e-2)
_ln_case(BF16, 2e-2, 5e-2)
_rms_case(F32, 1e-4, 1e-4)
_rms_case(F16, 1e-2, 1e-2)
_rms_case(BF16, 2e-2, 5e-2)
