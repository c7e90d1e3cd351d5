"""1-D convolution (valid mode, the cross-correlation deep learning calls convolution):
y[i] = sum_j w[j] * x[i + j] for i in [0, N - W + 1), f32, for x of any length N and a filter w of
any width W; y has N - W + 1 elements. N, W and y's length are run-time sizes read off the arrays
(checked against each other before a launch), so one cubin per configuration serves every length
and width.

Each block computes ``tile`` outputs in an f32 carry, walking the W taps in a loop: tap j reads
the filter's w[j] (one lane, broadcast) and x at base + j (a stride-1 load), and adds their
product with one fused multiply-add. One mask serves every tap: an output lane i < N - W + 1
reads x[i + j] < N only.
"""

from __future__ import annotations

import numpy as np

from .. import surface as ti
from ..dtypes import F32
from ..errors import TileirError
from ..kernel import cdiv, kernel
from ..markers import Shared, Whole
from .registry import Case, register


def _grid(N, W, N_out, tile=1024):  # noqa: N803  (the run-time sizes' names)
    if N_out != N - W + 1:
        raise TileirError(f"x has {N} elements and w {W}, so y has N - W + 1 = {N - W + 1}; it has {N_out}",
                          kernel="conv1d", what="y", fix=f"a y of {N - W + 1} elements" if N >= W else
                          "a filter no longer than x")
    return (cdiv(N_out, tile),)


@kernel(grid=_grid)
def conv1d(x=Whole(F32, ["N"]), w=Whole(F32, ["W"]), y=Shared(F32, ["N_out"]), *, tile: int = 1024):
    """y[i] = sum_{j < W} w[j] * x[i + j] for the N - W + 1 outputs of an f32 x of N elements."""
    base = ti.tile_at(ti.block_id(0), tile)
    m = ti.tail_mask(base, [tile], ti.extent_of(y, 0))
    acc = ti.carry(ti.full([tile], 0.0, F32))
    for j in ti.d_range(0, ti.extent_of(w, 0)):
        tap = ti.broadcast(ti.load(w, j, [1]), [tile])
        xs = ti.load(x, ti.idx_add(base, j), [tile], mask=m, pad=0.0)
        ti.set(acc, ti.fma(xs, tap, ti.get(acc)))
    ti.store(y, base, ti.get(acc), mask=m)


def _size(s):
    return (s, 7) if isinstance(s, int) else tuple(s)  # (n, width)


def _inputs(s, rng):
    n, width = _size(s)
    return [rng.standard_normal(n).astype(np.float32), rng.standard_normal(width).astype(np.float32),
            np.zeros(n - width + 1, np.float32)]


def _expected(args):
    return np.correlate(args[0].astype(np.float64), args[1].astype(np.float64), mode="valid")


register(Case("conv1d", conv1d, "1-D convolution (valid), f32, any length and filter width", (100_003, 7),
              lambda s: {}, _inputs, _expected, output=2, rtol=1e-5, atol=5e-5))
