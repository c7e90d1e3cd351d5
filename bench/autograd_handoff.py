"""Where tileir.ops.rms_norm's gradient spends its host time: the forward, the backward formula
(timed inside, on the autograd engine's thread), and the engine's hand-offs around it; then the same
formula called on the main thread and on a plain Python thread, and (``--profile FILE``) cProfile
tables of the formula's calls on the engine's thread and on the main thread, by own time, so the
functions that cost more on the engine's thread stand side by side. GPU needed.

    PYTHONPATH=src python3 bench/autograd_handoff.py [--profile bench/results/autograd_thread_profile_h200.txt]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import threading
import time

import torch

import tileir.ops as T

CALLS = 400


def median_us(ts) -> float:
    return statistics.median(ts) * 1e6


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--profile", default=None)
    args = p.parse_args()
    marks: list = []
    real = T._rms_norm_grad
    prof = {"engine": cProfile.Profile(), "main": cProfile.Profile()}
    profiling = [False]

    def timed(ctx, dy, drstd):
        if profiling[0]:
            prof["engine"].enable()
        t0 = time.perf_counter()
        out = real(ctx, dy, drstd)
        marks.append((t0, time.perf_counter()))
        if profiling[0]:
            prof["engine"].disable()
        return out

    T._rms_norm.function.backward = staticmethod(timed)
    x = torch.randn(64, 64, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    w = torch.ones(64, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    dy = torch.randn(64, 64, device="cuda", dtype=torch.bfloat16)
    rows = []
    for i in range(CALLS):
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
        print(f"{n:34s} median {median_us(col):8.1f} us   min {min(col) * 1e6:8.1f}")
    xd, wd = x.detach(), w.detach()
    _, rstd = T._rms_norm(xd, wd, 1e-6)

    def formula_times(n=300, profile=None):
        ts = []
        for _ in range(n):
            if profile is not None:
                profile.enable()
            t = time.perf_counter()
            T._rms_norm_backward(xd, wd, dy, rstd)
            ts.append(time.perf_counter() - t)
            if profile is not None:
                profile.disable()
        return ts

    main_ts = formula_times()
    print(f"{'the formula, on the main thread':34s} median {median_us(main_ts):8.1f} us")
    got: list = []
    th = threading.Thread(target=lambda: got.extend(formula_times()))
    th.start()
    th.join()
    print(f"{'the formula, on a Python thread':34s} median {median_us(got):8.1f} us")
    with torch.no_grad():
        ng = formula_times()
    print(f"{'the formula, main thread, no_grad':34s} median {median_us(ng):8.1f} us")
    if args.profile:
        profiling[0] = True
        for i in range(CALLS):
            torch.autograd.grad(T.rms_norm(x, (64,), w), (x, w), dy)
            if i % 50 == 49:
                torch.cuda.synchronize()
        profiling[0] = False
        formula_times(CALLS, prof["main"])
        with open(args.profile, "w") as fh:
            fh.write(f"cProfile of {CALLS} calls of rms_norm's backward formula (64 x 64 bf16), by own time\n")
            for where in ("engine", "main"):
                buf = io.StringIO()
                pstats.Stats(prof[where], stream=buf).sort_stats("tottime").print_stats(30)
                fh.write(f"\n## on the {where} thread\n" + buf.getvalue())
        print(open(args.profile).read()[:9000])
    print("threads", [t.name for t in threading.enumerate()])


if __name__ == "__main__":
    main()
