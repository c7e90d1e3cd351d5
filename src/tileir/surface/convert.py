"""Conversions: to / float_to_float / int_to_float / float_to_int and the integer widenings, each a row
of ``tileir.elementwise`` (float_to_float and float_to_int: a row per rounding / saturation)."""

from __future__ import annotations

from ..dev import public
from ..dtypes import BY_NAME
from ..elementwise import ROWS
from ..values import Tile
from ._util import dname, info, refuse
from .elementwise import Rounding, record, record_op, record_row

# the rounding modes float_to_float takes, as the dialect names them, and the row of each
_FTOF = {r.fixed_value("rounding"): r for r in ROWS if r.name == "float_to_float"}
_FTOI = {r.fixed_value("saturating"): r for r in ROWS if r.name == "float_to_int"}


def _conv(op, t, to):
    """The conversion ``op`` of ``t`` into format ``to`` (any formats the recorder takes)."""
    return record_op("convert", op, t, to)


@public
def float_to_float(a: Tile, to_d, rounding="nearest_even") -> Tile:
    """``a`` in float format ``to_d``, rounded by ``rounding`` (widening is exact). The two formats
    must differ (tileiras refuses an ftof between equal ones): ``to`` records nothing then."""
    r = rounding.value if isinstance(rounding, Rounding) else rounding
    if r not in _FTOF:
        raise refuse(f"float_to_float rounding {rounding!r}; the modes are {', '.join(_FTOF)} (or tileir.Rounding."
                     "NearestEven, TowardZero, Down, Up, NearestAway)")
    return record_row(_FTOF[r], a, to_d)


@public
def to(a: Tile, fmt) -> Tile:
    """``a`` in float format ``fmt``, nearest even; a tile already in ``fmt`` is answered as it is."""
    target = dname(fmt)
    if info(a)[0] == target:
        return a
    return record("float_to_float", a, target)


@public
def int_to_float(a: Tile, to_d) -> Tile:
    """The float tile holding each signed integer lane of ``a``, rounded to nearest even."""
    return record("int_to_float", a, to_d)


@public
def float_to_int(a: Tile, to_d, saturating: bool = False) -> Tile:
    """The integer tile holding each lane of ``a`` truncated toward zero. Without ``saturating`` a
    NaN, infinite or out-of-range lane is undefined on the device; with it (bytecode 13.4) such a
    lane is the end of the range of its sign and NaN is 0."""
    return record_row(_FTOI[bool(saturating)], a, to_d)


@public
def mask_to_int(a: Tile) -> Tile:
    """1 where the mask is set and 0 where it is not: an exti from i1, ZERO-extending."""
    return record("mask_to_int", a)


@public
def int_to_mask(a: Tile) -> Tile:
    """The low bit of each i32 lane as a mask (trunci to i1)."""
    return record("int_to_mask", a)


@public
def bits_to_float(a: Tile) -> Tile:
    """The f32 tile holding the bits of the i32 tile ``a`` unchanged (a bitcast)."""
    return record("bits_to_float", a)


@public
def bits_to_int(a: Tile) -> Tile:
    """The i32 tile holding the bits of the f32 tile ``a`` unchanged."""
    return record("bits_to_int", a)


@public
def ext_i8(a: Tile) -> Tile:
    """Each i8 lane widened with its SIGN to i32: [-128, 127] (an int8 weight or activation; ext_u8
    reads the octet unsigned)."""
    return record("ext_i8", a)


@public
def ext_u8(a: Tile) -> Tile:
    """Each i8 lane widened UNSIGNED to i32: an octet as a value in [0, 255]."""
    return record("ext_u8", a)


@public
def trunc_u8(a: Tile) -> Tile:
    """The low octet of each i32 lane."""
    return record("trunc_u8", a)


@public
def ext_i4(a: Tile) -> Tile:
    """Each i4 lane widened with its SIGN to i32: [-8, 7]."""
    return record("ext_i4", a)


@public
def ext_u4(a: Tile) -> Tile:
    """Each i4 lane widened with zeros to i32: [0, 15]."""
    return record("ext_u4", a)


@public
def trunc_i4(a: Tile) -> Tile:
    """The low nibble of each i32 lane."""
    return record("trunc_i4", a)


def is_float_tile(t: Tile) -> bool:
    return BY_NAME[info(t)[0]].is_float
