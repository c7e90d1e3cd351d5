"""One argument check for the device launch and the host reference: the host reference refuses
exactly what a launch refuses -- the argument count, the grid (``launch.normalize_grid``: 1 to 3
dimensions, each an int from 1 to the device's limit) and every by-value argument
(``arrays.prepare``: a number of the parameter's kind that fits its format) -- in the same words,
so the oracle and the device never disagree on bad input (left to itself the host would truncate
2999.7 to 2999, wrap 2^32 + 3000 to 3000 and run grids of 0 or 4 dimensions as no-ops).

Plain Python and numpy: runs without a GPU.
"""

from __future__ import annotations

import numpy as np

from ..errors import TileirError


def check_count(args, params, kernel: str | None) -> None:
    """The launch's count check."""
    if len(args) != len(params):
        raise TileirError(f"takes {len(params)} argument(s), got {len(args)}.", kernel=kernel, what="launch")


def check_grid(grid, kernel: str | None) -> tuple[int, int, int]:
    """The grid as a launch takes it (three ints), or the launch's refusal."""
    from .launch import normalize_grid

    return normalize_grid(grid, kernel)


def host_value(arg, dtype: str, np_type, *, kernel: str | None, pos: int) -> np.ndarray:
    """A by-value argument as the host reference holds it (a 0-d array of ``np_type``), after the
    launch's own check. The value is the one the device receives: an int given as its unsigned
    pattern (2^32 - 1 for an i32) is that pattern's signed value, a float is rounded to the format."""
    from .arrays import prepare

    packed = prepare(arg, dtype, False, kernel=kernel, pos=pos)
    if dtype == "i1":
        return np.asarray(bool(packed.value)).astype(np_type).reshape(())
    if dtype.startswith("i"):
        return np.asarray(packed.value).astype(np_type).reshape(())  # the signed value the slot holds
    value = arg[()] if isinstance(arg, np.ndarray) else arg
    return np.asarray(float(value)).astype(np_type).reshape(())  # floats: rounded to the format, nearest even


__all__ = ["check_count", "check_grid", "host_value"]
