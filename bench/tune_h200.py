"""The issue-7 sweep: autotune.tune over tiles, block order and entry hints (warps, occupancy,
cga) for every benchmark workload, on the GPU, each candidate's time kept; the winner's answer
checked against torch. Writes bench/results/tune_h200.json (one record a workload: the fixed
configuration, every candidate with its time or why it was dropped, the winner and its check)
and leaves the winners in the tune cache ($TILEIR_CACHE_DIR/tune.json).

    PYTHONPATH=src python3 bench/tune_h200.py --out bench/results/tune_h200.json [--only softmax,...]
    PYTHONPATH=src python3 bench/tune_h200.py --round 2 --out bench/results/tune2_h200.json
    PYTHONPATH=src python3 bench/tune_h200.py --only matmul_tf32 --out bench/results/tune_tf32_h200.json

The candidates are assembled first in parallel (every CPU; the cubin cache on disk is shared), so
the device time goes to timing. The first candidate of each list is the kernel's default, the
reference the others must agree with (autotune.tune's rule); the winner is then held to torch.
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import json
import os
from concurrent.futures import ProcessPoolExecutor

import torch
import workloads as W

from tileir import autotune
from tileir import kernels as K
from tileir.assemble import gpu_name_of_device, tileiras_version


def grid(**axes):
    """Every combination of the axes' values, as dicts."""
    keys = list(axes)
    return [dict(zip(keys, vals)) for vals in itertools.product(*axes.values())]


def _mm_candidates():
    c = [{"tm": 128, "tn": 128, "tk": 64}]
    c += [dict(tm=128, tn=128, tk=64, **h) for h in grid(group=[0, 8], warps=[0, 8], cga=[0, 2]) if any(h.values())]
    c += [dict(tm=128, tn=128, tk=64, group=8, occupancy=o) for o in (1, 2)]
    c += [dict(tm=128, tn=256, tk=64, **h) for h in grid(group=[0, 8], warps=[8], cga=[0, 2])]
    c += [dict(tm=128, tn=256, tk=64, group=8), dict(tm=128, tn=256, tk=32, group=8, warps=8)]
    c += [dict(tm=256, tn=128, tk=64, group=8, warps=8, cga=cg) for cg in (0, 2)]
    c += [dict(tm=128, tn=128, tk=128, group=8, warps=8)]
    return c


def workloads():
    """Each workload's kernel, fresh inputs (the sizes: their shapes), the fixed configuration
    (formats, flags; no sizes), the candidates and the check."""
    n, s = W.VADD_N, W.SIDE
    b, h, seq, d = W.ATTENTION
    bh = b * h
    out = [dict(name="vadd_f32_2^28", kernel=K.vadd, args=W.vadd_inputs, config={},
                cands=grid(tile=[1024, 2048, 4096, 8192], warps=[0, 8]),
                check=lambda a: (a[2], W.vadd_ref(a), 0, 0), unit="TB/s", amount=12 * n, tol=(0, 0))]
    for fmt, dt in (("f16", torch.float16), ("bf16", torch.bfloat16)):
        out.append(dict(name=f"matmul_{fmt}_8192", kernel=getattr(K, f"matmul_{fmt}"),
                        args=lambda dt=dt: W.matmul_inputs(s, dt), config={},
                        cands=_mm_candidates(), check=lambda a: (a[2], W.matmul_ref(a), 2e-2, 2e-2),
                        unit="TFLOP/s", amount=2 * s ** 3, tol=(2e-2, 2e-2)))
    tf32 = [{"tm": 128, "tn": 128, "tk": 32}]
    tf32 += [dict(tm=128, tn=128, tk=32, group=8, **h) for h in grid(warps=[0, 8], occupancy=[0, 1, 2])]
    tf32 += [dict(tm=tm, tn=tn, tk=tk, group=8, warps=8, **h) for (tm, tn, tk), h in itertools.product(
        ((128, 256, 32), (128, 256, 16), (256, 128, 32), (128, 128, 64)), grid(occupancy=[0, 1]))]
    out.append(dict(name="matmul_tf32_4096", kernel=K.matmul_tf32, args=lambda: W.matmul_inputs(4096, torch.float32),
                    config={}, cands=tf32,
                    check=lambda a: (a[2], W.matmul_ref(a), 2e-2, 2e-2), unit="TFLOP/s",
                    amount=2 * 4096 ** 3, tol=(2e-2, 2e-2)))
    out.append(dict(name="matmul_i8_8192", kernel=K.matmul_i8, args=W.int8_inputs, config={},
                    cands=[{"tm": 128, "tn": 128, "tk": 64}] + [
                        dict(tm=tm, tn=tn, tk=tk, warps=w) for (tm, tn, tk), w in itertools.product(
                            ((128, 128, 64), (128, 128, 128), (128, 256, 64), (128, 256, 128)), (0, 8))][1:],
                    check=lambda a: (a[2], W.int8_ref(a), 0, 0), unit="TOP/s", amount=2 * s ** 3,
                    tol=(0, 0)))
    out.append(dict(name="softmax_f32_8192x8192", kernel=K.softmax, args=W.softmax_inputs, config={},
                    cands=grid(max_tile=[4096, 8192], warps=[0, 8], occupancy=[0, 2, 4]),
                    check=lambda a: (a[1], W.softmax_ref(a), 1e-5, 1e-6), unit="TB/s",
                    amount=8 * s * s, tol=(1e-5, 1e-6)))
    out.append(dict(name="layernorm_f16_8192x8192", kernel=K.layernorm, args=W.layernorm_inputs,
                    config={"fmt": "f16"}, cands=grid(max_tile=[8192, 4096], warps=[0, 8],
                                                                 occupancy=[0, 2, 4]),
                    check=lambda a: (a[3], W.layernorm_ref(a), 1e-2, 1e-2), unit="TB/s", amount=4 * s * s,
                    tol=(1e-2, 1e-2)))
    out.append(dict(name="rmsnorm_f16_8192x8192", kernel=K.rmsnorm, args=W.rmsnorm_inputs,
                    config={"fmt": "f16"}, cands=grid(warps=[0, 8], occupancy=[0, 2, 4]),
                    check=lambda a: (a[2], W.rmsnorm_ref(a), 1e-2, 1e-2), unit="TB/s", amount=4 * s * s,
                    tol=(1e-2, 1e-2)))
    for causal in (False, True):
        tiles = [(128, 64), (128, 128), (64, 64), (256, 64)] + ([] if causal else [(64, 128)])
        out.append(dict(name=f"fmha_f16{'_causal' if causal else ''}_b4h32s4096d128", kernel=K.attention,
                        args=W.attention_inputs, config={"causal": causal, "fmt": "f16"},
                        cands=[dict(bq=bq, bk=bk, **h) for (bq, bk), h in itertools.product(
                            tiles, grid(warps=[0, 8], occupancy=[0, 2]))],
                        check=lambda a, c=causal: (a[3], W.attention_ref(a, c), 2e-2, 2e-2), unit="TFLOP/s",
                        amount=4 * bh * seq * seq * d // (2 if causal else 1), tol=(2e-2, 2e-2)))
    return out


def _round2():
    """The second round (--round 2): around each first-round winner (kept in every list, so the
    cache's winner is the best of both rounds), where round 1 left room: occupancy past 4 for the
    row kernels, block order and occupancy for the matmuls, occupancy and bq 256 for attention."""
    row = grid(max_tile=[8192], warps=[0, 8], occupancy=[4, 8, 16])
    mm = [dict(tm=128, tn=128, tk=64, group=8, occupancy=2), dict(tm=128, tn=256, tk=32, group=8, warps=8),
          dict(tm=128, tn=128, tk=64, group=4, occupancy=2), dict(tm=128, tn=128, tk=64, group=16, occupancy=2),
          dict(tm=128, tn=128, tk=64, group=8, occupancy=2, cga=2), dict(tm=128, tn=128, tk=32, group=8, occupancy=2),
          dict(tm=128, tn=256, tk=64, group=8, warps=8, occupancy=1), dict(tm=128, tn=256, tk=32, group=8, warps=8,
                                                                           occupancy=1),
          dict(tm=128, tn=256, tk=32, group=16, warps=8), dict(tm=256, tn=128, tk=32, group=8, warps=8),
          dict(tm=128, tn=256, tk=64, group=8, warps=8, cga=2)]
    att = [dict(bq=128, bk=128, warps=8, occupancy=o) for o in (0, 1, 2)] + [
        dict(bq=128, bk=128, warps=0, occupancy=1), dict(bq=256, bk=128, warps=8, occupancy=0),
        dict(bq=256, bk=128, warps=8, occupancy=1), dict(bq=128, bk=64, warps=8, occupancy=1)]
    return {"softmax_f32_8192x8192": [dict(max_tile=8192, warps=0, occupancy=4)] + row[1:],
            "layernorm_f16_8192x8192": [dict(max_tile=8192, warps=0, occupancy=4)] + row[1:],
            "rmsnorm_f16_8192x8192": [dict(warps=0, occupancy=4)] + [{k: v for k, v in c.items() if k != "max_tile"}
                                                                    for c in row[1:]],
            "matmul_f16_8192": mm, "matmul_bf16_8192": [mm[1], mm[0]] + mm[2:],
            "fmha_f16_b4h32s4096d128": att, "fmha_f16_causal_b4h32s4096d128": [att[2], att[0], att[1]] + att[3:]}


def _assemble(job):
    name, cfg = job
    try:
        getattr(K, name).cubin("sm_90", **cfg)
        return None
    except Exception as e:  # tune reports it again, in its own record
        return f"{name} {cfg}: {type(e).__name__}: {str(e)[:200]}"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--only", default="")
    p.add_argument("--round", type=int, default=1)
    args = p.parse_args()
    only = [w for w in args.only.split(",") if w]
    works = [w for w in workloads() if not only or any(o in w["name"] for o in only)]
    if args.round == 2:
        second = _round2()
        works = [dict(w, cands=second[w["name"]]) for w in works if w["name"] in second]
    jobs = [(w["kernel"].name, dict(w["config"], **c)) for w in works for c in w["cands"]]  # K.<name>
    with ProcessPoolExecutor(os.cpu_count()) as ex:
        failed = [f for f in ex.map(_assemble, jobs) if f]
    records = []
    for w in works:
        a = w["args"]()
        results: list = []
        kern = w["kernel"]
        plan = kern.plan(kern.config(**w["config"]))
        rec = {"workload": w["name"], "kernel": kern.name, "unit": w["unit"], "config": w["config"],
               "sizes": plan.named(plan.values(a))}  # the run-time sizes the winner is kept under
        try:
            win = autotune.tune(w["kernel"], w["cands"], a, rtol=w["tol"][0], atol=w["tol"][1], results=results,
                                reps=30, warmup=5, **w["config"])
            got, want, rtol, atol = w["check"](a)
            torch.cuda.synchronize()
            rec["winner"] = win
            rec["winner_equals_torch"] = bool(torch.allclose(got.double(), want.double(), rtol=rtol, atol=atol))
        except Exception as e:
            rec["error"] = f"{type(e).__name__}: {e}"[:500]
        for r in results:
            if r["ms"]:
                r["rate"] = round(w["amount"] / (r["ms"] * 1e-3) / 1e12, 3)
        rec["candidates"] = results
        ok = [r for r in results if r["ok"]]
        if ok:
            best = min(ok, key=lambda r: r["ms"])
            rec["best_rate"], rec["default_rate"] = best.get("rate"), results[0].get("rate")
        print(json.dumps({k: rec.get(k) for k in ("workload", "winner", "best_rate", "default_rate",
                                                   "winner_equals_torch", "error")}), flush=True)
        records.append(rec)
        del a
        torch.cuda.empty_cache()
    out = {"date": datetime.date.today().isoformat(), "gpu": torch.cuda.get_device_name(0),
           "target": gpu_name_of_device(), "tileiras": tileiras_version(), "opt_level": "tileiras default",
           "round": args.round, "assembly_failures": failed, "workloads": records}
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
