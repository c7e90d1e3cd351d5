"""Tutorial 3: matrix multiply with its tiles as configuration, and choosing them with autotune.

    python examples/03_matmul_autotune.py            # on the host reference (no GPU needed)
    python examples/03_matmul_autotune.py --device   # on the GPU: tune times the candidates there

Exits nonzero if an answer is wrong.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from typing import Any

import torch
from tutorial import tutorial_args

import tileir as ti
from tileir import F16, F32, FREE_AXIS, In, Out, PadZero, autotune, cells


# --8<-- [start:kernel]
# C [M, N] = A [M, K] @ B [K, N]. Block (i, j) of a 2-D grid computes the [tm, tn] cell (i, j) of C,
# walking K in steps of tk: A's K dimension and B's follow no grid axis (FREE_AXIS), so the loop
# names the cell it reads. Edge cells read zeros (PadZero adds nothing to a dot product) and C's
# partial cells are clipped on store, so M, N and K are any run-time sizes.
def _a(tm, tk):
    return In(F16, cells(["M", "K"], [tm, tk], along=[0, FREE_AXIS], pad=PadZero))


def _b(tk, tn):
    return In(F16, cells(["K", "N"], [tk, tn], along=[FREE_AXIS, 1], pad=PadZero))


def _c(tm, tn):
    return Out(F16, cells(["M", "N"], [tm, tn]))


# tuned=...: the keys a GPU call may leave to autotune.best (the tune cache's winner for the call's
# shape bucket); a call that names any of them runs what it names.
@ti.kernel(name="tutorial_matmul", tuned=("tm", "tn", "tk"))
def matmul(a=_a, b=_b, c=_c, *, tm: int = 64, tn: int = 64, tk: int = 32):
    """C = A @ B in f16 with f32 accumulation, any M, N, K; tiles tm x tn, K in steps of tk."""
    acc = ti.carry(ti.full([tm, tn], 0.0, F32))  # a value carried from one iteration to the next
    for kk in ti.d_range(0, ti.blocks_of(a, 1)):
        ti.set(acc, ti.mma(ti.load_at(a, [kk]), ti.load_at(b, [kk]), ti.get(acc)))  # tensor cores: f16 in, f32 acc
    ti.store_cell(c, ti.to(ti.get(acc), F16))

# --8<-- [end:kernel]

def main(argv=None) -> int:
    args = tutorial_args(argv, __doc__, "run and tune on the GPU (default: the host reference)")
    if args is None:
        return 2
    candidates: list[dict[str, Any]]  # passed as **cfg, which a type checker matches against every keyword
    if args.device:
        device, (m, n, k) = "cuda", (4096, 4096, 4096)
        candidates = [{"tm": tm, "tn": tn, "tk": tk} for tm in (64, 128) for tn in (64, 128, 256) for tk in (32, 64)]
    else:
        os.environ["TILEIR_INTERPRET"] = "1"  # plain calls run on the host reference
        # keep the tutorial's winner out of your own tune cache
        os.environ["TILEIR_CACHE_DIR"] = tempfile.mkdtemp(prefix="tileir-tutorial-")
        device, (m, n, k) = "cpu", (200, 136, 300)
        candidates = [{"tm": 64, "tn": 64, "tk": 32}, {"tm": 32, "tn": 64, "tk": 64}, {"tm": 128, "tn": 32, "tk": 32}]
    where = "the GPU" if args.device else "the host reference"

    gen = torch.Generator().manual_seed(0)
    a = (torch.randn(m, k, generator=gen) / k ** 0.5).half().to(device)
    b = torch.randn(k, n, generator=gen).half().to(device)
    want = a.float() @ b.float()
    ok = True

    # 1. Every tile configuration gives the same product (to rounding): tiles are configuration,
    #    each one recording, and the sizes still come from the arrays.
    for cfg in candidates[:3]:
        c = torch.empty(m, n, dtype=torch.float16, device=device)
        matmul(a, b, c, **cfg)
        err = (c.float() - want).abs().max().item()
        ok &= err < 1e-2
        print(f"[{m}x{k}] @ [{k}x{n}] on {where} with {cfg}: grid {matmul.grid(a, b, c, **cfg)}, "
              f"max |C - A@B| = {err:.1e}")

    # 2. autotune.tune runs every candidate, keeps those whose answer agrees with the first, times
    #    them and remembers the fastest under (GPU, kernel, shape bucket). On the GPU it times with
    #    CUDA events; without one it takes run= (a candidate's answer) and timer= (its time) --
    #    here the host reference's answer and wall time: the mechanics, not a GPU ranking.
    c = torch.zeros(m, n, dtype=torch.float16, device=device)
    results: list = []
    if args.device:
        gpu = None  # this machine's (sm_90 on an H200)
        win = autotune.tune(matmul, candidates, [a, b, c], results=results)
    else:
        gpu = "host"  # the name the winner is kept under

        def run(cfg):
            out = torch.zeros_like(c)
            matmul(a, b, out, **cfg)
            return [out.numpy()]

        def timer(call, cfg):
            t0 = time.perf_counter()
            call()
            return (time.perf_counter() - t0) * 1e3

        win = autotune.tune(matmul, candidates, [a, b, c], run=run, timer=timer, gpu=gpu, results=results)
    for r in sorted(results, key=lambda r: (r["ms"] is None, r["ms"] or 0)):
        state = f"{r['ms']:8.3f} ms" if r["ok"] else f"skipped: {r['error']}"
        print(f"  candidate {r['config']}: {state}")
    print(f"winner: {win}")

    # 3. best() reads the winner back for a call of the same shape bucket (sizes rounded up to
    #    powers of two), from the cache file; a plain GPU call that names none of the tuned keys
    #    gets it the same way.
    again = autotune.best(matmul, gpu, M=m, N=n, K=k)
    ok &= again == win
    print(f"autotune.best for M={m} N={n} K={k}: {again}")
    c = torch.empty(m, n, dtype=torch.float16, device=device)
    matmul(a, b, c)  # on the GPU: the winner's tiles; on the host reference: the kernel's defaults
    err = (c.float() - want).abs().max().item()
    ok &= err < 1e-2
    print(f"plain call: max |C - A@B| = {err:.1e}")
    if args.device:
        from tileir.runtime.timing import median_ms

        flop = 2 * m * n * k
        print(f"TFLOP/s: tuned {flop / median_ms(lambda: matmul(a, b, c), 30, 5) / 1e9:.0f}, "
              f"defaults {flop / median_ms(lambda: matmul(a, b, c, tm=64, tn=64, tk=32), 30, 5) / 1e9:.0f}, "
              f"torch {flop / median_ms(lambda: torch.matmul(a, b), 30, 5) / 1e9:.0f}")
    print("ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
