"""bench/suite.py on the CPU: every shape of the public suite builds its inputs (shapes only) and
the configuration the library would run it with, and every such configuration records, lowers
and encodes; a smoke run of tiny shapes on the host reference (each with the configuration of one
of the suite's shapes) answers right, writes its records and figures, and resumes."""

import json
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import suite  # noqa: E402


def test_every_shape_builds_its_inputs_and_configuration():
    shapes = suite.all_shapes()
    names = [s.name for s in shapes]
    assert len(names) == len(set(names))  # a record's key
    count = Counter(s.family for s in shapes)
    assert set(count) == set(suite.FAMILIES)
    assert count["matmul_f16"] == count["matmul_bf16"] == count["matmul_tf32"] == 9 * 6 + 1
    assert count["linear_bf16"] == 9 * 6
    rows = sum(1 for c in suite.ROW_WIDTHS for r in suite.ROW_COUNTS if r * c <= 2 ** 31)
    assert count["softmax"] == count["layernorm"] == count["rmsnorm"] == 2 * rows
    assert count["attention"] == 2 * 2 * 6 * 2 + 2 * 3 * 2
    assert count["vadd"] == count["histogram"] == 19
    for s in shapes:
        if s.family == "attention":
            assert s.shape["B"] * s.shape["H"] * s.shape["S"] in (suite.TOKENS, suite.TOKENS // 2 * 2)
        if s.family in ("softmax", "layernorm", "rmsnorm"):
            assert s.shape["R"] * s.shape["C"] <= 2 ** 31
    todo, failed = suite.configurations(shapes, "sm_90")
    assert failed == []
    kernels = Counter(name for name, _, _ in todo)
    # the variants the rule chooses are among them: several rows a block, f8 (split-K is not: the
    # model fitted to bench/results/matmul_probe_h200.json gives one pass at every suite shape; the
    # probe timed one, 16 x 4096 x 11008, where two splits ran faster: docs/speed.md)
    assert kernels["matmul_f8"]
    rows = [s.launches(s.make("meta"), "sm_90")[1] for s in shapes if s.family in ("softmax", "layernorm", "rmsnorm")]
    assert any(d.get("rows", 1) > 1 for d in rows)  # several rows a block, where the rule says so
    assert len(todo) < 300  # shapes share configurations: one cubin serves many

    # the library's plain calls choose the persistent walk where the rule does (heuristics.matmul_walk, bmm_walk)
    assert kernels["matmul_persistent"] and kernels["bmm_persistent"] and kernels["matmul_nt_persistent"]
    walked = {s.name: s.launches(s.make("meta"), "sm_90")[1]["kernel"] for s in shapes
              if s.name in ("matmul_f16 M=8192 N=1024 K=1024", "matmul_f16 M=1000 N=5000 K=1000",
                            "bmm B=64 M=512 N=512 K=512", "bmm B=8 M=512 N=512 K=512")}
    assert walked == {"matmul_f16 M=8192 N=1024 K=1024": "matmul_persistent",
                      "matmul_f16 M=1000 N=5000 K=1000": "matmul_f16",
                      "bmm B=64 M=512 N=512 K=512": "bmm_persistent", "bmm B=8 M=512 N=512 K=512": "bmm"}
    # and 3xtf32 from B's tf32 halves where gemm's plan does (1000 rows and more on sm_90), split-K below
    three = {s.name: s.launches(s.make("meta"), "sm_90")[1]["kernel"] for s in shapes if s.family == "matmul_3xtf32"}
    assert three["matmul_3xtf32 M=4096 N=4096 K=4096"] == "tf32_halves + matmul_3xtf32"
    assert three["matmul_3xtf32 M=128 N=4096 K=4096"] == "matmul_partial + splitk_reduce"


@pytest.mark.parametrize("times, want", [([1.0, 5.0, 1.2, 1.1], (1.0, 1.1, 4)),  # torch's first median stalled
                                         ([1.0, 1.5], (1.0, 1.5, 2))])  # inside 0.5-2: timed once each
def test_a_row_far_from_parity_is_timed_again_on_both_sides(times, want, monkeypatch):
    """run_shape times both sides again where the first ratio falls outside RETIME_INSIDE, each keeping
    its faster median (one stalled median once made a row 4.4x). Kills: the re-time dropped, or only
    one side re-timed (tileir's 1.2 kept, or torch's 5.0)."""
    monkeypatch.setenv("TILEIR_INTERPRET", "1")
    shape = next(s for s in suite.smoke_shapes() if s.family == "vadd")
    calls = []

    def timer(fn):
        calls.append(fn)
        return times[len(calls) - 1]

    rec = suite.run_shape(shape, timer, "cpu", None, smoke=False)
    assert rec["ok"], rec
    assert (rec["tileir_ms"], rec["torch_ms"], len(calls)) == want
    assert rec["ratio"] == round(want[1] / want[0], 4)

def test_cpu_smoke_answers_right_writes_records_and_figures_and_resumes(tmp_path, monkeypatch):
    monkeypatch.setenv("TILEIR_INTERPRET", "1")
    out = tmp_path / "suite_smoke.json"
    assert suite.main(["--cpu-smoke", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    recs = doc["records"]
    assert {r["family"] for r in recs} == set(suite.FAMILIES)
    bad = [(r["name"], r["error"]) for r in recs if not r["ok"]]
    assert bad == []
    for r in recs:
        assert r["tileir_ms"] > 0 and r["config"] and r["shape"] and r["formats"]
        if r["torch_ms"]:
            assert r["ratio"] == pytest.approx(r["torch_ms"] / r["tileir_ms"], rel=1e-2, abs=1e-4)
    split = [r for r in recs if r["config"].get("kernel") == "matmul_partial + splitk_reduce"]
    assert split and split[0]["config"]["splits"] > 1
    assert any(r["config"].get("rows", 1) > 1 for r in recs if r["family"] == "softmax")
    summ = doc["summary"]
    assert summ["softmax"]["shapes"] == summ["softmax"]["ok"] and "geomean" in summ["softmax"]
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        pass
    else:
        for fam in suite.FAMILIES:
            assert (tmp_path / f"suite_smoke_{fam}.png").exists(), fam
    # resumable: a second run finds every shape done and adds nothing
    assert suite.main(["--cpu-smoke", "--out", str(out), "--families", "vadd,sum"]) == 0
    again = json.loads(out.read_text())
    assert len(again["records"]) == len(recs) and len(again["runs"]) == 2 and again["runs"][1]["pending"] == 0


def test_the_summary_and_a_failed_shape():
    recs = [{"family": "f", "name": "f a", "ratio": 2.0, "ok": True}, {"family": "f", "name": "f b", "ratio": 0.5,
                                                                       "ok": True},
            {"family": "f", "name": "f c", "ratio": None, "ok": False}]
    s = suite.summary(recs)["f"]
    assert s["geomean"] == 1.0 and s["min"] == 0.5 and s["min_shape"] == "f b"
    assert s["shapes"] == 3 and s["ok"] == 2 and s["wrong_or_failed"] == ["f c"]
