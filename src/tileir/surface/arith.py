"""Element-wise arithmetic, comparisons, select and constants.

Each element-wise function here is a row of ``tileir.elementwise``: its body hands its arguments to
the row (``record``, surface/elementwise.py), which says what it records.

Shapes: both operands of an element-wise operation have one shape, except that a rank-0 operand
is widened to the other's (the rank-0 rule). Formats: both operands have one format; a ``lit``
(or a Python number) takes the other operand's.
"""

from __future__ import annotations

from ..dev import dev, public
from ..dtypes import BY_NAME, F32, I1, I8, I32, I64, float_dtype
from ..ir import Padding  # noqa: F401  (re-exported by tileir)
from ..values import Lit, Tile
from ._util import dname, h, info, no_lit, refuse
from .elementwise import (  # noqa: F401  (Rounding ... are re-exported by tileir; tiles by the other families)
    OVERFLOWS,
    ROUNDINGS,
    Overflow,
    Rounding,
    overflow_name,
    record,
    record_op,
    rounding_name,
    tiles,
)

NoAssumption, NoSignedWrap = Overflow.NoAssumption, Overflow.NoSignedWrap
NoUnsignedWrap, NoWrap = Overflow.NoUnsignedWrap, Overflow.NoWrap


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


# ---- float arithmetic ------------------------------------------------------------------------


def _binf(op, a, b):
    """The binaryf ``op`` of two float tiles (the reductions' bodies)."""
    return record_op("binaryf", op, a, b)


@public
def add(a, b, rounding="nearest_even", ftz: bool = False) -> Tile:
    """The element-wise sum of two tiles of one format (correctly rounded: nearest_even by default)."""
    return record("add", a, b, rounding=rounding, ftz=ftz)


@public
def sub(a, b, rounding="nearest_even", ftz: bool = False) -> Tile:
    """The element-wise difference a - b."""
    return record("sub", a, b, rounding=rounding, ftz=ftz)


@public
def mul(a, b, rounding="nearest_even", ftz: bool = False) -> Tile:
    """The element-wise product a * b."""
    return record("mul", a, b, rounding=rounding, ftz=ftz)


@public
def div(a, b, rounding="nearest_even", ftz: bool = False) -> Tile:
    """The element-wise quotient a / b."""
    return record("div", a, b, rounding=rounding, ftz=ftz)


@public
def max(a, b, propagate_nan: bool = False) -> Tile:  # noqa: A001  (the spec's name)
    """The element-wise larger of a and b. Without propagate_nan a NaN operand answers the other
    operand; with it, a NaN operand answers a canonical NaN."""
    return record("max", a, b, propagate_nan=propagate_nan)


@public
def min(a, b, propagate_nan: bool = False) -> Tile:  # noqa: A001
    """The element-wise smaller of a and b; propagate_nan as for max."""
    return record("min", a, b, propagate_nan=propagate_nan)


@public
def remf(a, b) -> Tile:
    """The float remainder a - trunc(a / b) * b: C's fmod, the sign of the dividend (Ops.td RemFOp).
    Exact wherever defined."""
    return record("remf", a, b)


@public
def pow(a, b) -> Tile:  # noqa: A001
    """a raised to the power b, element-wise. Tolerance tier."""
    return record("pow", a, b)


@public
def atan2(a, b) -> Tile:
    """atan2 of a over b: the NUMERATOR first (the dialect's x / y is C's atan2(y, x) with the names
    swapped). Tolerance tier."""
    return record("atan2", a, b)


@public
def fma(a, b, c) -> Tile:
    """The fused a * b + c, rounded once. Operands of one rank whose shapes differ only in 1s widen
    to the larger shape, as they do for ``+`` and ``*`` (a [64, 1] row scale meets a [64, 64] tile)."""
    return record("fma", a, b, c)


@public
def neg(a) -> Tile:
    """-a: a sign flip, exact for every value."""
    return record("neg", a)


@public
def abs(a) -> Tile:  # noqa: A001
    """|a|: a sign clear, exact for every value."""
    return record("abs", a)


@public
def exp(a) -> Tile:
    """e^a (the CUDA Math API's: an approximation, tolerance tier). Its rounding field exists from
    bytecode 13.3; at 13.2 exp carries no attribute."""
    return record("exp", a)


@public
def exp2(a, ftz: bool = False) -> Tile:
    """2^a. Tolerance tier. ``ftz`` (f32 only): the dialect's flush_to_zero, subnormal inputs and
    results become the zero of their sign, which spares the device its subnormal range fix-up
    around each exp2 (three instructions a lane on sm_90: bench/results/sass_ftz_cpu.json) -- what
    an online softmax wants, whose probabilities under 2^-126 add nothing to a sum of at least 1."""
    return record("exp2", a, ftz=ftz)


@public
def log(a) -> Tile:
    """The natural logarithm. Tolerance tier."""
    return record("log", a)


@public
def log2(a) -> Tile:
    """The base-2 logarithm. Tolerance tier."""
    return record("log2", a)


@public
def sqrt(a) -> Tile:
    """The square root, correctly rounded (nearest_even): exact tier."""
    return record("sqrt", a)


@public
def sqrt_approx(a) -> Tile:
    """The square root under the approximate mode (f32 only): tolerance tier."""
    return record("sqrt_approx", a)


@public
def rsqrt(a) -> Tile:
    """1 / sqrt(a), a hardware approximation. Tolerance tier."""
    return record("rsqrt", a)


@public
def tanh(a) -> Tile:
    """The hyperbolic tangent, rounding<full>. Tolerance tier."""
    return record("tanh", a)


@public
def floor(a) -> Tile:
    """The largest integer not above a: exact."""
    return record("floor", a)


@public
def ceil(a) -> Tile:
    """The smallest integer not below a: exact."""
    return record("ceil", a)


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
    bits: Tile = Tile(dev().t_convert("bitcast", d, _SAME_WIDTH_INT[d], list(shape), h(a)))
    signed = select(record("lt_i", bits, 0), neg(whole), whole)
    return select(lt(m, big), signed, a)


@public
def sin(a) -> Tile:
    """The sine (an approximation). Tolerance tier."""
    return record("sin", a)


@public
def cos(a) -> Tile:
    """The cosine. Tolerance tier."""
    return record("cos", a)


@public
def tan(a) -> Tile:
    """The tangent; keep a corpus off its poles. Tolerance tier."""
    return record("tan", a)


@public
def sinh(a) -> Tile:
    """The hyperbolic sine. Tolerance tier."""
    return record("sinh", a)


@public
def cosh(a) -> Tile:
    """The hyperbolic cosine. Tolerance tier."""
    return record("cosh", a)


# ---- comparisons and select ---------------------------------------------------------------------


@public
def eq(a, b) -> Tile:
    """a == b over a float format: ORDERED, so a NaN operand answers 0 (for all six, ne too)."""
    return record("eq", a, b)


@public
def ne(a, b) -> Tile:
    """a != b, ordered: a NaN operand answers 0."""
    return record("ne", a, b)


@public
def lt(a, b) -> Tile:
    """a < b, ordered."""
    return record("lt", a, b)


@public
def le(a, b) -> Tile:
    """a <= b, ordered."""
    return record("le", a, b)


@public
def gt(a, b) -> Tile:
    """a > b, ordered."""
    return record("gt", a, b)


@public
def ge(a, b) -> Tile:
    """a >= b, ordered."""
    return record("ge", a, b)


@public
def eq_u(a, b) -> Tile:
    """a == b or either operand a NaN."""
    return record("eq_u", a, b)


@public
def ne_u(a, b) -> Tile:
    """a != b or either operand a NaN."""
    return record("ne_u", a, b)


@public
def lt_u(a, b) -> Tile:
    """a < b or either operand a NaN."""
    return record("lt_u", a, b)


@public
def le_u(a, b) -> Tile:
    """a <= b or either operand a NaN."""
    return record("le_u", a, b)


@public
def gt_u(a, b) -> Tile:
    """a > b or either operand a NaN."""
    return record("gt_u", a, b)


@public
def ge_u(a, b) -> Tile:
    """a >= b or either operand a NaN."""
    return record("ge_u", a, b)


@public
def eq_i(a, b) -> Tile:
    """a == b over two i32 tiles, signed."""
    return record("eq_i", a, b)


@public
def ne_i(a, b) -> Tile:
    """a != b over two i32 tiles."""
    return record("ne_i", a, b)


@public
def lt_i(a, b) -> Tile:
    """a < b over two i32 tiles, signed."""
    return record("lt_i", a, b)


@public
def le_i(a, b) -> Tile:
    """a <= b over two i32 tiles, signed."""
    return record("le_i", a, b)


@public
def gt_i(a, b) -> Tile:
    """a > b over two i32 tiles, signed."""
    return record("gt_i", a, b)


@public
def ge_i(a, b) -> Tile:
    """a >= b over two i32 tiles, signed."""
    return record("ge_i", a, b)


@public
def select(cond, a, b) -> Tile:
    """Lane i of a where lane i of cond is 1, of b where it is 0; a rank-0 cond or value widens."""
    (ha, hb), d, shape = tiles(a, b, what="select")
    cshape = info(cond)[1]
    if len(cshape) > len(shape):
        shape = list(cshape)
    return Tile(dev().t_select(d, shape, h(cond), ha, hb))


# ---- integer arithmetic ----------------------------------------------------------------------


def _bini(op, a, b):
    """The binaryi ``op`` of two integer tiles of one format, any width (the reductions' bodies)."""
    return record_op("binaryi", op, a, b)


@public
def add_i(a, b, overflow="NoAssumption") -> Tile:
    """a + b over i32, wrapping modulo 2^32 (overflow: NoAssumption, or NoSignedWrap)."""
    return record("add_i", a, b, overflow=overflow)


@public
def sub_i(a, b, overflow="NoAssumption") -> Tile:
    """a - b over i32, wrapping (overflow: NoAssumption, or NoUnsignedWrap)."""
    return record("sub_i", a, b, overflow=overflow)


@public
def mul_i(a, b, overflow="NoAssumption") -> Tile:
    """a * b over i32: the low 32 bits of the product (overflow: NoAssumption, or NoWrap)."""
    return record("mul_i", a, b, overflow=overflow)


@public
def div_i(a, b) -> Tile:
    """a / b over i32, signed, rounded toward zero. Division by zero is undefined on the device."""
    return record("div_i", a, b)


@public
def rem_i(a, b) -> Tile:
    """a % b over i32, signed: the sign follows the dividend."""
    return record("rem_i", a, b)


@public
def max_i(a, b) -> Tile:
    """The signed larger of a and b."""
    return record("max_i", a, b)


@public
def min_i(a, b) -> Tile:
    """The signed smaller of a and b."""
    return record("min_i", a, b)


@public
def mulhi_i(a, b) -> Tile:
    """The high 32 bits of the 64-bit product, operands read UNSIGNED (MulhiIOp has no signedness)."""
    return record("mulhi_i", a, b)


@public
def and_i(a, b) -> Tile:
    """Bitwise a & b."""
    return record("and_i", a, b)


@public
def or_i(a, b) -> Tile:
    """Bitwise a | b."""
    return record("or_i", a, b)


@public
def xor_i(a, b) -> Tile:
    """Bitwise a ^ b."""
    return record("xor_i", a, b)


@public
def shl_i(a, b) -> Tile:
    """a << b, wrapping; a count outside [0, 32) is undefined on the device."""
    return record("shl_i", a, b)


@public
def shr_i(a, b) -> Tile:
    """a >> b, ARITHMETIC: the sign bit is copied down (shri signedness<signed>)."""
    return record("shr_i", a, b)


@public
def shr_u(a, b) -> Tile:
    """a >>> b, LOGICAL: zeros come in (the same opcode as shr_i, signedness<unsigned>)."""
    return record("shr_u", a, b)


@public
def neg_i(a) -> Tile:
    """-a over i32, wrapping (-(-2^31) is -2^31)."""
    return record("neg_i", a)


@public
def abs_i(a) -> Tile:
    """|a| over i32, wrapping (|-2^31| is -2^31)."""
    return record("abs_i", a)


@public
def addi(a, b) -> Tile:
    """a + b over two integer tiles of one format, wrapping."""
    return record("addi", a, b)


@public
def subi(a, b) -> Tile:
    """a - b over integer tiles, wrapping."""
    return record("subi", a, b)


@public
def muli(a, b) -> Tile:
    """a * b over integer tiles: the low bits of the exact product."""
    return record("muli", a, b)


@public
def shli(a, b) -> Tile:
    """a << b over integer tiles, wrapping."""
    return record("shli", a, b)


@public
def shri(a, b) -> Tile:
    """a >> b over integer tiles, arithmetic."""
    return record("shri", a, b)


@public
def andi(a, b) -> Tile:
    """Bitwise a & b over two integer tiles of one format, any width (``and_i`` is the i32 one)."""
    return record("andi", a, b)


@public
def ori(a, b) -> Tile:
    """Bitwise a | b over two integer tiles of one format, any width (``or_i`` is the i32 one)."""
    return record("ori", a, b)


@public
def xori(a, b) -> Tile:
    """Bitwise a ^ b over two integer tiles of one format, any width (``xor_i`` is the i32 one)."""
    return record("xori", a, b)


@public
def add_i64(a, b) -> Tile:
    """a + b over i64 tiles (address arithmetic)."""
    return record("add_i64", a, b)


__all__ = ["F32", "I1", "I8", "I32", "I64"]
