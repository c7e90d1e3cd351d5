"""SwiGLU's gate (kernels/swiglu.py) against eager torch, forward and backward: GPU time (the
kernels' summed durations, as a CUDA graph runs them) and do_bench's flushed wall time, for the
cells the rule picks (swiglu.tiles_for) and a few others, f16 and bf16, at the training example's
[8192, 2 x 1408] and at gated MLPs of 7-8B models' widths. The answers are checked against torch
on each shape.

    PYTHONPATH=src python3 bench/swiglu_probe.py --out bench/results/swiglu_h200.json
"""

from __future__ import annotations

import argparse
import functools
import json

import torch
import torch.nn.functional as F  # noqa: N812
from timing import KERNEL_SUM, flushed_ms, kernel_us

from tileir.kernels.swiglu import swiglu_backward, swiglu_forward, tiles_for

SHAPES = [(8192, 2 * 1408), (4096, 2 * 11008), (8192, 2 * 14336), (1024, 2 * 4096), (32768, 2 * 1000)]
# the first round (bench/results/swiglu_round1_h200.json, the rule then 4096 lanes a block) had
# {"rt": 2, "ct": 1024}, {"rt": 8, "ct": 1024}, {"rt": 16, "ct": 256}, {"rt": 4, "ct": 1024, "occupancy": 2},
# {"rt": 4, "ct": 512} and {"rt": 8, "ct": 512, "warps": 8}: one row of 1024 won at every shape
CELLS = [None, {"rt": 1, "ct": 512}, {"rt": 1, "ct": 256}, {"rt": 2, "ct": 256}, {"rt": 1, "ct": 2048},
         {"rt": 1, "ct": 1024, "warps": 2}, {"rt": 1, "ct": 1024, "occupancy": 4}]


def torch_pair(x, dh):
    def fwd():
        g, u = x.chunk(2, -1)
        return F.silu(g) * u

    xg = x.detach().clone().requires_grad_()

    def both():
        g, u = xg.chunk(2, -1)
        torch.autograd.grad(F.silu(g) * u, xg, dh)

    return fwd, both


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    args = p.parse_args()
    rows = []
    for r, c2 in SHAPES:
        for dt, fmt in ((torch.bfloat16, "bf16"), (torch.float16, "f16")):
            torch.manual_seed(0)
            x = torch.randn(r, c2, device="cuda", dtype=dt) * 2
            dh = torch.randn(r, c2 // 2, device="cuda", dtype=dt)
            fwd, both = torch_pair(x, dh)
            h_want = fwd()
            xg = x.detach().clone().requires_grad_()
            g, u = xg.chunk(2, -1)
            (dx_want,) = torch.autograd.grad(F.silu(g) * u, xg, dh)
            tf, tb = kernel_us(fwd), kernel_us(both)
            rec = {"shape": [r, c2], "fmt": fmt, "rule": tiles_for(c2 // 2),
                   "torch": {"fwd_us": tf["total"], "bwd_us": round(tb["total"] - tf["total"], 2),
                             "fwd_flushed_ms": flushed_ms(fwd), "fwd_bwd_flushed_ms": flushed_ms(both)},
                   "tileir": []}
            for cells in CELLS:
                cfg = cells or {}
                row = {"cells": cfg or "rule"}
                try:
                    h = swiglu_forward(x, **cfg)
                    dx = swiglu_backward(x, dh, **cfg)
                    torch.cuda.synchronize()
                    row["err"] = {"h": float((h.float() - h_want.float()).abs().max()),
                                  "dx": float((dx.float() - dx_want.float()).abs().max())}
                    f = functools.partial(swiglu_forward, x, **cfg)
                    b = functools.partial(swiglu_backward, x, dh, **cfg)
                    row["fwd_us"], row["bwd_us"] = kernel_us(f)["total"], kernel_us(b)["total"]
                    row["fwd_flushed_ms"], row["bwd_flushed_ms"] = flushed_ms(f), flushed_ms(b)
                    row["gpu_speedup"] = {"fwd": round(rec["torch"]["fwd_us"] / row["fwd_us"], 3),
                                          "bwd": round(rec["torch"]["bwd_us"] / row["bwd_us"], 3)}
                except Exception as e:  # noqa: BLE001  (a probe: record and go on)
                    row["error"] = repr(e)[:300]
                rec["tileir"].append(row)
                print(rec["shape"], fmt, json.dumps(row), flush=True)
            print("torch", rec["shape"], fmt, json.dumps(rec["torch"]), flush=True)
            rows.append(rec)
    with open(args.out, "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                   "timing": KERNEL_SUM + "; *_flushed_ms: do_bench (L2 flushed) median",
                   "torch_how": "F.silu(gate) * up on x.chunk(2, -1), its backward through autograd.grad",
                   "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
