"""The values a kernel body holds: ``Tile``, ``Idx``, ``Param``, ``Ptrs``, ``Carry`` and ``Lit``.

Each is a handle the handler issued, nothing more; its format and shape belong to the handler
(``t_shape_of``). A value remembers the recording that issued it, and reading its handle while
another recording runs is refused naming both kernels: handle numbers restart with every
recording, so a Tile kept from one would silently stand for another value in the next.

``Tile`` supports Python's operators by calling the spec's functions (``a + b`` is ``add``/``addi``
by format, a Python number is a ``lit`` of the other operand's format), and nothing an operator
does is unavailable by name.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Generic, TypeVar

from .dev import _HANDLER, dev
from .dtypes import Dtype
from .errors import TileirError

D = TypeVar("D")


class Lit:
    """A float constant with no format of its own (the spec's ``lit``): it takes the format of
    the element-wise operation it meets. A place that needs a format refuses it."""

    __slots__ = ("value",)

    def __init__(self, value: float):
        self.value = float(value)

    def __repr__(self) -> str:
        return f"lit({self.value!r})"


# The public functions the operators of Tile and Idx are spelled with (``a + b`` is surface.add ...):
# the surface makes values, so this module cannot import it; tileir.surface hands itself here when it
# loads (``install_surface``), which every ``import tileir`` does before a kernel can record.
_SURFACE: Any = None


def install_surface(module) -> None:
    """Make ``module`` (tileir.surface) the one whose functions the operators call."""
    global _SURFACE
    _SURFACE = module


def _surface() -> Any:
    if _SURFACE is None:  # pragma: no cover  (tileir's __init__ loads the surface)
        raise TileirError("tileir.surface is not loaded: import tileir")
    return _SURFACE


def _foreign(value, made_by, now) -> TileirError:
    """The refusal of ``value``, issued by the handler ``made_by``, used while ``now`` records."""
    was, cur = getattr(made_by, "name", "?"), getattr(now, "name", "?")
    what = type(value).__name__
    if was == cur:
        msg = (f"a {what} from another recording of kernel '{cur}' (another configuration, or an earlier "
               "recording) used in this one: a value belongs to the recording that made it")
    else:
        msg = (f"a {what} of kernel '{was}' used while recording kernel '{cur}': a value belongs to the "
               "recording that made it")
    fix = "make the value inside this kernel from its own parameters; kernels pass data through arrays"
    refuse = getattr(now, "refuse", None)
    return refuse(msg, fix) if refuse is not None else TileirError(msg, kernel=cur, fix=fix)


class _Handle:
    """A handler's number for a value, and the handler (the recording) that issued it."""

    __slots__ = ("_h", "_made_by")

    def __init__(self, h: int):
        self._h = h
        self._made_by = _HANDLER.get()

    @property
    def h(self) -> int:
        now = _HANDLER.get()
        if now is not self._made_by and now is not None and self._made_by is not None:
            raise _foreign(self, self._made_by, now)
        return self._h


class Tile(_Handle, Generic[D]):
    """A tile value inside a kernel: any rank, rank 0 included."""

    __slots__ = ()

    @property
    def dtype(self) -> str:
        return dev().t_shape_of(self.h)[0]

    @property
    def shape(self) -> list:
        return list(dev().t_shape_of(self.h)[1])

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __repr__(self) -> str:
        return f"Tile(h={self._h})"

    def __bool__(self):
        raise TileirError("a Tile has no value on the host while the kernel records; branch on the "
                          "device with d_if(cond, then_fn, else_fn) or choose lanes with select(cond, a, b)")

    def __iter__(self):
        raise TileirError("a Tile cannot be iterated on the host; index a subtile with extract(), "
                          "or loop on the device with d_range")

    def _bin(self, name, other, swap=False):
        return _surface().operator(name, other, self) if swap else _surface().operator(name, self, other)

    def __add__(self, o: Tile | Lit | float) -> Tile:
        return self._bin("add", o)

    def __radd__(self, o: Tile | Lit | float) -> Tile:
        return self._bin("add", o, True)

    def __sub__(self, o: Tile | Lit | float) -> Tile:
        return self._bin("sub", o)

    def __rsub__(self, o: Tile | Lit | float) -> Tile:
        return self._bin("sub", o, True)

    def __mul__(self, o: Tile | Lit | float) -> Tile:
        return self._bin("mul", o)

    def __rmul__(self, o: Tile | Lit | float) -> Tile:
        return self._bin("mul", o, True)

    def __truediv__(self, o: Tile | Lit | float) -> Tile:
        return self._bin("div", o)

    def __rtruediv__(self, o: Tile | Lit | float) -> Tile:
        return self._bin("div", o, True)

    def __floordiv__(self, o: Tile | Lit | float) -> Tile:
        return self._bin("floordiv", o)

    def __mod__(self, o: Tile | Lit | float) -> Tile:
        return self._bin("mod", o)

    def __and__(self, o: Tile | Lit | float) -> Tile:
        return self._bin("and", o)

    def __or__(self, o: Tile | Lit | float) -> Tile:
        return self._bin("or", o)

    def __xor__(self, o: Tile | Lit | float) -> Tile:
        return self._bin("xor", o)

    def __lshift__(self, o: Tile | Lit | float) -> Tile:
        return self._bin("lshift", o)

    def __rshift__(self, o: Tile | Lit | float) -> Tile:
        return self._bin("rshift", o)

    def __lt__(self, o: Tile | Lit | float) -> Tile:
        return self._bin("lt", o)

    def __le__(self, o: Tile | Lit | float) -> Tile:
        return self._bin("le", o)

    def __gt__(self, o: Tile | Lit | float) -> Tile:
        return self._bin("gt", o)

    def __ge__(self, o: Tile | Lit | float) -> Tile:
        return self._bin("ge", o)

    def eq(self, o: Tile | Lit | float) -> Tile:
        """``==`` by name: Python's ``==`` on a Tile stays identity (a Tile is a handle)."""
        return self._bin("eq", o)

    def ne(self, o: Tile | Lit | float) -> Tile:
        return self._bin("ne", o)

    def __neg__(self) -> Tile:
        return _surface().operator_un("neg", self)

    def __abs__(self) -> Tile:
        return _surface().operator_un("abs", self)

    def __matmul__(self, o: Tile) -> Tile:
        return _surface().matmul_operator(self, o)

    def __pow__(self, o: Tile | Lit | float) -> Tile:
        """``t ** n``: products for a Python int n (``t ** 2`` is ``t * t``), ``pow`` for a float
        exponent, ``powi`` for an integer exponent tile."""
        return _surface().power_operator(self, o)

    def __rpow__(self, o: float) -> Tile:
        return _surface().rpower_operator(o, self)

    def __getitem__(self, key: object) -> Tile:
        """``t[3]``, ``t[:, 0:16]``, ``t[i]`` (an Idx), ``t[None]``, ``t[..., 0]``: extract and reshape.
        A slice is a power-of-two run starting at a multiple of its length."""
        return _surface().index_operator(self, key)

    def to(self, fmt: Dtype | str) -> Tile:
        """This tile in float format ``fmt`` (nearest even); nothing is recorded if it already is."""
        return _surface().to(self, fmt)

    def reshape(self, shape: Iterable[int]) -> Tile:
        return _surface().reshape(self, list(shape))

    def broadcast(self, shape: Iterable[int]) -> Tile:
        return _surface().broadcast(self, list(shape))

    def sum(self, dim: int = -1, keepdims: bool = False) -> Tile:
        return _surface().reduce_sum(self, dim, keepdims)

    def max(self, dim: int = -1, keepdims: bool = False) -> Tile:
        return _surface().reduce_max(self, dim, keepdims)

    def min(self, dim: int = -1, keepdims: bool = False) -> Tile:
        return _surface().reduce_min(self, dim, keepdims)

    __hash__ = object.__hash__


class Idx(_Handle):
    """A scalar index (i32) inside a kernel: a block id, a loop variable, a computed offset."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"Idx(h={self._h})"

    def __bool__(self):
        raise TileirError("an Idx has no value on the host while the kernel records; compare on the "
                          "device with idx_lt/idx_eq and branch with d_if")

    def _op(self, name, o, swap=False):
        s = _surface()
        a, b = (o, self) if swap else (self, o)
        return getattr(s, name)(s.as_idx(a), s.as_idx(b))

    def __add__(self, o: Idx | int) -> Idx:
        return self._op("idx_add", o)

    def __radd__(self, o: Idx | int) -> Idx:
        return self._op("idx_add", o, True)

    def __mul__(self, o: Idx | int) -> Idx:
        return self._op("idx_mul", o)

    def __rmul__(self, o: Idx | int) -> Idx:
        return self._op("idx_mul", o, True)

    def __sub__(self, o: Idx | int) -> Idx:
        return self._op("idx_sub", o)

    def __rsub__(self, o: Idx | int) -> Idx:
        return self._op("idx_sub", o, True)

    def __floordiv__(self, o: Idx | int) -> Idx:
        return self._op("idx_div", o)

    def __mod__(self, o: Idx | int) -> Idx:
        return self._op("idx_rem", o)

    __hash__ = object.__hash__


class Param(Generic[D]):
    """A kernel parameter: its position in the entry signature and its format's name."""

    __slots__ = ("pos", "dtype", "by_ptr", "name")

    def __init__(self, pos: int, dtype: str, by_ptr: bool = True, name: str = ""):
        self.pos = pos
        self.dtype = dtype
        self.by_ptr = by_ptr
        self.name = name or f"arg{pos}"

    def __repr__(self) -> str:
        return f"Param({self.name}: {self.dtype}{'*' if self.by_ptr else ''})"


class Ptrs(_Handle, Generic[D]):
    """A tile of pointers to format D."""

    __slots__ = ()


class Carry(Generic[D]):
    """A device variable: a tile a region's body replaces as it goes (carry / get / set)."""

    __slots__ = ("_cid", "_made_by")

    def __init__(self, cid: int):
        self._cid = cid
        self._made_by = _HANDLER.get()

    @property
    def cid(self) -> int:
        now = _HANDLER.get()
        if now is not self._made_by and now is not None and self._made_by is not None:
            raise _foreign(self, self._made_by, now)
        return self._cid

    def get(self) -> Tile:
        return _surface().get(self)

    def set(self, t: Tile) -> None:
        _surface().set(self, t)


def position(p: Param) -> int:
    """The position ``p`` was declared at."""
    return p.pos


def param_dtype(p: Param) -> str:
    """The dtype name ``p`` was declared with."""
    return p.dtype


class TensorView(_Handle, Generic[D]):
    """A tensor_view inside a kernel: a region of global memory with an extent and a stride (in
    elements) along each dimension, any of them possibly computed (DYN_DIM)."""

    __slots__ = ()


class GridView(_Handle, Generic[D]):
    """A tensor_view cut into a grid of equal tiles (a partition_view, or a strided_view): load_view
    and store_view index the grid, one index a tile dimension."""

    __slots__ = ()


class GatherScatterView(_Handle, Generic[D]):
    """A gather_scatter_view inside a kernel: a grid view in every dimension but its sparse one,
    where the index is a rank-1 i32 tile of ROW NUMBERS (load_gather / store_gather)."""

    __slots__ = ()
