"""Element-wise arithmetic, comparisons, select and constants.

Shapes: both operands of an element-wise operation have one shape, except that a rank-0 operand
is widened to the other's (the rank-0 rule). Formats: both operands have one format; a ``lit``
(or a Python number) takes the other operand's.
"""

from __future__ import annotations

import builtins
import enum

from ..dev import dev, public
from ..dtypes import BY_NAME, F32, I1, I8, I32, I64, float_dtype
from ..ir import Padding  # noqa: F401  (re-exported by tileir)
from ..values import Lit, Tile
from ._util import dname, h, info, no_lit, refuse

ROUNDINGS = ("nearest_even", "zero", "negative_inf", "positive_inf", "approx", "full", "nearest_int_to_zero",
             "nearest_away")


class Rounding(enum.Enum):
    """A rounding direction (the spec's ``Rounding``): ``rounding=Rounding.Down`` where a mode is
    taken -- add / sub / mul / div, float_to_float -- and the dialect's string ("negative_inf")
    alike; the value is that string. NearestEven is IEEE's default, TowardZero truncates, Down and
    Up round toward -inf and +inf, NearestAway breaks ties away from zero (f32 -> tf32), Approx and
    Full are the transcendentals' modes."""

    NearestEven = "nearest_even"
    TowardZero = "zero"
    Down = "negative_inf"
    Up = "positive_inf"
    NearestAway = "nearest_away"
    Approx = "approx"
    Full = "full"
    NearestIntToZero = "nearest_int_to_zero"


def rounding_name(r) -> str:
    """The dialect's spelling of a rounding direction (``rounding<..>``): a Rounding or the string."""
    name = r.value if isinstance(r, Rounding) else r
    if name not in ROUNDINGS:
        raise refuse(f"unknown rounding {r!r}; the dialect's are {', '.join(ROUNDINGS)} (or tileir.Rounding."
                     f"{', '.join(x.name for x in Rounding)})")
    return name


OVERFLOWS = {"NoAssumption": "none", "NoSignedWrap": "no_signed_wrap", "NoUnsignedWrap": "no_unsigned_wrap",
             "NoWrap": "no_wrap"}


class Overflow(enum.Enum):
    """What an integer operation lets the compiler assume about overflow (an assumption, not
    arithmetic: a program that wraps under one is undefined)."""

    NoAssumption = "none"
    NoSignedWrap = "no_signed_wrap"
    NoUnsignedWrap = "no_unsigned_wrap"
    NoWrap = "no_wrap"


NoAssumption, NoSignedWrap = Overflow.NoAssumption, Overflow.NoSignedWrap
NoUnsignedWrap, NoWrap = Overflow.NoUnsignedWrap, Overflow.NoWrap


def overflow_name(o) -> str:
    """The dialect's spelling of an overflow assumption, as overflow<..> writes it."""
    return OVERFLOWS.get(getattr(o, "name", o), getattr(o, "value", o))


# ---- constants ---------------------------------------------------------------------------------


@public
def f_const(d, value: float) -> Tile:
    """The rank-0 tile of float format ``d`` holding ``value``, rounded to ``d`` where it is made
    (f_const(BF16, 0.1) records 0.10009765625)."""
    d = float_dtype(d)
    return Tile(dev().t_constf(d.name, [], float(value)))


def lit(value: float) -> Lit:
    """A float constant with no format of its own: it takes the format of the operation it meets."""
    return Lit(value)


@public
def full(shape, value, dtype) -> Tile:
    """The tile of ``shape`` every lane of which holds ``value``, in format ``dtype``: exactly what
    broadcast(f_const(dtype, value), shape) records for a float format, and broadcast(consti(dtype,
    value), shape) for an integer one (``value`` then a whole number, truncated to the width)."""
    name = dname(dtype)
    if BY_NAME[name].is_float:
        d = float_dtype(dtype)
        return Tile(dev().t_constf(d.name, list(shape), float(value)))
    if isinstance(value, float) and value != int(value):
        raise refuse(f"full({list(shape)}, {value!r}, {name.upper()}): an integer tile holds whole numbers",
                     f"a whole number, or a float format (full({list(shape)}, {value!r}, F32))")
    return Tile(dev().t_consti(name, list(shape), int(value)))


@public
def i_const(value: int) -> Tile:
    """The rank-0 i32 tile holding ``value``."""
    return Tile(dev().t_consti("i32", [], int(value)))


@public
def i8_const(value: int) -> Tile:
    """The rank-0 i8 tile holding the low octet of ``value``, read signed."""
    return Tile(dev().t_consti("i8", [], int(value)))


@public
def i64_const(value: int) -> Tile:
    """The rank-0 i64 tile holding ``value``."""
    return Tile(dev().t_consti("i64", [], int(value)))


@public
def bool_const(value: bool) -> Tile:
    """The rank-0 i1 tile holding ``value``."""
    return Tile(dev().t_consti("i1", [], 1 if value else 0))


@public
def consti(d, value: int) -> Tile:
    """The rank-0 tile of integer format ``d`` holding ``value``, truncated to the format's width."""
    name = dname(d)
    if BY_NAME[name].is_float:
        raise refuse(f"consti makes integer constants, not {name}", f"f_const({name.upper()}, value)")
    return Tile(dev().t_consti(name, [], int(value)))


# ---- operand resolution ---------------------------------------------------------------------------


def _is_num(x) -> bool:
    return isinstance(x, (Lit, int, float)) and not isinstance(x, bool)


def _as_const(x, dtype: str) -> Tile:
    v = x.value if isinstance(x, Lit) else x
    if BY_NAME[dtype].is_float:
        return Tile(dev().t_constf(dtype, [], float(v)))
    if isinstance(x, Lit):  # the spec: a place that needs a format of its own refuses a lit by name
        raise refuse(f"{x!r} meets an {dtype} tile: lit is a float constant with no format of its own, and an "
                     "integer operation refuses it",
                     f"a Python int, or consti({dtype.upper()}, n) / i_const(n)")
    if isinstance(v, float) and v != int(v):
        raise refuse(f"the constant {v} meets an {dtype} tile and is not a whole number",
                     "a whole number, or convert the tile with int_to_float")
    return Tile(dev().t_consti(dtype, [], int(v)))


def tiles(*xs, what: str):
    """The operands as handles, numbers and lits made in the first tile's format; (handles, dtype,
    shape). Only what the recorder cannot see is checked here: that some operand has a format, and
    how a number meets it (``_as_const``). That the operands are value tiles (``h`` refuses other
    objects), of one format and of one shape or rank 0, and float or integer as the operation needs,
    is the recorder's rule (``ArithRecording.operands``), which every Dev caller meets."""
    typed = [x for x in xs if not _is_num(x)]
    if not typed:
        raise refuse(f"{what} of constants only: a format is needed", "f_const(F32, x) for one of them")
    d0 = info(typed[0])[0]
    out = [(_as_const(x, d0) if _is_num(x) else x) for x in xs]
    shapes = [info(x)[1] for x in out]
    shape = builtins.max(shapes, key=len)
    return [h(x) for x in out], d0, list(shape)


# ---- float arithmetic ------------------------------------------------------------------------


def _binf(op, a, b, rounding="nearest_even", ftz=False, propagate_nan=False, what=None):
    (ha, hb), d, shape = tiles(a, b, what=what or op)
    return Tile(dev().t_binaryf(op, d, shape, ha, hb, rounding_name(rounding), bool(ftz), bool(propagate_nan)))


def _unf(op, a, rounding="", ftz=False):
    (ha,), d, shape = tiles(a, what=op)
    return Tile(dev().t_unaryf(op, d, shape, ha, rounding, bool(ftz)))


@public
def add(a, b, rounding="nearest_even", ftz: bool = False) -> Tile:
    """The element-wise sum of two tiles of one format (correctly rounded: nearest_even by default)."""
    return _binf("addf", a, b, rounding, ftz, what="add")


@public
def sub(a, b, rounding="nearest_even", ftz: bool = False) -> Tile:
    """The element-wise difference a - b."""
    return _binf("subf", a, b, rounding, ftz, what="sub")


@public
def mul(a, b, rounding="nearest_even", ftz: bool = False) -> Tile:
    """The element-wise product a * b."""
    return _binf("mulf", a, b, rounding, ftz, what="mul")


@public
def div(a, b, rounding="nearest_even", ftz: bool = False) -> Tile:
    """The element-wise quotient a / b."""
    return _binf("divf", a, b, rounding, ftz, what="div")


@public
def max(a, b, propagate_nan: bool = False) -> Tile:  # noqa: A001  (the spec's name)
    """The element-wise larger of a and b. Without propagate_nan a NaN operand answers the other
    operand; with it, a NaN operand answers a canonical NaN."""
    return _binf("maxf", a, b, propagate_nan=propagate_nan, what="max")


@public
def min(a, b, propagate_nan: bool = False) -> Tile:  # noqa: A001
    """The element-wise smaller of a and b; propagate_nan as for max."""
    return _binf("minf", a, b, propagate_nan=propagate_nan, what="min")


@public
def remf(a, b) -> Tile:
    """The float remainder a - trunc(a / b) * b: C's fmod, the sign of the dividend (Ops.td RemFOp).
    Exact wherever defined."""
    return _binf("remf", a, b, what="remf")


@public
def pow(a, b) -> Tile:  # noqa: A001
    """a raised to the power b, element-wise. Tolerance tier."""
    return _binf("pow", a, b, what="pow")


@public
def atan2(a, b) -> Tile:
    """atan2 of a over b: the NUMERATOR first (the dialect's x / y is C's atan2(y, x) with the names
    swapped). Tolerance tier."""
    return _binf("atan2", a, b, what="atan2")


@public
def fma(a, b, c) -> Tile:
    """The fused a * b + c, rounded once. Operands of one rank whose shapes differ only in 1s widen
    to the larger shape, as they do for ``+`` and ``*`` (a [64, 1] row scale meets a [64, 64] tile)."""
    from .shape import widen

    a, b, c = widen(a, b, c)
    (ha, hb, hc), d, shape = tiles(a, b, c, what="fma")
    return Tile(dev().t_fma(d, shape, ha, hb, hc, "nearest_even", False))


@public
def neg(a) -> Tile:
    """-a: a sign flip, exact for every value."""
    return _unf("negf", a)


@public
def abs(a) -> Tile:  # noqa: A001
    """|a|: a sign clear, exact for every value."""
    return _unf("absf", a)


@public
def exp(a) -> Tile:
    """e^a (the CUDA Math API's: an approximation, tolerance tier). Its rounding field exists from
    bytecode 13.3; at 13.2 exp carries no attribute."""
    return _unf("exp", a, "full")


@public
def exp2(a) -> Tile:
    """2^a, no flush_to_zero. Tolerance tier."""
    return _unf("exp2", a)


@public
def log(a) -> Tile:
    """The natural logarithm. Tolerance tier."""
    return _unf("log", a)


@public
def log2(a) -> Tile:
    """The base-2 logarithm. Tolerance tier."""
    return _unf("log2", a)


@public
def sqrt(a) -> Tile:
    """The square root, correctly rounded (nearest_even): exact tier."""
    return _unf("sqrt", a, "nearest_even")


@public
def sqrt_approx(a) -> Tile:
    """The square root under the approximate mode (f32 only): tolerance tier."""
    if info(a)[0] != "f32":
        raise refuse("sqrt_approx is f32 only", "sqrt(a) for other formats")
    return _unf("sqrt", a, "approx")


@public
def rsqrt(a) -> Tile:
    """1 / sqrt(a), a hardware approximation. Tolerance tier."""
    return _unf("rsqrt", a)


@public
def tanh(a) -> Tile:
    """The hyperbolic tangent, rounding<full>. Tolerance tier."""
    return _unf("tanh", a, "full")


@public
def floor(a) -> Tile:
    """The largest integer not above a: exact."""
    return _unf("floor", a)


@public
def ceil(a) -> Tile:
    """The smallest integer not below a: exact."""
    return _unf("ceil", a)


# From this magnitude up every value of the format is a whole number: 2^(p-1), p the significand's
# bits with the hidden one. Below it, |a| + 2^(p-1) lands where the spacing is exactly 1.
_WHOLE_FROM = {"f16": 2.0**10, "bf16": 2.0**7, "f32": 2.0**23, "f64": 2.0**52}
_SAME_WIDTH_INT = {"f16": "i16", "bf16": "i16", "f32": "i32", "f64": "i64"}


@public
def rint(a) -> Tile:
    """Each lane rounded to the nearest whole number, ties to EVEN (numpy's rint, C's nearbyint), in
    a's own format (f16, bf16, f32 or f64); the sign of a zero and of a lane rounded to zero is a's,
    and infinities and NaN come back as they are. Exact tier.

    Tile IR has no such instruction, so it is composed: |a| + 2^(p-1) - 2^(p-1) rounds |a| by the
    add's own nearest-even rounding (p the format's significand bits), the sign is put back from
    a's sign bit, and lanes from 2^(p-1) up (already whole) keep a."""
    no_lit(a, "rint")
    d, shape = info(a)
    if d not in _WHOLE_FROM:
        raise refuse(f"rint of an {d} tile: rint rounds f16, bf16, f32 or f64 lanes",
                     "int_to_float the tile first" if not BY_NAME[d].is_float else "to(t, F32) first")
    big = _WHOLE_FROM[d]
    m = abs(a)
    whole = sub(add(m, big), big)
    bits = Tile(dev().t_convert("bitcast", d, _SAME_WIDTH_INT[d], list(shape), h(a)))
    signed = select(_cmpi("lt", bits, 0), neg(whole), whole)
    return select(lt(m, big), signed, a)


@public
def sin(a) -> Tile:
    """The sine (an approximation). Tolerance tier."""
    return _unf("sin", a)


@public
def cos(a) -> Tile:
    """The cosine. Tolerance tier."""
    return _unf("cos", a)


@public
def tan(a) -> Tile:
    """The tangent; keep a corpus off its poles. Tolerance tier."""
    return _unf("tan", a)


@public
def sinh(a) -> Tile:
    """The hyperbolic sine. Tolerance tier."""
    return _unf("sinh", a)


@public
def cosh(a) -> Tile:
    """The hyperbolic cosine. Tolerance tier."""
    return _unf("cosh", a)


# ---- comparisons and select ---------------------------------------------------------------------


def _cmpf(pred, a, b, ordered=True):
    (ha, hb), d, shape = tiles(a, b, what=pred)
    return Tile(dev().t_cmpf(pred, d, shape, ha, hb, ordered))


def _cmpi(pred, a, b):
    (ha, hb), d, shape = tiles(a, b, what=pred + "_i")
    return Tile(dev().t_cmpi(pred, shape, ha, hb, True, d))


@public
def eq(a, b) -> Tile:
    """a == b over a float format: ORDERED, so a NaN operand answers 0 (for all six, ne too)."""
    return _cmpf("eq", a, b)


@public
def ne(a, b) -> Tile:
    """a != b, ordered: a NaN operand answers 0."""
    return _cmpf("ne", a, b)


@public
def lt(a, b) -> Tile:
    """a < b, ordered."""
    return _cmpf("lt", a, b)


@public
def le(a, b) -> Tile:
    """a <= b, ordered."""
    return _cmpf("le", a, b)


@public
def gt(a, b) -> Tile:
    """a > b, ordered."""
    return _cmpf("gt", a, b)


@public
def ge(a, b) -> Tile:
    """a >= b, ordered."""
    return _cmpf("ge", a, b)


@public
def eq_u(a, b) -> Tile:
    """a == b or either operand a NaN."""
    return _cmpf("eq", a, b, False)


@public
def ne_u(a, b) -> Tile:
    """a != b or either operand a NaN."""
    return _cmpf("ne", a, b, False)


@public
def lt_u(a, b) -> Tile:
    """a < b or either operand a NaN."""
    return _cmpf("lt", a, b, False)


@public
def le_u(a, b) -> Tile:
    """a <= b or either operand a NaN."""
    return _cmpf("le", a, b, False)


@public
def gt_u(a, b) -> Tile:
    """a > b or either operand a NaN."""
    return _cmpf("gt", a, b, False)


@public
def ge_u(a, b) -> Tile:
    """a >= b or either operand a NaN."""
    return _cmpf("ge", a, b, False)


@public
def eq_i(a, b) -> Tile:
    """a == b over two i32 tiles, signed."""
    return _cmpi("eq", a, b)


@public
def ne_i(a, b) -> Tile:
    """a != b over two i32 tiles."""
    return _cmpi("ne", a, b)


@public
def lt_i(a, b) -> Tile:
    """a < b over two i32 tiles, signed."""
    return _cmpi("lt", a, b)


@public
def le_i(a, b) -> Tile:
    """a <= b over two i32 tiles, signed."""
    return _cmpi("le", a, b)


@public
def gt_i(a, b) -> Tile:
    """a > b over two i32 tiles, signed."""
    return _cmpi("gt", a, b)


@public
def ge_i(a, b) -> Tile:
    """a >= b over two i32 tiles, signed."""
    return _cmpi("ge", a, b)


@public
def select(cond, a, b) -> Tile:
    """Lane i of a where lane i of cond is 1, of b where it is 0; a rank-0 cond or value widens."""
    (ha, hb), d, shape = tiles(a, b, what="select")
    cshape = info(cond)[1]
    if len(cshape) > len(shape):
        shape = list(cshape)
    return Tile(dev().t_select(d, shape, h(cond), ha, hb))


# ---- integer arithmetic ----------------------------------------------------------------------


def _check_overflow(op: str, overflow) -> str:
    name = overflow_name(overflow)
    allowed = {"addi": "no_signed_wrap", "subi": "no_unsigned_wrap", "muli": "no_wrap"}
    if name != "none" and allowed.get(op) != name:
        raise refuse(f"{op} with overflow {name}: the pairings written are add_i with NoSignedWrap, sub_i "
                     "with NoUnsignedWrap and mul_i with NoWrap", "NoAssumption, or the pairing above")
    return name


def _bini(op, a, b, overflow="none", what=None):
    (ha, hb), d, shape = tiles(a, b, what=what or op)
    return Tile(dev().t_binaryi(op, d, shape, ha, hb, overflow))


# The spelling of each i32-only operation that takes integer tiles of any width, where there is one.
_ANY_WIDTH = {"addi": "addi", "subi": "subi", "muli": "muli", "andi": "andi", "ori": "ori", "xori": "xori",
              "shli": "shli", "shri": "shri"}


def _i32(op, a, b, overflow="none", what=None):
    """An i32-only spelling: the recorder takes integer tiles of any width (and refuses float ones),
    so the width is the one rule checked here."""
    (ha, hb), d, shape = tiles(a, b, what=what or op)
    if d != "i32" and not BY_NAME[d].is_float:
        generic = _ANY_WIDTH.get(op)
        fix = (f"{generic}(a, b), which takes integer tiles of any one format" if generic else
               "i32 operands: widen them first (ext_u8 / ext_i4), or narrow the answer back with trunc_u8")
        raise refuse(f"{what or op} takes i32 tiles, got {d}", fix)
    return Tile(dev().t_binaryi(op, d, shape, ha, hb, overflow))


@public
def add_i(a, b, overflow="NoAssumption") -> Tile:
    """a + b over i32, wrapping modulo 2^32 (overflow: NoAssumption, or NoSignedWrap)."""
    return _i32("addi", a, b, _check_overflow("addi", overflow), "add_i")


@public
def sub_i(a, b, overflow="NoAssumption") -> Tile:
    """a - b over i32, wrapping (overflow: NoAssumption, or NoUnsignedWrap)."""
    return _i32("subi", a, b, _check_overflow("subi", overflow), "sub_i")


@public
def mul_i(a, b, overflow="NoAssumption") -> Tile:
    """a * b over i32: the low 32 bits of the product (overflow: NoAssumption, or NoWrap)."""
    return _i32("muli", a, b, _check_overflow("muli", overflow), "mul_i")


@public
def div_i(a, b) -> Tile:
    """a / b over i32, signed, rounded toward zero. Division by zero is undefined on the device."""
    return _i32("divi", a, b, what="div_i")


@public
def rem_i(a, b) -> Tile:
    """a % b over i32, signed: the sign follows the dividend."""
    return _i32("remi", a, b, what="rem_i")


@public
def max_i(a, b) -> Tile:
    """The signed larger of a and b."""
    return _i32("maxi", a, b, what="max_i")


@public
def min_i(a, b) -> Tile:
    """The signed smaller of a and b."""
    return _i32("mini", a, b, what="min_i")


@public
def mulhi_i(a, b) -> Tile:
    """The high 32 bits of the 64-bit product, operands read UNSIGNED (MulhiIOp has no signedness)."""
    return _i32("mulhii", a, b, what="mulhi_i")


@public
def and_i(a, b) -> Tile:
    """Bitwise a & b."""
    return _i32("andi", a, b, what="and_i")


@public
def or_i(a, b) -> Tile:
    """Bitwise a | b."""
    return _i32("ori", a, b, what="or_i")


@public
def xor_i(a, b) -> Tile:
    """Bitwise a ^ b."""
    return _i32("xori", a, b, what="xor_i")


@public
def shl_i(a, b) -> Tile:
    """a << b, wrapping; a count outside [0, 32) is undefined on the device."""
    return _i32("shli", a, b, what="shl_i")


@public
def shr_i(a, b) -> Tile:
    """a >> b, ARITHMETIC: the sign bit is copied down (shri signedness<signed>)."""
    return _i32("shri", a, b, what="shr_i")


@public
def shr_u(a, b) -> Tile:
    """a >>> b, LOGICAL: zeros come in (the same opcode as shr_i, signedness<unsigned>)."""
    return _i32("shru", a, b, what="shr_u")


@public
def neg_i(a) -> Tile:
    """-a over i32, wrapping (-(-2^31) is -2^31)."""
    (ha,), d, shape = tiles(a, what="neg_i")
    return Tile(dev().t_unaryi("negi", d, shape, ha, "none"))


@public
def abs_i(a) -> Tile:
    """|a| over i32, wrapping (|-2^31| is -2^31)."""
    (ha,), d, shape = tiles(a, what="abs_i")
    return Tile(dev().t_unaryi("absi", d, shape, ha, "none"))


@public
def addi(a, b) -> Tile:
    """a + b over two integer tiles of one format, wrapping."""
    return _bini("addi", a, b)


@public
def subi(a, b) -> Tile:
    """a - b over integer tiles, wrapping."""
    return _bini("subi", a, b)


@public
def muli(a, b) -> Tile:
    """a * b over integer tiles: the low bits of the exact product."""
    return _bini("muli", a, b)


@public
def shli(a, b) -> Tile:
    """a << b over integer tiles, wrapping."""
    return _bini("shli", a, b)


@public
def shri(a, b) -> Tile:
    """a >> b over integer tiles, arithmetic."""
    return _bini("shri", a, b)


@public
def andi(a, b) -> Tile:
    """Bitwise a & b over two integer tiles of one format, any width (``and_i`` is the i32 one)."""
    return _bini("andi", a, b, what="andi")


@public
def ori(a, b) -> Tile:
    """Bitwise a | b over two integer tiles of one format, any width (``or_i`` is the i32 one)."""
    return _bini("ori", a, b, what="ori")


@public
def xori(a, b) -> Tile:
    """Bitwise a ^ b over two integer tiles of one format, any width (``xor_i`` is the i32 one)."""
    return _bini("xori", a, b, what="xori")


@public
def add_i64(a, b) -> Tile:
    """a + b over i64 tiles (address arithmetic)."""
    return _bini("addi", a, b, what="add_i64")


__all__ = ["F32", "I1", "I8", "I32", "I64"]
