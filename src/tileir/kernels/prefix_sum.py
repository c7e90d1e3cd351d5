"""Inclusive prefix sum of an f32 or i32 vector of any length: y[i] = x[0] + .. + x[i].

Reduce, then scan, in two launches (``prefix_sum`` runs them; every length is a run-time size
read off the arrays, so one cubin of each serves every length). The nt = ceil(N / tile) tiles of x
are cut into P chunks (P the length of ``totals``, the grid of both: ``prefix_sum`` makes it
min(nt, ``chunks``)) of per = ceil(nt / P) consecutive tiles:

1. ``chunk_totals``: block b sums its chunk's tiles into totals[b].
2. ``scan_chunks``: block b adds up totals[0] .. totals[b - 1] itself (at most a few thousand
   values, from L2), then walks its chunk's tiles in order, scanning each and adding the carry
   (that sum, then the last lane of the tile before), into y.

x is read twice and y written once: 12 bytes an f32 element, where scanning every tile into y and
adding the offsets into it afterwards moves 16. H200 at 2^28 with the next tile loaded ahead:
0.95x torch.cumsum (bench/results/vector_probe_h200.json; docs/speed.md). A single tile (n <= tile) needs
``scan_blocks`` only, and up to ``ONE_CHUNK_TILES`` tiles one block of ``scan_chunks`` walks them
all: one launch.

The i32 sum wraps modulo 2^32 whatever the order, so it is exact. An f32 sum in another order is
another number: each output is a sum whose every rounding is of a partial sum of the elements at
or before it. The device promises no order inside a reduction or a scan, so count each at its
worst (a chain): an element meets at most L = 3 tile + 2 per + ceil(P / tile) roundings (tile - 1
in its tile's scan; per - 1 carries along its chunk; per - 1 + tile - 1 in its chunk's total,
the lanes' sums then their fold; ceil(P / tile) - 1 + tile - 1 in the sum of the totals before its
chunk; 1 adding it), so |y[i] - exact| <= L * 2^-24 * sum_{j<=i} |x[j]| (first order). The case
draws x in [0, 1), where that is a relative bound: at tile 1024 and n <= 2^20 (P <= 528, per <= 2),
L <= 3077 and L * 2^-24 < 1.9e-4; the case's rtol is 2e-4. (At 2^28, per = 497 and the bound is
2.4e-4; vector_probe_h200.json measured at most 2.4e-6 there.)

One pass (``prefix_sum(one_pass=True)``, ``scan_lookback``): each block scans one tile of x and finds
the sum of everything before it by looking back at the tiles before it (the decoupled look-back of
single-pass scans), so x is read once and y written once -- 8 bytes an f32 element, where
reduce-then-scan moves 12.

``status`` is a zeroed i64 vector of ceil(N / tile) + 1 words. Word 0 hands out tickets: each block
takes the next with an atomic add and scans that tile, so tiles are taken in the order blocks
started, and a block only ever waits on tiles whose blocks are already running (no deadlock, however
the hardware schedules the grid). Word 1 + j says what tile j has published, in one atomic word so no
fence orders two writes: 0 nothing yet, (AGGREGATE << 32) | bits(tile j's sum), (INCLUSIVE << 32) |
bits(the sum of tiles 0 .. j).

A block on tile j scans it, publishes its sum (tile 0 its inclusive sum at once), then reads the
``window`` words before it in one atomic read, again until the nearest INCLUSIVE word p among them has
every word after it published (tiles before tile 0 count as the inclusive sum 0); the sum before tile
j is p's value and the sums after it. Then it publishes its inclusive sum and writes y = its scan
plus the sum before it. A block never waits on a tile past its window: the tile before it publishes
its inclusive sum once its own window allows, down to tile 0, so every window ends. (No walk a
window further back: a loop that carried its position and sum from read to read would be assembled
at -O0 for tileiras' while-loop defect, ``LEVEL``.)

The i32 sum wraps modulo 2^32 whatever the order, so it is exact. An f32 element meets at most
tile - 1 roundings in its tile's scan, tile - 1 in its tile's sum, at most window - 1 in the window's
sum that carries its tile's sum into an inclusive one, one a tile after that along the chain of
inclusive sums, and one adding it: L <= 2 tile + window + ceil(N / tile) + 1, and |y[i] - exact| <=
L * 2^-24 * sum_{j<=i} |x[j]| (first order): 3105 roundings at tile 1024, window 32 and 2^20
elements (1.9e-4 of the sum), 264225 at 2^28 (1.6e-2, against the two-pass scan's 2.4e-4): a long
f32 scan in one pass has the error bound of a chain of tile sums.
"""

from __future__ import annotations

import numpy as np

from .. import surface as ti
from ..dtypes import I32, I64, dtype
from ..errors import TileirError
from ..heuristics import SMS
from ..kernel import cdiv, kernel
from ..markers import Shared, Whole
from ..surface.elementwise import record_op
from .launching import in_host_views, on_host, zeros
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


def tiles_in(n, tile: int):
    """The device's count of ``tile``-lane tiles covering n elements (an Idx; one for n = 0), as
    (n - 1) / tile + 1: n + tile - 1 would pass 2^31 for n near the size limit."""
    return ti.idx_add(ti.idx_div(ti.idx_sub(n, ti.idx_const(1)), ti.idx_const(tile)), ti.idx_const(1))


def n_blocks(n: int, tile: int) -> int:
    """The tiles of ``tile`` that cover n elements (at least one)."""
    return max(1, cdiv(int(n), tile))


def check_fmt(fmt, kernel: str = "prefix_sum"):
    if fmt not in ("f32", "i32"):
        raise TileirError(f"prefix_sum of {fmt}: the library's prefix sum is f32 or i32", kernel=kernel)


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
    check_fmt(fmt)
    b = ti.block_id(0)
    base = ti.tile_at(b, tile)
    inside = ti.tail_mask(base, [tile], ti.extent_of(x, 0))
    s = ti.scan_sum(ti.load(x, base, [tile], mask=inside, pad=0))
    ti.store(y, base, s, mask=inside)
    ti.store(totals, b, last_lane(s, tile))


MOST_CHUNKS = 4 * SMS["sm_90"]  # four blocks an H200 SM, so one block's loads hide another's scans


ONE_CHUNK_TILES = 4  # up to 4 tiles one block scans them all, one launch: one block's walk is
# shorter than a second launch only that far (H200, 4096 f32: 6.5 us against 7.3 for two
# launches; 16384: 11.9 against 7.7; bench/results/vector_probe_h200.json)


def n_chunks(n: int, tile: int, most: int = MOST_CHUNKS) -> int:
    """The chunks the reduce-then-scan cuts n elements into: one for up to ONE_CHUNK_TILES
    tiles, else one a tile, at most ``most``."""
    tiles = n_blocks(n, tile)
    return 1 if tiles <= ONE_CHUNK_TILES else min(tiles, most)


def _chunk(x, tile):
    """This block's chunk of x's tiles, as the range of its tile indices: P chunks (P the grid) of
    per = ceil(tiles / P) consecutive tiles, the last one shorter (or empty)."""
    n = ti.extent_of(x, 0)
    tiles = tiles_in(n, tile)
    per = ti.idx_div(ti.idx_add(tiles, ti.idx_sub(ti.num_blocks(0), ti.idx_const(1))), ti.num_blocks(0))
    first = ti.idx_mul(ti.block_id(0), per)
    end = _idx_min(ti.idx_add(first, per), tiles)
    return n, first, end


def _idx_min(a, b):
    return ti.idx_of(ti.min_i(ti.idx_as_tile(a), ti.idx_as_tile(b)))


@kernel(grid=lambda NB: (NB,))  # noqa: N803
def chunk_totals(x=_whole("N"), totals=_shared("NB"), *, fmt: str = "f32", tile: int = 1024):
    """totals[b] = the sum of chunk b of x (N elements; see the module's text), for the
    min(ceil(N / tile), MOST_CHUNKS) chunks."""
    check_fmt(fmt)
    n, first, end = _chunk(x, tile)
    acc = ti.carry(zero(fmt, [tile]))
    for j in ti.d_range(first, end):
        base = ti.tile_at(j, tile)
        ti.set(acc, ti.get(acc) + ti.load(x, base, [tile], mask=ti.tail_mask(base, [tile], n), pad=0))
    ti.store(totals, ti.block_id(0), ti.reshape(ti.reduce_sum(ti.get(acc)), [1]))


def _before(totals, tile, fmt):
    """The sum of totals[0] .. totals[b - 1] (b this block), as a [1] tile: the block walks the
    totals a tile at a time, each lane at or past b reading 0."""
    b = ti.block_id(0)
    acc = ti.carry(zero(fmt, [tile]))
    for j in ti.d_range(0, ti.idx_div(ti.idx_add(b, ti.idx_const(tile - 1)), ti.idx_const(tile))):
        base = ti.tile_at(j, tile)
        ti.set(acc, ti.get(acc) + ti.load(totals, base, [tile], mask=ti.tail_mask(base, [tile], b), pad=0))
    return ti.reshape(ti.reduce_sum(ti.get(acc)), [1])


@kernel(grid=lambda NB: (NB,))  # noqa: N803
def scan_chunks(x=_whole("N"), y=_shared("N"), totals=_whole("NB"), *, fmt: str = "f32", tile: int = 1024,
                ahead: bool = True):
    """y = the inclusive scan of x, chunk b (as chunk_totals cut them) starting from the sum of
    the totals of the chunks before it, which the block adds up itself (no launch between).
    ``ahead``: each step loads the next tile before it scans this one (H200, 2^28 f32: 0.87 ms
    against 1.02 without; bench/results/vector_probe_h200.json)."""
    check_fmt(fmt)
    n, first, end = _chunk(x, tile)
    run = ti.carry(_before(totals, tile, fmt))

    def at(j):
        base = ti.tile_at(j, tile)
        return base, ti.tail_mask(base, [tile], n)

    def load(j):
        base, inside = at(j)
        return ti.load(x, base, [tile], mask=inside, pad=0)

    nxt = ti.carry(load(first)) if ahead else None
    last = ti.idx_sub(end, ti.idx_const(1))
    for j in ti.d_range(first, end):
        base, inside = at(j)
        if nxt is None:
            here = load(j)
        else:
            here = ti.get(nxt)
            # the chunk's last step loads its own tile again (from L2), not the next chunk's: no
            # offset past the chunk, so none past 2^31 either
            ti.set(nxt, load(_idx_min(ti.idx_add(j, ti.idx_const(1)), last)))
        s = ti.scan_sum(here) + ti.get(run)
        ti.store(y, base, s, mask=inside)
        ti.set(run, last_lane(s, tile))


# ---- one pass: the look-back ---------------------------------------------------------------

AGGREGATE, INCLUSIVE = 1, 2
WINDOW = 32  # the status words a look-back reads (one warp's worth): how far back an inclusive sum must lie
# The level prefix_sum(one_pass=True) assembles scan_lookback at unless told (opt_level=): tileiras' default.
# Its look-back is a while loop, which tileiras 13.4.92's defect workaround (assemble.optimiser_loops) sends
# to -O0; there the look-back's first form (a walk carrying its position and sum) ran 4.0-8.3x slower than
# the two-pass scan at tiles of 1024 and windows of 32 (H100, 2^16-2^28: bench/results/
# scan_lookback_h100.json), and -O0 is 1416 SASS instructions against 424 at -O3 (sass_scan_cpu.json).
# The defect's evidence is stale CARRIED values (and misaligned addresses beside allocas), though its trigger is
# not known beyond "a while loop" (docs/assembler-defect.md, the sixth); this loop carries no data (only the
# memory token that orders its atomic reads) and the kernel holds no alloca (tests/test_scan_lookback.py
# asserts both). So this opt-in kernel is assembled at the default level, a bet the H100 upheld: right at
# both levels, and at -O3 4-4.8x faster than at -O0 -- but still 1.2-2.9x slower than the two-pass scan at its
# best tile and window (scan_lookback_o3_h100.json: the look-back's waits, not its traffic). A direct call
# keeps the workaround.
LEVEL = 3


def _grid(N, S, tile=1024):  # noqa: N803  (the run-time sizes' names)
    if S < status_words(N, tile):  # a short one would take atomics past its end on the GPU
        raise TileirError(f"{N} elements in tiles of {tile} need {status_words(N, tile)} status words, and status "
                          f"holds {S}", kernel="scan_lookback", what="status",
                          fix=f"a zeroed i64 vector of {status_words(N, tile)} (prefix_sum(one_pass=True) makes it)")
    return (n_blocks(N, tile),)


def _word(flag: int, value, fmt: str, shape):
    """The i64 status word (flag << 32) | the 32 bits of ``value``."""
    bits = ti.bits_to_int(value) if fmt == "f32" else value
    high = ti.shli(ti.full(shape, flag, I64), ti.full(shape, 32, I64))
    return ti.ori(high, record_op("convert", "exti", bits, "i64"))


def _unpack(word, fmt: str, shape):
    """(flag, value) of i64 status words: the flag as i32, the value in ``fmt``."""
    flag = record_op("convert", "trunci", ti.shri(word, ti.full(shape, 32, I64)), "i32")
    bits = record_op("convert", "trunci", word, "i32")
    return flag, (ti.bits_to_float(bits) if fmt == "f32" else bits)


@kernel(grid=_grid)
def scan_lookback(x=lambda fmt="f32": Whole(fmt, ["N"]), y=lambda fmt="f32": Shared(fmt, ["N"]),
                  status=Shared(I64, ["S"]), *, fmt: str = "f32", tile: int = 1024, window: int = WINDOW):
    """y = the inclusive scan of x (N elements), one tile a block, ``status`` a ZEROED i64 vector of
    ceil(N / tile) + 1 words (see the module's text; prefix_sum(one_pass=True) zeroes a fresh one a call:
    a used one hands out tickets past the last tile)."""
    check_fmt(fmt, "scan_lookback")
    n = ti.extent_of(x, 0)
    ticket_word = ti.full([1], 0, I32)
    ticket = ti.atomic_rmw(status, "add", ticket_word, ti.full([1], 1, I64))
    j = ti.reshape(record_op("convert", "trunci", ticket, "i32"), [])
    base = ti.tile_at(ti.idx_of(j), tile)
    inside = ti.tail_mask(base, [tile], n)
    s = ti.scan_sum(ti.load(x, base, [tile], mask=inside, pad=0))
    total = last_lane(s, tile)
    first = ti.eq_i(j, 0)
    own_word = ti.reshape(ti.add_i(j, 1), [1])  # tile j's word
    ti.atomic_rmw(status, "xchg", own_word, ti.select(first, _word(INCLUSIVE, total, fmt, [1]),
                                                 _word(AGGREGATE, total, fmt, [1])))
    # the look-back: the window's words, re-read until the nearest INCLUSIVE one in it has every word after
    # it published; then their sum. No carried data (tileiras 13.4.92's while-loop defect is about carried
    # values: see LEVEL)
    lanes = ti.arange(window)
    low = ti.sub_i(j, window)
    pos = ti.add_i(lanes, low)  # tiles j - window .. j - 1
    real = ti.ge_i(pos, 0)

    def read():
        """(the sum before tile j, whether the window's words give it yet)"""
        words = ti.atomic_rmw(status, "or", ti.add_i(pos, 1), ti.full([window], 0, I64), mask=real)
        flag, value = _unpack(words, fmt, [window])
        flag = ti.select(real, flag, INCLUSIVE)  # before tile 0: the inclusive sum 0
        value = ti.select(real, value, zero(fmt, [window]))
        nearest = ti.reduce_max(ti.select(ti.eq_i(flag, INCLUSIVE), pos, ti.sub_i(low, 1)))  # low - 1: none
        after = ti.ge_i(pos, nearest)
        unpublished = ti.reduce_max(ti.select(ti.and_mask(after, ti.eq_i(flag, 0)), ti.i_const(1), 0))
        ready = ti.and_mask(ti.ge_i(nearest, low), ti.eq_i(unpublished, 0))
        return ti.reduce_sum(ti.select(after, value, zero(fmt, [window]))), ready

    ti.d_loop(lambda: read()[1])
    before = read()[0]  # words only go 0 -> own sum -> inclusive sum: what was ready stays ready
    run = ti.reshape(before, [1])
    ti.atomic_rmw(status, "xchg", own_word, _word(INCLUSIVE, total + run, fmt, [1]))
    ti.store(y, base, s + run, mask=inside)


def status_words(n: int, tile: int) -> int:
    """The status vector's length for n elements in tiles of ``tile``: a word a tile and the ticket."""
    return n_blocks(n, tile) + 1


# ---- running them -------------------------------------------------------------------------------


def empty_like(x, n: int, np_dtype=None):
    """A fresh vector of n elements of ``np_dtype`` (x's format by default) in x's array library
    (numpy, torch or cupy)."""
    if np_dtype is None and hasattr(x, "new_empty"):  # torch, in x's format: the quick way
        return x.new_empty(n)
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


_FORMATS = {"float32": "f32", "int32": "i32", "torch.float32": "f32", "torch.int32": "i32"}


def fmt_of(x) -> str:
    """f32 / i32 for an array of float32 / int32 (numpy, torch or cupy)."""
    known = _FORMATS.get(str(x.dtype))
    if known is not None:
        return known
    d = _np_dtype_of(x)
    if d == np.float32:
        return "f32"
    if d == np.int32:
        return "i32"
    return str(d)


def prefix_sum(x, out=None, *, host: bool | None = None, tile: int = 1024, chunks: int = MOST_CHUNKS,
               ahead: bool = True, one_pass: bool = False, window: int | None = None, opt_level: int | None = None,
               sync: bool = True):
    """The inclusive prefix sum of the f32 or i32 vector x, written into ``out`` (a fresh array of
    x's library and format if None) and answered: scan_blocks for a single tile, else
    chunk_totals then scan_chunks over at most ``chunks`` chunks; ``one_pass``: scan_lookback (the
    module's text: x read once, a zeroed status vector, look-backs of ``window`` words, WINDOW by
    default; assembled at ``opt_level``, ``LEVEL`` by default). On the host reference for a numpy
    x or a CPU tensor (in its memory), on the GPU otherwise (``host`` overrides; ``sync``: wait for
    the GPU before answering)."""
    n = int(x.shape[0])
    fmt = fmt_of(x)
    check_fmt(fmt)
    out = empty_like(x, n) if out is None else out
    if n == 0:
        return out
    host = on_host(x) if host is None else host
    if host and not isinstance(x, np.ndarray):  # a tensor on the host reference: numpy views of it
        return in_host_views(lambda xv, ov: prefix_sum(xv, ov, host=True, tile=tile, chunks=chunks, ahead=ahead,
                                                       one_pass=one_pass, window=window), x, out)
    if one_pass:
        status = zeros(x, (status_words(n, tile),), "i64")
        w = window or WINDOW
        if host:
            scan_lookback.run_host(x, out, status, fmt=fmt, tile=tile, window=w)
        else:  # two launches on torch's current stream: the zeroing, then the scan
            scan_lookback(x, out, status, fmt=fmt, tile=tile, window=w, sync=sync,
                          opt_level=LEVEL if opt_level is None else opt_level)
        return out
    single = n <= tile
    totals = empty_like(x, 1 if single else n_chunks(n, tile, chunks))
    if host:
        if single:
            scan_blocks.run_host(x, out, totals, fmt=fmt, tile=tile)
        else:
            if len(totals) > 1:
                chunk_totals.run_host(x, totals, fmt=fmt, tile=tile)
            scan_chunks.run_host(x, out, totals, fmt=fmt, tile=tile, ahead=ahead)
    elif single:
        scan_blocks(x, out, totals, fmt=fmt, tile=tile, sync=sync)
    else:  # one stream: the scan follows the totals (one chunk: no totals to sum before it)
        if len(totals) > 1:
            chunk_totals(x, totals, fmt=fmt, tile=tile, sync=False)
        scan_chunks(x, out, totals, fmt=fmt, tile=tile, ahead=ahead, sync=sync)
    return out


# ---- cases ---------------------------------------------------------------------------------------


def _run(args, where="host", **cfg):
    prefix_sum(args[0], args[1], host=where == "host", tile=cfg.get("tile", 1024))


def _f32_inputs(n, rng):
    return [rng.random(n, dtype=np.float32), np.zeros(n, np.float32)]  # in [0, 1): see the bound above


def _i32_inputs(n, rng):
    return [rng.integers(-2**31, 2**31, n, dtype=np.int64).astype(np.int32), np.zeros(n, np.int32)]


register(Case("prefix_sum_f32", scan_blocks, "inclusive prefix sum of an f32 vector of any length (reduce, then scan)",
              1_000_003, lambda n: {"fmt": "f32"}, _f32_inputs, lambda args: np.cumsum(args[0].astype(np.float64)),
              output=1, rtol=2e-4, atol=1e-6, runner=_run))
register(Case("prefix_sum_i32", scan_blocks, "inclusive prefix sum of an i32 vector of any length, wrapping (reduce, "
              "then scan)", 1_000_003, lambda n: {"fmt": "i32"}, _i32_inputs,
              lambda args: np.cumsum(args[0].astype(np.int64)).astype(np.int32), output=1, runner=_run))
