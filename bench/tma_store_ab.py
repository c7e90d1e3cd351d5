"""What the TMA store workaround costs (docs/assembler-defect.md, the fourth defect): the library's
kernels with the lowering's rule (families/views.py ``tail_may_share_a_group``: no TMA for a store whose
tile can cross a contiguous end that is off a 16-byte boundary or may have a pitch gap after it) beside
the same kernels lowered as before the workaround (``views.HINT`` off: TMA wherever tileiras picks
it), interleaved in one process, answers checked on both. Needs a GPU.

    PYTHONPATH=src python bench/tma_store_ab.py --out bench/results/tma_store_ab_h200.json
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
import types

import torch
import workloads as W
from timing import median_ms

from tileir import kernels as K
from tileir.families import views

NAMES = ("vadd", "matmul_f16", "matmul_tf32", "softmax", "layernorm", "rmsnorm", "attention", "bmm",
         "matmul_partial", "splitk_reduce")


def library(tma_everywhere: bool):
    """The kernels of NAMES with nothing compiled yet; with ``tma_everywhere`` they are compiled (on
    their first calls, ``warm``) as the lowering did before the workaround. ``gemm`` is split-K's
    two launches over this library's own partial product and reduction (a fresh workspace a call)."""
    lib = types.SimpleNamespace(tma=tma_everywhere, **{n: getattr(K, n).fresh() for n in NAMES})

    def gemm(a, b, c, splits):  # kernels.gemm.matmul_split_k's two launches, over this library's kernels
        fmt = "f16" if a.dtype == torch.float16 else "f32"
        w = torch.empty(splits, a.shape[0], b.shape[1], device=a.device, dtype=torch.float32)
        lib.matmul_partial(a, b, w, fmt=fmt, sync=False)
        lib.splitk_reduce(w, c, fmt=fmt, sync=False)

    lib.gemm = gemm
    return lib


def cases(lib):
    """(name, make, call, reference, tolerance): the benchmark's headline shapes and the suite's odd ones."""
    out = []
    for n in (1 << 28, 1_000_001):
        out.append((f"vadd {n}", lambda n=n: W.vadd_inputs(n), lambda i: lib.vadd(i[0], i[1], i[2], sync=False),
                    W.vadd_ref, 0))
    for s, dt, kern in ((8192, torch.float16, lib.matmul_f16), (1000, torch.float16, lib.matmul_f16),
                        (4096, torch.float32, lib.matmul_tf32)):
        out.append((f"matmul {dt} {s}", lambda s=s, dt=dt: W.matmul_inputs(s, dt),
                    lambda i, k=kern: k(i[0], i[1], i[2], sync=False), W.matmul_ref, 2e-2))
    for r, c in ((8192, 8192), (32768, 1024)):
        out.append((f"softmax {r}x{c}", lambda r=r, c=c: W.softmax_inputs(r, c),
                    lambda i: lib.softmax(i[0], i[1], sync=False), W.softmax_ref, 1e-5))
        out.append((f"layernorm f16 {r}x{c}", lambda r=r, c=c: W.layernorm_inputs(r, c),
                    lambda i: lib.layernorm(i[0], i[1], i[2], i[3], fmt="f16", sync=False), W.layernorm_ref, 2e-2))
    out.append(("rmsnorm f16 8192x8192", W.rmsnorm_inputs,
                lambda i: lib.rmsnorm(i[0], i[1], i[2], fmt="f16", sync=False), W.rmsnorm_ref, 2e-2))
    # rank-3 stores: bmm's f16 C [B, M, N], split-K's f32 workspace [S, M, N]
    out.append(("bmm f16 8x2048^3", lambda: [torch.randn(8, 2048, 2048, device=W.DEV).half() / 8 for _ in range(2)]
                + [torch.empty(8, 2048, 2048, device=W.DEV, dtype=torch.half)],
                lambda i: lib.bmm(i[0], i[1], i[2], sync=False), lambda i: i[0].float() @ i[1].float(), 2e-2))
    for dt in (torch.float16, torch.float32):
        out.append((f"split-K 4 {dt} 64x4096x11008",
                    lambda dt=dt: [torch.randn(64, 11008, device=W.DEV).to(dt) / 8,
                                   torch.randn(11008, 4096, device=W.DEV).to(dt) / 8,
                                   torch.empty(64, 4096, device=W.DEV, dtype=dt)],
                    lambda i: lib.gemm(i[0], i[1], i[2], splits=4), lambda i: i[0].float() @ i[1].float(), 2e-2))
    for causal in (False, True):
        for shape in (W.ATTENTION,):
            out.append((f"attention {shape} causal={causal}", lambda s=shape: W.attention_inputs(*s),
                        lambda i, c=causal: lib.attention(*i, causal=c, fmt="f16", sync=False),
                        lambda i, c=causal: W.attention_ref(i, c), 2e-2))
    return out


def warm(lib, call, ins):
    views.HINT["store_tail"] = not lib.tma
    try:
        call(ins)
        torch.cuda.synchronize()
    finally:
        views.HINT["store_tail"] = True


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--only", default="", help="the cases whose name holds one of these comma-separated words")
    args = ap.parse_args(argv)
    rule, before = library(False), library(True)
    rows = []
    words = [w for w in args.only.split(",") if w]
    for (name, make, call_r, ref, tol), (_, _, call_b, _, _) in zip(cases(rule), cases(before)):
        if words and not any(w in name for w in words):
            continue
        try:
            rows.append(measure(args, name, make, call_r, call_b, ref, tol, rule, before))
        except Exception as e:  # one row's failure is its record; the others still run
            rows.append({"case": name, "error": f"{type(e).__name__}: {e}"[:300], "right": False})
        print(rows[-1], flush=True)
        torch.cuda.empty_cache()
        write(args, rows)  # after every row: a call cut by its time limit keeps what it measured
    return 0


def measure(args, name, make, call_r, call_b, ref, tol, rule, before) -> dict:
    """One case, both lowerings: their medians over the rounds, interleaved, and both answers checked."""
    ins = make()
    want = ref(ins)
    ms = {"rule": [], "tma": []}
    errs = {}
    for label, lib, call in (("rule", rule, call_r), ("tma", before, call_b)):
        warm(lib, call, ins)
        got = ins[-1].double()
        errs[label] = float((got - want.double()).abs().max())
    ok = all(e <= tol * max(1.0, float(want.abs().max())) for e in errs.values())
    for _ in range(args.rounds):
        for label, call in (("rule", call_r), ("tma", call_b)):
            ms[label].append(median_ms(lambda c=call, x=ins: c(x), 20, 3))
    r, b = statistics.median(ms["rule"]), statistics.median(ms["tma"])
    return {"case": name, "rule_ms": round(r, 5), "tma_ms": round(b, 5), "rule_over_tma": round(r / b, 4),
            "right": ok, "max_err": errs}


def write(args, rows) -> None:
    ratios = [x["rule_over_tma"] for x in rows if "rule_over_tma" in x] or [1.0]
    out = {"tool": "bench/tma_store_ab.py", "date": datetime.date.today().isoformat(),
           "device": torch.cuda.get_device_name(), "rounds": args.rounds, "rows": rows,
           "geomean_rule_over_tma": round(statistics.geometric_mean(ratios), 4), "max": max(ratios),
           "all_right": all(x["right"] for x in rows)}
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
