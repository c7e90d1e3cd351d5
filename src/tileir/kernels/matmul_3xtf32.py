"""The 3xtf32 product with B split ahead of the loop: C = A @ B for f32 A [M, K] and B [K, N] to f32
accuracy on the tensor cores, the same sums in the same order as ``matmul_tf32(precision="3xtf32")``
(``matmul.mma_step``), so the host reference answers both bit for bit.

1. ``tf32_halves``: B's hi = tf32(B) and lo = tf32(B - hi), each stored as f32 (exact: a tf32 value is an
   f32 with its low 13 mantissa bits zero), one pass over B's K * N elements.
2. ``matmul_3xtf32``: per K slice, A's slice split in registers, B's halves read as tf32 cells (no
   conversion on the way: tileiras hands them to the tensor cores as they lie in shared memory), and
   al.bh + ah.bl + ah.bh summed into a fresh accumulator that is then added to the f32 one.

Why: in the one-kernel form every slice of B is loaded, split in registers and written back to
shared memory for the tensor cores, and in tileiras 13.4.92's SASS every one of its 24 HGMMAs waits for
its own result before the next goes out (``gsb0``); here the 12 HGMMAs (the loop's three 128 x 128 x 32
products) wait 4 times, the B conversions and stores are gone from the loop, and the kernel is 1016
instructions against 1808 (``bench/sass_counts.py --tf32``, ``sass_tf32_cpu.json``, 4096^3 at K slices of
32, no spills in either). It costs B's halves: 2 * K * N * 4 bytes of memory and one pass over B. On the H100 the two
launches took 1.82 ms at 4096^3 against the one-kernel form's 2.27 and torch's f32 2.66
(bench/results/split_b_h100.json; 1.09-1.27x the one kernel from 1000 rows up), so ``gemm`` runs a one-pass
3xtf32 of 1000 rows or more this way (``heuristics.HALVES_CELL``, ``HALVES_LEAST_ROWS``).

The k-major form (``product_3xtf32(k_major=True)``, opt-in, not yet timed on a GPU): A's halves too
(``tf32_halves``) and B's transposed into [N, K] (``tf32_halves_t``; a Linear weight W [N, K] as it lies),
then ``matmul_3xtf32_nt`` reads all four along K, as the tensor cores take tf32: no transposes through
registers in the loop (bench/results/sass_k_major_cpu.json), the same fresh accumulator a slice.
"""

from __future__ import annotations

import functools

import numpy as np

from .. import surface as ti
from ..dtypes import F32, TF32
from ..errors import TileirError
from ..ir import PadZero
from ..kernel import cdiv, kernel
from ..markers import FREE_AXIS, In, Out, Shared, Whole, cells
from .entry_hints import entry_hints
from .launching import empty, launch
from .matmul import blocks_over, grouped_block
from .registry import Case, register


@kernel(grid=lambda N, tile: (cdiv(N, tile),), hints=entry_hints)  # noqa: N803  (the run-time size's name)
def tf32_halves(x=Whole(F32, ["N"]), hi=Shared(F32, ["N"]), lo=Shared(F32, ["N"]), *, tile: int = 1024,
                warps: int = 0, occupancy: int = 0):
    """hi = tf32(x) (round to nearest) and lo = tf32(x - hi), both as f32, over N elements (a matrix
    passed flat); masked pointer loads and stores past the last full tile, as ``vadd``'s."""
    base = ti.tile_at(ti.block_id(0), tile)
    m = ti.tail_mask(base, [tile], ti.extent_of(x, 0))
    v = ti.load(x, base, [tile], mask=m)
    h = ti.to(ti.to(v, TF32), F32)
    ti.store(hi, base, h, mask=m)
    ti.store(lo, base, ti.to(ti.to(v - h, TF32), F32), mask=m)


def _a(tm=128, tk=32):
    return In(F32, cells(["M", "K"], [tm, tk], along=[FREE_AXIS, FREE_AXIS], pad=PadZero))


def _a_tf32(tm=128, tk=32):
    return In(TF32, cells(["M", "K"], [tm, tk], along=[FREE_AXIS, FREE_AXIS], pad=PadZero))


def _b(tk=32, tn=128):
    return In(TF32, cells(["K", "N"], [tk, tn], along=[FREE_AXIS, FREE_AXIS], pad=PadZero))


def _grid(M, N, tm=128, tn=128):  # noqa: N803  (the run-time sizes' names)
    return (cdiv(M, tm) * cdiv(N, tn),)


@kernel(grid=_grid, hints=entry_hints, tuned=("tm", "tn", "tk", "group", "warps", "occupancy"))
def matmul_3xtf32(a=_a, bh=_b, bl=_b, c=Shared(F32, ["M", "N"]), *, tm: int = 128, tn: int = 128, tk: int = 32,
                  group: int = 8, warps: int = 8, occupancy: int = 0):
    """C = A @ B to f32 accuracy from B's tf32 halves (``tf32_halves``): per K slice ah = tf32(a), al =
    tf32(a - ah), then C += ah.bh + (ah.bl + al.bh) with the three products in a fresh accumulator, the
    cells in groups of ``group`` block rows (``matmul.grouped_block``)."""
    bm, bn = grouped_block(ti.blocks_of(a, 0), ti.blocks_of(bh, 1), group)
    acc = ti.carry(ti.full([tm, tn], 0.0, F32))
    for kk in ti.d_range(0, ti.blocks_of(a, 1)):
        at = ti.load_at(a, [bm, kk])
        ah = ti.to(at, TF32)
        al = ti.to(at - ti.to(ah, F32), TF32)
        b_hi = ti.load_at(bh, [kk, bn])
        fresh = ti.mma(ah, b_hi, ti.mma(ah, ti.load_at(bl, [kk, bn]), ti.mma(al, b_hi, ti.full([tm, tn], 0.0, F32))))
        ti.set(acc, ti.get(acc) + fresh)
    ti.store_view(ti.partition_view(ti.array_view(c), [tm, tn]), [bm, bn], ti.get(acc))


def _half_t(tk=64, tn=64):  # a transposed half: [N, K], its cells along the grid's axes the other way round
    return Out(F32, cells(["N", "K"], [tn, tk], along=[1, 0]))


@kernel(hints=entry_hints)
def tf32_halves_t(x=lambda tk=64, tn=64: In(F32, cells(["K", "N"], [tk, tn])), hi=_half_t, lo=_half_t, *, tk: int = 64,
                  tn: int = 64, warps: int = 0, occupancy: int = 0):
    """B's tf32 halves transposed: hi = tf32(x)^T and lo = tf32(x - hi)^T, [N, K] for x [K, N] (as
    ``tf32_halves``, each cell moved in registers as ``transpose`` moves it), so the product reads both of
    its operands' slices along K (``matmul_3xtf32_nt``). Cells of [tk, tn] of x."""
    v = ti.load_cell(x)
    h = ti.to(ti.to(v, TF32), F32)
    ti.store_cell(hi, ti.permute_tile(h, [1, 0]))
    ti.store_cell(lo, ti.permute_tile(ti.to(ti.to(v - h, TF32), F32), [1, 0]))


def _bt():
    return Whole(TF32, ["N", "K"])


@kernel(grid=_grid, hints=entry_hints, tuned=("tm", "tn", "tk", "group", "warps", "occupancy", "fresh"))
def matmul_3xtf32_nt(ah=_a_tf32, al=_a_tf32, bh=_bt, bl=_bt, c=Shared(F32, ["M", "N"]), *, tm: int = 128,
                     tn: int = 128, tk: int = 64, group: int = 8, warps: int = 8, occupancy: int = 0, fresh: int = 1):
    """C = A @ B to f32 accuracy from A's tf32 halves ([M, K] each, ``tf32_halves``) and B's transposed
    ([N, K] each, ``tf32_halves_t``): every operand is a tf32 cell read along K, as the tensor cores take
    tf32 (no transposes, no conversions in the loop). Each K slice's al.bh + ah.bl + ah.bh goes into a
    fresh accumulator that is added to the f32 one in f32 registers, as ``matmul_3xtf32``'s (the same sums
    in the same order: the host reference answers both alike), ``fresh`` slices an iteration and the slices
    left over one at a time. In tileiras 13.4.92's SASS at 128 x 128 (sass_k_major_cpu.json): one slice of 64
    an iteration issues its 24 HGMMAs in three groups with one whole wait and no spills; two of 32 (with the
    loop over the slices left over) wait after every HGMMA; two of 64 and three or more spill. fresh=0: every
    product accumulates on the tensor cores over the whole K (no adds in the loop, and the tensor cores' own
    rounding of a K-long sum)."""
    if fresh < 0:
        raise TileirError(f"fresh={fresh}: the K slices an iteration, each in a fresh accumulator",
                          kernel="matmul_3xtf32_nt", what="fresh",
                          fix="fresh=1 (the default) or 2; 0 sums every product on the tensor cores' one accumulator")
    bm, bn = grouped_block(ti.blocks_of(ah, 0), blocks_over(bh, 0, tn), group)
    hv = ti.partition_view(ti.array_view(bh), [tk, tn], dim_map=[1, 0], padding=PadZero)
    lv = ti.partition_view(ti.array_view(bl), [tk, tn], dim_map=[1, 0], padding=PadZero)
    acc = ti.carry(ti.full([tm, tn], 0.0, F32))
    nk = ti.blocks_of(ah, 1)

    def three(kk, into):  # the slice's three products, the small ones first
        a_h, b_h = ti.load_at(ah, [bm, kk]), ti.load_view(hv, [kk, bn])
        return ti.mma(a_h, b_h, ti.mma(a_h, ti.load_view(lv, [kk, bn]), ti.mma(ti.load_at(al, [bm, kk]), b_h, into)))

    if not fresh:
        for kk in ti.d_range(0, nk):
            ti.set(acc, three(kk, ti.get(acc)))
    else:
        # whole iterations of ``fresh`` slices, then the rest one at a time: no tile wholly past K is read (on
        # the device such a load is undefined, whatever the view's padding)
        whole = ti.idx_div(nk, ti.idx_const(fresh))
        for it in ti.d_range(0, whole):
            sums = [three(ti.idx_add(ti.idx_mul(it, ti.idx_const(fresh)), ti.idx_const(j)),
                          ti.full([tm, tn], 0.0, F32)) for j in range(fresh)]
            total = ti.get(acc)
            for one in sums:
                total = total + one
            ti.set(acc, total)
        if fresh > 1:
            for kk in ti.d_range(ti.idx_mul(whole, ti.idx_const(fresh)), nk):
                ti.set(acc, ti.get(acc) + three(kk, ti.full([tm, tn], 0.0, F32)))
    ti.store_view(ti.partition_view(ti.array_view(c), [tm, tn]), [bm, bn], ti.get(acc))


def product_3xtf32(a, b, c, *, halves=None, config: dict | None = None, halves_config: dict | None = None,
                   k_major: bool = False, a_halves=None, weight_t: bool = False):
    """C = A @ B (f32, row-major, any shape) to f32 accuracy. B's tf32 halves first (into ``halves``, a
    [2, K, N] f32 array, where given; fresh ones otherwise), then ``matmul_3xtf32`` at ``config``'s tiles
    (its defaults where None). ``k_major``: A's halves too (into ``a_halves``, [2, M, K]) and B's
    transposed (``halves`` is then [2, N, K]), then ``matmul_3xtf32_nt`` (``config`` its tiles), whose
    operands all lie along K as the tensor cores take tf32; with ``weight_t`` B is given as W [N, K] (a
    Linear layer's weight: C = A @ W^T), whose halves need no transpose. ``halves_config`` configures the
    ``tf32_halves`` launches (not ``tf32_halves_t``, which keeps its defaults). Host arrays run on the host
    reference, CUDA tensors on the GPU. Answers C."""
    if len(b.shape) != 2 or len(a.shape) != 2:
        name, x, dims = ("b", b, "B [K, N]") if len(b.shape) != 2 else ("a", a, "A [M, K]")
        raise TileirError(f"{name.upper()} has shape {list(x.shape)}; the product takes a matrix {dims}",
                          kernel="product_3xtf32", what=name, fix="a 2-D f32 array (a batch: one call a matrix)")
    if weight_t and not k_major:
        raise TileirError("weight_t without k_major: the B-halves kernel reads B [K, N]", kernel="product_3xtf32",
                          what="weight_t", fix="k_major=True (B's halves are then [N, K], as W lies)")
    m, k = (int(s) for s in a.shape)
    n, kb = (int(b.shape[0]), int(b.shape[1])) if weight_t else (int(b.shape[1]), int(b.shape[0]))
    if kb != k:
        raise TileirError(f"A is [{m}, {k}] and B {list(b.shape)}: their K differ", kernel="product_3xtf32", what="b",
                          fix=f"W [N, {k}]" if weight_t else f"B [{k}, N] (A's K)")
    if not k_major:
        halves = _workspace(halves, b, (2, k, n), "halves", "B's tf32 halves")
        launch(tf32_halves, b.reshape(-1), halves[0].reshape(-1), halves[1].reshape(-1), **(halves_config or {}))
        launch(matmul_3xtf32, a, halves[0], halves[1], c, **(config or {}))
        return c
    a_halves = _workspace(a_halves, a, (2, m, k), "a_halves", "A's tf32 halves")
    halves = _workspace(halves, b, (2, n, k), "halves", "B's tf32 halves, transposed,")
    launch(tf32_halves, a.reshape(-1), a_halves[0].reshape(-1), a_halves[1].reshape(-1), **(halves_config or {}))
    if weight_t:  # W [N, K] lies as B's transposed halves do
        launch(tf32_halves, b.reshape(-1), halves[0].reshape(-1), halves[1].reshape(-1), **(halves_config or {}))
    else:
        launch(tf32_halves_t, b, halves[0], halves[1])
    launch(matmul_3xtf32_nt, a_halves[0], a_halves[1], halves[0], halves[1], c, **(config or {}))
    return c


def _workspace(given, like, shape: tuple, name: str, what: str):
    """``given`` where it is a dense f32 array of ``shape`` (a TileirError naming ``name`` where not), else a
    fresh one beside ``like``."""
    if given is None:
        return empty(like, shape, "f32")
    if tuple(given.shape) != shape or str(given.dtype).replace("torch.", "") != "float32" or not _dense(given):
        dims = ", ".join(str(d) for d in shape)
        raise TileirError(f"{name} is a {given.dtype} array of shape {list(given.shape)}"
                          f"{'' if _dense(given) else ' with gaps'}; {what} are written into a dense f32 [{dims}] "
                          "array", kernel="product_3xtf32", what=name,
                          fix=f"{name}=torch.empty({dims}) on the operand's device (or leave it out: a fresh one)")
    return given


def _dense(x) -> bool:
    """Row-major with no gaps: a reshape(-1) of it is a view, so what is written through it lands in x."""
    flags = getattr(x, "flags", None)
    return bool(flags["C_CONTIGUOUS"]) if flags is not None else bool(x.is_contiguous())


def _size(s):
    return (s, s, s) if isinstance(s, int) else tuple(s)


def _inputs(s, rng):
    m, n, k = _size(s)
    a = (rng.standard_normal((m, k)) / np.sqrt(k)).astype(np.float32)
    return [a, rng.standard_normal((k, n)).astype(np.float32), np.zeros((m, n), np.float32)]


def _run(args, where="host", k_major=False, **cfg):
    product_3xtf32(args[0], args[1], args[2], config=cfg or None, k_major=k_major)


register(Case("matmul_3xtf32", matmul_3xtf32, "C = A @ B to f32 accuracy on the tensor cores, B split into tf32 "
              "halves first (two launches), any M N K", (200, 136, 300),
              lambda s: {"tm": 64, "tn": 64, "tk": 32, "group": 2}, _inputs,
              lambda args: args[0].astype(np.float64) @ args[1].astype(np.float64), output=2, rtol=1e-5, atol=1e-5,
              runner=_run))


register(Case("matmul_3xtf32_nt", matmul_3xtf32_nt, "C = A @ B to f32 accuracy on the tensor cores from A's tf32 "
              "halves and B's transposed, every operand read along K (three launches), any M N K", (200, 136, 300),
              lambda s: {"tm": 64, "tn": 64, "tk": 32, "group": 2}, _inputs,
              lambda args: args[0].astype(np.float64) @ args[1].astype(np.float64), output=2, rtol=1e-5, atol=1e-5,
              runner=functools.partial(_run, k_major=True)))
