"""The operation families: for each, how it is checked while recording (a mixin on the
recorder), lowered (rules registered with ``lower.core``) and computed on the host (rules
registered with ``ref.core``). Importing this package registers every rule."""

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
from .moreviews import MoreViewRecording
from .pointers import PointerRecording
from .reduce import ReduceRecording
from .shape import ShapeRecording
from .tileshape import TileShapeRecording
from .views import ViewRecording

# the recorder's mixins, in the order their methods resolve
FAMILIES = (ArithRecording, MemoryRecording, ControlRecording, ReduceRecording, ShapeRecording,
            ConvertRecording, MmaRecording, ViewRecording, CellRecording, LoopRecording, TileShapeRecording,
            MoreViewRecording, PointerRecording, AtomicRecording, DebugRecording, GlobalRecording, MoreMmaRecording)

__all__ = ["FAMILIES"]
