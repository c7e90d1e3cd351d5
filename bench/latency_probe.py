"""Does the dialect's ``latency`` hint on view loads change the library's speed? (issue 12: attention
runs 0.71-0.88x SDPA and the unaligned products 0.64-0.84x cuBLAS, kernel-bound.) The hint (1 low to
10 high: how heavy the load's DRAM traffic is; Tile IR's optimization guide) is one tileiras may use to
pick its pipelining; before this probe no library kernel set it. This attaches ``latency = N`` for
sm_90 to every view load the lowering writes (the lowering's own hints, where it writes some, are
kept; through the lowering's own path for ``hint_view_load_latency``), one N a process
(the recordings are kept per process), and times attention and products at the rule's configuration
against torch, answers checked. GPU needed.

    PYTHONPATH=src python3 bench/latency_probe.py --out bench/results/latency_h200.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

LATENCIES = (0, 1, 3, 6, 10)  # 0: no hint (today's bytes)


def attach(latency: int) -> None:
    """Every kernel lowered from now on carries ``latency`` (for sm_90) on each view load, beside the
    load's own hints: the lowering's own path for ``hint_view_load_latency`` (lower/core.py), given the
    value for kernels whose entry names none (the products take no ``latency`` key)."""
    from tileir.lower import core

    split = core.split_view_hints

    def with_latency(hints):
        entry, loads, stores = split(hints)
        return entry, loads or (("sm_90", (("latency", latency),)),), stores

    core.split_view_hints = with_latency


def cases():
    import torch
    import torch.nn.functional as F

    import tileir.kernels as K

    f16 = torch.float16
    for b, h, s, d, causal in ((8, 16, 2048, 64, False), (8, 16, 2048, 64, True), (8, 16, 2048, 128, False),
                               (8, 16, 2048, 128, True), (32, 16, 512, 128, True)):
        q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=f16) for _ in range(3))
        o = torch.empty_like(q)
        want = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        yield (f"attention B{b} H{h} S{s} D{d}{' causal' if causal else ''}",
               lambda q=q, k=k, v=v, o=o, c=causal: K.attention(q, k, v, o, causal=c, fmt="f16"),
               lambda q=q, k=k, v=v, c=causal: F.scaled_dot_product_attention(q, k, v, is_causal=c), o, want, 2e-2)
    for m, n, kk in ((8192, 8192, 8192), (4096, 4096, 4096), (1000, 5000, 1000), (4096, 5000, 1000)):
        a = torch.randn(m, kk, device="cuda", dtype=f16)
        bm = torch.randn(kk, n, device="cuda", dtype=f16)
        c = torch.empty(m, n, device="cuda", dtype=f16)
        yield (f"matmul f16 {m}x{n}x{kk}", lambda a=a, b=bm, c=c: K.matmul_f16(a, b, c), lambda a=a, b=bm: a @ b,
               c, a @ bm, 2e-2)


def one(latency: int, only=()) -> list[dict]:
    import torch

    sys.path.insert(0, str(Path(__file__).parent))
    from timing import flushed_ms

    if latency:
        attach(latency)
    rows = []
    for name, ours, theirs, out, want, tol in cases():
        if only and not any(w in name for w in only):
            continue
        try:
            out.zero_()
            ours()
            torch.cuda.synchronize()
            err = float((out.float() - want.float()).abs().max() / want.float().abs().max())
            r = {"case": name, "latency": latency, "rel_err": float(f"{err:.3g}"), "ok": err < tol,
                 "tileir_us": round(flushed_ms(ours) * 1e3, 2), "torch_us": round(flushed_ms(theirs) * 1e3, 2)}
            r["ratio"] = round(r["torch_us"] / r["tileir_us"], 3)
        except Exception as e:  # noqa: BLE001  (a probe: a failing variant is a finding)
            r = {"case": name, "latency": latency, "error": f"{type(e).__name__}: {e}"[:300]}
        print(json.dumps(r), flush=True)
        rows.append(r)
    return rows


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--out")
    p.add_argument("--latency", type=int, help="one value, in this process (the driver's child)")
    p.add_argument("--latencies", default=",".join(map(str, LATENCIES)), help="the values, one process each, "
                   "in this order (repeat them to see the drift between processes)")
    p.add_argument("--only", default="", help="the cases whose names contain one of these (comma-separated)")
    args = p.parse_args()
    if args.latency is not None:
        one(args.latency, [w for w in args.only.split(",") if w])
        return
    rows = []
    for n in (int(v) for v in args.latencies.split(",")):
        got = subprocess.run([sys.executable, __file__, "--latency", str(n), "--only", args.only],
                             capture_output=True, text=True, env=os.environ, timeout=170)
        rows += [json.loads(line) for line in got.stdout.splitlines() if line.startswith("{")]
        if got.returncode:
            print(got.stderr[-1500:], flush=True)
        for r in rows[-9:]:
            print(json.dumps(r), flush=True)
    sys.path.insert(0, str(Path(__file__).parent))
    from timing import write_rows

    write_rows(args.out, rows, timing="do_bench (L2 flushed) median, tileir and torch in the same process")


if __name__ == "__main__":
    main()
