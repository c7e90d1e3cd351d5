"""The pointer surface: tiles of pointers a body names (ptrs, ptr_offset, the three conversions),
loads and stores through them, and gather / scatter (a load / store whose element offsets are an
i32 tile) -- recorded, lowered and computed on the host.

Where a pointer tile points is followed while recording (its *space*): parameter ``p`` (the int
``p``), a global (``("global", sym)``), an alloca (``("alloca", op number)``), or unknown (None:
int_to_ptr's answer). A load or store through pointers is recorded with ``param`` = that space,
so the lowering orders it on that space's tokens (lower/tokens.py) exactly as a load or store of
the parameter is ordered. Nothing is emitted for the space itself.

On the host a pointer tile is an int64 array of fake byte addresses: space k lives at
``(k + 1) << 40`` (parameter p is space p), so ptr_to_int / int_to_ptr round trips, differences of
addresses are byte distances as on the device, and a load or store decodes each lane back to its
space and byte offset. An address the host cannot decode (a computed one outside every space) is
refused by ``it.fail``; so is one not aligned to its element or outside its space.

Device facts: the pointee formats are the dialect's (i4 is refused by its verifier; f4E2M1FN is a
pointee the dialect takes and the spec's surface does not, sub-byte addresses being what no
pointer here can hold). offset takes i32 or i64 element offsets (both measured with tileiras
13.4). A scatter whose lanes name one element twice has no defined answer (the lanes of one store
are unordered); the host writes them in row-major lane order, the last one winning.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .. import ir
from ..dtypes import BY_NAME
from ..lower.core import lowering
from ..prog import Attrs, Handle, Shape
from ..ref.core import interp
from .arith import Spread, spread_ref
from .debug import Assume
from .memory import _checked, param_ptrs
from .recording import Recording, Space
from .shape import Broadcast, Permute, Reshape
from .spaces import esize, join_tokens, ordered, pointee_ok, read_ptrs, spaces, write_ptrs
from .tileshape import Extract

_FOLLOW = ("reshape", "broadcast", "spread", "permute", "extract", "assume")


# ---- what each operation records ----------------------------------------------------------------


@dataclass(frozen=True)
class Ptrs(Attrs, kind="ptrs"):
    param: int
    dtype: str
    shape: Shape


@dataclass(frozen=True)
class PtrOffset(Attrs, kind="ptr_offset"):
    dtype: str
    shape: Shape
    ptrs: Handle
    offs: Handle
    off_dtype: str


@dataclass(frozen=True)
class PtrToInt(Attrs, kind="ptr_to_int"):
    dtype: str
    shape: Shape
    src: Handle


@dataclass(frozen=True)
class IntToPtr(Attrs, kind="int_to_ptr"):
    dtype: str
    shape: Shape
    src: Handle


@dataclass(frozen=True)
class PtrToPtr(Attrs, kind="ptr_to_ptr"):
    from_: str
    to: str
    shape: Shape
    src: Handle


@dataclass(frozen=True)
class LoadPtrs(Attrs, kind="load_ptrs"):
    param: Space  # the space the pointers point into (ordered as that parameter, global or alloca)
    dtype: str
    shape: Shape
    ptrs: Handle
    mask: Handle | None
    pad: Handle | None
    tok: Handle


@dataclass(frozen=True)
class StorePtrs(Attrs, kind="store_ptrs"):
    param: Space
    dtype: str
    shape: Shape
    ptrs: Handle
    v: Handle
    mask: Handle | None
    tok: Handle


@dataclass(frozen=True)
class Gather(Attrs, kind="gather"):
    param: int
    dtype: str
    index: Handle
    shape: Shape
    mask: Handle | None
    pad: Handle | None
    tok: Handle


@dataclass(frozen=True)
class Scatter(Attrs, kind="scatter"):
    param: int
    dtype: str
    index: Handle
    shape: Shape
    v: Handle
    mask: Handle | None
    tok: Handle


class PointerRecording(Recording):
    # -- where a pointer tile points ---------------------------------------------------------------
    def _ptr_space_map(self) -> dict[Handle, Space]:
        m = self.__dict__.get("_ptr_spaces")
        if m is None:
            m = self.__dict__["_ptr_spaces"] = {}
        return m

    def set_space(self, h: Handle, space: Space) -> None:
        self._ptr_space_map()[h] = space

    def space_of(self, h: Handle) -> Space:
        """The space pointer tile ``h`` points into, followed through the shape operations; None
        where the recording cannot follow it (int_to_ptr, an if's result from two spaces)."""
        m = self._ptr_space_map()
        if h in m:
            return m[h]
        op = self._defining_op(h)
        space = None
        if op is not None and op.kind in _FOLLOW:
            a = op.a
            assert isinstance(a, (Reshape, Broadcast, Spread, Permute, Extract, Assume))
            space = self.space_of(a.src)
        elif op is not None and op.kind == "if" and h in op.res:
            i = op.res.index(h)
            got = {self.space_of(r.yields[i]) for r in op.regions}
            space = got.pop() if len(got) == 1 else None
        m[h] = space
        return space

    def _defining_op(self, h):
        stack = [f.ops for f in self.frames]
        seen = set()
        while stack:
            ops = stack.pop()
            if id(ops) in seen:
                continue
            seen.add(id(ops))
            for op in ops:
                if h in op.res:
                    return op
                stack.extend(r.ops for r in op.regions)
        return None

    def _ptrs_operand(self, h, dtype, what):
        inf = self.info(h)
        if inf.kind != "ptrs":
            raise self.refuse(f"{what} takes a tile of pointers, got a {inf.kind} {inf.dtype}{list(inf.shape)}",
                              "ptrs(p, shape), global_ptrs(sym, d, shape), alloca_ptrs(...) or int_to_ptr(v, d)")
        if dtype is not None and inf.dtype != dtype:
            raise self.refuse(f"{what}: the pointers point to {inf.dtype}, not {dtype}",
                              f"ptr_to_ptr(ps, {dtype.upper()}) reads the same bytes as {dtype}")
        return inf

    def _pointee(self, dtype: str, what: str) -> str:
        if dtype not in BY_NAME:
            raise self.refuse(f"{what}: unknown element format {dtype!r}", "one of " + ", ".join(BY_NAME))
        if not pointee_ok(dtype):
            raise self.refuse(f"{what}: no pointer holds the sub-byte format {dtype} (the dialect's pointees are a "
                              "byte or wider, i1 aside)", "pack / unpack reach a sub-byte format through i8")
        return dtype

    def _i32_index(self, h: Handle, shape: Sequence[int], what: str) -> Handle:
        inf = self.info(h)
        if inf.kind != "val" or inf.dtype != "i32":
            raise self.refuse(f"{what}'s index is a {inf.kind} {inf.dtype}{list(inf.shape)}; it is an i32 tile of "
                              "element offsets", "an i32 tile: arange, lanes, a loaded index, or to_i32 of one")
        return self.operands(f"{what}'s index", "i32", shape, [h])[0]

    def _cell_roles(self):
        return {m.role for m in getattr(self, "markers", ()) if m is not None}

    def check_space_write(self, space, what: str) -> None:
        """Refuse a write the marker of the space's parameter forbids, a write through pointers the
        recording cannot follow while a parameter is an In or an Out, and one into a constant global."""
        if isinstance(space, int):
            self.check_write(space, what)
        elif space is None:
            self.prog.written.update(i for i, p in enumerate(self.prog.params) if p.by_ptr)  # any of them
            roles = self._cell_roles() & {"In", "Out"}
            if roles:
                raise self.refuse(f"a {what} through pointers the recording cannot follow back to a parameter "
                                  f"(int_to_ptr's), in a kernel with an {sorted(roles)[0]} parameter: it could "
                                  "write anywhere, an In or another block's cell included",
                                  "address the buffer through ptrs(p, shape) and ptr_offset, on a Shared parameter")
        elif space[0] == "global":
            g = self.declared_global(space[1])
            if g is not None and g.constant:
                raise self.refuse(f"a {what} into the constant global {space[1]!r}: constant is a promise to the "
                                  "compiler that nothing writes it", "declare it with constant=False")

    # -- the operations ---------------------------------------------------------------------------
    def t_ptrs(self, param, dtype, shape):
        self._buffer(param, dtype, "ptrs")
        self._pointee(dtype, "ptrs")
        shape = self.check_shape(shape, "ptrs")
        r = self.new("ptrs", dtype, shape)
        self.emit(Ptrs(param=param, dtype=dtype, shape=shape), (r,))
        self.set_space(r, param)
        return r

    def t_ptr_offset(self, dtype, shape, ptrs, offs):
        pinf = self._ptrs_operand(ptrs, dtype, "ptr_offset")
        oinf = self.info(offs)
        if oinf.kind != "val" or oinf.dtype not in ("i32", "i64"):
            raise self.refuse(f"ptr_offset by a {oinf.kind} {oinf.dtype}{list(oinf.shape)}: the offsets are an i32 "
                              "(or i64) tile of elements", "an i32 tile, e.g. arange(n) or lanes(...)")
        shape = max(pinf.shape, oinf.shape, key=len)
        if pinf.shape not in ((), shape) or oinf.shape not in ((), shape):
            raise self.refuse(f"ptr_offset of a {list(pinf.shape)} pointer tile by a {list(oinf.shape)} offset tile: "
                              "the shapes must agree (a rank-0 one is widened)", "broadcast or reshape one first")
        space = self.space_of(ptrs)
        ptrs = self.spread(ptrs, shape)
        (offs,) = self.operands("ptr_offset's offsets", oinf.dtype, shape, [offs])
        r = self.new("ptrs", dtype, shape)
        self.emit(PtrOffset(dtype=dtype, shape=shape, ptrs=ptrs, offs=offs, off_dtype=oinf.dtype), (r,))
        self.set_space(r, space)
        return r

    def t_ptr_to_int(self, dtype, shape, ptrs):
        inf = self._ptrs_operand(ptrs, dtype, "ptr_to_int")
        r = self.new("val", "i64", inf.shape)
        self.emit(PtrToInt(dtype=inf.dtype, shape=inf.shape, src=ptrs), (r,))
        return r

    def t_int_to_ptr(self, dtype, shape, ints):
        inf = self.info(ints)
        if inf.kind != "val" or inf.dtype != "i64":
            raise self.refuse(f"int_to_ptr of a {inf.kind} {inf.dtype}{list(inf.shape)}: an address is an i64 tile",
                              "ptr_to_int(ps) answers one; add_i64 and i64_const compute on addresses")
        self._pointee(dtype, "int_to_ptr")
        r = self.new("ptrs", dtype, inf.shape)
        self.emit(IntToPtr(dtype=dtype, shape=inf.shape, src=ints), (r,))
        self.set_space(r, None)
        return r

    def t_ptr_to_ptr(self, from_, to, shape, ptrs):
        inf = self._ptrs_operand(ptrs, from_, "ptr_to_ptr")
        self._pointee(to, "ptr_to_ptr")
        if to == inf.dtype:
            return ptrs
        r = self.new("ptrs", to, inf.shape)
        self.emit(PtrToPtr(from_=inf.dtype, to=to, shape=inf.shape, src=ptrs), (r,))
        self.set_space(r, self.space_of(ptrs))
        return r

    def t_load_ptrs(self, dtype, shape, ptrs, mask=None, pad=None):
        inf = self._ptrs_operand(ptrs, dtype, "load_ptrs")
        shape = inf.shape
        if pad is not None and mask is None:
            raise self.refuse("load_ptrs with a pad and no mask: every lane is read, so the pad names a value "
                              "nothing can answer", "give the mask the pad is for, or drop the pad")
        self.memory_allowed("load_ptrs")
        mask = self._mask(mask, shape, "load_ptrs")
        if pad is not None:
            pad = self.operands("load_ptrs' pad", dtype, shape, [pad])[0]
        r = self.new("val", dtype, shape)
        tin, tout = self.next_token()
        self.emit(LoadPtrs(param=self.space_of(ptrs), dtype=dtype, shape=shape, ptrs=ptrs,
                  mask=mask, pad=pad, tok=tin), (r, tout))
        return r

    def t_store_ptrs(self, dtype, shape, ptrs, value, mask=None):
        inf = self._ptrs_operand(ptrs, dtype, "store_ptrs")
        shape = inf.shape
        (value,) = self.operands("store_ptrs", dtype, shape, [value])
        self.memory_allowed("store_ptrs")
        space = self.space_of(ptrs)
        self.check_space_write(space, "store_ptrs")
        mask = self._mask(mask, shape, "store_ptrs")
        tin, tout = self.next_token()
        self.emit(StorePtrs(param=space, dtype=dtype, shape=shape, ptrs=ptrs, v=value, mask=mask,
                  tok=tin), (tout,))

    def t_gather(self, param, dtype, index, shape, mask=None, pad=None):
        self._buffer(param, dtype, "gather")
        self._pointee(dtype, "gather")
        shape = self.check_shape(self.info(index).shape if shape is None else shape, "gather")
        index = self._i32_index(index, shape, "gather")
        if pad is not None and mask is None:
            raise self.refuse("gather with a pad and no mask: every lane is read, so the pad names a value nothing "
                              "can answer", "give the mask the pad is for, or drop the pad")
        self.memory_allowed("gather")
        mask = self._mask(mask, shape, "gather")
        if pad is not None:
            pad = self.operands("gather's pad", dtype, shape, [pad])[0]
        r = self.new("val", dtype, shape)
        tin, tout = self.next_token()
        self.emit(Gather(param=param, dtype=dtype, index=index, shape=shape, mask=mask, pad=pad,
                  tok=tin), (r, tout))
        return r

    def t_scatter(self, param, dtype, index, shape, v, mask=None):
        self._buffer(param, dtype, "scatter")
        self._pointee(dtype, "scatter")
        self.check_write(param, "scatter")
        shape = self.check_shape(self.info(index).shape if shape is None else shape, "scatter")
        index = self._i32_index(index, shape, "scatter")
        (v,) = self.operands("scatter", dtype, shape, [v])
        self.memory_allowed("scatter")
        mask = self._mask(mask, shape, "scatter")
        tin, tout = self.next_token()
        self.emit(Scatter(param=param, dtype=dtype, index=index, shape=shape, v=v, mask=mask, tok=tin), (tout,))


# ---- lowering ----------------------------------------------------------------------------------


def ptr_ty(dtype, shape) -> ir.Tile:
    return ir.Tile(tuple(shape), ir.PtrTo(dtype))


def spread_ptr(lw, ref, dtype, shape) -> ir.Ref:
    """A rank-0 pointer as a tile of ``shape``: the reshape and broadcast every ladder opens with."""
    return spread_ref(lw, ref, ptr_ty(dtype, ()), shape)


def indexed_ptrs(lw, param, dtype, index_h, shape) -> ir.Ref:
    """Parameter ``param``'s pointer offset by the i32 index tile ``index_h`` (memoised per scope)."""
    shape = tuple(shape)
    key = ("indexed", param, dtype, index_h, shape)
    got = lw.memo_get(key)
    if got is None:
        dst = lw.fresh()
        lw.emit(ir.Offset(dst, param_ptrs(lw, param, dtype, shape), lw.val(index_h), ptr_ty(dtype, shape),
                          ir.tile(shape, "i32")))
        got = lw.memo_put(key, ir.Val(dst))
    return got


def _mask_of(lw, a, shape):
    if a.mask is None:
        return None, None
    return lw.val(a.mask), ir.tile(shape, "i1")


def emit_load(lw, op, ptrs):
    """A load_ptr_tko of ``op`` through ``ptrs``, on its space's tokens. A load through pointers the
    recording could not follow (space None) waits for the last store to every written space, and
    every later store waits for it."""
    a = op.a
    assert isinstance(a, (LoadPtrs, Gather))
    shape = tuple(a.shape)
    mask, mask_ty = _mask_of(lw, a, shape)
    pad = lw.val(a.pad) if a.pad is not None else None
    ts = lw.tokens
    spaces_ = sorted(ts.written, key=str) if a.param is None else [a.param]
    tin = join_tokens(lw, [ts.for_read(k) for k in spaces_]) if a.param is None else ts.for_read(a.param)
    _, tok = lw.results(op, 2, ir.LoadPtr, ptrs, mask, pad, tin, ptr_ty(a.dtype, shape), mask_ty,
                        ir.tile(shape, a.dtype))
    for k in spaces_:
        ts.after_read(k, tok)


def emit_store(lw, op, ptrs):
    """A store_ptr_tko of ``op`` through ``ptrs``, on its space's tokens; through pointers the
    recording could not follow (space None), after every access so far and before every later one."""
    a = op.a
    assert isinstance(a, (StorePtrs, Scatter))
    shape = tuple(a.shape)
    mask, mask_ty = _mask_of(lw, a, shape)
    value = lw.val(a.v)

    def make(tin):
        tok = lw.fresh()
        lw.emit(ir.StorePtr(tok, ptrs, value, mask, tin, ptr_ty(a.dtype, shape), mask_ty,
                            ir.tile(shape, a.dtype)))
        return ir.Val(tok)

    if a.param is None:
        tok = ordered(lw, make)
    else:
        tok = make(lw.tokens.for_write(a.param))
        lw.tokens.after_write(a.param, tok)
    lw.bind(op.res[0], tok)


@lowering("ptrs")
def _lower_ptrs(lw, op):
    a = Ptrs.of(op)
    lw.bind(op.res[0], param_ptrs(lw, a.param, a.dtype, a.shape))


@lowering("ptr_offset")
def _lower_ptr_offset(lw, op):
    a = PtrOffset.of(op)
    lw.result(op, ir.Offset, lw.val(a.ptrs), lw.val(a.offs), ptr_ty(a.dtype, a.shape),
              ir.tile(a.shape, a.off_dtype))


@lowering("ptr_to_int")
def _lower_ptr_to_int(lw, op):
    a = PtrToInt.of(op)
    lw.result(op, ir.PtrToIntTile, lw.val(a.src), ptr_ty(a.dtype, a.shape), ir.tile(a.shape, "i64"))


@lowering("int_to_ptr")
def _lower_int_to_ptr(lw, op):
    a = IntToPtr.of(op)
    lw.result(op, ir.IntToPtrTile, lw.val(a.src), ir.tile(a.shape, "i64"), ptr_ty(a.dtype, a.shape))


@lowering("ptr_to_ptr")
def _lower_ptr_to_ptr(lw, op):
    a = PtrToPtr.of(op)
    lw.result(op, ir.PtrToPtrTile, lw.val(a.src), ptr_ty(a.from_, a.shape), ptr_ty(a.to, a.shape))


@lowering("load_ptrs")
def _lower_load_ptrs(lw, op):
    emit_load(lw, op, lw.val(LoadPtrs.of(op).ptrs))


@lowering("store_ptrs")
def _lower_store_ptrs(lw, op):
    emit_store(lw, op, lw.val(StorePtrs.of(op).ptrs))


@lowering("gather")
def _lower_gather(lw, op):
    a = Gather.of(op)
    emit_load(lw, op, indexed_ptrs(lw, a.param, a.dtype, a.index, a.shape))


@lowering("scatter")
def _lower_scatter(lw, op):
    a = Scatter.of(op)
    emit_store(lw, op, indexed_ptrs(lw, a.param, a.dtype, a.index, a.shape))


# ---- host reference ---------------------------------------------------------------------------


def _mask(it, a):
    if a.mask is None:
        return np.ones(a.shape, dtype=bool)
    return np.broadcast_to(np.asarray(it.val(a.mask), dtype=bool), a.shape)


@interp("ptrs")
def _ref_ptrs(it, op):
    a = Ptrs.of(op)
    it.set(op.res[0], np.full(a.shape, spaces(it).base(a.param), dtype=np.int64))


@interp("ptr_offset")
def _ref_ptr_offset(it, op):
    a = PtrOffset.of(op)
    offs = np.asarray(it.val(a.offs)).astype(np.int64)
    it.set(op.res[0], np.asarray(it.val(a.ptrs), dtype=np.int64) + offs * esize(a.dtype))


@interp("ptr_to_int", "int_to_ptr", "ptr_to_ptr")
def _ref_same_address(it, op):
    a = op.a
    assert isinstance(a, (PtrToInt, IntToPtr, PtrToPtr))
    it.set(op.res[0], np.asarray(it.val(a.src), dtype=np.int64))


def _finish_load(it, op, got, mask):
    a = op.a
    assert isinstance(a, (LoadPtrs, Gather))
    if a.mask is not None:
        d = BY_NAME[a.dtype].np
        fill = it.val(a.pad) if a.pad is not None else np.zeros((), dtype=d)
        got = np.where(mask, got, fill).astype(d)
    it.set(op.res[0], got)


@interp("load_ptrs")
def _ref_load_ptrs(it, op):
    a = LoadPtrs.of(op)
    mask = _mask(it, a)
    _finish_load(it, op, read_ptrs(it, it.val(a.ptrs), a.dtype, mask, "load_ptrs"), mask)


@interp("store_ptrs")
def _ref_store_ptrs(it, op):
    a = StorePtrs.of(op)
    write_ptrs(it, it.val(a.ptrs), a.dtype, _mask(it, a), it.val(a.v), "store_ptrs")


def index_lanes(it, a, what):
    """(element offsets, active lanes) of a gather / scatter / atomic, bounds checked."""
    buf = it.args[a.param]
    offs = np.broadcast_to(np.asarray(it.val(a.index)).astype(np.int64), a.shape)
    mask = _mask(it, a)
    _checked(it, buf, offs, mask, what, a.param)
    return buf, offs, mask


@interp("gather")
def _ref_gather(it, op):
    a = Gather.of(op)
    buf, offs, mask = index_lanes(it, a, "gather")
    got = buf[np.where(mask, offs, 0)] if buf.size else np.zeros(a.shape, dtype=buf.dtype)
    _finish_load(it, op, got, mask)


@interp("scatter")
def _ref_scatter(it, op):
    a = Scatter.of(op)
    buf, offs, mask = index_lanes(it, a, "scatter")
    v = np.broadcast_to(np.asarray(it.val(a.v)), a.shape)
    buf[offs[mask]] = v[mask]


__all__ = ["PointerRecording", "spread_ptr", "indexed_ptrs", "ptr_ty", "index_lanes", "emit_load", "emit_store"]
