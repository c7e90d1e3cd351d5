"""Element-wise kernels over f32 vectors of any length N, read off the arrays at launch (one cubin
serves every length), both on masked pointer loads: vadd and saxpy."""

from __future__ import annotations

import numpy as np

from .. import surface as ti
from ..dtypes import F32
from ..kernel import cdiv, kernel
from ..markers import Shared, Whole
from ..prog import ByValue
from .entry_hints import entry_hints
from .registry import Case, register


# Pointer loads, not cells: on the H200 (bench/results/vector_gaps_h200.json, vadd_forms_h200.json; do_bench,
# L2 flushed) the add on masked pointers ran with torch's at every length from 2^10 to 2^28 (4096: 4.3 us
# against 4.3; 2^20: 8.1 against 8.8; 2^28: 741 against 741), where the same add on cells (TMA views) ran
# 0.80-0.97x torch from 2^12 to 2^20 (16384: 5.5 us against 5.0) and slower still on wider tiles. 1024
# lanes a block: 2048 was as fast below 2^20 in one run and 4-11% slower in the next (16384, 65536), and
# 1% slower at 2^28.
@kernel(grid=lambda N, tile: (cdiv(N, tile),), hints=entry_hints)  # noqa: N803  (the run-time size's name)
def vadd(a=Whole(F32, ["N"]), b=Whole(F32, ["N"]), c=Shared(F32, ["N"]), *, tile: int = 1024, warps: int = 0,
         occupancy: int = 0):
    """c = a + b over N elements (one length, read off the arrays at launch), a block a tile: masked
    pointer loads and stores past the last full tile."""
    base = ti.tile_at(ti.block_id(0), tile)
    m = ti.tail_mask(base, [tile], ti.extent_of(a, 0))
    ti.store(c, base, ti.load(a, base, [tile], mask=m) + ti.load(b, base, [tile], mask=m), mask=m)


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
