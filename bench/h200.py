"""The issue-7 benchmark: each workload timed for tileir, torch and the same algorithm in cuTile
Python (bench/peers/cutile_kernels.py), median of many runs after warm-up, with the answer checked
on fresh random inputs every time. Writes bench/results/h200.json (one record a workload) and a
PNG chart beside it.

    # on the GPU machine, with the toolchain unpacked and the cuda-tile wheel carried (.whl/):
    pip install --no-deps --target /tmp/site .whl/cuda_tile-*.whl; export PYTHONPATH=src:/tmp/site
    python3 bench/h200.py --out bench/results/h200.json [--passes 3]
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys

import torch
import workloads as W
from timing import median_ms as _median_ms
from timing import per_call_us, record_encode_ms

from tileir import kernels as K
from tileir.assemble import gpu_name_of_device, tileiras_version

try:
    sys.path.insert(0, "bench")
    from peers import cutile_kernels as C
except Exception as e:  # the peer is optional: its column is then null, with the reason
    C = None
    CUTILE_ERROR = f"{type(e).__name__}: {e}"
else:
    CUTILE_ERROR = None


def median_ms(fn, reps=30, warm=5):
    return _median_ms(fn, reps, warm)


def close(got, want, rtol, atol):
    return bool(torch.allclose(got.double(), want.double(), rtol=rtol, atol=atol))


def run_workload(name, make, impls, check, unit, amount, rtol, atol, reps=30):
    """``make()`` -> fresh inputs; each impl(inputs) writes its output; ``check(inputs)`` -> the
    reference; the unit's amount (bytes or flops) over the median time."""
    rec = {"workload": name, "unit": unit}
    for label, fn in impls.items():
        if fn is None:
            rec[label] = None
            continue
        try:
            ins = make()
            out = fn(ins)
            torch.cuda.synchronize()
            ok = close(out, check(ins), rtol, atol)
            ins2 = make()  # time on other fresh inputs, checked too
            ms = median_ms(lambda f=fn, x=ins2: f(x), reps=reps)
            ok = ok and close(fn(ins2), check(ins2), rtol, atol)
            rec[label] = round(amount / (ms * 1e-3) / (1e12 if unit.startswith("T") else 1e9), 2) if ok else None
            rec[f"{label}_ms"] = round(ms, 4)
            if not ok:
                rec[f"{label}_error"] = "wrong answer"
        except Exception as e:
            rec[label] = None
            rec[f"{label}_error"] = f"{type(e).__name__}: {e}"[:300]
    return rec


def merge_passes(recs, labels):
    """One record of several passes of a workload: each label's median rate over the passes that
    answered right (its per-pass rates kept beside it); any pass's error is kept."""
    out = dict(recs[0])
    for label in labels:
        rates = [r[label] for r in recs if r.get(label) is not None]
        out[label] = round(statistics.median(rates), 2) if len(rates) == len(recs) else None
        if len(recs) > 1:
            out[f"{label}_passes"] = [r.get(label) for r in recs]
        ms = [r[f"{label}_ms"] for r in recs if r.get(f"{label}_ms") is not None]
        if ms:
            out[f"{label}_ms"] = round(statistics.median(ms), 4)
        errors = [r[f"{label}_error"] for r in recs if r.get(f"{label}_error")]
        if errors:
            out[f"{label}_error"] = errors[0]
    return out


EXACT_OF = ("vadd", "matmul_f16", "matmul_bf16", "matmul_tf32", "matmul_i8", "softmax", "layernorm", "attention")


def exact_library():
    """The library's kernels of these workloads with every size and stride recorded as the call's
    value (``KernelFn.specialised``): the fixed-size programs that run-time sizes replaced."""
    import types

    return types.SimpleNamespace(**{n: getattr(K, n).specialised() for n in EXACT_OF})


def workloads(lib=K):
    """The workloads, their tileir impls calling ``lib``'s kernels (the library, or exact_library())."""
    out = []
    n = W.VADD_N
    out.append(dict(name="vadd_f32_2^28", make=W.vadd_inputs, unit="TB/s", amount=3 * 4 * n, rtol=0, atol=0,
                    config=W.library_config(K.vadd, {"N": n}),
                    impls={"tileir": lambda i: (lib.vadd(i[0], i[1], i[2], sync=False), i[2])[1],
                           "torch": lambda i: torch.add(i[0], i[1], out=i[2]),
                           "cutile": (lambda i: (C.vadd(i[0], i[1], i[2]), i[2])[1]) if C else None},
                    check=W.vadd_ref))
    for fmt, dt, size in (("f16", torch.float16, W.SIDE), ("bf16", torch.bfloat16, W.SIDE),
                          ("tf32", torch.float32, 4096)):
        kern = {"f16": lib.matmul_f16, "bf16": lib.matmul_bf16, "tf32": lib.matmul_tf32}[fmt]
        cfg = W.library_config(kern, {"M": size, "N": size, "K": size})  # the library's own choice (autotune.best)
        peer_cfg = {t: cfg[t] for t in ("tm", "tn", "tk", "group", "warps", "occupancy", "cga")}

        def mk(dt=dt, s=size):
            return W.matmul_inputs(s, dt)

        def ti_fn(i, kern=kern):
            kern(i[0], i[1], i[2], sync=False)  # M N K read off the tensors
            return i[2]

        def torch_fn(i):
            return torch.matmul(i[0], i[1], out=i[2])

        def ct_fn(i, pc=peer_cfg):
            C.matmul(i[0], i[1], i[2], **pc)
            return i[2]

        out.append(dict(name=f"matmul_{fmt}_{size}", make=mk, unit="TFLOP/s", amount=2 * size ** 3,
                        rtol=2e-2, atol=2e-2, config=cfg,
                        impls={"tileir": ti_fn, "torch": torch_fn, "cutile": ct_fn if C else None},
                        check=W.matmul_ref))
    s8 = W.SIDE
    i8_cfg = W.library_config(K.matmul_i8, {"M": s8, "N": s8, "K": s8})
    out.append(dict(name="matmul_i8_8192", make=W.int8_inputs, unit="TOP/s", amount=2 * s8 ** 3, rtol=0, atol=0,
                    config=i8_cfg,
                    impls={"tileir": lambda i: (lib.matmul_i8(*i, sync=False), i[2])[1],
                           "torch": lambda i: torch._int_mm(i[0], i[1]),
                           "cutile": None},  # no i8 peer: cuTile's mma of i8 is not written here
                    check=W.int8_ref))
    rows = cols = W.SIDE
    sm_cfg = W.library_config(K.softmax, {"R": rows, "C": cols})
    ln_cfg = W.library_config(K.layernorm, {"R": rows, "C": cols}, fmt="f16")
    out.append(dict(name="softmax_f32_8192x8192", make=W.softmax_inputs, unit="TB/s", amount=2 * 4 * rows * cols,
                    rtol=1e-5, atol=1e-6, config=sm_cfg,
                    impls={"tileir": lambda i: (lib.softmax(i[0], i[1], sync=False), i[1])[1],
                           "torch": lambda i: torch.softmax(i[0], 1),
                           "cutile": (lambda i: (C.softmax(i[0], i[1], sm_cfg["warps"], sm_cfg["occupancy"]),
                                                 i[1])[1]) if C else None},
                    check=W.softmax_ref))
    ln = lib.layernorm
    out.append(dict(name="layernorm_f16_8192x8192", make=W.layernorm_inputs, unit="TB/s", amount=2 * 2 * rows * cols,
                    rtol=1e-2, atol=1e-2, config=ln_cfg,
                    impls={"tileir": lambda i: (ln(i[0], i[1], i[2], i[3], fmt="f16", sync=False), i[3])[1],
                           "torch": lambda i: torch.nn.functional.layer_norm(i[0], (cols,), i[1], i[2], 1e-5),
                           "cutile": (lambda i: (C.layernorm(i[0], i[1], i[2], i[3], 1e-5, ln_cfg["warps"],
                                                             ln_cfg["occupancy"]), i[3])[1]) if C else None},
                    check=W.layernorm_ref))
    att = lib.attention
    b, h, seq, d = W.ATTENTION
    bh = b * h
    for causal in (False, True):
        a_cfg = W.library_config(att, {"B": b, "H": h, "S": seq, "D": d, "H_kv": h, "S_kv": seq}, causal=causal,
                                 fmt="f16")
        peer = {t: a_cfg[t] for t in ("bq", "bk", "warps", "occupancy")}

        def att_ref(i, c=causal):
            return W.attention_ref(i, c)

        flop = 4 * bh * seq * seq * d // (2 if causal else 1)
        out.append(dict(
            name=f"fmha_f16{'_causal' if causal else ''}_b4h32s4096d128", make=W.attention_inputs,
            unit="TFLOP/s",
            amount=flop, rtol=2e-2, atol=2e-2, config=a_cfg,
            impls={"tileir": lambda i, c=causal: (att(*i, causal=c, fmt="f16", sync=False), i[3])[1],
                   "torch": att_ref,
                   # the peer takes [B*H, S, D]: the same memory, viewed so
                   "cutile": (lambda i, c=causal, pc=peer: (C.attention(*[t.flatten(0, 1) for t in i], causal=c,
                                                                        **pc), i[3])[1]) if C else None},
            check=att_ref))
    return out


def host_side():
    """record_encode_ms_matmul and launch_overhead_us (host side, tileir vs cuTile)."""
    rec_ms = record_encode_ms(K.matmul_f16)  # one recording serves every size
    a, b, c = (torch.randn(1024, device="cuda") for _ in range(3))
    launch = {"tileir": round(per_call_us(lambda: K.vadd(a, b, c, sync=False), 3000), 2),
              "torch": round(per_call_us(lambda: torch.add(a, b, out=c), 3000), 2),
              "cutile": round(per_call_us(lambda: C.vadd(a, b, c), 3000), 2) if C else None}
    return [{"workload": "record_encode_ms_matmul", "unit": "ms", "tileir": round(rec_ms, 3), "torch": None,
             "cutile": None},
            {"workload": "launch_overhead_us", "unit": "us", **launch}]


def chart(records, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in records if r["unit"] in ("TB/s", "TFLOP/s", "TOP/s") and r.get("torch")]
    fig, ax = plt.subplots(figsize=(10, 4))
    xs = range(len(rows))
    for off, label in ((-0.25, "tileir"), (0.0, "torch"), (0.25, "cutile")):
        ax.bar([x + off for x in xs], [(r.get(label) or 0) / r["torch"] for r in rows], 0.25, label=label)
    ax.set_xticks(list(xs), [r["workload"] for r in rows], rotation=20, ha="right", fontsize=8)
    ax.set_ylabel("throughput / torch")
    ax.axhline(1.0, color="k", lw=0.5)
    ax.legend()
    ax.set_title("H200: tileir, torch and cuTile (same tileiras)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--passes", type=int, default=1, help="measure each workload this many times (median kept)")
    p.add_argument("--workloads", default="", help="comma-separated workload names (default: all, and the host side)")
    args = p.parse_args()
    only = set(filter(None, args.workloads.split(",")))
    base = {"gpu": torch.cuda.get_device_name(0), "tileiras": tileiras_version(), "opt_level": "tileiras default",
            "date": datetime.date.today().isoformat(), "arch": gpu_name_of_device()}
    known = [w["name"] for w in workloads()]
    if only - set(known):
        p.error(f"--workloads: {sorted(only - set(known))} are not workloads; they are {', '.join(known)}")
    records = []
    # each workload's tileir also as the fixed-size program (every size and stride a constant), in the
    # same run: what run-time sizes cost (the 2% criterion of docs/design.md, "Run-time sizes")
    for w, wx in zip(workloads(), workloads(exact_library())):
        if only and w["name"] not in only:
            continue
        impls = dict(w["impls"], tileir_exact=wx["impls"]["tileir"])
        rec = merge_passes([run_workload(w["name"], w["make"], impls, w["check"], w["unit"], w["amount"],
                                         w["rtol"], w["atol"]) for _ in range(args.passes)], list(impls))
        rec.update(base, tileir_config=w["config"], passes=args.passes)
        if rec.get("tileir_ms") and rec.get("tileir_exact_ms"):
            rec["runtime_sizes_cost"] = round(rec["tileir_ms"] / rec["tileir_exact_ms"], 4)
        print(json.dumps(rec), flush=True)
        records.append(rec)
        with open(args.out, "w") as f:  # written as it goes: a run cut short keeps what it measured
            json.dump(records, f, indent=1)
    for rec in host_side() if not only else ():
        rec.update(base, tileir_config={})
        print(json.dumps(rec), flush=True)
        records.append(rec)
    if CUTILE_ERROR:
        for r in records:
            r.setdefault("cutile_error", CUTILE_ERROR)
    with open(args.out, "w") as f:
        json.dump(records, f, indent=1)
    try:
        chart(records, args.out.replace(".json", ".png"))
    except Exception as e:
        print("no chart:", e)


if __name__ == "__main__":
    main()
