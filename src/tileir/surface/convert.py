"""Conversions: to / float_to_float / int_to_float / float_to_int and the integer widenings."""

from __future__ import annotations

from ..dev import dev, public
from ..dtypes import BY_NAME
from ..values import Tile
from ._util import dname, h, info, refuse

# the rounding modes float_to_float takes, as the dialect names them, and the op recorded for each
_FTOF = {"nearest_even": "ftof", "zero": "ftof_zero", "negative_inf": "ftof_neg_inf",
         "positive_inf": "ftof_pos_inf", "nearest_away": "ftof_away"}


def _conv(op, t, to):
    d, shape = info(t)
    return Tile(dev().t_convert(op, d, to, list(shape), h(t)))


@public
def float_to_float(a: Tile, to_d, rounding="nearest_even") -> Tile:
    """``a`` in float format ``to_d``, rounded by ``rounding`` (widening is exact). The two formats
    must differ (tileiras refuses an ftof between equal ones): ``to`` records nothing then."""
    from .arith import Rounding

    r = rounding.value if isinstance(rounding, Rounding) else rounding
    if r not in _FTOF:
        raise refuse(f"float_to_float rounding {rounding!r}; the modes are {', '.join(_FTOF)} (or tileir.Rounding."
                     "NearestEven, TowardZero, Down, Up, NearestAway)")
    return _conv(_FTOF[r], a, dname(to_d))


@public
def to(a: Tile, fmt) -> Tile:
    """``a`` in float format ``fmt``, nearest even; a tile already in ``fmt`` is answered as it is."""
    target = dname(fmt)
    if info(a)[0] == target:
        return a
    return _conv("ftof", a, target)


@public
def int_to_float(a: Tile, to_d) -> Tile:
    """The float tile holding each signed integer lane of ``a``, rounded to nearest even."""
    return _conv("itof", a, dname(to_d))


@public
def float_to_int(a: Tile, to_d, saturating: bool = False) -> Tile:
    """The integer tile holding each lane of ``a`` truncated toward zero. Without ``saturating`` a
    NaN, infinite or out-of-range lane is undefined on the device; with it (bytecode 13.4) such a
    lane is the end of the range of its sign and NaN is 0."""
    return _conv("ftoi_sat" if saturating else "ftoi", a, dname(to_d))


@public
def mask_to_int(a: Tile) -> Tile:
    """1 where the mask is set and 0 where it is not: an exti from i1, ZERO-extending."""
    return _conv("exti", a, "i32")


@public
def int_to_mask(a: Tile) -> Tile:
    """The low bit of each i32 lane as a mask (trunci to i1)."""
    return _conv("trunci", a, "i1")


@public
def bits_to_float(a: Tile) -> Tile:
    """The f32 tile holding the bits of the i32 tile ``a`` unchanged (a bitcast)."""
    return _conv("bitcast", a, "f32")


@public
def bits_to_int(a: Tile) -> Tile:
    """The i32 tile holding the bits of the f32 tile ``a`` unchanged."""
    return _conv("bitcast", a, "i32")


@public
def ext_u8(a: Tile) -> Tile:
    """Each i8 lane widened UNSIGNED to i32: an octet as a value in [0, 255]."""
    return _conv("exti", a, "i32")


@public
def trunc_u8(a: Tile) -> Tile:
    """The low octet of each i32 lane."""
    return _conv("trunci", a, "i8")


@public
def ext_i4(a: Tile) -> Tile:
    """Each i4 lane widened with its SIGN to i32: [-8, 7]."""
    return _conv("extis", a, "i32")


@public
def ext_u4(a: Tile) -> Tile:
    """Each i4 lane widened with zeros to i32: [0, 15]."""
    return _conv("exti", a, "i32")


@public
def trunc_i4(a: Tile) -> Tile:
    """The low nibble of each i32 lane."""
    return _conv("trunci", a, "i4")


def is_float_tile(t: Tile) -> bool:
    return BY_NAME[info(t)[0]].is_float
