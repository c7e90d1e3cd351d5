"""Where a training step's host time goes, op by op: the host microseconds of one call of each
tileir.ops op the training example uses (examples/07_training.py), beside torch's own op, at a size
so small that the GPU never holds the host back (the host is what is timed: calls are queued, one
synchronisation at the end of each batch of calls); then the op's kernel called directly on
preallocated outputs (what is left is the op's own Python), and the top functions of a cProfile of
the slowest op. GPU needed.

    PYTHONPATH=src python bench/op_host_cost.py --out bench/results/op_host_cost_h200.json
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
from tileir.kernels import matmul_nt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import cprofile_rows, host_us  # noqa: E402

REPS = 300


def us(fn) -> float:
    """Host microseconds per call (timing.host_us: best of 5 batches, the queue drained between them)."""
    return round(host_us(fn, REPS), 2)


def cases(dev):
    """(name, tileir call, torch call) at the example's shapes' form, tiny: [tokens, d] activations,
    [B, H, S, D] attention."""
    bf = torch.bfloat16
    x = torch.randn(64, 64, device=dev, dtype=bf)
    w = torch.randn(128, 64, device=dev, dtype=bf)  # a Linear weight [N, K]
    g = torch.ones(64, device=dev, dtype=bf)
    q, k, v = (torch.randn(1, 2, 64, 64, device=dev, dtype=bf) for _ in range(3))
    xg, wg, gg = (t.detach().clone().requires_grad_() for t in (x, w, g))
    qg, kg, vg = (t.detach().clone().requires_grad_() for t in (q, k, v))
    out = torch.empty(64, 128, device=dev, dtype=bf)
    yield "matmul x @ W.T", lambda: T.matmul(x, w.t()), lambda: x @ w.t()
    yield "matmul_nt kernel (out given)", lambda: matmul_nt(x, w, out, fmt="bf16"), lambda: torch.mm(x, w.t(), out=out)
    yield "matmul fwd+bwd", lambda: T.matmul(xg, wg.t()).sum().backward(), lambda: (xg @ wg.t()).sum().backward()
    yield "rms_norm", lambda: T.rms_norm(x, (64,), g), lambda: F.rms_norm(x, (64,), g)
    yield "rms_norm fwd+bwd", lambda: T.rms_norm(xg, (64,), gg).sum().backward(), \
        lambda: F.rms_norm(xg, (64,), gg).sum().backward()
    yield "attention causal", lambda: T.attention(q, k, v, causal=True), \
        lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True)
    yield "attention causal fwd+bwd", lambda: T.attention(qg, kg, vg, causal=True).sum().backward(), \
        lambda: F.scaled_dot_product_attention(qg, kg, vg, is_causal=True).sum().backward()
    yield "sum + backward alone", lambda: xg.sum().backward(), lambda: xg.sum().backward()
    # a training step's backward: a dense output gradient (the rows above pay for sum's expanded one),
    # torch.autograd.grad through each; then the backward's kernels called directly (what is left is
    # autograd's and the op's own Python)
    grad = torch.autograd.grad
    dy, dyo = torch.randn(64, 64, device=dev, dtype=bf), torch.randn(64, 128, device=dev, dtype=bf)
    do = torch.randn(1, 2, 64, 64, device=dev, dtype=bf)
    yield "matmul grad (dense dy)", lambda: grad(T.matmul(xg, wg.t()), (xg, wg), dyo), \
        lambda: grad(xg @ wg.t(), (xg, wg), dyo)
    yield "rms_norm grad (dense dy)", lambda: grad(T.rms_norm(xg, (64,), gg), (xg, gg), dy), \
        lambda: grad(F.rms_norm(xg, (64,), gg), (xg, gg), dy)
    _, rstd = T._rms_norm(x, g, 1e-6)
    yield "rms_norm backward kernels", lambda: K.rmsnorm_backward(x, g, dy, rstd), \
        lambda: grad(F.rms_norm(xg, (64,), gg), (xg, gg), dy)
    yield "attention causal grad (dense do)", lambda: grad(T.attention(qg, kg, vg, causal=True), (qg, kg, vg), do), \
        lambda: grad(F.scaled_dot_product_attention(qg, kg, vg, is_causal=True), (qg, kg, vg), do)
    o, lse = K.attention_forward(q, k, v, causal=True, scale=0.125)
    yield "attention backward kernels", lambda: K.attention_backward(q, k, v, o, do, lse, causal=True, scale=0.125), \
        lambda: grad(F.scaled_dot_product_attention(qg, kg, vg, is_causal=True), (qg, kg, vg), do)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    dev = torch.device("cuda")
    rows, fns = [], {}
    for name, ours, theirs in cases(dev):
        r = {"op": name, "tileir_us": us(ours), "torch_us": us(theirs)}
        r["ratio"] = round(r["tileir_us"] / r["torch_us"], 3)
        rows.append(r)
        fns[name] = ours
        print(f"{name:32s} tileir {r['tileir_us']:8.1f} us  torch {r['torch_us']:8.1f} us  {r['ratio']:.2f}x",
              flush=True)
    profiled = ("matmul x @ W.T", "rms_norm", "matmul grad (dense dy)", "rms_norm grad (dense dy)", "attention causal",
                "attention causal grad (dense do)")
    record = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "reps": REPS, "rows": rows,
              "profiles": {n: cprofile_rows(fns[n], REPS) for n in profiled}}
    for n, prof in record["profiles"].items():
        print(f"-- {n}: top tottime")
        for p in prof[:12]:
            print(f"   {p['tottime_us_per_op']:7.2f} us  x{p['calls_per_op']:<5} {p['fn']}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(record, f, separators=(",", ":"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
