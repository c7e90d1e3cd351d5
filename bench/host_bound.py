"""Which of the suite's slow shapes are bound by the host: for named suite shapes, tileir's and
torch's host time per call (bench/timing.host_us: calls issued without waiting, the clock stopped
before the device drains) beside the suite's GPU timer (do_bench, L2 flushed). A call whose host
time passes the flush's ~55 us shows it in do_bench's figure too.

    PYTHONPATH=src python3 bench/host_bound.py --out bench/results/host_bound_h200.json
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
import suite  # noqa: E402
from timing import host_us  # noqa: E402

NAMES = ["scan f32 N=2048", "scan f32 N=1048576", "scan f32 N=268435456", "sum f32 N=8192", "sum f32 N=4194304",
         "max f32 N=2048", "vadd f32 N=2048", "softmax f32 R=1 C=128", "softmax f32 R=64 C=512",
         "softmax f16 R=32768 C=1000", "softmax f16 R=1 C=65536", "layernorm f16 R=1 C=1024",
         "histogram i32 N=1048576 bins=256", "matmul_f16 M=16 N=1024 K=1024", "matmul_f16 M=4096 N=4096 K=4096",
         "attention f16 B=32 H=16 H_kv=16 S=512 D=64 causal", "matmul_3xtf32 M=16 N=4096 K=4096"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    args = p.parse_args()
    shapes = {s.name: s for s in suite.all_shapes()}
    bench = suite.gpu_timer(quick=True)
    rows = []
    for name in NAMES:
        sh = shapes.get(name)
        if sh is None:
            rows.append({"name": name, "error": "not in the suite"})
            continue
        try:
            ins = sh.make("cuda")
            sh.tileir(ins)
            torch.cuda.synchronize()
            ti, th = (lambda sh=sh, ins=ins: sh.tileir(ins)), (lambda sh=sh, ins=ins: sh.torch(ins))
            r = {"name": name, "tileir_host_us": round(host_us(ti), 2), "torch_host_us": round(host_us(th), 2),
                 "tileir_ms": round(bench(ti), 5), "torch_ms": round(bench(th), 5)}
        except Exception as e:  # noqa: BLE001 - a shape that fails is a finding; the rest go on
            r = {"name": name, "error": f"{type(e).__name__}: {str(e)[:200]}"}
        rows.append(r)
        print(json.dumps(r), flush=True)
        torch.cuda.empty_cache()
    Path(args.out).write_text(json.dumps({"date": datetime.date.today().isoformat(),
                                          "gpu": torch.cuda.get_device_name(0), "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
