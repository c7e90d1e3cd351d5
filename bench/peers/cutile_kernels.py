"""The benchmark workloads written in NVIDIA's cuTile Python (cuda-tile 1.7.0), our own code, with
the same algorithm and tiles as tileir's library kernels, so the two compare on one assembler.

Imported only on the GPU machine, with the cuda-tile wheel carried there (bench/README.md).
"""

from __future__ import annotations

import cuda.tile as ct
import torch

ConstInt = ct.Constant[int]


def _stream():
    return torch.cuda.current_stream()


@ct.kernel
def _vadd(a, b, c, tile: ConstInt):
    i = ct.bid(0)
    x = ct.load(a, index=(i,), shape=(tile,), padding_mode=ct.PaddingMode.ZERO)
    y = ct.load(b, index=(i,), shape=(tile,), padding_mode=ct.PaddingMode.ZERO)
    ct.store(c, index=(i,), tile=x + y)


def vadd(a, b, c, tile=1024):
    ct.launch(_stream(), (ct.cdiv(a.shape[0], tile), 1, 1), _vadd, (a, b, c, tile))


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


def matmul(a, b, c, tm=128, tn=128, tk=64):
    m, n = c.shape
    ct.launch(_stream(), (ct.cdiv(m, tm), ct.cdiv(n, tn), 1), _matmul, (a, b, c, tm, tn, tk))


@ct.kernel
def _softmax(x, y, tile: ConstInt):
    r = ct.bid(0)
    row = ct.load(x, index=(r, 0), shape=(1, tile), padding_mode=ct.PaddingMode.NEG_INF)
    e = ct.exp(row - ct.max(row, axis=1, keepdims=True))
    ct.store(y, index=(r, 0), tile=e / ct.sum(e, axis=1, keepdims=True))


def softmax(x, y):
    tile = 1 << (x.shape[1] - 1).bit_length()
    ct.launch(_stream(), (x.shape[0], 1, 1), _softmax, (x, y, tile))


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


def layernorm(x, w, b, y, eps=1e-5):
    cols = x.shape[1]
    tile = 1 << (cols - 1).bit_length()
    ct.launch(_stream(), (x.shape[0], 1, 1), _layernorm, (x, w, b, y, tile, cols, eps))
