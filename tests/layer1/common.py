"""What the layer-1 golden modules share: the Case record, the registry, target refusals."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from tileir import ir
from tileir.ir import Val

from .build import B

V13_1, V13_2, V13_3, V13_4 = (13, 1), (13, 2), (13, 3), (13, 4)
TARGETS = ("sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120")
PRE_SM90 = ("sm_80", "sm_86", "sm_89")
PRE_SM100 = ("sm_80", "sm_86", "sm_89", "sm_90")


def unsupported(dtype: str, targets) -> dict:
    """tileiras' refusal of an element format a target lacks: f8E4M3FN and f8E5M2 need sm_90
    (sm_89 included: tileiras refuses them there), f8E8M0FNU and f4E2M1FN need sm_100."""
    return {t: f"Incompatibility with architecture '{t}': unsupported type '{dtype}'" for t in targets}


INF, NAN = math.inf, math.nan
OVERFLOWS = ("none", "no_signed_wrap", "no_unsigned_wrap", "no_wrap")
PREDICATES = ("equal", "not_equal", "less_than", "less_than_or_equal", "greater_than", "greater_than_or_equal")
IEEE = ("nearest_even", "zero", "negative_inf", "positive_inf")

F8_REFUSED = {"f8E4M3FN": PRE_SM90, "f8E5M2": PRE_SM90, "f8E8M0FNU": PRE_SM100, "f4E2M1FN": PRE_SM100}


@dataclass(frozen=True)
class Case:
    name: str
    kernel: ir.Kernel
    since: tuple = V13_1
    refused_on: dict = field(default_factory=dict)  # target -> a piece of tileiras' refusal
    refusal: str = ""  # a piece of the writer's refusal at versions before `since` (default: the version)


CASES: list = []


def add(name, b_or_kernel, since=V13_1, refused_on=None, refusal=""):
    k = b_or_kernel.kernel() if isinstance(b_or_kernel, B) else b_or_kernel
    CASES.append(Case(name, k, since, dict(refused_on or {}), refusal))


def un(b, cls, ty, *args, **kw):
    d = b.n()
    b.emit(cls(d, *args, **kw))
    return Val(d)
