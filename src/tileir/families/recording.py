"""The recorder as a family's mixin sees it, for the type checker.

The recorder (``record.Recorder``) is its core (``record.core.RecorderCore``: handles, operations,
regions, carries, the token, refusals) and every family's mixin (``families.FAMILIES``), so a
mixin's method calls the core and, now and then, a helper another family defines (``operands`` of
arith, ``check_shape`` of memory, ``space_of`` of pointers ...). ``Recording`` is that recorder:
each mixin derives from it. Under mypy it is the core plus those shared helpers, each declared here
once with its signature (the family that defines it overrides the declaration, and mypy holds the
two alike); at run time it is ``object``, so a mixin's bases and the recorder's method order are
what they would be without it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

# where a pointer tile points (families/pointers.py): parameter p, ("global", sym), ("alloca", op
# number), or None where the recording cannot follow it
Space = int | tuple[str, object] | None

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .. import ir
    from ..prog import Handle, Op
    from ..record.core import RecorderCore

    class Recording(RecorderCore):
        # cells.py: the buffer is read through the plan's views (the launch's strides)
        planned_view: bool

        # arith.py
        def spread(self, h: Handle, shape: Sequence[int]) -> Handle: ...
        def operands(self, what: str, dtype: str, shape: Sequence[int], handles: Sequence[Handle],
                     kind: str = "any") -> list[Handle]: ...

        # memory.py
        def check_shape(self, shape: Sequence[int], what: str) -> tuple[int, ...]: ...
        def _index(self, h: Handle, what: str) -> Handle: ...
        def _mask(self, mask: Handle | None, shape: Sequence[int], what: str) -> Handle | None: ...
        def _buffer(self, param: int, dtype: str, what: str) -> ir.KParam: ...

        # control.py
        def _check_yields(self, outs: Sequence[Handle], like: Sequence, what: str) -> None: ...

        # views.py
        def _view(self, h: Handle, kinds: tuple[type, ...], what: str) -> dict: ...
        def _grid_indices(self, ty, indices: Sequence[Handle], inbounds: Sequence[bool], what: str) -> None: ...

        # strided_gather_views.py
        def _rows_index(self, h: Handle, n: int, what: str) -> Handle: ...

        # pointers.py
        def set_space(self, h: Handle, space: Space) -> None: ...
        def space_of(self, h: Handle) -> Space: ...
        def _pointee(self, dtype: str, what: str) -> str: ...
        def _i32_index(self, h: Handle, shape: Sequence[int], what: str) -> Handle: ...
        def _defining_op(self, h: Handle) -> Op | None: ...

        # globals.py
        def declared_global(self, sym: str) -> ir.Global | None: ...
else:
    Recording = object

__all__ = ["Recording", "Space"]
