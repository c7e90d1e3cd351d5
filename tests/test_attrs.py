"""Typed attributes: every recorded operation carries a frozen dataclass of its kind's attributes
(``tileir.prog.Attrs``), declared once beside the recorder that makes it.

A misspelt attribute is refused when the record is made (the dataclass has no such field), a record
cannot be changed after it is made (mutants and tests write ``dataclasses.replace``), a rule reads
``UnaryF.of(op).dtype`` and mypy holds every such read to the record's fields: the mypy run below
covers the families, the lowering and the diff modules that read records, and fails on any error
that names a record class. Mutants it kills: a rule reading ``a.dtyp`` (mypy reports it: the planted
module shows the check sees such a read); a record that is a dict again (``of`` and the frozen test);
a kind with no record, or two records for one kind (import-time ``TypeError``).
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import pytest

import tileir.record  # noqa: F401  (every family's records registered)
from tileir.families.arith import BinaryF, UnaryF
from tileir.families.reduce import Reduce, Scan
from tileir.prog import ATTRS, Attrs, Op, attr_items

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "tileir"
READERS = ["families", "lower", "record", "prog.py", "diff/mutants.py", "diff/classify.py", "diff/fuzzjudge.py",
           "diff/fuzzknown.py"]


def test_every_kind_has_one_frozen_record_class():
    assert len(ATTRS) > 55
    for kind, cls in ATTRS.items():
        assert cls.KIND == kind and issubclass(cls, Attrs)
        assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen, cls.__name__


def test_a_misspelt_attribute_is_refused_when_recorded():
    with pytest.raises(TypeError, match="dtyp"):
        UnaryF(op="exp", dtyp="f32", shape=(), a=0, rounding="", ftz=False)  # type: ignore[call-arg]


def test_a_second_record_for_a_kind_or_a_field_named_of_is_refused():
    with pytest.raises(TypeError, match="two attribute records"):
        type("Again", (Attrs,), {}, kind="unaryf")
    with pytest.raises(TypeError, match="may not be named of"):
        type("Shadow", (Attrs,), {"__annotations__": {"of": "str"}})


def test_records_are_read_by_kind_and_replaced_not_changed():
    a = BinaryF(op="addf", dtype="f32", shape=(4,), a=1, b=2, rounding="", ftz=False, propagate_nan=False)
    op = Op(a.KIND, (3,), a, (), 7)
    assert BinaryF.of(op) is a
    with pytest.raises(TypeError, match="#7 binaryf carries BinaryF, not UnaryF"):
        UnaryF.of(op)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.op = "subf"  # type: ignore[misc]
    b = dataclasses.replace(a, op="subf")
    assert (b.op, a.op) == ("subf", "addf")
    assert [k for k, _ in attr_items(a)] == ["op", "dtype", "shape", "a", "b", "rounding", "ftz", "propagate_nan"]
    assert repr(op) == "#7 binaryf[3](op='addf', dtype='f32', shape=(4,), a=1, b=2, rounding='', ftz=False, " \
                       "propagate_nan=False)"
    s = Scan(dim=0, shape=(4,), identities=(), operands=(1,), reverse=True)
    assert Reduce.of(Op(s.KIND, (), s)) is s  # a scan is a reduction with a direction


def test_every_library_kernel_records_its_kinds_records():
    from tileir.kernels import CASES

    seen = set()
    for name in ("matmul_f16", "softmax", "saxpy", "prefix_sum"):
        case = CASES[name] if name in CASES else None
        if case is None:
            continue
        kern = case.kernel
        before = set(kern._progs)
        try:
            for op in kern.program(**case.config(case.default_size)).walk():
                assert type(op.a) is ATTRS[op.kind], op
                seen.add(op.kind)
        finally:  # leave the kernel's cache as found: other tests read what their own calls recorded
            for key in set(kern._progs) - before:
                del kern._progs[key]
    assert {"load_view", "mmaf", "reduce", "for", "make_token", "return"} <= seen


QUOTED = re.compile(r'"([A-Za-z_]+)"')


def test_mypy_holds_every_read_of_a_record_to_its_fields(tmp_path):
    pytest.importorskip("mypy")
    planted = tmp_path / "planted_rule.py"
    planted.write_text("from tileir.families.arith import UnaryF\n\n\ndef rule(lw, op):\n"
                       "    return UnaryF.of(op).dtyp\n")
    files = [str(SRC / f) for f in READERS] + [str(planted)]
    run = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--follow-imports", "silent",
                          "--check-untyped-defs", "--ignore-missing-imports", *files],
                         capture_output=True, text=True, cwd=ROOT)
    names = {c.__name__ for c in ATTRS.values()} | {"Attrs", "GridQuery"}
    bad = []
    for line in run.stdout.splitlines():
        if ": error: " in line and (set(QUOTED.findall(line)) & names or "instance-only attribute" in line):
            bad.append(line)
    planted_errors = [b for b in bad if "planted_rule.py" in b]
    assert planted_errors and '"UnaryF" has no attribute "dtyp"' in planted_errors[0]  # the check sees a typo
    assert [b for b in bad if "planted_rule.py" not in b] == []
