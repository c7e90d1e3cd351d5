"""The documentation site's sources hold together without building it (`make docs` builds it
strictly): every page the nav names exists, every ``::: path`` of the API reference names an object
that exists, and every public name of tileir is documented there."""

import importlib
import re
from pathlib import Path

import tileir

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
# documented with the Overflow enum they belong to (docs/reference/arith.md says so)
WITH_ENUM = {"NoAssumption", "NoSignedWrap", "NoUnsignedWrap", "NoWrap"}


def _directives() -> list:
    return [m.group(1) for f in sorted((DOCS / "reference").glob("*.md"))
            for m in re.finditer(r"^::: ([\w.]+)\s*$", f.read_text(), re.M)]


def _resolve(path: str):
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            obj = getattr(obj, name)
        return obj
    raise ImportError(path)


def test_every_nav_page_exists():
    text = (ROOT / "mkdocs.yml").read_text()
    nav = text[text.index("\nnav:"):]
    pages = re.findall(r"([\w./-]+\.md)\s*$", nav, re.M)
    assert len(pages) > 20
    missing = [p for p in pages if not (DOCS / p).exists()]
    assert not missing, missing


def test_every_reference_directive_names_an_object():
    paths = _directives()
    assert len(paths) > 400
    for path in paths:
        assert _resolve(path) is not None or path.rpartition(".")[2] in tileir.__all__, path


def test_every_public_name_is_in_the_reference():
    documented = {p.rpartition(".")[2] for p in _directives()}
    missing = sorted(set(tileir.__all__) - documented - WITH_ENUM)
    assert not missing, f"public names the API reference leaves out: {missing}"
    assert all(n in (DOCS / "reference" / "arith.md").read_text() for n in WITH_ENUM)


def test_the_tutorials_page_is_there_for_the_examples():
    assert "examples/" in (DOCS / "tutorials" / "index.md").read_text()
