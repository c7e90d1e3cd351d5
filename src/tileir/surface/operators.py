"""Python's operators on Tile, each the spec's function for the operands' format."""

from __future__ import annotations

import builtins

from ..dtypes import BY_NAME
from ..values import Lit, Tile
from . import arith as A
from . import index as X
from ._util import info, refuse

_FLOAT = {"add": A.add, "sub": A.sub, "mul": A.mul, "div": A.div, "lt": A.lt, "le": A.le, "gt": A.gt,
          "ge": A.ge, "eq": A.eq, "ne": A.ne}
_INT = {"add": A.addi, "sub": A.subi, "mul": A.muli, "lt": A.lt_i, "le": A.le_i, "gt": A.gt_i, "ge": A.ge_i,
        "eq": A.eq_i, "ne": A.ne_i, "and": A.and_i, "or": A.or_i, "xor": A.xor_i, "lshift": A.shl_i,
        "rshift": A.shr_i}
_MASK = {"and": X.and_mask, "or": X.or_mask}


def _dtype(a, b) -> str:
    for x in (a, b):
        if isinstance(x, Tile):
            return info(x)[0]
    raise refuse("an operator between two host numbers inside a kernel")


def _widen(a, b):
    """Equal-rank operands whose shapes differ only where one has length 1 meet at the larger shape,
    each widened with an explicit broadcast (numpy's rule, for the operators only: the named
    functions keep the spec's rank-0 rule and refuse anything else)."""
    if not (isinstance(a, Tile) and isinstance(b, Tile)):
        return a, b
    sa, sb = info(a)[1], info(b)[1]
    if sa == sb or len(sa) != len(sb) or not sa or not sb:
        return a, b
    if any(x != y and 1 not in (x, y) for x, y in zip(sa, sb)):
        return a, b  # let the named function refuse it with its own words
    shape = [builtins.max(x, y) for x, y in zip(sa, sb)]
    from .shape import broadcast

    return (a if list(sa) == shape else broadcast(a, shape)), (b if list(sb) == shape else broadcast(b, shape))


def operator(name: str, a, b):
    d = _dtype(a, b)
    a, b = _widen(a, b)
    if d == "i1" and name in _MASK:
        return _MASK[name](a, b)
    if BY_NAME[d].is_float:
        fn = _FLOAT.get(name)
        if fn is None:
            raise refuse(f"the operator {name} is not defined on float tiles",
                         {"floordiv": "floor(a / b)", "mod": "remf(a, b)"}.get(name))
        return fn(a, b)
    if isinstance(a, Lit) or isinstance(b, Lit):
        raise refuse("a lit (a float constant) meets an integer tile", "i_const(n) or consti(fmt, n)")
    fn = _INT.get(name)
    if fn is None:
        raise refuse(f"the operator {name} on integer tiles",
                     {"div": "div_i(a, b) (rounds toward zero)", "floordiv": "div_i(a, b) (rounds toward zero, "
                      "unlike Python's //)", "mod": "rem_i(a, b) (the dividend's sign, unlike Python's %)"}.get(name))
    return fn(a, b)


def operator_un(name: str, a):
    d = info(a)[0]
    if BY_NAME[d].is_float:
        return A.neg(a) if name == "neg" else A.abs(a)
    return A.neg_i(a) if name == "neg" else A.abs_i(a)


def matmul_operator(a, b):
    from .mma import mma

    m = info(a)[1][0]
    n = info(b)[1][1]
    return mma(a, b, A.full([m, n], 0.0, "f32"))
