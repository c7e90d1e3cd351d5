"""What the first H200 fuzz campaign taught the fuzzer (issue 15, docs/fuzz.md "The first
campaign"), without a GPU: the known causes and their models, the judgement of a narrow sum that
may overflow, the tf32 K = 4 padding as the classifier sees it, focused programs, the shrinker's
"probably the same" rule, and the options the next device session's commands use."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from tileir.diff import fuzzgen as G
from tileir.diff.__main__ import profile_of
from tileir.diff.classify import classify
from tileir.diff.fuzz import Campaign, region_ops
from tileir.diff.fuzzjudge import judge
from tileir.diff.fuzzknown import CAUSES, known_cause, tf32_k4_products, vector_tail_store
from tileir.diff.fuzzrun import InProcessDevice, compile_task, fake_answer
from tileir.diff.fuzzspec import Profile
from tileir.diff.shrink import Tester, read_reproducer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPRO = os.path.join(ROOT, "bench", "results", "fuzz_repro")


def _desc(body, fmts=("f32",), grid=1, seed=7):
    return {"v": 1, "seed": seed, "grid": [grid], "warps": 0, "fmts": list(fmts), "globals": [], "body": body}


def _load(i, fmt="f32", shape=(8,), dist="small"):
    return {"op": "load", "id": i, "fmt": fmt, "shape": list(shape), "dist": dist, "moving": False, "mask": False}


def _vstore(i, a, tshape):
    return {"op": "vstore", "id": i, "a": a, "tshape": list(tshape), "dim_map": list(range(len(tshape))),
            "order": "row", "pitch": 0, "idx": [{"c": 0, "by": "const"} for _ in tshape]}


def _job(desc):
    c = compile_task({"desc": desc, "seed": desc["seed"], "assemble": False})
    assert c["status"] == "ready", c.get("detail")
    return c


def _unmasked_store(it, op):
    """A device that writes every lane of a view store that lands in the buffer."""
    from tileir.families import views as V

    a = op.a
    view = it.val(a.view)
    buf = view["tv"]["buf"]
    offs, _ = V._tile_geometry(it, view, a.indices)
    v = np.broadcast_to(np.asarray(it.val(a.value)), offs.shape)
    ok = (offs >= 0) & (offs < buf.size)
    buf[offs[ok]] = v[ok]


# ---- the view store's tail: an open tileiras cause with a model ------------------------------------------


def test_a_view_store_writing_its_16_byte_tail_is_the_known_cause():
    """A [32] f32 tile stored into a [21] tensor: the H200 of campaign 1 wrote lanes 21-23 (the rest of
    the 16-byte group holding lane 20) and masked 24-31; the model says exactly that."""
    d = _desc([_load(1, shape=(32,)), _vstore(2, 1, (21,))])
    tail = Tester(InProcessDevice(lambda job: fake_answer(job, {"store_view": vector_tail_store})), assemble=False)
    out = tail.outcomes([d])[0]
    assert out["status"] == "differ" and out["verdict"]["bad"] == 3
    k = known_cause(out, d)
    assert k["known"] and k["cause"] == "view-store-tail" and k["state"] == "open"
    assert classify(d, out)["cause"] == "view-store-tail"
    # a device that writes every lane past the end is something else: not explained
    wide = Tester(InProcessDevice(lambda job: fake_answer(job, {"store_view": _unmasked_store})), assemble=False)
    out = wide.outcomes([d])[0]
    assert out["status"] == "differ" and out["verdict"]["bad"] == 11 and known_cause(out, d) is None


@pytest.mark.parametrize("name", ["fuzz_differ_188.json", "fuzz_differ_115.json", "fuzz_differ_1233.json",
                                  "fuzz_differ_1064.json"])
def test_the_campaigns_view_store_reproducers_are_the_known_cause(name):
    doc = read_reproducer(os.path.join(REPRO, name))
    out = {"status": doc["status"], "detail": doc["detail"], "verdict": doc["verdict"]}
    assert known_cause(out, doc["desc"])["cause"] == "view-store-tail"


def test_the_first_campaign_triages_to_six_groups():
    """bench/fuzz_triage.py's answer over bench/results/fuzz_h200.json, committed: every failure in a
    group, 5 unknown for the device."""
    with open(os.path.join(ROOT, "bench", "results", "fuzz_triage_h200.json")) as f:
        tri = json.load(f)
    groups = {k: v["count"] for k, v in tri["groups"].items()}
    assert groups == {"fixed-host (differ)": 9, "fixed-host (host_error)": 35, "fixed-judge (differ)": 1,
                      "tf32-k4 (differ)": 9, "unknown (differ)": 5, "view-store-tail (differ)": 28}
    assert sum(groups.values()) == tri["failures"] == 87


# ---- tf32 K = 4 --------------------------------------------------------------------------------------------


def _tf32_product(k=4):
    return _desc([_load(1, shape=(16, k)), _load(2, shape=(k, 8)),
                  {"op": "mma", "id": 3, "fmt": "tf32", "acc": "f32", "a": 1, "b": 2, "c": None, "split": False},
                  {"op": "store", "id": 4, "a": 3}])


def test_tf32_k4_is_known_only_where_the_lowering_leaves_it_unpadded(monkeypatch):
    d = _tf32_product()
    assert tf32_k4_products(d) == [(16, 4, 8, True)]
    differ = {"status": "differ", "verdict": {"regions": [{"buf": "out_f32", "step": 4, "op": "store",
                                                            "taint": "approx", "bad": 1, "first": []}]}}
    assert known_cause(differ, d) is None  # padded: a difference here is news (the padding did not hold)
    assert classify(d, differ)["evidence"]["tf32_k4_padded"] == [(16, 4, 8)]
    monkeypatch.setattr("tileir.families.mma.TF32_PADDED_K", {})
    assert known_cause(differ, d)["cause"] == "tf32-k4"
    assert tf32_k4_products(_tf32_product(8)) == []


def test_the_generator_still_draws_tf32_products_with_k_4():
    """So the next campaign runs the padding: campaign 1's 2000 programs hold tf32 products with K = 4
    (the online softmax at D or N = 4, plain mma) in dozens of programs; 10,000 hold ~5x as many."""
    hits = 0
    for seed in range(1, 2001):
        d = G.generate(seed)
        if any(s["op"] == "softmax" and s["fmt"] in ("tf32", "tf32x3") and 4 in (s["D"], s["N"]) or
               s["op"] == "mma" and s["fmt"] == "tf32" for s in G.walk(d["body"])):
            hits += bool(tf32_k4_products(d))
    assert hits >= 20


def test_every_known_cause_has_a_state_and_a_matcher():
    for c in CAUSES:
        assert c.state in ("open", "worked around") and c.match is not None and c.why


# ---- the judgement of a narrow sum that may overflow ---------------------------------------------------------


def _fold_in_order(it, op):
    """A device folding left to right (reversed for a reverse scan), every partial in the format."""
    from tileir.families.reduce import _fold_generic

    xs = [np.asarray(it.val(h)) for h in op.a.operands]
    for h, v in zip(op.res, _fold_generic(it, op, op.regions[0], xs, op.a.dim)):
        it.set(h, v)


def test_an_f16_sum_that_may_overflow_in_some_order_is_not_judged():
    """Campaign 1's seed 865: an f16 scan of +-65504s answered 65504 / -inf on the device (each partial
    rounded to f16) where the host, folding in f32, stayed finite."""
    job = _job(G.generate(865, Profile(version=1)))  # campaign 1's program 865
    dev = fake_answer(job, {"scan": _fold_in_order})
    assert judge(job["layout"], job["host"], dev)["status"] == "equal"
    assert job["host"].unjudged["out_f32"].sum() > 0


def test_a_small_f16_sum_is_still_judged():
    d = _desc([_load(1, "f16", (16, 4)), {"op": "scan", "id": 2, "f": "sum", "a": 1, "dim": 0, "rev": False},
               {"op": "store", "id": 3, "a": 2}], fmts=("f16",))
    job = _job(d)
    assert not job["host"].unjudged["out_f16"].any()
    dev = fake_answer(job)
    dev.outs["out_f16"][3] = np.float16(dev.outs["out_f16"][3] + np.float16(1.0))
    assert judge(job["layout"], job["host"], dev)["status"] == "differ"


# ---- focused programs, seeds again, the shrinker's budget --------------------------------------------------


def test_a_focused_profile_draws_only_its_kinds():
    prof = profile_of("vstore,if", None)
    kinds = set()
    for seed in range(60):
        kinds |= set(G.op_kinds(G.generate(seed, prof)))
    assert {"vstore", "if"} <= kinds
    assert kinds <= {"vstore", "if", "load", "store", "bin", "ibin"}  # an if's carries are combined by bin / ibin
    assert profile_of(None, "while").focus == ("while",)
    with pytest.raises(SystemExit):
        profile_of("vstores", None)
    assert G.generate(5, Profile(only=("while",)))["body"]  # nothing drawable inside an if: no crash


def test_seeds_run_those_programs_and_likely_same_needs_the_same_regions(tmp_path):
    """--seeds runs the programs of those seeds (as the campaign drew them); a failure is taken for
    one already shrunk only when it differs in the same kind of region."""
    def wrong(job):  # a device that answers |x| for negf
        from tileir.families.arith import _ref_unaryf

        def un(it, op):
            _ref_unaryf(it, op)
            if op.a.op == "negf":
                it.set(op.res[0], np.abs(np.asarray(it.vals[op.res[0]])))
        return fake_answer(job, {"unaryf": un})

    seeds = [s for s in range(300) if any(t["op"] == "un" and t["f"] == "negf" for t in G.walk(G.generate(s)["body"]))]
    camp = Campaign(0, 0, device=InProcessDevice(wrong), workers=0, assemble=False, log=lambda *a: None,
                    seeds=seeds[:6])
    rep = camp.run(str(tmp_path / "repro"), max_shrink=1, shrink_s=20, shrink_total_s=40, per_class=1)
    assert rep["programs"] == 6 and {r["seed"] for r in rep["differences"]} <= set(seeds[:6])
    assert sum(1 for r in rep["differences"] if r.get("reproducer")) <= 1
    for r in rep["differences"]:
        if r.get("likely_same_as"):
            first = next(x for x in rep["differences"] if x.get("reproducer"))
            assert {g["op"] for g in r["regions"]} == {g["op"] for g in first["regions"]}
    assert region_ops({"verdict": {"regions": [{"op": "vstore"}, {"op": "store"}, {"op": "store"}]}}) == \
        ("store", "vstore")


def test_the_device_script_names_commands_that_parse():
    """bench/fuzz_device.sh's python commands parse with the CLI as written (every option exists)."""
    from tileir.diff.__main__ import build_parser

    with open(os.path.join(ROOT, "bench", "fuzz_device.sh")) as f:
        text = f.read().replace("\\\n", " ")
    cmds = [ln.split("-m tileir.diff", 1)[1] for ln in text.splitlines()
            if "-m tileir.diff" in ln and not ln.lstrip().startswith("#")]
    assert len(cmds) >= 7
    for cmd in cmds:
        args = []
        for tok in cmd.split():
            if tok in (">", "|", "&&") or tok.startswith(">"):
                break
            args.append("X" if "$" in tok else tok)
        build_parser().parse_args(args)  # SystemExit on an unknown option or a missing value
