"""Mutants: deliberately wrong lowerings, each a one-line hook at ONE place in the lowering
(``tileir/families/*.py``) or the generic layer (``tileir/generic.py``), switched on by ``use(name)``
(a context manager) or by ``TILEIR_MUTANT=name`` in the environment.

A mutant changes the BYTES only: the host reference interprets the TileProg and never meets a
hook, so on the device each mutant must make at least one comparison of its family fail
(layer 2's "a check no mutant can fail proves nothing"). The hooks call ``mutant(name)``, which
answers whether that mutant is the active one; this module imports nothing of tileir, so the
lowering and the generic layer can import it without a cycle.

The cubin cache (``tileir.assemble``) keys on the bytecode, so a mutant's cubin never answers for
the real one. ``KernelFn`` memoises its lowered program per configuration in the process: use
mutants with ``trace_kernel`` programs (as the diff does), or set ``TILEIR_MUTANT`` per process.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass

ENV = "TILEIR_MUTANT"
_override: str | None = None  # set by use(); None: the environment decides


@dataclass(frozen=True)
class Mutant:
    name: str
    family: str  # the diff family whose comparisons must kill it
    where: str  # the one place its hook sits
    what: str  # the wrong lowering, in words
    also: tuple = ()  # other families it is run against (killed if any of them fails)


MUTANTS: tuple = (
    Mutant("arith-rounds-toward-zero", "float_arith", "generic.py _float_bin",
           "addf / subf / mulf / divf written rounding<zero> instead of nearest_even"),
    Mutant("cmp-ordered-as-unordered", "float_cmp", "generic.py _cmpf",
           "every float comparison written unordered: a NaN operand answers 1"),
    Mutant("maxmin-nan-dropped", "float_maxmin", "generic.py _float_bin",
           "maxf / minf written without propagate_nan: a NaN operand answers the other operand"),
    Mutant("floor-ceil-swapped", "float_sign", "generic.py _float_un", "floor written as ceil and ceil as floor"),
    Mutant("remf-ieee-remainder", "remf", "ops/arith.py _lower_binaryf",
           "remf lowered as a - floor(a / b + 0.5) * b (a nearest quotient, IEEE-remainder-like)"),
    Mutant("exp-as-exp2", "transcendental", "generic.py _float_un", "exp written as exp2"),
    Mutant("atan2-operands-swapped", "atan2", "generic.py _float_bin",
           "atan2's operands in the other order (the dialect's x / y read as C's atan2(x, y))"),
    Mutant("powi-exponent-abs", "powi", "ops/tileshape.py _lower_powi",
           "fpowi's exponent passed through absi: a negative power loses its reciprocal"),
    Mutant("negf-as-absf", "erf", "generic.py _float_un",
           "negf written as absf: erf loses its sign flip and exp(-x^2) becomes exp(x^2)"),
    Mutant("shri-always-logical", "int_arith", "generic.py _int_bin",
           "shri written with signedness<unsigned>: the arithmetic shift shifts in zeros"),
    Mutant("mulhi-signed", "int_arith", "ops/arith.py _lower_binaryi",
           "mulhii corrected to the SIGNED high half (minus b where a < 0, minus a where b < 0)"),
    Mutant("divi-rounds-down", "int_arith", "generic.py _int_bin",
           "divi written with rounding<negative_inf>: the quotient is floored, not truncated"),
    Mutant("cmpi-unsigned-as-signed", "int_cmp", "generic.py _cmpi",
           "every integer comparison written signed"),
    Mutant("itof-unsigned", "itof", "generic.py _cast", "itof written with signedness<unsigned>"),
    Mutant("ftoi-no-saturation", "ftoi", "generic.py _cast",
           "ftoi_sat written without its saturating modifier (the plain, undefined-out-of-range ftoi)"),
    Mutant("ftof-rounding-nearest", "ftof", "generic.py _cast",
           "every ftof written rounding<nearest_even>, whatever mode it names"),
    Mutant("exti-i4-zero-extends", "int_widen", "generic.py _cast",
           "an exti from i4 written signedness<unsigned>: ext_i4 answers [0, 15]"),
    Mutant("bitcast-as-itof", "bitcast", "generic.py _cast",
           "an integer-to-float bitcast written as itof (the value kept, not the bits)"),
    Mutant("select-branches-swapped", "select", "generic.py _select", "select's two values in the other order"),
    Mutant("reduce-identity-wrong", "reduce", "ops/reduce.py _lower_fold",
           "every reduction's and scan's identity replaced (0 -> 1, -inf -> +inf, the least integer -> the "
           "greatest ...); run against the scans too, where a shuffle-based prefix may fold it in",
           also=("scan", "scan2")),
    Mutant("reduce-args-swapped", "reduce", "ops/reduce.py _lower_fold",
           "a reduction's region arguments bound element first (the order Ops.td's prose states)"),
    Mutant("scan-args-swapped", "scan", "ops/reduce.py _lower_fold",
           "a scan's region arguments bound element first (the order Ops.td's prose states)"),
    Mutant("scan2-operands-swapped", "scan2", "ops/reduce.py _lower_fold",
           "a two-operand scan's operands (and their identities) passed in the other order"),
    Mutant("gather-pad-dropped", "pointers", "ops/pointers.py emit_load",
           "a masked load through pointers written without its padding value"),
    Mutant("atomic-umax-as-max", "atomics", "generic.py _rmw", "atomic_rmw umax / umin written as max / min"),
    Mutant("view-indices-reversed", "views", "generic.py _load_view",
           "a view load's (rank-0) tile indices written in reverse order"),
    Mutant("global-as-alloca", "globals", "ops/globals.py _lower_get_global",
           "get_global lowered as a fresh alloca of the global's size: nothing persists, nothing is initialised"),
    Mutant("alloca-regions-merged", "alloca", "ops/globals.py _lower_alloca",
           "every alloca of a scope after the first answers the first one's address"),
    Mutant("print-args-reversed", "print", "generic.py _print", "print_tko's arguments in reverse order"),
    Mutant("assert-dropped", "assert", "ops/debug.py _lower_assert", "d_assert lowered to nothing"),
    Mutant("if-branches-swapped", "control", "generic.py _if", "an if's two regions in the other order"),
    Mutant("cat-operands-swapped", "tileshape", "generic.py _cat", "cat's two operands in the other order"),
    Mutant("mmai-unsigned", "mma", "generic.py _mma", "mmai written with both operands unsigned"),
)

BY_NAME = {m.name: m for m in MUTANTS}


def active() -> str:
    """The name of the active mutant, or '' for none."""
    if _override is not None:
        return _override
    return os.environ.get(ENV, "")


def mutant(name: str) -> bool:
    """Whether the mutant ``name`` is the active one: the question every hook asks."""
    return (_override if _override is not None else os.environ.get(ENV, "")) == name


@contextmanager
def use(name: str | None):
    """Lower with mutant ``name`` active (None or '': with none, whatever the environment says)."""
    global _override
    if name and name not in BY_NAME:
        raise KeyError(f"no mutant {name!r}; the mutants are {', '.join(BY_NAME)}")
    saved = _override
    _override = name or ""
    try:
        yield
    finally:
        _override = saved


def of_family(family: str) -> list:
    return [m for m in MUTANTS if m.family == family]


__all__ = ["Mutant", "MUTANTS", "BY_NAME", "ENV", "active", "mutant", "use", "of_family"]
