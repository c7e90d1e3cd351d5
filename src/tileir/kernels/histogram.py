"""Histogram of i32 values: counts[v] += 1 for every element v of x with 0 <= v < BINS, where x has
any length N and BINS is the length of ``counts`` (both run-time sizes read off the arrays, so one
cubin serves every length and bin count); values outside [0, BINS) are ignored.

Each block reads one ``tile`` of x, its tail lanes reading -1, and adds 1 to the counter of each
lane with one atomic add a lane into the Shared i32 ``counts`` (relaxed, device scope), masked by
0 <= v < BINS, so a lane out of range (or past N) touches nothing. Colliding lanes are what the
atomics are for; an integer sum does not depend on the order they arrive in, so the counts are
exact. ``counts`` is added to: the caller zeroes it (the case does).

That is fast while few lanes meet: at 2^28 values into 256 bins every add lands on one of 256
addresses, 15 GB/s (69 ms; torch.bincount 2.1 ms). ``count_values`` runs it up to
``DIRECT_MOST`` values; past that, ``histogram_rows``: block b of G adds into its own row b of a
zeroed [G, BINS] array (G up to ``ROWS_MOST``: the blocks then meet only inside themselves), and
``merge_rows`` adds the G rows into counts. H200, 2^28 values, 256 bins (bench/results/
vector_probe_h200.json): the adds 2.95 ms with 528 rows, against 3.55 with 128, 4.98 with 32 and
69 with one.
"""

from __future__ import annotations

import numpy as np

from .. import surface as ti
from ..dtypes import I32
from ..heuristics import SMS
from ..ir import PadZero
from ..kernel import cdiv, kernel
from ..markers import FREE_AXIS, In, Shared, Whole, cells
from .launching import launch, zeros
from .prefix_sum import tiles_in
from .registry import Case, register

DIRECT_MOST = 1 << 16  # values counted straight into counts; more go through the rows. H200, 256
# bins (suite_h200.json): 2^16 straight 23 us, 2^17 straight 39 us, 2^18 through the rows 16 us
ROWS_MOST = 4 * SMS["sm_90"]  # the most private rows (and blocks): four an H200 SM


@kernel(grid=lambda N, tile: (cdiv(N, tile),))  # noqa: N803  (the run-time size's name)
def histogram(x=Whole(I32, ["N"]), counts=Shared(I32, ["BINS"]), *, tile: int = 1024):
    """counts[v] += the number of elements of x equal to v, for v in [0, len(counts)); the rest ignored."""
    base = ti.tile_at(ti.block_id(0), tile)
    inside = ti.tail_mask(base, [tile], ti.extent_of(x, 0))
    v = ti.load(x, base, [tile], mask=inside, pad=-1)  # the tail reads -1, which no counter takes
    keep = ti.and_mask(ti.ge_i(v, ti.i_const(0)), ti.lt_i(v, ti.idx_as_tile(ti.extent_of(counts, 0))))
    ti.atomic_add(counts, v, 1, mask=keep)


@kernel(grid=lambda G: (G,))  # noqa: N803  (the run-time size's name)
def histogram_rows(x=Whole(I32, ["N"]), rows=Shared(I32, ["G", "BINS"]), *, tile: int = 1024):
    """rows[b, v] += the number of elements of x equal to v among x's tiles b, b + G, .. (G the
    rows, the grid): each block adds into its own row of the contiguous [G, BINS] ``rows``."""
    n, bins = ti.extent_of(x, 0), ti.extent_of(rows, 1)
    mine = ti.idx_as_tile(ti.idx_mul(ti.block_id(0), bins))  # row b's first element
    for j in ti.d_range(ti.block_id(0), tiles_in(n, tile), ti.num_blocks(0)):
        base = ti.tile_at(j, tile)
        v = ti.load(x, base, [tile], mask=ti.tail_mask(base, [tile], n), pad=-1)
        keep = ti.and_mask(ti.ge_i(v, ti.i_const(0)), ti.lt_i(v, ti.idx_as_tile(bins)))
        ti.atomic_add(rows, ti.add_i(v, mine), 1, mask=keep)


@kernel(grid=lambda BINS, tc=32: (cdiv(BINS, tc),))  # noqa: N803
def merge_rows(rows=lambda tg=64, tc=32: In(I32, cells(["G", "BINS"], [tg, tc], along=[FREE_AXIS, 0], pad=PadZero)),
               counts=Shared(I32, ["BINS"]), *, tg: int = 64, tc: int = 32):
    """counts[c] += sum_g rows[g, c]: a block a [tc] cell of the bins, walking the rows tg at a
    time (the padded rows add 0); each bin is one block's, so no atomics. H200, 528 x 256: 6.0 us
    at 64 x 32, 9.0 at 32 x 256 (eight blocks, not one)."""
    acc = ti.carry(ti.broadcast(ti.reshape(ti.i_const(0), [1, 1]), [tg, tc]))
    for i in ti.d_range(0, ti.blocks_of(rows, 0)):
        ti.set(acc, ti.add_i(ti.get(acc), ti.load_at(rows, [i])))
    base = ti.tile_at(ti.block_id(0), tc)
    inside = ti.tail_mask(base, [tc], ti.extent_of(counts, 0))
    held = ti.load(counts, base, [tc], mask=inside, pad=0)
    ti.store(counts, base, ti.add_i(held, ti.reduce_sum(ti.get(acc), 0)), mask=inside)


def count_values(x, counts, *, tile: int = 1024, rows: int = ROWS_MOST, direct_most: int = DIRECT_MOST) -> None:
    """counts[v] += the number of elements of the i32 vector x equal to v, for v in [0,
    len(counts)): ``histogram`` for up to ``direct_most`` values, else ``histogram_rows`` into G =
    min(ceil(N / tile), ``rows``, N / BINS) zeroed private rows and ``merge_rows`` (no more row
    elements than values: many bins rarely meet, and G * BINS stays an i32 offset). numpy arrays
    and CPU tensors run on the host reference, CUDA tensors on the GPU (on torch's current
    stream)."""
    n, bins = int(x.shape[0]), int(counts.shape[0])
    if n == 0:
        return
    g = min(cdiv(n, tile), rows, n // max(1, bins))
    if n <= direct_most or g <= 1:
        launch(histogram, x, counts, tile=tile)
        return
    private = zeros(x, (g, bins), "i32")
    launch(histogram_rows, x, private, tile=tile)
    launch(merge_rows, private, counts)


def _size(s):
    return (s, 256) if isinstance(s, int) else tuple(s)  # (n, bins)


def _inputs(s, rng):
    n, bins = _size(s)
    # a few values on each side of [0, bins), which must not be counted
    x = rng.integers(-3, bins + 3, n).astype(np.int32)
    return [x, np.zeros(bins, np.int32)]


def _expected(args):
    x, counts = args[0], args[1]
    x = x[(x >= 0) & (x < len(counts))]
    return (counts.astype(np.int64) + np.bincount(x, minlength=len(counts))).astype(np.int32)


def _run(args, where="host", **cfg):
    count_values(args[0], args[1], tile=cfg.get("tile", 1024), rows=cfg.get("rows", ROWS_MOST),
                 direct_most=cfg.get("direct_most", DIRECT_MOST))


register(Case("histogram", histogram, "counts of i32 values in [0, len(counts)), any length (atomic adds; private "
              "rows past 2^16 values)",
              (100_003, 256), lambda s: {}, _inputs, _expected, output=1, runner=_run))
