"""What run-time sizes cost the row norms, size by size: layernorm and rmsnorm (f16) timed as the
library runs them (every size read at run time), with only the row width C recorded as the call's
value (``specialised(["C"])``), and with every size and stride recorded (``specialised("all")``,
the fixed-size program), beside torch, in one run. bench/h200.py found layernorm 8192x8192 12%
slower than its fixed-size program (2026-12-01); this says which size it is and at which widths.
``runtime_masked`` is the library call as it was before a row that fills its one-chunk tile ran
with the width recorded (kernel.py, ``_CallSite._full_cells``): what that variant is worth.

    PYTHONPATH=src python3 bench/exact_sizes.py --out bench/results/exact_sizes_h200.json
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics

import torch
import torch.nn.functional as F  # noqa: N812
from timing import median_ms

from tileir import kernels as K
from tileir.kernel import _CallSite

SHAPES = [(8192, 8192), (4096, 4096), (32768, 1024), (8192, 5120)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="bench/results/exact_sizes_h200.json")
    ap.add_argument("--rounds", type=int, default=1,
                    help="time the three kinds this many times, interleaved (the median kept, the spread written)")
    ap.add_argument("--shapes", default=None, help="rows x cols list, e.g. 8192x8192,32768x1024 (default: all)")
    a = ap.parse_args()
    shapes = SHAPES if a.shapes is None else [tuple(int(v) for v in s.split("x")) for s in a.shapes.split(",")]
    records = []
    for name in ("layernorm", "rmsnorm"):
        lib = getattr(K, name)
        masked = lib.fresh()
        kinds = {"runtime": lib, "runtime_masked": masked, "exact_C": lib.specialised(["C"]),
                 "exact_all": lib.specialised("all")}
        for r, c in shapes:
            x = torch.randn(r, c, device="cuda", dtype=torch.float16)
            w = torch.randn(c, device="cuda", dtype=torch.float16)
            b = torch.randn(c, device="cuda", dtype=torch.float16)
            y = torch.empty_like(x)
            if name == "layernorm":
                def call(k, x=x, w=w, b=b, y=y):
                    k(x, w, b, y, fmt="f16")

                def ref(x=x, w=w, b=b, c=c):
                    return F.layer_norm(x, (c,), w, b, 1e-5)
            else:
                def call(k, x=x, w=w, y=y):
                    k(x, w, y, fmt="f16")

                def ref(x=x, w=w, c=c):
                    return F.rms_norm(x, (c,), w, 1e-6)
            rec = {"kernel": name, "shape": [r, c], "fmt": "f16"}
            want = ref()
            for label, k in kinds.items():
                y.zero_()
                full_cells = _CallSite._full_cells
                if label == "runtime_masked":  # its variant made without the full-cell program, then kept
                    _CallSite._full_cells = lambda site, cfg, plan, values, spec: (site.fn, spec)
                try:
                    call(k)
                finally:
                    _CallSite._full_cells = full_cells
                torch.cuda.synchronize()
                rec[f"{label}_ok"] = bool(torch.allclose(y.float(), want.float(), rtol=1e-2, atol=1e-2))
            # the kinds interleaved round by round, so a drift of the clocks falls on all of them alike
            times: dict = {label: [] for label in (*kinds, "torch")}
            for _ in range(a.rounds):
                for label, k in kinds.items():
                    if rec[f"{label}_ok"]:
                        times[label].append(median_ms(lambda k=k: call(k), 50, 5))
                times["torch"].append(median_ms(ref, 50, 5))
            for label, ts in times.items():
                rec[f"{label}_ms"] = round(statistics.median(ts), 4) if ts else None
                if a.rounds > 1 and ts:
                    rec[f"{label}_rounds_ms"] = [round(t, 4) for t in ts]
            if rec["runtime_ms"] and rec["exact_C_ms"] and rec["exact_all_ms"]:
                rec["runtime_over_exact_C"] = round(rec["runtime_ms"] / rec["exact_C_ms"], 4)
                rec["runtime_over_exact_all"] = round(rec["runtime_ms"] / rec["exact_all_ms"], 4)
                if rec["runtime_masked_ms"]:
                    rec["runtime_masked_over_exact_all"] = round(rec["runtime_masked_ms"] / rec["exact_all_ms"], 4)
                if a.rounds > 1:  # the spread: each round's own ratio
                    rec["runtime_over_exact_all_rounds"] = [round(x / y, 4) for x, y in
                                                            zip(times["runtime"], times["exact_all"])]
            print(json.dumps(rec), flush=True)
            records.append(rec)
    doc = {"date": datetime.date.today().isoformat(), "gpu": torch.cuda.get_device_name(0),
           "timer": "tileir.runtime.timing.median_ms (L2 flushed), 50 runs", "rounds": a.rounds, "records": records}
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
