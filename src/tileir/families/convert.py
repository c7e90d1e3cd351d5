"""Conversions between formats: ftof (and its rounding variants), itof, ftoi (plain and
saturating), exti (unsigned) / extis (signed), trunci, bitcast.

Device facts: itof reads the integer signed and rounds to nearest even; ftoi truncates toward
zero and is undefined on NaN, infinities and out-of-range lanes unless saturating (then the ends
of the range, NaN -> 0); exti widens UNSIGNED (an i1 1 widens to 1, not -1); trunci keeps the
low bits; bitcast moves no bit.
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np

from .. import ir
from ..dtypes import BY_NAME, to_format, wrap_int
from ..lower.core import lowering
from ..prog import Attrs, Handle, Shape
from ..ref.core import interp
from .recording import Recording

FTOF_OPS = ("ftof", "ftof_zero", "ftof_neg_inf", "ftof_pos_inf", "ftof_away")
CONVERT_OPS = FTOF_OPS + ("itof", "ftoi", "ftoi_sat", "exti", "extis", "trunci", "bitcast")


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


_OP_MODE = {"ftof": "nearest_even", "ftof_zero": "zero", "ftof_neg_inf": "negative_inf",
            "ftof_pos_inf": "positive_inf", "ftof_away": "nearest_away"}


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
        if op not in CONVERT_OPS:
            raise self.refuse(f"unknown conversion {op}")
        inf = self.info(a)
        if inf.kind != "val" or inf.dtype != from_:
            raise self.refuse(f"{op}: the operand is {inf.dtype}, not {from_}")
        f, t = BY_NAME[from_], BY_NAME[to]
        if op in FTOF_OPS:
            if not (f.is_float and t.is_float):
                raise self.refuse(f"{op} converts between float formats, not {from_} -> {to}",
                                  "int_to_float / float_to_int")
            if f == t:
                raise self.refuse(f"float_to_float from {from_} to itself: tileiras refuses an ftof between "
                                  "equal formats", "to(t, fmt), which records nothing when the format is already fmt")
            if to == "f8E8M0FNU" and op == "ftof":
                op = "ftof_zero"  # no nearest_even into the exponent-only format: the default writes zero
            modes = ftof_modes(from_, to)
            if _OP_MODE[op] not in modes:
                raise self.refuse(f"float_to_float from {from_} to {to} rounding {_OP_MODE[op]}: the dialect takes "
                                  f"{', '.join(modes)} for this pair (nearest_even everywhere, zero narrowing to a "
                                  "standard format and into f8E8M0FNU, nearest_away f32 -> tf32, negative_inf and "
                                  "positive_inf f64 -> f32, positive_inf into f8E8M0FNU, and on an exact widening "
                                  "every mode tileiras 13.4.92 assembles)", f"one of {', '.join(modes)}")
        elif op == "itof" and (f.is_float or not t.is_float):
            raise self.refuse(f"int_to_float takes an integer tile into a float format, not {from_} -> {to}")
        elif op in ("ftoi", "ftoi_sat") and (not f.is_float or t.is_float):
            raise self.refuse(f"float_to_int takes a float tile into an integer format, not {from_} -> {to}")
        elif op in ("exti", "extis") and (f.is_float or t.is_float or t.bits <= f.bits):
            raise self.refuse(f"{op} widens an integer format, not {from_} -> {to}")
        elif op == "trunci" and (f.is_float or t.is_float or t.bits >= f.bits):
            raise self.refuse(f"trunci narrows an integer format, not {from_} -> {to}")
        elif op == "bitcast" and f.bits != t.bits:
            raise self.refuse(f"bitcast between formats of different widths ({from_} -> {to})")
        r = self.new("val", to, inf.shape)
        self.emit(Convert(op=op, from_=from_, to=to, shape=inf.shape, a=a), (r,))
        return r


@lowering("convert")
def _lower_convert(lw, op):
    a = Convert.of(op)
    shape = tuple(a.shape)
    lw.result(op, ir.Cast, a.op, ir.tile(shape, a.from_), ir.tile(shape, a.to), lw.val(a.a))


def _neighbour(v: np.ndarray, d, up: bool) -> np.ndarray:
    """The next value of format ``d`` above (``up``) or below each lane of ``v`` (held in d's dtype)."""
    if d.name == "tf32":  # tf32 lives in f32 lanes with 13 low bits zero: step by 2^13 in the pattern
        bits = v.view(np.uint32).astype(np.int64)
        neg = (bits >> 31) & 1
        mag = bits & 0x7FFFFFFF
        away = up != neg.astype(bool)  # up from a positive value (or down from a negative) grows it
        zero = mag == 0
        mag = np.where(away, mag + (1 << 13), np.where(zero, 1 << 13, mag - (1 << 13)))
        neg = np.where(zero, 0 if up else 1, neg)
        return ((neg << 31) | mag).astype(np.uint32).view(np.float32)
    return np.nextafter(v, np.asarray(np.inf if up else -np.inf, dtype=v.dtype))


SATFINITE = ("f8E4M3FN", "f8E5M2")
THROUGH_F32 = ("tf32", "f8E4M3FN", "f8E5M2")


def device_ftof(x: np.ndarray, src: str, d, mode: str) -> np.ndarray:
    """ftof as the H200 answers it (measured, bench/results/diff_h200.json): an f64 rounded to
    nearest into tf32 and the 8-bit floats goes through the nearest f32 (two roundings; into f16 and
    bf16 once; toward zero, truncated once), and a value
    past the 8-bit floats' range saturates at their largest finite value (PTX's satfinite)."""
    x = np.asarray(x, dtype=np.float64)
    if src == "f64" and d.name in THROUGH_F32 and mode == "nearest_even":
        with np.errstate(over="ignore"):
            x = x.astype(np.float32).astype(np.float64)
    if d.name in SATFINITE:
        top = float(ml_dtypes.finfo(d.np_dtype).max)
        x = np.where(np.isnan(x), x, np.clip(x, -top, top))
    return _round_mode(x, d, mode)


def _round_mode(x: np.ndarray, d, mode: str) -> np.ndarray:
    """``x`` (f64) rounded into format ``d`` by ``mode``: the correctly rounded nearest value, then
    one step of d toward the wanted side where it landed on the wrong one; nearest_away moves a tie
    to the neighbour farther from zero."""
    near = to_format(d, x)
    if mode == "nearest_even":
        return near
    back = near.astype(np.float64)
    up = _neighbour(near, d, True).astype(np.float64)
    down = _neighbour(near, d, False).astype(np.float64)
    fin = np.isfinite(x)
    if mode == "positive_inf":
        out = np.where(fin & (back < x), up, back)
    elif mode == "negative_inf":
        out = np.where(fin & (back > x), down, back)
    elif mode == "zero":
        out = np.where(fin & (np.abs(back) > np.abs(x)), np.where(x > 0, down, up), back)
    else:  # nearest_away: a tie goes to the neighbour farther from zero
        other = np.where(x > back, up, down)
        tie = fin & (x != back) & (np.abs(x - back) == np.abs(other - x))
        out = np.where(tie & (np.abs(other) > np.abs(back)), other, back)
    return to_format(d, out)


def _int_to_float(x: np.ndarray, t) -> np.ndarray:
    """Signed integers into float format ``t``, rounded once: an i64 beyond 2^53 goes through a
    round-to-odd f64 (its exact integer checked in Python), so the last rounding is the only one."""
    x = np.asarray(x).astype(np.int64)
    if np.all(np.abs(x.astype(np.float64)) < 2.0 ** 53):
        return to_format(t, x.astype(np.float64))
    if t.name == "f64":
        return np.vectorize(lambda i: float(int(i)), otypes=[np.float64])(x)

    def odd(i):
        i = int(i)
        r = float(i)  # nearest (Python's int -> float is correctly rounded)
        if int(r) == i:
            return r
        tz = r if abs(int(r)) < abs(i) else np.nextafter(r, 0.0)
        b = np.float64(tz).view(np.int64) | 1
        return float(np.int64(b).view(np.float64))

    return to_format(t, np.vectorize(odd, otypes=[np.float64])(x))


def _float_to_int(v: np.ndarray, t, saturating: bool) -> np.ndarray:
    """Truncation toward zero into integer format ``t``; out of range (and NaN) saturate: the plain
    conversion's such lanes are undefined on the device, and the host answers the saturated value."""
    lo, hi = -(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1
    v = np.asarray(v, dtype=np.float64)
    tr = np.trunc(v)
    over = tr >= 2.0 ** (t.bits - 1)
    under = tr < -(2.0 ** (t.bits - 1))
    mid = ~(over | under | np.isnan(v))
    out = np.zeros(v.shape, dtype=np.int64)
    out[mid] = tr[mid].astype(np.int64)
    out[over] = hi
    out[under] = lo
    return wrap_int(t, out)


_FTOF_MODE = {"ftof": "nearest_even", "ftof_zero": "zero", "ftof_neg_inf": "negative_inf",
              "ftof_pos_inf": "positive_inf", "ftof_away": "nearest_away"}


@interp("convert")
def _ref_convert(it, op):
    a = Convert.of(op)
    name = a.op
    f, t = BY_NAME[a.from_], BY_NAME[a.to]
    x = np.asarray(it.val(a.a))
    if name in FTOF_OPS:
        y = device_ftof(x.astype(np.float64), f.name, t, _FTOF_MODE[name])
    elif name == "itof":
        y = _int_to_float(x, t)
    elif name in ("ftoi", "ftoi_sat"):
        y = _float_to_int(x, t, name == "ftoi_sat")
    elif name == "exti":
        y = wrap_int(t, x.astype(np.int64) & ((1 << f.bits) - 1))
    elif name == "extis":
        y = wrap_int(t, x.astype(np.int64))
    elif name == "trunci":
        y = wrap_int(t, x.astype(np.int64))
    else:  # bitcast
        y = np.ascontiguousarray(x).view(t.np_dtype)
    it.set(op.res[0], y)
