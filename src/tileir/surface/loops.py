"""The loop the data ends (d_loop), the early exit (d_return_if), the index comparisons, and two
independent chains of memory operations (d_fork2)."""

from __future__ import annotations

from ..dev import body, dev, public
from ..values import Idx, Tile
from ._util import h, refuse
from .index import as_idx


def _mask(m, what: str) -> int:
    if not isinstance(m, Tile):
        raise refuse(f"{what} must answer a rank-0 mask (a Tile), got {type(m).__name__} {m!r}",
                     "a comparison such as idx_lt(i, n) or lt(get(c), 1.0); bool_const(True) for a constant")
    return h(m)


@public
def d_loop(fn) -> None:
    """The loop whose trip count the DATA decides. ``fn()`` runs on the host, TWICE (a trial that
    shows which carries it sets, then for real inside the region), and answers a rank-0 mask: true
    when the loop is to stop here. When it is true the loop stops with the carries as they ENTERED
    that iteration -- what ``fn`` set on the stopping iteration is discarded -- so the loop reads
    "while the mask is false, keep what the body set". Compute the mask from what the iteration
    started with. The body runs to its end every time, the last included: a store in it happens
    on the stopping iteration too. A body whose mask is never true never ends, on the device and
    on the host alike (nothing bounds it)."""
    d = dev()
    d.t_trial_begin()
    d.t_while_begin([])
    with body():
        m = fn()
    d.t_while_end(_mask(m, "d_loop's body"), [])
    carried = d.t_trial_end()
    inits = [d.t_carry_get(c) for c in carried]
    params = d.t_while_begin(inits)
    for c, p in zip(carried, params):
        d.t_carry_set(c, p)
    with body():
        m = fn()
    outs = [d.t_carry_get(c) for c in carried]
    res = d.t_while_end(_mask(m, "d_loop's body"), outs)
    for c, r in zip(carried, res):
        d.t_carry_set(c, r)


@public
def d_return_if(cond: Tile) -> None:
    """End the kernel for this tile block where the rank-0 mask ``cond`` is true: from the top of
    the kernel, an if, or a d_loop body (where it leaves the loop and the kernel at once; bytecode
    13.4). Stores issued before it stay; nothing recorded after it runs for that block. Refused
    inside d_range, a reduction or a scan (the dialect forbids a return under a for, and the other
    two are pure regions)."""
    dev().t_return_if(_mask(cond, "d_return_if's condition"))


def _idx_cmp(pred: str, a, b) -> Tile:
    return Tile(dev().t_cmpi(pred, [], as_idx(a).h, as_idx(b).h, True, "i32"))


@public
def idx_eq(a: Idx, b: Idx) -> Tile:
    """a == b over two index tiles, as the rank-0 mask d_if branches on. Signed."""
    return _idx_cmp("eq", a, b)


@public
def idx_ne(a: Idx, b: Idx) -> Tile:
    """a != b over two index tiles, as a rank-0 mask."""
    return _idx_cmp("ne", a, b)


@public
def idx_lt(a: Idx, b: Idx) -> Tile:
    """a < b over two index tiles, SIGNED, as a rank-0 mask."""
    return _idx_cmp("lt", a, b)


@public
def idx_le(a: Idx, b: Idx) -> Tile:
    """a <= b over two index tiles, signed, as a rank-0 mask."""
    return _idx_cmp("le", a, b)


@public
def idx_gt(a: Idx, b: Idx) -> Tile:
    """a > b over two index tiles, signed, as a rank-0 mask."""
    return _idx_cmp("gt", a, b)


@public
def idx_ge(a: Idx, b: Idx) -> Tile:
    """a >= b over two index tiles, signed, as a rank-0 mask."""
    return _idx_cmp("ge", a, b)


@public
def d_fork2(a, b) -> None:
    """``a()`` and ``b()`` issued as two INDEPENDENT chains of memory operations, joined after: both
    start from the memory ordering token as it stands here, and everything after this call is
    ordered after both. Neither is ordered against the other, so they must not touch the same
    element; the recording refuses two chains it cannot show to be disjoint (one writes a
    parameter the other reads or writes, or either reaches memory through a pointer tile).

    What it means in the bytes: the lowering orders memory per parameter (lower/tokens.py), so
    operations on disjoint parameters were never ordered against each other in the first place;
    d_fork2 is the recorded promise that they need not be, checked, and it adds no instruction."""
    d = dev()
    start = d.t_tok_get()
    with body():
        a()
    ta = d.t_tok_get()
    d.t_tok_set(start)
    with body():
        b()
    tb = d.t_tok_get()
    d.t_tok_join([ta, tb])


__all__ = ["d_loop", "d_return_if", "idx_eq", "idx_ne", "idx_lt", "idx_le", "idx_gt", "idx_ge", "d_fork2"]
