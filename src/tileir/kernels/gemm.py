"""The matrix product for every shape: ``gemm(a, b, c)`` runs ``matmul_f16`` / ``matmul_bf16`` /
``matmul_tf32`` (their tiles from the tune cache, the rule of ``heuristics`` or the default table,
through the call) or, where the rule says one pass cannot fill the GPU -- few output blocks and a
long K, a small M above all -- a split-K product in two launches:

1. ``matmul_partial``: grid (blocks of M, blocks of N, S). Block (i, j, z) computes the [tm, tn]
   cell (i, j) of A @ B over its share of K -- the K blocks [z * per, min((z + 1) * per, nk)),
   per = ceil(nk / S) -- in f32, and writes it to the f32 workspace W[z] ([S, M, N]). S is W's
   first dimension, a run-time size: one cubin serves every split count.
2. ``splitk_reduce``: C = the sum over z of W[z], converted to C's format, one [rm, rn] cell a
   block.

The workspace costs S * M * N * 4 bytes of traffic each way, which is small beside A and B where
the split is chosen (M small, K long). The sum over the splits is in f32 and in the order of z,
so the answer is as accurate as the one-pass product's (its order of K differs).

Where the 16-bit cells make more than 1.5 waves over a short K, one pass is ``matmul_persistent``
(132 blocks walking the cells) instead of one block a cell (``heuristics.matmul_walk``, measured). A
3xtf32 product of 1000 rows or more splits B into its tf32 halves first (``matmul_3xtf32.product_3xtf32``:
1.09-1.27x the one-kernel form's speed on the H100, ``heuristics.HALVES_CELL``).

Host arrays (numpy, CPU tensors) run on the host reference; CUDA tensors on the GPU, on torch's
current stream (the two launches in order).
"""

from __future__ import annotations

from typing import Any

from .. import autotune
from .. import surface as ti
from ..dtypes import F32, dtype
from ..errors import TileirError
from ..heuristics import HALVES_CELL, HALVES_LEAST_ROWS, SMS, bmm_walk, matmul_split, matmul_walk
from ..ir import PadZero
from ..kernel import cdiv, kernel
from ..markers import FREE_AXIS, In, Out, Shared, cells
from .bmm import bmm
from .entry_hints import entry_hints
from .launching import empty, fmt_of, launch, on_host
from .matmul import check_precision, matmul_bf16, matmul_f16, matmul_tf32, mma_step
from .matmul_3xtf32 import product_3xtf32
from .matmul_persistent import bmm_persistent, matmul_persistent


def _pa(fmt="f16", tm=128, tk=64):
    return In(fmt, cells(["M", "K"], [tm, tk], along=[0, FREE_AXIS], pad=PadZero))


def _pb(fmt="f16", tk=64, tn=128):
    return In(fmt, cells(["K", "N"], [tk, tn], along=[FREE_AXIS, 1], pad=PadZero))


_WORK = Shared(F32, ["S", "M", "N"])


def _partial_grid(M, N, S, tm=128, tn=128):  # noqa: N803  (the run-time sizes' names)
    return (cdiv(M, tm), cdiv(N, tn), S)


def _idx_min(a, b):
    return ti.idx_of(ti.min_i(ti.idx_as_tile(a), ti.idx_as_tile(b)))


@kernel(name="matmul_partial", grid=_partial_grid, hints=entry_hints, tuned=("tm", "tn", "tk", "warps", "occupancy"))
def matmul_partial(a=_pa, b=_pb, w=_WORK, *, fmt: str = "f16", precision: str = "tf32", tm: int = 128,
                   tn: int = 128, tk: int = 64, warps: int = 0, occupancy: int = 0):
    """W[z] = the [M, N] product of A [M, K] and B [K, N] (``fmt``: f16, bf16, or f32 with
    ``precision`` as matmul_tf32's) over split z of K's blocks, in f32; S = W's first dimension
    splits, block (i, j, z) writing W[z]'s cell (i, j)."""
    f = dtype(fmt)
    if f == F32:
        check_precision(precision, "matmul_partial")
    z, bm, bn = ti.block_id(2), ti.block_id(0), ti.block_id(1)
    nk = ti.blocks_of(a, 1)
    s = ti.extent_of(w, 0)
    per = ti.idx_div(ti.idx_add(nk, ti.idx_sub(s, ti.idx_const(1))), s)  # ceil(nk / S)
    lo = ti.idx_mul(z, per)
    acc = ti.carry(ti.full([tm, tn], 0.0, F32))
    for kk in ti.d_range(lo, _idx_min(ti.idx_add(lo, per), nk)):
        ti.set(acc, mma_step(ti.load_at(a, [kk]), ti.load_at(b, [kk]), ti.get(acc), f, precision))
    out = ti.partition_view(ti.array_view(w), [1, tm, tn])
    ti.store_view(out, [z, bm, bn], ti.reshape(ti.get(acc), [1, tm, tn]))


def _rw(rm=64, rn=128):
    return In(F32, cells(["S", "M", "N"], [1, rm, rn], along=[FREE_AXIS, 0, 1], pad=PadZero))


def _rc(fmt="f16", rm=64, rn=128):
    return Out(fmt, cells(["M", "N"], [rm, rn]))


@kernel(name="splitk_reduce", hints=entry_hints, tuned=("rm", "rn", "warps", "occupancy"))
def splitk_reduce(w=_rw, c=_rc, *, fmt: str = "f16", rm: int = 64, rn: int = 128, warps: int = 0, occupancy: int = 0):
    """C = sum over z of W[z] (W [S, M, N] f32), in the order of z, converted to ``fmt``."""
    acc = ti.carry(ti.full([rm, rn], 0.0, F32))
    for z in ti.d_range(0, ti.blocks_of(w, 0)):
        ti.set(acc, ti.get(acc) + ti.reshape(ti.load_at(w, [z]), [rm, rn]))
    ti.store_cell(c, ti.to(ti.get(acc), fmt))


_PLAIN = {"f16": matmul_f16, "bf16": matmul_bf16, "f32": matmul_tf32}


def even_splits(k: int, tk: int, splits: int) -> int:
    """The split count that leaves no split empty: with per = ceil(nk / splits) K blocks a split,
    ceil(nk / per) splits (at most ``splits``, at least 1)."""
    nk = max(1, cdiv(int(k), tk))
    per = cdiv(nk, max(1, min(int(splits), nk)))
    return cdiv(nk, per)


def matmul_split_k(a, b, c, *, splits: int, precision: str = "tf32", config: dict | None = None,
                   reduce_config: dict | None = None, workspace=None):
    """C = A @ B in two launches, K cut into ``splits`` (fewer where K has fewer blocks): the f32
    partial products into a [splits, M, N] workspace (a fresh one unless ``workspace`` is given,
    f32, at least that big), then their sum into C. ``config``: matmul_partial's tiles and hints
    (its defaults where None); ``reduce_config`` likewise for splitk_reduce. Answers C."""
    fmt = fmt_of(a)
    m, k = (int(n) for n in a.shape)
    n = int(b.shape[1])
    cfg = dict(config or {})
    tk = cfg.get("tk", matmul_partial.static["tk"])
    s = even_splits(k, tk, splits)
    if workspace is None:
        workspace = empty(a, (s, m, n), "f32")
    elif tuple(workspace.shape[1:]) != (m, n) or workspace.shape[0] < s:
        raise TileirError(f"the split-K workspace is {list(workspace.shape)}; it must be at least [{s}, {m}, {n}]",
                          kernel="matmul_partial", what="workspace")
    else:
        workspace = workspace[:s]
    extra = {"precision": precision} if fmt == "f32" else {}
    launch(matmul_partial, a, b, workspace, fmt=fmt, **extra, **cfg)
    launch(splitk_reduce, workspace, c, fmt=fmt, **(reduce_config or {}))
    return c


def plan(a, b, gpu: str | None = None, precision: str = "tf32", fmt: str | None = None) -> dict:
    """How ``gemm`` runs A @ B: {"splits": 1} (the one-pass kernel, its tiles found by the call),
    {"splits": 1, "walk": matmul_persistent's configuration} (``heuristics.matmul_walk``), {"splits": 1,
    "halves": matmul_3xtf32's configuration} (a 3xtf32 product of at least ``HALVES_LEAST_ROWS`` rows on
    an sm_90 GPU: ``product_3xtf32``), or
    {"splits": S, "config": matmul_partial's tiles, "reduce": splitk_reduce's}, by the rule in
    ``heuristics.matmul_split`` for ``gpu`` (this machine's when None; no GPU: one pass).
    ``fmt``: A's format where the caller has it (fmt_of's)."""
    if gpu is None and not on_host(a):
        gpu = autotune.this_gpu()
    if gpu is None:
        return {"splits": 1}
    m, k = a.shape
    n = b.shape[1]
    fmt = fmt or fmt_of(a)
    got = matmul_split(gpu, fmt, m, n, k, precision)
    if got["splits"] == 1 and fmt == "f32" and precision == "3xtf32" and gpu in SMS and m >= HALVES_LEAST_ROWS:
        return {"splits": 1, "halves": dict(HALVES_CELL)}
    if got["splits"] == 1:
        walk = matmul_walk(gpu, fmt, m, n, k)
        if walk is not None:
            return {"splits": 1, "walk": walk}
    return got


def gemm(a, b, c, *, precision: str | None = None, gpu: str | None = None, splits: int | None = None):
    """C = A @ B for row-major A [M, K] and B [K, N] of f16, bf16 or f32 (``precision`` as
    matmul_tf32's), any shape: one pass, or split-K where the rule (or ``splits``) says so. CUDA
    tensors run on the GPU (asynchronously), host arrays on the host reference; ``gpu`` names the
    target whose rule is followed (this machine's by default). Answers C."""
    fmt = fmt_of(a)
    extra: dict[str, Any] = {"precision": precision} if fmt == "f32" and precision is not None else {}
    p: dict  # plan's: {"splits": S} and, split, the two kernels' configurations
    if splits is not None:
        p = {"splits": int(splits)}
    else:
        p = plan(a, b, gpu, precision or "tf32", fmt)
    if "halves" in p:
        return product_3xtf32(a, b, c, config=p["halves"])
    if p["splits"] <= 1:
        kern, cfg = (_PLAIN[fmt], extra) if "walk" not in p else (matmul_persistent, dict(p["walk"], fmt=fmt))
        launch(kern, a, b, c, **cfg)  # a CUDA tensor: straight to the kernel's call
        return c
    return matmul_split_k(a, b, c, splits=p["splits"], precision=precision or "tf32", config=p.get("config"),
                          reduce_config=p.get("reduce"))


def batched_plan(a, b, gpu: str | None = None) -> tuple:
    """(kernel, configuration) of ``batched_product`` for [B, M, K] x [B, K, N]: ``bmm_persistent`` with
    ``heuristics.bmm_walk``'s configuration where it gives one for ``gpu`` (this machine's when None),
    else ``bmm`` with its tiles found by the call ({})."""
    if gpu is None and not on_host(a):
        gpu = autotune.this_gpu()
    bt, m, k = (int(x) for x in a.shape)
    walk = bmm_walk(gpu, fmt_of(a), bt, m, int(b.shape[2]), k) if gpu is not None else None
    return (bmm_persistent, walk) if walk is not None else (bmm, {})


def batched_product(a, b, c, *, gpu: str | None = None):
    """C[i] = A[i] @ B[i] (f16 or bf16, row-major [B, M, K] and [B, K, N]) for every shape: the batch's
    cells walked by 132 blocks where the rule says so (``batched_plan``), else one cell a block. CUDA
    tensors run on the GPU (asynchronously), host arrays on the host reference. Answers C."""
    kern, cfg = batched_plan(a, b, gpu)
    launch(kern, a, b, c, fmt=fmt_of(a), **cfg)
    return c


__all__ = ["batched_plan", "batched_product", "matmul_partial", "splitk_reduce", "matmul_split_k", "gemm", "plan",
           "even_splits"]
