"""The comparison of one output: a device (or other) answer against a reference answer, under a
``Judge``. Shared by checked mode (``tileir.check``) and the device diff (``tileir.diff``), which
imports it from here. Pure numpy: the tests feed it perturbed arrays to show it can fail."""

from __future__ import annotations

from dataclasses import dataclass, field

import ml_dtypes
import numpy as np


@dataclass(frozen=True)
class Judge:
    """How one output is compared. ``bits``: bit for bit, NaN payloads included (the answer is a
    bit pattern). ``exact``: bit for bit except that two NaNs agree whatever their payloads (IEEE
    leaves a generated NaN's payload to the implementation; the spec asks for a canonical NaN
    only where it says so). ``tol``: NaN where NaN, the same infinity where an infinity, and
    elsewhere |device - host| <= atol + ulps * ulp(host) (ulp in the output's format), or the
    per-lane bound an ``Out`` computes from the inputs."""

    kind: str  # bits | exact | tol
    ulps: float = 0.0
    atol: float = 0.0

    def describe(self) -> str:
        if self.kind != "tol":
            return self.kind
        parts = [f"{self.ulps:g} ulp"] if self.ulps else []
        if self.atol:
            parts.append(f"{self.atol:.3g} abs")
        return "tol " + " + ".join(parts or ["per-lane bound"])


BITS = Judge("bits")
EXACT = Judge("exact")


@dataclass
class Verdict:
    lanes: int = 0  # lanes compared
    bad: int = 0  # lanes that disagree
    max_err: float = 0.0  # the largest |got - want| over finite lanes compared (0 for non-float outputs)
    max_ulp: float = 0.0  # the same in units of the output format's last place (float outputs)
    first: list = field(default_factory=list)  # a few disagreeing lanes: (lane, label, want, got)
    by_label: dict = field(default_factory=dict)  # label -> [bad lanes, max ulp] (outputs with labels)

    @property
    def ok(self) -> bool:
        return self.bad == 0

    def merge(self, other: Verdict) -> Verdict:
        labels = dict(self.by_label)
        for k, (b, u) in other.by_label.items():
            ob, ou = labels.get(k, (0, 0.0))
            labels[k] = (ob + b, max(ou, u))
        return Verdict(self.lanes + other.lanes, self.bad + other.bad, max(self.max_err, other.max_err),
                       max(self.max_ulp, other.max_ulp), (self.first + other.first)[:6], labels)


def _is_float(a: np.ndarray) -> bool:
    return a.dtype.kind == "f" or a.dtype in (np.dtype(ml_dtypes.bfloat16), np.dtype(ml_dtypes.float8_e4m3fn),
                                             np.dtype(ml_dtypes.float8_e5m2))


def _bits(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    if a.dtype == np.bool_:
        return a.view(np.uint8)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def ulp_of(x: np.ndarray, dtype) -> np.ndarray:
    """The spacing of the format ``dtype`` at |x| (x as f64): 2^(e - p + 1), never below the
    smallest subnormal."""
    fi = ml_dtypes.finfo(dtype)
    ax = np.abs(np.asarray(x, dtype=np.float64))
    with np.errstate(divide="ignore", invalid="ignore"):
        e = np.floor(np.log2(np.where(ax > 0, ax, 1.0)))
    return np.maximum(np.exp2(e) * float(fi.eps), float(fi.smallest_subnormal))


def _label(out, lane: int) -> str:
    if out is not None and out.labels and out.block:
        k = lane // out.block
        if k < len(out.labels):
            return f"{out.labels[k]}[{lane % out.block}]"
    return f"[{lane}]"


def compare(judge, want, got, lanes=None, bound=None, out=None) -> Verdict:
    """``got`` against ``want`` (same dtype and size) under ``judge``; ``lanes`` (a bool array over
    the flattened output) limits the comparison; ``bound`` is a per-lane absolute bound for a tol
    judge whose bound depends on the data."""
    want = np.ascontiguousarray(np.asarray(want)).reshape(-1)
    got = np.ascontiguousarray(np.asarray(got)).reshape(-1)
    if want.dtype != got.dtype:
        got = got.astype(want.dtype)
    if want.size != got.size:
        return Verdict(max(want.size, got.size), max(want.size, got.size), float("inf"), float("inf"),
                       [(-1, "size", want.size, got.size)])
    sel = np.ones(want.size, bool) if lanes is None else np.asarray(lanes, bool).reshape(-1)
    is_float = _is_float(want)
    if is_float:  # the lanes as f64: only a float output's judgement reads them
        w64, g64 = want.astype(np.float64), got.astype(np.float64)
    if judge.kind == "tol" and is_float:
        wn, gn = np.isnan(w64), np.isnan(g64)
        winf, ginf = np.isinf(w64), np.isinf(g64)
        with np.errstate(invalid="ignore", over="ignore"):
            err = np.abs(g64 - w64)
            lim = judge.atol + judge.ulps * ulp_of(w64, want.dtype)
            if bound is not None:
                lim = lim + np.asarray(bound, dtype=np.float64).reshape(-1)
            finite = ~wn & ~winf
            good = np.where(wn, gn, np.where(winf, g64 == w64, ~gn & ~ginf & (err <= lim)))
    else:
        same = _bits(want) == _bits(got)
        if judge.kind == "exact" and is_float:
            same |= np.isnan(w64) & np.isnan(g64)
        good = same
        finite = np.isfinite(w64) & np.isfinite(g64) if is_float else np.zeros(want.size, bool)
        err = np.abs(g64 - w64) if is_float else None
    bad_lanes = np.nonzero(sel & ~good)[0]
    v = Verdict(lanes=int(sel.sum()), bad=int(bad_lanes.size))
    if is_float:
        m = sel & finite & np.isfinite(g64)
        if m.any():
            with np.errstate(invalid="ignore", over="ignore"):
                e = np.abs(g64[m] - w64[m])
                v.max_err = float(e.max())
                if judge.kind != "tol" or judge.ulps:  # an absolute bound's error is not counted in ulps
                    v.max_ulp = float((e / ulp_of(w64[m], want.dtype)).max())
    for i in bad_lanes[:4]:
        v.first.append((int(i), _label(out, int(i)), _show(want[i]), _show(got[i])))
    if out is not None and out.labels and out.block:
        for k, name in enumerate(out.labels):
            s_ = slice(k * out.block, (k + 1) * out.block)
            u = 0.0
            if is_float and (judge.kind != "tol" or judge.ulps):
                m = (sel & finite & np.isfinite(g64))[s_]
                if m.any():
                    with np.errstate(invalid="ignore", over="ignore"):
                        u = float((np.abs(g64[s_][m] - w64[s_][m]) / ulp_of(w64[s_][m], want.dtype)).max())
            v.by_label[name] = (int((sel & ~good)[s_].sum()), u)
    return v


def _show(x) -> str:
    a = np.asarray(x)
    if _is_float(a.reshape(1)):
        return f"{float(a):.17g} ({hex(int(_bits(a.reshape(1))[0]))})"
    return str(a.item() if hasattr(a, "item") else a)


__all__ = ["Judge", "BITS", "EXACT", "Verdict", "compare", "ulp_of"]
