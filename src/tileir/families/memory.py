"""The pointer path: block ids, scalar parameters, lanes, load and store -- recorded, lowered and
computed on the host.

A load at ``base`` of ``shape`` laid out by ``strides`` (elements) reads element
``base + i*strides[0] + j*strides[1] + ..`` of the parameter. Lowered, it is the parameter's
pointer reshaped and broadcast to ``shape``, an ``offset`` by the i32 ladder of element offsets
(one iota per dimension, scaled by its stride, widened and summed, plus the base), and a
``load_ptr_tko`` in the token chain. The ladder is memoised per scope, so a masked load (whose
mask is built from the same lanes) costs no instruction more than an unmasked one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .. import ir
from ..dtypes import BY_NAME, wrap_int
from ..lower.core import lowering
from ..prog import Attrs, Handle, Shape
from ..ref.core import interp
from ..values import Idx, Tile
from .arith import spread_ref
from .recording import Recording


def pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


# ---- what each operation records ----------------------------------------------------------------


@dataclass(frozen=True)
class GridQuery(Attrs):
    axis: int


@dataclass(frozen=True)
class BlockId(GridQuery, kind="block_id"):
    pass


@dataclass(frozen=True)
class NumBlocks(GridQuery, kind="num_blocks"):
    pass


@dataclass(frozen=True)
class Load(Attrs, kind="load"):
    param: int
    dtype: str
    base: Handle
    shape: Shape
    strides: tuple[int, ...]
    mask: Handle | None
    pad: Handle | None
    hints: tuple
    tok: Handle


@dataclass(frozen=True)
class Store(Attrs, kind="store"):
    param: int
    dtype: str
    base: Handle
    shape: Shape
    strides: tuple[int, ...]
    v: Handle
    mask: Handle | None
    hints: tuple
    tok: Handle


@dataclass(frozen=True)
class Lanes(Attrs, kind="lanes"):
    base: Handle
    shape: Shape
    strides: tuple[int, ...]


@dataclass(frozen=True)
class Iota(Attrs, kind="iota"):
    n: int


class MemoryRecording(Recording):
    def check_shape(self, shape: Sequence[int], what: str) -> tuple[int, ...]:
        shape = tuple(self._host_int(d, what, "tile dimension", list(shape)) for d in shape)
        for d in shape:
            if not pow2(d):
                raise self.refuse(f"{what}: tile dimensions must be powers of two, got {list(shape)}",
                                  "round each dimension up to a power of two and mask the tail "
                                  "(tail_mask / axis_mask)")
        return shape

    def check_strides(self, strides, rank: int, what: str) -> tuple:
        """Strides are host ints, fixed when the kernel records: the lanes' offsets are constants
        of the program. A stride the device computes (an Idx) has its own spelling."""
        strides = tuple(strides)
        for s in strides:
            if isinstance(s, (Idx, Tile)):
                raise self.refuse(f"{what}: a stride of {s!r}, a value the device computes; a {what}'s strides are "
                                  "host ints, fixed when the kernel records",
                                  "make the stride keyword-only configuration (an int: one recording per stride), or "
                                  "read through tensor_view_dyn(p, base, shape, [Dyn(stride), Fixed(1)]) and "
                                  "partition_view / load_view, whose strides may be computed")
        strides = tuple(self._host_int(s, what, "stride", list(strides)) for s in strides)
        if len(strides) != rank:
            raise self.refuse(f"{what}: {len(strides)} strides for a rank-{rank} tile", "one stride a dimension")
        return strides

    def _host_int(self, v, what: str, role: str, whole: list) -> int:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            fix = f"int({v!r})" if isinstance(v, float) and v == int(v) else f"an int {role}"
            raise self.refuse(f"{what}: a {role} is an int, and {whole} holds the {type(v).__name__} {v!r}", fix)
        return int(v)

    def param_of(self, param: int, dtype: str, what: str) -> ir.KParam:
        params = self.prog.params
        if not isinstance(param, int) or not 0 <= param < len(params):
            raise self.refuse(f"{what}: parameter {param} does not exist (the kernel has {len(params)})")
        p = params[param]
        if p.dtype != dtype:
            raise self.refuse(f"{what}: parameter {param} is {p.dtype}, not {dtype}",
                              f"param({p.dtype.upper()}, {param})")
        return p

    def _grid_query(self, op, axis):
        if axis not in (0, 1, 2):
            raise self.refuse(f"{op} axis {axis}: the grid has axes 0, 1 and 2")
        r = self.new("val", "i32", ())
        self.emit((BlockId if op == "block_id" else NumBlocks)(axis=axis), (r,))
        return r

    def t_block_id(self, axis):
        return self._grid_query("block_id", axis)

    def t_num_blocks(self, axis):
        return self._grid_query("num_blocks", axis)

    def t_scalar(self, param, dtype):
        p = self.param_of(param, dtype, "scalar")
        if p.by_ptr:
            raise self.refuse(f"scalar: parameter {param} is a buffer, not a value passed by value",
                              "load(p, base, shape) reads a buffer; declare the parameter ByValue")
        for h, pos in self.prog.arg_handles.items():
            if pos == param:
                return h
        h = self.new("val", dtype, ())
        self.prog.arg_handles[h] = param
        self.scope[h] = 0  # a parameter read by value is the entry's: usable anywhere
        return h

    def _index(self, h: Handle, what: str) -> Handle:
        inf = self.info(h)
        if inf.kind != "val" or inf.dtype != "i32" or inf.shape != ():
            raise self.refuse(f"{what} wants a rank-0 i32 index, got a {inf.dtype}{list(inf.shape)}",
                              "an Idx: tile_at(block_id(0), n), idx_const(k), idx_of(t)")
        return h

    def _mask(self, mask: Handle | None, shape: Sequence[int], what: str) -> Handle | None:
        if mask is None:
            return None
        inf = self.info(mask)
        if inf.dtype != "i1":
            raise self.refuse(f"{what}'s mask is {inf.dtype}; a mask is an i1 tile",
                              "a comparison (lt_i, lt ...) or tail_mask")
        return self.operands(f"{what}'s mask", "i1", shape, [mask])[0]

    def _buffer(self, param: int, dtype: str, what: str) -> ir.KParam:
        p = self.param_of(param, dtype, what)
        if not p.by_ptr:
            raise self.refuse(f"{what}: parameter {param} is passed by value", "scalar(p) reads it")
        if not getattr(self, "planned_view", False):  # element offsets the kernel computes: dense rows
            self.prog.dense.add(param)
        return p

    def t_load(self, param, dtype, base, shape, strides, mask, pad, hints=()):
        self._buffer(param, dtype, "load")
        shape = self.check_shape(shape, "load")
        strides = self.check_strides(strides, len(shape), "load")
        self._index(base, "load's base")
        if pad is not None and mask is None:
            raise self.refuse("load with a pad and no mask: every lane is read, so the pad names a value "
                              "nothing can answer", "give the mask the pad is for, or drop the pad")
        self.memory_allowed("load")
        mask = self._mask(mask, shape, "load")
        if pad is not None:
            pad = self.operands("load's pad", dtype, shape, [pad])[0]
        r = self.new("val", dtype, shape)
        tin, tout = self.next_token()
        self.emit(Load(param=param, dtype=dtype, base=base, shape=shape,
                  strides=tuple(strides), mask=mask, pad=pad, hints=tuple(hints), tok=tin), (r, tout))
        return r

    def t_store(self, param, dtype, base, shape, strides, v, mask, hints=()):
        self._buffer(param, dtype, "store")
        self.check_write(param, "store")
        inf = self.info(v)
        if inf.shape == ():
            raise self.refuse("store of a rank-0 tile: a store writes a tile with a dimension",
                              "store(p, base, broadcast(v, [1]))")
        shape = self.check_shape(shape, "store")
        strides = self.check_strides(strides, len(shape), "store")
        self._index(base, "store's base")
        (v,) = self.operands("store", dtype, shape, [v])
        self.memory_allowed("store")
        mask = self._mask(mask, shape, "store")
        tin, tout = self.next_token()
        self.emit(Store(param=param, dtype=dtype, base=base, shape=shape, strides=tuple(strides),
                  v=v, mask=mask, hints=tuple(hints), tok=tin), (tout,))

    def t_lanes(self, base, shape, strides):
        shape = self.check_shape(shape, "lanes")
        strides = self.check_strides(strides, len(shape), "lanes")
        self._index(base, "lanes' base")
        r = self.new("val", "i32", shape)
        self.emit(Lanes(base=base, shape=shape, strides=tuple(strides)), (r,))
        return r

    def t_iota(self, n):
        self.check_shape((n,), "arange")
        r = self.new("val", "i32", (n,))
        self.emit(Iota(n=n), (r,))
        return r


# ---- lowering ----------------------------------------------------------------------------------

I32 = ir.tile((), "i32")
ALIGN = 16  # bytes every buffer parameter is claimed (and at launch checked) to be aligned to
_ALIGNED = ir.DivBy(ALIGN)
_PTR_SCALARS: dict = {}  # format name -> the rank-0 pointer tile type (every kernel's entry makes them)


def _grid_values(lw, which):
    key = ("grid", which)
    got = lw.memo_get(key)
    if got is None:
        ids = (lw.fresh(), lw.fresh(), lw.fresh())
        lw.emit((ir.BlockIds if which == "id" else ir.BlockCounts)(*ids))
        got = lw.memo_put(key, tuple(ir.Val(i) for i in ids))
    return got


@lowering("block_id")
def _lower_block_id(lw, op):
    lw.bind(op.res[0], _grid_values(lw, "id")[BlockId.of(op).axis])


@lowering("num_blocks")
def _lower_num_blocks(lw, op):
    lw.bind(op.res[0], _grid_values(lw, "count")[NumBlocks.of(op).axis])


@lowering("make_token")
def _lower_make_token(lw, op):
    from ..lower.tokens import TokenState

    lw.tokens = TokenState(lw, lw.result(op, ir.MakeTok))
    # Every buffer parameter is claimed 16-byte aligned (assume div_by<16>), as cuTile claims its
    # arrays; the launch refuses a pointer that is not (runtime/launch.py), so the claim holds --
    # except an array the launch found unaligned (a slice), whose program is specialised without it.
    for pos, kp in enumerate(lw.prog.params):
        if kp.by_ptr and pos not in lw.prog.unaligned:
            a = lw.fresh()
            t = _PTR_SCALARS.get(kp.dtype)
            if t is None:
                t = _PTR_SCALARS[kp.dtype] = ir.Tile((), ir.PtrTo(kp.dtype))
            lw.emit(ir.AssumeTile(a, ir.Arg(pos), _ALIGNED, t))
            lw.param_refs[pos] = ir.Val(a)


@lowering("return")
def _lower_return(lw, op):
    lw.emit(ir.Ret())


def iota(lw, n) -> ir.Ref:
    key = ("iota", n)
    got = lw.memo_get(key)
    if got is None:
        dst = lw.fresh()
        lw.emit(ir.IotaTile(dst, ir.tile((n,), "i32")))
        got = lw.memo_put(key, ir.Val(dst))
    return got


def ladder(lw, base_h, shape, strides) -> ir.Ref:
    """The i32 tile of element offsets a tile at ``base`` of ``shape`` laid out by ``strides`` reads."""
    shape, strides = tuple(shape), tuple(strides)
    key = ("lanes", base_h, shape, strides)
    got = lw.memo_get(key)
    if got is not None:
        return got
    full = ir.tile(shape, "i32")
    terms = []
    base_const = lw.prog.consts.get(base_h)
    if base_const != 0:
        terms.append(spread_ref(lw, lw.val(base_h), I32, shape))
    for k, (n, s) in enumerate(zip(shape, strides)):
        if n == 1 or s == 0:
            continue
        t = iota(lw, n)
        t_ty = ir.tile((n,), "i32")
        if s != 1:
            dst = lw.fresh()
            lw.emit(ir.MulInt(dst, t_ty, t, lw.constant("i32", (n,), s)))
            t = ir.Val(dst)
        if len(shape) > 1:
            one = tuple(n if j == k else 1 for j in range(len(shape)))
            r1 = lw.fresh()
            lw.emit(ir.Reshape(r1, t, t_ty, ir.tile(one, "i32")))
            r2 = lw.fresh()
            lw.emit(ir.Broadcast(r2, ir.Val(r1), ir.tile(one, "i32"), full))
            t = ir.Val(r2)
        terms.append(t)
    if not terms:
        acc = lw.constant("i32", shape, 0)
    else:
        acc = terms[0]
        for t in terms[1:]:
            dst = lw.fresh()
            lw.emit(ir.AddInt(dst, full, acc, t))
            acc = ir.Val(dst)
    return lw.memo_put(key, acc)


def param_ptrs(lw, pos, dtype, shape) -> ir.Ref:
    key = ("ptrs", pos, tuple(shape))
    got = lw.memo_get(key)
    if got is None:
        got = lw.memo_put(key, spread_ref(lw, lw.param_refs.get(pos, ir.Arg(pos)), ir.Tile((), ir.PtrTo(dtype)), shape))
    return got


def addresses(lw, a) -> tuple:
    shape = tuple(a.shape)
    key = ("addr", a.param, a.base, shape, a.strides)
    pty = ir.Tile(shape, ir.PtrTo(a.dtype))
    got = lw.memo_get(key)
    if got is None:
        ptrs = param_ptrs(lw, a.param, a.dtype, shape)
        offs = ladder(lw, a.base, shape, a.strides)
        dst = lw.fresh()
        lw.emit(ir.Offset(dst, ptrs, offs, pty, ir.tile(shape, "i32")))
        got = lw.memo_put(key, ir.Val(dst))
    return got, pty


@lowering("lanes")
def _lower_lanes(lw, op):
    a = Lanes.of(op)
    lw.bind(op.res[0], ladder(lw, a.base, a.shape, a.strides))


@lowering("iota")
def _lower_iota(lw, op):
    lw.bind(op.res[0], iota(lw, Iota.of(op).n))


@lowering("load")
def _lower_load(lw, op):
    a = Load.of(op)
    ptrs, pty = addresses(lw, a)
    shape = tuple(a.shape)
    mask = lw.val(a.mask) if a.mask is not None else None
    pad = lw.val(a.pad) if a.pad is not None else None
    _, tok = lw.results(op, 2, ir.LoadPtr, ptrs, mask, pad, lw.tokens.for_read(a.param), pty,
                        ir.tile(shape, "i1") if mask is not None else None, ir.tile(shape, a.dtype), a.hints)
    lw.tokens.after_read(a.param, tok)


@lowering("store")
def _lower_store(lw, op):
    a = Store.of(op)
    ptrs, pty = addresses(lw, a)
    shape = tuple(a.shape)
    mask = lw.val(a.mask) if a.mask is not None else None
    tok = lw.result(op, ir.StorePtr, ptrs, lw.val(a.v), mask, lw.tokens.for_write(a.param), pty,
                    ir.tile(shape, "i1") if mask is not None else None, ir.tile(shape, a.dtype), a.hints)
    lw.tokens.after_write(a.param, tok)


# ---- host reference ---------------------------------------------------------------------------


@interp("make_token", "return")
def _ref_nothing(it, op):
    return None


@interp("block_id")
def _ref_block_id(it, op):
    it.set(op.res[0], np.asarray(it.block[BlockId.of(op).axis], dtype=np.int32))


@interp("num_blocks")
def _ref_num_blocks(it, op):
    it.set(op.res[0], np.asarray(it.grid[NumBlocks.of(op).axis], dtype=np.int32))


def lane_offsets(it, base_h, shape, strides) -> np.ndarray:
    base = int(np.asarray(it.val(base_h)))
    offs = np.full(shape, base, dtype=np.int64)
    for k, (n, s) in enumerate(zip(shape, strides)):
        coord = np.arange(n, dtype=np.int64).reshape([n if j == k else 1 for j in range(len(shape))])
        offs = offs + coord * s
    return wrap_int(BY_NAME["i32"], offs).astype(np.int64)


@interp("lanes")
def _ref_lanes(it, op):
    a = Lanes.of(op)
    it.set(op.res[0], lane_offsets(it, a.base, a.shape, a.strides).astype(np.int32))


@interp("iota")
def _ref_iota(it, op):
    it.set(op.res[0], np.arange(Iota.of(op).n, dtype=np.int32))


def _checked(it, buf, offs, active, what, param):
    bad = active & ((offs < 0) | (offs >= buf.size))
    if bad.any():
        first = int(offs[bad].flat[0])
        raise it.fail(f"{what} of parameter {param} touches element {first}, outside its {buf.size} "
                      "elements (mask the lanes past the end)")


def _lanes(it, a, what):
    """(the parameter's buffer, each lane's element offset, the lanes that take part), checked in bounds."""
    buf = it.args[a.param]
    offs = lane_offsets(it, a.base, a.shape, a.strides)
    mask = np.ones(a.shape, dtype=bool) if a.mask is None else np.asarray(it.val(a.mask), dtype=bool)
    _checked(it, buf, offs, mask, what, a.param)
    return buf, offs, mask


@interp("load")
def _ref_load(it, op):
    a = Load.of(op)
    buf, offs, mask = _lanes(it, a, "load")
    safe = np.where(mask, offs, 0)
    got = buf[safe] if buf.size else np.zeros(a.shape, dtype=buf.dtype)
    if a.mask is not None:
        fill = it.val(a.pad) if a.pad is not None else np.zeros((), dtype=buf.dtype)
        got = np.where(mask, got, fill).astype(buf.dtype)
    it.set(op.res[0], got)


@interp("store")
def _ref_store(it, op):
    a = Store.of(op)
    buf, offs, mask = _lanes(it, a, "store")
    v = np.broadcast_to(np.asarray(it.val(a.v)), a.shape)
    buf[offs[mask]] = v[mask]
