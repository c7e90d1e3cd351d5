"""The recorded program: what a kernel body said, operation by operation, before lowering.

A ``TileProg`` holds the entry's parameters, the recorded operations (``Op``: a kind named after
the ``t_*`` effect operation that recorded it, the handles it defines, its fields, its regions),
and what the recorder knows about every handle (``HInfo``: value, token, pointer tile or view; its
format and shape). Constants record no operation: their handles are kept in ``consts`` and made
where they are used, at the shape the use wants.

Operations are numbered depth first, a region's operation before its body, ``make_token`` being
0: the number a refusal names and an ``Owner`` points at.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, TypeVar

from .dtypes import Dtype, dtype
from .ir import KParam

_A = TypeVar("_A", bound="Attrs")

Handle = int  # a recorded value: a key of ``TileProg.info``
Shape = tuple  # a tile's extents, ints

ATTRS: dict[str, type[Attrs]] = {}  # recorded kind -> its attribute record (filled as families are imported)


class Attrs:
    """A recorded operation's attributes, typed: one frozen dataclass per kind, declared beside the
    recorder that makes it (``class UnaryF(Attrs, kind="unaryf")``). The record names the kind, so
    ``RecorderCore.emit(UnaryF(...), res)`` cannot misspell it, a misspelt attribute is refused when
    the record is made, and a rule reads ``UnaryF.of(op).dtype`` (checked by mypy, see
    tests/test_attrs.py). Generic walkers read ``attr_items``."""

    KIND: ClassVar[str] = ""

    def __init_subclass__(cls, kind: str = "", **kw: Any) -> None:
        super().__init_subclass__(**kw)
        clash = {"of", "KIND"} & set(cls.__dict__.get("__annotations__", {}))
        if clash:
            raise TypeError(f"{cls.__qualname__}: an attribute may not be named {', '.join(sorted(clash))}")
        if kind:
            if kind in ATTRS:
                raise TypeError(f"two attribute records for the recorded kind {kind!r}: "
                                f"{ATTRS[kind].__qualname__} and {cls.__qualname__}")
            cls.KIND = kind
            ATTRS[kind] = cls

    @classmethod
    def of(cls: type[_A], op: Op) -> _A:
        """``op``'s attributes, which must be a ``cls`` (a rule reading the wrong kind fails here)."""
        a = op.a
        if not isinstance(a, cls):
            raise TypeError(f"#{op.num} {op.kind} carries {type(a).__name__}, not {cls.__name__}")
        return a


def attr_items(a: Attrs) -> list[tuple[str, Any]]:
    """(name, value) of each of a record's attributes, in declaration order: for generic walkers."""
    return [(f.name, getattr(a, f.name)) for f in fields(a)]  # type: ignore[arg-type]


@dataclass(eq=False)
class Region:
    params: tuple  # handles bound on entry (a loop's induction variable and carries; acc/elem pairs)
    ops: list
    yields: tuple = ()


@dataclass(eq=False)
class Op:
    kind: str  # always type(a).KIND
    res: tuple
    a: Attrs
    regions: tuple = ()
    num: int = 0

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in attr_items(self.a))
        return f"#{self.num} {self.kind}{list(self.res)}({fields})"


@dataclass(frozen=True)
class HInfo:
    kind: str  # val | token | ptrs | view
    dtype: str
    shape: tuple


@dataclass(eq=False)
class TileProg:
    name: str
    params: tuple  # KParam per entry parameter
    ops: list = field(default_factory=list)
    info: dict = field(default_factory=dict)
    consts: dict = field(default_factory=dict)
    globals: list = field(default_factory=list)
    hints: tuple = ()
    calls: list = field(default_factory=list)  # the call tree (trace_calls)
    arg_handles: dict = field(default_factory=dict)  # handle -> parameter position (scalar params)
    # view handle -> a dict: "ty" its Tile IR type (ir.TensorView, ir.PartitionView, ir.StridedView,
    # ir.GatherScatterView), "param" the position of the parameter it views, and "cell": True on the
    # partition view of a marker's cells (load_cell / store_cell / store_sub; how an Out is written)
    views: dict = field(default_factory=dict)
    markers: tuple = ()  # per parameter: its marker (markers.Marker) or None
    written: set = field(default_factory=set)  # the buffer parameters the program may write
    unaligned: frozenset = frozenset()  # buffer parameters not claimed 16-byte aligned (a slice's)
    dense: set = field(default_factory=set)  # buffers read or written as dense rows (pointer path, retile)

    def walk(self, ops=None):
        """Every operation depth first, a region's operation before its body."""
        for op in self.ops if ops is None else ops:
            yield op
            for r in op.regions:
                yield from self.walk(r.ops)

    def op_count(self) -> int:
        return sum(1 for _ in self.walk())

    def dump(self) -> str:
        """The program as one line an operation, indented by region: for a reader and a test."""
        lines = []

        def go(ops, ind):
            for op in ops:
                lines.append(ind + repr(op))
                for r in op.regions:
                    lines.append(ind + f"  region{list(r.params)}:")
                    go(r.ops, ind + "    ")
                    lines.append(ind + f"    yield {list(r.yields)}")

        go(self.ops, "")
        return "\n".join(lines)


def ByPtr(d) -> KParam:
    """An entry parameter that is a buffer: the kernel receives a pointer to format ``d``."""
    return KParam(dtype(d).name, True)


def ByValue(d) -> KParam:
    """An entry parameter passed by value: the kernel receives a rank-0 tile of format ``d``."""
    return KParam(dtype(d).name, False)


__all__ = ["Attrs", "ATTRS", "attr_items", "Handle", "Shape", "Region", "Op", "HInfo", "TileProg", "ByPtr", "ByValue",
           "Dtype"]
