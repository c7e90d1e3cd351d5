"""The surface side of the element-wise table (``tileir.elementwise``): a row's public function
hands its arguments to ``record(name, ...)``, which resolves them by the row's kind (numbers and
lits made in the operands' format, ``tiles``), refuses a format the row does not take, and issues
the kind's Dev operation with the row's op and fixed attributes. Also here: the attribute enums
those functions take (``Rounding``, ``Overflow``) and their dialect spellings.

Shapes: both operands of an element-wise operation have one shape, except that a rank-0 operand
is widened to the other's (the rank-0 rule). Formats: both operands have one format; a ``lit``
(or a Python number) takes the other operand's.
"""

from __future__ import annotations

import builtins
import enum
from collections.abc import Callable

from ..dev import dev
from ..dtypes import BY_NAME
from ..elementwise import BY_NAME as ROW_OF
from ..elementwise import OPS, ROWS, Row, any_width, takes_ftz
from ..values import Lit, Tile
from ._util import dname, h, info, refuse
from .shape import widen

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


def overflow_name(o) -> str:
    """The dialect's spelling of an overflow assumption, as overflow<..> writes it."""
    return OVERFLOWS.get(getattr(o, "name", o), getattr(o, "value", o))


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


# ---- a row's recording, by kind ----------------------------------------------------------------------


def _formats(row: Row, d: str, spelled: bool) -> None:
    """Refuse a format the row's function does not take (FLOAT / INT rows: the recorder's rule)."""
    if not spelled or not isinstance(row.formats, tuple) or d in row.formats:
        return
    if row.kind == "binaryi":
        if BY_NAME[d].is_float:
            return  # the recorder's words: an integer operation of float operands
        generic = any_width(row.op)
        fix = (f"{generic}(a, b), which takes integer tiles of any one format" if generic else
               "i32 operands: widen them first (ext_u8 / ext_i4), or narrow the answer back with trunc_u8")
        raise refuse(f"{row.name} takes i32 tiles, got {d}", fix)
    other = next((r.name for r in ROWS if r.kind == row.kind and r.op == row.op and not isinstance(r.formats, tuple)),
                 None)
    only = " or ".join(row.formats)
    if row.kind == "convert":
        raise refuse(f"{row.name} takes {only} tiles, got {d}")
    raise refuse(f"{row.name} is {only} only", f"{other}(a) for other formats" if other else None)


def _check_ftz(row: Row, d: str) -> None:
    """flush_to_zero where the row's operation carries it, on f32 tiles (tileiras refuses it on any other
    format: "flush_to_zero modifier only supported for f32 data type")."""
    if not takes_ftz(row):
        raise refuse(f"{row.name} has no flush_to_zero (its operation {row.dialect} carries none)", "ftz=False")
    if d != "f32":
        raise refuse(f"{row.name}(ftz=True) of a {d} tile: flush_to_zero is f32's (a subnormal f32 lane becomes "
                     "the zero of its sign)", f"ftz=False, or convert to f32 first: {row.name}(x.to(F32), ftz=True)")


def _unaryf(row: Row, spelled: bool, a, *, ftz=False) -> Tile:
    (ha,), d, shape = tiles(a, what=row.name)
    _formats(row, d, spelled)
    if ftz:
        _check_ftz(row, d)
    return Tile(dev().t_unaryf(row.op, d, shape, ha, row.rounding, bool(ftz)))


def _binaryf(row: Row, spelled: bool, a, b, *, rounding="nearest_even", ftz=False, propagate_nan=False) -> Tile:
    (ha, hb), d, shape = tiles(a, b, what=row.name)
    _formats(row, d, spelled)
    if ftz:
        _check_ftz(row, d)
    return Tile(dev().t_binaryf(row.op, d, shape, ha, hb, rounding_name(rounding), bool(ftz), bool(propagate_nan)))


def _fma(row: Row, spelled: bool, a, b, c) -> Tile:
    a, b, c = widen(a, b, c)
    (ha, hb, hc), d, shape = tiles(a, b, c, what=row.name)
    _formats(row, d, spelled)
    return Tile(dev().t_fma(d, shape, ha, hb, hc, "nearest_even", False))


def _cmpf(row: Row, spelled: bool, a, b) -> Tile:
    (ha, hb), d, shape = tiles(a, b, what=row.name)
    return Tile(dev().t_cmpf(row.op, d, shape, ha, hb, row.ordered))


def _cmpi(row: Row, spelled: bool, a, b) -> Tile:
    (ha, hb), d, shape = tiles(a, b, what=row.name)
    return Tile(dev().t_cmpi(row.op, shape, ha, hb, True, d))


def _overflow(row: Row, overflow) -> str:
    name = overflow_name(overflow)
    if name != "none" and name != row.overflow:
        pairs = [f"{r.name} with {Overflow(r.overflow).name}" for r in ROWS if r.overflow]
        raise refuse(f"{row.op} with overflow {name}: the pairings written are {', '.join(pairs[:-1])} and "
                     f"{pairs[-1]}", "NoAssumption, or the pairing above")
    return name


def _binaryi(row: Row, spelled: bool, a, b, *, overflow="NoAssumption") -> Tile:
    name = _overflow(row, overflow)
    (ha, hb), d, shape = tiles(a, b, what=row.name)
    _formats(row, d, spelled)
    return Tile(dev().t_binaryi(row.op, d, shape, ha, hb, name))


def _unaryi(row: Row, spelled: bool, a) -> Tile:
    (ha,), d, shape = tiles(a, what=row.name)
    _formats(row, d, spelled)
    return Tile(dev().t_unaryi(row.op, d, shape, ha, "none"))


def _convert(row: Row, spelled: bool, a, to=None) -> Tile:
    d, shape = info(a)
    _formats(row, d, spelled)
    return Tile(dev().t_convert(row.op, d, row.to if to is None else dname(to), list(shape), h(a)))


# each kind's recorder: (row, spelled, *operands, **options) -> Tile
_KINDS: dict[str, Callable[..., Tile]] = {
    "unaryf": _unaryf, "binaryf": _binaryf, "fma": _fma, "cmpf": _cmpf, "cmpi": _cmpi, "binaryi": _binaryi,
    "unaryi": _unaryi, "convert": _convert}


def record(name: str, *args, **kwargs) -> Tile:
    """What public function ``name`` records of ``args``: its row (``tileir.elementwise.BY_NAME``) by kind."""
    row = ROW_OF[name]
    return _KINDS[row.kind](row, True, *args, **kwargs)


def record_row(row: Row, *args, **kwargs) -> Tile:
    """What ``row``'s function records of ``args`` (the row of a function that names several)."""
    return _KINDS[row.kind](row, True, *args, **kwargs)


def record_op(kind: str, op: str, *args) -> Tile:
    """The recorded op ``op`` of ``kind`` at any format the recorder takes (no function's own formats)."""
    return _KINDS[kind](OPS[(kind, op)], False, *args)


__all__ = ["Rounding", "Overflow", "rounding_name", "overflow_name", "tiles", "record", "record_row", "record_op",
           "ROUNDINGS", "OVERFLOWS"]
