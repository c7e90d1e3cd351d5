"""Which tiles of attention's dK/dV walk answer right on the GPU: the walk of attention_bwd_dkdv
and attention_bwd_fused (kernels/attention_bwd.py's ``_dkdv``), recorded here WITHOUT the kernels'
refusals so that the refused configurations can be run, at key and query blocks (bq x bk) 64 x 128,
32 x 128 and 128 x 64, tileiras' warps or 8, causal or not, head dims 64 and 128, and -O0 where the
default level answered wrong. Each gradient against torch's f32 math at a shape with a partial last
block; a lane is bad past the f16 tolerance (rtol = atol = 2e-2 of the largest |gradient|).

    PYTHONPATH=src python3 bench/key_walk_check.py --out bench/results/key_walk_h200.json

The lead: bench/results/attention_fused_rule_h200.json, where the fused kernel at causal 32 x 128
(dK) and 128 x 64 (all three) with 8 warps answered wrong while the host reference is right at
every ratio of the two blocks (tests/test_backward.py).
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import json
import os
import sys

import torch
import torch.nn.functional as F  # noqa: N812

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from training_device import precompile  # noqa: E402

from tileir.dtypes import F32  # noqa: E402
from tileir.kernel import kernel  # noqa: E402
from tileir.kernels import attention_bwd as AB  # noqa: E402
from tileir.kernels.entry_hints import entry_hints  # noqa: E402
from tileir.markers import Shared  # noqa: E402

_Q, _KB, _ST, _OUT = AB._whole, AB._key_block, AB._STAT_WHOLE, AB._rows_out


@kernel(grid=AB._key_grid, hints=entry_hints, exact=("D",))
def dkdv_walk(q=_Q, k=_KB, v=_KB, do=_Q, lse=_ST, delta=_ST, dk=_OUT, dv=_OUT, *, causal: bool = False,
              scale: float | None = None, fmt: str = "f16", bq: int = 64, bk: int = 64, d_tile: int = 128,
              t_views: bool = True, warps: int = 0, occupancy: int = 0):
    """attention_bwd_dkdv's body, unrefused."""
    AB._dkdv(q, k, v, do, lse, delta, dk, dv, None, causal, scale, fmt, bq, bk, d_tile, t_views)


@kernel(grid=AB._key_grid, hints=entry_hints, exact=("D",))
def fused_walk(q=_Q, k=_KB, v=_KB, do=_Q, lse=_ST, delta=_ST, dk=_OUT, dv=_OUT, dq32=Shared(F32, AB._BHSD), *,
               causal: bool = False, scale: float | None = None, fmt: str = "f16", bq: int = 64, bk: int = 64,
               d_tile: int = 128, t_views: bool = True, warps: int = 0, occupancy: int = 0):
    """attention_bwd_fused's body, unrefused."""
    AB._dkdv(q, k, v, do, lse, delta, dk, dv, dq32, causal, scale, fmt, bq, bk, d_tile, t_views)


def bad_lanes(got, want):
    err = (got.float() - want).abs()
    return int((err > 2e-2 * float(want.abs().max())).sum()), round(float(err.max()), 5)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    args = p.parse_args()
    b, h, s = 2, 4, 1031
    inputs, jobs, plan = {}, [], []
    for d, causal in itertools.product((64, 128), (True, False)):
        torch.manual_seed(0)
        q, k, v, do = (torch.randn(b, h, s, d, device="cuda").half() for _ in range(4))
        qr, kr, vr = (t.float().requires_grad_() for t in (q, k, v))
        with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.MATH):
            F.scaled_dot_product_attention(qr, kr, vr, is_causal=causal).backward(do.float())
        o, lse = AB.attention_forward(q, k, v, causal=causal)
        delta = (o.float() * do.float()).sum(-1)
        bufs = [torch.empty_like(q), torch.empty_like(q), torch.zeros(b, h, s, d, device="cuda")]
        inputs[d, causal] = (q, k, v, do, lse, delta, bufs, {"dq": qr.grad, "dk": kr.grad, "dv": vr.grad})
        for (bq, bk), warps, kern in itertools.product(((64, 128), (32, 128), (128, 64)), (0, 8),
                                                        (dkdv_walk, fused_walk)):
            cfg = {"causal": causal, "fmt": "f16", "bq": bq, "bk": bk, "d_tile": d, "warps": warps,
                   "t_views": False}
            plan.append((d, causal, kern, cfg, None))
            args_ = (q, k, v, do, lse, delta, *bufs[:2]) + ((bufs[2],) if kern is fused_walk else ())
            jobs.append((kern, args_, cfg))
    precompile(jobs)
    rows = []

    def run(d, causal, kern, cfg, opt):
        q, k, v, do, lse, delta, (dk, dv, acc), want = inputs[d, causal]
        rec = {"kernel": kern.name, "d": d, "opt_level": "default" if opt is None else opt, **cfg}
        try:
            acc.zero_()
            extra = {} if opt is None else {"opt_level": opt}
            if kern is fused_walk:
                kern(q, k, v, do, lse, delta, dk, dv, acc, **cfg, **extra)
            else:
                kern(q, k, v, do, lse, delta, dk, dv, **cfg, **extra)
            torch.cuda.synchronize()
            got = {"dk": dk, "dv": dv, **({"dq": acc} if kern is fused_walk else {})}
            rec["bad_lanes"] = {g: bad_lanes(t, want[g])[0] for g, t in got.items()}
            rec["max_err"] = {g: bad_lanes(t, want[g])[1] for g, t in got.items()}
            rec["ok"] = not any(rec["bad_lanes"].values())
        except Exception as e:
            rec["error"] = f"{type(e).__name__}: {e}"[:300]
        print(json.dumps(rec), flush=True)
        rows.append(rec)
        return rec

    for item in plan:
        rec = run(*item)
        if rec.get("ok") is False:  # the same program at -O0: is it the optimiser?
            run(*item[:4], 0)
    with open(args.out, "w") as f:
        json.dump({"date": datetime.date.today().isoformat(), "gpu": torch.cuda.get_device_name(0),
                   "shape": [b, h, s], "tolerance": "2e-2 of the largest |gradient| (f16)", "rows": rows}, f,
                  indent=1)


if __name__ == "__main__":
    main()
