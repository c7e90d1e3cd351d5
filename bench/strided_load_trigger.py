"""Does tileiras' choice of a TMA load decide `strided-load-past-edge` -- or, with ``--cause
view-load-pitch-gap``, a partition view's load into a pitch gap (docs/fuzz.md)? The CPU half.

Campaign 3's seed 663 (and campaign 2's) failed on the H200 as ``diff.fuzzknown.strided_unmasked_load``
says: a strided view's load_view past the tensor's edge got the memory there instead of the padding. The
model would change the answer of some 260 other programs that were right on the device. The sister cause
view-store-tail was decided by tileiras selecting a TMA store (bench/view_store_tail_trigger.py). This
script asks the same of the load: for every program of a campaign that holds a strided vload it draws the
program again from its seed, runs the host reference and the host with ``strided_unmasked_load`` in place of
load_view (judged as the campaign judged the device); a program whose verdict the model changes is AT RISK,
and only those are assembled as the campaign assembled them (sm_90, -O0 for a kernel keeping a while loop;
with the TMA hints the campaign's lowering wrote: fuzzmodel.lower_as_run) with ``tileiras --remarks=memory``.
Each load_view gets ``tma``: a "TMA Load instruction" remark whose Shape has the tile's element count (the
remarks name no location; ``tma_box``: also view_store_tail_trigger.box_matches). An at-risk program is
FAILING (its campaign difference's cause is strided-load-past-edge) or RIGHT (not among the differences);
the rule "some strided load the model changes got a TMA load" is tabulated against that, by program and by
load. Partition (plain) loads in the at-risk programs whose tile crosses the tensor's edge are tallied too,
with their TMA remarks and whether their program was right.

    PYTHONPATH=src .venv/bin/python bench/strided_load_trigger.py \
        --campaign bench/results/fuzz_campaign3_h200.json --workers 2 \
        --out bench/results/strided_load_trigger_cpu.json

    PYTHONPATH=src .venv/bin/python bench/strided_load_trigger.py --cause view-load-pitch-gap \
        --campaign bench/results/fuzz_campaign7_h200.json --failing 201871,203448,204236 --workers 2 \
        --out bench/results/gap_load_trigger_cpu.json

(``--limit N``: the first N seeds plus every failing one; ``--gen-version`` overrides the report's generator;
``--failing``: the seeds of the cause where the report predates its name.)
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import view_store_tail_trigger as vst  # noqa: E402  (tileiras_remarks, box_matches, Static, confusion, failures)

CAUSE = "strided-load-past-edge"
# per cause: the view kind whose loads it is about, and its model (diff.fuzzknown's) of the device's load
STUDIES = {"strided-load-past-edge": ("strided", "strided_unmasked_load"),
           "view-load-pitch-gap": ("partition", "pitch_gap_load")}


def _model(cause: str):
    from tileir.diff import fuzzknown

    name = STUDIES[cause][1]
    return fuzzknown.pitch_gap_load(False) if name == "pitch_gap_load" else getattr(fuzzknown, name)


def analyse(task: dict) -> dict:
    try:
        return _analyse(task)
    except Exception as e:  # a record of its own, not the end of the campaign
        return {"seed": task["seed"], "status": "script_error", "detail": f"{type(e).__name__}: {e}"[:300]}


def _kind(view: dict) -> str:
    return "gather" if "sparse_dim" in view else "strided" if view.get("step") is not None else "partition"


def _analyse(task: dict) -> dict:
    warnings.filterwarnings("ignore")
    from tileir.diff.fuzzmodel import WORKAROUNDS, lower_as_run

    lower_as_run(task.get("workarounds", WORKAROUNDS))  # the TMA hints as the campaign's lowering wrote them
    from tileir.diff.fuzzbuild import build
    from tileir.diff.fuzzgen import generate, walk
    from tileir.diff.fuzzrun import compile_task, fake_answer, judge_job
    from tileir.diff.fuzzspec import Profile
    from tileir.families import views as V
    from tileir.ref.core import RULES

    seed = task["seed"]
    cause = task.get("cause", CAUSE)
    kind_of_cause, model = STUDIES[cause][0], _model(cause)
    desc = generate(seed, Profile(version=task["version"]))
    vloads = [s for s in walk(desc["body"]) if s.get("op") == "vload"]
    if not any(s.get("kind") == kind_of_cause for s in vloads) and not (task.get("partition") and vloads):
        return {"seed": seed, "status": "no-" + kind_of_cause}
    job = compile_task({"desc": desc, "seed": seed, "assemble": False})
    if job.get("status") != "ready":
        return {"seed": seed, "status": job.get("status")}
    dyn: dict = collections.defaultdict(list)  # op.num -> one record per execution

    def rule(it, op):
        view = it.val(op.a.view)
        kind = _kind(view)
        RULES["load_view"](it, op)
        host = np.array(it.val(op.res[0]))
        if kind == kind_of_cause:
            model(it, op)
        got = np.asarray(it.val(op.res[0]))
        tv = view["tv"]
        offs, inb = V._tile_geometry(it, view, op.a.indices)
        oob = ~inb
        inbuf = oob & (offs >= 0) & (offs < tv["buf"].size)
        foot = vst.footprint(tv["shape"], tv["strides"])
        rel = (offs[inbuf] - vst._int(tv["base"])).tolist()
        hb, gb = np.ascontiguousarray(host), np.ascontiguousarray(got)
        diff = (hb.view(np.uint8).reshape(hb.size, -1) != gb.view(np.uint8).reshape(gb.size, -1)).any(1)
        cross, start = [], []
        step = view.get("step") or view["tile"]
        for k, (t, d) in enumerate(zip(view["tile"], view["dim_map"])):
            if k == view.get("sparse_dim"):
                cross.append(None)
                continue
            i0 = vst._int(it.val(op.a.indices[k])) * step[k]
            start.append(i0)
            cross.append(bool(i0 + t > tv["shape"][d]))
        dyn[op.num].append(
            {
                "oob": int(oob.sum()),
                "oob_in_buf": int(inbuf.sum()),
                "oob_alias": sum(1 for o in rel if int(o) in foot),
                "changed": int(diff.sum()),
                "cross": cross,
                "start": start,
                "shape": list(tv["shape"]),
                "strides": list(tv["strides"]),
                "step": list(step),
                "pad": str(getattr(view["padding"], "name", view["padding"])),
            }
        )

    ans = fake_answer(job, {"load_view": rule})
    verdict = judge_job(job, ans)
    at_risk = verdict["status"] != "equal"
    prog = build(desc).prog
    st = vst.Static(prog)
    loads = []
    for op in prog.walk():
        if op.kind != "load_view":
            continue
        maker = st.defs.get(op.a.view)
        mk = getattr(maker, "kind", None)
        tile = list(maker.a.tile_shape) if maker is not None else None
        d = dyn.get(op.num, [])
        loads.append(
            {
                "num": op.num,
                "kind": {"strided_view": "strided", "partition_view": "partition", "gather_view": "gather"}.get(mk, mk),
                "fmt": op.a.dtype,
                "tile": tile,
                "elems": int(np.prod(tile)) if tile else None,
                "dim_map": list(getattr(maker.a, "dim_map", ()) or ()) if maker is not None else None,
                "trav": d[0]["step"] if d else None,
                "tshape": d[0]["shape"] if d else None,
                "strides": d[0]["strides"] if d else None,
                "pad": d[0]["pad"] if d else None,
                "runs": len(d),
                "oob": sum(x["oob"] for x in d),
                "oob_in_buf": sum(x["oob_in_buf"] for x in d),
                "oob_alias": sum(x["oob_alias"] for x in d),
                "changed": sum(x["changed"] for x in d),
                "cross": [any(x["cross"][k] for x in d) for k in range(len(tile or ()))] if d else None,
                "starts": sorted({tuple(x["start"]) for x in d})[:4],
                "parents": st.parents[op.num],
            }
        )
    out = {
        "seed": seed,
        "status": "ok",
        "verdict": verdict["status"],
        "bad": verdict.get("bad"),
        "regions": [(r.get("buf"), r.get("step"), r.get("op"), r.get("bad")) for r in verdict.get("regions") or []],
        "model_error": ans.error,
        "at_risk": at_risk,
        "loads": loads,
        "remarks": None,
    }
    out["edge_partition"] = any(x["kind"] == "partition" and x["oob"] > 0 for x in loads)
    if task.get("remarks"):
        rem = vst.tileiras_remarks(prog, task.get("while_o0", True))
        tma = [
            s for n, ins, _, s in rem["other"] if n == "RemarkMemoryLoadInstructionSelected" and ins and "TMA" in ins
        ]
        out["remarks"] = {
            "args": rem["args"],
            "rc": rem["rc"],
            "tma_loads": tma,
            "tma_stores": rem["stores"],
            "names": collections.Counter(f"{n}: {ins or why}" for n, ins, why, _ in rem["other"]),
        }
        lv = [x for x in loads if x["elems"]]
        for x in loads:
            same = [y for y in lv if y["elems"] == x["elems"]]
            x["tma"] = any(s and int(np.prod(s)) == x["elems"] for s in tma)
            x["tma_box"] = any(s and vst.box_matches(x["tile"], s) for s in tma)
            # another load_view of the same element count, and fewer TMA remarks of it than such loads
            x["tma_ambiguous"] = (
                x["tma"]
                and len(same) > 1
                and sum(1 for s in tma if s and int(np.prod(s)) == x["elems"]) // 2 < len(same)
            )
        if any(x["kind"] == "partition" and x["oob"] > 0 and x["tma"] for x in loads):
            # would a partition load reading past the edge unmasked (strided_unmasked_load's rule) have shown?
            def unmasked(it, op):
                view = it.val(op.a.view)
                if _kind(view) != "partition":
                    return RULES["load_view"](it, op)
                buf = view["tv"]["buf"]
                offs, _ = V._tile_geometry(it, view, op.a.indices)
                inb = (offs >= 0) & (offs < buf.size)
                it.set(op.res[0], np.where(inb, buf[np.where(inb, offs, 0)], 0).astype(buf.dtype))

            out["partition_unmasked_verdict"] = judge_job(job, fake_answer(job, {"load_view": unmasked}))["status"]
    return out


def _feat(x: dict) -> dict:
    """A load's features for the tallies."""
    cd = next((j for j, s in enumerate(x["strides"] or []) if s == 1), None)
    ck = x["dim_map"].index(cd) if x["dim_map"] and cd in x["dim_map"] else None
    return {
        "fmt": x["fmt"],
        "rank": len(x["tile"]),
        "dim_map": str(x["dim_map"]),
        "overlap": any(s < t for s, t in zip(x["trav"] or [], x["tile"])),
        "cross_contig": bool(ck is not None and x["cross"] and x["cross"][ck]),
        "cross_other": bool(x["cross"] and any(c for k, c in enumerate(x["cross"]) if k != ck)),
        "aliases_tensor": x["oob_alias"] > 0,
        "pad": x["pad"],
        "in_loop": any(p in ("for", "while") for p in x["parents"]),
        "contig_bytes_mod16": (
            x["tile"][ck]
            * {"f64": 8, "i64": 8, "f32": 4, "i32": 4, "f16": 2, "bf16": 2, "i16": 2, "i8": 1}.get(x["fmt"], 4)
        )
        % 16
        if ck is not None
        else None,
    }


def main(argv=None) -> int:
    warnings.filterwarnings("ignore")
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--campaign", default="bench/results/fuzz_campaign3_h200.json")
    p.add_argument("--cause", default=CAUSE, choices=sorted(STUDIES))
    p.add_argument("--failing", default="", help="comma-separated seeds of the cause (a report before its name)")
    p.add_argument("--gen-version", type=int, default=None)
    p.add_argument("--limit", type=int, default=None, help="the first N seeds only (plus every failing seed)")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--out", default=None)
    p.add_argument(
        "--partition",
        action="store_true",
        help="also assemble every program (at risk or not) whose partition-view load crosses the tensor's edge",
    )
    a = p.parse_args(argv)
    with open(a.campaign) as f:
        rep = json.load(f)
    version = int(a.gen_version or rep.get("generator") or 1)
    seed0, n = int(rep.get("seed") or 1), int(rep.get("programs") or 0)
    cause, study_kind = a.cause, STUDIES[a.cause][0]
    fails = vst.failures(rep)
    for s in filter(None, a.failing.split(",")):
        fails[int(s)] = (cause, fails.get(int(s), (None, set()))[1])
    seeds = list(range(seed0, seed0 + (min(n, a.limit) if a.limit else n)))
    seeds += sorted(s for s, (c, _) in fails.items() if c == cause and s not in seeds)
    while_o0 = "while-O0" in (rep.get("workarounds") or ())
    tasks = [{"seed": s, "version": version, "while_o0": while_o0, "partition": a.partition, "cause": cause,
              "workarounds": list(rep.get("workarounds") or ())} for s in seeds]
    t0 = time.time()
    with ProcessPoolExecutor(a.workers) as ex:  # the host and the model for all; then tileiras for the chosen
        rows = list(ex.map(analyse, tasks, chunksize=8))
        pick = [
            i
            for i, r in enumerate(rows)
            if r["status"] == "ok" and (r["at_risk"] or (a.partition and r["edge_partition"]))
        ]
        again = list(ex.map(analyse, [dict(tasks[i], remarks=True) for i in pick], chunksize=2))
    for i, r in zip(pick, again):
        rows[i] = r
    secs = time.time() - t0
    assembled = [r for r in rows if r.get("remarks")]

    def label(r):  # 1 failing of this cause, 0 right, None failing for another cause
        f = fails.get(r["seed"])
        return 0 if f is None else 1 if f[0] == cause else None

    ok = [r for r in rows if r["status"] == "ok"]
    rows_st = [r for r in ok if any(x["kind"] == study_kind for x in r["loads"])]
    risky = [r for r in ok if r["at_risk"]]
    lab = [r for r in risky if label(r) is not None]

    # the rule, by program: some load of the cause's kind the model changes got a TMA load remark of its
    # element count
    def changed_strided(r):
        return [x for x in r["loads"] if x["kind"] == study_kind and x["changed"] > 0]

    rules = {
        "tma": lambda r: any(x.get("tma") for x in changed_strided(r)),
        "tma_box": lambda r: any(x.get("tma_box") for x in changed_strided(r)),
        "tma_unambiguous": lambda r: any(x.get("tma") and not x.get("tma_ambiguous") for x in changed_strided(r)),
    }
    conf = {k: vst.confusion([label(r) for r in lab], [fn(r) for r in lab]) for k, fn in rules.items()}
    loads = [dict(x, seed=r["seed"], y=label(r)) for r in lab for x in changed_strided(r)]
    load_conf = vst.confusion([x["y"] for x in loads], [bool(x.get("tma")) for x in loads])
    # what goes with TMA among the at-risk strided loads (right programs)
    by_feat: dict = {}
    for x in loads:
        for k, v in _feat(x).items():
            c = by_feat.setdefault(k, {}).setdefault(str(v), [0, 0])
            c[0] += 1
            c[1] += bool(x.get("tma"))
    # partition loads crossing an edge in the assembled programs
    part = [
        dict(x, seed=r["seed"], y=label(r), at_risk=r["at_risk"])
        for r in assembled
        for x in r["loads"]
        if x["kind"] == "partition" and x["oob"] > 0
    ]
    part_tma = [x for x in part if x.get("tma")]
    names = collections.Counter()
    for r in assembled:
        names.update(r["remarks"]["names"] if r.get("remarks") else {})
    keep = (
        "seed",
        "y",
        "num",
        "fmt",
        "tile",
        "trav",
        "tshape",
        "strides",
        "dim_map",
        "pad",
        "cross",
        "starts",
        "oob",
        "oob_in_buf",
        "oob_alias",
        "changed",
        "tma",
        "tma_box",
        "tma_ambiguous",
        "parents",
    )
    interesting = [{k: x.get(k) for k in keep} for x in loads if x["y"] or x.get("tma")]
    doc = {
        "tool": "bench/strided_load_trigger.py",
        "cause": cause,
        "model": "diff.fuzzknown." + STUDIES[cause][1],
        "campaign": a.campaign,
        "generator": version,
        "seeds": [seeds[0], seeds[-1], len(seeds)],
        "limit": a.limit,
        "while_o0": while_o0,
        "seconds": round(secs, 1),
        "status": dict(collections.Counter(r["status"] for r in rows)),
        "script_errors": [[r["seed"], r["detail"]] for r in rows if r["status"] == "script_error"][:5],
        "model_errors": sorted(r["seed"] for r in ok if r.get("model_error")),
        "with_strided_load": len(rows_st),
        "assembled": len(assembled),
        "at_risk_programs": len(risky),
        "at_risk_other_cause": sorted(r["seed"] for r in risky if label(r) is None),
        "failing_not_at_risk": sorted(
            s
            for s, (c, _) in fails.items()
            if c == cause and not any(r["seed"] == s and r.get("at_risk") for r in rows)
        ),
        "programs_failing": sum(1 for r in lab if label(r)),
        "programs_right": sum(1 for r in lab if not label(r)),
        "assemble_rc_nonzero": sorted(r["seed"] for r in risky if r.get("remarks") and r["remarks"]["rc"]),
        "programs_confusion": conf,
        "at_risk_strided_loads": len(loads),
        "at_risk_strided_loads_tma": sum(bool(x.get("tma")) for x in loads),
        "at_risk_strided_loads_tma_box": sum(bool(x.get("tma_box")) for x in loads),
        "loads_confusion": load_conf,
        "at_risk_programs_with_tma_load_any": sum(1 for r in risky if r.get("remarks") and r["remarks"]["tma_loads"]),
        "tma_by_feature": by_feat,
        "partition_edge_loads": {
            "programs": len({x["seed"] for x in part}),
            "n": len(part),
            "tma": len(part_tma),
            "tma_programs": len({x["seed"] for x in part_tma}),
            "tma_programs_failing": {
                str(x["seed"]): (fails.get(x["seed"]) or [None])[0] for x in part_tma if x["seed"] in fails
            },
            "tma_by_pad": dict(collections.Counter(x["pad"] for x in part_tma)),
            "tma_in_at_risk_programs": len({x["seed"] for x in part_tma if x["at_risk"]}),
            "tma_programs_unmasked_would_differ": sorted(
                r["seed"] for r in assembled if r.get("partition_unmasked_verdict") not in (None, "equal")
            ),
            "tma_rows": [{k: x.get(k) for k in keep} for x in part_tma][:8],
        },
        "remark_kinds": dict(names.most_common(30)),
        "interesting_loads": interesting[:40],
    }
    text = json.dumps(doc, default=str, separators=(",", ":"))
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")
    for k in (
        "status",
        "at_risk_programs",
        "programs_failing",
        "programs_right",
        "programs_confusion",
        "at_risk_strided_loads",
        "at_risk_strided_loads_tma",
        "loads_confusion",
        "partition_edge_loads",
    ):
        print(k, json.dumps(doc[k], default=str)[:600], file=sys.stderr)
    print(f"{len(text)} bytes, {secs:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
