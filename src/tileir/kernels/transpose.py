"""Matrix transpose out = x.T for a row-major [M, N] matrix of f32 or f16, any shape, on cells.

Block (i, j) reads cell (i, j) of x (a [tm, tn] tile), moves it in registers (permute_tile) and
writes it as cell (j, i) of out (a [tn, tm] tile): out's dimensions follow the grid axes the other
way round (along=[1, 0]), so each block writes its own cell. M and N are run-time sizes read off
the arrays (x [M, N], out [N, M]; one cubin per configuration), the row strides too, and the edge
cells are padded on read and clipped on write by the cells' views.
"""

from __future__ import annotations

import numpy as np

from .. import surface as ti
from ..dtypes import F16, F32, dtype
from ..kernel import kernel
from ..markers import In, Out, cells
from .registry import Case, register


def _x(tm=64, tn=64, fmt="f32"):
    return In(fmt, cells(["M", "N"], [tm, tn]))


def _out(tm=64, tn=64, fmt="f32"):
    return Out(fmt, cells(["N", "M"], [tn, tm], along=[1, 0]))


@kernel
def transpose(x=_x, out=_out, *, fmt: str = "f32", tm: int = 64, tn: int = 64):
    """out[j, i] = x[i, j] for x of [M, N] and out of [N, M] (f32 or f16); tiles of [tm, tn]."""
    ti.store_cell(out, ti.permute_tile(ti.load_cell(x), [1, 0]))


def _size(s):
    return (s, s) if isinstance(s, int) else tuple(s)


def _case(fmt):
    npd = dtype(fmt).np
    name = dtype(fmt).name

    def inputs(s, rng):
        m, n = _size(s)
        return [rng.standard_normal((m, n)).astype(npd), np.zeros((n, m), npd)]

    return register(Case(f"transpose_{name}", transpose, f"out = x.T, {name}, any shape", (1000, 300),
                         lambda s: {} if fmt == F32 else {"fmt": name}, inputs, lambda args: args[0].T.copy(),
                         output=1))


_case(F32)
_case(F16)
