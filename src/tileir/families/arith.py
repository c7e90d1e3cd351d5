"""Element-wise arithmetic: float and integer operations, comparisons, select, constants and the
index arithmetic -- how each is checked while recording, lowered, and computed on the host.

Device facts the host side honours (the spec's, where it states them): float add/sub/mul/div/
sqrt/fma are correctly rounded in the operand's format (exact tier at nearest_even); exp, log,
the trigonometric functions and tanh are approximations (tolerance tier); integer arithmetic
wraps (i32 modulo 2^32); divi/remi/maxi/mini/cmpi are signed, remainder takes the dividend's
sign; mulhii reads its operands unsigned; shri copies the sign, shru shifts in zeros; a float
comparison is ordered (NaN answers 0 for all six, ne included) unless asked unordered.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import ir
from ..dtypes import BY_NAME, to_format, wrap_int
from ..lower.core import lowering
from ..prog import Attrs, Handle, Shape
from ..ref.core import interp

FLOAT_UNARY = ("negf", "absf", "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "tanh", "floor", "ceil",
               "sin", "cos", "tan", "sinh", "cosh")
FLOAT_BINARY = ("addf", "subf", "mulf", "divf", "maxf", "minf", "remf", "pow", "atan2")
INT_BINARY = ("addi", "subi", "muli", "divi", "remi", "maxi", "mini", "mulhii", "andi", "ori", "xori",
              "shli", "shri", "shru")
INT_UNARY = ("negi", "absi")
PREDICATES = {"eq": "equal", "ne": "not_equal", "lt": "less_than", "le": "less_than_or_equal",
              "gt": "greater_than", "ge": "greater_than_or_equal"}


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


class ArithRecording:
    """The element-wise operations of the recorder (mixed into record.Recorder)."""

    # -- the rank-0 rule -----------------------------------------------------------------------
    def spread(self, h, shape):
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

    def operands(self, what: str, dtype: str, shape, handles, kind: str = "any"):
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
        (a,) = self.operands(op, dtype, shape, [a], "float")
        r = self.new("val", dtype, shape)
        self.emit(UnaryF(op=op, dtype=dtype, shape=tuple(shape), a=a, rounding=rounding, ftz=ftz), (r,))
        return r

    def t_binaryf(self, op, dtype, shape, a, b, rounding="", ftz=False, propagate_nan=False):
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
        a, b = self.operands(f"compare {pred}", dtype, shape, [a, b], "float")
        r = self.new("val", "i1", shape)
        self.emit(CmpF(pred=pred, dtype=dtype, shape=tuple(shape), a=a, b=b, ordered=ordered), (r,))
        return r

    def t_cmpi(self, pred, shape, a, b, signed=True, dtype="i32"):
        a, b = self.operands(f"compare {pred}", dtype, shape, [a, b], "int")
        r = self.new("val", "i1", shape)
        self.emit(CmpI(pred=pred, dtype=dtype, shape=tuple(shape), a=a, b=b, signed=signed), (r,))
        return r

    def t_binaryi(self, op, dtype, shape, a, b, overflow="none"):
        a, b = self.operands(op, dtype, shape, [a, b], "int")
        r = self.new("val", dtype, shape)
        self.emit(BinaryI(op=op, dtype=dtype, shape=tuple(shape), a=a, b=b, overflow=overflow), (r,))
        return r

    def t_unaryi(self, op, dtype, shape, a, overflow="none"):
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
        return self.const(dtype, shape, int(wrap_int(BY_NAME[dtype], int(value))))

    def t_idx_const(self, value):
        return self.const("i32", (), int(wrap_int(BY_NAME["i32"], int(value))))

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
    shape, pred = a.shape, PREDICATES[a.pred]
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


# ---- host reference ---------------------------------------------------------------------------


def _work(dtype: str):
    """The numpy dtype a float op computes in before rounding to ``dtype``: f64 for f64, f32 for
    the rest (exact for + - * / sqrt: f32 carries more than twice the narrow formats' precision)."""
    return np.float64 if dtype == "f64" else np.float32


def _fl(interp, h, dtype):
    return np.asarray(interp.val(h)).astype(_work(dtype))


def fma_exact(a, b, c, dtype: str):
    """a * b + c rounded once into ``dtype``: the product and sum are taken in f64 rounded to
    odd, which then rounds to any format of at most 51 significand bits correctly."""
    a64, b64, c64 = (np.asarray(x, dtype=np.float64) for x in (a, b, c))
    if dtype == "f64":
        fma = getattr(math, "fma", None)
        if fma is not None:
            return np.vectorize(fma, otypes=[np.float64])(a64, b64, c64)
        from fractions import Fraction

        def one(x, y, z):
            if not all(map(math.isfinite, (x, y, z))):
                # a finite product is exact, never infinite: fma(MAX, MAX, -inf) is -inf, not
                # inf + -inf (campaign 2's seed 2847); an infinite or NaN operand rules as IEEE says
                return z if math.isfinite(x) and math.isfinite(y) else x * y + z
            exact = Fraction(x) * Fraction(y) + Fraction(z)
            if exact == 0:  # IEEE: -0 only when the product and the addend are both -0 (nearest even)
                p_neg = (math.copysign(1, x) * math.copysign(1, y)) < 0
                return -0.0 if (x * y == 0 and z == 0 and p_neg and math.copysign(1, z) < 0) else 0.0
            try:
                return float(exact)  # int / int true division: correctly rounded
            except OverflowError:
                return math.inf if exact > 0 else -math.inf

        return np.vectorize(one, otypes=[np.float64])(a64, b64, c64)
    p = a64 * b64  # exact: each operand carries at most 24 significand bits
    s = p + c64
    bb = s - p
    err = (p - (s - bb)) + (c64 - bb)
    finite = np.isfinite(s)
    inexact = (err != 0) & finite
    toward_zero = inexact & (np.sign(err) != np.sign(s)) & (s != 0)
    t = np.where(toward_zero, np.nextafter(s, 0.0), s)
    bits = t.view(np.int64)
    odd = np.where(inexact, bits | 1, bits)
    return to_format(BY_NAME[dtype], odd.view(np.float64))


_UN = {
    "negf": np.negative, "absf": np.abs, "exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2,
    "sqrt": np.sqrt, "rsqrt": lambda x: 1.0 / np.sqrt(x), "tanh": np.tanh, "floor": np.floor,
    "ceil": np.ceil, "sin": np.sin, "cos": np.cos, "tan": np.tan, "sinh": np.sinh, "cosh": np.cosh,
}
_CORRECTLY_ROUNDED = {"negf", "absf", "sqrt", "floor", "ceil"}


@interp("unaryf")
def _ref_unaryf(it, op):
    a = UnaryF.of(op)
    d = a.dtype
    x = np.asarray(it.val(a.a))
    if a.op in _CORRECTLY_ROUNDED:
        y = _UN[a.op](x.astype(_work(d)))
    else:  # an approximation on the device: the host answers the f64 value rounded once
        y = _UN[a.op](x.astype(np.float64))
    it.set(op.res[0], to_format(BY_NAME[d], y))


def _remf(x, y):
    return np.fmod(x, y)  # truncated division: the sign of the dividend (Ops.td RemFOp)


_BIN = {
    "addf": np.add, "subf": np.subtract, "mulf": np.multiply, "divf": np.divide, "remf": _remf,
    "pow": np.power, "atan2": np.arctan2,  # atan2(a, b): the numerator first (the dialect's x / y)
}


@interp("binaryf")
def _ref_binaryf(it, op):
    a = BinaryF.of(op)
    d = a.dtype
    name = a.op
    if name in ("maxf", "minf"):
        x, y = _fl(it, a.a, d), _fl(it, a.b, d)
        if a.propagate_nan:
            f = np.maximum if name == "maxf" else np.minimum
        else:  # a NaN operand answers the other operand
            f = np.fmax if name == "maxf" else np.fmin
        z = f(x, y)
        # two zeros of opposite signs: max is +0 and min is -0 whichever comes first (measured on the
        # H200, IEEE 754-2019's maximum / minimum; numpy answers one of the operands)
        zeros = (x == 0) & (y == 0) & (np.signbit(x) != np.signbit(y))
        z = np.where(zeros, 0.0 if name == "maxf" else -0.0, z)
    elif name in ("pow", "atan2"):
        z = _BIN[name](np.asarray(it.val(a.a)).astype(np.float64), np.asarray(it.val(a.b)).astype(np.float64))
    elif name in DIRECTED_OPS and (a.rounding or "nearest_even") != "nearest_even":
        x, y = np.broadcast_arrays(np.asarray(it.val(a.a)).astype(np.float64),
                                   np.asarray(it.val(a.b)).astype(np.float64))
        it.set(op.res[0], binary_directed(name, x, y, d, a.rounding))
        return
    else:
        z = _BIN[name](_fl(it, a.a, d), _fl(it, a.b, d))
    it.set(op.res[0], to_format(BY_NAME[d], z))


DIRECTED_OPS = ("addf", "subf", "mulf", "divf")
_EXACT_OP = {"addf": lambda p, q: p + q, "subf": lambda p, q: p - q, "mulf": lambda p, q: p * q,
             "divf": lambda p, q: p / q}


def _odd64(v) -> float:
    """The rational ``v`` (nonzero, inside f64's range) rounded to f64 by ODD: truncated, and the last
    bit set where that lost anything. An odd f64 lies strictly between the same two neighbours of
    any format of at most 51 significand bits as ``v`` does, so one more rounding by any mode into
    such a format is the correct rounding of ``v`` itself."""
    from fractions import Fraction

    f = float(v)  # int / int true division: correctly rounded to nearest
    if Fraction(f) == v:
        return f
    if abs(Fraction(f)) > abs(v):
        f = float(np.nextafter(f, 0.0))
    return float((np.float64(f).view(np.int64) | np.int64(1)).view(np.float64))


def _f64_directed(v, mode: str) -> float:
    """The rational ``v`` (nonzero) rounded into f64 by ``mode``."""
    from fractions import Fraction

    try:
        f = float(v)
    except OverflowError:
        f = math.inf if v > 0 else -math.inf
    if math.isinf(f):  # past the range: infinity, or the largest finite value where the mode holds back
        big = np.finfo(np.float64).max
        keep = (v > 0 and mode == "positive_inf") or (v < 0 and mode == "negative_inf")
        return f if keep else (float(big) if v > 0 else -float(big))
    if f == 0:
        f = 0.0 if v > 0 else -0.0
    e = Fraction(f)
    if mode == "positive_inf" and e < v or mode == "negative_inf" and e > v:
        f = float(np.nextafter(f, math.inf if mode == "positive_inf" else -math.inf))
    elif mode == "zero" and abs(e) > abs(v):
        f = float(np.nextafter(f, 0.0))
        f = (0.0 if v > 0 else -0.0) if f == 0 else f
    return f


def binary_directed(name: str, x: np.ndarray, y: np.ndarray, dtype: str, mode: str) -> np.ndarray:
    """addf / subf / mulf / divf of the f64 lanes ``x``, ``y`` (values of ``dtype``) rounded ONCE into
    ``dtype`` by the directed ``mode`` (zero, negative_inf, positive_inf), as IEEE 754 defines each:
    the exact rational result, then f64 by odd and the format by the mode (convert._round_mode), or
    f64 itself straight from the rational. Infinities, NaNs and division by zero are exact in every
    mode (numpy's answer); an exact zero sum is +0 except toward -inf, where it is -0 (IEEE 754
    6.3), but a sum of two zeros of one sign (x + x) keeps that sign in every mode: -0 + -0 is -0
    and +0 + +0 is +0 (campaign 2's seed 376); a zero product or quotient has the operands' sign."""
    from fractions import Fraction

    from .convert import _round_mode

    d = BY_NAME[dtype]
    shape = x.shape
    xs, ys = x.ravel(), y.ravel()
    out = np.empty(xs.size, np.float64)
    odd = d.name != "f64"
    with np.errstate(all="ignore"):
        plain = {"addf": np.add, "subf": np.subtract, "mulf": np.multiply, "divf": np.divide}[name](xs, ys)
    for i, (p, q) in enumerate(zip(xs.tolist(), ys.tolist())):
        if not (math.isfinite(p) and math.isfinite(q)) or (name == "divf" and q == 0):
            out[i] = plain[i]
            continue
        v = _EXACT_OP[name](Fraction(p), Fraction(q))
        if v == 0:
            if name in ("mulf", "divf"):
                out[i] = math.copysign(0.0, p) * math.copysign(1.0, q)
            else:
                qq = -q if name == "subf" else q
                same = math.copysign(1, p) == math.copysign(1, qq)  # two zeros of one sign: x + x
                out[i] = math.copysign(0.0, p) if same else -0.0 if mode == "negative_inf" else 0.0
            continue
        out[i] = _odd64(v) if odd else _f64_directed(v, mode)
    out = out.reshape(shape)
    if not odd:
        return out
    # zeros and specials pass through _round_mode unchanged (they are exact); the odd values round once
    with np.errstate(all="ignore"):
        return _round_mode(out, d, mode)


@interp("fma")
def _ref_fma(it, op):
    a = Fma.of(op)
    it.set(op.res[0], fma_exact(it.val(a.a), it.val(a.b), it.val(a.c), a.dtype))


_CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
        "ge": np.greater_equal}


@interp("cmpf")
def _ref_cmpf(it, op):
    a = CmpF.of(op)
    x, y = np.asarray(it.val(a.a)).astype(np.float64), np.asarray(it.val(a.b)).astype(np.float64)
    nan = np.isnan(x) | np.isnan(y)
    r = _CMP[a.pred](x, y)
    r = (r & ~nan) if a.ordered else (r | nan)
    it.set(op.res[0], np.asarray(r, dtype=np.bool_))


def _signed64(it, h):
    return np.asarray(it.val(h)).astype(np.int64)


def _unsigned64(it, h, dtype):
    """The unsigned reading of an integer operand, as np.uint64 (an i64 lane past 2^63 included:
    masking an int64 array with the Python int 2^64 - 1 overflows numpy's C long)."""
    bits = BY_NAME[dtype].bits
    u = _signed64(it, h).astype(np.uint64)  # two's complement: -1 reads 2^64 - 1
    return u if bits >= 64 else u & np.uint64((1 << bits) - 1)


@interp("cmpi")
def _ref_cmpi(it, op):
    a = CmpI.of(op)
    if a.signed:
        x, y = _signed64(it, a.a), _signed64(it, a.b)
    else:
        x, y = _unsigned64(it, a.a, a.dtype), _unsigned64(it, a.b, a.dtype)
    it.set(op.res[0], np.asarray(_CMP[a.pred](x, y), dtype=np.bool_))


def _trunc_div(x, y):
    """x / y rounded toward zero, on int64 lanes. The magnitudes are taken as np.uint64: np.abs of
    the i64 minimum is itself, negative, and floor-divided it gave -18.04 as -19 then 19 (campaign
    2's seeds 2213, 6355, 9220: divi of -2^63)."""
    safe = np.where(y == 0, 1, y)

    def mag(v):
        u = np.asarray(v).astype(np.int64).astype(np.uint64)
        return np.where(np.asarray(v) < 0, ~u + np.uint64(1), u)

    q = mag(x) // mag(safe)
    return np.where((x < 0) ^ (safe < 0), (~q + np.uint64(1)).astype(np.int64), q.astype(np.int64))


@interp("binaryi")
def _ref_binaryi(it, op):
    a = BinaryI.of(op)
    d = BY_NAME[a.dtype]
    bits = d.bits
    name = a.op
    x, y = _signed64(it, a.a), _signed64(it, a.b)
    if name == "addi":
        z = x + y
    elif name == "subi":
        z = x - y
    elif name == "muli":
        z = (x * y) if bits <= 32 else _mul64(x, y)
    elif name == "divi":
        z = _trunc_div(x, y)
    elif name == "remi":
        z = x - _trunc_div(x, y) * y
    elif name == "maxi":
        z = np.maximum(x, y)
    elif name == "mini":
        z = np.minimum(x, y)
    elif name == "mulhii":  # the high half of the product of the UNSIGNED readings
        ux, uy = _unsigned64(it, a.a, a.dtype), _unsigned64(it, a.b, a.dtype)
        z = np.vectorize(lambda p, q: _as_i64((int(p) * int(q)) >> bits), otypes=[np.int64])(ux, uy) \
            if bits > 32 else ((ux * uy) >> np.uint64(bits)).astype(np.int64)
    elif name == "andi":
        z = x & y
    elif name == "ori":
        z = x | y
    elif name == "xori":
        z = x ^ y
    elif name == "shli":
        z = x << (y & 63)
    elif name == "shri":  # arithmetic: the sign is copied down
        z = x >> (y & 63)
    elif name == "shru":  # logical: zeros come in
        z = (_unsigned64(it, a.a, a.dtype) >> (y & 63).astype(np.uint64)).astype(np.int64)
    else:  # pragma: no cover
        raise it.fail(f"no host rule for {name}")
    it.set(op.res[0], wrap_int(d, z))


def _as_i64(n: int) -> int:
    """A Python integer below 2^64 read as a signed 64-bit one (its two's complement)."""
    n &= (1 << 64) - 1
    return n - (1 << 64) if n >> 63 else n


def _mul64(x, y):
    return np.vectorize(lambda p, q: ((int(p) * int(q) + (1 << 63)) % (1 << 64)) - (1 << 63),
                        otypes=[np.int64])(x, y)


@interp("unaryi")
def _ref_unaryi(it, op):
    a = UnaryI.of(op)
    x = _signed64(it, a.a)
    z = -x if a.op == "negi" else np.abs(x)
    it.set(op.res[0], wrap_int(BY_NAME[a.dtype], z))


@interp("select")
def _ref_select(it, op):
    a = Select.of(op)
    it.set(op.res[0], np.where(np.asarray(it.val(a.cond), dtype=bool), it.val(a.a), it.val(a.b)))


@interp("spread")
def _ref_spread(it, op):
    a = Spread.of(op)
    it.set(op.res[0], np.broadcast_to(it.val(a.src), a.shape))
