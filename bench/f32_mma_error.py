"""What each f32 product path of the device computes (issue 15): ieee f32 mma, tf32 and 3xTF32
against an f64 reference, K from 16 to 16384, and which host model each is nearest to.

A [128, 128] = [128, K] x [K, 128] product in 64 x 64 tiles (a K loop of 32-wide slices carrying
an f32 accumulator), inputs uniform in [-1, 1] (errors cancel) and in [0, 1] (they pile up). For
each path and K it reports the error against the f64 product of the operands as given, normalised
by u sum|a||b| (u = 2^-24), and the distance from the device's answer to three host models:

* ``f32_in_k_order``: each product rounded to f32, summed in order of k (tileir.families.mma's
  f32_products_in_k_order: the host reference's model of ieee f32 mma today);
* ``fma_in_k_order``: acc = fma(a, b, acc) in order of k (one rounding a step);
* ``tf32_products``: operands rounded to tf32 (exact products), f32 sums in order of k;
* ``f64_once``: the f64 product rounded once to f32 (what the host computed before).

The nearest model (by the largest distance over the tile) is the error model to write down; the
host reference follows it. 3xTF32 splits each operand into hi + lo tf32 parts (hi hi + hi lo +
lo hi), as the user's attention kernel did.

    PYTHONPATH=src python3 bench/f32_mma_error.py --out bench/results/f32_mma_error_h200.json
    PYTHONPATH=src python3 bench/f32_mma_error.py --out /tmp/x.json --no-device   # compile + self-check only
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import time

import numpy as np

import tileir as ti
from tileir.assemble import assemble, tileiras_version
from tileir.dtypes import BY_NAME, to_format
from tileir.families.mma import f32_products_in_k_order

M = N = 128
TM = TN = 64
TK = 32
KS = (16, 64, 256, 1024, 4096, 16384)
PATHS = ("f32", "tf32", "tf32x3")
U = 2.0 ** -24


def step(a, b, acc, path: str):
    if path == "f32":
        return ti.mma(a, b, acc)
    ah, bh = ti.float_to_float(a, "tf32"), ti.float_to_float(b, "tf32")
    if path == "tf32":
        return ti.mma(ah, bh, acc)
    al = ti.float_to_float(ti.sub(a, ti.float_to_float(ah, "f32")), "tf32")
    bl = ti.float_to_float(ti.sub(b, ti.float_to_float(bh, "f32")), "tf32")
    return ti.mma(ah, bh, ti.mma(ah, bl, ti.mma(al, bh, acc)))


def kernel(path: str, k: int):
    tk = min(TK, k)

    def body():
        bm, bn = ti.block_id(0), ti.block_id(1)
        acc = ti.carry(ti.full([TM, TN], 0.0, "f32"))
        for kk in ti.d_range(0, k // tk):
            a = ti.load(ti.param("f32", 0), ti.idx_add(ti.tile_at(bm, TM * k), ti.tile_at(kk, tk)), [TM, tk],
                        strides=[k, 1])
            b = ti.load(ti.param("f32", 1), ti.idx_add(ti.tile_at(kk, tk * N), ti.tile_at(bn, TN)), [tk, TN],
                        strides=[N, 1])
            ti.set(acc, step(a, b, ti.get(acc), path))
        ti.store(ti.param("f32", 2), ti.idx_add(ti.tile_at(bm, TM * N), ti.tile_at(bn, TN)), ti.get(acc),
                 strides=[N, 1])

    return ti.trace_kernel(f"f32_{path}_{k}", [ti.ByPtr("f32")] * 3, body)


def tf32(x):
    return to_format(BY_NAME["tf32"], x).astype(np.float32)


def models(a, b) -> dict:
    """The host models of the product, each an f32 [M, N]."""
    zero = np.zeros((M, N), np.float32)
    fma = zero.astype(np.float64)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    for kk in range(a.shape[1]):  # the product is exact in f64; the sum rounds through f64 to f32 (twice:
        # on rare ties one unit from a true fma, far below what tells the models apart)
        fma = (fma + a64[:, kk:kk + 1] * b64[kk:kk + 1, :]).astype(np.float32).astype(np.float64)
    return {"f32_in_k_order": f32_products_in_k_order(a, b, zero), "fma_in_k_order": fma.astype(np.float32),
            "tf32_products": f32_products_in_k_order(tf32(a), tf32(b), zero),
            "f64_once": (a64 @ b64).astype(np.float32)}


def inputs(k: int, dist: str, seed: int):
    r = np.random.default_rng(seed)
    lo = -1.0 if dist == "signed" else 0.0
    return r.uniform(lo, 1, (M, k)).astype(np.float32), r.uniform(lo, 1, (k, N)).astype(np.float32)


def self_check():
    """The kernel on tileir's host reference at a small K equals the f32-in-k-order model per tile
    order (ieee f32) -- the harness computes what it says -- and the models differ from one another."""
    from tileir.ref import run_host

    a, b = inputs(64, "signed", 1)
    c = np.zeros(M * N, np.float32)
    run_host(kernel("f32", 64), [a.ravel().copy(), b.ravel().copy(), c], (M // TM, N // TN))
    want = f32_products_in_k_order(a, b, np.zeros((M, N), np.float32))
    # the host folds each 32-wide slice into the carried accumulator: the same order of k
    if not np.array_equal(c.reshape(M, N), want):
        sys.exit("self-check failed: the host reference's f32 mma is not f32_products_in_k_order")
    mm = models(a, b)
    if np.array_equal(mm["f32_in_k_order"], mm["f64_once"]):
        sys.exit("self-check failed: the models do not differ on this input; no measurement could tell them apart")
    return {"host_reference_is_f32_in_k_order": True}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--no-device", action="store_true")
    args = p.parse_args()
    device = not args.no_device
    arch = "sm_90"
    if device:
        from tileir.assemble import gpu_name_of_device
        from tileir.runtime import launch

        arch = gpu_name_of_device() or arch
    t0 = time.time()
    check = self_check()
    rows = []
    for path in PATHS:
        for k in KS:
            prog = kernel(path, k)
            lk = ti.lower(prog)
            cubin = assemble(ti.encode_kernel(lk), arch, kernel=prog.name, program=lk)
            for dist in ("signed", "positive"):
                a, b = inputs(k, dist, k)
                row = {"path": path, "k": k, "dist": dist}
                if device:
                    c = np.zeros(M * N, np.float32)
                    launch(cubin, prog.name, (M // TM, N // TN), [a.ravel().copy(), b.ravel().copy(), c],
                           [("f32", True)] * 3)
                    got = c.reshape(M, N).astype(np.float64)
                    exact = a.astype(np.float64) @ b.astype(np.float64)
                    scale = U * (np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64))
                    err = np.abs(got - exact)
                    row.update(max_abs_err=float(err.max()), max_err_in_u_sum=float((err / scale).max()),
                               mean_err_in_u_sum=float((err / scale).mean()))
                    dist_to = {name: float(np.abs(got - m.astype(np.float64)).max()) for name, m in
                               models(a, b).items()}
                    row["distance_to_model"] = dist_to
                    row["nearest_model"] = min(dist_to, key=dist_to.get)
                    row["equal_to"] = [n for n, v in dist_to.items() if v == 0.0]
                rows.append(row)
                print(json.dumps(row), flush=True)
    doc = {"date": datetime.date.today().isoformat(), "arch": arch, "tileiras": tileiras_version(), "device": device,
           "shape": [M, N], "tile": [TM, TN, TK], "self_check": check, "seconds": round(time.time() - t0, 1),
           "rows": rows}
    if device:
        doc["nearest_model_per_path"] = {p: sorted({r["nearest_model"] for r in rows if r["path"] == p})
                                         for p in PATHS}
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
