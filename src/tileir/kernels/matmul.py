"""Matrix multiply C = A @ B for row-major A [M, K] and B [K, N] of f16 or bf16 (f32 operands go
through tf32), accumulated in f32. M, N and K are run-time sizes read off the arrays, so one cubin
per tile configuration serves every shape, ragged ones included (the views pad A's and B's edge
cells with zeros and clip C's), and an A, B or C with a leading-dimension stride (a slice of a
wider matrix) is read and written in place. Each block computes one [tm, tn] cell of C.
"""

from __future__ import annotations

import numpy as np

from .. import autotune
from .. import surface as ti
from ..dtypes import BF16, F16, F32, TF32, dtype
from ..errors import TileirError
from ..ir import PadZero
from ..kernel import cdiv, kernel
from ..markers import FREE_AXIS, In, Out, Shared, cells
from .entry_hints import entry_hints
from .registry import Case, register

PRECISIONS = ("tf32", "3xtf32", "ieee")  # the f32 product's ways, as Triton's input_precision names them


def check_precision(precision: str, kernel: str = "matmul_tf32") -> None:
    if precision not in PRECISIONS:
        raise TileirError(f"precision={precision!r}; the f32 product is one of {', '.join(PRECISIONS)}",
                          kernel=kernel, what="precision",
                          fix="'tf32' (tensor cores, 10-bit mantissas), '3xtf32' (tensor cores, f32 accuracy: "
                              "three tf32 products of split operands) or 'ieee' (f32 products, no tensor cores)")


def mma_step(at, bt, acc, fmt, precision="tf32"):
    """acc + at @ bt for one K slice. f16 / bf16 operands: one mma into the f32 accumulator. f32
    operands by ``precision``:

    * ``tf32``: both rounded to tf32 (nearest), one tensor-core mma (about 3 decimal digits);
    * ``ieee``: the f32 x f32 mma the dialect has (tileiras 13.4 runs it without tensor cores);
    * ``3xtf32``: each operand split into hi = tf32(x) and lo = tf32(x - hi), and
      hi*hi + hi*lo + lo*hi (the lo*lo term is below f32's last bit) summed on the tensor cores
      smallest first into a fresh accumulator, which is then added to the f32 accumulator in
      registers with an ordinary rounded add: the tensor core's own accumulation of a long K
      loses bits (bench/results/f32_mma_error_h200.json: 3xTF32 chained through one accumulator
      answered 2960 u sum|a||b| at K 16384 on positive inputs, worse than tf32 alone), so the
      chained part is one K slice long and the long sum is the register one."""
    if fmt != F32:
        return ti.mma(at, bt, acc)
    if precision == "ieee":
        return ti.mma(at, bt, acc)
    ah, bh = ti.to(at, TF32), ti.to(bt, TF32)
    if precision == "tf32":
        return ti.mma(ah, bh, acc)
    al = ti.to(at - ti.to(ah, F32), TF32)
    bl = ti.to(bt - ti.to(bh, F32), TF32)
    return acc + ti.mma(ah, bh, ti.mma(ah, bl, ti.mma(al, bh, 0.0)))


def _matmul(a, b, c, tm, tn, tk, fmt, group=0, precision="tf32"):
    if group:
        return _matmul_grouped(a, b, c, tm, tn, fmt, group, precision)
    acc = ti.carry(ti.full([tm, tn], 0.0, F32))
    for kk in ti.d_range(0, ti.blocks_of(a, 1)):
        ti.set(acc, mma_step(ti.load_at(a, [kk]), ti.load_at(b, [kk]), ti.get(acc), fmt, precision))
    ti.store_cell(c, ti.to(ti.get(acc), fmt))


def blocks_over(arr, dim: int, tile: int):
    """How many tiles of ``tile`` cover ``arr``'s dimension ``dim`` (a Whole array's, which has no
    cells to count), computed on the device."""
    n = ti.extent_of(arr, dim)
    return ti.idx_div(ti.idx_add(n, ti.idx_const(tile - 1)), ti.idx_const(tile))


def grouped_block(nm, nn, group, pid=None):
    """(block row, block column) of cell ``pid`` (this block of a one-dimensional grid by default) of
    nm x nn cells in groups of ``group`` block rows: consecutive cells walk down a group's rows, then
    across; the last group is shorter where ``group`` does not divide nm."""
    pid = ti.block_id(0) if pid is None else pid
    span = ti.idx_mul(nn, ti.idx_const(group))
    in_group = ti.idx_rem(pid, span)
    first = ti.idx_mul(ti.idx_div(pid, span), ti.idx_const(group))  # the group's first block row
    height = ti.idx_of(ti.min_i(ti.idx_as_tile(ti.idx_sub(nm, first)), ti.i_const(group)))
    return ti.idx_add(first, ti.idx_rem(in_group, height)), ti.idx_div(in_group, height)


def walked_cells(nm, nn, group, upto=None):
    """The (block row, block column) of every cell this block walks on a persistent grid: cells
    block_id, block_id + num_blocks, ... of nm x nn (of the first ``upto`` where given) in the grouped
    order (``grouped_block``)."""
    for pid in ti.d_range(ti.block_id(0), ti.idx_mul(nm, nn) if upto is None else upto, ti.num_blocks(0)):
        yield grouped_block(nm, nn, group, pid)


def _matmul_grouped(a, b, c, tm, tn, fmt, group, precision="tf32"):
    """The product with the blocks in groups of ``group`` block rows: a one-dimensional grid whose
    consecutive blocks walk down those rows of C, then across, so the blocks resident at once share
    a few cells of A and of B and the L2 cache serves most of both. The last group is shorter where
    ``group`` does not divide the block rows (its height the smaller of group and the rows left,
    computed on the device from M). A and B are cells with no grid axis (each block names its own),
    C is written through a partition of its array view (an Out cell must follow the grid)."""
    bm, bn = grouped_block(ti.blocks_of(a, 0), ti.blocks_of(b, 1), group)
    acc = ti.carry(ti.full([tm, tn], 0.0, F32))
    for kk in ti.d_range(0, ti.blocks_of(a, 1)):
        ti.set(acc, mma_step(ti.load_at(a, [bm, kk]), ti.load_at(b, [kk, bn]), ti.get(acc), fmt, precision))
    out = ti.partition_view(ti.array_view(c), [tm, tn])
    ti.store_view(out, [bm, bn], ti.to(ti.get(acc), fmt))


def _markers(fmt):
    """The three parameters of a matmul in ``fmt``: A [M, K], B [K, N], C [M, N] on cells."""

    def a(tm, tk, group=0):
        return In(fmt, cells(["M", "K"], [tm, tk], along=[FREE_AXIS if group else 0, FREE_AXIS], pad=PadZero))

    def b(tk, tn, group=0):
        return In(fmt, cells(["K", "N"], [tk, tn], along=[FREE_AXIS, FREE_AXIS if group else 1], pad=PadZero))

    def c(tm, tn, group=0):
        return Shared(fmt, ["M", "N"]) if group else Out(fmt, cells(["M", "N"], [tm, tn]))

    return a, b, c


_F16, _BF16, _F32 = _markers(F16), _markers(BF16), _markers(F32)


_TUNED = ("tm", "tn", "tk", "group", "warps", "occupancy", "cga", "no_tma_store")  # what a tuned matmul entry may set


def _grid(M, N, tm, tn, group=0):  # noqa: N803  (the run-time sizes' names)
    if group:
        return (cdiv(M, tm) * cdiv(N, tn),)
    return (cdiv(M, tm), cdiv(N, tn))


@kernel(name="matmul_f16", grid=_grid, hints=entry_hints, tuned=_TUNED)
def matmul_f16(a=_F16[0], b=_F16[1], c=_F16[2], *, tm: int = 128, tn: int = 128, tk: int = 64, group: int = 0,
               warps: int = 0, occupancy: int = 0, cga: int = 0, no_tma_store: int = 0):
    """C = A @ B, f16 operands and result, f32 accumulation, any M N K. group: blocks in groups of
    that many block rows (L2 reuse; 0: a 2-D grid); warps / occupancy / cga / no_tma_store: entry hints."""
    _matmul(a, b, c, tm, tn, tk, F16, group)


@kernel(name="matmul_bf16", grid=_grid, hints=entry_hints, tuned=_TUNED)
def matmul_bf16(a=_BF16[0], b=_BF16[1], c=_BF16[2], *, tm: int = 128, tn: int = 128, tk: int = 64, group: int = 0,
                warps: int = 0, occupancy: int = 0, cga: int = 0, no_tma_store: int = 0):
    """C = A @ B, bf16 operands and result, f32 accumulation, any M N K."""
    _matmul(a, b, c, tm, tn, tk, BF16, group)


@kernel(name="matmul_tf32", grid=_grid, hints=entry_hints, tuned=_TUNED)
def matmul_tf32(a=_F32[0], b=_F32[1], c=_F32[2], *, precision: str = "tf32", tm: int = 128, tn: int = 128,
                tk: int = 32, group: int = 0, warps: int = 0, occupancy: int = 0, cga: int = 0,
                no_tma_store: int = 0):
    """C = A @ B for f32 matrices, f32 accumulation, any M N K; the products by ``precision``
    (Triton's input_precision): "tf32" (tensor cores, operands rounded to tf32), "3xtf32" (tensor
    cores, f32 accuracy from split operands) or "ieee" (f32 products; tileiras 13.4 runs them
    without tensor cores). See mma_step."""
    check_precision(precision)
    _matmul(a, b, c, tm, tn, tk, F32, group, precision)


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
    return autotune.kernel_named(kernel).tuned_config({}, gpu or autotune.this_gpu(), {"M": m, "N": n, "K": k})


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
        return tile_for(name, *_size(s))

    return register(Case(name, kern, f"C = A @ B, {dtype(fmt).name} operands, f32 accumulate, any M N K",
                         (200, 136, 300), config, inputs, expected, output=2, rtol=rtol, atol=atol))


_case("matmul_f16", matmul_f16, F16, 1e-2, 2e-2)
_case("matmul_bf16", matmul_bf16, BF16, 2e-2, 5e-2)
_case("matmul_tf32", matmul_tf32, F32, 5e-3, 1e-2)
