"""Python's operators on Tile, each the spec's function for the operands' format."""

from __future__ import annotations

import builtins
import operator as _operator

from ..dtypes import BY_NAME
from ..values import Idx, Tile
from . import arith as A
from . import index as X
from ._util import info, refuse
from .shape import widen

_FLOAT = {"add": A.add, "sub": A.sub, "mul": A.mul, "div": A.div, "lt": A.lt, "le": A.le, "gt": A.gt,
          "ge": A.ge, "eq": A.eq, "ne": A.ne}
# every integer width: on i32 these record exactly what and_i / shl_i ... record
_INT = {"add": A.addi, "sub": A.subi, "mul": A.muli, "lt": A.lt_i, "le": A.le_i, "gt": A.gt_i, "ge": A.ge_i,
        "eq": A.eq_i, "ne": A.ne_i, "and": A.andi, "or": A.ori, "xor": A.xori, "lshift": A.shli,
        "rshift": A.shri}
_MASK = {"and": X.and_mask, "or": X.or_mask}


def _dtype(a, b) -> str:
    for x in (a, b):
        if isinstance(x, Tile):
            return info(x)[0]
    raise refuse("an operator between two host numbers inside a kernel")


def operator(name: str, a, b):
    d = _dtype(a, b)
    a, b = widen(a, b)
    if d == "i1" and name in _MASK:
        return _MASK[name](a, b)
    if BY_NAME[d].is_float:
        fn = _FLOAT.get(name)
        if fn is None:
            raise refuse(f"the operator {name} is not defined on float tiles",
                         {"floordiv": "floor(a / b)", "mod": "remf(a, b)"}.get(name))
        return fn(a, b)
    fn = _INT.get(name)  # a lit meeting the integer tile is refused there (arith._as_const)
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


def _whole_power(a, n: int, mul):
    """a to the whole power n >= 1 by right-to-left binary exponentiation (fpowi's own sequence:
    about 2 log2(n) products, each rounded once)."""
    result, base = None, a
    while n:
        if n & 1:
            result = base if result is None else mul(result, base)
        n >>= 1
        if n:
            base = mul(base, base)
    return result


def power_operator(a, b):
    """``a ** b`` for a tile ``a``: a whole-number exponent (a Python int) is products in a's own
    format (``x ** 2`` is ``x * x``; a negative one the reciprocal of them, float tiles only), a
    float exponent (a number, a lit or a float tile) is ``pow``, and an integer exponent tile is
    ``powi``."""
    d, shape = info(a)
    is_float = BY_NAME[d].is_float
    if isinstance(b, int) and not isinstance(b, bool):
        if b == 0:
            return A.full(list(shape), 1, d)
        if b < 0 and not is_float:
            raise refuse(f"an {d} tile to the power {b}: a negative power of an integer is not an integer",
                         "int_to_float the tile first, then ** the float tile")
        r = _whole_power(a, builtins.abs(b), A.mul if is_float else A.muli)
        return A.div(1.0, r) if b < 0 else r
    if not is_float:
        raise refuse(f"an {d} tile to the power {b!r}: integer tiles take a whole-number (Python int) power",
                     "int_to_float the tile first for a float power")
    if isinstance(b, Tile) and not BY_NAME[info(b)[0]].is_float:
        from .tileshape import powi

        return powi(a, b)
    a, b = widen(a, b)
    return A.pow(a, b)


def rpower_operator(x, t):
    """``x ** t`` for a number ``x`` and a tile ``t``: ``pow`` in t's float format."""
    d = info(t)[0]
    if not BY_NAME[d].is_float:
        raise refuse(f"a number to the power of an {d} tile", f"powi(f_const(F32, {x!r}), n) for a float base")
    return A.pow(x, t)


def _index_of(k, n: int, dim: int):
    """A host index into a dimension of length n, counted from the end when negative."""
    i = _host_int(k, dim)
    if not -n <= i < n:
        raise refuse(f"index {i} into dimension {dim} of length {n}", f"an index in {-n} .. {n - 1}")
    return i + n if i < 0 else i


def _host_int(k, dim: int) -> int:
    try:
        return _operator.index(k)
    except TypeError:
        raise refuse(f"indexing dimension {dim} of a tile with a {type(k).__name__} {k!r}",
                     "an int, an Idx, a slice start:stop, None or ...; gather(...) reads lanes a tile names") from None


def index_operator(t, key):
    """``t[key]``: ints and Idx pick one slice of a dimension and drop it, ``start:stop`` keeps a run
    of a power-of-two length that starts at a multiple of it, ``None`` adds a dimension of length 1
    and ``...`` stands for the dimensions not named. Records one ``extract`` (when anything is cut)
    and one ``reshape`` (when dimensions are dropped or added), nothing when neither."""
    from .index import as_idx
    from .shape import reshape
    from .tileshape import extract

    key = key if isinstance(key, tuple) else (key,)
    shape = list(info(t)[1])
    named = sum(1 for k in key if k is not None and k is not Ellipsis)
    if sum(1 for k in key if k is Ellipsis) > 1:
        raise refuse("a tile index with two ...", "one ... at most")
    if named > len(shape):
        raise refuse(f"{named} indices into a rank-{len(shape)} tile", f"at most {len(shape)}, one a dimension")
    if Ellipsis not in key:
        key = key + (Ellipsis,)
    at = key.index(Ellipsis)
    key = key[:at] + (slice(None),) * (len(shape) - named) + key[at + 1:]
    sub: list[int] = []
    slices: list[int | Idx] = []  # a slice's number, or a dynamic index
    out: list[int] = []
    dim = 0
    for k in key:
        if k is None:
            out.append(1)
            continue
        n = shape[dim]
        if isinstance(k, slice):
            if k.step not in (None, 1):
                raise refuse(f"the slice {k.start}:{k.stop}:{k.step} of dimension {dim}: a tile slice steps by 1",
                             "load the lanes you want with strides=, or reshape and index")
            start, stop, _ = k.indices(n)
            length = stop - start
            if length <= 0 or length & (length - 1) or start % length:
                raise refuse(f"the slice {start}:{stop} of dimension {dim} (length {n}): a tile slice is a "
                             "power-of-two run that starts at a multiple of its length (extract cuts the "
                             "dimension into equal slices)",
                             "a power-of-two length from a multiple of it (t[:, 16:32], not t[:, 8:24] or "
                             "t[:, 0:24]); cat two slices for a run that is not one")
            sub.append(length)
            slices.append(start // length)
            out.append(length)
        elif isinstance(k, Idx):
            sub.append(1)
            slices.append(k)
        else:
            sub.append(1)
            slices.append(_index_of(k, n, dim))
        dim += 1
    r = t if sub == shape else extract(t, sub, [as_idx(i) for i in slices])
    return r if out == sub else reshape(r, out)
