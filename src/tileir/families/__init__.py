"""The operation families: for each, how it is checked while recording (a mixin on the
recorder), lowered (rules registered with ``lower.core``) and computed on the host (rules
registered with ``ref.core``).

This package is the one place the rule tables are filled: it imports every family module (the
whole list is ``MODULES``), and each module's ``@lowering(kind)`` and ``@interp(kind)`` enter its
rules in ``lower.core.RULES`` and ``ref.core.RULES`` as it loads. The recorder (``tileir.record``)
is made of the families' mixins, so it imports this package: a program can only have been recorded
once every rule is in. The lowering and the host reference import no family (the families import
their decorators), and tests/test_rules.py holds every kind of operation the recorder emits to a
lowering rule, a host rule and, through ``generic.CONVERT`` and the dialect table, a printer.
"""

from ..lower.core import RULES as LOWERING
from ..ref.core import RULES as HOST
from . import (
    arith,
    atomics,
    cells,
    control,
    convert,
    debug,
    globals,
    loops,
    memory,
    mma,
    pointers,
    recording,
    reduce,
    shape,
    spaces,
    strided_gather_views,
    tileshape,
    views,
)
from .arith import ArithRecording
from .atomics import AtomicRecording
from .cells import CellRecording
from .control import ControlRecording
from .convert import ConvertRecording
from .debug import DebugRecording
from .globals import GlobalRecording
from .loops import LoopRecording
from .memory import MemoryRecording
from .mma import MmaRecording, MoreMmaRecording
from .pointers import PointerRecording
from .reduce import ReduceRecording
from .shape import ShapeRecording
from .strided_gather_views import StridedGatherViewRecording
from .tileshape import TileShapeRecording
from .views import ViewRecording

# every family module: those with rules, cells (checks while recording only), spaces (shared helpers) and
# recording (the recorder as a mixin sees it, for the type checker)
MODULES = (arith, atomics, cells, control, convert, debug, globals, loops, memory, mma, pointers, recording, reduce,
           shape, spaces, strided_gather_views, tileshape, views)

# the recorder's mixins, in the order their methods resolve
FAMILIES = (ArithRecording, MemoryRecording, ControlRecording, ReduceRecording, ShapeRecording,
            ConvertRecording, MmaRecording, ViewRecording, CellRecording, LoopRecording, TileShapeRecording,
            StridedGatherViewRecording, PointerRecording, AtomicRecording, DebugRecording, GlobalRecording,
            MoreMmaRecording)

# LOWERING (lower.core.RULES) and HOST (ref.core.RULES), kind -> rule: whole once this package has
# loaded, so a reader that needs every rule (the diff's mutants and classifier) imports them from here

__all__ = ["FAMILIES", "MODULES", "LOWERING", "HOST"]
