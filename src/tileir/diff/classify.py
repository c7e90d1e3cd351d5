"""Telling a fuzz difference's cause: a tileiras wrong answer, a lowering bug, or a host-reference
error.

The evidence, in the order it is weighed:

1. **The host against an independent answer.** The host reference runs the minimal program once
   more, recording what every operation took and answered (block 0, first execution); where this
   module has an answer of its own for that operation (exact rational arithmetic in every rounding
   mode, IEEE 754-2019 maximum / minimum, once-rounded fma, the measured ftof, integer operations
   over Python's unbounded integers), a host answer that disagrees is a HOST-REFERENCE ERROR.
2. **-O0 against tileiras' default level.** The same bytes assembled at -O0: right there and wrong
   at the default level is a TILEIRAS WRONG ANSWER (its optimiser's), as the two defects of
   docs/assembler-defect.md were. Not for a program that keeps a while loop in a run with the
   while-O0 workaround (``fuzzknown.assembled_at_O0``): that run's level was -O0 already, so the
   rule cannot say it; such a failure goes to 3 (``evidence.assembled_at_O0``).
3. Otherwise the lowering and tileiras at every level remain: the classification says so and hands
   over the lowered Tile IR beside the host rule of each operation (``ops``: the recorded kind, the
   host rule's module and function, and the lowered lines), for a reader to hold one to the other.

A status the device never saw classifies itself: a host reference that raised is a host-reference
error; a program the recorder took and tileiras refused is a lowering that writes what tileiras
does not take, or a tileiras defect (-O0 tried too); a lowering that raised is a lowering bug.
``KNOWN`` (diff/fuzzknown.py) names the causes already understood, each with a matcher, so a
campaign counts only the unexplained; a program holding a tf32 product with K = 4 (padded to 8 by
the lowering) says so in its evidence (``tf32_k4_padded``): a difference there may mean the
padding does not hold.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

import numpy as np

from ..families import HOST as HOST_RULES
from ..families.arith import BinaryF, BinaryI, CmpI, Fma
from ..families.convert import Convert
from ..families.reduce import Reduce
from ..prog import attr_items
from . import exact as X
from .fuzzknown import CAUSES, assembled_at_O0, known_cause, tf32_k4_products

HOST = "host-reference error"
TILEIRAS = "tileiras wrong answer"
TILEIRAS_REFUSED = "tileiras refused or crashed"
LOWERING = "lowering bug or tileiras at every level"
RECORDER = "recorder or lowering crash"

# causes already understood: diff/fuzzknown.py (each with a matcher; KNOWN is its table)
KNOWN = CAUSES


# ---- the host reference, operation by operation ---------------------------------------------------------


def trace_ops(prog, args, grid) -> list:
    """(op, operands, results) of every operation's first execution in block 0, on the host."""
    from ..ref.core import RULES, Interp

    seen: dict = {}

    class Tracing(Interp):
        def exec(self, ops):
            for op in ops:
                rule = RULES.get(op.kind)
                if rule is None:
                    raise self.fail(f"the host reference has no rule for {op.kind}")
                self.cur_op = op.num
                first = self.block == (0, 0, 0) and op.num not in seen
                ins: dict[str, np.ndarray | list[np.ndarray]] = {}
                if first:
                    for k in ("a", "b", "c"):  # the element-wise operands, whatever the kind
                        h = getattr(op.a, k, None)
                        if isinstance(h, int) and (h in self.vals or h in self.prog.consts):
                            ins[k] = np.array(self.val(h))
                    if isinstance(op.a, Reduce):
                        ins["operands"] = [np.array(self.val(h)) for h in op.a.operands]
                rule(self, op)
                if first:
                    seen[op.num] = (op, ins, [np.array(self.vals[h]) for h in op.res if h in self.vals])

    it = Tracing(prog, args, grid)
    with np.errstate(all="ignore"):
        try:
            it.run()
        except Exception:
            pass
    return [seen[k] for k in sorted(seen)]


def _exact_binary(name: str, x: float, y: float, fmt: str, mode: str) -> float:
    if not (math.isfinite(x) and math.isfinite(y)) or (name == "divf" and y == 0):
        with np.errstate(all="ignore"):
            r = {"addf": np.add, "subf": np.subtract, "mulf": np.multiply, "divf": np.divide}[name](
                np.float64(x), np.float64(y))
        return X.convert_float(float(r), fmt, mode)
    fx, fy = Fraction(x), Fraction(y)
    q = {"addf": lambda: fx + fy, "subf": lambda: fx - fy, "mulf": lambda: fx * fy, "divf": lambda: fx / fy}[name]()
    if q == 0:
        if name in ("mulf", "divf"):
            return math.copysign(0.0, x) * math.copysign(1.0, y)
        yy = -y if name == "subf" else y  # IEEE 754 6.3: an exact zero sum is +0 but toward -inf,
        if math.copysign(1, x) == math.copysign(1, yy):  # and x + x keeps x's sign in every mode
            return math.copysign(0.0, x)  # (-0 + -0 is -0, +0 + +0 is +0: campaign 2's seed 376)
        return -0.0 if mode == "negative_inf" else 0.0
    v = X.round_fraction(q, fmt, mode)
    return v if v != 0 else math.copysign(0.0, float(q))


def _ieee_max(x, y, is_max: bool, propagate: bool) -> float:
    if math.isnan(x) or math.isnan(y):
        if propagate:
            return math.nan
        return y if math.isnan(x) else x
    if x == y == 0:
        neg = math.copysign(1, x) < 0 and math.copysign(1, y) < 0 if is_max else \
            math.copysign(1, x) < 0 or math.copysign(1, y) < 0
        return -0.0 if neg else 0.0
    return max(x, y) if is_max else min(x, y)


def _wrap(n: int, bits: int) -> int:
    n &= (1 << bits) - 1
    return n - (1 << bits) if n >> (bits - 1) else n


def _int_binary(name: str, x: int, y: int, bits: int):
    u = (1 << bits) - 1
    ux, uy = x & u, y & u
    if name in ("divi", "remi"):
        if y == 0:
            return None
        q = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)
        return _wrap(q if name == "divi" else x - q * y, bits)
    f = {"addi": lambda: x + y, "subi": lambda: x - y, "muli": lambda: x * y, "maxi": lambda: max(x, y),
         "mini": lambda: min(x, y), "mulhii": lambda: (ux * uy) >> bits, "andi": lambda: x & y, "ori": lambda: x | y,
         "xori": lambda: x ^ y, "shli": lambda: x << (y & 63), "shri": lambda: x >> (y & 63),
         "shru": lambda: ux >> (y & 63)}.get(name)
    return None if f is None else _wrap(f(), bits)


def independent(op, ins: dict):
    """This module's own answer for ``op`` on its recorded operands (a flat list), or None where it
    has none."""
    from ..dtypes import BY_NAME

    a = op.a
    x: np.ndarray  # the operands' lanes, as f64 or i64 by the operation
    y: np.ndarray
    try:
        if isinstance(a, BinaryF) and a.op in ("addf", "subf", "mulf", "divf", "maxf", "minf"):
            x, y = (np.broadcast_to(ins[n], a.shape).astype(np.float64).ravel() for n in ("a", "b"))
            if a.op in ("maxf", "minf"):
                return [_ieee_max(p, q, a.op == "maxf", a.propagate_nan) for p, q in zip(x, y)]
            mode = a.rounding or "nearest_even"
            return [_exact_binary(a.op, float(p), float(q), a.dtype, mode) for p, q in zip(x, y)]
        if isinstance(a, Fma):
            x, y, z = (np.broadcast_to(ins[n], a.shape).astype(np.float64).ravel() for n in ("a", "b", "c"))
            # a finite product is exact, so a finite x * y plus an infinite (or NaN) addend is the
            # addend (diff.exact.fma takes x * y in f64 first: MAX * MAX + -inf gave NaN; seed 2847)
            return [float(r) if math.isfinite(p) and math.isfinite(q) and not math.isfinite(r)
                    else X.fma(float(p), float(q), float(r), a.dtype) for p, q, r in zip(x, y, z)]
        if isinstance(a, Convert) and a.op.startswith("ftof"):
            mode = {"ftof": "nearest_even", "ftof_zero": "zero", "ftof_neg_inf": "negative_inf",
                    "ftof_pos_inf": "positive_inf", "ftof_away": "nearest_away"}[a.op]
            x = np.asarray(ins["a"]).astype(np.float64).ravel()
            return [X.device_ftof(float(v), a.from_, a.to, mode) for v in x]
        if isinstance(a, (BinaryI, CmpI)):
            d = BY_NAME[a.dtype]
            x, y = (np.broadcast_to(ins[n], a.shape).astype(np.int64).ravel() for n in ("a", "b"))
            if isinstance(a, CmpI):
                bits = d.bits
                rd = (lambda v: int(v)) if a.signed else (lambda v: int(v) & ((1 << bits) - 1))
                f = {"eq": int.__eq__, "ne": int.__ne__, "lt": int.__lt__, "le": int.__le__, "gt": int.__gt__,
                     "ge": int.__ge__}[a.pred]
                return [bool(f(rd(p), rd(q))) for p, q in zip(x, y)]
            return [_int_binary(a.op, int(p), int(q), d.bits) for p, q in zip(x, y)]
        body = op.regions[0].ops[0].a if op.regions and len(op.regions[0].ops) == 1 else None
        if op.kind == "reduce" and isinstance(a, Reduce) and isinstance(body, BinaryF) and \
                body.op in ("maxf", "minf"):
            x = np.moveaxis(np.asarray(ins["operands"][0]).astype(np.float64), a.dim, -1)
            out = []
            for row in x.reshape(-1, x.shape[-1]):
                acc = float(row[0])
                for v in row[1:]:
                    acc = _ieee_max(acc, float(v), body.op == "maxf", body.propagate_nan)
                out.append(acc)
            return out
    except (KeyError, TypeError, ValueError, OverflowError, ZeroDivisionError):
        return None
    return None


def host_disagreements(prog, args, grid) -> list:
    """The operations whose host answer differs from this module's own: one entry each."""
    out = []
    for op, ins, res in trace_ops(prog, args, grid):
        want = independent(op, ins)
        if want is None or not res:
            continue
        got = np.asarray(res[0]).astype(np.float64).ravel() if np.asarray(res[0]).dtype.kind in "fb" or \
            res[0].dtype.name in ("bfloat16",) else np.asarray(res[0]).astype(object).ravel()
        want_a = np.asarray(want, dtype=got.dtype if got.dtype != object else object)
        bad = []
        for i, (w, g) in enumerate(zip(want_a, got)):
            if w is None:
                continue
            if isinstance(w, float) or isinstance(g, float):
                w_, g_ = float(w), float(g)
                same = (math.isnan(w_) and math.isnan(g_)) or \
                    (w_ == g_ and math.copysign(1, w_) == math.copysign(1, g_))
            else:
                same = int(w) == int(g)
            if not same:
                bad.append(i)
        if bad:
            i = bad[0]
            name = getattr(op.a, "op", "")  # the operation a kind of several names: unaryf's exp
            out.append({"op": op.kind + (f" {name}" if name else ""), "num": op.num,
                        "lanes": len(bad), "of": len(got), "example": {"lane": i, "host": str(got[i]),
                                                                      "independent": str(want_a[i])},
                        "attrs": {k: v for k, v in attr_items(op.a) if isinstance(v, (str, bool)) and k != "op"}})
    return out


def rule_of(kind: str) -> str:
    fn = HOST_RULES.get(kind)
    return f"{fn.__module__}.{fn.__name__}" if fn else "(none)"


def op_evidence(desc: dict) -> list:
    """Per recorded operation of the program (kind and its ``op`` field): its host rule and the
    lowered lines that spell it."""
    from .shrink import program_text

    text = program_text(desc)
    seen = []
    for line in text.get("recorded", "").splitlines():
        m = re.match(r"\s*#\d+ (\w+)\[", line)
        if not m:
            continue
        op_field = re.search(r"\bop='(\w+)'", line)
        key = (m.group(1), op_field.group(1) if op_field else None)
        if key not in seen:
            seen.append(key)
    lowered = text.get("lowered", "").splitlines()
    out = []
    for kind, name in seen:
        word = name or kind.split("_")[0]
        out.append({"kind": kind, "op": name, "host_rule": rule_of(kind),
                    "lowered": [ln.strip() for ln in lowered if re.search(rf"\b{re.escape(word)}\b", ln)][:6]})
    return out


def classify(desc: dict, outcome: dict, tester_o0=None) -> dict:
    """The cause of ``outcome`` (a failing outcome of ``desc``, its minimal program), with evidence."""
    known = known_cause(outcome, desc)
    st = outcome["status"]
    ev: dict = {}
    padded = [p[:3] for p in tf32_k4_products(desc) if p[3]] if st == "differ" else []
    if padded:  # the workaround of docs/assembler-defect.md's third defect is in this program
        ev["tf32_k4_padded"] = padded
    if st in ("record_crash", "lower_crash"):
        return {"class": RECORDER, "why": outcome.get("detail"), **(known or {})}
    if st == "host_error":
        return known or {"class": HOST, "why": "the host reference raised on a program the recording accepted: "
                         + str(outcome.get("detail"))[:300], "evidence": {"ops": op_evidence(desc)}}
    if tester_o0 is not None:
        o0 = tester_o0.outcomes([desc])[0]
        ev["at_O0"] = o0["status"]
        ev["at_O0_detail"] = (o0.get("detail") or "")[:300]
    if st == "assemble_error":
        return {"class": TILEIRAS_REFUSED, "why": "the recording took a program tileiras does not assemble: a "
                "refusal the recorder lacks, or a tileiras defect (" + str(outcome.get("detail"))[:200] + ")",
                "evidence": ev, **(known or {})}
    try:
        from .fuzzbuild import build, make_args

        b = build(desc)
        disagree = host_disagreements(b.prog, make_args(b), b.grid)
    except Exception as e:
        disagree, ev["independent_error"] = [], f"{type(e).__name__}: {e}"[:200]
    ev["host_vs_independent"] = disagree
    if disagree:
        d = disagree[0]
        return {"class": HOST, "why": f"the host reference's {d['op']} ({d['attrs']}) disagrees with the exact "
                f"answer on {d['lanes']} of {d['of']} lanes", "evidence": ev, **(known or {})}
    at_o0 = assembled_at_O0(outcome, desc)
    if at_o0:  # the run's level was -O0 already (while-O0): the -O0 re-run is the same cubin
        ev["assembled_at_O0"] = ("the program keeps a while loop, an alloca in a loop or a carry passed to "
                                 "another: the run had the while-O0 / alloca-loop-O0 / carry-swap-O0 workaround")
    if ev.get("at_O0") == "equal" and not at_o0:
        return {"class": TILEIRAS, "why": "right at -O0, wrong at tileiras' default level (its optimiser's)",
                "evidence": ev, **(known or {})}
    ev["ops"] = op_evidence(desc)
    if at_o0:
        again = " (and right when run again at -O0: not repeatable)" if ev.get("at_O0") == "equal" else ""
        return {"class": LOWERING, "why": "wrong at -O0, where the while-O0 workaround assembled it" + again +
                ", and the host agrees with every independent answer it has: not tileiras' optimiser; hold the "
                "lowered lines to the host rule of each operation (evidence.ops)", "evidence": ev, **(known or {})}
    return {"class": LOWERING, "why": "wrong at every level tried and the host agrees with every independent answer "
            "it has: hold the lowered lines to the host rule of each operation (evidence.ops)", "evidence": ev,
            **(known or {})}


__all__ = ["classify", "known_cause", "host_disagreements", "independent", "trace_ops", "op_evidence", "KNOWN",
           "HOST", "TILEIRAS", "TILEIRAS_REFUSED", "LOWERING", "RECORDER"]
