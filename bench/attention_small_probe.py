"""The training attention kernels at a training step's short sequences, by GPU time: what each of
``attention_fwd_lse``, ``attention_bwd_delta``, ``attention_bwd_dkdv`` and ``attention_bwd_dq`` takes
under several configurations, beside torch's SDPA forward and backward (its default backend, which
is cuDNN's on the H200, and flash).

Why GPU time: at these sizes a call through autograd is host-bound (~100 us of host time against
tens of GPU), so do_bench measured the host -- the example's 1.01x against SDPA (flash) in
attention_fused_ab_h200.json -- while the example's profile (training_profile_h200.json) has
torch's cuDNN attention at 58 us of GPU a layer against tileir's 177. The kernels' time here is the
sum of their durations in torch.profiler over ``--reps`` calls (no launch gaps), per call.

    PYTHONPATH=src python3 bench/attention_small_probe.py --out bench/results/attention_small_h200.json
"""

from __future__ import annotations

import argparse
import json
import math

import torch
import torch.nn.functional as F  # noqa: N812
from timing import KERNEL_SUM, kernel_us

from tileir import autotune, heuristics
from tileir.kernels.attention_bwd import attention_backward, attention_forward

SHAPES = [(32, 8, 256, 64, True), (32, 8, 256, 64, False), (16, 16, 512, 64, True), (32, 8, 256, 128, True),
          (8, 16, 1024, 128, True), (8, 32, 1024, 64, True)]
# (fwd, delta, dkdv, dq) configurations, run together: each profile times all four kernels; None: the rule's
CONFIGS = [
    (None, None, None, None),  # the rule's (until 2026-12-03 the first round's "rule" row read the GPU's name,
    # which the rule does not know, so it ran the 64 x 64 defaults: attention_small_h200.json)
    ({"bq": 64, "bk": 64}, {"bq": 128}, {"bq": 64, "bk": 64}, {"bq": 64, "bk": 64}),
    ({"bq": 64, "bk": 64, "occupancy": 2}, {"bq": 256}, {"bq": 64, "bk": 64, "occupancy": 2},
     {"bq": 64, "bk": 64, "occupancy": 2}),
    ({"bq": 128, "bk": 64, "warps": 8}, {"bq": 64, "warps": 2}, {"bq": 64, "bk": 64, "t_views": False},
     {"bq": 64, "bk": 64, "t_views": False}),
    ({"bq": 64, "bk": 64, "warps": 4}, {"bq": 128, "warps": 4}, {"bq": 64, "bk": 128, "warps": 8, "occupancy": 2},
     {"bq": 128, "bk": 64, "warps": 8, "occupancy": 2}),
    ({"bq": 128, "bk": 128, "occupancy": 2}, {"bq": 32}, {"bq": 32, "bk": 64}, {"bq": 64, "bk": 32}),
    ({"bq": 64, "bk": 128}, None, {"bq": 64, "bk": 64, "warps": 4, "occupancy": 2},
     {"bq": 64, "bk": 64, "warps": 4, "occupancy": 2}),
    # the long-sequence tiles (the rule's at every length before 2026-12-03; bk 128 of the forward at D 64)
    ({"bq": 128, "bk": 128, "warps": 8}, {}, {"bq": 64, "bk": 128, "warps": 8}, {"bq": 128, "bk": 64, "warps": 8}),
]
# --layout bshd: q, k, v views of one [B, S, 3, H, D] product and dO a view of a [B, S, H, D] gradient, as
# a transformer's attention gets them (the training example's), rather than contiguous [B, H, S, D]
KERNELS = ("attention_fwd_lse", "attention_bwd_delta", "attention_bwd_dkdv", "attention_bwd_dq")


def err(a, b) -> float:
    return float((a.float() - b.float()).abs().max())


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--reps", type=int, default=30)
    p.add_argument("--layout", choices=("bhsd", "bshd"), default="bhsd")
    p.add_argument("--shapes", type=int, default=len(SHAPES), help="the first N shapes")
    p.add_argument("--configs", default="", help="comma-separated indices into CONFIGS (default: all)")
    args = p.parse_args()
    configs = [CONFIGS[int(i)] for i in args.configs.split(",")] if args.configs else CONFIGS
    dev, gpu = torch.device("cuda"), torch.cuda.get_device_name()
    rows = []
    for b, h, s, d, causal in SHAPES:
        torch.manual_seed(0)
        q, k, v, do = (torch.randn(b, h, s, d, device=dev, dtype=torch.float16) for _ in range(4))
        scale = 1.0 / math.sqrt(d)
        qf, kf, vf = (t.float().requires_grad_() for t in (q, k, v))
        with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.MATH):
            of = F.scaled_dot_product_attention(qf, kf, vf, is_causal=causal)
            want = (of, *torch.autograd.grad(of, (qf, kf, vf), do.float()))
        rec = {"shape": [b, h, s, d], "causal": causal, "fmt": "f16", "layout": args.layout, "torch": {},
               "tileir": []}
        for name, backend in (("default", None), ("cudnn", torch.nn.attention.SDPBackend.CUDNN_ATTENTION),
                              ("flash", torch.nn.attention.SDPBackend.FLASH_ATTENTION)):
            qt, kt, vt = (t.clone().requires_grad_() for t in (q, k, v))

            def fwd(qt=qt, kt=kt, vt=vt, causal=causal):
                return F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal)

            def both(qt=qt, kt=kt, vt=vt, do=do):
                o = fwd()
                torch.autograd.grad(o, (qt, kt, vt), do)

            try:
                if backend is None:
                    f_us, fb_us = kernel_us(fwd, args.reps), kernel_us(both, args.reps)
                else:
                    with torch.nn.attention.sdpa_kernel(backend):
                        f_us, fb_us = kernel_us(fwd, args.reps), kernel_us(both, args.reps)
                rec["torch"][name] = {"fwd_us": f_us["total"], "bwd_us": round(fb_us["total"] - f_us["total"], 2),
                                      "kernels": fb_us}
            except Exception as e:  # noqa: BLE001  (a probe: record and go on)
                rec["torch"][name] = {"error": repr(e)[:200]}
        rule = heuristics.attention_training(autotune.this_gpu(), b, h, s, d, causal)
        for fcfg, dcfg, kvcfg, qcfg in configs:
            delta = rule["delta"] if dcfg is None else dcfg
            cfg = {"fwd": fcfg or rule["fwd"], "delta": delta, "dkdv": kvcfg or rule["dkdv"],
                   "dq": qcfg or rule["dq"], "rule": fcfg is None}
            row = {"config": cfg}
            try:
                box = {}

                def train_attn(cfg=cfg, box=box, q=q, k=k, v=v, do=do, causal=causal, scale=scale):
                    o, lse = attention_forward(q, k, v, causal=causal, scale=scale, **cfg["fwd"])
                    box["o"] = o
                    box["grads"] = attention_backward(q, k, v, o, do, lse, causal=causal, scale=scale,
                                                      delta_config=cfg["delta"], dkdv_config=cfg["dkdv"],
                                                      dq_config=cfg["dq"])

                us = kernel_us(train_attn, args.reps)
                row["kernels_us"] = {n: round(sum(v for key, v in us.items() if key.startswith(n)), 2) for n in KERNELS}
                row["fwd_us"] = row["kernels_us"]["attention_fwd_lse"]
                row["bwd_us"] = round(us["total"] - row["fwd_us"], 2)
                got = (box["o"], *box["grads"])
                row["max_err"] = {n: err(g, w) for n, g, w in zip(("o", "dq", "dk", "dv"), got, want)}
            except Exception as e:  # noqa: BLE001
                row["error"] = repr(e)[:300]
            rec["tileir"].append(row)
            print(rec["shape"], causal, json.dumps({k: row.get(k) for k in ("fwd_us", "bwd_us", "kernels_us",
                                                                             "error")}), flush=True)
        ok = [r for r in rec["tileir"] if "kernels_us" in r and max(r["max_err"].values()) < 5e-2]
        best = {n: min(ok, key=lambda r, n=n: r["kernels_us"][n]) for n in KERNELS} if ok else {}
        rec["best"] = {n: {"config": r["config"][{"attention_fwd_lse": "fwd", "attention_bwd_delta": "delta",
                                                   "attention_bwd_dkdv": "dkdv", "attention_bwd_dq": "dq"}[n]],
                           "us": r["kernels_us"][n]} for n, r in best.items()}
        print("torch", json.dumps({k: {kk: vv for kk, vv in v.items() if kk != "kernels"}
                                   for k, v in rec["torch"].items()}), flush=True)
        print("best", json.dumps(rec["best"]), flush=True)
        rows.append(rec)
    with open(args.out, "w") as f:
        json.dump({"device": gpu, "torch": torch.__version__, "reps": args.reps,
                   "timing": KERNEL_SUM,
                   "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
