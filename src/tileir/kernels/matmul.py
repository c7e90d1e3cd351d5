"""Matrix multiply C = A @ B for row-major A [M, K] and B [K, N] of f16 or bf16 (f32 operands go
through tf32), accumulated in f32, any M, N, K. Tile sizes are configuration; each block computes
one [tm, tn] cell of C. Two spellings: on cells (``path="view"``, the default: the edge tiles are
padded and clipped by the views) and on the pointer path (``path="ptr"``: masked loads and
stores, the ladder of element offsets built explicitly), kept as the second opinion.
"""

from __future__ import annotations

import numpy as np

from .. import surface as ti
from ..dtypes import BF16, F16, F32, TF32, dtype
from ..ir import PadZero
from ..kernel import cdiv, kernel
from ..markers import FREE_AXIS, In, Out, Shared, cells
from ..prog import ByPtr
from .entry_hints import entry_hints
from .registry import Case, register


def _matmul(a, b, c, m, n, k, tm, tn, tk, fmt, path="view", group=0):
    if path == "view":
        if group:
            return _matmul_grouped(a, b, c, m, n, k, tm, tn, tk, fmt, group)
        return _matmul_views(a, b, c, m, n, k, tm, tn, tk, fmt)
    bm, bn = ti.block_id(0), ti.block_id(1)
    row0, col0 = ti.tile_at(bm, tm), ti.tile_at(bn, tn)
    zero = ti.f_const(fmt, 0.0)
    acc = ti.carry(ti.full([tm, tn], 0.0, F32))
    for kk in ti.d_range(0, cdiv(k, tk)):
        k0 = ti.tile_at(kk, tk)
        a_base = ti.idx_add(ti.tile_at(row0, k), k0)
        b_base = ti.idx_add(ti.tile_at(k0, n), col0)
        a_mask = b_mask = None
        if m % tm or k % tk:
            a_mask = ti.and_mask(ti.axis_mask(row0, [tm, tk], 0, m), ti.axis_mask(k0, [tm, tk], 1, k))
        if k % tk or n % tn:
            b_mask = ti.and_mask(ti.axis_mask(k0, [tk, tn], 0, k), ti.axis_mask(col0, [tk, tn], 1, n))
        at = ti.load(a, a_base, [tm, tk], strides=[k, 1], mask=a_mask, pad=zero if a_mask is not None else None)
        bt = ti.load(b, b_base, [tk, tn], strides=[n, 1], mask=b_mask, pad=zero if b_mask is not None else None)
        if fmt == F32:  # the dialect's f32 matrix product runs as tf32
            at, bt = ti.to(at, TF32), ti.to(bt, TF32)
        ti.set(acc, ti.mma(at, bt, ti.get(acc)))
    c_mask = None
    if m % tm or n % tn:
        c_mask = ti.and_mask(ti.axis_mask(row0, [tm, tn], 0, m), ti.axis_mask(col0, [tm, tn], 1, n))
    out = ti.get(acc) if fmt == F32 else ti.to(ti.get(acc), fmt)
    ti.store(c, ti.idx_add(ti.tile_at(row0, n), col0), out, strides=[n, 1], mask=c_mask)


def _matmul_views(a, b, c, m, n, k, tm, tn, tk, fmt):
    """The product on cells: A's cells follow grid axis 0 along M and no axis along K, B's none
    along K and axis 1 along N, so the K loop names them (load_at) and each block writes its own
    cell of C. The views pad the edge cells with zeros on read and clip them on write, and tileiras
    may move the tiles with the bulk copy engine."""
    acc = ti.carry(ti.full([tm, tn], 0.0, F32))
    for kk in ti.d_range(0, ti.blocks_of(a, 1)):
        at, bt = ti.load_at(a, [kk]), ti.load_at(b, [kk])
        if fmt == F32:  # the dialect's f32 matrix product runs as tf32
            at, bt = ti.to(at, TF32), ti.to(bt, TF32)
        ti.set(acc, ti.mma(at, bt, ti.get(acc)))
    ti.store_cell(c, ti.to(ti.get(acc), fmt))


def _matmul_grouped(a, b, c, m, n, k, tm, tn, tk, fmt, group):
    """The product with the blocks in groups of ``g`` block rows: a one-dimensional grid whose
    consecutive blocks walk down g rows of C, then across, so the blocks resident at once share
    g cells of A and few of B and the L2 cache serves most of both. Where g does not divide the
    block rows the last group is shorter (its height the smaller of g and the rows left); where it
    does, the height is a constant and the order needs no minimum. A and B are cells with no grid
    axis (each block names its own), C is written through a view of a Shared parameter (an Out
    cell must follow the grid)."""
    nm, nn = cdiv(m, tm), cdiv(n, tn)
    g = min(group, nm)
    pid = ti.block_id(0)
    span = ti.idx_const(g * nn)
    in_group = ti.idx_rem(pid, span)
    first = ti.idx_mul(ti.idx_div(pid, span), ti.idx_const(g))  # the group's first block row
    if nm % g == 0:
        height = ti.idx_const(g)
    else:
        height = ti.idx_of(ti.min_i(ti.idx_as_tile(ti.idx_sub(ti.idx_const(nm), first)), ti.i_const(g)))
    bm = ti.idx_add(first, ti.idx_rem(in_group, height))
    bn = ti.idx_div(in_group, height)
    acc = ti.carry(ti.full([tm, tn], 0.0, F32))
    for kk in ti.d_range(0, cdiv(k, tk)):
        at, bt = ti.load_at(a, [bm, kk]), ti.load_at(b, [kk, bn])
        if fmt == F32:
            at, bt = ti.to(at, TF32), ti.to(bt, TF32)
        ti.set(acc, ti.mma(at, bt, ti.get(acc)))
    out = ti.partition_view(ti.tensor_view(c, 0, [m, n], [n, 1]), [tm, tn])
    ti.store_view(out, [bm, bn], ti.to(ti.get(acc), fmt))


def _markers(fmt):
    """The three parameters of a matmul in ``fmt`` on cells (path "view"), or plain buffers ("ptr")."""

    def a(m, k, tm, tk, path="view", group=0):
        if path != "view":
            return ByPtr(fmt)
        return In(fmt, cells([m, k], [tm, tk], along=[FREE_AXIS if group else 0, FREE_AXIS], pad=PadZero))

    def b(k, n, tk, tn, path="view", group=0):
        if path != "view":
            return ByPtr(fmt)
        return In(fmt, cells([k, n], [tk, tn], along=[FREE_AXIS, FREE_AXIS if group else 1], pad=PadZero))

    def c(m, n, tm, tn, path="view", group=0):
        if path != "view":
            return ByPtr(fmt)
        return Shared(fmt) if group else Out(fmt, cells([m, n], [tm, tn]))

    return a, b, c


_F16, _BF16, _F32 = _markers(F16), _markers(BF16), _markers(F32)


_TUNED = ("tm", "tn", "tk", "group", "warps", "occupancy", "cga")  # what a tuned matmul entry may set


def _grid(m, n, k, tm, tn, tk, path="view", group=0):
    if group and path == "view":
        return (cdiv(m, tm) * cdiv(n, tn),)
    return (cdiv(m, tm), cdiv(n, tn))


@kernel(name="matmul_f16", grid=_grid, hints=entry_hints, tuned=_TUNED)
def matmul_f16(a=_F16[0], b=_F16[1], c=_F16[2], *, m: int, n: int, k: int, tm: int = 128, tn: int = 128,
               tk: int = 64, path: str = "view", group: int = 0, warps: int = 0, occupancy: int = 0, cga: int = 0):
    """C = A @ B, f16 operands and result, f32 accumulation (path: "view" or "ptr"). group: blocks in
    groups of that many block rows (L2 reuse; 0: a 2-D grid); warps / occupancy / cga: entry hints."""
    _matmul(a, b, c, m, n, k, tm, tn, tk, F16, path, group)


@kernel(name="matmul_bf16", grid=_grid, hints=entry_hints, tuned=_TUNED)
def matmul_bf16(a=_BF16[0], b=_BF16[1], c=_BF16[2], *, m: int, n: int, k: int, tm: int = 128,
                tn: int = 128, tk: int = 64, path: str = "view", group: int = 0, warps: int = 0, occupancy: int = 0,
                cga: int = 0):
    """C = A @ B, bf16 operands and result, f32 accumulation (path: "view" or "ptr")."""
    _matmul(a, b, c, m, n, k, tm, tn, tk, BF16, path, group)


@kernel(name="matmul_tf32", grid=_grid, hints=entry_hints, tuned=_TUNED)
def matmul_tf32(a=_F32[0], b=_F32[1], c=_F32[2], *, m: int, n: int, k: int, tm: int = 128, tn: int = 128,
                tk: int = 32, path: str = "view", group: int = 0, warps: int = 0, occupancy: int = 0, cga: int = 0):
    """C = A @ B for f32 matrices, the products in tf32, f32 accumulation (path: "view" or "ptr")."""
    _matmul(a, b, c, m, n, k, tm, tn, tk, F32, path, group)


def matmul(fmt=F16):
    """The matmul kernel for operand format ``fmt`` (F16, BF16, or F32 via tf32)."""
    return {F16: matmul_f16, BF16: matmul_bf16, F32: matmul_tf32}[dtype(fmt)]


def _size(s):
    return (s, s, s) if isinstance(s, int) else tuple(s)


def tile_for(kernel, m: int, n: int, k: int, gpu: str | None = None) -> dict:
    """The tiles {tm, tn, tk} (and the block order and hints, where tuned) a GPU call of an
    m x n x k product of ``kernel`` (a name or a KernelFn) on ``gpu`` (this machine's when None)
    would get (KernelFn.tuned_config): the tune cache's winner for the shape bucket, else the
    committed default table's; {} where neither has one (no GPU here, or a target with no entry),
    and the kernel's own defaults then apply."""
    from ..autotune import kernel_named, this_gpu

    sizes = {"m": m, "n": n, "k": k}
    got = kernel_named(kernel).tuned_config(dict(sizes), gpu or this_gpu())
    return {t: v for t, v in got.items() if t not in sizes}


def _case(name, kern, fmt, rtol, atol):
    npd = dtype(fmt).np

    def inputs(s, rng):
        m, n, k = _size(s)
        a = (rng.standard_normal((m, k)) / np.sqrt(k)).astype(npd)
        b = rng.standard_normal((k, n)).astype(npd)
        return [a, b, np.zeros((m, n), npd)]

    def expected(args):
        return args[0].astype(np.float64) @ args[1].astype(np.float64)

    def config(s):  # the tiles: autotune's (the cache, else the default table), else the kernel's defaults
        m, n, k = _size(s)
        return dict({"m": m, "n": n, "k": k}, **tile_for(name, m, n, k))

    return register(Case(name, kern, f"C = A @ B, {dtype(fmt).name} operands, f32 accumulate, any M N K",
                         (200, 136, 300), config, inputs, expected, output=2, rtol=rtol, atol=atol))


_case("matmul_f16", matmul_f16, F16, 1e-2, 2e-2)
_case("matmul_bf16", matmul_bf16, BF16, 2e-2, 5e-2)
_case("matmul_tf32", matmul_tf32, F32, 5e-3, 1e-2)
