"""The spine's device check: every library kernel compiled by our pipeline, launched through our
runtime on torch tensors, compared with torch, at the assembler's workaround level (what
tileiras_args gives) and at tileiras' default level (-O3), with a median time for each.

    PYTHONPATH=src python3 bench/spine_device.py --out bench/results/spine_h200.json

Writes one JSON: the date, the GPU, the tileiras version, and per kernel and size the max
absolute error against torch, the tolerance, ok, and the median time at each level.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from timing import median_ms as _median_ms  # noqa: E402

from tileir.assemble import gpu_name_of_device, tileiras_args, tileiras_version
from tileir.kernels import CASES

SIZES = {
    "vadd": [1_000_003, 1 << 24],
    "saxpy": [1_000_003],
    "softmax": [(4096, 1000), (1024, 8192), (256, 20000)],
    "matmul_f16": [(1000, 1000, 1000), (2048, 2048, 2048)],
    "matmul_bf16": [(1000, 1000, 1000), (2048, 2048, 2048)],
    "matmul_tf32": [(1000, 1000, 1000), (2048, 2048, 2048)],
}

TORCH = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


def torch_inputs(name, size, gen):
    dev = "cuda"
    if name == "vadd":
        return [torch.randn(size, device=dev, generator=gen), torch.randn(size, device=dev, generator=gen),
                torch.zeros(size, device=dev)]
    if name == "saxpy":
        return [float(torch.randn(1, generator=gen, device=dev)), torch.randn(size, device=dev, generator=gen),
                torch.randn(size, device=dev, generator=gen)]  # the length: the tensors'
    if name == "softmax":
        r, c = size
        return [torch.randn(r, c, device=dev, generator=gen) * 4, torch.zeros(r, c, device=dev)]
    m, n, k = size
    dt = {"matmul_f16": torch.float16, "matmul_bf16": torch.bfloat16, "matmul_tf32": torch.float32}[name]
    a = (torch.randn(m, k, device=dev, generator=gen) / k ** 0.5).to(dt)
    b = torch.randn(k, n, device=dev, generator=gen).to(dt)
    return [a, b, torch.zeros(m, n, device=dev, dtype=dt)]


def torch_reference(name, args):
    if name == "vadd":
        return args[0] + args[1]
    if name == "saxpy":
        return torch.addcmul(args[2].double(), args[1].double(), torch.tensor(args[0], dtype=torch.float64,
                                                                               device="cuda")).float()
    if name == "softmax":
        return torch.softmax(args[0].double(), dim=1).float()
    return (args[0].double() @ args[1].double())


def time_it(fn, reps=20, warm=1):
    return _median_ms(fn, reps, warm)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--only", nargs="*")
    args = p.parse_args()
    gpu = gpu_name_of_device()
    ver = tileiras_version()
    gen = torch.Generator(device="cuda").manual_seed(0)
    rows = []
    for name, sizes in SIZES.items():
        if args.only and name not in args.only:
            continue
        case = CASES[name]
        for size in sizes:
            cfg = case.config(size)
            ins = torch_inputs(name, size, gen)
            want = torch_reference(name, [a.clone() if torch.is_tensor(a) else a for a in ins])
            row = {"kernel": name, "size": list(size) if isinstance(size, tuple) else size,
                   "tolerance": {"rtol": case.rtol, "atol": case.atol}}
            for label, level in (("workaround", None), ("O3", 3)):
                run_ins = [a.clone() if torch.is_tensor(a) else a for a in ins]
                try:
                    case.kernel(*run_ins, opt_level=level, **cfg)
                    torch.cuda.synchronize()
                    got = run_ins[case.output].double()
                    err = float((got - want.double()).abs().max())
                    if case.rtol == 0 and case.atol == 0:
                        ok = bool(torch.equal(run_ins[case.output], want.to(run_ins[case.output].dtype)))
                    else:
                        ok = bool(torch.allclose(got, want.double(), rtol=case.rtol, atol=case.atol))
                    ms = time_it(lambda k=case.kernel, a=run_ins, lv=level, c=cfg: k(*a, opt_level=lv, sync=False, **c))
                    row[label] = {"max_abs_err": err, "ok": ok, "median_ms": round(ms, 4)}
                except Exception as e:  # record the failure, keep measuring the rest
                    row[label] = {"error": f"{type(e).__name__}: {e}"[:500]}
            print(json.dumps(row), flush=True)
            rows.append(row)
    out = {"date": datetime.date.today().isoformat(), "gpu": torch.cuda.get_device_name(0), "arch": gpu,
           "tileiras": ver, "workaround_args": tileiras_args(ver, gpu), "torch": torch.__version__,
           "command": "PYTHONPATH=src python3 bench/spine_device.py --out bench/results/spine_h200.json",
           "results": rows}
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    bad = [r["kernel"] for r in rows if not r.get("workaround", {}).get("ok")]
    print("FAILED:" if bad else "all ok at the workaround level", bad)


if __name__ == "__main__":
    main()
