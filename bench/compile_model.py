"""A model built from tileir.ops under torch.compile(fullgraph=True), against the same model in eager
torch: a pre-norm transformer block (rms_norm, attention with grouped-query heads, layer_norm,
two matmuls, softmax over a projection), forward outputs and input gradients compared, the graph
breaks counted (fullgraph=True raises on one; torch._dynamo's counters say how many graphs).
Writes one JSON. On the GPU with inductor (the default backend), on the CPU (the host reference)
with aot_eager.

    PYTHONPATH=src python3 bench/compile_model.py --out bench/results/compile_model_h200.json
    PYTHONPATH=src python3 bench/compile_model.py --device cpu --out bench/results/compile_model_cpu.json
"""

from __future__ import annotations

import argparse
import datetime
import json
from pathlib import Path

import torch
import torch.nn.functional as F

from tileir import ops as tops


def block(ops, x, p):
    """One pre-norm block; ``ops``: tileir.ops or the torch equivalents (same signatures)."""
    b, s, d = x.shape
    h, hkv, hd = 8, 2, d // 8
    y = ops.rms_norm(x, [d], p["g1"], 1e-6)
    q = ops.matmul(y, p["wq"]).view(b, s, h, hd).transpose(1, 2)
    kv = ops.matmul(y, p["wkv"]).view(b, s, 2, hkv, hd)
    k, v = kv[:, :, 0].transpose(1, 2), kv[:, :, 1].transpose(1, 2)
    a = ops.attention(q, k, v, causal=True).transpose(1, 2).reshape(b, s, d)
    x = x + ops.matmul(a, p["wo"])
    y = ops.layer_norm(x, [d], p["g2"], p["b2"], 1e-5)
    return x + ops.softmax(ops.matmul(y, p["w1"]), -1) @ p["w2"]


class TorchOps:
    """torch's own ops under tileir.ops' names."""

    @staticmethod
    def rms_norm(x, shape, w, eps):
        return F.rms_norm(x, shape, w, eps)

    @staticmethod
    def layer_norm(x, shape, w, b, eps):
        return F.layer_norm(x, shape, w, b, eps)

    @staticmethod
    def matmul(a, b):
        return a @ b

    @staticmethod
    def softmax(x, dim):
        return torch.softmax(x, dim)

    @staticmethod
    def attention(q, k, v, causal):
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    a = ap.parse_args()
    dev = torch.device(a.device)
    gpu = dev.type == "cuda"
    dt = torch.bfloat16  # attention takes f16 and bf16
    b, s, d = (4, 256, 512) if gpu else (2, 33, 128)
    torch.manual_seed(0)
    hd, hkv = d // 8, 2
    p = {"g1": 1 + 0.1 * torch.randn(d), "wq": torch.randn(d, d) / d**0.5, "wkv": torch.randn(d, 2 * hkv * hd) / d**0.5,
         "wo": torch.randn(d, d) / d**0.5, "g2": 1 + 0.1 * torch.randn(d), "b2": 0.1 * torch.randn(d),
         "w1": torch.randn(d, 4 * d) / d**0.5, "w2": torch.randn(4 * d, d) / (4 * d) ** 0.5}
    p = {k: v.to(dev, dt) for k, v in p.items()}
    x = torch.randn(b, s, d, device=dev, dtype=dt)

    torch._dynamo.reset()
    compiled = torch.compile(lambda x: block(tops, x, p), fullgraph=True, backend="inductor" if gpu else "aot_eager")
    xc, xe = x.clone().requires_grad_(), x.clone().requires_grad_()
    got = compiled(xc)
    want = block(TorchOps, xe, p)
    dy = torch.randn_like(got)
    got.backward(dy)
    want.backward(dy)
    counters = torch._dynamo.utils.counters
    scale = float(want.detach().abs().max())
    rec = {"date": datetime.date.today().isoformat(),
           "device": torch.cuda.get_device_name(dev) if gpu else "cpu (the host reference)",
           "torch": torch.__version__, "backend": "inductor" if gpu else "aot_eager", "dtype": str(dt),
           "shape": [b, s, d], "fullgraph": True, "graph_breaks": sum(counters["graph_break"].values()),
           "graphs": counters["stats"].get("unique_graphs", None),
           "max_abs_diff_out": float((got - want).detach().abs().max()), "out_scale": scale,
           "max_abs_diff_grad": float((xc.grad - xe.grad).abs().max()), "grad_scale": float(xe.grad.abs().max())}
    rec["ok"] = (rec["graph_breaks"] == 0 and rec["max_abs_diff_out"] <= 3e-2 * max(scale, 1.0)  # bf16: 8 bits
                 and rec["max_abs_diff_grad"] <= 3e-2 * max(rec["grad_scale"], 1.0))
    print(json.dumps(rec, indent=1))
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(rec, indent=1))


if __name__ == "__main__":
    main()
