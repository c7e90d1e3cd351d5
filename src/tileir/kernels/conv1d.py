"""1-D convolution (valid mode, the cross-correlation deep learning calls convolution):
y[i] = sum_j w[j] * x[i + j] for i in [0, n - width + 1), f32, any length n (passed at launch, so
one cubin serves every length), filter width a configuration value (<= 64).

Each block computes ``tile`` outputs. The filter is read once (one masked load of a power-of-two
tile) and each tap taken out of it with extract; x is read once per tap with a stride-1 load at
base + j (``width`` loads that never wait on each other), masked by the block's output tail: an
output lane i < n - width + 1 reads x[i + j] < n only, so one mask serves every tap. The taps are
unrolled while recording (a few dozen at most), each a fused multiply-add into an f32 tile.
"""

from __future__ import annotations

import numpy as np

from .. import surface as ti
from ..dtypes import F32, I32
from ..errors import TileirError
from ..kernel import cdiv, kernel
from ..markers import Shared, Whole
from ..prog import ByValue
from .registry import Case, register

MAX_WIDTH = 64


def _pow2_at_least(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def _grid(n, width, tile=1024):
    return (max(1, cdiv(int(n) - width + 1, tile)),)


@kernel(grid=_grid)
def conv1d(x=Whole(F32), w=Whole(F32), y=Shared(F32), n=ByValue(I32), *, width: int, tile: int = 1024):
    """y[i] = sum_{j < width} w[j] * x[i + j] for the n - width + 1 outputs of an f32 x of n elements."""
    if not 1 <= width <= MAX_WIDTH:
        raise TileirError(f"conv1d width {width}: the filter is 1 to {MAX_WIDTH} taps", kernel="conv1d")
    base = ti.tile_at(ti.block_id(0), tile)
    n_out = ti.idx_sub(ti.idx_of(ti.scalar(n)), ti.idx_const(width - 1))
    m = ti.tail_mask(base, [tile], n_out)
    wp = _pow2_at_least(width)
    wt = ti.load(w, 0, [wp], mask=ti.tail_mask(0, [wp], width), pad=0.0) if wp > width else ti.load(w, 0, [wp])
    xs = [ti.load(x, ti.idx_add(base, j) if j else base, [tile], mask=m, pad=0.0) for j in range(width)]
    acc = xs[0] * ti.reshape(ti.extract(wt, [1], [0]), [])
    for j in range(1, width):
        acc = ti.fma(xs[j], ti.reshape(ti.extract(wt, [1], [j]), []), acc)
    ti.store(y, base, acc, mask=m)


def _size(s):
    return (s, 7) if isinstance(s, int) else tuple(s)  # (n, width)


def _inputs(s, rng):
    n, width = _size(s)
    return [rng.standard_normal(n).astype(np.float32), rng.standard_normal(width).astype(np.float32),
            np.zeros(max(n - width + 1, 0), np.float32), n]


def _expected(args):
    x, w = args[0].astype(np.float64), args[1].astype(np.float64)
    if len(x) < len(w):
        return np.zeros(0)
    return np.correlate(x, w, mode="valid")


register(Case("conv1d", conv1d, "1-D convolution (valid), f32, any length, filter width <= 64", (100_003, 7),
              lambda s: {"width": _size(s)[1]}, _inputs, _expected, output=2, rtol=1e-5, atol=5e-5))
