"""fp8 matrix product with per-tensor scales: C = (A @ B^T) * scale_a * scale_b for A [M, K] and
B [N, K] row-major of f8E4M3FN or f8E5M2 (both operands one format: the dialect's mma table pairs
f8 with f8 of the same kind), f32 accumulation, C [M, N] of bf16, f16 or f32.

B is [N, K] -- the K-major layout a Linear layer's weight has, and the one ``torch._scaled_mm``
wants (its second operand is ``W.t()``) -- read as [tk, tn] tiles of B^T through a partition view
whose dim_map swaps its two dimensions, so no copy and no transpose in registers. The scales are
one-element f32 arrays on the device (no host round trip to read them), multiplied into the f32
accumulator once, before the conversion to C's format.

``programs``: a persistent grid of at most that many blocks, each walking every programs-th cell
in the grouped order (``kernels.matmul_persistent``'s walk); the rule walks 128 x 128 cells past one
wave at any K (``heuristics.F8_WALKS``).

``promote``: each K slice's product goes into a fresh accumulator which is then added to the f32
one in registers, instead of the tensor core accumulating the whole K (Hopper's fp8 mma adds its
products with fewer bits than f32 keeps; a hypothesis for this kernel until bench/suite.py
measures it, as the 3xtf32 measurement showed for tf32). M, N and K are run-time sizes read off
the arrays; ragged edges are padded with zeros on read and clipped on write.
"""

from __future__ import annotations

from .. import surface as ti
from ..dtypes import F32, dtype
from ..errors import TileirError
from ..ir import PadZero
from ..kernel import cdiv, kernel
from ..markers import FREE_AXIS, In, Out, Shared, Whole, cells
from .entry_hints import entry_hints
from .matmul import _grid, blocks_over, grouped_block, walked_cells

F8_FORMATS = ("f8E4M3FN", "f8E5M2")
OUT_FORMATS = ("bf16", "f16", "f32")


def _a(fmt="f8E4M3FN", tm=128, tk=128, group=0):
    return In(fmt, cells(["M", "K"], [tm, tk], along=[FREE_AXIS if group else 0, FREE_AXIS], pad=PadZero))


def _b(fmt="f8E4M3FN"):
    return Whole(fmt, ["N", "K"])


def _c(out="bf16", tm=128, tn=128, group=0):
    return Shared(out, ["M", "N"]) if group else Out(out, cells(["M", "N"], [tm, tn]))


_SCALE = Whole(F32, [1])


def _f8_grid(M, N, tm, tn, group=0, programs=0):  # noqa: N803  (the run-time sizes' names)
    if programs:
        return (max(1, min(cdiv(M, tm) * cdiv(N, tn), programs)),)
    return _grid(M, N, tm, tn, group)


@kernel(name="matmul_f8", grid=_f8_grid, hints=entry_hints,
        tuned=("tm", "tn", "tk", "group", "programs", "warps", "occupancy", "cga"))
def matmul_f8(a=_a, b=_b, c=_c, scale_a=_SCALE, scale_b=_SCALE, *, fmt: str = "f8E4M3FN", out: str = "bf16",
              promote: bool = False, tm: int = 128, tn: int = 128, tk: int = 128, group: int = 0, programs: int = 0,
              warps: int = 0, occupancy: int = 0, cga: int = 0):
    """C = (A @ B^T) * scale_a[0] * scale_b[0]: A [M, K] and B [N, K] of ``fmt`` (f8E4M3FN or
    f8E5M2), f32 accumulation, C [M, N] of ``out`` (bf16, f16, f32); any M N K. group: blocks in
    groups of that many block rows (L2 reuse; 0: a 2-D grid); programs: at most that many blocks, each
    walking every programs-th cell in the grouped order (0: one cell a block; a walk needs a group);
    promote: each K slice summed on its own, then added in f32 registers."""
    if dtype(fmt).name not in F8_FORMATS:
        raise TileirError(f"matmul_f8 of {fmt}: the operands are f8E4M3FN or f8E5M2", kernel="matmul_f8",
                          what="fmt")
    if dtype(out).name not in OUT_FORMATS:
        raise TileirError(f"matmul_f8 into {out}: C is bf16, f16 or f32", kernel="matmul_f8", what="out")
    if programs and group < 1:
        raise TileirError(f"matmul_f8 with programs={programs} and group={group}: the walk takes its cells in the "
                          "grouped order", kernel="matmul_f8", what="group", fix="group=8 (or any >= 1) with programs")
    def view():
        return ti.partition_view(ti.array_view(b), [tk, tn], dim_map=[1, 0], padding=PadZero)

    def scales():
        return ti.reshape(ti.load(scale_a, 0, [1]) * ti.load(scale_b, 0, [1]), [1, 1])

    def cell(bt_view, bm, bn, scale=None):
        acc = ti.carry(ti.full([tm, tn], 0.0, F32))
        for kk in ti.d_range(0, ti.blocks_of(a, 1)):
            at = ti.load_at(a, [bm, kk] if group else [kk])
            bt = ti.load_view(bt_view, [kk, bn])
            if promote:
                ti.set(acc, ti.get(acc) + ti.mma(at, bt, 0.0))
            else:
                ti.set(acc, ti.mma(at, bt, ti.get(acc)))
        res = ti.to(ti.get(acc) * (scales() if scale is None else scale), out)
        if group:
            ti.store_view(ti.partition_view(ti.array_view(c), [tm, tn]), [bm, bn], res)
        else:
            ti.store_cell(c, res)

    # The operations in the order each program was measured in (the same bytes, so the same cubin): one
    # cell a block reads the scales after its K loop (since 2026-12-02); the walk reads them once, before
    # its first cell (bench/results/persistent_f8_h200.json).
    if programs:
        bt_view, scale = view(), scales()
        nm, nn = ti.blocks_of(a, 0), blocks_over(b, 0, tn)
        for bm, bn in walked_cells(nm, nn, group):
            cell(bt_view, bm, bn, scale)
        return
    bm, bn = grouped_block(ti.blocks_of(a, 0), blocks_over(b, 0, tn), group) if group else \
        (ti.block_id(0), ti.block_id(1))
    cell(view(), bm, bn)


def reference(a, b, scale_a, scale_b):
    """(A @ B^T) * scale_a * scale_b in f64 (numpy; a and b of an ml_dtypes f8 format)."""
    import numpy as np

    return (np.asarray(a).astype(np.float64) @ np.asarray(b).astype(np.float64).T) * float(
        np.asarray(scale_a).reshape(-1)[0]) * float(np.asarray(scale_b).reshape(-1)[0])


__all__ = ["matmul_f8", "reference", "F8_FORMATS", "OUT_FORMATS"]
