"""Shape operations: reshape, broadcast and permute of a tile already in registers."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import ir
from ..lower.core import lowering
from ..prog import Attrs, Handle, Shape
from ..ref.core import interp
from .recording import Recording

# ---- what each operation records ----------------------------------------------------------------


@dataclass(frozen=True)
class Reshape(Attrs, kind="reshape"):
    dtype: str
    from_: Shape
    to: Shape
    src: Handle


@dataclass(frozen=True)
class Broadcast(Attrs, kind="broadcast"):
    dtype: str
    from_: Shape
    to: Shape
    src: Handle


@dataclass(frozen=True)
class Permute(Attrs, kind="permute"):
    dtype: str
    perm: tuple[int, ...]
    src: Handle


class ShapeRecording(Recording):
    def _tile(self, h, what):
        inf = self.info(h)
        if inf.kind not in ("val", "ptrs"):
            raise self.refuse(f"{what} takes a tile, not a {inf.kind}")
        return inf

    def t_reshape(self, dtype, from_, to, src):
        inf = self._tile(src, "reshape")
        to = self.check_shape(to, "reshape") if to else ()
        if math.prod(inf.shape) != math.prod(to):
            raise self.refuse(f"reshape of a {list(inf.shape)} tile ({math.prod(inf.shape)} lanes) to {list(to)} "
                              f"({math.prod(to)} lanes): a reshape keeps the lane count", "a shape with as many lanes")
        if inf.shape == to:
            return src
        if self.is_const(src):
            return self.const(inf.dtype, to, self.prog.consts[src])
        r = self.new(inf.kind, inf.dtype, to)
        self.emit(Reshape(dtype=inf.dtype, from_=inf.shape, to=to, src=src), (r,))
        return r

    def t_broadcast(self, dtype, from_, to, src):
        inf = self._tile(src, "broadcast")
        to = self.check_shape(to, "broadcast")
        if inf.shape == ():
            return self.spread(src, to)
        if len(inf.shape) != len(to) or any(a != b and a != 1 for a, b in zip(inf.shape, to)):
            raise self.refuse(f"broadcast of a {list(inf.shape)} tile to {list(to)}: only dimensions of length 1 "
                              "widen and the rank stays", "reshape first to add the dimensions of length 1")
        if inf.shape == to:
            return src
        if self.is_const(src):
            return self.const(inf.dtype, to, self.prog.consts[src])
        r = self.new(inf.kind, inf.dtype, to)
        self.emit(Broadcast(dtype=inf.dtype, from_=inf.shape, to=to, src=src), (r,))
        return r

    def t_permute(self, dtype, shape, perm, src):
        inf = self._tile(src, "permute")
        rank = len(inf.shape)
        if rank < 2:
            raise self.refuse(f"permute of a rank-{rank} tile: the source has rank two or more")
        if sorted(perm) != list(range(rank)):
            raise self.refuse(f"permutation {list(perm)} of a {rank}-dimensional tile: a permutation of a "
                              f"{rank}-dimensional tile has that many entries, each dimension once")
        to = tuple(inf.shape[p] for p in perm)
        r = self.new(inf.kind, inf.dtype, to)
        self.emit(Permute(dtype=inf.dtype, perm=tuple(perm), src=src), (r,))
        return r


@lowering("reshape", "broadcast")
def _lower_reshape(lw, op):
    a = op.a
    assert isinstance(a, (Reshape, Broadcast))
    src = a.src
    from_ty = lw.ty(src)
    to_ty = ir.Tile(tuple(a.to), from_ty.elem)
    lw.result(op, ir.Reshape if op.kind == "reshape" else ir.Broadcast, lw.val(src), from_ty, to_ty)


@lowering("permute")
def _lower_permute(lw, op):
    a = Permute.of(op)
    src = a.src
    lw.result(op, ir.PermuteTile, lw.val(src), a.perm, lw.ty(src), lw.ty(op.res[0]))


@interp("reshape")
def _ref_reshape(it, op):
    it.set(op.res[0], np.reshape(np.asarray(it.val(Reshape.of(op).src)), Reshape.of(op).to))


@interp("broadcast")
def _ref_broadcast(it, op):
    it.set(op.res[0], np.broadcast_to(np.asarray(it.val(Broadcast.of(op).src)), Broadcast.of(op).to))


@interp("permute")
def _ref_permute(it, op):
    it.set(op.res[0], np.transpose(np.asarray(it.val(Permute.of(op).src)), Permute.of(op).perm))
