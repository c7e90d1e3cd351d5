"""Tutorial 4: flash attention -- an online-softmax attention kernel of your own, checked against
torch's scaled_dot_product_attention and a numpy reference in f64.

    python examples/04_flash_attention.py            # on the host reference (no GPU needed)
    python examples/04_flash_attention.py --device   # on the GPU, at larger sizes, timed against torch

Exits nonzero if an answer is wrong.
"""

from __future__ import annotations

import math
import os
import sys
from typing import Any

import numpy as np
import torch
from tutorial import tutorial_args

import tileir as ti
from tileir import F16, F32, FREE_AXIS, In, Out, PadZero, cells

LOG2E = 1.4426950408889634

# --8<-- [start:kernel]
# q, k, v and o are [BH, S, D]: batch and heads folded into one dimension. Grid axis 0 walks the
# query blocks of bq rows, axis 1 the batch-heads; axis 2 has one block, covering the head dimension
# D with one tile of d_tile lanes (a power of two >= D; lanes past D read zero, which adds nothing
# to a dot product, and are not written). K and V are read a block of bk keys at a time: their
# sequence dimension follows no grid axis, so the loop names the key block (load_at).
_SHAPE = ["BH", "S", "D"]


def _q(bq, d_tile):
    return In(F16, cells(_SHAPE, [1, bq, d_tile], along=[1, 0, 2], pad=PadZero))


def _kv(bk, d_tile):
    return In(F16, cells(_SHAPE, [1, bk, d_tile], along=[1, FREE_AXIS, 2], pad=PadZero))


def _o(bq, d_tile):
    return Out(F16, cells(_SHAPE, [1, bq, d_tile], along=[1, 0, 2]))


@ti.kernel
def attention(q=_q, k=_kv, v=_kv, o=_o, *, causal: bool = False, bq: int = 64, bk: int = 64, d_tile: int = 64):
    """o = softmax(q k^T / sqrt(D) [+ causal mask]) v, one [bq, D] block of o a block, f16 in and
    out, f32 scores, statistics and accumulator."""
    qt = ti.reshape(ti.load_cell(q), [bq, d_tile])
    # 1/sqrt(D) from the run-time D, and log2(e) folded in: exp2 is the cheaper instruction
    scale = ti.rsqrt(ti.int_to_float(ti.idx_as_tile(ti.extent_of(q, 2)), F32)) * LOG2E
    m = ti.carry(ti.full([bq, 1], -math.inf, F32))  # the running row maximum (of scaled scores)
    l_ = ti.carry(ti.full([bq, 1], 0.0, F32))  # the running row sum of exp2(score - m)
    acc = ti.carry(ti.full([bq, d_tile], 0.0, F32))  # the running sum of exp2(score - m) v
    keys = ti.idx_as_tile(ti.extent_of(k, 1))  # S, to mask the partial last key block
    rows = ti.coord(ti.tile_at(ti.block_id(0), bq), [bq, bk], 0)  # each lane's query position
    for j in ti.d_range(0, ti.blocks_of(k, 1)):
        kt = ti.reshape(ti.load_at(k, [j]), [bk, d_tile])
        vt = ti.reshape(ti.load_at(v, [j]), [bk, d_tile])
        s = ti.mma(qt, ti.transpose(kt), 0.0) * scale  # [bq, bk] scores in f32
        cols = ti.coord(ti.tile_at(j, bk), [bq, bk], 1)  # each lane's key position
        keep = ti.lt_i(cols, keys)  # keys past S read zeros: they must score -inf, not 0
        if causal:  # a Python if: configuration, decided while the kernel records
            keep = ti.and_mask(keep, ti.le_i(cols, rows))
        s = ti.select(keep, s, -math.inf)
        m_new = ti.max(ti.get(m), ti.reduce_max(s, keepdims=True))
        p = ti.exp2(s - m_new)
        alpha = ti.exp2(ti.get(m) - m_new)  # rescales what was summed under the old maximum
        ti.set(l_, ti.get(l_) * alpha + ti.reduce_sum(p, keepdims=True))
        ti.set(acc, ti.mma(ti.to(p, F16), vt, ti.get(acc) * alpha))
        ti.set(m, m_new)
    out = ti.get(acc) / ti.get(l_)
    ti.store_cell(o, ti.reshape(ti.to(out, F16), [1, bq, d_tile]))  # rows past S, lanes past D: not written

# --8<-- [end:kernel]

def reference(q, k, v, causal: bool) -> np.ndarray:
    """Attention in f64 with numpy, the textbook way (the whole score matrix)."""
    q, k, v = (np.asarray(t.float().cpu(), np.float64) for t in (q, k, v))
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return (p / p.sum(axis=-1, keepdims=True)) @ v


def _rates(q, k, v, o, causal, d_tile, tiles) -> str:
    """This kernel's and torch SDPA's TFLOP/s on the GPU (a causal run does half the products)."""
    from functools import partial

    from tileir.runtime.timing import median_ms

    b, h, s, d = q.shape
    flop = 4 * b * h * s * s * d / (2 if causal else 1)
    mine = partial(attention, *(t.view(b * h, s, d) for t in (q, k, v, o)), causal=causal, d_tile=d_tile, **tiles)
    sdpa = partial(torch.nn.functional.scaled_dot_product_attention, q, k, v, is_causal=causal)
    return f"this kernel {flop / median_ms(mine, 20, 3) / 1e9:.0f}, " \
           f"torch SDPA {flop / median_ms(sdpa, 20, 3) / 1e9:.0f}"


def main(argv=None) -> int:
    args = tutorial_args(argv, __doc__, "run on the GPU (default: the host reference)")
    if args is None:
        return 2
    tiles: dict[str, Any]  # passed as **tiles, which a type checker matches against every keyword
    if args.device:
        device, shapes, tiles = "cuda", [(4, 8, 1000, 64), (4, 32, 4096, 128)], {"bq": 128, "bk": 64}
    else:
        os.environ["TILEIR_INTERPRET"] = "1"  # plain calls run on the host reference
        device, shapes, tiles = "cpu", [(2, 2, 100, 40), (1, 3, 77, 64)], {"bq": 32, "bk": 32}
    where = "the GPU" if args.device else "the host reference"

    gen = torch.Generator().manual_seed(0)
    ok = True
    for b, h, s, d in shapes:
        q, k, v = (torch.randn(b, h, s, d, generator=gen).half().to(device) for _ in range(3))
        d_tile = max(16, 1 << (d - 1).bit_length())  # one tile covers the head
        for causal in (False, True):
            o = torch.empty_like(q)
            # [B, H, S, D] -> [B*H, S, D]: a view of the same memory, nothing copied
            attention(q.view(b * h, s, d), k.view(b * h, s, d), v.view(b * h, s, d), o.view(b * h, s, d),
                      causal=causal, d_tile=d_tile, **tiles)
            sdpa = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)
            err_torch = (o.float() - sdpa).abs().max().item()
            err_f64 = np.abs(o.float().cpu().numpy() - reference(q, k, v, causal)).max()
            # f16 output: half an ulp of values up to ~4 is 2e-3; the probabilities go through f16 too
            good = err_torch < 4e-3 and err_f64 < 4e-3
            ok &= good
            print(f"attention B={b} H={h} S={s} D={d} causal={causal!s:5} on {where}: "
                  f"max |o - sdpa| = {err_torch:.1e}, max |o - f64 reference| = {err_f64:.1e}")
            if args.device:
                print("  TFLOP/s: " + _rates(q, k, v, o, causal, d_tile, tiles))
    print("ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
