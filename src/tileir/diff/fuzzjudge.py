"""The host side of a fuzz program and the judgement of a device answer against it.

``host_answer`` runs the recorded program on the host reference. Where the program holds an
approximation (a transcendental, pow / atan2, a float sum's fold, a float mma: the places where
the device may answer a few units away and still be right), it runs the program again with such
results pushed to the edge of their bound -- all up, all down, then a group of them at a time
(up to four groups), up and each lane a random way -- and each output lane's ENVELOPE is the
larger of its largest all-together move and its summed per-group moves: how far a right device
answer can land from the host's after everything downstream of the approximations. A group's
random move is the per-lane maximum over ``draws`` draws of its signs: one in a campaign's host
stage, ENVELOPE_DRAWS where ``judge`` draws again for an approximate lane out of tolerance.
Lanes whose class (NaN, an infinity, finite) changes in a perturbed run are not judged.

``judge`` compares a device answer: every lane of every output buffer exact (bit for bit, two
NaNs agreeing) unless the region that wrote it holds an approximation, and there within
2 x envelope + 4 ulp (the tolerance tier of tileir/judge.py), the envelope over ENVELOPE_DRAWS draws
(``redraw``) where the one draw's leaves a lane out. An assert is judged by whether both
sides stopped; a print by the text (its lines as a multiset when several blocks print).
"""

from __future__ import annotations

import collections
import copy
import dataclasses
import re
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..dtypes import BY_NAME, to_format
from ..elementwise import tolerance_ops
from ..families.arith import BinaryF, UnaryF
from ..families.mma import MmaF
from ..families.reduce import Reduce, Scan
from ..judge import compare, ulp_of
from ..ref.core import RULES, Interp
from .model import Judge

# the device may answer these within some units of the result's last place: the tolerance-tier rows'
# ops (tileir.elementwise), and any unaryf under rounding<approx> (sqrt_approx)
APPROX_UNARY = tolerance_ops("unaryf")  # exp exp2 log log2 tanh sin cos tan sinh cosh rsqrt
APPROX_BINARY = tolerance_ops("binaryf")  # pow atan2
PERIODIC = ("sin", "cos", "tan")
ULPS = {"f64": 4, "f32": 8, "f16": 4, "bf16": 4}  # the layer-2 tolerance for a transcendental (f32 8, f64 4)
UNIT = {"f64": 2.0 ** -53, "f32": 2.0 ** -24, "tf32": 2.0 ** -24, "f16": 2.0 ** -11, "bf16": 2.0 ** -8}
SAFETY = 2.0  # the envelope is a linearised estimate: twice it, plus a few units of the output
# f8 products into f32 of the shapes Hopper's warpgroup mma takes (M >= 64, K >= 32): the H200 sums them
# in a narrower accumulator than f32 -- about 14 significant bits per partial sum (DeepSeek-V3's technical
# report measured 14 on H800; campaign 2's seeds 3403 and 8979, docs/fuzz.md). Their bound is the
# emulation's distance from the exact sum plus F8_WIDE_ULPS of its accumulator: |narrow_f8_mma - (a b + c)|
# + F8_WIDE_ULPS * 2 F8_WIDE_UNIT * max_k(|a_k b_k|, |S_k|), S_k the running partial sums (c first) -- the
# accumulator's magnitude decides its rounding step. A bound of error sizes alone (2 (K + 1) 2^-14
# sum|a||b|, or per term 2^-13 max(|a_k b_k|, |S_k|)) let a dropped k-term through in 25-100% of lanes at
# K >= 128 (bench/f8_bound_check.py). Every other f8 product into f32 keeps f32's bound: campaign 2 drew
# 590 programs with one (M < 64 or K < 32), none failed for it; of the 12 with a wide one, 2 failed.
F8_WIDE_UNIT = 2.0 ** -14  # half the accumulator's ulp at its leading one (13 fraction bits)
F8_WIDE_MIN = (64, 32)  # M, K
F8_WIDE_GROUP, F8_WIDE_FRAC = 16, 13  # the emulation: 16-term groups, 13 fraction bits, truncated
F8_WIDE_ULPS = 4  # the emulation's answer +- this many accumulator ulps (8979's one value it misses: 0.4)


def f8_wide(a) -> bool:
    """Whether the mma ``a`` (MmaF) is an f8 product into f32 the judge bounds by its narrow accumulator."""
    return a.dtype in ("f8E4M3FN", "f8E5M2") and a.acc == "f32" and a.m >= F8_WIDE_MIN[0] and a.k >= F8_WIDE_MIN[1]


def _lead(v):
    with np.errstate(divide="ignore"):
        return np.floor(np.log2(np.where(v != 0, np.abs(v), 1.0)))


def narrow_f8_mma(x, y, c, group: int = F8_WIDE_GROUP, frac: int = F8_WIDE_FRAC) -> np.ndarray:
    """x (M, K) @ y (K, N) + c (M, N), in f64, as the H200's f8 accumulator: per ``group`` of k, the exact
    products and the running sum aligned to the largest of them and truncated (toward zero) to ``frac``
    bits below its leading one, then added. It answers 8 of the 9 distinct device values campaign 2 lists
    for 3403 and 8979 bit for bit, the ninth 2^-9 away (0.4 of its accumulator's ulp)."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    acc = np.array(np.broadcast_to(np.asarray(c, np.float64), (x.shape[0], y.shape[1])))
    for k0 in range(0, x.shape[1], group):
        t = x[:, k0:k0 + group, None] * y[None, k0:k0 + group, :]
        e = np.maximum(np.where(t != 0, _lead(t), -np.inf).max(axis=1), np.where(acc != 0, _lead(acc), -np.inf))
        q = np.exp2(np.where(np.isfinite(e), e, 0.0) - frac)
        acc = np.trunc(acc / q) * q + (np.trunc(t / q[:, None, :]) * q[:, None, :]).sum(axis=1)
    return acc


def f8_wide_bound(x, y, c) -> np.ndarray:
    """The bound of a wide f8 product's error (before SAFETY): the emulation's distance from the exact
    sum plus F8_WIDE_ULPS ulps of the largest magnitude among the products and the running sums."""
    x, y = (np.nan_to_num(np.asarray(v, np.float64), nan=0.0, posinf=0.0, neginf=0.0) for v in (x, y))
    c = np.broadcast_to(np.nan_to_num(np.asarray(c, np.float64), nan=0.0, posinf=0.0, neginf=0.0),
                        (x.shape[0], y.shape[1]))
    with np.errstate(all="ignore"):
        t = x[:, :, None] * y[None, :, :]
        s = c[:, None, :] + np.cumsum(t, axis=1)
        m = np.maximum(np.maximum(np.abs(t).max(axis=1, initial=0.0), np.abs(s).max(axis=1, initial=0.0)), np.abs(c))
        exact = s[:, -1] if s.shape[1] else c
        return np.abs(narrow_f8_mma(x, y, c) - exact) + F8_WIDE_ULPS * 2 * F8_WIDE_UNIT * m


TOL = Judge("tol", ulps=4)
LAUNCH_FAILED = "CUDA_ERROR_LAUNCH_FAILED"  # how the H200 reports the trap of a firing assert (tileiras' lowering)


@dataclass
class Layout:
    """What the judge needs of a built program (a Built without its TileProg: picklable)."""

    params: list
    grid: tuple
    regions: list
    sizes: dict
    const_fire: bool = False  # an assert drawn to fire on a constant condition (generator 2; see judge)

    @classmethod
    def of(cls, built) -> Layout:
        return cls(list(built.params), tuple(built.grid), list(built.regions), dict(built.sizes),
                   bool(getattr(built, "const_fire", False)))

    def outputs(self) -> list:
        return [i for i, (name, _) in enumerate(self.params) if name.startswith("out_")]

    def approx_mask(self, name: str) -> np.ndarray:
        m = np.zeros(self.sizes[name], bool)
        for r in self.regions:
            if r.buf == name and r.taint == "approx":
                m[r.offset: r.offset + r.size] = True
        return m

    def region_at(self, name: str, lane: int):
        for r in self.regions:
            if r.buf == name and r.offset <= lane < r.offset + r.size:
                return r
        return None


@dataclass
class Answer:
    """One side's answer: the output buffers after the launch, what it printed, or why it stopped."""

    outs: dict = field(default_factory=dict)  # buffer name -> array
    printed: str = ""
    print_blocks: list = field(default_factory=list)  # host only: per block that printed, its pieces in order
    error: str | None = None
    envelope: dict = field(default_factory=dict)  # host only: buffer name -> |move| bound per lane
    unjudged: dict = field(default_factory=dict)  # host only: buffer name -> lanes a perturbation reclassed
    draws: int = 1  # host only: the random-sign draws each group's move in ``envelope`` is the maximum over

    @property
    def asserted(self) -> bool:
        """Stopped by an assert: the host's "d_assert failed", the driver's CUDA_ERROR_ASSERT (the
        launch's message names it). Those two names only: "assert" anywhere else in the text (a
        kernel called assert_fires, a Python AssertionError in the launcher) is no assert stop."""
        e = (self.error or "").upper()
        return "D_ASSERT FAILED" in e or "CUDA_ERROR_ASSERT" in e


# ---- the perturbed host reference ----------------------------------------------------------------


def _is_float(dtype: str) -> bool:
    return BY_NAME[dtype].is_float


def _body_computes(op) -> bool:
    """A fold whose body does float arithmetic (its order is not specified): not max / min / a take."""
    for r in op.regions:
        for o in r.ops:
            if o.kind == "fma" or (isinstance(o.a, BinaryF) and o.a.op in ("addf", "subf", "mulf", "divf")):
                return True
    return False


def source_bounds(it, op) -> list:
    """Per result of ``op``: the bound (an array, f64) within which a right device answer lies
    around the host's, or None where the device must answer exactly."""
    k, a = op.kind, op.a
    if isinstance(a, UnaryF) and (a.op in APPROX_UNARY or a.rounding == "approx"):
        r = np.asarray(it.vals[op.res[0]])
        b = ULPS.get(a.dtype, 8) * ulp_of(r.astype(np.float64), r.dtype)
        if a.op in PERIODIC and a.a in getattr(it, "approx_values", ()):
            # an approximate argument whose few ulps span a radian (f32 past 2^20): the device's periodic
            # function of it is any value in its range (campaign 8's 305091: cos(cosh(x)) of large x, the host
            # -0.9995, the H200 0.9994), which a few perturbed draws need not reach: not judged
            x = np.abs(np.asarray(it.val(a.a)).astype(np.float64))
            b = np.where(2 * ULPS.get(a.dtype, 8) * ulp_of(x, r.dtype) >= 1.0, np.inf, b)
        return [b]
    if isinstance(a, BinaryF) and a.op in APPROX_BINARY:
        r = np.asarray(it.vals[op.res[0]])
        return [ULPS.get(a.dtype, 8) * ulp_of(r.astype(np.float64), r.dtype)]
    if isinstance(a, Reduce) and _body_computes(op):
        out: list[np.ndarray | None] = []
        dim = a.dim
        for h in a.operands:
            d = it.prog.info[h].dtype
            if not _is_float(d):
                out.append(None)
                continue
            raw = np.asarray(it.val(h)).astype(np.float64)
            x = np.abs(raw)
            n = x.shape[dim]
            # a scan's lanes take the whole row's magnitude (a looser bound than each lane's prefix: the
            # campaigns' recorded verdicts were judged so)
            s = np.nansum(np.where(np.isinf(x), 0, x), axis=dim, keepdims=k == "scan")
            b = 2 * n * UNIT.get(d, 2.0 ** -24) * s
            # a partial sum may pass the format's range in one order and not in another (each partial
            # is rounded to the format: an f16 sum of +-65504s overflows to inf on the device where the
            # host, folding in f32, stays finite -- campaign 1's seed 865): where the magnitudes could
            # add up past the largest finite value no bound holds, and the lane is not judged (an
            # infinite bound: PerturbedInterp gives such a fold's lanes another class)
            top = _largest(d) if d != "f64" else float(np.finfo(np.float64).max)
            b = np.where(s + b >= top, np.inf, b)
            if k == "scan":
                b = np.broadcast_to(b, np.shape(it.vals[op.res[len(out)]]))
            # ...except, for a sum, a NaN every order answers: a NaN among the folded elements, or both
            # infinities (a scan's lane folds its own prefix, or suffix when reversed); a product of both
            # infinities is an infinity
            if _sums(op):
                b = np.where(_forced_nan(raw, dim, k == "scan", isinstance(a, Scan) and a.reverse), 0.0, b)
            out.append(b)
        return out
    if isinstance(a, MmaF):
        x = np.abs(np.asarray(it.val(a.a)).astype(np.float64))
        y = np.abs(np.asarray(it.val(a.b)).astype(np.float64))
        c = np.abs(np.asarray(it.val(a.c)).astype(np.float64))
        with np.errstate(all="ignore"):
            mag = np.nan_to_num(x, posinf=0) @ np.nan_to_num(y, posinf=0) + np.nan_to_num(c, posinf=0)
        u = max(UNIT.get(a.acc, 2.0 ** -24), UNIT.get(a.dtype, 0.0) if a.dtype in ("f16", "bf16") else 0.0)
        if f8_wide(a):
            # at least f32's bound (the final rounding into f32); the narrow accumulator's own on top
            b = f8_wide_bound(it.val(a.a), it.val(a.b), it.val(a.c))
            return [np.maximum(2 * (a.k + 1) * u * mag, b.reshape(np.shape(mag)))]
        return [2 * (a.k + 1) * u * mag]
    return []


def _sums(op) -> bool:
    """A fold whose body's float arithmetic is additions and subtractions only."""
    ops = [o for r in op.regions for o in r.ops if o.kind == "fma" or isinstance(o.a, BinaryF)]
    return bool(ops) and all(isinstance(o.a, BinaryF) and o.a.op in ("addf", "subf") for o in ops)


def _forced_nan(x: np.ndarray, dim: int, scan: bool, reverse: bool) -> np.ndarray:
    """Per lane of a sum fold of ``x`` along ``dim`` (a reduce, or a scan's prefix / suffix): whether every
    order of the fold answers NaN (a NaN among its elements, or +inf and -inf both)."""
    nan, pos, neg = np.isnan(x), x == np.inf, x == -np.inf
    if not scan:
        return np.any(nan, axis=dim) | (np.any(pos, axis=dim) & np.any(neg, axis=dim))

    def seen(m):
        m = np.flip(m, dim) if reverse else m
        m = np.logical_or.accumulate(m, axis=dim)
        return np.flip(m, dim) if reverse else m

    return seen(nan) | (seen(pos) & seen(neg))


class PerturbedInterp(Interp):
    """The host reference with every approximate result moved by ``sign`` times its bound:
    sign +1, -1, or 0 for a random sign per lane (drawn from ``rng``); ``only`` (operation
    numbers) limits the moves to those operations."""

    def __init__(self, prog, args, grid, sign: int, rng, only=None):
        super().__init__(prog, args, grid)
        self.sign, self.rng, self.only = sign, rng, only
        self.approx_values = approx_values(prog)

    def exec(self, ops) -> None:
        for op in ops:
            rule = RULES.get(op.kind)
            if rule is None:
                raise self.fail(f"the host reference has no rule for {op.kind}")
            self.cur_op = op.num
            rule(self, op)
            if self.only is not None and op.num not in self.only:
                continue
            for h, b in zip(op.res, source_bounds(self, op)):
                if b is None:
                    continue
                v = np.asarray(self.vals[h])
                d = self.prog.info[h].dtype
                s = self.sign if self.sign else self.rng.choice([-1.0, 1.0], size=np.shape(v))
                v64 = v.astype(np.float64)
                moved = v64 + s * np.asarray(b)
                # an infinity an approximation answered may be the largest finite value on the device
                # (the overflow edge): every run moves it there, so a lane it reaches is not judged
                big = float(np.finfo(np.float64).max) if d == "f64" else _largest(d)
                inward = np.isinf(v64)
                moved = np.where(inward, np.sign(v64) * big, moved)
                moved = np.where(np.isfinite(v64) | inward, moved, v64)
                if isinstance(op.a, Reduce):
                    # a fold whose partial sums may pass the format's range (an infinite bound) answers any
                    # class in some order: an overflow's inf may be the other infinity or a finite sum of
                    # either sign (the f16 sum of campaign 7's 205930, whose rsqrt the H200 answered NaN), a
                    # NaN of inf - inf an inf (campaign 7's 207142, a reverse scan). The runs that move everything
                    # one way give such a lane an infinity (the other one where it is one); the random runs a
                    # NaN: a later min / max drops a NaN (campaign 1's 865), a saturating conversion to f8 an
                    # infinity's sign (205930's sum stored as f8E5M2: the host's inf is 57344, the H200's NaN)
                    wild = np.isinf(np.asarray(b))
                    other = np.where(np.isinf(v64), -v64, s * np.inf) if self.sign else np.nan
                    moved = np.where(wild, other, moved)
                self.set(h, to_format(BY_NAME[d], moved))


def _largest(fmt: str) -> float:
    from .exact import largest

    return largest(fmt) if fmt in ("f32", "f16", "bf16", "tf32") else float(np.finfo(np.float64).max)


def _run(prog, args, grid, sign=None, rng=None, only=None):
    it = Interp(prog, args, grid) if sign is None else PerturbedInterp(prog, args, grid, sign, rng, only)
    with np.errstate(all="ignore"):
        it.run()
    return it


def approx_ops(prog) -> list:
    """The numbers of the operations whose device answer may differ from the host's within a bound."""
    out = []
    for op in prog.walk():
        a = op.a
        if (isinstance(a, UnaryF) and (a.op in APPROX_UNARY or a.rounding == "approx")) or \
                (isinstance(a, BinaryF) and a.op in APPROX_BINARY) or op.kind == "mmaf" or \
                (isinstance(a, Reduce) and _body_computes(op)):
            out.append(op.num)
    return out


_HANDLE_TYPES = ("Handle", "Handle | None")


def approx_values(prog) -> frozenset:
    """The values an approximate operation made or that depend on one, through the operations' handle
    fields (their annotations, as every family module writes them: "Handle", "Handle | None",
    "tuple[Handle, ...]"). Not followed: a region's yields into its op's results (an if's, a loop's
    carries), so a periodic function of such a result stays judged. Worked out once a program (every
    perturbed run of its envelope asks)."""
    got = _APPROX_VALUES.get(prog)
    if got is None:
        got = _APPROX_VALUES[prog] = _approx_values(prog)
    return got


_APPROX_VALUES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _approx_values(prog) -> frozenset:
    nums, out = set(approx_ops(prog)), set()
    for op in prog.walk():
        ins = []
        for f in dataclasses.fields(op.a):
            v = getattr(op.a, f.name)
            if f.type in _HANDLE_TYPES and v is not None:
                ins.append(v)
            elif f.type == "tuple[Handle, ...]":
                ins.extend(v)
        if op.num in nums or any(h in out for h in ins):
            out.update(op.res)
    return frozenset(out)


def has_approx(prog) -> bool:
    return bool(approx_ops(prog))


GROUPS = 4  # the approximations are moved in at most this many groups, one group at a time
# The random-sign runs of a group are a sampling: a lane whose terms cancel (the softmax's acc / l of campaign 2's
# 8236) can draw a move several times smaller than most draws give. The judge's envelope for a lane is the
# maximum over ENVELOPE_DRAWS independent draws of each group's move: host_answer makes one draw (a campaign's
# host stage), and judge draws again (redraw) only where that one's judgement finds an approximate lane out of
# tolerance -- the same verdict as drawing ENVELOPE_DRAWS everywhere, because the first draw is among them.
ENVELOPE_DRAWS = 8


def _class(x: np.ndarray) -> np.ndarray:
    """0 finite, 1 NaN, 2 +inf, 3 -inf."""
    x = x.astype(np.float64)
    return np.where(np.isnan(x), 1, np.where(x == np.inf, 2, np.where(x == -np.inf, 3, 0)))


def host_answer(prog, layout: Layout, args, seed: int = 0, draws: int = 1,
                tick: Callable[[], None] | None = None) -> Answer:
    """The host reference's answer on (a copy of) ``args``, with the envelope of its approximations:
    each group's random-sign move the maximum over ``draws`` draws (the first draw is the same whatever
    ``draws`` is, so the envelope only grows with it). ``tick`` is called before each perturbed run (the
    GPU worker's sign of life while it draws again)."""
    ans = Answer(draws=draws)
    outs = layout.outputs()
    try:
        a0 = copy.deepcopy(args)
        it = _run(prog, a0, layout.grid)
        ans.printed = "".join(it.printed)
        ans.print_blocks = pieces_by_block(it.print_pieces)
        ans.outs = {layout.params[i][0]: a0[i] for i in outs}
    except Exception as e:
        ans.error = f"{type(e).__name__}: {e}"
        return ans
    nums = approx_ops(prog)
    if not nums:
        return ans
    rng = np.random.default_rng(seed)
    bad = {n: np.zeros(v.size, bool) for n, v in ans.outs.items()}
    def moves(sign, only) -> dict:
        """|perturbed - host| per output lane (0 where not finite); class changes go to ``bad``."""
        out = {n: np.zeros(v.size) for n, v in ans.outs.items()}
        if tick is not None:
            tick()
        try:
            ak = copy.deepcopy(args)
            _run(prog, ak, layout.grid, sign, rng, only)
        except Exception:
            return out  # a perturbed run that stops says nothing about the envelope
        for i in outs:
            name, fmt = layout.params[i]
            if not _is_float(fmt):
                continue
            h, p = ans.outs[name].reshape(-1), ak[i].reshape(-1)
            bad[name] |= _class(h) != _class(p)
            with np.errstate(all="ignore"):
                d = np.abs(p.astype(np.float64) - h.astype(np.float64))
            out[name] = np.where(np.isfinite(d), d, 0.0)
        return out

    # Everything moved up, then down: for a chain that is monotone in its approximations this
    # brackets the device's answer, roundings into narrow formats included. Then each group of
    # approximations on its own, up and each lane a random way, the groups' effects SUMMED: moving
    # everything at once lets errors cancel (the softmax's acc / l barely moves when both move up)
    # where a device's independent errors need not. A group's random move is the per-lane maximum over
    # ``draws`` draws of its signs (drawn in the order draw by draw, group by group: the first draw is
    # the one a single-draw answer makes). To first order a group's random move is |sum_i s_i g_i b_i|
    # (g_i the lane's sensitivity to approximation i, b_i its bound), so the maximum over draws stays
    # (to first order) below the linear worst case sum_i |g_i b_i| and approaches it from below.
    up, down = moves(1, None), moves(-1, None)
    groups = [set(nums[g::GROUPS]) for g in range(min(GROUPS, len(nums)))]
    rand = [{n: np.zeros(v.size) for n, v in ans.outs.items()} for _ in groups]
    for _ in range(max(1, draws)):
        for g, group in enumerate(groups):
            run = moves(0, group)
            for name in run:
                rand[g][name] = np.maximum(rand[g][name], run[name])
    mixed = {n: np.zeros(v.size) for n, v in ans.outs.items()}
    for g, group in enumerate(groups):
        g_up = moves(1, group) if len(groups) > 1 else up
        for name in mixed:
            mixed[name] += np.maximum(rand[g][name], g_up[name])
    env = {n: np.maximum(np.maximum(up[n], down[n]), mixed[n]) for n in mixed}
    ans.envelope = env
    ans.unjudged = bad
    return ans


# ---- the judgement ---------------------------------------------------------------------------------


def _lines(text: str) -> list:
    return sorted(text.splitlines())


def pieces_by_block(print_pieces: list) -> list:
    """``Interp.print_pieces`` as one sequence of nonempty pieces per block that printed, in its order."""
    by: dict = {}
    for block, pieces in print_pieces:
        by.setdefault(block, []).extend(p for p in pieces if p)
    return list(by.values())


INTERLEAVE_STATES = 200_000  # the search's budget; past it the answer is None (undecided)


def interleaves(text: str, blocks: list, budget: int = INTERLEAVE_STATES) -> bool | None:
    """Whether ``text`` is the blocks' pieces interleaved: each block's pieces in its order, the
    blocks' among each other in any order -- what concurrent blocks' prints write on the H200, whose
    printf writes a print's literal runs and conversions one at a time (campaign 10's 603173 and
    607561: "fz2: fz21: 1000 \n100..." for "fz2: 100 100 100" and "fz21: 0"). A depth-first search
    over how far each block got; blocks with the same pieces are interchangeable, so their positions
    are kept sorted. None when ``budget`` states did not decide."""
    groups = collections.Counter(tuple(seq) for seq in blocks)
    seqs = list(groups)
    if sum(len("".join(q)) * n for q, n in groups.items()) != len(text):
        return False
    start = tuple(tuple([0] * groups[q]) for q in seqs)
    seen, stack = {start}, [(start, 0)]
    while stack:
        state, at = stack.pop()
        if at == len(text):
            return True
        for g, q in enumerate(seqs):
            for j, pos in enumerate(state[g]):
                if (j and pos == state[g][j - 1]) or pos == len(q) or not text.startswith(q[pos], at):
                    continue  # (a copy at the same position as the one before it is the same move)
                moved = tuple(sorted(state[g][:j] + (pos + 1,) + state[g][j + 1:]))
                nxt = state[:g] + (moved,) + state[g + 1:]
                if nxt not in seen:
                    if len(seen) >= budget:
                        return None
                    seen.add(nxt)
                    stack.append((nxt, at + len(q[pos])))
    return False


def same_print(host: Answer, dev: Answer, grid: int) -> bool | None:
    """Whether the device printed what the host did: the same text from one block; from several,
    the same lines in any order, or the host's blocks' pieces interleaved (``interleaves``; None:
    undecided, then the characters must agree as a multiset)."""
    if host.printed == dev.printed:
        return True
    if grid == 1:
        return False
    if _lines(host.printed) == _lines(dev.printed):
        return True
    if not host.print_blocks:
        return False
    got = interleaves(dev.printed, host.print_blocks)
    if got is None:
        return None if sorted(host.printed) == sorted(dev.printed) else False
    return got


def judge(layout: Layout, host: Answer, dev: Answer, redraw: Callable[[], Answer] | None = None) -> dict:
    """The verdict: ``status`` equal | differ | host_error | device_error, with the lanes compared,
    the lanes that differ, and per region that differs its step, op, taint and first lanes.

    ``redraw`` (the host's answer again with ENVELOPE_DRAWS draws of the envelope's random signs) is
    called only where an approximate lane is out of tolerance under ``host``'s fewer draws; the verdict
    is then the wider envelope's (``envelope_draws`` says how many). Since ``host``'s draw is among
    the redrawn answer's, this is the verdict every lane judged with ENVELOPE_DRAWS draws would get."""
    v, approx_bad = _judge(layout, host, dev)
    if redraw is not None and approx_bad and host.draws < ENVELOPE_DRAWS:
        wide = redraw()
        v, _ = _judge(layout, wide, dev)
        v["envelope_draws"] = wide.draws
    return v


# a fuzz program's assert message (fuzzmem.b_assert: "fz<id>"), not its prints' ("fz<id>: values")
_MESSAGE = re.compile(r"\bfz\d+\b(?!:)")


def assert_printed(host: Answer, dev: Answer) -> bool | None:
    """Whether the device's captured standard output holds the message of the assert the host stopped at
    (a fuzz program's assert says "fz<id>": fuzzmem.b_assert): None where nothing was captured or the host's
    error names no such message. Recorded beside each launch failure judged against a host assert stop."""
    m = _MESSAGE.search(host.error or "")
    if m is None or not dev.printed:
        return None
    return m.group(0) in dev.printed


def printed_an_assert(host: Answer, dev: Answer) -> bool:
    """Whether a launch failure beside the host's assert stop is an assert's: the device printed an
    assert message of the program (the host's, or another assert's where several blocks fire and one's
    trap ends the grid before another prints), or the host's stop names no message to look for. The
    H200 prints before it traps: campaign 6 (bench/results/fuzz_campaign6_h200.json, asserts_printed)
    had 3 of 3 such stops with the host's message in the device's output."""
    if _MESSAGE.search(host.error or "") is None:
        return True
    return _MESSAGE.search(dev.printed or "") is not None


def _judge(layout: Layout, host: Answer, dev: Answer) -> tuple[dict, int]:
    """judge's verdict with ``host``'s envelope as it is, and how many approximate lanes are out of tolerance."""
    approx_bad = 0
    v: dict[str, Any] = {"status": "equal", "lanes": 0, "bad": 0, "unjudged": 0, "max_err": 0.0, "regions": [],
                         "first": []}
    if host.asserted or dev.asserted:
        if host.asserted and dev.asserted:
            v["status"], v["detail"] = "equal", "both stopped at an assert"
        elif host.asserted and LAUNCH_FAILED in (dev.error or ""):
            # Both stopped, if the device printed an assert's message. tileiras writes an assert as a printf
            # of its message and a trap, and the H200 reports the trap as an unspecified launch failure, not
            # CUDA_ERROR_ASSERT, whatever the condition: generator 2's constant x != x (campaign 2's 5630 and
            # 6991) and generator 3's data-dependent ones alike (the 12 firing ones of
            # bench/results/fuzz_mutant_assert_gen3_h200.json's plain runs). The printf comes out before the
            # trap (campaign 6: 3 of 3), so a launch failure with no assert's message printed is another fault
            # of the program: a difference. Only beside a host assert stop: a launch failure beside none stays
            # a device error.
            what = "a constant assert" if layout.const_fire else "an assert"
            v["assert_printed"] = assert_printed(host, dev)
            if printed_an_assert(host, dev):
                v["status"], v["detail"] = "equal", f"both stopped: the host at {what}, the device: {dev.error}"
            else:
                v.update(status="differ", bad=1, detail=f"the host stopped at {what}; the device failed its launch "
                         f"without printing an assert's message: {dev.error}")
        elif host.asserted:
            v.update(status="differ", bad=1, detail=f"the host stopped at an assert, the device did not: {dev.error}")
        else:
            v.update(status="differ", bad=1, detail=f"the device stopped at an assert, the host did not: {dev.error}")
        return v, 0
    if host.error:
        v.update(status="host_error", detail=host.error[:500])
        return v, 0
    if dev.error:
        v.update(status="device_error", bad=1, detail=dev.error[:500])
        return v, 0
    for name, want in host.outs.items():
        got = dev.outs.get(name)
        if got is None:
            v.update(status="differ", bad=v["bad"] + 1, detail=f"no device answer for {name}")
            continue
        approx = layout.approx_mask(name)
        skip = host.unjudged.get(name, np.zeros(approx.size, bool)) & approx
        env = host.envelope.get(name)
        ex = compare(Judge("exact"), want, got, lanes=~approx)
        verdicts = [(ex, ~approx)]
        if approx.any():
            bound = SAFETY * env if env is not None else None
            verdicts.append((compare(TOL, want, got, lanes=approx & ~skip, bound=bound), approx & ~skip))
            approx_bad += verdicts[-1][0].bad
        v["unjudged"] += int(skip.sum())
        for vd, _ in verdicts:
            v["lanes"] += vd.lanes
            v["bad"] += vd.bad
            v["max_err"] = max(v["max_err"], vd.max_err)
        if any(vd.bad for vd, _ in verdicts):
            v["status"] = "differ"
            v["regions"] += _regions(layout, name, want, got, approx, skip, env)
    if host.printed or dev.printed:
        same = same_print(host, dev, int(np.prod(layout.grid)))
        v["lanes"] += 1
        if same is None:
            v["print_undecided"] = True
        if same is False:
            v.update(status="differ", bad=v["bad"] + 1)
            v["regions"].append({"buf": "stdout", "step": None, "op": "print", "taint": "exact",
                                 "first": [host.printed[:200], dev.printed[:200]]})
    v["first"] = [f for r in v["regions"][:3] for f in r.get("first", [])[:2]]
    return v, approx_bad


def _regions(layout, name, want, got, approx, skip, env) -> list:
    """The regions of ``name`` holding disagreeing lanes: which step wrote them and how they differ."""
    w, g = want.reshape(-1), got.reshape(-1).astype(want.dtype)
    if BY_NAME[layout.params[[n for n, _ in layout.params].index(name)][1]].is_float:
        w64, g64 = w.astype(np.float64), g.astype(np.float64)
        same = (w.view(_uint(w)) == g.view(_uint(g))) | (np.isnan(w64) & np.isnan(g64))
        with np.errstate(all="ignore"):  # judge.compare's tolerance tier, lane by lane
            lim = TOL.ulps * ulp_of(w64, w.dtype) + (SAFETY * env if env is not None else 0.0)
            wn, gn, winf, ginf = np.isnan(w64), np.isnan(g64), np.isinf(w64), np.isinf(g64)
            near = np.where(wn, gn, np.where(winf, g64 == w64, ~gn & ~ginf & (np.abs(w64 - g64) <= lim)))
        bad = np.where(approx, ~near & ~skip, ~same)
    else:
        bad = w != g
    out, seen = [], {}
    for lane in np.nonzero(bad)[0]:
        r = layout.region_at(name, int(lane))
        key = (r.step, r.op) if r else (None, "untouched")
        if key not in seen:
            seen[key] = {"buf": name, "step": key[0], "op": key[1], "taint": r.taint if r else "exact", "bad": 0,
                         "first": []}
            out.append(seen[key])
        e = seen[key]
        e["bad"] += 1
        if len(e["first"]) < 3:
            lo = int(lane) - (r.offset if r else 0)
            e["first"].append([f"{name}[{int(lane)}] (+{lo})", _show(w[lane]), _show(g[lane])])
    return out


def _uint(a: np.ndarray):
    return {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize]


def _show(x) -> str:
    a = np.asarray(x)
    if a.dtype.kind in "iub":
        return str(a.item())
    return f"{float(a):.9g}"


__all__ = ["Layout", "Answer", "host_answer", "judge", "PerturbedInterp", "source_bounds", "has_approx", "SAFETY",
           "F8_WIDE_UNIT", "F8_WIDE_MIN", "F8_WIDE_GROUP", "F8_WIDE_FRAC", "F8_WIDE_ULPS", "f8_wide", "f8_wide_bound",
           "narrow_f8_mma", "LAUNCH_FAILED", "ENVELOPE_DRAWS", "GROUPS"]
