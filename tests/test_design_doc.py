"""docs/design.md's module table names every module and package of src/tileir, and nothing else:
a module added, renamed or removed without the table fails here (kills: a table left behind by a
rename, like the strided-gather views' old name)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _table_names() -> set[str]:
    doc = (ROOT / "docs" / "design.md").read_text()
    start = doc.index("| module | job |")
    table = doc[start:doc.index("\n\n", start)]
    names: set[str] = set()
    for line in table.splitlines()[2:]:
        names |= {n.strip("/") for n in re.findall(r"`([^`]+)`", line.split("|")[1])}
    return names


def _code_names() -> set[str]:
    src = ROOT / "src" / "tileir"
    modules = {p.stem for p in src.glob("*.py") if p.stem not in ("__init__", "__main__")}
    return modules | {p.name for p in src.iterdir() if (p / "__init__.py").exists()}


def test_the_module_table_names_every_module_and_only_those():
    table, code = _table_names(), _code_names()
    assert code - table == set(), f"modules missing from docs/design.md's table: {sorted(code - table)}"
    assert table - code == set(), f"docs/design.md's table names modules that do not exist: {sorted(table - code)}"
