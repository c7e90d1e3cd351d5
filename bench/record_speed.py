"""The host's cost of producing a kernel's bytes from nothing -- record, lower, encode (no GPU):
``timing.record_encode_ms`` (a fresh KernelFn each repetition, the median) for a few library kernels.

Each measurement runs in a fresh interpreter (this script again, as a worker), so that with
``--baseline-src`` the two checkouts are measured alike: rounds of one worker on the baseline's
sources, then one on this checkout's (A B A B ...), the machine's drift falling on both sides. A
round's figure is its worker's median; a side's is the median of its rounds.

    PYTHONPATH=src python3 bench/record_speed.py --out bench/results/record_speed_cpu.json
    git worktree add --detach /tmp/base 9eb0370
    PYTHONPATH=src python3 bench/record_speed.py --baseline-src /tmp/base/src --out ...

The baseline's matmul_f16 took its sizes as configuration; it is recorded at m = n = k = 8192, as
its own bench/h200.py did. The kernels other than matmul_f16 are measured on this checkout only.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
KERNELS = ("matmul_f16", "softmax", "layernorm", "attention")
SIZES_AS_CONFIG = {"m": 8192, "n": 8192, "k": 8192}  # the baseline's matmul (sizes were configuration then)


def worker(kernels: list[str], reps: int) -> dict:
    """Medians (ms) of record_encode_ms for ``kernels`` from the tileir this interpreter imports."""
    sys.path.insert(0, str(HERE))
    from timing import record_encode_ms

    import tileir
    import tileir.kernels as K

    out: dict = {"tileir": tileir.__file__, "ms": {}}
    for name in kernels:
        kern = getattr(K, name)
        cfg = {k: v for k, v in SIZES_AS_CONFIG.items() if k in kern.static}
        record_encode_ms(kern, reps=5, **cfg)  # warm: imports, the interpreter's own caches
        out["ms"][name] = record_encode_ms(kern, reps=reps, **cfg)
    return out


def run_worker(src: Path, kernels, reps: int) -> dict:
    env = dict(os.environ, PYTHONPATH=str(src))
    got = subprocess.run([sys.executable, __file__, "--worker", ",".join(kernels), "--reps", str(reps)],
                         env=env, capture_output=True, text=True, check=True)
    res = json.loads(got.stdout)
    if not Path(res["tileir"]).resolve().is_relative_to(src.resolve()):
        raise SystemExit(f"the worker for {src} imported {res['tileir']}: install tileir editable or not at all")
    return res["ms"]


def git_label(src: Path) -> str:
    try:
        rev = subprocess.run(["git", "-C", str(src), "rev-parse", "--short=7", "HEAD"], capture_output=True,
                             text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "baseline"
    return f"baseline_{rev}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernels", default=",".join(KERNELS))
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--reps", type=int, default=100, help="record_encode_ms repetitions a worker")
    ap.add_argument("--baseline-src", type=Path, help="another checkout's src: matmul_f16 there, interleaved")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        print(json.dumps(worker(a.worker.split(","), a.reps)))
        return
    kernels = a.kernels.split(",")
    now: dict = {k: [] for k in kernels}
    base: list = []
    for r in range(a.rounds):
        if a.baseline_src:
            base.append(run_worker(a.baseline_src, ["matmul_f16"], a.reps)["matmul_f16"])
        for k, ms in run_worker(SRC, kernels, a.reps).items():
            now[k].append(ms)
        print(f"round {r + 1}/{a.rounds}: " + (f"baseline {base[-1]:.3f} ms  " if base else "")
              + "  ".join(f"{k} {v[-1]:.3f}" for k, v in now.items()), file=sys.stderr)
    result: dict = {
        "date": datetime.date.today().isoformat(),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "how": f"bench/timing.py record_encode_ms, {a.reps} repetitions a worker process, the median of "
               f"{a.rounds} workers' medians" + (" (baseline and this checkout alternating)" if base else ""),
        "record_encode_ms": {k: round(statistics.median(v), 3) for k, v in now.items()},
    }
    if base:
        b, n = statistics.median(base), statistics.median(now["matmul_f16"])
        result[git_label(a.baseline_src)] = {
            "kernel": "matmul_f16", "baseline_config": SIZES_AS_CONFIG,
            "baseline_ms": round(b, 3), "now_ms": round(n, 3), "now_over_baseline": round(n / b, 3),
            "rounds_ms": {"baseline": [round(x, 3) for x in base], "now": [round(x, 3) for x in now["matmul_f16"]]},
        }
    text = json.dumps(result, indent=1)
    print(text)
    if a.out:
        a.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
