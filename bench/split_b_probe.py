"""3xtf32 with B's tf32 halves made first (kernels.product_3xtf32) against the one-kernel form the library
runs (gemm at precision "3xtf32": the rule's cells, split-K at few rows) and torch's f32 product (cuBLAS
without tf32), f32, do_bench with the L2 flushed; each answer's error against an f64 product, in units of
f32's roundoff of sum |a||b| (the goal: no worse than torch's, at >= 2x its speed, 4096^3). The halves'
own pass over B is inside the timed call. GPU needed.

    PYTHONPATH=src python3 bench/split_b_probe.py --out bench/results/split_b_h200.json
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from timing import time_variants, write_rows  # noqa: E402

from tileir.kernels import gemm, product_3xtf32  # noqa: E402

SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (1000, 4096, 4096), (2048, 11008, 4096), (4096, 4096, 11008),
          (128, 4096, 4096)]
CELLS = {"halves 128x128x32 w8": dict(tm=128, tn=128, tk=32, group=8, warps=8),
         "halves 128x128x64 w8": dict(tm=128, tn=128, tk=64, group=8, warps=8),
         "halves 128x64x32 w8": dict(tm=128, tn=64, tk=32, group=8, warps=8)}
U = 2.0 ** -24


def one_shape(rows: list, m: int, n: int, k: int) -> None:
    """Every variant at one shape, torch's first (the ratios' base)."""
    g = torch.Generator(device="cuda").manual_seed(0)
    a = torch.rand(m, k, device="cuda", generator=g)  # positive: the errors pile up
    b = torch.rand(k, n, device="cuda", generator=g)
    c = torch.empty(m, n, device="cuda")
    want = a.double() @ b.double()
    scale = float((a.double().abs() @ b.double().abs()).max())
    halves = torch.empty(2, k, n, device="cuda")
    calls = {"torch f32": lambda: torch.matmul(a, b, out=c),
             "gemm 3xtf32 (the library)": lambda: gemm(a, b, c, precision="3xtf32")}
    for name, cfg in CELLS.items():
        calls[name] = lambda cfg=cfg: product_3xtf32(a, b, c, halves=halves, config=cfg)
    time_variants(rows, {"shape": [m, n, k]}, calls,
                  lambda: {"err_u": round(float((c.double() - want).abs().max()) / scale / U, 2)}, "x_torch_f32")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    args = p.parse_args()
    rows: list[dict] = []
    torch.backends.cuda.matmul.allow_tf32 = False
    for m, n, k in SHAPES:
        one_shape(rows, m, n, k)
        write_rows(args.out, rows, timing="ms: do_bench (L2 flushed) median; x_torch_f32: torch f32's ms / ms; err_u: "
                                          "max |c - a @ b (f64)| / max(|a| @ |b|) / 2^-24")


if __name__ == "__main__":
    main()
