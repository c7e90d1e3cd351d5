"""The norms' backward at wide rows, by entry hints (issue 14): training_h200.json has layernorm's
backward at bf16 8192 x 4096 at 0.987x torch's with the best of its groups x row_tile sweep, both
sides moving about 1.6 TB/s. This times the warps and occupancy hints tileiras was left to choose,
beside the groups, against aten's native_layer_norm_backward (and rms_norm's autograd), the answers
checked against torch's own gradients.

    PYTHONPATH=src python3 bench/norm_bwd_probe.py --out bench/results/norm_bwd_hints_h200.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).parent))
from timing import flushed_ms, write_rows  # noqa: E402

from tileir.kernels import norms_bwd as NB  # noqa: E402

SHAPES = ((8192, 4096), (4096, 8192))
GROUPS = (132, 264)
HINTS = [{"warps": w, "occupancy": o} for w, o in itertools.product((0, 8, 16), (0, 2))]


def close(a, b, fmt) -> bool:
    tol = {"bf16": 2e-2, "f16": 1e-2}[fmt]
    return bool((a.float() - b.float()).abs().max() <= tol * max(1.0, float(b.float().abs().max())))


def rows_of(kind, rows, cols, dt, fmt) -> list[dict]:
    x, dy = (torch.randn(rows, cols, device="cuda", dtype=dt) for _ in range(2))
    w, b = torch.randn(cols, device="cuda", dtype=dt), torch.randn(cols, device="cuda", dtype=dt)
    if kind == "layernorm":
        _, mean, rstd = torch.ops.aten.native_layer_norm(x, [cols], w, b, 1e-5)
        stats = (mean.reshape(-1).float(), rstd.reshape(-1).float())

        def torch_bwd():
            return torch.ops.aten.native_layer_norm_backward(dy, x, [cols], mean, rstd, w, b, [True, True, True])
        helper = NB.layernorm_backward
    else:
        rstd = torch.rsqrt(x.float().pow(2).mean(-1) + 1e-6)
        stats = (rstd,)
        xg, wg = x.detach().requires_grad_(), w.detach().requires_grad_()
        yt = F.rms_norm(xg, (cols,), wg, 1e-6)

        def torch_bwd():
            return torch.autograd.grad(yt, (xg, wg), dy, retain_graph=True)
        helper = NB.rmsnorm_backward
    want = torch_bwd()
    torch_ms = flushed_ms(torch_bwd)
    dx = torch.empty_like(x)
    out = []
    for g, hints in itertools.product(GROUPS, HINTS):
        r = {"kind": kind, "fmt": fmt, "shape": [rows, cols], "groups": g, **hints,
             "torch_us": round(torch_ms * 1e3, 2)}
        try:
            def call(g=g, hints=hints):
                return helper(x, w, dy, *stats, dx=dx, groups=g, **hints)
            got = call()
            torch.cuda.synchronize()
            r["ok"] = all(close(a, b_, fmt) for a, b_ in zip(got, want))
            r["us"] = round(flushed_ms(call) * 1e3, 2)
            r["speedup"] = round(torch_ms * 1e3 / r["us"], 3)
        except Exception as e:  # noqa: BLE001  (a probe: a failing configuration is a finding)
            r["error"] = f"{type(e).__name__}: {str(e)[:300]}"
        out.append(r)
        print(json.dumps(r), flush=True)
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    args = p.parse_args()
    rows = []
    for kind in ("layernorm", "rmsnorm"):
        for (r, c) in SHAPES:
            rows += rows_of(kind, r, c, torch.bfloat16, "bf16")
    for kind in ("layernorm", "rmsnorm"):
        for r, c in SHAPES:
            mine = [x for x in rows if x["kind"] == kind and x["shape"] == [r, c] and x.get("ok")]
            if mine:
                best = max(mine, key=lambda x: x["speedup"])
                base = next((x for x in mine if x["groups"] == 264 and not x["warps"] and not x["occupancy"]), None)
                print(kind, r, c, "best", {k: best[k] for k in ("groups", "warps", "occupancy", "speedup")},
                      "default-hints", base and base["speedup"])
    write_rows(args.out, rows)


if __name__ == "__main__":
    main()
