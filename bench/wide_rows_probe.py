"""Wide rows (16384 lanes and more) in the row kernels: the rule's configuration (8192-lane chunks,
one row a block) beside the whole row as one tile (``one_chunk``, max_tile = the row's width) at
several warps / occupancy hints, and torch, on the suite's wide shapes where the chunked walk ran
0.36-0.58x torch. Timed as the suite times (triton.testing.do_bench, L2 flushed, median), answers
checked against torch. Needs a GPU.

    PYTHONPATH=src python bench/wide_rows_probe.py --out bench/results/wide_rows_probe_h200.json
"""

from __future__ import annotations

import argparse
import json

import torch
from timing import checked_ms, flushed_ms, write_rows

from tileir import kernels as K

F = torch.nn.functional
SHAPES = ((64, 16384), (4096, 16384), (1, 32768), (4096, 32768), (64, 65536), (4096, 65536))
HINTS = ((8, 1), (16, 1), (16, 2), (8, 2))



def calls(name, r, c):
    """(tileir call taking a configuration, torch call, output, reference) for kernel ``name``."""
    dt = torch.float32 if name == "softmax_f32" else torch.float16
    x = torch.randn(r, c, device="cuda", dtype=dt)
    y = torch.empty_like(x)
    fmt = "f32" if dt == torch.float32 else "f16"
    if name.startswith("softmax"):
        return (lambda **cfg: K.softmax(x, y, fmt=fmt, **cfg), lambda: torch.softmax(x, 1), y,
                torch.softmax(x.float(), 1))
    w, b = torch.randn(c, device="cuda", dtype=dt), torch.randn(c, device="cuda", dtype=dt)
    if name == "layernorm_f16":
        return (lambda **cfg: K.layernorm(x, w, b, y, fmt=fmt, **cfg), lambda: F.layer_norm(x, (c,), w, b), y,
                F.layer_norm(x.float(), (c,), w.float(), b.float()))
    return (lambda **cfg: K.rmsnorm(x, w, y, fmt=fmt, **cfg), lambda: F.rms_norm(x, (c,), w, eps=1e-6), y,
            F.rms_norm(x.float(), (c,), w.float(), eps=1e-6))


def softmax_configs(rows):
    """softmax where the suite still lost after the wide-row rule: 65536 lanes walked in chunks at
    more warps, and 1000-lane rows several a block."""
    for r, c, fmt, cfgs in (
            (1, 65536, "f16", [{"max_tile": 8192, "warps": w, "occupancy": 1} for w in (4, 8, 16)]
             + [{"max_tile": 16384, "warps": w, "occupancy": 1} for w in (8, 16)]),
            (64, 65536, "f16", [{"max_tile": 8192, "warps": w, "occupancy": 1} for w in (4, 8, 16)]
             + [{"max_tile": 16384, "warps": w, "occupancy": 1} for w in (8, 16)]),
            (4096, 65536, "f16", [{"max_tile": 8192, "warps": w, "occupancy": o} for w in (8, 16) for o in (1, 2)]),
            (1, 65536, "f32", [{"max_tile": 8192, "warps": w, "occupancy": 1} for w in (8, 16)]),
            (32768, 1000, "f16", [{"max_tile": 1024, "rows": n, "one_chunk": True, "warps": w, "occupancy": o}
                                  for n in (2, 4, 8) for w in (0, 8) for o in (2, 4)]),
            (32768, 32768, "f16", [{"max_tile": 32768, "one_chunk": True, "warps": w, "occupancy": 1}
                                   for w in (8, 16)] + [{"max_tile": 8192, "warps": 16, "occupancy": 1}])):
        x = torch.randn(r, c, device="cuda", dtype=torch.float16 if fmt == "f16" else torch.float32)
        y = torch.empty_like(x)
        want = torch.softmax(x.float(), 1)
        row = {"kernel": f"softmax_{fmt}", "R": r, "C": c, "torch_ms": flushed_ms(lambda x=x: torch.softmax(x, 1)),
               "rule_ms": flushed_ms(lambda x=x, y=y, fmt=fmt: K.softmax(x, y, fmt=fmt)), "configs": []}
        for cfg in cfgs:
            call = lambda x=x, y=y, fmt=fmt, cfg=cfg: K.softmax(x, y, fmt=fmt, **cfg)  # noqa: E731
            row["configs"].append(dict(cfg, **checked_ms(call, y, want, row["torch_ms"])))
        rows.append(row)
        print(json.dumps(row), flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--only", default="rule,softmax")
    a = p.parse_args()
    rows = []
    if "softmax" in a.only:
        softmax_configs(rows)
        write_rows(a.out, rows)
    for r, c in SHAPES if "rule" in a.only else ():
        for name in ("softmax_f16", "softmax_f32", "layernorm_f16", "rmsnorm_f16"):
            ti, th, y, want = calls(name, r, c)
            row = {"kernel": name, "R": r, "C": c, "torch_ms": flushed_ms(th)}
            for label, cfg in [("rule", {})] + [(f"one_chunk w{w} o{o}", {"max_tile": c, "one_chunk": True,
                                                                         "warps": w, "occupancy": o})
                                                for w, o in HINTS]:
                row[label] = checked_ms(lambda cfg=cfg, ti=ti: ti(**cfg), y, want, row["torch_ms"])
            rows.append(row)
            print(json.dumps(row), flush=True)
            write_rows(a.out, rows)


if __name__ == "__main__":
    main()
