"""The public shape suite (issue 12): every family of the library on the shapes users run, tileir
against torch on the same inputs, each timed with ``triton.testing.do_bench`` (the L2 flushed
before every call, the median), each answer checked. Writes ``bench/results/suite_h200.json``
(a record per shape) and one PNG per family beside it (tileir / torch speed against the shape,
the geometric mean and the minimum in the title).

    # on the GPU machine (a family or two per call where the whole suite does not fit one):
    PYTHONPATH=src python3 bench/suite.py --out bench/results/suite_h200.json --quick
    PYTHONPATH=src python3 bench/suite.py --out bench/results/suite_h200.json --families matmul_f16,matmul_bf16
    PYTHONPATH=src python3 bench/suite.py --out bench/results/suite_h200.json --plots-only
    # on a CPU, the host reference on a handful of tiny shapes (tests/test_suite_bench.py):
    python3 bench/suite.py --cpu-smoke --out /tmp/suite_smoke.json

Each record: family, name (the shape's key), shape, formats, tileir_ms, torch_ms, ratio
(torch_ms / tileir_ms: above 1 tileir is faster), ok (tileir's answer within the family's
tolerance of an independent reference), max_err and torch_max_err (both against that reference),
config (what the library chose for the call: the tuned keys it filled in, split-K's plan), the
run's date and timing mode, and where either side took under 0.1 ms, tileir_host_us and
torch_host_us (host time a call, issued without waiting: a row whose host time passes do_bench's
flush times the host). The run is resumable: shapes already in the file are skipped
(``--redo-errors`` retries those that failed), records are written as they come, and
``--budget-s`` stops starting new shapes after that many seconds, so several device calls finish
it. Before timing, the configurations the pending shapes will run are assembled in parallel
(``--jobs`` tileiras processes): one cubin serves every shape that shares a configuration.

tileir's side is the library's plain call: ``gemm`` (the one-pass matmul kernels, split-K or the
persistent walk where the rule says so), ``matmul_nt_any`` (x @ W^T), ``matmul_f8``,
``batched_product`` (bmm), ``softmax`` / ``layernorm`` / ``rmsnorm``,
``attention``, ``vadd``, ``vector_sum`` / ``vector_max``, ``prefix_sum``, ``histogram``, each with
no tiles named, so the configuration is the library's own (tune cache, measured table entries,
the rule of heuristics.py). torch's side: torch.matmul (fp32 with TF32 off for the f32
families; torch_tf32_ms beside it with TF32 on), torch.matmul(x, W.t()), torch._scaled_mm, torch.bmm,
torch.softmax, F.layer_norm, F.rms_norm, F.scaled_dot_product_attention (enable_gqa for grouped heads),
torch.add, torch.sum, torch.max, torch.cumsum, torch.bincount. The shapes themselves, and what each
family calls, are ``bench/suite_shapes.py``; this module times, checks, records and draws them.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import statistics
import sys
import time
import traceback
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
# the shapes, re-exported: bench/host_bound.py and the tests read them off this module
from suite_shapes import (  # noqa: E402, F401
    FAMILIES,
    HIST_BINS,
    M_SIZES,
    NK_PAIRS,
    ROW_COUNTS,
    ROW_WIDTHS,
    SEQS,
    TOKENS,
    VECTOR_SIZES,
    Shape,
    all_shapes,
    smoke_shapes,
)

# ---- timing --------------------------------------------------------------------------------------


def gpu_timer(quick: bool):
    """triton.testing.do_bench: the L2 flushed before each call, the median (quick: 5 ms of
    warm-up and 25 of repetitions instead of 25 and 100); without triton, the same method here."""
    warm, rep = (5, 25) if quick else (25, 100)
    try:
        from triton.testing import do_bench
    except ImportError:  # the same method without triton: a 256 MB write before each call, events, median
        flush = torch.empty(1 << 26, dtype=torch.int32, device="cuda")

        def flushed(fn):
            fn()
            torch.cuda.synchronize()
            t = time.perf_counter()
            fn()
            torch.cuda.synchronize()
            n = max(5, min(10000, int(rep * 1e-3 / max(time.perf_counter() - t, 1e-6))))
            times = []
            for _ in range(n):
                flush.zero_()
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                fn()
                e.record()
                times.append((s, e))
            torch.cuda.synchronize()
            return statistics.median(s.elapsed_time(e) for s, e in times)

        return flushed
    return lambda fn: float(do_bench(fn, warmup=warm, rep=rep, return_mode="median"))


HOST_BOUND_MS = 0.1  # below this a call's host time may set its pace: the record keeps it beside the time


def cpu_timer(fn, reps=1):
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


# ---- checking ------------------------------------------------------------------------------------


def compare(shape: Shape, out, want) -> tuple[float, bool]:
    got = shape.rows(out) if shape.rows is not None else out
    if shape.exact:
        same = bool(torch.equal(got.to(want.dtype).reshape(want.shape), want))
        err = 0.0 if same else float((got.double().reshape(want.shape) - want.double()).abs().max())
        return err, same
    g, w = got.double().reshape(want.shape), want.double()
    err = float((g - w).abs().max()) if w.numel() else 0.0
    if shape.family == "matmul_fp8":  # relative to the product's scale
        bound = shape.tol * max(1.0, float(w.abs().max()))
    elif shape.family == "sum":
        bound = shape.tol * max(1.0, float(shape.extra.get("abs_sum", w.abs().max())))
    elif shape.family == "scan":
        bound = shape.tol * max(1.0, float(w.abs().max()))
    else:
        bound = shape.tol * max(1.0, float(w.abs().max()) if shape.family in ("layernorm", "rmsnorm") else 1.0)
    return err, bool(math.isfinite(err) and err <= bound)


# ---- one shape -----------------------------------------------------------------------------------


def describe(shape: Shape, ins, gpu) -> dict:
    if shape.launches is None:
        return {"kernel": shape.family, "note": "the kernel's defaults (no tuned keys)"}
    _, desc = shape.launches(ins, gpu)
    return desc


# a row whose first ratio falls outside this is timed again on both sides
RETIME_INSIDE = (0.5, 2.0)


def run_shape(shape: Shape, timer, device: str, gpu: str | None, smoke: bool) -> dict:
    rec = {"family": shape.family, "name": shape.name, "shape": shape.shape, "formats": shape.formats,
           "unit": shape.unit, "tileir_ms": None, "torch_ms": None, "ratio": None, "ok": False, "max_err": None,
           "torch_max_err": None, "config": None, "error": None, "torch_error": None}
    ins = shape.make(device)
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    try:
        rec["config"] = describe(shape, ins, gpu)
        want = shape.ref(ins)
        if shape.family == "sum":
            shape.extra["abs_sum"] = float(ins[0].double().abs().sum())
        if smoke and shape.launches is not None:
            from tileir.kernels.launching import launch

            def ti():
                for kern, cfg, arrays in shape.launches(ins, gpu)[0]:
                    launch(kern, *[_f8_host(a) for a in arrays], **cfg)
                return _output(shape, ins)
        else:
            def ti():
                return shape.tileir(ins)
        out = ti()
        sync()
        rec["max_err"], rec["ok"] = compare(shape, out, want)
        if not rec["ok"]:
            rec["error"] = f"wrong answer: max error {rec['max_err']:.3g} (tolerance {shape.tol:g})"
        rec["tileir_ms"] = round(timer(ti), 5)
    except Exception as e:
        rec["error"] = f"{type(e).__name__}: {e}"[:600]
        rec["traceback"] = traceback.format_exc()[-1500:]
        want = None
    if shape.torch is not None:
        try:
            t_out = shape.torch(ins)
            sync()
            if want is not None:
                rec["torch_max_err"] = compare(shape, t_out, want)[0]
            rec["torch_ms"] = round(timer(lambda: shape.torch(ins)), 5)
        except Exception as e:
            rec["torch_error"] = f"{type(e).__name__}: {e}"[:400]
    for label, fn in shape.extra.items():
        if callable(fn):
            try:
                fn(ins)
                sync()
                rec[f"{label}_ms"] = round(timer(lambda fn=fn: fn(ins)), 5)
            except Exception as e:
                rec[f"{label}_error"] = f"{type(e).__name__}: {e}"[:300]
    if rec["ok"] and rec["tileir_ms"] and rec["torch_ms"]:
        if not RETIME_INSIDE[0] <= rec["torch_ms"] / rec["tileir_ms"] <= RETIME_INSIDE[1] and not smoke:
            # both sides timed again, each keeping its faster median: one median that caught a stall
            # otherwise decides the row (torch's 1000 x 1024 x 1024 f16 once read 41 us against its 9.6)
            rec["first_ms"] = [rec["tileir_ms"], rec["torch_ms"]]
            rec["tileir_ms"] = min(rec["tileir_ms"], round(timer(ti), 5))
            rec["torch_ms"] = min(rec["torch_ms"], round(timer(lambda: shape.torch(ins)), 5))
        rec["ratio"] = round(rec["torch_ms"] / rec["tileir_ms"], 4)
        if device == "cuda" and not smoke and min(rec["tileir_ms"], rec["torch_ms"]) < HOST_BOUND_MS:
            # a row whose host time passes do_bench's flush (a 256 MB write, ~65 us) times the host
            from timing import host_us

            try:
                rec["tileir_host_us"] = round(host_us(ti, reps=100), 2)
                rec["torch_host_us"] = round(host_us(lambda: shape.torch(ins), reps=100), 2)
            except Exception as e:  # noqa: BLE001  (the times stand without it)
                rec["host_us_error"] = f"{type(e).__name__}: {e}"[:200]
    for side in ("tileir", "torch"):
        ms = rec.get(f"{side}_ms")
        if ms:
            scale = 1e12 if shape.unit.startswith("T") else 1e9
            rec[f"{side}_rate"] = round(shape.amount / (ms * 1e-3) / scale, 3)
    return rec


def _f8_host(a):
    """A CPU torch tensor of an f8 format as a numpy view of its memory (ml_dtypes), which the host
    reference takes (runtime.arrays.host_view reads bf16 through its bits, not yet f8)."""
    if isinstance(a, torch.Tensor) and not a.is_cuda and a.dtype in (torch.float8_e4m3fn, torch.float8_e5m2):
        import ml_dtypes

        np_dt = ml_dtypes.float8_e4m3fn if a.dtype == torch.float8_e4m3fn else ml_dtypes.float8_e5m2
        return a.view(torch.uint8).numpy().view(np_dt)
    return a


def _output(shape, ins):
    if shape.family in ("sum", "max", "histogram"):
        return ins[1]
    if shape.family == "matmul_fp8":
        return ins[2]
    if shape.family.startswith("matmul_") or shape.family in ("bmm", "linear_bf16"):
        return ins[2]
    if shape.family == "attention":
        return ins[3]
    return ins[-1]


# ---- precompiling --------------------------------------------------------------------------------


def precompile(shapes, gpu: str, jobs: int, log=print) -> dict:
    """Assemble every distinct (kernel, configuration, stride claims) the pending shapes will launch,
    ``jobs`` tileiras processes at a time, so the timed calls find their cubins ready (the memory
    and disk caches key them by their bytes). Recording, lowering and encoding run here, in order;
    a configuration that fails is left to its call, which records the error."""
    from concurrent.futures import ThreadPoolExecutor

    from tileir.assemble import assemble

    t0 = time.time()
    todo, failed = configurations(shapes, gpu)
    t1 = time.time()

    def one(item):
        name, data, k = item
        try:
            assemble(data, gpu, kernel=name, program=k)
            return None
        except Exception as e:
            return f"{name}: {type(e).__name__}: {e}"[:300]

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        failed += [f for f in pool.map(one, todo) if f]
    info = {"configurations": len(todo), "record_s": round(t1 - t0, 1), "assemble_s": round(time.time() - t1, 1),
            "failed": failed[:20]}
    log(f"precompiled {len(todo)} configurations (record {info['record_s']} s, assemble {info['assemble_s']} s, "
        f"{len(failed)} failed)", flush=True)
    return info


def configurations(shapes, gpu: str) -> tuple[list, list]:
    """([(kernel name, bytecode, lowered kernel)] of every distinct (kernel, configuration, stride
    claims) the shapes launch, worked out on shapes-only "meta" tensors; [failures])."""
    from tileir.bytecode import encode_kernel

    todo, seen, failed = [], set(), []
    for sh in shapes:
        if sh.launches is None:
            continue
        try:
            launches, _ = sh.launches(sh.make("meta"), gpu)
        except Exception as e:
            failed.append(f"{sh.name}: {type(e).__name__}: {e}"[:300])
            continue
        for kern, cfg, arrays in launches:
            try:
                plan = kern.plan(cfg)
                claims = tuple(plan.div16(plan.values(arrays), arrays))
                key = (kern.name, tuple(sorted((k, repr(v)) for k, v in cfg.items())), claims)
                if key in seen:
                    continue
                seen.add(key)
                k = kern.kernel(claims, **cfg)
                todo.append((kern.name, encode_kernel(k), k))
            except Exception as e:
                failed.append(f"{sh.name} {kern.name} {cfg}: {type(e).__name__}: {e}"[:300])
    return todo, failed


# ---- the file, the summary and the figures -------------------------------------------------------


def load(path: Path) -> dict:
    if path.exists():
        doc = json.loads(path.read_text())
        if isinstance(doc, dict) and isinstance(doc.get("records"), list):
            return doc
    return {"suite": "bench/suite.py (issue 12)", "ratio": "torch_ms / tileir_ms (above 1: tileir faster)",
            "runs": [], "records": []}


def save(doc: dict, path: Path) -> None:
    doc["summary"] = summary(doc["records"])
    tmp = path.with_name(path.name + ".tmp")
    # one record a line: the file holds ~600 of them and travels with every device call
    head = json.dumps({k: v for k, v in doc.items() if k != "records"}, indent=1)[:-2]
    rows = ",\n".join(json.dumps(r) for r in doc["records"])
    tmp.write_text(f'{head},\n "records": [\n{rows}\n]\n}}\n')
    os.replace(tmp, path)


def summary(records) -> dict:
    """Per family: shapes, those answered right, the geometric mean and minimum of the ratio over
    the shapes where both sides ran, and the worst shape."""
    out = {}
    for fam in sorted({r["family"] for r in records}):
        rs = [r for r in records if r["family"] == fam]
        ratios = [(r["ratio"], r["name"]) for r in rs if r.get("ratio")]
        s = {"shapes": len(rs), "ok": sum(1 for r in rs if r.get("ok")), "timed": len(ratios),
             "wrong_or_failed": [r["name"] for r in rs if not r.get("ok")][:20]}
        if ratios:
            s["geomean"] = round(math.exp(sum(math.log(x) for x, _ in ratios) / len(ratios)), 4)
            s["min"], s["min_shape"] = min(ratios)
        out[fam] = s
    return out


def plot(doc: dict, out_json: Path) -> list[str]:
    """One PNG a family: tileir / torch against the shape, 1.0 and 0.8 marked, the geometric mean
    and minimum in the title; a failed shape is a red cross at 0. Needs matplotlib (answers [] and
    says so without it)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no figures: matplotlib is not installed")
        return []
    made = []
    summ = summary(doc["records"])
    for fam, s in summ.items():
        rs = [r for r in doc["records"] if r["family"] == fam]
        fig, ax = plt.subplots(figsize=(max(8, 0.12 * len(rs) + 4), 4.5))
        xs = list(range(len(rs)))
        ys = [r["ratio"] or 0.0 for r in rs]
        ax.scatter([x for x, r in zip(xs, rs) if r.get("ratio")], [y for y, r in zip(ys, rs) if r.get("ratio")], s=12)
        bad = [x for x, r in zip(xs, rs) if not r.get("ok")]
        ax.scatter(bad, [0.0] * len(bad), marker="x", color="red", s=20, label="failed or wrong")
        ax.axhline(1.0, color="k", lw=0.6)
        ax.axhline(0.8, color="grey", lw=0.6, ls="--")
        ax.set_xticks(xs, [r["name"].split(" ", 1)[1] if " " in r["name"] else r["name"] for r in rs], rotation=90,
                      fontsize=5)
        ax.set_ylabel("torch ms / tileir ms")
        gm, mn = s.get("geomean"), s.get("min")
        ax.set_title(f"{fam}: geometric mean {gm if gm is not None else '-'}, minimum {mn if mn is not None else '-'} "
                     f"({s['timed']} of {s['shapes']} timed, {s['shapes'] - s['ok']} failed)", fontsize=9)
        if bad:
            ax.legend(fontsize=7)
        fig.tight_layout()
        path = out_json.with_name(f"{out_json.stem}_{fam}.png")
        fig.savefig(path, dpi=80)  # ~60% of the bytes at 110 (the tracked tree travels to the device)
        plt.close(fig)
        made.append(str(path))
    return made


# ---- main ----------------------------------------------------------------------------------------


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="bench/results/suite_h200.json")
    p.add_argument("--families", default=",".join(FAMILIES), help=f"comma-separated, of {', '.join(FAMILIES)}")
    p.add_argument("--quick", action="store_true", help="shorter timing (do_bench warm-up 5 ms, repetitions 25 ms)")
    p.add_argument("--budget-s", type=float, default=450.0, help="start no new shape after this many seconds")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 8, help="tileiras processes for precompiling")
    p.add_argument("--no-precompile", action="store_true")
    p.add_argument("--redo-errors", action="store_true", help="run again the shapes whose record has an error")
    p.add_argument("--list", action="store_true", help="print the shapes per family and exit")
    p.add_argument("--plots-only", action="store_true", help="redraw the figures from the file and exit")
    p.add_argument("--merge", metavar="OTHER", help="take OTHER's records of its families in place of this file's "
                   "(a later run of some families, written to a fresh file), add its runs, redraw, and exit")
    p.add_argument("--cpu-smoke", action="store_true", help="a handful of tiny shapes on the host reference")
    args = p.parse_args(argv)
    t_start = time.time()
    out = Path(args.out)
    families = [f for f in args.families.split(",") if f]
    unknown = [f for f in families if f not in FAMILIES]
    if unknown:
        p.error(f"unknown families {unknown}; the suite has {', '.join(FAMILIES)}")
    if args.cpu_smoke:
        os.environ["TILEIR_INTERPRET"] = "1"
        shapes = [s for s in smoke_shapes() if s.family in families]
    else:
        shapes = all_shapes(families)
    if args.list:
        for f in families:
            print(f, sum(1 for s in shapes if s.family == f))
        print("total", len(shapes))
        return 0
    doc = load(out)
    if args.merge:
        other = load(Path(args.merge))
        fams = {r["family"] for r in other["records"]}
        doc["records"] = [r for r in doc["records"] if r["family"] not in fams] + other["records"]
        doc["runs"] = doc["runs"] + [dict(run, merged_from=Path(args.merge).name) for run in other["runs"]]
        save(doc, out)
        print(json.dumps({f: v for f, v in summary(doc["records"]).items() if f in fams}, indent=1))
        plot(doc, out)
        return 0
    if args.plots_only:
        print(json.dumps(summary(doc["records"]), indent=1))
        plot(doc, out)
        return 0
    done = {r["name"] for r in doc["records"] if not (args.redo_errors and (r.get("error") or not r.get("ok")))}
    doc["records"] = [r for r in doc["records"] if r["name"] in done]
    pending = [s for s in shapes if s.name not in done]
    if args.cpu_smoke:
        device, gpu, timer = "cpu", "sm_90", cpu_timer
    else:
        from tileir.assemble import gpu_name_of_device, tileiras_version

        device, gpu = "cuda", gpu_name_of_device()
        timer = gpu_timer(args.quick)
        torch.backends.cuda.matmul.allow_tf32 = False  # torch's fp32 matmul is fp32 (its default)
        torch.backends.cudnn.allow_tf32 = False
    run = {"date": datetime.date.today().isoformat(), "device": torch.cuda.get_device_name(0) if device == "cuda"
           else "cpu (host reference)", "arch": gpu, "timing": "cpu wall clock" if args.cpu_smoke else
           ("do_bench quick (warm-up 5 ms, 25 ms)" if args.quick else "do_bench (warm-up 25 ms, 100 ms)") +
           ", L2 flushed, median", "torch": torch.__version__, "families": families, "pending": len(pending)}
    if device == "cuda":
        run["tileiras"] = tileiras_version()
        try:
            import triton

            run["triton"] = triton.__version__
        except ImportError:
            pass
    doc["runs"].append(run)
    print(f"{len(pending)} of {len(shapes)} shapes to run ({len(shapes) - len(pending)} in {out} already)", flush=True)
    if device == "cuda" and not args.no_precompile and pending:
        run["precompile"] = precompile(pending, gpu, args.jobs)
    stopped = None
    for i, sh in enumerate(pending):
        if time.time() - t_start > args.budget_s:
            stopped = f"budget of {args.budget_s} s spent: {len(pending) - i} shapes left (run again to resume)"
            break
        rec = run_shape(sh, timer, device, gpu, args.cpu_smoke)
        rec.update(date=run["date"], timing=run["timing"].split(",")[0])
        doc["records"].append(rec)
        print(json.dumps({k: rec[k] for k in ("name", "tileir_ms", "torch_ms", "ratio", "ok", "error")}), flush=True)
        save(doc, out)
        if device == "cuda" and rec.get("error"):
            try:  # an illegal address poisons the context: every later shape would fail; stop, resume later
                torch.cuda.synchronize()
            except Exception as e:
                stopped = (f"the CUDA context failed after {sh.name} ({type(e).__name__}: {e}"[:300] +
                           "); run again to resume (that shape keeps its error record)")
                break
        if device == "cuda" and i % 16 == 15:
            torch.cuda.empty_cache()
    run["seconds"] = round(time.time() - t_start, 1)
    run["stopped"] = stopped
    save(doc, out)
    print(json.dumps(summary(doc["records"]), indent=1))
    if stopped:
        print(stopped)
    plot(doc, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
