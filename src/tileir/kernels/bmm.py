"""Batched matrix multiply C[b] = A[b] @ B[b] for row-major A [B, M, K] and B [B, K, N] of f16 or
bf16, accumulated in f32, on 3-D cells: the batch follows grid axis 2, M axis 0, N axis 1, and K
is FREE (the loop names it), as in matmul.py. Every extent is a run-time size read off the
arrays (one cubin per configuration serves every shape) and every stride but the last is passed
too, so a slice of a wider array is read in place. The edge cells are padded with zeros on read
and clipped on write.
"""

from __future__ import annotations

import numpy as np

from .. import surface as ti
from ..dtypes import BF16, F16, F32, dtype
from ..ir import PadZero
from ..kernel import kernel
from ..markers import FREE_AXIS, In, Out, cells
from .entry_hints import entry_hints
from .registry import Case, register


def _a(tm=128, tk=64, fmt="f16"):
    return In(fmt, cells(["B", "M", "K"], [1, tm, tk], along=[2, 0, FREE_AXIS], pad=PadZero))


def _b(tk=64, tn=128, fmt="f16"):
    return In(fmt, cells(["B", "K", "N"], [1, tk, tn], along=[2, FREE_AXIS, 1], pad=PadZero))


def _c(tm=128, tn=128, fmt="f16"):
    return Out(fmt, cells(["B", "M", "N"], [1, tm, tn], along=[2, 0, 1]))


@kernel(hints=entry_hints, tuned=("tm", "tn", "tk", "warps", "occupancy"))
def bmm(a=_a, b=_b, c=_c, *, fmt: str = "f16", tm: int = 128, tn: int = 128, tk: int = 64, warps: int = 0,
        occupancy: int = 0):
    """C[i] = A[i] @ B[i] for every i of the batch (f16 or bf16 operands and result, f32
    accumulation), any B, M, N, K. warps / occupancy: entry hints (0: tileiras decides)."""
    acc = ti.carry(ti.full([tm, tn], 0.0, F32))
    for kk in ti.d_range(0, ti.blocks_of(a, 2)):
        at = ti.reshape(ti.load_at(a, [kk]), [tm, tk])
        bt = ti.reshape(ti.load_at(b, [kk]), [tk, tn])
        ti.set(acc, ti.mma(at, bt, ti.get(acc)))
    ti.store_cell(c, ti.reshape(ti.to(ti.get(acc), fmt), [1, tm, tn]))


def _size(s):
    return tuple(s)  # (batch, m, n, k)


def _case(fmt, rtol, atol):
    npd = dtype(fmt).np
    name = dtype(fmt).name

    def inputs(s, rng):
        bt, m, n, k = _size(s)
        a = (rng.standard_normal((bt, m, k)) / np.sqrt(k)).astype(npd)
        b = rng.standard_normal((bt, k, n)).astype(npd)
        return [a, b, np.zeros((bt, m, n), npd)]

    def expected(args):
        return np.matmul(args[0].astype(np.float64), args[1].astype(np.float64))

    return register(Case(f"bmm_{name}", bmm, f"batched C = A @ B, {name} operands, f32 accumulate, any B M N K",
                         (4, 200, 136, 300), lambda s: {} if fmt == F16 else {"fmt": name}, inputs, expected,
                         output=2, rtol=rtol, atol=atol))


_case(F16, 1e-2, 2e-2)
_case(BF16, 2e-2, 5e-2)
