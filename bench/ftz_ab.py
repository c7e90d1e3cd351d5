"""The attention kernels' probabilities two ways, side by side in one process, interleaved over rounds:
as the library writes them now (one fma and an exp2 with flush_to_zero: ``attention.softmax_step``,
``attention_bwd._probabilities``) and as they were written before (a multiply, a subtraction and an exp2
without the flag: tileiras then wraps each exp2 in a subnormal range check and two conditional
multiplies). The "before" kernels are the library's own, their bodies re-bound to the old helpers
(``twin``): the same configuration, tiles and grid, only the arithmetic differs. SDPA beside them.

- forward: ``tileir.kernels.attention`` as the library calls it (the rule's configuration), at the
  suite's attention shapes (head dim 64 and 128, 512-16384 keys, causal and not, one grouped-query row);
- backward: ``attention_bwd_fused`` alone at the rule's configuration (``LONG`` at 1024 keys), and the whole
  ``attention_backward`` the library runs, at the training rows' shapes, against SDPA's backward.

The second run (ftz_ab_prefetch_h100.json) also timed a ``prefetch`` variant of the forward, since
removed: each unmasked step issued the next key block's scores before this block's softmax. It ran
slower at 19 of 22 shapes (0.70-0.88x SDPA against 0.76-0.96).

Every output is checked against SDPA's before it is timed.

    PYTHONPATH=src python3 bench/ftz_ab.py --out bench/results/ftz_ab_h200.json
"""

from __future__ import annotations

import argparse
import importlib
import time
import types

import torch
import torch.nn.functional as F  # noqa: N812
from timing import FLUSHED, flushed_ms, write_rows

from tileir import surface as ti
from tileir.heuristics import attention_training
from tileir.kernels import attention, attention_bwd_fused

A = importlib.import_module("tileir.kernels.attention")
AB = importlib.import_module("tileir.kernels.attention_bwd")

# (B, H, H_kv, S, D): the suite's attention rows (B * H * S constant), the headline's, a grouped-query one
FORWARD = [(32, 16, 16, 512, 64), (32, 16, 16, 512, 128), (16, 32, 8, 512, 128), (16, 16, 16, 1024, 64),
           (16, 16, 16, 1024, 128), (8, 16, 16, 2048, 64), (8, 16, 16, 2048, 128), (4, 32, 32, 4096, 64),
           (4, 32, 32, 4096, 128), (1, 16, 16, 16384, 64), (1, 16, 16, 16384, 128)]
# (B, H, S, D, causal): the training rows' shapes (bench/training_device.py, attention_fused_ab.py)
BACKWARD = [(4, 32, 4096, 64, False), (4, 32, 4096, 64, True), (4, 32, 4096, 128, False), (4, 32, 4096, 128, True),
            (8, 16, 1024, 128, True), (2, 16, 8192, 128, True)]
# the fused kernel's configuration where heuristics.attention_training has none (1024 keys): its long-sequence
# tiles (the committed runs timed these at every shape, before the rule's D 128 hints)
LONG = {"bq": 64, "bk": 128, "warps": 8, "t_views": False}


def mul_sub_step(m_i, l_i, acc, sc, qk_scale, vt, fmt):
    """softmax_step as it was written before: sc * scale - m, exp2 without flush_to_zero."""
    m_old = ti.get(m_i)
    m_new = ti.max(m_old, ti.reduce_max(sc, keepdims=True) * qk_scale)
    p = ti.exp2(sc * qk_scale - m_new)
    alpha = ti.exp2(m_old - m_new)
    ti.set(l_i, ti.get(l_i) * alpha + ti.reduce_sum(p, keepdims=True))
    ti.set(acc, ti.mma(ti.to(p, fmt), vt, ti.get(acc) * alpha))
    ti.set(m_i, m_new)


def mul_sub_probabilities(scores, c, neg_lse2):
    return ti.exp2(scores * c + neg_lse2)


def twin(kern, module, **replace):
    """A fresh twin of library kernel ``kern`` whose body, and every function of ``module`` it calls,
    see ``replace`` in place of the module's globals of those names."""
    g = dict(vars(module))
    g.update(replace)

    def rebind(f):
        out = types.FunctionType(f.__code__, g, f.__name__, f.__defaults__, f.__closure__)
        out.__kwdefaults__, out.__annotations__ = f.__kwdefaults__, f.__annotations__
        return out

    for name, obj in list(g.items()):
        if isinstance(obj, types.FunctionType) and obj.__module__ == module.__name__ and name not in replace:
            g[name] = rebind(obj)
    t = kern.fresh()
    t.fn = rebind(kern.fn)
    return t


def err(got, want) -> float:
    return float((got.float() - want.float()).abs().max())


def interleaved(impls: dict, rounds: int) -> dict:
    """{name: the fastest of ``rounds`` flushed medians}, the implementations timed in turn each round."""
    times: dict = {n: [] for n in impls}
    for _ in range(rounds):
        for n, f in impls.items():
            times[n].append(flushed_ms(f))
    return {n: min(t) for n, t in times.items()}


def forward_row(before, b, h, h_kv, s, d, causal, rounds) -> dict:
    q = torch.randn(b, h, s, d, device="cuda", dtype=torch.float16)
    k, v = (torch.randn(b, h_kv, s, d, device="cuda", dtype=torch.float16) for _ in range(2))
    outs = {n: torch.empty_like(q) for n in ("fma_ftz", "mul_sub")}
    sizes = {"B": b, "H": h, "S": s, "D": d, "H_kv": h_kv, "S_kv": s}
    rule = attention.tuned_config({"causal": causal}, "sm_90", sizes)  # what the library's call runs
    impls = {"sdpa": lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=h_kv != h),
             "fma_ftz": lambda: attention(q, k, v, outs["fma_ftz"], causal=causal),
             "mul_sub": lambda: before(q, k, v, outs["mul_sub"], causal=causal)}
    want = impls["sdpa"]()
    for n in outs:
        impls[n]()
    torch.cuda.synchronize()
    row = {"part": "forward", "shape": [b, h, h_kv, s, d], "causal": causal, "rule": rule,
           "max_err": {n: err(o, want) for n, o in outs.items()}, "ms": interleaved(impls, rounds)}
    row["vs_sdpa"] = {n: round(row["ms"]["sdpa"] / row["ms"][n], 3) for n in outs}
    row["speedup"] = round(row["ms"]["mul_sub"] / row["ms"]["fma_ftz"], 3)
    return row


def backward_row(before, b, h, s, d, causal, rounds) -> dict:
    q, k, v, do = (torch.randn(b, h, s, d, device="cuda", dtype=torch.float16) for _ in range(4))
    qg, kg, vg = (t.detach().requires_grad_() for t in (q, k, v))
    o_t = F.scaled_dot_product_attention(qg, kg, vg, is_causal=causal)
    want = torch.autograd.grad(o_t, (qg, kg, vg), do, retain_graph=True)
    o, lse = AB.attention_forward(q, k, v, causal=causal)
    delta = torch.empty(b, h, s, device="cuda")
    AB.attention_bwd_delta(o, do, delta, fmt="f16", d_tile=d, bq=256)
    acc = torch.zeros(b, h, s, d, device="cuda")
    dq, dk, dv = (torch.empty_like(q) for _ in range(3))
    fused = attention_training("sm_90", b, h, s, d, causal).get("fused", LONG)
    cfg = dict(fused, causal=causal, fmt="f16", d_tile=d)
    impls = {"sdpa": lambda: torch.autograd.grad(o_t, (qg, kg, vg), do, retain_graph=True),
             "library": lambda: AB.attention_backward(q, k, v, o, do, lse, dq, dk, dv, causal=causal),
             "fused_fma_ftz": lambda: attention_bwd_fused(q, k, v, do, lse, delta, dk, dv, acc, **cfg),
             "fused_mul_sub": lambda: before(q, k, v, do, lse, delta, dk, dv, acc, **cfg)}
    checks = {}
    for n in ("fused_fma_ftz", "fused_mul_sub"):
        acc.zero_()
        impls[n]()
        torch.cuda.synchronize()
        checks[n] = {"dq": err(acc, want[0]), "dk": err(dk, want[1]), "dv": err(dv, want[2])}
    got = impls["library"]()
    torch.cuda.synchronize()
    checks["library"] = {n: err(g, w) for n, g, w in zip(("dq", "dk", "dv"), got, want)}
    row = {"part": "backward", "shape": [b, h, s, d], "causal": causal, "fused_config": fused, "max_err": checks,
           "ms": interleaved(impls, rounds)}
    row["library_vs_sdpa"] = round(row["ms"]["sdpa"] / row["ms"]["library"], 3)
    row["fused_speedup"] = round(row["ms"]["fused_mul_sub"] / row["ms"]["fused_fma_ftz"], 3)
    return row


def forward_rows(rounds: int) -> list:
    before = twin(attention, A, softmax_step=mul_sub_step)
    rows = []
    for shape in FORWARD:
        for causal in (False, True):
            rows.append(forward_row(before, *shape, causal, rounds))
            print(rows[-1], flush=True)
    return rows


def backward_rows(rounds: int) -> list:
    before = twin(attention_bwd_fused, AB, _probabilities=mul_sub_probabilities)
    rows = []
    for shape in BACKWARD:
        rows.append(backward_row(before, *shape, rounds))
        print(rows[-1], flush=True)
    return rows


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds; each implementation's fastest kept")
    p.add_argument("--parts", default="forward,backward")
    args = p.parse_args()
    torch.manual_seed(0)
    start, rows = time.time(), []
    for part in args.parts.split(","):
        rows += {"forward": forward_rows, "backward": backward_rows}[part](args.rounds)
        write_rows(args.out, rows, FLUSHED + f"; the fastest of {args.rounds} interleaved rounds")
    print(f"{len(rows)} rows in {time.time() - start:.0f} s")


if __name__ == "__main__":
    main()
