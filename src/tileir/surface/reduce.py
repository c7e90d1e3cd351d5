"""Reductions along one dimension: d_reduce with a body, and reduce_sum / max / min."""

from __future__ import annotations

import math

from ..dev import body, dev, public
from ..dtypes import BY_NAME
from ..ir import IdF, IdI
from ..values import Tile
from ._util import h, info, refuse
from .shape import reshape


def _identity(dtype: str, value):
    if BY_NAME[dtype].is_float:
        return IdF(dtype, float(value))
    if isinstance(value, float) and not value.is_integer():
        raise refuse(f"the identity {value} of an {dtype} reduction is not a whole number")
    return IdI(dtype, int(value))


@public
def d_reduce(t: Tile, identity: float, fn, dim: int = -1) -> Tile:
    """The reduction of ``t`` along ``dim`` (the last by default), which DROPS that dimension.
    ``fn(acc, elem)`` runs once on the host with the accumulator and an element, both rank 0, in
    that order, and answers the new accumulator. ``identity`` must be the identity of ``fn``.
    The fold's order is not specified (the body must be associative and commutative)."""
    d, shape = info(t)
    (acc, elem) = dev().t_reduce_begin(dim, list(shape), [_identity(d, identity)], [h(t)])
    with body():
        r = fn(Tile(acc), Tile(elem))
    (res,) = dev().t_reduce_end([h(r)])
    return Tile(res)


@public
def d_scan(t: Tile, identity: float, fn, dim: int = -1, reverse: bool = False) -> Tile:
    """The inclusive prefix scan of ``t`` along ``dim``: the same shape, position j the fold of
    everything at or before j (after it with ``reverse``). ``fn(acc, elem)`` as for d_reduce; it
    need not commute. A float scan is tolerance tier (the device's order is not a left fold)."""
    d, shape = info(t)
    (acc, elem) = dev().t_scan_begin(dim, reverse, list(shape), [_identity(d, identity)], [h(t)])
    with body():
        r = fn(Tile(acc), Tile(elem))
    (res,) = dev().t_scan_end([h(r)])
    return Tile(res)


def _keep(t: Tile, r: Tile, dim: int, keepdims: bool) -> Tile:
    if not keepdims:
        return r
    shape = list(info(t)[1])
    d = dim + len(shape) if dim < 0 else dim
    shape[d] = 1
    return reshape(r, shape)


def _extreme(dtype: str, high: bool):
    dt = BY_NAME[dtype]
    if dt.is_float:
        return math.inf if high else -math.inf
    return (1 << (dt.bits - 1)) - 1 if high else -(1 << (dt.bits - 1))


def _op(dtype: str, float_op: str, int_op: str):
    from .arith import _binf, _bini

    if BY_NAME[dtype].is_float:
        return lambda a, b: _binf(float_op, a, b)
    return lambda a, b: _bini(int_op, a, b)


@public
def reduce_sum(t: Tile, dim: int = -1, keepdims: bool = False) -> Tile:
    """The sum of ``t`` along ``dim``: that dimension dropped, or kept with length 1."""
    d = info(t)[0]
    return _keep(t, d_reduce(t, 0, _op(d, "addf", "addi"), dim), dim, keepdims)


@public
def reduce_max(t: Tile, dim: int = -1, keepdims: bool = False) -> Tile:
    """The largest element along ``dim`` (identity -inf, or the least integer)."""
    d = info(t)[0]
    return _keep(t, d_reduce(t, _extreme(d, False), _op(d, "maxf", "maxi"), dim), dim, keepdims)


@public
def reduce_min(t: Tile, dim: int = -1, keepdims: bool = False) -> Tile:
    """The smallest element along ``dim`` (identity +inf, or the greatest integer)."""
    d = info(t)[0]
    return _keep(t, d_reduce(t, _extreme(d, True), _op(d, "minf", "mini"), dim), dim, keepdims)


@public
def scan_sum(t: Tile, dim: int = -1, reverse: bool = False) -> Tile:
    """The running sum of ``t`` along ``dim``."""
    d = info(t)[0]
    return d_scan(t, 0, _op(d, "addf", "addi"), dim, reverse)
