"""The host reference (the spec's tileref): interprets a TileProg on numpy / ml_dtypes."""

from .core import Interp, interp, run_host

__all__ = ["Interp", "interp", "run_host"]
from .second import ref_erf, ref_fpowi, ref_sin  # noqa: E402,F401
