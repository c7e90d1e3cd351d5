"""Matrix products with a transposed operand, read in place: what a Linear layer's backward needs.

    matmul_nt(a, b, c):  C = A @ B^T   A [M, K], B [N, K] row-major (a Linear's weight), C [M, N]
    matmul_tn(a, b, c):  C = A^T @ B   A [K, M], B [K, N] row-major,                    C [M, N]

For y = x @ W^T (W [out, in]): the forward is ``matmul_nt(x, W)``, dx = dy @ W is the plain
``matmul``, and dW = dy^T @ x is ``matmul_tn(dy, x)``. The library's ``matmul`` cannot take
``W.T`` or ``dy.T`` themselves: its markers read every array with a unit-stride last dimension
(a transposed view has stride 1 in its first dimension and is refused with ``.contiguous()``,
a copy). Here the transposed operand is a ``Whole`` array read through a partition view whose
dim_map swaps its two dimensions, so a [tk, tn] tile of B^T (or [tm, tk] of A^T) comes straight
from B's (A's) memory, as attention reads K^T -- no copy and no transpose in registers.

f16 and bf16 operands (f32 operands through tf32), f32 accumulation; M, N and K are run-time
sizes read off the arrays, so one cubin per tile configuration serves every shape, ragged edges
included (the views pad with zeros, C's cells are clipped), and leading-dimension strides (a
slice of a wider matrix) are read in place. A block computes one [tm, tn] cell of C; a call naming
no tile takes the one the product's model picks for its sizes (``heuristics._matmul_t``).
"""

from __future__ import annotations

import numpy as np

from .. import autotune
from .. import surface as ti
from ..dtypes import BF16, F16, F32, TF32, dtype
from ..heuristics import matmul_split, matmul_walk
from ..ir import PadZero
from ..kernel import kernel
from ..markers import FREE_AXIS, In, Out, Shared, Whole, cells
from .entry_hints import entry_hints
from .gemm import even_splits, splitk_reduce
from .launching import empty, fmt_of, launch, on_host
from .matmul_persistent import matmul_nt_persistent
from .registry import Case, register


def _product(fmt, tm, tn, load_a, load_b, k_blocks, c):
    acc = ti.carry(ti.full([tm, tn], 0.0, F32))
    for kk in ti.d_range(0, k_blocks):
        at, bt = load_a(kk), load_b(kk)
        if fmt == F32:  # the dialect's f32 matrix product runs as tf32
            at, bt = ti.to(at, TF32), ti.to(bt, TF32)
        ti.set(acc, ti.mma(at, bt, ti.get(acc)))
    ti.store_cell(c, ti.to(ti.get(acc), fmt))


def _c(fmt="f16", tm=128, tn=128):
    return Out(fmt, cells(["M", "N"], [tm, tn]))


@kernel(name="matmul_nt", hints=entry_hints, tuned=("tm", "tn", "tk", "warps", "occupancy"))
def matmul_nt(a=lambda fmt="f16", tm=128, tk=64: In(fmt, cells(["M", "K"], [tm, tk], along=[0, FREE_AXIS],
                                                                pad=PadZero)),
              b=lambda fmt="f16": Whole(fmt, ["N", "K"]), c=_c, *, fmt: str = "f16", tm: int = 128, tn: int = 128,
              tk: int = 64, warps: int = 0, occupancy: int = 0, cga: int = 0):
    """C = A @ B^T for row-major A [M, K] and B [N, K] of ``fmt`` (f16, bf16; f32 via tf32), f32
    accumulation, any M N K; B^T's [tk, tn] tiles read through a transposing view of B."""
    f = dtype(fmt)
    bn = ti.block_id(1)
    bt_view = ti.partition_view(ti.array_view(b), [tk, tn], dim_map=[1, 0], padding=PadZero)
    _product(f, tm, tn, lambda kk: ti.load_at(a, [kk]), lambda kk: ti.load_view(bt_view, [kk, bn]),
             ti.blocks_of(a, 1), c)


@kernel(name="matmul_tn", hints=entry_hints, tuned=("tm", "tn", "tk", "warps", "occupancy"))
def matmul_tn(a=lambda fmt="f16": Whole(fmt, ["K", "M"]),
              b=lambda fmt="f16", tk=64, tn=128: In(fmt, cells(["K", "N"], [tk, tn], along=[FREE_AXIS, 1],
                                                                pad=PadZero)),
              c=_c, *, fmt: str = "f16", tm: int = 128, tn: int = 128, tk: int = 64, warps: int = 0,
              occupancy: int = 0, cga: int = 0):
    """C = A^T @ B for row-major A [K, M] and B [K, N] of ``fmt``, f32 accumulation, any M N K;
    A^T's [tm, tk] tiles read through a transposing view of A."""
    f = dtype(fmt)
    bm = ti.block_id(0)
    at_view = ti.partition_view(ti.array_view(a), [tm, tk], dim_map=[1, 0], padding=PadZero)
    _product(f, tm, tn, lambda kk: ti.load_view(at_view, [bm, kk]), lambda kk: ti.load_at(b, [kk]),
             ti.blocks_of(b, 0), c)


def _tn_partial_grid(M, N, S, tm=128, tn=128):  # noqa: N803  (the run-time sizes' names)
    return (-(-M // tm), -(-N // tn), S)


@kernel(name="matmul_tn_partial", grid=_tn_partial_grid, hints=entry_hints,
        tuned=("tm", "tn", "tk", "warps", "occupancy"))
def matmul_tn_partial(a=lambda fmt="f16": Whole(fmt, ["K", "M"]),
                      b=lambda fmt="f16", tk=64, tn=128: In(fmt, cells(["K", "N"], [tk, tn], along=[FREE_AXIS, 1],
                                                                        pad=PadZero)),
                      w=Shared(F32, ["S", "M", "N"]), *, fmt: str = "f16", tm: int = 128, tn: int = 128, tk: int = 64,
                      warps: int = 0, occupancy: int = 0):
    """W[z] = A^T @ B over split z of K's blocks, in f32 (S = W's first dimension splits, block (i,
    j, z) writing W[z]'s cell (i, j)): matmul_tn cut along K, for a weight gradient's few output
    blocks over many tokens; ``gemm.splitk_reduce`` sums the splits."""
    f = dtype(fmt)
    z, bm, bn = ti.block_id(2), ti.block_id(0), ti.block_id(1)
    nk = ti.blocks_of(b, 0)
    s = ti.extent_of(w, 0)
    per = ti.idx_div(ti.idx_add(nk, ti.idx_sub(s, ti.idx_const(1))), s)  # ceil(nk / S)
    lo = ti.idx_mul(z, per)
    hi = ti.idx_of(ti.min_i(ti.idx_as_tile(ti.idx_add(lo, per)), ti.idx_as_tile(nk)))
    at_view = ti.partition_view(ti.array_view(a), [tm, tk], dim_map=[1, 0], padding=PadZero)
    acc = ti.carry(ti.full([tm, tn], 0.0, F32))
    for kk in ti.d_range(lo, hi):
        at, bt = ti.load_view(at_view, [bm, kk]), ti.load_at(b, [kk])
        if f == F32:
            at, bt = ti.to(at, TF32), ti.to(bt, TF32)
        ti.set(acc, ti.mma(at, bt, ti.get(acc)))
    out = ti.partition_view(ti.array_view(w), [1, tm, tn])
    ti.store_view(out, [z, bm, bn], ti.reshape(ti.get(acc), [1, tm, tn]))


def matmul_nt_any(a, b, c, *, gpu: str | None = None):
    """C = A @ B^T (A [M, K], B [N, K]) for every shape: ``matmul_nt`` one cell a block, or, where
    ``heuristics.matmul_walk`` says so for ``gpu`` (this machine's when None; 16-bit, more than 1.5
    waves of 128 x 256 cells, any K), ``matmul_nt_persistent``'s walk: H200, x @ W^T at 8192-16384
    tokens, K 512-1024, 0.68-0.93x torch -> 0.86-1.08x, K 2048-14336 +1-18%
    (bench/results/persistent_nt_h200.json, persistent_nt_long_h200.json).
    Host arrays: one cell a block on the host reference."""
    fmt = fmt_of(a)
    m, k = (int(x) for x in a.shape)
    target = gpu or (None if on_host(a) else autotune.this_gpu())
    walk = matmul_walk(target, fmt, m, int(b.shape[0]), k, weight_t=True) if target is not None else None
    kern, cfg = (matmul_nt, {"fmt": fmt}) if walk is None else (matmul_nt_persistent, dict(walk, fmt=fmt))
    launch(kern, a, b, c, **cfg)
    return c


def matmul_tn_any(a, b, c, *, gpu: str | None = None, splits: int | None = None):
    """C = A^T @ B (A [K, M], B [K, N]) as ``gemm`` runs A @ B: one pass (``matmul_tn``), or K cut
    into splits (``matmul_tn_partial`` into an f32 [S, M, N] workspace, then ``splitk_reduce``) where
    the product rule (``heuristics.matmul_split``: few output blocks, a long K -- a weight gradient
    over many tokens) says one pass leaves the GPU idle, or ``splits`` says so. Host arrays: one pass
    on the host reference."""
    fmt = fmt_of(a)
    k, m = (int(x) for x in a.shape)
    n = int(b.shape[1])
    target = gpu or (None if on_host(a) else autotune.this_gpu())
    plan: dict = {"splits": int(splits)} if splits is not None else \
        matmul_split(target, fmt, m, n, k) if target is not None else {"splits": 1}
    if plan["splits"] <= 1:
        launch(matmul_tn, a, b, c, fmt=fmt)
        return c
    cfg: dict = dict(plan.get("config") or {})
    st = even_splits(k, cfg.get("tk", matmul_tn_partial.static["tk"]), plan["splits"])
    work = empty(a, (st, m, n), "f32")
    launch(matmul_tn_partial, a, b, work, fmt=fmt, **cfg)
    launch(splitk_reduce, work, c, fmt=fmt, **(plan.get("reduce") or {}))
    return c


# ---- cases ---------------------------------------------------------------------------------------


def _size(s):
    return (s, s, s) if isinstance(s, int) else tuple(s)


def _case(kern, fmt, rtol, atol):
    npd = dtype(fmt).np
    nt = kern is matmul_nt

    def inputs(s, rng):
        m, n, k = _size(s)
        a = (rng.standard_normal((m, k) if nt else (k, m)) / np.sqrt(k)).astype(npd)
        b = rng.standard_normal((n, k) if nt else (k, n)).astype(npd)
        return [a, b, np.zeros((m, n), npd)]

    def expected(args):
        a, b = (x.astype(np.float64) for x in args[:2])
        return a @ b.T if nt else a.T @ b

    what = "A @ B^T, B [N, K]" if nt else "A^T @ B, A [K, M]"
    name = f"{kern.name}_{'tf32' if fmt == F32 else dtype(fmt).name}"
    cfg = {"fmt": dtype(fmt).name}
    return register(Case(name, kern, f"C = {what}, {dtype(fmt).name} operands read in place, f32 accumulate, any "
                         "M N K", (200, 136, 300), lambda s: dict(cfg), inputs, expected, output=2, rtol=rtol,
                         atol=atol))


for _kern in (matmul_nt, matmul_tn):
    _case(_kern, F16, 1e-2, 2e-2)
    _case(_kern, BF16, 2e-2, 5e-2)
    _case(_kern, F32, 5e-3, 1e-2)
