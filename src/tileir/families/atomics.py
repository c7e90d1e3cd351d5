"""The atomics: atomic_rmw and atomic_cas addressed by an i32 index tile into a parameter --
recorded, lowered (atomic_rmw_tko / atomic_cas_tko at device scope; atomic_rmw's memory ordering
relaxed unless the kernel asks for acquire, release or acq_rel) and computed on the host.

Device facts (the dialect's verifier, measured with tileiras 13.4): the integer modes (and, or,
xor, add, max, min, umax, umin) take i32 and i64 only; addf takes f16, bf16, f32 and f64 (bf16
refused by tileiras below sm_90: "atomicRMW ADDF with bf16 is not supported"); xchg and cas take
the 32- and 64-bit formats (i32 i64 f32 f64). The recording refuses every other pairing.

The host applies the active lanes one at a time in row-major lane order, each lane seeing the
lanes before it, and answers what each element held before its own lane's update. The device's
lane order is unspecified, so where two lanes name one element only an order-independent mode
(add, and, or, xor, max, min, umax, umin -- not xchg, cas, or addf, whose rounding depends on the
order) has an answer the host can be compared with; the final memory of those modes matches, the
answered old values of colliding lanes do not. A masked lane neither reads nor writes; the host
answers 0 for it (the device answers nothing defined).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import ir
from ..dtypes import BY_NAME, to_format
from ..lower.core import lowering
from ..prog import Attrs, Handle, Shape
from ..ref.core import interp
from .pointers import _mask_of, index_lanes, indexed_ptrs, ptr_ty
from .recording import Recording

INT_MODES = ("and", "or", "xor", "add", "max", "min", "umax", "umin")
MODES = INT_MODES + ("addf", "xchg")
INT_FORMATS = ("i32", "i64")
ADDF_FORMATS = ("f16", "bf16", "f32", "f64")
WORD_FORMATS = ("i32", "i64", "f32", "f64")  # xchg and cas
ORDERS = ("relaxed", "acquire", "release", "acq_rel")  # the dialect's memory semantics an atomic may carry


# ---- what each operation records ----------------------------------------------------------------


@dataclass(frozen=True)
class AtomicRmw(Attrs, kind="atomic_rmw"):
    param: int
    dtype: str
    mode: str
    index: Handle
    shape: Shape
    v: Handle
    mask: Handle | None
    tok: Handle
    order: str = "relaxed"


@dataclass(frozen=True)
class AtomicCas(Attrs, kind="atomic_cas"):
    param: int
    dtype: str
    index: Handle
    shape: Shape
    cmp: Handle
    v: Handle
    mask: Handle | None
    tok: Handle


class AtomicRecording(Recording):
    def _atomic_target(self, param, dtype, index, shape, v, mask, what):
        self._buffer(param, dtype, what)
        self.check_write(param, what)
        shape = self.check_shape(self.info(index).shape if shape is None else shape, what)
        index = self._i32_index(index, shape, what)
        (v,) = self.operands(what, dtype, shape, [v])
        self.memory_allowed(what)
        return shape, index, v, self._mask(mask, shape, what)

    def t_atomic_rmw(self, param, dtype, mode, index, shape, v, mask=None, order="relaxed"):
        if order not in ORDERS:
            raise self.refuse(f"atomic_rmw order {order!r}: the orders are {', '.join(ORDERS)}",
                              "acq_rel where other blocks' writes must be seen (a counter that hands work on)")
        if mode not in MODES:
            raise self.refuse(f"atomic_rmw mode {mode!r}: the modes are {', '.join(MODES)}",
                              "add for an integer sum, addf for a float one")
        if mode in INT_MODES and dtype not in INT_FORMATS:
            fix = ("addf, the float sum" if mode == "add" and dtype in ADDF_FORMATS
                   else "an i32 or i64 buffer (bits_to_int / ptr_to_ptr read a float's bits as one)")
            raise self.refuse(f"atomic_rmw {mode} on a {dtype} buffer: the integer modes take i32 and i64 only", fix)
        if mode == "addf" and dtype not in ADDF_FORMATS:
            fix = "add, the integer sum" if dtype in INT_FORMATS else "an f16, bf16, f32 or f64 buffer"
            raise self.refuse(f"atomic_rmw addf on a {dtype} buffer: addf takes f16, bf16, f32 and f64", fix)
        if mode == "xchg" and dtype not in WORD_FORMATS:
            raise self.refuse(f"atomic_rmw xchg on a {dtype} buffer: xchg takes the 32- and 64-bit formats "
                              "(i32 i64 f32 f64)", "a 32- or 64-bit buffer")
        shape, index, v, mask = self._atomic_target(param, dtype, index, shape, v, mask, "atomic_rmw")
        r = self.new("val", dtype, shape)
        tin, tout = self.next_token()
        self.emit(AtomicRmw(param=param, dtype=dtype, mode=mode, index=index, shape=shape, v=v,
                  mask=mask, tok=tin, order=order), (r, tout))
        return r

    def t_atomic_cas(self, param, dtype, index, shape, cmp, v, mask=None):
        if dtype not in WORD_FORMATS:
            raise self.refuse(f"atomic_cas on a {dtype} buffer: compare-and-swap takes the 32- and 64-bit formats "
                              "(i32 i64 f32 f64)", "a 32- or 64-bit buffer")
        shape, index, v, mask = self._atomic_target(param, dtype, index, shape, v, mask, "atomic_cas")
        (cmp,) = self.operands("atomic_cas", dtype, shape, [cmp])
        r = self.new("val", dtype, shape)
        tin, tout = self.next_token()
        self.emit(AtomicCas(param=param, dtype=dtype, index=index, shape=shape, cmp=cmp, v=v,
                  mask=mask, tok=tin), (r, tout))
        return r


# ---- lowering ----------------------------------------------------------------------------------


def _emit_atomic(lw, op, make):
    a = op.a
    assert isinstance(a, (AtomicRmw, AtomicCas))
    shape = tuple(a.shape)
    ptrs = indexed_ptrs(lw, a.param, a.dtype, a.index, shape)
    mask, mask_ty = _mask_of(lw, a, shape)
    _, tok = lw.results(op, 2, make, ptrs, mask, lw.tokens.for_write(a.param), ptr_ty(a.dtype, shape), mask_ty,
                        ir.tile(shape, a.dtype))
    lw.tokens.after_write(a.param, tok)


@lowering("atomic_rmw")
def _lower_rmw(lw, op):
    a = AtomicRmw.of(op)
    arg = lw.val(a.v)
    _emit_atomic(lw, op, lambda dst, tok, ptrs, mask, tin, pty, mty, vty:
                 ir.AtomicRMWPtr(dst, tok, ptrs, a.mode, arg, mask, tin, pty, mty, vty, sem=a.order))


@lowering("atomic_cas")
def _lower_cas(lw, op):
    a = AtomicCas.of(op)
    cmp, val = lw.val(a.cmp), lw.val(a.v)
    _emit_atomic(lw, op, lambda dst, tok, ptrs, mask, tin, pty, mty, vty:
                 ir.AtomicCASPtr(dst, tok, ptrs, cmp, val, mask, tin, pty, mty, vty))


# ---- host reference ---------------------------------------------------------------------------

_UNSIGNED = {"i32": np.uint32, "i64": np.uint64, "f32": np.uint32, "f64": np.uint64}


def _apply(mode, dtype, old, v):
    """The new value of one element: ``old`` combined with the lane value ``v`` (numpy scalars)."""
    d = BY_NAME[dtype]
    if mode == "xchg":
        return v
    if mode == "addf":
        return to_format(d, np.float64(old) + np.float64(v))[()]
    a, b = int(old), int(v)
    if mode in ("umax", "umin"):
        m = (1 << d.bits) - 1
        ua, ub = a & m, b & m
        return old if (ua >= ub) == (mode == "umax") else v
    r = {"and": a & b, "or": a | b, "xor": a ^ b, "add": a + b, "max": max(a, b), "min": min(a, b)}[mode]
    half = 1 << (d.bits - 1)
    return to_format(d, ((r + half) % (2 * half)) - half)[()]  # wrapped, as the device's integers are


def _run_lanes(it, op, update):
    a = op.a
    assert isinstance(a, (AtomicRmw, AtomicCas))
    buf, offs, mask = index_lanes(it, a, op.kind)
    old = np.zeros(a.shape, dtype=buf.dtype)
    for lane in zip(*np.nonzero(mask)) if mask.ndim else ([()] if mask else []):
        i = int(offs[lane])
        old[lane] = buf[i]
        buf[i] = update(buf[i], lane)
    it.set(op.res[0], old)


@interp("atomic_rmw")
def _ref_rmw(it, op):
    a = AtomicRmw.of(op)
    v = np.broadcast_to(np.asarray(it.val(a.v)), a.shape)
    _run_lanes(it, op, lambda old, lane: _apply(a.mode, a.dtype, old, v[lane]))


@interp("atomic_cas")
def _ref_cas(it, op):
    a = AtomicCas.of(op)
    u = _UNSIGNED[a.dtype]
    v = np.broadcast_to(np.asarray(it.val(a.v)), a.shape)
    cmp = np.broadcast_to(np.asarray(it.val(a.cmp)), a.shape)

    def update(old, lane):
        same = np.asarray(old).view(u) == np.asarray(cmp[lane]).view(u)  # bits, not the format's equality
        return v[lane] if same else old

    _run_lanes(it, op, update)


__all__ = ["AtomicRecording", "MODES", "INT_MODES", "ORDERS"]
