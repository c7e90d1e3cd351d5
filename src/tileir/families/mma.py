"""Matrix multiply-accumulate: mmaf over the dialect's table of operand and accumulator formats.

The dialect's table (MmaFOp): f16 into f16 or f32; bf16 into f32; f32 into f32; tf32 into f32;
f64 into f64; f8E4M3FN and f8E5M2 into f16 or f32. The order of the sum over k is not
specified and the device may use a tensor core or FMAs, so mma is tolerance tier. The host
multiplies in f64 and rounds once into the accumulator's format, except for f32 operands, whose
products are not exact: there it follows ``f32_products_in_k_order`` (see its docstring).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import ir
from ..dtypes import BY_NAME, to_format
from ..lower.core import lowering
from ..prog import Attrs, Handle
from ..ref.core import interp
from .recording import Recording

MMA_TABLE = {
    "f16": ("f16", "f32"), "bf16": ("f32",), "f32": ("f32",), "tf32": ("f32",), "f64": ("f64",),
    "f8E4M3FN": ("f16", "f32"), "f8E5M2": ("f16", "f32"),
}


def mma_table_text() -> str:
    return "; ".join(f"{k} -> {' or '.join(v)}" for k, v in MMA_TABLE.items())


# ---- what each operation records ----------------------------------------------------------------


@dataclass(frozen=True)
class MmaF(Attrs, kind="mmaf"):
    dtype: str
    acc: str
    m: int
    k: int
    n: int
    a: Handle
    b: Handle
    c: Handle


@dataclass(frozen=True)
class MmaI(Attrs, kind="mmai"):
    m: int
    k: int
    n: int
    a: Handle
    b: Handle
    c: Handle


@dataclass(frozen=True)
class MmaFScaled(Attrs, kind="mmaf_scaled"):
    dtype: str
    scale: str
    m: int
    k: int
    n: int
    block: int
    a: Handle
    b: Handle
    c: Handle
    sa: Handle
    sb: Handle


class MmaRecording(Recording):
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
        self.emit(MmaF(dtype=dtype, acc=acc, m=m, k=k, n=n, a=a, b=b, c=c), (r,))
        return r


# tileiras 13.4.92 answers tf32 products with K = 4 wrong on sm_90 (errors ~3.5 on unit inputs, at
# M 16-64 and N 8-32, with any warps hint, at -O0 too), and right at K >= 8 and with K = 4 padded
# to 8 with zeros: bench/tf32_small_k.py, bench/results/tf32_small_k_h200.json. The lowering pads
# such products to K = 8 (the host reference, which reads the recording, needs no change: zeros
# add nothing); every other product is lowered as it was.
TF32_PADDED_K = {4: 8}


def _pad_k(lw, ref, dtype, shape, dim, to):
    """``ref`` of ``shape`` widened along ``dim`` to ``to`` with zeros (a cat with a zero tile)."""
    zshape = tuple(to - n if d == dim else n for d, n in enumerate(shape))
    wide = tuple(to if d == dim else n for d, n in enumerate(shape))
    dst = lw.fresh()
    lw.emit(ir.CatTile(dst, dim, ref, lw.constant(dtype, zshape, 0.0), ir.tile(shape, dtype), ir.tile(zshape, dtype),
                       ir.tile(wide, dtype)))
    return ir.Val(dst)


@lowering("mmaf")
def _lower_mmaf(lw, op):
    a = MmaF.of(op)
    m, k, n, fmt = a.m, a.k, a.n, a.dtype
    lhs, rhs = lw.val(a.a), lw.val(a.b)
    if fmt == "tf32" and k in TF32_PADDED_K:
        to = TF32_PADDED_K[k]
        lhs, rhs = _pad_k(lw, lhs, fmt, (m, k), 1, to), _pad_k(lw, rhs, fmt, (k, n), 0, to)
        k = to
    lw.result(op, ir.FloatMma, ir.tile((m, n), a.acc), ir.tile((m, k), fmt), ir.tile((k, n), fmt), lhs, rhs,
              lw.val(a.c))


def f32_products_in_k_order(x, y, c) -> np.ndarray:
    """The host's model of the device's f32 x f32 -> f32 mma: each product rounded to f32, added to
    the f32 accumulator one k at a time in order of k, each sum rounded to f32. A first model, not
    a measured one: the products of ieee f32 operands are not exact in f32 (unlike f16, bf16, tf32
    and the f8 formats, whose products the f64 sum below holds exactly), so computing in f64 answers
    "right" where the device is not. bench/f32_mma_error.py measures what the device does (ieee mma,
    tf32 and 3xtf32 against f64, K up to 16384); that measurement decides, and this function follows
    it (a different summation order or fused products) when it says otherwise."""
    x = np.asarray(x, dtype=np.float32)
    y = np.asarray(y, dtype=np.float32)
    acc = np.array(c, dtype=np.float32, copy=True)
    with np.errstate(all="ignore"):
        for kk in range(x.shape[1]):
            acc = acc + x[:, kk:kk + 1] * y[kk:kk + 1, :]  # numpy f32: each product and sum rounded once
    return acc


@interp("mmaf")
def _ref_mmaf(it, op):
    a = MmaF.of(op)
    if a.dtype == "f32" and a.acc == "f32":
        r = f32_products_in_k_order(it.val(a.a), it.val(a.b), it.val(a.c))
        it.set(op.res[0], r)
        return
    x = np.asarray(it.val(a.a)).astype(np.float64)
    y = np.asarray(it.val(a.b)).astype(np.float64)
    c = np.asarray(it.val(a.c)).astype(np.float64)
    it.set(op.res[0], to_format(BY_NAME[a.acc], x @ y + c))


# ---- mmai: i8 x i8 into i32, exact -------------------------------------------------------------
# ---- mma_scaled: block-scaled low-precision formats into f32 ---------------------------------

# Ops.td's MmaFScaledOp table: the operand formats each scale format may scale.
SCALED_TABLE = {"f8E8M0FNU": ("f8E4M3FN", "f8E5M2", "f4E2M1FN"), "f8E4M3FN": ("f4E2M1FN",)}


class MoreMmaRecording(Recording):
    def t_mmai(self, m, k, n, a, b, c):
        ai, bi = self.info(a), self.info(b)
        if ai.dtype != "i8" or bi.dtype != "i8":
            raise self.refuse(f"mmai multiplies i8 tiles, got {ai.dtype} and {bi.dtype}",
                              "trunc_u8 / consti into i8, or mma for float formats")
        if ai.shape != (m, k) or bi.shape != (k, n):
            raise self.refuse(f"mmai of a {list(ai.shape)} and a {list(bi.shape)} tile: a is [m, k] and b [k, n]")
        (c,) = self.operands("mmai's accumulator", "i32", (m, n), [c])
        r = self.new("val", "i32", (m, n))
        self.emit(MmaI(m=m, k=k, n=n, a=a, b=b, c=c), (r,))
        return r

    def t_mmaf_scaled(self, dtype, scale, dims, a, b, c, sa, sb):
        m, k, n, block = dims
        if scale not in SCALED_TABLE or dtype not in SCALED_TABLE[scale]:
            table = "; ".join(f"{', '.join(v)} scaled by {s}" for s, v in SCALED_TABLE.items())
            raise self.refuse(f"mma_scaled of {dtype} operands with {scale} scales is not in the dialect's table "
                              f"({table})", "a pair from the table")
        for h, shape, d, what in ((a, (m, k), dtype, "a"), (b, (k, n), dtype, "b"), (sa, (m, k // block), scale, "sa"),
                                  (sb, (k // block, n), scale, "sb")):
            inf = self.info(h)
            if inf.shape != shape or inf.dtype != d:
                raise self.refuse(f"mma_scaled's {what} is {inf.dtype}{list(inf.shape)}, not {d}{list(shape)}")
        (c,) = self.operands("mma_scaled's accumulator", "f32", (m, n), [c])
        r = self.new("val", "f32", (m, n))
        self.emit(MmaFScaled(dtype=dtype, scale=scale, m=m, k=k, n=n, block=block, a=a, b=b, c=c, sa=sa,
                  sb=sb), (r,))
        return r


@lowering("mmai")
def _lower_mmai(lw, op):
    a = MmaI.of(op)
    m, k, n = a.m, a.k, a.n
    lw.result(op, ir.IntMma, ir.tile((m, n), "i32"), ir.tile((m, k), "i8"), ir.tile((k, n), "i8"), lw.val(a.a),
              lw.val(a.b), lw.val(a.c))


@interp("mmai")
def _ref_mmai(it, op):
    a = MmaI.of(op)
    x = np.asarray(it.val(a.a)).astype(np.int64)  # both operands read SIGNED
    y = np.asarray(it.val(a.b)).astype(np.int64)
    c = np.asarray(it.val(a.c)).astype(np.int64)
    it.set(op.res[0], ((x @ y + c + (1 << 31)) % (1 << 32) - (1 << 31)).astype(np.int32))


@lowering("mmaf_scaled")
def _lower_mmaf_scaled(lw, op):
    a = MmaFScaled.of(op)
    m, k, n, blk, fmt, scale = a.m, a.k, a.n, a.block, a.dtype, a.scale
    lw.result(op, ir.FloatMmaScaled, ir.tile((m, n), "f32"), ir.tile((m, k), fmt), ir.tile((k, n), fmt),
              ir.tile((m, k // blk), scale), ir.tile((k // blk, n), scale),
              lw.val(a.a), lw.val(a.b), lw.val(a.c), lw.val(a.sa), lw.val(a.sb))


@interp("mmaf_scaled")
def _ref_mmaf_scaled(it, op):
    a = MmaFScaled.of(op)
    blk = a.block
    x = np.asarray(it.val(a.a)).astype(np.float64) * np.repeat(np.asarray(it.val(a.sa)).astype(np.float64),
                                                                   blk, axis=1)
    y = np.asarray(it.val(a.b)).astype(np.float64) * np.repeat(np.asarray(it.val(a.sb)).astype(np.float64),
                                                                   blk, axis=0)
    c = np.asarray(it.val(a.c)).astype(np.float64)
    it.set(op.res[0], to_format(BY_NAME["f32"], x @ y + c))
