"""Views: tensor_view (where a tensor is and how it is laid out), partition_view (the tensor cut
into a grid of tiles), and load_view / store_view of one tile of the grid -- recorded, lowered,
computed on the host.

Device facts the host honours: a lane of a load_view outside the tensor reads the view's padding
value (unspecified without one); a lane of a store_view outside the tensor is not written. Every
stride of a tensor view is strictly positive (make_tensor_view refuses zero). The special padding
values (neg_zero, nan, pos_inf, neg_inf) are legal only over a float format; zero over any.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .. import ir
from ..dtypes import BY_NAME
from ..lower.core import lowering
from ..prog import Attrs, Handle, Shape
from ..ref.core import interp
from ..surface.hints import merge_hints
from .memory import pow2
from .recording import Recording

# the views load_view / store_view take (strided and gather/scatter ones are made in surface/strided_gather_views.py),
# and the grid views (a tile index at every dimension)
GRID_VIEWS = (ir.PartitionView, ir.StridedView)
TILE_VIEWS = GRID_VIEWS + (ir.GatherScatterView,)


def index_space(shape, tile_shape, dim_map) -> list:
    """ceil(shape[dim_map[k]] / tile_shape[k]) along each tile dimension k."""
    return [-(-shape[d] // t) for t, d in zip(tile_shape, dim_map)]


# ---- what each operation records ----------------------------------------------------------------


@dataclass(frozen=True)
class TensorView(Attrs, kind="tensor_view"):
    param: int
    dtype: str
    base: Handle
    shape: Shape
    strides: tuple[int, ...]
    dyn_shape: tuple[Handle, ...]
    dyn_strides: tuple[Handle, ...]


@dataclass(frozen=True)
class PartitionView(Attrs, kind="partition_view"):
    dtype: str
    src: Handle
    tile_shape: Shape
    dim_map: tuple[int, ...]
    padding: ir.Padding


@dataclass(frozen=True)
class LoadView(Attrs, kind="load_view"):
    dtype: str
    view: Handle
    indices: tuple[Handle, ...]
    inbounds: tuple
    tok: Handle


@dataclass(frozen=True)
class StoreView(Attrs, kind="store_view"):
    dtype: str
    view: Handle
    indices: tuple[Handle, ...]
    value: Handle
    inbounds: tuple
    tok: Handle


@dataclass(frozen=True)
class TensorShape(Attrs, kind="tensor_shape"):
    view: Handle
    dim: int


@dataclass(frozen=True)
class IndexSpaceShape(Attrs, kind="index_space_shape"):
    view: Handle
    dim: int


_DYN = ir.DYN_DIM
_DYNAMIC = {"extent": "a dynamic extent", "stride": "a dynamic stride"}


class ViewRecording(Recording):
    def _view(self, h: Handle, kinds: tuple[type, ...], what: str) -> dict:
        v = self.prog.views.get(h)
        if v is None or not isinstance(v["ty"], kinds):
            names = " or ".join(k.__name__ for k in kinds)
            raise self.refuse(f"{what} takes a {names} value", "tensor_view(p, ...) then partition_view(tv, ...)")
        return v

    def t_tensor_view(self, param, dtype, base, shape, strides, dyn_shape=(), dyn_strides=()):
        self._buffer(param, dtype, "tensor_view")
        self._index(base, "tensor_view's base")
        shape, strides = tuple(shape), tuple(strides)
        if len(shape) != len(strides) or not shape:
            raise self.refuse(f"tensor_view with {len(shape)} extents and {len(strides)} strides",
                              "one extent and one stride per dimension")
        for label, vals, dyn in (("extent", shape, dyn_shape), ("stride", strides, dyn_strides)):
            want = 0
            for v in vals:
                if v == _DYN:
                    want += 1
                elif not isinstance(v, int) or v <= 0:
                    raise self.refuse(f"a tensor view {label} of {v}: every static extent and stride is strictly "
                                      "positive (make_tensor_view refuses zero)",
                                      "a strided load (load with strides=) reads a stride of zero")
            if want != len(dyn):
                raise self.refuse(f"tensor_view has {want} dynamic {label}s (DYN_DIM) and {len(dyn)} operands for "
                                  "them", "one Dyn(idx) operand per DYN_DIM, in order")
            what = _DYNAMIC[label]
            for h in dyn:
                self._index(h, what)
        h = self.new("view", dtype, shape)
        self.prog.views[h] = {"ty": ir.TensorView(ir.Num(dtype), shape, strides), "param": param}
        self.emit(TensorView(param=param, dtype=dtype, base=base, shape=shape, strides=strides,
                  dyn_shape=tuple(dyn_shape), dyn_strides=tuple(dyn_strides)), (h,))
        return h

    def t_partition_view(self, dtype, view, tile_shape, dim_map, padding):
        tv = self._view(view, (ir.TensorView,), "partition_view")["ty"]
        tile_shape = tuple(tile_shape)
        rank = len(tv.shape)
        dim_map = tuple(range(rank)) if dim_map is None else tuple(dim_map)
        if len(tile_shape) != rank:
            raise self.refuse(f"a [{', '.join(map(str, tile_shape))}] tile over a rank-{rank} tensor view: the tile "
                              "has one dimension per tensor dimension", "reshape the tile after loading it")
        for t in tile_shape:
            if not pow2(t):
                raise self.refuse(f"partition tile {list(tile_shape)}: tile dimensions are powers of two",
                                  "a power-of-two tile; the edge tiles are padded")
        if sorted(dim_map) != list(range(rank)):
            raise self.refuse(f"dim_map {list(dim_map)} is not a permutation of the tensor's {rank} dimensions")
        padding = ir.as_padding(padding, "padding", refuse=self.refuse)
        if ir.padding_is_special(padding) and not BY_NAME[dtype].is_float:
            raise self.refuse(f"padding {ir.padding_name(padding)} over {dtype}: the special padding values are "
                              "legal only over a float format", "PadZero, or NoPadding")
        ty = ir.PartitionView(tile_shape, tv.elem, tv.shape, tv.strides, dim_map, padding)
        h = self.new("view", dtype, tile_shape)
        self.prog.views[h] = {"ty": ty, "param": self.prog.views[view]["param"]}
        self.emit(PartitionView(dtype=dtype, src=view, tile_shape=tile_shape, dim_map=dim_map,
                  padding=padding), (h,))
        return h

    def _grid_indices(self, ty, indices: Sequence[Handle], inbounds: Sequence[bool], what: str) -> None:
        rank = len(ty.tile_shape)
        if len(indices) != rank:
            raise self.refuse(f"{what} with {len(indices)} indices into a rank-{rank} grid",
                              "one index a tile dimension")
        sparse = getattr(ty, "sparse_dim", None)
        for k, h in enumerate(indices):
            if k == sparse:  # a gather/scatter view's rows (surface/strided_gather_views.py)
                self._rows_index(h, ty.tile_shape[k], what)
            else:
                self._index(h, f"{what}'s index")
        if inbounds and len(inbounds) != rank:
            raise self.refuse(f"{what}: inbounds holds {len(inbounds)} entries for a rank-{rank} grid",
                              "[] (no promise) or one bool a dimension")

    def t_load_view(self, dtype, view, indices, inbounds=()):
        ty = self._view(view, TILE_VIEWS, "load_view")["ty"]
        self._grid_indices(ty, indices, inbounds, "load_view")
        self.memory_allowed("load_view")
        r = self.new("val", dtype, ty.tile_shape)
        tin, tout = self.next_token()
        self.emit(LoadView(dtype=dtype, view=view, indices=tuple(indices),
                  inbounds=tuple(bool(b) for b in inbounds), tok=tin), (r, tout))
        return r

    def t_store_view(self, dtype, view, indices, value, inbounds=()):
        ty = self._view(view, TILE_VIEWS, "store_view")["ty"]
        if not self.prog.views[view].get("cell"):  # a cell view is how an Out is written
            self.check_write(self.prog.views[view]["param"], "store_view")
        else:
            self.prog.written.add(self.prog.views[view]["param"])
        self._grid_indices(ty, indices, inbounds, "store_view")
        (value,) = self.operands("store_view", dtype, ty.tile_shape, [value])
        self.memory_allowed("store_view")
        tin, tout = self.next_token()
        self.emit(StoreView(dtype=dtype, view=view, indices=tuple(indices), value=value,
                  inbounds=tuple(bool(b) for b in inbounds), tok=tin), (tout,))

    def t_tensor_shape(self, view, dim):
        tv = self._view(view, (ir.TensorView,), "tensor_dim")["ty"]
        if not 0 <= dim < len(tv.shape):
            raise self.refuse(f"tensor_dim {dim} of a rank-{len(tv.shape)} tensor view")
        r = self.new("val", "i32", ())
        self.emit(TensorShape(view=view, dim=dim), (r,))
        return r

    def t_index_space_shape(self, view, dim):
        ty = self._view(view, GRID_VIEWS, "index_space_dim")["ty"]
        if not 0 <= dim < len(ty.tile_shape):
            raise self.refuse(f"index_space_dim {dim} of a rank-{len(ty.tile_shape)} grid")
        r = self.new("val", "i32", ())
        self.emit(IndexSpaceShape(view=view, dim=dim), (r,))
        return r


# ---- lowering ----------------------------------------------------------------------------------

I32 = ir.tile((), "i32")


@lowering("tensor_view")
def _lower_tensor_view(lw, op):
    a = TensorView.of(op)
    base_ty = ir.Tile((), ir.PtrTo(a.dtype))
    base = lw.param_refs.get(a.param, ir.Arg(a.param))
    if lw.prog.consts.get(a.base) != 0:
        dst = lw.fresh()
        lw.emit(ir.Offset(dst, base, lw.val(a.base), base_ty, I32))
        base = ir.Val(dst)
    ty = lw.prog.views[op.res[0]]["ty"]
    lw.result(op, ir.MakeTensorView, base, base_ty, ty, tuple(lw.val(h) for h in a.dyn_shape),
              tuple(lw.val(h) for h in a.dyn_strides), I32)


@lowering("partition_view")
def _lower_partition_view(lw, op):
    a = PartitionView.of(op)
    src = a.src
    lw.result(op, ir.MakePartitionView, lw.val(src), lw.prog.views[src]["ty"], lw.prog.views[op.res[0]]["ty"])


@lowering("load_view")
def _lower_load_view(lw, op):
    a = LoadView.of(op)
    ty = lw.prog.views[a.view]["ty"]
    idx = tuple(lw.val(h) for h in a.indices)
    p = lw.prog.views[a.view]["param"]
    # a strided view's TMA load past the tensor's edge read the memory there, not the padding (campaigns
    # 1-3's seed 663, the only failing one; no strided load without TMA failed: 0 of 248 at risk on the CPU,
    # bench/results/strided_load_trigger_cpu.json): tileiras 13.4.92 is asked for none (no library kernel
    # reads a strided view)
    # and a partition view's load past the contiguous end read a padded pitch's gap (campaign 7's 201871,
    # 203448, 204236: load_may_read_a_gap)
    hints = NO_TMA if (HINT["strided_load"] and isinstance(ty, ir.StridedView)) or (
        HINT["gap_load"] and load_may_read_a_gap(lw.prog, a.view, a.inbounds, _facts(lw))) else ()
    hints = merge_hints(hints, lw.view_load_hints)
    _, tok = lw.results(op, 2, ir.LoadViewTile, lw.val(a.view), ty, idx, tuple(lw.ty(h) for h in a.indices),
                        ir.tile(ty.tile_shape, a.dtype), lw.tokens.for_read(p), a.inbounds, hints)
    lw.tokens.after_read(p, tok)


@lowering("store_view")
def _lower_store_view(lw, op):
    a = StoreView.of(op)
    ty = lw.prog.views[a.view]["ty"]
    idx = tuple(lw.val(h) for h in a.indices)
    p = lw.prog.views[a.view]["param"]
    tok = lw.result(op, ir.StoreViewTile, lw.val(a.view), ty, lw.val(a.value), ir.tile(ty.tile_shape, a.dtype),
                    idx, tuple(lw.ty(h) for h in a.indices), lw.tokens.for_write(p), a.inbounds, _store_hints(lw, a))
    lw.tokens.after_write(p, tok)


def _store_hints(lw, a: StoreView) -> tuple:
    """NO_TMA where tail_may_share_a_group says so (the program's facts gathered once a lowering), and
    the entry's view_store_no_tma (surface/hints.py) on every store."""
    tail = NO_TMA if HINT["store_tail"] and tail_may_share_a_group(lw.prog, a.view, a.inbounds, _facts(lw)) else ()
    return merge_hints(tail, lw.view_store_hints)


def _facts(lw):
    """view_facts of the program being lowered, gathered once a lowering."""
    memo = lw.scopes[0].memo
    facts = memo.get("view facts")
    if facts is None:
        facts = memo["view facts"] = view_facts(lw.prog)
    return facts


# ---- the TMA store workaround (docs/assembler-defect.md, the fourth defect) ---------------------------
#
# tileiras 13.4.92 on sm_90, when it selects a TMA store for a store_view (its --remarks=memory say "TMA
# Store instruction"), writes the lanes past the tensor that share a 16-byte group of memory with an
# in-bounds lane -- past the tensor's end, or into a padded pitch's gap -- where the dialect masks them
# (the fuzzer's view-store-tail and view-store-pitch-gap: campaign 3 106 failing stores, all TMA ones, 0
# of 573 right stores at risk among them: bench/view_store_tail_trigger.py). What makes it choose TMA is
# elsewhere in the kernel (an unrelated atomic, mma, print or data-dependent if), so the lowering cannot
# tell. And the pitch gap is written whole, not only its first 16-byte group (the focused campaign of
# 2026-12-02: i64 rows of 16 bytes at a pitch of 32, every gap lane of the stored rows written:
# bench/results/fuzz_vst_focus_h200.json's 21207). So the lowering asks for no TMA on every store whose tile
# can cross the contiguous dimension's end unless that end falls on a 16-byte boundary with no gap after it
# (a 1-D tensor, or the next stride known to be the extent: a launch claims it of dense rows, ROW in
# sizes.py), and keeps TMA where no edge is crossed. Measured (bench/results/tma_store_ab_h200.json, the
# library's rows with the hint against without): geomean 1.004, a 1-D vadd of 1,000,001 f32 1.09 (no TMA
# store for its odd end); without the ROW claim a tf32 product's f32 tile ran 1.42x slower at 4096^3.

NO_TMA = (("sm_90", (("allow_tma", False),)),)
GROUP = 16  # bytes: the memory group TMA writes whole
# the TMA workarounds, on unless a study lowers as a run without them did (the fuzz reports' names:
# no-tma-store-tail, no-tma-strided-load, no-tma-gap-load; bench/tma_store_ab.py times the stores' both ways)
HINT = {"store_tail": True, "strided_load": True, "gap_load": True}


_VIEW_MAKERS = ("tensor_view", "partition_view", "strided_view", "gather_view")


def view_facts(prog) -> tuple[dict, dict, dict]:
    """(divisors, makers, roots) of ``prog``: handle -> a number known to divide its value (a constant:
    itself, 0 standing for every number; an assume div_by: its divisor, times what is known of its
    operand); view handle -> the operation that made it; an assume's handle -> the value it is of."""
    known = {h: int(v) for h, v in prog.consts.items() if isinstance(v, (int, np.integer)) and not isinstance(v, bool)}
    makers: dict = {}
    roots: dict = {}
    for o in prog.walk():
        if o.kind == "assume" and o.res:
            roots[o.res[0]] = roots.get(o.a.src, o.a.src)
            if isinstance(o.a.pred, ir.DivBy):
                known[o.res[0]] = math.lcm(o.a.pred.divisor, known.get(o.a.src, 1) or 1)
        elif o.kind in _VIEW_MAKERS and o.res:
            makers[o.res[0]] = o
    return known, makers, roots


def load_may_read_a_gap(prog, view, inbounds=(), facts=None) -> bool:
    """Whether a load_view of ``view`` may have a lane in a pitch gap: its tile can cross a unit-stride
    dimension's end after which the next row may not start at once (the next stride not known to be the
    extent, as tail_may_share_a_group's gap). tileiras 13.4.92 read the gap's memory there, not the
    padding (campaign 7: column-major rows of 7 f32 at a pitch of 8, i32 rows of 3 at a pitch of 4); a
    load past a gapless end was right in every campaign, so alignment does not matter here."""
    return tail_may_share_a_group(prog, view, inbounds, facts, gap_only=True)


def tail_may_share_a_group(prog, view, inbounds=(), facts=None, gap_only=False) -> bool:
    """Whether a store_view into ``view`` may have a lane past the tensor in the same 16-byte group as a
    lane in it, by what the program knows of the sizes, strides and base (static values, claims): some
    dimension the tile can cross whose stride is not 1 and not known a multiple of 16 bytes, or a unit-stride
    dimension it can cross whose extent, the view's base offset or another dimension's stride is not known
    a multiple of 16 bytes, or after which a pitch gap may lie (the next stride not known to be its extent:
    the same constant, or the same run-time size -- a launch's ROW claim, sizes.SizePlan.claim).
    A dimension is not crossed where the tile's extent divides the tensor's (known) or inbounds promises it.
    With ``gap_only``, only the gap counts (``load_may_read_a_gap``)."""
    known, makers, roots = facts or view_facts(prog)
    tile_op = makers.get(view)
    tv_op = makers.get(tile_op.a.src) if tile_op is not None and tile_op.kind != "tensor_view" else None
    if tv_op is None or tv_op.kind != "tensor_view":
        return True  # a view we cannot follow: ask for no TMA
    tv, ty = TensorView.of(tv_op), prog.views[view]["ty"]
    if tv.param in prog.unaligned and not gap_only:
        return True  # its address is not claimed aligned: no boundary of it is known
    bits = BY_NAME[tv.dtype].bits

    def divides(vals, dyn):
        it = iter(dyn)
        return [v if v != _DYN else known.get(next(it), 1) for v in vals]

    extents, strides = divides(tv.shape, tv.dyn_shape), divides(tv.strides, tv.dyn_strides)

    def on_group(k):  # k elements, k a known divisor (0: every number), on a 16-byte boundary
        return k == 0 or (k * bits) % (8 * GROUP) == 0

    def refs(vals, dyn):  # per dimension: ("c", value) where known exactly, else ("h", the value's root)
        it, out = iter(dyn), []
        for v in vals:
            h = next(it) if v == _DYN else None
            c = v if h is None else prog.consts.get(h)
            out.append(("c", int(c)) if isinstance(c, (int, np.integer)) else ("h", roots.get(h, h)))
        return out

    def gapless(d):  # the next row starts where this one ends: no pitch gap a TMA store would write
        rank = len(tv.shape)
        if rank == 1:
            return True
        # row-major: the stride outside the contiguous dimension is that dimension's extent (a constant,
        # or the same run-time size: record/core.py read_hidden binds a ROW-claimed stride to it; beyond
        # rank 2 only where a matrix holds more than one row, sizes.SizePlan.rows_of). Lanes past the
        # outer dimensions' ends are masked (the campaigns: only the contiguous end was ever written)
        return d == rank - 1 and refs(tv.strides, tv.dyn_strides)[rank - 2] == refs(tv.shape, tv.dyn_shape)[d]

    base = known.get(tv.base, 1)
    tile, dim_map = ty.tile_shape, getattr(ty, "dim_map", tuple(range(len(ty.tile_shape))))
    strided = isinstance(ty, (ir.StridedView, ir.GatherScatterView))
    for k, (t, d) in enumerate(zip(tile, dim_map)):
        promised = k < len(inbounds) and inbounds[k]
        if promised or (not strided and extents[d] % t == 0):
            continue  # this edge is never crossed
        unit = tv.strides[d] == 1
        if gap_only:
            if unit and not gapless(d):
                return True
            continue
        if not unit and not on_group(strides[d]):
            return True
        if unit and not (on_group(extents[d]) and on_group(base) and gapless(d)
                         and all(on_group(s) for e, s in enumerate(strides) if e != d)):
            return True
    return False


def _shape_query(lw, op, cls, n):
    a = op.a
    assert isinstance(a, (TensorShape, IndexSpaceShape))
    key = (cls.__name__, a.view)
    got = lw.memo_get(key)
    if got is None:
        dsts = tuple(lw.fresh() for _ in range(n))
        src_ty = lw.prog.views[a.view]["ty"]
        lw.emit(cls(dsts, lw.val(a.view), src_ty, I32))
        got = lw.memo_put(key, tuple(ir.Val(d) for d in dsts))
    lw.bind(op.res[0], got[a.dim])


@lowering("tensor_shape")
def _lower_tensor_shape(lw, op):
    _shape_query(lw, op, ir.GetTensorShape, len(lw.prog.views[TensorShape.of(op).view]["ty"].shape))


@lowering("index_space_shape")
def _lower_index_space_shape(lw, op):
    _shape_query(lw, op, ir.GetIndexSpaceShape, len(lw.prog.views[IndexSpaceShape.of(op).view]["ty"].tile_shape))


# ---- host reference ---------------------------------------------------------------------------

_PAD = {"zero": 0.0, "neg_zero": -0.0, "nan": math.nan, "pos_inf": math.inf, "neg_inf": -math.inf}


@interp("tensor_view")
def _ref_tensor_view(it, op):
    a = TensorView.of(op)
    dyn_s = iter(int(np.asarray(it.val(h))) for h in a.dyn_shape)
    dyn_t = iter(int(np.asarray(it.val(h))) for h in a.dyn_strides)
    shape = [next(dyn_s) if d == ir.DYN_DIM else d for d in a.shape]
    strides = [next(dyn_t) if d == ir.DYN_DIM else d for d in a.strides]
    it.set(op.res[0], {"buf": it.args[a.param], "base": int(np.asarray(it.val(a.base))), "shape": shape,
                       "strides": strides, "param": a.param})


@interp("partition_view")
def _ref_partition_view(it, op):
    a = PartitionView.of(op)
    it.set(op.res[0], {"tv": it.val(a.src), "tile": list(a.tile_shape), "dim_map": list(a.dim_map),
                       "padding": a.padding})


def _tile_geometry(it, view, indices):
    """(element offsets, in-bounds mask) of the tile of ``view``'s grid at ``indices``. Grid index
    i along tile dimension k starts at i * step[k] (the tile's own extent unless the view is strided);
    at a gather/scatter view's sparse dimension the index is the tile of row numbers itself."""
    tv = view["tv"]
    tile, dim_map = view["tile"], view["dim_map"]
    step = view.get("step", tile)
    sparse = view.get("sparse_dim")
    offs = np.full(tile, tv["base"], dtype=np.int64)
    inb = np.ones(tile, dtype=bool)
    for k, (t, d) in enumerate(zip(tile, dim_map)):
        shape = [t if j == k else 1 for j in range(len(tile))]
        if k == sparse:
            c = np.asarray(it.val(indices[k])).astype(np.int64).reshape(shape)
        else:
            c = int(np.asarray(it.val(indices[k]))) * step[k] + np.arange(t, dtype=np.int64).reshape(shape)
        inb &= (c >= 0) & (c < tv["shape"][d])
        offs = offs + c * tv["strides"][d]
    return offs, inb


@interp("load_view")
def _ref_load_view(it, op):
    a = LoadView.of(op)
    view = it.val(a.view)
    buf = view["tv"]["buf"]
    offs, inb = _tile_geometry(it, view, a.indices)
    got = buf[np.where(inb, offs, 0)] if buf.size else np.zeros(offs.shape, buf.dtype)
    pad = view["padding"]
    fill = _PAD[pad.value] if ir.padding_present(pad) else 0
    it.set(op.res[0], np.where(inb, got, np.asarray(fill).astype(buf.dtype)).astype(buf.dtype))


@interp("store_view")
def _ref_store_view(it, op):
    a = StoreView.of(op)
    view = it.val(a.view)
    buf = view["tv"]["buf"]
    offs, inb = _tile_geometry(it, view, a.indices)
    v = np.broadcast_to(np.asarray(it.val(a.value)), offs.shape)
    buf[offs[inb]] = v[inb]


@interp("tensor_shape")
def _ref_tensor_shape(it, op):
    it.set(op.res[0], np.asarray(it.val(TensorShape.of(op).view)["shape"][TensorShape.of(op).dim], dtype=np.int32))


@interp("index_space_shape")
def _ref_index_space_shape(it, op):
    v = it.val(IndexSpaceShape.of(op).view)
    grid = index_space(v["tv"]["shape"], v.get("step", v["tile"]), v["dim_map"])
    it.set(op.res[0], np.asarray(grid[IndexSpaceShape.of(op).dim], dtype=np.int32))
