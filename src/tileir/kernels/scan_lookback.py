"""Inclusive prefix sum of an f32 or i32 vector in one pass: each block scans one tile of x and finds
the sum of everything before it by looking back at the tiles before it (the decoupled look-back of
single-pass scans), so x is read once and y written once -- 8 bytes an f32 element, where
prefix_sum's reduce-then-scan moves 12.

``status`` is a zeroed i64 vector of ceil(N / tile) + 1 words. Word 0 hands out tickets: each block
takes the next with an atomic add and scans that tile, so tiles are taken in the order blocks
started, and a block only ever waits on tiles whose blocks are already running (no deadlock, however
the hardware schedules the grid). Word 1 + j says what tile j has published, in one atomic word so no
fence orders two writes: 0 nothing yet, (AGGREGATE << 32) | bits(tile j's sum), (INCLUSIVE << 32) |
bits(the sum of tiles 0 .. j).

A block on tile j scans it, publishes its sum (tile 0 its inclusive sum at once), then reads the
``window`` words before it in one atomic read: the nearest INCLUSIVE word p in the window ends the
walk where every word after p is published (their sums and p's are added); a window of AGGREGATE
words is added and the walk steps a window back; a window with a word not yet published after the
last INCLUSIVE is read again. Then it publishes its inclusive sum and writes y = its scan plus the
sum before it.

The i32 sum wraps modulo 2^32 whatever the order, so it is exact. An f32 element meets at most
tile - 1 roundings in its tile's scan, tile - 1 in its tile's sum, and one a tile before it along the
chain of inclusive sums (each the one before it plus a window's sums), plus one adding it: L <= 2 tile
+ ceil(N / tile), and |y[i] - exact| <= L * 2^-24 * sum_{j<=i} |x[j]| (first order): 3072 roundings
at tile 1024 and 2^20 elements (1.8e-4 of the sum), 264192 at 2^28 (1.6e-2, against the two-pass
scan's 2.4e-4): a long f32 scan in one pass has the error bound of a chain of tile sums.
"""

from __future__ import annotations

from .. import surface as ti
from ..dtypes import I32, I64
from ..errors import TileirError
from ..kernel import kernel
from ..markers import Shared, Whole
from ..surface.elementwise import record_op
from .prefix_sum import check_fmt, last_lane, n_blocks, zero

AGGREGATE, INCLUSIVE = 1, 2
WINDOW = 32  # the status words a look-back step reads at once (one warp's worth)


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
    # the walk: hi is the tile at the window's top, before the sum of the tiles after it; done once an
    # INCLUSIVE word ended it (tile 0 has nothing before it)
    hi = ti.carry(ti.sub_i(j, 1))
    before = ti.carry(zero(fmt, []))
    done = ti.carry(ti.select(first, ti.i_const(1), ti.i_const(0)))
    lanes = ti.arange(window)

    def step():
        top, got, over = ti.get(hi), ti.get(before), ti.get(done)
        low = ti.sub_i(top, window - 1)
        pos = ti.add_i(lanes, low)  # the window's tiles, low to top
        real = ti.ge_i(pos, 0)
        # (the stopping iteration, whose sets are discarded, reads nothing)
        words = ti.atomic_rmw(status, "or", ti.add_i(pos, 1), ti.full([window], 0, I64),
                              mask=ti.and_mask(real, ti.eq_i(over, 0)))
        flag, value = _unpack(words, fmt, [window])
        flag = ti.select(real, flag, INCLUSIVE)  # before tile 0: the inclusive sum 0
        value = ti.select(real, value, zero(fmt, [window]))
        last = ti.reduce_max(ti.select(ti.eq_i(flag, INCLUSIVE), pos, ti.sub_i(low, 1)))  # low - 1: none
        after = ti.ge_i(pos, last)
        waiting = ti.reduce_max(ti.select(ti.and_mask(after, ti.eq_i(flag, 0)), ti.i_const(1), 0))
        ready = ti.and_mask(ti.eq_i(waiting, 0), ti.eq_i(over, 0))
        ended = ti.ge_i(last, low)
        ti.set(before, ti.select(ready, got + ti.reduce_sum(ti.select(after, value, zero(fmt, [window]))), got))
        ti.set(done, ti.select(ti.and_mask(ready, ended), ti.i_const(1), over))
        ti.set(hi, ti.select(ti.and_mask(ready, ti.eq_i(ended, 0)), ti.sub_i(top, window), top))
        return ti.eq_i(over, 1)

    ti.d_loop(step)
    run = ti.reshape(ti.get(before), [1])
    ti.atomic_rmw(status, "xchg", own_word, _word(INCLUSIVE, total + run, fmt, [1]))
    ti.store(y, base, s + run, mask=inside)


def status_words(n: int, tile: int) -> int:
    """The status vector's length for n elements in tiles of ``tile``: a word a tile and the ticket."""
    return n_blocks(n, tile) + 1


__all__ = ["scan_lookback", "status_words", "AGGREGATE", "INCLUSIVE", "WINDOW"]
