"""The fuzzer's known causes of tileiras 13.4.92's loop defects (docs/assembler-defect.md, the fifth and
sixth): the models of what the device did with a while loop (its first exit, stale carried values) and
the matchers diff/fuzzknown.py's table holds, with when a run assembled a program at -O0."""

from __future__ import annotations

import numpy as np

from .fuzzmodel import (
    ALLOCA_ANY_O0,
    ALLOCA_O0,
    CARRY_SWAP_O0,
    WHILE_O0,
    WORKAROUNDS,
    _job,
    _same_verdict,
    model_judged,
    run_with,
)


def stale_while(num: int, j: int, which=None):
    """The while loop of operation ``num`` answering, for its data results ``which`` (all: None),
    the carried values that ENTERED iteration ``j`` (the last one it ran where it ran fewer) instead
    of those entering its last iteration: campaign 2's seeds 85 217 4138 6651 7290 9254 (j = the
    exit iteration - 1), 7529 (j = 1 of 3), 8215 (one result of two)."""
    from ..families.control import run_region
    from ..families.loops import While, _ref_while

    def rule(it, op):
        if op.num != num:
            return _ref_while(it, op)
        (region,) = op.regions
        vals = [it.val(h) for h in While.of(op).inits]
        seen = [vals]
        while True:
            nxt = run_region(it, region, vals)
            if bool(np.asarray(it.val(While.of(op).cond))):
                break
            vals = nxt
            seen.append(vals)
        old = seen[min(j, len(seen) - 1)]
        for i, h in enumerate(op.res):
            it.set(h, (old if which is None or i in which else vals)[i])

    return rule


def while_exits(desc: dict) -> dict:
    """{operation number: sorted iterations at which the host's while loop stopped} for ``desc``
    (0: the loop stopped on its first iteration; every block, every time it ran)."""
    from ..families.control import run_region
    from ..families.loops import While
    from .fuzzbuild import build, make_args

    try:
        b = build(desc)
    except Exception:
        return {}
    out: dict = {}

    def rule(it, op):
        (region,) = op.regions
        vals, i = [it.val(h) for h in While.of(op).inits], 0
        while True:
            nxt = run_region(it, region, vals)
            if bool(np.asarray(it.val(While.of(op).cond))):
                break
            vals, i = nxt, i + 1
        out.setdefault(op.num, set()).add(i)
        for h, v in zip(op.res, vals):
            it.set(h, v)

    try:
        run_with(b.prog, make_args(b), b.grid, {"while": rule})
    except Exception:
        pass
    return {k: sorted(v) for k, v in out.items()}


def once_loops(desc: dict) -> list:
    """The operation numbers of ``desc``'s while loops that the lowering writes as their body once
    (families/loops.py stops_on_first_iteration: the stop holds on the first iteration by constants)."""
    from ..families.loops import stops_on_first_iteration
    from .fuzzbuild import build

    try:
        prog = build(desc).prog
    except Exception:
        return []
    return sorted(op.num for op in prog.walk() if op.kind == "while" and stops_on_first_iteration(prog, op))


def _level_triggers():
    """Each -O0 workaround's name and its trigger over the lowered kernel (assemble.py's)."""
    from .. import assemble as asm

    return ((WHILE_O0, asm.holds_while_loop), (ALLOCA_O0, asm.alloca_in_a_loop),
            (CARRY_SWAP_O0, asm.carry_yielded_to_another), (ALLOCA_ANY_O0, asm.holds_alloca))


def O0_triggers(desc: dict) -> tuple[str, ...]:  # noqa: N802 - the level's name
    """The -O0 workarounds whose trigger ``desc``'s lowered program reaches: WHILE_O0 (a while loop the
    lowering does not write once, assemble.holds_while_loop), ALLOCA_O0 (an alloca in a loop),
    CARRY_SWAP_O0 (a loop passing one carry's entering value to another), ALLOCA_ANY_O0 (an alloca anywhere)."""
    from .. import lower
    from .fuzzbuild import build

    try:
        k = lower(build(desc).prog)
    except Exception:
        return ()
    return tuple(name for name, trigger in _level_triggers() if trigger(k))


def assembled_at_O0(outcome: dict, desc: dict | None) -> bool:
    """Whether the run that answered ``outcome`` assembled ``desc`` at -O0 by an -O0 workaround (WHILE_O0,
    ALLOCA_O0, CARRY_SWAP_O0 among its ``workarounds``; none listed: WORKAROUNDS) because its program
    reaches that workaround's trigger: there a re-run at -O0 is the same cubin, and "right at -O0, wrong
    at the default level" cannot be said."""
    if desc is None:
        return False
    ws = outcome.get("workarounds", WORKAROUNDS)
    return any(name in ws for name in O0_triggers(desc))


def match_while_first_exit(outcome: dict, desc: dict):
    """A while loop that stops on its first iteration. Where the run predates the workaround (the lowering
    now writes such a loop, when its constants decide it, as its body once) or the lowering keeps the
    loop in a run without WHILE_O0 (which assembles a kept loop at -O0): a tileiras failure (campaign
    2's 3439 3904 9767, CPU-reproduced: they assemble at -O0 and, written once, at the default level),
    or every differing region left as it was before the launch, whole -- the host's answer with those
    regions unwritten is the device's verdict (campaign 2: 9 programs; the shrunk 6 and 2319 are right
    at -O0)."""
    if outcome.get("status") not in ("differ", "assemble_error") or desc is None:
        return None
    first = sorted(n for n, ex in while_exits(desc).items() if 0 in ex)
    if not first:
        return None
    once = once_loops(desc)
    ran = outcome.get("workarounds", WORKAROUNDS)
    written_once = set(once) if "while-first-exit" in ran else set()
    at_o0 = set(first) - written_once if WHILE_O0 in ran else set()  # kept as loops, assembled at -O0
    if set(first) <= written_once | at_o0:
        return None  # written once by the lowering, or kept and assembled at -O0: a failure now is not this loop's
    if outcome["status"] == "assemble_error":
        return {"while_ops_stopping_first": first, "written_once_now": once,
                "model": "tileiras 13.4.92 fails to assemble (or crashes on) the loop at its default level"}
    regs = (outcome.get("verdict") or {}).get("regions") or []
    if not regs:
        return None
    from .fuzzjudge import Answer
    from .fuzzrun import judge_job

    job = _job(desc)
    if job is None:
        return None
    lay, host = job["layout"], job["host"]
    names = [n for n, _ in lay.params]
    dev = Answer(outs={n: np.array(v, copy=True) for n, v in host.outs.items()})
    for r in regs:
        reg = next((g for g in lay.regions if g.buf == r.get("buf") and g.step == r.get("step")), None)
        if reg is None or r.get("buf") not in dev.outs:
            return None
        before = np.asarray(job["args"][names.index(r["buf"])]).reshape(-1)
        span = slice(reg.offset, reg.offset + reg.size)
        dev.outs[r["buf"]].reshape(-1)[span] = before[span]
    if not _same_verdict(outcome, judge_job(job, dev)):
        return None
    return {"while_ops_stopping_first": first, "written_once_now": once,
            "model": "every differing region unwritten (as before the launch)",
            "regions": [{"buf": r["buf"], "step": r["step"], "bad": r["bad"]} for r in regs]}


def match_while_stale_carries(outcome: dict, desc: dict):
    """A while loop that ran more than one iteration answers, for all its results or one of them,
    the carried values entering an EARLIER iteration (diff.fuzzknown.stale_while): the model
    reproduces every differing region. Not in a run with the WHILE_O0 workaround: every loop this
    model can explain runs past its first iteration, so the lowering keeps it and the run assembled it
    at -O0, where campaign 2's nine were all right (bench/results/fuzz_while_O0_h200.json): a failure
    there is news."""
    if outcome.get("status") != "differ" or desc is None:
        return None
    if WHILE_O0 in outcome.get("workarounds", WORKAROUNDS):
        return None
    loops = {n: ex for n, ex in while_exits(desc).items() if max(ex) >= 1}
    if not loops:
        return None
    from .fuzzbuild import build

    try:
        prog = build(desc).prog
    except Exception:
        return None
    nres = {op.num: len(op.res) for op in prog.walk() if op.kind == "while"}
    for num, ex in sorted(loops.items()):
        for j in range(max(ex)):
            for which in [None] + [{i} for i in range(nres.get(num, 0))]:
                ev = model_judged(desc, outcome, {"while": stale_while(num, j, which)})
                if ev:
                    return dict(ev, model="diff.fuzzknown.stale_while", while_op=num, exits=ex, entering=j,
                                results="all" if which is None else sorted(which))
    return None


__all__ = ["stale_while", "while_exits", "once_loops", "O0_triggers", "assembled_at_O0",
           "match_while_first_exit", "match_while_stale_carries"]
