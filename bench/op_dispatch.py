"""The host cost of calling a tileir op (tileir.torch_op): a torch custom op against the eager path
(TorchOp: the implementation itself where nothing traces the call and no input needs a gradient, an
old-style torch.autograd.Function of the same formula where one does), with an implementation that
allocates its output and does nothing else, so only the dispatch is timed; beside them a
setup_context-style Function of the same formula (the form torch's docs show). No GPU needed (CPU
tensors); the host is what is measured.

    PYTHONPATH=src python bench/op_dispatch.py --out bench/results/op_dispatch_cpu.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import torch

from tileir.torch_op import TorchOp


def _impl(x: torch.Tensor, scale: float = 1.0) -> torch.Tensor:
    return torch.empty_like(x)


def _setup(ctx, inputs, output):
    ctx.scale = inputs[1]


def _backward(ctx, g):
    return g, None


def us_per_call(fn, x, reps=20000) -> float:
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(reps):
            fn(x)
        best = min(best, (time.perf_counter() - t) / reps * 1e6)
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    op = TorchOp("dispatch_probe", _impl)
    op.register_fake(lambda x, scale=1.0: torch.empty_like(x))
    op.register_autograd(_backward, setup_context=_setup)
    x, xg = torch.randn(8), torch.randn(8, requires_grad=True)
    class NewStyle(torch.autograd.Function):
        forward = staticmethod(_impl)
        setup_context = staticmethod(_setup)
        backward = staticmethod(_backward)

    rows = {
        "function_us": us_per_call(_impl, x),
        "setup_context_function_grad_us": us_per_call(lambda t: NewStyle.apply(t, 1.0), xg, 5000),
        "custom_op_us": us_per_call(op.op, x),
        "eager_us": us_per_call(op, x),
        "custom_op_grad_us": us_per_call(op.op, xg, 5000),
        "eager_grad_us": us_per_call(op, xg, 5000),
    }
    rows = {k: round(v, 2) for k, v in rows.items()}
    rows["saved_us"] = round(rows["custom_op_us"] - rows["eager_us"], 2)
    rows["saved_grad_us"] = round(rows["custom_op_grad_us"] - rows["eager_grad_us"], 2)
    out = {"tool": "bench/op_dispatch.py", "torch": torch.__version__,
           "cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
           "python": sys.version.split()[0], **rows}
    print(json.dumps(out, indent=1))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
