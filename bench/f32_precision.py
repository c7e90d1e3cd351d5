"""The f32 matrix product's precisions (issue 12): tileir's matmul_tf32 with precision "tf32",
"3xtf32" and "ieee" beside torch's fp32 (TF32 off, its default) and torch's TF32, at 4096^3: the
error of each against an f64 reference of the same operands, and the speed of each
(``triton.testing.do_bench``, L2 flushed, median).

Errors are reported three ways, on signed inputs (uniform in [-1, 1]: errors cancel) and positive
ones ([0, 1]: they pile up): the largest |error| / (u * sum_k |a||b|) with u = 2^-24 (the bound's
own unit: an f32 dot product in order of K is within K of it), the largest |error| / max |C|, and
the Frobenius norm of the error over C's.

The goal (issue 12): 3xtf32 no less accurate than torch's fp32 product on either input, and at
least twice its speed.

    PYTHONPATH=src python3 bench/f32_precision.py --out bench/results/f32_precision_h200.json
    PYTHONPATH=src python3 bench/f32_precision.py --cpu --size 96     # the host reference, a self-check
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import time

import torch

PRECISIONS = ("tf32", "3xtf32", "ieee")
U = 2.0 ** -24


def inputs(n, dist, dev, seed):
    g = torch.Generator(device=dev).manual_seed(seed)
    lo = -1.0 if dist == "signed" else 0.0
    a = torch.rand(n, n, device=dev, generator=g) * (1 - lo) + lo
    b = torch.rand(n, n, device=dev, generator=g) * (1 - lo) + lo
    return a, b


def errors(got, exact, scale) -> dict:
    err = (got.double() - exact).abs()
    return {"max_err_in_u_sum": round(float((err / scale).max()) / U, 3),
            "max_err_over_max_c": float(err.max() / exact.abs().max()),
            "frobenius_rel": float(err.norm() / exact.norm())}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="bench/results/f32_precision_h200.json")
    p.add_argument("--size", type=int, default=4096)
    p.add_argument("--cpu", action="store_true", help="the host reference (TILEIR_INTERPRET), no timing")
    args = p.parse_args(argv)
    if args.cpu:
        os.environ["TILEIR_INTERPRET"] = "1"
    from tileir.kernels import matmul_tf32
    from tileir.kernels.gemm import gemm, plan

    dev = "cpu" if args.cpu else "cuda"
    n = args.size
    t0 = time.time()
    timer = None
    gpu = "sm_90"
    doc = {"date": datetime.date.today().isoformat(), "size": [n, n, n], "device": dev, "torch": torch.__version__,
           "unit_u": "2^-24", "rows": []}
    if not args.cpu:
        from triton.testing import do_bench

        from tileir.assemble import gpu_name_of_device, tileiras_version

        gpu = gpu_name_of_device()
        doc.update(gpu=torch.cuda.get_device_name(0), arch=gpu, tileiras=tileiras_version())

        def timer(fn):
            return float(do_bench(fn, warmup=25, rep=100, return_mode="median"))

    flop = 2.0 * n ** 3
    for dist in ("signed", "positive"):
        a, b = inputs(n, dist, dev, 1 if dist == "signed" else 2)
        exact = a.double() @ b.double()
        scale = a.double().abs() @ b.double().abs()
        c = torch.empty(n, n, device=dev)
        for prec in PRECISIONS:
            row = {"dist": dist, "who": "tileir", "precision": prec}
            try:
                if args.cpu:
                    cfg = matmul_tf32.tuned_config({"precision": prec}, gpu, {"M": n, "N": n, "K": n})
                    matmul_tf32(a, b, c, **cfg)
                else:
                    row["plan"] = plan(a, b, precision=prec)
                    cfg = row["plan"].get("halves") or matmul_tf32.tuned_config({"precision": prec}, gpu,
                                                                                {"M": n, "N": n, "K": n})
                    gemm(a, b, c, precision=prec)
                    torch.cuda.synchronize()
                row["config"] = {k: v for k, v in cfg.items() if k in matmul_tf32.tuned}
                row.update(errors(c, exact, scale))
                if timer is not None:
                    ms = timer(lambda prec=prec, a=a, b=b, c=c: gemm(a, b, c, precision=prec))
                    row.update(ms=round(ms, 4), tflops=round(flop / ms / 1e9, 2))
            except Exception as e:
                row["error"] = f"{type(e).__name__}: {e}"[:400]
            doc["rows"].append(row)
            print(json.dumps(row), flush=True)
        for label, tf32 in (("fp32", False), ("tf32", True)):
            row = {"dist": dist, "who": "torch", "precision": label}
            torch.backends.cuda.matmul.allow_tf32 = tf32
            try:
                got = torch.matmul(a, b)
                row.update(errors(got, exact, scale))
                if timer is not None:
                    ms = timer(lambda a=a, b=b, c=c: torch.matmul(a, b, out=c))
                    row.update(ms=round(ms, 4), tflops=round(flop / ms / 1e9, 2))
            finally:
                torch.backends.cuda.matmul.allow_tf32 = False
            doc["rows"].append(row)
            print(json.dumps(row), flush=True)

    def get(dist, who, prec, key):
        for r in doc["rows"]:
            if (r["dist"], r["who"], r["precision"]) == (dist, who, prec):
                return r.get(key)
        return None

    goal = {}
    for dist in ("signed", "positive"):
        e3, ef = get(dist, "tileir", "3xtf32", "max_err_in_u_sum"), get(dist, "torch", "fp32", "max_err_in_u_sum")
        f3, ff = get(dist, "tileir", "3xtf32", "frobenius_rel"), get(dist, "torch", "fp32", "frobenius_rel")
        goal[f"3xtf32_error_no_worse_than_torch_fp32_{dist}"] = (
            None if None in (e3, ef, f3, ff) else bool(e3 <= ef and f3 <= ff))
    t3, tf = get("signed", "tileir", "3xtf32", "ms"), get("signed", "torch", "fp32", "ms")
    goal["3xtf32_speed_over_torch_fp32"] = round(tf / t3, 3) if t3 and tf else None
    goal["3xtf32_at_least_2x_torch_fp32"] = bool(tf / t3 >= 2.0) if t3 and tf else None
    doc["goal"] = goal
    doc["seconds"] = round(time.time() - t0, 1)
    print(json.dumps(goal))
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
