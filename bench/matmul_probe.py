"""What decides a matrix product's speed off the benchmark's shapes (issue 12): on the suite's
slowest matmul shapes, the library's plain call (``gemm``) beside torch, each tile configuration
alone, split-K at several counts, and the same product on operands whose row pitch is padded to a
multiple of 16 elements (K = 1000 and N = 5000 rows are 8-element multiples only). One device call;
a JSON record per (shape, variant) and a summary per shape: the fastest variant and its ratio.

    PYTHONPATH=src python3 bench/matmul_probe.py --out bench/results/matmul_probe_h200.json
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from suite import gpu_timer  # noqa: E402
from timing import host_us  # noqa: E402

from tileir.kernels import matmul_f16  # noqa: E402
from tileir.kernels.gemm import gemm, matmul_split_k, plan  # noqa: E402

SHAPES = [(1, 4096, 4096), (16, 4096, 4096), (64, 4096, 4096), (128, 4096, 4096), (512, 4096, 4096),
          (1000, 4096, 4096), (16, 11008, 4096), (128, 11008, 4096), (512, 11008, 4096), (16, 4096, 11008),
          (1000, 14336, 4096), (128, 1024, 1024), (4096, 1024, 1024), (8192, 1024, 1024), (1000, 5000, 1000),
          (4096, 5000, 1000), (8192, 5000, 1000), (2048, 4096, 4096)]
CONFIGS = {
    "128x256x32 g8 w8": {"tm": 128, "tn": 256, "tk": 32, "group": 8, "warps": 8},
    "128x256x64 g8 w8": {"tm": 128, "tn": 256, "tk": 64, "group": 8, "warps": 8},
    "128x128x64 w8": {"tm": 128, "tn": 128, "tk": 64, "group": 0, "warps": 8},
    "128x128x32 g8 w8": {"tm": 128, "tn": 128, "tk": 32, "group": 8, "warps": 8},
    "64x128x64": {"tm": 64, "tn": 128, "tk": 64, "group": 0, "warps": 0},
    "64x64x64": {"tm": 64, "tn": 64, "tk": 64, "group": 0, "warps": 0},
    "64x256x64": {"tm": 64, "tn": 256, "tk": 64, "group": 0, "warps": 0},
}
SPLITS = {"64x64x64": {"tm": 64, "tn": 64, "tk": 64, "warps": 0},
          "64x128x64": {"tm": 64, "tn": 128, "tk": 64, "warps": 0}}


def padded(rows, cols, pitch, dt):
    """A [rows, cols] view of a [rows, pitch] tensor (its row pitch a multiple of 16 elements)."""
    return torch.randn(rows, pitch, device="cuda", dtype=dt)[:, :cols]


def probe(m, n, k, bench, dt=torch.float16):
    """Every variant's record for one [m, k] x [k, n] product, torch's first and gemm's second."""
    s = k ** -0.25
    a = torch.randn(m, k, device="cuda", dtype=dt) * s
    b = torch.randn(k, n, device="cuda", dtype=dt) * s
    c = torch.empty(m, n, device="cuda", dtype=dt)
    want = torch.matmul(a.float(), b.float())
    flop = 2.0 * m * n * k
    rows: list[dict] = []

    def rec(variant, fn, out=c, **extra):
        try:
            fn()
            torch.cuda.synchronize()
            err = float((out.float() - want).abs().max())
            ms = bench(fn)
            r = {"shape": [m, n, k], "variant": variant, "ms": round(ms, 5),
                 "tflops": round(flop / ms / 1e9, 1), "max_err": round(err, 5), **extra}
        except Exception as e:  # noqa: BLE001 - a variant that fails is a finding, the rest go on
            r = {"shape": [m, n, k], "variant": variant, "error": f"{type(e).__name__}: {str(e)[:300]}"}
        rows.append(r)
        print(json.dumps(r), flush=True)

    rec("torch", lambda: torch.matmul(a, b, out=c))
    rec("gemm", lambda: gemm(a, b, c), plan=plan(a, b), host_us=round(host_us(lambda: gemm(a, b, c)), 2))
    for name, cfg in CONFIGS.items():
        rec(name, lambda cfg=cfg: matmul_f16(a, b, c, **cfg))
    if m <= 1024:
        for name, cfg in SPLITS.items():
            for sp in (2, 4, 8, 16):
                rec(f"split{sp} {name}", lambda cfg=cfg, sp=sp: matmul_split_k(a, b, c, splits=sp, config=cfg))
    if k % 16 or n % 16:  # the same product with rows padded to a multiple of 16 elements
        ap = padded(m, k, -(-k // 16) * 16, dt)
        ap.copy_(a)
        bp = padded(k, n, -(-n // 16) * 16, dt)
        bp.copy_(b)
        cp = padded(m, n, -(-n // 16) * 16, dt)
        for name in ("128x256x32 g8 w8", "128x128x64 w8"):
            rec(f"pitch16 {name}", lambda name=name: matmul_f16(ap, bp, cp, **CONFIGS[name]), out=cp)
    return rows


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--budget-s", type=float, default=420)
    args = p.parse_args()
    t0 = time.time()
    bench = gpu_timer(quick=True)
    recs, summary = [], []
    for m, n, k in SHAPES:
        if time.time() - t0 > args.budget_s:
            break
        rows = probe(m, n, k, bench)
        torch_ms = rows[0].get("ms")
        ok = [r for r in rows[1:] if "ms" in r and r["max_err"] < 5e-2]
        best = min(ok, key=lambda r: r["ms"]) if ok else None
        summary.append({"shape": [m, n, k], "torch_ms": torch_ms,
                        "gemm_ratio": round(torch_ms / rows[1]["ms"], 3) if torch_ms and "ms" in rows[1] else None,
                        "best": best and best["variant"],
                        "best_ratio": best and torch_ms and round(torch_ms / best["ms"], 3)})
        recs += rows
        torch.cuda.empty_cache()
    out = {"date": datetime.date.today().isoformat(), "gpu": torch.cuda.get_device_name(0),
           "timing": "do_bench quick (warm-up 5 ms, 25 ms), L2 flushed, median", "ratio": "torch_ms / variant_ms",
           "seconds": round(time.time() - t0, 1), "summary": summary, "records": recs}
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    for s in summary:
        print(s)


if __name__ == "__main__":
    main()
