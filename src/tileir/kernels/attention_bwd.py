"""Attention for training: a forward that saves the log-sum-exp, and the FlashAttention-2-style
backward, for torch's layout [B, H, S, D] of f16 or bf16 (f32 accumulation and statistics).

Every extent but the head dimension D is a run-time size read off the arrays (every stride but the
last is passed too), so one cubin per configuration and D serves every batch, head count and length,
and a ``[B, S, H, D]`` tensor's ``.transpose(1, 2)`` is read in place. A head is one tile of
``d_tile`` lanes (a power of two >= D; the lanes past D read zero and add nothing to a dot
product). q, k, v, o, do and their gradients share B, H and S (no grouped-query heads here).

The saved statistic: ``lse`` [B, H, S] f32, the natural-log log-sum-exp of each query row's
scaled scores, lse_i = log(sum_j exp(scale * q_i . k_j)) over the keys it sees, so that
P_ij = exp(scale * q_i . k_j - lse_i) (torch's SDPA convention). The kernels work in base 2 --
exp2 with log2(e) folded into the scale, lse * log2(e) -- and store and read the natural log.

The backward, from S = scale * Q K^T, P = softmax(S), O = P V and dO:

    dV = P^T dO        dP = dO V^T        dS = P * (dP - delta),  delta_i = sum_d dO_id O_id
    dQ = scale * dS K  dK = scale * dS^T Q

(delta_i = sum_j P_ij dP_ij because O = P V: the softmax's Jacobian applied to dP). Three kernels:

* ``attention_bwd_delta(o, do, delta)``: delta [B, H, S] f32.
* ``attention_bwd_dkdv``: a block per [bk] block of keys, looping over the query blocks; P^T is
  recomputed from K Q^T and lse, so nothing of size S x S is ever stored. Q^T and dO^T are read
  through partition views whose dim_map puts the query dimension last (no register transposes).
* ``attention_bwd_dq``: a block per [bq] block of queries, looping over the key blocks (no
  atomics: every dQ block is written once by one block, so the answer is deterministic).

Or, in place of the last two, ``attention_bwd_fused``: the dK/dV kernel's walk reducing each
step's share of dQ into an f32 accumulator a tile at a time (a TMA reduction), which the rule takes
on long sequences (heuristics.attention_training).

Causal (key j seen by query i when j <= i): each loop runs only over the blocks on or below the
diagonal, masking the blocks that straddle it by coordinate compares. Edges: a padded query row
has q = dO = 0 (and lse = delta = 0), so it adds nothing to dK or dV; a padded key row's dK and
dV rows are never written; in the dQ kernel a partial last key block is masked (a padded key
scores 0, and exp(0 - lse) may overflow where every real score is very negative).
"""

from __future__ import annotations

import math

import numpy as np

from .. import autotune
from .. import surface as ti
from ..dtypes import BF16, F16, F32, dtype
from ..errors import TileirError
from ..heuristics import attention_training
from ..ir import PadZero
from ..kernel import cdiv, kernel
from ..markers import FREE_AXIS, In, Out, Shared, Whole, cells
from .attention import softmax_step
from .entry_hints import entry_hints
from .launching import empty, fmt_of, launch, on_host, pow2_at_least, zeros
from .registry import Case, register
from .softmax import LOG2E

LN2 = 0.6931471805599453
_BHSD = ["B", "H", "S", "D"]
_BHS = ["B", "H", "S"]
# The head dimension is recorded (one program per D, a model's constant): with D a run-time size a
# strided [B, S, H, D] view's row pitch could leave a gap past D, so views.load_may_read_a_gap
# keeps TMA off for every load (07's q, k, v are views of one [B, S, 3HD] product).
_HEAD_DIM = ("D",)


# ---- markers -------------------------------------------------------------------------------------


def _block(fmt="f16", bq=64, d_tile=128):
    """This block's [bq, d_tile] rows of a [B, H, S, D] tensor: grid axes (query block, head, batch)."""
    return In(fmt, cells(_BHSD, [1, 1, bq, d_tile], along=[2, 1, 0, FREE_AXIS], pad=PadZero))


def _key_block(fmt="f16", bk=64, d_tile=128, heavy_first=False):
    """The dK/dV kernel's own [bk, d_tile] rows of K or V: grid axes (key block, head, batch), or with
    ``heavy_first`` (head, batch, key block)."""
    along = [1, 0, 2, FREE_AXIS] if heavy_first else [2, 1, 0, FREE_AXIS]
    return In(fmt, cells(_BHSD, [1, 1, bk, d_tile], along=along, pad=PadZero))


def _walked(fmt="f16", bk=64, d_tile=128):
    """K or V walked along its sequence by the loop (a FREE dimension) at the block's head."""
    return In(fmt, cells(_BHSD, [1, 1, bk, d_tile], along=[2, 1, FREE_AXIS, FREE_AXIS], pad=PadZero))


def _whole(fmt="f16"):
    """A [B, H, S, D] tensor read through views (its transposed tiles, or rows the loop names)."""
    return Whole(fmt, _BHSD)


def _rows_out(fmt="f16"):
    """A [B, H, S, D] output written through a view (the head tile follows no grid axis)."""
    return Shared(fmt, _BHSD)


_STAT_WHOLE = Whole(F32, _BHS)  # lse or delta, read a [bq] block at a time at the query block the loop names


def _stat_out(bq=64):
    """lse or delta [B, H, S] f32, written a [bq] block at a time by the query block's block."""
    return Out(F32, cells(_BHS, [1, 1, bq], along=[2, 1, 0]))


def _stat_in(bq=64):
    """lse or delta [B, H, S] f32, this query block's [bq] entries."""
    return In(F32, cells(_BHS, [1, 1, bq], along=[2, 1, 0], pad=PadZero))


# ---- shared pieces -------------------------------------------------------------------------------


def _check_head(D, d_tile, name):  # noqa: N803
    if D > d_tile:
        raise TileirError(f"the head dimension D is {D} and the head tile d_tile is {d_tile}: a head is one tile",
                          kernel=name, what="d_tile", fix=f"d_tile={pow2_at_least(D)} (a power of two >= D)")


def _query_grid(B, H, S, D, bq=64, d_tile=128):  # noqa: N803  (the run-time sizes' names)
    _check_head(D, d_tile, "attention")
    return (cdiv(S, bq), H, B)


def _key_grid(B, H, S, D, bk=64, d_tile=128, name="attention_bwd_dkdv"):  # noqa: N803
    _check_head(D, d_tile, name)
    return (cdiv(S, bk), H, B)


def _fused_grid(B, H, S, D, bk=64, d_tile=128, heavy_first=False):  # noqa: N803
    """_key_grid's, or with ``heavy_first`` (heads, batch, key blocks): the key blocks the slowest axis,
    so a causal grid starts every head's first key blocks (the most query blocks) before the rest."""
    grid = _key_grid(B, H, S, D, bk, d_tile, "attention_bwd_fused")
    return (grid[1], grid[2], grid[0]) if heavy_first else grid


def _scales(q, scale):
    """(softmax scale, the same times log2(e)): given, or 1/sqrt(D) from the recorded D."""
    if scale is None:
        s = ti.rsqrt(ti.int_to_float(ti.idx_as_tile(ti.extent_of(q, 3)), F32))
        return s, s * LOG2E
    return scale, scale * LOG2E


def _idx_min(a, b):
    return ti.idx_of(ti.min_i(ti.idx_as_tile(ti.as_idx(a)), ti.idx_as_tile(ti.as_idx(b))))


def _idx_ceil_div(a, n: int):
    return ti.idx_div(ti.idx_add(a, n - 1), n)


def _tile2(t, rows, cols):
    return ti.reshape(t, [rows, cols])


# ---- the forward that saves lse ----------------------------------------------------------------------


def _walk_keys(step, qi, seq, nk, bq: int, bk: int, causal: bool) -> None:
    """``step(j, masked)`` over the key blocks query block ``qi`` sees: causal, the blocks wholly
    below the diagonal unmasked, then the diagonal's masked; else the blocks wholly inside S
    unmasked, then the partial last one (if any) masked. ``nk``: the key blocks there are."""
    if causal:
        below = ti.idx_mul(qi, bq // bk)  # key blocks wholly below the diagonal (all inside S)
        for j in ti.d_range(0, below):
            step(j, False)
        for j in ti.d_range(below, _idx_min(ti.idx_add(below, bq // bk), nk)):
            step(j, True)
    else:
        whole = ti.idx_div(seq, ti.idx_const(bk))
        for j in ti.d_range(0, whole):
            step(j, False)
        for j in ti.d_range(whole, nk):  # none, or the partial last key block
            step(j, True)


def _check_warps(causal, bq, warps, name, bk=None, small=64):
    """Refuse the causal configurations tileiras 13.4.92 answers wrong with 8 warps: measured on the
    H200, dK/dV and dQ at 64 x 64 tiles (``bk`` given: bench/results/training_h200.json, the sweeps'
    "ok": false, at D 64 and 128, S 1024 and 4096) and the forward with 64-query blocks whatever its
    key block (``bk`` None: ``attention``'s check, bench/results/attention_warps_h200.json); dK/dV at
    64 x 128 and dQ at 128 x 64 with 8 warps were right (dK/dV at 128 x 64 is not: _check_key_walk)."""
    if causal and warps >= 8 and bq <= small and (bk is None or bk <= small):
        tiles = "bq=128" if bk is None else "bq=128, bk=64" if name == "attention_bwd_dq" else "bq=64, bk=128"
        raise TileirError(f"causal {name} with bq={bq}, bk={bk} and warps={warps}: tileiras 13.4.92 gives wrong "
                          "answers there on the H200 (bench/results/training_h200.json)", kernel=name, what="warps",
                          fix=f"warps=0 (tileiras' choice), or {tiles} with warps=8 (heuristics.attention_training)")


def _check_key_walk(causal, bq, bk, warps, name, fused=False):
    """Refuse the causal dK/dV walks with 8 warps that the H200 answered wrong while the host
    reference is right at every ratio of the two blocks (bench/key_walk_check.py,
    bench/results/key_walk_h200.json, 2 x 4 x 1031 at D 64 and 128): query blocks larger than the
    key blocks (128 x 64: dK and dV wrong, and the fused kernel's dQ, at tileiras' default level and
    at -O0 alike), and in the fused kernel query blocks under 64 (32 x 128 at D 128: dK wrong at the
    default level, right at -O0). 64 x 128 answered right there, and so did every walk with tileiras'
    own warps and every walk without the mask; the fused kernel at 128 x 128 (D 64) answered right at
    B4 H32 S4096 and B1 H32 S8192 (bench/results/attention_fused_rule_h200.json)."""
    if causal and warps >= 8 and (bq > bk or (fused and bq < 64)):
        raise TileirError(f"causal {name} with bq={bq}, bk={bk} and warps={warps}: tileiras 13.4.92 gives wrong "
                          "answers there on the H200 (bench/results/key_walk_h200.json)", kernel=name,
                          what="bq", fix="bq=64, bk=128 (heuristics.attention_training), or warps=0")


def _check_causal_tiles(causal, bq, bk, name):
    if causal and bq % bk:
        raise TileirError(f"causal {name} with bq={bq} and bk={bk}: the diagonal walk wants bk to divide bq",
                          fix="bk <= bq, both powers of two", kernel=name)


@kernel(grid=_query_grid, hints=entry_hints, exact=_HEAD_DIM)
def attention_fwd_lse(q=_block, k=_whole, v=_walked, o=_rows_out, lse=_stat_out, *, causal: bool = False,
                      scale: float | None = None, fmt: str = "f16", bq: int = 64, bk: int = 64, d_tile: int = 128,
                      warps: int = 0, occupancy: int = 0, latency: int = 0):
    """O = softmax(Q K^T * scale [causal]) V for [B, H, S, D] q, k, v, o (f16 / bf16, f32
    accumulation), also writing lse [B, H, S] f32 = the natural-log log-sum-exp of each row's
    scaled scores (what the backward recomputes P from). scale: 1/sqrt(D) unless given."""
    _check_causal_tiles(causal, bq, bk, "attention_fwd_lse")
    _check_warps(causal, bq, warps, "attention_fwd_lse")
    qi, h, bz = ti.block_id(0), ti.block_id(1), ti.block_id(2)
    seq = ti.extent_of(q, 2)
    _, c = _scales(q, scale)
    kt_view = ti.partition_view(ti.array_view(k), [1, 1, d_tile, bk], dim_map=[0, 1, 3, 2], padding=PadZero)
    q_blk = _tile2(ti.load_at(q, [0]), bq, d_tile)
    m_i = ti.carry(ti.full([bq, 1], -math.inf, F32))  # running row max of the base-2 scores
    l_i = ti.carry(ti.full([bq, 1], 0.0, F32))  # running sum of exp2(score - m)
    acc = ti.carry(ti.full([bq, d_tile], 0.0, F32))
    rows = ti.coord(ti.tile_at(qi, bq), [bq, bk], 0)  # each lane's query position

    def step(j, masked):
        kt = _tile2(ti.load_view(kt_view, [bz, h, 0, j]), d_tile, bk)
        vt = _tile2(ti.load_at(v, [j, 0]), bk, d_tile)
        sc = ti.mma(q_blk, kt, 0.0)
        if masked:
            cols = ti.coord(ti.tile_at(j, bk), [bq, bk], 1)
            keep = ti.le_i(cols, rows) if causal else ti.lt_i(cols, ti.idx_as_tile(seq))
            sc = ti.select(keep, sc, -math.inf)
        softmax_step(m_i, l_i, acc, sc, c, vt, fmt)

    _walk_keys(step, qi, seq, ti.blocks_of(v, 2), bq, bk, causal)
    out = ti.get(acc) * (1.0 / ti.get(l_i))
    o_view = ti.partition_view(ti.array_view(o), [1, 1, bq, d_tile])
    ti.store_view(o_view, [bz, h, qi, 0], ti.reshape(ti.to(out, fmt), [1, 1, bq, d_tile]))
    lse_nat = (ti.get(m_i) + ti.log2(ti.get(l_i))) * LN2
    ti.store_cell(lse, ti.reshape(lse_nat, [1, 1, bq]))


# ---- the backward --------------------------------------------------------------------------------


@kernel(grid=_query_grid, hints=entry_hints, exact=_HEAD_DIM)
def attention_bwd_delta(o=_block, do=_block, delta=_stat_out, *, fmt: str = "f16", bq: int = 64, d_tile: int = 128,
                        warps: int = 0, occupancy: int = 0):
    """delta[b, h, i] = sum_d dO[b, h, i, d] * O[b, h, i, d] in f32 (the backward's preprocess)."""
    prod = ti.to(ti.load_at(o, [0]), F32) * ti.to(ti.load_at(do, [0]), F32)
    ti.store_cell(delta, ti.reshape(ti.reduce_sum(_tile2(prod, bq, d_tile), 1), [1, 1, bq]))


def _probabilities(scores, c, neg_lse2):
    """P recomputed from the f32 scores: exp2(scores * c - lse * log2(e)), one fma and an exp2 with
    flush_to_zero (as the forward's softmax_step, for the same reason)."""
    return ti.exp2(ti.fma(scores, c, neg_lse2), ftz=True)


def _dkdv(q, k, v, do, lse, delta, dk, dv, dq32, causal, scale, fmt, bq, bk, d_tile, t_views, heavy_first=False):
    """The dK/dV kernel's body; with ``dq32`` (the fused kernel's) each step also reduces its share of
    dQ into that f32 accumulator's tile; ``heavy_first``: the grid is (head, batch, key block)."""
    if heavy_first:
        h, bz, kj = ti.block_id(0), ti.block_id(1), ti.block_id(2)
    else:
        kj, h, bz = ti.block_id(0), ti.block_id(1), ti.block_id(2)
    sm_scale, c = _scales(q, scale)
    k_blk = _tile2(ti.load_at(k, [0]), bk, d_tile)
    v_blk = _tile2(ti.load_at(v, [0]), bk, d_tile)
    # Q and dO as [d_tile, bq] tiles (the query dimension last), and as [bq, d_tile] rows
    qt_view = ti.partition_view(ti.array_view(q), [1, 1, d_tile, bq], dim_map=[0, 1, 3, 2], padding=PadZero)
    dot_view = ti.partition_view(ti.array_view(do), [1, 1, d_tile, bq], dim_map=[0, 1, 3, 2], padding=PadZero)
    q_view = ti.partition_view(ti.array_view(q), [1, 1, bq, d_tile], padding=PadZero)
    do_view = ti.partition_view(ti.array_view(do), [1, 1, bq, d_tile], padding=PadZero)
    lse_view = ti.partition_view(ti.array_view(lse), [1, 1, bq], padding=PadZero)
    delta_view = ti.partition_view(ti.array_view(delta), [1, 1, bq], padding=PadZero)
    dk_acc = ti.carry(ti.full([bk, d_tile], 0.0, F32))
    dv_acc = ti.carry(ti.full([bk, d_tile], 0.0, F32))
    keys = ti.coord(ti.tile_at(kj, bk), [bk, bq], 0)  # each lane's key position
    # dQ's [bq, d_tile] tiles, cut at S and D by the view's bounds (no padding: a reduction refuses one)
    dq_view = None if dq32 is None else ti.partition_view(ti.array_view(dq32), [1, 1, bq, d_tile])

    def step(i, masked):
        q_rows = _tile2(ti.load_view(q_view, [bz, h, i, 0]), bq, d_tile)
        do_rows = _tile2(ti.load_view(do_view, [bz, h, i, 0]), bq, d_tile)
        if t_views:
            qt = _tile2(ti.load_view(qt_view, [bz, h, 0, i]), d_tile, bq)
            dot = _tile2(ti.load_view(dot_view, [bz, h, 0, i]), d_tile, bq)
        else:
            qt, dot = ti.transpose(q_rows), ti.transpose(do_rows)
        neg_lse2 = _tile2(ti.load_view(lse_view, [bz, h, i]), 1, bq) * -LOG2E
        dl = _tile2(ti.load_view(delta_view, [bz, h, i]), 1, bq)
        pt = _probabilities(ti.mma(k_blk, qt, 0.0), c, neg_lse2)  # P^T [bk, bq]
        if masked:
            queries = ti.coord(ti.tile_at(i, bq), [bk, bq], 1)
            pt = ti.select(ti.le_i(keys, queries), pt, 0.0)
        ti.set(dv_acc, ti.mma(ti.to(pt, fmt), do_rows, ti.get(dv_acc)))
        dst = ti.to(pt * (ti.mma(v_blk, dot, 0.0) - dl), fmt)  # dS^T [bk, bq]
        ti.set(dk_acc, ti.mma(dst, q_rows, ti.get(dk_acc)))
        if dq_view is not None:  # this key block's share of dQ's rows i, scale * dS K, reduced into their tile
            part = ti.mma(ti.transpose(dst), k_blk, 0.0) * sm_scale
            ti.atomic_red_view(dq_view, [bz, h, i, 0], "addf", "device", ti.reshape(part, [1, 1, bq, d_tile]))

    seq = ti.extent_of(q, 2)
    nq = _idx_ceil_div(seq, bq)
    if causal:
        first = ti.idx_div(ti.tile_at(kj, bk), ti.idx_const(bq))  # the first query block that sees a key here
        unmasked = _idx_min(_idx_ceil_div(ti.tile_at(ti.idx_add(kj, 1), bk), bq), nq)  # all queries >= all keys
        for i in ti.d_range(first, unmasked):
            step(i, True)
        for i in ti.d_range(unmasked, nq):
            step(i, False)
    else:
        for i in ti.d_range(0, nq):
            step(i, False)
    shape = [1, 1, bk, d_tile]
    ti.store_view(ti.partition_view(ti.array_view(dk), shape), [bz, h, kj, 0],
                  ti.reshape(ti.to(ti.get(dk_acc) * sm_scale, fmt), shape))
    ti.store_view(ti.partition_view(ti.array_view(dv), shape), [bz, h, kj, 0],
                  ti.reshape(ti.to(ti.get(dv_acc), fmt), shape))


@kernel(grid=_key_grid, hints=entry_hints, exact=_HEAD_DIM)
def attention_bwd_dkdv(q=_whole, k=_key_block, v=_key_block, do=_whole, lse=_STAT_WHOLE, delta=_STAT_WHOLE,
                       dk=_rows_out, dv=_rows_out, *, causal: bool = False, scale: float | None = None,
                       fmt: str = "f16", bq: int = 64, bk: int = 64, d_tile: int = 128, t_views: bool = True,
                       warps: int = 0, occupancy: int = 0):
    """dK and dV [B, H, S, D] for a [bk] block of keys a block: dV = P^T dO, dK = scale * dS^T Q
    over every query block (the causal ones on or below the diagonal), P recomputed from Q, K
    and lse, dS = P * (dO V^T - delta). t_views: Q^T and dO^T read through transposing views
    (True) or transposed in registers from the rows (False)."""
    _check_warps(causal, bq, warps, "attention_bwd_dkdv", bk)
    _check_key_walk(causal, bq, bk, warps, "attention_bwd_dkdv")
    _dkdv(q, k, v, do, lse, delta, dk, dv, None, causal, scale, fmt, bq, bk, d_tile, t_views)


@kernel(grid=_fused_grid, hints=entry_hints, exact=_HEAD_DIM)
def attention_bwd_fused(q=_whole, k=_key_block, v=_key_block, do=_whole, lse=_STAT_WHOLE, delta=_STAT_WHOLE,
                        dk=_rows_out, dv=_rows_out, dq32=Shared(F32, _BHSD), *, causal: bool = False,
                        scale: float | None = None, fmt: str = "f16", bq: int = 64, bk: int = 64, d_tile: int = 128,
                        t_views: bool = True, warps: int = 0, occupancy: int = 0, latency: int = 0,
                        heavy_first: bool = False):
    """attention_bwd_dkdv's dK and dV, and dQ in the same walk (FlashAttention-2's one backward
    kernel, the scores and probabilities computed once): each step's [bq, D] share of dQ, scale *
    dS K, is reduced into its tile of ``dq32``, a zeroed f32 [B, H, S, D] accumulator, by one
    atomic tile reduction (atomic_red_view, relaxed, device scope: tileiras writes it as a TMA
    reduction, UTMAREDG: bench/results/sass_backward_cpu.json). The sum's order is the blocks'
    arrival order, so dQ is not bitwise deterministic (torch's flash backward is not either). The
    caller converts dq32 to dQ. latency: every view load's latency hint (entry_hints). heavy_first:
    the key blocks on the grid's slowest axis (causal, the first key blocks walk the most query
    blocks: they start first, and the last wave holds the lightest)."""
    _check_warps(causal, bq, warps, "attention_bwd_fused", bk)
    _check_key_walk(causal, bq, bk, warps, "attention_bwd_fused", fused=True)
    _dkdv(q, k, v, do, lse, delta, dk, dv, dq32, causal, scale, fmt, bq, bk, d_tile, t_views, heavy_first)


@kernel(grid=_query_grid, hints=entry_hints, exact=_HEAD_DIM)
def attention_bwd_dq(q=_block, k=_whole, v=_whole, do=_block, lse=_stat_in, delta=_stat_in, dq=_rows_out, *,
                     causal: bool = False, scale: float | None = None, fmt: str = "f16", bq: int = 64, bk: int = 64,
                     d_tile: int = 128, t_views: bool = True, warps: int = 0, occupancy: int = 0):
    """dQ [B, H, S, D] for a [bq] block of queries a block: dQ = scale * dS K over every key block
    (the causal ones on or below the diagonal), dS = P * (dO V^T - delta), P from Q, K and lse.
    t_views: K^T and V^T read through transposing views (True) or transposed in registers from
    the rows (False)."""
    _check_causal_tiles(causal, bq, bk, "attention_bwd_dq")
    _check_warps(causal, bq, warps, "attention_bwd_dq", bk)
    qi, h, bz = ti.block_id(0), ti.block_id(1), ti.block_id(2)
    seq = ti.extent_of(q, 2)
    sm_scale, c = _scales(q, scale)
    kt_view = ti.partition_view(ti.array_view(k), [1, 1, d_tile, bk], dim_map=[0, 1, 3, 2], padding=PadZero)
    vt_view = ti.partition_view(ti.array_view(v), [1, 1, d_tile, bk], dim_map=[0, 1, 3, 2], padding=PadZero)
    k_view = ti.partition_view(ti.array_view(k), [1, 1, bk, d_tile], padding=PadZero)
    v_view = ti.partition_view(ti.array_view(v), [1, 1, bk, d_tile], padding=PadZero)
    q_blk = _tile2(ti.load_at(q, [0]), bq, d_tile)
    do_blk = _tile2(ti.load_at(do, [0]), bq, d_tile)
    neg_lse2 = _tile2(ti.load_cell(lse), bq, 1) * -LOG2E
    dl = _tile2(ti.load_cell(delta), bq, 1)
    dq_acc = ti.carry(ti.full([bq, d_tile], 0.0, F32))
    rows = ti.coord(ti.tile_at(qi, bq), [bq, bk], 0)  # each lane's query position

    def step(j, masked):
        kb = _tile2(ti.load_view(k_view, [bz, h, j, 0]), bk, d_tile)
        if t_views:
            kt = _tile2(ti.load_view(kt_view, [bz, h, 0, j]), d_tile, bk)
            vt = _tile2(ti.load_view(vt_view, [bz, h, 0, j]), d_tile, bk)
        else:
            kt, vt = ti.transpose(kb), ti.transpose(_tile2(ti.load_view(v_view, [bz, h, j, 0]), bk, d_tile))
        p = _probabilities(ti.mma(q_blk, kt, 0.0), c, neg_lse2)  # [bq, bk]
        if masked:
            cols = ti.coord(ti.tile_at(j, bk), [bq, bk], 1)
            keep = ti.le_i(cols, rows) if causal else ti.lt_i(cols, ti.idx_as_tile(seq))
            p = ti.select(keep, p, 0.0)
        ds = p * (ti.mma(do_blk, vt, 0.0) - dl)
        ti.set(dq_acc, ti.mma(ti.to(ds, fmt), kb, ti.get(dq_acc)))

    _walk_keys(step, qi, seq, _idx_ceil_div(seq, bk), bq, bk, causal)
    shape = [1, 1, bq, d_tile]
    ti.store_view(ti.partition_view(ti.array_view(dq), shape), [bz, h, qi, 0],
                  ti.reshape(ti.to(ti.get(dq_acc) * sm_scale, fmt), shape))


# ---- running the three -------------------------------------------------------------------------


def head_tile(d: int) -> int:
    """The smallest head tile covering a head dimension d: a power of two, at least 16."""
    return max(16, pow2_at_least(d))


def _configs(q, causal) -> dict:
    """The training kernels' configurations for ``q``'s shape: the rule for this GPU
    (heuristics.attention_training) on the GPU, the kernels' 64 x 64 defaults on the host reference."""
    b, h, s, d = (int(n) for n in q.shape)
    return attention_training(None if on_host(q) else autotune.this_gpu(), b, h, s, d, causal)


def attention_forward(q, k, v, o=None, lse=None, *, causal=False, scale=None, bq=None, bk=None, d_tile=None,
                      **hints):
    """(o, lse) of ``attention_fwd_lse`` for [B, H, S, D] q, k, v (fresh o and lse where None).
    ``bq`` / ``bk`` / ``hints``: the kernel's configuration; where neither tile is given, the
    rule's for this shape (``heuristics.attention_training``)."""
    b, h, s, d = (int(n) for n in q.shape)
    fmt = fmt_of(q)
    if bq is None and bk is None:
        hints = {**_configs(q, causal)["fwd"], **hints}
        bq, bk = hints.pop("bq"), hints.pop("bk")
    bq, bk = 64 if bq is None else bq, 64 if bk is None else bk
    o = empty(q, (b, h, s, d), fmt) if o is None else o
    lse = empty(q, (b, h, s), "f32") if lse is None else lse
    launch(attention_fwd_lse, q, k, v, o, lse, causal=causal, scale=scale, fmt=fmt, bq=bq, bk=bk,
           d_tile=d_tile or head_tile(d), **hints)
    return o, lse


def attention_backward(q, k, v, o, do, lse, dq=None, dk=None, dv=None, *, causal=False, scale=None, d_tile=None,
                       delta_config=None, dkdv_config=None, dq_config=None, fused=None):
    """(dq, dk, dv) of attention for [B, H, S, D] q, k, v, o, do and the forward's lse [B, H, S] f32
    (fresh outputs where None): delta, then either the fused kernel (``attention_bwd_fused``: dK, dV
    and dQ in one walk over the keys, dQ reduced into a zeroed f32 accumulator and then converted)
    or the dK/dV kernel and the dQ kernel. ``fused``: which (None: the rule's choice for this shape,
    heuristics.attention_training, where neither ``dkdv_config`` nor ``dq_config`` is given; with
    either given, the three kernels). ``*_config``: each kernel's own configuration beyond causal /
    scale / fmt / d_tile (bq, bk, t_views, warps, occupancy; ``dkdv_config`` is the fused kernel's
    too; where not given, the rule's). numpy / CPU tensors on the host reference, CUDA tensors on
    the GPU (torch's current stream: each launch follows the one before).

    The fused kernel computes the scores and probabilities once rather than twice (5 matrix
    products a block pair against 7); dQ's sum is in the blocks' arrival order, so it is not
    bitwise deterministic (torch's flash backward is not either), and it takes an f32 [B, H, S, D]
    buffer for the sum."""
    b, h, s, d = (int(n) for n in q.shape)
    fmt = fmt_of(q)
    dt = d_tile or head_tile(d)
    rule = _configs(q, causal)
    if fused is None:  # the rule's choice, unless the caller named the three kernels' configurations
        fused = "fused" in rule and dkdv_config is None and dq_config is None
    if dkdv_config is None:
        dkdv_config = rule["fused"] if fused and "fused" in rule else rule["dkdv"]
    dq_config = rule["dq"] if dq_config is None else dq_config
    delta_config = rule["delta"] if delta_config is None else delta_config
    delta = empty(q, (b, h, s), "f32")
    dq, dk, dv = (empty(q, (b, h, s, d), fmt) if a is None else a for a in (dq, dk, dv))
    common = {"causal": causal, "scale": scale, "fmt": fmt, "d_tile": dt}
    launch(attention_bwd_delta, o, do, delta, fmt=fmt, d_tile=dt, **(delta_config or {}))
    if fused:
        # torch's fill: a preprocess storing the zeros beside delta (FlashAttention-2's) took longer
        # than the two apart on the H200 (bench/results/attention_fused_prep_h200.json)
        dq32 = zeros(q, (b, h, s, d), "f32")
        launch(attention_bwd_fused, q, k, v, do, lse, delta, dk, dv, dq32, **common, **(dkdv_config or {}))
        if isinstance(dq, np.ndarray):
            dq[...] = dq32.astype(dq.dtype)
        else:
            dq.copy_(dq32)
        return dq, dk, dv
    launch(attention_bwd_dkdv, q, k, v, do, lse, delta, dk, dv, **common, **(dkdv_config or {}))
    launch(attention_bwd_dq, q, k, v, do, lse, delta, dq, **common, **(dq_config or {}))
    return dq, dk, dv


# ---- references (numpy, f64) -------------------------------------------------------------------


def _probs(q, k, causal, scale):
    q, k = np.asarray(q, np.float64), np.asarray(k, np.float64)
    sc = np.einsum("bhqd,bhkd->bhqk", q, k) * (1 / math.sqrt(q.shape[3]) if scale is None else scale)
    if causal:
        sc = np.where(np.tril(np.ones((q.shape[2], k.shape[2]), bool)), sc, -np.inf)
    m = sc.max(axis=-1, keepdims=True)
    lse = m + np.log(np.exp(sc - m).sum(axis=-1, keepdims=True))
    return np.exp(sc - lse), lse[..., 0]


def reference(q, k, v, causal=False, scale=None):
    """(o, lse) of attention in f64."""
    p, lse = _probs(q, k, causal, scale)
    return np.einsum("bhqk,bhkd->bhqd", p, np.asarray(v, np.float64)), lse


def grads_reference(q, k, v, do, causal=False, scale=None):
    """(dq, dk, dv) of attention in f64, from the formulas in the module docstring."""
    q, k, v, do = (np.asarray(a, np.float64) for a in (q, k, v, do))
    scale = 1 / math.sqrt(q.shape[3]) if scale is None else scale
    p, _ = _probs(q, k, causal, scale)
    dv = np.einsum("bhqk,bhqd->bhkd", p, do)
    dp = np.einsum("bhqd,bhkd->bhqk", do, v)
    ds = p * (dp - (dp * p).sum(axis=-1, keepdims=True))
    return scale * np.einsum("bhqk,bhkd->bhqd", ds, k), scale * np.einsum("bhqk,bhqd->bhkd", ds, q), dv


# ---- cases ---------------------------------------------------------------------------------------


def _size(sz):
    """(B, H, S, D)"""
    return tuple(sz)


def _inputs(fmt):
    npd = dtype(fmt).np

    def inputs(sz, rng):
        b, h, s, d = _size(sz)
        q, k, v, do = (rng.standard_normal((b, h, s, d)).astype(npd) for _ in range(4))
        return [q, k, v, do, np.zeros((b, h, s, d), npd)]

    return inputs


def _config(causal, fmt):
    def config(sz):
        return {"causal": causal, "fmt": dtype(fmt).name, "d_tile": head_tile(_size(sz)[3]), "bq": 16, "bk": 16}

    return config


def _grad_runner(which, causal):
    """A case runner: the forward (for o and lse), then the backward; gradient ``which`` (0 dq, 1 dk,
    2 dv) into the output."""

    def run(args, where="host", **cfg):
        q, k, v, do, out = args
        tiles = {"bq": cfg.get("bq", 64), "bk": cfg.get("bk", 64)}
        o, lse = attention_forward(q, k, v, causal=causal, d_tile=cfg.get("d_tile"), **tiles)
        got = attention_backward(q, k, v, o, do, lse, causal=causal, d_tile=cfg.get("d_tile"),
                                 delta_config={"bq": tiles["bq"]}, dkdv_config=tiles, dq_config=tiles)
        out[...] = got[which]

    return run


def _expected(which, causal):
    def expected(args):
        q, k, v, do = args[:4]
        return grads_reference(q, k, v, do, causal=causal)[which]

    return expected


def _grad_case(name, kern, which, fmt, causal, rtol, atol):
    n = dtype(fmt).name
    return register(Case(name, kern, f"attention backward ({['dq', 'dk', 'dv'][which]}), {n}, "
                         f"{'causal' if causal else 'not causal'}, [B, H, S, D], FlashAttention-2 style from lse",
                         (1, 2, 64, 64), _config(causal, fmt), _inputs(fmt), _expected(which, causal), output=4,
                         rtol=rtol, atol=atol, runner=_grad_runner(which, causal)))


def _fwd_case(name, fmt, causal, rtol, atol):
    npd = dtype(fmt).np

    def inputs(sz, rng):
        b, h, s, d = _size(sz)
        q, k, v = (rng.standard_normal((b, h, s, d)).astype(npd) for _ in range(3))
        return [q, k, v, np.zeros((b, h, s, d), npd), np.zeros((b, h, s), np.float32)]

    def expected(args):
        q, k, v = args[:3]
        return reference(q, k, v, causal)[0]

    return register(Case(name, attention_fwd_lse, f"attention forward saving lse, {dtype(fmt).name}, "
                         f"{'causal' if causal else 'not causal'}, [B, H, S, D]", (1, 2, 64, 64),
                         _config(causal, fmt), inputs, expected, output=3, rtol=rtol, atol=atol))


def _delta_case(name, fmt):
    npd = dtype(fmt).np

    def inputs(sz, rng):
        b, h, s, d = _size(sz)
        return [rng.standard_normal((b, h, s, d)).astype(npd) for _ in range(2)] + [np.zeros((b, h, s), np.float32)]

    def expected(args):
        return (args[0].astype(np.float64) * args[1].astype(np.float64)).sum(axis=-1)

    return register(Case(name, attention_bwd_delta, f"attention backward's delta = rowsum(dO * O), {dtype(fmt).name}",
                         (1, 2, 64, 64), lambda sz: {"fmt": dtype(fmt).name, "d_tile": head_tile(_size(sz)[3]),
                                                     "bq": 16}, inputs, expected, output=2, rtol=1e-5, atol=1e-4))


for _fmt, _tol in ((F16, (1e-2, 1e-2)), (BF16, (2e-2, 5e-2))):
    _n = dtype(_fmt).name
    for _causal in (False, True):
        _sfx = f"{_n}{'_causal' if _causal else ''}"
        _fwd_case(f"attention_fwd_lse_{_sfx}", _fmt, _causal, *_tol)
        for _which, _kern in ((0, attention_bwd_dq), (1, attention_bwd_dkdv), (2, attention_bwd_dkdv)):
            _grad_case(f"attention_bwd_{['dq', 'dk', 'dv'][_which]}_{_sfx}", _kern, _which, _fmt, _causal, *_tol)
    _delta_case(f"attention_bwd_delta_{_n}", _fmt)
