"""Offline triage of a fuzz campaign's failures (issue 15): no GPU needed.

Every failure of a campaign report is drawn again from its seed (with the report's generator
version), recorded and run on the host reference as it is NOW, and put in a group by the first test
that explains it:

* ``fixed-host``: the host now answers, on every listed lane, what the device answered then (a
  host-reference error since fixed), or a host error that no longer raises;
* ``fixed-judge``: every listed lane is no longer judged (a judgement that was too strict);
* a cause of ``diff.fuzzknown.CAUSES`` whose model reproduces the device's answer (its matcher; a
  worked-around cause is matched as the report's run had it: its ``workarounds``, or
  ``fuzzknown.OLD_WORKAROUNDS`` for a report without them);
* ``fixed-judge`` again: the judge as it is now calls the device's listed answer right;
* ``tf32-k4``: a tf32 product with K = 4 the lowering leaves unpadded (docs/assembler-defect.md's
  third defect; the lowering pads them to K = 8 now, and a padded one is no explanation);
* ``unknown``, with a ``hypothesis`` where the program holds what failed alike elsewhere (a while
  loop that stops on its first iteration, allocas in a while loop, a wide f8 product, an assert
  drawn to fire, a padded tf32 product), and what the listed-lane models say: ``fewer_trips``
  (every while loop one iteration shorter reproduces the listed lanes), ``unwritten`` (the device
  left the listed lanes as they were before the launch).

    PYTHONPATH=src python bench/fuzz_triage.py bench/results/fuzz_campaign1_h200.json \
        --out bench/results/fuzz_triage_h200.json
    PYTHONPATH=src python bench/fuzz_triage.py bench/results/fuzz_h200.json \
        --out bench/results/fuzz_triage_campaign2.json

(campaign 1: 2000 programs, generator 1; campaign 2: 10,000 programs, generator 2.)
"""

from __future__ import annotations

import argparse
import collections
import copy
import json
import re
import sys
import warnings

import numpy as np

from tileir.diff.fuzzgen import generate as _generate
from tileir.diff.fuzzgen import walk
from tileir.diff.fuzzknown import OLD_WORKAROUNDS
from tileir.diff.fuzzspec import Profile

VERSION = [1]  # the generator version of the report being triaged (a report without one is campaign 1's)
RAN_WITH = list(OLD_WORKAROUNDS)  # the lowering's workarounds the report's run had (fuzzknown.WORKAROUNDS' names)


def generate(seed: int) -> dict:
    """The program the campaign drew from ``seed`` (its generator's version)."""
    return _generate(seed, Profile(version=VERSION[0]))


def _lane(text: str):
    m = re.match(r"(\w+)\[(\d+)\]", str(text))
    return (m.group(1), int(m.group(2))) if m else None


def _listed(row: dict):
    """(buffer, lane, host then, device) of every lane the report lists."""
    for r in row.get("regions", []):
        for lane_text, then, dev in r.get("first", []):
            lane = _lane(lane_text)
            if lane:
                yield lane[0], lane[1], then, dev


def _values(desc: dict, seed: int):
    """The host's answer now: (outputs by name, unjudged lanes by name, initial arguments by name)."""
    from tileir.diff.fuzzbuild import build, make_args
    from tileir.diff.fuzzjudge import Layout, host_answer

    b = build(desc)
    lay = Layout.of(b)
    args = make_args(b)
    first = {n: a.copy() for (n, _), a in zip(lay.params, args)}
    h = host_answer(b.prog, lay, args, seed)
    return h, first


def _same_lanes(row, outs) -> bool:
    from tileir.diff.fuzzjudge import _show

    listed = list(_listed(row))
    return bool(listed) and all(name in outs and _show(outs[name].reshape(-1)[i]) == dev
                                for name, i, _then, dev in listed)


def fewer_trips(desc: dict, row: dict) -> bool:
    """Every while loop of ``desc`` one iteration shorter answers what the device answered."""
    d2 = copy.deepcopy(desc)
    loops = [s for s in walk(d2["body"]) if s["op"] == "while" and s["trips"] > 0]
    if not loops:
        return False
    for s in loops:
        s["trips"] -= 1
    h, _ = _values(d2, desc["seed"])
    return not h.error and _same_lanes(row, h.outs)


def _mmas(desc: dict) -> list:
    from tileir.diff.fuzzbuild import build
    from tileir.families.mma import MmaF

    try:
        prog = build(desc).prog
    except Exception:
        return []
    return [op.a for op in prog.walk() if isinstance(op.a, MmaF)]


def _while_kinds(desc: dict) -> list:
    """The operation kinds inside each while loop of ``desc``'s recording."""
    from tileir.diff.fuzzbuild import build

    def kinds(region):
        out = set()
        for o in region.ops:
            out.add(o.kind)
            for r in o.regions:
                out |= kinds(r)
        return out

    try:
        prog = build(desc).prog
    except Exception:
        return []
    return [kinds(op.regions[0]) for op in prog.walk() if op.kind == "while"]


def swapped_while_results(desc: dict, row: dict) -> bool:
    """The while loop's first two results (same shape and format) exchanged reproduce every differing
    region (seed 2374 of campaign 2: a loop holding allocas)."""
    from tileir.diff.fuzzknown import model_judged
    from tileir.families.loops import _ref_while

    def rule(it, op):
        _ref_while(it, op)
        hs = [h for h in op.res if it.prog.info[h].kind != "token"]
        if len(hs) >= 2:
            a, b = np.asarray(it.val(hs[0])), np.asarray(it.val(hs[1]))
            if a.shape == b.shape and a.dtype == b.dtype:
                it.set(hs[0], b)
                it.set(hs[1], a)

    out = {"status": row["status"], "verdict": {"regions": row.get("regions", []), "bad": row.get("bad")}}
    return bool(model_judged(desc, out, {"while": rule}))


def hypothesis(desc: dict, row: dict):
    """(label, evidence) for a failure no cause explains: what its program holds that failed alike
    elsewhere in campaign 2 (docs/fuzz.md, "The second campaign"), or ("unknown", {})."""
    from tileir.diff.fuzzknown import tf32_k4_products, while_exits

    ev: dict = {}
    first = sorted(n for n, ex in while_exits(desc).items() if 0 in ex)
    if first:
        ev["while_stopping_first"] = first
    if any("alloca" in k for k in _while_kinds(desc)):
        ev["allocas_in_while"] = True
        if row["status"] == "differ":
            ev["swapped_results_reproduce"] = swapped_while_results(desc, row)
    wide = [(a.dtype, a.m, a.k, a.n) for a in _mmas(desc) if a.dtype.startswith("f8") and a.acc == "f32" and
            a.m >= 64 and a.k >= 32]
    if wide:
        ev["f8_wide_products"] = wide
    if any(s["op"] == "assert" and s.get("fire") for s in walk(desc["body"])):
        ev["assert_drawn_to_fire"] = True
    padded = [p[:3] for p in tf32_k4_products(desc) if p[3]]
    if padded:
        ev["tf32_k4_padded"] = padded
    takes = sorted({s["f"] for s in walk(desc["body"]) if s["op"] == "reduce" and str(s.get("f")).startswith("take")})
    if takes:
        ev["unordered_reductions"] = takes
    redviews = sorted({s.get("mode") for s in walk(desc["body"]) if s["op"] == "redview"})
    if redviews:
        ev["atomic_view_reductions"] = redviews
    if first:
        from tileir.diff.fuzzknown import once_loops

        ev["written_once_now"] = once_loops(desc)
    if row["status"] in ("assemble_error", "device_error") and first:
        return "while-first-exit?", ev
    if ev.get("allocas_in_while"):
        return "alloca-in-while?", ev
    if wide:
        return "f8-wide-product?", ev
    if ev.get("assert_drawn_to_fire") and "LAUNCH_FAILED" in str(row.get("detail")):
        return "assert-constant-false?", ev
    if padded:
        return "tf32-k4-padded?", ev
    return "unknown", ev


def judged_right_now(desc: dict, row: dict, h) -> str | None:
    """Why the judge as it is now calls the device's recorded answer right, or None: an assert stop
    against the device's error text, or every listed lane within the tolerance of the host's answer now."""
    from tileir.diff.fuzzbuild import build
    from tileir.diff.fuzzjudge import Answer, Layout, judge
    from tileir.diff.fuzzknown import _listed_within_now

    detail = str(row.get("detail") or "")
    if row["status"] == "differ" and not row.get("regions") and ": " in detail:
        dev = Answer(error=detail.split("the device did not: ", 1)[-1])
        if h.asserted and judge(Layout.of(build(desc)), h, dev)["status"] == "equal":
            return "both stopped now: " + judge(Layout.of(build(desc)), h, dev)["detail"][:160]
        return None
    got = _listed_within_now(desc, {"verdict": {"regions": row.get("regions", [])}})
    return "every listed lane within the tolerance now" if got and got[0] else None


def triage_one(row: dict) -> dict:
    from tileir.diff.fuzzjudge import _show
    from tileir.diff.fuzzknown import known_cause, tf32_k4_products

    seed = row["seed"]
    desc = generate(seed)
    out = {"seed": seed, "status": row["status"], "bad": row.get("bad"),
           "regions": [(r["buf"], r["step"], r["op"], r["taint"], r["bad"]) for r in row.get("regions", [])],
           "kinds": sorted({s["op"] for s in walk(desc["body"])})}
    h, first = _values(desc, seed)
    if row["status"] == "host_error":
        out["group"] = "fixed-host" if not h.error else "unknown"
        out["why"] = "the host reference runs now" if not h.error else f"still raises: {h.error[:200]}"
        return out
    listed = list(_listed(row))
    now = ["device" if _show(h.outs[n].reshape(-1)[i]) == dev else "then" if _show(h.outs[n].reshape(-1)[i]) == then
           else "moved" for n, i, then, dev in listed]
    out["host_now"] = now
    if listed and all(x == "device" for x in now):
        rnd = sorted({s.get("rnd") for s in walk(desc["body"]) if s.get("rnd", "nearest_even") != "nearest_even"})
        out["group"], out["why"] = "fixed-host", f"the host now answers the device's lanes (directed modes: {rnd})"
        return out
    if listed and all(n in h.unjudged and bool(h.unjudged[n][i]) for n, i, _t, _d in listed):
        out["group"], out["why"] = "fixed-judge", "every listed lane is unjudged now (an order-dependent overflow)"
        return out
    outcome = {"status": row["status"], "detail": row.get("detail"), "workarounds": list(RAN_WITH),
               "verdict": {"regions": row.get("regions", []), "bad": row.get("bad"), "lanes": row.get("lanes")}}
    k = known_cause(outcome, desc)
    if k:
        out["group"], out["why"], out["evidence"] = k["cause"], k["state"], k["evidence"]
        return out
    now_right = judged_right_now(desc, row, h)
    if now_right:
        out["group"], out["why"] = "fixed-judge", now_right
        return out
    if VERSION[0] == 1 and tf32_k4_products(desc):  # campaign 1 ran before the lowering padded K = 4
        out["group"], out["why"] = "tf32-k4", "a tf32 product with K = 4 (padded to 8 by the lowering since)"
        return out
    hyp = {"fewer_trips": bool(listed) and fewer_trips(desc, row),
           "unwritten": bool(listed) and all(_show(first[n].reshape(-1)[i]) == dev for n, i, _t, dev in listed)}
    label, ev = hypothesis(desc, row)
    out["group"], out["hypothesis"], out["evidence"] = "unknown", label, ev
    out["models"] = {k_: v for k_, v in hyp.items() if v}
    out["while"] = [{k_: s[k_] for k_ in ("trips", "carries", "sets", "brk")} for s in walk(desc["body"])
                    if s["op"] == "while"]
    return out


def write_reproducers(rep: dict, rows: list, where: str, groups: list, report: str) -> list:
    """A reproducer file per failure of ``groups``: the program as the campaign drew it (not shrunk:
    the next device session shrinks it with ``fuzz --seeds``) and the campaign's verdict."""
    import os

    from tileir.diff.shrink import write_reproducer

    by_seed = {r["seed"]: r for r in rep["differences"]}
    out = []
    for t in rows:
        if t["group"] not in groups:
            continue
        row = by_seed[t["seed"]]
        path = os.path.join(where, f"fuzz_{row['status']}_{row['seed']}.json")
        outcome = {"status": row["status"], "detail": row.get("detail"),
                   "verdict": {"status": row["status"], "bad": row.get("bad"), "lanes": row.get("lanes"),
                               "regions": row.get("regions", [])}}
        cls = {"class": "unknown" if t["group"] == "unknown" else t["group"], "triage": t.get("models") or t.get("why"),
               "by": "bench/fuzz_triage.py (offline: the device's lanes against host models)"}
        write_reproducer(path, generate(row["seed"]), outcome, cls, original_seed=row["seed"],
                         arch=rep.get("arch", "sm_90"), opt_level=None, shrink_rounds=0,
                         steps_before=sum(1 for _ in walk(generate(row["seed"])["body"])),
                         campaign=f"{report} (seed {rep.get('seed')}): not shrunk; the verdict is the campaign's")
        out.append(path)
    return out


def main(argv=None) -> int:
    warnings.filterwarnings("ignore")
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("report")
    p.add_argument("--out", default=None)
    p.add_argument("--repro-dir", default=None, help="write a reproducer (the whole program, the campaign's "
                   "verdict) for every failure of the groups --repro-groups names")
    p.add_argument("--repro-groups", default="unknown,fixed-judge")
    a = p.parse_args(argv)
    with open(a.report) as f:
        rep = json.load(f)
    VERSION[0] = int(rep.get("generator") or 1)
    RAN_WITH[:] = rep.get("workarounds", OLD_WORKAROUNDS)
    rows = [triage_one(r) for r in rep["differences"]]
    groups = collections.defaultdict(list)
    for t in rows:
        label = t["group"] if t["group"] != "unknown" else f"unknown: {t['hypothesis']}"
        groups[f"{label} ({t['status']})"].append(t["seed"])
    from tileir.diff.fuzzknown import CAUSES

    states = {c.name: c.state for c in CAUSES}
    campaign = {k: rep.get(k) for k in ("date", "device", "tileiras", "seed", "generator", "programs", "equal",
                                        "differ", "device_errors", "assemble_errors", "host_errors", "failures",
                                        "failures_known", "failures_unexplained", "known_causes")}
    doc = {"report": a.report, "tool": "bench/fuzz_triage.py", "campaign": campaign, "failures": len(rows),
           "unexplained_now": sum(1 for t in rows if t["group"] == "unknown"),
           "groups": {k: {"count": len(v), "seeds": v, "state": states.get(k.split(" (")[0])}
                      for k, v in sorted(groups.items())}, "rows": rows}
    if a.repro_dir:
        write_reproducers(rep, rows, a.repro_dir, a.repro_groups.split(","), a.report)
    text = json.dumps(doc, indent=1, default=str)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")
    else:
        sys.stdout.write(text + "\n")
    for k, v in sorted(groups.items()):
        print(f"{k:40s} {len(v):3d}  {v}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
