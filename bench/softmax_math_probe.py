"""Where softmax's one-tile program spends its time: the same program as ``kernels.softmax``'s
one_chunk path, written here four ways, at the rule's configuration for each shape, beside the
library's kernel and torch. The suite ran softmax f16 at 0.59x torch at 4096 x 1000 but 1.00x at
4096 x 1024, and 0.64x at 32768 x 32768 where layernorm (same tile, same hints) ran 1.30x:

* ``div``: the library's program: e / sum(e), an IEEE division a lane, the row padded with -inf;
* ``rcp``: e * (1 / sum(e)): one division a row, a product a lane;
* ``zpad``: ``rcp``, the row padded with zero (as the norms pad) and the lanes past C set to -inf
  by a select, so the load pads as layernorm's does;
* ``exp2``: ``zpad`` with exp(c - m) as exp2(c * log2 e - m * log2 e) (one fma and an exp2);
* ``exp2_ninf``: ``exp2`` padded with -inf by the load (no select), as ``rcp``.

Timed as the suite times (triton.testing.do_bench, L2 flushed, median), answers checked against
torch in f32. Needs a GPU.

    PYTHONPATH=src python bench/softmax_math_probe.py --out bench/results/softmax_math_h200.json

``--wide``: the library's kernel (after it took the measured arithmetic) at 65536 lanes, where the
rule walks 8192-lane chunks, beside the whole row as one tile at 8 and 16 warps (one_chunk; it
spilled with a division a lane).
"""

from __future__ import annotations

import argparse
import json

import torch
from timing import checked_ms, flushed_ms, write_rows

from tileir import kernels as K
from tileir import surface as ti
from tileir.dtypes import F32
from tileir.ir import PadNegInf, PadZero
from tileir.kernel import kernel
from tileir.kernels.entry_hints import entry_hints
from tileir.kernels.softmax import LOG2E
from tileir.markers import FREE_AXIS, In, Shared, cells

MATHS = ("div", "rcp", "zpad", "exp2", "exp2_ninf")
# (R, C, fmt, the rule's configuration: bench/results/suite_h200.json's records)
SHAPES = (
    (4096, 1000, "f16", {"max_tile": 1024, "rows": 4, "warps": 0, "occupancy": 4}),
    (32768, 1000, "f16", {"max_tile": 1024, "rows": 8, "warps": 8, "occupancy": 4}),
    (4096, 1024, "f16", {"max_tile": 1024, "rows": 4, "warps": 0, "occupancy": 4}),
    (32768, 1024, "f16", {"max_tile": 1024, "rows": 8, "warps": 8, "occupancy": 4}),
    (32768, 4096, "f16", {"max_tile": 4096, "rows": 2, "warps": 8, "occupancy": 4}),
    (4096, 32768, "f16", {"max_tile": 32768, "rows": 1, "warps": 8, "occupancy": 1}),
    (32768, 32768, "f16", {"max_tile": 32768, "rows": 1, "warps": 8, "occupancy": 1}),
    (32768, 128, "f32", {"max_tile": 128, "rows": 32, "warps": 0, "occupancy": 4}),
    (32768, 1000, "f32", {"max_tile": 1024, "rows": 8, "warps": 8, "occupancy": 4}),
    (4096, 1000, "f32", {"max_tile": 1024, "rows": 4, "warps": 0, "occupancy": 4}),
    (64, 4096, "f32", {"max_tile": 4096, "rows": 1, "warps": 0, "occupancy": 4}),
)


def _x(fmt="f32", max_tile=1024, rows=1, math="div"):
    pad = PadNegInf if math in ("div", "rcp", "exp2_ninf") else PadZero
    return In(fmt, cells(["R", "C"], [rows, max_tile], along=[0, FREE_AXIS], pad=pad, one_cell=(1,)))


def _y(fmt="f32"):
    return Shared(fmt, ["R", "C"])


@kernel(hints=entry_hints, tuned=("max_tile", "rows", "warps", "occupancy"))
def softmax_one_tile(x=_x, y=_y, *, fmt: str = "f32", max_tile: int = 1024, rows: int = 1, math: str = "div",
                     warps: int = 0, occupancy: int = 0):
    """A row softmax of rows of at most ``max_tile`` lanes, ``rows`` rows a block, the arithmetic
    written as ``math`` says (the module's docstring)."""
    t, n = max_tile, rows
    r = ti.block_id(0)
    out = ti.partition_view(ti.array_view(y), [n, t])
    c = ti.to(ti.load_at(x, [0]), F32)
    if math in ("zpad", "exp2"):
        inside = ti.axis_mask(ti.tile_at(0, t), [n, t], 1, ti.extent_of(x, 1))
        c = ti.select(inside, c, -float("inf"))
    m = ti.reduce_max(c, keepdims=True)
    e = ti.exp2(ti.fma(c, LOG2E, m * -LOG2E)) if math.startswith("exp2") else ti.exp(c - m)
    s = ti.reduce_sum(e, keepdims=True)
    ti.store_view(out, [r, 0], ti.to(e / s if math == "div" else e * (1.0 / s), fmt))


WIDE = ((1, 65536), (64, 65536), (4096, 65536), (32768, 65536))
WIDE_CONFIGS = {"rule": {}, **{f"one tile w{w}": {"max_tile": 65536, "one_chunk": True, "warps": w, "occupancy": 1}
                              for w in (8, 16)}}


def wide(out):
    rows = []
    for r, c in WIDE:
        for fmt in ("f16", "f32"):
            dt = torch.float16 if fmt == "f16" else torch.float32
            x = torch.randn(r, c, device="cuda", dtype=dt) * 4
            y = torch.empty_like(x)
            want = torch.softmax(x.float(), 1)
            row = {"R": r, "C": c, "fmt": fmt, "torch_ms": flushed_ms(lambda x=x: torch.softmax(x, 1))}
            for label, cfg in WIDE_CONFIGS.items():
                row[label] = checked_ms(lambda x=x, y=y, fmt=fmt, cfg=cfg: K.softmax(x, y, fmt=fmt, **cfg), y, want,
                                        row["torch_ms"])
            rows.append(row)
            print(json.dumps(row), flush=True)
            write_rows(out, rows)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out")
    p.add_argument("--wide", action="store_true")
    p.add_argument("--summary", nargs="+", metavar="FILE", help="print each row's ratios from result files")
    a = p.parse_args()
    if a.summary:
        for path in a.summary:
            for r in json.load(open(path))["rows"]:
                print(r["R"], r["C"], r["fmt"], {k: round(v["ratio"], 2) if "ratio" in v else v.get("error", "")[:80]
                                                 for k, v in r.items() if isinstance(v, dict) and k != "config"})
        return None
    if a.wide:
        return wide(a.out)
    rows = []
    for r, c, fmt, cfg in SHAPES:
        dt = torch.float16 if fmt == "f16" else torch.float32
        x = torch.randn(r, c, device="cuda", dtype=dt) * 4
        y = torch.empty_like(x)
        want = torch.softmax(x.float(), 1)
        row = {"R": r, "C": c, "fmt": fmt, "config": cfg, "torch_ms": flushed_ms(lambda x=x: torch.softmax(x, 1)),
               "library_ms": flushed_ms(lambda x=x, y=y, fmt=fmt: K.softmax(x, y, fmt=fmt))}
        for m in MATHS:
            row[m] = checked_ms(lambda x=x, y=y, fmt=fmt, m=m, cfg=cfg: softmax_one_tile(x, y, fmt=fmt, math=m, **cfg),
                                y, want, row["torch_ms"])
        rows.append(row)
        print(json.dumps(row), flush=True)
        write_rows(a.out, rows)


if __name__ == "__main__":
    main()
