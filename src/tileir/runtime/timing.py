"""The one way tileir times a GPU call (the autotuner and every benchmark): CUDA events on
torch's current stream around each call, warm-up first, the median of the repetitions."""

from __future__ import annotations

import statistics
from collections.abc import Callable


def median_ms(fn: Callable[[], object], reps: int = 20, warm: int = 1) -> float:
    """Milliseconds per call of ``fn``: ``warm`` calls, then the median of ``reps`` timed ones."""
    import torch

    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        out.append(s.elapsed_time(e))
    return statistics.median(out)
