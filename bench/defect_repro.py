"""Rerun a suspected tileiras defect on the GPU: matmul programs whose loads are ordered through a
token carried by the K loop (what tileir's lowering wrote before lower/tokens.py), at tileiras'
default level and at -O0, against torch. The bytes are in bench/data/ (8192^3, f16, tiles
128x256x64 and 128x128x64; entry (A, B, C) as f16 pointers; grid (8192/tm, 8192/tn)).

    PYTHONPATH=src python3 bench/defect_repro.py --out bench/results/defect_repro_h200.json
"""

from __future__ import annotations

import argparse
import datetime
import json
from pathlib import Path

import torch

from tileir.assemble import assemble, tileiras_version
from tileir.runtime import launch

DATA = Path(__file__).parent / "data"
CASES = [("matmul_f16_chained_8192_128x256x64.tileirbc", 128, 256),
         ("matmul_f16_chained_8192_128x128x64.tileirbc", 128, 128)]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--reps", type=int, default=3)
    args = p.parse_args()
    n = 8192
    rows = []
    for fname, tm, tn in CASES:
        bc = (DATA / fname).read_bytes()
        for level in (3, 0):
            cubin = assemble(bc, "sm_90", kernel="matmul_f16", opt_level=level, cache=False)
            errs = []
            for seed in range(args.reps):
                g = torch.Generator(device="cuda").manual_seed(seed)
                a = torch.randn(n, n, device="cuda", generator=g).half()
                b = torch.randn(n, n, device="cuda", generator=g).half()
                c = torch.zeros(n, n, device="cuda", dtype=torch.half)
                launch(cubin, "matmul_f16", (n // tm, n // tn), [a, b, c], [("f16", True)] * 3)
                ref = (a.float() @ b.float())
                errs.append(float((c.float() - ref).abs().max() / ref.abs().max()))
            row = {"program": fname, "opt_level": level, "max_rel_err": errs,
                   "ok": all(e < 1e-2 for e in errs)}
            print(json.dumps(row), flush=True)
            rows.append(row)
    out = {"date": datetime.date.today().isoformat(), "gpu": torch.cuda.get_device_name(0),
           "tileiras": tileiras_version(), "command": "PYTHONPATH=src python3 bench/defect_repro.py --out ...",
           "results": rows}
    Path(args.out).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
