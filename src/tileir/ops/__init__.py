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
