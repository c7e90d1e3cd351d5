"""The layer-1 goldens: small hand-made Kernels, one (or a few) per Instr kind and per attribute
value that changes the bytes or the text.

Each ``Case`` says the first bytecode version that admits it (older ones must refuse it, naming
that version) and which targets tileiras is expected to refuse, with a piece of its message.
"""

from __future__ import annotations

from . import cases_structure, cases_values
from .common import CASES, TARGETS, Case

cases_values.register()
cases_structure.register()

BY_NAME = {c.name: c for c in CASES}
assert len(BY_NAME) == len(CASES), "duplicate case names"

__all__ = ["CASES", "BY_NAME", "TARGETS", "Case"]
