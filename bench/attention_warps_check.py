"""A lead from the sweep (bench/results/tune_h200.json): causal attention at bq = bk = 64 with the
entry hint num_worker_warps_per_cta = 8 answered differently from the first candidate. This checks
it against torch (SDPA in f32) over head dims, sizes, causal or not, warps 4 (tileiras' choice) or
8, tileiras' default level and -O0: the max error of each, and whether it is within the library's
tolerance for f16 (rtol = atol = 1e-2).

    PYTHONPATH=src python3 bench/attention_warps_check.py --out bench/results/attention_warps_h200.json
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import json

import torch

from tileir.kernels import attention


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    args = p.parse_args()
    rows = []
    for (bh, s, d), causal, (bq, bk), warps, opt in itertools.product(
            ((4, 512, 128), (8, 1024, 64), (128, 4096, 128)), (True, False), ((64, 64), (128, 64), (128, 128)),
            (0, 8), (None, 0)):
        if opt == 0 and s > 1024:
            continue  # -O0 at full size is slow and says nothing more
        torch.manual_seed(0)
        q, k, v = (torch.randn(1, bh, s, d, device="cuda").half() for _ in range(3))  # [B, H, S, D]
        o = torch.empty_like(q)
        rec = {"bh": bh, "s": s, "d": d, "causal": causal, "bq": bq, "bk": bk, "warps": warps,
               "opt_level": "default" if opt is None else opt}
        try:
            attention(q, k, v, o, causal=causal, fmt="f16", bq=bq, bk=bk, d_tile=d, warps=warps, opt_level=opt)
            want = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)
            err = (o.float() - want).abs()
            rec["max_err"] = round(float(err.max()), 5)
            rec["bad_lanes"] = int((err > 1e-2 + 1e-2 * want.abs()).sum())
            rec["ok"] = rec["bad_lanes"] == 0
        except Exception as e:
            rec["error"] = f"{type(e).__name__}: {e}"[:300]
        print(json.dumps(rec), flush=True)
        rows.append(rec)
    with open(args.out, "w") as f:
        json.dump({"date": datetime.date.today().isoformat(), "gpu": torch.cuda.get_device_name(0), "rows": rows},
                  f, indent=1)


if __name__ == "__main__":
    main()
