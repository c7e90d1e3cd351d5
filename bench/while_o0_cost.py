"""What the while-O0 workaround costs where a CPU can see it (docs/assembler-defect.md, the sixth defect).

(a) The programs of the device evidence -- campaign 2's nine ``while-stale-carries`` failures (generator 2,
seeds 85 217 2374 4138 6651 7290 7529 8215 9254; all equal at -O0 on the H200,
bench/results/fuzz_while_O0_h200.json), 2926 as drawn and as shrunk
(bench/results/fuzz_repro_after2/errors2_repro/fuzz_device_error_2926.json) -- lowered, asked whether they
keep a while loop and what arguments ``assemble.kernel_args`` gives them, then assembled by tileiras for
sm_90 at -O3 (tileiras' default level, byte for byte) and at -O0: the median wall time of ``REPEATS`` runs
and the cubin's size. (b) How many of generator 2's and generator 3's first ``DRAWN`` programs keep a while
loop after the first-exit workaround (the share of a campaign assembled at -O0 now). The run time of -O0
code is not measured here: it needs the device. CPU only:
.venv/bin/python bench/while_o0_cost.py [out.json]"""

from __future__ import annotations

import datetime
import json
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))

import tileir as ti  # noqa: E402
from tileir import assemble as asm  # noqa: E402
from tileir.diff import fuzzgen as G  # noqa: E402
from tileir.diff.fuzzbuild import build  # noqa: E402
from tileir.diff.fuzzspec import Profile  # noqa: E402

OUT = os.path.join(ROOT, "bench", "results", "while_o0_cost_cpu.json")
STALE = (85, 217, 2374, 4138, 6651, 7290, 7529, 8215, 9254)
REPRO_2926 = os.path.join(ROOT, "bench", "results", "fuzz_repro_after2", "errors2_repro", "fuzz_device_error_2926.json")
REPEATS = 5
DRAWN = 400


def programs() -> dict:
    out = {str(s): G.generate(s, Profile(version=2)) for s in STALE}
    out["2926"] = G.generate(2926, Profile(version=2))
    with open(REPRO_2926) as f:
        out["2926 shrunk"] = json.load(f)["desc"]
    return out


def assembled(desc: dict, gpu: str = "sm_90") -> dict:
    k = ti.lower(build(desc).prog)
    data = ti.encode_kernel(k)
    row: dict = {"keeps_while": asm.holds_while_loop(k), "args": asm.kernel_args(k, asm.tileiras_version(), gpu)}
    for level in (3, 0):
        times = []
        for _ in range(REPEATS):
            t = time.perf_counter()
            cubin = asm.assemble(data, gpu, kernel="fuzz", program=k, opt_level=level, cache=False)
            times.append(time.perf_counter() - t)
        row[f"O{level}_s"] = round(statistics.median(times), 4)
        row[f"O{level}_bytes"] = len(cubin)
    row["O0_over_O3_s"] = round(row["O0_s"] / row["O3_s"], 2)
    row["O0_over_O3_bytes"] = round(row["O0_bytes"] / row["O3_bytes"], 2)
    return row


def share(version: int) -> dict:
    kept = lowered = 0
    for seed in range(1, DRAWN + 1):
        try:
            k = ti.lower(build(G.generate(seed, Profile(version=version))).prog)
        except Exception:  # refused by the recording: not a program of the campaign
            continue
        lowered += 1
        kept += asm.holds_while_loop(k)
    return {"generator": version, "seeds": f"1..{DRAWN}", "lowered": lowered, "keep_a_while_loop": kept}


def main(out: str = OUT) -> dict:
    rows = {}
    for name, desc in programs().items():
        rows[name] = assembled(desc)
        print(name, rows[name], flush=True)
    o3 = sum(r["O3_s"] for r in rows.values())
    o0 = sum(r["O0_s"] for r in rows.values())
    sizes = sorted(r["O0_over_O3_bytes"] for r in rows.values())
    doc = {"tool": "bench/while_o0_cost.py", "date": datetime.datetime.now(datetime.timezone.utc).isoformat(
        timespec="seconds"), "tileiras": asm.tileiras_version(), "gpu": "sm_90", "cpus": os.cpu_count(),
        "repeats": REPEATS, "programs": rows,
        "summary": {"assemble_s_O3": round(o3, 3), "assemble_s_O0": round(o0, 3), "O0_over_O3_s": round(o0 / o3, 2),
                    "cubin_O0_over_O3": {"min": sizes[0], "median": statistics.median(sizes), "max": sizes[-1]}},
        "share": [share(2), share(3)]}
    print(json.dumps(doc["summary"]), json.dumps(doc["share"]))
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    return doc


if __name__ == "__main__":
    main(*sys.argv[1:2])
