"""The operation families: for each, how it is checked while recording (a mixin on the
recorder), lowered (rules registered with ``lower.core``) and computed on the host (rules
registered with ``ref.core``)."""

from .arith import ArithRecording
from .cells import CellRecording
from .control import ControlRecording
from .convert import ConvertRecording
from .memory import MemoryRecording
from .mma import MmaRecording
from .reduce import ReduceRecording
from .shape import ShapeRecording
from .views import ViewRecording

FAMILIES = (ArithRecording, MemoryRecording, ControlRecording, ReduceRecording, ShapeRecording,
            ConvertRecording, MmaRecording, ViewRecording,
            CellRecording)

__all__ = ["FAMILIES"]

# the loops, tile-shape and view families of issue 3 (appended: other families append too)
from .loops import LoopRecording  # noqa: E402
from .moreviews import MoreViewRecording  # noqa: E402
from .tileshape import TileShapeRecording  # noqa: E402

FAMILIES = FAMILIES + (LoopRecording, TileShapeRecording, MoreViewRecording)

# the pointer, atomic, debug and globals families of issue 3 (appended)
from .atomics import AtomicRecording  # noqa: E402
from .debug import DebugRecording  # noqa: E402
from .globals import GlobalRecording  # noqa: E402
from .pointers import PointerRecording  # noqa: E402

FAMILIES = FAMILIES + (PointerRecording, AtomicRecording, DebugRecording, GlobalRecording)

# mmai and mma_scaled (ops/mma.py)
from .mma import MoreMmaRecording  # noqa: E402

FAMILIES = FAMILIES + (MoreMmaRecording,)
