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
from tileir.kernels.launching import launch  # noqa: E402
from tileir.kernels.matmul_3xtf32 import matmul_3xtf32_nt  # noqa: E402

SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (1000, 4096, 4096), (2048, 11008, 4096), (4096, 4096, 11008),
          (128, 4096, 4096)]
CELLS = {"halves 128x128x32 w8": dict(tm=128, tn=128, tk=32, group=8, warps=8),
         "halves 128x128x64 w8": dict(tm=128, tn=128, tk=64, group=8, warps=8),
         "halves 128x64x32 w8": dict(tm=128, tn=64, tk=32, group=8, warps=8)}
# both operands' halves read along K (matmul_3xtf32_nt): the cell, and ``fresh`` (1: each slice's products in a
# fresh accumulator added in f32, one slice an iteration; 2: two; 0: every product on the tensor cores' one
# accumulator, whose error is then theirs)
K_MAJOR = {"k-major 128x128x64 fresh 1": dict(tm=128, tn=128, tk=64, group=8, warps=8, fresh=1),
           "k-major 128x128x32 fresh 2": dict(tm=128, tn=128, tk=32, group=8, warps=8, fresh=2),
           "k-major 128x128x64 fresh 2": dict(tm=128, tn=128, tk=64, group=8, warps=8, fresh=2),
           "k-major 128x128x32 fresh 0": dict(tm=128, tn=128, tk=32, group=8, warps=8, fresh=0),
           "k-major 128x256x32 fresh 0": dict(tm=128, tn=256, tk=32, group=8, warps=8, fresh=0)}
U = 2.0 ** -24


def k_major_calls(a, b, c, cfg: dict, kernel_only: bool = False):
    """product_3xtf32(k_major=True): A's halves and B's transposed halves (two launches), then the product on
    them; kernel_only: the product alone on halves made once."""
    m, k = a.shape
    ah, bh = torch.empty(2, m, k, device="cuda"), torch.empty(2, b.shape[1], k, device="cuda")
    whole = lambda: product_3xtf32(a, b, c, k_major=True, a_halves=ah, halves=bh, config=cfg)  # noqa: E731
    if not kernel_only:
        return whole
    whole()
    return lambda: launch(matmul_3xtf32_nt, ah[0], ah[1], bh[0], bh[1], c, **cfg)


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
    for name, cfg in K_MAJOR.items():
        calls[name] = k_major_calls(a, b, c, cfg)
    w = b.t().contiguous()  # the same product with B given as a Linear layer's weight W [N, K]
    ah, wh = torch.empty(2, m, k, device="cuda"), torch.empty(2, n, k, device="cuda")
    calls["k-major 128x128x64 fresh 1 on W [N, K] (weight_t)"] = lambda: product_3xtf32(
        a, w, c, k_major=True, weight_t=True, a_halves=ah, halves=wh, config=K_MAJOR["k-major 128x128x64 fresh 1"])
    calls["k-major 128x128x64 fresh 1, the product alone"] = k_major_calls(
        a, b, c, K_MAJOR["k-major 128x128x64 fresh 1"], kernel_only=True)
    calls["torch tf32 (one product, no split)"] = tf32_product(a, b, c)
    time_variants(rows, {"shape": [m, n, k]}, calls,
                  lambda: {"err_u": round(float((c.double() - want).abs().max()) / scale / U, 2)}, "x_torch_f32")


def tf32_product(a, b, c):
    def run():
        torch.backends.cuda.matmul.allow_tf32 = True
        try:
            torch.matmul(a, b, out=c)
        finally:
            torch.backends.cuda.matmul.allow_tf32 = False
    return run


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
