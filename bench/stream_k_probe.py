"""The stream-K product (kernels.stream_k: the last waves' K slices shared by 132 blocks) against what
the library runs today (gemm; x @ W^T: matmul_nt_any) and torch.matmul, f16 (x @ W^T bf16), do_bench
with the L2 flushed, at shapes whose cells make a fraction of a wave over whole ones (the suite's
N = 5000 rows, the 512-1000-row products into 11008 and 14336, the linear family's lowest rows) and
control shapes of whole waves; beside them the persistent walk on the stream-K kernel's own 128 x 128 cell
(what the cell costs without the sharing). Each answer checked against torch's (max |diff| / max
|torch|); a wrong one is a finding, printed and kept. GPU needed.

    PYTHONPATH=src python3 bench/stream_k_probe.py --out bench/results/stream_k_h200.json
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from timing import time_variants, write_rows  # noqa: E402

from tileir.kernels import gemm, matmul_persistent, stream_k  # noqa: E402
from tileir.kernels.gemm import plan  # noqa: E402
from tileir.kernels.launching import launch  # noqa: E402
from tileir.kernels.matmul_t import matmul_nt_any  # noqa: E402

SHAPES = [(1000, 5000, 1000), (512, 5000, 1000), (2048, 5000, 1000), (512, 14336, 4096), (4096, 4096, 4096)]
NT_SHAPES = [(1000, 3072, 1024), (512, 11008, 4096)]  # x @ W^T (W [N, K]): linear_bf16 rows below 0.9x
CELLS = {"sk 128x128x64 w8": dict(tm=128, tn=128, tk=64, group=8, warps=8),  # 128 x 256 and tileiras' own warps spill
         # each part alone (kernels.matmul_stream_k's parts): which one is slow
         "sk walked part": dict(tm=128, tn=128, tk=64, group=8, warps=8, parts=1),
         "sk shared part": dict(tm=128, tn=128, tk=64, group=8, warps=8, parts=2),
         # at 8 warps tileiras makes the walked part's every HGMMA wait; at 4 it does not (and the shared part
         # spills there): the walked part on one warpgroup
         "sk walked part w4": dict(tm=128, tn=128, tk=64, group=8, warps=4, parts=1)}
# the whole product as two launches: the walked waves at 4 warps, then the shared cells at 8
TWO_LAUNCHES = (dict(tm=128, tn=128, tk=64, group=8, warps=4, parts=1),
                dict(tm=128, tn=128, tk=64, group=8, warps=8, parts=2))
WALK_128 = dict(fmt="f16", tm=128, tn=128, tk=64, group=8, warps=8, programs=132)


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
                 "matmul_nt_any (the library)": lambda: matmul_nt_any(a, w, c)}
    else:
        calls = {"torch": lambda: torch.matmul(a, b, out=c), "gemm (the library)": lambda: gemm(a, b, c),
                 # the stream-K kernel's cell walked one cell at a time: what the cell costs without the sharing
                 "walk 128x128x64 w8": lambda: launch(matmul_persistent, a, b, c, **WALK_128),
                 "walk 128x128x64 w4": lambda: launch(matmul_persistent, a, b, c, **dict(WALK_128, warps=4))}
    for name, cfg in cells.items():
        calls[name] = lambda cfg=cfg: stream_k(a, w if weight_t else b, c, config=cfg, weight_t=weight_t)
    calls["sk two launches (walked w4, shared w8)"] = lambda: [
        stream_k(a, w if weight_t else b, c, config=cfg, weight_t=weight_t) for cfg in TWO_LAUNCHES]

    def plan_of(name):  # what the library chose, on its rows
        return {"plan": plan(a, b)} if name.startswith("gemm") else {}

    def error():  # over the cells written (a part alone leaves the other's NaN): their share is "written"
        done = ~c.isnan()
        err = round(float((c.float() - want.float())[done].abs().max()) / top, 5) if done.any() else None
        return {"rel_err": err, "written": round(float(done.float().mean()), 4),
                "ok": err is not None and bool(err < 2e-2)}

    head = {"shape": [m, n, k], "op": "x @ W^T bf16" if weight_t else "a @ b f16", "round": rnd}
    time_variants(rows, head, calls, error, "x_torch", extra=plan_of, prepare=lambda: c.fill_(float("nan")))


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--rounds", type=int, default=1)
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
