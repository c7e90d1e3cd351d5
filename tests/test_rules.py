"""Every rule in its one place: ``tileir.families`` imports every family module, and every kind of
operation the recorder can emit has a lowering rule and a host rule there; every instruction a rule
can make converts to a dialect operation (``generic.CONVERT``) that ``render`` can print.

The kinds the recorder emits are the kinds of its attribute records (``tileir.prog.ATTRS``): the
recorder emits an operation only as a record (``emit(UnaryF(...), res)``), and each record class
names its kind (tests/test_attrs.py holds the records themselves).
"""

from __future__ import annotations

from pathlib import Path

import tileir.families as families
from tileir import dialect, generic, ir
from tileir.lower.core import RULES as LOWERING
from tileir.prog import ATTRS
from tileir.ref.core import RULES as HOST
from tileir.render import Printer

SRC = Path(families.__file__).resolve().parents[1]  # src/tileir


def recorded_kinds() -> set[str]:
    import tileir.record  # noqa: F401  (the recorder's own records: make_token, return)

    return set(ATTRS)


def test_the_families_package_imports_every_family_module():
    on_disk = {p.stem for p in (SRC / "families").glob("*.py") if p.stem != "__init__"}
    listed = {m.__name__.rsplit(".", 1)[1] for m in families.MODULES}
    assert listed == on_disk
    assert families.LOWERING is LOWERING and families.HOST is HOST


def test_every_rule_comes_from_a_family_module():
    names = {m.__name__ for m in families.MODULES}
    for table in (LOWERING, HOST):
        strays = {k: f.__module__ for k, f in table.items() if f.__module__ not in names}
        assert not strays


def test_every_kind_the_recorder_emits_has_a_lowering_rule_and_a_host_rule():
    kinds = recorded_kinds()
    assert len(kinds) > 50 and {"load", "for", "reduce", "block_id"} <= kinds  # the scan sees them
    assert sorted(kinds - set(LOWERING)) == []
    assert sorted(kinds - set(HOST)) == []
    # and no rule waits for a kind nothing emits
    assert sorted(set(LOWERING) - kinds) == []
    assert sorted(set(HOST) - kinds) == []


def test_every_instruction_converts_and_every_operation_prints():
    assert sorted(k.__name__ for k in ir.INSTR_KINDS if k not in generic.CONVERT) == []
    printers = {op.name: op.asm[1:-1] for op in dialect.OPS if op.asm.startswith("<")}
    assert printers.pop("global") == "global"  # a module's globals print before its entry: render.global_line
    assert len(printers) >= 6
    assert sorted(name for name, p in printers.items() if not callable(getattr(Printer, "op_" + p, None))) == []
