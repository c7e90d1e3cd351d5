"""Issue 6 on the GPU: bound the sm_90 wrong answer of bench/defect_repro.py (a matmul whose K loop
carries a token through its two view loads, at tiles 128x256x64, is wrong at tileiras' default
level and right at -O0). Each program below is assembled at several levels and run against torch.

Programs (f16, M = N = K = 8192 unless the name says otherwise):
  repro_TMxTNxTK    the bytes of bench/data/ (what tileir's lowering wrote before lower/tokens.py)
  lib_TMxTNxTK      the library's matmul_f16 with those tiles, as the lowering writes it today
                    (both loads take the entry token: nothing is carried)
  chain_TMxTNxTK    the same kernel with its loads chained through a token the K loop carries
                    (load A takes the carried token, load B takes A's, the loop carries B's on)

    tar -C /tmp -xJf .tc/tc.tar.xz && PATH=/tmp/tc/bin:$PATH PYTHONPATH=src \\
        python3 tools/defect_device.py --out bench/results/defect_device_h200.json
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from tileir import ir  # noqa: E402
from tileir.bytecode import encode_kernel  # noqa: E402
from tileir.kernels import CASES  # noqa: E402

DATA = ROOT / "bench" / "data"
NO_ASSUME = ((128, 256, 64), (128, 128, 64))  # also without the lowering's assume div_by<16>


def _max_id(k) -> int:
    """The largest value number defined in ``k`` (instructions' int fields, regions included)."""
    best = 0

    def walk(x):
        nonlocal best
        if isinstance(x, bool):
            return
        if isinstance(x, int):
            best = max(best, x)
        elif isinstance(x, tuple):
            for y in x:
                walk(y)
        elif type(x).__module__.endswith("instrs") and dataclasses.is_dataclass(x):
            for f in dataclasses.fields(x):
                walk(getattr(x, f.name))

    walk(k.body)
    return best


def chained(k):
    """``k`` with the view loads of its top-level for loop ordered through a carried token."""
    entry = next(i.dst for i in k.body if isinstance(i, ir.MakeTok))
    c_tok, r_tok = _max_id(k) + 1, _max_id(k) + 2
    body = []
    for ins in k.body:
        if isinstance(ins, ir.ForLoop):
            inner, tok = [], ir.Val(c_tok)
            for x in ins.body:
                if isinstance(x, ir.LoadViewTile):
                    x = dataclasses.replace(x, tok_in=tok)
                    tok = ir.Val(x.tok_out)
                elif isinstance(x, ir.Cont):
                    x = ir.Cont((tok, *x.values), (ir.TOKEN, *x.tys))
                inner.append(x)
            ins = dataclasses.replace(ins, results=(r_tok, *ins.results), tys=(ir.TOKEN, *ins.tys),
                                      inits=(ir.Val(entry), *ins.inits), carried=(c_tok, *ins.carried),
                                      body=tuple(inner))
        elif isinstance(ins, ir.StoreViewTile):
            ins = dataclasses.replace(ins, tok_in=ir.Val(r_tok))
        body.append(ins)
    return dataclasses.replace(k, body=tuple(body))


def _subst(x, table):
    """``x`` with every Val in ``table`` replaced (instructions and tuples rebuilt)."""
    if isinstance(x, ir.Val):
        return table.get(x.id, x)
    if isinstance(x, tuple):
        return tuple(_subst(y, table) for y in x)
    if type(x).__module__.endswith("instrs") and dataclasses.is_dataclass(x):
        return dataclasses.replace(x, **{f.name: _subst(getattr(x, f.name), table) for f in dataclasses.fields(x)})
    return x


def unassumed(k):
    """``k`` without its top-level assume operations (their users read the assumed value itself)."""
    table = {i.dst: i.src for i in k.body if isinstance(i, ir.AssumeTile)}
    body = tuple(_subst(i, table) for i in k.body if not isinstance(i, ir.AssumeTile))
    return dataclasses.replace(k, body=body)


def programs(n: int, tiles, chain_levels, levels):
    out = []  # (name, bytes, grid, levels)
    for tm, tn, tk in ((128, 256, 64), (128, 128, 64)):
        p = DATA / f"matmul_f16_chained_8192_{tm}x{tn}x{tk}.tileirbc"
        if n == 8192 and p.exists():
            out.append((f"repro_{tm}x{tn}x{tk}", p.read_bytes(), (n // tm, n // tn), chain_levels))
    kern = CASES["matmul_f16"].kernel
    for tm, tn, tk in tiles:
        k = kern.kernel(tm=tm, tn=tn, tk=tk)  # M N K are run-time sizes: the launch passes them
        grid = (-(-n // tm), -(-n // tn))
        out.append((f"lib_{tm}x{tn}x{tk}", encode_kernel(k), grid, levels))
        out.append((f"chain_{tm}x{tn}x{tk}", encode_kernel(chained(k)), grid,
                    chain_levels if (tm, tn, tk) == (128, 256, 64) else levels))
        if (tm, tn, tk) in NO_ASSUME:
            out.append((f"lib_noassume_{tm}x{tn}x{tk}", encode_kernel(unassumed(k)), grid, levels))
            out.append((f"chain_noassume_{tm}x{tn}x{tk}", encode_kernel(chained(unassumed(k))), grid, levels))
    return out


def _arguments(name, a, b, c):
    """(arguments, parameters) of a program: the committed repro's three pointers, or the library
    matmul's three and its hidden run-time sizes and strides (tileir.sizes)."""
    hidden = [] if name.startswith("repro_") else CASES["matmul_f16"].kernel.sizes(a, b, c)
    return [a, b, c, *hidden], [("f16", True)] * 3 + [("i32", False)] * len(hidden)


def assemble_all(progs, jobs):
    tileiras = shutil.which("tileiras")
    env = dict(os.environ)
    env.pop("CUDA_HOME", None)
    d = Path(tempfile.mkdtemp(prefix="defect-device-"))
    work = [(name, bc, lv) for name, bc, _, levels in progs for lv in levels]

    def one(w):
        name, bc, lv = w
        src, out = d / f"{name}.tileirbc", d / f"{name}.O{lv}.cubin"
        src.write_bytes(bc)
        level = [] if lv == "default" else ["--opt-level", lv]
        cmd = [tileiras, "--gpu-name", "sm_90", *level, "-o", str(out), str(src)]
        t0 = time.perf_counter()
        r = subprocess.run(cmd, capture_output=True, env=env, timeout=900)
        secs = time.perf_counter() - t0
        if r.returncode != 0:
            return (name, lv), (None, secs, (r.stderr + r.stdout).decode("utf-8", "replace")[:300])
        return (name, lv), (out.read_bytes(), secs, "")

    with ThreadPoolExecutor(jobs) as ex:
        return dict(ex.map(one, work))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 4)
    ap.add_argument("--only", help="run only the programs whose names contain this")
    args = ap.parse_args()
    import torch

    from tileir.runtime import launch

    tiles = [(128, 256, 64), (128, 128, 64), (256, 128, 64), (128, 256, 32), (64, 256, 64)]
    progs = programs(args.n, tiles, ["default", "0", "1", "2"], ["default", "0"])
    progs = [p for p in progs if not args.only or args.only in p[0]]
    t0 = time.perf_counter()
    cubins = assemble_all(progs, args.jobs)
    print(f"assembled {len(cubins)} in {time.perf_counter() - t0:.0f} s", flush=True)
    n, rows = args.n, []
    for name, _, grid, levels in progs:
        for lv in levels:
            cubin, secs, err = cubins[(name, lv)]
            row = {"program": name, "level": lv, "assemble_s": round(secs, 1)}
            if cubin is None:
                row["error"] = err
            else:
                errs = []
                for seed in range(args.seeds):
                    g = torch.Generator(device="cuda").manual_seed(seed)
                    a = torch.randn(n, n, device="cuda", generator=g).half()
                    b = torch.randn(n, n, device="cuda", generator=g).half()
                    c = torch.zeros(n, n, device="cuda", dtype=torch.half)
                    args3, params = _arguments(name, a, b, c)
                    launch(cubin, "matmul_f16", grid, args3, params)
                    torch.cuda.synchronize()
                    ref = a.float() @ b.float()
                    errs.append(float((c.float() - ref).abs().max() / ref.abs().max()))
                ts = []
                for _ in range(5):
                    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    s.record()
                    launch(cubin, "matmul_f16", grid, args3, params, sync=False)
                    e.record()
                    torch.cuda.synchronize()
                    ts.append(s.elapsed_time(e))
                ms = sorted(ts)[len(ts) // 2]
                row.update(max_rel_err=errs, ok=all(x < 1e-2 for x in errs), median_ms=round(ms, 3),
                           tflops=round(2 * n**3 / ms / 1e9, 1))
            print(json.dumps(row), flush=True)
            rows.append(row)
    out = {"date": datetime.date.today().isoformat(), "gpu": torch.cuda.get_device_name(0), "arch": "sm_90",
           "n": n, "command": "PYTHONPATH=src python3 tools/defect_device.py --out ...", "results": rows}
    Path(args.out).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
