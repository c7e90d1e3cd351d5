"""Row softmax over the last dimension of a row-major [R, C] matrix of f32, f16 or bf16 (``fmt``),
computed in f32, one block a row. R and C are run-time sizes read off the arrays, so one cubin
per configuration serves every shape; x and y may each have a row stride of their own (a slice
of a wider matrix).

A row is walked in chunks of ``max_tile`` lanes (a FREE dimension of x's cells). The lanes past C
hold -inf, so exp of them is 0 and neither the max nor the sum sees them: an f32 row is padded
with -inf by its load; a 16-bit row is padded with zero, as the norms' rows are, and a select
puts the -inf in (``_padding``). The first walk keeps an online maximum m and sum l (l rescaled
when m grows), and carries the exponentials of the chunk it loaded last: after the walk they are
exp(x - m) of the last chunk under the final m. The second walk writes every chunk but the last
from a fresh load, and the last from that carry, so a row that fits one chunk is read once,
exponentiated once and written once -- the single-tile softmax -- while a longer row costs one
more read of all but its last chunk. y is written through a view of its array (Shared: an Out's
cell must follow the grid in every dimension), the view clipping the partial last chunk.

The arithmetic, as measured on the H200 (bench/results/softmax_math_h200.json, the rule's
configurations): e^(x - m) is exp2(x log2(e) - m log2(e)), one fma and an exp2; y is e times the
row's 1 / l, one division a row. A division a lane (e / l) took 0.55-0.70x torch where these take
0.95-1.36x (f16 4096 x 1000, 32768 x 1000, 32768 x 32768; f32 32768 x 1000). The zero padding
gained 16-bit rows a further 3-12% but cost f32 rows up to 2x (f32 32768 x 1000: 0.51x against
0.99x), so f32 keeps the -inf padding.
"""

from __future__ import annotations

import math

import numpy as np

from .. import surface as ti
from ..dtypes import BF16, F16, F32, dtype
from ..ir import Padding, PadNegInf, PadZero
from ..kernel import kernel
from ..markers import FREE_AXIS, In, Shared, cells
from .entry_hints import entry_hints
from .registry import Case, register

LOG2E = 1.4426950408889634  # log2(e): e^x = 2^(x log2(e)), here and in the attention kernels


def _padding(fmt) -> Padding:
    """How the lanes past C are padded: -inf by the load for f32, zero for 16-bit rows (the
    select in ``_chunk`` makes them -inf); the module's docstring has the measurement."""
    return PadNegInf if dtype(fmt) == F32 else PadZero


def _x(fmt="f32", max_tile=4096, rows=1, one_chunk=False):
    return In(fmt, cells(["R", "C"], [rows, max_tile], along=[0, FREE_AXIS], pad=_padding(fmt),
                         one_cell=(1,) if one_chunk else ()))


def _y(fmt="f32"):
    return Shared(fmt, ["R", "C"])


def _chunk(x, j, fmt, shape):
    """Chunk j of the block's rows as f32, -inf past C."""
    c = ti.to(ti.load_at(x, [j]), F32)
    if _padding(fmt) is PadNegInf:
        return c
    inside = ti.axis_mask(ti.tile_at(j, shape[1]), shape, 1, ti.extent_of(x, 1))
    return ti.select(inside, c, -math.inf)


def _exp_minus(c, m):
    """e^(c - m) for [n, t] lanes c and [n, 1] row maxima m: exp2 of one fma."""
    return ti.exp2(ti.fma(c, LOG2E, m * -LOG2E))


@kernel(hints=entry_hints, tuned=("max_tile", "rows", "one_chunk", "warps", "occupancy"))
def softmax(x=_x, y=_y, *, fmt: str = "f32", max_tile: int = 4096, rows: int = 1, one_chunk: bool = False,
            warps: int = 0, occupancy: int = 0):
    """y[r, :] = softmax(x[r, :]) for [R, C] arrays of ``fmt`` (f32, f16 or bf16; the arithmetic in
    f32), any R and C; rows walked in chunks of ``max_tile``, ``rows`` rows a block (a [rows,
    max_tile] cell: narrow rows share a block; the rows past R are never written).
    one_chunk: the program for rows of at most ``max_tile`` (no walk; a wider row is refused).
    warps / occupancy: entry hints (0: tileiras decides)."""
    t, n = max_tile, rows
    r = ti.block_id(0)
    out = ti.partition_view(ti.array_view(y), [n, t])
    if one_chunk:
        c = _chunk(x, 0, fmt, [n, t])
        e = _exp_minus(c, ti.reduce_max(c, keepdims=True))
        ti.store_view(out, [r, 0], ti.to(e * (1.0 / ti.reduce_sum(e, keepdims=True)), fmt))
        return
    chunks = ti.blocks_of(x, 1)
    m_i = ti.carry(ti.full([n, 1], -math.inf, F32))
    l_i = ti.carry(ti.full([n, 1], 0.0, F32))
    e_last = ti.carry(ti.full([n, t], 0.0, F32))  # exp(chunk - m) of the chunk loaded last
    for j in ti.d_range(0, chunks):
        c = _chunk(x, j, fmt, [n, t])
        m_old = ti.get(m_i)
        m_new = ti.max(m_old, ti.reduce_max(c, keepdims=True))
        e = _exp_minus(c, m_new)
        ti.set(l_i, ti.get(l_i) * _exp_minus(m_old, m_new) + ti.reduce_sum(e, keepdims=True))
        ti.set(m_i, m_new)
        ti.set(e_last, e)
    row_max, scale = ti.get(m_i), 1.0 / ti.get(l_i)
    last = ti.idx_sub(chunks, 1)
    for j in ti.d_range(0, last):  # whole chunks: no lane past C, no select
        e = _exp_minus(ti.to(ti.load_at(x, [j]), F32), row_max)
        ti.store_view(out, [r, j], ti.to(e * scale, fmt))
    ti.store_view(out, [r, last], ti.to(ti.get(e_last) * scale, fmt))


def _size(n):
    return (n, n) if isinstance(n, int) else tuple(n)


def _case(name, fmt, rtol, atol):
    npd = dtype(fmt).np

    def inputs(size, rng):
        rows, cols = _size(size)
        return [(rng.standard_normal((rows, cols)) * 4).astype(npd), np.zeros((rows, cols), npd)]

    def expected(args):
        x = args[0].astype(np.float64)
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    spelled = {} if fmt == F32 else {"fmt": dtype(fmt).name}
    return register(Case(name, softmax, f"row softmax, {dtype(fmt).name} rows, f32 arithmetic, any R and C",
                         (64, 1000), lambda s: dict(spelled), inputs, expected, output=1, rtol=rtol, atol=atol))


_case("softmax", F32, 1e-5, 1e-6)
_case("softmax_f16", F16, 1e-2, 2e-3)
_case("softmax_bf16", BF16, 2e-2, 1e-2)
