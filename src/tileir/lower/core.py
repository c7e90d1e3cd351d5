"""TileProg -> Kernel: the lowering's machinery. The rules themselves live with their families
(``tileir.families.*``), registered here by the recorded operation's kind as ``tileir.families``
imports them (the recorder imports that package, so every recorded program meets a full table;
tests/test_rules.py holds every kind the recorder emits to a rule). This module imports no family.

The lowerer keeps, per region scope, the value each handle lowered to and a memo of values worth
making once per scope (block ids, constants, a parameter's pointer tile, a load's offset ladder),
so a masked load costs no instruction more than an unmasked one. Every instruction records which
program operation it came from (its ``Owner``).
"""

from __future__ import annotations

from contextlib import contextmanager

from .. import ir
from ..dtypes import BY_NAME
from ..errors import TileirError
from ..prog import TileProg
from ..surface.hints import split_view_hints

RULES: dict = {}
_ABSENT = object()


def lowering(*kinds):
    def reg(fn):
        for k in kinds:
            RULES[k] = fn
        return fn

    return reg


class _Scope:
    __slots__ = ("env", "memo", "out", "owners")

    def __init__(self):
        self.env: dict = {}
        self.memo: dict = {}
        self.out: list = []
        self.owners: list = []


class Lowerer:
    def __init__(self, prog: TileProg):
        self.prog = prog
        self.next_id = 0
        self.scopes = [_Scope()]
        self.cur_op = 0
        self.tokens = None  # made when the entry token is (lower/tokens.py)
        self.param_refs: dict = {}  # buffer parameter -> its pointer with the alignment claim attached
        self.owners: dict = {}  # operation number -> the Owner of its instructions without bodies
        self.view_load_hints: tuple = ()  # every view load's own hints (the entry's view_load_latency)
        self.view_store_hints: tuple = ()  # every view store's own hints (the entry's view_store_no_tma)
        for h, pos in prog.arg_handles.items():
            self.scopes[0].env[h] = ir.Arg(pos)

    # -- values -----------------------------------------------------------------------------
    def fresh(self) -> int:
        v = self.next_id
        self.next_id += 1
        return v

    def ty(self, h) -> ir.Ty:
        inf = self.prog.info[h]
        if inf.kind == "token":
            return ir.TOKEN
        if inf.kind == "ptrs":
            return ir.Tile(inf.shape, ir.PtrTo(inf.dtype))
        if type(inf.dtype) is str:
            return ir.tile(inf.shape, inf.dtype)  # shared
        return ir.Tile(inf.shape, ir.Num(inf.dtype))

    def bind(self, h, ref) -> None:
        self.scopes[-1].env[h] = ref

    def val(self, h) -> ir.Ref:
        for s in reversed(self.scopes):
            r = s.env.get(h)
            if r is not None:
                return r
        if h in self.prog.consts:
            inf = self.prog.info[h]
            return self.constant(inf.dtype, inf.shape, self.prog.consts[h])
        raise TileirError(f"lowering: value {h} is used outside the region that defines it",
                          kernel=self.prog.name, op=self.cur_op)

    def memo_get(self, key):
        for s in reversed(self.scopes):
            got = s.memo.get(key, _ABSENT)  # one hash of the key a scope, not two
            if got is not _ABSENT:
                return got
        return None

    def memo_put(self, key, value):
        self.scopes[-1].memo[key] = value
        return value

    def constant(self, dtype: str, shape, value) -> ir.Ref:
        shape = tuple(shape)
        key = ("const", dtype, shape, value if value == value else "nan", str(value))
        got = self.memo_get(key)
        if got is not None:
            return got
        dst = self.fresh()
        t = ir.tile(shape, dtype)
        if BY_NAME[dtype].is_float:
            self.emit(ir.ConstFloat(dst, t, float(value)))
        else:
            self.emit(ir.ConstInt(dst, t, int(value)))
        return self.memo_put(key, ir.Val(dst))

    # -- instructions -------------------------------------------------------------------------
    def emit(self, instr, inner=()) -> None:
        s = self.scopes[-1]
        s.out.append(instr)
        if inner:
            s.owners.append(ir.Owner(self.cur_op, tuple(inner)))
            return
        own = self.owners.get(self.cur_op)  # most instructions own no body: one Owner per operation
        if own is None:
            own = self.owners[self.cur_op] = ir.Owner(self.cur_op, ())
        s.owners.append(own)

    def result(self, op, cls, *args) -> ir.Val:
        """The op's result as one instruction: ``cls(dst, *args)`` emitted for a fresh ``dst``, and
        ``op.res[0]`` bound to it. Answers the value (a store's token, say, for the token chain)."""
        dst = self.fresh()
        self.emit(cls(dst, *args))
        v = ir.Val(dst)
        self.bind(op.res[0], v)
        return v

    def results(self, op, n: int, cls, *args) -> tuple:
        """As ``result`` for an instruction of ``n`` results (a load's value and token):
        ``cls(dst_1, ..., dst_n, *args)``, ``op.res[i]`` bound to the i-th; answers the n values."""
        vals = tuple(ir.Val(self.fresh()) for _ in range(n))
        self.emit(cls(*(v.id for v in vals), *args))
        for h, v in zip(op.res, vals):
            self.bind(h, v)
        return vals

    @contextmanager
    def region(self):
        """A nested scope; yields a list that receives (instructions, owners) when it closes."""
        self.scopes.append(_Scope())
        got: list = []
        try:
            yield got
        finally:
            s = self.scopes.pop()
            got.extend([tuple(s.out), tuple(s.owners)])

    def ops(self, ops) -> None:
        for op in ops:
            rule = RULES.get(op.kind)
            if rule is None:
                raise TileirError(f"lowering has no rule for {op.kind}", kernel=self.prog.name, op=op.num)
            saved = self.cur_op
            self.cur_op = op.num
            rule(self, op)
            self.cur_op = saved


def lower(prog: TileProg) -> ir.Kernel:
    """The TileProg as a typed Kernel, every instruction with its Owner. An entry's
    ``view_load_latency`` (surface/hints.py) becomes each view load's ``latency``."""
    lw = Lowerer(prog)
    entry_hints, lw.view_load_hints, lw.view_store_hints = split_view_hints(prog.hints)
    lw.ops(prog.ops)
    s = lw.scopes[0]
    return ir.Kernel(prog.name, tuple(prog.params), tuple(prog.globals), tuple(s.out), entry_hints,
                     owners=tuple(s.owners))
