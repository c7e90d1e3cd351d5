"""The persistent products (kernels.matmul_persistent and bmm_persistent: at most ``programs`` blocks,
each walking cells of C in the grouped order) against the library's one-cell calls (gemm, bmm) and
torch, f16: the products on the suite's N = 5000 rows (160-640 cells of 128 x 256: a little over
whole waves, 0.64-0.84x torch) and on shapes it does not hold, the batched ones on bmm's (short K
loops at 512^3: 0.8x); answers checked against an f32 product. Whether a block that goes on to its
next cell overlaps one cell's stores with the next's loads is what this measures. GPU needed.

    PYTHONPATH=src python3 bench/persistent_probe.py --out bench/results/persistent_h200.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from timing import flushed_ms, write_rows  # noqa: E402

from tileir.kernels import bmm, bmm_persistent, gemm, matmul_persistent  # noqa: E402

SHAPES = [(512, 5000, 1000), (1000, 5000, 1000), (2048, 5000, 1000), (4096, 5000, 1000), (8192, 5000, 1000),
          (1000, 1000, 1000), (3000, 5000, 1000), (8192, 1024, 1024), (4096, 4096, 4096), (2048, 11008, 4096)]
CELLS = {"128x256x64 p132": {"tm": 128, "tn": 256, "tk": 64, "warps": 8, "programs": 132},
         "128x256x32 p132": {"tm": 128, "tn": 256, "tk": 32, "warps": 8, "programs": 132},
         "128x128x64 p132": {"tm": 128, "tn": 128, "tk": 64, "warps": 8, "programs": 132},
         "128x128x64 p264 occ2": {"tm": 128, "tn": 128, "tk": 64, "warps": 8, "programs": 264, "occupancy": 2},
         "64x256x64 p264 occ2": {"tm": 64, "tn": 256, "tk": 64, "warps": 4, "programs": 264, "occupancy": 2}}
# bmm_persistent: the suite's batches and held-out ones (bmm_tiles_h200.json's), the one-cell bmm's rule beside
BMM_SHAPES = [(64, 512, 512, 512), (8, 1024, 1024, 1024), (64, 1024, 1024, 1024), (64, 2048, 2048, 2048),
              (16, 1000, 1000, 1000), (128, 256, 256, 256), (32, 512, 512, 512)]


TOLERANCE = 2e-2  # of max |want|: f16 output of an f32 accumulation


def timed(fn, c, want, scale) -> dict:
    try:
        c.zero_()
        fn()
        torch.cuda.synchronize()
        err = float((c.float() - want).abs().max()) / scale
        got = {"rel_err": float(f"{err:.3g}"), "ok": err <= TOLERANCE}
        got["us"] = round(flushed_ms(fn) * 1e3, 2)
        return got
    except Exception as e:  # noqa: BLE001  (a probe: record and go on)
        return {"error": repr(e)[:300]}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    args = p.parse_args()
    rows = []
    for m, n, k in SHAPES:
        a = torch.randn(m, k, device="cuda", dtype=torch.float16) * k ** -0.5
        b = torch.randn(k, n, device="cuda", dtype=torch.float16)
        c = torch.empty(m, n, device="cuda", dtype=torch.float16)
        want = a.float() @ b.float()
        scale = float(want.abs().max())
        torch_us = timed(lambda a=a, b=b, c=c: torch.matmul(a, b, out=c), c, want, scale).get("us")
        variants = {"gemm (the rule, one cell a block)": lambda a=a, b=b, c=c: gemm(a, b, c)}
        for name, cfg in CELLS.items():
            variants[f"persistent {name}"] = lambda a=a, b=b, c=c, cfg=cfg: matmul_persistent(a, b, c, **cfg)
        for name, fn in variants.items():
            r = {"shape": [m, n, k], "variant": name, "torch_us": torch_us, **timed(fn, c, want, scale)}
            if "us" in r and torch_us:
                r["torch_over"] = round(torch_us / r["us"], 3)
            rows.append(r)
            print(json.dumps(r), flush=True)
        write_rows(args.out, rows, timing="us, torch_us: do_bench (L2 flushed) median")
    for bt, m, n, k in BMM_SHAPES:
        a = torch.randn(bt, m, k, device="cuda", dtype=torch.float16) * k ** -0.5
        b = torch.randn(bt, k, n, device="cuda", dtype=torch.float16)
        c = torch.empty(bt, m, n, device="cuda", dtype=torch.float16)
        want = a.float() @ b.float()
        scale = float(want.abs().max())
        torch_us = timed(lambda a=a, b=b, c=c: torch.bmm(a, b, out=c), c, want, scale).get("us")
        variants = {"bmm (the rule, one cell a block)": lambda a=a, b=b, c=c: bmm(a, b, c)}
        for name, cfg in CELLS.items():
            variants[f"bmm_persistent {name}"] = lambda a=a, b=b, c=c, cfg=cfg: bmm_persistent(a, b, c, **cfg)
        for name, fn in variants.items():
            r = {"shape": [bt, m, n, k], "variant": name, "torch_us": torch_us, **timed(fn, c, want, scale)}
            if "us" in r and torch_us:
                r["torch_over"] = round(torch_us / r["us"], 3)
            rows.append(r)
            print(json.dumps(r), flush=True)
        write_rows(args.out, rows, timing="us, torch_us: do_bench (L2 flushed) median")


if __name__ == "__main__":
    main()
