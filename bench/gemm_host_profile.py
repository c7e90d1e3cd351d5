"""Where a plain ``gemm`` call's host time goes on the GPU machine: host_us of gemm, of the kernel
called directly, of each piece, then a cProfile of 3000 gemm calls (top functions by own time).

    PYTHONPATH=src python3 bench/gemm_host_profile.py
"""

from __future__ import annotations

import cProfile
import pstats
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from timing import host_us  # noqa: E402

from tileir import autotune  # noqa: E402
from tileir.kernels import matmul_f16  # noqa: E402
from tileir.kernels.gemm import gemm, plan  # noqa: E402
from tileir.kernels.launching import fmt_of, launch  # noqa: E402


def main():
    m, n, k = 4096, 1024, 1024
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(k, n, device="cuda", dtype=torch.float16)
    c = torch.empty(m, n, device="cuda", dtype=torch.float16)
    gemm(a, b, c)
    matmul_f16(a, b, c)
    torch.cuda.synchronize()
    for name, fn in [("gemm", lambda: gemm(a, b, c)), ("matmul_f16 direct", lambda: matmul_f16(a, b, c)),
                     ("launch()", lambda: launch(matmul_f16, a, b, c)), ("plan", lambda: plan(a, b)),
                     ("fmt_of", lambda: fmt_of(a)), ("this_gpu", autotune.this_gpu),
                     ("torch.matmul", lambda: torch.matmul(a, b, out=c))]:
        print(f"{name:20s} {host_us(fn):8.2f} us", flush=True)
    (site,) = matmul_f16._sites.values()
    print("reader:", site.reader is not None, "tuned:", site.tuned, "variants:", list(site.variants))
    got = site.reader((a, b, c)) if site.reader else None
    print("reader answer:", None if got is None else (got[0], len(got[1]), got[2], got[3]))
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(3000):
        gemm(a, b, c)
    pr.disable()
    torch.cuda.synchronize()
    pstats.Stats(pr).sort_stats("tottime").print_stats(18)


if __name__ == "__main__":
    main()
