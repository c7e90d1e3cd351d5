"""fp8 products' tiles: ``matmul_f8`` at the suite's rule (128 x 256 x 128, groups of 8, 8 warps,
0.35-0.42x torch._scaled_mm) beside smaller tiles. The SASS of 128 x 256 spills at every K slice
(tileiras 13.4.92 at the launch's alignment claims: 31-60 STL, 24-42 LDL in the loop) while
128 x 128 does not; the operands arrive through registers (LDG.128 then STS.128, no TMA) for f8
as for f16, so the K slice sets how many registers stage them. Timed as the suite times
(triton.testing.do_bench, L2 flushed, median), answers checked against the f32 product of the
same f8 values. Needs a GPU.

    PYTHONPATH=src python bench/f8_tiles_probe.py --round 2 --out bench/results/f8_tiles_round2_h200.json
"""

from __future__ import annotations

import argparse
import json

import torch
from timing import checked_ms, flushed_ms, write_rows

from tileir.kernels import matmul_f8

SHAPES = ((8192, 8192, 8192), (4096, 4096, 4096), (1024, 14336, 4096), (128, 4096, 4096), (16, 4096, 4096))


def _configs(*tiles):
    return [{"tm": tm, "tn": tn, "tk": tk, "group": g, "warps": w, **({"occupancy": o} if o else {})}
            for tm, tn, tk, g, w, o in tiles]


# round 1: the rule's tile and its neighbours; round 2: around round 1's best (128 x 128 x 128, 8
# warps: 0.84x at 8192^3) and, for few rows, around 64 x 128 x 128 at 4 warps (0.75x at M 16 / 128)
ROUNDS = {
    1: _configs((128, 256, 128, 8, 8, 0), (128, 128, 128, 8, 8, 0), (128, 128, 64, 8, 8, 0), (128, 128, 128, 8, 4, 0),
                (128, 128, 128, 8, 8, 2), (64, 256, 128, 8, 4, 0), (256, 128, 128, 8, 8, 0), (128, 256, 64, 8, 8, 0),
                (64, 128, 128, 8, 4, 0)),
    2: _configs((128, 128, 128, 8, 8, 0), (128, 128, 256, 8, 8, 0), (128, 128, 128, 16, 8, 0), (128, 128, 128, 4, 8, 0),
                (128, 128, 128, 0, 8, 0), (128, 64, 128, 8, 4, 0), (64, 128, 256, 8, 4, 0), (64, 64, 128, 0, 4, 0),
                (64, 128, 128, 0, 4, 0), (128, 128, 256, 8, 8, 1)),
}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--round", type=int, default=1, choices=sorted(ROUNDS))
    a = p.parse_args()
    configs = ROUNDS[a.round]
    rows = []
    for m, n, k in SHAPES:
        x = (torch.randn(m, k, device="cuda") * 0.5).to(torch.float8_e4m3fn)
        w = (torch.randn(n, k, device="cuda") * 0.5).to(torch.float8_e4m3fn)
        c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        sa, sb = torch.full((1,), 0.5, device="cuda"), torch.full((1,), 0.25, device="cuda")
        want = (x.float() @ w.float().t()) * 0.125
        th = flushed_ms(lambda x=x, w=w, sa=sa, sb=sb: torch._scaled_mm(
            x, w.t(), scale_a=sa.reshape(()), scale_b=sb.reshape(()), out_dtype=torch.bfloat16))
        row = {"round": a.round, "M": m, "N": n, "K": k, "torch_ms": th, "configs": []}
        for cfg in configs:
            call = lambda x=x, w=w, c=c, sa=sa, sb=sb, cfg=cfg: matmul_f8(x, w, c, sa, sb, **cfg)  # noqa: E731
            got = checked_ms(call, c, want, th)
            if "ms" in got:  # the error relative to the product's largest value, and the rate
                got.update(rel_err=got["max_err"] / float(want.abs().max()), tflops=2 * m * n * k / got["ms"] / 1e9)
            row["configs"].append(dict(cfg, **got))
        rows.append(row)
        print(json.dumps({"M": m, "N": n, "K": k, "torch_ms": round(th, 4),
                          "ratios": [round(r.get("ratio", 0), 2) for r in row["configs"]]}), flush=True)
        write_rows(a.out, rows)


if __name__ == "__main__":
    main()
