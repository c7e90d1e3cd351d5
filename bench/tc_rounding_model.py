"""A model, not a measurement: the error of 3xtf32's three ways of summing (gemm's fresh accumulator a K slice,
the k-major form's ``fresh=0`` -- every product on the tensor cores' one accumulator -- and the cross terms in an
accumulator of their own) beside a plain sequential f32 sum (what an f32 product without tensor cores does),
for single dot products of length K, under two hypotheses about the tensor cores' accumulator: each HGMMA
(8 exact tf32 products and the accumulator) rounded to f32 to nearest, or toward zero (studies of Volta and
Ampere tensor cores found truncation). Errors in units of f32's roundoff of sum |a||b|, the largest over the
sample, positive operands (where errors pile up) and zero-mean ones. Runs on the CPU (numpy), ~1 minute.

    python3 bench/tc_rounding_model.py --out bench/results/tc_rounding_model_cpu.json

Which hypothesis holds on sm_90 is for the device: bench/split_b_probe.py records each form's error against
torch's f32 product.
"""

from __future__ import annotations

import argparse
import json

import numpy as np

U = 2.0 ** -24


def tf32(x: np.ndarray) -> np.ndarray:
    """Round f32 to tf32 (10 mantissa bits), to nearest even, kept as f32."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0xFFF + ((u >> 13) & 1)) & ~np.uint64(0x1FFF)
    return u.astype(np.uint32).view(np.float32)


def to_f32(s: float, toward_zero: bool) -> np.float32:
    f = np.float32(s)
    if toward_zero and abs(float(f)) > abs(s):
        f = np.nextafter(f, np.float32(0))
    return f


def hgmma(acc, pairs, toward_zero: bool):
    """acc plus each (a, b) group of 8: the products exact, one rounding an instruction."""
    for a, b in pairs:
        acc = to_f32(float(acc) + float(np.dot(a.astype(np.float64), b.astype(np.float64))), toward_zero)
    return acc


def errors(a: np.ndarray, b: np.ndarray, toward_zero: bool, tk: int = 64) -> dict:
    ah, bh = tf32(a), tf32(b)
    al, bl = tf32(a - ah), tf32(b - bh)
    exact = float(np.dot(a.astype(np.float64), b.astype(np.float64)))
    scale = float(np.dot(np.abs(a.astype(np.float64)), np.abs(b.astype(np.float64))))

    def three(s0):  # one K slice's products, the small ones first
        g = [slice(i, i + 8) for i in range(s0, s0 + tk, 8)]
        return [(al[x], bh[x]) for x in g] + [(ah[x], bl[x]) for x in g] + [(ah[x], bh[x]) for x in g]

    fresh = np.float32(0)
    one = np.float32(0)
    big = small = np.float32(0)
    for s0 in range(0, len(a), tk):
        fresh = np.float32(fresh + hgmma(np.float32(0), three(s0), toward_zero))
        one = hgmma(one, three(s0), toward_zero)
        g = [slice(i, i + 8) for i in range(s0, s0 + tk, 8)]
        small = hgmma(small, [(al[x], bh[x]) for x in g] + [(ah[x], bl[x]) for x in g], toward_zero)
        big = hgmma(big, [(ah[x], bh[x]) for x in g], toward_zero)
    seq = np.float32(0)
    for x, y in zip(a, b, strict=True):
        seq = np.float32(float(seq) + float(x) * float(y))
    got = {"fresh accumulator a slice (gemm's; fresh >= 1)": fresh, "one accumulator (fresh=0)": one,
           "cross terms apart": np.float32(big + small), "sequential f32 (no tensor cores)": seq}
    return {k: abs(float(v) - exact) / scale / U for k, v in got.items()}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--k", type=int, default=4096)
    p.add_argument("--samples", type=int, default=32)
    args = p.parse_args()
    rng = np.random.default_rng(0)
    rows = []
    for positive in (True, False):
        for toward_zero in (True, False):
            worst: dict = {}
            for _ in range(args.samples):
                if positive:
                    a, b = rng.uniform(0, 1, args.k), rng.uniform(0, 1, args.k)
                else:
                    a, b = rng.standard_normal(args.k) / np.sqrt(args.k), rng.standard_normal(args.k)
                for name, e in errors(a.astype(np.float32), b.astype(np.float32), toward_zero).items():
                    worst[name] = max(worst.get(name, 0.0), e)
            row = {"operands": "uniform(0, 1)" if positive else "zero-mean", "accumulator rounding":
                   "toward zero" if toward_zero else "to nearest", "K": args.k, "samples": args.samples,
                   "max_err_u": {k: round(v, 1) for k, v in worst.items()}}
            rows.append(row)
            print(json.dumps(row), flush=True)
    with open(args.out, "w") as f:
        json.dump({"what": "a model, not a measurement: bench/tc_rounding_model.py", "rows": rows}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
