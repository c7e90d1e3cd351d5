"""The one way the benchmarks time a GPU call: CUDA events around each call, warm-up first, the
median of the repetitions (milliseconds)."""

from __future__ import annotations

import statistics


def median_ms(fn, reps: int = 20, warm: int = 1) -> float:
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
