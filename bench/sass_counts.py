"""What tileiras made of a kernel, counted in its SASS: the cubin a launch on arrays of the given
sizes would load (its stride and alignment claims included), disassembled with cuobjdump (the
nvidia-cuda-cuobjdump and -nvdisasm wheels, or a CUDA toolkit's; ``CUOBJDUMP`` names the binary, and
nvdisasm must be on PATH), and counted by instruction class: spills (STL / LDL), tensor-core ops (HGMMA; QGMMA for fp8),
TMA (UTMALDG / UTMASTG), plain global loads and stores (LDG / STG), shared stores (STS). Needs tileiras,
not a GPU.

    PYTHONPATH=src python3 bench/sass_counts.py --out bench/results/sass_persistent_cpu.json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import tempfile

import numpy as np

from tileir.kernels import matmul_f8, matmul_f16, matmul_persistent

CLASSES = {"STL": r"\bSTL\b", "LDL": r"\bLDL\b", "HGMMA": r"\bHGMMA\b", "QGMMA": r"\bQGMMA\b",
           "UTMALDG": r"\bUTMALDG\b", "UTMASTG": r"\bUTMASTG\b", "LDG": r"\bLDG\b", "STG": r"\bSTG\b",
           "STS": r"\bSTS\b"}

# (label, kernel, configuration, M, N, K): the one-cell product and the persistent one on the cells the
# suite's N = 5000 rows take
CASES = [
    ("matmul_f16 128x256x64", matmul_f16, {"tm": 128, "tn": 256, "tk": 64, "group": 8, "warps": 8}, 1000, 5000, 1000),
    ("matmul_f16 128x128x64", matmul_f16, {"tm": 128, "tn": 128, "tk": 64, "group": 8, "warps": 8}, 1000, 5000, 1000),
    ("persistent 128x256x64", matmul_persistent, {"tm": 128, "tn": 256, "tk": 64, "warps": 8}, 1000, 5000, 1000),
    ("persistent 128x256x32", matmul_persistent, {"tm": 128, "tn": 256, "tk": 32, "warps": 8}, 4096, 4096, 4096),
    ("persistent 128x128x64", matmul_persistent, {"tm": 128, "tn": 128, "tk": 64, "warps": 8}, 1000, 5000, 1000),
    ("persistent 64x256x64", matmul_persistent, {"tm": 64, "tn": 256, "tk": 64, "warps": 4}, 1000, 5000, 1000),
    # the fp8 product (A [M, K], B [N, K] read through a transposing view) on F8_TILES' cell
    ("matmul_f8 128x128x256", matmul_f8, {"tm": 128, "tn": 128, "tk": 256, "group": 8, "warps": 8}, 8192, 8192, 8192),
    ("matmul_f8 128x256x128", matmul_f8, {"tm": 128, "tn": 256, "tk": 128, "group": 8, "warps": 8}, 8192, 8192, 8192),
]


def cubin_for(kern, cfg, m, n, k) -> bytes:
    """The cubin a launch on f16 arrays [m, k], [k, n], [m, n] would load (matmul_f8: e4m3 [m, k] and
    [n, k], a bf16 [m, n] and two one-element f32 scales)."""
    if kern is matmul_f8:  # the claims read shapes, strides and alignment only: same-width stand-ins
        arrays = [np.zeros((m, k), np.uint8), np.zeros((n, k), np.uint8), np.zeros((m, n), np.uint16),
                  np.ones(1, np.float32), np.ones(1, np.float32)]
    else:
        arrays = [np.zeros((m, k), np.float16), np.zeros((k, n), np.float16), np.zeros((m, n), np.float16)]
    full = kern.config(**cfg)
    plan = kern.plan(full)
    values = plan.values(arrays)
    return kern.cubin("sm_90", div16=plan.div16(values, arrays), **cfg)


def counts(cubin: bytes, tool: str) -> dict:
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        sass = subprocess.run([tool, "-sass", f.name], capture_output=True, text=True, check=True).stdout
    got = {name: len(re.findall(pat, sass)) for name, pat in CLASSES.items()}
    got["lines"] = sass.count("\n")
    return got


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    args = p.parse_args()
    tool = os.environ.get("CUOBJDUMP") or shutil.which("cuobjdump")
    if tool is None:
        raise SystemExit("no cuobjdump: pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm, or set CUOBJDUMP")
    rows = []
    for label, kern, cfg, m, n, k in CASES:
        row = {"label": label, "kernel": kern.name, "config": cfg, "shape": [m, n, k],
               **counts(cubin_for(kern, cfg, m, n, k), tool)}
        rows.append(row)
        print(json.dumps(row), flush=True)
    with open(args.out, "w") as fh:
        json.dump({"what": "SASS instruction counts of the cubins a launch would load (sm_90, tileiras at its "
                           "default level), bench/sass_counts.py", "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
