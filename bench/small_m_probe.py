"""Small-M matrix products, GPU time apart from host time (issue 12): at M 1-128 the suite's f16,
tf32 and 3xtf32 rows run 0.27-0.77x torch, and the split-K rows of matmul_probe_h200.json jump
between ~22 and ~60 us from one run to the next -- a host-bound signature. For each shape and
format this times the library's call (``gemm``), one pass at 64 x 64 and 64 x 128, and split-K
at 2, 4 and 8 on both tiles, three ways: do_bench with the L2 flushed (what the suite reports),
the kernels' summed GPU time (torch.profiler: what a CUDA graph would pay) and the host's time a
call (a loop of calls without waiting). Answers are checked against an f64 product. Last, a
cProfile of the split call's and of prefix_sum's host path (the suite's scan rows at 2^16 and
2^21 run 0.51x with a host cost of 90-105 us a call in host_bound_h200.json).

``--part tiles`` times one pass on row tiles of 16 and 32 beside 64 at M 1-32 (the padded part found
the 64-row boxes of a 1-row A cost half the speed: 19 against 10 us of GPU time).

``--part thin`` times row tiles of 16 on column tiles of 32, 64 and 128 at 1 and 16 rows, f16 and tf32,
beside torch: where N / 64 blocks leave most of the 132 SMs idle (tf32 1 x 4096 x 4096: 64 blocks,
0.61x torch), whether 32-wide columns' twice as many blocks pull more of the bandwidth.

``--part thin-tk`` times that rule's tile with K slices of 1, 2 and 4 times the rule's and at two blocks
an SM (tf32 and f16, the same shapes): whether more bytes in flight pull more of the bandwidth.

``--part x3`` times 3xtf32 products at the suite's shapes: the library's call, one pass and split-K on
64- and 128-row tiles.

``--part padded`` asks why one pass at 1-16 rows runs at half the speed of 64 rows on the same
cubin (the operands as given against the same rows in zeroed 64-row buffers).

A second part times the large tiles' K slice (32 against 64) off the 8192^3 shape their
configuration was measured at: matmul_probe_after_h200.json has 128 x 256 with slices of 64 running
10-13% faster than the measured 32 at K = 1000 (N = 5000), and bmm's 128 x 256 tile ran 0.78x
torch at 64 x 512^3 where 8 x 512^3 on 128 x 128 ran 1.06x.

    PYTHONPATH=src python3 bench/small_m_probe.py --out bench/results/small_m_h200.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from timing import cprofile_rows, flushed_ms, host_us, kernel_us, write_rows  # noqa: E402

from tileir.kernels import bmm, matmul_bf16, matmul_f16, matmul_tf32, prefix_sum  # noqa: E402
from tileir.kernels.gemm import gemm, matmul_split_k, plan  # noqa: E402

MS = (1, 16, 64, 128)
NK = ((4096, 4096), (4096, 11008), (11008, 4096), (5000, 1000), (1024, 1024))
# format: (torch dtype, precision, the one-pass kernel, K slice, tolerance against f64 relative to |C|'s max)
FORMATS = {"f16": (torch.float16, None, matmul_f16, 64, 2e-2), "tf32": (torch.float32, "tf32", matmul_tf32, 32, 2e-2),
           "3xtf32": (torch.float32, "3xtf32", matmul_tf32, 32, 1e-5)}
TILES = ((64, 64), (64, 128))
SPLITS = (2, 4, 8)


def timed(fn, out, want, apart: bool = True) -> dict:
    """``fn`` run once into a zeroed ``out``: its error relative to max |want|, then its do_bench time
    and (``apart``) its kernels' GPU time and its host time a call; a failure is recorded, not raised."""
    try:
        out.zero_()
        fn()
        torch.cuda.synchronize()
        err = float((out.double() - want).abs().max() / want.abs().max())
        got = {"flushed_us": round(flushed_ms(fn) * 1e3, 2), "rel_err": float(f"{err:.3g}")}
        if apart:
            got.update(gpu_us=kernel_us(fn, reps=20)["total"], host_us=round(host_us(fn), 2))
        return got
    except Exception as e:  # noqa: BLE001  (a probe: a failing variant is a finding)
        return {"error": f"{type(e).__name__}: {str(e)[:300]}"}


def product(dt, m, n, k):
    """Fresh operands of an m x k by k x n product in ``dt``, its output and the f64 answer."""
    a = torch.randn(m, k, device="cuda", dtype=dt)
    b = torch.randn(k, n, device="cuda", dtype=dt)
    return a, b, torch.empty(m, n, device="cuda", dtype=dt), a.double() @ b.double()


def shape_rows(fmt, m, n, k) -> list[dict]:
    dt, precision, plain, tk, tol = FORMATS[fmt]
    a, b, c, want = product(dt, m, n, k)
    extra = {"precision": precision} if precision else {}
    variants = {"torch": lambda: torch.matmul(a, b, out=c), "gemm": lambda: gemm(a, b, c, **extra)}
    for tm, tn in TILES:
        cfg = {"tm": tm, "tn": tn, "tk": tk, "warps": 0}
        variants[f"{tm}x{tn}"] = lambda cfg=cfg: plain(a, b, c, **extra, **cfg)
        for s in SPLITS:
            variants[f"split{s} {tm}x{tn}"] = lambda cfg=cfg, s=s: matmul_split_k(
                a, b, c, splits=s, config=cfg, precision=precision or "tf32")
    rows = []
    for name, fn in variants.items():
        r = {"fmt": fmt, "shape": [m, n, k], "variant": name, **timed(fn, c, want)}
        if name == "gemm":
            p = plan(a, b, precision=precision or "tf32")
            tile = {"tile": [p["config"]["tm"], p["config"]["tn"]]} if "config" in p else {}
            r["plan"] = {"splits": p["splits"], **tile}
        if "rel_err" in r and name != "torch":
            r["ok"] = r["rel_err"] <= tol
        rows.append(r)
        print(json.dumps(r), flush=True)
    return rows


BIG = {"128x256x32": {"tm": 128, "tn": 256, "tk": 32, "group": 8, "warps": 8},
       "128x256x64": {"tm": 128, "tn": 256, "tk": 64, "group": 8, "warps": 8},
       "128x128x32": {"tm": 128, "tn": 128, "tk": 32, "group": 8, "warps": 8},
       "128x128x64": {"tm": 128, "tn": 128, "tk": 64, "group": 8, "warps": 8}}
BIG_SHAPES = [(m, n, k) for n, k in ((5000, 1000), (4096, 4096), (11008, 4096), (1024, 1024), (4096, 11008))
              for m in (1000, 2048, 4096, 8192)] + [(8192, 8192, 8192)]
BMM_SHAPES = [(b, s) for b in (8, 64) for s in (512, 1024, 2048)]


def _matmul_fns(kern, a, b, c) -> dict:
    fns = {"torch": lambda: torch.matmul(a, b, out=c), "gemm": lambda: gemm(a, b, c)}
    fns.update({name: (lambda cfg=cfg: kern(a, b, c, **cfg)) for name, cfg in BIG.items()})
    return fns


def _bmm_fns(a, b, c) -> dict:
    fns = {"torch": lambda: torch.bmm(a, b, out=c), "bmm": lambda: bmm(a, b, c)}
    fns.update({name: (lambda cfg=cfg: bmm(a, b, c, **{k: v for k, v in cfg.items() if k != "group"}))
                for name, cfg in BIG.items()})
    return fns


def _time_all(base: dict, fns: dict, out, want) -> list[dict]:
    rows = []
    for name, fn in fns.items():
        r = {**base, "variant": name, **timed(fn, out, want, apart=False)}
        if "rel_err" in r:
            r["ok"] = r["rel_err"] < 2e-2
        rows.append(r)
        print(json.dumps(r), flush=True)
    return rows


def slice_rows(deadline: float) -> list[dict]:
    """The large tiles at K slices of 32 and 64: f16 and bf16 products, and f16 bmm (no new shape
    after ``deadline``, a time.time())."""
    rows = []
    for fmt, dt, kern in (("f16", torch.float16, matmul_f16), ("bf16", torch.bfloat16, matmul_bf16)):
        for m, n, k in BIG_SHAPES:
            if time.time() > deadline:
                break
            a = torch.randn(m, k, device="cuda", dtype=dt) * k ** -0.25
            b = torch.randn(k, n, device="cuda", dtype=dt) * k ** -0.25
            c = torch.empty(m, n, device="cuda", dtype=dt)
            rows += _time_all({"part": "slice", "fmt": fmt, "shape": [m, n, k]}, _matmul_fns(kern, a, b, c), c,
                              a.double() @ b.double())
    for batch, sq in BMM_SHAPES:
        if time.time() > deadline:
            break
        a, b = (torch.randn(batch, sq, sq, device="cuda", dtype=torch.float16) * sq ** -0.25 for _ in range(2))
        c = torch.empty(batch, sq, sq, device="cuda", dtype=torch.float16)
        rows += _time_all({"part": "bmm", "fmt": "f16", "shape": [batch, sq, sq, sq]}, _bmm_fns(a, b, c), c,
                          a.double() @ b.double())
    return rows


def padded_rows() -> list[dict]:
    """Why one pass at M = 1-16 runs at half the speed of M = 64 with the same cubin, grid and bytes of B
    (f16 4096 x 4096 on 64 x 64: 19 against 10 us of GPU time): the product on the [m, K] operands as
    given, against the same rows copied into zeroed [64, K] / [64, N] buffers (the boxes of A and C then
    lie inside their tensors), the copies timed apart."""
    rows = []
    cfg = {"tm": 64, "tn": 64, "tk": 64, "warps": 0}
    for m, n, k in ((1, 4096, 4096), (16, 4096, 4096), (1, 4096, 11008), (64, 4096, 4096)):
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        b = torch.randn(k, n, device="cuda", dtype=torch.float16)
        c = torch.empty(m, n, device="cuda", dtype=torch.float16)
        ap = torch.zeros(64, k, device="cuda", dtype=torch.float16)
        ap[:m] = a
        cp = torch.empty(64, n, device="cuda", dtype=torch.float16)
        want = a.double() @ b.double()
        for name, fn, out in _padded_fns(m, a, b, c, ap, cp, cfg):
            r = {"part": "padded", "fmt": "f16", "shape": [m, n, k], "variant": name,
                 **timed(fn, out, want if out is c else torch.cat([want, want.new_zeros(64 - m, n)]))}
            rows.append(r)
            print(json.dumps(r), flush=True)
    return rows


def tile_rows() -> list[dict]:
    """One pass at M 1, 16 and 32 on row tiles of 16, 32 and 64 (tn 64 / 128, tk 64 / 128 for f16, 32 / 64 for
    tf32): whether a row tile near M wins back what the padded part lost to boxes mostly past A's rows."""
    rows = []
    for fmt, (dt, precision, kern, _tk, _tol) in FORMATS.items():
        if fmt == "3xtf32":
            continue
        for n, k in NK[:4]:
            for m in (1, 16, 32):
                a, b, c, want = product(dt, m, n, k)
                extra = {} if precision is None else {"precision": precision}
                for tm in (16, 32, 64):
                    for tn in (64, 128):
                        for tk in ((64, 128) if fmt == "f16" else (32, 64)):
                            cfg = {"tm": tm, "tn": tn, "tk": tk, "warps": 0, **extra}

                            def fn(kern=kern, a=a, b=b, c=c, cfg=cfg):
                                kern(a, b, c, **cfg)

                            r = {"part": "tiles", "fmt": fmt, "shape": [m, n, k], "config": cfg,
                                 **timed(fn, c, want, apart=False)}
                            if "flushed_us" in r:
                                r["gpu_us"] = kernel_us(fn, reps=10)["total"]
                            rows.append(r)
                            print(json.dumps(r), flush=True)
    return rows


THIN_NK = ((1024, 4096), (2048, 4096), (4096, 4096), (4096, 1024), (4096, 11008), (5000, 1000), (8192, 4096))


def narrow_sweep(out_path: str, part: str, fmts, configs, gpu: bool = False) -> list[dict]:
    """One pass of each of ``configs(fmt, n)`` (16-row tiles) at 1 and 16 rows of THIN_NK's shapes, in
    each format, torch beside each shape (and, ``gpu``, each run's kernel time by torch.profiler); the
    file is rewritten after each shape."""
    rows = []
    for fmt in fmts:
        dt, precision, kern, _tk, _tol = FORMATS[fmt]
        extra = {} if precision is None else {"precision": precision}
        for n, k in THIN_NK:
            for m in (1, 16):
                a, b, c, want = product(dt, m, n, k)
                torch_us = round(flushed_ms(lambda a=a, b=b, c=c: torch.matmul(a, b, out=c)) * 1e3, 2)
                for tile in configs(fmt, n):
                    cfg = {**tile, **extra}

                    def fn(kern=kern, a=a, b=b, c=c, cfg=cfg):
                        kern(a, b, c, **cfg)

                    r = {"part": part, "fmt": fmt, "shape": [m, n, k], "config": cfg, "torch_us": torch_us,
                         **timed(fn, c, want, apart=False)}
                    if "flushed_us" in r:
                        if gpu:
                            r["gpu_us"] = kernel_us(fn, reps=10)["total"]
                        r["torch_over"] = round(torch_us / r["flushed_us"], 3)
                    rows.append(r)
                    print(json.dumps(r), flush=True)
                write_rows(out_path, rows, timing="flushed_us, torch_us: do_bench (L2 flushed) median"
                           + ("; gpu_us: torch.profiler kernel sum" if gpu else ""))
    return rows


def thin_rows(out_path: str) -> list[dict]:
    """One pass at 1 and 16 rows on 16-row tiles, column tiles 32 / 64 / 128 (K slices as
    heuristics.NARROW_TK), f16 and tf32."""
    from tileir.heuristics import NARROW_TK

    return narrow_sweep(out_path, "thin", ("f16", "tf32"), lambda fmt, n: [
        {"tm": 16, "tn": tn, "tk": NARROW_TK[fmt], "warps": 0} for tn in (32, 64, 128)], gpu=True)


X3_SHAPES = ((16, 4096, 4096), (128, 4096, 4096), (1000, 4096, 4096), (4096, 4096, 4096))
X3_TILES = {"64x128": {"tm": 64, "tn": 128, "tk": 32, "warps": 0},
            "128x128 w8": {"tm": 128, "tn": 128, "tk": 32, "warps": 8},
            "128x64 w8": {"tm": 128, "tn": 64, "tk": 32, "warps": 8}}


def x3_rows(out_path: str) -> list[dict]:
    """3xtf32 products at the suite's shapes: the library's call, one pass and split-K on 64- and
    128-row tiles (the split plan's 64 x 128 partials left 128 x 4096 x 4096 at 0.74x torch fp32)."""
    dt, precision, plain, _tk, tol = FORMATS["3xtf32"]
    rows = []
    for m, n, k in X3_SHAPES:
        a, b, c, want = product(dt, m, n, k)
        variants = {"torch": lambda a=a, b=b, c=c: torch.matmul(a, b, out=c),
                    "gemm": lambda a=a, b=b, c=c: gemm(a, b, c, precision=precision)}
        for name, cfg in X3_TILES.items():
            variants[name] = lambda a=a, b=b, c=c, cfg=cfg: plain(a, b, c, precision=precision, **cfg)
            for sp in (2, 4, 8):
                variants[f"split{sp} {name}"] = lambda a=a, b=b, c=c, cfg=cfg, sp=sp: matmul_split_k(
                    a, b, c, splits=sp, config=cfg, precision=precision)
        for name, fn in variants.items():
            r = {"part": "x3", "fmt": "3xtf32", "shape": [m, n, k], "variant": name, **timed(fn, c, want, apart=False)}
            if name == "gemm":
                pl = plan(a, b, precision=precision)
                r["plan"] = {"splits": pl["splits"], **({"config": pl["config"]} if "config" in pl else {})}
            if "rel_err" in r and name != "torch":
                r["ok"] = r["rel_err"] <= tol
            rows.append(r)
            print(json.dumps(r), flush=True)
        write_rows(out_path, rows, timing="flushed_us: do_bench (L2 flushed) median")
    return rows


def thin_tk_rows(out_path: str) -> list[dict]:
    """The narrow rule's tile (16 rows, ``narrow_tn`` columns) at 1 and 16 rows with K slices of 1, 2 and
    4 times heuristics.NARROW_TK and at occupancy 2: whether more bytes in flight an SM pull more of the
    bandwidth where one wave of such blocks streams B (tf32 1 x 4096 x 4096 at 0.78x torch)."""
    from tileir.heuristics import NARROW_TK, narrow_tn

    def configs(fmt, n):
        tk0 = NARROW_TK[fmt]
        return [{"tm": 16, "tn": narrow_tn("sm_90", n), "tk": tk, "warps": 0, "occupancy": occ}
                for tk, occ in ((tk0, 0), (2 * tk0, 0), (4 * tk0, 0), (tk0, 2), (2 * tk0, 2))]

    return narrow_sweep(out_path, "thin-tk", ("tf32", "f16"), configs)


def nt_rows(out_path: str) -> list[dict]:
    """matmul_nt (x @ W.t(), a Linear layer's forward: W [N, K] read through a transposing view) at 1
    and 16 rows on row tiles of 16 and 64 (columns 32-128), f16: whether the narrow-rows rule's tiles carry over. The
    file is rewritten after every row (a call cut short keeps what it measured)."""
    from tileir.heuristics import rule
    from tileir.kernels import matmul_nt

    rows = []
    for n, k in ((4096, 4096), (11008, 4096), (4096, 11008)):
        for m in (1, 16):
            x = torch.randn(m, k, device="cuda", dtype=torch.float16)
            w = torch.randn(n, k, device="cuda", dtype=torch.float16)
            c = torch.empty(m, n, device="cuda", dtype=torch.float16)
            want = x.double() @ w.double().t()
            ruled = rule("matmul_nt", "sm_90", {"M": m, "N": n, "K": k, "fmt": "f16"})
            torch_us = round(flushed_ms(lambda x=x, w=w: x @ w.t()) * 1e3, 2)
            for name, cfg in (("rule", ruled), ("16x32x128", {"tm": 16, "tn": 32, "tk": 128, "warps": 0}),
                              ("16x32x64", {"tm": 16, "tn": 32, "tk": 64, "warps": 0}),
                              ("16x64x128", {"tm": 16, "tn": 64, "tk": 128, "warps": 0}),
                              ("16x128x128", {"tm": 16, "tn": 128, "tk": 128, "warps": 0}),
                              ("64x64x64", {"tm": 64, "tn": 64, "tk": 64, "warps": 0})):
                def fn(x=x, w=w, c=c, cfg=cfg):
                    matmul_nt(x, w, c, fmt="f16", **cfg)

                r = {"part": "nt", "fmt": "f16", "shape": [m, n, k], "variant": name, "config": cfg,
                     "torch_us": torch_us, **timed(fn, c, want, apart=False)}
                rows.append(r)
                print(json.dumps(r), flush=True)
                write_rows(out_path, rows, timing="flushed_us: do_bench (L2 flushed) median")
    return rows


def _padded_fns(m, a, b, c, ap, cp, cfg) -> list:
    def copied():
        ap[:m].copy_(a)
        matmul_f16(ap, b, cp, **cfg)
        c.copy_(cp[:m])

    return [("as given", lambda: matmul_f16(a, b, c, **cfg), c), ("64 rows", lambda: matmul_f16(ap, b, cp, **cfg), cp),
            ("64 rows + copies", copied, c)]


def profiled(name: str, fn) -> dict:
    """The top of a cProfile of 300 calls of ``fn`` (timing.cprofile_rows), printed and answered."""
    fn()
    torch.cuda.synchronize()
    rows = cprofile_rows(fn, 300, top=14)
    print(f"== cProfile: {name}, 300 calls")
    for r in rows:
        print(f"   {r['tottime_us_per_op']:8.2f} us own {r['cumtime_us_per_op']:8.2f} us with callees "
              f"{r['calls_per_op']:6.2f} calls  {r['fn']}")
    return {"part": "cprofile", "call": name, "top": rows}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--budget-s", type=float, default=300)
    p.add_argument("--part", choices=("small", "slice", "padded", "tiles", "thin", "thin-tk", "x3", "nt", "both"),
                   default="both")
    args = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False  # torch's fp32 column is fp32, as the suite's
    t0, rows = time.time(), []
    whole = {"nt": nt_rows, "thin": thin_rows, "thin-tk": thin_tk_rows, "x3": x3_rows}  # parts that write their file
    if args.part in whole:
        whole[args.part](args.out)
        return
    if args.part == "tiles":
        write_rows(args.out, tile_rows(), timing="flushed_us: do_bench (L2 flushed) median; gpu_us: "
                   "torch.profiler kernel sum")
        return
    if args.part == "padded":
        write_rows(args.out, padded_rows(), timing="flushed_us: do_bench (L2 flushed) median; gpu_us: "
                   "torch.profiler kernel sum; host_us: a call's host time in a loop")
        return
    if args.part != "small":
        rows += slice_rows(t0 + args.budget_s / 2)
    if args.part == "slice":
        write_rows(args.out, rows, timing="flushed_us: do_bench (L2 flushed) median")
        return
    for fmt in FORMATS:
        for n, k in NK:
            for m in MS:
                if time.time() - t0 > args.budget_s:
                    break
                rows += shape_rows(fmt, m, n, k)
    a = torch.randn(16, 11008, device="cuda", dtype=torch.float16)
    b = torch.randn(11008, 4096, device="cuda", dtype=torch.float16)
    c = torch.empty(16, 4096, device="cuda", dtype=torch.float16)
    cfg = {"tm": 64, "tn": 128, "tk": 64, "warps": 0}
    rows.append(profiled("matmul_split_k 16 x 4096 x 11008, 2 splits", lambda: matmul_split_k(a, b, c, splits=2,
                                                                                              config=cfg)))
    x = torch.rand(1 << 21, device="cuda")
    y = torch.empty_like(x)
    rows.append(profiled("prefix_sum 2^21", lambda: prefix_sum(x, y)))
    rows.append(profiled("prefix_sum 2^21 sync=False", lambda: prefix_sum(x, y, sync=False)))
    write_rows(args.out, rows, timing="flushed_us: do_bench (L2 flushed) median; gpu_us: torch.profiler kernel sum; "
               "host_us: a call's host time in a loop")


if __name__ == "__main__":
    main()
