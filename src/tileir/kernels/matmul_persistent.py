"""A persistent matrix product: C = A @ B (row-major, f16 or bf16, f32 accumulation) on a grid of
``programs`` blocks, each walking the [tm, tn] cells of C from its own index by the grid's size, in
the grouped order of ``matmul.grouped_block`` (groups of ``group`` block rows share L2).

Why it exists: where a product's cells make a little over one wave (1000 x 5000 x 1000 on 128 x 256
cells: 160 cells for 132 SMs) or each cell's K loop is short (bmm's 512-cubes: 16 K slices), the
one-cell-a-block kernels spend each block's start and end (the first loads, the epilogue's stores)
with nothing else in flight. A block that goes on to its next cell can overlap one cell's stores with
the next's first loads, where tileiras schedules them so. ``bench/persistent_probe.py`` measured
where that pays (bench/results/persistent_h200.json), and there ``heuristics.matmul_walk`` and
``bmm_walk`` choose these kernels. ``bmm_persistent`` is the batched form (every batch's cells in one
walk). Every size is a run-time value, as in matmul.py and bmm.py.
"""

from __future__ import annotations

import numpy as np

from .. import surface as ti
from ..dtypes import BF16, F16, F32, dtype
from ..errors import TileirError
from ..heuristics import SMS
from ..ir import PadZero
from ..kernel import cdiv, kernel
from ..markers import FREE_AXIS, In, Shared, Whole, cells
from .entry_hints import entry_hints
from .matmul import _markers, blocks_over, grouped_block, walked_cells
from .registry import Case, register


# the grouped matmul's markers (cells with no grid axis, C whole), in the format the call names
def _a(tm=128, tk=64, fmt="f16"):
    return _markers(fmt)[0](tm, tk, group=1)


def _b(tk=64, tn=128, fmt="f16"):
    return _markers(fmt)[1](tk, tn, group=1)


def _c(tm=128, tn=128, fmt="f16"):
    return _markers(fmt)[2](tm, tn, group=1)


_WALK_TUNED = ("tm", "tn", "tk", "group", "programs", "warps", "occupancy", "no_tma_store")


def _check_group(group: int, kernel: str) -> None:
    if group < 1:  # grouped_block divides by it: 0 (matmul's "no grouped order") would leave cells unwritten
        raise TileirError(f"group={group}: the persistent walk takes its cells in groups of at least one block row",
                          kernel=kernel, what="group", fix="group=1 (row after row) or more (8: the default)")


def _grid(M, N, tm=128, tn=128, programs=SMS["sm_90"]):  # noqa: N803  (the run-time sizes' names)
    return (max(1, min(cdiv(M, tm) * cdiv(N, tn), programs)),)


@kernel(grid=_grid, hints=entry_hints, tuned=_WALK_TUNED)
def matmul_persistent(a=_a, b=_b, c=_c, *, fmt: str = "f16", tm: int = 128, tn: int = 128, tk: int = 64,
                      group: int = 8, programs: int = SMS["sm_90"], warps: int = 0, occupancy: int = 0,
                      no_tma_store: int = 0):
    """C = A @ B (f16 or bf16 operands and result, f32 accumulation), any M N K, on at most
    ``programs`` blocks, each taking every ``programs``-th cell of C in the grouped order."""
    _check_group(group, "matmul_persistent")
    nm, nn = ti.blocks_of(a, 0), ti.blocks_of(b, 1)
    _walk(a, c, nm, nn, lambda kk, bn: ti.load_at(b, [kk, bn]), fmt, tm, tn, group)


def _walk(a, c, nm, nn, load_b, fmt, tm, tn, group, upto=None):
    """The persistent products' walk: every cell of C this block takes (``walked_cells``; the first
    ``upto`` cells of the grouped order where given), its K loop (``cell_sum``), stored through C's
    partition view."""
    out = ti.partition_view(ti.array_view(c), [tm, tn])
    for bm, bn in walked_cells(nm, nn, group, upto):
        ti.store_view(out, [bm, bn], ti.to(ti.get(cell_sum(a, load_b, bm, bn, 0, ti.blocks_of(a, 1), tm, tn)), fmt))


def cell_sum(a, load_b, bm, bn, lo, hi, tm, tn):
    """The f32 carry of cell (bm, bn)'s sum over K slices [lo, hi): A's cells and ``load_b(kk, bn)``'s
    tiles of B."""
    acc = ti.carry(ti.full([tm, tn], 0.0, F32))
    for kk in ti.d_range(lo, hi):
        ti.set(acc, ti.mma(ti.load_at(a, [bm, kk]), load_b(kk, bn), ti.get(acc)))
    return acc


def transposed_b(b, tk, tn):
    """``load_b`` for a B [N, K] (a Linear layer's weight): B^T's [tk, tn] tiles through a transposing view."""
    bt_view = ti.partition_view(ti.array_view(b), [tk, tn], dim_map=[1, 0], padding=PadZero)
    return lambda kk, bn: ti.load_view(bt_view, [kk, bn])


def _nt_b(fmt="f16"):
    return Whole(fmt, ["N", "K"])


@kernel(grid=_grid, hints=entry_hints, tuned=_WALK_TUNED)
def matmul_nt_persistent(a=_a, b=_nt_b, c=_c, *, fmt: str = "f16", tm: int = 128, tn: int = 128, tk: int = 64,
                         group: int = 8, programs: int = SMS["sm_90"], warps: int = 0, occupancy: int = 0,
                         no_tma_store: int = 0):
    """C = A @ B^T for row-major A [M, K] and B [N, K] (a Linear layer's weight; f16 or bf16, f32
    accumulation), any M N K, on at most ``programs`` blocks walking C's cells in the grouped order;
    B^T's [tk, tn] tiles read through a transposing view of B, as matmul_nt's."""
    _check_group(group, "matmul_nt_persistent")
    _walk(a, c, ti.blocks_of(a, 0), blocks_over(b, 0, tn), transposed_b(b, tk, tn), fmt, tm, tn, group)


def _ba(tm=128, tk=64, fmt="f16"):
    return In(fmt, cells(["B", "M", "K"], [1, tm, tk], along=[FREE_AXIS] * 3, pad=PadZero))


def _bb(tk=64, tn=128, fmt="f16"):
    return In(fmt, cells(["B", "K", "N"], [1, tk, tn], along=[FREE_AXIS] * 3, pad=PadZero))


def _bc(fmt="f16"):
    return Shared(fmt, ["B", "M", "N"])


def _bgrid(B, M, N, tm=128, tn=128, programs=SMS["sm_90"]):  # noqa: N803  (the run-time sizes' names)
    return (max(1, min(B * cdiv(M, tm) * cdiv(N, tn), programs)),)


@kernel(grid=_bgrid, hints=entry_hints, tuned=_WALK_TUNED)
def bmm_persistent(a=_ba, b=_bb, c=_bc, *, fmt: str = "f16", tm: int = 128, tn: int = 128, tk: int = 64,
                   group: int = 8, programs: int = SMS["sm_90"], warps: int = 0, occupancy: int = 0,
                   no_tma_store: int = 0):
    """C[i] = A[i] @ B[i] for every i of the batch (f16 or bf16, f32 accumulation), any B M N K, on at
    most ``programs`` blocks walking the batch's cells: the batches one after another, each batch's
    cells in the grouped order."""
    _check_group(group, "bmm_persistent")
    nm, nn = ti.blocks_of(a, 1), ti.blocks_of(b, 2)
    per = ti.idx_mul(nm, nn)  # cells a batch
    out = ti.partition_view(ti.array_view(c), [1, tm, tn])
    for cell in ti.d_range(ti.block_id(0), ti.idx_mul(ti.blocks_of(a, 0), per), ti.num_blocks(0)):
        bz = ti.idx_div(cell, per)
        bm, bn = grouped_block(nm, nn, group, ti.idx_rem(cell, per))
        acc = ti.carry(ti.full([tm, tn], 0.0, F32))
        for kk in ti.d_range(0, ti.blocks_of(a, 2)):
            at = ti.reshape(ti.load_at(a, [bz, bm, kk]), [tm, tk])
            bt = ti.reshape(ti.load_at(b, [bz, kk, bn]), [tk, tn])
            ti.set(acc, ti.mma(at, bt, ti.get(acc)))
        ti.store_view(out, [bz, bm, bn], ti.reshape(ti.to(ti.get(acc), fmt), [1, tm, tn]))


def _size(s):
    return (s, s, s) if isinstance(s, int) else tuple(s)


def _fmt_key(fmt) -> dict:
    """A case's fmt= (none for f16, the kernels' default)."""
    return {} if fmt == F16 else {"fmt": dtype(fmt).name}


def _case(kern, fmt, rtol, atol, weight_t=False):
    """``kern``'s case: B [K, N], or [N, K] where ``weight_t`` (matmul_nt_persistent's C = A @ B^T)."""
    npd = dtype(fmt).np
    name = dtype(fmt).name

    def inputs(s, rng):
        m, n, k = _size(s)
        a = (rng.standard_normal((m, k)) / np.sqrt(k)).astype(npd)
        return [a, rng.standard_normal((n, k) if weight_t else (k, n)).astype(npd), np.zeros((m, n), npd)]

    def expected(args):
        b = args[1].astype(np.float64)
        return args[0].astype(np.float64) @ (b.T if weight_t else b)

    def config(s):  # small cells and few programs, so a block walks several cells of a ragged grid
        return {"tm": 64, "tn": 64, "tk": 32, "programs": 3, "group": 2, **_fmt_key(fmt)}

    what = "A @ B^T (B [N, K])" if weight_t else "A @ B"
    return register(Case(f"{kern.name}_{name}", kern,
                         f"C = {what} on a persistent grid, {name} operands, f32 accumulate, any M N K",
                         (200, 136, 300), config, inputs, expected, output=2, rtol=rtol, atol=atol))


for _kern, _t in ((matmul_persistent, False), (matmul_nt_persistent, True)):
    _case(_kern, F16, 1e-2, 2e-2, _t)
    _case(_kern, BF16, 2e-2, 5e-2, _t)


def _bmm_case(fmt, rtol, atol):
    npd = dtype(fmt).np
    name = dtype(fmt).name

    def inputs(s, rng):
        bt, m, n, k = s
        a = (rng.standard_normal((bt, m, k)) / np.sqrt(k)).astype(npd)
        return [a, rng.standard_normal((bt, k, n)).astype(npd), np.zeros((bt, m, n), npd)]

    def expected(args):
        return np.matmul(args[0].astype(np.float64), args[1].astype(np.float64))

    def config(s):
        return {"tm": 64, "tn": 64, "tk": 32, "programs": 5, "group": 2, **_fmt_key(fmt)}

    return register(Case(f"bmm_persistent_{name}", bmm_persistent,
                         f"batched C = A @ B on a persistent grid, {name} operands, f32 accumulate, any B M N K",
                         (3, 100, 70, 65), config, inputs, expected, output=2, rtol=rtol, atol=atol))


_bmm_case(F16, 1e-2, 2e-2)
_bmm_case(BF16, 2e-2, 5e-2)
