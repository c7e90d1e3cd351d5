"""The host work of a repeated launch that is tileir's own (on a CPU, no GPU needed): finding the
loaded function by the call's configuration and working out the grid from the argument shapes.
The launcher is replaced by one that does nothing, so packing the arguments and cuLaunchKernel
are not in the figure; bench/launch_overhead.py measures the whole call on a GPU.

    PYTHONPATH=src python3 bench/launch_host_path.py --out bench/results/launch_host_path_cpu.json
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import time
from unittest import mock

import numpy as np

from tileir.kernel import KernelFn
from tileir.kernels import saxpy, vadd


def per_call_us(fn, n=20000):
    fn()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t) / n * 1e6


def host_path_us(kernel: KernelFn, arrays, **static) -> float:
    calls = []
    with mock.patch.object(KernelFn, "cubin", lambda self, *a, **k: b""), \
         mock.patch("tileir.runtime.launch.launcher_for", lambda *a, **k: lambda g, args, s, sync: calls.append(g)):
        kernel.forget()
        us = per_call_us(lambda: kernel(*arrays, arch="sm_90", sync=False, **static))
        kernel.forget()
    assert calls and all(g == calls[0] for g in calls)
    return us


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    args = p.parse_args()
    n = 1 << 20
    x = [np.zeros(n, np.float32) for _ in range(3)]
    out = {"date": datetime.date.today().isoformat(), "machine": platform.processor() or platform.machine(),
           "python": platform.python_version(),
           "host_path_us": {"vadd (grid from cells)": round(host_path_us(vadd, x), 2),
                            "saxpy (grid from the length of its arrays)": round(
                                host_path_us(saxpy, [np.float32(2.0), x[0], x[1]]), 2)}}
    print(json.dumps(out))
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
