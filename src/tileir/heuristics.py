"""Configurations that generalise: a rule that picks a library kernel's tiles and hints
for a shape nobody measured, from what is known about the GPU, instead of reusing the one
configuration measured at the benchmark's shape for every shape.

``autotune.best`` asks, in order: the tune cache (a measurement on the user's own shape bucket),
the default table's entries whose ``when`` names something (a measurement that says where it
holds), **this rule**, and last the table's catch-all entries (measured at one large shape). The
rule answers None where it has nothing to say -- another GPU, a kernel it does not know -- and the
next source answers. Small problems get the rule's tiles too: the measured entries' large tiles left
them one block (docs/speed.md, "Every shape").

The rule lives beside ``autotune``, not in the library: every tuned call asks ``autotune.best``,
which asks this, so it imports nothing of tileir (``kernels.gemm`` reads ``matmul_split`` from it).

Every choice is made from the shape *bucket* (each size rounded up to a power of two, and whether
the size is the bucket's own: what the call site keys its prepared variants by), so one variant
always gets one configuration.

What the rule knows about sm_90 (the H200 and H100 SXM: 132 SMs), and what it assumes. All of
its speed claims are hypotheses until ``bench/suite.py`` measures them
(``bench/results/suite_h200.json``; docs/speed.md, "Every shape"):

* Matrix products (``matmul_*``, ``bmm``, ``matmul_partial``, ``matmul_f8``): a block computes one
  [tm, tn] cell. The measured tile (128 x 256 for the 16-bit formats and tf32) is the most
  efficient per SM, but at M = 16 or N * M / 32768 < 132 it leaves SMs idle. The rule scores each
  candidate tile with a small model -- whole waves of blocks over 132 SMs times the tile's work
  at a per-tile efficiency (``TILE_EFFICIENCY``, an estimate: larger tiles reuse each loaded
  byte more), against a memory floor where few blocks cannot pull the HBM bandwidth -- and takes
  the fastest, the larger tile on a near tie. tm is 64 (one warpgroup's mma height) where M <= 64,
  and 16 where M <= 16 (``NARROW_ROWS``: a 64-row box of a 1-row A costs half the kernel's speed),
  on the narrowest column tile of 32, 64, 128 that keeps the blocks in one wave (``narrow_tn``).
  Block rows are grouped 8 at a time (L2 reuse) where the grid is more than one wave.
* Split-K (``matmul_split``): where even the best one-pass tile leaves most SMs idle and K is
  long, K is cut into S splits (``gemm.matmul_split_k``). For a small M (16-bit up to 16 rows,
  tf32 64, 3xtf32 128) S fills one wave of 64 x 128 cells (3xtf32 past 64 rows: 128 x 128) where one
  pass would take longer than the
  split call's host time (``_fill_split``, measured); otherwise S minimises the same model plus the
  workspace's traffic and the second launch.
* Persistent products (``matmul_walk``, ``bmm_walk``, ``F8_WALKS``): 132 blocks walk the cells
  (``kernels.matmul_persistent``, ``matmul_nt_persistent``, ``bmm_persistent``, ``matmul_f8``'s
  ``programs``) instead of one block a cell where 16-bit 128 x 256 cells make more than 1.5 waves
  (row-major only over a K of at most 1024; x @ W^T at any K), where a bmm takes that cell, and for
  fp8's 128 x 128 cells past one wave: measured 1-39% faster there, slower elsewhere.
* 3xtf32 keeps an f32 accumulator beside the tensor core's (a 128 x 256 tile would need 256
  registers a thread for the two), so its tiles stop at 128 x 128; ieee f32 products run without
  tensor cores, so 64 x 64.
* Row kernels (softmax, layernorm, rmsnorm): the measured configuration (8192-lane chunks, one
  row a block, occupancy 4) serves rows of 8192, and rows wider than ``ONE_TILE_MOST`` (softmax
  32768, the norms 65536); a row between is one tile of its power of two (``one_chunk``, 8
  warps). A narrower row is one chunk of its own width (no padded lanes: a 100-wide row in an
  8192-lane tile computes 80 times too much),
  and several rows share a block (``rows``) so a block still moves a few thousand elements,
  while keeping at least 4 blocks an SM. Where the row is one chunk (its bucket at most the
  chunk), the one-chunk program runs (``one_chunk``: no walk, no carried chunk -- measured on the
  H200 at 8192 x 8192: bench/results/runtime_sizes_h200.json, docs/design.md "Programs that need no walk").
* Attention: the head tile is the head dimension's power of two (64 for D = 64: a 128 tile does
  twice the work); bq = bk = 128 with 8 warps as measured at D = 128; bq 64 where the grid would
  not fill the SMs (then tileiras' own warp count: causal with bq 64 and 8 warps is answered wrong
  by tileiras 13.4.92, docs/speed.md).
"""

from __future__ import annotations

import math

# ---- what is known about the GPUs --------------------------------------------------------------

SMS = {"sm_90": 132}  # streaming multiprocessors (H100 SXM and H200)
HBM_BYTES_PER_S = {"sm_90": 4.0e12}  # the H200's 4.8 TB/s, at what a streaming kernel reaches (estimate)
# dense tensor-core multiply-adds per second per SM, by operand format (the datasheet's dense
# TFLOP/s / 2 / 132; f32 without tensor cores: the FMA rate)
MAC_PER_S_PER_SM = {"sm_90": {"f16": 3.75e12, "bf16": 3.75e12, "tf32": 1.87e12, "f8": 7.5e12, "f32": 0.25e12}}
# the share of HBM bandwidth one SM's blocks can pull on their own (fitted with TILE_EFFICIENCY below:
# about 60 of the 132 SMs saturate it)
SM_BANDWIDTH_SHARE = 1.0 / 60
SECOND_LAUNCH_S = 2e-6  # the split-K reduction's launch and drain (estimate)
SPLIT_GAIN = 0.75  # split K only where the model gives it under this share of one pass's time

# below these (bucketed) sizes a product is launch-bound whatever its split: split-K is not weighed
SMALL_MACS = 1 << 25  # M * N * K of a matrix product
SMALL_OPERAND = 1 << 21  # N * K or M * K

# relative throughput of one SM running blocks of a tile when every SM is busy (estimates: bigger
# cells reuse each byte loaded more; 128 x 256 is what the sweeps measured fastest at 8192^3)
# fitted to bench/results/matmul_probe_h200.json (f16, 14 shapes with 16-element rows, 5 tiles each
# timed): the picks of these values (and SM_BANDWIDTH_SHARE 1/60) ran 1.4% slower than each shape's
# fastest tile on average, those of the estimates before (128 x 128 at 0.85, 64 x 128 at 0.7,
# 1/100) 5.4% -- 128 x 256 where 128 x 128 ran 1.07-1.2x faster (512 x 11008, 1000 x 14336)
TILE_EFFICIENCY = {(128, 256): 1.0, (128, 128): 0.97, (64, 256): 0.75, (64, 128): 0.6, (64, 64): 0.5}

_BYTES = {"f16": 2, "bf16": 2, "tf32": 4, "f32": 4, "f8": 1, "f8E4M3FN": 1, "f8E5M2": 1}
_TK = {1: 128, 2: 64, 4: 32}  # a K slice of 128 bytes a row
# the measured configuration of the 16-bit and tf32 products at 8192^3 (tune_defaults.json); the
# rule starts from the table's own entry where there is one, from this where there is not
_MEASURED_BIG = {"tm": 128, "tn": 256, "tk": 32, "group": 8, "warps": 8}


def cdiv(a: int, b: int) -> int:
    """ceil(a / b) for positive ints, as ``kernel.cdiv`` (this module imports nothing of tileir)."""
    return -(-a // b)


def pow2_at_least(n: int) -> int:
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()


def _bucketed(config: dict) -> dict:
    """``config`` with its ints at their power-of-two buckets, and under INEXACT the names of those
    that were not already one (a tuned call's variant key tells the two apart: kernel._size_class)."""
    out = {k: pow2_at_least(v) if isinstance(v, int) and not isinstance(v, bool) else v for k, v in config.items()}
    out[INEXACT] = frozenset(k for k, v in config.items() if out[k] != v)
    out[UNALIGNED] = frozenset(k for k, v in config.items() if k.isupper() and isinstance(v, int)
                               and not isinstance(v, bool) and v % 16)
    return out


INEXACT = "_inexact"
# the sizes (by name) that are not a multiple of 16 elements: a launch claims a stride or size divisible by
# 16, 8 or 4 (sizes.claim_of), so the variant that asks knows the same. With TILEIR_SPECIALISE_STRIDES=0
# (no claims) sizes of both kinds share a variant and its first call decides (its speed, not its answers)
UNALIGNED = "_unaligned"
# 16-bit products whose K or N rows are not a multiple of 16 elements (claimed 8: 1000, 5000) took the
# 128 x 256 cell fastest with K slices of 64, not the 8192^3 measurement's 32: f16 and bf16 at M 2048, 4096
# and 8192 x 5000 x 1000 52-57 / 88-89 / 171-174 us against 57 / 99 / 194-197 (H200,
# bench/results/small_m_h200.json, part "slice"); at 16-element rows 32 stayed as fast or faster (4096 and
# 11008 rows, 1024 x 1024: within 1%, 8192 x 4096 x 4096 435 against 468). Only past one wave of blocks
# (counted at the bucket's sizes, as every choice here: a variant's one configuration): 512 x 5000 x 1000
# (80 blocks; 128 at its bucket) went from 0.82 to 0.77x torch with 64 (the suite, 2026-12-03)
UNALIGNED_TK = {"f16": 64, "bf16": 64}
# and there 128 x 128 (slices of 64) ran 1.28-1.30x slower than 128 x 256 at 4096 and 8192 x 5000 x 1000
# (115 / 89, 223 / 174 us; 61 / 52 at 2048, where the aligned efficiencies picked 128 x 128): its cells
# reuse each loaded byte half as much, and at 8-element rows a load costs more (the same file)
UNALIGNED_EFFICIENCY = {(128, 128): 0.78}

# Products of at most 16 rows (one pass, row-major, f16 / bf16 / tf32) take row tiles of 16 with twice
# the K slice: a 64-row box of a 1-row A ran the kernel at half the speed of the same row in a zeroed
# 64-row buffer (f16 1 x 4096 x 4096 on 64 x 64: 19 against 10 us of GPU time,
# bench/results/small_m_padded_h200.json). On the H200 (bench/results/small_m_tiles_h200.json, M 1 and
# 16, f16 and tf32, N 4096 / 11008 x K 4096 / 11008 and 5000 x 1000; flushed us): at one row f16
# 16 x 64 x 128 took 19 / 38 against the 64-row tiles' 21-24 / 48-56 at N 4096 (K 4096 / 11008; at 16
# rows 18 / 38 against 20-22 / 42-47) and 16 x 128 x 128 33 against 37 at N 11008; tf32 at one row
# 16 x 64 x 64 37 / 89 against 46 / 98 and 16 x 128 x 64 60 against 73 (at 16 rows a tie, 37 / 37).
# The column tile is 64 where its blocks fit one wave, else 128 (N 4096: 64 blocks of 64 won over 32
# of 128, 19 against 22; N 11008: 86 blocks of 128 over 172 of 64, 33 against 38). At 32 rows the
# 64-row tiles were within 10% of the best (f16 4096 x 4096 19 against 19; 4096 x 11008 39.5 against
# 16 x 64 x 128's 37.7), so 17-64 rows keep them. Not measured for 3xtf32 or matmul_tn, which keep the
# model's tiles (matmul_nt, x @ W.t(), takes them: ``_matmul_t``). Nor for a B of at most
# SMALL_OPERAND elements: at 1 x 1024 x 1024 the narrow tile ran 0.87-0.88x torch against the 64-row
# tile's 1.10-1.20 (f16, bf16; bench/results/suite_h200.json, 2026-12-03), a launch-bound 7-8 us.
NARROW_ROWS = 16
NARROW_TK = {"f16": 128, "bf16": 128, "tf32": 64}


def narrow_tn(gpu: str, n: int) -> int:
    """The column tile of a product of at most ``NARROW_ROWS`` rows: the narrowest of 32, 64, 128 whose
    blocks fit one wave. Such a product streams B once, and narrower columns put more SMs on it:
    H200, 1 and 16 rows (bench/results/small_m_thin_h200.json, do_bench, L2 flushed), tf32 x 4096 x 4096
    30 us on 32-wide columns against 37 on 64 (torch fp32 24 and 91), x 4096 x 11008 64 against 90;
    f16 x 2048 x 4096 14.4 against 16.1; where 32-wide columns take a second wave (N 5000, 8192) they
    lose to 64 (f16 x 8192 x 4096 30.9 against 26.3)."""
    for tn in (32, 64):
        if cdiv(n, tn) <= SMS[gpu]:
            return tn
    return 128


# ---- the matrix product model --------------------------------------------------------------------


def _estimate(gpu, fmt, m, n, k, tm, tn, batch=1, splits=1, out_bytes=None, unaligned=False) -> float:
    """Seconds for a product of [m, k] by [k, n] (``batch`` of them) in [tm, tn] cells with K cut
    in ``splits``: whole waves of blocks at the tile's efficiency, or the memory floor where fewer
    blocks than SMs cannot pull the bandwidth, plus split-K's workspace and second launch.
    ``unaligned``: 16-bit rows of K or N not a multiple of 16 elements (UNALIGNED_EFFICIENCY)."""
    sms, bw = SMS[gpu], HBM_BYTES_PER_S[gpu]
    e = _BYTES[fmt]
    blocks = batch * cdiv(m, tm) * cdiv(n, tn) * splits
    eff = TILE_EFFICIENCY.get((tm, tn), 0.5) * (UNALIGNED_EFFICIENCY.get((tm, tn), 1.0) if unaligned else 1.0)
    rate = MAC_PER_S_PER_SM[gpu].get(fmt, MAC_PER_S_PER_SM[gpu]["f8"])
    per_block = tm * tn * cdiv(k, splits) / (eff * rate)
    compute = math.ceil(blocks / sms) * per_block
    traffic = batch * (m * k + k * n) * e + batch * m * n * (out_bytes or e)
    pull = bw * min(1.0, min(blocks, sms) * SM_BANDWIDTH_SHARE)
    t = max(compute, traffic / pull)
    if splits > 1:
        t += batch * splits * m * n * 4 * 2 / bw + SECOND_LAUNCH_S
    return t


# fp8 products' cells and what each takes beside its K slice (H200, tileiras 13.4.92,
# bench/results/f8_tiles_h200.json and f8_tiles_round2_h200.json, against torch._scaled_mm): the
# 16-bit products' 128 x 256 spilled (31-60 STL in its SASS at every K slice) and ran 0.33-0.42x;
# 128 x 128 with K slices of 256 and 8 warps 0.85-0.88x (8192^3, 4096^3, 1024 x 14336 x 4096),
# 0.84 with slices of 128; at 16 and 128 rows 64 x 64 with slices of 128 and 4 warps 0.91-0.94x,
# where 128 x 128 ran 0.68 and 64 x 128 0.77-0.80. No wider cell is a candidate.
F8_TILES = {(128, 128): {"tk": 256, "warps": 8}, (64, 128): {"tk": 128, "warps": 4},
            (64, 64): {"tk": 128, "warps": 4}}
# and the 128 x 128 cells walked by 132 persistent blocks (matmul_f8's ``programs``) with K slices of 128:
# faster than one cell a block at all 10 shapes timed, the suite's 6 and 4 it does not hold (H200, e4m3,
# bench/persistent_probe.py --part f8, persistent_f8_h200.json): 4096^3 0.81 -> 0.91x torch._scaled_mm,
# 8192 x 4096 x 4096 0.76 -> 0.88, 8192^3 0.80 -> 0.84, 1024 x 4096 x 4096 0.88 -> 0.89, 8192 x 2048 x
# 1024 0.74 -> 1.03, 2048 x 8192 x 2048 0.77 -> 0.95. Walking with slices of 256 ran at half speed
# (0.42-0.52x), at two blocks an SM too. Only past one wave of cells (the probe's fewest: 256), counted at
# the bucket's sizes as every choice here (one variant, one configuration: 129 x 8193 walks as 256 x 16384
# does): at 128 x 14336 x 4096 (112 cells) the walk's slices of 128 lost to one cell's 256 (0.98 against
# 1.02x, the suite 2026-12-04). The 64-row cells (16-128 rows) were not timed walking.
F8_WALKS = {(128, 128): {"tk": 128, "warps": 8, "group": 8}}


def _tile_candidates(m: int, precision: str = "tf32", fmt: str = "") -> list[tuple[int, int]]:
    cands = [t for t in TILE_EFFICIENCY if m > 64 or t[0] == 64]
    if precision == "3xtf32":
        cands = [t for t in cands if t[0] * t[1] <= 128 * 128]
    if fmt == "f8":
        cands = [t for t in cands if t in F8_TILES]
    return cands


# where in its power-of-two bucket a size that is not the bucket is sampled: one tile serves all of
# them, and its whole waves of blocks differ across them (N 8193-16383 covers 11008 and 14336 alike)
BUCKET_SAMPLES = (0.625, 0.75, 0.875, 1.0)


def _bucket_points(v: int, inexact: bool) -> list[int]:
    return [max(1, round(v * f)) for f in BUCKET_SAMPLES[:-1]] if inexact and v > 64 else [v]


def _pick_tile(gpu, fmt, m, n, k, batch=1, precision="tf32", inexact=frozenset(), unaligned=False) -> tuple[int, int]:
    """The candidate tile of least estimated time: at ``m`` and ``n`` (power-of-two buckets), or
    summed over the sizes below the top of the bucket of those named in ``inexact`` ("M", "N": the
    calls the tile serves); a tile within 3% of the best and larger wins."""
    points = [(mi, ni) for mi in _bucket_points(m, "M" in inexact) for ni in _bucket_points(n, "N" in inexact)]
    cands = _tile_candidates(m, precision, fmt)
    # no wider cell than the problem where a narrower one is a candidate (a tie among launch-bound
    # tiles would otherwise take the largest: 64 x 256 for 64 x 64)
    cands = [t for t in cands if t[0] <= max(64, m) and t[1] <= max(64, n)] or cands
    scored = [(t, sum(_estimate(gpu, fmt, mi, ni, k, *t, batch=batch, unaligned=unaligned) for mi, ni in points))
              for t in cands]
    fastest = min(s for _, s in scored)
    return max((t for t, s in scored if s <= fastest * 1.03), key=lambda t: t[0] * t[1])


def _tile_config(fmt, tm, tn, measured, blocks_m, waves, grouped=True) -> dict:
    """The tuned keys for a [tm, tn] cell: the measured entry where it is that cell, else a K slice
    of 128 bytes a row, 8 warps for 128-row tiles (two warpgroups) and tileiras' choice for 64."""
    if measured and (measured.get("tm"), measured.get("tn")) == (tm, tn):
        cfg = dict(measured)
    else:
        cfg = {"tm": tm, "tn": tn, "tk": _TK[_BYTES[fmt]], "warps": 8 if tm >= 128 else 0}
        if grouped:
            cfg["group"] = 8 if blocks_m >= 8 and waves > 1 else 0
    if not grouped:
        cfg.pop("group", None)
        cfg.pop("cga", None)
    return cfg


def _small(m, n, k) -> bool:
    return m * n * k <= SMALL_MACS and n * k <= SMALL_OPERAND and m * k <= SMALL_OPERAND


_MATMUL_FMT = {"matmul_f16": "f16", "matmul_bf16": "bf16", "matmul_tf32": "tf32", "matmul_f8": "f8"}


def _matmul(gpu, name, cfg, measured, transposed=False, narrow=True):
    m, n, k = cfg.get("M"), cfg.get("N"), cfg.get("K")
    if not (m and n and k):
        return None
    fmt = _MATMUL_FMT[name]
    precision = cfg.get("precision", "tf32") if name == "matmul_tf32" else "tf32"
    if precision == "ieee":
        return {"tm": 64, "tn": 64, "tk": 32, "group": 0, "warps": 0}
    # small problems get the rule's tile too: the measured 128 x 256 entry (one block for 1-128 x 1024)
    # took 15 us at 16 x 1024 x 1024 against torch's 8 (bench/results/suite_h200.json, 2026-12-02)
    if precision == "3xtf32" or name == "matmul_f8":
        measured = None  # their own tiles: see the module docstring (3xtf32) and F8_TILES
    if m <= NARROW_ROWS and n * k > SMALL_OPERAND and narrow and precision == "tf32" and fmt in NARROW_TK:
        tn = narrow_tn(gpu, n)
        return {"tm": 16, "tn": tn, "tk": NARROW_TK[fmt], "group": 0, "warps": 0}
    # (measured on the row-major products only: matmul_nt / matmul_tn keep the aligned weights)
    unaligned = not transposed and fmt in UNALIGNED_TK and bool({"K", "N"} & cfg.get(UNALIGNED, frozenset()))
    tm, tn = _pick_tile(gpu, fmt, m, n, k, precision=precision, inexact=cfg.get(INEXACT, frozenset()),
                        unaligned=unaligned)
    blocks_m = cdiv(m, tm)
    waves = cdiv(blocks_m * cdiv(n, tn), SMS[gpu])
    cfg = _tile_config(fmt, tm, tn, measured, blocks_m, waves)
    if (tm, tn) == (128, 256) and unaligned and waves > 1:
        cfg["tk"] = UNALIGNED_TK[fmt]
    if fmt == "f8":
        cfg = dict(cfg, **F8_TILES[(tm, tn)])
        if (tm, tn) in F8_WALKS and blocks_m * cdiv(n, tn) > SMS[gpu]:  # more than one wave to walk
            cfg.update(F8_WALKS[(tm, tn)], programs=SMS[gpu])
    return cfg


def _matmul_t(gpu, name, cfg, measured):
    """matmul_nt / matmul_tn (a Linear layer's forward and weight gradient): the one-pass product's
    tile by the same model, without the grouped order those kernels do not have. Measured on the
    H200 at 8192 x 4096 x 4096 (bench/results/training_h200.json's linear sweeps): 128 x 256 with 8
    warps fastest for both, as the model picks there; the kernels' 128 x 128 default left a weight
    gradient's [512, 1536] result (a 8192-token K) 48 blocks for 132 multiprocessors."""
    fmt = {"f32": "tf32"}.get(cfg.get("fmt", "f16"), cfg.get("fmt", "f16"))
    if fmt not in ("f16", "bf16", "tf32"):
        return None
    # x @ W^T (matmul_nt) of at most NARROW_ROWS rows takes the row-major product's narrow tiles: H100, f16,
    # 1 and 16 rows (bench/results/small_m_nt_h100.json, flushed us): N 4096 16 x 32 x 128 20.9-21.0 against
    # the 64 x 64 cells' 22.7-26.0 at K 4096 and 47.5-47.8 against 49.9-56.4 at K 11008 (torch 22.3-23.1 /
    # 45.8-46.2); N 11008 16 x 128 x 128 44.7 against 45.5-46.6. Not measured for tf32 nor for matmul_tn.
    got = _matmul(gpu, "matmul_" + fmt, cfg, None, transposed=True, narrow=name == "matmul_nt" and fmt != "tf32")
    if got is not None:
        got.pop("group", None)
    return got


def matmul_split(gpu: str, fmt: str, m: int, n: int, k: int, precision: str = "tf32") -> dict:
    """How to run an [m, k] x [k, n] product on ``gpu``: {"splits": 1} (one pass; its tiles come
    from the call's own lookup) or {"splits": S, "config": matmul_partial's tuned keys, "reduce":
    splitk_reduce's}: for a small M and a long K, the splits that fill one wave of ``fill_cell``'s cells
    (``_fill_split``); else the split count minimising the model (S in 2..16, each split at least
    four K slices). One pass on a GPU the rule does not know, for ieee products and for small problems."""
    # asked once per problem (the model weighs the sizes' powers of two, the small-M fill the sizes
    # themselves). Worked out afresh it cost 50-100 us of host time a call (this repository's CPU), which
    # bench/suite.py's small products measured as their time (2026-12-01: every (1024, 1024) product ~65 us
    # on the H200)
    key = (gpu, fmt, m, n, k, precision)
    got = _SPLIT_PLANS.get(key)
    if got is None:
        f = {"f32": "tf32"}.get(fmt, fmt)
        if gpu not in SMS or f not in ("f16", "bf16", "tf32") or precision == "ieee":
            got = {"splits": 1}
        else:
            s = _fill_split(gpu, f, m, n, k, precision)
            got = _split_config(s, fill_cell(f, m, precision), f) if s > 1 else \
                _split_plan(gpu, f, pow2_at_least(m), pow2_at_least(n), pow2_at_least(k), precision)
        if len(_SPLIT_PLANS) >= 4096:  # a bound: a stream of distinct shapes does not grow it forever
            _SPLIT_PLANS.clear()
        _SPLIT_PLANS[key] = got
    if got["splits"] == 1:
        return {"splits": 1}
    return {k: dict(v) if isinstance(v, dict) else v for k, v in got.items()}  # the caller's own copy


_SPLIT_PLANS: dict[tuple, dict] = {}


# Small M, long K (bench/results/small_m_h200.json, H200, GPU time by torch.profiler): one pass over
# 32-64 blocks of a [64, 128] or [64, 64] cell pulls about 2 TB/s (tf32 1 x 4096 x 11008: 97 us, torch
# 44), and 3xtf32's one pass is compute-bound (64 rows of three products for 1-128 real ones: 160 us at
# 1 x 4096 x 4096 where tf32 took 34). Cutting K until the cells fill one wave (64 x 128, S splits)
# brought those to 50 and 64 us. A split call costs 38-60 us of host time against one pass's 12-20:
# where one pass takes less than that, the split is host-bound eager (f16 16 x 4096 x 11008: 43 -> 27
# us of GPU time, but 56 us of host time, and do_bench's time went from 46 to 54) -- so it is taken only
# where one pass is slower than the split's host time at its worst. At larger M one pass already runs
# near the bandwidth (f16 at 64 rows: 10 us at 4096 x 4096 against 16-19 at 1-16 rows).
SMALL_M_SPLIT = {"f16": 16, "bf16": 16, "tf32": 64, "3xtf32": 128}  # the largest M (bucket) split so
ONE_PASS_PULL = 2.0e12  # bytes a second one pass of few blocks pulled (f16 and tf32, 1-64 rows)
THREE_X_SLOWER = 4.7  # 3xtf32's one pass against tf32's at 1-64 rows (160 / 34 us)
SPLIT_HOST_S = 60e-6  # a split call's host time at its worst (38-60 us on the H200's host)
SPLIT_MOST = 8
FILL_CELL = (64, 128)  # the cell the splits fill a wave with (the probe's fastest at 1-128 rows but 3xtf32's
# 65-128, below)
# 3xtf32 past 64 rows: a 128-row cell (two warpgroups; its three products a K slice are compute-bound). H200,
# 128 x 4096 x 4096 (bench/small_m_probe.py --part x3, bench/results/small_m_x3_h200.json, do_bench): 4
# splits of 128 x 128 with 8 warps 88 us against 2 splits of 64 x 128's 131 (torch fp32 97); at 16 rows
# 64 x 128 stays the faster (72 against 84)
WIDE_FILL_CELL = (128, 128)
# 3xtf32 in one pass: B's tf32 halves first (kernels.product_3xtf32), then matmul_3xtf32 on these cells. H100
# (bench/results/split_b_h100.json, do_bench flushed, torch f32 beside): 4096^3 1.82 ms against the one-kernel
# form's 2.27 (torch 2.66: 1.46x against 1.17x), 8192^3 14.1 against 17.8, 2048 x 11008 x 4096 2.59 against
# 3.08, 1000 x 4096 x 4096 0.52 against 0.57 (1.09x); K slices of 64 at or ahead of 32 at all five, 128 x 64
# cells slower than torch. At 128 rows the split (above) stays: 0.09 ms against the halves' 0.31; 129-999 rows
# were not measured, so they keep the one-kernel form (HALVES_LEAST_ROWS, the smallest measured win). The cell
# and the bound were chosen on these same shapes: not yet held out.
HALVES_CELL = {"tm": 128, "tn": 128, "tk": 64, "group": 8, "warps": 8}
HALVES_LEAST_ROWS = 1000


def fill_cell(fmt: str, m: int, precision: str = "tf32") -> tuple[int, int]:
    """The cell a small-M split fills one wave with: ``WIDE_FILL_CELL`` for 3xtf32 past 64 rows, else
    ``FILL_CELL``."""
    return WIDE_FILL_CELL if fmt == "tf32" and precision == "3xtf32" and m > 64 else FILL_CELL


def _fill_split(gpu: str, fmt: str, m: int, n: int, k: int, precision: str) -> int:
    """The split count that makes an [m, k] x [k, n] product of small M fill one wave of ``fill_cell``'s
    cells (a power of two up to SPLIT_MOST; each split keeps at least four K slices), where one
    pass would take longer than a split call's host time; 1 where the product is not such a one.
    The sizes are the call's own (``matmul_split`` asks once per problem), not their buckets: a
    bucket can be 4x the work of the product it stands for (N 5000 and K 1000 in 8192 x 1024)."""
    kind = "3xtf32" if fmt == "tf32" and precision == "3xtf32" else fmt
    if pow2_at_least(m) > SMALL_M_SPLIT.get(kind, 0):
        return 1
    one_pass = n * k * _BYTES[fmt] / ONE_PASS_PULL * (THREE_X_SLOWER if kind == "3xtf32" else 1.0)
    if one_pass < SPLIT_HOST_S:
        return 1
    cell = fill_cell(fmt, m, precision)
    cells, slices, s = cdiv(m, cell[0]) * cdiv(n, cell[1]), cdiv(k, _TK[_BYTES[fmt]]), 1
    while s < SPLIT_MOST and cells * s * 2 <= SMS[gpu] and slices >= 8 * s:
        s *= 2
    return s


def _split_config(splits: int, tile: tuple[int, int], fmt: str) -> dict:
    """A split plan: matmul_partial's [tm, tn] cell with a K slice of 128 bytes a row (8 warps for
    128-row cells), and splitk_reduce's 64 x 128 blocks."""
    tm, tn = tile
    cfg = {"tm": tm, "tn": tn, "tk": _TK[_BYTES[fmt]], "warps": 8 if tm >= 128 else 0}
    return {"splits": splits, "config": cfg, "reduce": {"rm": 64, "rn": 128}}


def _split_plan(gpu: str, fmt: str, bm: int, bn: int, bk: int, precision: str) -> dict:
    if _small(bm, bn, bk):
        return {"splits": 1}
    tk = _TK[_BYTES[fmt]]
    tm, tn = _pick_tile(gpu, fmt, bm, bn, bk, precision=precision)
    best_s, best_t = 1, _estimate(gpu, fmt, bm, bn, bk, tm, tn)
    for s in (2, 3, 4, 6, 8, 12, 16):
        if cdiv(bk, tk) < 4 * s:
            break
        for t in _tile_candidates(bm, precision):
            est = _estimate(gpu, fmt, bm, bn, bk, *t, splits=s)
            # a split must win clearly: it costs a second launch and a workspace. At 0.9 it split M <= 64
            # x 4096 x 4096 in two (model: 0.79-0.87 of one pass), which ran 0.62-0.65x torch against
            # one pass's 0.86-0.96x (bench/results/matmul_probe_h200.json); 4096 x 11008 (model 0.68) won
            if est < best_t * SPLIT_GAIN:
                best_s, best_t, tm, tn = s, est, *t
    return _split_config(best_s, (tm, tn), fmt) if best_s > 1 else {"splits": 1}


def _bmm(gpu, name, cfg, measured):
    batch, m, n, k = cfg.get("B"), cfg.get("M"), cfg.get("N"), cfg.get("K")
    if not (batch and m and n and k):
        return None
    fmt = cfg.get("fmt", "f16")
    tm, tn = _pick_tile(gpu, fmt, m, n, k, batch=batch)
    return _tile_config(fmt, tm, tn, _MEASURED_BIG, batch * cdiv(m, tm), 1, grouped=False)


def _partial(gpu, name, cfg, measured):
    m, n, k, s = cfg.get("M"), cfg.get("N"), cfg.get("K"), cfg.get("S")
    if not (m and n and k and s):
        return None
    fmt = {"f32": "tf32"}.get(cfg.get("fmt", "f16"), cfg.get("fmt", "f16"))
    precision = cfg.get("precision", "tf32")
    scored = [(t, _estimate(gpu, fmt, m, n, k, *t, splits=s)) for t in _tile_candidates(m, precision)]
    tm, tn = min(scored, key=lambda x: x[1])[0]
    return {"tm": tm, "tn": tn, "tk": _TK[_BYTES[fmt]], "warps": 8 if tm >= 128 else 0}



# ---- persistent products ---------------------------------------------------------------------------

# kernels.matmul_persistent / bmm_persistent: 132 blocks, each walking every 132nd cell of C in the
# grouped order, against the one-cell kernels at the rule's tiles. H200, f16, do_bench (L2 flushed),
# bench/persistent_probe.py -> bench/results/persistent_h200.json (2026-12-04), 128 x 256 cells with K
# slices of 64 and 8 warps (cells of 128 x 128 and 64 x 256 lost everywhere but 128 x 256^3; slices of 32
# beat 64 by 1-3% at 3 bmm shapes and lost by up to 12% elsewhere):
# * bmm: faster at all 7 shapes, 4 of the suite's and 3 it does not hold (16 x 1000^3, 128 x 256^3,
#   32 x 512^3): 0.84-0.92x torch -> 0.92-1.09x (64 x 512^3 0.92 -> 1.09, 64 x 2048^3 0.87 -> 0.92);
#   the one-cell rule took 128 x 256 at every one of them, so the walk is taken where it does.
# * one matrix, K <= 1024: faster where the cells make more than 1.5 waves (2048 / 3000 / 4096 / 8192 x
#   5000 x 1000, 320-1280 cells: +1.2 / +2 / +3.3 / +5.7%; 8192 x 1024 x 1024, 256 cells: +7%), slower
#   below (1000 x 5000 x 1000, 160 cells: -1%; 512 x 5000 x 1000, 80: -2%). With K = 4096 it lost
#   (4096^3 -3.6%, 2048 x 11008 x 4096 -0.3%): a long K loop already hides a cell's start and end.
# * x @ W^T (matmul_nt, W [N, K]: a Linear layer), at any K: 4096-16384 tokens with K 512-1024 0.67-0.93x
#   torch -> 0.86-1.08x (persistent_nt_h200.json), and with K 2048-14336 faster at all 14 shapes timed
#   (7 shapes x f16 / bf16; persistent_nt_long_h200.json): +1% (2048 x 4096 x 4096 bf16) to +18% (16384 x
#   2048 x 2048 f16, 0.76 -> 0.91x). matmul_nt one cell a block has no grouped order; the walk has one.
#   At 64 cells (2048 x 1024 x 1024) it lost, 1.06-1.08 -> 0.72-0.77x.
WALK_CELL = {"tm": 128, "tn": 256, "tk": 64, "warps": 8, "group": 8}
WALK_MOST_K = 1024
WALK_LEAST_WAVES = 1.5
# the smallest sides of the products that walked faster (2048 x 5000, 2048 x 4096, 8192 x 1024): a product
# of few rows (the rule's 16- and 64-row tiles) or few columns was never timed walking, so it keeps its cells
WALK_LEAST_ROWS = 2048
WALK_LEAST_COLS = 1024
_WALK_FORMATS = ("f16", "bf16")


def matmul_walk(gpu: str | None, fmt: str, m: int, n: int, k: int, *, weight_t: bool = False) -> dict | None:
    """matmul_persistent's (``weight_t``: matmul_nt_persistent's, for x @ W^T) configuration for a
    one-pass [m, k] x [k, n] product on ``gpu`` where it measured faster than the one-cell kernel
    (16-bit, more than ``WALK_LEAST_WAVES`` waves of 128 x 256 cells, at least ``WALK_LEAST_ROWS`` x
    ``WALK_LEAST_COLS``; the row-major product only with K at most ``WALK_MOST_K``), else None. The
    sizes are the call's own: the count of cells is what decides, and it is cheap."""
    if gpu not in SMS or fmt not in _WALK_FORMATS or (k > WALK_MOST_K and not weight_t):
        return None
    if m < WALK_LEAST_ROWS or n < WALK_LEAST_COLS:  # not measured: a few rows (decode), narrow outputs
        return None
    sms = SMS[gpu]
    if cdiv(m, WALK_CELL["tm"]) * cdiv(n, WALK_CELL["tn"]) <= WALK_LEAST_WAVES * sms:
        return None
    return dict(WALK_CELL, programs=sms)


def bmm_walk(gpu: str | None, fmt: str, b: int, m: int, n: int, k: int) -> dict | None:
    """bmm_persistent's configuration for a [b, m, k] x [b, k, n] product on ``gpu`` where the one-cell
    rule gives bmm the 128 x 256 cell (where the walk measured faster), else None."""
    if gpu not in SMS or fmt not in _WALK_FORMATS:
        return None
    key = (gpu, fmt, b, m, n, k)
    if key not in _BMM_WALKS:
        one = rule("bmm", gpu, {"B": b, "M": m, "N": n, "K": k, "fmt": fmt}) or {}
        walks = (one.get("tm"), one.get("tn")) == (128, 256)
        if len(_BMM_WALKS) >= 4096:  # a bound, as _SPLIT_PLANS'
            _BMM_WALKS.clear()
        _BMM_WALKS[key] = dict(WALK_CELL, programs=SMS[gpu]) if walks else None
    got = _BMM_WALKS[key]
    return dict(got) if got is not None else None


_BMM_WALKS: dict[tuple, dict | None] = {}

# ---- rows ----------------------------------------------------------------------------------------

ROW_LANES = 8192  # the measured chunk (tune_defaults.json: softmax, layernorm at 8192 x 8192)
BLOCKS_PER_SM = 4  # the measured occupancy
# Rows wider than the chunk, up to these widths, are one tile of their power of two (8 warps;
# occupancy 2 up to 16384 lanes, 1 past): H200, bench/results/wide_rows_probe_h200.json, against
# the 8192-lane walk's 0.37-0.87x torch, 0.90-1.44x at 16384 and 0.71-1.18x at 32768 (R 1 to 4096).
# At 65536 lanes the norms still gained (0.79-1.13x against 0.57-0.78) but softmax's tile spilled
# (0.24x against 0.48 at 4096 rows), so softmax walks its chunks past 32768. Measured on the H200
# only (the one sm_90 in SMS); the statistics-saving forwards and softmax's backward were not
# measured and keep the walk (no entry).
ONE_TILE_MOST = {"softmax": 32768, "layernorm": 65536, "rmsnorm": 65536}
# The hints of softmax's walk past that width: 8 warps, occupancy 2, against tileiras' own count
# and 4: 0.66x torch at 1 and 64 rows of 65536 (0.29-0.30), 0.85x at 4096 (0.47), f32 0.83x at
# one row (0.36). And a block of several narrow rows takes 8 warps: 32768 x 1000 f16 0.66x (0.40).
# H200, bench/results/softmax_configs_h200.json; the norms were not measured so (>= 0.83x already).
WALK_HINTS = {"softmax": {"warps": 8, "occupancy": 2}}
NARROW_WARPS = {"softmax": 8}


def _rows(gpu, name, cfg, measured):
    r, c = cfg.get("R"), cfg.get("C")
    if not (r and c):
        return None
    # small problems get a chunk of their own width too: the measured 8192-lane entry took 21-23 us for
    # softmax of 1 x 128 and 64 x 512 on the H200, torch 5-6 (bench/results/host_bound_h200.json)
    base = dict(measured) if measured else {"max_tile": ROW_LANES, "occupancy": BLOCKS_PER_SM}
    lanes = base.get("max_tile", ROW_LANES)
    wide = pow2_at_least(c)
    if lanes < c and wide <= ONE_TILE_MOST.get(name, 0):  # the whole row one tile, as measured
        return {"max_tile": wide, "rows": 1, "one_chunk": True, "warps": 8, "occupancy": 2 if wide <= 16384 else 1}
    if c >= lanes:  # the measured: one row a block in chunks of its lanes; one chunk where it is one
        return dict(base, one_chunk=c == lanes, **(WALK_HINTS.get(name, {}) if c > lanes else {}))
    # one chunk of the row's own width; rows share a block up to the measured chunk's lanes, while
    # leaving BLOCKS_PER_SM blocks an SM
    fill = max(1, r // (BLOCKS_PER_SM * SMS[gpu]))
    rows = max(1, min(lanes // c, 1 << (fill.bit_length() - 1)))
    block = rows * c
    warps = NARROW_WARPS.get(name, base.get("warps", 0)) if block >= lanes else 0
    out = {"max_tile": c, "rows": rows, "one_chunk": True, "warps": warps,
           "occupancy": BLOCKS_PER_SM if block >= lanes // 2 else 2 * BLOCKS_PER_SM}
    return out


# ---- attention -----------------------------------------------------------------------------------


def _attention(gpu, name, cfg, measured):
    b, h, s, d = cfg.get("B"), cfg.get("H"), cfg.get("S"), cfg.get("D")
    if not (b and h and s and d):
        return None
    d_tile = max(16, d)
    if d_tile > 128:
        return None
    s_kv = cfg.get("S_kv", s)
    causal = bool(cfg.get("causal", False))
    bq = bk = 128
    warps, occupancy = 8, (1 if d_tile == 128 else 0)
    if cdiv(s, bq) * h * b < SMS[gpu] or s <= 64:
        bq = 64
        warps = 0  # tileiras 13.4.92 answers causal bq 64 with 8 warps wrong (docs/speed.md)
    if s_kv <= 64:
        bk = 64
    if d_tile == 64 and s_kv <= SHORT_KEYS and bq == 128:
        bk, occupancy = 64, 2  # short sequences at d 64 (attention_short_h200.json)
    if d_tile == 128 and bq == 128 and not causal:  # 64-row blocks two an SM (HALF_ROWS_WARPS)
        bq, warps, occupancy = 64, HALF_ROWS_WARPS, 2
    if d_tile == 128 and causal:  # the default table's causal entry, but short ones (CAUSAL_D128_SHORT_KEYS)
        bq = bk = 64 if pow2_at_least(s_kv) <= CAUSAL_D128_SHORT_KEYS else 128
        warps, occupancy = (0, 2) if bq == 64 else (8, 1)
    if causal and bq % bk:
        bk = bq
    out = {"bq": bq, "bk": bk, "d_tile": d_tile, "warps": warps, "occupancy": occupancy}
    if d_tile == 64 and (bq, bk) == (128, 128):
        out["latency"] = LONG_D64_LATENCY
    # by the size classes a call site keeps one configuration for (powers of two)
    if causal and pow2_at_least(s) >= HEAVY_FIRST_KEYS and pow2_at_least(b) * h <= HEAVY_FIRST_MOST_HEADS:
        out["heavy_first"] = True
    return out


# d 128 without the mask: 64 x 128 blocks with 4 warps, two an SM, in place of 128 x 128 with 8 at one (the
# default table's entry for D 128, swept on the H200 at B4 H32 S4096 among 128- and 256-row blocks only).
# H100, f16, B*H*S = 2^18 (bench/attention_fwd_configs.py, attention_fwd_configs_h100.json, the fastest of
# two interleaved rounds): 0.78-0.82x SDPA -> 0.86-0.90 at S 512-4096 (9-11% faster), S 16384 level (0.947
# against 0.948), every answer checked against SDPA; held out (attention_fwd_held_out_h100.json, 5 shapes
# S 640-8192) 0.84-0.96x against 0.81-0.91 (a tie at S 8192). Causal see CAUSAL_D128_SHORT_KEYS. Not timed
# on the H200.
HALF_ROWS_WARPS = 4

# d 128 causal: 128 x 128 blocks with 8 warps, one an SM (what the default table's causal entry held for every
# such shape: tune2_h200.json, B4 H32 S4096), but at most CAUSAL_D128_SHORT_KEYS keys (by the size class)
# 64 x 64 blocks with tileiras' warps, two an SM. H100, f16, the fastest of two interleaved rounds: fitted
# (attention_fwd_configs_h100.json) S 512 0.758 -> 0.790 and 0.733 -> 0.823x SDPA, S 1024 0.836 -> 0.843;
# at two more (attention_fwd_held_out_h100.json) S 640 0.765 -> 0.786, S 1024 0.839 -> 0.846; by time 0.8-10.9%
# faster at those 5. Past 2048 keys they took 1.7-12.3% longer, and at 1500 (held out) 2.6%, where fitted S 2048
# was 1.4% quicker: the boundary follows S 1500, in the same size class. 4 warps at 640 and 1024 keys timed the
# same as tileiras' own. The size class of the keys (S_kv; every timed row had S = S_kv) and of D (65-128 take
# d_tile 128, as HALF_ROWS_WARPS; only D = 128 was timed). Not timed on the H200.
CAUSAL_D128_SHORT_KEYS = 1024


# Causal attention of at least 4096 keys (32 query blocks of 128) and at most 64 heads in all (B * H) starts
# the heaviest blocks first (the kernel's heavy_first: the query blocks on the grid's slowest axis). H200, f16
# (bench/attention_order_probe.py): with H 16, B * H 16-64, S 4096-16384, 3-6% faster (three interleaved
# rounds, attention_order_long_h200.json: d 64 S16384 1451 -> 1367 us, d 128 S8192 1217 -> 1152); at the
# headline's B4 H32 S4096 (128 heads) 2% slower at d 64 and d 128; at S 512-2048 1-14% slower causal
# (attention_order_h200.json: d 128 S512 145 -> 166), and without the mask slower at 11 of 12 shapes (d 64
# S16384 2% faster). The blocks running at once are then of many heads, which share no keys, where side by
# side a head's query blocks read the same keys and values from L2. Fewer than 16 heads were not measured.
HEAVY_FIRST_KEYS = 4096
HEAVY_FIRST_MOST_HEADS = 64


# d 64 on 128 x 128 blocks (past SHORT_KEYS): every view load with latency 1, 4-5% faster on the H200 at
# B8 H16 S2048 f16 (381 / 379 -> 366 / 366 us, causal 242 / 242 -> 230 / 231: two rounds of separate
# processes, bench/results/latency_attention_h200.json; one round of 1-10 in latency_h200.json). No
# change at d 128 (S512 causal 145-147 us, S2048 within 1%, latency_h200.json); on the f16 products
# latency 1 doubled 8192^3 and 4096^3 (latency_h200.json), 6 and 8 nothing clear
# (latency_matmul_h200.json). Only D = 64 was measured; the rule gives it to the bucket (D 33-64).
LONG_D64_LATENCY = 1

# the fused attention backward at head dims past 64 without the mask: every view load at latency 1. H100,
# B4 H32 S4096 D128 (bench/results/attention_fused_variants_h100.json): the whole backward 6.14 ms against
# 6.81 at the default latency (0.95x SDPA against 0.85); held out (attention_fused_rule_h100.json) 4-19%
# faster at 4 of 4. Causal, latency 1 ran 1.4% slower there and 2-6% faster at three held-out shapes, where
# the transposing views won at all five (below); the two together were not timed.
FUSED_D128_LATENCY = 1
# ... and causal, Q^T and dO^T read through the transposing views: on the H100 0.6-8.5% faster than transposed
# in registers at all 5 causal D 128 shapes timed (attention_fused_variants_h100.json, attention_fused_rule_h100.json:
# B4 H32 S4096 3.68 against 3.70 ms, B1 H16 S16384 6.11 against 6.20, B1 H9 S2048 0.126 against 0.137); on the
# H200 the two were within 3% either way across runs (attention_fused_tiles_h200.json)
FUSED_D128_CAUSAL_VIEWS = True

# d 64 with at most this many keys: 64-key blocks, two blocks an SM. H200, B*H*S = 2^18 f16:
# S 512 causal 0.81x SDPA (the 128 x 128 blocks' 0.62), not causal 0.87 (0.71), S 1024 causal
# 0.83 (0.70); at d 128 it lost (0.69 against 0.72). Longer sequences were not measured so.
SHORT_KEYS = 1024


def attention_training(gpu: str | None, b: int, h: int, s: int, d: int, causal: bool) -> dict:
    """The training kernels' configurations for [b, h, s, d] attention on ``gpu``: {"fwd": the
    forward that saves lse, "delta": the backward's preprocess, "dkdv": the dK/dV kernel's (the fused
    backward's too, where asked for without a "fused" entry), "dq": the dQ kernel's, and "fused" where
    the rule takes the fused backward: its configuration}, each beyond causal / scale / fmt / d_tile.
    On the H200:

    * Up to 1024 keys (bench/attention_small_probe.py, bench/results/attention_small_h200.json: S 256
      to 1024, D 64 and 128, causal and not, GPU time): 64 x 64 tiles at occupancy 2 for the forward
      and dQ, and for dK/dV at D 64 (64 x 128 with 8 warps at occupancy 2 at D 128). At the training
      example's B32 H8 S256 D64 causal the four kernels took 78 us against the long-sequence tiles'
      174 (training_profile_h200.json) and cuDNN's SDPA 77.
    * Longer: the sweeps of bench/training_device.py (bench/results/training_h200.json: S 1024 and 4096,
      D 64 and 128, causal and not, f16 and bf16) chose the same tiles at every shape: the forward's
      128 x 128 blocks with 8 warps (at D 128 with occupancy 1, the inference kernel's: 5-6% faster than
      128 x 64 at B4 H32 S4096; at D 64 causal with the load latency 1, 2%), dK/dV 64 x 128 with 8 warps
      (1.40 ms against the 64 x 64 default's 2.10 at B4 H32 S4096 D64), dQ 128 x 64 with 8 warps (0.99
      against 1.28). Where those tiles leave the GPU's multiprocessors without a block each, the 64 x
      64 defaults.
    * delta: 256-row blocks at every length (6.7 us against the 64-row default's 12.7 at the example's
      shape; 23 against 47 at B8 H32 S1024 D64).

    * "fused" (present where the rule takes ``attention_bwd_fused`` in place of dK/dV and dQ: its
      configuration): past 1024 keys where the 128-row blocks give every SM one, the lengths where it
      was timed against the three kernels' own tiles there (bench/attention_fused_ab.py times them at
      the long-sequence tiles, which shorter sequences do not take). At B4 H32 S4096 (D 64 and 128,
      causal and not) it took 0.84-0.92x SDPA's backward against the three kernels' 0.71-0.76x
      (bench/results/attention_fused_tiles_h200.json). 64 x 128 with 8 warps, Q^T and dO^T transposed in
      registers at D 64 (t_views False: 4-9% faster than the transposing views); 128 x 128 at D 128 ran
      9.5-12x slower. At D 64 without the mask 128 x 128 (2-5% faster; causal it was 0.5-1.6% slower).
      Past D 64 without the mask every view load at latency 1 (FUSED_D128_LATENCY), and causal the
      transposing views (FUSED_D128_CAUSAL_VIEWS). Held out (attention_fused_rule_h200.json, S 512 to
      16384, B*H 8 to 512, f16 and bf16): at the 5 shapes the rule takes it, 10-22% faster than the three
      kernels, 0.80-1.11x SDPA; attention_fused_rule_h100.json adds 12 shapes on the H100.

    Never 64 x 64 with 8 warps, which tileiras 13.4.92 answers wrong (the sweeps' "ok": false). A GPU
    the rule does not know: the kernels' defaults."""
    small = {"bq": 64, "bk": 64}
    if gpu not in SMS:
        return {"fwd": dict(small), "delta": {}, "dkdv": dict(small), "dq": dict(small)}
    if s <= 1024:
        short = {"bq": 64, "bk": 64, "occupancy": 2}
        dkdv = {"bq": 64, "bk": 128, "warps": 8, "occupancy": 2} if d > 64 else dict(short)
        return {"fwd": dict(short), "delta": {"bq": 256}, "dkdv": dkdv, "dq": dict(short)}
    sms = SMS[gpu]
    busy = cdiv(s, 128) * h * b >= sms  # 128-row blocks still give every SM one
    if not busy:
        fwd = dict(small)
    elif d > 64:  # the inference kernel's long-sequence tiles (_attention)
        fwd = {"bq": 128, "bk": 128, "warps": 8, "occupancy": 1}
    else:
        fwd = {"bq": 128, "bk": 128, "warps": 8, **({"latency": LONG_D64_LATENCY} if causal else {})}
    dkdv = {"bq": 64, "bk": 128, "warps": 8} if busy else dict(small)
    dq = {"bq": 128, "bk": 64, "warps": 8} if busy else dict(small)
    if causal and fwd["bq"] % fwd["bk"]:
        fwd["bk"] = fwd["bq"]
    return {"fwd": fwd, "delta": {"bq": 256}, "dkdv": dkdv, "dq": dq, **_fused(b, h, s, d, causal, sms)}


def _fused(b: int, h: int, s: int, d: int, causal: bool, sms: int) -> dict:
    """attention_training's "fused" entry, where it takes the fused backward (its docstring)."""
    if s > 1024 and cdiv(s, 128) * h * b >= sms:
        cfg = {"bq": 128 if d <= 64 and not causal else 64, "bk": 128, "warps": 8, "t_views": False}
        if d > 64 and not causal:  # every view load at latency 1: FUSED_D128_LATENCY
            cfg["latency"] = FUSED_D128_LATENCY
        elif d > 64:  # causal: Q^T and dO^T through the transposing views (FUSED_D128_CAUSAL_VIEWS)
            cfg["t_views"] = FUSED_D128_CAUSAL_VIEWS
        return {"fused": cfg}
    return {}


RULES = {"matmul_f16": _matmul, "matmul_bf16": _matmul, "matmul_tf32": _matmul, "matmul_f8": _matmul,
         "matmul_nt": _matmul_t, "matmul_tn": _matmul_t,
         "bmm": _bmm, "matmul_partial": _partial, "softmax": _rows, "layernorm": _rows, "rmsnorm": _rows,
         "layernorm_fwd_stats": _rows, "rmsnorm_fwd_stats": _rows, "attention": _attention, "softmax_bwd": _rows}
# a kernel with no measurement of its own starts from its sibling's (the same walk over the rows)
MEASURED_AS = {"layernorm_fwd_stats": "layernorm", "rmsnorm_fwd_stats": "rmsnorm", "softmax_bwd": "softmax"}


def rule(name: str, gpu: str, config: dict, measured: dict | None = None) -> dict | None:
    """The rule's configuration (tuned keys only) for kernel ``name`` on ``gpu`` under ``config``
    (the call's configuration with the kernel's defaults filled in, and its named run-time sizes),
    or None where it has nothing to say. ``measured``: the default table's catch-all entry for the
    kernel, which the rule starts from where its tile is the one chosen."""
    fn = RULES.get(name)
    if fn is None or gpu not in SMS:
        return None
    return fn(gpu, name, _bucketed(config), dict(measured) if measured else None)


__all__ = ["rule", "matmul_split", "matmul_walk", "bmm_walk", "attention_training", "RULES", "MEASURED_AS", "SMS",
           "TILE_EFFICIENCY", "SMALL_MACS", "SMALL_OPERAND"]
