"""Host-side launch overhead: a tiny kernel launched many times -- tileir's whole plain call
(through torch's launcher where it has one, and through cuda-bindings), its Launcher alone, a bare
cuLaunchKernel of the same cubin from Python (the floor through cuda-bindings), torch's own add --
and the pieces of ours, timed alone; then the time to record + lower + encode a matmul.

    PYTHONPATH=src python3 bench/launch_overhead.py --out bench/results/launch_overhead_h200.json
"""

from __future__ import annotations

import argparse
import ctypes
import datetime
import importlib
import json
import statistics

import torch
from timing import host_us, per_call_us, record_encode_ms

import tileir as ti
from tileir import F32, In, Out, cells
from tileir.kernels import matmul_f16


@ti.kernel
def vadd(a=In(F32, cells(["N"], [1024])), b=In(F32, cells(["N"], [1024])), c=Out(F32, cells(["N"], [1024]))):
    ti.store_cell(c, ti.load_cell(a) + ti.load_cell(b))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    args = p.parse_args()
    n = 1024
    a, b, c = (torch.randn(n, device="cuda") for _ in range(3))
    vadd(a, b, c)  # record, assemble, load
    torch.cuda.synchronize()
    (site,) = vadd._sites.values()
    ((launcher, grid_rule, _dense, _grid3),) = site.variants.values()
    plan = site.plan
    from tileir.runtime import driver
    launch_mod = importlib.import_module("tileir.runtime.launch")  # (the package's `launch` is the function)
    from tileir.runtime.driver import cu
    from tileir.runtime.launch import current_torch_stream, normalize_grid

    d = cu()
    values = plan.values((a, b, c))
    g = normalize_grid(grid_rule((a, b, c), values))
    slots = (ctypes.c_uint64 * 4)(a.data_ptr(), b.data_ptr(), c.data_ptr(), n)
    ptrs = (ctypes.c_void_p * 4)(*[ctypes.addressof(slots) + 8 * i for i in range(4)])
    stream = d.CUstream(current_torch_stream(0))
    fn = launcher.function(0)
    full = (a, b, c, *values)
    ready = site.reader((a, b, c))[1]
    tl, fi, h0 = launcher._torch_launch, launcher._function_ints.get(0), current_torch_stream(0)
    us = {
        # the whole plain call: sizes off the arrays, variant, grid, argument checks, the launch
        "tileir": per_call_us(lambda: vadd(a, b, c)),
        # the Launcher alone (grid and sizes given): argument checks, the stream, the driver call
        "tileir_launcher": per_call_us(lambda: launcher(g, full)),
        # the Launcher's slot path alone (what a plain call's generated reader hands it)
        "tileir_launch_slots": per_call_us(lambda: launcher.launch_slots(0, ready, g, None, False)),
        # the floor from Python, the arguments packed once, through cuda-bindings
        "cuLaunchKernel": per_call_us(lambda: d.cuLaunchKernel(fn, *g, 1, 1, 1, 0, stream, ctypes.addressof(ptrs), 0)),
        "torch": per_call_us(lambda: torch.add(a, b, out=c)),
        # the floors of a call made from Python: torch's own C++ launcher with every argument made
        # once (what our slots reach), and the least Python a call of three tensors reads -- their
        # pointers, shapes and strides -- with nothing launched
        "torch_launcher_bare": (per_call_us(lambda: tl(fi, *g, launcher._warps, 0, launcher._tys, ready, h0))
                                if tl is not None else None),
        "host_read_three_tensors": per_call_us(lambda: (a.data_ptr(), b.data_ptr(), c.data_ptr(), a.shape, b.shape,
                                                        c.shape, a.stride(), b.stride(), c.stride())),
        # host-only pieces (nothing launched): where the rest goes
        "host_sizes_generic": per_call_us(lambda: plan.values((a, b, c))),
        "host_grid": per_call_us(lambda: grid_rule((a, b, c), values)),
        "host_fast_lane_checks": per_call_us(lambda: launcher._fast_values(full)),
        "host_generated_reader": per_call_us(lambda: site.reader((a, b, c))),
        "host_current_stream": per_call_us(lambda: current_torch_stream(0)),
        "host_bind": per_call_us(lambda: driver.bind(0)),
    }
    # the same plain call with torch's launcher turned off (every launch through cuda-bindings)
    through_torch = launcher._torch_launch is not None
    launcher._torch_launch = None
    us["tileir_through_bindings"] = per_call_us(lambda: vadd(a, b, c))
    host_bindings = host_us(lambda: vadd(a, b, c))
    launcher._torch_launch = launch_mod._torch_launcher() if through_torch else None
    # the host's own cost per call (the queue never fills): where per_call_us is the GPU's pace
    # for both sides, this says how much host time each leaves to spare
    host = {"tileir": host_us(lambda: vadd(a, b, c)),
            "tileir_launch_slots": host_us(lambda: launcher.launch_slots(0, ready, g, None, False)),
            "cuLaunchKernel": host_us(lambda: d.cuLaunchKernel(fn, *g, 1, 1, 1, 0, stream, ctypes.addressof(ptrs), 0)),
            "torch": host_us(lambda: torch.add(a, b, out=c)),
            **({"torch_launcher_bare": host_us(lambda: tl(fi, *g, launcher._warps, 0, launcher._tys, ready, h0))}
               if tl is not None else {}),
            "tileir_through_bindings": host_bindings}
    # the GPU's pace: back-to-back launches of the same add timed by events
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(2000):
        torch.add(a, b, out=c)
    end.record()
    torch.cuda.synchronize()
    gpu_us = start.elapsed_time(end) / 2000 * 1e3
    torch.cuda.synchronize()
    vadd(a, b, c)
    torch.cuda.synchronize()
    assert torch.equal(c, a + b)
    # the headline ratio from interleaved rounds (tileir, torch, tileir, ...): one pair of numbers
    # taken a minute apart moved by 20% on this host between runs (the first run's figures beside)
    rounds = [(per_call_us(lambda: vadd(a, b, c)), per_call_us(lambda: torch.add(a, b, out=c))) for _ in range(7)]
    ratio = statistics.median(t / r for t, r in rounds)
    out = {"date": datetime.date.today().isoformat(), "gpu": torch.cuda.get_device_name(0),
           "launch_overhead_us": {k: round(v, 2) if v is not None else None for k, v in us.items()},
           "tileir_over_torch": round(ratio, 3),
           "rounds_us": [[round(t, 2), round(r, 2)] for t, r in rounds],
           "tileir_over_torch_how": "the median over 7 interleaved rounds of tileir's plain call / torch.add(out=) "
                                    "per call, 2000 calls each",
           "through_torchs_launcher": through_torch, "warps": launcher._warps,
           "host_only_us": {k: round(v, 2) for k, v in host.items()},
           "gpu_us_per_small_add": round(gpu_us, 2),
           "record_encode_ms_matmul": round(record_encode_ms(matmul_f16, tm=128, tn=256, tk=32, group=8), 3)}
    print(json.dumps(out))
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
