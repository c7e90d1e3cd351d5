"""Regions that carry values: the for loop (d_range) and the if (d_if) -- recorded, lowered,
computed on the host.

The recorder carries the memory ordering token through a loop as its last carried value when the
body touches memory (the body's trial shows it), so a store after the loop is ordered after every
store inside it. An if carries no token: a load or store inside one is refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .. import ir
from ..lower.core import lowering
from ..prog import Attrs, Handle, Region
from ..ref.core import interp
from .recording import Recording

# ---- what each operation records ----------------------------------------------------------------


@dataclass(frozen=True)
class For(Attrs, kind="for"):
    lower: Handle
    upper: Handle
    step: Handle
    unsigned: bool
    inits: tuple[Handle, ...]


@dataclass(frozen=True)
class If(Attrs, kind="if"):
    cond: Handle


class ControlRecording(Recording):
    def _bound(self, h, what):
        inf = self.info(h)
        if inf.kind != "val" or inf.dtype != "i32" or inf.shape != ():
            raise self.refuse(f"{what} must be a rank-0 i32 index, got a {inf.dtype}{list(inf.shape)}",
                              "an Idx (idx_const, block_id, idx_of(t) for a rank-0 i32 tile)")

    def t_loop_begin(self, lower, upper, step, unsigned, inits):
        for h, w in ((lower, "the loop's lower bound"), (upper, "the loop's upper bound"), (step, "the loop's step")):
            self._bound(h, w)
        iv = self.new("val", "i32", ())
        params = []
        for h in inits:
            inf = self.info(h)
            params.append(self.new(inf.kind, inf.dtype, inf.shape))
        op = self.emit(For(lower=lower, upper=upper, step=step, unsigned=bool(unsigned),
                       inits=tuple(inits)), ())
        region = Region((iv, *params), [])
        op.regions = (region,)
        self.push("for", op, region)
        return iv, params

    def t_loop_end(self, outs):
        f = self.pop("for")
        assert f.op is not None and f.region is not None  # a region an operation opened has both
        outs = tuple(outs)
        params = f.region.params[1:]
        self._check_yields(outs, params, "the loop body")
        f.region.yields = outs
        res = tuple(self.new(self.info(p).kind, self.info(p).dtype, self.info(p).shape) for p in params)
        f.op.res = res
        return self.closed(list(res))

    def _check_yields(self, outs: Sequence[Handle], like: Sequence, what: str) -> None:
        if len(outs) != len(like):
            raise self.refuse(f"{what} hands on {len(outs)} values for {len(like)} carried")
        for o, p in zip(outs, like):
            a, b = self.info(o), (p if not isinstance(p, int) else self.info(p))
            if (a.dtype, a.shape) != (b.dtype, b.shape):
                raise self.refuse(f"{what} hands on a {a.dtype}{list(a.shape)} value where a carry of "
                                  f"{b.dtype}{list(b.shape)} is carried", "keep a carry's format and shape")

    def t_if_begin(self, cond):
        inf = self.info(cond)
        if inf.dtype != "i1" or inf.shape != ():
            raise self.refuse(f"d_if's condition is a {inf.dtype}{list(inf.shape)} tile; an if branches on a "
                              "rank-0 i1", "reduce the mask first, or choose lanes with select(cond, a, b)")
        op = self.emit(If(cond=cond), ())
        region = Region((), [])
        op.regions = (region,)
        self.push("if", op, region)

    def t_if_else(self, yields):
        f = self.pop("if")
        assert f.op is not None and f.region is not None  # a region an operation opened has both
        f.region.yields = tuple(yields)
        for y in yields:
            self.info(y)
        self.closed(None)  # the then branch's values are not the else branch's
        region = Region((), [])
        f.op.regions = f.op.regions + (region,)
        self.push("else", f.op, region)

    def t_if_end(self, yields):
        f = self.pop("else")
        assert f.op is not None and f.region is not None  # a region an operation opened has both
        yields = tuple(yields)
        then = f.op.regions[0].yields
        self._check_yields(yields, [self.prog.info[y] for y in then], "the else branch")
        f.region.yields = yields
        inf = [self.prog.info[y] for y in then]  # the then branch's yields, checked when it closed
        res = tuple(self.new(i.kind, i.dtype, i.shape) for i in inf)
        f.op.res = res
        return self.closed(list(res))


# ---- lowering ----------------------------------------------------------------------------------


def _region_body(lw, region, yields_cls, param_ids, extra=None):
    """Lower a region's body; ``extra`` (the loop's token plan) adds carried tokens at the end."""
    with lw.region() as got:
        for h, i in zip(region.params, param_ids):
            lw.bind(h, ir.Val(i))
        lw.ops(region.ops)
        vals = [lw.val(y) for y in region.yields if not _is_token(lw, y)]
        tys = [lw.ty(y) for y in region.yields if not _is_token(lw, y)]
        if extra is not None:
            toks = lw.tokens.body_yields(extra)
            vals += toks
            tys += [ir.TOKEN] * len(toks)
        lw.emit(yields_cls(tuple(vals), tuple(tys)))
    return got


def _is_token(lw, h) -> bool:
    return lw.prog.info[h].kind == "token"


@lowering("for")
def _lower_for(lw, op):
    """The recorded loop carries the recorder's one token when the body touches memory; the
    lowering drops it and carries the per-parameter tokens of lower/tokens.py instead."""
    a = For.of(op)
    (region,) = op.regions
    keep = [i for i, p in enumerate(region.params[1:]) if not _is_token(lw, p)]
    tys = [lw.ty(region.params[1 + i]) for i in keep]
    lower, upper, step = lw.val(a.lower), lw.val(a.upper), lw.val(a.step)
    inits = [lw.val(a.inits[i]) for i in keep]
    plan = lw.tokens.loop_plan(region.ops)
    tok_inits = lw.tokens.loop_inits(plan)
    iv = lw.fresh()
    carried = [lw.fresh() for _ in tys]
    tok_carried = [lw.fresh() for _ in tok_inits]
    for p in region.params[1:]:
        if _is_token(lw, p):
            lw.bind(p, lw.tokens.entry)
    saved = lw.tokens.enter_body(plan, [ir.Val(t) for t in tok_carried])
    kept_params = [region.params[0]] + [region.params[1 + i] for i in keep]
    body, owners = _region_body(lw, _Kept(region, kept_params), ir.Cont, [iv, *carried], plan)
    results = [lw.fresh() for _ in tys]
    tok_results = [lw.fresh() for _ in tok_inits]
    lw.tokens.leave_body(saved, plan, [ir.Val(t) for t in tok_results])
    all_tys = tuple(tys) + (ir.TOKEN,) * len(tok_inits)
    lw.emit(ir.ForLoop(tuple(results + tok_results), all_tys, iv, lower, upper, step, a.unsigned,
                       tuple(inits + tok_inits), tuple(carried + tok_carried), body), (owners,))
    it = iter(results)
    for h in op.res:
        lw.bind(h, lw.tokens.entry if _is_token(lw, h) else ir.Val(next(it)))


class _Kept:
    """A region seen with its token parameters and yields left out (the lowering carries its own)."""

    def __init__(self, region, params):
        self.params = params
        self.ops = region.ops
        self.yields = region.yields


@lowering("if")
def _lower_if(lw, op):
    """An if carries no token (memory operations are refused in its branches): a token the recorder
    carried through it (a trial that touched memory where the branch recorded for real did not) is
    dropped, as for a loop."""
    cond = lw.val(If.of(op).cond)
    then, other = op.regions
    keep = [i for i, y in enumerate(then.yields) if not _is_token(lw, y)]
    tys = tuple(lw.ty(then.yields[i]) for i in keep)
    t_body, t_own = _region_body(lw, then, ir.YieldVals, ())
    e_body, e_own = _region_body(lw, other, ir.YieldVals, ())
    results = tuple(lw.fresh() for _ in tys)
    lw.emit(ir.IfElse(results, tys, cond, ir.tile((), "i1"), t_body, e_body), (t_own, e_own))
    it = iter(results)
    for i, h in enumerate(op.res):
        lw.bind(h, ir.Val(next(it)) if i in keep else lw.tokens.entry)


# ---- host reference ---------------------------------------------------------------------------


def run_region(it, region, values):
    for h, v in zip(region.params, values):
        it.set(h, v)
    it.exec(region.ops)
    return [it.val(y) for y in region.yields]


@interp("for")
def _ref_for(it, op):
    a = For.of(op)
    (region,) = op.regions
    lo, hi, st = (int(np.asarray(it.val(h))) for h in (a.lower, a.upper, a.step))
    if a.unsigned:
        lo, hi = lo & 0xFFFFFFFF, hi & 0xFFFFFFFF
    if st <= 0:
        raise it.fail(f"a loop stepping by {st} does not terminate")
    vals = [it.val(h) for h in a.inits]
    i = lo
    while i < hi:
        vals = run_region(it, region, [np.asarray(np.int32(np.int64(i).astype(np.uint32).astype(np.int32)))] + vals)
        i += st
    for h, v in zip(op.res, vals):
        it.set(h, v)


@interp("if")
def _ref_if(it, op):
    cond = bool(np.asarray(it.val(If.of(op).cond)))
    vals = run_region(it, op.regions[0 if cond else 1], [])
    for h, v in zip(op.res, vals):
        it.set(h, v)
