"""Tiles cut, joined and reread: extract, insert (13.4), cat, fpowi (13.4), pack / unpack (13.3) --
recorded, lowered, computed on the host.

* extract / insert address a subtile by SLICE numbers, not element offsets: along dimension k the
  subtile's shape divides the whole's, and index i names elements [i*sub[k], (i+1)*sub[k]). An index
  outside its range is undefined behaviour on the device; the host refuses it when it runs.
* cat joins two tiles that agree in every dimension but one; the joined dimension is a power of
  two like every tile dimension (so in practice the two halves are equal).
* fpowi raises a float tile to an integer tile of i1, i8, i16 or i32 read SIGNED (an i1 true is the
  power -1); the host answers the device's measured sequence (ref/second.py's ref_fpowi).
* pack reinterprets a rank-1 tile as the bytes it occupies (an i8 tile, lanes * bits / 8 lanes)
  and unpack reads them back; a sub-byte format packs two lanes a byte, the EVEN lane in the low
  nibble. Both tiles are rank 1, and an 8-bit format is a bitcast's business, not theirs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import ir
from ..dtypes import BY_NAME, to_format
from ..lower.core import lowering
from ..prog import Attrs, Handle, Shape
from ..ref.core import interp
from ..ref.second import ref_fpowi
from .memory import pow2
from .recording import Recording
from .shape import Reshape

POWI_EXPONENTS = ("i1", "i8", "i16", "i32")
PACKABLE = ("f64", "f32", "f16", "bf16", "f4E2M1FN", "i64", "i32", "i16", "i4")


# ---- what each operation records ----------------------------------------------------------------


# the workarounds of tileiras defects in the recording, on unless a device study measures the defect itself
# (bench/fuzz_variants.py)
WORKAROUND = {"pack_of_extract": True, "extract_by_dimension": True}
# tileiras 13.4.92's time on an extract (sm_90, measured with tileiras on the CPU) grows far past linear in its
# slice count: 2048 slices take 0.2 s, 4096 of [1, 2] 7.6 s, 4096 of [1, 1] more than 150 s (campaign 10's
# 605709, which on the H200's host did not finish within 60 s: the ninth defect, docs/assembler-defect.md).
# Past this many, the recording cuts one dimension at a time.
EXTRACT_SLICES = 2048


@dataclass(frozen=True)
class Extract(Attrs, kind="extract"):
    dtype: str
    src: Handle
    to: Shape
    indices: tuple[Handle, ...]


@dataclass(frozen=True)
class Insert(Attrs, kind="insert"):
    dtype: str
    src: Handle
    dst: Handle
    indices: tuple[Handle, ...]


@dataclass(frozen=True)
class Cat(Attrs, kind="cat"):
    dtype: str
    dim: int
    lhs: Handle
    rhs: Handle
    to: Shape


@dataclass(frozen=True)
class PowI(Attrs, kind="powi"):
    dtype: str
    exp_dtype: str
    shape: Shape
    a: Handle
    n: Handle


@dataclass(frozen=True)
class Repack(Attrs, kind="repack"):
    op: str
    from_: str
    to: str
    src: Handle
    n: int


class TileShapeRecording(Recording):
    def _whole_tile(self, h, what):
        inf = self.info(h)
        if inf.kind != "val":
            raise self.refuse(f"{what} takes a tile, not a {inf.kind}", "load_view(v, ...) or load(p, ...) first")
        return inf

    def _slices(self, small, big, indices, what, small_name, big_name):
        if len(small) != len(big) or not big:
            raise self.refuse(f"{what} of a {list(small)} {small_name} and a {list(big)} {big_name}: the two have one "
                              "rank, at least one", f"reshape the {small_name} to rank {len(big)}")
        for s, b in zip(small, big):
            if not pow2(s) or b % s:
                raise self.refuse(f"{what}: the {small_name} {list(small)} does not divide the {big_name} {list(big)} "
                                  "evenly (each dimension a power of two that divides the other's)",
                                  f"a {small_name} shape whose every dimension divides {list(big)}")
        if len(indices) != len(big):
            raise self.refuse(f"{what} with {len(indices)} indices into a rank-{len(big)} tile",
                              "one SLICE number a dimension (not an element offset)")
        for h in indices:
            self._index(h, f"{what}'s index")

    def t_extract(self, dtype, from_, to, src, indices):
        inf = self._whole_tile(src, "extract")
        to = tuple(to)
        self._slices(to, inf.shape, indices, "extract", "subtile", "tile")
        slices = math.prod(n // m for n, m in zip(inf.shape, to))
        if slices > EXTRACT_SLICES and WORKAROUND["extract_by_dimension"]:
            cuts = [k for k, (n, m) in enumerate(zip(inf.shape, to)) if n != m]
            if len(cuts) < 2 or any(inf.shape[k] // to[k] > EXTRACT_SLICES for k in cuts):
                raise self.refuse(f"an extract of {list(to)} from a {list(inf.shape)} tile has {slices} slices: "
                                  "tileiras 13.4.92 does not finish so many (4096 [1] of a [4096] tile: not within "
                                  "8 s, where 2048 take 0.2 s), and this one cannot be cut into extracts of at most "
                                  f"{EXTRACT_SLICES} along one dimension each",
                                  "a reshape to more dimensions first (each holding at most "
                                  f"{EXTRACT_SLICES} slices), or load the smaller tile itself")
            zero, cur, shape = self.t_idx_const(0), src, list(inf.shape)
            for k in cuts:  # one dimension at a time: each extract holds shape[k] / to[k] slices
                shape[k] = to[k]
                step = self.new("val", inf.dtype, tuple(shape))
                self.emit(Extract(dtype=inf.dtype, src=cur, to=tuple(shape),
                                  indices=tuple(indices[j] if j == k else zero for j in range(len(to)))), (step,))
                cur = step
            return cur
        r = self.new("val", inf.dtype, to)
        self.emit(Extract(dtype=inf.dtype, src=src, to=to, indices=tuple(indices)), (r,))
        return r

    def t_insert(self, dtype, sub, whole, src, dst, indices):
        s, w = self._whole_tile(src, "insert"), self._whole_tile(dst, "insert")
        if s.dtype != w.dtype:
            raise self.refuse(f"insert of a {s.dtype} subtile into a {w.dtype} tile: both have one format",
                              "convert one first")
        self._slices(s.shape, w.shape, indices, "insert", "subtile", "tile")
        r = self.new("val", w.dtype, w.shape)
        self.emit(Insert(dtype=w.dtype, src=src, dst=dst, indices=tuple(indices)), (r,))
        return r

    def t_cat(self, dtype, dim, lhs_shape, rhs_shape, lhs, rhs):
        a, b = self._whole_tile(lhs, "cat"), self._whole_tile(rhs, "cat")
        if a.dtype != b.dtype:
            raise self.refuse(f"cat of a {a.dtype} tile and a {b.dtype} tile: both have one format",
                              "convert one first")
        rank = len(a.shape)
        if rank == 0 or len(b.shape) != rank:
            raise self.refuse(f"cat of a {list(a.shape)} tile and a {list(b.shape)} tile: the two have one rank, "
                              "at least one", "reshape them to one rank first")
        d = dim + rank if dim < 0 else dim
        if not 0 <= d < rank:
            raise self.refuse(f"cat along dimension {dim} of rank-{rank} tiles",
                              f"a dimension in -{rank} .. {rank - 1}")
        if any(x != y for k, (x, y) in enumerate(zip(a.shape, b.shape)) if k != d):
            raise self.refuse(f"cat of {list(a.shape)} and {list(b.shape)} along {d}: they must agree in every "
                              "other dimension", "broadcast or reshape one of them")
        to = tuple(x + y if k == d else x for k, (x, y) in enumerate(zip(a.shape, b.shape)))
        if not pow2(to[d]):
            raise self.refuse(f"cat of {list(a.shape)} and {list(b.shape)} along {d} makes {list(to)}: every tile "
                              "dimension is a power of two", "join two halves of equal length")
        r = self.new("val", a.dtype, to)
        self.emit(Cat(dtype=a.dtype, dim=d, lhs=lhs, rhs=rhs, to=to), (r,))
        return r

    def t_powi(self, dtype, exp_dtype, shape, a, n):
        ai, ni = self._whole_tile(a, "powi"), self._whole_tile(n, "powi")
        if not BY_NAME[ai.dtype].is_float or ai.dtype not in ("f16", "bf16", "f32", "f64"):
            raise self.refuse(f"powi raises a float tile (f16, bf16, f32 or f64), not {ai.dtype}",
                              "int_to_float the base first")
        if ni.dtype not in POWI_EXPONENTS:
            raise self.refuse(f"powi's exponent is {ni.dtype}; fpowi takes an i1, i8, i16 or i32 exponent tile "
                              "(read signed)", "pow(a, b) for a float exponent; trunci an i64 exponent to i32")
        shape = ai.shape if len(ai.shape) >= len(ni.shape) else ni.shape
        (a,) = self.operands("powi", ai.dtype, shape, [a])  # a float format: checked just above
        (n,) = self.operands("powi's exponent", ni.dtype, shape, [n])
        r = self.new("val", ai.dtype, shape)
        self.emit(PowI(dtype=ai.dtype, exp_dtype=ni.dtype, shape=tuple(shape), a=a, n=n), (r,))
        return r

    def _extracted(self, h) -> tuple[Extract | None, bool]:
        """(the extract whose result the value ``h`` is, through reshapes, or None; whether ``h`` is that
        extract's own result)."""
        for depth in range(16):
            op = self._defining_op(h)
            if op is not None and isinstance(op.a, Extract):
                return op.a, depth == 0
            if op is None or not isinstance(op.a, Reshape):
                return None, False
            h = op.a.src
        return None, False

    def t_repack(self, op, from_, to, shape, a):
        inf = self._whole_tile(a, op)
        if op not in ("pack", "unpack"):
            raise self.refuse(f"unknown repack {op!r}; the two are pack and unpack",
                              "pack_bytes(t) or unpack_bytes(t, fmt)")
        if len(inf.shape) != 1:
            raise self.refuse(f"{'pack_bytes' if op == 'pack' else 'unpack_bytes'} of a {list(inf.shape)} tile: "
                              "both tiles are rank 1 (the dialect leaves no doubt which lane is which byte)",
                              "reshape(t, [n]) first")
        wide = inf.dtype if op == "pack" else to
        if op == "unpack" and inf.dtype != "i8":
            raise self.refuse(f"unpack_bytes reads an i8 tile of bytes, not {inf.dtype}", "pack_bytes(t) makes one")
        if wide not in PACKABLE:
            why = "an 8-bit format is the same bytes already (bitcast)" if BY_NAME[wide].bits == 8 else \
                "the dialect packs formats of 4, 16, 32 or 64 bits"
            raise self.refuse(f"{op} of {wide}: {why}", "bits_to_int / bits_to_float for 8 <-> 8 bits, or "
                              "widen the tile first")
        bits = BY_NAME[wide].bits
        n = inf.shape[0] * bits // 8 if op == "pack" else inf.shape[0] * 8 // bits
        if n < 1 or not pow2(n) or (op == "pack" and inf.shape[0] * bits % 8):
            raise self.refuse(f"{op} of {inf.shape[0]} {inf.dtype} lanes makes no whole power-of-two tile",
                              "a longer tile")
        ex, direct = self._extracted(a) if op == "pack" and WORKAROUND["pack_of_extract"] else (None, False)
        if ex is not None:
            # tileiras 13.4.92 packs other bytes for the pack of an extract's result on the H200, at every level,
            # whatever the index and width (campaign 9's 504651; bench/results/fuzz_variants_504651_h200.json:
            # the same tile loaded whole, or the extract stored unpacked, is right, and so is the pack of the
            # whole tile with its bytes extracted): recorded as that, or refused where that is not the same
            whole = self.info(ex.src)
            if not direct or len(whole.shape) != 1 or bits < 8:
                raise self.refuse("pack_bytes of an extract's result: tileiras 13.4.92 packs other bytes "
                                  "(docs/assembler-defect.md, the eighth defect)",
                                  "pack_bytes the whole rank-1 tile and extract its bytes: extract(pack_bytes(t), "
                                  "[n * bits / 8], [i]) for extract(t, [n], [i])")
            packed = self.t_repack("pack", whole.dtype, "i8", list(whole.shape), ex.src)
            return self.t_extract("i8", list(self.info(packed).shape), (n,), packed, ex.indices)
        out = "i8" if op == "pack" else wide
        r = self.new("val", out, (n,))
        self.emit(Repack(op=op, from_=inf.dtype, to=out, src=a, n=n), (r,))
        return r


# ---- lowering ----------------------------------------------------------------------------------

I32 = ir.tile((), "i32")


@lowering("extract")
def _lower_extract(lw, op):
    a = Extract.of(op)
    src_ty = lw.ty(a.src)
    lw.result(op, ir.ExtractTile, lw.val(a.src), src_ty, ir.Tile(a.to, src_ty.elem),
              tuple(lw.val(h) for h in a.indices))


@lowering("insert")
def _lower_insert(lw, op):
    a = Insert.of(op)
    lw.result(op, ir.InsertTile, lw.val(a.src), lw.val(a.dst), lw.ty(a.src), lw.ty(a.dst),
              tuple(lw.val(h) for h in a.indices))


@lowering("cat")
def _lower_cat(lw, op):
    a = Cat.of(op)
    lt = lw.ty(a.lhs)
    lw.result(op, ir.CatTile, a.dim, lw.val(a.lhs), lw.val(a.rhs), lt, lw.ty(a.rhs),
              ir.Tile(a.to, lt.elem))


@lowering("powi")
def _lower_powi(lw, op):
    a = PowI.of(op)
    shape = a.shape
    n = lw.val(a.n)
    lw.result(op, ir.FloatPowI, ir.tile(shape, a.dtype), ir.tile(shape, a.exp_dtype), lw.val(a.a), n)


@lowering("repack")
def _lower_repack(lw, op):
    a = Repack.of(op)
    lw.result(op, ir.Cast, a.op, lw.ty(a.src), ir.tile((a.n,), a.to), lw.val(a.src))


# ---- host reference ---------------------------------------------------------------------------


def _slice_at(it, indices, small, big, what):
    sl = []
    for h, s, b in zip(indices, small, big):
        i = int(np.asarray(it.val(h)))
        if not 0 <= i < b // s:
            raise it.fail(f"{what}: slice {i} of {b // s} along a dimension (undefined on the device)")
        sl.append(slice(i * s, (i + 1) * s))
    return tuple(sl)


@interp("extract")
def _ref_extract(it, op):
    a = Extract.of(op)
    x = np.asarray(it.val(a.src))
    it.set(op.res[0], np.array(x[_slice_at(it, a.indices, a.to, x.shape, "extract")]))


@interp("insert")
def _ref_insert(it, op):
    a = Insert.of(op)
    s, w = np.asarray(it.val(a.src)), np.array(it.val(a.dst))
    w[_slice_at(it, a.indices, s.shape, w.shape, "insert")] = s
    it.set(op.res[0], w)


@interp("cat")
def _ref_cat(it, op):
    a = Cat.of(op)
    it.set(op.res[0], np.concatenate([np.asarray(it.val(a.lhs)), np.asarray(it.val(a.rhs))], axis=a.dim))


@interp("powi")
def _ref_powi(it, op):
    a = PowI.of(op)
    n = np.asarray(it.val(a.n))
    n = -n.astype(np.int64) if a.exp_dtype == "i1" else n.astype(np.int64)  # i1 read signed: true is -1
    it.set(op.res[0], ref_fpowi(it.val(a.a), n, a.dtype))


def _bytes_of(x: np.ndarray, dtype: str) -> np.ndarray:
    d = BY_NAME[dtype]
    if d.bits == 4:
        nib = np.ascontiguousarray(x).view(np.uint8).astype(np.uint8) & 0xF
        return (nib[0::2] | (nib[1::2] << 4)).astype(np.uint8)
    return np.ascontiguousarray(x.astype(d.np)).view(np.uint8)


def _from_bytes(b: np.ndarray, dtype: str) -> np.ndarray:
    d = BY_NAME[dtype]
    if d.bits == 4:
        nib = np.empty(b.size * 2, np.uint8)
        nib[0::2], nib[1::2] = b & 0xF, b >> 4
        if d.is_float:
            return nib.view(d.np)
        return to_format(d, np.where(nib >= 8, nib.astype(np.int64) - 16, nib))
    return np.ascontiguousarray(b).view(d.np).copy()


@interp("repack")
def _ref_repack(it, op):
    a = Repack.of(op)
    x = np.asarray(it.val(a.src))
    if a.op == "pack":
        it.set(op.res[0], _bytes_of(x, a.from_).view(np.int8).copy())
    else:
        it.set(op.res[0], _from_bytes(x.view(np.uint8), a.to))
