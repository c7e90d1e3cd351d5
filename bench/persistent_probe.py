"""The persistent products (kernels.matmul_persistent and bmm_persistent: at most ``programs`` blocks,
each walking cells of C in the grouped order) against the library's one-cell calls (gemm, bmm) and
torch, f16: the products on the suite's N = 5000 rows (160-640 cells of 128 x 256: a little over
whole waves, 0.64-0.84x torch) and on shapes it does not hold, the batched ones on bmm's (short K
loops at 512^3: 0.8x); answers checked against an f32 product. Whether a block that goes on to its
next cell overlaps one cell's stores with the next's loads is what this measures. GPU needed.

    PYTHONPATH=src python3 bench/persistent_probe.py --out bench/results/persistent_h200.json

``--part rule`` checks the rule the first run led to (heuristics.matmul_walk) where it was not measured:
f16 and bf16 products with K of 512-1024 (the training example's forward products among them, 8192
tokens x d_model 512 and 16384 x 1024), each through gemm (the rule) beside the one-cell kernel and torch.

    PYTHONPATH=src python3 bench/persistent_probe.py --part rule --out bench/results/persistent_rule_h200.json

``--part f8`` times the same walk in ``matmul_f8`` (``programs``): its 128 x 128 cells take K slices of 256,
so K = 4096 is 16 slices a cell -- as short a loop as f16's K = 1024, where the walk won -- against the
rule's one cell a block and torch._scaled_mm, e4m3, on the suite's shapes and four it does not hold.

    PYTHONPATH=src python3 bench/persistent_probe.py --part f8 --out bench/results/persistent_f8_h200.json

``--part nt``: the walk for x @ W^T with W [N, K] (a Linear layer's forward, the backward's dx of a
[K, N] weight; kernels.matmul_nt_persistent) against matmul_nt at the rule's tiles and torch, f16 and
bf16, at Linear shapes of 8192-16384 tokens with K 512-1024 and two controls (K 4096; few cells).

    PYTHONPATH=src python3 bench/persistent_probe.py --part nt --out bench/results/persistent_nt_h200.json

``--part nt-long``: the same at K 2048-14336 (an LLM's Linear layers; the rule was fitted at K <= 1024
when this ran, and walks them since), with K slices of 64 and 32.

    PYTHONPATH=src python3 bench/persistent_probe.py --part nt-long --out bench/results/persistent_nt_long_h200.json

``--part stores``: what a cell costs beyond its K loop, and whether the store is it. At K = 1000 a 128 x
256 cell took ~15 us against ~10 of tensor-core time (persistent_h200.json's N = 5000 rows: one and two
waves), and the walk saved nothing. In tileiras 13.4.92's SASS (CPU) the walk has three roles: the
consumer warpgroups (HGMMA, then the tile staged in shared memory by STSM), a warp issuing every cell's
TMA loads, and one issuing the TMA stores, each waiting for its copy to finish (DEPBAR) before the
next. First one wave of cells (11 x 12) at K 64-2048, whose intercept is the cost beyond the loop; then
the products with C written by the consumer warps themselves (``no_tma_store=1``: STS, then STG) beside
the TMA store, one cell a block and walking; f16, torch beside; x @ W^T's walk likewise at three Linear
shapes.

    PYTHONPATH=src python3 bench/persistent_probe.py --part stores --out bench/results/store_probe_h200.json

``--part nt-small``: x @ W^T where the walk rule keeps one cell a block, the rule's cell beside one cell a
block on 128 x 256 cells and the walk on them (the stores run had the walk ahead at two such shapes).

    PYTHONPATH=src python3 bench/persistent_probe.py --part nt-small --out bench/results/nt_small_h200.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from timing import checked_ms, flushed_ms, write_rows  # noqa: E402

from tileir.kernels import (  # noqa: E402
    bmm,
    bmm_persistent,
    gemm,
    matmul_bf16,
    matmul_f8,
    matmul_f16,
    matmul_nt,
    matmul_nt_persistent,
    matmul_persistent,
)
from tileir.kernels.gemm import plan  # noqa: E402

SHAPES = [(512, 5000, 1000), (1000, 5000, 1000), (2048, 5000, 1000), (4096, 5000, 1000), (8192, 5000, 1000),
          (1000, 1000, 1000), (3000, 5000, 1000), (8192, 1024, 1024), (4096, 4096, 4096), (2048, 11008, 4096)]
CELLS = {"128x256x64 p132": {"tm": 128, "tn": 256, "tk": 64, "warps": 8, "programs": 132},
         "128x256x32 p132": {"tm": 128, "tn": 256, "tk": 32, "warps": 8, "programs": 132},
         "128x128x64 p132": {"tm": 128, "tn": 128, "tk": 64, "warps": 8, "programs": 132},
         "128x128x64 p264 occ2": {"tm": 128, "tn": 128, "tk": 64, "warps": 8, "programs": 264, "occupancy": 2},
         "64x256x64 p264 occ2": {"tm": 64, "tn": 256, "tk": 64, "warps": 4, "programs": 264, "occupancy": 2},
         # one warpgroup: at 8 warps tileiras makes this walk's every HGMMA wait (sass_persistent_cpu.json)
         "128x128x64 p132 w4": {"tm": 128, "tn": 128, "tk": 64, "warps": 4, "programs": 132},
         "128x128x64 p264 occ2 w4": {"tm": 128, "tn": 128, "tk": 64, "warps": 4, "programs": 264, "occupancy": 2}}
# bmm_persistent: the suite's batches and held-out ones (bmm_tiles_h200.json's), the one-cell bmm's rule beside
BMM_SHAPES = [(64, 512, 512, 512), (8, 1024, 1024, 1024), (64, 1024, 1024, 1024), (64, 2048, 2048, 2048),
              (16, 1000, 1000, 1000), (128, 256, 256, 256), (32, 512, 512, 512)]


# the rule's held-out shapes: K 512 (the example's qkv and gate-up products: 8192 x 512 into 1536 and
# 2 x 1408), K 1024 at d_model 1024 (16384 tokens, qkv 3072), and two the rule leaves one cell a block
# (8192 x 512 x 512: 128 cells; 1000 x 5000 x 1000: 160)
RULE_SHAPES = [(8192, 1536, 512), (8192, 2816, 512), (4096, 2048, 512), (16384, 3072, 1024), (16384, 2048, 1024),
               (3000, 3000, 768), (8192, 512, 512), (1000, 5000, 1000)]

NT_SHAPES = [(8192, 1536, 512), (8192, 1408, 512), (8192, 2816, 512), (16384, 3072, 1024), (16384, 4096, 1024),
             (4096, 4096, 1024), (8192, 4096, 4096), (2048, 1024, 1024)]
NT_LONG_SHAPES = [(8192, 4096, 4096), (8192, 11008, 4096), (8192, 4096, 11008), (4096, 14336, 4096),
                  (16384, 2048, 2048), (2048, 4096, 4096), (4096, 4096, 14336)]
ONE_CELL = {"tm": 128, "tn": 256, "tk": 64, "group": 8, "warps": 8}  # the 16-bit walk's cell, one a block
WALK = dict(ONE_CELL, programs=132)
NT_BIG = {k: v for k, v in ONE_CELL.items() if k != "group"}  # matmul_nt has no grouped order
F8_SHAPES = [(1024, 4096, 4096), (4096, 4096, 4096), (8192, 4096, 4096), (4096, 14336, 4096), (8192, 14336, 4096),
             (8192, 8192, 8192), (2048, 8192, 2048), (8192, 2048, 1024), (3072, 5120, 4096), (16384, 1024, 8192)]
F8_ONE_CELL = {"tm": 128, "tn": 128, "tk": 256, "warps": 8, "group": 8}
F8_WALKS = {"walk 128x128x256 w8 p132": {"tm": 128, "tn": 128, "tk": 256, "warps": 8, "group": 8, "programs": 132},
            "walk 128x128x128 w8 p132": {"tm": 128, "tn": 128, "tk": 128, "warps": 8, "group": 8, "programs": 132},
            "walk 128x128x256 w8 p264 occ2": {"tm": 128, "tn": 128, "tk": 256, "warps": 8, "group": 8,
                                              "programs": 264, "occupancy": 2}}


TOLERANCE = 2e-2  # of max |want|: f16 output of an f32 accumulation


def operands(m, n, k, dt=torch.float16, weight_t=False):
    """A [m, k] scaled by k^-1/2, B [k, n] (or the weight [n, k] where ``weight_t``), an empty C [m, n]."""
    a = torch.randn(m, k, device="cuda", dtype=dt) * k ** -0.5
    b = torch.randn(*((n, k) if weight_t else (k, n)), device="cuda", dtype=dt)
    return a, b, torch.empty(m, n, device="cuda", dtype=dt)


def sweep_nt(rows, out_path, m, n, k, fmt, a, w, c, variants) -> None:
    """``sweep`` of x @ W^T variants, torch's a @ w.t() beside."""
    sweep(rows, out_path, [m, n, k, fmt], a, w, c, lambda: torch.matmul(a, w.t(), out=c), variants,
          want=a.float() @ w.float().t())


def sweep(rows, out_path, shape, a, b, c, torch_call, variants, want=None) -> None:
    """torch's call, then each variant, on the same operands: each checked against an f32 product
    (``want``, a @ b where None; ``ok``: within TOLERANCE of its largest value) and timed; the file is
    rewritten after the shape."""
    want = a.float() @ b.float() if want is None else want
    scale = float(want.abs().max())
    torch_ms = flushed_ms(torch_call)
    for name, fn in variants.items():
        r = {"shape": shape, "variant": name, "torch_ms": torch_ms, **checked_ms(fn, c, want, torch_ms)}
        if "max_err" in r:
            r["ok"] = r["max_err"] <= TOLERANCE * scale
        rows.append(r)
        print(json.dumps(r), flush=True)
    write_rows(out_path, rows, timing="ms, torch_ms: do_bench (L2 flushed) median; ratio: torch_ms / ms")


STORE_NT_SHAPES = [(1000, 3072, 1024), (4096, 1536, 512), (8192, 2816, 512)]
# one wave exactly (11 x 12 = 132 cells of 128 x 256) at K 64 .. 2048: a cell's time against its K loop's length,
# whose intercept is what a cell costs beyond the loop (launch included), each store beside torch
ONE_WAVE_SHAPES = [(1408, 3072, k) for k in (64, 128, 256, 512, 1024, 2048)]


def stores(rows, out_path) -> None:
    """--part stores: each product with the TMA store and with the warps' own (``no_tma_store``)."""
    for m, n, k in ONE_WAVE_SHAPES:
        a, b, c = operands(m, n, k)
        variants = {f"one cell 128x256x64{' no-TMA store' if st else ''}": lambda a=a, b=b, c=c, st=st: matmul_f16(
            a, b, c, **ONE_CELL, no_tma_store=st) for st in (0, 1)}
        sweep(rows, out_path, [m, n, k], a, b, c, lambda a=a, b=b, c=c: torch.matmul(a, b, out=c), variants)
    for m, n, k in SHAPES:
        a, b, c = operands(m, n, k)
        variants = {"gemm (the rule)": lambda a=a, b=b, c=c: gemm(a, b, c)}
        for st in (0, 1):
            tag = " no-TMA store" if st else ""
            variants[f"one cell 128x256x64{tag}"] = lambda a=a, b=b, c=c, st=st: matmul_f16(a, b, c, **ONE_CELL,
                                                                                            no_tma_store=st)
            variants[f"walk 128x256x64 p132{tag}"] = lambda a=a, b=b, c=c, st=st: matmul_persistent(
                a, b, c, **WALK, no_tma_store=st)
        variants["walk 128x128x64 p132 no-TMA store"] = lambda a=a, b=b, c=c: matmul_persistent(
            a, b, c, **dict(WALK, tn=128), no_tma_store=1)
        sweep(rows, out_path, [m, n, k], a, b, c, lambda a=a, b=b, c=c: torch.matmul(a, b, out=c), variants)
    for m, n, k in STORE_NT_SHAPES:
        a, w, c = operands(m, n, k, torch.bfloat16, weight_t=True)
        variants = {"matmul_nt one cell (the rule's tiles)": lambda a=a, w=w, c=c: matmul_nt(a, w, c, fmt="bf16")}
        for st in (0, 1):
            variants["nt walk 128x256x64 p132" + (" no-TMA store" if st else "")] = \
                lambda a=a, w=w, c=c, st=st: matmul_nt_persistent(a, w, c, fmt="bf16", **WALK, no_tma_store=st)
        sweep_nt(rows, out_path, m, n, k, "bf16", a, w, c, variants)


# x @ W^T where the walk rule keeps one cell a block (fewer than 2048 rows, or at most 1.5 waves of 128 x 256
# cells): the two the stores run saw the walk ahead at (1000 x 3072 x 1024, 4096 x 1536 x 512) and held-out ones
NT_SMALL_SHAPES = [(1000, 3072, 1024), (4096, 1536, 512), (1000, 4096, 4096), (2048, 1024, 1024), (1024, 2816, 512),
                   (512, 4096, 1024), (3000, 1536, 768), (1000, 11008, 4096)]


def nt_small(rows, out_path) -> None:
    """--part nt-small: at each shape the rule's one cell a block, one cell a block on 128 x 256 cells, and
    the walk on them: whether what won there is the walk or the larger cell (bf16, torch beside)."""
    for m, n, k in NT_SMALL_SHAPES:
        a, w, c = operands(m, n, k, torch.bfloat16, weight_t=True)
        variants = {"matmul_nt one cell (the rule's tiles)": lambda a=a, w=w, c=c: matmul_nt(a, w, c, fmt="bf16"),
                    "matmul_nt one cell 128x256x64 w8": lambda a=a, w=w, c=c: matmul_nt(a, w, c, fmt="bf16", **NT_BIG),
                    "nt walk 128x256x64 p132": lambda a=a, w=w, c=c: matmul_nt_persistent(a, w, c, fmt="bf16", **WALK)}
        sweep_nt(rows, out_path, m, n, k, "bf16", a, w, c, variants)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--part", choices=("cells", "rule", "f8", "nt", "nt-long", "stores", "nt-small"), default="cells")
    args = p.parse_args()
    rows: list[dict] = []
    if args.part == "stores":
        stores(rows, args.out)
        return
    if args.part == "nt-small":
        nt_small(rows, args.out)
        return
    if args.part in ("nt", "nt-long"):
        walks = {"walk 128x256x64 w8 p132": WALK}
        if args.part == "nt-long":
            walks["walk 128x256x32 w8 p132"] = dict(WALK, tk=32)
        for dt in (torch.bfloat16, torch.float16):
            fmt = {torch.bfloat16: "bf16", torch.float16: "f16"}[dt]
            for m, n, k in NT_SHAPES if args.part == "nt" else NT_LONG_SHAPES:
                a, w, c = operands(m, n, k, dt, weight_t=True)
                variants = {
                    "matmul_nt (the rule, one cell a block)": lambda a=a, w=w, c=c, f=fmt: matmul_nt(a, w, c, fmt=f)}
                for name, cfg in walks.items():
                    variants[name] = lambda a=a, w=w, c=c, f=fmt, cfg=cfg: matmul_nt_persistent(a, w, c, fmt=f, **cfg)
                sweep_nt(rows, args.out, m, n, k, fmt, a, w, c, variants)
        return
    if args.part == "f8":
        f8 = torch.float8_e4m3fn
        sa, sb = torch.full((1,), 0.5, device="cuda"), torch.full((1,), 0.25, device="cuda")
        for m, n, k in F8_SHAPES:
            a = (torch.randn(m, k, device="cuda") * k ** -0.25).to(f8)
            b = (torch.randn(n, k, device="cuda") * k ** -0.25).to(f8)  # [N, K], as torch._scaled_mm's W
            c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
            torch_call = lambda a=a, b=b: torch._scaled_mm(a, b.t(), scale_a=sa.reshape(()),  # noqa: E731
                                                           scale_b=sb.reshape(()), out_dtype=torch.bfloat16)
            # one cell a block at the rule's cells before the walk (heuristics.F8_TILES; the rule walks now)
            variants = {"one cell a block (F8_TILES)": lambda a=a, b=b, c=c: matmul_f8(a, b, c, sa, sb, **F8_ONE_CELL)}
            for name, cfg in F8_WALKS.items():
                variants[name] = lambda a=a, b=b, c=c, cfg=cfg: matmul_f8(a, b, c, sa, sb, **cfg)
            sweep(rows, args.out, [m, n, k], a, b, c, torch_call, variants, want=(a.float() @ b.float().t()) * 0.125)
        return
    if args.part == "rule":
        for dt, one in ((torch.float16, matmul_f16), (torch.bfloat16, matmul_bf16)):
            for m, n, k in RULE_SHAPES:
                a, b, c = operands(m, n, k, dt)
                walks = "walk" in plan(a, b)
                variants = {f"gemm (the rule: {'walk' if walks else 'one cell'})": lambda a=a, b=b, c=c: gemm(a, b, c),
                            "one cell a block": lambda a=a, b=b, c=c, one=one: one(a, b, c)}
                sweep(rows, args.out, [m, n, k, str(dt).rpartition(".")[2]], a, b, c,
                      lambda a=a, b=b, c=c: torch.matmul(a, b, out=c), variants)
        return
    for m, n, k in SHAPES:
        a, b, c = operands(m, n, k)
        variants = {"gemm (the rule, one cell a block)": lambda a=a, b=b, c=c: gemm(a, b, c)}
        for name, cfg in CELLS.items():
            variants[f"persistent {name}"] = lambda a=a, b=b, c=c, cfg=cfg: matmul_persistent(a, b, c, **cfg)
        sweep(rows, args.out, [m, n, k], a, b, c, lambda a=a, b=b, c=c: torch.matmul(a, b, out=c), variants)
    for bt, m, n, k in BMM_SHAPES:
        a = torch.randn(bt, m, k, device="cuda", dtype=torch.float16) * k ** -0.5
        b = torch.randn(bt, k, n, device="cuda", dtype=torch.float16)
        c = torch.empty(bt, m, n, device="cuda", dtype=torch.float16)
        variants = {"bmm (the rule, one cell a block)": lambda a=a, b=b, c=c: bmm(a, b, c)}
        for name, cfg in CELLS.items():
            variants[f"bmm_persistent {name}"] = lambda a=a, b=b, c=c, cfg=cfg: bmm_persistent(a, b, c, **cfg)
        sweep(rows, args.out, [bt, m, n, k], a, b, c, lambda a=a, b=b, c=c: torch.bmm(a, b, out=c), variants)


if __name__ == "__main__":
    main()
