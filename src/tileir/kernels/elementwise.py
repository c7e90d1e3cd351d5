"""Element-wise kernels over vectors of any length: vadd (f32) and saxpy (f32)."""

from __future__ import annotations

import numpy as np

from .. import surface as ti
from ..dtypes import F32, I32
from ..kernel import cdiv, kernel
from ..markers import In, Out, cells
from ..prog import ByPtr, ByValue
from .entry_hints import entry_hints
from .registry import Case, register


def _vec(role, n, tile):
    return role(F32, cells([n], [tile]))


@kernel(hints=entry_hints)
def vadd(a=lambda n, tile: _vec(In, n, tile), b=lambda n, tile: _vec(In, n, tile),
         c=lambda n, tile: _vec(Out, n, tile), *, n: int, tile: int = 1024, warps: int = 0, occupancy: int = 0):
    """c = a + b over n elements, a block a cell; the last cell's tail is padded on read and
    clipped on write by the cells' view, and the grid follows from the cells."""
    ti.store_cell(c, ti.load_cell(a) + ti.load_cell(b))


@kernel(grid=lambda n, tile: (cdiv(int(n), tile),))
def saxpy(alpha=ByValue(F32), x=ByPtr(F32), y=ByPtr(F32), n=ByValue(I32), *, tile: int = 1024):
    """y = alpha * x + y (one fused multiply-add a lane) over n elements, n passed at launch: one
    cubin serves every length (the grid follows n)."""
    base = ti.tile_at(ti.block_id(0), tile)
    m = ti.tail_mask(base, [tile], ti.idx_of(ti.scalar(n)))
    xv = ti.load(x, base, [tile], mask=m)
    yv = ti.load(y, base, [tile], mask=m)
    ti.store(y, base, ti.fma(ti.scalar(alpha), xv, yv), mask=m)


def _vadd_inputs(n, rng):
    return [rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32),
            np.zeros(n, np.float32)]


register(Case("vadd", vadd, "c = a + b, f32, any length", 100_003, lambda n: {"n": n}, _vadd_inputs,
              lambda args: args[0] + args[1], output=2))


def _saxpy_inputs(n, rng):
    return [np.float32(rng.standard_normal()), rng.standard_normal(n).astype(np.float32),
            rng.standard_normal(n).astype(np.float32), n]


def _saxpy_expected(args):
    a, x, y, _n = args
    return (np.float64(a) * x.astype(np.float64) + y.astype(np.float64)).astype(np.float32)


register(Case("saxpy", saxpy, "y = alpha * x + y, f32, length passed at launch", 100_003,
              lambda n: {}, _saxpy_inputs, _saxpy_expected, output=2))
