"""What the fuzzer already knows: the causes of differences it has explained, each with a matcher
that recognises a new failure as that cause (docs/fuzz.md, "The first campaign", "The second
campaign").

A cause is OPEN (the defect is there and nothing works around it yet: a failure it matches is
recorded as known and not shrunk), WORKED AROUND (the lowering, or the level tileiras is given, avoids
it: a failure matches only where the workaround is not applied -- or where the run predates it or
forced a level past it, ``outcome["workarounds"]`` -- so one that shows up anyway stays unexplained)
or FIXED (ours: listed in FIXED for the record; a regression is caught by the classifier's
host-against-independent check, not matched here). A FIXED cause in CAUSES is one of the judge or the
generator whose old verdicts (campaign 2's) its matcher still recognises: the judge or the generator
no longer makes them.

Matchers take the failing outcome (``status``, ``detail``, ``verdict`` with its regions) and the
program's description, and answer evidence (a dict) or None. They run the host reference only: a
MODEL of the defect (the host with one rule replaced by what the device was seen to do) must
reproduce the device's answer on every differing region -- the number of bad lanes and the
values the verdict lists -- or the failure is not that cause.
"""

from __future__ import annotations

import re

import numpy as np

from .fuzzknown_loops import (
    O0_triggers,
    assembled_at_O0,
    match_while_first_exit,
    match_while_stale_carries,
    once_loops,
    stale_while,
    while_exits,
)
from .fuzzmodel import (
    ALLOCA_O0,
    CARRY_SWAP_O0,
    HOST,
    JUDGE,
    NO_TMA_GAP_LOAD,
    NO_TMA_STRIDED,
    NO_TMA_TAIL,
    OLD_WORKAROUNDS,
    PACK_WHOLE,
    TILEIRAS,
    WHILE_O0,
    WORKAROUNDS,
    Cause,
    _job,
    _lane,
    _listed_within_now,
    _walk,
    model_explains,
    model_judged,
    run_with,
    run_workarounds,
)

# ---- models of the device ---------------------------------------------------------------------------------


def vector_tail_store(it, op) -> None:
    """store_view as the H200 answered it in campaign 1: every lane of a 16-byte group of memory
    that holds an in-bounds lane of the tile is written, the out-of-bounds ones included (the
    dialect masks every out-of-bounds lane)."""
    from ..families import views as V
    from ..families.views import StoreView

    a = StoreView.of(op)
    view = it.val(a.view)
    buf = view["tv"]["buf"]
    offs, inb = V._tile_geometry(it, view, a.indices)
    v = np.broadcast_to(np.asarray(it.val(a.value)), offs.shape)
    w = tail_written(offs, inb, buf)
    buf[offs[w]] = v[w]


def tail_written(offs, inb, buf):
    """The lanes vector_tail_store writes: the in-bounds ones and every lane in a 16-byte group of
    ``buf``'s memory that holds one, inside the buffer."""
    group = (offs * buf.dtype.itemsize) // 16
    w = inb | np.isin(group, np.unique(group[inb]))
    return w & (offs >= 0) & (offs < buf.size)


def pitch_gap_store(last_row: bool):
    """store_view as the H200 answered it in campaign 2 (seeds 3298 8743 8970): along the tensor's
    contiguous dimension (stride 1) the lanes of the row's pitch gap (past the shape, short of the
    next row) are written too; with ``last_row`` False not those of the tensor's last row (past its
    last element): 8970 wrote every row's gap, 3298 and 8743 all rows' but the last."""
    from ..families import views as V
    from ..families.views import StoreView

    def rule(it, op):
        a = StoreView.of(op)
        view = it.val(a.view)
        tv = view["tv"]
        buf = tv["buf"]
        offs, inb = V._tile_geometry(it, view, a.indices)
        loose = _gap_lanes(it, view, a.indices, view["tile"], view["dim_map"])
        if not last_row:
            loose &= offs <= _last_element(tv)
        v = np.broadcast_to(np.asarray(it.val(a.value)), offs.shape)
        gap = loose & ~inb & (offs >= 0) & (offs < buf.size)
        buf[offs[gap]] = v[gap]
        buf[offs[inb]] = v[inb]

    return rule


def _gap_lanes(it, view, indices, tile, dim_map):
    """The tile's lanes in a pitch gap: past the shape along the tensor's contiguous dimension (stride 1),
    short of the next row (the smallest other stride)."""
    tv = view["tv"]
    step = view.get("step", tile)
    loose = np.ones(tile, dtype=bool)
    for k, (t, d) in enumerate(zip(tile, dim_map)):
        c = int(np.asarray(it.val(indices[k]))) * step[k] + \
            np.arange(t, dtype=np.int64).reshape([t if j == k else 1 for j in range(len(tile))])
        others = [st for j, st in enumerate(tv["strides"]) if j != d]
        lim = max(min(others), tv["shape"][d]) if tv["strides"][d] == 1 and others else tv["shape"][d]
        loose = loose & (c >= 0) & (c < lim)
    return loose


def _last_element(tv) -> int:
    return tv["base"] + sum((n - 1) * st for n, st in zip(tv["shape"], tv["strides"]))


def pitch_gap_load(last_row: bool):
    """load_view of a partition view as the H200 answered it in campaign 7 (seeds 201871, 203448, 204236):
    the lanes of a row's pitch gap (past the shape along the contiguous dimension, short of the next row)
    read the memory there instead of the padding -- with ``last_row`` False not those past the tensor's last
    element (those three: every gap but the last row's); every other lane is the host's."""
    from ..families import views as V
    from ..ref.core import RULES

    def rule(it, op):
        RULES["load_view"](it, op)
        a = op.a
        view = it.val(a.view)
        if view.get("step") is not None or "sparse_dim" in view:  # a strided or gather view: the host's answer
            return
        tv = view["tv"]
        buf = tv["buf"]
        offs, inb = V._tile_geometry(it, view, a.indices)
        gap = _gap_lanes(it, view, a.indices, view["tile"], view["dim_map"]) & ~inb & (offs >= 0) & (offs < buf.size)
        if not last_row:
            gap &= offs <= _last_element(tv)
        v = np.array(np.broadcast_to(np.asarray(it.val(op.res[0])), offs.shape))
        v[gap] = buf[offs[gap]]
        it.set(op.res[0], v.astype(buf.dtype))

    return rule


def strided_unmasked_load(it, op) -> None:
    """load_view of a strided view as the H200 answered it in campaigns 1 and 2 (seed 663): lanes
    past the tensor's edge read the memory there (inside the buffer) instead of the padding."""
    from ..families import views as V

    a = op.a
    view = it.val(a.view)
    if view.get("step") is None or "sparse_dim" in view:  # not a strided view: the host's rule
        from ..ref.core import RULES

        return RULES["load_view"](it, op)
    buf = view["tv"]["buf"]
    offs, _ = V._tile_geometry(it, view, a.indices)
    inb = (offs >= 0) & (offs < buf.size)
    it.set(op.res[0], np.where(inb, buf[np.where(inb, offs, 0)], 0).astype(buf.dtype))


def reversed_fold(it, op) -> None:
    """A reduction whose body is not one numpy names (take the element, take the accumulator)
    folded in the other order: one of the answers the dialect allows a body that is not commutative
    (the fold's order is unspecified; d_reduce requires an associative, commutative body)."""
    from ..families.reduce import Reduce, _fold_generic, _simple_body
    from ..ref.core import RULES

    a = Reduce.of(op)
    (region,) = op.regions
    if op.kind != "reduce" or (len(a.operands) == 1 and _simple_body(region) is not None):
        return RULES[op.kind](it, op)
    xs = [np.flip(np.asarray(it.val(h)), a.dim) for h in a.operands]
    for h, v in zip(op.res, _fold_generic(it, op, region, xs, a.dim)):
        it.set(h, v)


def narrow_f8_sum(group: int = 16, frac: int = 13):
    """f8 mma into f32 as an accumulator narrower than f32 (campaign 2's 3403, 8979): the host rule of
    fuzzjudge.narrow_f8_mma (per ``group`` of k, the exact products and the running sum aligned to the
    largest of them and truncated toward zero to ``frac`` bits below its leading one, then added). It
    answers 6 of the 6 device values 3403's verdicts list and 2 of 8979's 3 (the third 2^-9 away), not every
    bad-lane count (128 of the shrunk 3403's 132, 1249 of 8979's 1255); the judge's bound for such a
    product (fuzzjudge.f8_wide_bound) is this emulation's answer +- fuzzjudge.F8_WIDE_ULPS of its ulps."""
    from ..dtypes import BY_NAME, to_format
    from ..families.mma import MmaF
    from ..ref.core import RULES
    from .fuzzjudge import narrow_f8_mma

    def rule(it, op):
        a = MmaF.of(op)
        if not a.dtype.startswith("f8") or a.acc != "f32":
            return RULES["mmaf"](it, op)
        acc = narrow_f8_mma(it.val(a.a), it.val(a.b), it.val(a.c), group, frac)
        it.set(op.res[0], to_format(BY_NAME["f32"], acc))

    return rule


# ---- the matchers ---------------------------------------------------------------------------------------


def _tma_store_worked_around(outcome: dict) -> bool:
    """Whether the run wrote no TMA store where a tail or a gap may be written (NO_TMA_TAIL): a store the
    models below explain then took tileiras' masked path, so a difference there is news."""
    return NO_TMA_TAIL in outcome.get("workarounds", WORKAROUNDS)


def match_view_store_tail(outcome: dict, desc: dict):
    if outcome.get("status") != "differ" or desc is None or _tma_store_worked_around(outcome):
        return None
    ev = model_explains(desc, outcome.get("verdict") or {}, {"store_view": vector_tail_store}, ops=("vstore",))
    return ev and dict(ev, model="diff.fuzzknown.vector_tail_store")


def tf32_k4_products(desc: dict) -> list:
    """(m, k, n) of every tf32 product of ``desc``'s recording whose K the lowering leaves at 4
    (``padded`` False) or pads (True): [(m, k, n, padded)]."""
    from ..families.mma import TF32_PADDED_K, MmaF
    from .fuzzbuild import build

    try:
        prog = build(desc).prog
    except Exception:
        return []
    mmas = [op.a for op in prog.walk() if isinstance(op.a, MmaF)]
    return [(a.m, a.k, a.n, a.k in TF32_PADDED_K) for a in mmas if a.dtype == "tf32" and a.k == 4]


def match_tf32_k4_unpadded(outcome: dict, desc: dict):
    if outcome.get("status") != "differ" or desc is None:
        return None
    unpadded = [p[:3] for p in tf32_k4_products(desc) if not p[3]]
    return {"products": unpadded} if unpadded else None


def _pitch_gap_matched(desc: dict, outcome: dict, op: str, model, orders) -> dict | None:
    """The first of ``model(last_row)`` for ``last_row`` in ``orders`` in place of ``op``'s host rule that
    gives the device's verdict (model_judged), named; None where neither does."""
    for last_row in orders:
        ev = model_judged(desc, outcome, {op: model(last_row)})
        if ev:
            return dict(ev, model=f"diff.fuzzknown.{model.__name__}", last_row=last_row)
    return None


def match_view_store_pitch_gap(outcome: dict, desc: dict):
    if outcome.get("status") != "differ" or desc is None or _tma_store_worked_around(outcome) or \
            not all(r.get("op") == "vstore" for r in (outcome.get("verdict") or {}).get("regions") or [{}]):
        return None
    return _pitch_gap_matched(desc, outcome, "store_view", pitch_gap_store, (True, False))


def match_view_load_pitch_gap(outcome: dict, desc: dict):
    if outcome.get("status") != "differ" or desc is None or \
            NO_TMA_GAP_LOAD in outcome.get("workarounds", WORKAROUNDS) or \
            not any(s.get("op") == "vload" and s.get("kind") == "partition" for s in _walk(desc)):
        return None
    return _pitch_gap_matched(desc, outcome, "load_view", pitch_gap_load, (False, True))


def match_pack_of_extract(outcome: dict, desc: dict):
    """A pack of an extract's result (the fuzz step ``pack`` of a ``shape`` extract) in a run without the
    recording's rewrite, every differing region a step that depends on such a pack (no lane model: the H200's
    bytes were one NaN pattern, bench/results/fuzz_variants_504651_h200.json)."""
    if outcome.get("status") != "differ" or desc is None or PACK_WHOLE in outcome.get("workarounds", WORKAROUNDS):
        return None
    steps = list(_walk(desc))
    extracts = {s["id"] for s in steps if s.get("op") == "shape" and s.get("f") == "extract"}
    packs = [s["id"] for s in steps if s.get("op") == "pack" and s.get("a") in extracts]
    if not packs:
        return None
    after = set(packs)  # the values the packs' bytes reach (steps in program order; a loop's carries too)
    for s in steps:
        if any(s.get(k) in after for k in ("a", "b", "c")) or any(c in after for c in s.get("carries") or ()):
            n = max(1, len(s.get("carries") or ()))
            after.update(range(s["id"], s["id"] + n))
            if "cid" in s:  # the carried values inside the loop's body
                after.update(range(s["cid"], s["cid"] + n))
    regs = (outcome.get("verdict") or {}).get("regions") or []
    if not regs or any(r.get("step") not in after for r in regs):
        return None
    return {"packs_of_extracts": packs, "model": "none (the device's bytes are not the extract's)"}


def match_strided_load_past_edge(outcome: dict, desc: dict):
    if outcome.get("status") != "differ" or desc is None or \
            NO_TMA_STRIDED in outcome.get("workarounds", WORKAROUNDS) or \
            not any(s.get("op") == "vload" and s.get("kind") == "strided" for s in _walk(desc)):
        return None
    ev = model_judged(desc, outcome, {"load_view": strided_unmasked_load})
    return ev and dict(ev, model="diff.fuzzknown.strided_unmasked_load")


def match_reduce_order(outcome: dict, desc: dict):
    """A reduction with a body that is not commutative (take the element / the accumulator: the
    generator draws them, the dialect leaves their answer open): every differing lane is one where
    the other fold order (``reversed_fold``) answers otherwise, and the device's value at each lane
    listed is that order's (the device mixed both orders across a tile's lanes: seeds 5979, 8344)."""
    if outcome.get("status") != "differ" or desc is None or \
            not any(s.get("op") == "reduce" and str(s.get("f", "")).startswith("take") for s in _walk(desc)):
        return None
    from .fuzzjudge import _show
    from .fuzzrun import fake_answer, judge_job

    job = _job(desc)
    if job is None:
        return None
    alt = fake_answer(job, {"reduce": reversed_fold})
    got = judge_job(job, alt)
    gr = {(r["buf"], r["step"]): r for r in got.get("regions") or []}
    regs = (outcome.get("verdict") or {}).get("regions") or []
    if not regs:
        return None
    for r in regs:
        g = gr.get((r.get("buf"), r.get("step")))
        if g is None or r.get("bad", 0) > g.get("bad", 0):
            return None
        for lane_text, _host, dev in r.get("first") or []:
            lane = _lane(lane_text)
            if lane is None or _show(alt.outs[lane[0]].reshape(-1)[lane[1]]) != dev:
                return None
    return {"model": "diff.fuzzknown.reversed_fold (lane by lane: the host's order or this one)",
            "regions": [{"buf": r["buf"], "step": r["step"], "bad": r["bad"],
                         "other_order_bad": gr[(r["buf"], r["step"])]["bad"]} for r in regs]}


def match_f8_narrow_accumulation(outcome: dict, desc: dict):
    """An f8 product into f32 of warpgroup shape (fuzzjudge.f8_wide: M >= 64, K >= 32) judged, when
    the verdict was made, by f32's bound: every differing region approximate and every device value it
    lists within the judge's bound now (for such a product: fuzzjudge.f8_wide_bound). The
    emulation ``narrow_f8_sum`` is reported beside it (how many listed values it answers bit for bit)."""
    if outcome.get("status") != "differ" or desc is None:
        return None
    from .fuzzbuild import build
    from .fuzzjudge import _show, f8_wide

    try:
        prog = build(desc).prog
    except Exception:
        return None
    wide = [(op.a.dtype, op.a.m, op.a.k, op.a.n) for op in prog.walk() if op.kind == "mmaf" and f8_wide(op.a)]
    got = _listed_within_now(desc, outcome) if wide else None
    if not got or not got[0]:
        return None
    job = _job(desc)
    same = 0
    if job is not None:
        from .fuzzrun import fake_answer

        alt = fake_answer(job, {"mmaf": narrow_f8_sum()})
        for r in (outcome.get("verdict") or {}).get("regions") or []:
            for lane_text, _host, dev in r.get("first") or []:
                lane = _lane(lane_text)
                same += bool(lane and _show(alt.outs[lane[0]].reshape(-1)[lane[1]]) == dev)
    return {"products": wide, "listed_lanes": got[1],
            "model": "fuzzjudge.f8_wide_bound (the emulation +- F8_WIDE_ULPS)", "emulation_answers_listed": same}


def match_envelope_draw(outcome: dict, desc: dict):
    """A verdict made with ONE draw of the envelope's per-lane random signs (before the judge drew again:
    fuzzjudge.ENVELOPE_DRAWS): approximate lanes only, few of them (at most 16 and 1% of the lanes
    compared), some device value it lists out of the tolerance of the program's one draw now (the judge's
    other rules as they are: not a verdict another fix answers, f8's bound say) and every one within the
    tolerance of the judge's envelope now (each group's move the maximum over ENVELOPE_DRAWS draws, the
    program's own draw first). Campaign 2's (and campaign 3's) 8236: one row of an online softmax's
    output, whose terms cancel; its one draw moved the three listed lanes 3.7-8.7x less than the maximum
    over 8 draws does. A verdict the judge makes now cannot match: its listed lanes are out of that same
    envelope."""
    from .fuzzjudge import ENVELOPE_DRAWS

    v = outcome.get("verdict") or {}
    if outcome.get("status") != "differ" or desc is None or not v.get("regions"):
        return None
    bad, lanes = v.get("bad") or 0, v.get("lanes") or 0
    if bad > 16 or (lanes and bad > 0.01 * lanes):
        return None
    one = _listed_within_now(desc, outcome, draws=1)
    if not one or one[0]:
        return None  # within the one draw's envelope now: another rule of the judge changed (f8's bound, say)
    got = _listed_within_now(desc, outcome)
    if not got or not got[0]:
        return None
    return {"listed_lanes": got[1], "one_draw": one[1], "envelope_draws": ENVELOPE_DRAWS,
            "model": "fuzzjudge.host_answer's envelope over ENVELOPE_DRAWS draws of its random signs "
                     "(each group's per-lane maximum)"}


def match_assert_constant_stop(outcome: dict, desc: dict):
    """The host stopped at an assert drawn to fire on a constant condition (generator 2's x != x) and the
    device with CUDA_ERROR_LAUNCH_FAILED: both stopped (fuzzjudge.judge counts it equal now)."""
    from .fuzzbuild import build

    try:
        return {"constant_firing_assert": True} if desc is not None and build(desc).const_fire else None
    except Exception:
        return None


CAUSES = (
    Cause("view-store-tail", TILEIRAS, "worked around",
          "tileiras 13.4.92 (sm_90, every level), when it selects a TMA store for a store_view, writes the "
          "out-of-bounds lanes that share a 16-byte group of memory with an in-bounds lane (the dialect masks "
          "every lane past the tensor): campaigns 1-3 (28, 106, 104 programs), each region's bad lanes exactly "
          "the model's (diff.fuzzknown.vector_tail_store); what decides is the TMA store (CPU: campaign 3 106 "
          "failing stores, all TMA, 0 of 573 right ones; the H200's 40 pair programs answered the prediction "
          "exactly: bench/results/view_store_tail_pairs_h200.json). The lowering writes allow_tma = false on "
          "such stores (families/views.py tail_may_share_a_group; the run's workaround no-tma-store-tail): the "
          "focused campaign went from 396 to 0 (bench/results/fuzz_vst_focus_after_h200.json); this matches "
          "only a run without it",
          status="differ", match=match_view_store_tail),
    Cause("tf32-k4", TILEIRAS, "worked around",
          "tileiras 13.4.92 answers tf32 products with K = 4 wrong on sm_90 (docs/assembler-defect.md's third "
          "defect, bench/results/tf32_small_k_h200.json); the lowering pads them to K = 8 "
          "(families/mma.py TF32_PADDED_K): this matches only a product the lowering left at K = 4",
          status="differ", match=match_tf32_k4_unpadded),
    Cause("while-first-exit", TILEIRAS, "worked around",
          "tileiras 13.4.92 (sm_90, its optimiser: right at -O0) with a while loop that stops on its FIRST "
          "iteration by its constants (the lowering's loop { body; if stop { break <entering values> }; "
          "continue }): it fails to assemble it -- campaign 2's 3439 3904 9767, reproduced on the CPU ('failed "
          "to compile Tile IR program', a crash) and never at 1 or more trips -- and the device left whole regions "
          "unwritten -- stores in the loop, after it, even before it (4846) -- campaign 2's seeds 6 1316 2319 "
          "2512 4846 6668 8133 8853 9309, each differing region exactly the host's answer with it unwritten "
          "(187 other programs with such a loop were right). The lowering writes such a loop as its body once "
          "(families/loops.py stops_on_first_iteration; docs/assembler-defect.md's fifth defect), and a loop it keeps "
          "(its first stop decided by data) is assembled at -O0 (while-O0, the sixth): this matches only a run "
          "before those, or at a forced level. The 2 hangs with such a loop (4223 9212) are "
          "not matched: no model says what they did",
          match=match_while_first_exit),
    Cause("while-stale-carries", TILEIRAS, "worked around",
          "tileiras 13.4.92 (sm_90, its optimiser: all 9 right at -O0, bench/results/fuzz_while_O0_h200.json): a "
          "while loop that runs more than one iteration answers, for its results or one of them, the carried "
          "values entering an EARLIER iteration than the last (diff.fuzzknown.stale_while reproduces every "
          "differing region): campaign 2's seeds 85 217 4138 6651 7290 9254 (the last but one), 7529 (the second "
          "of four), 8215 (one result of two, the last but one), 2374 (one result of two, the second of five); "
          "all but 7529 and 2374 stop on their second iteration and write memory in the body, as 13 loops that "
          "were right do too: the trigger is not known. A kernel that holds a while loop is assembled at -O0 now "
          "(assemble.holds_while_loop, docs/assembler-defect.md's sixth defect): this matches only a run without "
          "that workaround (before it, or at a forced level)",
          status="differ", match=match_while_stale_carries),
    Cause("view-store-pitch-gap", TILEIRAS, "worked around",
          "tileiras 13.4.92 (sm_90), the fourth defect's other half: a TMA store into a tensor with a padded "
          "pitch writes the lanes of the pitch gap (past the shape along the contiguous dimension, short of the "
          "next row), whole groups too (the focused campaign's 21207), where the dialect masks them: campaign 2's "
          "seeds 8970 (every row's gap) and 3298 8743 (every row's but the last), each region exactly "
          "diff.fuzzknown.pitch_gap_store's; every one a TMA store. Worked around with view-store-tail "
          "(no-tma-store-tail: a store before a gap the lowering cannot rule out gets no TMA); this matches only "
          "a run without it",
          status="differ", match=match_view_store_pitch_gap),
    Cause("strided-load-past-edge", TILEIRAS, "worked around",
          "tileiras 13.4.92 (sm_90): a strided view's load past the tensor's edge read the memory there instead "
          "of the padding (diff.fuzzknown.strided_unmasked_load): seed 663 in campaigns 1-3, all 765 lanes, a TMA "
          "load (CPU, bench/strided_load_trigger.py: 1 failing and 10 right TMA strided loads at risk in campaign "
          "3, 0 failing of 248 without TMA). Every strided view load carries allow_tma = false now "
          "(no-tma-strided-load); this matches only a run without it",
          status="differ", match=match_strided_load_past_edge),
    Cause("view-load-pitch-gap", TILEIRAS, "worked around",
          "tileiras 13.4.92 (sm_90): a partition view's load whose tile crosses the tensor's contiguous end into a "
          "padded pitch's gap read the gap's memory instead of the padding (diff.fuzzknown.pitch_gap_load): "
          "campaign 7's seeds 201871 (column-major rows of 7 f32 at a pitch of 8), 203448 and 204236 (i32 rows "
          "of 3 at a pitch of 4), wrong at every level; the load's half of view-store-pitch-gap. A load_view "
          "whose tile can cross a contiguous end with a gap after it carries allow_tma = false now "
          "(no-tma-gap-load); this matches only a run without it",
          status="differ", match=match_view_load_pitch_gap),
    Cause("pack-of-extract", TILEIRAS, "worked around",
          "tileiras 13.4.92 (sm_90, every level): pack_bytes of an extract's result packs other bytes (campaign 9's "
          "504651: the four f16 of an i32 [2] extract's bytes all one NaN; bench/fuzz_variants.py: every index "
          "and width wrong, the same tile loaded whole or the extract stored unpacked right, the whole tile's pack "
          "with its bytes extracted right). The recording writes that instead (pack-whole-then-extract; a pack of "
          "an extract through a reshape is refused); this matches only a run without it",
          status="differ", match=match_pack_of_extract),
    Cause("reduce-order", JUDGE, "fixed",
          "ours: generator 2 draws reductions whose body takes the element or the accumulator, which d_reduce "
          "forbids (the fold's order is unspecified: the body must be associative and commutative), and the "
          "builder judges them as the host's left fold; the H200 answered both orders in one tile (seeds 5979, "
          "8344: a broadcast of one reduced value differs lane by lane; an if on it took both branches). "
          "Generator 3 draws them only as scans, whose order the dialect fixes",
          status="differ", match=match_reduce_order),
    Cause("f8-narrow-accumulation", JUDGE, "fixed",
          "the H200 sums f8 products into f32 of warpgroup shape (M >= 64, K >= 32) in an accumulator of about "
          "14 significant bits, not f32 (DeepSeek-V3's report measured 14 on H800; campaign 2's 3403 and 8979: "
          "errors of 230-1120 u sum|a||b|, u = 2^-24, where f32's bound allows 2 (K + 1)); the judge bounds them "
          "by the emulation of that accumulator +- a few of its ulps now (fuzzjudge.f8_wide_bound): this matches a "
          "verdict made before, every listed lane within the bound now",
          status="differ", match=match_f8_narrow_accumulation),
    Cause("assert-constant-stop", JUDGE, "fixed",
          "generator 2 draws a firing assert as x != x, a constant: the H200 stopped with "
          "CUDA_ERROR_LAUNCH_FAILED where the host stopped at the assert (campaign 2's 5630 6991). tileiras' "
          "assert is a printf and a trap, which the H200 reports so whatever the condition (a data-dependent one "
          "too: the bounds check's). The judge counts both stops equal beside any host assert stop now "
          "(fuzzjudge.judge); generator 3 draws data-dependent asserts",
          status="differ", detail="the host stopped at an assert, the device did not: .*CUDA_ERROR_LAUNCH_FAILED",
          match=match_assert_constant_stop),
    Cause("envelope-draw", JUDGE, "fixed",
          "the judge's envelope was a sampling: each group of approximations moved once with per-lane random "
          "signs, and a lane whose terms cancel could draw a move several times smaller than most draws give "
          "(campaign 2's and campaign 3's 8236: 4 lanes of one softmax row, 1.4-3.5 times their bound). The "
          "judge now takes each group's per-lane maximum over fuzzjudge.ENVELOPE_DRAWS (8) draws wherever an "
          "approximate lane is out of tolerance under the first (fuzzjudge.judge's redraw): this matches a "
          "verdict made before, few approximate lanes, some listed value out of the one draw's tolerance now and "
          "every one within the envelope over the draws",
          status="differ", match=match_envelope_draw),
)


# ours, fixed: for the record (a regression shows as a host-reference error through classify's own
# independent answers, or as an unexplained difference)
FIXED = (
    ("unsigned-i64", HOST, "families/arith.py _unsigned64 masked an int64 array with the Python int 2^64 - 1: "
     "every unsigned i64 operation raised OverflowError (35 of 2000 programs); np.uint64 now"),
    ("directed-rounding", HOST, "families/arith.py _ref_binaryf rounded addf / subf / mulf / divf to nearest "
     "whatever the mode (9 programs); binary_directed rounds the exact result once by the mode now"),
    ("fold-signed-zeros", HOST, "families/reduce.py's numpy fast path answered an operand's zero for max / min "
     "of both zeros where maxf / minf answer +0 / -0 (none seen on the device yet; classify's independent "
     "answer flags it)"),
    ("zero-sum-sign", HOST, "hostmath.directed (then families/arith.py binary_directed; and classify's own "
     "answer) gave +0 + +0 rounded toward -inf as -0: a sum of two zeros of one sign keeps it in every mode "
     "(campaign 2's seed 376, bf16)"),
    ("i64-min-division", HOST, "hostmath.trunc_div (then families/arith.py _trunc_div) took np.abs of the i64 "
     "minimum (itself, negative): divi / remi of -2^63 answered 19 for -18 (campaign 2's seeds 2213 4791 6355 "
     "9220); uint64 magnitudes now"),
    ("fma-infinite-addend", HOST, "families/arith.py fma_exact (f64, without math.fma) took x * y in f64 first: "
     "fma(MAX, MAX, -inf) gave NaN where the exact product is finite and the answer -inf (campaign 2's seed 2847)"),
    ("narrow-sum-overflow", JUDGE, "a float sum fold in f16 / bf16 whose magnitudes add past the format's range "
     "overflows to inf in one order and not in another (the device rounds every partial; the host folds in "
     "f32): such lanes are not judged now (fuzzjudge.source_bounds; seed 865)"),
)


def known_cause(outcome: dict, desc: dict | None = None):
    """The open or worked-around cause ``outcome`` (a failure of ``desc``) matches, as a
    classification ({class, why, known, cause, evidence}), or None."""
    desc = desc if desc is not None else outcome.get("desc")
    for c in CAUSES:
        if c.status and outcome.get("status") != c.status:
            continue
        if c.detail and not re.search(c.detail, str(outcome.get("detail") or "")):
            continue
        ev = c.match(outcome, desc) if c.match else {}
        if ev is None:
            continue
        return {"class": c.cls, "why": c.why, "known": True, "cause": c.name, "state": c.state, "evidence": ev}
    return None


__all__ = ["Cause", "CAUSES", "FIXED", "known_cause", "model_explains", "model_judged", "vector_tail_store",
           "tail_written",
           "pitch_gap_store", "strided_unmasked_load", "stale_while", "reversed_fold", "while_exits", "run_with",
           "tf32_k4_products", "match_view_store_tail", "match_tf32_k4_unpadded", "match_while_first_exit",
           "match_while_stale_carries", "match_view_store_pitch_gap", "match_strided_load_past_edge",
           "match_reduce_order", "match_f8_narrow_accumulation", "match_assert_constant_stop", "match_envelope_draw",
           "narrow_f8_sum", "once_loops", "WORKAROUNDS", "OLD_WORKAROUNDS", "WHILE_O0", "NO_TMA_TAIL",
           "NO_TMA_STRIDED", "NO_TMA_GAP_LOAD", "ALLOCA_O0", "CARRY_SWAP_O0", "run_workarounds", "pitch_gap_load",
           "match_view_load_pitch_gap", "match_pack_of_extract", "PACK_WHOLE",
           "O0_triggers", "assembled_at_O0"]
