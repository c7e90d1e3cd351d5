"""The library's kernels as runnable cases: fresh random inputs of a size, an independent reference,
a tolerance, and the configuration a case runs with at that size -- its formats and flags, and the
tiles the tuned table picks where there is a GPU; never the size itself, which the kernels read off
the arrays. ``tileir run NAME`` and the tests use these."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..kernel import KernelFn


@dataclass
class Case:
    name: str
    kernel: KernelFn
    summary: str
    default_size: int | tuple[int, ...]  # an int, or one int a dimension (--size 64x128)
    config: Callable  # size -> the kernel's configuration there: formats, flags, tiles ({} for the defaults)
    inputs: Callable  # (size, rng) -> list of arguments in parameter order (numpy arrays / numbers)
    expected: Callable  # (args) -> the output array an independent numpy computation gives
    output: int  # which argument the kernel writes
    rtol: float = 0.0
    atol: float = 0.0  # both 0: bit-exact
    variants: dict = field(default_factory=dict)
    runner: Callable | None = None  # (args, where, **config) -> None: runs more than one launch (else the kernel)

    def check(self, got, want) -> tuple[float, bool]:
        """(max abs error, within tolerance)."""
        g = np.asarray(got, dtype=np.float64)
        w = np.asarray(want, dtype=np.float64)
        err = float(np.max(np.abs(g - w))) if g.size else 0.0
        if self.rtol == 0 and self.atol == 0:
            ok = np.array_equal(np.asarray(got), np.asarray(want).astype(np.asarray(got).dtype))
        else:
            ok = bool(np.allclose(g, w, rtol=self.rtol, atol=self.atol))
        return err, ok


CASES: dict[str, Case] = {}


def register(case: Case) -> Case:
    CASES[case.name] = case
    return case


def rng_for(seed=None):
    return np.random.default_rng(seed)
