"""Element-wise arithmetic: float and integer operations, comparisons, select, constants and the
index arithmetic -- how each is checked while recording, lowered, and computed on the host.

The operations themselves are rows of ``tileir.elementwise``: the recorder refuses an op no row
names, the lowering reads a comparison's dialect predicate off its row, and the host rules here
compute each op by its row's rule (``hostmath``): an exact-tier op in the format's working
precision, a tolerance-tier one (exp, log, the trigonometric functions, tanh, pow, atan2: the
device's are approximations) in f64, rounded once. Integer arithmetic wraps; a float comparison is
ordered (NaN answers 0 for all six, ne included) unless asked unordered; cmpi reads its operands
signed unless asked unsigned.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .. import ir
from ..dialect import BY_NAME as DIALECT
from ..dtypes import BY_NAME, I32, to_format, wrap_int, wrap_int_scalar
from ..elementwise import OPS, TOLERANCE, ops_of
from ..hostmath import directed, flush_subnormals, unsigned, work
from ..lower.core import lowering
from ..prog import Attrs, Handle, Shape
from ..ref.core import interp
from .recording import Recording

# the spelling of the recorded ops' kinds, in the recorder's refusals
_KIND_WORDS = {"unaryf": "float unary", "binaryf": "float binary", "cmpf": "float comparison",
               "cmpi": "integer comparison", "unaryi": "integer unary", "binaryi": "integer binary"}


def known(recorder, kind: str, op: str):
    """The row of recorded op ``op`` of ``kind`` (tileir.elementwise); an op no row names is refused."""
    row = OPS.get((kind, op))
    if row is None:
        raise recorder.refuse(f"unknown {_KIND_WORDS.get(kind, kind)} operation {op!r}; the table's are "
                              f"{', '.join(ops_of(kind))}")
    return row


# ---- what each operation records ----------------------------------------------------------------


@dataclass(frozen=True)
class Spread(Attrs, kind="spread"):
    src: Handle
    dtype: str
    shape: Shape


@dataclass(frozen=True)
class UnaryF(Attrs, kind="unaryf"):
    op: str
    dtype: str
    shape: Shape
    a: Handle
    rounding: str
    ftz: bool


@dataclass(frozen=True)
class BinaryF(Attrs, kind="binaryf"):
    op: str
    dtype: str
    shape: Shape
    a: Handle
    b: Handle
    rounding: str
    ftz: bool
    propagate_nan: bool


@dataclass(frozen=True)
class Fma(Attrs, kind="fma"):
    dtype: str
    shape: Shape
    a: Handle
    b: Handle
    c: Handle
    rounding: str
    ftz: bool


@dataclass(frozen=True)
class CmpF(Attrs, kind="cmpf"):
    pred: str
    dtype: str
    shape: Shape
    a: Handle
    b: Handle
    ordered: bool


@dataclass(frozen=True)
class CmpI(Attrs, kind="cmpi"):
    pred: str
    dtype: str
    shape: Shape
    a: Handle
    b: Handle
    signed: bool


@dataclass(frozen=True)
class BinaryI(Attrs, kind="binaryi"):
    op: str
    dtype: str
    shape: Shape
    a: Handle
    b: Handle
    overflow: str


@dataclass(frozen=True)
class UnaryI(Attrs, kind="unaryi"):
    op: str
    dtype: str
    shape: Shape
    a: Handle
    overflow: str


@dataclass(frozen=True)
class Select(Attrs, kind="select"):
    dtype: str
    shape: Shape
    cond: Handle
    a: Handle
    b: Handle


class ArithRecording(Recording):
    """The element-wise operations of the recorder (mixed into record.Recorder)."""

    # -- the rank-0 rule -----------------------------------------------------------------------
    def spread(self, h: Handle, shape: Sequence[int]) -> Handle:
        inf = self.info(h)
        shape = tuple(shape)
        if inf.shape == shape:
            return h
        if self.is_const(h):
            return self.const(inf.dtype, shape, self.prog.consts[h])
        if inf.shape != ():
            raise self.refuse(f"a {inf.dtype}{list(inf.shape)} tile where a {list(shape)} one is needed",
                              f"broadcast(t, {list(shape)}) or reshape(t, {list(shape)})")
        r = self.new(inf.kind, inf.dtype, shape)
        self.emit(Spread(src=h, dtype=inf.dtype, shape=shape), (r,))
        return r

    def t_spread(self, dtype, shape, src):
        return self.spread(src, shape)

    def operands(self, what: str, dtype: str, shape: Sequence[int], handles: Sequence[Handle],
                 kind: str = "any") -> list[Handle]:
        """Check each operand is a ``dtype`` value of ``shape`` or rank 0; rank 0 is spread. The one
        place these rules live (the surface's ``tiles`` only makes numbers in the operands' format),
        so a Dev caller that skips the surface meets them too; ``kind`` "float" / "int" adds that
        the format is one."""
        shape = tuple(shape)
        out = []
        for h in handles:
            inf = self.info(h)
            if inf.kind != "val":
                raise self.refuse(f"{what} takes tiles, not a {inf.kind}",
                                  "load_ptrs(p) for the values the pointers address, ptr_to_int(p) for the "
                                  "addresses" if inf.kind == "ptrs" else "a tile of values")
            if inf.dtype != dtype:
                raise self.refuse(f"{what} of a {dtype} tile and a {inf.dtype} tile: both operands must "
                                  "have one format", f"convert one first, e.g. x.to({dtype.upper()}) or "
                                  "float_to_float / int_to_float")
            if inf.shape != shape and inf.shape != ():
                raise self.refuse(f"{what} of a {list(shape)} tile and a {list(inf.shape)} tile: shapes "
                                  "must agree (a rank-0 operand is widened)",
                                  "broadcast(t, shape) the smaller one, or reshape it")
            out.append(self.spread(h, shape))
        if kind == "float" and not BY_NAME[dtype].is_float:
            raise self.refuse(f"{what} is a float operation and the operands are {dtype}",
                              "the integer spelling (add_i, addi ...) or convert with int_to_float")
        if kind == "int" and BY_NAME[dtype].is_float:
            raise self.refuse(f"{what} is an integer operation and the operands are {dtype}",
                              "the float spelling (add, sub ...) or convert with float_to_int")
        return out

    def t_unaryf(self, op, dtype, shape, a, rounding="", ftz=False):
        known(self, "unaryf", op)
        (a,) = self.operands(op, dtype, shape, [a], "float")
        r = self.new("val", dtype, shape)
        self.emit(UnaryF(op=op, dtype=dtype, shape=tuple(shape), a=a, rounding=rounding, ftz=ftz), (r,))
        return r

    def t_binaryf(self, op, dtype, shape, a, b, rounding="", ftz=False, propagate_nan=False):
        known(self, "binaryf", op)
        a, b = self.operands(op, dtype, shape, [a, b], "float")
        r = self.new("val", dtype, shape)
        self.emit(BinaryF(op=op, dtype=dtype, shape=tuple(shape), a=a, b=b, rounding=rounding,
                  ftz=ftz, propagate_nan=propagate_nan), (r,))
        return r

    def t_fma(self, dtype, shape, a, b, c, rounding="nearest_even", ftz=False):
        a, b, c = self.operands("fma", dtype, shape, [a, b, c], "float")
        r = self.new("val", dtype, shape)
        self.emit(Fma(dtype=dtype, shape=tuple(shape), a=a, b=b, c=c, rounding=rounding, ftz=ftz), (r,))
        return r

    def t_cmpf(self, pred, dtype, shape, a, b, ordered=True):
        known(self, "cmpf", pred)
        a, b = self.operands(f"compare {pred}", dtype, shape, [a, b], "float")
        r = self.new("val", "i1", shape)
        self.emit(CmpF(pred=pred, dtype=dtype, shape=tuple(shape), a=a, b=b, ordered=ordered), (r,))
        return r

    def t_cmpi(self, pred, shape, a, b, signed=True, dtype="i32"):
        known(self, "cmpi", pred)
        a, b = self.operands(f"compare {pred}", dtype, shape, [a, b], "int")
        r = self.new("val", "i1", shape)
        self.emit(CmpI(pred=pred, dtype=dtype, shape=tuple(shape), a=a, b=b, signed=signed), (r,))
        return r

    def t_binaryi(self, op, dtype, shape, a, b, overflow="none"):
        known(self, "binaryi", op)
        a, b = self.operands(op, dtype, shape, [a, b], "int")
        r = self.new("val", dtype, shape)
        self.emit(BinaryI(op=op, dtype=dtype, shape=tuple(shape), a=a, b=b, overflow=overflow), (r,))
        return r

    def t_unaryi(self, op, dtype, shape, a, overflow="none"):
        known(self, "unaryi", op)
        (a,) = self.operands(op, dtype, shape, [a], "int")
        r = self.new("val", dtype, shape)
        self.emit(UnaryI(op=op, dtype=dtype, shape=tuple(shape), a=a, overflow=overflow), (r,))
        return r

    def t_select(self, dtype, shape, cond, a, b):
        (cond,) = self.operands("select's condition", "i1", shape, [cond])
        a, b = self.operands("select", dtype, shape, [a, b])
        r = self.new("val", dtype, shape)
        self.emit(Select(dtype=dtype, shape=tuple(shape), cond=cond, a=a, b=b), (r,))
        return r

    def t_constf(self, dtype, shape, value):
        shape = self.check_shape(shape, "a constant tile") if shape else ()
        return self.const(dtype, shape, BY_NAME[dtype].round(value))

    def t_consti(self, dtype, shape, value):
        shape = self.check_shape(shape, "a constant tile") if shape else ()
        return self.const(dtype, shape, wrap_int_scalar(BY_NAME[dtype], int(value)))

    def t_idx_const(self, value):
        return self.const("i32", (), wrap_int_scalar(I32, int(value)))

    def _idx(self, h, what):
        inf = self.info(h)
        if inf.kind != "val" or inf.dtype != "i32" or inf.shape != ():
            raise self.refuse(f"{what} takes rank-0 i32 indices, got a {inf.dtype}{list(inf.shape)} {inf.kind}",
                              "idx_of(t) for a rank-0 i32 tile")
        return h

    def t_idx_add(self, a, b):
        return self.t_binaryi("addi", "i32", (), self._idx(a, "idx_add"), self._idx(b, "idx_add"))

    def t_idx_mul(self, a, b):
        return self.t_binaryi("muli", "i32", (), self._idx(a, "idx_mul"), self._idx(b, "idx_mul"))


# ---- lowering ----------------------------------------------------------------------------------


@lowering("unaryf")
def _lower_unaryf(lw, op):
    a = UnaryF.of(op)
    lw.result(op, ir.FloatUn, a.op, ir.tile(a.shape, a.dtype), lw.val(a.a), a.rounding, a.ftz)


@lowering("binaryf")
def _lower_binaryf(lw, op):
    a = BinaryF.of(op)
    lw.result(op, ir.FloatBin, a.op, ir.tile(a.shape, a.dtype), lw.val(a.a), lw.val(a.b),
              a.rounding, a.ftz, a.propagate_nan)


@lowering("fma")
def _lower_fma(lw, op):
    a = Fma.of(op)
    lw.result(op, ir.FloatFma, ir.tile(a.shape, a.dtype), lw.val(a.a), lw.val(a.b), lw.val(a.c),
              a.rounding, a.ftz)


@lowering("cmpf", "cmpi")
def _lower_cmp(lw, op):
    a = op.a
    assert isinstance(a, (CmpF, CmpI))
    shape, pred = a.shape, OPS[(op.kind, a.pred)].fixed_value("predicate")
    ty, res = ir.tile(shape, a.dtype), ir.tile(shape, "i1")
    lhs, rhs = lw.val(a.a), lw.val(a.b)
    if isinstance(a, CmpF):
        lw.result(op, ir.CmpFloat, pred, ty, res, lhs, rhs, a.ordered)
    else:
        lw.result(op, ir.CmpInt, pred, ty, res, lhs, rhs, a.signed)


@lowering("binaryi")
def _lower_binaryi(lw, op):
    a = BinaryI.of(op)
    name, overflow = a.op, a.overflow
    ty = ir.tile(a.shape, a.dtype)
    lhs, rhs = lw.val(a.a), lw.val(a.b)
    if name == "addi":
        lw.result(op, ir.AddInt, ty, lhs, rhs, overflow)
    elif name == "muli":
        lw.result(op, ir.MulInt, ty, lhs, rhs, overflow)
    else:
        lw.result(op, ir.IntBin, name, ty, lhs, rhs, overflow)


@lowering("unaryi")
def _lower_unaryi(lw, op):
    a = UnaryI.of(op)
    lw.result(op, ir.IntUn, a.op, ir.tile(a.shape, a.dtype), lw.val(a.a), a.overflow)


@lowering("select")
def _lower_select(lw, op):
    a = Select.of(op)
    lw.result(op, ir.SelectTile, ir.tile(a.shape, "i1"), ir.tile(a.shape, a.dtype), lw.val(a.cond),
              lw.val(a.a), lw.val(a.b))


def spread_ref(lw, src_ref, src_ty: ir.Tile, shape) -> ir.Ref:
    """A rank-0 value as a tile of ``shape``: a reshape to one lane per dimension, a broadcast."""
    shape = tuple(shape)
    if src_ty.shape == shape:
        return src_ref
    ones = ir.Tile((1,) * len(shape), src_ty.elem)
    r1 = lw.fresh()
    lw.emit(ir.Reshape(r1, src_ref, src_ty, ones))
    if ones.shape == shape:
        return ir.Val(r1)
    r2 = lw.fresh()
    lw.emit(ir.Broadcast(r2, ir.Val(r1), ones, ir.Tile(shape, src_ty.elem)))
    return ir.Val(r2)


@lowering("spread")
def _lower_spread(lw, op):
    a = Spread.of(op)
    src = a.src
    lw.bind(op.res[0], spread_ref(lw, lw.val(src), lw.ty(src), a.shape))


# ---- host reference: each op by its row's rule (tileir.elementwise, hostmath) ---------------------


@interp("unaryf")
def _ref_unaryf(it, op):
    a = UnaryF.of(op)
    d = a.dtype
    row = OPS[("unaryf", a.op)]
    x = np.asarray(it.val(a.a))
    if a.ftz:
        x = flush_subnormals(x, d)
    # an approximation on the device: the host answers the f64 value rounded once
    y = to_format(BY_NAME[d], row.host(x.astype(np.float64 if row.tier == TOLERANCE else work(d))))
    it.set(op.res[0], flush_subnormals(y, d) if a.ftz else y)


def binary_directed(name: str, x: np.ndarray, y: np.ndarray, dtype: str, mode: str) -> np.ndarray:
    """addf / subf / mulf / divf of the f64 lanes ``x``, ``y`` (values of ``dtype``) rounded ONCE into
    ``dtype`` by the directed ``mode`` (hostmath.directed: the exact result of the op's row, then
    the mode)."""
    rule = OPS[("binaryf", name)].host
    return directed(lambda p, q: rule(p, q, None), name, x, y, dtype, mode)


def _operand(it, h, dtype, ftz):
    """An operand's lanes as the device reads them: flushed where the op carries flush_to_zero."""
    x = np.asarray(it.val(h))
    return flush_subnormals(x, dtype) if ftz else x


@interp("binaryf")
def _ref_binaryf(it, op):
    a = BinaryF.of(op)
    d = a.dtype
    row = OPS[("binaryf", a.op)]
    x, y = _operand(it, a.a, d, a.ftz), _operand(it, a.b, d, a.ftz)
    if row.tier == TOLERANCE:
        z = to_format(BY_NAME[d], row.host(x.astype(np.float64), y.astype(np.float64), a))
    elif (a.rounding or "nearest_even") != "nearest_even" and _takes_rounding(row.dialect):
        x, y = np.broadcast_arrays(x.astype(np.float64), y.astype(np.float64))
        z = directed(lambda p, q: row.host(p, q, a), a.op, x, y, d, a.rounding)
    else:
        z = to_format(BY_NAME[d], row.host(x.astype(work(d)), y.astype(work(d)), a))
    it.set(op.res[0], flush_subnormals(z, d) if a.ftz else z)


def _takes_rounding(dialect_op: str) -> bool:
    return any(x.name == "rounding" for x in DIALECT[dialect_op].attrs)


@interp("fma")
def _ref_fma(it, op):
    a = Fma.of(op)
    d = a.dtype
    z = OPS[("fma", "fma")].host(*(_operand(it, x, d, a.ftz) for x in (a.a, a.b, a.c)), d)
    it.set(op.res[0], flush_subnormals(z, d) if a.ftz else z)


@interp("cmpf")
def _ref_cmpf(it, op):
    a = CmpF.of(op)
    x, y = np.asarray(it.val(a.a)).astype(np.float64), np.asarray(it.val(a.b)).astype(np.float64)
    nan = np.isnan(x) | np.isnan(y)
    r = OPS[("cmpf", a.pred)].host(x, y)
    r = (r & ~nan) if a.ordered else (r | nan)
    it.set(op.res[0], np.asarray(r, dtype=np.bool_))


def _signed64(it, h):
    return np.asarray(it.val(h)).astype(np.int64)


@interp("cmpi")
def _ref_cmpi(it, op):
    a = CmpI.of(op)
    x, y = _signed64(it, a.a), _signed64(it, a.b)
    if not a.signed:
        bits = BY_NAME[a.dtype].bits
        x, y = unsigned(x, bits), unsigned(y, bits)
    it.set(op.res[0], np.asarray(OPS[("cmpi", a.pred)].host(x, y), dtype=np.bool_))


@interp("binaryi")
def _ref_binaryi(it, op):
    a = BinaryI.of(op)
    d = BY_NAME[a.dtype]
    it.set(op.res[0], wrap_int(d, OPS[("binaryi", a.op)].host(_signed64(it, a.a), _signed64(it, a.b), d)))


@interp("unaryi")
def _ref_unaryi(it, op):
    a = UnaryI.of(op)
    d = BY_NAME[a.dtype]
    it.set(op.res[0], wrap_int(d, OPS[("unaryi", a.op)].host(_signed64(it, a.a), d)))


@interp("select")
def _ref_select(it, op):
    a = Select.of(op)
    it.set(op.res[0], np.where(np.asarray(it.val(a.cond), dtype=bool), it.val(a.a), it.val(a.b)))


@interp("spread")
def _ref_spread(it, op):
    a = Spread.of(op)
    it.set(op.res[0], np.broadcast_to(it.val(a.src), a.shape))
