"""Attention forward at the suite's short sequences (S 512 and 1024, B*H*S = 2^18), where the rule's
128 x 128 blocks with 8 warps ran 0.60-0.74x SDPA: other query / key blocks, warps and occupancy,
beside SDPA and the rule's own call. Timed as the suite times (triton.testing.do_bench, L2
flushed, median), answers checked against SDPA in f32. Needs a GPU.

    PYTHONPATH=src python bench/attention_short_probe.py --out bench/results/attention_short_h200.json
"""

from __future__ import annotations

import argparse
import json

import torch
from timing import flushed_ms, write_rows

from tileir.kernels import attention

F = torch.nn.functional
SHAPES = ((32, 16, 512, 64, True), (32, 16, 512, 64, False), (16, 16, 1024, 64, True), (32, 16, 512, 128, True))
CONFIGS = ({"bq": 128, "bk": 128, "warps": 8}, {"bq": 128, "bk": 64, "warps": 8}, {"bq": 128, "bk": 64, "warps": 4},
           {"bq": 64, "bk": 64, "warps": 4}, {"bq": 128, "bk": 128, "warps": 8, "occupancy": 2},
           {"bq": 128, "bk": 64, "warps": 8, "occupancy": 2})



def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    a = p.parse_args()
    rows = []
    for b, h, s, d, causal in SHAPES:
        q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.float16) for _ in range(3))
        o = torch.empty_like(q)
        want = F.scaled_dot_product_attention(q[:1, :2].float(), k[:1, :2].float(), v[:1, :2].float(),
                                              is_causal=causal)
        sdpa = flushed_ms(lambda q=q, k=k, v=v, c=causal: F.scaled_dot_product_attention(q, k, v, is_causal=c))
        rule = flushed_ms(lambda q=q, k=k, v=v, o=o, c=causal: attention(q, k, v, o, causal=c))
        row = {"B": b, "H": h, "S": s, "D": d, "causal": causal, "sdpa_ms": sdpa, "rule_ms": rule, "configs": []}
        for cfg in CONFIGS:
            cfg = dict(cfg, d_tile=d)
            try:
                o.zero_()
                attention(q, k, v, o, causal=causal, **cfg)
                torch.cuda.synchronize()
                err = float((o[:1, :2].float() - want).abs().max())
                t = flushed_ms(lambda q=q, k=k, v=v, o=o, c=causal, cfg=cfg: attention(q, k, v, o, causal=c, **cfg))
                row["configs"].append(dict(cfg, ms=t, ratio=row["sdpa_ms"] / t, max_err=err))
            except Exception as e:  # noqa: BLE001  (a probe: record and go on)
                row["configs"].append(dict(cfg, error=repr(e)[:200]))
        rows.append(row)
        print(json.dumps(row), flush=True)
        write_rows(a.out, rows)


if __name__ == "__main__":
    main()
