"""Inclusive prefix sum of an f32 or i32 vector of any length: y[i] = x[0] + .. + x[i].

Three kernels, three launches (``prefix_sum`` runs them; every length is a run-time size read off
the arrays, so one cubin of each serves every length):

1. ``scan_blocks``: block b scans its ``tile`` of x (the tail reads 0) into y and writes the scan's
   last lane, the tile's total, as totals[b] (totals holds at least ceil(N / tile) elements).
2. ``scan_totals``: one block walks the nb totals (the length of its arrays) a tile at a time, scanning each
   and adding the running total carried from the tiles before it: offsets[b] = totals[0] + ..
   + totals[b].
3. ``add_offsets``: block b adds offsets[b] to every element of tile b + 1 of y (tile 0 is already
   right), so nb - 1 blocks.

A single tile (n <= tile) needs the first launch only. The i32 sum wraps modulo 2^32 whatever the
order, so it is exact. An f32 sum in another order is another number: the device scans a tile in
an order of its own, and the carry adds in the block totals. Each output is a sum whose every
rounding is of a partial sum of the elements at or before it, and any one element meets at most
L = tile + nb + ceil(nb / tile) of them (tile - 1 inside its tile; nb - 1 in the scan of the
totals and ceil(nb / tile) - 1 in its carry; 1 adding the offset), so |y[i] - exact| <=
L * 2^-24 * sum_{j<=i} |x[j]| (first order). The case draws x in [0, 1), where that is a relative
bound: at tile 1024 and n <= 2^20, L = 2049 and L * 2^-24 = 1.2e-4; the case's rtol is 2e-4.
"""

from __future__ import annotations

import numpy as np

from .. import surface as ti
from ..dtypes import dtype
from ..errors import TileirError
from ..kernel import cdiv, kernel
from ..markers import Shared, Whole
from .registry import Case, register


def _whole(size):
    return lambda fmt="f32": Whole(fmt, [size])


def _shared(size):
    return lambda fmt="f32": Shared(fmt, [size])


def zero(fmt, shape):
    """A tile of ``shape`` in ``fmt`` (float or integer), every lane 0."""
    if dtype(fmt).is_float:
        return ti.full(shape, 0.0, fmt)
    return ti.broadcast(ti.reshape(ti.consti(fmt, 0), [1] * len(shape)), shape)


def last_lane(t, tile):
    """The last lane of a [tile] tile, as a [1] tile."""
    return ti.extract(t, [1], [tile - 1])


def n_blocks(n: int, tile: int) -> int:
    """The tiles of ``tile`` that cover n elements (at least one)."""
    return max(1, cdiv(int(n), tile))


def _check(fmt):
    if fmt not in ("f32", "i32"):
        raise TileirError(f"prefix_sum of {fmt}: the library's prefix sum is f32 or i32", kernel="prefix_sum")


def _scan_grid(N, NB, tile=1024):  # noqa: N803  (the run-time sizes' names)
    if NB < n_blocks(N, tile):
        raise TileirError(f"scan_blocks of {N} elements in tiles of {tile} writes {n_blocks(N, tile)} totals, and "
                          f"totals holds {NB}", kernel="scan_blocks", what="totals",
                          fix=f"a totals array of {n_blocks(N, tile)} elements")
    return (n_blocks(N, tile),)


@kernel(grid=_scan_grid)
def scan_blocks(x=_whole("N"), y=_shared("N"), totals=_shared("NB"), *, fmt: str = "f32", tile: int = 1024):
    """y[tile b ..] = the inclusive scan of x's tile b; totals[b] = that tile's sum (x and y of N
    elements, totals of at least ceil(N / tile))."""
    _check(fmt)
    b = ti.block_id(0)
    base = ti.tile_at(b, tile)
    inside = ti.tail_mask(base, [tile], ti.extent_of(x, 0))
    s = ti.scan_sum(ti.load(x, base, [tile], mask=inside, pad=0))
    ti.store(y, base, s, mask=inside)
    ti.store(totals, b, last_lane(s, tile))


@kernel(grid=lambda: (1,))
def scan_totals(totals=_whole("NB"), offsets=_shared("NB"), *, fmt: str = "f32", tile: int = 1024):
    """offsets = the inclusive scan of the NB totals, one block walking them a tile at a time."""
    _check(fmt)
    count = ti.extent_of(totals, 0)
    chunks = ti.idx_div(ti.idx_add(count, ti.idx_const(tile - 1)), ti.idx_const(tile))
    run = ti.carry(zero(fmt, [1]))  # the sum of the tiles before this one
    for j in ti.d_range(0, chunks):
        base = ti.tile_at(j, tile)
        inside = ti.tail_mask(base, [tile], count)
        s = ti.scan_sum(ti.load(totals, base, [tile], mask=inside, pad=0)) + ti.get(run)
        ti.store(offsets, base, s, mask=inside)
        ti.set(run, last_lane(s, tile))  # the tail lanes read 0: the last lane is the sum so far


@kernel(grid=lambda N, tile=1024: (max(1, n_blocks(N, tile) - 1),))  # noqa: N803
def add_offsets(y=_shared("N"), offsets=_whole("NB"), *, fmt: str = "f32", tile: int = 1024):
    """y[tile b + 1 ..] += offsets[b]: the sum of every tile before tile b + 1 (y of N elements)."""
    _check(fmt)
    b = ti.block_id(0)
    base = ti.tile_at(ti.idx_add(b, ti.idx_const(1)), tile)
    inside = ti.tail_mask(base, [tile], ti.extent_of(y, 0))
    v = ti.load(y, base, [tile], mask=inside, pad=0)
    ti.store(y, base, v + ti.load(offsets, b, [1]), mask=inside)


# ---- running the three ---------------------------------------------------------------------------


def empty_like(x, n: int, np_dtype=None):
    """A fresh vector of n elements of ``np_dtype`` (x's format by default) in x's array library
    (numpy, torch or cupy)."""
    d = np.dtype(np_dtype) if np_dtype is not None else _np_dtype_of(x)
    if isinstance(x, np.ndarray):
        return np.empty(n, d)
    if hasattr(x, "new_empty"):  # torch
        import torch

        return x.new_empty(n, dtype=getattr(torch, d.name))
    if type(x).__module__.split(".")[0] == "cupy":
        import cupy

        return cupy.empty(n, d)
    raise TypeError(f"the library's multi-launch kernels take numpy, torch or cupy arrays, not {type(x).__name__}")


def _np_dtype_of(x):
    return np.dtype(str(x.dtype).replace("torch.", ""))


def fmt_of(x) -> str:
    """f32 / i32 for an array of float32 / int32 (numpy, torch or cupy)."""
    d = _np_dtype_of(x)
    if d == np.float32:
        return "f32"
    if d == np.int32:
        return "i32"
    return str(d)


def prefix_sum(x, out=None, *, host: bool | None = None, tile: int = 1024, sync: bool = True):
    """The inclusive prefix sum of the f32 or i32 vector x, written into ``out`` (a fresh array of
    x's library and format if None) and answered: scan_blocks, then (more than one tile)
    scan_totals and add_offsets. On the host reference for a numpy x, on the GPU otherwise
    (``host`` overrides; ``sync``: wait for the GPU before answering)."""
    n = int(x.shape[0])
    fmt = fmt_of(x)
    _check(fmt)
    out = empty_like(x, n) if out is None else out
    if n == 0:
        return out
    host = isinstance(x, np.ndarray) if host is None else host
    nb = n_blocks(n, tile)
    totals = empty_like(x, nb)
    if host:
        scan_blocks.run_host(x, out, totals, fmt=fmt, tile=tile)
        if nb > 1:
            offsets = empty_like(x, nb)
            scan_totals.run_host(totals, offsets, fmt=fmt, tile=tile)
            add_offsets.run_host(out, offsets, fmt=fmt, tile=tile)
        return out
    # one stream: each launch follows the one before it
    scan_blocks(x, out, totals, fmt=fmt, tile=tile, sync=sync and nb == 1)
    if nb > 1:
        offsets = empty_like(x, nb)
        scan_totals(totals, offsets, fmt=fmt, tile=tile, sync=False)
        add_offsets(out, offsets, fmt=fmt, tile=tile, sync=sync)
    return out


# ---- cases ---------------------------------------------------------------------------------------


def _run(args, where="host", **cfg):
    prefix_sum(args[0], args[1], host=where == "host", tile=cfg.get("tile", 1024))


def _f32_inputs(n, rng):
    return [rng.random(n, dtype=np.float32), np.zeros(n, np.float32)]  # in [0, 1): see the bound above


def _i32_inputs(n, rng):
    return [rng.integers(-2**31, 2**31, n, dtype=np.int64).astype(np.int32), np.zeros(n, np.int32)]


register(Case("prefix_sum_f32", scan_blocks, "inclusive prefix sum of an f32 vector of any length (three launches)",
              1_000_003, lambda n: {"fmt": "f32"}, _f32_inputs, lambda args: np.cumsum(args[0].astype(np.float64)),
              output=1, rtol=2e-4, atol=1e-6, runner=_run))
register(Case("prefix_sum_i32", scan_blocks, "inclusive prefix sum of an i32 vector of any length, wrapping (three "
              "launches)", 1_000_003, lambda n: {"fmt": "i32"}, _i32_inputs,
              lambda args: np.cumsum(args[0].astype(np.int64)).astype(np.int32), output=1, runner=_run))
