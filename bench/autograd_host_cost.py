"""Where a Python autograd Function's backward spends host time on the GPU machine: trivial
Functions (one output; two with the second unused; the same with materialize_grads off or the
second marked non-differentiable) against torch's own rms_norm and tileir.ops.rms_norm, each
through torch.autograd.grad on tiny CUDA tensors (bench/timing.py's host_us).

    PYTHONPATH=src python3 bench/autograd_host_cost.py --out bench/results/autograd_host_cost_h200.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import torch
import torch.nn.functional as F  # noqa: N812

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import host_us  # noqa: E402

import tileir.ops as T  # noqa: E402


def fn(outputs: int, materialize: bool = True, nondiff: bool = False, launch: bool = False):
    class F1(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            ctx.set_materialize_grads(materialize)
            ctx.save_for_backward(x, w)
            ys = tuple(x.new_empty(x.shape) for _ in range(outputs))
            if nondiff and outputs > 1:
                ctx.mark_non_differentiable(*ys[1:])
            return ys if outputs > 1 else ys[0]

        @staticmethod
        def backward(ctx, *grads):
            x, w = ctx.saved_tensors
            dx = torch.zeros_like(x) if launch else x.new_empty(x.shape)
            return dx, w.new_empty(w.shape)

    return F1


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    args = p.parse_args()
    dev, bf = "cuda", torch.bfloat16
    x = torch.randn(64, 64, device=dev, dtype=bf, requires_grad=True)
    w = torch.ones(64, device=dev, dtype=bf, requires_grad=True)
    dy = torch.randn(64, 64, device=dev, dtype=bf)
    grad = torch.autograd.grad

    def first(y):
        return y[0] if isinstance(y, tuple) else y

    rows = {}
    cases = [("one output", fn(1)), ("two outputs", fn(2)), ("two, materialize off", fn(2, False)),
             ("two, second non-differentiable", fn(2, True, True)), ("backward launches", fn(1, launch=True))]
    for name, f in cases:
        rows[name] = host_us(lambda f=f: grad(first(f.apply(x, w)), (x, w), dy))
    rows["torch F.rms_norm grad"] = host_us(lambda: grad(F.rms_norm(x, (64,), w), (x, w), dy))
    rows["tileir ops.rms_norm grad"] = host_us(lambda: grad(T.rms_norm(x, (64,), w), (x, w), dy))
    rows["tileir ops.rms_norm forward (no grad)"] = host_us(lambda: T.rms_norm(x.detach(), (64,), w.detach()))
    rows["torch x * 2 grad"] = host_us(lambda: grad(x * 2, (x,), dy))
    out = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
           "host_us": {k: round(v, 2) for k, v in rows.items()}}
    for k, v in out["host_us"].items():
        print(f"{k:40s} {v:8.1f} us", flush=True)
    with open(args.out, "w") as fh:
        json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
