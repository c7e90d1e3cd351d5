"""Issue 6: look for the tileiras defect the spec works around with --opt-level 0.

Every layer-1 golden (tests/data/goldens/*.tileirbc; a layer-1 case of tests/layer1/cases.py that
has no golden file yet is encoded here at 13.4) and every library kernel (its default size and one
size with tails; --h200-sizes adds the sizes of bench/results/spine_h200.json) is assembled by
tileiras for every target at tileiras' default level and at --opt-level 0, many processes at a
time. Each (program, target, level) is one CSV row: ok, error (tileiras' first line) or timeout,
with the cubin's size. A failure at the default level that -O0 avoids would be the defect; a
failure at both levels is a refusal, not a defect. A wrong answer needs a GPU: tools/defect_device.py.

    .venv/bin/python tools/defect_sweep.py                      # writes bench/results/defect_sweep.csv
    .venv/bin/python tools/defect_sweep.py --targets sm_90 --levels default,0,1,2

tileiras runs without CUDA_HOME (FACTS.md). Nothing here needs a GPU.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]

from tileir.assemble import find_tileiras, instr_kinds, tileiras_version  # noqa: E402
from tileir.bytecode import encode_kernel  # noqa: E402

SPEC_TARGETS = ("sm_90", "sm_100", "sm_103", "sm_107", "sm_110")  # where the spec says -O0
CONTROLS = ("sm_80", "sm_86", "sm_120")
GOLDENS = ROOT / "tests" / "data" / "goldens"
H200 = ROOT / "bench" / "results" / "spine_h200.json"
# one size with tails per library kernel, by name prefix (the default sizes mostly have tails too)
TAIL_SIZES = (("vadd", 4097), ("saxpy", 4097), ("matmul", (129, 65, 97)), ("bmm", (3, 129, 65, 97)),
              ("softmax", (33, 1025)), ("layernorm", (33, 1025)), ("rmsnorm", (33, 1025)),
              ("attention", (1, 3, 500, 128)), ("conv1d", (4097, 5)), ("vector_", 4097), ("transpose", (129, 65)))


@dataclass
class Program:
    name: str
    source: str  # golden | layer1 (encoded here) | library
    data: bytes
    kinds: frozenset | None = None
    refused_on: dict = field(default_factory=dict)  # layer-1's expected refusals: target -> words


def _layer1_cases() -> dict:
    try:
        from layer1.cases import CASES
    except Exception as e:  # the layer-1 suite is being written elsewhere; goldens alone still work
        print(f"(tests/layer1/cases.py not usable: {type(e).__name__}: {e})", file=sys.stderr)
        return {}
    return {c.name: c for c in CASES}


def _sizes(name: str, default, h200: bool) -> list:
    """The default size, one size with tails, and (with ``h200``) the sizes the H200 run used."""
    sizes = [default] + [size for prefix, size in TAIL_SIZES if name.startswith(prefix)][:1]
    if len(sizes) == 1:
        print(f"(no size with tails known for {name}: its default size only)", file=sys.stderr)
    if h200:
        try:
            sizes += [r["size"] for r in json.loads(H200.read_text())["results"] if r["kernel"] == name]
        except (OSError, ValueError, KeyError):
            pass
    out = []
    for s in sizes:
        s = tuple(s) if isinstance(s, list) else s
        if s not in out:
            out.append(s)
    return out


def programs(with_layer1=True, with_library=True, h200_sizes=False) -> list[Program]:
    progs: list[Program] = []
    cases = _layer1_cases() if with_layer1 else {}
    golden_names = set()
    if with_layer1:
        for path in sorted(GOLDENS.glob("*.tileirbc")):
            c = cases.get(path.stem)
            golden_names.add(path.stem)
            progs.append(Program(path.stem, "golden", path.read_bytes(), instr_kinds(c.kernel) if c else None,
                                 dict(c.refused_on) if c else {}))
        for name, c in cases.items():
            if name not in golden_names:
                progs.append(Program(name, "layer1", encode_kernel(c.kernel), instr_kinds(c.kernel),
                                     dict(c.refused_on)))
    if with_library:
        from tileir.kernels import CASES

        for name, case in CASES.items():
            seen = set()
            for size in _sizes(name, case.default_size, h200_sizes):
                try:
                    k = case.kernel.kernel(**case.config(size))
                except Exception as e:  # a size the kernel refuses is noted, not swept
                    print(f"({name} at {size}: {type(e).__name__}: {e})", file=sys.stderr)
                    continue
                data = encode_kernel(k)
                digest = hashlib.sha256(data).digest()
                if digest in seen:  # saxpy: one recording for every length
                    continue
                seen.add(digest)
                label = "x".join(map(str, size)) if isinstance(size, tuple) else str(size)
                progs.append(Program(f"{name}@{label}", "library", data, instr_kinds(k)))
    return progs


def run_one(tileiras, env, src: Path, target: str, level: str, timeout: float) -> dict:
    out = src.with_name(f"{src.stem}.{target}.O{level}.cubin")
    cmd = [tileiras, "--gpu-name", target] + ([] if level == "default" else ["--opt-level", level])
    cmd += ["-o", str(out), str(src)]
    t0 = time.perf_counter()
    try:
        r = subprocess.run(cmd, capture_output=True, env=env, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "cubin_bytes": "", "seconds": f"{time.perf_counter() - t0:.2f}",
                "message": f"no answer within {timeout:g} s"}
    secs = f"{time.perf_counter() - t0:.2f}"
    size = out.stat().st_size if out.exists() else 0
    ok = r.returncode == 0 and size > 0 and out.read_bytes()[:4] == b"\x7fELF"
    if out.exists():
        out.unlink()
    if ok:
        return {"status": "ok", "cubin_bytes": size, "seconds": secs, "message": ""}
    text = (r.stderr + r.stdout).decode("utf-8", "replace")
    # a quoted name of unprintable bytes, newlines among them (tileiras 13.4.92 prints one in its
    # "could not be legalized" crash), is replaced, so the first line keeps the words that matter
    text = re.sub(r"'[^']*[^ -~\n][^']*'", "'<unprintable>'", text)
    said = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return {"status": "error", "cubin_bytes": "", "seconds": secs,
            "message": f"exit {r.returncode}: {said[0] if said else '(nothing)'}"}


def sweep(progs, targets, levels, jobs, timeout) -> list[dict]:
    tileiras = find_tileiras()
    env = dict(os.environ)
    env.pop("CUDA_HOME", None)
    with tempfile.TemporaryDirectory(prefix="defect-sweep-") as d:
        srcs = []
        for i, p in enumerate(progs):
            src = Path(d) / f"p{i}.tileirbc"
            src.write_bytes(p.data)
            srcs.append(src)
        # the slow ones (library matmuls, tens of seconds each) first, so the pool ends evenly
        order = sorted(range(len(progs)), key=lambda i: (progs[i].source != "library", i))
        work = [(i, t, lv) for i in order for t in targets for lv in levels]
        done = [0]

        def job(w):
            i, t, lv = w
            try:
                res = run_one(tileiras, env, srcs[i], t, lv, timeout)
            except Exception as e:  # one broken run is a row, not the end of the sweep
                res = {"status": "error", "cubin_bytes": "", "seconds": "0", "message": f"sweep: {e!r}"[:300]}
            done[0] += 1
            if done[0] % 200 == 0:
                print(f"  {done[0]}/{len(work)}", file=sys.stderr, flush=True)
            p = progs[i]
            return {"program": p.name, "source": p.source, "bytes": len(p.data), "target": t, "level": lv, **res}

        with ThreadPoolExecutor(jobs) as ex:
            rows = list(ex.map(job, work))
        # a timeout in a busy pool may be only the pool: run each once more alone, and keep that
        for r, (i, t, lv) in zip(rows, work):
            if r["status"] == "timeout":
                print(f"  {r['program']} {t} {lv}: timed out in the pool; again alone", file=sys.stderr)
                again = run_one(tileiras, env, srcs[i], t, lv, timeout)
                again["message"] = (again["message"] + " (alone, after a timeout in the pool)").strip()
                r.update(again)
        return sorted(rows, key=lambda r: (r["source"], r["program"], r["target"], r["level"]))


# ---- the summary ------------------------------------------------------------------------------


def _table(head, rows) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def summarise(rows, progs, targets, levels) -> tuple[str, bool]:
    """Markdown tables, and whether a default-level failure that -O0 avoids was seen on a spec target."""
    by = {(r["program"], r["target"], r["level"]): r for r in rows}
    size = {p.name: len(p.data) for p in progs}
    refused = {p.name: p.refused_on for p in progs}
    out = []
    count = Counter((p.source) for p in progs)
    out.append("programs: " + ", ".join(f"{n} {s}" for s, n in sorted(count.items())) + f"; {len(rows)} runs")
    head = ["target"] + [f"{lv} ok / err / timeout" for lv in levels] + ["median s (" + "/".join(levels) + ")"]
    body = []
    for t in targets:
        cells = [t + (" (spec)" if t in SPEC_TARGETS else " (control)")]
        secs = []
        for lv in levels:
            c = Counter(by[(p.name, t, lv)]["status"] for p in progs)
            cells.append(f"{c['ok']} / {c['error']} / {c['timeout']}")
            s = sorted(float(by[(p.name, t, lv)]["seconds"]) for p in progs)
            secs.append(f"{s[len(s) // 2]:.2f}")
        body.append(cells + ["/".join(secs)])
    out.append(_table(head, body))

    # failures: per (program, target), which levels failed; then the smallest program per message
    pattern = defaultdict(list)  # (target, which levels failed) -> programs
    smallest = {}  # (target, level, message) -> (bytes, program, count)
    for p in progs:
        for t in targets:
            failed = tuple(lv for lv in levels if by[(p.name, t, lv)]["status"] != "ok")
            if failed:
                pattern[(t, failed)].append(p.name)
            for lv in failed:
                key = (t, lv, by[(p.name, t, lv)]["message"])
                prev = smallest.get(key)
                if prev is None:
                    smallest[key] = (size[p.name], p.name, 1)
                else:
                    smallest[key] = (*min(prev[:2], (size[p.name], p.name)), prev[2] + 1)
    reproduced = False
    if pattern:
        body = []
        for (t, failed), names in sorted(pattern.items()):
            only_default = "default" in failed and len(failed) < len(levels)
            reproduced |= only_default and t in SPEC_TARGETS
            expected = sum(1 for n in names if t in refused.get(n, {}))
            kind = ("DEFAULT LEVEL ONLY (candidate defect)" if only_default
                    else "every level (a refusal)" if len(failed) == len(levels) else "not at the default level")
            body.append([t, "+".join(failed), kind, len(names), expected, ", ".join(sorted(names)[:6])
                         + (" ..." if len(names) > 6 else "")])
        out.append("failures by target and by the levels that failed:\n" + _table(
            ["target", "levels failed", "which", "programs", "expected by layer-1", "programs (first 6)"], body))
        body = [[t, lv, f"`{msg}`", n, f"{name} ({b} bytes)"]
                for (t, lv, msg), (b, name, n) in sorted(smallest.items())]
        out.append("the smallest program per failure message:\n" + _table(
            ["target", "level", "tileiras said", "programs", "smallest"], body))
    else:
        out.append("no failures at any level")
    out.append("defect reproduced (a spec target fails at the default level, not at every level): "
               + ("YES" if reproduced else "no"))
    return "\n\n".join(out), reproduced


def kinds_table(progs) -> str:
    c = Counter(k for p in progs if p.kinds for k in p.kinds)
    unknown = sum(1 for p in progs if p.kinds is None)
    line = ", ".join(f"{k} {n}" for k, n in sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))
    return (f"programs per Instr kind ({len(c)} kinds; {unknown} programs of unknown kinds): {line}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "defect_sweep.csv"))
    ap.add_argument("--targets", default=",".join(SPEC_TARGETS + CONTROLS))
    ap.add_argument("--levels", default="default,0", help="'default' (tileiras' own, -O3) and/or 0..3")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="tileiras processes at a time")
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--only", choices=["layer1", "library"], help="sweep one half only")
    ap.add_argument("--summary", help="also write the summary (markdown) to this file")
    ap.add_argument("--h200-sizes", action="store_true", help="also the sizes of bench/results/spine_h200.json")
    a = ap.parse_args(argv)
    targets, levels = a.targets.split(","), a.levels.split(",")
    progs = programs(with_layer1=a.only != "library", with_library=a.only != "layer1", h200_sizes=a.h200_sizes)
    ver = tileiras_version()
    print(f"tileiras {ver} ({find_tileiras()}); {len(progs)} programs x {len(targets)} targets x "
          f"{len(levels)} levels, {a.jobs} at a time, timeout {a.timeout:g} s", file=sys.stderr)
    t0 = time.perf_counter()
    rows = sweep(progs, targets, levels, a.jobs, a.timeout)
    wall = time.perf_counter() - t0
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    with open(a.out, "w", newline="") as f:
        w = csv.DictWriter(f, ["program", "source", "bytes", "target", "level", "status", "cubin_bytes",
                               "seconds", "message"])
        w.writeheader()
        w.writerows(rows)
    text, reproduced = summarise(rows, progs, targets, levels)
    text = (f"tileiras {ver}, {time.strftime('%Y-%m-%d')}, {wall:.0f} s wall, {a.jobs} jobs\n\n"
            f"{text}\n\n{kinds_table(progs)}\n")
    print(text)
    print(f"wrote {a.out} ({len(rows)} rows)")
    if a.summary:
        Path(a.summary).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
