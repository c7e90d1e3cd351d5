"""What run-time sizes cost the row norms, size by size: layernorm and rmsnorm (f16) timed as the
library runs them (every size read at run time), with only the row width C recorded as the call's
value (``specialised(["C"])``), and with every size and stride recorded (``specialised("all")``,
the fixed-size program), beside torch, in one run. bench/h200.py found layernorm 8192x8192 12%
slower than its fixed-size program (2026-12-01); this says which size it is and at which widths.

    PYTHONPATH=src python3 bench/exact_sizes.py --out bench/results/exact_sizes_h200.json
"""

from __future__ import annotations

import argparse
import datetime
import json

import torch
import torch.nn.functional as F  # noqa: N812
from timing import median_ms

from tileir import kernels as K

SHAPES = [(8192, 8192), (4096, 4096), (32768, 1024), (8192, 5120)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="bench/results/exact_sizes_h200.json")
    a = ap.parse_args()
    records = []
    for name in ("layernorm", "rmsnorm"):
        lib = getattr(K, name)
        kinds = {"runtime": lib, "exact_C": lib.specialised(["C"]), "exact_all": lib.specialised("all")}
        for r, c in SHAPES:
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
                call(k)
                torch.cuda.synchronize()
                ok = bool(torch.allclose(y.float(), want.float(), rtol=1e-2, atol=1e-2))
                rec[f"{label}_ms"] = round(median_ms(lambda k=k: call(k), 50, 5), 4) if ok else None
                rec[f"{label}_ok"] = ok
            rec["torch_ms"] = round(median_ms(ref, 50, 5), 4)
            if rec["runtime_ms"] and rec["exact_C_ms"] and rec["exact_all_ms"]:
                rec["runtime_over_exact_C"] = round(rec["runtime_ms"] / rec["exact_C_ms"], 4)
                rec["runtime_over_exact_all"] = round(rec["runtime_ms"] / rec["exact_all_ms"], 4)
            print(json.dumps(rec), flush=True)
            records.append(rec)
    doc = {"date": datetime.date.today().isoformat(), "gpu": torch.cuda.get_device_name(0),
           "timer": "tileir.runtime.timing.median_ms (L2 flushed), 50 runs", "records": records}
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
