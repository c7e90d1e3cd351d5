"""A stream-K matrix product: C = A @ B (row-major, f16 or bf16, f32 accumulation) on ``programs``
blocks that share the last waves' K slices evenly, meant to keep SMs from idling through a partial last
wave. Opt-in: no rule routes a product here, because on an H100 it answered right but ran 2-3.6x slower
than the library's choice at every shape timed (bench/results/stream_k_h100.json, docs/speed.md).

Why it exists: where a product's [tm, tn] cells make a little over a whole number of waves, the last
wave runs with most SMs idle -- 1000 x 5000 x 1000 on 128 x 256 cells is 160 cells for 132 SMs, two
waves' time for 1.2 waves of work (bench/results/store_probe_h100.json: a cell costs what cuBLAS's
does; the gap is the count of waves). Here the cells of all full waves but the last are walked one
cell at a time (as ``matmul_persistent`` walks them); the rest -- between one and two waves of cells,
or all of them below two waves -- are cut into their K slices, and block p takes units
[p U / P', (p + 1) U / P') of those U = cells x slices units, in cell order (P' = min(P, U): every
sharing block holds at least one unit, the blocks past P' none). A block that holds a whole cell
stores it; a cell cut between blocks is finished by the last of its blocks to arrive:

1. every block holding part of the cell stores its f32 partial sum in its own slot of ``ws`` (a
   block holds at most two cut cells: the first and the last of its range, slots 2p and 2p + 1),
2. then adds its count of K slices to the cell's counter (an f32 word of ``ws``, ``acq_rel``: the
   partial's stores and the counter are one parameter, one token chain, so the update orders them);
3. the block whose update completes the cell's slices sums the slots of every block that held part
   of the cell, in block order (its own reloaded: the sum does not depend on who came last), and
   stores C's cell.

No block waits for another (no spin loop: tileiras 13.4.92's while-loop defect workaround would
assemble one at -O0, ``prefix_sum.LEVEL``). The counters must be zero at launch: ``stream_k``
allocates ``ws`` and zeroes them each call (one fill launch on the current stream, so a CUDA graph
replays it). The partial stores and reloads are pointer stores and loads (the generic proxy, ordered by
the atomic), not TMA. One workspace serves one call at a time: two streams sharing one would race.

The host reference runs the blocks one after another, so the last block holding a cell is the last
to arrive there and finishes it: the host's answer is the device's sum order exactly.
"""

from __future__ import annotations

import numpy as np

from .. import surface as ti
from ..dtypes import BF16, F16, F32, dtype
from ..errors import TileirError
from ..heuristics import SMS, cdiv
from ..kernel import kernel
from ..markers import Shared
from .entry_hints import entry_hints
from .launching import empty, fmt_of, launch
from .matmul import blocks_over, grouped_block
from .matmul_persistent import _a, _b, _c, _check_group, _nt_b, _walk, cell_sum, transposed_b
from .registry import Case, register

_TUNED = ("tm", "tn", "tk", "group", "programs", "warps", "occupancy")  # not parts: a probe's choice
WALKED, SHARED = 1, 2  # ``parts``: the walked waves, the shared cells (both: 3; one alone times that part)


def split_cells(cells: int, programs: int) -> int:
    """How many of ``cells`` are walked whole (all full waves but the last): the rest, between one and
    two waves of cells (or all of them, fewer than two waves), are shared out by K slice."""
    if programs < 1:
        raise TileirError(f"programs={programs}: the product needs at least one block", kernel="matmul_stream_k",
                          what="programs", fix="programs=132 (one a streaming multiprocessor of an H100 / H200)")
    return max(0, cells // programs - 1) * programs


def counters_at(tm: int, tn: int, programs: int) -> int:
    """Where ``ws``'s counters start: past two [tm, tn] slots a block."""
    return 2 * programs * tm * tn


def workspace_words(m: int, n: int, tm: int, tn: int, programs: int) -> int:
    """The f32 words of ``ws`` for an m x n product: two [tm, tn] slots a block, then one counter a
    shared cell."""
    cells = cdiv(m, tm) * cdiv(n, tn)
    return counters_at(tm, tn, programs) + cells - split_cells(cells, programs)


def _grid(M, N, W, tm=128, tn=128, programs=SMS["sm_90"]):  # noqa: N803  (the run-time sizes' names)
    need = workspace_words(M, N, tm, tn, programs)
    if W < need:
        raise TileirError(f"ws holds {W} f32 words; a {M} x {N} product on {programs} blocks of {tm} x {tn} "
                          f"cells needs {need}", kernel="matmul_stream_k", what="ws",
                          fix="stream_k(a, b, c) allocates it (the counters zeroed), or an f32 vector of "
                              "kernels.stream_k_workspace_words(M, N, tm, tn, programs) with its counters zeroed")
    return (programs,)


def _t(i):
    return ti.idx_as_tile(i)


def _imax(a, b):
    return ti.idx_of(ti.max_i(_t(ti.as_idx(a)), _t(ti.as_idx(b))))


def _imin(a, b):
    return ti.idx_of(ti.min_i(_t(ti.as_idx(a)), _t(ti.as_idx(b))))


def _flag(cond):
    """1 where the rank-0 mask ``cond`` is true, else 0: a loop's trip count (a loop of 0 or 1 trips is
    this kernel's `if` around loads and stores, which ``d_if`` may not hold)."""
    return ti.idx_of(ti.select(cond, ti.i_const(1), ti.i_const(0)))


def _start(q, units, share, first):
    """Block q's first unit: first + floor(q units / share)."""
    return ti.idx_add(first, ti.idx_div(ti.idx_mul(q, units), share))


@kernel(grid=_grid, hints=entry_hints, tuned=_TUNED)
def matmul_stream_k(a=_a, b=_b, c=_c, ws=Shared(F32, ["W"]), *, fmt: str = "f16", tm: int = 128, tn: int = 128,
                    tk: int = 64, group: int = 8, programs: int = SMS["sm_90"], warps: int = 8, occupancy: int = 0,
                    parts: int = WALKED | SHARED):
    """C = A @ B (f16 or bf16 operands and result, f32 accumulation), any M N K, on ``programs``
    blocks: the full waves but the last walked cell by cell, the rest shared out by K slice (see the
    module's text). ``ws``: f32, ``workspace_words`` long, its counters (past the slots) zero. 8 warps
    by default: at 128 x 128 cells tileiras' own choice spilled (699 STL, bench/results/sass_stream_k_cpu.json).
    ``parts``: WALKED, SHARED or both (the default); one alone writes only its cells (to time each part)."""
    _shared_product(a, c, ws, ti.blocks_of(b, 1), lambda kk, bn: ti.load_at(b, [kk, bn]), fmt, tm, tn, group,
                    programs, parts)


@kernel(grid=_grid, hints=entry_hints, tuned=_TUNED)
def matmul_nt_stream_k(a=_a, b=_nt_b, c=_c, ws=Shared(F32, ["W"]), *, fmt: str = "f16", tm: int = 128, tn: int = 128,
                       tk: int = 64, group: int = 8, programs: int = SMS["sm_90"], warps: int = 8,
                       occupancy: int = 0, parts: int = WALKED | SHARED):
    """C = A @ B^T for row-major A [M, K] and B [N, K] (a Linear layer's weight), as matmul_stream_k;
    B^T's [tk, tn] tiles read through a transposing view of B, as matmul_nt_persistent's."""
    _shared_product(a, c, ws, blocks_over(b, 0, tn), transposed_b(b, tk, tn), fmt, tm, tn, group, programs, parts)


def _shared_product(a, c, ws, nn, load_b, fmt, tm, tn, group, programs, parts):
    """The stream-K products' body: ``nn`` block columns, ``load_b(kk, bn)`` B's [tk, tn] tile."""
    _check_group(group, "matmul_stream_k")
    split_cells(0, programs)  # refuses programs < 1
    if parts not in (WALKED, SHARED, WALKED | SHARED):
        raise TileirError(f"parts={parts}: the parts are WALKED (1), SHARED (2) or both (3)", kernel="matmul_stream_k",
                          what="parts", fix="parts=3 (the whole product; 1 or 2 time one part)")
    nm = ti.blocks_of(a, 0)
    slices = ti.blocks_of(a, 1)
    cells = ti.idx_mul(nm, nn)
    p = ti.block_id(0)
    whole_cells = ti.idx_mul(_imax(ti.idx_sub(ti.idx_div(cells, programs), 1), 0), programs)
    if parts & WALKED:
        _walk(a, c, nm, nn, load_b, fmt, tm, tn, group, upto=whole_cells)  # the walked waves
    if not parts & SHARED:
        return
    out = ti.partition_view(ti.array_view(c), [tm, tn])

    # the shared units: cells whole_cells.. cut into their K slices, block p's share [u0, u1)
    first = ti.idx_mul(whole_cells, slices)
    units = ti.idx_mul(ti.idx_sub(cells, whole_cells), slices)
    # shared among at most one block a unit, so every sharing block holds at least one and every block in a
    # cut cell's holder range wrote a slot for it (fewer units than blocks: the rest take none)
    share = _imax(_imin(units, programs), 1)
    u0 = _start(_imin(p, share), units, share, first)
    u1 = _start(_imin(ti.idx_add(p, 1), share), units, share, first)
    c0 = ti.idx_div(u0, slices)
    c_end = ti.idx_mul(_flag(ti.lt_i(_t(u0), _t(u1))), ti.idx_div(ti.idx_add(u1, ti.idx_sub(slices, 1)), slices))
    slot_words = tm * tn
    flags = counters_at(tm, tn, programs)
    # the cut cells' slots, by pointer stores and loads (STG, and LDGSTS into shared memory: the generic
    # proxy, which the atomic's MEMBAR.ALL.GPU / CCTL.IVALL order; bench/results/sass_stream_k_cpu.json). At
    # 128 x 128 cells with 8 warps nothing spills; 128 x 256 cells did (608 STL), so the default is 128
    for cell in ti.d_range(c0, _imax(c_end, c0)):
        base = ti.idx_mul(cell, slices)
        lo = _imax(ti.idx_sub(u0, base), 0)
        hi = _imin(ti.idx_sub(u1, base), slices)
        bm, bn = grouped_block(nm, nn, group, cell)
        acc = cell_sum(a, load_b, bm, bn, lo, hi, tm, tn)
        cut = ti.or_mask(ti.ne_i(_t(lo), ti.i_const(0)), ti.ne_i(_t(hi), _t(slices)))
        for _ in ti.d_range(0, ti.idx_sub(1, _flag(cut))):  # the whole cell is this block's
            ti.store_view(out, [bm, bn], ti.to(ti.get(acc), fmt))
        for _ in ti.d_range(0, _flag(cut)):
            slot = ti.idx_add(ti.idx_mul(p, 2), _flag(ti.ne_i(_t(cell), _t(c0))))
            ti.store(ws, ti.idx_mul(slot, slot_words), ti.get(acc))
            counter = ti.reshape(_t(ti.idx_add(ti.idx_sub(cell, whole_cells), flags)), [1])
            mine = ti.int_to_float(ti.reshape(_t(ti.idx_sub(hi, lo)), [1]), F32)
            before = ti.atomic_rmw(ws, "addf", counter, mine, order="acq_rel")
            done = ti.eq(ti.reshape(before + mine, []), ti.int_to_float(_t(slices), F32))
            for _ in ti.d_range(0, _flag(done)):  # the last to arrive: every holder's slot, in block order
                # holders: the blocks q whose ranges meet [base, base + slices): q_first is the last q
                # starting at or before base, q_last the last starting before base + slices
                q_first = ti.idx_sub(_holder_bound(ti.idx_add(ti.idx_sub(base, first), 1), units, share), 1)
                q_end = _holder_bound(ti.idx_add(ti.idx_sub(base, first), slices), units, share)
                total = ti.carry(ti.full([tm, tn], 0.0, F32))
                for q in ti.d_range(q_first, q_end):
                    q_c0 = ti.idx_div(_start(q, units, share, first), slices)
                    q_slot = ti.idx_add(ti.idx_mul(q, 2), _flag(ti.ne_i(_t(cell), _t(q_c0))))
                    ti.set(total, ti.get(total) + ti.load(ws, ti.idx_mul(q_slot, slot_words), [tm, tn]))
                ti.store_view(out, [bm, bn], ti.to(ti.get(total), fmt))


def _holder_bound(x, units, share):
    """ceil(x share / units): the count of sharing blocks whose first unit (relative) lies below x."""
    return ti.idx_div(ti.idx_add(ti.idx_mul(x, share), ti.idx_sub(units, 1)), units)


def stream_k(a, b, c, *, config: dict | None = None, workspace=None, weight_t: bool = False):
    """C = A @ B by ``matmul_stream_k`` (C = A @ B^T for B [N, K] by ``matmul_nt_stream_k`` where
    ``weight_t``; f16 or bf16; CUDA tensors on the GPU, asynchronously, on torch's current stream; host
    arrays on the host reference): allocates the f32 workspace (or takes ``workspace``: f32, at least
    ``workspace_words`` long, used by one call at a time) and zeroes its counters, then one launch.
    ``config``: the kernel's tiles and hints (its defaults where None; the workspace's layout follows
    them, so the tuned table never picks tm, tn or programs here). Opt-in, measured slower than ``gemm``
    (see the module's text). Answers C."""
    kern = matmul_nt_stream_k if weight_t else matmul_stream_k
    name = str(getattr(a, "dtype", "")).replace("torch.", "")
    if name not in ("float16", "bfloat16"):
        raise TileirError(f"stream_k takes float16 or bfloat16 operands, not {name}", kernel=kern.name, what="a",
                          fix="kernels.gemm(a, b, c) for float32 (tf32 / 3xtf32)")
    fmt = fmt_of(a)
    if "fmt" in (config or {}):
        raise TileirError("config names fmt; the format is the operands'", kernel=kern.name, what="config",
                          fix="leave fmt out of config: stream_k reads it off a")
    cfg = {**{k: kern.static[k] for k in ("tm", "tn", "programs")}, **(config or {})}
    m, n = int(a.shape[0]), int(b.shape[0] if weight_t else b.shape[1])
    words = workspace_words(m, n, cfg["tm"], cfg["tn"], cfg["programs"])
    if workspace is None:
        workspace = empty(a, (words,), "f32")
    elif str(workspace.dtype).replace("torch.", "") != "float32" or len(workspace.shape) != 1 \
            or int(workspace.shape[0]) < words:
        raise TileirError(f"the workspace is {workspace.dtype} {list(workspace.shape)}; a {m} x {n} product on "
                          f"{cfg['programs']} blocks of {cfg['tm']} x {cfg['tn']} cells needs a float32 vector of "
                          f"at least {words}", kernel=kern.name, what="workspace",
                          fix="workspace=None (a fresh one a call), or "
                              "kernels.stream_k_workspace_words(M, N, tm, tn, programs)")
    workspace[counters_at(cfg["tm"], cfg["tn"], cfg["programs"]):words] = 0
    launch(kern, a, b, c, workspace, fmt=fmt, **cfg)
    return c


def _size(s):
    return (s, s, s) if isinstance(s, int) else tuple(s)


def _case(fmt, rtol, atol):
    npd = dtype(fmt).np
    name = dtype(fmt).name

    def inputs(s, rng):
        m, n, k = _size(s)
        a = (rng.standard_normal((m, k)) / np.sqrt(k)).astype(npd)
        b = rng.standard_normal((k, n)).astype(npd)
        ws = np.full(workspace_words(m, n, 64, 64, 5), np.nan, np.float32)  # a slot read unwritten: NaN
        ws[counters_at(64, 64, 5):] = 0
        return [a, b, np.zeros((m, n), npd), ws]

    def expected(args):
        return args[0].astype(np.float64) @ args[1].astype(np.float64)

    def config(s):  # small cells on 5 blocks: 4 x 3 = 12 cells of 64 x 64, 5 walked whole, 7 x 10 slices shared
        return {"tm": 64, "tn": 64, "tk": 32, "programs": 5, "group": 2, "fmt": name}

    return register(Case(f"matmul_stream_k_{name}", matmul_stream_k,
                         f"C = A @ B, the last waves shared out by K slice, {name} operands, f32 accumulate",
                         (200, 136, 300), config, inputs, expected, output=2, rtol=rtol, atol=atol))


_case(F16, 1e-2, 2e-2)
_case(BF16, 2e-2, 5e-2)

__all__ = ["matmul_stream_k", "matmul_nt_stream_k", "stream_k", "split_cells", "workspace_words"]
