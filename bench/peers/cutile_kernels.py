"""The benchmark workloads written in NVIDIA's cuTile Python (cuda-tile 1.7.0), our own code, with
the same algorithm and tiles as tileir's library kernels, so the two compare on one assembler.

Imported only on the GPU machine, with the cuda-tile wheel carried there (bench/README.md).
"""

from __future__ import annotations

import math

import cuda.tile as ct
import torch

ConstInt = ct.Constant[int]


def _stream():
    return torch.cuda.current_stream()


_hinted_kernels: dict = {}


def _hinted(k, warps=0, occupancy=0, cga=0):
    """``k`` with the entry hints tileir's configuration carries (0: left to tileiras), made once."""
    h = {n: v for n, v in (("num_worker_warps", warps), ("occupancy", occupancy), ("num_ctas", cga)) if v}
    if not h:
        return k
    key = (id(k), tuple(sorted(h.items())))
    if key not in _hinted_kernels:
        _hinted_kernels[key] = k.replace_hints(**h)
    return _hinted_kernels[key]


@ct.kernel
def _vadd(a, b, c, tile: ConstInt):
    i = ct.bid(0)
    x = ct.load(a, index=(i,), shape=(tile,), padding_mode=ct.PaddingMode.ZERO)
    y = ct.load(b, index=(i,), shape=(tile,), padding_mode=ct.PaddingMode.ZERO)
    ct.store(c, index=(i,), tile=x + y)


def vadd(a, b, c, tile=1024, warps=0, occupancy=0):
    ct.launch(_stream(), (ct.cdiv(a.shape[0], tile), 1, 1), _hinted(_vadd, warps, occupancy), (a, b, c, tile))


@ct.kernel
def _matmul(a, b, c, tm: ConstInt, tn: ConstInt, tk: ConstInt):
    bm, bn = ct.bid(0), ct.bid(1)
    acc = ct.full((tm, tn), 0, dtype=ct.float32)
    for k in range(ct.num_tiles(a, axis=1, shape=(tm, tk))):
        x = ct.load(a, index=(bm, k), shape=(tm, tk), padding_mode=ct.PaddingMode.ZERO)
        y = ct.load(b, index=(k, bn), shape=(tk, tn), padding_mode=ct.PaddingMode.ZERO)
        if x.dtype == ct.float32:
            x, y = ct.astype(x, ct.tfloat32), ct.astype(y, ct.tfloat32)
        acc = ct.mma(x, y, acc)
    ct.store(c, index=(bm, bn), tile=ct.astype(acc, c.dtype))


@ct.kernel
def _matmul_grouped(a, b, c, tm: ConstInt, tn: ConstInt, tk: ConstInt, group: ConstInt, nn: ConstInt):
    # tileir's grouped block order: consecutive blocks walk down `group` block rows, then across
    pid = ct.bid(0)
    span = group * nn
    bm = (pid // span) * group + (pid % span) % group
    bn = (pid % span) // group
    acc = ct.full((tm, tn), 0, dtype=ct.float32)
    for k in range(ct.num_tiles(a, axis=1, shape=(tm, tk))):
        x = ct.load(a, index=(bm, k), shape=(tm, tk), padding_mode=ct.PaddingMode.ZERO)
        y = ct.load(b, index=(k, bn), shape=(tk, tn), padding_mode=ct.PaddingMode.ZERO)
        if x.dtype == ct.float32:
            x, y = ct.astype(x, ct.tfloat32), ct.astype(y, ct.tfloat32)
        acc = ct.mma(x, y, acc)
    ct.store(c, index=(bm, bn), tile=ct.astype(acc, c.dtype))


def matmul(a, b, c, tm=128, tn=128, tk=64, group=0, warps=0, occupancy=0, cga=0):
    m, n = c.shape
    nm, nn = ct.cdiv(m, tm), ct.cdiv(n, tn)
    if group:
        # tileir's order where group divides the block rows (every benchmark shape); tileir then
        # shortens the last group, which this peer avoids by cutting the group to divide them
        g = math.gcd(group, nm)
        ct.launch(_stream(), (nm * nn, 1, 1), _hinted(_matmul_grouped, warps, occupancy, cga),
                  (a, b, c, tm, tn, tk, g, nn))
    else:
        ct.launch(_stream(), (nm, nn, 1), _hinted(_matmul, warps, occupancy, cga), (a, b, c, tm, tn, tk))


@ct.kernel
def _softmax(x, y, tile: ConstInt):
    r = ct.bid(0)
    row = ct.load(x, index=(r, 0), shape=(1, tile), padding_mode=ct.PaddingMode.NEG_INF)
    e = ct.exp(row - ct.max(row, axis=1, keepdims=True))
    ct.store(y, index=(r, 0), tile=e / ct.sum(e, axis=1, keepdims=True))


def softmax(x, y, warps=0, occupancy=0):
    tile = 1 << (x.shape[1] - 1).bit_length()
    ct.launch(_stream(), (x.shape[0], 1, 1), _hinted(_softmax, warps, occupancy), (x, y, tile))


@ct.kernel
def _layernorm(x, w, b, y, tile: ConstInt, cols: ConstInt, eps: float):
    r = ct.bid(0)
    v = ct.astype(ct.load(x, index=(r, 0), shape=(1, tile), padding_mode=ct.PaddingMode.ZERO), ct.float32)
    mean = ct.sum(v, axis=1, keepdims=True) / cols
    d = v - mean
    if tile != cols:
        d = ct.where(ct.arange(tile, dtype=ct.int32).reshape((1, tile)) < cols, d, 0.0)
    var = ct.sum(d * d, axis=1, keepdims=True) / cols
    ww = ct.astype(ct.load(w, index=(0,), shape=(tile,), padding_mode=ct.PaddingMode.ZERO), ct.float32)
    bb = ct.astype(ct.load(b, index=(0,), shape=(tile,), padding_mode=ct.PaddingMode.ZERO), ct.float32)
    out = d * ct.rsqrt(var + eps) * ww.reshape((1, tile)) + bb.reshape((1, tile))
    ct.store(y, index=(r, 0), tile=ct.astype(out, y.dtype))


def layernorm(x, w, b, y, eps=1e-5, warps=0, occupancy=0):
    cols = x.shape[1]
    tile = 1 << (cols - 1).bit_length()
    ct.launch(_stream(), (x.shape[0], 1, 1), _hinted(_layernorm, warps, occupancy), (x, w, b, y, tile, cols, eps))


ConstBool = ct.Constant[bool]


@ct.kernel
def _fmha(q, k, v, o, qk_scale: float, bq: ConstInt, bk: ConstInt, d: ConstInt, causal: ConstBool):
    qi, h = ct.bid(0), ct.bid(1)
    qt = ct.load(q, index=(h, qi, 0), shape=(1, bq, d)).reshape((bq, d))
    m = ct.full((bq, 1), -float("inf"), dtype=ct.float32)
    den = ct.full((bq, 1), 0, dtype=ct.float32)
    acc = ct.full((bq, d), 0, dtype=ct.float32)
    nk = ct.num_tiles(k, axis=1, shape=(1, bk, d))
    # as tileir's: the key blocks wholly below the diagonal unmasked, the diagonal ones masked
    lo = qi * (bq // bk) if causal else nk
    for j in range(lo):
        kt = ct.load(k, index=(h, 0, j), shape=(1, d, bk), order=(0, 2, 1)).reshape((d, bk))
        s = ct.mma(qt, kt, ct.full((bq, bk), 0, dtype=ct.float32)) * qk_scale
        m_new = ct.maximum(m, ct.max(s, axis=1, keepdims=True))
        p = ct.exp2(s - m_new)
        alpha = ct.exp2(m - m_new)
        den = den * alpha + ct.sum(p, axis=1, keepdims=True)
        vt = ct.load(v, index=(h, j, 0), shape=(1, bk, d)).reshape((bk, d))
        acc = ct.mma(ct.astype(p, q.dtype), vt, acc * alpha)
        m = m_new
    if causal:
        for j in range(lo, lo + bq // bk):
            kt = ct.load(k, index=(h, 0, j), shape=(1, d, bk), order=(0, 2, 1)).reshape((d, bk))
            s = ct.mma(qt, kt, ct.full((bq, bk), 0, dtype=ct.float32)) * qk_scale
            rows = qi * bq + ct.arange(bq, dtype=ct.int32).reshape((bq, 1))
            cols = j * bk + ct.arange(bk, dtype=ct.int32).reshape((1, bk))
            s = ct.where(cols <= rows, s, -float("inf"))
            m_new = ct.maximum(m, ct.max(s, axis=1, keepdims=True))
            p = ct.exp2(s - m_new)
            alpha = ct.exp2(m - m_new)
            den = den * alpha + ct.sum(p, axis=1, keepdims=True)
            vt = ct.load(v, index=(h, j, 0), shape=(1, bk, d)).reshape((bk, d))
            acc = ct.mma(ct.astype(p, q.dtype), vt, acc * alpha)
            m = m_new
    ct.store(o, index=(h, qi, 0), tile=ct.astype(acc / den, o.dtype).reshape((1, bq, d)))


def attention(q, k, v, o, causal=False, bq=128, bk=64, warps=0, occupancy=0):
    """q, k, v, o: [B*H, S, D] with S a multiple of bq; the same online softmax as tileir's."""
    bh, s, d = q.shape
    qk_scale = (1.0 / d ** 0.5) * 1.4426950408889634
    ct.launch(_stream(), (s // bq, bh, 1), _hinted(_fmha, warps, occupancy),
              (q, k, v, o, qk_scale, bq, bk, d, causal))
