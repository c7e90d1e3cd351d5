"""Every public name of the spec (each fn, type and its constructors, const, trait and its
functions, effect and its operations) exists in tileir under the same name; a Dev operation
(t_*) exists as a method of tileir.Dev."""

import re
from pathlib import Path

import pytest

import tileir

SPEC = Path(__file__).resolve().parents[2] / "shared" / "spec" / "tileir-seed-api.txt"


def spec_names(text: str) -> set:
    names = set()
    for m in re.finditer(r"^(fn|type|const|trait|effect) (\w+)", text, re.M):
        names.add(m.group(2))
    for m in re.finditer(r"^type \w+(?:\[\w+\])? = (.*)$", text, re.M):
        if not m.group(1).startswith("{"):
            names |= set(re.findall(r"(?:^|\|)\s*(\w+)", m.group(1)))
    for m in re.finditer(r"^  fn (\w+)", text, re.M):
        names.add(m.group(1))
    return names


def test_every_public_name_of_the_spec_exists():
    if SPEC.exists():
        text = SPEC.read_text()
    else:  # CI's clean clone has no ../shared: the names were copied beside the tests
        text = (Path(__file__).parent / "data" / "spec_names.txt").read_text()
    names = spec_names(text) if SPEC.exists() else set(text.split())
    assert len(names) > 400
    missing = sorted(n for n in names if not hasattr(tileir, n) and not hasattr(tileir.Dev, n))
    assert not missing, f"missing from tileir: {missing}"


def test_the_name_list_beside_the_tests_is_current():
    if not SPEC.exists():
        pytest.skip("../shared/spec is not here (a clean clone): the committed list is all there is")
    saved = set((Path(__file__).parent / "data" / "spec_names.txt").read_text().split())
    assert saved == spec_names(SPEC.read_text()), "regenerate tests/data/spec_names.txt from the spec"
