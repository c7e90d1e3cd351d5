"""What every surface family shares: handles, format and shape queries, and refusals."""

from __future__ import annotations

from ..dev import dev
from ..dtypes import Dtype, dtype
from ..errors import TileirError
from ..values import Idx, Lit, Ptrs, Tile


def refuse(message: str, fix: str | None = None) -> TileirError:
    d = dev()
    r = getattr(d, "refuse", None)
    return r(message, fix) if r else TileirError(message, fix=fix)


def h(x) -> int:
    if isinstance(x, (Tile, Idx, Ptrs)):
        return x.h
    raise refuse(f"expected a tile, got {type(x).__name__} {x!r}",
                 "a Tile; a host number becomes one with f_const(F32, x), i_const(n) or lit(x)")


def shape_of(x) -> tuple:
    return tuple(dev().t_shape_of(h(x))[1])


def dtype_of(x) -> str:
    return dev().t_shape_of(h(x))[0]


def info(x) -> tuple:
    d, s = dev().t_shape_of(h(x))
    return d, tuple(s)


def dname(d) -> str:
    return dtype(d).name if isinstance(d, (Dtype, str)) else dtype(d).name


def no_lit(x, where: str):
    if isinstance(x, (Lit, float, int)) and not isinstance(x, bool):
        raise refuse(f"{where} needs a tile with a format of its own, not the format-less constant {x!r}",
                     "f_const(F32, x) (or the format you mean) there")
    return x
