"""A Linear layer's weight gradient (dW^T = dY^T X: matmul_tn over the tokens) cut along K or not, by
GPU time (the kernels' summed durations, as a CUDA graph runs them): the training example's five
weight shapes over its 8192 tokens and two of a 7-8B model's, bf16, for 1 (one pass), 2, 3, 4 and 8
splits and what the rule (heuristics.matmul_split) picks, beside torch's dY^T @ X.

    PYTHONPATH=src python3 bench/tn_split_probe.py --out bench/results/tn_split_h200.json
"""

from __future__ import annotations

import argparse
import functools
import json

import torch
from timing import KERNEL_SUM, kernel_us

from tileir import autotune
from tileir.heuristics import matmul_split
from tileir.kernels import matmul_tn_any

# (tokens K, out features M, in features N): dW^T [M, N] = dY[K, M]^T @ X[K, N]
SHAPES = [(8192, 1536, 512), (8192, 512, 512), (8192, 2816, 512), (8192, 512, 1408), (8192, 256, 512),
          (16384, 4096, 4096), (8192, 1024, 4096)]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    args = p.parse_args()
    rows = []
    for k, m, n in SHAPES:
        torch.manual_seed(0)
        dy = torch.randn(k, m, device="cuda", dtype=torch.bfloat16) / 30
        x = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        want = dy.t().float() @ x.float()
        t_us = kernel_us(lambda dy=dy, x=x: dy.t() @ x)["total"]
        rec = {"shape": [k, m, n], "rule": matmul_split(autotune.this_gpu(), "bf16", m, n, k), "torch_us": t_us,
               "tileir": []}
        for splits in (None, 1, 2, 3, 4, 8):
            c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
            call = functools.partial(matmul_tn_any, dy, x, c, splits=splits)
            call()
            torch.cuda.synchronize()
            us = kernel_us(call)["total"]
            err = float((c.float() - want).abs().max() / want.abs().max())
            rec["tileir"].append({"splits": splits or "rule", "us": us, "rel_err": err,
                                  "speedup": round(t_us / us, 3)})
        rows.append(rec)
        print(json.dumps(rec), flush=True)
    with open(args.out, "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "timing": KERNEL_SUM, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
