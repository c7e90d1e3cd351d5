"""Matmul tile-shape sweep on the GPU: tileir's view-based matmul at several tile shapes against
torch (cuBLAS), f16 and bf16, 8192^3 by default. Prints one JSON line per configuration and
writes them all to --out.

    PYTHONPATH=src python3 bench/matmul_sweep.py --out bench/results/matmul_sweep_h200.json
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from timing import median_ms as _median_ms  # noqa: E402

from tileir.assemble import tileiras_version
from tileir.kernels import matmul_bf16, matmul_f16

TILES = [(128, 128, 64), (128, 256, 64), (256, 128, 64), (128, 128, 32), (64, 128, 64), (256, 256, 64)]


def median_ms(fn, reps=10, warm=1):
    return _median_ms(fn, reps, warm)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--size", type=int, default=8192)
    p.add_argument("--opt-level", type=int, default=3, dest="opt_level")
    args = p.parse_args()
    n = args.size
    flop = 2 * n ** 3
    rows = []
    for kern, dt in ((matmul_f16, torch.float16), (matmul_bf16, torch.bfloat16)):
        a = torch.randn(n, n, device="cuda").to(dt)
        b = torch.randn(n, n, device="cuda").to(dt)
        ref = a @ b
        t_torch = median_ms(lambda a=a, b=b: a @ b)
        for tm, tn, tk in TILES:
            c = torch.empty(n, n, device="cuda", dtype=dt)
            cfg = dict(tm=tm, tn=tn, tk=tk)  # M N K: the tensors'
            row = {"kernel": kern.name, "size": n, "tiles": [tm, tn, tk], "opt_level": args.opt_level}
            try:
                kern(a, b, c, opt_level=args.opt_level, **cfg)
                torch.cuda.synchronize()
                rel = float((c.float() - ref.float()).abs().max() / ref.float().abs().max())
                cfg["opt_level"] = args.opt_level
                ms = median_ms(lambda k=kern, a=a, b=b, c=c, cfg=cfg: k(a, b, c, sync=False, **cfg))
                row.update(ms=round(ms, 4), tflops=round(flop / ms / 1e9, 1), torch_ms=round(t_torch, 4),
                           torch_tflops=round(flop / t_torch / 1e9, 1), max_rel_err_vs_torch=rel)
            except Exception as e:
                row["error"] = f"{type(e).__name__}: {e}"[:400]
            print(json.dumps(row), flush=True)
            rows.append(row)
    out = {"date": datetime.date.today().isoformat(), "gpu": torch.cuda.get_device_name(0),
           "tileiras": tileiras_version(), "torch": torch.__version__, "results": rows}
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
