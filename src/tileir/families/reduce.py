"""Reductions and scans: a region folds the elements along one dimension, accumulator first.

The argument order is the measured one (the spec: the first block argument is everything folded
so far, the second the element arriving now, for reduce and scan alike); the identity is not
folded in at the first position. A float fold's order is not specified, so float reductions are
tolerance tier; the host folds with numpy's reduction where the body is one recognised op.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import ir
from ..dtypes import BY_NAME, to_format
from ..hostmath import quiet_nans
from ..lower.core import lowering
from ..prog import Attrs, Handle, Region, Shape
from ..ref.core import interp
from .arith import BinaryF, BinaryI
from .control import run_region
from .recording import Recording

# ---- what each operation records ----------------------------------------------------------------


@dataclass(frozen=True)
class Reduce(Attrs, kind="reduce"):
    dim: int
    shape: Shape
    identities: tuple[ir.IdF | ir.IdI, ...]  # one per operand
    operands: tuple[Handle, ...]


@dataclass(frozen=True)
class Scan(Reduce, kind="scan"):
    reverse: bool


class ReduceRecording(Recording):
    def _fold_begin(self, kind, dim, shape, identities, operands, reverse=False):
        shape = tuple(shape)
        if not operands:
            raise self.refuse(f"a {kind} of no operands")
        rank = len(shape)
        if rank == 0:
            raise self.refuse(f"a {kind} of a rank-0 tile: there is no dimension to fold",
                              "the value itself; or broadcast(t, [1]) first")
        d = dim + rank if dim < 0 else dim
        if not 0 <= d < rank:
            raise self.refuse(f"{kind} along dimension {dim} of a rank-{rank} tile")
        if len(identities) != len(operands):
            raise self.refuse(f"{kind}: {len(identities)} identities for {len(operands)} operands")
        args = []
        for h, ident in zip(operands, identities):
            inf = self.info(h)
            if inf.kind != "val" or inf.shape != shape:
                raise self.refuse(f"{kind}: every operand must be a {list(shape)} tile, got "
                                  f"{inf.dtype}{list(inf.shape)}")
            if ident.dtype != inf.dtype:
                raise self.refuse(f"{kind}: the identity is {ident.dtype} and the operand {inf.dtype}")
            args.append(self.new("val", inf.dtype, ()))
            args.append(self.new("val", inf.dtype, ()))
        if kind == "scan":
            a: Reduce = Scan(dim=d, shape=shape, identities=tuple(identities), operands=tuple(operands),
                             reverse=bool(reverse))
        else:
            a = Reduce(dim=d, shape=shape, identities=tuple(identities), operands=tuple(operands))
        op = self.emit(a)
        region = Region(tuple(args), [])
        op.regions = (region,)
        self.push(kind, op, region)
        return args

    def _fold_end(self, kind, yields):
        f = self.pop(kind)
        assert f.op is not None and f.region is not None  # a region an operation opened has both
        yields = tuple(yields)
        operands = Reduce.of(f.op).operands
        if len(yields) != len(operands):
            raise self.refuse(f"the {kind} body answers {len(yields)} values for {len(operands)} operands",
                              "one new accumulator per operand, in the operands' order")
        res = []
        for y, h in zip(yields, operands):
            yi, hi = self.info(y), self.info(h)
            if yi.shape != () or yi.dtype != hi.dtype:
                raise self.refuse(f"the {kind} body must answer a rank-0 {hi.dtype} tile per operand, got "
                                  f"{yi.dtype}{list(yi.shape)}",
                                  "fold the rank-0 accumulator and element it was given, in their format")
            shape = hi.shape
            if kind == "reduce":
                shape = tuple(s for i, s in enumerate(shape) if i != Reduce.of(f.op).dim)
            res.append(self.new("val", hi.dtype, shape))
        f.region.yields = yields
        f.op.res = tuple(res)
        return self.closed(res)

    def t_reduce_begin(self, dim, shape, identities, operands):
        return self._fold_begin("reduce", dim, shape, identities, operands)

    def t_reduce_end(self, yields):
        return self._fold_end("reduce", yields)

    def t_scan_begin(self, dim, reverse, shape, identities, operands):
        return self._fold_begin("scan", dim, shape, identities, operands, reverse)

    def t_scan_end(self, yields):
        return self._fold_end("scan", yields)


@lowering("reduce", "scan")
def _lower_fold(lw, op):
    a = Reduce.of(op)
    (region,) = op.regions
    operands = tuple(lw.val(h) for h in a.operands)
    operand_tys = tuple(lw.ty(h) for h in a.operands)
    tys = tuple(lw.ty(r) for r in op.res)
    args = tuple(lw.fresh() for _ in region.params)
    with lw.region() as got:
        for h, i in zip(region.params, args):
            lw.bind(h, ir.Val(i))
        lw.ops(region.ops)
        lw.emit(ir.YieldVals(tuple(lw.val(y) for y in region.yields),
                             tuple(ir.Tile((), t.elem) for t in operand_tys)))
    body, owners = got
    results = tuple(lw.fresh() for _ in tys)
    if not isinstance(a, Scan):
        lw.emit(ir.ReduceTile(results, tys, a.dim, a.identities, operands, operand_tys, args, body), (owners,))
    else:
        lw.emit(ir.ScanTile(results, tys, a.dim, a.reverse, a.identities, operands, operand_tys, args,
                            body), (owners,))
    for h, r in zip(op.res, results):
        lw.bind(h, ir.Val(r))


_FAST = {"addf": np.add, "maxf": np.fmax, "minf": np.fmin, "addi": np.add, "maxi": np.maximum, "mini": np.minimum}


def _simple_body(region):
    """The numpy ufunc of a body that is one recognised op of (accumulator, element), else None."""
    if len(region.ops) != 1 or len(region.params) != 2:
        return None
    (op,) = region.ops
    b = op.a
    if not isinstance(b, (BinaryF, BinaryI)) or b.op not in _FAST:
        return None
    if {b.a, b.b} != set(region.params) or region.yields != op.res:
        return None
    if isinstance(b, BinaryF) and b.propagate_nan:
        return {"maxf": np.maximum, "minf": np.minimum}[b.op]
    return _FAST[b.op]


@interp("reduce", "scan")
def _ref_fold(it, op):
    a = Reduce.of(op)
    reverse = isinstance(a, Scan) and a.reverse
    (region,) = op.regions
    dim = a.dim
    xs = [np.asarray(it.val(h)) for h in a.operands]
    dtypes = [it.prog.info[h].dtype for h in a.operands]
    fast = _simple_body(region) if len(xs) == 1 else None
    if fast is not None:
        d = BY_NAME[dtypes[0]]
        work = np.float64 if d.name == "f64" else (np.float32 if d.is_float else np.int64)
        x = xs[0].astype(work)
        if fast in (np.fmax, np.fmin):
            x = quiet_nans(x)  # numpy's fmax answers NaN for a signalling NaN; maxf the other operand
        if op.kind == "reduce":
            outs = [to_format(d, _signed_zeros(fast, x, fast.reduce(x, axis=dim), dim, False))]
        else:
            y = np.flip(x, dim) if reverse else x
            y = _signed_zeros(fast, y, fast.accumulate(y, axis=dim), dim, True)
            outs = [to_format(d, np.flip(y, dim) if reverse else y)]
    else:
        outs = _fold_generic(it, op, region, xs, dim)
    for h, v in zip(op.res, outs):
        it.set(h, v)


_MAXLIKE = {np.fmax: True, np.maximum: True, np.fmin: False, np.minimum: False}


def _signed_zeros(fast, x, r, dim, prefix):
    """A float max / min fold's zero answers given the sign maxf / minf give them: max(+0, -0) is +0
    and min(+0, -0) is -0 whichever comes first (IEEE 754-2019 maximum / minimum; the H200's maxf and
    minf, bench/results/diff_h200.json float_maxmin), where numpy's fmax / fmin answer one of the
    operands. A max whose answer is a zero is +0 when a +0 was folded in (so far, for a scan), else
    -0; a min, -0 when a -0 was."""
    if fast not in _MAXLIKE or x.dtype.kind != "f":
        return r
    want = np.signbit(x) != _MAXLIKE[fast]  # the zero that wins: +0 for max, -0 for min
    hit = (x == 0) & want
    seen = np.logical_or.accumulate(hit, axis=dim) if prefix else np.any(hit, axis=dim)
    win = 0.0 if _MAXLIKE[fast] else -0.0
    return np.where((r == 0) & seen, win, np.where(r == 0, -win, r)).astype(r.dtype)


def _fold_generic(it, op, region, xs, dim):
    """A left fold along ``dim`` (reversed for a reverse scan) with the body as recorded."""
    n = xs[0].shape[dim]
    a = Reduce.of(op)
    order = range(n - 1, -1, -1) if isinstance(a, Scan) and a.reverse else range(n)
    acc = None
    steps = []
    for i in order:
        elems = [np.take(x, i, axis=dim) for x in xs]
        if acc is None:
            acc = elems
        else:
            vals = []
            for ac, el in zip(acc, elems):
                vals += [ac, el]
            acc = [np.asarray(v) for v in run_region(it, region, vals)]
        steps.append((i, acc))
    if op.kind == "reduce":
        return acc
    outs = []
    for j in range(len(xs)):
        arr = np.empty_like(xs[j])
        for i, ac in steps:
            idx: list[slice | int] = [slice(None)] * xs[j].ndim
            idx[dim] = i
            arr[tuple(idx)] = ac[j]
        outs.append(arr)
    return outs
