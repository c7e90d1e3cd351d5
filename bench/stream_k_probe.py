"""The stream-K product (kernels.stream_k: the last waves' K slices shared by 132 blocks) against what
the library runs today (gemm; x @ W^T: matmul_nt_any) and torch.matmul, f16 (x @ W^T bf16), do_bench
with the L2 flushed, at shapes whose cells make a fraction of a wave over whole ones (the suite's
N = 5000 rows, the 512-1000-row products into 11008 and 14336, the linear family's lowest rows) and
control shapes of whole waves. Each answer checked against torch's (max |diff| / max |torch|); a wrong
one is a finding, printed and kept. Two rounds, interleaved. GPU needed.

    PYTHONPATH=src python3 bench/stream_k_probe.py --out bench/results/stream_k_h200.json
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from timing import time_variants, write_rows  # noqa: E402

from tileir.autotune import this_gpu  # noqa: E402
from tileir.heuristics import matmul_walk, stream_k_plan  # noqa: E402
from tileir.kernels import gemm, stream_k  # noqa: E402
from tileir.kernels.gemm import plan  # noqa: E402
from tileir.kernels.matmul_t import matmul_nt_any  # noqa: E402

SHAPES = [(1000, 5000, 1000), (512, 5000, 1000), (2048, 5000, 1000), (4096, 5000, 1000), (512, 11008, 4096),
          (512, 14336, 4096), (1000, 11008, 4096), (1000, 4096, 4096), (3000, 3000, 768),
          (4096, 4096, 4096), (8192, 1024, 1024)]
NT_SHAPES = [(1000, 3072, 1024), (4096, 1536, 512), (512, 11008, 4096), (1000, 11008, 4096), (512, 14336, 4096),
             (1000, 4096, 4096)]  # x @ W^T (W [N, K]): the suite's linear_bf16 rows below 0.9x
CELLS = {"sk 128x128x64 w8": dict(tm=128, tn=128, tk=64, group=8, warps=8),  # 128 x 256 and tileiras' own warps spill
         "sk 128x128x32 w8": dict(tm=128, tn=128, tk=32, group=8, warps=8),
         "sk 128x128x64 w8 g1": dict(tm=128, tn=128, tk=64, group=1, warps=8)}


def one_shape(rows: list, m: int, n: int, k: int, rnd: int, cells: dict, weight_t: bool = False) -> None:
    g = torch.Generator(device="cuda").manual_seed(rnd)
    dt = torch.bfloat16 if weight_t else torch.float16  # the suite's linear family is bf16
    a = torch.randn(m, k, device="cuda", generator=g, dtype=dt) / k ** 0.5
    b = torch.randn(k, n, device="cuda", generator=g, dtype=dt)
    w = b.t().contiguous()
    c = torch.empty(m, n, device="cuda", dtype=dt)
    want = a @ b
    top = float(want.abs().max())
    if weight_t:
        calls = {"torch": lambda: torch.matmul(a, w.t(), out=c),
                 "matmul_nt_any (the library)": lambda: matmul_nt_any(a, w, c),
                 "without stream-K": lambda: matmul_nt_any(a, w, c, stream_k=False)}
    else:
        calls = {"torch": lambda: torch.matmul(a, b, out=c), "gemm (the library)": lambda: gemm(a, b, c),
                 "without stream-K": lambda: gemm(a, b, c, stream_k=False)}
    for name, cfg in cells.items():
        calls[name] = lambda cfg=cfg: stream_k(a, w if weight_t else b, c, config=cfg, weight_t=weight_t)

    def plan_of(name):  # what the library chose, on its rows
        if name.startswith("gemm"):
            return {"plan": plan(a, b)}
        if name.startswith("matmul_nt_any"):
            walk = matmul_walk(this_gpu(), "bf16", m, n, k, weight_t=True)
            return {"plan": {"stream_k": stream_k_plan(this_gpu(), "bf16", m, n, k, weight_t=True, walk=walk)}}
        return {}

    def error():
        err = round(float((c.float() - want.float()).abs().max()) / top, 5)
        return {"rel_err": err, "ok": bool(err < 2e-2)}

    head = {"shape": [m, n, k], "op": "x @ W^T bf16" if weight_t else "a @ b f16", "round": rnd}
    time_variants(rows, head, calls, error, "x_torch", extra=plan_of, prepare=lambda: c.fill_(float("nan")))


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--cells", default=",".join(CELLS), help="which of CELLS to run, comma-separated")
    args = p.parse_args()
    cells = {k: CELLS[k] for k in args.cells.split(",")}
    rows: list = []
    for rnd in range(args.rounds):
        for m, n, k in SHAPES:
            one_shape(rows, m, n, k, rnd, cells)
        for m, n, k in NT_SHAPES:
            one_shape(rows, m, n, k, rnd, cells, weight_t=True)
    write_rows(args.out, rows)


if __name__ == "__main__":
    main()
