"""The data-driven loop (d_loop), the early return (d_return_if) and the joined token chains
(d_fork2) -- recorded, lowered, computed on the host.

The while loop. ``t_while_begin(inits)`` opens a region whose parameters are the carried values
as an iteration sees them; ``t_while_end(cond, outs)`` closes it with the rank-0 i1 ``cond``
(true: this iteration is the last) and ``outs`` (what the next iteration receives). The lowering
writes the region as the spec's

    loop iter_values(%c = inits) {
      <body>
      if %cond { break %c... } else { yield }   // the values that ENTERED the iteration
      continue %outs...
    }

so the loop answers the values the stopping iteration was called with. When the body touches
memory the recorder carries its one token through the region (the trial shows it); the lowering
drops that and carries the per-parameter tokens of lower/tokens.py instead, through BOTH
terminators. The break hands on the tokens as they stand at the end of the body, not the entering
ones: the last iteration's stores did happen (the body runs to its end every time), and what
follows the loop must be ordered after them.

The early return. ``t_return_if(cond)`` records ``if cond { return } else { yield }`` where it is
called. The dialect lets a return sit under the entry, an if and a loop (a loop only since
bytecode 13.4; ReturnOp's verifier walks up through if and loop to the entry), never under a for,
a reduce or a scan: the recording refuses those three. Measured on an H200 (tileiras 13.4.92,
sm_90, tools/probe_families.py, 2026-11-29): a return inside a loop ends the block, at -O0 and -O3 alike,
UNLESS the kernel returned conditionally at its top level before the loop -- then the loop's return
acts as a break and the block runs on after the loop. The recording refuses that shape (and only
that one: a return inside an if after the loop, or at the top after it, measured right). The writer
does not gate a return under a loop at 13.3, and tileirdisasm / tileiras 13.4.92 take such 13.3 bytes.

The token join. ``t_tok_join(toks)`` joins two or more chains of the recorder's token and makes
the join the current token. d_fork2 is its one client. The lowering already orders memory per
parameter (lower/tokens.py), so two chains that touch disjoint parameters are unordered against
each other with no help; the recorder therefore REFUSES a join whose chains it cannot show to be
disjoint -- a parameter one chain writes and the other reads or writes, or a pointer-tile access
(whose parameter nobody can name) in one chain beside any access in the other -- and the join
lowers to nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .. import ir
from ..dtypes import BY_NAME
from ..elementwise import OPS
from ..hostmath import unsigned
from ..lower.core import lowering
from ..lower.tokens import READS, WRITES, param_of
from ..prog import Attrs, Handle, Region
from ..ref.core import _Return, interp
from .arith import CmpI, Select
from .control import _is_token, run_region
from .recording import Recording

I1_0D = ir.tile((), "i1")


# ---- what each operation records ----------------------------------------------------------------


@dataclass(frozen=True)
class While(Attrs, kind="while"):
    inits: tuple[Handle, ...]
    cond: Handle | None


@dataclass(frozen=True)
class ReturnIf(Attrs, kind="return_if"):
    cond: Handle


@dataclass(frozen=True)
class TokJoin(Attrs, kind="tok_join"):
    toks: tuple[Handle, ...]


class LoopRecording(Recording):
    # -- d_loop ------------------------------------------------------------------------------------
    def t_while_begin(self, inits):
        params = []
        for h in inits:
            inf = self.info(h)
            params.append(self.new(inf.kind, inf.dtype, inf.shape))
        op = self.emit(While(inits=tuple(inits), cond=None), ())
        region = Region(tuple(params), [])
        op.regions = (region,)
        self.push("while", op, region)
        return params

    def t_while_end(self, cond, outs):
        if self.frames[-1].kind == "while":
            self._mask0(cond, "d_loop's body answers", "the loop stops")
        f = self.pop("while")
        assert f.op is not None and f.region is not None  # a region an operation opened has both
        outs = tuple(outs)
        self._check_yields(outs, f.region.params, "the d_loop body")
        f.region.yields = outs
        f.op.a = replace(While.of(f.op), cond=cond)
        res = tuple(self.new(self.info(p).kind, self.info(p).dtype, self.info(p).shape) for p in f.region.params)
        f.op.res = res
        return self.closed(list(res))

    def _mask0(self, cond, what, meaning):
        inf = self.info(cond)
        if inf.kind != "val" or inf.dtype != "i1" or inf.shape != ():
            raise self.refuse(f"{what} a {inf.dtype}{list(inf.shape)} {inf.kind}; it must be a rank-0 i1 mask, "
                              f"true where {meaning}",
                              "a rank-0 comparison (lt(get(c), 1.0) on rank-0 tiles, idx_lt(i, n)); reduce a "
                              "wider mask first")

    # -- d_return_if -------------------------------------------------------------------------------
    def t_return_if(self, cond):
        self._mask0(cond, "d_return_if's condition is", "the block is to end")
        k = self.inside("for", "reduce", "scan")
        if k:
            where = {"for": "a d_range body (a for loop)", "reduce": "a reduction body",
                     "scan": "a scan body"}[k]
            raise self.refuse(f"d_return_if inside {where}: the dialect allows a return under the entry, an if "
                              "and a loop only (a for must run to its end; a reduction's and a scan's bodies "
                              "are pure)",
                              "a d_loop whose body calls d_return_if, or compute a flag here and call "
                              "d_return_if after the region")
        if self.inside("while") and any(op.kind == "return_if" for op in self.prog.ops):
            raise self.refuse("d_return_if inside a d_loop after a d_return_if at the top of the kernel: tileiras "
                              "13.4.92 makes the loop's return a break there -- the block carries on after the loop "
                              "(measured on an H200, sm_90, at --opt-level 0 and 3; either return alone is right)",
                              "move the earlier d_return_if after the loop, or fold its condition into the loop's "
                              "(d_return_if(or_mask(early, cond)) inside the body)")
        self.emit(ReturnIf(cond=cond), ())

    # -- d_fork2 -----------------------------------------------------------------------------------
    def t_tok_join(self, toks):
        toks = list(dict.fromkeys(toks))  # a chain that issued nothing still holds the token it started from
        if len(toks) == 1 and self.info(toks[0]).kind == "token":
            self.t_tok_set(toks[0])
            return toks[0]
        if len(toks) < 2:
            raise self.refuse(f"t_tok_join of {len(toks)} token(s): a join merges two or more chains",
                              "d_fork2(a, b)")
        for t in toks:
            if self.info(t).kind != "token":
                raise self.refuse("t_tok_join joins memory ordering tokens (t_tok_get's answers), not tiles",
                                  "d_fork2(a, b), which gets and joins the tokens itself")
        self._check_disjoint(toks)
        r = self.new("token", "token", ())
        self.emit(TokJoin(toks=tuple(toks)), (r,))
        self.t_tok_set(r)
        return r

    def _chain_accesses(self, tok, producer):
        """The memory operations reached walking back from ``tok`` through the current region."""
        seen, out, todo = set(), set(), [tok]
        while todo:
            t = todo.pop()
            if t in seen:
                continue
            seen.add(t)
            got = producer.get(t)
            if got is None:
                continue
            op, prevs = got
            out.add(op)
            todo.extend(prevs)
        return out

    def _check_disjoint(self, toks):
        producer = {}
        for op in self.frames[-1].ops:
            outs = [r for r in op.res if self.prog.info[r].kind == "token"]
            if not outs:
                continue
            a = op.a
            if isinstance(a, TokJoin):
                prevs = list(a.toks)
            elif hasattr(a, "tok"):
                prevs = [a.tok]
            else:  # a region carrying the token: its init is the token that entered it
                prevs = [h for h in getattr(a, "inits", ()) if self.prog.info[h].kind == "token"]
            for t in outs:
                producer[t] = (op, prevs)
        reach = [self._chain_accesses(t, producer) for t in toks]
        touched = []
        for i, ops in enumerate(reach):
            others = set().union(*(r for j, r in enumerate(reach) if j != i))
            touched.append(self._accesses(ops - others))
        for i in range(len(toks)):
            for j in range(i + 1, len(toks)):
                clash = _clash(touched[i], touched[j])
                if clash:
                    raise self.refuse(f"d_fork2's two chains may touch the same element: {clash}; the chains are "
                                      "not ordered against each other, so they must touch disjoint buffers (both "
                                      "may read one)",
                                      "issue the two in sequence (no d_fork2), or give each chain its own "
                                      "parameter")

    def _accesses(self, ops):
        """{parameter or None: 'w' or 'r'} over the memory operations of ``ops`` and their regions."""
        acc: dict = {}
        for top in ops:
            for op in self.prog.walk([top]):
                if op.kind not in WRITES + READS:  # print, token_only: in the chain, touching no element
                    continue
                p = param_of(self.prog, op)
                mode = "w" if op.kind in WRITES else "r"
                if acc.get(p) != "w":
                    acc[p] = mode
        return acc


def _clash(a: dict, b: dict) -> str | None:
    for p, m in a.items():
        for q, n in b.items():
            if p is None or q is None:
                return "a pointer-tile access (whose buffer cannot be named) beside another access"
            if p == q and "w" in (m, n):
                return f"both touch parameter {p} and one of them writes it"
    return None


# ---- lowering ----------------------------------------------------------------------------------


def stops_on_first_iteration(prog, op) -> bool:
    """Whether the d_loop ``op`` stops on its first iteration whatever the data: its stop condition,
    with the carried values as they enter (the inits), holds by the recording's constants alone --
    rank-0 compares and selects are followed; anything else is unknown and answers False."""
    a = While.of(op)
    (region,) = op.regions
    known = {p: prog.consts[h] for p, h in zip(region.params, a.inits) if h in prog.consts}
    defs = {r: o for o in region.ops for r in o.res}

    def ev(h, depth=0):
        if h in known:
            return known[h]
        if h in prog.consts:
            return prog.consts[h]
        o = defs.get(h)
        if o is None or depth > 64 or prog.info[h].shape != ():
            return None
        if o.kind == "select":
            s = Select.of(o)
            c = ev(s.cond, depth + 1)
            if c is None:
                x, y = ev(s.a, depth + 1), ev(s.b, depth + 1)
                return x if x is not None and x == y else None
            return ev(s.a if c else s.b, depth + 1)
        if o.kind == "cmpi":
            m = CmpI.of(o)
            x, y = ev(m.a, depth + 1), ev(m.b, depth + 1)
            if x is None or y is None:
                return None
            xs, ys = np.asarray(int(x), np.int64), np.asarray(int(y), np.int64)
            if not m.signed:
                bits = BY_NAME[m.dtype].bits
                xs, ys = unsigned(xs, bits), unsigned(ys, bits)
            return bool(OPS[("cmpi", m.pred)].host(xs, ys))
        return None

    return a.cond is not None and bool(ev(a.cond))


def _lower_once(lw, op):
    """A d_loop that stops on its first iteration (``stops_on_first_iteration``) as what it is: its
    body once, in the enclosing region, and the loop's results the values that entered it. Exact: the
    loop answers the entering values and its body runs to its end every time. tileiras 13.4.92's
    optimiser fails on such loops (docs/assembler-defect.md, the fifth defect)."""
    a = While.of(op)
    (region,) = op.regions
    for p, h in zip(region.params, a.inits):
        lw.bind(p, lw.tokens.entry if _is_token(lw, p) else lw.val(h))
    lw.ops(region.ops)
    for h, init in zip(op.res, a.inits):
        lw.bind(h, lw.tokens.entry if _is_token(lw, h) else lw.val(init))


@lowering("while")
def _lower_while(lw, op):
    """WhileLoop: the body, then if cond { break <entering values, current tokens> } else { yield },
    then continue <next values, current tokens>. A loop that stops on its first iteration by its
    constants is its body once (``_lower_once``)."""
    if stops_on_first_iteration(lw.prog, op):
        return _lower_once(lw, op)
    a = While.of(op)
    (region,) = op.regions
    keep = [i for i, p in enumerate(region.params) if not _is_token(lw, p)]
    tys = [lw.ty(region.params[i]) for i in keep]
    inits = [lw.val(a.inits[i]) for i in keep]
    plan = lw.tokens.loop_plan(region.ops)
    tok_inits = lw.tokens.loop_inits(plan)
    carried = [lw.fresh() for _ in tys]
    tok_carried = [lw.fresh() for _ in tok_inits]
    for p in region.params:
        if _is_token(lw, p):
            lw.bind(p, lw.tokens.entry)
    outer_racc = getattr(lw.tokens, "_racc", None)  # enter_body overwrites it; an enclosing loop needs it back
    saved = lw.tokens.enter_body(plan, [ir.Val(t) for t in tok_carried])
    all_tys = tuple(tys) + (ir.TOKEN,) * len(tok_inits)
    with lw.region() as got:
        for i, c in zip(keep, carried):
            lw.bind(region.params[i], ir.Val(c))
        lw.ops(region.ops)
        nxt = [lw.val(region.yields[i]) for i in keep]
        toks = lw.tokens.body_yields(plan)
        cond = lw.val(a.cond)
        with lw.region() as brk:
            lw.emit(ir.BreakVals(tuple([ir.Val(c) for c in carried] + toks), all_tys))
        with lw.region() as other:
            lw.emit(ir.YieldVals((), ()))
        lw.emit(ir.IfElse((), (), cond, I1_0D, brk[0], other[0]), (brk[1], other[1]))
        lw.emit(ir.Cont(tuple(nxt + toks), all_tys))
    body, owners = got
    results = [lw.fresh() for _ in tys]
    tok_results = [lw.fresh() for _ in tok_inits]
    lw.tokens.leave_body(saved, plan, [ir.Val(t) for t in tok_results])
    if outer_racc is not None:
        lw.tokens._racc = outer_racc
    lw.emit(ir.WhileLoop(tuple(results + tok_results), all_tys, tuple(inits + tok_inits),
                         tuple(carried + tok_carried), body), (owners,))
    it = iter(results)
    for h in op.res:
        lw.bind(h, lw.tokens.entry if _is_token(lw, h) else ir.Val(next(it)))


@lowering("return_if")
def _lower_return_if(lw, op):
    cond = lw.val(ReturnIf.of(op).cond)
    with lw.region() as then:
        lw.emit(ir.Ret())
    with lw.region() as other:
        lw.emit(ir.YieldVals((), ()))
    lw.emit(ir.IfElse((), (), cond, I1_0D, then[0], other[0]), (then[1], other[1]))


@lowering("tok_join")
def _lower_tok_join(lw, op):
    # the lowering orders memory per parameter; the recorder's chains are not copied into the bytes
    lw.bind(op.res[0], lw.tokens.entry)


# ---- host reference ---------------------------------------------------------------------------


@interp("while")
def _ref_while(it, op):
    (region,) = op.regions
    vals = [it.val(h) for h in While.of(op).inits]
    while True:
        nxt = run_region(it, region, vals)
        if bool(np.asarray(it.val(While.of(op).cond))):
            break
        vals = nxt
    for h, v in zip(op.res, vals):
        it.set(h, v)


@interp("return_if")
def _ref_return_if(it, op):
    if bool(np.asarray(it.val(ReturnIf.of(op).cond))):
        raise _Return()


@interp("tok_join")
def _ref_tok_join(it, op):
    return None
