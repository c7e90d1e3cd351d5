"""Integer matrix multiply C = A @ B for row-major i8 A [M, K] and B [K, N] into i32 C [M, N], both
operands read signed, with mmai (the dialect's integer matrix product). M, N and K are run-time
sizes read off the arrays (one cubin per tile configuration serves every shape), and every row
stride is passed, so a slice of a wider matrix is read or written in place.

On cells, as matmul.py: A's cells follow grid axis 0 along M and no axis along K, B's no axis
along K and axis 1 along N, the K loop names them (load_at) and accumulates in an i32 carry; each
block writes its own [tm, tn] cell of C. The edge cells read zeros (which add nothing) and are
clipped on write. Exact: every product fits 15 bits and the i32 sum wraps modulo 2^32 whatever
the order (no wrap at all for K <= 2^17).
"""

from __future__ import annotations

import numpy as np

from .. import surface as ti
from ..dtypes import I8, I32
from ..ir import PadZero
from ..kernel import cdiv, kernel
from ..markers import FREE_AXIS, In, Out, cells
from .entry_hints import entry_hints
from .matmul import tile_for
from .registry import Case, register


def _a(tm=128, tk=64):
    return In(I8, cells(["M", "K"], [tm, tk], along=[0, FREE_AXIS], pad=PadZero))


def _b(tk=64, tn=128):
    return In(I8, cells(["K", "N"], [tk, tn], along=[FREE_AXIS, 1], pad=PadZero))


def _c(tm=128, tn=128):
    return Out(I32, cells(["M", "N"], [tm, tn]))


def _grid(M, N, tm=128, tn=128):  # noqa: N803  (the run-time sizes' names)
    return (cdiv(M, tm), cdiv(N, tn))


@kernel(name="matmul_i8", grid=_grid, hints=entry_hints, tuned=("tm", "tn", "tk", "warps", "occupancy", "cga"))
def matmul_i8(a=_a, b=_b, c=_c, *, tm: int = 128, tn: int = 128, tk: int = 64, warps: int = 0, occupancy: int = 0,
              cga: int = 0):
    """C = A @ B, i8 operands (signed), i32 accumulation and result, any M N K; warps / occupancy /
    cga: entry hints."""
    acc = ti.carry(ti.broadcast(ti.reshape(ti.i_const(0), [1, 1]), [tm, tn]))
    for kk in ti.d_range(0, ti.blocks_of(a, 1)):
        ti.set(acc, ti.mmai(ti.load_at(a, [kk]), ti.load_at(b, [kk]), ti.get(acc)))
    ti.store_cell(c, ti.get(acc))


def _size(s):
    return (s, s, s) if isinstance(s, int) else tuple(s)


def _inputs(s, rng):
    m, n, k = _size(s)
    a = rng.integers(-128, 128, (m, k)).astype(np.int8)
    b = rng.integers(-128, 128, (k, n)).astype(np.int8)
    return [a, b, np.zeros((m, n), np.int32)]


def _expected(args):
    return (args[0].astype(np.int64) @ args[1].astype(np.int64)).astype(np.int32)


def _config(s):  # the tiles: autotune's (the cache, else the default table), else the kernel's defaults
    return tile_for("matmul_i8", *_size(s))


register(Case("matmul_i8", matmul_i8, "C = A @ B, i8 operands (signed), i32 accumulate and result, any M N K",
              (200, 136, 300), _config, _inputs, _expected, output=2))
