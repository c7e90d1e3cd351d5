"""An experiment that did not reach the library: the histogram counted on the tensor cores. A value v is
the pair (v // lo, v % lo); for each ``tile`` of values the f16 one-hot [hi, tile] of the first times the
one-hot [tile, lo] of the second is the tile's [hi, lo] table of counts (exact: integers below 2^24 in
f32), and each persistent block adds its table into counts once -- hi * lo atomic adds a block, where
kernels.histogram_rows makes one a value (2^28 values into 256 bins: 2.83 ms on the H200 against
torch.bincount's 2.04, suite_h200.json).

What tileiras 13.4.92 made of it (sm_90, counted in the SASS on this machine, no GPU): the loop that
handles one tile spans 38-83 warp instructions a value (the smallest and largest backward-branch span;
compare and select for each of the 72 one-hot lanes a value at hi 64, lo 8, the packing and the
shared-memory staging for the HGMMA's operand), where the compares and selects alone would be ~5.6; at
four issued a cycle on 132 SMs even the smaller is ~10 ms for 2^28 values, 3.5 times the atomics' path
(2.83 ms) and 5 times torch's, so it was not timed. At hi 16 (32 one-hot lanes a value, below the
HGMMA's 64 rows) tileiras made no tensor-core product at all: 18,368 instructions at tile 256, no HGMMA,
392 local-memory loads. Results: bench/results/histogram_onehot_sass_cpu.json.

    PYTHONPATH=src python3 bench/histogram_onehot.py --out bench/results/histogram_onehot_sass_cpu.json

It checks the kernel on the host reference first (the counts against numpy's), then assembles each
configuration and measures its loops (a backward branch's span, 16 bytes an instruction). Needs tileiras
and cuobjdump (``CUOBJDUMP``, or on PATH), not a GPU.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import tempfile

import numpy as np
from sass_counts import counts, cubin_for
from timing import dump_rows

from tileir import surface as ti
from tileir.dtypes import F16, F32, I32
from tileir.kernel import cdiv, kernel
from tileir.kernels.prefix_sum import tiles_in
from tileir.markers import Shared, Whole

PROGRAMS = 4 * 132


def _grid(N, tile=1024, programs=PROGRAMS):  # noqa: N803  (the run-time size's name)
    return (max(1, min(cdiv(N, tile), programs)),)


@kernel(grid=_grid)
def histogram_onehot(x=Whole(I32, ["N"]), counts=Shared(I32, ["BINS"]), *, tile: int = 1024, hi: int = 64,
                     lo: int = 8, programs: int = PROGRAMS):
    """counts[v] += the number of elements of x equal to v, for v in [0, len(counts)) (len(counts) at
    most hi * lo: the caller's to keep); values outside take the row -1, which no one-hot row matches."""
    n, bins = ti.extent_of(x, 0), ti.extent_of(counts, 0)
    shift = lo.bit_length() - 1
    rows = ti.broadcast(ti.reshape(ti.arange(hi), [hi, 1]), [hi, tile])
    cols = ti.broadcast(ti.reshape(ti.arange(lo), [1, lo]), [tile, lo])
    one, zero = ti.f_const(F16, 1.0), ti.f_const(F16, 0.0)
    acc = ti.carry(ti.full([hi, lo], 0.0, F32))
    for j in ti.d_range(ti.block_id(0), tiles_in(n, tile), ti.num_blocks(0)):
        base = ti.tile_at(j, tile)
        v = ti.load(x, base, [tile], mask=ti.tail_mask(base, [tile], n), pad=-1)
        keep = ti.and_mask(ti.ge_i(v, 0), ti.lt_i(v, ti.idx_as_tile(bins)))
        row = ti.select(keep, ti.shr_i(v, shift), -1)
        col = ti.and_i(v, lo - 1)
        a = ti.select(ti.eq_i(rows, ti.broadcast(ti.reshape(row, [1, tile]), [hi, tile])), one, zero)
        b = ti.select(ti.eq_i(ti.broadcast(ti.reshape(col, [tile, 1]), [tile, lo]), cols), one, zero)
        ti.set(acc, ti.mma(a, b, ti.get(acc)))
    bin_of = ti.add_i(ti.mul_i(ti.broadcast(ti.reshape(ti.arange(hi), [hi, 1]), [hi, lo]), lo),
                      ti.broadcast(ti.reshape(ti.arange(lo), [1, lo]), [hi, lo]))
    ti.atomic_add(counts, bin_of, ti.float_to_int(ti.get(acc), I32), mask=ti.lt_i(bin_of, ti.idx_as_tile(bins)))


CONFIGS = ({"hi": 64, "lo": 8, "tile": 128}, {"hi": 64, "lo": 8, "tile": 256}, {"hi": 16, "lo": 16, "tile": 256})


def host_check() -> None:
    rng = np.random.default_rng(3)
    for cfg in CONFIGS:
        x = rng.integers(-3, 259, 5003).astype(np.int32)
        counts = np.arange(256, dtype=np.int32)
        want = counts + np.bincount(x[(x >= 0) & (x < 256)], minlength=256)
        histogram_onehot.run_host(x, counts, programs=3, **cfg)
        assert np.array_equal(counts, want), cfg


def loops(cubin: bytes, tool: str) -> list[int]:
    """The instruction count of each backward branch's span of at least 50 instructions."""
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        sass = subprocess.run([tool, "-sass", f.name], capture_output=True, text=True, check=True).stdout
    spans = []
    for m in re.finditer(r"/\*([0-9a-f]+)\*/\s+(?:@!?P\d\s+)?BRA(?:\.U)?\s+0x([0-9a-f]+)", sass):
        at, to = int(m.group(1), 16), int(m.group(2), 16)
        if to < at and (at - to) // 16 >= 50:
            spans.append((at - to) // 16)
    return spans


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    args = p.parse_args()
    tool = os.environ.get("CUOBJDUMP") or shutil.which("cuobjdump")
    if tool is None:
        raise SystemExit("no cuobjdump: pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm, or set CUOBJDUMP")
    host_check()
    rows = []
    arrays = [np.zeros(1 << 20, np.int32), np.zeros(256, np.int32)]
    for cfg in CONFIGS:
        cubin = cubin_for(histogram_onehot, cfg, arrays)
        spans = loops(cubin, tool)
        got = counts(cubin, tool)
        row = {"config": cfg, **{k: got[k] for k in ("instructions", "HGMMA", "LDL", "STL")}, "loops": len(spans),
               "spans": sorted(spans)[:8] + (["..."] if len(spans) > 8 else [])}
        if cfg["hi"] == 64:  # the tile's loop is one of the spans, run by one warpgroup (4 warps)
            row["warp_instructions_a_value"] = [round(min(spans) * 4 / cfg["tile"], 1),
                                                round(max(spans) * 4 / cfg["tile"], 1)]
        rows.append(row)
        print(row, flush=True)
    with open(args.out, "w") as fh:
        fh.write(dump_rows({"what": "histogram_onehot's loops in its SASS (sm_90, tileiras 13.4.92), "
                                    "bench/histogram_onehot.py; the host reference's counts checked first"}, rows))


if __name__ == "__main__":
    main()
