"""The element-wise operations, one row each: float and integer math, comparisons, conversions.

A row names the public function (``tileir.<name>``; its signature and docstring are the thin
function of that name in ``surface/``, whose body hands its arguments to the row), the formats it
takes, the attributes it fixes, the cuda_tile operation it becomes (by name: ``dialect.OPS`` is the
one table of opcodes, operands and attribute fields), its host rule, its tier and the layer-2
family that compares it on the device. Everything else is read from here:

* the surface (``surface/arith.py``, ``surface/convert.py``): which kind it records, with which op
  and fixed attributes, and the formats it refuses (``surface/elementwise.py``);
* the recorder (``families/arith.py``, ``families/convert.py``): an op no row names is refused;
* the lowering: a comparison's dialect predicate (the rules are otherwise the same for every op);
* ``generic``: the dialect operation and the attribute values the op fixes (shru's signedness,
  ftof_zero's rounding ...); which attributes it carries, their defaults and operand names come
  from its ``dialect.OpDef``;
* the host reference: the row's rule, computed in the format's working precision for an exact op
  and in f64 rounded once for a tolerance-tier one;
* layer 2 (``diff/``): each family's operations (``Family.ops``), the unary families' cases and
  their independent answers (``oracle``), the fuzz judge's tolerance-tier ops and the fuzz
  builder's functions; tests/test_elementwise.py holds every row's family to recording it.

Several rows may share one recorded op (``max_i`` is i32-only, ``maxi`` any width; ``sqrt_approx``
is sqrt under rounding<approx>): the op's first row gives its dialect operation, fixed attributes
and host rule, and a later row of the op leaves them out (``ROWS`` has them filled in).
``float_to_float`` and ``float_to_int`` name several rows: their ``rounding`` / ``saturating``
argument picks the op.

Adding an element-wise operation is a row here and its function (signature, docstring, one line)
in ``surface/``, exported from ``tileir`` and listed in docs/reference (docs/design.md shows one).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from . import hostmath as H
from .dialect import BY_NAME as DIALECT
from .dtypes import wrap_int

EXACT, TOLERANCE = "exact", "tolerance"
FLOAT, INT = "float", "int"  # any float format / any integer format (the recorder's rule for the kind)
KINDS = ("unaryf", "binaryf", "fma", "cmpf", "cmpi", "unaryi", "binaryi", "convert")


@dataclass(frozen=True)
class Row:
    """One element-wise public function. Its host rule takes, by kind (and answers the lanes before
    the format's rounding or wrapping, which the kind's interp rule does; a conversion's answers
    lanes of its target):

    * unaryf ``fn(x)``: x in the format's working precision (exact tier) or f64 (tolerance tier);
    * binaryf ``fn(x, y, a)``: likewise, ``a`` the BinaryF record; Fractions too where the dialect
      operation takes a rounding (a directed mode rounds the exact result once);
    * fma ``fn(a, b, c, dtype)``: the lanes rounded once into dtype;
    * cmpf / cmpi ``fn(x, y)``: f64 lanes (ordered or not is the interp rule's) / int64 lanes read
      signed or unsigned as recorded;
    * unaryi ``fn(x, d)`` / binaryi ``fn(x, y, d)``: int64 lanes read signed, ``d`` the format;
    * convert ``fn(x, f, t)``: the lanes of format f, the format t.
    """

    name: str  # the public function, tileir.<name>
    kind: str  # the recorded kind (prog.Attrs): one of KINDS
    op: str  # the recorded op: UnaryF.op, BinaryF.op, CmpF.pred, BinaryI.op, Convert.op ("fma" for fma)
    formats: str | tuple  # what the function takes: FLOAT, INT or the formats by name (("i32",), ("f32",))
    dialect: str = ""  # the cuda_tile operation (dialect.BY_NAME); "" on a later row of an op
    fixed: tuple = ()  # dialect attributes the op fixes, ((name, value), ...); () on a later row of an op
    host: Callable | None = None  # the host rule (above); None on a later row of an op
    tier: str = EXACT  # exact | tolerance: the device answers bit for bit, or within the family's bound
    corpus: str = ""  # the layer-2 family that compares it on the device ("" none yet)
    oracle: Callable | None = None  # that family's independent answer for one lane (unary families)
    rounding: str = ""  # unaryf: the rounding it records ("" the op's default)
    ordered: bool = True  # cmpf: ordered (a NaN operand answers 0) or not
    overflow: str = ""  # binaryi: the overflow assumption the function may write besides none
    to: str = ""  # convert: the format it converts to ("" an argument of the function)

    def fixed_value(self, name: str, default=None):
        for k, v in self.fixed:
            if k == name:
                return v
        return default


# ---- host rules and layer-2 oracles that are more than a library function ----------------------------


def _log(x: float) -> float:
    return -math.inf if x == 0 else math.log(x)


def _log2(x: float) -> float:
    return -math.inf if x == 0 else math.log2(x)


def _rsqrt(x: float) -> float:
    return math.copysign(math.inf, x) if x == 0 else 1.0 / math.sqrt(x)


def _sin(x: float) -> float:
    from .ref.second import ref_sin

    return float(ref_sin(x))


def _exti(x, f, t):
    return wrap_int(t, x.astype(np.int64) & ((1 << f.bits) - 1))


def _same(x, f, t):
    return wrap_int(t, x.astype(np.int64))


def _bitcast(x, f, t):
    return np.ascontiguousarray(x).view(t.np_dtype)


def _ftof(mode: str):
    return lambda x, f, t: H.device_ftof(x.astype(np.float64), f.name, t, mode)


_CMP = (("eq", "equal", np.equal), ("ne", "not_equal", np.not_equal), ("lt", "less_than", np.less),
        ("le", "less_than_or_equal", np.less_equal), ("gt", "greater_than", np.greater),
        ("ge", "greater_than_or_equal", np.greater_equal))
_PRED = {p: (name, fn) for p, name, fn in _CMP}


def _cmp(name, kind, pred, formats, corpus, ordered=True):
    """A comparison's row (the predicate's dialect name and numpy function on the op's first row)."""
    dialect_name, fn = _PRED[pred]
    return Row(name, kind, pred, formats, kind, (("predicate", dialect_name),), fn, corpus=corpus, ordered=ordered)


_I32 = ("i32",)
_PICKED = ("float_to_float", "float_to_int")  # functions whose argument picks one of their rows

_TABLE = (
    # ---- float, one operand: UnaryF. Exact first, then the approximations (the fuzzer's order)
    Row("neg", "unaryf", "negf", FLOAT, "negf", host=np.negative, corpus="float_sign", oracle=np.negative),
    Row("abs", "unaryf", "absf", FLOAT, "absf", host=np.abs, corpus="float_sign", oracle=np.abs),
    Row("floor", "unaryf", "floor", FLOAT, "floor", host=np.floor, corpus="float_sign", oracle=np.floor),
    Row("ceil", "unaryf", "ceil", FLOAT, "ceil", host=np.ceil, corpus="float_sign", oracle=np.ceil),
    Row("sqrt", "unaryf", "sqrt", FLOAT, "sqrt", host=np.sqrt, corpus="float_arith", rounding="nearest_even"),
    Row("exp", "unaryf", "exp", FLOAT, "exp", host=np.exp, tier=TOLERANCE, corpus="transcendental",
        oracle=math.exp, rounding="full"),
    Row("exp2", "unaryf", "exp2", FLOAT, "exp2", host=np.exp2, tier=TOLERANCE, corpus="transcendental",
        oracle=lambda x: 2.0 ** x),
    Row("log", "unaryf", "log", FLOAT, "log", host=np.log, tier=TOLERANCE, corpus="transcendental", oracle=_log),
    Row("log2", "unaryf", "log2", FLOAT, "log2", host=np.log2, tier=TOLERANCE, corpus="transcendental",
        oracle=_log2),
    Row("tanh", "unaryf", "tanh", FLOAT, "tanh", host=np.tanh, tier=TOLERANCE, corpus="transcendental",
        oracle=math.tanh, rounding="full"),
    Row("sin", "unaryf", "sin", FLOAT, "sin", host=np.sin, tier=TOLERANCE, corpus="transcendental", oracle=_sin),
    Row("cos", "unaryf", "cos", FLOAT, "cos", host=np.cos, tier=TOLERANCE, corpus="transcendental", oracle=math.cos),
    Row("tan", "unaryf", "tan", FLOAT, "tan", host=np.tan, tier=TOLERANCE, corpus="transcendental", oracle=math.tan),
    Row("sinh", "unaryf", "sinh", FLOAT, "sinh", host=np.sinh, tier=TOLERANCE, corpus="transcendental",
        oracle=math.sinh),
    Row("cosh", "unaryf", "cosh", FLOAT, "cosh", host=np.cosh, tier=TOLERANCE, corpus="transcendental",
        oracle=math.cosh),
    Row("rsqrt", "unaryf", "rsqrt", FLOAT, "rsqrt", host=lambda x: 1.0 / np.sqrt(x), tier=TOLERANCE,
        corpus="transcendental", oracle=_rsqrt),
    Row("sqrt_approx", "unaryf", "sqrt", ("f32",), tier=TOLERANCE, rounding="approx"),
    # ---- float, two operands: BinaryF; fma
    Row("add", "binaryf", "addf", FLOAT, "addf", host=lambda x, y, a: x + y, corpus="float_arith"),
    Row("sub", "binaryf", "subf", FLOAT, "subf", host=lambda x, y, a: x - y, corpus="float_arith"),
    Row("mul", "binaryf", "mulf", FLOAT, "mulf", host=lambda x, y, a: x * y, corpus="float_arith"),
    Row("div", "binaryf", "divf", FLOAT, "divf", host=lambda x, y, a: x / y, corpus="float_arith"),
    Row("max", "binaryf", "maxf", FLOAT, "maxf", host=lambda x, y, a: H.maxmin(x, y, True, a.propagate_nan),
        corpus="float_maxmin"),
    Row("min", "binaryf", "minf", FLOAT, "minf", host=lambda x, y, a: H.maxmin(x, y, False, a.propagate_nan),
        corpus="float_maxmin"),
    Row("remf", "binaryf", "remf", FLOAT, "remf", host=lambda x, y, a: np.fmod(x, y), corpus="remf"),
    Row("pow", "binaryf", "pow", FLOAT, "fpowf", host=lambda x, y, a: np.power(x, y), tier=TOLERANCE,
        corpus="transcendental"),
    Row("atan2", "binaryf", "atan2", FLOAT, "atan2", host=lambda x, y, a: np.arctan2(x, y), tier=TOLERANCE,
        corpus="atan2"),
    Row("fma", "fma", "fma", FLOAT, "fma", host=H.fma_exact, corpus="float_arith"),
    # ---- comparisons: CmpF (ordered, then unordered), CmpI
    _cmp("eq", "cmpf", "eq", FLOAT, "float_cmp"),
    _cmp("ne", "cmpf", "ne", FLOAT, "float_cmp"),
    _cmp("lt", "cmpf", "lt", FLOAT, "float_cmp"),
    _cmp("le", "cmpf", "le", FLOAT, "float_cmp"),
    _cmp("gt", "cmpf", "gt", FLOAT, "float_cmp"),
    _cmp("ge", "cmpf", "ge", FLOAT, "float_cmp"),
    Row("eq_u", "cmpf", "eq", FLOAT, corpus="float_cmp", ordered=False),
    Row("ne_u", "cmpf", "ne", FLOAT, corpus="float_cmp", ordered=False),
    Row("lt_u", "cmpf", "lt", FLOAT, corpus="float_cmp", ordered=False),
    Row("le_u", "cmpf", "le", FLOAT, corpus="float_cmp", ordered=False),
    Row("gt_u", "cmpf", "gt", FLOAT, corpus="float_cmp", ordered=False),
    Row("ge_u", "cmpf", "ge", FLOAT, corpus="float_cmp", ordered=False),
    _cmp("eq_i", "cmpi", "eq", INT, "int_cmp"),
    _cmp("ne_i", "cmpi", "ne", INT, "int_cmp"),
    _cmp("lt_i", "cmpi", "lt", INT, "int_cmp"),
    _cmp("le_i", "cmpi", "le", INT, "int_cmp"),
    _cmp("gt_i", "cmpi", "gt", INT, "int_cmp"),
    _cmp("ge_i", "cmpi", "ge", INT, "int_cmp"),
    # ---- integers: BinaryI, UnaryI. The i32 spellings, then those of any width
    Row("add_i", "binaryi", "addi", _I32, "addi", host=lambda x, y, d: x + y, corpus="int_arith",
        overflow="no_signed_wrap"),
    Row("sub_i", "binaryi", "subi", _I32, "subi", host=lambda x, y, d: x - y, corpus="int_arith",
        overflow="no_unsigned_wrap"),
    Row("mul_i", "binaryi", "muli", _I32, "muli", host=lambda x, y, d: H.mul_low(x, y, d.bits), corpus="int_arith",
        overflow="no_wrap"),
    Row("div_i", "binaryi", "divi", _I32, "divi", host=lambda x, y, d: H.trunc_div(x, y), corpus="int_arith"),
    Row("rem_i", "binaryi", "remi", _I32, "remi", host=lambda x, y, d: x - H.trunc_div(x, y) * y,
        corpus="int_arith"),
    Row("max_i", "binaryi", "maxi", _I32, "maxi", host=lambda x, y, d: np.maximum(x, y), corpus="int_arith"),
    Row("min_i", "binaryi", "mini", _I32, "mini", host=lambda x, y, d: np.minimum(x, y), corpus="int_arith"),
    Row("mulhi_i", "binaryi", "mulhii", _I32, "mulhii", host=lambda x, y, d: H.mul_high(x, y, d.bits),
        corpus="int_arith"),
    Row("and_i", "binaryi", "andi", _I32, "andi", host=lambda x, y, d: x & y, corpus="int_arith"),
    Row("or_i", "binaryi", "ori", _I32, "ori", host=lambda x, y, d: x | y, corpus="int_arith"),
    Row("xor_i", "binaryi", "xori", _I32, "xori", host=lambda x, y, d: x ^ y, corpus="int_arith"),
    Row("shl_i", "binaryi", "shli", _I32, "shli", host=lambda x, y, d: x << (y & 63), corpus="int_arith"),
    Row("shr_i", "binaryi", "shri", _I32, "shri", (("signedness", "signed"),),
        host=lambda x, y, d: x >> (y & 63), corpus="int_arith"),
    Row("shr_u", "binaryi", "shru", _I32, "shri", (("signedness", "unsigned"),),
        host=lambda x, y, d: (H.unsigned(x, d.bits) >> (y & 63).astype(np.uint64)).astype(np.int64),
        corpus="int_arith"),
    Row("neg_i", "unaryi", "negi", INT, "negi", host=lambda x, d: -x, corpus="int_arith"),
    Row("abs_i", "unaryi", "absi", INT, "absi", host=lambda x, d: np.abs(x), corpus="int_arith"),
    Row("addi", "binaryi", "addi", INT, corpus="int_arith"),
    Row("subi", "binaryi", "subi", INT, corpus="int_arith"),
    Row("muli", "binaryi", "muli", INT, corpus="int_arith"),
    Row("shli", "binaryi", "shli", INT, corpus="int_arith"),
    Row("shri", "binaryi", "shri", INT, corpus="int_arith"),
    Row("andi", "binaryi", "andi", INT, corpus="int_arith"),
    Row("ori", "binaryi", "ori", INT, corpus="int_arith"),
    Row("xori", "binaryi", "xori", INT, corpus="int_arith"),
    Row("add_i64", "binaryi", "addi", INT, corpus="int_arith"),
    # ---- conversions: Convert
    Row("float_to_float", "convert", "ftof", FLOAT, "ftof", (("rounding", "nearest_even"),), _ftof("nearest_even"),
        corpus="ftof"),
    Row("float_to_float", "convert", "ftof_zero", FLOAT, "ftof", (("rounding", "zero"),), _ftof("zero"),
        corpus="ftof"),
    Row("float_to_float", "convert", "ftof_neg_inf", FLOAT, "ftof", (("rounding", "negative_inf"),),
        _ftof("negative_inf"), corpus="ftof"),
    Row("float_to_float", "convert", "ftof_pos_inf", FLOAT, "ftof", (("rounding", "positive_inf"),),
        _ftof("positive_inf"), corpus="ftof"),
    Row("float_to_float", "convert", "ftof_away", FLOAT, "ftof", (("rounding", "nearest_away"),),
        _ftof("nearest_away"), corpus="ftof"),
    Row("int_to_float", "convert", "itof", INT, "itof", host=lambda x, f, t: H.int_to_float(x, t), corpus="itof"),
    Row("float_to_int", "convert", "ftoi", FLOAT, "ftoi", (("saturating", False),),
        lambda x, f, t: H.float_to_int(x, t, False), corpus="ftoi"),
    Row("float_to_int", "convert", "ftoi_sat", FLOAT, "ftoi", (("saturating", True),),
        lambda x, f, t: H.float_to_int(x, t, True), corpus="ftoi"),
    Row("mask_to_int", "convert", "exti", ("i1",), "exti", (("signedness", "unsigned"),), _exti, corpus="int_widen",
        to="i32"),
    Row("ext_u8", "convert", "exti", ("i8",), corpus="int_widen", to="i32"),
    Row("ext_u4", "convert", "exti", ("i4",), corpus="int_widen", to="i32"),
    Row("ext_i4", "convert", "extis", ("i4",), "exti", (("signedness", "signed"),), _same, corpus="int_widen",
        to="i32"),
    Row("ext_i8", "convert", "extis", ("i8",), corpus="int_widen", to="i32"),
    Row("int_to_mask", "convert", "trunci", _I32, "trunci", host=_same, corpus="int_widen", to="i1"),
    Row("trunc_u8", "convert", "trunci", _I32, corpus="int_widen", to="i8"),
    Row("trunc_i4", "convert", "trunci", _I32, corpus="int_widen", to="i4"),
    Row("bits_to_float", "convert", "bitcast", _I32, "bitcast", host=_bitcast, corpus="bitcast", to="f32"),
    Row("bits_to_int", "convert", "bitcast", ("f32",), corpus="bitcast", to="i32"),
)


def _require(ok: bool, where: str, why: str) -> None:
    if not ok:
        raise ValueError(f"elementwise row {where}: {why}")


def _resolve(table) -> tuple:
    """Every row with its op's dialect operation, fixed attributes and host rule filled in, after
    checking the table: each op's first row gives them and a later row does not, every dialect
    operation and fixed attribute exists, and a name is one function's (float_to_float / _int
    excepted: their argument picks the row)."""
    first: dict = {}
    names: dict = {}
    out = []
    for r in table:
        where = f"{r.name!r} ({r.kind} {r.op})"
        _require(r.kind in KINDS and r.tier in (EXACT, TOLERANCE), where, "an unknown kind or tier")
        _require(r.formats in (FLOAT, INT) or (isinstance(r.formats, tuple) and bool(r.formats)), where,
                 "formats are FLOAT, INT or a tuple of format names")
        _require(r.name not in names or (r.name in _PICKED and names[r.name] == r.kind), where,
                 "the name is another row's function")
        names[r.name] = r.kind
        head = first.get((r.kind, r.op))
        if head is None:
            _require(r.dialect in DIALECT and r.host is not None, where,
                     "an op's first row names its dialect operation and its host rule")
            d = DIALECT[r.dialect]
            fields = {a.name for a in d.attrs} | {f.name for f in d.flags}
            _require(all(k in fields for k, _ in r.fixed), where, f"{r.dialect} has no such attribute")
            first[(r.kind, r.op)] = r
            out.append(r)
        else:
            _require(not r.dialect and not r.fixed and r.host is None, where,
                     "the dialect operation, fixed attributes and host rule are the op's first row's")
            out.append(replace(r, dialect=head.dialect, fixed=head.fixed, host=head.host))
    return tuple(out)


ROWS: tuple = _resolve(_TABLE)
BY_NAME: dict = {}  # name -> its row (float_to_float / float_to_int: the row of the default argument)
OPS: dict = {}  # (kind, op) -> the op's first row: its host rule and tier
for _r in ROWS:
    BY_NAME.setdefault(_r.name, _r)
    OPS.setdefault((_r.kind, _r.op), _r)
del _r


def ops_of(kind: str) -> tuple:
    """The recorded ops of ``kind``, in the table's order."""
    return tuple(op for k, op in OPS if k == kind)


def of_corpus(family: str) -> tuple:
    """The rows a layer-2 family compares on the device, in the table's order."""
    return tuple(r for r in ROWS if r.corpus == family)


def dialect_ops(family: str) -> tuple:
    """The cuda_tile operations of a layer-2 family's rows (``Family.ops``), in the table's order."""
    return tuple(dict.fromkeys(r.dialect for r in of_corpus(family)))


def tolerance_ops(kind: str) -> tuple:
    """The recorded ops of ``kind`` whose device answer is an approximation (the op's first row's tier)."""
    return tuple(op for (k, op), r in OPS.items() if k == kind and r.tier == TOLERANCE)


def any_width(op: str) -> str | None:
    """The function that records binaryi ``op`` on integer tiles of any width, where there is one."""
    return next((r.name for r in ROWS if r.kind == "binaryi" and r.op == op and r.formats == INT), None)


def takes_ftz(row: Row) -> bool:
    """Whether the row's dialect operation carries the flush_to_zero unit attribute."""
    return any(f.name == "flush_to_zero" for f in DIALECT[row.dialect].flags)


__all__ = ["Row", "ROWS", "BY_NAME", "OPS", "EXACT", "TOLERANCE", "FLOAT", "INT", "KINDS",
           "ops_of", "of_corpus", "dialect_ops", "tolerance_ops", "any_width", "takes_ftz"]
