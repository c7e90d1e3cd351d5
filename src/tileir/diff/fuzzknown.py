"""What the fuzzer already knows: the causes of differences it has explained, each with a matcher
that recognises a new failure as that cause (docs/fuzz.md, "The first campaign").

A cause is OPEN (the defect is there and nothing works around it yet: a failure it matches is
recorded as known and not shrunk), WORKED AROUND (the lowering avoids it: a failure matches only
where the workaround is not applied, so one that shows up anyway stays unexplained) or FIXED (ours:
listed for the record; a regression is caught by the classifier's host-against-independent check,
not matched here).

Matchers take the failing outcome (``status``, ``detail``, ``verdict`` with its regions) and the
program's description, and answer evidence (a dict) or None. They run the host reference only: a
MODEL of the defect (the host with one rule replaced by what the device was seen to do) must
reproduce the device's answer on every differing region -- the number of bad lanes and the
values the verdict lists -- or the failure is not that cause.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

HOST = "host-reference error"
TILEIRAS = "tileiras wrong answer"
JUDGE = "judge too strict"


@dataclass(frozen=True)
class Cause:
    name: str
    cls: str
    state: str  # open | worked around | fixed
    why: str
    status: str | None = None  # the outcome status it matches (None: any)
    detail: str | None = None  # a pattern the outcome's detail must hold
    match: Callable | None = None  # (outcome, desc) -> evidence or None


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
    group = (offs * buf.dtype.itemsize) // 16
    w = inb | np.isin(group, np.unique(group[inb]))
    w &= (offs >= 0) & (offs < buf.size)
    buf[offs[w]] = v[w]


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


# ---- the matchers ---------------------------------------------------------------------------------------


def match_view_store_tail(outcome: dict, desc: dict):
    if outcome.get("status") != "differ" or desc is None:
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


CAUSES = (
    Cause("view-store-tail", TILEIRAS, "open",
          "tileiras 13.4.92 (sm_90, every level) writes the out-of-bounds lanes of a view store that share a "
          "16-byte group of memory with an in-bounds lane (the dialect masks every lane past the tensor): "
          "campaign 1 (bench/results/fuzz_h200.json), 28 programs, each region's bad lanes exactly the "
          "model's (diff.fuzzknown.vector_tail_store); 102 other programs whose view store crosses the end "
          "were right, so what decides (the stored value's layout, it seems: the shrinker kept an if, an "
          "atomic or a pack around the store) is the device's to tell (docs/fuzz.md)",
          status="differ", match=match_view_store_tail),
    Cause("tf32-k4", TILEIRAS, "worked around",
          "tileiras 13.4.92 answers tf32 products with K = 4 wrong on sm_90 (docs/assembler-defect.md's third "
          "defect, bench/results/tf32_small_k_h200.json); the lowering pads them to K = 8 "
          "(families/mma.py TF32_PADDED_K): this matches only a product the lowering left at K = 4",
          status="differ", match=match_tf32_k4_unpadded),
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


__all__ = ["Cause", "CAUSES", "FIXED", "known_cause", "model_explains", "vector_tail_store", "run_with",
           "tf32_k4_products", "match_view_store_tail", "match_tf32_k4_unpadded"]
