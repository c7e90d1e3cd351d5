"""Where a pointer can point, for the lowering and for the host: the pointee formats, the
ordering of accesses to a space the recording followed (or could not), and the host's model of
memory.

The lowering orders memory per space (lower/tokens.py keys its tokens by the recorded ``param``:
a parameter's position, ``("global", sym)``, ``("alloca", n)``, or None where the recording could
not follow the pointers). ``ordered`` emits an operation after every access so far and orders
every later one after it: a print, a fence, a store through pointers nobody can follow.

On the host a pointer tile is an int64 array of fake byte addresses: space k lives at
``(k + 1) << 40`` (parameter p is space p), so ptr_to_int / int_to_ptr round trips and differences
of addresses are byte distances as on the device; a load or store decodes each lane back to its
space and byte offset, and refuses (``it.fail``) an address outside every space, one not aligned
to its element, and one past the end of its space.
"""

from __future__ import annotations

import numpy as np

from .. import ir
from ..dtypes import BY_NAME

SHIFT = 40
OFFSET_MASK = (1 << SHIFT) - 1


def pointee_ok(dtype: str) -> bool:
    """Whether the pointer surface takes ``dtype`` as a pointee: every format of a byte or more, and i1."""
    return dtype == "i1" or BY_NAME[dtype].bits >= 8


def esize(dtype: str) -> int:
    """Bytes one element of ``dtype`` takes in memory (i1 takes a byte, tf32 four)."""
    return BY_NAME[dtype].np.itemsize


# ---- ordering ----------------------------------------------------------------------------------

CHAIN = ("chain",)  # the key prints and the token-only operations are ordered on among themselves


def join_tokens(lw, toks) -> ir.Ref:
    """One token after all of ``toks`` (the entry token, which every other follows, left out)."""
    toks = [t for t in dict.fromkeys(toks) if t != lw.tokens.entry]
    if not toks:
        return lw.tokens.entry
    if len(toks) == 1:
        return toks[0]
    dst = lw.fresh()
    lw.emit(ir.JoinTokens(dst, tuple(toks)))
    return ir.Val(dst)


def ordered(lw, make, full: bool = True, reorder_entry: bool = False) -> ir.Ref:
    """Emit ``make(tok_in) -> tok_out`` after every access so far to every space with a token
    (``full``; else after the chain of prints and token-only operations alone), and order every
    later access to those spaces after it. ``reorder_entry`` (top level only: a token made inside a
    region cannot be used after it) orders the later loads of never-written parameters after it too."""
    ts = lw.tokens
    keys = list(dict.fromkeys(list(ts.w) + list(ts.r) + [CHAIN])) if full else [CHAIN]
    toks: list[ir.Ref] = []
    for k in keys:
        toks += ts.r.get(k) or ([ts.w[k]] if k in ts.w else [])
    tout = make(join_tokens(lw, toks))
    for k in keys:
        ts.after_write(k, tout)
    if reorder_entry and len(lw.scopes) == 1:
        ts.entry = tout
    return tout



# ---- the host's memory --------------------------------------------------------------------------


class Spaces:
    """The memory a host pointer can reach, one space per parameter, global and alloca; space k's
    bytes are at fake address ``(k + 1) << 40``."""

    def __init__(self, it):
        self.it = it
        self.index: dict = {}  # space key -> k
        self.raw: dict = {}  # k -> uint8 view of the space's bytes
        for p, kp in enumerate(it.prog.params):
            self.index[p] = p
            if kp.by_ptr:
                self.raw[p] = it.args[p].view(np.uint8)

    def base(self, key) -> int:
        k = self.index.get(key)
        if k is None:
            k = self.index[key] = max(self.index.values(), default=-1) + 1
        return (k + 1) << SHIFT

    def bind(self, key, array) -> int:
        """Make ``array``'s bytes the space ``key``; answers its base address."""
        b = self.base(key)
        self.raw[self.index[key]] = array.reshape(-1).view(np.uint8)
        return b

    def lanes(self, addrs, dtype, active, what):
        """Per space reached: (lane selector, element view of the space, element indices)."""
        addrs = np.asarray(addrs, dtype=np.int64)
        k_all = (addrs >> SHIFT) - 1
        off = addrs & OFFSET_MASK
        size = esize(dtype)
        out = []
        for k in np.unique(k_all[active]):
            sel = active & (k_all == k)
            raw = self.raw.get(int(k))
            if raw is None:
                bad = int(addrs[sel].flat[0])
                raise self.it.fail(f"{what} through the address {bad:#x}, which the host cannot follow back to a "
                                   "parameter, a global or an alloca (a computed address outside all of them)")
            offs = off[sel]
            if (offs % size).any():
                raise self.it.fail(f"{what} of {dtype} at byte {int(offs[(offs % size) != 0][0])} of its buffer: not "
                                   f"aligned to the element's {size} bytes")
            if (offs + size > raw.size).any():
                first = int(offs[offs + size > raw.size][0]) // size
                raise self.it.fail(f"{what} touches element {first}, outside its {raw.size // size} elements "
                                   "(mask the lanes past the end)")
            view = raw[: raw.size - raw.size % size].view(BY_NAME[dtype].np)
            out.append((sel, view, offs // size))
        return out


def spaces(it) -> Spaces:
    s = it.__dict__.get("_spaces")
    if s is None:
        s = it.__dict__["_spaces"] = Spaces(it)
    return s


def read_ptrs(it, addrs, dtype, active, what) -> np.ndarray:
    got = np.zeros(np.shape(addrs), dtype=BY_NAME[dtype].np)
    for sel, view, idx in spaces(it).lanes(addrs, dtype, active, what):
        got[sel] = view[idx]
    return got


def write_ptrs(it, addrs, dtype, active, values, what) -> None:
    values = np.broadcast_to(np.asarray(values), np.shape(addrs))
    for sel, view, idx in spaces(it).lanes(addrs, dtype, active, what):
        view[idx] = values[sel]



__all__ = ["pointee_ok", "esize", "CHAIN", "join_tokens", "ordered", "Spaces", "spaces", "read_ptrs", "write_ptrs"]
