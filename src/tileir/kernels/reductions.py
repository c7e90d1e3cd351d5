"""Sum and max over an f32 vector of any length, in one pass up to a few tiles, else two.

``block_sum(x, out)`` / ``block_max(x, out)`` are the kernels: x's length N and out's length P are
run-time sizes read off the arrays (one cubin per tile serves every length), and block b of the
P-block grid walks x's tiles b, b + P, b + 2 P, .. (a grid-stride loop over a FREE dimension; the
loads never wait on each other), folds them into a [tile] f32 carry, and writes the carry's fold
as out[b]. The public ``vector_sum(x)`` / ``vector_max(x)`` run the kernel twice: once over x into
up to ``parts`` partials, then once more (one block) over the partials into the answer, that pass
with a tile of its own that covers ``parts`` (so two configurations serve every length); up to
``ONE_BLOCK_TILES`` tiles, one launch of one block walks them all. They run
on the host reference for numpy arrays and CPU tensors and on the GPU for CUDA torch / cupy
arrays (or as ``host=`` says).

The last tile's tail reads the identity (0 for the sum, -inf for the max) through the cells' view.
A float sum in another order is not the same number: the sum is tolerance tier (the max is exact).
"""

from __future__ import annotations

import math

import numpy as np

from .. import surface as ti
from ..dtypes import F32
from ..ir import PadNegInf, PadZero
from ..kernel import cdiv, kernel
from ..markers import FREE_AXIS, In, Out, cells
from .launching import in_host_views, on_host
from .registry import Case, register


def _pow2_at_least(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def n_parts(n: int, tile: int, parts: int) -> int:
    """How many blocks (and partials) the first pass has: no more than there are tiles."""
    return max(1, min(cdiv(n, tile), parts))


OUT = Out(F32, cells(["P"], [1]))  # one partial a block: the grid is out's length


def _fold(x, out, tile, identity, combine, reduce):
    b = ti.block_id(0)
    acc = ti.carry(ti.full([tile], identity, F32))
    for j in ti.d_range(b, ti.blocks_of(x, 0), ti.num_blocks(0)):
        ti.set(acc, combine(ti.get(acc), ti.load_at(x, [j])))
    ti.store_cell(out, ti.reshape(reduce(ti.get(acc)), [1]))


@kernel
def block_sum(x=lambda tile=4096: In(F32, cells(["N"], [tile], along=[FREE_AXIS], pad=PadZero)), out=OUT, *,
              tile: int = 4096):
    """out[b] = the sum of x's tiles b, b + P, .. for x of any length N and out of P elements: the
    first pass of a sum, and with a one-element out its last."""
    _fold(x, out, tile, 0.0, lambda a, t: a + t, ti.reduce_sum)


@kernel
def block_max(x=lambda tile=4096: In(F32, cells(["N"], [tile], along=[FREE_AXIS], pad=PadNegInf)), out=OUT, *,
              tile: int = 4096):
    """out[b] = the largest element of x's tiles b, b + P, ..: the first pass of a max, and with a
    one-element out its last."""
    _fold(x, out, tile, -math.inf, ti.max, ti.reduce_max)


def _empty_like(x, n):
    """A fresh f32 vector of n elements in x's array library (numpy, torch or cupy)."""
    if isinstance(x, np.ndarray):
        return np.empty(n, np.float32)
    if hasattr(x, "new_empty"):  # torch
        return x.new_empty(n)
    mod = type(x).__module__.split(".")[0]
    if mod == "cupy":
        import cupy

        return cupy.empty(n, cupy.float32)
    raise TypeError(f"vector_sum / vector_max take numpy, torch or cupy arrays, not {type(x).__name__}")


ONE_BLOCK_TILES = 4  # up to 4 tiles one block walks them all: one launch, not two (H200, 4096 f32
# tiles: 16384 elements in 5.4 us against 7.7 for two launches and torch.sum's 8.4;
# bench/results/vector_probe_h200.json)


def _two_pass(kern, x, out, host, tile, parts, sync):
    n = int(x.shape[0])
    host = on_host(x) if host is None else host
    out = _empty_like(x, 1) if out is None else out
    if host and not isinstance(x, np.ndarray):  # a tensor on the host reference: numpy views of it
        return in_host_views(lambda xv, ov: _two_pass(kern, xv, ov, True, tile, parts, sync), x, out)
    if n <= ONE_BLOCK_TILES * tile:
        if host:
            kern.run_host(x, out, tile=tile)
        else:
            kern(x, out, tile=tile, sync=sync)
        return out
    p = n_parts(n, tile, parts)
    partials = _empty_like(x, p)
    last = _pow2_at_least(parts)  # covers every count of partials: one configuration for every length
    if host:
        kern.run_host(x, partials, tile=tile)
        kern.run_host(partials, out, tile=last)
    else:  # one stream: the second launch follows the first
        kern(x, partials, tile=tile, sync=False)
        kern(partials, out, tile=last, sync=sync)
    return out


LONG_SUM = 1 << 21  # from here vector_sum's first pass takes 8192-lane tiles into 264 partials


def vector_sum(x, out=None, *, host: bool | None = None, tile: int | None = None, parts: int | None = None,
               sync: bool = True):
    """The sum of the f32 vector x, as a one-element array of x's library (written into ``out`` if
    given): one launch of block_sum up to ONE_BLOCK_TILES tiles, else two. By default 4096-lane
    tiles into up to 1024 partials, and from LONG_SUM elements 8192 into 264: at 2^21-2^24
    elements 12.7 / 15.0 / 20.6 / 29.9 us against 14.8 / 21.1 / 26.0 / 33.2 for 4096 into 1024 and
    torch.sum's 11.6 / 15.1 / 20.1 / 30.7 (H200, vector_probe's ``sums``, bench/results/
    sums_h200.json; below 2^21 the larger tile left too few blocks: 0.81x at 2^18 against 1.22).
    vector_max keeps 4096 into 1024, within 4% of the best there. On the host reference for a
    numpy x, on the GPU otherwise (``host`` overrides: host=False runs a numpy x on the GPU,
    copied in and out; ``sync``: wait for the GPU before answering)."""
    long = int(x.shape[0]) >= LONG_SUM
    tile = tile or (8192 if long else 4096)
    parts = parts or (264 if long else 1024)
    return _two_pass(block_sum, x, out, host, tile, parts, sync)


def vector_max(x, out=None, *, host: bool | None = None, tile: int = 4096, parts: int = 1024, sync: bool = True):
    """The largest element of the f32 vector x, as vector_sum."""
    return _two_pass(block_max, x, out, host, tile, parts, sync)


# ---- cases ---------------------------------------------------------------------------------------


def _runner(fn):
    def run(args, where="host", **cfg):
        fn(args[0], args[1], host=where == "host", **{k: cfg[k] for k in ("tile", "parts") if k in cfg})

    return run


def _inputs(n, rng):
    return [rng.standard_normal(n).astype(np.float32), np.zeros(1, np.float32)]


register(Case("vector_sum", block_sum, "sum of an f32 vector of any length (one pass or two)", 1_000_003,
              lambda n: {}, _inputs, lambda args: np.array([args[0].astype(np.float64).sum()]), output=1,
              rtol=1e-5, atol=1e-2, runner=_runner(vector_sum)))
register(Case("vector_max", block_max, "max of an f32 vector of any length (one pass or two)", 1_000_003,
              lambda n: {}, _inputs, lambda args: np.array([args[0].max()]), output=1,
              runner=_runner(vector_max)))
