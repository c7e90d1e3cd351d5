"""The row kernels' entry hints on run-time sizes, measured: softmax, layernorm and rmsnorm (and
vadd's tile) over a grid of warps / occupancy candidates at the benchmark's shape and at two of
the suite's narrow-row shapes, each beside torch in the same run (autotune.tune, answers checked,
nothing saved). The default table's row entries were tuned when the width was configuration;
this says whether they still hold now that it is read at the launch.

    PYTHONPATH=src python3 bench/row_configs.py --out bench/results/row_configs_h200.json
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from timing import median_ms  # noqa: E402

from tileir import autotune  # noqa: E402
from tileir import kernels as K  # noqa: E402

F = torch.nn.functional
HINTS = [{"warps": w, "occupancy": o, "one_chunk": True} for w, o in itertools.product((0, 8), (2, 4))]


def cases():
    for r, c in ((8192, 8192), (32768, 1024)):
        x32 = torch.randn(r, c, device="cuda")
        x16 = x32.half()
        w, b = torch.randn(c, device="cuda").half(), torch.randn(c, device="cuda").half()
        tile = 1 << (c - 1).bit_length()
        yield (f"softmax_f32_{r}x{c}", K.softmax, [x32, torch.empty_like(x32)], {},
               [dict(h, max_tile=tile) for h in HINTS], lambda x=x32: torch.softmax(x, 1), 2 * 4 * r * c)
        yield (f"layernorm_f16_{r}x{c}", K.layernorm, [x16, w, b, torch.empty_like(x16)], {"fmt": "f16"},
               [dict(h, max_tile=tile) for h in HINTS], lambda x=x16, w=w, b=b, c=c: F.layer_norm(x, (c,), w, b),
               2 * 2 * r * c)
        yield (f"rmsnorm_f16_{r}x{c}", K.rmsnorm, [x16, w, torch.empty_like(x16)], {"fmt": "f16"},
               [dict(h, max_tile=tile) for h in HINTS], lambda x=x16, w=w, c=c: F.rms_norm(x, (c,), w), 2 * 2 * r * c)
    n = 1 << 28
    a, b = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    yield ("vadd_f32_2^28", K.vadd, [a, b, torch.empty_like(a)], {},
           [{"tile": t, "warps": w} for t, w in itertools.product((1024, 2048, 4096), (0, 4, 8))],
           lambda: torch.add(a, b), 3 * 4 * n)


def precompile(work) -> None:
    """Every candidate's cubin assembled up front, 16 tileiras runs at a time (the tuner's launches
    then find them in the cache)."""
    from concurrent.futures import ThreadPoolExecutor

    from tileir.assemble import gpu_name_of_device

    arch, jobs = gpu_name_of_device(), []
    for _, kern, arrays, fixed, candidates, _, _ in work:
        for cand in candidates:
            cfg = kern.config(**fixed, **cand)
            plan = kern.plan(cfg)
            jobs.append((kern, plan.div16(plan.values(arrays), arrays), cfg))
    with ThreadPoolExecutor(16) as pool:
        for f in [pool.submit(lambda k=k, d=d, c=c: k.cubin(arch, None, d, **c)) for k, d, c in jobs]:
            try:
                f.result()
            except Exception as e:  # the tuner notes the candidate's error itself
                print(f"precompile: {type(e).__name__}: {e}"[:200], flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    args = p.parse_args()
    rows, work = [], list(cases())
    precompile(work)
    for name, kern, arrays, fixed, candidates, torch_fn, nbytes in work:
        results: list = []
        try:
            best = autotune.tune(kern, candidates, arrays, save=False, results=results, **fixed)
        except Exception as e:  # noted; the sweep goes on
            best = {"error": f"{type(e).__name__}: {e}"[:300]}
        t_ms = median_ms(torch_fn, 30, 5)
        ok = [r for r in results if r.get("ok") and r.get("ms")]
        fastest = min((r["ms"] for r in ok), default=None)
        row = {"workload": name, "torch_ms": round(t_ms, 4), "torch_TBps": round(nbytes / t_ms / 1e9, 3),
               "best": best, "best_ms": fastest, "ratio": round(t_ms / fastest, 3) if fastest else None,
               "candidates": [{"config": r["config"], "ms": r.get("ms"), "ok": r.get("ok"),
                               "error": (r.get("error") or "")[:200] or None} for r in results]}
        print(json.dumps({k: row[k] for k in ("workload", "torch_ms", "best", "best_ms", "ratio")}), flush=True)
        rows.append(row)
    out = {"date": datetime.date.today().isoformat(), "gpu": torch.cuda.get_device_name(0),
           "command": "PYTHONPATH=src python3 bench/row_configs.py --out bench/results/row_configs_h200.json",
           "ratio": "torch_ms / tileir best_ms (above 1: tileir faster)", "records": rows}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
