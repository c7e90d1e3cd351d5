"""Device variables and the regions that carry them: carry/get/set, d_range, d_if.

``for j in d_range(lo, hi):`` is a real Python for whose body runs TWICE on the host: once as a
trial (recorded and thrown away) that shows which carries the body sets and whether it touches
memory, then for real, inside the loop's region. Keep Python side effects out of the body, and
do not ``break``/``return`` out of it (a data-dependent exit is the device's business).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Union, runtime_checkable

from ..dev import body, dev, public
from ..values import Carry, Idx, Tile
from ._util import h, info, no_lit, refuse
from .index import as_idx, idx_const


@dataclass(frozen=True)
class One:
    """A loop that steps by one."""


@dataclass(frozen=True)
class By:
    """A loop that steps by ``by`` (a host int or an Idx)."""

    by: object


Step = Union[One, By]  # how a loop steps: by one, or by a bound's own kind of value


@runtime_checkable
class RangeBound(Protocol):
    """What a loop's bounds may be: a host int (recorded as a constant) or an Idx the device computes."""


def range_idx(b) -> Idx:
    """A loop bound as an index: a host int records an idx_const."""
    return as_idx(b)


@public
def carry(init: Tile) -> Carry:
    """A device variable starting at ``init`` (a tile with a format and shape of its own)."""
    no_lit(init, "carry")
    return Carry(dev().t_carry_new(h(init)))


@public
def get(c: Carry) -> Tile:
    """The tile ``c`` holds where the body stands."""
    return Tile(dev().t_carry_get(c.cid))


@public
def set(c: Carry, t: Tile) -> None:  # noqa: A001  (the spec's name)
    """Replace the tile ``c`` holds with ``t`` (same format and shape; not in a reduction body)."""
    no_lit(t, "set")
    dev().t_carry_set(c.cid, h(t))


class DRange:
    """The index range [lower, upper) by step, not yet recorded: iterate it with ``for``."""

    def __init__(self, lower, upper, step=One(), unsigned: bool = False):
        self.lower, self.upper, self.step, self.unsigned = lower, upper, step, unsigned

    def __iter__(self):
        d = dev()
        d.t_call_enter("d_range")
        try:
            lo, hi = as_idx(self.lower), as_idx(self.upper)
            st = idx_const(1) if isinstance(self.step, One) else as_idx(
                self.step.by if isinstance(self.step, By) else self.step)
            d.t_trial_begin()
            iv, _ = d.t_loop_begin(lo.h, hi.h, st.h, self.unsigned, [])
            d.t_body_enter()
            yield Idx(iv)
            d.t_body_exit()
            d.t_loop_end([])
            carried = d.t_trial_end()
            inits = [d.t_carry_get(c) for c in carried]
            iv, params = d.t_loop_begin(lo.h, hi.h, st.h, self.unsigned, inits)
            for c, p in zip(carried, params):
                d.t_carry_set(c, p)
            d.t_body_enter()
            yield Idx(iv)
            d.t_body_exit()
            outs = [d.t_carry_get(c) for c in carried]
            res = d.t_loop_end(outs)
            for c, r in zip(carried, res):
                d.t_carry_set(c, r)
        finally:
            d.t_call_exit()


def d_range(lower, upper, step=One(), unsigned_cmp: bool = False) -> DRange:
    """The index range [lower, upper) by ``step`` to loop over with ``for``: host ints (recorded as
    constants) or Idx values the device computes. ``step`` is One(), By(n), or a plain int/Idx.
    ``unsigned_cmp`` compares the induction variable to the bound as an unsigned 32-bit integer."""
    return DRange(lower, upper, step, unsigned_cmp)


@public
def d_if(cond: Tile, on_true, on_false=None) -> None:
    """The if over the rank-0 mask ``cond``: each branch runs on the host and what it issues is one
    of the two regions. A carry either branch sets is a result of the if. Neither branch may load
    or store (the if carries no memory ordering token)."""
    d = dev()
    branches = [on_true, on_false or (lambda: None)]
    carried: list = []
    for fn in branches:
        d.t_trial_begin()
        with body():
            fn()
        for c in d.t_trial_end():
            if c not in carried:
                carried.append(c)
    before = [d.t_carry_get(c) for c in carried]
    d.t_if_begin(h(cond))
    with body():
        on_true()
    then = [d.t_carry_get(c) for c in carried]
    for c, v in zip(carried, before):
        d.t_carry_set(c, v)
    d.t_if_else(then)
    with body():
        branches[1]()
    other = [d.t_carry_get(c) for c in carried]
    res = d.t_if_end(other)
    for c, r in zip(carried, res):
        d.t_carry_set(c, r)


def _shape(x):
    return info(x)[1]


__all__ = ["One", "By", "carry", "get", "set", "d_range", "d_if", "DRange", "refuse"]
