"""The memory ordering tokens of the lowered kernel.

The recorder keeps one token chain, in program order, as the spec's handler does. The lowering
does not copy that line into the bytes: a chain through every load would order each load after
the previous one, and a loop carrying it serialises the loads of successive iterations (measured
on the H200: a view matmul whose loads were chained ran at 24 TFLOP/s where NVIDIA's cuTile,
whose loads all take the entry token, reaches 622 with the same tiles and assembler).

Instead, ordering is kept per parameter, on the assumption -- stated in docs/design.md and
enforced nowhere else -- that distinct buffer parameters do not overlap:

* a parameter the kernel never writes needs no order: its loads take the entry token;
* for a parameter it writes, a load takes the token of the last store to it (W) and the load's
  own token joins the reads since that store (R); a store takes W joined with R, and becomes W;
* a loop whose body stores to a parameter carries that parameter's W (R folded in on entry and
  at the end of every iteration); a loop whose body only reads a written parameter carries a
  token that joins those reads, which later stores wait for -- the loads themselves still take
  the W from outside the loop, so iterations do not wait on each other's loads.
"""

from __future__ import annotations

from .. import ir

TOKEN = ir.TOKEN


def memory_params(prog, ops, kinds) -> set:
    """The parameters the memory operations of ``kinds`` in ``ops`` (regions included) touch."""
    out = set()
    for op in prog.walk(ops):
        if op.kind in kinds:
            out.add(param_of(prog, op))
    return out


WRITES = ("store", "store_view", "scatter", "atomic_rmw", "atomic_cas", "atomic_red_view", "store_ptrs")
READS = ("load", "load_view", "gather", "load_ptrs")


def param_of(prog, op):
    a = op.a  # any memory operation's record: one with a param, else one reading a view
    if hasattr(a, "param"):
        return a.param
    if hasattr(a, "view"):
        return prog.views[a.view]["param"]
    return None


class TokenState:
    """Per scope: the last-store token of each written parameter and the reads since."""

    def __init__(self, lw, entry_tok):
        self.lw = lw
        self.entry = entry_tok
        self.written = memory_params(lw.prog, lw.prog.ops, WRITES)
        if None in self.written:  # a store through pointers nobody can follow may reach any buffer
            self.written |= {i for i, p in enumerate(lw.prog.params) if p.by_ptr}
        self.w: dict = {}
        self.r: dict = {}

    def _join(self, toks):
        toks = [t for i, t in enumerate(toks) if t not in toks[:i]]
        if len(toks) == 1:
            return toks[0]
        dst = self.lw.fresh()
        self.lw.emit(ir.JoinTokens(dst, tuple(toks)))
        return ir.Val(dst)

    def write_of(self, p):
        return self.w.get(p, self.entry)

    def for_read(self, p):
        """The token a load of ``p`` takes (a load through pointers nobody can follow waits for the
        last store to every written space)."""
        if p is None:  # the entry token is left out: every other token already follows it
            toks = [self.write_of(k) for k in sorted(self.written, key=str)]
            toks = [t for t in dict.fromkeys(toks) if t != self.entry]
            return self._join(toks) if toks else self.entry
        return self.write_of(p) if p in self.written else self.entry

    def after_read(self, p, tok) -> None:
        if p in self.written:
            self.r.setdefault(p, []).append(tok)

    def for_write(self, p):
        """The token a store to ``p`` takes: the reads since the last store, joined (each of them
        took that store's token, so it is implied), or the last store when there were none."""
        reads = self.r.get(p, [])
        return self._join(reads) if reads else self.write_of(p)

    def after_write(self, p, tok) -> None:
        self.w[p] = tok
        self.r[p] = []

    # -- loops ----------------------------------------------------------------------------------
    def loop_plan(self, region_ops):
        """(parameters whose W the loop carries, parameters whose reads it carries), each sorted."""
        prog = self.lw.prog
        writes = memory_params(prog, region_ops, WRITES)
        reads = memory_params(prog, region_ops, READS) & self.written
        return sorted(writes, key=str), sorted(reads - writes, key=str)

    def loop_inits(self, plan):
        carried_w, carried_r = plan
        inits = []
        for p in carried_w:
            inits.append(self.for_write(p))  # fold earlier reads in: a store inside waits for them
        for p in carried_r:
            inits.append(self.write_of(p))
        return inits

    def enter_body(self, plan, params):
        """Inside the body: the carried tokens as the body sees them. Answers the outer state."""
        saved = (dict(self.w), {k: list(v) for k, v in self.r.items()}, getattr(self, "_racc", {}))
        carried_w, carried_r = plan
        it = iter(params)
        for p in carried_w:
            self.w[p] = next(it)
            self.r[p] = []
        self._racc = {p: next(it) for p in carried_r}
        for p in carried_r:
            self.r[p] = []
        return saved

    def body_yields(self, plan):
        carried_w, carried_r = plan
        out = [self.for_write(p) for p in carried_w]
        out += [self._join([self._racc[p]] + self.r.get(p, [])) for p in carried_r]
        return out

    def leave_body(self, saved, plan, results) -> None:
        self.w, self.r, self._racc = saved  # an enclosing loop's read tokens come back with its state
        carried_w, carried_r = plan
        it = iter(results)
        for p in carried_w:
            self.after_write(p, next(it))
        for p in carried_r:  # the loop's reads join the reads made before it, which later stores also wait for
            self.r[p] = self.r.get(p, []) + [next(it)]
