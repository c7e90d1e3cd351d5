"""Where an eager op's host time goes, layer by layer: each tileir.ops op the training example uses,
timed as the public function, as its custom op's eager path (``TorchOp.__call__``), as the
implementation alone, and as the bare kernel call on preallocated outputs, beside the torch op, at a
size so small that the GPU never holds the host back (timing.host_us). The difference between two
rows is the cost of one layer. The backward rows do the same for rms_norm's and x @ W's gradients:
forward and backward through torch.autograd.grad (tileir and torch), the formula called directly
(no autograd), the kernels' wrapper, the bare kernels on given outputs, and the allocations. GPU needed.

    PYTHONPATH=src python bench/op_layers.py --out bench/results/op_layers_h200.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import torch
import torch.nn.functional as F

import tileir.kernels as K
import tileir.ops as T

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import host_us  # noqa: E402

REPS = 300


def layers(dev):
    """{op: [(layer, call)]}, the outermost layer first, torch's op last."""
    bf = torch.bfloat16
    x = torch.randn(64, 64, device=dev, dtype=bf)
    g = torch.ones(64, device=dev, dtype=bf)
    y = torch.empty_like(x)
    rstd = torch.empty(64, device=dev, dtype=torch.float32)
    xg, gg = (t.detach().clone().requires_grad_() for t in (x, g))
    q, k, v = (torch.randn(1, 2, 64, 64, device=dev, dtype=bf) for _ in range(3))
    o = torch.empty_like(q)
    lse = torch.empty(1, 2, 64, device=dev, dtype=torch.float32)
    qg, kg, vg = (t.detach().clone().requires_grad_() for t in (q, k, v))
    w = torch.randn(128, 64, device=dev, dtype=bf)
    c = torch.empty(64, 128, device=dev, dtype=bf)
    eps = torch.finfo(bf).eps
    from tileir.kernels.norms_bwd import groups_for, sum_rows, tiles_for

    dy = torch.randn(64, 64, device=dev, dtype=bf)
    dx = torch.empty_like(x)
    t, rb = tiles_for(64, 64)
    groups = groups_for(-(-64 // rb))
    part = torch.empty(groups, 64, device=dev, dtype=torch.float32)
    dw = torch.empty(64, device=dev, dtype=bf)
    _, rstd_saved = T._rms_norm.impl(x, g, eps)
    wk = torch.randn(64, 128, device=dev, dtype=bf)  # W as the example holds it: [K, N]
    wkg = wk.detach().clone().requires_grad_()
    dc = torch.randn(64, 128, device=dev, dtype=bf)
    da, dwk = torch.empty(64, 64, device=dev, dtype=bf), torch.empty(64, 128, device=dev, dtype=bf)
    grad = torch.autograd.grad

    def bare_norm_backward():
        K.rmsnorm_bwd(x, g, dy, rstd_saved, dx, part, fmt="bf16", max_tile=t, row_tile=rb, one_chunk=True)
        sum_rows(part, dw, fmt="bf16", tg=32, tc=256)

    def chain(norm, n=16):  # one backward over n nodes, as a training step runs them: the engine's hand-offs once
        def step():
            h = xg
            for _ in range(n):
                h = norm(h, (64,), gg)
            grad(h, (xg, gg), dy)
        return step

    return {
        "rms_norm x 16, one backward (per op: divide by 16)": [
            ("tileir", chain(T.rms_norm)),
            ("torch F.rms_norm", chain(F.rms_norm)),
        ],
        "rms_norm backward": [
            ("forward + backward, tileir (autograd.grad)", lambda: grad(T.rms_norm(xg, (64,), gg), (xg, gg), dy)),
            ("forward + backward, torch F.rms_norm", lambda: grad(F.rms_norm(xg, (64,), gg), (xg, gg), dy)),
            ("the formula, custom op eager path", lambda: T._rms_norm_backward(x, g, dy, rstd_saved)),
            ("kernels.rmsnorm_backward", lambda: K.rmsnorm_backward(x, g, dy, rstd_saved)),
            ("two kernels, outputs given", bare_norm_backward),
            ("three new_empty", lambda: (x.new_empty(x.shape), x.new_empty(groups, 64, dtype=torch.float32),
                                         g.new_empty(64))),
            ("torch x * 2, forward + backward", lambda: grad(xg * 2, (xg,), dy)),
        ],
        "matmul x @ W backward": [
            ("forward + backward, tileir (autograd.grad)", lambda: grad(T.matmul(xg, wkg), (xg, wkg), dc)),
            ("forward + backward, torch", lambda: grad(xg @ wkg, (xg, wkg), dc)),
            ("the formula's two products, custom op eager path",
             lambda: (T._matmul_nt(dc, wk), T._matmul_tn(x, dc))),
            ("two kernels, outputs given", lambda: (K.matmul_nt(dc, wk, da, fmt="bf16"),
                                                    K.matmul_tn(x, dc, dwk, fmt="bf16"))),
        ],
        "rms_norm": [
            ("public, input needs grad", lambda: T.rms_norm(xg, (64,), gg)),
            ("public", lambda: T.rms_norm(x, (64,), g)),
            ("custom op eager path", lambda: T._rms_norm(x, g, eps)),
            ("implementation", lambda: T._rms_norm.impl(x, g, eps)),
            ("kernel, outputs given", lambda: K.rmsnorm_fwd_stats(x, g, y, rstd, eps=eps, fmt="bf16")),
            ("two new_empty", lambda: (x.new_empty(x.shape), x.new_empty(64, dtype=torch.float32))),
            ("torch F.rms_norm", lambda: F.rms_norm(x, (64,), g)),
        ],
        "attention causal": [
            ("public, inputs need grad", lambda: T.attention(qg, kg, vg, causal=True)),
            ("public", lambda: T.attention(q, k, v, causal=True)),
            ("implementation", lambda: T._attention.impl(q, k, v, True, 0.125)),
            ("kernel, output given", lambda: K.attention(q, k, v, o, causal=True, scale=0.125, fmt="bf16")),
            ("training forward, outputs given", lambda: K.attention_forward(q, k, v, o, lse, causal=True, scale=0.125)),
            ("torch SDPA", lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True)),
        ],
        "matmul x @ W.T": [
            ("public", lambda: T.matmul(x, w.t())),
            ("kernel matmul_nt, output given", lambda: K.matmul_nt(x, w, c, fmt="bf16")),
            ("torch mm, out given", lambda: torch.mm(x, w.t(), out=c)),
            ("torch x @ W.T", lambda: x @ w.t()),
        ],
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    dev = torch.device("cuda")
    record: dict = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "reps": REPS,
                    "how": "timing.host_us: host microseconds a call, best of 5 batches", "ops": {}}
    for op, rows in layers(dev).items():
        record["ops"][op] = {}
        for name, fn in rows:
            t = round(host_us(fn, REPS), 2)
            record["ops"][op][name] = t
            print(f"{op:18s} {name:34s} {t:8.2f} us", flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(record, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
