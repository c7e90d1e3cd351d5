"""Matrix multiply-accumulate: mmaf over the dialect's table of operand and accumulator formats.

The dialect's table (MmaFOp): f16 into f16 or f32; bf16 into f32; f32 into f32; tf32 into f32;
f64 into f64; f8E4M3FN and f8E5M2 into f16 or f32. The order of the sum over k is not
specified and the device may use a tensor core or FMAs, so mma is tolerance tier; the host
multiplies in f64 and rounds once into the accumulator's format.
"""

from __future__ import annotations

import numpy as np

from .. import ir
from ..dtypes import BY_NAME, to_format
from ..lower.core import lowering
from ..ref.core import interp

MMA_TABLE = {
    "f16": ("f16", "f32"), "bf16": ("f32",), "f32": ("f32",), "tf32": ("f32",), "f64": ("f64",),
    "f8E4M3FN": ("f16", "f32"), "f8E5M2": ("f16", "f32"),
}


def mma_table_text() -> str:
    return "; ".join(f"{k} -> {' or '.join(v)}" for k, v in MMA_TABLE.items())


class MmaRecording:
    def t_mmaf(self, dtype, acc, m, k, n, a, b, c):
        ai, bi = self.info(a), self.info(b)
        if ai.dtype != dtype or bi.dtype != dtype:
            raise self.refuse(f"mma of a {ai.dtype} and a {bi.dtype} operand: both operands have one format",
                              "convert one with to(...)")
        if dtype not in MMA_TABLE or acc not in MMA_TABLE[dtype]:
            raise self.refuse(f"mma of {dtype} operands into a {acc} accumulator is not in the dialect's table "
                              f"({mma_table_text()})", "an accumulator the table pairs with the operands")
        if ai.shape != (m, k) or bi.shape != (k, n):
            raise self.refuse(f"mma of a {list(ai.shape)} and a {list(bi.shape)} tile: a is [m, k] and b is [k, n] "
                              "with the same k")
        (c,) = self.operands("mma's accumulator", acc, (m, n), [c])
        r = self.new("val", acc, (m, n))
        self.emit("mmaf", (r,), dtype=dtype, acc=acc, m=m, k=k, n=n, a=a, b=b, c=c)
        return r


@lowering("mmaf")
def _lower_mmaf(lw, op):
    a = op.a
    dst = lw.fresh()
    lw.emit(ir.FloatMma(dst, ir.tile((a["m"], a["n"]), a["acc"]), ir.tile((a["m"], a["k"]), a["dtype"]),
                        ir.tile((a["k"], a["n"]), a["dtype"]), lw.val(a["a"]), lw.val(a["b"]), lw.val(a["c"])))
    lw.bind(op.res[0], ir.Val(dst))


@interp("mmaf")
def _ref_mmaf(it, op):
    a = op.a
    x = np.asarray(it.val(a["a"])).astype(np.float64)
    y = np.asarray(it.val(a["b"])).astype(np.float64)
    c = np.asarray(it.val(a["c"])).astype(np.float64)
    it.set(op.res[0], to_format(BY_NAME[a["acc"]], x @ y + c))
