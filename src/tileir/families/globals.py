"""Module globals and automatic allocations: d_global (a record of the module, no instruction),
get_global and alloca as pointer tiles -- recorded, lowered, computed on the host.

Device facts (tileiras 13.4): a global holds at least one element; its symbol may not be the
entry's own name ("redefinition of symbol"); get_global's pointee must be the global's format.
alloca's alignment is a power of two and at least the element's natural size (the verifier's
words), which the recording refuses ahead of it; tileiras takes a global's alignment of 3, which
the recording refuses too (an alignment is 0, the default, or a power of two).

Host: a global lives as long as its TileProg (the module: one entry here) -- ``host_globals(prog)``
holds one numpy array per symbol, made from the declared values on first use and kept across
blocks and across runs of the same program, as the device keeps a loaded module's globals across
launches. An alloca is fresh zeroed scratch each time it executes (the device leaves it
undefined): nothing outlives the block.
"""

from __future__ import annotations

import re
import weakref
from dataclasses import dataclass

import numpy as np

from .. import ir
from ..dtypes import BY_NAME, host_round, to_format
from ..lower.core import lowering
from ..prog import Attrs, Shape
from ..ref.core import interp
from .pointers import ptr_ty, spread_ptr
from .recording import Recording
from .spaces import esize, spaces

_SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*\Z")
_HOST: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def host_globals(prog) -> dict:
    """The host's globals of ``prog``: symbol -> numpy array, kept as long as the program is."""
    got = _HOST.get(prog)
    if got is None:
        got = _HOST[prog] = {g.sym: to_format(BY_NAME[g.dtype], list(g.values)).reshape(-1) for g in prog.globals}
    return got


# ---- what each operation records ----------------------------------------------------------------


@dataclass(frozen=True)
class GetGlobal(Attrs, kind="get_global"):
    sym: str
    dtype: str
    shape: Shape


@dataclass(frozen=True)
class Alloca(Attrs, kind="alloca"):
    dtype: str
    num_elem: int
    align: int
    shared: bool
    shape: Shape


class GlobalRecording(Recording):
    def declared_global(self, sym: str) -> ir.Global | None:
        for g in self.prog.globals:
            if g.sym == sym:
                return g
        return None

    def t_global(self, sym, dtype, values, align=0, is_private=False, constant=False):
        if len(self.frames) > 1:
            raise self.refuse(f"d_global {sym!r} inside a region (a d_range, d_loop, d_if or reduction body): a global "
                              "is a record of the module, not an instruction of the body",
                              "declare it at the top of the kernel")
        if not isinstance(sym, str) or not _SYMBOL.match(sym):
            raise self.refuse(f"d_global symbol {sym!r}: a symbol is a letter or _, then letters, digits, _ $ .",
                              "a plain identifier")
        if sym == self.name:
            raise self.refuse(f"d_global {sym!r} has the kernel's own name, which the module already defines",
                              "another symbol")
        if self.declared_global(sym) is not None:
            raise self.refuse(f"d_global {sym!r} is declared twice", "declare each global once")
        self._pointee(dtype, "d_global")
        values = list(values)
        if not values:
            raise self.refuse(f"d_global {sym!r} with no values: a global holds at least one element",
                              "one initial value per element, e.g. [0.0] * n")
        d = BY_NAME[dtype]
        if d.is_float:
            values = [host_round(d, float(v)) for v in values]
        else:
            for v in values:
                if not (isinstance(v, (int, float, np.integer, np.floating)) and float(v).is_integer()):
                    raise self.refuse(f"d_global {sym!r} of {dtype}: the value {v!r} is not a whole number",
                                      "whole numbers for an integer global")
            values = [host_round(d, int(v)) for v in values]
        if not isinstance(align, int) or align < 0 or align & (align - 1):
            raise self.refuse(f"d_global {sym!r} aligned to {align}: an alignment is 0 (the default) or a power of "
                              "two, in bytes", "align=0, or 16, 128 ...")
        self.prog.globals.append(ir.Global(sym, dtype, tuple(values), int(align), bool(is_private),
                                           bool(constant)))

    def t_get_global(self, sym, dtype, shape):
        g = self.declared_global(sym)
        if g is None:
            known = ", ".join(repr(x.sym) for x in self.prog.globals) or "none"
            raise self.refuse(f"global_ptrs of {sym!r}, which no d_global declared (declared: {known})",
                              f"d_global({sym!r}, ...) before the global_ptrs that names it")
        if dtype != g.dtype:
            raise self.refuse(f"global_ptrs of {sym!r} as {dtype}: the global holds {g.dtype}",
                              f"global_ptrs({sym!r}, {g.dtype.upper()}, ...), then ptr_to_ptr to read it as {dtype}")
        shape = self.check_shape(shape, "global_ptrs")
        r = self.new("ptrs", dtype, shape)
        self.emit(GetGlobal(sym=sym, dtype=dtype, shape=shape), (r,))
        self.set_space(r, ("global", sym))
        return r

    def t_alloca(self, dtype, num_elem, align, shared, shape):
        self._pointee(dtype, "alloca_ptrs")
        if not isinstance(num_elem, int) or num_elem < 1:
            raise self.refuse(f"alloca_ptrs of {num_elem} elements: an allocation holds at least one",
                              "a positive element count")
        size = esize(dtype)
        if not isinstance(align, int) or align <= 0 or align & (align - 1) or align < size:
            raise self.refuse(f"alloca_ptrs aligned to {align}: the alignment is a non-zero power of two and at least "
                              f"the natural size of {dtype} ({size} bytes)", f"align={max(size, 16)}")
        shape = self.check_shape(shape, "alloca_ptrs")
        r = self.new("ptrs", dtype, shape)
        op = self.emit(Alloca(dtype=dtype, num_elem=num_elem, align=align, shared=bool(shared), shape=shape), (r,))
        self.set_space(r, ("alloca", op.num))
        return r


# ---- lowering ----------------------------------------------------------------------------------


@lowering("get_global")
def _lower_get_global(lw, op):
    a = GetGlobal.of(op)
    key = ("get_global", a.sym)
    p = lw.memo_get(key)
    if p is None:
        dst = lw.fresh()
        lw.emit(ir.GetGlobalPtr(dst, a.sym, ptr_ty(a.dtype, ())))
        p = lw.memo_put(key, ir.Val(dst))
    lw.bind(op.res[0], spread_ptr(lw, p, a.dtype, a.shape))


@lowering("alloca")
def _lower_alloca(lw, op):
    a = Alloca.of(op)
    dst = lw.fresh()
    lw.emit(ir.AllocaPtr(dst, a.num_elem, a.align, a.shared, ptr_ty(a.dtype, ())))
    lw.bind(op.res[0], spread_ptr(lw, ir.Val(dst), a.dtype, a.shape))


# ---- host reference ---------------------------------------------------------------------------


@interp("get_global")
def _ref_get_global(it, op):
    a = GetGlobal.of(op)
    key = ("global", a.sym)
    sp = spaces(it)
    if key not in sp.index or sp.index[key] not in sp.raw:
        sp.bind(key, host_globals(it.prog)[a.sym])
    it.set(op.res[0], np.full(a.shape, sp.base(key), dtype=np.int64))


@interp("alloca")
def _ref_alloca(it, op):
    a = Alloca.of(op)
    scratch = np.zeros(a.num_elem, dtype=BY_NAME[a.dtype].np)
    base = spaces(it).bind(("alloca", op.num), scratch)
    it.set(op.res[0], np.full(a.shape, base, dtype=np.int64))


__all__ = ["GlobalRecording", "host_globals"]
