"""Layer 1, operation by operation: for every golden of tests/layer1/cases.py (every Instr kind,
every table op, the attribute values that change the bytes or the text)

* ``tileirdisasm`` of our bytes prints exactly what ``render_kernel`` prints (whitespace runs made
  one space), at every bytecode version from the case's first one to 13.4;
* the versions before that refuse the kernel with a TileirError naming a newer version;
* the 13.4 bytes equal the stored golden (tests/data/goldens/<name>.tileirbc; regenerate with
  ``python -m tests.layer1.regen`` or ``TILEIR_REGEN_GOLDENS=1``);
* tileiras (default optimisation level) assembles them for sm_80, sm_86, sm_89, sm_90, sm_100
  and sm_120, except on the targets the case lists as refused -- and there it must refuse, with
  the message the case names.

The tool runs happen once per session, many at a time.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from pathlib import Path

import pytest

try:
    from tests.layer1 import cases as C
    from tests.layer1.tools import GOLDENS, Runner
except ImportError:  # pytest without the repository root on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.layer1 import cases as C
    from tests.layer1.tools import GOLDENS, Runner

from tileir import ir
from tileir.bytecode import encode_kernel
from tileir.dialect import OPS
from tileir.errors import TileirError
from tileir.generic import to_generic
from tileir.render import normalise, render_kernel

VERSIONS = ((13, 1), (13, 2), (13, 3), (13, 4))
IDS = [c.name for c in C.CASES]


def vs(v) -> str:
    return f"{v[0]}.{v[1]}"


@pytest.fixture(scope="module")
def runner():
    r = Runner()
    if r.disasm_tool is None or r.asm_tool is None:
        pytest.fail("tileirdisasm / tileiras not found: `pip install -e '.[cuda,test]'`")
    yield r
    r.close()


@pytest.fixture(scope="module")
def disassembled(runner):
    jobs = [(f"{c.name}@{vs(v)}", encode_kernel(c.kernel, vs(v))) for c in C.CASES for v in VERSIONS
            if v >= c.since]
    return dict(zip((k for k, _ in jobs), runner.parallel(runner.disasm, jobs)))


@pytest.fixture(scope="module")
def assembled(runner, request):
    """tileiras' verdict per (case, target). A verdict is a function of the bytes, the target and
    the tileiras build, so it is kept in pytest's cache under those and only bytes never seen
    are assembled again (TILEIR_LAYER1_FRESH=1, or --cache-clear, assembles everything)."""
    cache = getattr(request.config, "cache", None)
    fresh = os.environ.get("TILEIR_LAYER1_FRESH") == "1" or cache is None
    build = runner.version()
    results, jobs, keys = {}, [], []
    for c in C.CASES:
        data = encode_kernel(c.kernel)
        digest = hashlib.sha256(data).hexdigest()
        for t in C.TARGETS:
            key = f"tileir/layer1-asm/{build}/{digest}/{t}"
            got = None if fresh else cache.get(key, None)
            if got is not None:
                results[(c.name, t)] = tuple(got)
            else:
                jobs.append((f"{c.name}@13.4", data, t))
                keys.append(((c.name, t), key))
    for ((name_t, key), verdict) in zip(keys, runner.parallel(runner.assemble, jobs)):
        results[name_t] = verdict
        if cache is not None:
            cache.set(key, list(verdict))
    return results


@pytest.mark.parametrize("case", C.CASES, ids=IDS)
def test_render_equals_disassembly(case, disassembled):
    text = normalise(render_kernel(case.kernel))
    for v in VERSIONS:
        if v < case.since:
            continue
        rc, out, err = disassembled[f"{case.name}@{vs(v)}"]
        assert rc == 0, f"{case.name} at {vs(v)}: tileirdisasm refused the bytes:\n{err}"
        assert normalise(out) == text, f"{case.name} at {vs(v)}:\n--- tileirdisasm\n{out}\n--- render\n" \
                                       f"{render_kernel(case.kernel)}"


@pytest.mark.parametrize("case", [c for c in C.CASES if c.since > VERSIONS[0]],
                         ids=[c.name for c in C.CASES if c.since > VERSIONS[0]])
def test_older_versions_refuse(case):
    for v in VERSIONS:
        if v >= case.since:
            break
        with pytest.raises(TileirError) as e:
            encode_kernel(case.kernel, vs(v))
        named = [(int(a), int(b)) for a, b in re.findall(r"needs bytecode (\d+)\.(\d+)", str(e.value))]
        assert named and all(n > v for n in named), f"{case.name} at {vs(v)}: {e.value}"
        assert vs(v) in str(e.value)


@pytest.mark.parametrize("case", C.CASES, ids=IDS)
def test_golden_bytes(case):
    data = encode_kernel(case.kernel)
    path = GOLDENS / f"{case.name}.tileirbc"
    if os.environ.get("TILEIR_REGEN_GOLDENS") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        pytest.skip("golden regenerated (TILEIR_REGEN_GOLDENS=1): nothing compared")
    assert path.exists(), f"no golden {path}: run `python -m tests.layer1.regen`"
    assert data == path.read_bytes(), (f"the writer's bytes for {case.name} changed; if on purpose, run "
                                       "`python -m tests.layer1.regen`")


@pytest.mark.parametrize("case", C.CASES, ids=IDS)
def test_tileiras_assembles(case, assembled):
    problems = []
    for t in C.TARGETS:
        ok, msg = assembled[(case.name, t)]
        want = case.refused_on.get(t)
        if want is None and not ok:
            problems.append(f"{t}: tileiras refused: {msg}")
        elif want is not None and ok:
            problems.append(f"{t}: expected a refusal ({want!r}) but it assembled")
        elif want is not None and want not in msg:
            problems.append(f"{t}: refused, but not with {want!r}: {msg}")
    assert not problems, f"{case.name}:\n" + "\n".join(problems)


def _walk(instrs):
    for ins in instrs:
        yield ins
        for f in ("body", "on_true", "on_false"):
            yield from _walk(getattr(ins, f, ()))


def _gops(gops):
    for g in gops:
        yield g
        for r in g.regions:
            yield from _gops(r.ops)


def test_every_instr_kind_and_op_has_a_golden():
    kinds = {type(i) for c in C.CASES for i in _walk(c.kernel.body)}
    missing = [k.__name__ for k in ir.INSTR_KINDS if k not in kinds]
    assert not missing, f"Instr kinds without a layer-1 golden: {missing}"
    names = {g.name for c in C.CASES for g in _gops(to_generic(i) for i in c.kernel.body)}
    if any(c.kernel.globals for c in C.CASES):
        names.add("global")
    missing = [op.name for op in OPS if op.name not in names]
    assert not missing, f"table ops without a layer-1 golden: {missing}"


def test_no_stale_goldens():
    stale = sorted(p.stem for p in GOLDENS.glob("*.tileirbc") if p.stem not in set(IDS))
    assert not stale, f"goldens without a case (run `python -m tests.layer1.regen`): {stale}"


@pytest.mark.parametrize("ins", [
    ir.FloatUn(0, "negf", ir.tile((4,), "f32"), ir.Arg(0), rounding="zero"),
    ir.FloatUn(0, "sin", ir.tile((4,), "f32"), ir.Arg(0), ftz=True),
    ir.IntUn(0, "absi", ir.tile((4,), "i32"), ir.Arg(0), overflow="no_wrap"),
    ir.Cast(0, "ftof", ir.tile((4,), "f32"), ir.tile((4,), "f16"), ir.Arg(0), rounding="zero"),
    ir.Cast(0, "bitcast", ir.tile((4,), "f32"), ir.tile((4,), "i32"), ir.Arg(0), overflow="no_wrap"),
    ir.Cast(0, "exti", ir.tile((4,), "i8"), ir.tile((4,), "i32"), ir.Arg(0), signed=False),
    ir.FloatBin(0, "hypot", ir.tile((4,), "f32"), ir.Arg(0), ir.Arg(0)),
    ir.TokenOnlyTile(0, "barrier", None),
], ids=lambda i: f"{type(i).__name__}-{getattr(i, 'op', '')}")
def test_fields_an_op_lacks_are_refused(ins):
    with pytest.raises(TileirError):
        to_generic(ins)
