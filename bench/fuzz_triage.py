"""Offline triage of a fuzz campaign's failures (issue 15): no GPU needed.

Every failure of a campaign report (``bench/results/fuzz_h200.json``) is drawn again from its seed,
recorded and run on the host reference as it is NOW, and put in a group by the first test that
explains it:

* ``fixed-host``: the host now answers, on every listed lane, what the device answered then (a
  host-reference error since fixed), or a host error that no longer raises;
* ``fixed-judge``: every listed lane is no longer judged (a judgement that was too strict);
* a cause of ``diff.fuzzknown.CAUSES`` whose model reproduces the device's answer;
* ``tf32-k4``: a tf32 product with K = 4 in the program (docs/assembler-defect.md's third defect),
  which the lowering now pads to K = 8;
* ``unknown``, with what the models below say (hypotheses for the device to settle): ``fewer_trips``
  (every while loop one iteration shorter reproduces the listed lanes), ``unwritten`` (the device
  left the listed lanes as they were before the launch), ``strided_unmasked`` (a strided view's
  load reading memory where the tile runs past the tensor, instead of its padding).

    PYTHONPATH=src python bench/fuzz_triage.py bench/results/fuzz_h200.json --out bench/results/fuzz_triage_h200.json
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
from tileir.diff.fuzzspec import Profile

VERSION = [1]  # the generator version of the report being triaged (a report without one is campaign 1's)


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


def strided_unmasked(desc: dict, row: dict) -> bool:
    """A strided view's load that reads memory (not its padding) past the tensor's edge answers
    what the device answered."""
    from tileir.diff.fuzzbuild import build, make_args
    from tileir.diff.fuzzjudge import Layout
    from tileir.diff.fuzzknown import run_with
    from tileir.families import views as V

    if not any(s["op"] == "vload" and s.get("kind") == "strided" for s in walk(desc["body"])):
        return False

    def load(it, op):
        a = op.a
        view = it.val(a.view)
        buf = view["tv"]["buf"]
        offs, inb = V._tile_geometry(it, view, a.indices)
        if view.get("step") is not None and "sparse_dim" not in view:
            inb = (offs >= 0) & (offs < buf.size)
        it.set(op.res[0], np.where(inb, buf[np.where(inb, offs, 0)], 0).astype(buf.dtype))

    b = build(desc)
    lay = Layout.of(b)
    args = make_args(b)
    run_with(b.prog, args, b.grid, {"load_view": load})
    return _same_lanes(row, {lay.params[i][0]: args[i] for i in lay.outputs()})


def tf32_k4(desc: dict) -> bool:
    from tileir.diff.fuzzknown import tf32_k4_products

    return bool(tf32_k4_products(desc))


def triage_one(row: dict) -> dict:
    from tileir.diff.fuzzjudge import _show
    from tileir.diff.fuzzknown import known_cause

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
    outcome = {"status": row["status"], "detail": row.get("detail"), "verdict": {"regions": row.get("regions", [])}}
    k = known_cause(outcome, desc)
    if k:
        out["group"], out["why"], out["evidence"] = k["cause"], k["state"], k["evidence"]
        return out
    if tf32_k4(desc):
        out["group"], out["why"] = "tf32-k4", "a tf32 product with K = 4 (padded to 8 by the lowering now)"
        return out
    hyp = {"fewer_trips": fewer_trips(desc, row),
           "unwritten": bool(listed) and all(_show(first[n].reshape(-1)[i]) == dev for n, i, _t, dev in listed),
           "strided_unmasked": strided_unmasked(desc, row)}
    out["group"], out["models"] = "unknown", {k_: v for k_, v in hyp.items() if v}
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
    rows = [triage_one(r) for r in rep["differences"]]
    groups = collections.defaultdict(list)
    for t in rows:
        groups[f"{t['group']} ({t['status']})"].append(t["seed"])
    doc = {"report": a.report, "tool": "bench/fuzz_triage.py", "failures": len(rows),
           "groups": {k: {"count": len(v), "seeds": v} for k, v in sorted(groups.items())}, "rows": rows}
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
