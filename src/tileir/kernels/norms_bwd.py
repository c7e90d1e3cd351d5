"""Layernorm and rmsnorm for training: forwards that save the row statistics, and backwards.

Row-major [R, C] x, y, dy and dx of f32, f16 or bf16 (``fmt``) and [C] weights and biases of the
same format, statistics and arithmetic in f32; R and C are run-time sizes read off the arrays
(one cubin per configuration serves every shape), rows walked in chunks of ``max_tile`` lanes.

* ``layernorm_fwd_stats(x, w, b, y, mean, rstd)``: y = (x - mean) * rstd * w + b, and saves the
  [R] f32 ``mean`` and ``rstd`` = 1 / sqrt(var + eps) (the biased variance, as torch's).
* ``rmsnorm_fwd_stats(x, w, y, rstd)``: y = x * rstd * w, rstd = 1 / sqrt(mean(x^2) + eps).

The backward reads the saved statistics rather than recomputing them. With xhat = (x - mean) *
rstd (rmsnorm: x * rstd) and g = dy * w, the row's gradient is

    dx = rstd * (g - xhat * mean(g * xhat) - mean(g))      (rmsnorm: without the last term)

because xhat's row has zero mean and unit mean square (rmsnorm: only the latter), so the
projection of g on them is what the normalisation takes away; and the weight gradients are the
column sums dw = sum_r dy * xhat, db = sum_r dy. Those sums run in two stages: the backward's
grid is ``G`` blocks (G = the partials' first dimension, which the caller chooses), block g walks
its share of the rows (ceil(R / row_tile / G) steps of ``row_tile`` rows, a [row_tile, max_tile]
tile a step) and writes its own partial rows ``dw_partial[g, :]`` / ``db_partial[g, :]`` (f32);
then ``sum_rows`` adds the G partial rows into dw / db. A row is read twice at most (its sums,
then dx) and once when it fits one chunk: the last chunk stays in registers between the two,
and its weight-gradient sums are carried across the block's steps; a longer row's earlier
chunks add into the block's partial rows in memory (each block owns its rows, and the lowering
orders a load after the store before it to the same buffer).

The helpers ``layernorm_backward`` / ``rmsnorm_backward`` run both stages and answer (dx, dw[,
db]); they run on the host reference for numpy arrays and CPU tensors, on the GPU otherwise.
"""

from __future__ import annotations

import numpy as np

from .. import surface as ti
from ..dtypes import BF16, F16, F32, dtype
from ..ir import PadZero
from ..kernel import kernel
from ..markers import FREE_AXIS, In, Out, Shared, cells
from .entry_hints import entry_hints
from .launching import empty, fmt_of, launch, pow2_at_least
from .registry import Case, register

# ---- markers -------------------------------------------------------------------------------------


def _x_rows(fmt="f32", max_tile=8192, rows=1, one_chunk=False):
    """x of a forward: ``rows`` rows a block (grid axis 0), chunks along a FREE dimension (one chunk
    covering the row where ``one_chunk``: a wider row is refused at the launch)."""
    return In(fmt, cells(["R", "C"], [rows, max_tile], along=[0, FREE_AXIS], pad=PadZero,
                         one_cell=(1,) if one_chunk else ()))


def _x_free(fmt="f32", max_tile=8192, row_tile=1, one_chunk=False):
    """x or dy of a backward: [row_tile, max_tile] cells, the block names the rows and the chunk."""
    return In(fmt, cells(["R", "C"], [row_tile, max_tile], along=[FREE_AXIS, FREE_AXIS], pad=PadZero,
                         one_cell=(1,) if one_chunk else ()))


def _vec(fmt="f32", max_tile=8192):
    """A weight or bias: [C], read in the row's chunks (every block reads them all)."""
    return In(fmt, cells(["C"], [max_tile], along=[FREE_AXIS], pad=PadZero))


def _rows_out(fmt="f32"):
    return Shared(fmt, ["R", "C"])


def _STAT_OUT(rows=1):  # noqa: N802  (a marker, spelled as the others)
    """One statistic a row, [R] f32, written by the row's block."""
    return Out(F32, cells(["R"], [rows]))


def _stat_in(row_tile=1):
    """The saved mean or rstd, [R] f32, read [row_tile] rows at a time (past R: zeros)."""
    return In(F32, cells(["R"], [row_tile], along=[FREE_AXIS], pad=PadZero))


_PARTIAL = Shared(F32, ["G", "C"])  # one row of weight-gradient sums a block


def _chunk(p, at):
    """A [1, t] chunk of x / dy (``at`` = [row, chunk], or [chunk] on a forward's own row), as f32."""
    return ti.to(ti.load_at(p, at), F32)


def _vec_row(v, j, t):
    """Chunk j of a [C] parameter as a [1, t] f32 row."""
    return ti.reshape(ti.to(ti.load_at(v, [j]), F32), [1, t])


def _inv_cols(x):
    """1 / C as a rank-0 f32, from the run-time C."""
    return 1.0 / ti.int_to_float(ti.idx_as_tile(ti.extent_of(x, 1)), F32)


def _idx_min(a, b):
    return ti.idx_of(ti.min_i(ti.idx_as_tile(ti.as_idx(a)), ti.idx_as_tile(ti.as_idx(b))))


class _Chunks:
    """A row's walk in chunks, or none (``one``: the row is one chunk, the configuration's
    one_chunk). ``last`` is the last chunk's index (0 for one chunk); ``whole()`` the chunks before
    it, to loop over; ``sum(shape)`` a carried f32 sum over them (None for one chunk) and
    ``plus(acc, v)`` what it holds plus ``v``: the one-chunk program carries nothing (a carried
    [rows, chunk] tile costs registers even where its loop never runs: measured on the forwards,
    docs/design.md)."""

    def __init__(self, x, one: bool):
        self.one = one
        self.last = 0 if one else ti.idx_sub(ti.blocks_of(x, 1), 1)

    def whole(self):
        return () if self.one else ti.d_range(0, self.last)

    def sum(self, shape):
        return None if self.one else ti.carry(ti.full(shape, 0.0, F32))

    @staticmethod
    def plus(acc, v):
        return v if acc is None else ti.get(acc) + v


# ---- forwards that save the statistics -------------------------------------------------------------


@kernel(hints=entry_hints, tuned=("max_tile", "rows", "one_chunk", "warps", "occupancy"))
def layernorm_fwd_stats(x=_x_rows, w=_vec, b=_vec, y=_rows_out, mean=_STAT_OUT, rstd=_STAT_OUT, *, eps: float = 1e-5,
                        fmt: str = "f32", max_tile: int = 8192, rows: int = 1, one_chunk: bool = False, warps: int = 0,
                        occupancy: int = 0):
    """y[r, :] = (x[r, :] - mean[r]) * rstd[r] * w + b for [R, C] arrays of ``fmt`` and [C] w and b,
    saving the [R] f32 mean[r] and rstd[r] = 1 / sqrt(var + eps) (biased variance) for the
    backward; any R and C, rows walked in chunks of ``max_tile``, ``rows`` rows a block."""
    t, n = max_tile, rows
    r = ti.block_id(0)
    walk = _Chunks(x, one_chunk)
    last = walk.last
    inv_n = _inv_cols(x)
    total = walk.sum([n, t])
    for j in walk.whole():
        ti.set(total, ti.get(total) + _chunk(x, [j]))
    x_last = _chunk(x, [last])  # a row that fits one chunk is read here only
    mu = ti.reduce_sum(walk.plus(total, x_last), keepdims=True) * inv_n
    sq = walk.sum([n, t])
    for j in walk.whole():  # whole chunks: no lane past C
        d = _chunk(x, [j]) - mu
        ti.set(sq, ti.get(sq) + d * d)
    inside = ti.axis_mask(ti.tile_at(last, t), [n, t], 1, ti.extent_of(x, 1))
    d_last = ti.select(inside, x_last - mu, 0.0)  # a padded lane holds -mean: out of the variance
    rs = ti.rsqrt(ti.reduce_sum(walk.plus(sq, d_last * d_last), keepdims=True) * inv_n + eps)
    out = ti.partition_view(ti.array_view(y), [n, t])
    for j in walk.whole():
        v = ti.fma((_chunk(x, [j]) - mu) * rs, _vec_row(w, j, t), _vec_row(b, j, t))
        ti.store_view(out, [r, j], ti.to(v, fmt))
    ti.store_view(out, [r, last], ti.to(ti.fma(d_last * rs, _vec_row(w, last, t), _vec_row(b, last, t)), fmt))
    ti.store_cell(mean, ti.reshape(mu, [n]))
    ti.store_cell(rstd, ti.reshape(rs, [n]))


@kernel(hints=entry_hints, tuned=("max_tile", "rows", "one_chunk", "warps", "occupancy"))
def rmsnorm_fwd_stats(x=_x_rows, w=_vec, y=_rows_out, rstd=_STAT_OUT, *, eps: float = 1e-6, fmt: str = "f32",
                      max_tile: int = 8192, rows: int = 1, one_chunk: bool = False, warps: int = 0, occupancy: int = 0):
    """y[r, :] = x[r, :] * rstd[r] * w for [R, C] arrays of ``fmt`` and a [C] w, saving the [R] f32
    rstd[r] = 1 / sqrt(mean(x[r, :]^2) + eps) for the backward; any R and C, ``rows`` rows a block."""
    t, n = max_tile, rows
    r = ti.block_id(0)
    walk = _Chunks(x, one_chunk)
    last = walk.last
    ss = walk.sum([n, t])
    for j in walk.whole():
        c = _chunk(x, [j])
        ti.set(ss, ti.get(ss) + c * c)
    x_last = _chunk(x, [last])  # a padded lane is 0, and so is its square
    rs = ti.rsqrt(ti.reduce_sum(walk.plus(ss, x_last * x_last), keepdims=True) * _inv_cols(x) + eps)
    out = ti.partition_view(ti.array_view(y), [n, t])
    for j in walk.whole():
        ti.store_view(out, [r, j], ti.to(_chunk(x, [j]) * rs * _vec_row(w, j, t), fmt))
    ti.store_view(out, [r, last], ti.to(x_last * rs * _vec_row(w, last, t), fmt))
    ti.store_cell(rstd, ti.reshape(rs, [n]))


# ---- backwards -----------------------------------------------------------------------------------


def _norm_bwd(x, w, dy, mean, rstd, dx, dwp, dbp, t, rb, fmt, one=False):
    """The backward of both norms (``mean`` and ``dbp`` None for rmsnorm), ``rb`` rows a step: see
    the module docstring. Rows past R in the last row tile read x = dy = 0 and mean = rstd = 0, so
    they add nothing, and their dx lanes are not written."""
    g = ti.block_id(0)
    row_tiles, groups = ti.blocks_of(x, 0), ti.num_blocks(0)
    per = ti.idx_div(ti.idx_add(row_tiles, ti.idx_sub(groups, 1)), groups)  # row tiles a block
    lo = _idx_min(ti.idx_mul(g, per), row_tiles)
    hi = _idx_min(ti.idx_add(lo, per), row_tiles)
    walk = _Chunks(x, one)
    last = walk.last
    inv_n = _inv_cols(x)
    partials = [ti.partition_view(ti.array_view(p), [1, t]) for p in (dwp, dbp) if p is not None]
    zero_row, zero = ti.full([1, t], 0.0, F32), ti.full([rb, t], 0.0, F32)
    for j in walk.whole():  # the earlier chunks' partial sums start at zero, in memory
        for pv in partials:
            ti.store_view(pv, [g, j], zero_row)
    w_last = _vec_row(w, last, t)  # the last chunk of w, read once for all the block's rows
    sums_last = [ti.carry(zero) for _ in partials]  # the last chunk's weight-gradient sums, in registers
    out = ti.partition_view(ti.array_view(dx), [rb, t])

    def normalised(xc, mu, rs):
        return (xc - mu) * rs if mu is not None else xc * rs

    def dx_of(gc, xhat, c_gx, c_g, rs):  # rstd * (g - xhat * mean(g * xhat) [- mean(g)])
        v = gc - xhat * c_gx
        return (v - c_g if c_g is not None else v) * rs

    def grads(dyc, xhat):  # what each partial row adds: dy * xhat (dw), dy (db)
        return [dyc * xhat, dyc][:len(partials)]

    def row_sum(v):  # [rb, t] -> [rb, 1]
        return ti.reduce_sum(v, 1, keepdims=True)

    for r in ti.d_range(lo, hi):
        rs = ti.reshape(ti.load_at(rstd, [r]), [rb, 1])
        mu = ti.reshape(ti.load_at(mean, [r]), [rb, 1]) if mean is not None else None
        s_gx = walk.sum([rb, t])  # sum of g * xhat over the rows' earlier chunks
        s_g = walk.sum([rb, t])  # sum of g (layernorm)
        for j in walk.whole():
            xhat = normalised(_chunk(x, [r, j]), mu, rs)
            gc = _chunk(dy, [r, j]) * _vec_row(w, j, t)
            ti.set(s_gx, ti.get(s_gx) + gc * xhat)
            if mean is not None:
                ti.set(s_g, ti.get(s_g) + gc)
        # a padded lane of the last chunk has dy = 0, so g = 0 there: it adds nothing below
        xhat_last, dy_last = normalised(_chunk(x, [r, last]), mu, rs), _chunk(dy, [r, last])
        g_last = dy_last * w_last
        c_gx = row_sum(walk.plus(s_gx, g_last * xhat_last)) * inv_n
        c_g = row_sum(walk.plus(s_g, g_last)) * inv_n if mean is not None else None

        for j in walk.whole():
            xhat = normalised(_chunk(x, [r, j]), mu, rs)
            dyc = _chunk(dy, [r, j])
            ti.store_view(out, [r, j], ti.to(dx_of(dyc * _vec_row(w, j, t), xhat, c_gx, c_g, rs), fmt))
            for pv, v in zip(partials, grads(dyc, xhat)):
                ti.store_view(pv, [g, j], ti.load_view(pv, [g, j]) + ti.reduce_sum(v, 0, keepdims=True))
        ti.store_view(out, [r, last], ti.to(dx_of(g_last, xhat_last, c_gx, c_g, rs), fmt))
        for s, v in zip(sums_last, grads(dy_last, xhat_last)):
            ti.set(s, ti.get(s) + v)
    for pv, s in zip(partials, sums_last):
        ti.store_view(pv, [g, last], ti.reduce_sum(ti.get(s), 0, keepdims=True))


def _groups_grid(G):  # noqa: N803  (the run-time size's name)
    return (G,)


@kernel(grid=_groups_grid, hints=entry_hints)
def layernorm_bwd(x=_x_free, w=_vec, dy=_x_free, mean=_stat_in, rstd=_stat_in, dx=_rows_out, dw_partial=_PARTIAL,
                  db_partial=_PARTIAL, *, fmt: str = "f32", max_tile: int = 8192, row_tile: int = 1,
                  one_chunk: bool = False, warps: int = 0, occupancy: int = 0):
    """Layernorm's backward from the saved [R] f32 mean and rstd: dx [R, C] (``fmt``), and per block
    g of the [G] grid the f32 partial sums dw_partial[g, :] = sum dy * xhat and db_partial[g, :] =
    sum dy over its rows (ceil(R / row_tile / G) tiles of row_tile rows); ``sum_rows`` finishes dw
    and db. max_tile: the chunk a row is walked in; row_tile: rows a step."""
    _norm_bwd(x, w, dy, mean, rstd, dx, dw_partial, db_partial, max_tile, row_tile, fmt, one_chunk)


@kernel(grid=_groups_grid, hints=entry_hints)
def rmsnorm_bwd(x=_x_free, w=_vec, dy=_x_free, rstd=_stat_in, dx=_rows_out, dw_partial=_PARTIAL, *, fmt: str = "f32",
                max_tile: int = 8192, row_tile: int = 1, one_chunk: bool = False, warps: int = 0, occupancy: int = 0):
    """Rmsnorm's backward from the saved [R] f32 rstd: dx [R, C] (``fmt``) and per block g the f32
    partial sums dw_partial[g, :] = sum dy * x * rstd over its rows; ``sum_rows`` finishes dw."""
    _norm_bwd(x, w, dy, None, rstd, dx, dw_partial, None, max_tile, row_tile, fmt, one_chunk)


@kernel(hints=entry_hints)
def sum_rows(p=lambda tg=32, tc=256: In(F32, cells(["G", "C"], [tg, tc], along=[FREE_AXIS, 0], pad=PadZero)),
             out=lambda fmt="f32", tc=256: Out(fmt, cells(["C"], [tc])), *, fmt: str = "f32", tg: int = 32,
             tc: int = 256, warps: int = 0, occupancy: int = 0):
    """out[c] = sum_g p[g, c] for an f32 [G, C] p (partial sums), written in ``fmt``: a block a [tc]
    column cell, walking G in tiles of tg rows (the padded rows add 0)."""
    acc = ti.carry(ti.full([tg, tc], 0.0, F32))
    for i in ti.d_range(0, ti.blocks_of(p, 0)):
        ti.set(acc, ti.get(acc) + ti.load_at(p, [i]))
    ti.store_cell(out, ti.to(ti.reduce_sum(ti.get(acc), 0), fmt))


# ---- running both stages -----------------------------------------------------------------------


def groups_for(row_tiles: int, groups: int = 264) -> int:
    """How many blocks (and partial rows) a norm backward over ``row_tiles`` tiles of rows runs:
    ``groups`` (two a streaming multiprocessor of an H100 / H200 by default), no more than the tiles."""
    return max(1, min(int(row_tiles), int(groups)))


def tiles_for(rows: int, cols: int, lanes: int = 4096) -> tuple[int, int]:
    """(max_tile, row_tile) a backward of [rows, cols] takes by default: a chunk covering the row (up
    to 8192 lanes), and as many rows a step as make about ``lanes`` lanes (a short row alone would
    leave a block little to read at once)."""
    t = min(pow2_at_least(cols), 8192)
    return t, max(1, min(pow2_at_least(rows), lanes // t))


# A row of 4097-8192 lanes as one chunk: 8 warps (the forward's one-chunk rows take 8 too) and 132
# blocks, not tileiras' own warps and 264. H200, bf16 4096 x 8192 (bench/norm_bwd_probe.py,
# bench/results/norm_bwd_hints_h200.json): layernorm 1.15 -> 1.82x torch, rmsnorm 1.76 -> 1.92x; at
# 4096 lanes no one setting won both (the defaults stay), and wider rows (a walk) were not measured.
WIDE_CHUNK = {"lanes": 8192, "warps": 8, "groups": 132}


def _backward(kern, x, w, dy, stats, dx, has_bias, groups, max_tile, row_tile, sum_tiles, **hints):
    rows, cols = int(x.shape[0]), int(x.shape[1])
    fmt = fmt_of(x)
    t, rb = tiles_for(rows, cols)
    t, rb = max_tile or t, row_tile or rb
    hints.setdefault("one_chunk", cols <= t)  # the row is one chunk: the program without a walk
    wide = t == WIDE_CHUNK["lanes"] and WIDE_CHUNK["lanes"] // 2 < cols <= t and \
        not ({"warps", "occupancy"} & set(hints))
    if wide:
        hints["warps"] = WIDE_CHUNK["warps"]
    g = groups_for(-(-rows // rb), groups or (WIDE_CHUNK["groups"] if wide else 264))
    dx = empty(x, (rows, cols), fmt) if dx is None else dx
    partials = [empty(x, (g, cols), "f32") for _ in range(2 if has_bias else 1)]
    launch(kern, x, w, dy, *stats, dx, *partials, fmt=fmt, max_tile=t, row_tile=rb, **hints)
    tg, tc = sum_tiles or (32, 256)
    sums = []
    for p in partials:
        s = empty(x, (cols,), fmt_of(w))
        launch(sum_rows, p, s, fmt=fmt_of(w), tg=tg, tc=tc)
        sums.append(s)
    return (dx, *sums)


def layernorm_backward(x, w, dy, mean, rstd, dx=None, *, groups=None, max_tile=None, row_tile=None, sum_tiles=None,
                       **hints):
    """(dx, dw, db) of layernorm for [R, C] x and dy, [C] w and the forward's saved [R] f32 mean and
    rstd: ``layernorm_bwd`` on ``groups`` blocks, then ``sum_rows`` on each partial (tiles from
    ``tiles_for`` unless given). numpy / CPU tensors on the host reference, CUDA tensors on the
    GPU (torch's current stream)."""
    return _backward(layernorm_bwd, x, w, dy, (mean, rstd), dx, True, groups, max_tile, row_tile, sum_tiles, **hints)


def rmsnorm_backward(x, w, dy, rstd, dx=None, *, groups=None, max_tile=None, row_tile=None, sum_tiles=None, **hints):
    """(dx, dw) of rmsnorm for [R, C] x and dy, [C] w and the forward's saved [R] f32 rstd."""
    return _backward(rmsnorm_bwd, x, w, dy, (rstd,), dx, False, groups, max_tile, row_tile, sum_tiles, **hints)


# ---- references (numpy, f64) -------------------------------------------------------------------


def layernorm_reference(x, w, b, eps=1e-5):
    """(y, mean, rstd) of layernorm in f64."""
    x, w, b = (np.asarray(a, np.float64) for a in (x, w, b))
    mu = x.mean(axis=1)
    rs = 1 / np.sqrt(((x - mu[:, None]) ** 2).mean(axis=1) + eps)
    return (x - mu[:, None]) * rs[:, None] * w + b, mu, rs


def layernorm_grads_reference(x, w, dy, mean, rstd):
    """(dx, dw, db) of layernorm in f64, from the statistics."""
    x, w, dy, mean, rstd = (np.asarray(a, np.float64) for a in (x, w, dy, mean, rstd))
    xhat = (x - mean[:, None]) * rstd[:, None]
    g = dy * w
    dx = rstd[:, None] * (g - xhat * (g * xhat).mean(axis=1, keepdims=True) - g.mean(axis=1, keepdims=True))
    return dx, (dy * xhat).sum(axis=0), dy.sum(axis=0)


def rmsnorm_reference(x, w, eps=1e-6):
    """(y, rstd) of rmsnorm in f64."""
    x, w = np.asarray(x, np.float64), np.asarray(w, np.float64)
    rs = 1 / np.sqrt((x * x).mean(axis=1) + eps)
    return x * rs[:, None] * w, rs


def rmsnorm_grads_reference(x, w, dy, rstd):
    """(dx, dw) of rmsnorm in f64, from rstd."""
    x, w, dy, rstd = (np.asarray(a, np.float64) for a in (x, w, dy, rstd))
    xhat = x * rstd[:, None]
    g = dy * w
    return rstd[:, None] * (g - xhat * (g * xhat).mean(axis=1, keepdims=True)), (dy * xhat).sum(axis=0)


# ---- cases ---------------------------------------------------------------------------------------


def _size(s):
    return (s, s) if isinstance(s, int) else tuple(s)


def _inputs(fmt, bias):
    npd = dtype(fmt).np

    def inputs(s, rng):
        rows, cols = _size(s)
        x = (rng.standard_normal((rows, cols)) * 2 + 0.5).astype(npd)
        w = (1 + 0.5 * rng.standard_normal(cols)).astype(npd)
        dy = rng.standard_normal((rows, cols)).astype(npd)
        if bias:
            _, mu, rs = layernorm_reference(x, w, np.zeros(cols))
            return [x, w, dy, mu.astype(np.float32), rs.astype(np.float32), np.zeros((rows, cols), npd)]
        _, rs = rmsnorm_reference(x, w)
        return [x, w, dy, rs.astype(np.float32), np.zeros((rows, cols), npd)]

    return inputs


def _grads_runner(helper, n_stats, what):
    """A case runner: both stages, then the gradient ``what`` names (0 dx, 1 dw, 2 db) into the output."""

    def run(args, where="host", **cfg):
        x, w, dy = args[:3]
        got = helper(x, w, dy, *args[3:3 + n_stats], groups=cfg.get("groups"), max_tile=cfg.get("max_tile"),
                     row_tile=cfg.get("row_tile"))
        out = args[3 + n_stats]
        if what == 0:
            out[...] = got[0]
        else:  # a weight gradient lands in the first row of the [R, C] output, the rest left zero
            out[0, :] = got[what]

    return run


def _expected(ref, n_stats, what):
    def expected(args):
        got = ref(*args[:3 + n_stats])
        if what == 0:
            return got[0]
        out = np.zeros(args[0].shape)
        out[0, :] = got[what]
        return out

    return expected


def _norm_case(name, helper, ref, bias, fmt, what, rtol, atol):
    n_stats = 2 if bias else 1
    return register(Case(name, layernorm_bwd if bias else rmsnorm_bwd,
                         f"{'layer' if bias else 'rms'}norm backward ({['dx', 'dw', 'db'][what]}), {dtype(fmt).name} "
                         "rows, f32 statistics, two-stage weight gradients, any R and C", (64, 1000), lambda s: {},
                         _inputs(fmt, bias), _expected(ref, n_stats, what), output=3 + n_stats, rtol=rtol, atol=atol,
                         runner=_grads_runner(helper, n_stats, what)))


for _fmt, _tol in ((F32, (1e-4, 1e-4)), (F16, (1e-2, 1e-2)), (BF16, (2e-2, 5e-2))):
    _n = dtype(_fmt).name
    _norm_case(f"layernorm_bwd_{_n}", layernorm_backward, layernorm_grads_reference, True, _fmt, 0, *_tol)
    _norm_case(f"rmsnorm_bwd_{_n}", rmsnorm_backward, rmsnorm_grads_reference, False, _fmt, 0, *_tol)
_norm_case("layernorm_bwd_dw_f32", layernorm_backward, layernorm_grads_reference, True, F32, 1, 1e-4, 1e-3)
_norm_case("layernorm_bwd_db_f32", layernorm_backward, layernorm_grads_reference, True, F32, 2, 1e-4, 1e-3)
_norm_case("rmsnorm_bwd_dw_f32", rmsnorm_backward, rmsnorm_grads_reference, False, F32, 1, 1e-4, 1e-3)


def _fwd_case(name, kern, fmt, bias, rtol, atol):
    npd = dtype(fmt).np

    def inputs(s, rng):
        rows, cols = _size(s)
        x = (rng.standard_normal((rows, cols)) * 2 + 0.5).astype(npd)
        w = (1 + 0.5 * rng.standard_normal(cols)).astype(npd)
        vecs = [w, rng.standard_normal(cols).astype(npd)] if bias else [w]
        stats = [np.zeros(rows, np.float32) for _ in range(2 if bias else 1)]
        return [x, *vecs, np.zeros((rows, cols), npd), *stats]

    def expected(args):
        return layernorm_reference(*args[:3])[0] if bias else rmsnorm_reference(*args[:2])[0]

    spelled = {} if fmt == F32 else {"fmt": dtype(fmt).name}
    return register(Case(name, kern, f"{'layer' if bias else 'rms'}norm forward saving the statistics, "
                         f"{dtype(fmt).name} rows, any R and C", (64, 1000), lambda s: dict(spelled), inputs,
                         expected, output=3 if bias else 2, rtol=rtol, atol=atol))


def _sum_rows_case(name, fmt, rtol, atol):
    def inputs(s, rng):
        g, cols = _size(s)
        return [rng.standard_normal((g, cols)).astype(np.float32), np.zeros(cols, dtype(fmt).np)]

    def expected(args):
        return args[0].astype(np.float64).sum(axis=0)

    spelled = {} if fmt == F32 else {"fmt": dtype(fmt).name}
    return register(Case(name, sum_rows, f"column sums of an f32 [G, C] (the partial weight gradients) into "
                         f"{dtype(fmt).name}", (264, 1000), lambda s: dict(spelled), inputs, expected, output=1,
                         rtol=rtol, atol=atol))


for _fmt, _tol in ((F32, (1e-4, 1e-4)), (F16, (1e-2, 1e-2)), (BF16, (2e-2, 5e-2))):
    _n = dtype(_fmt).name
    _fwd_case(f"layernorm_fwd_stats_{_n}", layernorm_fwd_stats, _fmt, True, *_tol)
    _fwd_case(f"rmsnorm_fwd_stats_{_n}", rmsnorm_fwd_stats, _fmt, False, *_tol)
_sum_rows_case("sum_rows_f32", F32, 1e-5, 1e-4)
_sum_rows_case("sum_rows_bf16", BF16, 1e-2, 1e-1)
