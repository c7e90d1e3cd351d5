"""The other views: strided_view (a grid that advances by a traversal of its own),
gather_scatter_view (rows chosen while the kernel runs), and atomic_red_view (a tile reduced into
a tile of a grid, atomically) -- recorded, lowered, computed on the host. load_view / store_view
(families/views.py) read and write all three kinds; this module adds the makers, the index check of a
gather/scatter view and the atomic reduction.

Device facts the recording holds (the dialect's verifiers, as the spec reports them):

* a strided view's traversal is strictly positive and its tile dimensions powers of two; grid index
  i along k starts at element i * traversal[k] of tensor dimension dim_map[k] and reads tile[k]
  elements, so tiles overlap or skip; the index space is ceil(shape / traversal), partial tiles
  included;
* a gather/scatter view has no dim_map; at sparse_dim its index is a rank-1 i32 tile of ROW
  NUMBERS as long as the tile is there (lane j of the tile reads row rows[j]); at every other
  dimension the index is the ELEMENT offset the tile starts at, not a tile index (measured on an
  H200, tileiras 13.4.92, sm_90: At(3) over a tile 2 wide reads elements 3 and 4, not 6 and 7; the
  spec's "a grid view's tile index" there is not what the device does). A row past the tensor reads
  the padding and is not written;
* atomic_red_view_tko takes a partition or a strided view (not a gather/scatter one), one of nine
  modes (xchg is refused: a reduction that answers nothing cannot exchange), relaxed ordering,
  scope tl_blk or device, and a view WITHOUT a padding value;
* the special padding values (neg_zero, nan, pos_inf, neg_inf) are legal only over a float format.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import ir
from ..dtypes import BY_NAME, to_format, wrap_int
from ..lower.core import lowering
from ..prog import Attrs, Handle, Shape
from ..ref.core import interp
from .memory import pow2
from .recording import Recording
from .views import _tile_geometry

RED_MODES = ("and", "or", "xor", "add", "addf", "max", "min", "umax", "umin")
RED_SCOPES = ("tl_blk", "device")


# ---- what each operation records ----------------------------------------------------------------


@dataclass(frozen=True)
class StridedView(Attrs, kind="strided_view"):
    dtype: str
    src: Handle
    tile_shape: Shape
    traversal: tuple[int, ...]
    dim_map: tuple[int, ...]
    padding: ir.Padding


@dataclass(frozen=True)
class GatherView(Attrs, kind="gather_view"):
    dtype: str
    src: Handle
    tile_shape: Shape
    sparse_dim: int
    padding: ir.Padding


@dataclass(frozen=True)
class AtomicRedView(Attrs, kind="atomic_red_view"):
    dtype: str
    view: Handle
    indices: tuple[Handle, ...]
    mode: str
    scope: str
    value: Handle
    tok: Handle


class StridedGatherViewRecording(Recording):
    def _tensor_view_for(self, dtype, view, tile_shape, what):
        tv = self._view(view, (ir.TensorView,), what)["ty"]
        tile_shape = tuple(tile_shape)
        rank = len(tv.shape)
        if len(tile_shape) != rank:
            raise self.refuse(f"a {list(tile_shape)} tile over a rank-{rank} tensor view: the tile has one "
                              "dimension per tensor dimension", "reshape the tile after loading it")
        for t in tile_shape:
            if not isinstance(t, int) or not pow2(t):
                raise self.refuse(f"{what} tile {list(tile_shape)}: tile dimensions are powers of two",
                                  "a power-of-two tile; the edge tiles are padded")
        return tv, tile_shape

    def _padding(self, dtype, padding):
        padding = ir.as_padding(padding, "padding", refuse=self.refuse)
        if ir.padding_is_special(padding) and not BY_NAME[dtype].is_float:
            raise self.refuse(f"padding {ir.padding_name(padding)} over {dtype}: the special padding values are "
                              "legal only over a float format", "PadZero, or NoPadding")
        return padding

    def t_strided_view(self, dtype, view, tile_shape, traversal, dim_map, padding):
        tv, tile_shape = self._tensor_view_for(dtype, view, tile_shape, "strided_view")
        rank = len(tile_shape)
        traversal = tuple(traversal)
        if len(traversal) != rank:
            raise self.refuse(f"strided_view with {len(traversal)} traversal strides for a rank-{rank} tile",
                              "one traversal stride a tile dimension")
        for s in traversal:
            if not isinstance(s, int) or isinstance(s, bool) or s <= 0:
                raise self.refuse(f"strided_view traversal {list(traversal)}: every traversal stride is strictly "
                                  "positive (StridedViewType::verify)",
                                  "a positive stride per dimension; the tile itself is tile_shape wide")
        dim_map = tuple(range(rank)) if dim_map is None else tuple(dim_map)
        if sorted(dim_map) != list(range(rank)):
            raise self.refuse(f"dim_map {list(dim_map)} is not a permutation of the tensor's {rank} dimensions",
                              f"each of 0 .. {rank - 1} once (None for the identity)")
        padding = self._padding(dtype, padding)
        ty = ir.StridedView(tile_shape, traversal, tv.elem, tv.shape, tv.strides, dim_map, padding)
        h = self.new("view", dtype, tile_shape)
        self.prog.views[h] = {"ty": ty, "param": self.prog.views[view]["param"]}
        self.emit(StridedView(dtype=dtype, src=view, tile_shape=tile_shape, traversal=traversal,
                  dim_map=dim_map, padding=padding), (h,))
        return h

    def t_gather_view(self, dtype, view, tile_shape, sparse_dim, padding):
        tv, tile_shape = self._tensor_view_for(dtype, view, tile_shape, "gather_scatter_view")
        rank = len(tile_shape)
        if not isinstance(sparse_dim, int) or not 0 <= sparse_dim < rank:
            raise self.refuse(f"gather_scatter_view's sparse_dim {sparse_dim} is not a dimension of the rank-{rank} "
                              "tensor view", f"0 .. {rank - 1}")
        padding = self._padding(dtype, padding)
        ty = ir.GatherScatterView(tile_shape, tv.elem, tv.shape, tv.strides, sparse_dim, padding)
        h = self.new("view", dtype, tile_shape)
        self.prog.views[h] = {"ty": ty, "param": self.prog.views[view]["param"]}
        self.emit(GatherView(dtype=dtype, src=view, tile_shape=tile_shape, sparse_dim=sparse_dim,
                  padding=padding), (h,))
        return h

    def _rows_index(self, h: Handle, n: int, what: str) -> Handle:
        """The index at a gather/scatter view's sparse dimension: a rank-1 i32 tile of n row numbers."""
        inf = self.info(h)
        if inf.kind != "val" or inf.dtype != "i32" or inf.shape != (n,):
            raise self.refuse(f"{what}: the index at the sparse dimension is a [{n}] i32 tile of row numbers (as "
                              f"long as the tile is there), got a {inf.dtype}{list(inf.shape)} {inf.kind}",
                              f"Rows(t) with t an i32 tile of {n} lanes; At(i) at every other dimension")
        return h

    def t_atomic_red_view(self, dtype, view, indices, mode, scope, value):
        v = self._view(view, (ir.PartitionView, ir.StridedView), "atomic_red_view")
        ty = v["ty"]
        if mode == "xchg":
            raise self.refuse("atomic_red_view with mode xchg: a reduction that answers nothing cannot exchange "
                              "(atomic_red_view_tko refuses it)", "atomic_rmw(p, 'xchg', ...) answers the old values")
        if mode not in RED_MODES:
            raise self.refuse(f"atomic_red_view mode {mode!r}; the modes are {', '.join(RED_MODES)}",
                              "'add' for an integer sum, 'addf' for a float one")
        is_float = BY_NAME[dtype].is_float
        if (mode == "addf") != is_float:
            raise self.refuse(f"atomic_red_view mode {mode} over {dtype}: addf is the float sum and every other "
                              "mode an integer one", "addf over a float view, add (or and/or/...) over an integer one")
        if scope not in RED_SCOPES:
            raise self.refuse(f"atomic_red_view scope {scope!r}: the scope is tl_blk or device",
                              "'device' (every block), or 'tl_blk'")
        if ir.padding_present(ty.padding):
            raise self.refuse(f"atomic_red_view into a view with padding {ir.padding_name(ty.padding)}: "
                              "atomic_red_view_tko refuses a view that carries a padding value",
                              "a second partition_view of the same tensor view with NoPadding")
        check = getattr(self, "check_write", None)
        if check is not None:
            check(v["param"], "atomic_red_view")
        self._grid_indices(ty, indices, (), "atomic_red_view")
        (value,) = self.operands("atomic_red_view", dtype, ty.tile_shape, [value])
        self.memory_allowed("atomic_red_view")
        tin, tout = self.next_token()
        self.emit(AtomicRedView(dtype=dtype, view=view, indices=tuple(indices), mode=mode, scope=scope,
                  value=value, tok=tin), (tout,))


# ---- lowering ----------------------------------------------------------------------------------


def _lower_maker(cls):
    def rule(lw, op):
        a = op.a
        assert isinstance(a, (StridedView, GatherView))
        src = a.src
        lw.result(op, cls, lw.val(src), lw.prog.views[src]["ty"], lw.prog.views[op.res[0]]["ty"])
    return rule


lowering("strided_view")(_lower_maker(ir.MakeStridedView))
lowering("gather_view")(_lower_maker(ir.MakeGatherScatterView))


@lowering("atomic_red_view")
def _lower_atomic_red_view(lw, op):
    a = AtomicRedView.of(op)
    ty = lw.prog.views[a.view]["ty"]
    p = lw.prog.views[a.view]["param"]
    idx = tuple(lw.val(h) for h in a.indices)
    tok = lw.result(op, ir.AtomicRedViewTile, lw.val(a.view), ty, lw.val(a.value),
                    ir.tile(ty.tile_shape, a.dtype), idx, tuple(lw.ty(h) for h in a.indices), a.mode,
                    a.scope, lw.tokens.for_write(p))
    lw.tokens.after_write(p, tok)


# ---- host reference ---------------------------------------------------------------------------


@interp("strided_view")
def _ref_strided_view(it, op):
    a = StridedView.of(op)
    it.set(op.res[0], {"tv": it.val(a.src), "tile": list(a.tile_shape), "dim_map": list(a.dim_map),
                       "padding": a.padding, "step": list(a.traversal)})


@interp("gather_view")
def _ref_gather_view(it, op):
    a = GatherView.of(op)
    rank = len(a.tile_shape)
    it.set(op.res[0], {"tv": it.val(a.src), "tile": list(a.tile_shape), "dim_map": list(range(rank)),
                       "padding": a.padding, "sparse_dim": a.sparse_dim, "step": [1] * rank})


def _unsigned(x: np.ndarray, bits: int) -> np.ndarray:
    return x.astype(np.int64) & ((1 << bits) - 1) if bits < 64 else x.astype(np.uint64)


@interp("atomic_red_view")
def _ref_atomic_red_view(it, op):
    """Lane by lane, in order (an atomic reduction's answer does not depend on the order)."""
    a = AtomicRedView.of(op)
    view = it.val(a.view)
    buf = view["tv"]["buf"]
    d = BY_NAME[a.dtype]
    offs, inb = _tile_geometry(it, view, a.indices)
    v = np.broadcast_to(np.asarray(it.val(a.value)), offs.shape)[inb]
    offs = offs[inb]
    mode = a.mode
    for o, x in zip(offs.tolist(), v.tolist()):
        old = buf[o]
        if mode == "addf":
            new = to_format(d, np.float64(old) + np.float64(x))
        elif mode in ("umax", "umin"):
            uo, ux = (int(_unsigned(np.asarray(y), d.bits)) for y in (old, x))
            new = wrap_int(d, max(uo, ux) if mode == "umax" else min(uo, ux))
        else:
            o64, x64 = int(old), int(x)
            new = wrap_int(d, {"add": o64 + x64, "max": max(o64, x64), "min": min(o64, x64), "and": o64 & x64,
                               "or": o64 | x64, "xor": o64 ^ x64}[mode])
        buf[o] = new
