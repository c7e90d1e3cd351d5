"""Histogram of i32 values: counts[v] += 1 for every element v of x with 0 <= v < BINS, where x has
any length N and BINS is the length of ``counts`` (both run-time sizes read off the arrays, so one
cubin serves every length and bin count); values outside [0, BINS) are ignored.

Each block reads one ``tile`` of x, its tail lanes reading -1, and adds 1 to the counter of each
lane with one atomic add a lane into the Shared i32 ``counts`` (relaxed, device scope), masked by
0 <= v < BINS, so a lane out of range (or past N) touches nothing. Colliding lanes are what the
atomics are for; an integer sum does not depend on the order they arrive in, so the counts are
exact. ``counts`` is added to: the caller zeroes it (the case does).
"""

from __future__ import annotations

import numpy as np

from .. import surface as ti
from ..dtypes import I32
from ..kernel import cdiv, kernel
from ..markers import Shared, Whole
from .registry import Case, register


@kernel(grid=lambda N, tile: (cdiv(N, tile),))  # noqa: N803  (the run-time size's name)
def histogram(x=Whole(I32, ["N"]), counts=Shared(I32, ["BINS"]), *, tile: int = 1024):
    """counts[v] += the number of elements of x equal to v, for v in [0, len(counts)); the rest ignored."""
    base = ti.tile_at(ti.block_id(0), tile)
    inside = ti.tail_mask(base, [tile], ti.extent_of(x, 0))
    v = ti.load(x, base, [tile], mask=inside, pad=-1)  # the tail reads -1, which no counter takes
    keep = ti.and_mask(ti.ge_i(v, ti.i_const(0)), ti.lt_i(v, ti.idx_as_tile(ti.extent_of(counts, 0))))
    ti.atomic_add(counts, v, 1, mask=keep)


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


register(Case("histogram", histogram, "counts of i32 values in [0, len(counts)), any length (atomic adds)",
              (100_003, 256), lambda s: {}, _inputs, _expected, output=1))
