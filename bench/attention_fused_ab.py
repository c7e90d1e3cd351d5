"""Attention's backward two ways beside torch's: the three kernels (delta, dK/dV, dQ: the scores
and probabilities computed twice, once per walk) against the fused one (``fused=True``: dQ reduced
a tile at a time into an f32 accumulator in the dK/dV walk, then converted), each checked against
torch's own gradients before it is timed; torch's flash backward (SDPA) timed the same way
(triton's do_bench, median, L2 flushed); the fused path's parts timed alone at the rule's
configuration (delta, the accumulator's zeroing, the kernel, the conversion); and what the fused
kernel's reductions became in SASS (cuobjdump of its cubin, where triton ships one).

    PYTHONPATH=src python3 bench/attention_fused_ab.py --out bench/results/attention_fused_ab_h200.json
    ... --held-out   # the shapes heuristics.attention_training's "fused" entry was not fitted on
    ... --shapes 0 --held-out   # those alone

bench/results/attention_fused_ab_h200.json (2026-12-02) timed the earlier fused kernel, whose adds
were scalar atomics; attention_fused_tiles_h200.json (2026-12-04) has both ("fused": "scalar" the
removed one, true the tile reductions).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn.functional as F  # noqa: N812

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from training_device import TOL, ms_of, precompile  # noqa: E402

from tileir.kernels import attention_bwd as AB  # noqa: E402

# (B, H, S, D, causal): the benchmark's shapes, then the training example's (examples/07_training.py)
SHAPES = [(4, 32, 4096, 64, False), (4, 32, 4096, 128, True), (32, 8, 256, 64, True), (4, 32, 4096, 64, True),
          (8, 16, 1024, 128, True), (4, 32, 4096, 128, False)]
# (B, H, S, D, causal, fmt): lengths 512-16384, both formats, the rule's edge (S 1024, and blocks of 128
# rows just over and under the 132 SMs at 2048)
HELD_OUT = [(2, 16, 2048, 128, False, "bf16"), (1, 32, 8192, 64, True, "f16"), (16, 16, 512, 64, False, "f16"),
            (8, 8, 1024, 64, False, "bf16"), (4, 16, 2048, 64, True, "bf16"), (1, 16, 16384, 128, True, "f16"),
            (1, 8, 2048, 128, True, "f16"), (1, 9, 2048, 128, True, "f16"), (16, 32, 1024, 64, True, "f16"),
            (8, 16, 2048, 128, False, "f16"), (1, 32, 8192, 128, False, "f16"), (2, 16, 4096, 128, False, "bf16")]
# the three-kernel path's configurations as bench/results/training_h200.json chose them
SEPARATE = {"dkdv": {"bq": 64, "bk": 128, "warps": 8}, "dq": {"bq": 128, "bk": 64, "warps": 8}}
RULE = {"bq": 64, "bk": 128, "warps": 8, "t_views": False}  # heuristics.attention_training's "fused"


def fused_configs(d, causal):
    """The fused kernel's configurations timed at head dimension d: the rule's first (128 x 128 ran
    9.5-12x slower at D 128, attention_fused_tiles_h200.json; 32 x 128 and 128 x 64 causal answered
    wrong, attention_fused_rule_h200.json, and are refused); causal, the heaviest key blocks first."""
    if d > 64:  # the transposing views, every view load at latency 1, and (causal) the two together: the rule
        # takes the first causal and the second without the mask (heuristics.FUSED_D128_*); both at once untimed
        out = [RULE, dict(RULE, t_views=True), dict(RULE, latency=1)] + \
            ([dict(RULE, t_views=True, latency=1)] if causal else [])
    else:
        out = [RULE, dict(RULE, bq=128), dict(RULE, bq=128, latency=1)]
    return out + ([dict(RULE, heavy_first=True)] if causal else [])


def close(got, want, fmt) -> bool:
    rtol, atol = TOL[fmt]
    want = want.detach().double()
    return bool(torch.allclose(got.double(), want, rtol=2 * rtol, atol=2 * atol * float(want.abs().max())))


def sass_counts(kern) -> dict:
    """Counts of the atomic and reduction instructions in ``kern``'s loaded cubins' SASS."""
    try:
        import triton

        tool = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")
    except ImportError:
        return {"error": "no triton"}
    if not os.path.exists(tool):
        return {"error": f"no {tool}"}
    out = {}
    for site in kern._sites.values():
        for key, variant in site.variants.items():
            with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
                f.write(variant[0].cubin)
                f.flush()
                sass = subprocess.run([tool, "-sass", f.name], capture_output=True, text=True).stdout
            ops = re.findall(r"\b(UTMAREDG|RED|ATOM|ATOMG|REDG)[A-Z0-9._]*", sass)
            out[str(key)[:60]] = {
                "lines": sass.count("\n"),
                "atomics": {op: ops.count(op) for op in sorted(set(ops))},
                "examples": sorted(set(re.findall(r"\b(?:UTMAREDG|RED|ATOM|REDG|ATOMG)[A-Z0-9._]*", sass)))[:6],
                "hgmma": len(re.findall(r"\bHGMMA", sass)), "local": len(re.findall(r"\b(?:STL|LDL)\b", sass))}
    return out


def one(b, h, s, d, causal, fmt="f16"):
    dt = torch.float16 if fmt == "f16" else torch.bfloat16
    q, k, v, do = (torch.randn(b, h, s, d, device="cuda", dtype=dt) for _ in range(4))
    qg, kg, vg = (t.detach().requires_grad_() for t in (q, k, v))
    o_t = F.scaled_dot_product_attention(qg, kg, vg, is_causal=causal)
    want = torch.autograd.grad(o_t, (qg, kg, vg), do, retain_graph=True)
    torch_ms = ms_of(lambda: torch.autograd.grad(o_t, (qg, kg, vg), do, retain_graph=True))
    o, lse = AB.attention_forward(q, k, v, causal=causal)
    dtile = AB.head_tile(d)
    common = {"causal": causal, "fmt": fmt, "d_tile": dtile}
    delta = torch.empty(b, h, s, device="cuda")
    acc = torch.zeros(b, h, s, d, device="cuda")
    dq, dk, dv = (torch.empty_like(q) for _ in range(3))
    configs = fused_configs(d, causal)
    jobs = [(AB.attention_bwd_dkdv, (q, k, v, do, lse, delta, dk, dv), dict(common, **SEPARATE["dkdv"])),
            (AB.attention_bwd_dq, (q, k, v, do, lse, delta, dq), dict(common, **SEPARATE["dq"]))]
    jobs += [(AB.attention_bwd_fused, (q, k, v, do, lse, delta, dk, dv, acc), dict(common, **c)) for c in configs]
    errors = precompile(jobs)
    rec = {"shape": [b, h, s, d], "causal": causal, "fmt": fmt, "torch_ms": torch_ms,
           "precompile_errors": {str(i): e for i, e in errors.items()}}

    def run(fused, cfg):
        if fused:
            return AB.attention_backward(q, k, v, o, do, lse, dq, dk, dv, causal=causal, fused=True, dkdv_config=cfg)
        return AB.attention_backward(q, k, v, o, do, lse, dq, dk, dv, causal=causal, fused=False,
                                     dkdv_config=SEPARATE["dkdv"], dq_config=SEPARATE["dq"])

    rows = []
    for fused, cfg in [(False, SEPARATE)] + [(True, c) for c in configs]:
        r = {"fused": fused, "config": cfg}
        try:
            got = run(fused, cfg)
            torch.cuda.synchronize()
            r["ok"] = {n: close(g, w, fmt) for n, g, w in zip(("dq", "dk", "dv"), got, want)}
            if all(r["ok"].values()):
                r["ms"] = ms_of(lambda fused=fused, cfg=cfg: run(fused, cfg))
                r["speedup_vs_torch"] = round(torch_ms / r["ms"], 3)
        except Exception as e:  # a configuration tileiras refuses: kept with its reason
            r["error"] = f"{type(e).__name__}: {e}"[:300]
        rows.append(r)
        print(b, h, s, d, causal, fused, cfg, {k: r[k] for k in ("ms", "speedup_vs_torch", "ok", "error") if k in r},
              flush=True)
    rec["rows"] = rows
    timed = [r for r in rows if "ms" in r]
    best = min((r for r in timed if r["fused"]), key=lambda r: r["ms"], default=None)
    sep = next((r for r in timed if not r["fused"]), None)
    rec["best_fused"] = best and {k: best[k] for k in ("config", "ms", "speedup_vs_torch")}
    rec["separate"] = sep and {k: sep[k] for k in ("ms", "speedup_vs_torch")}
    try:  # the fused path's parts at the rule's configuration, each alone
        AB.attention_bwd_delta(o, do, delta, fmt=fmt, d_tile=dtile, bq=256)
        rec["parts_ms"] = {
            "delta": ms_of(lambda: AB.attention_bwd_delta(o, do, delta, fmt=fmt, d_tile=dtile, bq=256)),
            "zero": ms_of(lambda: acc.zero_()),
            "fused": ms_of(lambda: AB.attention_bwd_fused(q, k, v, do, lse, delta, dk, dv, acc, **common, **RULE)),
            "convert": ms_of(lambda: dq.copy_(acc))}
    except Exception as e:
        rec["parts_error"] = f"{type(e).__name__}: {e}"[:300]
    return rec


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--shapes", type=int, default=len(SHAPES), help="the first N shapes")
    p.add_argument("--budget-s", type=float, default=240, help="no new shape starts after this many seconds")
    p.add_argument("--held-out", action="store_true", help="HELD_OUT's shapes after SHAPES'")
    args = p.parse_args()
    start = time.time()
    out = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
           "timing": "triton.testing.do_bench median (L2 flushed); torch: autograd.grad of SDPA (flash)",
           "records": []}
    for shape in SHAPES[:args.shapes] + (HELD_OUT if args.held_out else []):
        if time.time() - start > args.budget_s:
            out["left_out"] = out.get("left_out", []) + [list(shape)]
            continue
        out["records"].append(one(*shape))
        with open(args.out, "w") as f:
            json.dump(out, f, separators=(",", ":"))
    out["sass_fused"] = sass_counts(AB.attention_bwd_fused)
    with open(args.out, "w") as f:
        json.dump(out, f, separators=(",", ":"))
    print(json.dumps(out["sass_fused"])[:3000])


if __name__ == "__main__":
    main()
