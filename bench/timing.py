"""How the benchmarks time things: GPU calls the way the package does (tileir.runtime.timing), the
host cost of a launch, and the host cost of producing a kernel's bytes."""

from __future__ import annotations

import statistics
import time

from tileir.runtime.timing import median_ms

__all__ = ["host_us", "median_ms", "per_call_us", "record_encode_ms", "flushed_ms", "checked_ms", "write_rows",
           "kernel_us", "cprofile_rows", "FLUSHED", "KERNEL_SUM"]

FLUSHED = "do_bench (warm-up 10 ms, 40 ms), L2 flushed, median"


KERNEL_SUM = "torch.profiler: the kernels' summed durations per call (no launch gaps)"


def kernel_us(fn, reps: int = 30) -> dict:
    """{kernel name: GPU microseconds per call of ``fn``} and "total": the durations torch.profiler
    records over ``reps`` calls (one warm-up call first). GPU time without the gaps between launches:
    what a call costs inside a CUDA graph, where a step's host cost is gone; at a training step's
    sizes a call through autograd is host-bound, so a wall-clock timer measures the host instead."""
    from collections import defaultdict

    import torch
    from torch.profiler import ProfilerActivity, profile

    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    per: dict = defaultdict(float)
    for e in prof.key_averages():
        if e.device_type.name == "CUDA" and e.self_device_time_total > 0:
            per[e.key] += e.self_device_time_total / reps
    out = {k: round(v, 2) for k, v in per.items()}
    out["total"] = round(sum(per.values()), 2)
    return out


def cprofile_rows(fn, reps: int = 300, top: int = 30) -> list:
    """The ``top`` functions by own time of a cProfile of ``reps`` calls of ``fn`` (the device drained
    after), each {"fn", "calls_per_op", "tottime_us_per_op", "cumtime_us_per_op"}: where a call's host
    time goes (cProfile's own cost inflates every figure alike)."""
    import cProfile
    import io
    import pstats

    import torch

    pr = cProfile.Profile()
    pr.enable()
    for _ in range(reps):
        fn()
    pr.disable()
    torch.cuda.synchronize()
    st = pstats.Stats(pr, stream=io.StringIO())
    rows = []
    for (file, line, name), (_cc, nc, tt, ct, _callers) in st.stats.items():
        rows.append({"fn": f"{file.rsplit('/', 2)[-1]}:{line}:{name}", "calls_per_op": round(nc / reps, 2),
                     "tottime_us_per_op": round(tt / reps * 1e6, 2), "cumtime_us_per_op": round(ct / reps * 1e6, 2)})
    rows.sort(key=lambda r: -r["tottime_us_per_op"])
    return rows[:top]


def flushed_ms(fn) -> float:
    """Milliseconds per call of ``fn`` as the suite times it, shorter: triton.testing.do_bench
    (the L2 flushed before each call, the median), 10 ms of warm-up and 40 of repetitions."""
    from triton.testing import do_bench

    return float(do_bench(fn, warmup=10, rep=40, return_mode="median"))


def time_variants(rows: list, head: dict, calls: dict, error, ratio_key: str, extra=None, prepare=None) -> None:
    """Each of ``calls`` (name -> fn; the first is the ratios' base) run once (after ``prepare()``), its
    error fields (``error()``, read after the run), its ``flushed_ms`` time and the first's time over it
    as ``ratio_key`` (None where the first failed): one row each (``head``, the variant's name,
    ``extra(name)``'s fields), appended and printed. A variant that raises is a row with its error: a
    probe records and goes on."""
    import json

    import torch

    base, first = None, next(iter(calls), None)
    for name, fn in calls.items():
        row = {**head, "variant": name}
        try:
            row.update(extra(name) if extra else {})
            if prepare:
                prepare()
            fn()
            torch.cuda.synchronize()
            row.update(error())
            row["ms"] = flushed_ms(fn)
            base = row["ms"] if name == first else base
            row[ratio_key] = round(base / row["ms"], 3) if base else None
        except Exception as e:  # noqa: BLE001  (a variant that fails is a finding; go on)
            row["error"] = repr(e)[:300]
        rows.append(row)
        print(json.dumps(row), flush=True)


def checked_ms(call, out, want, torch_ms: float, part=None) -> dict:
    """One configuration of a probe: ``call`` run once into a zeroed ``out``, its largest error
    against ``want`` (of ``part(out)`` where given: a few heads of a large output), then its time
    (``flushed_ms``) and torch_ms over it; an exception is recorded (the probe goes on), not raised."""
    import torch

    try:
        out.zero_()
        call()
        torch.cuda.synchronize()
        err = float(((out if part is None else part(out)).float() - want).abs().max())
        ms = flushed_ms(call)
        return {"ms": ms, "ratio": torch_ms / ms, "max_err": err}
    except Exception as e:  # noqa: BLE001  (a probe: record and go on)
        return {"error": repr(e)[:300]}


def write_rows(path, rows, timing: str = FLUSHED) -> None:
    """A probe's result file: the date, the device, how it was timed and its rows."""
    import datetime

    import torch

    head = {"date": datetime.date.today().isoformat(), "device": torch.cuda.get_device_name(), "timing": timing}
    with open(path, "w") as f:
        f.write(dump_rows(head, rows))


def dump_rows(head: dict, rows: list) -> str:
    """``head``'s keys and its ``rows``, one row a line: a probe's file stays small in git (the repository
    travels to the GPU machine, 64 MiB a call with the toolchain) and diffs row by row."""
    import json

    lines = ",\n".join(" " + json.dumps(r, separators=(",", ":")) for r in rows)
    return json.dumps(head, indent=1)[:-2] + ',\n "rows": [\n' + lines + "\n ]\n}\n"


def per_call_us(fn, reps: int = 2000) -> float:
    """Microseconds per call of ``fn`` launched ``reps`` times without waiting (one warm-up call,
    the device drained before and after): the host's cost of a launch, where the GPU keeps up."""
    import torch

    fn()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(reps):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t) / reps * 1e6


def host_us(fn, reps: int = 300) -> float:
    """Microseconds of host time per call of ``fn``, ``reps`` calls issued without waiting and the
    clock stopped before the device is drained: few enough calls that the launch queue does not
    fill, so this is what the host spends, whatever the GPU's own pace (per_call_us is the larger
    of the two)."""
    import torch

    fn()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(reps):
            fn()
        best = min(best, time.perf_counter() - t)
        torch.cuda.synchronize()
    return best / reps * 1e6


def record_encode_ms(kernel, reps: int = 20, **config) -> float:
    """The median milliseconds to record, lower and encode ``kernel`` under ``config`` from nothing:
    a fresh KernelFn of the same function each time, so no cache helps."""
    from tileir.bytecode import encode_kernel

    times = []
    for _ in range(reps):
        k = kernel.fresh()
        t = time.perf_counter()
        encode_kernel(k.kernel(**config))
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)
