"""Host-side launch overhead: a tiny kernel launched many times -- tileir's whole call, its Launcher
alone, a bare cuLaunchKernel of the same cubin from Python (the floor), torch -- and the time to
record + lower + encode a matmul.

    PYTHONPATH=src python3 bench/launch_overhead.py --out bench/results/launch_overhead_h200.json
"""

from __future__ import annotations

import argparse
import ctypes
import datetime
import json

import torch
from timing import per_call_us, record_encode_ms

from tileir.kernels import matmul_f16, vadd


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    args = p.parse_args()
    n = 1024
    a, b, c = (torch.randn(n, device="cuda") for _ in range(3))
    vadd(a, b, c, n=n)  # record, assemble, load
    ((launcher, grid_rule),) = vadd._fast.values()
    from tileir.runtime.driver import cu
    from tileir.runtime.launch import normalize_grid

    d = cu()
    g = normalize_grid(grid_rule((a, b, c)))
    slots = (ctypes.c_uint64 * 3)(a.data_ptr(), b.data_ptr(), c.data_ptr())
    ptrs = (ctypes.c_void_p * 3)(*[ctypes.addressof(slots) + 8 * i for i in range(3)])
    stream = d.CUstream(0)
    abc = (a, b, c)
    # libcuda's cuLaunchKernel through ctypes: measured slower than cuda-bindings' wrapper on the
    # H200 machine (bench/results/launch_overhead_ctypes_h200.json), so the Launcher does not use it
    try:
        raw = ctypes.CDLL("libcuda.so.1").cuLaunchKernel
        u = ctypes.c_uint
        raw.argtypes = [ctypes.c_void_p, u, u, u, u, u, u, u, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        raw.restype = ctypes.c_int
    except (OSError, AttributeError):
        raw = None
    fn_ptr = int(launcher.function)
    us = {
        # the whole call: configuration lookup, grid from the shapes, argument checks, the launch
        "tileir": per_call_us(lambda: vadd(a, b, c, n=n, sync=False)),
        # the Launcher alone (grid given): argument checks and the driver call
        "tileir_launcher": per_call_us(lambda: launcher(g, abc, None, False)),
        # the floors from Python, the arguments packed once: through cuda-bindings, and libcuda through ctypes
        "cuLaunchKernel": per_call_us(lambda: d.cuLaunchKernel(launcher.function, *g, 1, 1, 1, 0, stream,
                                                               ctypes.addressof(ptrs), 0)),
        "cuLaunchKernel_ctypes": per_call_us(lambda: raw(fn_ptr, *g, 1, 1, 1, 0, None, ctypes.addressof(ptrs), None))
        if raw else None,
        "torch": per_call_us(lambda: torch.add(a, b, out=c)),
        # host-only pieces (nothing launched): where the rest goes
        "host_grid_rule": per_call_us(lambda: grid_rule(abc)),
        "host_fast_lane_checks": per_call_us(lambda: launcher._fast_values(abc)),
        "host_torch_three_calls_x3": per_call_us(lambda: [(t.get_device(), t.is_contiguous(), t.data_ptr())
                                                          for t in abc]),
    }
    torch.cuda.synchronize()
    assert torch.equal(c, a + b)
    out = {"date": datetime.date.today().isoformat(), "gpu": torch.cuda.get_device_name(0),
           "launch_overhead_us": {k: round(v, 2) if v is not None else None for k, v in us.items()},
           "record_encode_ms_matmul": round(record_encode_ms(matmul_f16, m=8192, n=8192, k=8192), 3)}
    print(json.dumps(out))
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
