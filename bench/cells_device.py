"""Issue 4 on the GPU: the cell-based kernels against torch, and one cubin serving several sizes
(softmax's rows and columns are run-time sizes: one recording and cubin for every shape).

    PYTHONPATH=src python3 bench/cells_device.py --out bench/results/cells_h200.json
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

from tileir.assemble import gpu_name_of_device, tileiras_version
from tileir.kernels import matmul_bf16, vadd
from tileir.kernels import softmax as library_softmax


def median_ms(fn, reps=20, warm=1):
    return _median_ms(fn, reps, warm)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    args = p.parse_args()
    arch = gpu_name_of_device()
    rows = []
    # one softmax cubin (per stride claim), several row counts and row lengths: a fresh copy counts them
    softmax = library_softmax.fresh()
    for cols in (1000, 8192, 20000):
        for nrows in (1, 333, 4096):
            x = torch.randn(nrows, cols, device="cuda") * 4
            y = torch.empty_like(x)
            softmax(x, y)
            torch.cuda.synchronize()
            err = float((y.double() - torch.softmax(x.double(), 1)).abs().max())
            ms = median_ms(lambda x=x, y=y: softmax(x, y, sync=False))
            t_ms = median_ms(lambda x=x: torch.softmax(x, 1))
            row = {"kernel": "softmax", "rows": nrows, "cols": cols, "max_abs_err": err, "ok": err < 1e-6,
                   "ms": round(ms, 4), "torch_ms": round(t_ms, 4)}
            print(json.dumps(row), flush=True)
            rows.append(row)
    rows.append({"kernel": "softmax", "shapes": 9, **softmax.compiled()})
    print(json.dumps(rows[-1]), flush=True)
    for n in (1000, 1 << 24):
        a, b = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
        c = torch.empty_like(a)
        vadd(a, b, c)
        torch.cuda.synchronize()
        ok = bool(torch.equal(c, a + b))
        ms = median_ms(lambda a=a, b=b, c=c: vadd(a, b, c, sync=False))
        t_ms = median_ms(lambda a=a, b=b: a + b)
        rows.append({"kernel": "vadd", "n": n, "bit_exact": ok, "ms": round(ms, 4), "torch_ms": round(t_ms, 4),
                     "GB_per_s": round(3 * 4 * n / ms / 1e6, 1)})
        print(json.dumps(rows[-1]), flush=True)
    for m, n, k in ((1000, 1000, 1000), (4096, 4096, 4096)):
        a = torch.randn(m, k, device="cuda").bfloat16()
        b = torch.randn(k, n, device="cuda").bfloat16()
        c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        matmul_bf16(a, b, c)
        torch.cuda.synchronize()
        ref = a.float() @ b.float()
        rel = float((c.float() - ref).abs().max() / ref.abs().max())
        ms = median_ms(lambda a=a, b=b, c=c: matmul_bf16(a, b, c, sync=False))
        t_ms = median_ms(lambda a=a, b=b: a @ b)
        rows.append({"kernel": "matmul_bf16", "mnk": [m, n, k], "max_rel_err": rel, "ok": rel < 1e-2,
                     "ms": round(ms, 4), "torch_ms": round(t_ms, 4), "tflops": round(2 * m * n * k / ms / 1e9, 1)})
        print(json.dumps(rows[-1]), flush=True)
    out = {"date": datetime.date.today().isoformat(), "gpu": torch.cuda.get_device_name(0), "arch": arch,
           "tileiras": tileiras_version(), "torch": torch.__version__,
           "command": "PYTHONPATH=src python3 bench/cells_device.py --out bench/results/cells_h200.json",
           "results": rows}
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
