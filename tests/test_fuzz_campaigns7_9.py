"""Campaigns 7, 8 and 9's unexplained differences (bench/results/fuzz_campaign7_h200.json,
fuzz_campaign8_h200.json, fuzz_campaign9_h200.json), without a GPU:

* a partition view's load whose tile crosses the tensor's contiguous end into a padded pitch's gap read the
  gap's memory instead of the padding (201871, 203448, 204236: diff.fuzzknown.pitch_gap_load answers every
  lane the device did); such a load now carries allow_tma = false (families/views.py load_may_read_a_gap);
* a float sum whose partial sums may pass the format's range answers any class in some order (205930's f16
  sum under an rsqrt, 207142's reverse scan of two largest f32s beside -inf): the judge no longer judges
  those lanes (fuzzjudge.PerturbedInterp, source_bounds);
* a cos of an approximate argument so large that its few ulps span a radian (campaign 8's 305091: cos(cosh(x)))
  is any value in its range: not judged either;
* pack_bytes of an extract's result packs other bytes on the H200 at every level (campaign 9's 504651,
  bench/results/fuzz_variants_504651_h200.json): the recording writes the whole tile's pack with its bytes
  extracted, which the H200 answers right, and refuses what that cannot stand for.

Each test names the mutants it kills."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import tileir as ti
from tests.kernelcheck import fuzz_desc, fuzz_job, fuzz_load, walk
from tileir.diff.fuzzbuild import build
from tileir.diff.fuzzgen import generate
from tileir.diff.fuzzknown import NO_TMA_GAP_LOAD, WORKAROUNDS, known_cause, match_view_load_pitch_gap
from tileir.diff.fuzzmodel import lower_as_run
from tileir.families import views
from tileir.families.views import NO_TMA, load_may_read_a_gap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GAP_SEEDS = (201871, 203448, 204236)
FOLD_SEEDS = (205930, 207142)


def _campaign(n):
    with open(os.path.join(ROOT, "bench", "results", f"fuzz_campaign{n}_h200.json")) as f:
        return {d["seed"]: d for d in json.load(f)["differences"]}


@pytest.fixture(scope="module")
def campaign9():
    return _campaign(9)


@pytest.fixture(scope="module")
def campaign7():
    return _campaign(7)


def _outcome(diff: dict, workarounds) -> dict:
    return {"status": diff["status"], "workarounds": list(workarounds),
            "verdict": {"status": diff["status"], "bad": diff["bad"], "regions": diff["regions"]}}


def _vload(tile, tshape, pitch=0, order="row"):
    """A fuzz program loading an f32 ``tile`` of a tensor of ``tshape`` (rows padded by ``pitch``), at tile
    (0, ..., 0, 1) so the tile crosses the last dimension's end where it does not divide it, and storing it."""
    idx = [{"c": 0, "by": "const"} for _ in tshape]
    vl = {"op": "vload", "id": 5, "fmt": "f32", "kind": "partition", "pad": "zero", "tile": list(tile),
          "tshape": list(tshape), "order": order, "pitch": pitch, "dim_map": list(range(len(tshape))),
          "trav": list(tile), "idx": idx}
    return build(fuzz_desc([fuzz_load(1, "f32", (32,)), vl, {"op": "store", "id": 6, "a": 5}])).prog


def _gap_hints(prog) -> list:
    return [load_may_read_a_gap(prog, o.a.view, o.a.inbounds) for o in prog.walk() if o.kind == "load_view"]


@pytest.mark.parametrize("tile, tshape, pitch, order, want", [
    ((4, 8), (4, 6), 2, "row", True),    # rows of 6 at a pitch of 8: the tile's last 2 columns are the gap
    ((4, 8), (4, 6), 0, "row", False),   # dense rows: past the end is the next row, which TMA masks
    ((4, 4), (4, 8), 2, "row", False),   # the tile divides the rows: the end is never crossed
    ((8, 4), (7, 4), 1, "col", True),    # 201871's form: column-major, columns of 7 at a pitch of 8
    ((32,), (26,), 0, "row", False),     # a 1-D tensor has no gap (a store there is view-store-tail's)
])
def test_the_rule_over_static_geometries(tile, tshape, pitch, order, want):
    """Kills: a gapless end taken for a gap (every library load of a dense odd width would lose TMA), the
    column-major gap missed (the rule reading only the last dimension), a divided extent taken as crossed."""
    assert _gap_hints(_vload(tile, tshape, pitch, order)) == [want]


@pytest.mark.parametrize("seed", GAP_SEEDS)
def test_campaign_7s_gap_loads_get_no_tma_and_their_model_explains_them(seed, campaign7):
    """Each of the three: its lowering now writes allow_tma = false on the gap load, and none without the
    workaround (the study's switch); pitch_gap_load (every gap but past the tensor's last element) gives the
    device's verdict region for region, in a run without the workaround only. Kills: the hint missing from
    load_view, the switch ignored, a model that reads the last row's gap too (one lane more in 201871)."""
    desc = generate(seed)
    try:
        lower_as_run([w for w in WORKAROUNDS if w != NO_TMA_GAP_LOAD])
        before = [i.hints for i in walk(ti.lower(build(desc).prog).body) if type(i).__name__ == "LoadViewTile"]
    finally:
        lower_as_run(WORKAROUNDS)
    after = [i.hints for i in walk(ti.lower(build(desc).prog).body) if type(i).__name__ == "LoadViewTile"]
    assert after.count(NO_TMA) > before.count(NO_TMA)
    before_run = [w for w in WORKAROUNDS if w != NO_TMA_GAP_LOAD]
    got = match_view_load_pitch_gap(_outcome(campaign7[seed], before_run), desc)
    assert got and got["last_row"] is False
    assert match_view_load_pitch_gap(_outcome(campaign7[seed], WORKAROUNDS), desc) is None
    cause = known_cause(_outcome(campaign7[seed], before_run), desc)
    assert cause and cause["cause"] == "view-load-pitch-gap"


def test_the_switch_defaults_on():
    assert views.HINT["gap_load"] and NO_TMA_GAP_LOAD in WORKAROUNDS


@pytest.mark.parametrize("seed", FOLD_SEEDS)
def test_an_order_dependent_sums_lanes_are_not_judged(seed, campaign7):
    """205930 (an f16 sum that overflowed on the host, under an rsqrt: the host 0, the H200 NaN) and 207142 (a
    reverse scan over two largest f32s and -inf: the host NaN, the H200 -inf): every lane the device answered
    otherwise is unjudged now. Kills: the move leaving a fold's NaN where it is (207142), or moving an overflowed
    inf inward to the largest finite value only (205930: rsqrt of it keeps its class)."""
    job = fuzz_job(generate(seed))
    host = job["host"]
    for region in campaign7[seed]["regions"]:
        for lane_text, _h, _d in region["first"]:
            name, lane = lane_text.split("[")[0], int(lane_text.split("[")[1].split("]")[0])
            assert host.unjudged[name][lane], (seed, lane_text)


def _scan_job(values, reverse, f="sum"):
    body = [fuzz_load(1, "f32", (len(values),), dist="special"),
            {"op": "scan", "id": 2, "f": f, "a": 1, "dim": 0, "rev": reverse}, {"op": "store", "id": 3, "a": 2}]
    job = fuzz_job(fuzz_desc(body))
    x = np.asarray(values, np.float32)
    job["args"][0][: x.size] = x
    from tileir.diff.fuzzjudge import host_answer

    return host_answer(build(job["desc"]).prog, job["layout"], job["args"], draws=1)


def test_a_forced_nan_stays_judged_where_the_row_may_overflow():
    """A forward scan of [big, big, inf, -inf, 1, ...] (big: f32's largest): the row may overflow, so its lanes are
    not judged -- except lane 3 on, a NaN every order answers (both infinities folded). Kills: the forced NaN
    moved with the rest (the device could answer anything there), the wild lanes judged."""
    big = float(np.finfo(np.float32).max)
    host = _scan_job([big, big, np.inf, -np.inf] + [1.0] * 4, reverse=False)
    un, out = host.unjudged["out_f32"][:8], host.outs["out_f32"][:8]
    assert un[0] and un[1] and un[2] and np.isnan(out[3]) and not un[3] and not un[7]
    rev = _scan_job([1.0] * 4 + [-np.inf, np.inf, big, big], reverse=True)  # lanes 0-4 fold both infinities
    un, out = rev.unjudged["out_f32"][:8], rev.outs["out_f32"][:8]
    assert np.isnan(out[4]) and not un[0] and not un[4] and un[5]  # Kills: the scan's direction ignored


def test_a_periodic_functions_argument_is_followed_through_its_producers():
    """cos(max-reduce(cosh(x)) + 0) -- a fold's operands tuple and a binary op's handles between the
    approximation and the cos: still not judged where the argument is coarse. Kills: approx_values not
    following dependents, or skipping tuple-of-handles fields."""
    body = [fuzz_load(1, "f32", (8,)), {"op": "un", "id": 2, "f": "cosh", "a": 1},
            {"op": "reduce", "id": 3, "f": "max", "a": 2, "dim": 0, "keep": True},
            {"op": "un", "id": 4, "f": "cos", "a": 3}, {"op": "store", "id": 5, "a": 4}]
    job = fuzz_job(fuzz_desc(body))
    job["args"][0][:8] = np.float32(40.0)  # cosh(40) ~ 1.2e17
    from tileir.diff.fuzzjudge import approx_values, host_answer

    prog = build(job["desc"]).prog
    cos = next(o for o in prog.walk() if o.kind == "unaryf" and o.a.op == "cos")
    assert cos.a.a in approx_values(prog)
    host = host_answer(prog, job["layout"], job["args"], draws=1)
    assert host.unjudged["out_f32"][0]


REPRO_305091 = os.path.join(ROOT, "bench", "results", "fuzz_repro_campaign8", "fuzz_differ_305091.json")


def _cos_job(x, of_cosh: bool):
    body = [fuzz_load(1, "f32", (len(x),))]
    if of_cosh:
        body.append({"op": "un", "id": 2, "f": "cosh", "a": 1})
    body += [{"op": "un", "id": 3, "f": "cos", "a": 2 if of_cosh else 1}, {"op": "store", "id": 4, "a": 3}]
    job = fuzz_job(fuzz_desc(body))
    job["args"][0][: len(x)] = np.asarray(x, np.float32)
    from tileir.diff.fuzzjudge import host_answer

    return host_answer(build(job["desc"]).prog, job["layout"], job["args"], draws=1)


def test_a_periodic_function_of_a_coarse_approximate_argument_is_not_judged():
    """305091 shrunk: cos(cosh(x)) at the lane the H200 answered 0.9994 for the host's -0.9995 is unjudged; a cos
    of a large argument loaded exactly, and a cos of a small approximate one, stay judged. Kills: the rule
    dropped (305091 differs again), taken for every large argument (an exact one's cos is the device's to get
    right), or for every approximate one (cos(cosh(0.5)) has a bound)."""
    from tileir.diff.shrink import read_reproducer

    desc = read_reproducer(REPRO_305091)["desc"]
    assert fuzz_job(desc)["host"].unjudged["out_f32"][110]
    exact = _cos_job([3.0e7, 1.0e9] + [1.0] * 6, of_cosh=False)
    assert not exact.unjudged["out_f32"][:8].any()
    approx = _cos_job([0.5, 40.0] + [1.0] * 6, of_cosh=True)  # cosh(40) ~ 1.2e17: its ulps span radians
    assert not approx.unjudged["out_f32"][0] and approx.unjudged["out_f32"][1]


REPRO_504651 = os.path.join(ROOT, "bench", "results", "fuzz_repro_campaign9", "fuzz_differ_504651.json")


def _pack_of_extract(idx: int, n: int = 2):
    def body():
        t = ti.load(ti.param(ti.I32, 0), ti.idx_const(0), [8])
        b = ti.pack_bytes(ti.extract(t, [n], [ti.idx_const(idx)]))
        ti.store(ti.param(ti.F16, 1), ti.idx_const(0), ti.unpack_bytes(b, ti.F16))

    return ti.trace_kernel("pack_of_extract", (ti.ByPtr(ti.I32), ti.ByPtr(ti.F16)), body)


def _packs_of_extracts(prog) -> int:
    made = {o.res[0]: o.kind for o in prog.walk() if o.res}
    return sum(1 for o in prog.walk() if o.kind == "repack" and o.a.op == "pack" and made.get(o.a.src) == "extract")


@pytest.mark.parametrize("idx, n", [(0, 2), (2, 2), (3, 2), (1, 4)])
def test_a_pack_of_an_extract_is_recorded_as_the_whole_tiles_pack(idx, n):
    """The recording holds no pack of an extract's result, and the host answers the extract's own bytes.
    Kills: the rewrite missing (504651's wrong bytes on the H200), the bytes' slice index or length scaled
    wrong (another lane's bytes)."""
    from tileir.ref.core import Interp

    prog = _pack_of_extract(idx, n)
    assert _packs_of_extracts(prog) == 0
    x = (np.arange(8, dtype=np.int32) * 1234567 - 3000000).astype(np.int32)
    out = np.zeros(2 * n, np.float16)
    Interp(prog, [x.copy(), out], (1,)).run()
    assert out.tobytes() == x[idx * n:(idx + 1) * n].tobytes()


def test_a_pack_of_an_extract_it_cannot_rewrite_is_refused():
    """An extract of a [4, 2] tile reshaped to [2] before the pack: refused with the rewrite to write. Kills: the
    refusal missing (the defect's bytes), or a reshape's extract taken as a rank-1 one."""
    def body():
        t = ti.load(ti.param(ti.I32, 0), ti.idx_const(0), [4, 2])
        e = ti.reshape(ti.extract(t, [1, 2], [ti.idx_const(1), ti.idx_const(0)]), [2])
        ti.store(ti.param(ti.I8, 1), ti.idx_const(0), ti.pack_bytes(e))

    with pytest.raises(ti.TileirError, match="extract\\(pack_bytes"):
        ti.trace_kernel("pack_of_extract", (ti.ByPtr(ti.I32), ti.ByPtr(ti.I8)), body)


def test_campaign_9s_504651_is_the_pack_of_an_extract(campaign9):
    """Its report's difference is pack-of-extract's in a run without the rewrite and nobody's with it; its
    program now records no such pack. Kills: the matcher reading the run's workarounds wrongly, the cause
    missing from the table."""
    from tileir.diff.fuzzknown import PACK_WHOLE
    from tileir.diff.shrink import read_reproducer

    desc = generate(504651)
    before = [w for w in WORKAROUNDS if w != PACK_WHOLE]
    cause = known_cause(_outcome(campaign9[504651], before), desc)
    assert cause and cause["cause"] == "pack-of-extract"
    assert known_cause(_outcome(campaign9[504651], WORKAROUNDS), desc) is None
    assert _packs_of_extracts(build(read_reproducer(REPRO_504651)["desc"]).prog) == 0


def _library_load_hints(kern, arrays, **static):
    cfg = kern.config(**static)
    plan = kern.plan(cfg)
    k = kern.kernel(div16=plan.div16(plan.values(arrays), arrays), **static)
    return [i.hints == NO_TMA for i in walk(k.body) if type(i).__name__ == "LoadViewTile"]


def test_the_librarys_dense_rows_keep_tma_loads():
    """A launch of dense rows claims ROW, so the gap rule leaves the library's loads their TMA; a slice of wider
    rows (a pitch gap) loses it. Kills: the gap rule blind to ROW (every library load of an odd width would
    lose TMA), or ROW granted to a slice."""
    import tileir.kernels as K

    a = np.zeros((1000, 1000), np.float32)
    assert _library_load_hints(K.matmul_tf32, [a, a.copy(), a.copy()]) == [False, False]
    x = np.zeros((64, 1000), np.float32)
    assert _library_load_hints(K.softmax, [x, x.copy()]) == [False, False]
    wide = np.zeros((64, 1024), np.float32)
    assert True in _library_load_hints(K.softmax, [wide[:, :1000], x.copy()])
