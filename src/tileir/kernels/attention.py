"""Fused attention forward (flash-attention style): O = softmax(Q K^T * scale [+ causal mask]) V for
Q, K, V, O row-major [B*H, S, D] tensors of f16 or bf16, head dims 64 and 128 (any power of two).

One block computes a [bq, D] block of O for one (batch, head): grid axis 0 walks the query blocks,
grid axis 1 the B*H heads (DYN_DIM: one cubin serves every B*H). The loop over key blocks keeps an
online softmax in f32 carries -- the running row maximum m, the running sum l and the [bq, D]
accumulator -- with exp2 and the scale folded in (scale * log2(e)); p is converted to the operand
format for the second mma. K^T is read straight from memory through a partition view whose dim_map
puts the key dimension last (a [1, D, bk] tile of the [B*H, S, D] tensor), so no tile is transposed
in registers; Q and V are cells (Q along the grid, V's key dimension FREE), O is an Out cell.

Causal: the loop over key blocks stops at the diagonal. The blocks wholly below it run unmasked,
the diagonal ones mask key > query with a coordinate compare. Not causal: the whole key blocks run
unmasked and a partial last one (S % bk != 0) masks the key tail (its K lanes read zero, which
would otherwise score 0, not -inf). Query rows past S are computed on padding and never written.
"""

from __future__ import annotations

import math

import numpy as np

from .. import surface as ti
from ..dtypes import BF16, F16, F32, dtype
from ..errors import TileirError
from ..ir import DYN_DIM, PadZero
from ..kernel import cdiv, kernel
from ..markers import FREE_AXIS, In, Out, Whole, cells
from .entry_hints import entry_hints
from .registry import Case, register

LOG2E = 1.4426950408889634


def _bk_default(d):
    return 128 if d <= 64 else 64


def _q(s, d, bq=128, fmt="f16"):
    return In(fmt, cells([DYN_DIM, s, d], [1, bq, d], along=[1, 0, 2], pad=PadZero))


def _v(s, d, bk=None, fmt="f16"):
    bk = bk or _bk_default(d)
    return In(fmt, cells([DYN_DIM, s, d], [1, bk, d], along=[1, FREE_AXIS, 2], pad=PadZero))


def _o(s, d, bq=128, fmt="f16"):
    return Out(fmt, cells([DYN_DIM, s, d], [1, bq, d], along=[1, 0, 2]))


def _k(fmt="f16"):
    return Whole(fmt)


@kernel(name="attention", hints=entry_hints, tuned=("bq", "bk", "warps", "occupancy"))
def attention(q=_q, k=_k, v=_v, o=_o, *, s: int, d: int, causal: bool = False, fmt: str = "f16", bq: int = 128,
              bk: int | None = None, scale: float | None = None, warps: int = 0, occupancy: int = 0):
    """O[h] = softmax(Q[h] K[h]^T * scale) V[h] for every head h of [B*H, s, d] tensors (f16 or
    bf16; f32 accumulation and statistics); ``causal`` masks key > query. scale: 1/sqrt(d) unless
    given; bq, bk: the query and key block (bk: 128 for d <= 64, else 64)."""
    bk = bk or _bk_default(d)
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
    qk_scale = (1.0 / math.sqrt(d) if scale is None else scale) * LOG2E
    qi, h = ti.block_id(0), ti.block_id(1)
    nk = cdiv(s, bk)
    # K^T: [1, d, bk] tiles of the [B*H, s, d] tensor, tile dimension 2 running along the keys
    kt_view = ti.partition_view(ti.tensor_view_dyn(k, 0, [ti.Dyn(ti.num_blocks(1)), s, d], [s * d, d, 1]),
                                [1, d, bk], dim_map=[0, 2, 1], padding=PadZero)

    qt = ti.reshape(ti.load_cell(q), [bq, d])
    m_i = ti.carry(ti.full([bq, 1], -math.inf, F32))
    l_i = ti.carry(ti.full([bq, 1], 0.0, F32))
    acc = ti.carry(ti.full([bq, d], 0.0, F32))
    q0 = ti.tile_at(qi, bq)
    rows = ti.coord(q0, [bq, bk], 0)  # each lane's query position (loop-invariant)

    def step(j, masked):
        kt = ti.reshape(ti.load_view(kt_view, [h, 0, j]), [d, bk])
        vt = ti.reshape(ti.load_at(v, [j]), [bk, d])
        sc = ti.mma(qt, kt, 0.0)  # [bq, bk] f32
        if masked:
            cols = ti.coord(ti.tile_at(j, bk), [bq, bk], 1)
            keep = ti.le_i(cols, rows) if causal else ti.lt_i(cols, ti.i_const(s))
            sc = ti.select(keep, sc, -math.inf)
        m_old = ti.get(m_i)
        m_new = ti.max(m_old, ti.reduce_max(sc, keepdims=True) * qk_scale)
        p = ti.exp2(sc * qk_scale - m_new)
        alpha = ti.exp2(m_old - m_new)
        ti.set(l_i, ti.get(l_i) * alpha + ti.reduce_sum(p, keepdims=True))
        ti.set(acc, ti.mma(ti.to(p, fmt), vt, ti.get(acc) * alpha))
        ti.set(m_i, m_new)

    if causal:
        per = bq // bk  # key blocks per query block
        lo = ti.idx_mul(qi, per)  # the key blocks before lo lie wholly below the diagonal
        for j in ti.d_range(0, lo):
            step(j, False)
        hi = ti.idx_add(lo, per)
        if cdiv(s, bq) * per > nk:  # the last query block reaches past the last key block
            hi = ti.idx_of(ti.min_i(ti.idx_as_tile(hi), ti.i_const(nk)))
        for j in ti.d_range(lo, hi):
            step(j, True)
    else:
        for j in ti.d_range(0, s // bk):
            step(j, False)
        if s % bk:
            step(ti.idx_const(s // bk), True)
    out = ti.get(acc) * (1.0 / ti.get(l_i))
    ti.store_cell(o, ti.reshape(ti.to(out, fmt), [1, bq, d]))


# ---- cases ---------------------------------------------------------------------------------------


def _size(sz):
    """(batch*heads, s, d)"""
    return tuple(sz)


def _case(name, fmt, causal, rtol, atol):
    npd = dtype(fmt).np

    def inputs(sz, rng):
        bh, s, d = _size(sz)
        return [rng.standard_normal((bh, s, d)).astype(npd) for _ in range(3)] + [np.zeros((bh, s, d), npd)]

    def expected(args):
        q, k, v = (a.astype(np.float64) for a in args[:3])
        s, d = q.shape[1], q.shape[2]
        sc = np.einsum("hqd,hkd->hqk", q, k) / math.sqrt(d)
        if causal:
            sc = np.where(np.tril(np.ones((s, s), bool)), sc, -np.inf)
        e = np.exp(sc - sc.max(axis=-1, keepdims=True))
        return np.einsum("hqk,hkd->hqd", e / e.sum(axis=-1, keepdims=True), v)

    n = dtype(fmt).name
    return register(Case(name, attention, f"fused attention forward, {n}, {'causal' if causal else 'not causal'}, "
                         "[B*H, S, D], D 64 or 128, any S", (4, 512, 64),
                         lambda sz: {"s": _size(sz)[1], "d": _size(sz)[2], "causal": causal, "fmt": n}, inputs,
                         expected, output=3, rtol=rtol, atol=atol))


_case("attention_f16", F16, False, 1e-2, 1e-2)
_case("attention_f16_causal", F16, True, 1e-2, 1e-2)
_case("attention_bf16", BF16, False, 2e-2, 3e-2)
_case("attention_bf16_causal", BF16, True, 2e-2, 3e-2)
