"""Variants of campaign 10's 608065 on the GPU, to find its rule: two allocas of 8 f32 whose stored values are
read back and never used, beside an unrelated copy, failed the launch (CUDA_ERROR_ILLEGAL_ADDRESS) at
tileiras' default level and were right at -O0 (bench/results/fuzz_campaign10_after_h200.json, its shrunk
reproducer in bench/results/fuzz_repro_campaign10/). Each variant changes one thing; every one runs at the
default level and at -O0 through one GPU worker, which a failed launch's sticky error does not stop.

    PYTHONPATH=src python bench/alloca_variants.py --out bench/results/alloca_variants_608065_h200.json
"""

from __future__ import annotations

import argparse
import json

from tileir.diff.fuzz import make_device
from tileir.diff.shrink import Tester


def _load(i, fmt, shape):
    return {"op": "load", "id": i, "fmt": fmt, "shape": list(shape), "dist": "small", "moving": False, "mask": False}


def _desc(body, grid=4, fmts=("f16", "f32")):
    return {"v": 1, "seed": 608065, "grid": [grid], "warps": 0, "fmts": list(fmts), "globals": [], "body": body}


def variants() -> dict:
    reduce = {"op": "reduce", "id": 14, "f": "sum", "a": 12, "dim": 0, "keep": True}
    alloca = lambda a: {"op": "alloca", "id": 15, "a": a, "b": a}  # noqa: E731  (results 15 and 16)
    copy = [_load(17, "f16", (4, 2)), {"op": "store", "id": 19, "a": 17}]
    store = lambda a, i=20: {"op": "store", "id": i, "a": a}  # noqa: E731
    shrunk = [_load(12, "f32", (32, 8)), reduce, alloca(14)] + copy
    return {
        "as shrunk": _desc(shrunk),
        "grid 1": _desc(shrunk, grid=1),
        "the first alloca's value stored": _desc(shrunk + [store(15)]),
        "both allocas' values stored": _desc(shrunk + [store(15), store(16, 21)]),
        "no copy beside it (the reduce stored)": _desc([_load(12, "f32", (32, 8)), reduce, alloca(14), store(14)]),
        "no reduce: a [8] load through the allocas": _desc([_load(12, "f32", (8,)), alloca(12)] + copy),
        "an i32 [8] load through the allocas": _desc([_load(12, "i32", (8,)), alloca(12)] + copy, fmts=("f16", "i32")),
        "a [256] load through the allocas": _desc([_load(12, "f32", (256,)), alloca(12)] + copy),
    }


def main(argv=None) -> int:
    from tileir import assemble

    assemble.WORKAROUND["any_alloca"] = False  # the study runs what tileiras' own level makes of an alloca
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    dev = make_device("gpu")
    rows = []
    try:
        vs = variants()
        for level in (None, 0):
            got = Tester(dev, None, "sm_90", level).outcomes(list(vs.values()))
            for (name, desc), o in zip(vs.items(), got):
                row = next((r for r in rows if r["variant"] == name), None)
                if row is None:
                    row = {"variant": name, "desc": desc}
                    rows.append(row)
                row["default" if level is None else "O0"] = {"status": o["status"], "detail": (o["detail"] or "")[:160]}
    finally:
        dev.close()
    for r in rows:
        print(f"{r['variant']:45s} default {r['default']['status']:13s} -O0 {r['O0']['status']}", flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"rows": rows}, f, separators=(",", ":"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
