"""Batched products' tiles (issue 12): the suite's bmm family ran 0.78x torch at 64 x 512^3 on the
rule's 128 x 256 cell (K slices of 32) where 8 x 512^3 on 128 x 128 ran 1.06x. This times each
candidate cell and K slice on the suite's six shapes and on shapes it does not hold (a batch of 16
or 32, a non-square M x N, a long K, an odd 1000), beside torch.bmm, answers checked against an
f64 product. GPU needed.

    PYTHONPATH=src python3 bench/bmm_probe.py --out bench/results/bmm_tiles_h200.json
    PYTHONPATH=src python3 bench/bmm_probe.py --occupancy --out bench/results/bmm_occupancy_h200.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from timing import checked_ms, flushed_ms, write_rows  # noqa: E402

from tileir.heuristics import rule  # noqa: E402
from tileir.kernels import bmm  # noqa: E402

# (B, M, N, K): the suite's six, then held-out shapes
SHAPES = [(8, 512, 512, 512), (64, 512, 512, 512), (8, 1024, 1024, 1024), (64, 1024, 1024, 1024),
          (8, 2048, 2048, 2048), (64, 2048, 2048, 2048),
          (16, 768, 768, 768), (32, 512, 512, 512), (32, 256, 256, 4096), (4, 4096, 1024, 1024),
          (128, 256, 256, 256), (16, 1000, 1000, 1000)]
CELLS = {"128x256x32": {"tm": 128, "tn": 256, "tk": 32, "warps": 8},
         "128x256x64": {"tm": 128, "tn": 256, "tk": 64, "warps": 8},
         "128x128x32": {"tm": 128, "tn": 128, "tk": 32, "warps": 8},
         "128x128x64": {"tm": 128, "tn": 128, "tk": 64, "warps": 8},
         "64x128x64": {"tm": 64, "tn": 128, "tk": 64, "warps": 4},
         "64x256x64": {"tm": 64, "tn": 256, "tk": 64, "warps": 4}}
# --occupancy: two blocks an SM, so one block's epilogue and prologue overlap another's main loop (the
# short K loops of 512^3 run 16 K slices a block)
OCCUPANCY_CELLS = {"128x128x64 occ2": {"tm": 128, "tn": 128, "tk": 64, "warps": 8, "occupancy": 2},
                   "128x128x32 occ2": {"tm": 128, "tn": 128, "tk": 32, "warps": 8, "occupancy": 2},
                   "64x256x64 occ2": {"tm": 64, "tn": 256, "tk": 64, "warps": 4, "occupancy": 2},
                   "64x128x64 occ2": {"tm": 64, "tn": 128, "tk": 64, "warps": 4, "occupancy": 2},
                   "128x256x32 occ1": {"tm": 128, "tn": 256, "tk": 32, "warps": 8, "occupancy": 1}}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--occupancy", action="store_true", help="the rule against OCCUPANCY_CELLS")
    args = p.parse_args()
    cells_tried = OCCUPANCY_CELLS if args.occupancy else CELLS
    rows = []
    for bt, m, n, k in SHAPES:
        a = torch.randn(bt, m, k, device="cuda", dtype=torch.float16) * k ** -0.25
        b = torch.randn(bt, k, n, device="cuda", dtype=torch.float16) * k ** -0.25
        c = torch.empty(bt, m, n, device="cuda", dtype=torch.float16)
        want = a.double() @ b.double()
        scale = float(want.abs().max())
        torch_ms = flushed_ms(lambda a=a, b=b, c=c: torch.bmm(a, b, out=c))
        ruled = rule("bmm", "sm_90", {"B": bt, "M": m, "N": n, "K": k, "fmt": "f16"})
        for name, cfg in [("rule", None), *cells_tried.items()]:
            r = {"shape": [bt, m, n, k], "variant": name, "config": cfg or ruled, "torch_ms": torch_ms,
                 **checked_ms(lambda cfg=cfg, a=a, b=b, c=c: bmm(a, b, c, **(cfg or {})), c, want, torch_ms)}
            if "max_err" in r:
                r["rel_err"] = float(f"{r['max_err'] / scale:.3g}")
            rows.append(r)
            print(json.dumps(r), flush=True)
        write_rows(args.out, rows, timing="ms, torch_ms: do_bench (L2 flushed) median; ratio: torch_ms / ms")


if __name__ == "__main__":
    main()
