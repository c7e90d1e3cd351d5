"""Why 16-bit products whose rows are not a multiple of 16 elements run slow (issue 12): the suite's
f16 / bf16 M x 5000 x 1000 rows take 0.64-0.84x torch where 16-element rows of the same work run
0.95-1.0. A launch claims such a stride divisible by 8 (sizes.claim_of), not 16. This times the
product as given against the same operands in buffers whose row pitch is padded to a multiple of 16
(the sizes unchanged; the padded pitch also leaves a gap after each row, which takes the loads off
TMA -- the finding: families/views.py load_may_read_a_gap), A alone, B alone, both, and K itself
padded with zeros to 1008 (sizes and strides of 16-multiples, no gap), each with the rule's
configuration and three others. ``--part slices``: tileir.ops.matmul on column slices (it copies
them dense first where that pays) against the kernel on the slices in place and torch. GPU needed.

    PYTHONPATH=src python3 bench/unaligned_probe.py --out bench/results/unaligned_h200.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from timing import flushed_ms, kernel_us, write_rows  # noqa: E402

from tileir.kernels import matmul_f16  # noqa: E402


def pitched(rows: int, cols: int, pitch: int, src: torch.Tensor | None = None) -> torch.Tensor:
    """A [rows, cols] view of a [rows, pitch] buffer (zeros past cols), ``src``'s values where given."""
    buf = torch.zeros(rows, pitch, device="cuda", dtype=torch.float16)
    view = buf[:, :cols]
    if src is not None:
        view.copy_(src)
    return view


def slice_rows() -> list[dict]:
    """tileir.ops.matmul on column slices of wider matrices (the operands' rows twice their width
    apart), which it copies dense first, against the kernel on the slices in place (what it did before)
    and torch on the same slices."""
    import tileir.ops as tops

    rows = []
    for m, n, k in ((4096, 4096, 4096), (4096, 5000, 1000), (16, 4096, 4096)):
        a = torch.randn(m, 2 * k, device="cuda", dtype=torch.float16)[:, :k]
        b = torch.randn(k, 2 * n, device="cuda", dtype=torch.float16)[:, n:]
        c = torch.empty(m, n, device="cuda", dtype=torch.float16)
        want = a.double() @ b.double()
        for name, fn in (("torch", lambda a=a, b=b: a @ b), ("tileir.ops.matmul", lambda a=a, b=b: tops.matmul(a, b)),
                         ("kernel in place", lambda a=a, b=b, c=c: matmul_f16(a, b, c))):
            got = fn()
            got = c if got is None else got
            torch.cuda.synchronize()
            err = float((got.double() - want).abs().max() / want.abs().max())
            rows.append({"shape": [m, n, k], "variant": name, "rel_err": float(f"{err:.3g}"),
                         "flushed_us": round(flushed_ms(fn) * 1e3, 2)})
            print(json.dumps(rows[-1]), flush=True)
    return rows


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--part", choices=("pitches", "slices"), default="pitches")
    args = p.parse_args()
    if args.part == "slices":
        write_rows(args.out, slice_rows(), timing="flushed_us: do_bench (L2 flushed) median")
        return
    rows = []
    configs = {"rule": {}, "128x256x32": {"tm": 128, "tn": 256, "tk": 32, "group": 8, "warps": 8},
               "128x256x64": {"tm": 128, "tn": 256, "tk": 64, "group": 8, "warps": 8},
               "128x128x64": {"tm": 128, "tn": 128, "tk": 64, "group": 8, "warps": 8}}
    for m, n, k in ((1000, 5000, 1000), (4096, 5000, 1000), (4096, 4096, 1000), (4096, 5000, 1024)):
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        b = torch.randn(k, n, device="cuda", dtype=torch.float16)
        want = a.double() @ b.double()
        k16, n16 = -(-k // 16) * 16, -(-n // 16) * 16
        kp = k16 if k16 != k else k + 16
        np_ = n16 if n16 != n else n + 16
        variants = {
            "as given": (a, b, torch.empty(m, n, device="cuda", dtype=torch.float16)),
            "A pitch 16": (pitched(m, k, kp, a), b, torch.empty(m, n, device="cuda", dtype=torch.float16)),
            "B and C pitch 16": (a, pitched(k, n, np_, b), pitched(m, n, np_)),
            "all pitches 16": (pitched(m, k, kp, a), pitched(k, n, np_, b), pitched(m, n, np_)),
        }
        if k16 != k:  # K itself a multiple of 16: zero columns of A and rows of B
            ak = torch.zeros(m, k16, device="cuda", dtype=torch.float16)
            ak[:, :k] = a
            bk = torch.zeros(k16, n, device="cuda", dtype=torch.float16)
            bk[:k] = b
            variants["K padded to 16"] = (ak, bk, torch.empty(m, n, device="cuda", dtype=torch.float16))
        t_ms = flushed_ms(lambda a=a, b=b: a @ b)
        rows.append({"shape": [m, n, k], "variant": "torch", "flushed_us": round(t_ms * 1e3, 2)})
        print(json.dumps(rows[-1]), flush=True)
        for vname, (av, bv, cv) in variants.items():
            for cname, cfg in configs.items():
                def fn(av=av, bv=bv, cv=cv, cfg=cfg):
                    matmul_f16(av, bv, cv, **cfg)
                try:
                    cv.zero_()
                    fn()
                    torch.cuda.synchronize()
                    err = float((cv.double() - want).abs().max() / want.abs().max())
                    r = {"shape": [m, n, k], "variant": vname, "config": cname, "rel_err": float(f"{err:.3g}"),
                         "flushed_us": round(flushed_ms(fn) * 1e3, 2), "gpu_us": kernel_us(fn, reps=10)["total"]}
                    r["torch_over"] = round(t_ms * 1e3 / r["flushed_us"], 3)
                except Exception as e:  # noqa: BLE001  (a probe: a failing variant is a finding)
                    r = {"shape": [m, n, k], "variant": vname, "config": cname,
                         "error": f"{type(e).__name__}: {e}"[:300]}
                rows.append(r)
                print(json.dumps(r), flush=True)
    write_rows(args.out, rows, timing="flushed_us: do_bench (L2 flushed) median; gpu_us: torch.profiler kernel sum")


if __name__ == "__main__":
    main()
