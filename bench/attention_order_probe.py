"""Causal attention's block order (issue 12: load balancing): the rule's configuration with the query
blocks on the grid's first axis (each head's blocks side by side, the default) against
``heavy_first`` (the query blocks on the slowest axis, the last first: the blocks with the most keys
start first and the last wave holds the lightest), on the suite's attention shapes (B * H * S =
2^18 x 16, H 16, f16, head dims 64 and 128), causal and not, beside SDPA; answers checked against
f32 SDPA. GPU needed.

    PYTHONPATH=src python3 bench/attention_order_probe.py --out bench/results/attention_order_h200.json
    # the causal shapes the rule gives heavy_first (S >= 4096) and the headline's B4 H32 S4096 D128, both
    # orders interleaved, three rounds
    PYTHONPATH=src python3 bench/attention_order_probe.py --long --rounds 3 \
        --out bench/results/attention_order_long_h200.json
    # the rule's configuration one block of O a block against walked by persistent blocks (attention's
    # ``programs``: 132 x the blocks an SM holds, the heaviest first), on SHAPES, causal and not
    PYTHONPATH=src python3 bench/attention_order_probe.py --walk --out bench/results/attention_walk_h200.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch
import torch.nn.functional as F  # noqa: N812

sys.path.insert(0, str(Path(__file__).parent))
from timing import checked_ms, flushed_ms, write_rows  # noqa: E402

from tileir.heuristics import rule  # noqa: E402
from tileir.kernels import attention  # noqa: E402

SHAPES = [(32, 16, 512), (16, 16, 1024), (8, 16, 2048), (4, 16, 4096), (2, 16, 8192), (1, 16, 16384)]
LONG = [(4, 16, 4096), (2, 16, 8192), (1, 16, 16384), (4, 32, 4096)]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--long", action="store_true", help="causal only, the shapes of LONG")
    p.add_argument("--rounds", type=int, default=1, help="time both orders this many times, alternating")
    p.add_argument("--walk", action="store_true",
                   help="one block of O a block against the persistent walk (one round: --rounds is not read)")
    args = p.parse_args()
    rows = []
    for d in (64, 128):
        for b, h, s in LONG if args.long else SHAPES:
            q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.float16) for _ in range(3))
            o = torch.empty_like(q)
            for causal in (True,) if args.long else (True, False):
                want = F.scaled_dot_product_attention(q[:1, :2].float(), k[:1, :2].float(), v[:1, :2].float(),
                                                      is_causal=causal)
                sdpa_ms = flushed_ms(lambda c=causal, q=q, k=k, v=v: F.scaled_dot_product_attention(
                    q, k, v, is_causal=c))
                cfg = rule("attention", "sm_90", {"B": b, "H": h, "S": s, "D": d, "H_kv": h, "S_kv": s,
                                                  "causal": causal, "fmt": "f16"}) or {}
                if args.walk:  # the walk takes the heaviest first itself: heavy_first off beside it
                    one = {key: val for key, val in cfg.items() if key != "heavy_first"}
                    walks = [dict(one, programs=132 * max(1, one.get("occupancy", 1)))]
                    variants = [(0, cfg)] + [(0, w) for w in walks]
                else:
                    variants = [(n, dict(cfg, heavy_first=first)) for n in range(args.rounds)
                                for first in (False, True)]
                for rnd, c in variants:
                    order = c.get("heavy_first", False)

                    def fn(c=c, causal=causal, q=q, k=k, v=v, o=o):
                        attention(q, k, v, o, causal=causal, **c)

                    r = {"shape": [b, h, s, d], "causal": causal, "heavy_first": order, "round": rnd, "config": c,
                         "sdpa_ms": sdpa_ms, **checked_ms(fn, o, want, sdpa_ms, part=lambda o: o[:1, :2])}
                    rows.append(r)
                    print(json.dumps(r), flush=True)
            write_rows(args.out, rows, timing="ms, sdpa_ms: do_bench (L2 flushed) median; ratio: sdpa_ms / ms")


if __name__ == "__main__":
    main()
