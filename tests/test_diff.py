"""Layer 2 without a GPU (issue 5): every family's kernels record, lower, encode, read back as
render_kernel's text and assemble for sm_90; every family's host reference answers what an
independent computation answers on its corpus (bit for bit where the family is exact; the known
host defects are strict xfails that name the disagreeing corpus); hypothesis properties of the
element-wise families against numpy / exact rationals; every mutant changes the bytes of a kernel
of its family (and tileiras takes them); the comparison fails on a wrong answer; the runner's
worker path end to end on a fake device; the ledger's layer-2 column has no gap."""

from __future__ import annotations

import copy
import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tileir as ti
from tileir import F32, I32
from tileir.assemble import assemble
from tileir.diff import exact as X
from tileir.diff import mutants as M
from tileir.diff.families import EXACT, FTOF_DEFECTS, Judge, families, ledger_layer2
from tileir.diff.run import Answer, host_answer, judge_case, lower_bytes
from tileir.judge import compare
from tileir.ref import run_host
from tileir.render import normalise

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NaN / overflow in the corpora, on purpose
ROOT = Path(__file__).resolve().parents[1]
FAMS = families()
CASES = [(f.name, c) for f in FAMS.values() for c in f.cases]
_HOST: dict = {}


def host(case) -> Answer:
    """The host reference's answer for a case, once per test process."""
    got = _HOST.get(case.name)
    if got is None:
        got = _HOST[case.name] = host_answer(case)
    return got


# ---- the bytes ------------------------------------------------------------------------------------


@pytest.mark.parametrize("fam,case", CASES, ids=[f"{f}/{c.name}" for f, c in CASES])
def test_kernel_reads_back_and_assembles(fam, case, disasm):
    k, data = lower_bytes(case.prog())
    assert normalise(disasm(data)) == normalise(ti.render_kernel(k))
    assert assemble(data, "sm_90", kernel=case.name, program=k)[:4] == b"\x7fELF"


# ---- the host reference against independent answers ---------------------------------------------------


def _outs():
    for fam, case in CASES:
        if case.mode == "print":
            yield pytest.param(fam, case, None, id=f"{fam}/{case.name}/stdout")
            continue
        if case.mode == "assert" and not case.outs:
            yield pytest.param(fam, case, None, id=f"{fam}/{case.name}/fails")
            continue
        for o in case.outs:
            marks = [pytest.mark.xfail(strict=True, reason=case.defects[o.pos])] if o.pos in case.defects else []
            yield pytest.param(fam, case, o, id=f"{fam}/{case.name}/out{o.pos}", marks=marks)


@pytest.mark.parametrize("fam,case,out", list(_outs()))
def test_host_matches_an_independent_answer(fam, case, out):
    ans = host(case)
    if case.mode == "print":
        assert ans.error is None and ans.printed == case.expect_text(ans.before[0])
        return
    if out is None:  # an assert that must fire
        assert ans.error is not None and "d_assert failed" in ans.error
        return
    assert ans.error is None, ans.error
    for launch, (before, after) in enumerate(zip(ans.before, ans.after)):
        want = case.expect(copy.deepcopy(before), launch)[out.pos]
        lanes = out.lanes(before) if callable(out.lanes) else out.lanes
        if out.expect_lanes is not None:
            settled = out.expect_lanes(before)
            lanes = settled if lanes is None else lanes & settled
        bound = out.bound(before) if out.bound is not None else None
        v = compare(out.judge, want, after[out.pos], lanes, bound, out)
        assert v.ok, f"launch {launch}: {v.bad} of {v.lanes} lanes differ, first {v.first}"
        assert v.lanes > 0


def test_every_family_has_cases_a_judgement_ops_and_a_mutant():
    assert len(FAMS) >= 28
    for f in FAMS.values():
        assert f.cases and f.judgement and f.ops and f.tier, f.name
        assert f.mutants, f"family {f.name} has no mutant"
    names = {m.name for m in M.MUTANTS}
    for required in ("atan2-operands-swapped", "shri-always-logical", "reduce-identity-wrong", "scan-args-swapped",
                     "exti-i4-zero-extends", "remf-ieee-remainder", "cmp-ordered-as-unordered", "ftoi-no-saturation",
                     "mulhi-signed", "select-branches-swapped"):
        assert required in names
    assert {m.family for m in M.MUTANTS} == set(FAMS)


def test_the_known_host_defects_are_the_ones_written_down():
    # every xfail above names a corpus that separates the host's answer from the right one
    listed = {(f, c.name, p) for f, c in CASES for p in c.defects}
    # the nine the diff's corpora found (f64 fma range and zero sign, itof rounding twice, saturating
    # ftoi into i64, ftof through f32 and tf32's directed modes) are fixed in ops/ and dtypes.py
    assert len(listed) == len(FTOF_DEFECTS) == 0


def test_atan2_corpus_tells_the_argument_orders_apart():
    for case in FAMS["atan2"].cases:
        ans = host(case)
        a, b = (x.astype(np.float64) for x in ans.before[0][:2])
        with np.errstate(invalid="ignore"):
            fwd, back = np.arctan2(a, b), np.arctan2(b, a)
            far = np.abs(fwd - back) > 1e-3 * np.maximum(1, np.abs(fwd))
        assert far.sum() > 500, case.name


def test_the_plain_ftoi_corpus_stays_in_range():
    for case in FAMS["ftoi"].cases:
        if "sat" in case.name:
            continue
        x = np.trunc(case.make_args()[0].astype(np.float64))
        assert np.all(np.isfinite(x)) and np.all((x >= -(2**31)) & (x <= 2**31 - 1)), case.name


# ---- hypothesis: the element-wise families against numpy and exact rationals ------------------------------------

N = 64
_PROGS: dict = {}


def _prog(name, params, body):
    if name not in _PROGS:
        _PROGS[name] = ti.trace_kernel(name, params, body)
    return _PROGS[name]


def _int_prog():
    def body():
        z = ti.idx_const(0)
        a, b, s = (ti.load(ti.param(I32, k), z, [N]) for k in range(3))
        o = ti.param(I32, 3)
        for k, t in enumerate((ti.add_i(a, b), ti.sub_i(a, b), ti.mul_i(a, b), ti.div_i(a, b), ti.rem_i(a, b),
                               ti.shl_i(a, s), ti.shr_i(a, s), ti.shr_u(a, s), ti.mulhi_i(a, b),
                               ti.mask_to_int(ti.lt_i(a, b)))):
            ti.store(o, ti.idx_const(k * N), t)

    return _prog("h_int", (ti.ByPtr(I32),) * 4, body)


I32S = st.integers(-(2**31), 2**31 - 1)
QUIET = settings(max_examples=30, deadline=None, derandomize=True, database=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])


@QUIET
@given(st.lists(st.tuples(I32S, I32S.filter(lambda v: v != 0), st.integers(0, 31)), min_size=N, max_size=N))
def test_i32_wrap_division_shifts_against_python(lanes):
    a = np.array([x for x, _, _ in lanes], np.int32)
    b = np.array([y if not (x == -(2**31) and y == -1) else 1 for x, y, _ in lanes], np.int32)
    s = np.array([k for _, _, k in lanes], np.int32)
    out = np.zeros(10 * N, np.int32)
    run_host(_int_prog(), [a, b, s, out], (1,))
    w = X.wrap
    want = []
    for op in range(10):
        for x, y, k in zip(a.tolist(), b.tolist(), s.tolist()):
            q = X.tdiv(x, y)
            want.append([w(x + y), w(x - y), w(x * y), w(q), w(x - q * y), w(x << k), w(x >> k),
                         w((x & 0xFFFFFFFF) >> k), w(((x & 0xFFFFFFFF) * (y & 0xFFFFFFFF)) >> 32), int(x < y)][op])
    assert out.tolist() == want


F32S = st.floats(width=32, allow_nan=True, allow_infinity=True)
F32_FINITE = st.floats(width=32, allow_nan=False, allow_infinity=False)


def _float_prog():
    def body():
        z = ti.idx_const(0)
        a, b, c = (ti.load(ti.param(F32, k), z, [N]) for k in range(3))
        o, m = ti.param(F32, 3), ti.param(I32, 4)
        outs = [ti.add(a, b), ti.sub(a, b), ti.mul(a, b), ti.div(a, b), ti.fma(a, b, c), ti.max(a, b), ti.min(a, b),
                ti.max(a, b, propagate_nan=True), ti.min(a, b, propagate_nan=True)]
        for k, t in enumerate(outs):
            ti.store(o, ti.idx_const(k * N), t)
        cmps = [f(a, b) for f in (ti.eq, ti.ne, ti.lt, ti.le, ti.gt, ti.ge, ti.eq_u, ti.ne_u, ti.lt_u, ti.le_u,
                                  ti.gt_u, ti.ge_u)]
        for k, t in enumerate(cmps):
            ti.store(m, ti.idx_const(k * N), ti.mask_to_int(t))

    return _prog("h_float", (ti.ByPtr(F32),) * 4 + (ti.ByPtr(I32),), body)


def _f32_lanes(strategy):
    return st.lists(st.tuples(strategy, strategy, strategy), min_size=N, max_size=N)


def _run_float(lanes):
    a, b, c = (np.array([t[k] for t in lanes], np.float32) for k in range(3))
    out, m = np.zeros(9 * N, np.float32), np.zeros(12 * N, np.int32)
    run_host(_float_prog(), [a, b, c, out, m], (1,))
    return a, b, c, out.reshape(9, N), m.reshape(12, N)


def _same(want, got) -> bool:
    return compare(EXACT, np.asarray(want, np.float32), got).ok


@QUIET
@given(_f32_lanes(F32S))
def test_f32_arith_is_numpys_in_f32(lanes):
    a, b, c, out, _ = _run_float(lanes)
    with np.errstate(all="ignore"):
        for k, want in enumerate((a + b, a - b, a * b, a / b)):
            assert _same(want, out[k]), k


@QUIET
@given(_f32_lanes(F32_FINITE))
def test_f32_fma_rounds_once(lanes):
    a, b, c, out, _ = _run_float(lanes)
    want = [X.fma(float(x), float(y), float(z), "f32") for x, y, z in zip(a, b, c)]
    assert _same(want, out[4])


@QUIET
@given(_f32_lanes(st.one_of(F32S, st.just(float("nan")), st.sampled_from([0.0, -0.0, 1.0, -1.0]))))
def test_f32_compares_ordered_and_unordered_on_nan(lanes):
    a, b, _, _, m = _run_float(lanes)
    nan = np.isnan(a) | np.isnan(b)
    with np.errstate(invalid="ignore"):
        preds = [np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal]
        for k, f in enumerate(preds):
            assert (m[k] == (f(a, b) & ~nan)).all(), k  # ordered: a NaN operand answers 0, ne included
            assert (m[k + 6] == (f(a, b) | nan)).all(), k  # unordered: 1


@QUIET
@given(_f32_lanes(st.one_of(F32S, st.just(float("nan")))))
def test_f32_max_min_nan_rules(lanes):
    a, b, _, out, _ = _run_float(lanes)
    na, nb = np.isnan(a), np.isnan(b)
    tie = (a == 0) & (b == 0)  # the sign of max/min(+-0, -+0): the device's to say (docs/layer2.md)
    with np.errstate(invalid="ignore"):
        for k, big in ((5, True), (6, False)):
            plain = np.where(na, b, np.where(nb, a, np.maximum(a, b) if big else np.minimum(a, b)))
            assert _same(np.where(tie, out[k], plain), out[k])
            prop = np.where(na | nb, np.nan, np.maximum(a, b) if big else np.minimum(a, b))
            assert _same(np.where(tie, out[k + 2], prop), out[k + 2])


@QUIET
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=8, max_size=8),
       st.sampled_from(["f32", "f16", "bf16", "tf32", "f8E4M3FN", "f8E5M2"]),
       st.sampled_from(["nearest_even", "zero", "positive_inf", "negative_inf", "nearest_away"]))
def test_round_fraction_brackets_the_value(xs, fmt, mode):
    # the independent oracle itself: the answer is one of the two neighbours of x in the format
    for x in xs:
        v = X.round_fraction(x, fmt, mode) if x else 0.0
        if not math.isfinite(v):
            continue
        if mode == "zero":
            assert abs(v) <= abs(x)
        if mode == "positive_inf":
            assert v >= x
        if mode == "negative_inf":
            assert v <= x


# ---- mutants ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [m.name for m in M.MUTANTS])
def test_every_mutant_changes_a_kernel_of_its_family_and_tileiras_takes_it(name):
    m = M.BY_NAME[name]
    changed = None
    for case in FAMS[m.family].cases:
        prog = case.prog()
        _, base = lower_bytes(prog)
        k, data = lower_bytes(prog, name)
        if data != base:
            changed = (case, k, data)
            break
    assert changed is not None, f"{name} changes no kernel of {m.family}: not wired"
    case, k, data = changed
    assert assemble(data, "sm_90", kernel=case.name, program=k)[:4] == b"\x7fELF"
    _, again = lower_bytes(case.prog())
    assert again == lower_bytes(case.prog())[1]  # the mutant is off again after use()


def test_mutant_switch_by_environment(monkeypatch):
    case = FAMS["atan2"].cases[0]
    _, base = lower_bytes(case.prog())
    from tileir.bytecode import encode_kernel

    monkeypatch.setenv(M.ENV, "atan2-operands-swapped")
    M.from_environment()  # what importing tileir.diff.mutants does
    try:
        assert M.active() == "atan2-operands-swapped"
        assert encode_kernel(ti.lower(case.prog())) != base
        with M.use(None):
            assert encode_kernel(ti.lower(case.prog())) == base  # use(None) overrides the environment
        assert encode_kernel(ti.lower(case.prog())) != base
    finally:
        monkeypatch.delenv(M.ENV)
        M.from_environment()
    assert M.active() == "" and encode_kernel(ti.lower(case.prog())) == base
    with pytest.raises(KeyError):
        with M.use("no-such-mutant"):
            pass
    assert M.active() == ""


def test_each_mutant_patches_one_table_entry_and_puts_it_back():
    from tileir import generic
    from tileir.lower.core import RULES

    before = (dict(generic.CONVERT), dict(RULES))
    for m in M.MUTANTS:
        with M.use(m.name):
            changed = [k for k, v in generic.CONVERT.items() if before[0][k] is not v] + \
                [k for k, v in RULES.items() if before[1][k] is not v]
            assert changed and set(changed) == set(m.patch.keys), m.name
        assert (generic.CONVERT, RULES) == before, m.name


def test_the_runtime_never_imports_the_verification_layer():
    """Every module of tileir outside tileir.diff imported and a library kernel recorded, lowered and
    encoded: no tileir.diff module is loaded (the mutants patch the runtime from outside)."""
    import subprocess
    import sys

    code = """
import importlib, pathlib, sys
import tileir
root = pathlib.Path(tileir.__file__).parent
for f in sorted(root.rglob("*.py")):
    parts = f.relative_to(root).with_suffix("").parts
    if parts[0] in ("diff", "__main__"):
        continue
    importlib.import_module(".".join(("tileir",) + tuple(p for p in parts if p != "__init__")))
from tileir.bytecode import encode_kernel
from tileir.kernels import CASES
case = CASES["vadd"]
encode_kernel(case.kernel.kernel(**case.config(case.default_size)))
loaded = sorted(m for m in sys.modules if m == "tileir.diff" or m.startswith("tileir.diff."))
assert not loaded, loaded
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-2000:]


def test_the_cubin_cache_keys_on_the_mutated_bytes():
    from tileir.assemble import cache_key

    case = FAMS["select"].cases[0]
    _, base = lower_bytes(case.prog())
    _, mut = lower_bytes(case.prog(), "select-branches-swapped")
    assert cache_key(base, "v", "sm_90", []) != cache_key(mut, "v", "sm_90", [])


# ---- each corpus separates right from wrong: the mutants, simulated on the host -------------------------------------
#
# The device is what kills a mutant (diff.run). What CI can show is that the corpus COULD: for each
# mutant with a TileProg-level equivalent, the host reference runs the mutated meaning and the
# family's own comparison must fail on it. (Mutants with no host equivalent -- rounding modes the
# host does not model, signedness of mulhi / mmai, alloca and global placement, ftoi's undefined
# lanes, the identity the host never folds in -- are left to the device run.)


def _swap(a, x: str, y: str) -> dict:
    return {x: getattr(a, y), y: getattr(a, x)}


def _swap_region_args(op) -> None:
    (r,) = op.regions
    p = list(r.params)
    r.params = tuple(p[i ^ 1] for i in range(len(p)))


def _sim(name, op) -> None:
    k, a = op.kind, op.a
    new: dict = {}
    if name == "atan2-operands-swapped" and k == "binaryf" and a.op == "atan2":
        new = _swap(a, "a", "b")
    elif name == "shri-always-logical" and k == "binaryi" and a.op == "shri":
        new = {"op": "shru"}
    elif name == "cmp-ordered-as-unordered" and k == "cmpf":
        new = {"ordered": False}
    elif name == "cmpi-unsigned-as-signed" and k == "cmpi":
        new = {"signed": True}
    elif name == "maxmin-nan-dropped" and k == "binaryf" and a.op in ("maxf", "minf"):
        new = {"propagate_nan": False}
    elif name == "floor-ceil-swapped" and k == "unaryf" and a.op in ("floor", "ceil"):
        new = {"op": {"floor": "ceil", "ceil": "floor"}[a.op]}
    elif name == "exp-as-exp2" and k == "unaryf" and a.op == "exp":
        new = {"op": "exp2"}
    elif name == "exp2-ftz-dropped" and k == "unaryf" and a.op == "exp2" and a.ftz:
        new = {"ftz": False}
    elif name == "negf-as-absf" and k == "unaryf" and a.op == "negf":
        new = {"op": "absf"}
    elif name == "select-branches-swapped" and k == "select":
        new = _swap(a, "a", "b")
    elif name == "ftof-rounding-nearest" and k == "convert" and a.op.startswith("ftof"):
        new = {"op": "ftof"}
    elif name == "exti-i4-zero-extends" and k == "convert" and a.op == "extis" and a.from_ == "i4":
        new = {"op": "exti"}
    elif name == "bitcast-as-itof" and k == "convert" and a.op == "bitcast" and a.from_.startswith("i"):
        new = {"op": "itof"}
    elif name == "remf-ieee-remainder" and k == "binaryf" and a.op == "remf":
        new = {"op": "pow"}  # any other answer: the host has no IEEE remainder; the lanes must still differ
    elif name in ("reduce-args-swapped", "scan-args-swapped") and k == name.split("-")[0]:
        _swap_region_args(op)
    elif name == "scan2-operands-swapped" and k == "scan" and len(a.operands) == 2:
        new = {"operands": a.operands[::-1], "identities": a.identities[::-1]}
    elif name == "cat-operands-swapped" and k == "cat":
        new = _swap(a, "lhs", "rhs")
    elif name == "if-branches-swapped" and k == "if":
        op.regions = op.regions[::-1]
    elif name == "print-args-reversed" and k == "print":
        new = {"args": a.args[::-1], "dtypes": a.dtypes[::-1]}
    elif name == "atomic-umax-as-max" and k == "atomic_rmw" and a.mode in ("umax", "umin"):
        new = {"mode": a.mode[1:]}
    elif name == "view-indices-reversed" and k == "load_view" and len(a.indices) > 1:
        new = {"indices": a.indices[::-1]}
    elif name == "gather-pad-dropped" and k in ("gather", "load_ptrs") and a.pad is not None:
        new = {"pad": None}
    if new:
        op.a = dataclasses.replace(a, **new)


SIMULATED = ("atan2-operands-swapped", "shri-always-logical", "cmp-ordered-as-unordered", "cmpi-unsigned-as-signed",
             "maxmin-nan-dropped", "floor-ceil-swapped", "exp-as-exp2", "exp2-ftz-dropped", "negf-as-absf",
             "select-branches-swapped",
             "ftof-rounding-nearest", "exti-i4-zero-extends", "bitcast-as-itof", "remf-ieee-remainder",
             "reduce-args-swapped", "scan-args-swapped", "scan2-operands-swapped", "cat-operands-swapped",
             "if-branches-swapped", "print-args-reversed", "atomic-umax-as-max", "view-indices-reversed",
             "gather-pad-dropped")


@pytest.mark.parametrize("name", SIMULATED)
def test_the_corpus_separates_each_simulated_mutant(name, monkeypatch):
    m = M.BY_NAME[name]
    killed = []
    for case in FAMS[m.family].cases:
        base = host(case)
        if base.error and case.outs:
            continue
        prog = case.prog()
        for op in prog.walk():
            _sim(name, op)
        monkeypatch.setattr(case, "prog", lambda prog=prog: prog)
        r = judge_case(case, base, host_answer(case, prog))
        if not r["ok"]:
            killed.append(case.name)
    assert killed, f"no comparison of {m.family} fails under a host simulation of {name}"


# ---- the comparison can fail ------------------------------------------------------------------------------------


def _perturb(case, ans: Answer) -> Answer:
    dev = copy.deepcopy(ans)
    if case.mode == "print":
        dev.printed = ans.printed.replace("7", "8", 1)
        return dev
    if case.mode == "assert" and not case.outs:
        dev.error = None  # the launch ran to the end
        return dev
    o = case.outs[0]
    arr = dev.after[-1][o.pos]
    flat = arr.reshape(-1)
    lanes = o.lanes(dev.before[-1]) if callable(o.lanes) else o.lanes
    i = 0 if lanes is None else int(np.nonzero(np.asarray(lanes).reshape(-1))[0][0])
    if flat.dtype.kind == "f" or flat.dtype.itemsize in (1, 2) and flat.dtype.kind not in "iub":
        flat[i] = flat[i] * 3 + 1 if np.isfinite(float(flat[i])) else 0
    else:
        flat[i] = ~flat[i] if flat.dtype != np.bool_ else not flat[i]
    return dev


@pytest.mark.parametrize("fam,case", CASES, ids=[f"{f}/{c.name}" for f, c in CASES])
def test_judge_passes_the_host_answer_and_fails_a_perturbed_one(fam, case):
    ans = host(case)
    if ans.error and not (case.mode == "assert" and not case.outs):
        pytest.skip(f"the host reference cannot answer this case (a listed defect): {ans.error[:80]}")
    same = copy.deepcopy(ans)
    if case.mode == "assert" and not case.outs:
        same.error = "TileirError: running the kernel failed: CUDA_ERROR_ASSERT"
    r = judge_case(case, ans, same)
    against_expect = any(o.against == "expect" for o in case.outs)
    assert r["ok"] or against_expect, r
    bad = judge_case(case, ans, _perturb(case, same))
    assert not bad["ok"] and (bad["bad"] >= 1 or bad["error"]), bad


def test_tolerance_judge_bound_and_special_values():
    j = Judge("tol", ulps=4)
    want = np.array([1.0, np.nan, np.inf, -2.0, 0.0], np.float32)
    ok = np.array([np.nextafter(np.float32(1), np.float32(2)), np.nan, np.inf, -2.0, 1e-45], np.float32)
    assert compare(j, want, ok).ok
    for k, wrong in ((0, 1.01), (1, 0.0), (2, 3e38), (3, np.nan)):
        g = ok.copy()
        g[k] = wrong
        assert not compare(j, want, g).ok, k
    assert compare(EXACT, np.array([np.nan], np.float32), np.array([-np.nan], np.float32)).ok  # payload aside
    assert not compare(Judge("bits"), np.array([np.nan], np.float32), np.array([-np.nan], np.float32)).ok
    assert not compare(EXACT, np.array([0.0]), np.array([-0.0])).ok  # the sign of zero is compared


# ---- the runner, end to end on a fake device (the host reference answering for the GPU) ------------------------------


def test_runner_workers_print_assert_globals_on_a_fake_device(tmp_path):
    from tileir.diff.run import run

    out = tmp_path / "r.json"
    md = tmp_path / "r.md"
    rep = run(["print", "assert", "globals", "select"], True, str(out), str(md), device="fake", log=lambda *a: None)
    rows = {r["family"]: r for r in rep["families"]}
    assert all(r["passed"] for r in rows.values()), rows
    assert rows["print"]["lanes"] == len(FAMS["print"].cases[0].expect_text(None).encode())
    assert rows["globals"]["lanes"] == 2 * 9  # two launches of one module
    # the fake device never sees a mutant: every one survives, and is reported as proving nothing
    assert {m["status"] for m in rep["mutants"]} == {"survived"}
    assert all(m["proves_nothing"] for m in rep["mutants"])
    text = md.read_text()
    assert "| print |" in text and "proves nothing" in text and out.exists()


def test_cli_run_without_a_device(tmp_path):
    from tileir.diff.__main__ import main

    out = tmp_path / "r.json"
    assert main(["run", "--out", str(out), "--families", "remf", "--no-device"]) == 0
    import json

    rep = json.loads(out.read_text())
    assert rep["families"][0]["family"] == "remf" and rep["families"][0]["passed"] is None


# ---- the ledger's layer-2 column ----------------------------------------------------------------------------------


def test_no_ledger_operation_lacks_a_family_or_an_exemption():
    from tileir.diff import ledger

    col, gaps = ledger.layer2(ROOT)
    assert not gaps, f"neither checked by a diff family nor exempt: {gaps}"
    ops = [e for e, _ in ledger.dialect_entries(ROOT) if "." not in e]
    table = ledger_layer2()
    for op in ops:
        kind, what = table[op]
        assert (kind == "family" and what in FAMS) or (kind == "exempt" and len(what) > 20), op
    for op in ("assume", "gdc_launch_dependents_tko", "gdc_wait_tko"):
        assert table[op][0] == "exempt"
    assert table["atan2"] == ("family", "atan2") and table["fpowi"] == ("family", "powi")
