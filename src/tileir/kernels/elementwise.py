"""Element-wise kernels over f32 vectors of any length N, read off the arrays at launch (one cubin
serves every length): vadd on cells, saxpy on pointers."""

from __future__ import annotations

import numpy as np

from .. import surface as ti
from ..dtypes import F32
from ..kernel import cdiv, kernel
from ..markers import In, Out, Shared, Whole, cells
from ..prog import ByValue
from .entry_hints import entry_hints
from .registry import Case, register


def _vec(role, tile):
    return role(F32, cells(["N"], [tile]))


@kernel(hints=entry_hints)
def vadd(a=lambda tile: _vec(In, tile), b=lambda tile: _vec(In, tile), c=lambda tile: _vec(Out, tile), *,
         tile: int = 1024, warps: int = 0, occupancy: int = 0):
    """c = a + b over N elements, a block a cell; the last cell's tail is padded on read and
    clipped on write by the cells' view, and the grid follows from the cells."""
    ti.store_cell(c, ti.load_cell(a) + ti.load_cell(b))


@kernel(grid=lambda N, tile: (cdiv(N, tile),))  # noqa: N803  (the run-time size's name)
def saxpy(alpha=ByValue(F32), x=Whole(F32, ["N"]), y=Shared(F32, ["N"]), *, tile: int = 1024):
    """y = alpha * x + y (one fused multiply-add a lane) over N elements: pointer loads and stores
    masked by the length the launch reads off x and y (they must agree)."""
    base = ti.tile_at(ti.block_id(0), tile)
    m = ti.tail_mask(base, [tile], ti.extent_of(x, 0))
    xv = ti.load(x, base, [tile], mask=m)
    yv = ti.load(y, base, [tile], mask=m)
    ti.store(y, base, ti.fma(ti.scalar(alpha), xv, yv), mask=m)


def _vadd_inputs(n, rng):
    return [rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32),
            np.zeros(n, np.float32)]


register(Case("vadd", vadd, "c = a + b, f32, any length", 100_003, lambda n: {}, _vadd_inputs,
              lambda args: args[0] + args[1], output=2))


def _saxpy_inputs(n, rng):
    return [np.float32(rng.standard_normal()), rng.standard_normal(n).astype(np.float32),
            rng.standard_normal(n).astype(np.float32)]


def _saxpy_expected(args):
    a, x, y = args
    return (np.float64(a) * x.astype(np.float64) + y.astype(np.float64)).astype(np.float32)


register(Case("saxpy", saxpy, "y = alpha * x + y, f32, any length (pointer loads)", 100_003,
              lambda n: {}, _saxpy_inputs, _saxpy_expected, output=2))
