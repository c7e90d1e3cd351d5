"""Fused attention forward (flash-attention style): O = softmax(Q K^T * scale [+ causal mask]) V for
torch's layout, Q and O [B, H, S, D], K and V [B, H_kv, S_kv, D], of f16 or bf16.

Every extent is read off the arrays, and every stride but the last dimension's is passed too, so
a ``[B, S, H, D]`` tensor's ``.transpose(1, 2)`` is read in place. The batch and both sequence
lengths are run-time sizes: one cubin per configuration and head shape serves every batch and
length. The head shape (D, H, H_kv: a model's constants) is recorded as each call's values, one
program per value (``@kernel(exact=...)``; the measurement is beside the decorator). The
head dimension D is covered by one tile of ``d_tile`` lanes (a power of two >= D, configuration;
the lanes past D read zero, which adds nothing to a dot product, and O's are not written).
K and V may have fewer heads than Q (grouped-query attention: query head h reads K/V head
h // (H / H_kv)) and a sequence length of their own (cross-attention).

One block computes a [bq, D] block of O: grid axis 0 walks the query blocks, axis 1 the heads,
axis 2 the batch (with ``heavy_first``: axis 0 the heads, 1 the batch, 2 the query blocks from the
last, so a causal grid starts its heaviest blocks first; with ``programs``: at most that many blocks on
one axis, each walking every programs-th block of O in heavy_first's order over the whole grid).
The loop over key blocks keeps an online softmax in f32 carries -- the running row maximum m, the
running sum l and the [bq, d_tile] accumulator -- with exp2 and the scale
folded in (scale * log2(e); scale 1/sqrt(D) unless given, a constant with D recorded); p is converted
to the operand format for the second mma. K^T is read straight from memory through a partition
view whose dim_map puts the key dimension last (a [1, 1, d_tile, bk] tile of K), so no tile is
transposed in registers.

Causal masks by absolute positions (key j is seen by query i when j <= i, torch's is_causal): the
loop over key blocks stops at the diagonal; the blocks wholly below it and inside S_kv run
unmasked, the rest mask key > query and key >= S_kv with coordinate compares. Not causal: the
whole key blocks run unmasked and a partial last one masks the key tail (its K lanes read zero,
which would otherwise score 0, not -inf). Query rows past S are computed on padding and never
written.
"""

from __future__ import annotations

import math

import numpy as np

from .. import surface as ti
from ..dtypes import BF16, F16, F32, dtype
from ..errors import TileirError
from ..ir import PadZero
from ..kernel import cdiv, kernel
from ..markers import FREE_AXIS, In, Shared, Whole, cells
from ..values import Tile
from .entry_hints import entry_hints
from .registry import Case, register
from .softmax import LOG2E

_QO = ["B", "H", "S", "D"]
_KV = ["B", "H_kv", "S_kv", "D"]


def _bk(bk, d_tile):
    """The key block: as configured, else 128 for head tiles up to 64 and 64 above."""
    return bk or (128 if d_tile <= 64 else 64)


def _q(fmt="f16", bq=128, d_tile=128, heavy_first=False, programs=0):
    # heavy_first: the query block is the grid's last axis and each block names its own (below);
    # programs: a walk, every cell named by its block
    along = [FREE_AXIS] * 4 if programs else [1, 0, FREE_AXIS, FREE_AXIS] if heavy_first else [2, 1, 0, FREE_AXIS]
    return In(fmt, cells(_QO, [1, 1, bq, d_tile], along=along, pad=PadZero))


def _k(fmt="f16"):
    return Whole(fmt, _KV)


def _v(fmt="f16", bk=None, d_tile=128, heavy_first=False, programs=0):
    batch = FREE_AXIS if programs else 1 if heavy_first else 2  # the grid axis the batch follows, if any
    return In(fmt, cells(_KV, [1, 1, _bk(bk, d_tile), d_tile], along=[batch, FREE_AXIS, FREE_AXIS, FREE_AXIS],
                         pad=PadZero))


def _o(fmt="f16"):
    return Shared(fmt, _QO)


def _grid(B, H, S, D, H_kv, bq=128, d_tile=128, heavy_first=False, programs=0):  # noqa: N803  (run-time sizes)
    """(query blocks, heads, batch), with ``heavy_first`` (heads, batch, query blocks), with ``programs``
    at most that many blocks (a walk); refuses a head dimension past the head tile and a head count
    K/V's does not divide, before anything is launched."""
    if D > d_tile:
        raise TileirError(f"the head dimension D is {D} and the head tile d_tile is {d_tile}: a head is one tile",
                          kernel="attention", what="d_tile",
                          fix=f"d_tile={1 << (D - 1).bit_length()} (a power of two >= D)")
    if H % H_kv:
        raise TileirError(f"q has {H} heads and k / v {H_kv}: grouped-query attention wants H_kv to divide H",
                          kernel="attention", what="k", fix="k and v with a number of heads that divides q's")
    if programs:
        return (max(1, min(cdiv(S, bq) * H * B, programs)),)
    return (H, B, cdiv(S, bq)) if heavy_first else (cdiv(S, bq), H, B)


def _idx_min(a, b):
    return ti.idx_of(ti.min_i(ti.idx_as_tile(a), ti.idx_as_tile(b)))


def _check(causal, bq, bk, warps):
    if causal and bq % bk:
        raise TileirError(f"causal attention with bq={bq} and bk={bk}: the diagonal walk wants bk to divide bq",
                          fix="bk <= bq, both powers of two", kernel="attention")
    if causal and bq <= 64 and warps >= 8:
        # measured on the H200 (bench/results/attention_warps_h200.json, docs/assembler-defect.md):
        # tileiras answers wrong here at every level, while the host reference and 4 warps are right
        raise TileirError(f"causal attention with bq={bq} and warps={warps}: tileiras 13.4.92 gives wrong answers "
                          "for this configuration on sm_90 (measured at bq = bk = 64, head dims 64 and 128, -O0 "
                          "included)", fix="warps=0 (tileiras' choice), or bq=128 with warps=8 (the tuned "
                          "configuration)", kernel="attention")


# The head shape is recorded (one program per D, H, H_kv: a model's constants; 1/sqrt(D) and the
# grouped-query head a constant); the batch and the sequence lengths stay run-time. On the H200 at
# B4 H32 S4096 D128 (bench/results/attention_constants3_h200.json, interleaved): 2.160 ms (causal
# 1.232) against 2.145 (1.220) with every size recorded and 2.248 (1.289) with only S and S_kv;
# bench/h200.py 504 / 454 TFLOP/s after, 491-499 / 441-442 before.
@kernel(name="attention", grid=_grid, hints=entry_hints,
        tuned=("bq", "bk", "d_tile", "warps", "occupancy", "latency", "heavy_first", "programs"),
        exact=("D", "H", "H_kv"))
def attention(q=_q, k=_k, v=_v, o=_o, *, causal: bool = False, scale: float | None = None, fmt: str = "f16",
              bq: int = 128, bk: int | None = None, d_tile: int = 128, warps: int = 0, occupancy: int = 0,
              latency: int = 0, heavy_first: bool = False, programs: int = 0):
    """O[b, h] = softmax(Q[b, h] K[b, h']^T * scale) V[b, h'] for every batch b and head h of
    [B, H, S, D] q and o and [B, H_kv, S_kv, D] k and v (h' = h // (H / H_kv)), f16 or bf16 with
    f32 accumulation and statistics; ``causal`` masks key > query (absolute positions). scale:
    1/sqrt(D) unless given; bq, bk: the query and key blocks (bk: 128 for d_tile <= 64, else 64);
    d_tile: the head tile, a power of two >= D; warps, occupancy, latency: kernels/entry_hints.py.
    heavy_first: the query blocks walk the grid's slowest axis from the last one down, so under a causal
    mask the blocks with the most keys start first and the last wave holds the lightest.
    programs: at most that many blocks, each walking every programs-th [bq, D] block of O, the
    heaviest first (every head's last query block, then the ones before: heavy_first's order over the
    whole grid); 0: one block of O a block."""
    bk = _bk(bk, d_tile)
    _check(causal, bq, bk, warps)
    if programs and heavy_first:
        raise TileirError("attention with programs and heavy_first: the walk takes the heaviest blocks first "
                          "already", kernel="attention", what="heavy_first", fix="heavy_first=False with programs")
    def shared():  # what every block of O reads: S_kv, the scale, K^T's view
        s_kv = ti.extent_of(k, 2)
        qk_scale: Tile | float  # a tile where it is 1/sqrt(D) of the arrays', else the host number
        if scale is None:
            qk_scale = ti.rsqrt(ti.int_to_float(ti.idx_as_tile(ti.extent_of(q, 3)), F32)) * LOG2E
        else:
            qk_scale = scale * LOG2E
        # K^T: [1, 1, d_tile, bk] tiles of K, tile dimension 3 running along the keys
        kt_view = ti.partition_view(ti.array_view(k), [1, 1, d_tile, bk], dim_map=[0, 1, 3, 2], padding=PadZero)
        return s_kv, qk_scale, kt_view

    def kv_head(h):  # grouped-query: K/V's head
        return ti.idx_div(h, ti.idx_div(ti.extent_of(q, 1), ti.extent_of(k, 1)))

    if programs:
        s_kv, qk_scale, kt_view = shared()
        heads = ti.extent_of(q, 1)
        nq, rows_of = ti.blocks_of(q, 2), ti.idx_mul(heads, ti.extent_of(q, 0))  # query blocks; heads x batch
        for cell in ti.d_range(ti.block_id(0), ti.idx_mul(nq, rows_of), ti.num_blocks(0)):
            qi = ti.idx_sub(ti.idx_sub(nq, ti.idx_const(1)), ti.idx_div(cell, rows_of))  # the last first
            hb = ti.idx_rem(cell, rows_of)
            bz, h = ti.idx_div(hb, heads), ti.idx_rem(hb, heads)
            _block(q, v, o, kt_view, s_kv, qk_scale, bz, h, kv_head(h), qi, [bz, h, qi, 0], True, causal, fmt,
                   bq, bk, d_tile)
        return
    # (the operations in the order the one-block-a-block programs were measured in: the same bytes)
    if heavy_first:
        h, bz = ti.block_id(0), ti.block_id(1)
        qi = ti.idx_sub(ti.idx_sub(ti.num_blocks(2), ti.idx_const(1)), ti.block_id(2))
    else:
        qi, h, bz = ti.block_id(0), ti.block_id(1), ti.block_id(2)
    hk = kv_head(h)
    s_kv, qk_scale, kt_view = shared()
    _block(q, v, o, kt_view, s_kv, qk_scale, bz, h, hk, qi, [qi, 0] if heavy_first else [0], False, causal, fmt,
           bq, bk, d_tile)


def _block(q, v, o, kt_view, s_kv, qk_scale, bz, h, hk, qi, q_at, walked, causal, fmt, bq, bk, d_tile):
    """One [bq, D] block of O: query block ``qi`` of head ``h`` (K/V's ``hk``) of batch ``bz`` (Q's cell
    at ``q_at``, the free axes its marker leaves; ``walked``: every axis free, V's batch named too)."""
    qt = ti.reshape(ti.load_at(q, q_at), [bq, d_tile])
    m_i = ti.carry(ti.full([bq, 1], -math.inf, F32))
    l_i = ti.carry(ti.full([bq, 1], 0.0, F32))
    acc = ti.carry(ti.full([bq, d_tile], 0.0, F32))
    rows = ti.coord(ti.tile_at(qi, bq), [bq, bk], 0)  # each lane's query position (loop-invariant)
    s_kv_lanes = ti.idx_as_tile(s_kv)

    def step(j, masked):
        kt = ti.reshape(ti.load_view(kt_view, [bz, hk, 0, j]), [d_tile, bk])
        vt = ti.reshape(ti.load_at(v, [bz, hk, j, 0] if walked else [hk, j, 0]), [bk, d_tile])
        sc = ti.mma(qt, kt, 0.0)  # [bq, bk] f32
        if masked:
            cols = ti.coord(ti.tile_at(j, bk), [bq, bk], 1)
            keep = ti.lt_i(cols, s_kv_lanes)
            if causal:
                keep = ti.and_mask(keep, ti.le_i(cols, rows))
            sc = ti.select(keep, sc, -math.inf)
        softmax_step(m_i, l_i, acc, sc, qk_scale, vt, fmt)

    whole = ti.idx_div(s_kv, ti.idx_const(bk))  # the key blocks wholly inside S_kv
    nk = ti.blocks_of(v, 2)  # every key block, the partial last one included
    if causal:
        per = bq // bk  # key blocks per query block
        lo = ti.idx_mul(qi, per)  # the key blocks before lo lie wholly below the diagonal
        unmasked = _idx_min(lo, whole)
        for j in ti.d_range(0, unmasked):
            step(j, False)
        for j in ti.d_range(unmasked, _idx_min(ti.idx_add(lo, per), nk)):
            step(j, True)
    else:
        for j in ti.d_range(0, whole):
            step(j, False)
        for j in ti.d_range(whole, nk):  # none, or the partial last key block
            step(j, True)
    out = ti.get(acc) * (1.0 / ti.get(l_i))
    o_view = ti.partition_view(ti.array_view(o), [1, 1, bq, d_tile])
    ti.store_view(o_view, [bz, h, qi, 0], ti.reshape(ti.to(out, fmt), [1, 1, bq, d_tile]))


def softmax_step(m_i, l_i, acc, sc, qk_scale, vt, fmt):
    """One key block of the online softmax, on the carries m_i (the running row maximum of the base-2
    scores), l_i (the running sum) and acc (the [bq, d_tile] accumulator): sc, the block's [bq, bk]
    f32 scores, scaled by qk_scale (the scale times log2(e)), vt its [bk, d_tile] values. Each
    probability is one fma and an exp2 with flush_to_zero: without the flag tileiras writes each
    exp2 with a range check and two conditional multiplies, and the scale's multiply and the
    subtraction stay two instructions (bench/results/sass_ftz_cpu.json: 2536 -> 2008 instructions at
    D 128 causal); a probability under 2^-126 becomes 0, which adds nothing to a sum of at least 1 (and
    is 0 already once converted to f16 for the second product; bf16 would have kept it, a subnormal)."""
    m_old = ti.get(m_i)
    m_new = ti.max(m_old, ti.reduce_max(sc, keepdims=True) * qk_scale)
    p = ti.exp2(ti.fma(sc, qk_scale, -m_new), ftz=True)
    alpha = ti.exp2(m_old - m_new, ftz=True)
    ti.set(l_i, ti.get(l_i) * alpha + ti.reduce_sum(p, keepdims=True))
    ti.set(acc, ti.mma(ti.to(p, fmt), vt, ti.get(acc) * alpha))
    ti.set(m_i, m_new)


def head_tile(d: int) -> int:
    """The smallest head tile that covers a head dimension d: a power of two, at least 16 (the
    matrix product's smallest operand dimension)."""
    return max(16, 1 << (int(d) - 1).bit_length())


def reference(q, k, v, causal, scale=None):
    """Attention in f64 over [B, H, S, D] q and [B, H_kv, S_kv, D] k and v (numpy)."""
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    group = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    sc = np.einsum("bhqd,bhkd->bhqk", q, k) * (1 / math.sqrt(q.shape[3]) if scale is None else scale)
    if causal:
        sc = np.where(np.tril(np.ones((q.shape[2], k.shape[2]), bool)), sc, -np.inf)
    e = np.exp(sc - sc.max(axis=-1, keepdims=True))
    return np.einsum("bhqk,bhkd->bhqd", e / e.sum(axis=-1, keepdims=True), v)


# ---- cases ---------------------------------------------------------------------------------------


def _size(sz):
    """(B, H, S, D), or (B, H, S, D, H_kv, S_kv)"""
    sz = tuple(sz)
    return sz if len(sz) == 6 else sz + (sz[1], sz[2])


def _case(name, fmt, causal, rtol, atol):
    npd = dtype(fmt).np
    n = dtype(fmt).name

    def inputs(sz, rng):
        b, h, s, d, h_kv, s_kv = _size(sz)
        q = rng.standard_normal((b, h, s, d)).astype(npd)
        k, v = (rng.standard_normal((b, h_kv, s_kv, d)).astype(npd) for _ in range(2))
        return [q, k, v, np.zeros((b, h, s, d), npd)]

    def expected(args):
        q, k, v = args[:3]
        return reference(q, k, v, causal)

    def config(sz):  # the head tile where the kernel's default (128) is not the smallest that covers D
        t = head_tile(_size(sz)[3])
        return dict({"causal": causal, "fmt": n}, **({} if t == 128 else {"d_tile": t}))

    return register(Case(name, attention, f"fused attention forward, {n}, {'causal' if causal else 'not causal'}, "
                         "[B, H, S, D], any sizes (D up to the head tile)", (1, 4, 512, 64), config, inputs,
                         expected, output=3, rtol=rtol, atol=atol))


_case("attention_f16", F16, False, 1e-2, 1e-2)
_case("attention_f16_causal", F16, True, 1e-2, 1e-2)
_case("attention_bf16", BF16, False, 2e-2, 3e-2)
_case("attention_bf16_causal", BF16, True, 2e-2, 3e-2)
