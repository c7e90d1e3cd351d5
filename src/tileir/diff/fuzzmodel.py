"""How the fuzzer recognises a cause it has explained (diff/fuzzknown.py's table uses it): the outcome
classes, the workarounds a run has, a cause's record, and the MODEL machinery -- the host reference with
one rule replaced by what the device was seen to do, which must reproduce every differing region of a
failure (its bad-lane count and the values its verdict lists) for the failure to be that cause."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

HOST = "host-reference error"
TILEIRAS = "tileiras wrong answer"
JUDGE = "judge too strict"

# the workarounds the lowering and the assembler apply now (a campaign report records them: "workarounds";
# an outcome may carry its run's: ``run_workarounds``); a report without the key ran with OLD_WORKAROUNDS
# (campaign 2, the re-runs of its failures). WHILE_O0: a program whose lowering keeps a while loop is
# assembled at -O0 (assemble.holds_while_loop; docs/assembler-defect.md's sixth defect) -- only where no
# level is forced and the tileiras version has that defect.
WHILE_O0 = "while-O0"
# NO_TMA_TAIL: a store_view whose tile can cross the contiguous end off a 16-byte boundary or before a
# pitch gap carries allow_tma = false (families/views.py tail_may_share_a_group; the fourth defect)
NO_TMA_TAIL = "no-tma-store-tail"
# NO_TMA_STRIDED: every load_view of a strided view carries allow_tma = false (families/views.py)
NO_TMA_STRIDED = "no-tma-strided-load"
# NO_TMA_GAP_LOAD: a load_view whose tile can cross a contiguous end with a pitch gap after it carries
# allow_tma = false (families/views.py load_may_read_a_gap)
NO_TMA_GAP_LOAD = "no-tma-gap-load"
# ALLOCA_O0: a kernel with an alloca in a loop is assembled at -O0 too (assemble.alloca_in_a_loop, the same
# defect entry as WHILE_O0, so a run has all three -O0 workarounds or none)
ALLOCA_O0 = "alloca-loop-O0"
# ALLOCA_ANY_O0: a kernel with an alloca anywhere is assembled at -O0 too (assemble.holds_alloca; the same entry)
ALLOCA_ANY_O0 = "alloca-O0"
# EXTRACT_CUT: an extract of more than tileshape.EXTRACT_SLICES slices is recorded one dimension at a time
# (families/tileshape.py WORKAROUND; the ninth defect: tileiras does not finish such an extract)
EXTRACT_CUT = "extract-by-dimension"
# CARRY_SWAP_O0: a kernel with a loop that continues with one carry's entering value as another's is
# assembled at -O0 too (assemble.carry_yielded_to_another; the same defect entry)
CARRY_SWAP_O0 = "carry-swap-O0"
# PACK_WHOLE: pack_bytes of an extract's result is recorded as the whole tile's pack with its bytes extracted
# (families/tileshape.py WORKAROUND)
PACK_WHOLE = "pack-whole-then-extract"
WORKAROUNDS = ("tf32-k4", "while-first-exit", WHILE_O0, NO_TMA_TAIL, NO_TMA_STRIDED, ALLOCA_O0, CARRY_SWAP_O0,
               NO_TMA_GAP_LOAD, PACK_WHOLE, ALLOCA_ANY_O0, EXTRACT_CUT)
_LEVEL = (WHILE_O0, ALLOCA_O0, CARRY_SWAP_O0, ALLOCA_ANY_O0)  # the workarounds a forced level other than 0 takes away
OLD_WORKAROUNDS = ("tf32-k4",)


def lower_as_run(workarounds) -> None:
    """Make this process's lowering write the TMA workarounds as a run with ``workarounds`` (a report's
    list) did: a study that draws a campaign's programs again (bench/view_store_tail_trigger.py,
    bench/strided_load_trigger.py) must see the bytes that campaign assembled."""
    from ..families import views

    views.HINT["store_tail"] = NO_TMA_TAIL in workarounds
    views.HINT["strided_load"] = NO_TMA_STRIDED in workarounds
    views.HINT["gap_load"] = NO_TMA_GAP_LOAD in workarounds
    from ..families import tileshape

    tileshape.WORKAROUND["pack_of_extract"] = PACK_WHOLE in workarounds
    tileshape.WORKAROUND["extract_by_dimension"] = EXTRACT_CUT in workarounds
    from .. import assemble

    assemble.WORKAROUND["any_alloca"] = ALLOCA_ANY_O0 in workarounds


def run_workarounds(opt_level=None, gpu_name: str = "sm_90", tileiras: str | None = None) -> tuple[str, ...]:
    """WORKAROUNDS as a run has them: without WHILE_O0 where the run forces a level other than 0
    (``opt_level``, which wins over the workaround) or where tileiras version ``tileiras`` (None: the
    installed one, if any) assembles while loops for ``gpu_name`` at its own level. A run forced to -O0
    keeps it: its while loops were assembled at -O0 all the same."""
    from .. import assemble as asm

    if opt_level is not None:
        return WORKAROUNDS if opt_level == 0 else tuple(w for w in WORKAROUNDS if w not in _LEVEL)
    if tileiras is None:
        try:
            tileiras = asm.tileiras_version()
        except Exception:  # no tileiras: nothing is assembled; the workaround stands as written
            return WORKAROUNDS
    return WORKAROUNDS if asm.while_loops_at_O0(tileiras, gpu_name) else \
        tuple(w for w in WORKAROUNDS if w not in _LEVEL)


@dataclass(frozen=True)
class Cause:
    name: str
    cls: str
    state: str  # open | worked around | fixed
    why: str
    status: str | None = None  # the outcome status it matches (None: any)
    detail: str | None = None  # a pattern the outcome's detail must hold
    match: Callable | None = None  # (outcome, desc) -> evidence or None


def run_with(prog, args, grid, rules: dict) -> None:
    """The host reference over ``args`` with ``rules`` (op kind -> rule) in place of its own."""
    from ..ref.core import RULES, Interp

    class Model(Interp):
        def exec(self, ops):
            for op in ops:
                self.cur_op = op.num
                (rules.get(op.kind) or RULES[op.kind])(self, op)

    with np.errstate(all="ignore"):
        Model(prog, args, grid).run()


def _lane(text: str):
    m = re.match(r"(\w+)\[(\d+)\]", str(text))
    return (m.group(1), int(m.group(2))) if m else None


def model_explains(desc: dict, verdict: dict, rules: dict, ops=None) -> dict | None:
    """Evidence that the host with ``rules`` answers what the device answered on every differing
    region of ``verdict`` (regions whose op is in ``ops``, all of them required): per region its
    bad-lane count equal to the model's, every listed lane among the model's and, in exact regions,
    the listed device value the model's own. None where any region disagrees."""
    from .fuzzbuild import build, make_args
    from .fuzzjudge import Layout, _show

    regs = verdict.get("regions") or []
    if not regs or any(r.get("buf") == "stdout" or (ops and r.get("op") not in ops) for r in regs):
        return None
    b = build(desc)
    lay = Layout.of(b)
    names = [n for n, _ in lay.params]
    plain, model = make_args(b), make_args(b)
    try:
        run_with(b.prog, plain, b.grid, {})
        run_with(b.prog, model, b.grid, rules)
    except Exception:
        return None
    out = []
    for r in regs:
        reg = next((g for g in lay.regions if g.buf == r["buf"] and g.step == r["step"]), None)
        if reg is None or r["buf"] not in names:
            return None
        i = names.index(r["buf"])
        span = slice(reg.offset, reg.offset + reg.size)
        h = plain[i][span].view(np.uint8).reshape(reg.size, -1)
        m = model[i][span].view(np.uint8).reshape(reg.size, -1)
        moved = set((np.nonzero((h != m).any(1))[0] + reg.offset).tolist())
        if len(moved) != r.get("bad"):
            return None
        for lane_text, _host, dev in r.get("first", []):
            lane = _lane(lane_text)
            if lane is None or lane[1] not in moved:
                return None
            if r.get("taint") == "exact" and _show(model[i][lane[1]]) != dev:
                return None
        out.append({"buf": r["buf"], "step": r["step"], "bad": r["bad"]})
    return {"regions": out}


def _job(desc: dict):
    """The CPU half of a campaign for ``desc`` without tileiras: layout, arguments, host answer."""
    from .fuzzrun import compile_task

    try:
        job = compile_task({"desc": desc, "seed": desc.get("seed", 0), "assemble": False})
    except Exception:
        return None
    return job if job.get("status") == "ready" else None


def _same_verdict(outcome: dict, got: dict, dev_outs: dict | None = None) -> bool:
    """The model's verdict ``got`` is the device's (``outcome``): every differing region with its
    bad-lane count and first lanes (the device's value at each exact one), no other region and the
    same total of bad lanes -- but a campaign report lists at most four regions: with four listed,
    those four (the model may differ in more, and its total is not the device's)."""
    want = (outcome.get("verdict") or {})
    wr = {(r["buf"], r["step"]): r for r in want.get("regions") or []}
    gr = {(r["buf"], r["step"]): r for r in got.get("regions") or []}
    if not wr or got.get("status") != "differ" or any(k[0] == "stdout" for k in wr):
        return False
    listed_all = len(wr) < 4
    total = want.get("bad", outcome.get("bad"))
    if listed_all and total is not None and total != got.get("bad"):
        return False
    if set(gr) != set(wr) and (listed_all or not set(wr) <= set(gr)):
        return False
    for k, r in wr.items():
        g = gr[k]
        if r.get("bad") != g.get("bad"):
            return False
        for (lane_w, _hw, dev_w), (lane_g, _hg, dev_g) in zip(r.get("first") or [], g.get("first") or []):
            if lane_w != lane_g or (r.get("taint") == "exact" and dev_w != dev_g):
                return False
    return True


def model_judged(desc: dict, outcome: dict, rules: dict) -> dict | None:
    """Evidence that the host with ``rules`` in place of its own, JUDGED as the campaign judges the
    device (its envelope, its unjudged lanes), gives the device's verdict region for region
    (``_same_verdict``); None where it does not. Stricter than ``model_explains`` in that no other
    region may differ, looser in that an approximate region counts the lanes out of tolerance."""
    from .fuzzrun import fake_answer, judge_job

    job = _job(desc)
    if job is None:
        return None
    got = judge_job(job, fake_answer(job, rules))
    if not _same_verdict(outcome, got):
        return None
    return {"regions": [{"buf": r["buf"], "step": r["step"], "bad": r["bad"]} for r in got["regions"]]}


def _listed_within_now(desc: dict, outcome: dict, seed: int | None = None, draws: int | None = None):
    """(every device value the verdict lists is within the judge's tolerance of the host's answer now,
    with the envelope drawn from ``seed`` (the program's) over ``draws`` draws of its random signs (the
    judge's for a lane out of tolerance: fuzzjudge.ENVELOPE_DRAWS); per lane: [lane, |error|, limit]) --
    None where a region is not approximate or a lane cannot be read."""
    from ..judge import ulp_of
    from .fuzzbuild import build, make_args
    from .fuzzjudge import ENVELOPE_DRAWS, SAFETY, TOL, Layout, host_answer

    draws = ENVELOPE_DRAWS if draws is None else draws

    regs = (outcome.get("verdict") or {}).get("regions") or []
    if not regs or any(r.get("taint") != "approx" or r.get("buf") == "stdout" for r in regs):
        return None
    try:
        b = build(desc)
        h = host_answer(b.prog, Layout.of(b), make_args(b), desc.get("seed", 0) if seed is None else seed, draws)
    except Exception:
        return None
    rows, ok = [], True
    for r in regs:
        for lane_text, _host, dev in r.get("first") or []:
            lane = _lane(lane_text)
            if lane is None or lane[0] not in h.outs or lane[0] not in h.envelope:
                return None
            w = float(h.outs[lane[0]].reshape(-1)[lane[1]])
            env = float(h.envelope[lane[0]].reshape(-1)[lane[1]])
            lim = TOL.ulps * float(ulp_of(np.float64(w), h.outs[lane[0]].dtype)) + SAFETY * env
            err = abs(float(dev) - w)
            ok &= bool(err <= lim)
            rows.append([lane_text, float(f"{err:.3g}"), float(f"{lim:.3g}")])
    return (ok, rows) if rows else None


def _walk(desc: dict):
    from .fuzzgen import walk

    return walk(desc.get("body") or [])


__all__ = ["HOST", "TILEIRAS", "JUDGE", "WHILE_O0", "NO_TMA_TAIL", "NO_TMA_STRIDED", "NO_TMA_GAP_LOAD", "ALLOCA_O0",
           "CARRY_SWAP_O0", "ALLOCA_ANY_O0", "EXTRACT_CUT", "PACK_WHOLE", "WORKAROUNDS",
           "OLD_WORKAROUNDS", "run_workarounds", "lower_as_run", "Cause", "run_with", "model_explains", "model_judged"]
