"""What tileiras made of a kernel, counted in its SASS: the cubin a launch on arrays of the given
sizes would load (its stride and alignment claims included), disassembled with cuobjdump (the
nvidia-cuda-cuobjdump and -nvdisasm wheels, or a CUDA toolkit's; ``CUOBJDUMP`` names the binary, and
nvdisasm must be on PATH), and counted by instruction class: spills (STL / LDL), tensor-core ops
(HGMMA; QGMMA for fp8), TMA (UTMALDG / UTMASTG), plain global loads and stores (LDG / STG), shared
stores (STS), the special-function unit (MUFU: exp2). Needs tileiras, not a GPU.

    PYTHONPATH=src python3 bench/sass_counts.py --out bench/results/sass_persistent_cpu.json
    # the walks the rules added on 2026-12-04, and attention's (``programs``), beside CASES' one-cell rows
    PYTHONPATH=src python3 bench/sass_counts.py --walks --out bench/results/sass_walks_cpu.json
    # attention's training backward at the rule's tiles: the fused kernel's dQ reduction (UTMAREDG)
    PYTHONPATH=src python3 bench/sass_counts.py --backward --out bench/results/sass_backward_cpu.json
    # the products of 1000- and 5000-element rows beside the same products at 1008 and 5008 (rows of 16)
    PYTHONPATH=src python3 bench/sass_counts.py --pitch --out bench/results/sass_pitch_cpu.json
    # the one-pass prefix sum (scan_lookback) beside the two-pass one's scanning kernel
    PYTHONPATH=src python3 bench/sass_counts.py --scan --out bench/results/sass_scan_cpu.json
    # fp8's 128 x 256 cell under each hint (it spills), beside its 128 x 128 cell and f16's 128 x 256
    PYTHONPATH=src python3 bench/sass_counts.py --f8 --out bench/results/sass_f8_cpu.json
    # the attention kernels' probabilities with flush_to_zero and an fma, beside the arithmetic before
    PYTHONPATH=src python3 bench/sass_counts.py --ftz --out bench/results/sass_ftz_cpu.json
    # 3xtf32 in one kernel (B split in the loop) beside matmul_3xtf32 (B's halves first), plain tf32
    PYTHONPATH=src python3 bench/sass_counts.py --tf32 --out bench/results/sass_tf32_cpu.json
    # 3xtf32 from both operands' halves along K (matmul_3xtf32_nt) beside gemm's B-halves kernel
    PYTHONPATH=src python3 bench/sass_counts.py --k-major --out bench/results/sass_k_major_cpu.json
    # the stream-K product at its cells and warps, beside the persistent walk's 128 x 256 cell
    PYTHONPATH=src python3 bench/sass_counts.py --stream-k --out bench/results/sass_stream_k_cpu.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile

import numpy as np
from timing import dump_rows

from tileir.kernels import (
    attention,
    attention_bwd_dkdv,
    attention_bwd_dq,
    attention_bwd_fused,
    bmm,
    bmm_persistent,
    matmul_f8,
    matmul_f16,
    matmul_nt,
    matmul_nt_persistent,
    matmul_persistent,
)

CLASSES = {"FMUL": r"\bFMUL\b", "FADD": r"\bFADD\b", "FFMA": r"\bFFMA\b", "FSETP": r"\bFSETP\b",
           "STL": r"\bSTL\b", "LDL": r"\bLDL\b", "HGMMA": r"\bHGMMA\b", "QGMMA": r"\bQGMMA\b",
           "UTMALDG": r"\bUTMALDG\b", "UTMASTG": r"\bUTMASTG\b", "LDG": r"\bLDG\b", "STG": r"\bSTG\b",
           "STS": r"\bSTS\b", "MUFU": r"\bMUFU\b", "UTMAREDG": r"\bUTMAREDG\b", "REDG": r"\bREDG\b",
           # an HGMMA that waits for its own result before the next goes out
           "HGMMA_gsb0": r"\bHGMMA\b[^;]*\bgsb0\b",
           # waits for the tensor cores' results, and CTA-wide barriers
           "WARPGROUP_DEPBAR": r"\bWARPGROUP\.DEPBAR\b", "BAR_SYNC": r"\bBAR\.SYNC\b",
           # a GPU-scope fence, a global atomic, an L1 invalidation (an acq_rel atomic's three), async copies
           "MEMBAR_GPU": r"\bMEMBAR\.ALL\.GPU\b", "ATOMG": r"\bATOMG\b", "CCTL_IVALL": r"\bCCTL\.IVALL\b",
           "LDGSTS": r"\bLDGSTS\b",
           # shared-memory matrix loads and stores (a tile moved between layouts), and a wait for every
           # tensor-core op in flight (none left to overlap with what follows)
           "LDSM": r"\bLDSM\b", "STSM": r"\bSTSM\b", "DEPBAR_ALL": r"\bWARPGROUP\.DEPBAR\.LE gsb0, 0x0\b"}

def _mm(m, n, k):
    return [np.zeros((m, k), np.float16), np.zeros((k, n), np.float16), np.zeros((m, n), np.float16)]


def _f8(m, n, k):  # the claims read shapes, strides and alignment only: same-width stand-ins for e4m3, bf16
    return [np.zeros((m, k), np.uint8), np.zeros((n, k), np.uint8), np.zeros((m, n), np.uint16),
            np.ones(1, np.float32), np.ones(1, np.float32)]


def _bmm(b, m):
    return [np.zeros((b, m, m), np.float16)] * 3


def _att(b, h, s, d):
    return [np.zeros((b, h, s, d), np.float16)] * 4


_MM_ONE = {"tm": 128, "tn": 256, "group": 8, "warps": 8}
# (label, kernel, configuration, the arrays a launch would pass): the one-cell product and the persistent
# one on the cells the suite's N = 5000 rows take, the fp8 product on F8_TILES' cell and the 16-bit one's
# (which spilled), bmm against the one-cell product, attention at the suite's configurations
CASES = [
    ("matmul_f16 128x256x64", matmul_f16, dict(_MM_ONE, tk=64), _mm(1000, 5000, 1000)),
    ("matmul_f16 128x128x64", matmul_f16, dict(_MM_ONE, tn=128, tk=64), _mm(1000, 5000, 1000)),
    ("matmul_f16 128x256x32 no group", matmul_f16, dict(_MM_ONE, tk=32, group=0), _mm(2048, 2048, 2048)),
    ("persistent 128x256x64", matmul_persistent, {"tm": 128, "tn": 256, "tk": 64, "warps": 8}, _mm(1000, 5000, 1000)),
    ("persistent 128x256x32", matmul_persistent, {"tm": 128, "tn": 256, "tk": 32, "warps": 8}, _mm(4096, 4096, 4096)),
    ("persistent 128x128x64", matmul_persistent, {"tm": 128, "tn": 128, "tk": 64, "warps": 8}, _mm(1000, 5000, 1000)),
    # the same walk on one warpgroup (4 warps; tileiras' own choice is the same code): its K loop keeps one group
    # in flight, where at 8 warps every HGMMA waits
    ("persistent 128x128x64 warps 4", matmul_persistent, {"tm": 128, "tn": 128, "tk": 64, "warps": 4},
     _mm(1000, 5000, 1000)),
    ("persistent 64x256x64", matmul_persistent, {"tm": 64, "tn": 256, "tk": 64, "warps": 4}, _mm(1000, 5000, 1000)),
    ("matmul_f8 128x128x256", matmul_f8, {"tm": 128, "tn": 128, "tk": 256, "group": 8, "warps": 8},
     _f8(8192, 8192, 8192)),
    ("matmul_f8 128x256x128", matmul_f8, {"tm": 128, "tn": 256, "tk": 128, "group": 8, "warps": 8},
     _f8(8192, 8192, 8192)),
    ("bmm 128x256x32 B64 512^3", bmm, {"tm": 128, "tn": 256, "tk": 32, "warps": 8}, _bmm(64, 512)),
    ("bmm_persistent 128x256x32 B64 512^3", bmm_persistent, {"tm": 128, "tn": 256, "tk": 32, "warps": 8},
     _bmm(64, 512)),
    ("attention d128 S4096 causal", attention, {"causal": True, "bq": 128, "bk": 128, "d_tile": 128, "warps": 8,
                                                "occupancy": 1}, _att(4, 32, 4096, 128)),
    ("attention d64 S2048 causal", attention, {"causal": True, "bq": 128, "bk": 128, "d_tile": 64, "warps": 8,
                                               "latency": 1}, _att(8, 16, 2048, 64)),
    ("attention d64 S512", attention, {"bq": 128, "bk": 64, "d_tile": 64, "warps": 8, "occupancy": 2},
     _att(32, 16, 512, 64)),
]

_WALK = {"tm": 128, "tn": 256, "tk": 64, "warps": 8, "group": 8, "programs": 132}


def _nt(m, n, k):
    return [np.zeros((m, k), np.float16), np.zeros((n, k), np.float16), np.zeros((m, n), np.float16)]


# the walks: x @ W^T one cell a block and walked (the training example's 8192 x 512 into 1536), fp8's walk on
# 128 x 128 x 128, attention walked by 132 blocks (264 at two an SM) at CASES' three configurations
WALK_CASES = [
    ("matmul_nt 128x256x64", matmul_nt, {"tm": 128, "tn": 256, "tk": 64, "warps": 8}, _nt(8192, 1536, 512)),
    ("matmul_nt_persistent 128x256x64", matmul_nt_persistent, _WALK, _nt(8192, 1536, 512)),
    ("matmul_f8 walk 128x128x128", matmul_f8, {"tm": 128, "tn": 128, "tk": 128, "group": 8, "warps": 8,
                                               "programs": 132}, _f8(8192, 8192, 8192)),
] + [(label + " walked", kern, dict(cfg, programs=132 * cfg.get("occupancy", 1) or 132), arrays)
     for label, kern, cfg, arrays in CASES if kern is attention]


def _bwd(d, fused=False):  # q, k, v, do, lse, delta, dk, dv (and the fused kernel's f32 dq32) at B4 H32 S4096
    x, st = np.zeros((4, 32, 4096, d), np.float16), np.zeros((4, 32, 4096), np.float32)
    return [x, x, x, x, st, st, x, x] + ([np.zeros(x.shape, np.float32)] if fused else [])


_KEYS = {"bq": 64, "bk": 128, "warps": 8, "t_views": False, "causal": True}
# the training backward at heuristics.attention_training's tiles past 1024 keys: the three kernels' two
# walks and the fused one, whose dQ share each step is one tile reduction
BACKWARD_CASES = [
    (f"attention_bwd_{name} d{d} causal", kern, dict(cfg, d_tile=d), _bwd(d, kern is attention_bwd_fused))
    for d in (64, 128)
    for name, kern, cfg in (("dkdv", attention_bwd_dkdv, _KEYS), ("fused", attention_bwd_fused, _KEYS),
                            ("dq", attention_bwd_dq, {"bq": 128, "bk": 64, "warps": 8, "causal": True}))]


def _ftz_cases():
    """The attention kernels whose probabilities are one fma and an exp2 with flush_to_zero, each beside
    its twin with the arithmetic as it was before (bench/ftz_ab.py): CASES' attention rows and the
    fused backward at the rule's tiles."""
    import importlib

    from ftz_ab import mul_sub_probabilities, mul_sub_step, twin

    A = importlib.import_module("tileir.kernels.attention")  # noqa: N806
    AB = importlib.import_module("tileir.kernels.attention_bwd")  # noqa: N806
    before = {attention: twin(attention, A, softmax_step=mul_sub_step),
              attention_bwd_fused: twin(attention_bwd_fused, AB, _probabilities=mul_sub_probabilities)}
    mine = [c for c in CASES if c[1] is attention] + [c for c in BACKWARD_CASES if c[1] is attention_bwd_fused]
    return [row for label, kern, cfg, arrays in mine
            for row in ((label + " fma_ftz", kern, cfg, arrays), (label + " mul_sub", before[kern], cfg, arrays))]


def _pitch_cases():
    """The rule's configuration for 1000 / 4096 x 5000 x 1000 (rows claimed divisible by 8 elements),
    recorded and assembled for those sizes and for 1008 / 4096 x 5008 x 1008 (16): whether the 0.65-0.85x
    of the N = 5000 rows is in the code or in the memory the rows lie in."""
    from tileir.heuristics import rule

    out = []
    for m in (1000, 4096):
        cfg = rule("matmul_f16", "sm_90", {"M": m, "N": 5000, "K": 1000})
        for n, k in ((5000, 1000), (5008, 1008)):
            out.append((f"matmul_f16 {m}x{n}x{k}", matmul_f16, cfg, _mm(m, n, k)))
    return out


def _f8_cases():
    """fp8 on 128 x 256 cells (the one-cell product, 8192^3) at each warp count, with promote and into f32, beside
    its 128 x 128 cell and f16's 128 x 256: whether any hint keeps the fp8 accumulator out of local memory."""
    big = dict(tm=128, tn=256, tk=128, group=8)
    f32_c = _f8(8192, 8192, 8192)[:2] + [np.zeros((8192, 8192), np.float32)] + _f8(8192, 8192, 8192)[3:]
    return [(f"matmul_f8 128x256x128 warps {w}", matmul_f8, dict(big, warps=w), _f8(8192, 8192, 8192))
            for w in (8, 12, 16)] + [
        ("matmul_f8 128x256x128 promote", matmul_f8, dict(big, warps=8, promote=True), _f8(8192, 8192, 8192)),
        ("matmul_f8 128x256x128 into f32", matmul_f8, dict(big, warps=8, out="f32"), f32_c),
        ("matmul_f8 128x256x64", matmul_f8, dict(big, tk=64, warps=8), _f8(8192, 8192, 8192)),
        ("matmul_f8 128x128x128", matmul_f8, dict(big, tn=128, warps=8), _f8(8192, 8192, 8192)),
        ("matmul_f8 128x128x128 walked (the rule's)", matmul_f8, dict(big, tn=128, warps=8, programs=132),
         _f8(8192, 8192, 8192)),
        ("matmul_f8 128x128x128 walked, promote", matmul_f8, dict(big, tn=128, warps=8, programs=132, promote=True),
         _f8(8192, 8192, 8192)),
        ("matmul_f16 128x256x64", matmul_f16, dict(_MM_ONE, tk=64), _mm(8192, 8192, 8192))]


def _scan_cases():
    """The one-pass prefix sum (scan_lookback) beside the two-pass one's scanning kernel, 2^20 elements: the
    look-back as a direct call assembles it (-O0: it holds a while loop) and as prefix_sum does (LEVEL)."""
    from tileir.kernels import scan_chunks, scan_lookback
    from tileir.kernels.prefix_sum import LEVEL

    out = []
    for fmt, dt in (("f32", np.float32), ("i32", np.int32)):
        x = np.zeros(1 << 20, dt)
        for tile in (1024, 2048):
            status = np.zeros((1 << 20) // tile + 1, np.int64)
            for level in (None, LEVEL):
                cfg = {"fmt": fmt, "tile": tile, **({} if level is None else {"opt_level": level})}
                how = "-O0 (the workaround)" if level is None else f"-O{level}"
                out.append((f"scan_lookback {fmt} tile {tile} {how}", scan_lookback, cfg, [x, x, status]))
        out.append((f"scan_chunks {fmt}", scan_chunks, {"fmt": fmt}, [x, x, np.zeros(528, dt)]))
    return out


def _k_major_cases():
    """3xtf32 at 4096^3: matmul_3xtf32 at gemm's cell (B's halves as [K, N] tiles, A split in the loop, a fresh
    accumulator a slice) beside matmul_3xtf32_nt (every operand's halves along K) with ``fresh`` slices an
    iteration (1-4; 3 and 4 spill) and on the tensor cores' one accumulator (0)."""
    from tileir.heuristics import HALVES_CELL
    from tileir.kernels import matmul_3xtf32
    from tileir.kernels.matmul_3xtf32 import matmul_3xtf32_nt

    x = np.zeros((4096, 4096), np.float32)
    cell = dict(tm=128, tn=128, tk=64, group=8, warps=8)
    rows = [("matmul_3xtf32 (gemm's cell)", matmul_3xtf32, dict(HALVES_CELL), [x] * 4)]
    for tk in (64, 32):
        for fresh in (2, 1, 3, 4, 0):
            rows.append((f"matmul_3xtf32_nt 128x128x{tk} fresh {fresh}", matmul_3xtf32_nt,
                         dict(cell, tk=tk, fresh=fresh), [x] * 5))
    rows.append(("matmul_3xtf32_nt 128x256x32 fresh 0", matmul_3xtf32_nt, dict(cell, tn=256, tk=32, fresh=0),
                 [x] * 5))
    return rows


def _tf32_cases():
    """3xtf32 at 4096^3 on the rule's 128 x 128 cells: the one-kernel form (matmul_tf32, B split in the loop)
    beside matmul_3xtf32 (B's halves read as tf32 cells), and plain tf32 on its 128 x 256 cell."""
    from tileir.kernels import matmul_3xtf32, matmul_tf32

    x = np.zeros((4096, 4096), np.float32)
    cell = {"tm": 128, "tn": 128, "tk": 32, "group": 8, "warps": 8}
    return [("matmul_tf32 3xtf32 128x128x32", matmul_tf32, dict(cell, precision="3xtf32"), [x, x, x]),
            ("matmul_3xtf32 128x128x32 (B's halves)", matmul_3xtf32, cell, [x, x, x, x]),
            ("matmul_tf32 tf32 128x256x32", matmul_tf32, dict(cell, tn=256), [x, x, x])]


def _stream_k_cases():
    """The stream-K products (matmul_stream_k, matmul_nt_stream_k) at 1000 x 5000 x 1000 on 128 x 128 cells with
    8 warps and tileiras' own, and on 128 x 256, each part alone at 8 and 4 warps, beside the persistent
    walk's 128 x 256: where the cells, the finishing sum's tiles and the warps spill."""
    from tileir.kernels import matmul_nt_stream_k, matmul_stream_k
    from tileir.kernels.matmul_stream_k import workspace_words

    m, n, k = 1000, 5000, 1000
    mm = _mm(m, n, k)
    w = np.zeros((n, k), np.float16)
    out = []
    for tn, warps in ((128, 8), (128, 0), (256, 8)):
        cfg = dict(tm=128, tn=tn, tk=64, group=8, warps=warps)
        ws = np.zeros(workspace_words(m, n, 128, tn, 132), np.float32)
        out.append((f"matmul_stream_k 128x{tn}x64 warps {warps}", matmul_stream_k, cfg, mm + [ws]))
    ws = np.zeros(workspace_words(m, n, 128, 128, 132), np.float32)
    for parts, warps in ((1, 8), (1, 4), (2, 8), (2, 4)):  # each part alone (two launches make the product)
        out.append((f"matmul_stream_k 128x128x64 part {parts} warps {warps}", matmul_stream_k,
                    dict(tm=128, tn=128, tk=64, group=8, warps=warps, parts=parts), mm + [ws]))
    out.append(("matmul_nt_stream_k 128x128x64 warps 8", matmul_nt_stream_k,
                dict(tm=128, tn=128, tk=64, group=8, warps=8), [mm[0], w, mm[2], ws]))
    out.append(("matmul_persistent 128x256x64 (the walk)", matmul_persistent,
                dict(tm=128, tn=256, tk=64, group=8, warps=8), mm))
    out.append(("matmul_persistent 128x128x64 warps 8 (the walk on stream-K's cell)", matmul_persistent,
                dict(tm=128, tn=128, tk=64, group=8, warps=8), mm))
    return out


def cubin_for(kern, cfg, arrays) -> bytes:
    """The cubin a launch of ``kern`` on ``arrays`` would load: its stride and alignment claims
    (``SizePlan.div16``) made as the call site makes them."""
    cfg = dict(cfg)
    level = cfg.pop("opt_level", None)  # tileiras' level where a case names one (else the kernel's own)
    plan = kern.plan(kern.config(**cfg))
    return kern.cubin("sm_90", opt_level=level, div16=plan.div16(plan.values(arrays), arrays), **cfg)


def counts(cubin: bytes, tool: str) -> dict:
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        sass = subprocess.run([tool, "-sass", f.name], capture_output=True, text=True, check=True).stdout
    got = {name: len(re.findall(pat, sass)) for name, pat in CLASSES.items()}
    got["lines"] = sass.count("\n")
    got["instructions"] = len(re.findall(r"^\s+/\*[0-9a-f]{4,}\*/\s", sass, re.M))
    # the code without its addresses and the cubin's name: two cubins of one sha ran the same instructions
    code = re.sub(r"/\*[0-9a-f]+\*/", "", sass.split("Function :", 1)[-1])
    got["sha"] = hashlib.sha256(code.encode()).hexdigest()[:12]
    return got


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--walks", action="store_true", help="WALK_CASES instead of CASES")
    p.add_argument("--backward", action="store_true", help="BACKWARD_CASES instead of CASES")
    p.add_argument("--pitch", action="store_true", help="products of 8-element rows beside 16-element ones")
    p.add_argument("--scan", action="store_true", help="the one-pass prefix sum beside the two-pass one's scan")
    p.add_argument("--tf32", action="store_true", help="3xtf32's two forms beside plain tf32 (4096^3)")
    p.add_argument("--stream-k", action="store_true", help="the stream-K products' cells and warps")
    p.add_argument("--k-major", action="store_true", help="3xtf32 from both operands' halves along K (4096^3)")
    p.add_argument("--f8", action="store_true", help="fp8's 128 x 256 cell under each hint, beside 128 x 128 and f16")
    p.add_argument("--ftz", action="store_true", help="the attention kernels beside their twins of the arithmetic "
                                                      "before flush_to_zero (bench/ftz_ab.py)")
    args = p.parse_args()
    tool = os.environ.get("CUOBJDUMP") or shutil.which("cuobjdump")
    if tool is None:
        raise SystemExit("no cuobjdump: pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm, or set CUOBJDUMP")
    rows = []
    cases = WALK_CASES if args.walks else BACKWARD_CASES if args.backward else _ftz_cases() if args.ftz else \
        _pitch_cases() if args.pitch else _scan_cases() if args.scan else _f8_cases() if args.f8 else \
        _tf32_cases() if args.tf32 else _stream_k_cases() if args.stream_k else \
        _k_major_cases() if args.k_major else CASES
    for label, kern, cfg, arrays in cases:
        row = {"label": label, "kernel": kern.name, "config": cfg, "shapes": [list(a.shape) for a in arrays]}
        try:
            row.update(counts(cubin_for(kern, cfg, arrays), tool))
        except Exception as e:  # noqa: BLE001  (a case that does not assemble is a finding; go on)
            row["error"] = f"{type(e).__name__}: {e}"[:300]
        rows.append(row)
        print(json.dumps(row), flush=True)
        with open(args.out, "w") as fh:  # rewritten after each case
            fh.write(dump_rows({"what": "SASS instruction counts of the cubins a launch would load (sm_90, "
                                        "tileiras at its default level), bench/sass_counts.py"}, rows))


if __name__ == "__main__":
    main()
