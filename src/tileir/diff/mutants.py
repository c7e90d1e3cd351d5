"""Mutants: deliberately wrong lowerings, each a patch the verification layer applies from outside.

The runtime holds no hooks and imports nothing of ``tileir.diff``. It already dispatches through two
tables, and each mutant wraps entries of one of them for the duration of a ``with use(name):``
block, then puts the real entries back:

- ``tileir.generic.CONVERT`` (Instr class -> its cuda_tile operation): ``instr(cls, rewrite)``
  hands the real converter a rewritten Instr (operands swapped, a flag dropped, another op named);
- ``tileir.lower.core.RULES`` (recorded op kind -> its lowering rule): ``op_rule(kinds, rewrite)``
  hands the real rule a rewritten recorded op; ``rule(kinds, wrong)`` lowers the op its own wrong
  way (``wrong(real, lw, op)``, free to call the real rule).

``TILEIR_MUTANT=name`` in the environment installs that mutant for the whole process when this
module is imported (``python -m tileir.diff`` imports it; a plain ``import tileir`` never does);
``use(name)`` overrides it for a block, ``use(None)`` lowers with none.

A mutant changes the BYTES only: the host reference interprets the TileProg and never meets a
patch, so on the device each mutant must make at least one comparison of its family fail
(layer 2's "a check no mutant can fail proves nothing").

The cubin cache (``tileir.assemble``) keys on the bytecode, so a mutant's cubin never answers for
the real one. ``KernelFn`` memoises its lowered program per configuration in the process: use
mutants with ``trace_kernel`` programs (as the diff does), or set ``TILEIR_MUTANT`` per process.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from .. import generic, ir
from ..dtypes import BY_NAME as DTYPES
from ..families import LOWERING as RULES  # every lowering rule, so every patch finds the entry it wraps
from ..families.arith import BinaryF, BinaryI
from ..families.globals import Alloca, GetGlobal
from ..families.pointers import ptr_ty, spread_ptr
from ..families.reduce import Reduce, Scan
from ..families.spaces import esize
from ..families.tileshape import PowI

ENV = "TILEIR_MUTANT"

# ---- how a mutant patches the runtime -----------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Patch:
    table: dict  # generic.CONVERT or lower.core.RULES
    keys: tuple  # the entries it wraps
    wrap: Callable  # the real entry -> the mutated one
    where: str  # the entries, in words

    def install(self) -> Callable[[], None]:
        """Put the mutated entries in; answers the function that puts the real ones back."""
        saved = {k: self.table[k] for k in self.keys}
        for k in self.keys:
            self.table[k] = self.wrap(saved[k])
        return lambda: self.table.update(saved)


def instr(cls, rewrite) -> Patch:
    """The generic layer: the Instr rewritten before its real converter sees it."""
    return Patch(generic.CONVERT, (cls,), lambda conv: lambda ins: conv(rewrite(ins)),
                 f"generic.CONVERT[{cls.__name__}]")


def op_rule(kinds: tuple, rewrite) -> Patch:
    """The lowering: the recorded op rewritten before its real rule sees it."""
    return Patch(RULES, kinds, lambda real: lambda lw, op: real(lw, rewrite(op)), _rules_where(kinds))


def rule(kinds: tuple, wrong) -> Patch:
    """The lowering: ``wrong(real, lw, op)`` in place of the real rule."""
    return Patch(RULES, kinds, lambda real: lambda lw, op: wrong(real, lw, op), _rules_where(kinds))


def _rules_where(kinds) -> str:
    return "lower.core.RULES[" + ", ".join(repr(k) for k in kinds) + "]"


def _where(test, **fields):
    """A rewrite of an Instr: ``fields`` replaced (a value, or a function of the Instr) where ``test``."""
    def rewrite(x):
        if not test(x):
            return x
        return dataclasses.replace(x, **{k: v(x) if callable(v) else v for k, v in fields.items()})
    return rewrite


def _attrs(op, **changes):
    """A copy of the recorded op with some of its attributes changed."""
    return dataclasses.replace(op, a=dataclasses.replace(op.a, **changes))


def _every(_x) -> bool:
    return True


# ---- the wrong lowerings that are more than a rewrite ----------------------------------------------------


def _remf_ieee(real, lw, op):
    """remf as a - floor(a / b + 0.5) * b, from existing instructions."""
    a = BinaryF.of(op)
    if a.op != "remf":
        return real(lw, op)
    ty = ir.tile(a.shape, a.dtype)
    x, y = lw.val(a.a), lw.val(a.b)
    q, h, f, m = (lw.fresh() for _ in range(4))
    lw.emit(ir.FloatBin(q, "divf", ty, x, y))
    lw.emit(ir.FloatBin(h, "addf", ty, ir.Val(q), lw.constant(a.dtype, a.shape, 0.5)))
    lw.emit(ir.FloatUn(f, "floor", ty, ir.Val(h)))
    lw.emit(ir.FloatBin(m, "mulf", ty, ir.Val(f), y))
    lw.result(op, ir.FloatBin, "subf", ty, x, ir.Val(m))


def _mulhi_signed(real, lw, op):
    """mulhii's unsigned high half corrected to the signed one (minus b where a < 0, minus a where b < 0)."""
    real(lw, op)
    a = BinaryI.of(op)
    if a.op != "mulhii":
        return
    ty, bty = ir.tile(a.shape, a.dtype), ir.tile(a.shape, "i1")
    lhs, rhs = lw.val(a.a), lw.val(a.b)
    zero = lw.constant(a.dtype, a.shape, 0)
    out = lw.val(op.res[0])
    for neg, other in ((lhs, rhs), (rhs, lhs)):
        c, s, d = lw.fresh(), lw.fresh(), lw.fresh()
        lw.emit(ir.CmpInt(c, "less_than", ty, bty, neg, zero, True))
        lw.emit(ir.SelectTile(s, bty, ty, ir.Val(c), other, zero))
        lw.emit(ir.IntBin(d, "subi", ty, out, ir.Val(s)))
        out = ir.Val(d)
    lw.bind(op.res[0], out)


def _powi_abs(real, lw, op):
    """fpowi with an i32 exponent passed through absi first."""
    a = PowI.of(op)
    if a.exp_dtype != "i32":
        return real(lw, op)
    shape = a.shape
    n = lw.val(a.n)
    m = lw.fresh()
    lw.emit(ir.IntUn(m, "absi", ir.tile(shape, "i32"), n))
    lw.result(op, ir.FloatPowI, ir.tile(shape, a.dtype), ir.tile(shape, a.exp_dtype), lw.val(a.a), ir.Val(m))


def _global_as_alloca(real, lw, op):
    """get_global as a fresh alloca of the global's size (memoised as the real one is)."""
    a = GetGlobal.of(op)
    key = ("get_global", a.sym)
    p = lw.memo_get(key)
    if p is None:
        dst = lw.fresh()
        n = next(len(g.values) for g in lw.prog.globals if g.sym == a.sym)
        lw.emit(ir.AllocaPtr(dst, n, max(16, esize(a.dtype)), False, ptr_ty(a.dtype, ())))
        p = lw.memo_put(key, ir.Val(dst))
    lw.bind(op.res[0], spread_ptr(lw, p, a.dtype, a.shape))


def _allocas_merged(real, lw, op):
    """Every alloca of a scope after the first of its dtype answers the first one's address."""
    a = Alloca.of(op)
    key = ("merged-alloca", a.dtype)
    first = lw.memo_get(key)
    if first is not None:
        return lw.bind(op.res[0], spread_ptr(lw, first, a.dtype, a.shape))
    dst = lw.fresh()
    lw.emit(ir.AllocaPtr(dst, a.num_elem, a.align, a.shared, ptr_ty(a.dtype, ())))
    lw.memo_put(key, ir.Val(dst))
    lw.bind(op.res[0], spread_ptr(lw, ir.Val(dst), a.dtype, a.shape))


def _wrong_identity(x):
    """0 -> 1, an end of the range -> the other end, anything else one step along."""
    if isinstance(x, ir.IdF):
        return ir.IdF(x.dtype, {0.0: 1.0, -np.inf: np.inf, np.inf: -np.inf}.get(x.value, x.value + 1.0))
    bits = DTYPES[x.dtype].bits
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return ir.IdI(x.dtype, {lo: hi, hi: lo}.get(x.value, x.value + 1 if x.value < hi else x.value - 1))


def _region_args_swapped(op):
    """The fold's region parameters bound element first: each (acc, elem) pair in the other order."""
    (region,) = op.regions
    params = tuple(region.params[i ^ 1] for i in range(len(region.params)))
    return dataclasses.replace(op, regions=(dataclasses.replace(region, params=params),))


def _scan2_swapped(op):
    a = Scan.of(op)
    if len(a.operands) != 2:
        return op
    return _attrs(op, operands=tuple(a.operands)[::-1], identities=tuple(a.identities)[::-1])


_FLOATS, _INTS = ("f16", "bf16", "f32", "f64"), ("i16", "i32", "i64")
_I32_0D = ir.tile((), "i32")


def _print_tys(ins) -> tuple:
    return tuple(ins.arg_tys) if ins.arg_tys else (ins.arg_ty,) * len(ins.args)


# ---- the mutants --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mutant:
    name: str
    family: str  # the diff family whose comparisons must kill it
    patch: Patch  # the one place it patches
    what: str  # the wrong lowering, in words
    also: tuple = ()  # other families it is run against (killed if any of them fails)

    @property
    def where(self) -> str:
        return self.patch.where


MUTANTS: tuple = (
    Mutant("arith-rounds-toward-zero", "float_arith",
           instr(ir.FloatBin, _where(lambda i: i.op in ("addf", "subf", "mulf", "divf"), rounding="zero")),
           "addf / subf / mulf / divf written rounding<zero> instead of nearest_even"),
    Mutant("cmp-ordered-as-unordered", "float_cmp", instr(ir.CmpFloat, _where(_every, ordered=False)),
           "every float comparison written unordered: a NaN operand answers 1"),
    Mutant("maxmin-nan-dropped", "float_maxmin",
           instr(ir.FloatBin, _where(lambda i: i.op in ("maxf", "minf"), propagate_nan=False)),
           "maxf / minf written without propagate_nan: a NaN operand answers the other operand"),
    Mutant("floor-ceil-swapped", "float_sign",
           instr(ir.FloatUn, _where(lambda i: i.op in ("floor", "ceil"),
                                    op=lambda i: "ceil" if i.op == "floor" else "floor")),
           "floor written as ceil and ceil as floor"),
    Mutant("remf-ieee-remainder", "remf", rule(("binaryf",), _remf_ieee),
           "remf lowered as a - floor(a / b + 0.5) * b (a nearest quotient, IEEE-remainder-like)"),
    Mutant("exp-as-exp2", "transcendental", instr(ir.FloatUn, _where(lambda i: i.op == "exp", op="exp2", rounding="")),
           "exp written as exp2"),
    Mutant("exp2-ftz-dropped", "transcendental",
           instr(ir.FloatUn, _where(lambda i: i.op == "exp2" and i.ftz, ftz=False)),
           "exp2 written without flush_to_zero: answers under 2^-126 come back subnormal, not zero"),
    Mutant("atan2-operands-swapped", "atan2",
           instr(ir.FloatBin, _where(lambda i: i.op == "atan2", lhs=lambda i: i.rhs, rhs=lambda i: i.lhs)),
           "atan2's operands in the other order (the dialect's x / y read as C's atan2(x, y))"),
    Mutant("powi-exponent-abs", "powi", rule(("powi",), _powi_abs),
           "fpowi's exponent passed through absi: a negative power loses its reciprocal"),
    Mutant("negf-as-absf", "erf", instr(ir.FloatUn, _where(lambda i: i.op == "negf", op="absf")),
           "negf written as absf: erf loses its sign flip and exp(-x^2) becomes exp(x^2)"),
    Mutant("shri-always-logical", "int_arith", instr(ir.IntBin, _where(lambda i: i.op == "shri", op="shru")),
           "shri written with signedness<unsigned>: the arithmetic shift shifts in zeros"),
    Mutant("mulhi-signed", "int_arith", rule(("binaryi",), _mulhi_signed),
           "mulhii corrected to the SIGNED high half (minus b where a < 0, minus a where b < 0)"),
    Mutant("divi-rounds-down", "int_arith",
           instr(ir.IntBin, _where(lambda i: i.op == "divi" and not i.rounding, rounding="negative_inf")),
           "divi written with rounding<negative_inf>: the quotient is floored, not truncated"),
    Mutant("cmpi-unsigned-as-signed", "int_cmp", instr(ir.CmpInt, _where(_every, signed=True)),
           "every integer comparison written signed"),
    Mutant("itof-unsigned", "itof", instr(ir.Cast, _where(lambda i: i.op == "itof", signed=False)),
           "itof written with signedness<unsigned>"),
    Mutant("ftoi-no-saturation", "ftoi", instr(ir.Cast, _where(lambda i: i.op == "ftoi_sat", op="ftoi")),
           "ftoi_sat written without its saturating modifier (the plain, undefined-out-of-range ftoi)"),
    Mutant("ftof-rounding-nearest", "ftof", instr(ir.Cast, _where(lambda i: i.op.startswith("ftof"), op="ftof")),
           "every ftof written rounding<nearest_even>, whatever mode it names"),
    Mutant("exti-i4-zero-extends", "int_widen",
           instr(ir.Cast, _where(lambda i: i.op in ("exti", "extis") and i.from_.elem.name == "i4", op="exti")),
           "an exti from i4 written signedness<unsigned>: ext_i4 answers [0, 15]"),
    Mutant("bitcast-as-itof", "bitcast",
           instr(ir.Cast, _where(lambda i: i.op == "bitcast" and i.to.elem.name in _FLOATS
                                 and i.from_.elem.name in _INTS, op="itof")),
           "an integer-to-float bitcast written as itof (the value kept, not the bits)"),
    Mutant("select-branches-swapped", "select",
           instr(ir.SelectTile, _where(_every, lhs=lambda i: i.rhs, rhs=lambda i: i.lhs)),
           "select's two values in the other order"),
    Mutant("reduce-identity-wrong", "reduce",
           op_rule(("reduce", "scan"),
                   lambda op: _attrs(op, identities=tuple(_wrong_identity(x) for x in Reduce.of(op).identities))),
           "every reduction's and scan's identity replaced (0 -> 1, -inf -> +inf, the least integer -> the "
           "greatest ...); run against the scans too, where a shuffle-based prefix may fold it in",
           also=("scan", "scan2")),
    Mutant("reduce-args-swapped", "reduce", op_rule(("reduce",), _region_args_swapped),
           "a reduction's region arguments bound element first (the order Ops.td's prose states)"),
    Mutant("scan-args-swapped", "scan", op_rule(("scan",), _region_args_swapped),
           "a scan's region arguments bound element first (the order Ops.td's prose states)"),
    Mutant("scan2-operands-swapped", "scan2", op_rule(("scan",), _scan2_swapped),
           "a two-operand scan's operands (and their identities) passed in the other order"),
    Mutant("gather-pad-dropped", "pointers", op_rule(("load_ptrs", "gather"), lambda op: _attrs(op, pad=None)),
           "a masked load through pointers written without its padding value"),
    Mutant("atomic-umax-as-max", "atomics",
           instr(ir.AtomicRMWPtr, _where(lambda i: i.mode in ("umax", "umin"), mode=lambda i: i.mode[1:])),
           "atomic_rmw umax / umin written as max / min"),
    Mutant("view-indices-reversed", "views",
           instr(ir.LoadViewTile, _where(lambda i: all(t == _I32_0D for t in i.idx_tys),
                                         indices=lambda i: tuple(i.indices)[::-1])),
           "a view load's (rank-0) tile indices written in reverse order"),
    Mutant("global-as-alloca", "globals", rule(("get_global",), _global_as_alloca),
           "get_global lowered as a fresh alloca of the global's size: nothing persists, nothing is initialised"),
    Mutant("alloca-regions-merged", "alloca", rule(("alloca",), _allocas_merged),
           "every alloca of a scope after the first answers the first one's address"),
    Mutant("print-args-reversed", "print",
           instr(ir.PrintTile, _where(lambda i: len(set(_print_tys(i))) == 1, args=lambda i: tuple(i.args)[::-1])),
           "print_tko's arguments in reverse order"),
    Mutant("assert-dropped", "assert", rule(("assert",), lambda real, lw, op: None), "d_assert lowered to nothing"),
    Mutant("if-branches-swapped", "control",
           instr(ir.IfElse, _where(_every, on_true=lambda i: i.on_false, on_false=lambda i: i.on_true)),
           "an if's two regions in the other order"),
    Mutant("cat-operands-swapped", "tileshape",
           instr(ir.CatTile, _where(lambda i: i.lhs_ty == i.rhs_ty, lhs=lambda i: i.rhs, rhs=lambda i: i.lhs)),
           "cat's two operands in the other order"),
    Mutant("mmai-unsigned", "mma", instr(ir.IntMma, _where(_every, signed_lhs=False, signed_rhs=False)),
           "mmai written with both operands unsigned"),
)

BY_NAME = {m.name: m for m in MUTANTS}

# ---- switching one on ---------------------------------------------------------------------------------

_active = ""  # the installed mutant ('' none)
_undo: Callable[[], None] | None = None


def _install(name: str) -> None:
    global _active, _undo
    if name and name not in BY_NAME:
        raise KeyError(f"no mutant {name!r}; the mutants are {', '.join(BY_NAME)}")
    if _undo is not None:
        _undo()
        _active, _undo = "", None
    if name:
        _undo = BY_NAME[name].patch.install()
        _active = name


def active() -> str:
    """The name of the installed mutant, or '' for none."""
    return _active


@contextmanager
def use(name: str | None):
    """Lower with mutant ``name`` installed (None or '': with none, whatever the environment says)."""
    saved = _active
    _install(name or "")
    try:
        yield
    finally:
        _install(saved)


def from_environment() -> None:
    """Install the mutant ``TILEIR_MUTANT`` names, or none (done once, when this module is imported)."""
    _install(os.environ.get(ENV, ""))


def of_family(family: str) -> list:
    return [m for m in MUTANTS if m.family == family]


from_environment()

__all__ = ["Mutant", "Patch", "MUTANTS", "BY_NAME", "ENV", "active", "use", "from_environment", "of_family",
           "instr", "op_rule", "rule"]
