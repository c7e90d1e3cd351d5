"""Conversions between formats: ftof (and its rounding variants), itof, ftoi (plain and
saturating), exti (unsigned) / extis (signed), trunci, bitcast -- each a row of
``tileir.elementwise`` (its dialect operation, the attributes it fixes, its host rule in
``hostmath``); here, what every conversion of a dialect operation is held to while recording, which
pairs of float formats and rounding modes an ftof takes, the lowering and the host rule.

Device facts: itof reads the integer signed and rounds to nearest even; ftoi truncates toward
zero and is undefined on NaN, infinities and out-of-range lanes unless saturating (then the ends
of the range, NaN -> 0); exti widens UNSIGNED (an i1 1 widens to 1, not -1); trunci keeps the
low bits; bitcast moves no bit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import ir
from ..dtypes import BY_NAME
from ..elementwise import OPS
from ..lower.core import lowering
from ..prog import Attrs, Handle, Shape
from ..ref.core import interp
from .arith import known
from .recording import Recording

# what a conversion of each dialect operation takes: the source and destination kinds, the width
FROM_TO = {"ftof": ("float", "float", ""), "itof": ("int", "float", ""), "ftoi": ("float", "int", ""),
           "exti": ("int", "int", "wider"), "trunci": ("int", "int", "narrower"), "bitcast": ("", "", "same")}


_STANDARD = ("f64", "f32", "tf32", "f16", "bf16")


# Exact widenings: every value of the source is a value of the destination (more significand bits
# and a wider exponent range), so the rounding mode cannot change the answer.
_WIDENS_TO = {"f64": ("f32", "tf32", "f16", "bf16", "f8E4M3FN", "f8E5M2"),
              "f32": ("tf32", "f16", "bf16", "f8E4M3FN", "f8E5M2"),
              "tf32": ("f16", "bf16", "f8E4M3FN", "f8E5M2"),
              "f16": ("f8E4M3FN", "f8E5M2"), "bf16": ("f8E4M3FN", "f8E5M2")}
# The modes tileiras 13.4.92 assembles for sm_90 on an exact widening, by destination (measured
# here, every pair and mode: tests/test_family_convert.py; into tf32 and bf16 its back end answers
# the others with "failed to compile Tile IR program" although the verifier takes them)
_WIDENING_MODES = {"f64": ("nearest_even", "zero", "negative_inf", "positive_inf", "nearest_away"),
                   "f32": ("nearest_even", "zero", "negative_inf", "positive_inf", "nearest_away"),
                   "f16": ("nearest_even", "zero", "negative_inf", "positive_inf", "nearest_away"),
                   "tf32": ("nearest_even", "zero", "nearest_away"), "bf16": ("nearest_even", "zero")}
# Pairs and modes the recording takes on the host rule before a device measured them: every mode
# of an exact widening (the value is exact whatever the mode, so the host answers it unrounded)
# and f64 -> f32 toward -inf / +inf (one directed rounding). The layer-2 ftof family's corpus
# holds them all (diff/fam_int.py FTOF_SM90): the next device run of it measures them
# (bench/fuzz_device.sh focus); until then they are the host rule's word, not the H200's.
UNMEASURED_FTOF = frozenset(
    [(f, t, m) for t, srcs in _WIDENS_TO.items() for f in srcs for m in _WIDENING_MODES[t] if m != "nearest_even"]
    + [("f64", "f32", "negative_inf"), ("f64", "f32", "positive_inf")])


def exact_widening(from_: str, to: str) -> bool:
    """Every value of ``from_`` is one of ``to``: an ftof between them rounds nothing."""
    return from_ in _WIDENS_TO.get(to, ())


def ftof_modes(from_: str, to: str) -> tuple:
    """The rounding modes the recording takes for an ftof from ``from_`` to ``to``: the spec's table
    (Ops.td's FToFOp at 13.4) where tileiras 13.4.92 assembles it for sm_90, measured mode by mode
    (tests/test_family_convert.py): nearest_even everywhere a conversion exists (zero is the default
    into f8E8M0FNU, which has no nearest_even), zero when narrowing to a standard format and into
    f8E8M0FNU, nearest_away from f32 into tf32, negative_inf and positive_inf from f64 to f32,
    positive_inf into f8E8M0FNU, and on an exact widening every mode tileiras assembles (all five
    into f64, f32 and f16; nearest_even, zero and nearest_away into tf32; nearest_even and zero into
    bf16). The device's answers for the modes of ``UNMEASURED_FTOF`` are the host rule's until the
    layer-2 ftof family runs them on a GPU."""
    if to == "f8E8M0FNU":
        return ("zero", "positive_inf")
    modes = ["nearest_even"]
    f, t = BY_NAME[from_], BY_NAME[to]
    if to in _STANDARD and from_ in _STANDARD and t.bits <= f.bits:
        modes.append("zero")
    if from_ == "f32" and to == "tf32":
        modes.append("nearest_away")
    if from_ == "f64" and to == "f32":
        modes += ["negative_inf", "positive_inf"]
    if exact_widening(from_, to):
        modes = list(_WIDENING_MODES[to])
    return tuple(modes)


# ---- what each operation records ----------------------------------------------------------------


@dataclass(frozen=True)
class Convert(Attrs, kind="convert"):
    op: str
    from_: str
    to: str
    shape: Shape
    a: Handle


class ConvertRecording(Recording):
    def t_convert(self, op, from_, to, shape, a):
        row = known(self, "convert", op)
        inf = self.info(a)
        if inf.kind != "val" or inf.dtype != from_:
            raise self.refuse(f"{op}: the operand is {inf.dtype}, not {from_}")
        f, t = BY_NAME[from_], BY_NAME[to]
        src, dst, width = FROM_TO[row.dialect]
        kinds_ok = all(k == "" or (k == "float") == d.is_float for k, d in ((src, f), (dst, t)))
        width_ok = {"": True, "wider": t.bits > f.bits, "narrower": t.bits < f.bits, "same": t.bits == f.bits}[width]
        if not (kinds_ok and width_ok):
            what = {"wider": "widens an integer format", "narrower": "narrows an integer format",
                    "same": "moves bits between formats of one width"}.get(width, f"takes {src} tiles into a {dst} "
                                                                                "format")
            raise self.refuse(f"{op} {what}, not {from_} -> {to}",
                              "int_to_float / float_to_int" if row.dialect == "ftof" else None)
        if row.dialect == "ftof":
            if f == t:
                raise self.refuse(f"float_to_float from {from_} to itself: tileiras refuses an ftof between "
                                  "equal formats", "to(t, fmt), which records nothing when the format is already fmt")
            if to == "f8E8M0FNU" and op == "ftof":
                op = "ftof_zero"  # no nearest_even into the exponent-only format: the default writes zero
            modes = ftof_modes(from_, to)
            mode = OPS[("convert", op)].fixed_value("rounding")
            if mode not in modes:
                raise self.refuse(f"float_to_float from {from_} to {to} rounding {mode}: the dialect takes "
                                  f"{', '.join(modes)} for this pair (nearest_even everywhere, zero narrowing to a "
                                  "standard format and into f8E8M0FNU, nearest_away f32 -> tf32, negative_inf and "
                                  "positive_inf f64 -> f32, positive_inf into f8E8M0FNU, and on an exact widening "
                                  "every mode tileiras 13.4.92 assembles)", f"one of {', '.join(modes)}")
        r = self.new("val", to, inf.shape)
        self.emit(Convert(op=op, from_=from_, to=to, shape=inf.shape, a=a), (r,))
        return r


@lowering("convert")
def _lower_convert(lw, op):
    a = Convert.of(op)
    shape = tuple(a.shape)
    lw.result(op, ir.Cast, a.op, ir.tile(shape, a.from_), ir.tile(shape, a.to), lw.val(a.a))


@interp("convert")
def _ref_convert(it, op):
    a = Convert.of(op)
    f, t = BY_NAME[a.from_], BY_NAME[a.to]
    it.set(op.res[0], OPS[("convert", a.op)].host(np.asarray(it.val(a.a)), f, t))
