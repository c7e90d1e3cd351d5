"""Debugging and ordering: d_assert, d_assume and the assume_* helpers, d_print, and the three
token-only operations (memory_fence_alias, gdc_launch_dependents, gdc_wait)."""

from __future__ import annotations

from typing import Union

from ..dev import dev, public
from ..ir import Bounded, DivBy, SameElements
from ..values import Idx, Ptrs, Tile
from ._util import h, info, refuse

AssumePred = Union[DivBy, SameElements, Bounded]


@public
def d_assert(cond: Tile, message: str) -> None:
    """Stop the kernel with ``message`` when any lane of the i1 tile ``cond`` is false. On the device
    the launch fails and the CUDA context's error is sticky (every later launch in the process fails
    too); on the host reference the run raises a TileirError naming the block and the lane. Allowed
    inside reductions, scans and ifs (it is not ordered against memory)."""
    if not isinstance(cond, Tile):
        raise refuse(f"d_assert's condition is a {type(cond).__name__}, not an i1 tile", "a comparison")
    _, shape = info(cond)
    dev().t_assert(list(shape), h(cond), message)


@public
def d_assume(t, pred):
    """``t`` (a Tile, an Idx or a Ptrs, answered as the same kind) with ``pred`` attached: the same
    value, and a claim the compiler may use that nobody checks (a false one is undefined
    behaviour). DivBy and SameElements hold of integer and pointer tiles, Bounded of integer tiles.
    Refused inside a reduction or scan body (the dialect's verifier refuses assume there)."""
    if not isinstance(t, (Tile, Ptrs, Idx)):
        raise refuse(f"d_assume takes a tile, got {type(t).__name__}", "a Tile, an Idx or a Ptrs")
    d, shape = info(t)
    r = dev().t_assume(pred, d, list(shape), h(t))
    return type(t)(r)


@public
def assume_div_by(t, divisor: int, every=None, along=None):
    """``t``, assumed to hold multiples of ``divisor`` (a power of two) in every lane (with ``every``
    and ``along``: in every ``every``-th lane along dimension ``along``)."""
    return d_assume(t, DivBy(divisor, every, along))


@public
def assume_same_elements(t, groups):
    """``t``, assumed to repeat one value in every group of groups[k] lanes along dimension k."""
    return d_assume(t, SameElements(tuple(groups)))


@public
def assume_in_range(t, lb=None, ub=None):
    """``t``, assumed to hold values between ``lb`` and ``ub`` inclusive, read signed (either None)."""
    return d_assume(t, Bounded(lb, ub))


@public
def d_print(fmt: str, args=()) -> None:
    """Print ``fmt`` with ``args`` interleaved, C printf style: one format expression per argument
    (``%%`` is a percent sign), rank-0 arguments only, an integer conversion for an integer and a
    float one for a float. The arguments may be of different formats -- wider than the spec, which
    says one format, the first's: print_tko carries a type per argument, and the H200 printed
    i32, f32 and i64 arguments of one call byte for byte (layer 2's print family). In the token
    chain: ordered after every memory access before it and
    before every one after. Refused inside a reduction, scan or if. On the device the text goes to
    standard output when the context synchronises (prints of different blocks may interleave); on
    the host reference it is appended to the interpreter's ``printed`` list, which ``run_host`` and
    interpreted calls (``TILEIR_INTERPRET=1``) write to standard output after the run."""
    if isinstance(args, (Tile, Ptrs, Idx)):
        args = [args]
    args = list(args)
    for a in args:
        if not isinstance(a, (Tile, Idx)):
            raise refuse(f"d_print's arguments are tiles, got {type(a).__name__}",
                         "f_const / i_const for a host number, or put it in the format")
    d, shape = info(args[0]) if args else ("i32", ())
    dev().t_print(fmt, d, list(shape), [h(a) for a in args])


@public
def memory_fence_alias() -> None:
    """The alias proxy fence (memory_fence_alias_tko, bytecode 13.4): every earlier access that
    reaches the same memory through a different virtual alias completes before anything after it.
    Refused in a reduce, scan or if region. A no-op on the host."""
    dev().t_token_only("memory_fence_alias")


@public
def gdc_launch_dependents() -> None:
    """Tell the grid's dependent kernel it may be scheduled (Programmatic Dependent Launch, bytecode
    13.4). Scheduling only: it orders no memory. A no-op below sm_90, and on any target when the
    launch does not set programmatic stream serialization (tileir's launch does not). A no-op on the
    host."""
    dev().t_token_only("gdc_launch_dependents")


@public
def gdc_wait() -> None:
    """Wait for the predecessor kernel to complete: every store it made is visible after this, and
    every later load here is ordered after it. Refused inside a region (call it at the kernel's top
    level). The same two no-op conditions as gdc_launch_dependents; a no-op on the host."""
    dev().t_token_only("gdc_wait")


__all__ = ["d_assert", "d_assume", "assume_div_by", "assume_same_elements", "assume_in_range", "d_print",
           "memory_fence_alias", "gdc_launch_dependents", "gdc_wait", "AssumePred", "DivBy", "SameElements",
           "Bounded"]
