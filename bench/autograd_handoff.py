"""Where tileir.ops.rms_norm's gradient spends its host time: the forward, the backward formula
(timed inside, on the autograd engine's thread), and the engine's hand-offs around it.

    PYTHONPATH=src python3 bench/autograd_handoff.py
"""

from __future__ import annotations

import statistics
import threading
import time

import torch

import tileir.ops as T

marks = []
real = T._rms_norm_grad


def timed(ctx, dy, drstd):
    t0 = time.perf_counter()
    out = real(ctx, dy, drstd)
    marks.append((t0, time.perf_counter()))
    return out


T._rms_norm.function.backward = staticmethod(timed)
x = torch.randn(64, 64, device="cuda", dtype=torch.bfloat16, requires_grad=True)
w = torch.ones(64, device="cuda", dtype=torch.bfloat16, requires_grad=True)
dy = torch.randn(64, 64, device="cuda", dtype=torch.bfloat16)
rows = []
for i in range(400):
    t0 = time.perf_counter()
    y = T.rms_norm(x, (64,), w)
    t1 = time.perf_counter()
    torch.autograd.grad(y, (x, w), dy)
    t2 = time.perf_counter()
    b0, b1 = marks[-1]
    rows.append((t1 - t0, b0 - t1, b1 - b0, t2 - b1))
    if i % 50 == 49:
        torch.cuda.synchronize()
rows = rows[50:]
names = ("forward", "grad() call to backward start", "backward formula", "backward end to grad() return")
for n, col in zip(names, zip(*rows)):
    print(f"{n:34s} median {statistics.median(col) * 1e6:8.1f} us   min {min(col) * 1e6:8.1f}")
# the same formula called on this thread
_, rstd = T._rms_norm(x.detach(), w.detach(), 1e-6)
ts = []
for _ in range(300):
    t = time.perf_counter()
    T._rms_norm_backward(x.detach(), w.detach(), dy, rstd)
    ts.append(time.perf_counter() - t)
print(f"{'the formula, on the main thread':34s} median {statistics.median(ts) * 1e6:8.1f} us")
print("threads", [t.name for t in threading.enumerate()])
