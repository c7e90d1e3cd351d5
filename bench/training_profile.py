"""Where a training step of examples/07_training.py goes, tileir.ops against pure torch: the
example's model and task, a few warm-up steps, then torch.profiler over five steps; the top kernels
by GPU time and the top host functions, and per backend the step's wall time, GPU time and
launches (issue 14's tokens/s).

    PYTHONPATH=src python3 bench/training_profile.py --out bench/results/training_profile_h200.json
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import time
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

ROOT = Path(__file__).resolve().parents[1]


def _example():
    spec = importlib.util.spec_from_file_location("training_example", ROOT / "examples" / "07_training.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--steps", type=int, default=5)
    args = p.parse_args()
    ex = _example()
    c, dt, dev = ex.GPU, torch.bfloat16, torch.device("cuda")
    torch.manual_seed(0)
    data, scored_from = ex.markov_batches(12 + args.steps, c["batch"], c["seq"], c["vocab"], 1)
    out = {"config": {k: c[k] for k in ("d_model", "heads", "head_dim", "layers", "seq", "batch")}, "backends": {}}
    for ops in (ex.TileirOps, ex.TorchOps):
        m = ex.TinyGPT(c["vocab"], c["seq"], c["d_model"], c["heads"], c["head_dim"], c["layers"]).to(dev)
        opt = torch.optim.AdamW(m.parameters(), lr=1e-3)

        def step(i, m=m, opt=opt, ops=ops):
            loss = ex.loss_of(m, ops, dt, data[i].to(dev), scored_from)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()

        for i in range(10):
            step(i)
        torch.cuda.synchronize()
        t = time.perf_counter()
        for i in range(10, 10 + args.steps):
            step(i)
        torch.cuda.synchronize()
        wall_ms = (time.perf_counter() - t) / args.steps * 1e3
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for i in range(10, 10 + args.steps):
                step(i)
            torch.cuda.synchronize()
        ev = prof.key_averages()
        gpu = sorted((e for e in ev if e.device_time_total > 0 and e.device_type.name == "CUDA"),
                     key=lambda e: -e.self_device_time_total)
        host = sorted(ev, key=lambda e: -e.self_cpu_time_total)
        rec = {"step_wall_ms": round(wall_ms, 3),
               "gpu_ms_per_step": round(sum(e.self_device_time_total for e in gpu) / 1e3 / args.steps, 3),
               "kernels_per_step": sum(e.count for e in gpu) / args.steps,
               "top_gpu": [{"name": e.key[:90], "ms_per_step": round(e.self_device_time_total / 1e3 / args.steps, 4),
                            "calls_per_step": e.count / args.steps} for e in gpu[:25]],
               "top_host": [{"name": e.key[:90], "self_ms_per_step": round(e.self_cpu_time_total / 1e3 / args.steps, 4),
                             "calls_per_step": e.count / args.steps} for e in host[:25]]}
        if ops.name == "tileir":  # the host's Python: where tileir's own calls spend their time
            import cProfile
            import io
            import pstats

            pr = cProfile.Profile()
            pr.enable()
            for i in range(10, 10 + args.steps):
                step(i)
            pr.disable()
            torch.cuda.synchronize()
            buf = io.StringIO()
            pstats.Stats(pr, stream=buf).sort_stats("tottime").print_stats(30)
            rec["cprofile_tottime"] = buf.getvalue().splitlines()[-40:]
            buf = io.StringIO()
            pstats.Stats(pr, stream=buf).sort_stats("cumulative").print_stats(40)
            rec["cprofile_cumulative"] = buf.getvalue().splitlines()[-50:]
            print("\n".join(rec["cprofile_tottime"]), flush=True)
        out["backends"][ops.name] = rec
        print(ops.name, json.dumps({k: v for k, v in rec.items() if not k.startswith("top")}), flush=True)
        for e in rec["top_gpu"][:15]:
            print("   gpu ", e, flush=True)
        for e in rec["top_host"][:12]:
            print("   host", e, flush=True)
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
