"""The lowered program: Tile IR types, operands and instructions as frozen dataclasses.

This is the spec's ``Ty``, ``Elem``, ``Ref``, ``Instr`` (every variant, including those the
lowering does not emit yet), ``Kernel`` and ``Owner``. ``render`` and the bytecode writer both read
these; neither adds meaning to them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum
from typing import Union

from .errors import TileirError

# The marker of a dimension whose extent (or stride) an operand carries; the dialect prints it ?.
DYN_DIM = -1


class Padding(Enum):
    """Which value an out-of-bounds lane of a view load reads (NoPadding: the attribute is absent)."""

    NoPadding = None
    PadZero = "zero"
    PadNegZero = "neg_zero"
    PadNan = "nan"
    PadPosInf = "pos_inf"
    PadNegInf = "neg_inf"


NoPadding = Padding.NoPadding
PadZero = Padding.PadZero
PadNegZero = Padding.PadNegZero
PadNan = Padding.PadNan
PadPosInf = Padding.PadPosInf
PadNegInf = Padding.PadNegInf


def padding_name(p: Padding) -> str:
    """The keyword the dialect spells a padding value with (empty for NoPadding)."""
    return p.value or ""


def _padding_reading(x: float):
    """The padding whose lanes read the number ``x``, if there is one."""
    if x != x:
        return PadNan
    if x == 0:
        return PadNegZero if math.copysign(1.0, x) < 0 else PadZero
    return {math.inf: PadPosInf, -math.inf: PadNegInf}.get(x)


def as_padding(pad, where: str = "pad", context: str = "", refuse=None) -> Padding:
    """``pad`` as a Padding: a member (``PadZero`` ...) or the dialect's keyword for one (``"zero"``).
    Anything else is refused, listing the paddings, from ``context`` (the function given it) and
    its argument ``where``; ``refuse(message, fix)`` makes the exception (a recorder's refusal,
    naming the kernel), a plain TileirError without it."""
    if isinstance(pad, Padding):
        return pad
    try:
        return Padding(pad)
    except (ValueError, TypeError):
        pass
    names = ", ".join(p.name for p in Padding)
    fix = f"one of {names} (tileir.PadZero ...)"
    if isinstance(pad, (int, float)) and not isinstance(pad, bool):
        p = _padding_reading(float(pad))
        fix = (f"{where}={p.name}, the padding that reads {float(pad)!r}" if p is not None else
               fix + f"; a view pads only with those, so mask the lanes and select(mask, t, {pad!r}) after the load")
    message = f"{context + ': ' if context else ''}{where}={pad!r} is not a padding: the paddings are {names}"
    if refuse is not None:
        raise refuse(message, fix)
    raise TileirError(message, fix=fix)


def padding_is_special(p: Padding) -> bool:
    """Whether ``p`` is one of the four special values, legal only over a float format."""
    return p in (PadNegZero, PadNan, PadPosInf, PadNegInf)


def padding_present(p: Padding) -> bool:
    """Whether a view carries a padding_value at all."""
    return p is not NoPadding


# ---- element types and types ----------------------------------------------------------------


@dataclass(frozen=True)
class Num:
    """A number format by its Tile IR name (``i32``, ``f32``)."""

    name: str


@dataclass(frozen=True)
class PtrTo:
    """A pointer to a number format."""

    name: str


Elem = Union[Num, PtrTo]


@dataclass(frozen=True)
class Token:
    pass


@dataclass(frozen=True)
class Tile:
    shape: tuple
    elem: Elem


@dataclass(frozen=True)
class TensorView:
    elem: Elem
    shape: tuple
    strides: tuple


@dataclass(frozen=True)
class PartitionView:
    tile_shape: tuple
    elem: Elem
    shape: tuple
    strides: tuple
    dim_map: tuple
    padding: Padding = NoPadding


@dataclass(frozen=True)
class StridedView:
    tile_shape: tuple
    traversal: tuple
    elem: Elem
    shape: tuple
    strides: tuple
    dim_map: tuple
    padding: Padding = NoPadding


@dataclass(frozen=True)
class GatherScatterView:
    tile_shape: tuple
    elem: Elem
    shape: tuple
    strides: tuple
    sparse_dim: int
    padding: Padding = NoPadding


Ty = Union[Token, Tile, TensorView, PartitionView, StridedView, GatherScatterView]
TOKEN = Token()


_TILES: dict = {}  # (shape, format name) -> its Tile: the lowering asks for the same few types over and over


def tile(shape, elem: str | Elem) -> Tile:
    """``Tile(shape, Num(elem))`` with the shape as a tuple; a shorthand the lowering uses a lot."""
    shape = tuple(shape)
    if type(elem) is not str:
        return Tile(shape, Num(elem) if isinstance(elem, str) else elem)
    for n in shape:
        if type(n) is not int:  # an equal key of another type (128.0) must not answer the int one's Tile
            return Tile(shape, Num(elem))
    key = (shape, elem)
    got = _TILES.get(key)
    if got is None:
        got = Tile(shape, Num(elem))
        if len(_TILES) < 4096:
            _TILES[key] = got
    return got


def tensor_view_of(t: Ty) -> TensorView:
    """The tensor_view type a flat partition, strided or gather/scatter view was cut from."""
    if isinstance(t, TensorView):
        return t
    if isinstance(t, (PartitionView, StridedView, GatherScatterView)):
        return TensorView(t.elem, t.shape, t.strides)
    raise TypeError(f"tensor_view_of({t!r}): not a view")


# ---- operands -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Arg:
    """An entry parameter, by position."""

    pos: int


@dataclass(frozen=True)
class Val:
    """The value an earlier instruction defined, by its number."""

    id: int


Ref = Union[Arg, Val]


# ---- attributes carried by instructions -------------------------------------------------------


@dataclass(frozen=True)
class IdF:
    """A float identity of a reduction or scan operand, in that operand's format."""

    dtype: str
    value: float


@dataclass(frozen=True)
class IdI:
    """An integer identity of a reduction or scan operand."""

    dtype: str
    value: int


RedId = Union[IdF, IdI]


@dataclass(frozen=True)
class DivBy:
    divisor: int
    every: int | None = None
    along: int | None = None


@dataclass(frozen=True)
class SameElements:
    groups: tuple


@dataclass(frozen=True)
class Bounded:
    lb: int | None = None
    ub: int | None = None


AssumePred = Union[DivBy, SameElements, Bounded]

# Hints: ((arch, ((key, value), ...)), ...) -- the dialect's nested dictionary.
Hints = tuple


# ---- instructions (instrs.py; re-exported here) -----------------------------------------------

from .instrs import *  # noqa: E402,F401,F403
from .instrs import INSTR_KINDS, Instr  # noqa: E402,F401

# ---- kernels --------------------------------------------------------------------------------


@dataclass(frozen=True)
class KParam:
    """An entry parameter: a pointer to ``dtype`` (ByPtr) or a rank-0 tile of it (ByValue)."""

    dtype: str
    by_ptr: bool = True

    @property
    def ty(self) -> Tile:
        return Tile((), PtrTo(self.dtype) if self.by_ptr else Num(self.dtype))


@dataclass(frozen=True)
class Global:
    """A module global: a symbol, its format, its initial values in linear order."""

    sym: str
    dtype: str
    values: tuple
    align: int = 0
    private: bool = False
    constant: bool = False


@dataclass(frozen=True)
class Kernel:
    name: str
    params: tuple
    globals: tuple = ()
    body: tuple = ()
    hints: Hints = ()
    producer: str | None = None
    debug: object | None = None
    owners: tuple = field(default=(), compare=False)


@dataclass(frozen=True)
class Owner:
    """Which program operation (depth-first number) an instruction of Kernel.body came from;
    ``inner`` is the same for each body of a region instruction."""

    op: int
    inner: tuple = ()
