"""Where a Python autograd Function's backward spends host time on the GPU machine: trivial
Functions (one output; two with the second unused; the same with materialize_grads off or the
second marked non-differentiable) against torch's own rms_norm and tileir.ops.rms_norm, each
through torch.autograd.grad on tiny CUDA tensors (bench/timing.py's host_us).

    PYTHONPATH=src python3 bench/autograd_host_cost.py --out bench/results/autograd_host_cost_h200.json

``--profile FILE`` then writes cProfile tables (by own time and by cumulative time) of a forward and
backward of tileir.ops.matmul and rms_norm at the training example's sizes (8192 tokens, d_model 512,
bf16): where a backward's host time goes, the training profile's matmul_autogradBackward taking
~160 us of host time a call (bench/results/training_profile_h200.json).
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


def profile_backwards(path: str, calls: int = 300) -> None:
    """cProfile tables of forward + backward of ops.matmul (x @ W, W [K, N] as the example holds it) and
    ops.rms_norm at the example's sizes, host time per call beside each."""
    import cProfile
    import io
    import pstats

    bf = torch.bfloat16
    x = torch.randn(8192, 512, device="cuda", dtype=bf, requires_grad=True)
    w = torch.randn(512, 1536, device="cuda", dtype=bf, requires_grad=True)
    g = torch.ones(512, device="cuda", dtype=bf, requires_grad=True)
    cases = {"matmul x @ W": (lambda: T.matmul(x, w), (x, w), torch.randn(8192, 1536, device="cuda", dtype=bf)),
             "rms_norm": (lambda: T.rms_norm(x, (512,), g), (x, g), torch.randn(8192, 512, device="cuda", dtype=bf))}
    with open(path, "w") as fh:
        for name, (f, ins, dy) in cases.items():
            def step(f=f, ins=ins, dy=dy):
                torch.autograd.grad(f(), ins, dy)

            fwd = host_us(lambda f=f: f(), reps=100)
            both = host_us(step, reps=100)
            prof = cProfile.Profile()
            step()
            torch.cuda.synchronize()
            prof.enable()
            for _ in range(calls):
                step()
            prof.disable()
            torch.cuda.synchronize()
            fh.write(f"## {name}: forward {fwd:.1f} us, forward + backward {both:.1f} us a call (host_us); "
                     f"cProfile of {calls} calls\n")
            for key in ("tottime", "cumulative"):
                buf = io.StringIO()
                pstats.Stats(prof, stream=buf).sort_stats(key).print_stats(28)
                fh.write(buf.getvalue())
    print(open(path).read()[:6000], flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--profile", default=None)
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
    if args.profile:
        profile_backwards(args.profile)


if __name__ == "__main__":
    main()
