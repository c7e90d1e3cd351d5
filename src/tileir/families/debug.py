"""The debugging and ordering operations: d_assert, d_assume, d_print, and the token-only three
(memory_fence_alias, gdc_launch_dependents, gdc_wait) -- recorded, lowered, computed on the host.

Device facts (the dialect's verifiers, measured with tileiras 13.4): assert takes an i1 tile of
any rank. assert and assume are refused inside a reduce or scan body ("only memory-effect-free
operations are allowed"), so the recording refuses them there -- where the spec expected them to
be taken; inside an if or a loop they are. assume's div_by wants a positive power-of-two divisor
and an integer or pointer tile, its every / along come together (along below the rank, every at
most that dimension's extent); bounded wants an integer tile and bounds inside the format's
signed range, lb <= ub; same_elements wants an integer or pointer tile and one group size per
dimension, each at most the extent. print_tko counts one argument per format expression (``%*d``
is one) and refuses a lone trailing ``%``; it takes any argument format and does not match
conversions to formats, so the recording does: an integer conversion wants an integer argument
and a float one a float.

Ordering: the lowering keeps a token per parameter (lower/tokens.py), so a print or a fence is
ordered after the last access of every parameter written so far, and every later access is
ordered after it; prints and the token-only operations are also chained among themselves.
memory_fence_alias and gdc_wait at the kernel's top level also order every later load of a
parameter nobody writes; inside a loop that part is not expressed, and gdc_wait is refused there.

Where the spec is wider: it restricts only memory_fence_alias (and d_print) to
outside reduce, scan and if regions. Here all three token-only operations are refused there --
reduce and scan bodies carry no token (and the dialect wants them pure), and the lowering gives an
if no token, so one made inside cannot be used after it (tried with gdc_launch_dependents in an if
followed by a loop: tileiras rejects the bytes, "operand #0 must be cuda tile token type") -- and
gdc_wait is refused in loops too: its whole point is ordering the loads after it, which the
lowering expresses only at the top level (a loop carries no token for never-written parameters).
gdc_launch_dependents and memory_fence_alias are taken in loops. gdc_wait and
gdc_launch_dependents are no-ops under tileir's launch, which sets no programmatic dependent launch.

Host: assert raises (the device fails the launch); assume is the identity (nothing checks it);
print formats with C printf semantics and appends the text to ``Interp.print_pieces`` (``.printed`` joins
it); the token-only three do nothing.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from .. import ir
from ..dtypes import BY_NAME
from ..lower.core import lowering
from ..prog import Attrs, Handle, Shape
from ..ref.core import interp
from .recording import Recording
from .spaces import ordered

_SPEC = re.compile(r"%(?P<flags>[-+ #0]*)(?P<width>\d+|\*)?(?:\.(?P<prec>\d*|\*))?"
                   r"(?P<len>hh|h|ll|l|j|z|t|L)?(?P<conv>[diouxXeEfFgGaAcspn%])")
INT_CONV = "diouxXc"
_LEN_BITS = {"hh": 8, "h": 16, "l": 64, "ll": 64, "j": 64, "z": 64, "t": 64}
FLOAT_CONV = "eEfFgGaA"
TOKEN_ONLY = {"memory_fence_alias": "memory_fence_alias_tko", "gdc_launch_dependents": "gdc_launch_dependents_tko",
              "gdc_wait": "gdc_wait_tko"}


def format_specs(fmt: str):
    """The format expressions of ``fmt`` that take an argument (``%%`` takes none), in order;
    raises ValueError naming the position of one the dialect would not read."""
    out: list[re.Match[str]] = []
    i = 0
    while True:
        i = fmt.find("%", i)
        if i < 0:
            return out
        m = _SPEC.match(fmt, i)
        if m is None:
            raise ValueError(f"the format expression at position {i} ({fmt[i:i + 6]!r}) is unterminated or not one "
                             "of printf's")
        if m["conv"] != "%":
            out.append(m)
        i = m.end()


# ---- what each operation records ----------------------------------------------------------------


@dataclass(frozen=True)
class Assert(Attrs, kind="assert"):
    cond: Handle
    shape: Shape
    message: str


@dataclass(frozen=True)
class Assume(Attrs, kind="assume"):
    pred: ir.DivBy | ir.SameElements | ir.Bounded
    dtype: str
    shape: Shape
    src: Handle
    holds: str  # "val" or "ptrs": what the tile holds


@dataclass(frozen=True)
class Print(Attrs, kind="print"):
    fmt: str
    args: tuple[Handle, ...]
    dtypes: tuple[str, ...]
    tok: Handle


@dataclass(frozen=True)
class TokenOnly(Attrs, kind="token_only"):
    op: str
    tok: Handle


class DebugRecording(Recording):
    def _not_in_pure_region(self, what):
        k = self.inside("reduce", "scan", "if", "else")
        if k:
            region = "an if" if k in ("if", "else") else f"a {k}"
            raise self.refuse(f"a {what} inside {region} region: it is ordered by the memory token, and that region "
                              "carries none (the dialect requires a reduction's body to be pure)",
                              f"move the {what} out of the region")

    def _not_in_fold(self, what, fix):
        k = self.inside("reduce", "scan")
        if k:
            raise self.refuse(f"a {what} inside a {k} body: the dialect allows only operations free of memory effects "
                              f"there, and counts {what} as one (measured, tileiras 13.4)", fix)

    def t_assert(self, shape, cond, message):
        self._not_in_fold("d_assert", "assert on the tile before the reduction or scan, or on its answer")
        inf = self.info(cond)
        if inf.kind != "val" or inf.dtype != "i1":
            raise self.refuse(f"d_assert's condition is a {inf.kind} {inf.dtype}{list(inf.shape)}; it is an i1 tile",
                              "a comparison: d_assert(lt_i(i, n), 'i < n')")
        if not isinstance(message, str):
            raise self.refuse(f"d_assert's message is a {type(message).__name__}, not a string", "a str message")
        self.emit(Assert(cond=cond, shape=inf.shape, message=message), ())

    def _check_pred(self, pred, inf):
        d = BY_NAME[inf.dtype]
        shape = inf.shape
        if isinstance(pred, ir.DivBy):
            if inf.kind == "val" and d.is_float:
                raise self.refuse(f"assume div_by over {inf.dtype}: it claims something of integers and pointers "
                                  "only", "assume it of the integer the float came from")
            n = pred.divisor
            if not isinstance(n, int) or n <= 0 or n & (n - 1):
                raise self.refuse(f"assume div_by {n}: the divisor is a positive power of two",
                                  "the largest power of two that divides every lane")
            if (pred.every is None) != (pred.along is None):
                raise self.refuse("assume div_by with only one of every / along: they come together",
                                  "DivBy(n) for every lane, or DivBy(n, every, along)")
            if pred.along is not None and pred.every is not None:  # both or neither (above)
                if not 0 <= pred.along < len(shape):
                    raise self.refuse(f"assume div_by along dimension {pred.along} of a rank-{len(shape)} tile",
                                      f"along one of the tile's dimensions, 0 to {len(shape) - 1}")
                if not 0 <= pred.every <= shape[pred.along]:
                    raise self.refuse(f"assume div_by every {pred.every} along a dimension of {shape[pred.along]}",
                                      "every between 0 and the dimension's extent")
        elif isinstance(pred, ir.Bounded):
            if inf.kind != "val" or d.is_float:
                raise self.refuse(f"assume bounded over a {inf.kind} of {inf.dtype}: bounds are claimed of integer "
                                  "tiles only", "assume it of an integer tile")
            lo, hi = (-1, 0) if d.bits == 1 else (-(1 << (d.bits - 1)), (1 << (d.bits - 1)) - 1)
            for b in (pred.lb, pred.ub):
                if b is not None and not (isinstance(b, int) and lo <= b <= hi):
                    raise self.refuse(f"assume bounded by {b} over {inf.dtype}: a bound is inside the format's "
                                      f"signed range [{lo}, {hi}]", "a bound the format holds, or None")
            if pred.lb is not None and pred.ub is not None and pred.lb > pred.ub:
                raise self.refuse(f"assume bounded [{pred.lb}, {pred.ub}]: the lower bound is above the upper",
                                  "lb <= ub")
        elif isinstance(pred, ir.SameElements):
            if inf.kind == "val" and d.is_float:
                raise self.refuse(f"assume same_elements over {inf.dtype}: it claims something of integers and "
                                  "pointers only", "assume it of an integer tile")
            groups = tuple(pred.groups)
            if len(groups) != len(shape):
                raise self.refuse(f"assume same_elements with {len(groups)} group sizes for a rank-{len(shape)} tile",
                                  "one group size per dimension")
            for g, n in zip(groups, shape):
                if not isinstance(g, int) or not 0 <= g <= n:
                    raise self.refuse(f"assume same_elements group {g} along a dimension of {n}",
                                      "a group size between 0 and the dimension's extent")
        else:
            raise self.refuse(f"d_assume takes a DivBy, SameElements or Bounded, not {type(pred).__name__}",
                              "assume_div_by / assume_same_elements / assume_in_range")

    def t_assume(self, pred, dtype, shape, src):
        inf = self.info(src)
        if inf.kind not in ("val", "ptrs"):
            raise self.refuse(f"d_assume of a {inf.kind}: it takes a tile or a tile of pointers",
                              "assume it of the tile the view was built from")
        self._not_in_fold("d_assume", "assume it of the tile before the reduction or scan")
        self._check_pred(pred, inf)
        r = self.new(inf.kind, inf.dtype, inf.shape)
        self.emit(Assume(pred=pred, dtype=inf.dtype, shape=inf.shape, src=src, holds=inf.kind), (r,))
        if inf.kind == "ptrs":
            self.set_space(r, self.space_of(src))
        return r

    def t_print(self, fmt, dtype, shape, args):
        self._not_in_pure_region("d_print")
        if not isinstance(fmt, str):
            raise self.refuse(f"d_print's format is a {type(fmt).__name__}, not a string", "a str format")
        try:
            specs = format_specs(fmt)
        except ValueError as e:
            raise self.refuse(f"d_print: {e}", "a printf conversion (%d, %f ...), or %% for a percent sign") from None
        if len(specs) != len(args):
            raise self.refuse(f"d_print's format has {len(specs)} format expressions and {len(args)} arguments were "
                              "given: one argument per expression", "as many arguments as % conversions")
        dtypes = []
        for k, (m, h) in enumerate(zip(specs, args)):
            inf = self.info(h)
            if inf.kind != "val" or inf.shape != ():
                raise self.refuse(f"d_print's argument {k} is a {inf.kind} {inf.dtype}{list(inf.shape)}: d_print "
                                  "takes rank-0 tiles (one line a block, a value a test can judge)",
                                  "extract or reduce the lane to print first")
            conv = m["conv"]
            if conv in "spn" or "*" in (m["width"] or "") + (m["prec"] or ""):
                raise self.refuse(f"d_print: the conversion {m.group(0)!r} takes a string, a pointer or a width "
                                  "argument, which d_print does not pass", "%d, %u, %x, %f, %e, %g, %c ...")
            is_float = BY_NAME[inf.dtype].is_float
            if conv in INT_CONV and is_float or conv in FLOAT_CONV and not is_float:
                want = "a float" if conv in FLOAT_CONV else "an integer"
                raise self.refuse(f"d_print: the conversion {m.group(0)!r} reads {want} and argument {k} is "
                                  f"{inf.dtype}", "%f / %e / %g for a float, %d / %u / %x for an integer")
            dtypes.append(inf.dtype)
        tin, tout = self.next_token()
        self.emit(Print(fmt=fmt, args=tuple(args), dtypes=tuple(dtypes), tok=tin), (tout,))

    def t_token_only(self, op):
        name = TOKEN_ONLY.get(op, op if op in TOKEN_ONLY.values() else None)
        if name is None:
            raise self.refuse(f"unknown token operation {op!r}", "one of " + ", ".join(TOKEN_ONLY))
        what = name[:-4]
        self._not_in_pure_region(what)
        if what == "gdc_wait" and any(f.kind not in ("entry", "trial") for f in self.frames):
            raise self.refuse("gdc_wait inside a region (a loop's body): the loads after it must wait for the "
                              "predecessor kernel, and the lowering orders them after it only at the kernel's top "
                              "level (the spec restricts only memory_fence_alias; this is the lowering's limit: a "
                              "region carries no token for the parameters nobody writes, so a gdc_wait there would "
                              "order none of their loads)",
                              "call gdc_wait once, at the top of the kernel, before the loop")
        tin, tout = self.next_token()
        self.emit(TokenOnly(op=name, tok=tin), (tout,))


# ---- lowering ----------------------------------------------------------------------------------


@lowering("assert")
def _lower_assert(lw, op):
    a = Assert.of(op)
    lw.emit(ir.AssertTile(lw.val(a.cond), ir.tile(a.shape, "i1"), a.message))


@lowering("assume")
def _lower_assume(lw, op):
    a = Assume.of(op)
    lw.result(op, ir.AssumeTile, lw.val(a.src), a.pred, lw.ty(op.res[0]))


@lowering("print")
def _lower_print(lw, op):
    a = Print.of(op)
    args = tuple(lw.val(h) for h in a.args)
    tys = tuple(ir.tile((), d) for d in a.dtypes)
    arg_ty = tys[0] if tys else ir.tile((), "i32")

    def make(tin):
        tok = lw.fresh()
        lw.emit(ir.PrintTile(tok, a.fmt, args, arg_ty, tin, tys if len(set(tys)) > 1 else ()))
        return ir.Val(tok)

    lw.bind(op.res[0], ordered(lw, make, full=True))


@lowering("token_only")
def _lower_token_only(lw, op):
    name = TokenOnly.of(op).op

    def make(tin):
        tok = lw.fresh()
        lw.emit(ir.TokenOnlyTile(tok, name, tin))
        return ir.Val(tok)

    full = name != "gdc_launch_dependents_tko"  # it orders no memory: scheduling only
    lw.bind(op.res[0], ordered(lw, make, full=full, reorder_entry=full))


# ---- host reference ---------------------------------------------------------------------------


@interp("assert")
def _ref_assert(it, op):
    cond = np.asarray(it.val(Assert.of(op).cond), dtype=bool)
    if not cond.all():
        lane = tuple(int(i) for i in np.argwhere(~cond)[0]) if cond.ndim else ()
        raise it.fail(f"d_assert failed in block {tuple(it.block)}, lane {list(lane)}: {Assert.of(op).message}")


@interp("assume")
def _ref_assume(it, op):
    it.set(op.res[0], it.val(Assume.of(op).src))


def _hexfloat(x: float, prec, upper: bool) -> str:
    if math.isinf(x) or math.isnan(x):
        s = ("-" if math.copysign(1, x) < 0 and math.isinf(x) else "") + ("inf" if math.isinf(x) else "nan")
    else:
        sign = "-" if math.copysign(1, x) < 0 else ""
        h = float.hex(abs(x))  # 0x1.8000000000000p+1
        mant, exp = h[2:].split("p")
        head, _, frac = mant.partition(".")
        if prec is None:
            frac = frac.rstrip("0")
        else:
            frac = (frac + "0" * prec)[:prec]  # truncated, not rounded: a documented approximation
        s = f"{sign}0x{head}{'.' + frac if frac else ''}p{'+' if not exp.startswith('-') else ''}{exp.lstrip('+')}"
    return s.upper() if upper else s


def c_format(fmt: str, values, dtypes) -> str:
    """``fmt`` with ``values`` interleaved as C's printf writes them (length modifiers read as C
    reads them; floats promoted to double)."""
    return "".join(c_pieces(fmt, values, dtypes))


def c_pieces(fmt: str, values, dtypes) -> list:
    """``c_format``'s text in the pieces the H200 writes one at a time: each run of literal text and
    each conversion's text (``%%`` is literal). Concurrent blocks' prints interleave at these pieces'
    boundaries and nowhere else (bench/results/fuzz_campaign10_h200.json: 603173, 607561)."""
    out, pos, k = [], 0, 0
    for m in _SPEC.finditer(fmt):
        out.append(fmt[pos:m.start()])
        pos = m.end()
        conv = m["conv"]
        if conv == "%":
            out.append("%")
            continue
        v, d = values[k], BY_NAME[dtypes[k]]
        k += 1
        prec = None if m["prec"] is None else int(m["prec"] or 0)
        spec = "%" + m["flags"] + (m["width"] or "") + ("" if prec is None else f".{prec}")
        if conv in FLOAT_CONV:
            x = float(np.asarray(v).astype(np.float64))
            if conv in "aA":
                s = _hexfloat(x, prec, conv == "A")
                w = int(m["width"] or 0)
                out.append(s.ljust(w) if "-" in m["flags"] else s.rjust(w))
            else:
                out.append((spec + conv) % x)
            continue
        n = int(np.asarray(v).astype(np.int64))
        bits = _LEN_BITS.get(m["len"], 64 if d.bits == 64 else 32)  # C promotes a narrow int to int
        n &= (1 << bits) - 1
        if conv in "di" and n >= 1 << (bits - 1):
            n -= 1 << bits
        if conv == "c":
            out.append((spec + "c") % chr(n & 0xFF))
        else:
            out.append((spec + ("d" if conv in "diu" else conv)) % n)
    out.append(fmt[pos:])
    return out


@interp("print")
def _ref_print(it, op):
    a = Print.of(op)
    it.print_pieces.append((it.block, c_pieces(a.fmt, [it.val(h) for h in a.args], a.dtypes)))


@interp("token_only")
def _ref_token_only(it, op):
    return None


__all__ = ["DebugRecording", "format_specs", "c_format", "TOKEN_ONLY"]
