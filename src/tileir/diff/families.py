"""The op families of the layer-2 diff: for each, its kernels (``Case``: a recorded program, its
arguments, its grid), the judgement each output is held to (``Judge``: exact bit for bit, or a
stated tolerance), an independent host computation of the answer (``expect``: numpy, ``math``,
exact rationals from ``diff.exact``, or ``tileir.ref.second``), and the mutants that must fail it.

``ledger_layer2()`` at the end maps every cuda_tile operation to the family that checks it on the device or
to a named exemption (``tileir ledger`` prints it as the layer-2 column).

Conventions: a case's parameters are buffers (ByPtr); ``make_args`` answers fresh arrays (inputs
filled, outputs zeroed or filled with a sentinel); ``outs`` names the buffers compared after the
launch and how. Nothing here touches the GPU: ``diff.run`` launches.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

import tileir as ti
from tileir import BF16, F16, F32, F64, I8, I16, I32, I64

from . import corpora as C
from . import exact as X
from .mutants import of_family

# ---- judgements ----------------------------------------------------------------------------------


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
class Out:
    pos: int  # the parameter compared
    judge: Judge = EXACT
    lanes: object = None  # None (every lane), a bool array over the flattened buffer, or fn(args) -> one
    bound: Callable | None = None  # fn(args) -> per-lane absolute bound (a tol judge with data-dependent bound)
    against: str = "host"  # host: the device is held to the host reference; expect: to the independent answer
    labels: tuple = ()  # names of consecutive blocks of ``block`` lanes (the op each block holds)
    block: int = 0
    expect_lanes: Callable | None = None  # fn(args) -> the lanes the independent answer settles (None: all)


@dataclass
class Case:
    name: str
    params: tuple
    body: Callable
    make_args: Callable
    outs: tuple = ()
    grid: tuple = (1,)
    expect: Callable | None = None  # fn(args, launch) -> {pos: array}: the independent answer
    launches: int = 1  # launches of ONE loaded module (globals persist between them)
    mode: str = "launch"  # launch | print (stdout compared) | assert (the launch must fail)
    inputs: tuple | None = None  # positions counted as the corpus (None: every parameter not in outs)
    defects: dict = field(default_factory=dict)  # out pos -> why the host reference disagrees with expect
    expect_text: Callable | None = None  # print: fn(args) -> the exact text
    note: str = ""
    corpus: int | None = None  # the corpus size where it is not the input buffers' (a global's values)

    def prog(self):
        """The recorded program (fresh: a global's host state lives as long as its program)."""
        return ti.trace_kernel(self.name, self.params, self.body)

    def out_positions(self) -> tuple:
        return tuple(o.pos for o in self.outs)

    def corpus_size(self, args) -> int:
        if self.corpus is not None:
            return self.corpus
        pos = self.inputs if self.inputs is not None else [i for i in range(len(args)) if i not in self.out_positions()]
        return int(sum(np.asarray(args[i]).size for i in pos))


@dataclass
class Family:
    name: str
    tier: str  # exact | tolerance | mixed | judgement shape (print / launch must fail)
    judgement: str  # what is compared and why that bound
    ops: tuple  # the cuda_tile operations it checks on the device
    cases: list

    @property
    def mutants(self) -> list:
        return of_family(self.name)


# ---- kernel helpers ------------------------------------------------------------------------------


def _z():
    return ti.idx_const(0)


def _elementwise(ins, out_fmt, n: int, fn):
    """Params: one buffer per input format (n lanes each), then one output buffer of ``out_fmt``;
    ``fn(*tiles)`` answers the tiles stored one after another (block k at lanes [k n, (k+1) n))."""
    params = tuple(ti.ByPtr(f) for f in ins) + (ti.ByPtr(out_fmt),)

    def body():
        ts = [ti.load(ti.param(f, i), _z(), [n]) for i, f in enumerate(ins)]
        o = ti.param(out_fmt, len(ins))
        for k, r in enumerate(fn(*ts)):
            ti.store(o, ti.idx_const(k * n), r)

    return params, body


def _np(fmt):
    return C.np_of(fmt)


def _f64(a) -> np.ndarray:
    return np.asarray(a).astype(np.float64)


def _vec(fn, *arrays, otype=np.float64):
    return np.vectorize(fn, otypes=[otype])(*arrays) if np.asarray(arrays[0]).size else np.zeros(0, otype)


def _in_fmt(values, fmt) -> np.ndarray:
    """Python floats already representable in ``fmt`` as that format's host array."""
    return X.to_fmt_array(values, getattr(fmt, "name", fmt))


def _round(values, fmt, mode="nearest_even") -> np.ndarray:
    """Every value (f64) correctly rounded into ``fmt`` by ``mode`` (diff.exact, not ml_dtypes)."""
    name = getattr(fmt, "name", fmt)
    return _in_fmt(_vec(lambda v: X.convert_float(float(v), name, mode), _f64(values)), name)


def _bool(x) -> np.ndarray:
    return np.asarray(x).astype(np.int32)


ULP_F32, ULP_F64 = 8, 4
TRANS_WHY = ("the CUDA Math API's documented maximum errors are 1-4 ulp (f32) and 1-2 ulp (f64) for these "
             "functions; the host is the f64 libm value rounded once (<= 0.5 ulp + 1 f64 ulp), so 8 ulp (f32) "
             "and 4 ulp (f64) of the host answer, NaN where NaN and the same infinity where an infinity")


# ---- float arithmetic: exact ---------------------------------------------------------------------

ARITH_OPS = ("add", "sub", "mul", "div", "fma", "sqrt")


def _fma_overflows(a, b, c, fmt) -> np.ndarray:
    """Lanes whose finite a * b + c lies beyond the format's range."""
    mx = X.largest(fmt.name)
    with np.errstate(all="ignore"):
        v = _f64(a) * _f64(b) + _f64(c)
        fin = np.isfinite(_f64(a)) & np.isfinite(_f64(b)) & np.isfinite(_f64(c))
    return fin & ~(np.abs(v) <= mx * (1 - 2.0**-60))


def _float_arith():
    cases = []
    for salt, (fmt, n) in enumerate(((F32, 1024), (F64, 1024), (F16, 1024), (BF16, 1024))):
        def args(fmt=fmt, n=n, salt=salt):
            a, b = C.float_pairs(fmt, n, 10 * salt)
            c = C.fill(np.tile(C.float_specials(fmt), 3)[::-1], n, C.spread_floats(n, fmt, 10 * salt + 2, -8, 8))
            fa, fb = a.copy(), b.copy()
            if fmt is F64:  # lanes where the host's f64 fma is wrong are fma_f64_range's and fma_f64_zero's
                over = _fma_overflows(fa, fb, c, fmt)
                fa[over], fb[over] = 0.5, 0.5
                negzero = _vec(lambda x, y, z: math.copysign(1, X.fma(x, y, z, "f64")) < 0 and X.fma(x, y, z, "f64")
                               == 0, fa, fb, c, otype=bool)
                fa[negzero] = 0.25
            return [a, b, fa, fb, c, np.zeros(6 * n, _np(fmt))]

        params, body = _elementwise([fmt] * 5, fmt, n, lambda x, y, p, q, r: [
            ti.add(x, y), ti.sub(x, y), ti.mul(x, y), ti.div(x, y), ti.fma(p, q, r), ti.sqrt(x)])

        def expect(args, launch=0, fmt=fmt):
            a, b, fa, fb, c = (_f64(x) for x in args[:5])
            name = fmt.name
            with np.errstate(all="ignore"):
                # in f64 and rounded once: f64 carries more than 2p + 2 bits of every narrower format,
                # so + - * / sqrt rounded twice this way are still correctly rounded (f64 itself: numpy)
                parts = [a + b, a - b, a * b, a / b]
                parts = [p if name == "f64" else _round(p, name) for p in parts]
                parts.append(_in_fmt(_vec(lambda x, y, z: X.fma(x, y, z, name), fa, fb, c), name))
                s = np.sqrt(a)
                parts.append(s if name == "f64" else _round(s, name))
            return {5: np.concatenate([np.asarray(p, dtype=np.float64) for p in parts]).astype(_np(fmt))}

        cases.append(Case(f"arith_{fmt.name}", params, body, args, (Out(5, EXACT, labels=ARITH_OPS, block=n),),
                          expect=expect))

    def rargs(n=64):
        r = C.rng(19)
        big = float(C.finfo(F64).max)
        a = np.concatenate([[big, -big, big, 1e200, -1e300], r.uniform(1e154, 1e155, n - 5)])
        b = np.concatenate([[2.0, 2.0, -1.5, 1e200, 1e300], r.uniform(1e154, 1e155, n - 5) * r.choice([-1, 1], n - 5)])
        c = np.concatenate([[-big, big, 0.0, -1.0, 5.0], r.uniform(-1, 1, n - 5)])
        return [a, b, c, np.zeros(n, np.float64)]

    rparams, rbody = _elementwise([F64] * 3, F64, 64, lambda x, y, z: [ti.fma(x, y, z)])

    def rexpect(args, launch=0):
        return {3: _vec(lambda x, y, z: X.fma(x, y, z, "f64"), *(_f64(v) for v in args[:3]))}

    cases.append(Case("fma_f64_range", rparams, rbody, rargs, (Out(3, EXACT),), expect=rexpect))
    def zargs(n=64):
        r = C.rng(18)
        x = r.uniform(-4, 4, n)
        a = np.concatenate([[0.0, -0.0, 0.0, 1.0, -2.5], x[5:]])
        b = np.concatenate([[-2.5, 2.5, -0.0, -0.0, 0.0], r.uniform(-4, 4, n - 5)])
        c = np.concatenate([[-0.0, -0.0, -0.0, -0.0, -0.0], np.zeros(n - 5)])
        c[5:] = -(a[5:] * b[5:])  # exact cancellations answer +0: the lanes the host gets right
        return [a, b, c, np.zeros(n, np.float64)]

    cases.append(Case("fma_f64_zero", rparams, rbody, zargs, (Out(3, EXACT),), expect=rexpect))
    return Family("float_arith", "exact", "bit for bit (NaN payloads aside): add, sub, mul, div, fma and sqrt are "
                  "correctly rounded at nearest_even in the operands' format; fma rounds once", ("addf", "subf",
                  "mulf", "divf", "fma", "sqrt"), cases)


# ---- float comparisons ---------------------------------------------------------------------------

PREDS = ("eq", "ne", "lt", "le", "gt", "ge")
_NP_CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
           "ge": np.greater_equal}


def _float_cmp():
    cases = []
    for salt, fmt in enumerate((F32, F64)):
        n = 1024

        def args(fmt=fmt, n=n, salt=salt):
            a, b = C.float_pairs(fmt, n, 30 + salt)
            b[700:800] = a[700:800]  # equal pairs beyond the specials
            return [a, b, np.zeros(12 * n, np.int32)]

        def fn(x, y):
            fs = [getattr(ti, p) for p in PREDS] + [getattr(ti, p + "_u") for p in PREDS]
            return [ti.mask_to_int(f(x, y)) for f in fs]

        params, body = _elementwise([fmt, fmt], I32, n, fn)

        def expect(args, launch=0):
            a, b = _f64(args[0]), _f64(args[1])
            nan = np.isnan(a) | np.isnan(b)
            with np.errstate(invalid="ignore"):
                ordered = [_NP_CMP[p](a, b) & ~nan for p in PREDS]
                unordered = [_NP_CMP[p](a, b) | nan for p in PREDS]
            return {2: np.concatenate([_bool(r) for r in ordered + unordered])}

        labels = tuple(PREDS) + tuple(p + "_u" for p in PREDS)
        cases.append(Case(f"cmpf_{fmt.name}", params, body, args, (Out(2, EXACT, labels=labels, block=n),),
                          expect=expect))
    return Family("float_cmp", "exact", "exact: ordered predicates answer 0 on a NaN operand (ne included), "
                  "unordered ones 1; -0 == +0", ("cmpf",), cases)


# ---- max / min -----------------------------------------------------------------------------------


def _maxmin_expect(a, b, is_max, propagate):
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    with np.errstate(invalid="ignore"):
        pick_a = (a > b) if is_max else (a < b)
        eq = a == b
        # ties of two zeros of opposite signs: the larger is +0, the smaller -0 (IEEE 754-2019's
        # maximum / minimum); the host's numpy rule differs there and the device decides, so the
        # case's expect_lanes leaves those lanes out of the CI comparison (the device run keeps them)
        zero_tie = eq & (a == 0) & (np.signbit(a) != np.signbit(b))
        r = np.where(pick_a | eq, a, b)
        r = np.where(zero_tie, 0.0 if is_max else -0.0, r)
    if propagate:
        r = np.where(nan_a | nan_b, np.nan, r)
    else:
        r = np.where(nan_a, b, np.where(nan_b, a, r))
    return r


def _float_maxmin():
    cases = []
    for salt, fmt in enumerate((F32, F64)):
        n = 1024

        def args(fmt=fmt, n=n, salt=salt):
            a, b = C.float_pairs(fmt, n, 40 + salt)
            return [a, b, np.zeros(4 * n, _np(fmt))]

        params, body = _elementwise([fmt, fmt], fmt, n, lambda x, y: [ti.max(x, y), ti.min(x, y),
                                                                      ti.max(x, y, propagate_nan=True),
                                                                      ti.min(x, y, propagate_nan=True)])

        def expect(args, launch=0, fmt=fmt):
            a, b = _f64(args[0]), _f64(args[1])
            rs = [_maxmin_expect(a, b, True, False), _maxmin_expect(a, b, False, False),
                  _maxmin_expect(a, b, True, True), _maxmin_expect(a, b, False, True)]
            return {2: np.concatenate(rs).astype(_np(fmt))}

        def settled(args):
            a, b = _f64(args[0]), _f64(args[1])
            tie = (a == 0) & (b == 0) & (np.signbit(a) != np.signbit(b))
            return np.tile(~tie, 4)

        cases.append(Case(f"maxmin_{fmt.name}", params, body, args,
                          (Out(2, EXACT, labels=("max", "min", "max_nan", "min_nan"), block=n,
                               expect_lanes=settled),), expect=expect))
    return Family("float_maxmin", "exact", "exact: without propagate_nan a NaN operand answers the other operand "
                  "(two NaNs: NaN); with it a NaN operand answers NaN. The sign of max/min(+-0, -+0) is the "
                  "device's to say (the corpus holds both orders)", ("maxf", "minf"), cases)


# ---- neg / abs / floor / ceil --------------------------------------------------------------------


def _float_sign():
    cases = []
    for salt, fmt in enumerate((F32, F64, F16)):
        n = 256

        def args(fmt=fmt, n=n, salt=salt):
            near = np.array([0.5, -0.5, 1.5, -1.5, 2.5, -2.5, -0.3, 0.3, -0.99, 0.99, 1e-30, -1e-30, 4503599627370495.5,
                             -4503599627370495.5, 8388607.5, -8388607.5, 8388608.0, 1023.75, -1023.75], np.float64)
            head = np.concatenate([C.float_specials(fmt).astype(np.float64), near])
            a = C.fill(ti.dtypes.to_format(fmt, head), n, C.spread_floats(n, fmt, 50 + salt, -4, 24))
            return [a, np.zeros(4 * n, _np(fmt))]

        params, body = _elementwise([fmt], fmt, n, lambda x: [ti.neg(x), ti.abs(x), ti.floor(x), ti.ceil(x)])

        def expect(args, launch=0, fmt=fmt):
            a = _f64(args[0])
            return {1: np.concatenate([-a, np.abs(a), np.floor(a), np.ceil(a)]).astype(_np(fmt))}

        cases.append(Case(f"sign_{fmt.name}", params, body, args,
                          (Out(1, EXACT, labels=("neg", "abs", "floor", "ceil"), block=n),), expect=expect))
    return Family("float_sign", "exact", "exact: neg and abs move only the sign bit, floor and ceil are exact "
                  "(ceil(-0.3) is -0)", ("negf", "absf", "floor", "ceil"), cases)


# ---- remf ----------------------------------------------------------------------------------------


def _remf():
    cases = []
    for salt, fmt in enumerate((F32, F64)):
        n = 1024

        def args(fmt=fmt, n=n, salt=salt):
            r = C.rng(60 + salt)
            a, b = C.float_pairs(fmt, 512, 60 + salt)
            # quotients far from their truncation: where fmod and IEEE remainder part ways
            b2 = ti.dtypes.to_format(fmt, r.uniform(0.5, 8, 256) * r.choice([-1, 1], 256))
            q = r.integers(1, 1000, 256) + r.uniform(0.55, 0.95, 256)
            a2 = ti.dtypes.to_format(fmt, _f64(b2) * q * r.choice([-1, 1], 256))
            small = ti.dtypes.to_format(fmt, r.uniform(-1, 1, 256))  # |a| < |b|
            big = ti.dtypes.to_format(fmt, r.uniform(1.5, 4, 256) * r.choice([-1, 1], 256))
            return [np.concatenate([a, a2, small]), np.concatenate([b, b2, big]), np.zeros(n, _np(fmt))]

        params, body = _elementwise([fmt, fmt], fmt, n, lambda x, y: [ti.remf(x, y)])

        def expect(args, launch=0, fmt=fmt):
            def one(x, y):
                try:
                    return math.fmod(x, y)
                except ValueError:
                    return math.nan
            return {2: _vec(one, _f64(args[0]), _f64(args[1])).astype(_np(fmt))}

        cases.append(Case(f"remf_{fmt.name}", params, body, args, (Out(2, EXACT),), expect=expect))
    return Family("remf", "exact", "exact: a - trunc(a / b) * b (C's fmod), the sign of the dividend; the "
                  "remainder of two representable numbers is representable", ("remf",), cases)


# ---- transcendental: tolerance -------------------------------------------------------------------

UNARY_T = ("exp", "exp2", "log", "log2", "tanh", "sin", "cos", "tan", "sinh", "cosh", "rsqrt")


def _math1(name):
    import math as m

    fn = {"exp": m.exp, "exp2": lambda x: 2.0 ** x, "log": m.log, "log2": m.log2, "tanh": m.tanh, "sin": None,
          "cos": m.cos, "tan": m.tan, "sinh": m.sinh, "cosh": m.cosh, "rsqrt": lambda x: 1.0 / m.sqrt(x)}[name]

    def one(x):
        if name == "sin":
            from ..ref.second import ref_sin
            return float(ref_sin(x))
        if math.isnan(x):
            return math.nan
        try:
            return fn(x)
        except OverflowError:
            return math.inf if name in ("exp", "exp2", "cosh") or (name == "sinh" and x > 0) else -math.inf
        except (ValueError, ZeroDivisionError):
            if name in ("log", "log2") and x == 0:
                return -math.inf
            if name == "rsqrt" and x == 0:
                return math.copysign(math.inf, x)
            return math.nan

    def special(x):
        if math.isinf(x):
            return {"exp": 0.0 if x < 0 else x, "exp2": 0.0 if x < 0 else x, "log": x if x > 0 else math.nan,
                    "log2": x if x > 0 else math.nan, "tanh": math.copysign(1.0, x), "sin": math.nan,
                    "cos": math.nan, "tan": math.nan, "sinh": x, "cosh": math.inf,
                    "rsqrt": 0.0 if x > 0 else math.nan}[name]
        return one(x)

    return special


def _trans_corpus(fmt, n, salt):
    r = C.rng(salt)
    head = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 0.5, 2.0, 10.0, -10.0, 80.0, -80.0, 88.5, -87.5,
                     100.0, -100.0, 700.0, 1e-30, -1e-30, 1e-7, 3.0, -3.0, 1e4, -1e4, 1e30, 0.75, 1.25],
                    np.float64)
    body = np.concatenate([r.uniform(-20, 20, n // 2), np.exp(r.uniform(-20, 20, n // 4)),
                           r.uniform(-3.2, 3.2, n // 4)])
    return C.fill(ti.dtypes.to_format(fmt, head), n, ti.dtypes.to_format(fmt, body))


def _pow_corpus(fmt, n, salt):
    r = C.rng(salt)
    bases = np.array([0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, np.inf, -np.inf, np.nan, 10.0, 1e-3], np.float64)
    exps = np.array([0.0, -0.0, 1.0, -1.0, 2.0, 3.0, -3.0, 0.5, -0.5, np.inf, -np.inf, np.nan, 2.5], np.float64)
    a, b = C.pairs(bases, exps)
    ra, rb = r.uniform(0.05, 10, n), r.uniform(-12, 12, n)
    return (C.fill(ti.dtypes.to_format(fmt, a), n, ti.dtypes.to_format(fmt, ra)),
            C.fill(ti.dtypes.to_format(fmt, b), n, ti.dtypes.to_format(fmt, rb)))


def _transcendental():
    cases = []
    for salt, fmt in enumerate((F32, F64)):
        n = 1024
        ulps = ULP_F32 if fmt is F32 else ULP_F64
        judge = Judge("tol", ulps=ulps)

        def args(fmt=fmt, n=n, salt=salt):
            return [_trans_corpus(fmt, n, 70 + salt), np.zeros(len(UNARY_T) * n, _np(fmt))]

        params, body = _elementwise([fmt], fmt, n, lambda x: [getattr(ti, f)(x) for f in UNARY_T])

        def expect(args, launch=0, fmt=fmt):
            x = _f64(args[0])
            return {1: np.concatenate([_vec(_math1(f), x) for f in UNARY_T]).astype(_np(fmt))}

        cases.append(Case(f"trans_{fmt.name}", params, body, args, (Out(1, judge, labels=UNARY_T, block=n),),
                          expect=expect))

        def pargs(fmt=fmt, n=n, salt=salt):
            a, b = _pow_corpus(fmt, n, 75 + salt)
            return [a, b, np.zeros(n, _np(fmt))]

        pparams, pbody = _elementwise([fmt, fmt], fmt, n, lambda x, y: [ti.pow(x, y)])

        def pexpect(args, launch=0, fmt=fmt):
            def one(x, y):
                try:
                    return math.pow(x, y)
                except OverflowError:
                    return math.inf if x > 0 or float(y).is_integer() and int(y) % 2 == 0 else -math.inf
                except (ValueError, ZeroDivisionError):
                    if x == 0 and y < 0:
                        odd = float(y).is_integer() and int(y) % 2 == 1
                        return math.copysign(math.inf, x) if odd else math.inf
                    return math.nan
            return {2: _vec(one, _f64(args[0]), _f64(args[1])).astype(_np(fmt))}

        cases.append(Case(f"pow_{fmt.name}", pparams, pbody, pargs, (Out(2, judge),), expect=pexpect))
    return Family("transcendental", "tolerance", TRANS_WHY, ("exp", "exp2", "log", "log2", "tanh", "sin", "cos",
                  "tan", "sinh", "cosh", "rsqrt", "fpowf"), cases)


# ---- atan2 ---------------------------------------------------------------------------------------


def _atan2():
    cases = []
    for salt, fmt in enumerate((F32, F64)):
        n = 1024
        judge = Judge("tol", ulps=ULP_F32 if fmt is F32 else ULP_F64)

        def args(fmt=fmt, n=n, salt=salt):
            s = ti.dtypes.to_format(fmt, np.array([0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, np.inf, -np.inf,
                                                   np.nan, 1e-30, -1e-30, 1e30, -1e30, 3.0, -7.0], np.float64))
            a, b = C.pairs(s)
            r = C.rng(80 + salt)
            ra = ti.dtypes.to_format(fmt, r.uniform(-10, 10, n))
            rb = ti.dtypes.to_format(fmt, r.uniform(-10, 10, n))
            return [C.fill(a, n, ra), C.fill(b, n, rb), np.zeros(n, _np(fmt))]

        params, body = _elementwise([fmt, fmt], fmt, n, lambda y, x: [ti.atan2(y, x)])

        def expect(args, launch=0, fmt=fmt):
            return {2: _vec(math.atan2, _f64(args[0]), _f64(args[1])).astype(_np(fmt))}

        cases.append(Case(f"atan2_{fmt.name}", params, body, args, (Out(2, judge),), expect=expect))
    return Family("atan2", "tolerance", "atan2(a, b) with the NUMERATOR first (C's atan2(a, b)), the quadrant from "
                  "both signs; " + TRANS_WHY + ". The corpus holds every pair both ways round, so the two argument "
                  "orders differ by far more than the bound on most lanes", ("atan2",), cases)


# ---- powi ----------------------------------------------------------------------------------------


def _powi():
    cases = []
    specs = ((F64, I32, 0), (F32, I32, 1), (F32, I8, 2), (F32, I16, 3), (F32, ti.I1, 4), (F16, I32, 5),
             (BF16, I32, 6))
    for fmt, efmt, salt in specs:
        n = 1024

        def args(fmt=fmt, efmt=efmt, n=n, salt=salt):
            r = C.rng(90 + salt)
            bases = np.array([1.5, -2.0, 0.5, 3.0, np.nan, 1.1, -0.0, 2.0, 0.0, np.inf, -np.inf, -1.0, 1.0, 0.1,
                              1.0001, -1.1], np.float64)
            if efmt is ti.I1:
                a = C.fill(ti.dtypes.to_format(fmt, bases), n, ti.dtypes.to_format(fmt, r.uniform(-3, 3, n)))
                e = r.integers(0, 2, n).astype(np.int32)  # an i1 buffer's layout is not ours to assume: i32 bits
                e[: bases.size] = np.arange(bases.size) % 2 == 0
                return [a, e, np.zeros(n, _np(fmt))]
            lim = {"i8": 127, "i16": 300, "i32": 100}[efmt.name]
            exps = np.array([3, -2, 10, 0, 0, 17, -1, -127, 0, 1, -1, 31, -31, 2, 1000 if lim > 127 else 100, 5],
                            np.int64)
            head_a, head_e = C.pairs(bases, np.clip(exps, -lim - 1, lim))
            a = C.fill(ti.dtypes.to_format(fmt, head_a), n, ti.dtypes.to_format(fmt, r.uniform(0.3, 3.0, n)
                                                                                  * r.choice([-1, 1], n)))
            e = C.fill(head_e, n, r.integers(-lim, lim, n)).astype(_np(efmt))
            if efmt.name == "i32":
                e[-4:] = [2**31 - 1, -(2**31), 2**30, -(2**30) + 1]  # the largest magnitudes
                a[-4:] = ti.dtypes.to_format(fmt, [1.0, -1.0, 1.0, -1.0])
            return [a, e, np.zeros(n, _np(fmt))]

        if efmt is ti.I1:
            params, body = _elementwise([fmt, I32], fmt, n, lambda a, e: [ti.powi(a, ti.int_to_mask(e))])
        else:
            params, body = _elementwise([fmt, efmt], fmt, n, lambda a, e: [ti.powi(a, e)])

        def expect(args, launch=0, fmt=fmt, efmt=efmt):
            e = args[1].astype(np.int64)
            if efmt is ti.I1:
                e = -(e & 1)  # an i1 read signed: true is -1
            return {2: _vec(lambda a, k: X.fpowi(a, int(k), fmt.name), _f64(args[0]), e).astype(_np(fmt))}

        cases.append(Case(f"powi_{fmt.name}_{efmt.name}", params, body, args, (Out(2, EXACT),), expect=expect))
    return Family("powi", "exact", "exact against the device's sequence (measured: ops/tileshape.py, "
                  "ref.second.ref_fpowi): right-to-left binary exponentiation, one rounding a product, the "
                  "reciprocal for a negative power, f16/bf16 through f32; the exponent read signed (i1 true = -1)",
                  ("fpowi",), cases)


# ---- erf -----------------------------------------------------------------------------------------

ERF_BOUND = 1.5e-7  # Abramowitz and Stegun 7.1.26's own bound


def _erf():
    from ..ref.second import ref_erf

    cases = []
    for fmt in (F32, F64):
        n = 1024
        eps = float(C.finfo(fmt).eps)
        judge = Judge("tol", atol=ERF_BOUND + 8 * eps)

        def args(fmt=fmt, n=n):
            head = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30, 6.0, -6.0, 0.5, -0.5], np.float64)
            return [C.fill(ti.dtypes.to_format(fmt, head), n, ti.dtypes.to_format(fmt, np.linspace(-6, 6, n))),
                    np.zeros(n, _np(fmt))]

        params, body = _elementwise([fmt], fmt, n, lambda x: [ti.erf(x)])

        def expect(args, launch=0, fmt=fmt):
            return {1: ref_erf(_f64(args[0])).astype(_np(fmt))}

        cases.append(Case(f"erf_{fmt.name}", params, body, args, (Out(1, judge, against="expect"),), expect=expect))
    return Family("erf", "tolerance", "against tileir.ref.second.ref_erf (a series good to ~1e-15), within "
                  "1.5e-7 (A&S 7.1.26's bound) + 8 units of the format's epsilon (the composition's roundings "
                  "near 1); NaN where NaN", ("absf", "mulf", "addf", "divf", "negf", "exp", "subf", "cmpf",
                                             "select"), cases)


# ---- integer arithmetic --------------------------------------------------------------------------

INT_OPS = ("add", "sub", "mul", "div", "rem", "max", "min", "mulhi", "and", "or", "xor", "shl", "shr_i", "shr_u",
           "neg", "abs")


def _int_arith():
    n = 1024

    def args():
        a, b = C.int32_pairs(n, 100)
        b = C.nonzero_divisors(b, a)
        return [a, b, C.shift_counts(n, 101), np.zeros(len(INT_OPS) * n, np.int32)]

    def fn(a, b, s):
        return [ti.add_i(a, b), ti.sub_i(a, b), ti.mul_i(a, b), ti.div_i(a, b), ti.rem_i(a, b), ti.max_i(a, b),
                ti.min_i(a, b), ti.mulhi_i(a, b), ti.and_i(a, b), ti.or_i(a, b), ti.xor_i(a, b), ti.shl_i(a, s),
                ti.shr_i(a, s), ti.shr_u(a, s), ti.neg_i(a), ti.abs_i(a)]

    params, body = _elementwise([I32, I32, I32], I32, n, fn)

    def expect(args, launch=0):
        a, b, s = (x.astype(np.int64).tolist() for x in args[:3])
        w = X.wrap
        out = []
        for x, y, k in zip(a, b, s):
            ux, uy = x & 0xFFFFFFFF, y & 0xFFFFFFFF
            q = X.tdiv(x, y)
            out.append([w(x + y), w(x - y), w(x * y), w(q), w(x - q * y), max(x, y), min(x, y), w((ux * uy) >> 32),
                        w(x & y), w(x | y), w(x ^ y), w(x << k), w(x >> k), w(ux >> k), w(-x), w(abs(x))])
        return {3: np.array(out, dtype=np.int64).T.reshape(-1).astype(np.int32)}

    return Family("int_arith", "exact", "exact (an i32 answer has one value): wrapping add/sub/mul/neg/abs, "
                  "division toward zero and the remainder of the dividend's sign (no zero divisor, no "
                  "INT_MIN / -1), signed max/min, mulhi of the UNSIGNED readings, shifts by counts in [0, 32) with "
                  "both edges, shr_i arithmetic and shr_u logical",
                  ("addi", "subi", "muli", "divi", "remi", "maxi", "mini", "mulhii", "andi", "ori", "xori", "shli",
                   "shri", "negi", "absi"),
                  [Case("int_i32", params, body, args, (Out(3, EXACT, labels=INT_OPS, block=n),), expect=expect)])


def _cmp_unsigned(pred, a, b):
    """The UNSIGNED integer comparison (cmpi signedness<unsigned>; the surface spells only the signed one)."""
    from ..dev import dev
    from ..surface._util import h, info

    d, shape = info(a)
    return ti.Tile(dev().t_cmpi(pred, list(shape), h(a), h(b), False, d))


def _int_cmp():
    n = 1024

    def args():
        a, b = C.int32_pairs(n, 110)
        return [a, b, np.zeros(12 * n, np.int32)]

    def fn(a, b):
        out = [ti.mask_to_int(getattr(ti, p + "_i")(a, b)) for p in PREDS]
        return out + [ti.mask_to_int(_cmp_unsigned(p, a, b)) for p in PREDS]

    params, body = _elementwise([I32, I32], I32, n, fn)

    def expect(args, launch=0):
        a, b = args[0].astype(np.int64), args[1].astype(np.int64)
        ua, ub = a & 0xFFFFFFFF, b & 0xFFFFFFFF
        return {2: np.concatenate([_bool(_NP_CMP[p](a, b)) for p in PREDS] +
                                  [_bool(_NP_CMP[p](ua, ub)) for p in PREDS])}

    labels = tuple(p + "_s" for p in PREDS) + tuple(p + "_u" for p in PREDS)
    return Family("int_cmp", "exact", "exact: the six predicates signed and unsigned (they differ wherever one "
                  "operand is negative)", ("cmpi",),
                  [Case("cmpi_i32", params, body, args, (Out(2, EXACT, labels=labels, block=n),), expect=expect)])


# ---- conversions ---------------------------------------------------------------------------------


def _itof():
    cases = []
    r = C.rng(120)
    i32_head = np.concatenate([C.INT32_SPECIALS.astype(np.int64),
                               [2**24 + 1, 2**24 + 3, -(2**24 + 1), 2**24 + 2**16 + 1, 2**25 + 2**17 + 1, 65504, 65519,
                                65520, 70000, -70000, 2**31 - 65, 16777217, 33554435]])
    i64_head = np.array([0, -1, 2**53 + 1, 2**53 + 3, -(2**53 + 1), 2**60 + 2**36 + 1, 2**62 + 2**38 + 1,
                         -(2**60 + 2**36 + 1), 2**63 - 1, -(2**63), 2**24 + 1, 12345678901234567], np.int64)
    spec = (("i32", "f32", i32_head), ("i32", "f64", i32_head), ("i32", "f16", i32_head), ("i32", "bf16", i32_head),
            ("i64", "f64", i64_head), ("i64", "f32", i64_head), ("i16", "f32", None), ("i8", "f16", None))
    defects: dict = {}  # the host rounds once now (ops/convert.py _int_to_float)
    for k, (src, dst, head) in enumerate(spec):
        n = 256
        bits = C.np_of(src).itemsize * 8

        def args(src=src, dst=dst, head=head, n=n, bits=bits, k=k):
            rr = C.rng(121 + k)
            lo, hi = -(1 << (bits - 1)), (1 << (bits - 1))
            rest = (rr.integers(lo, hi, n, dtype=np.int64) >> rr.integers(0, bits - 1, n)).astype(_np(src))
            h = np.arange(lo, hi, dtype=np.int64)[:: max(1, (hi - lo) // 64)] if head is None else head
            return [C.fill(h.astype(_np(src)), n, rest), np.zeros(n, _np(dst))]

        params, body = _elementwise([src], dst, n, lambda x, dst=dst: [ti.int_to_float(x, dst)])

        def expect(args, launch=0, dst=dst):
            return {1: _in_fmt([X.convert_int(int(v), dst) for v in args[0].tolist()], dst)}

        d = defects.get((src, dst))
        cases.append(Case(f"itof_{src}_{dst}", params, body, args, (Out(1, EXACT),), expect=expect,
                          defects={1: d} if d else {}))
    del r
    return Family("itof", "exact", "exact: the integer read SIGNED and rounded once to nearest even (ties "
                  "and values past 2^24 / 2^53 / the f16 range in the corpus)", ("itof",), cases)


def _ftoi():
    cases = []
    head = np.array([0.0, -0.0, 0.5, -0.5, 0.99, -0.99, 1.5, -1.5, 127.9, 128.0, -128.5, -129.0, 255.5, 32767.5,
                     32768.0, -32768.9, -32769.0, 2147483520.0, 2147483648.0, -2147483648.0, -2147483904.0, 1e10,
                     -1e10, 3e38, -3e38, np.inf, -np.inf, np.nan, 9.2e18, 9.3e18, -9.3e18, 1e300, -1e300],
                    np.float64)
    spec = (("f32", "i32", True), ("f64", "i32", True), ("f32", "i8", True), ("f32", "i16", True),
            ("f64", "i64", True), ("f32", "i64", True), ("f32", "i32", False), ("f64", "i32", False))
    defects: dict = {}  # saturation reaches 2^63 - 1 now (ops/convert.py _float_to_int)
    for k, (src, dst, sat) in enumerate(spec):
        n = 256
        bits = C.np_of(dst).itemsize * 8
        lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1

        def args(src=src, dst=dst, sat=sat, n=n, k=k, lo=lo, hi=hi):
            r = C.rng(130 + k)
            x = C.fill(ti.dtypes.to_format(src, head), n,
                       ti.dtypes.to_format(src, r.uniform(-1, 1, n) * np.exp2(r.uniform(0, 70, n))))
            if not sat:  # the plain ftoi is undefined out of range: its corpus stays inside
                v = _f64(x)
                keep = np.isfinite(v) & (np.trunc(v) >= lo) & (np.trunc(v) <= hi)
                x = np.where(keep, x, ti.dtypes.to_format(src, r.uniform(-1e6, 1e6, n)))
            return [x, np.zeros(n, _np(dst))]

        params, body = _elementwise([src], dst, n,
                                    lambda x, dst=dst, sat=sat: [ti.float_to_int(x, dst, saturating=sat)])

        def expect(args, launch=0, dst=dst, lo=lo, hi=hi):
            def one(v):
                if math.isnan(v):
                    return 0
                if math.isinf(v):
                    return hi if v > 0 else lo
                return min(max(int(v), lo), hi)  # int() truncates toward zero, exactly
            return {1: np.array([one(v) for v in _f64(args[0]).tolist()], dtype=np.int64).astype(_np(dst))}

        d = defects.get((src, dst, sat))
        cases.append(Case(f"ftoi{'_sat' if sat else ''}_{src}_{dst}", params, body, args, (Out(1, EXACT),),
                          expect=expect, defects={1: d} if d else {}))
    return Family("ftoi", "exact", "exact: truncation toward zero; saturating: the ends of the range for "
                  "out-of-range lanes and infinities, 0 for NaN. The plain ftoi's corpus stays inside the range "
                  "(its other lanes are undefined)", ("ftoi",), cases)


# the ftof pairs and modes the recording takes and tileiras assembles for sm_90 (measured with
# tileiras 13.4.92: every pair to or from f8E8M0FNU and f4E2M1FN is "unsupported type" below sm_100)
FTOF_SM90 = {
    "f64": (("f32", ("nearest_even", "zero")), ("tf32", ("nearest_even", "zero")), ("f16", ("nearest_even", "zero")),
            ("bf16", ("nearest_even", "zero")), ("f8E4M3FN", ("nearest_even",)), ("f8E5M2", ("nearest_even",))),
    "f32": (("f64", ("nearest_even",)), ("tf32", ("nearest_even", "zero", "nearest_away")),
            ("f16", ("nearest_even", "zero")), ("bf16", ("nearest_even", "zero")), ("f8E4M3FN", ("nearest_even",)),
            ("f8E5M2", ("nearest_even",))),
    "tf32": (("f64", ("nearest_even",)), ("f32", ("nearest_even",)), ("f16", ("nearest_even", "zero")),
             ("bf16", ("nearest_even", "zero")), ("f8E4M3FN", ("nearest_even",)), ("f8E5M2", ("nearest_even",))),
    "f16": (("f64", ("nearest_even",)), ("f32", ("nearest_even",)), ("tf32", ("nearest_even",)),
            ("bf16", ("nearest_even", "zero")), ("f8E4M3FN", ("nearest_even",)), ("f8E5M2", ("nearest_even",))),
    "bf16": (("f64", ("nearest_even",)), ("f32", ("nearest_even",)), ("tf32", ("nearest_even",)),
             ("f16", ("nearest_even", "zero")), ("f8E4M3FN", ("nearest_even",)), ("f8E5M2", ("nearest_even",))),
    "f8E4M3FN": (("f64", ("nearest_even",)), ("f32", ("nearest_even",)), ("tf32", ("nearest_even",)),
                 ("f16", ("nearest_even",)), ("bf16", ("nearest_even",)), ("f8E5M2", ("nearest_even",))),
    "f8E5M2": (("f64", ("nearest_even",)), ("f32", ("nearest_even",)), ("tf32", ("nearest_even",)),
               ("f16", ("nearest_even",)), ("bf16", ("nearest_even",)), ("f8E4M3FN", ("nearest_even",))),
}
FTOF_EXCLUDED = ("f8E8M0FNU", "f4E2M1FN")  # tileiras refuses both formats below sm_100

# where the host reference disagrees with the correctly rounded conversion (tests xfail them)
FTOF_DEFECTS: dict = {}  # the host rounds f64 into every format once, and tf32 by its own units (ops/convert.py)


def _ftof_corpus(src: str, n: int, salt: int) -> np.ndarray:
    """Values of ``src``: its specials, then for every narrower destination its ties, one source unit
    either side of them, values past its range and its subnormals, then spread values."""
    r = C.rng(salt)
    sfmt = "f32" if src == "tf32" else src
    vals = [C.float_specials(sfmt).astype(np.float64)]
    for dst in ("f32", "tf32", "f16", "bf16", "f8E4M3FN", "f8E5M2"):
        p, emin, emax, _, _ = X.FORMATS[dst]
        m = r.integers(1 << (p - 1), 1 << p, 8).astype(np.float64)
        e = r.integers(emin, emax, 8)
        tie = (m + 0.5) * np.exp2(e - (p - 1))
        sub = (r.integers(1, 1 << (p - 1), 4) + 0.5) * np.exp2(emin - (p - 1))
        vals += [tie, -tie, sub, [X.largest(dst) * 1.01, -X.largest(dst) * 1.2, X.largest(dst) * 2]]
    v = np.concatenate([np.ravel(x) for x in vals]).astype(np.float64)
    v = v[np.isnan(v) | (np.abs(v) <= float(C.finfo(sfmt).max)) | np.isinf(v)]
    src_vals = ti.dtypes.to_format(src, v)  # ties exact where the source can hold them
    step = _f64(src_vals)
    up = ti.dtypes.to_format(src, np.nextafter(step, np.inf)) if sfmt in ("f32", "f64") else src_vals
    head = np.concatenate([src_vals, up])
    rest = ti.dtypes.to_format(src, r.uniform(1, 2, n) * np.exp2(r.integers(-30, 30, n)) * r.choice([-1, 1], n))
    return C.fill(head, n, rest)


def _ftof():
    cases = []
    for k, (src, dsts) in enumerate(FTOF_SM90.items()):
        n = 512
        outs_spec = [(dst, mode) for dst, modes in dsts for mode in modes]
        store_fmt = {d: ("f32" if d == "tf32" else d) for d, _ in outs_spec}
        in_fmt = "f32" if src == "tf32" else src
        params = (ti.ByPtr(in_fmt),) + tuple(ti.ByPtr(store_fmt[d]) for d, _ in outs_spec)

        def body(src=src, outs_spec=outs_spec, in_fmt=in_fmt, n=n):
            x = ti.load(ti.param(in_fmt, 0), _z(), [n])
            if src == "tf32":
                x = ti.float_to_float(x, ti.TF32)  # exact: the corpus holds tf32 values
            for j, (dst, mode) in enumerate(outs_spec):
                y = ti.float_to_float(x, dst, mode)
                if dst == "tf32":
                    y = ti.float_to_float(y, F32)  # an exact widening, to reach memory
                ti.store(ti.param("f32" if dst == "tf32" else dst, j + 1), _z(), y)

        def args(src=src, outs_spec=outs_spec, n=n, k=k):
            x = _ftof_corpus(src, n, 140 + k)
            if src == "tf32":
                x = ti.dtypes.to_format("tf32", _f64(x))
            return [x] + [np.zeros(n, _np("f32" if d == "tf32" else d)) for d, _ in outs_spec]

        def expect(args, launch=0, outs_spec=outs_spec, src=src):
            x = _f64(args[0]).tolist()
            return {j + 1: _in_fmt([X.device_ftof(v, src, dst, mode) for v in x], dst)
                    for j, (dst, mode) in enumerate(outs_spec)}

        outs = tuple(Out(j + 1, EXACT, labels=(f"{dst}/{mode}",), block=n) for j, (dst, mode) in enumerate(outs_spec))
        defects = {j + 1: FTOF_DEFECTS[(src, d, m)] for j, (d, m) in enumerate(outs_spec)
                   if (src, d, m) in FTOF_DEFECTS}
        cases.append(Case(f"ftof_{src}", params, body, args, outs, expect=expect, defects=defects, inputs=(0,)))
    return Family("ftof", "exact", "exact: one correct rounding of the source value by the mode named (ties, one "
                  "source unit either side of them, subnormals and values past the destination's range in the "
                  "corpus), every pair and mode the recording takes that tileiras assembles for sm_90 (" +
                  str(sum(len(m) for d in FTOF_SM90.values() for _, m in d)) + "); f8E8M0FNU and f4E2M1FN are "
                  "sm_100 formats. Where the destination has no infinity (f8E4M3FN) an overflow is NaN",
                  ("ftof",), cases)


def _int_widen():
    from ..surface.convert import _conv

    n = 256

    def args():
        b = np.arange(256, dtype=np.int64).astype(np.uint8).view(np.int8)
        w = C.fill(C.INT32_SPECIALS, n, C.int32_spread(n, 150))
        h = (np.arange(n, dtype=np.int64) * 257 - 32768).astype(np.int16)
        return [b.copy(), w, h, np.zeros(12 * n, np.int32), np.zeros(n, np.int8), np.zeros(n // 2, np.int8),
                np.zeros(2 * n, np.int64)]

    params = (ti.ByPtr(I8), ti.ByPtr(I32), ti.ByPtr(I16), ti.ByPtr(I32), ti.ByPtr(I8), ti.ByPtr(I8), ti.ByPtr(I64))

    def body():
        b = ti.load(ti.param(I8, 0), _z(), [n])
        w = ti.load(ti.param(I32, 1), _z(), [n])
        h = ti.load(ti.param(I16, 2), _z(), [n])
        o = ti.param(I32, 3)
        nib = ti.unpack_bytes(ti.load(ti.param(I8, 0), _z(), [n // 2]), ti.I4)  # n nibbles, even lane low
        outs = [ti.ext_u8(b), _conv("extis", b, "i32"), _conv("exti", h, "i32"), _conv("extis", h, "i32"),
                ti.ext_i4(nib), ti.ext_u4(nib), ti.mask_to_int(ti.int_to_mask(w)),
                _conv("exti", _conv("trunci", w, "i16"), "i32"), _conv("extis", _conv("trunci", w, "i16"), "i32"),
                _conv("extis", ti.trunc_u8(w), "i32"), ti.ext_i4(ti.trunc_i4(w)), ti.ext_u4(ti.trunc_i4(w))]
        for k, t in enumerate(outs):
            ti.store(o, ti.idx_const(k * n), t)
        ti.store(ti.param(I8, 4), _z(), ti.trunc_u8(w))
        ti.store(ti.param(I8, 5), _z(), ti.pack_bytes(ti.trunc_i4(w)))
        wide = ti.param(I64, 6)
        ti.store(wide, _z(), _conv("extis", w, "i64"))
        ti.store(wide, ti.idx_const(n), _conv("exti", w, "i64"))

    def expect(args, launch=0):
        b = args[0].astype(np.int64)
        w = args[1].astype(np.int64)
        h = args[2].astype(np.int64)
        half = b[: n // 2] & 0xFF
        nib = np.empty(n, np.int64)
        nib[0::2], nib[1::2] = half & 0xF, half >> 4

        def sx(v, bits):
            v = v & ((1 << bits) - 1)
            return np.where(v >= 1 << (bits - 1), v - (1 << bits), v)

        outs = [b & 0xFF, b, h & 0xFFFF, h, sx(nib, 4), nib, w & 1, w & 0xFFFF, sx(w, 16), sx(w, 8), sx(w, 4),
                w & 0xF]
        low = w & 0xF
        packed = (low[0::2] | (low[1::2] << 4)).astype(np.uint8).view(np.int8)
        return {3: np.concatenate(outs).astype(np.int32), 4: sx(w, 8).astype(np.int8), 5: packed,
                6: np.concatenate([w, w & 0xFFFFFFFF]).astype(np.int64)}

    labels = ("ext_u8", "extis_i8", "exti_i16", "extis_i16", "ext_i4", "ext_u4", "trunc_i1", "trunc_i16_u",
              "trunc_i16_s", "trunc_i8", "trunc_i4_s", "trunc_i4_u")
    case = Case("widen", params, body, args, (Out(3, EXACT, labels=labels, block=n), Out(4, EXACT), Out(5, EXACT),
                                              Out(6, EXACT, labels=("extis_i64", "exti_i64"), block=n)),
                expect=expect, inputs=(0, 1, 2))
    return Family("int_widen", "exact", "exact: exti zero-extends and extis sign-extends (i1, i4 through unpack, "
                  "i8, i16 into i32 and i32 into i64), trunci keeps the low bits (i1, i4 through pack, i8, i16); "
                  "every byte value and every nibble pair in the corpus", ("exti", "trunci", "pack", "unpack"),
                  [case])


def _bitcast():
    n = 256

    def args():
        pats = np.array([0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7FC00001, 0xFFFFFFFF, 0x7F800001,
                         0x7FBFFFFF, 0x00000001, 0x807FFFFF, 0x3F800000, 0x00800000, 0x7F7FFFFF, 0xDEADBEEF],
                        dtype=np.int64)
        i = C.fill(pats.astype(np.uint32).view(np.int32), n, C.int32_spread(n, 160))
        f = C.fill(C.float_specials(F32), n, C.spread_floats(n, F32, 161))
        return [i, f, np.zeros(n, np.float32), np.zeros(n, np.int32), np.zeros(4 * n, np.int8),
                np.zeros(2 * n, np.float16)]

    params = (ti.ByPtr(I32), ti.ByPtr(F32), ti.ByPtr(F32), ti.ByPtr(I32), ti.ByPtr(I8), ti.ByPtr(F16))

    def body():
        i = ti.load(ti.param(I32, 0), _z(), [n])
        f = ti.load(ti.param(F32, 1), _z(), [n])
        ti.store(ti.param(F32, 2), _z(), ti.bits_to_float(i))
        ti.store(ti.param(I32, 3), _z(), ti.bits_to_int(f))
        b = ti.pack_bytes(f)
        ti.store(ti.param(I8, 4), _z(), b)
        ti.store(ti.param(F16, 5), _z(), ti.unpack_bytes(b, F16))

    def expect(args, launch=0):
        i, f = args[0], args[1]
        return {2: i.copy().view(np.float32), 3: f.copy().view(np.int32), 4: f.copy().view(np.int8),
                5: f.copy().view(np.float16)}

    case = Case("bitcast", params, body, args, tuple(Out(p, BITS) for p in (2, 3, 4, 5)), expect=expect,
                inputs=(0, 1))
    return Family("bitcast", "exact", "bit for bit, NaN payloads included (signalling ones too): bitcast moves "
                  "no bit, pack / unpack reread a tile as its little-endian bytes", ("bitcast", "pack", "unpack"),
                  [case])


# ---- select --------------------------------------------------------------------------------------


def _select():
    n = 512

    def args():
        r = C.rng(170)
        c = r.integers(0, 4, n).astype(np.int32)
        a = C.fill(np.tile(C.float_specials(F32), 2), n, C.spread_floats(n, F32, 171))
        b = C.fill(np.tile(C.float_specials(F32), 2)[::-1], n, C.spread_floats(n, F32, 172))
        ia, ib = C.int32_pairs(n, 173)
        return [c, a, b, ia, ib, np.zeros(2 * n, np.float32), np.zeros(2 * n, np.int32)]

    params = (ti.ByPtr(I32), ti.ByPtr(F32), ti.ByPtr(F32), ti.ByPtr(I32), ti.ByPtr(I32), ti.ByPtr(F32), ti.ByPtr(I32))

    def body():
        c = ti.int_to_mask(ti.load(ti.param(I32, 0), _z(), [n]))  # the low bit
        a, b = ti.load(ti.param(F32, 1), _z(), [n]), ti.load(ti.param(F32, 2), _z(), [n])
        ia, ib = ti.load(ti.param(I32, 3), _z(), [n]), ti.load(ti.param(I32, 4), _z(), [n])
        fo, io = ti.param(F32, 5), ti.param(I32, 6)
        ti.store(fo, _z(), ti.select(c, a, b))
        ti.store(fo, ti.idx_const(n), ti.select(c, b, ti.f_const(F32, -0.0)))  # a rank-0 value widens
        ti.store(io, _z(), ti.select(c, ia, ib))
        ti.store(io, ti.idx_const(n), ti.select(ti.lt_i(ia, ib), ia, ti.i_const(-7)))

    def expect(args, launch=0):
        c = (args[0] & 1).astype(bool)
        a, b, ia, ib = args[1:5]
        return {5: np.concatenate([np.where(c, a, b), np.where(c, b, np.float32(-0.0))]).astype(np.float32),
                6: np.concatenate([np.where(c, ia, ib), np.where(ia < ib, ia, -7)]).astype(np.int32)}

    case = Case("select", params, body, args, (Out(5, BITS, labels=("select", "select_rank0"), block=n),
                                               Out(6, EXACT, labels=("select", "select_cmp"), block=n)),
                expect=expect)
    return Family("select", "exact", "bit for bit: the value where the condition's bit is 1, the other where 0 "
                  "(NaN payloads and -0 carried through untouched)", ("select", "constant"), [case])


# ---- reductions and scans ------------------------------------------------------------------------

U32 = 2.0 ** -24


def _sum_bound(x, axis):
    """(n - 1) u sum |x|: the bound of any order of a float sum of n terms (u = 2^-24, f32)."""
    x = np.abs(_f64(x))
    n = x.shape[axis]
    return (n - 1) * U32 * x.sum(axis=axis) + 1e-45


def _reduce():
    cases = []
    shapes = (((1024,), -1), ((32, 32), 0), ((32, 32), 1), ((1,), 0), ((2,), 0), ((8,), 0), ((4, 2), 1), ((2, 64), 0))

    def iargs():
        r = C.rng(180)
        x = np.concatenate([C.INT32_SPECIALS, r.integers(2**30, 2**31 - 1, 100).astype(np.int32),
                            C.int32_spread(1024, 181)])[:1024].astype(np.int32)
        return [x, np.zeros(4096, np.int32)]

    def ibody():
        p, o = ti.param(I32, 0), ti.param(I32, 1)
        off = 0
        for shape, dim in shapes:
            t = ti.load(p, _z(), list(shape))
            for f in (ti.reduce_sum, ti.reduce_max, ti.reduce_min):
                r = f(t, dim)
                r = ti.broadcast(r, [1]) if r.shape == [] else r
                ti.store(o, ti.idx_const(off), r)
                off += int(np.prod(r.shape))
        t = ti.load(p, _z(), [64])
        for fn in (lambda a, x: x, lambda a, x: a):  # non-commutative bodies: the measured argument order
            ti.store(o, ti.idx_const(off), ti.broadcast(ti.d_reduce(t, 0, fn), [1]))
            off += 1
        t2 = ti.load(p, _z(), [8, 16])
        for fn in (lambda a, x: x, lambda a, x: a):
            ti.store(o, ti.idx_const(off), ti.d_reduce(t2, 0, fn, dim=1))
            off += 8

    def iexpect(args, launch=0):
        x = args[0].astype(np.int64)
        out = []
        for shape, dim in shapes:
            t = x[: int(np.prod(shape))].reshape(shape)
            out += [np.ravel((t.sum(axis=dim) + 2**31) % 2**32 - 2**31), np.ravel(t.max(axis=dim)),
                    np.ravel(t.min(axis=dim))]
        out += [[x[63]], [x[0]], x[:128].reshape(8, 16)[:, -1], x[:128].reshape(8, 16)[:, 0]]
        flat = np.concatenate([np.ravel(np.asarray(v)) for v in out]).astype(np.int32)
        full = np.zeros(4096, np.int32)
        full[: flat.size] = flat
        return {1: full}

    cases.append(Case("reduce_i32", (ti.ByPtr(I32), ti.ByPtr(I32)), ibody, iargs, (Out(1, EXACT),), expect=iexpect))

    def fargs():
        r = C.rng(182)
        x = C.spread_floats(1024, F32, 183, -10, 10)
        x[5] = np.nan  # max / min without propagate_nan: a NaN lane is passed over
        x[6:9] = [np.inf, -np.inf, 3e38]
        y = r.uniform(-4, 4, 1024).astype(np.float32)  # the sum's corpus: finite
        return [x, y, np.zeros(1024 + 64, np.float32), np.zeros(1024 + 64, np.float32)]

    def fbody():
        p, q, om, os = ti.param(F32, 0), ti.param(F32, 1), ti.param(F32, 2), ti.param(F32, 3)
        off = 0
        for shape, dim in ((1024,), -1), ((32, 32), 0), ((32, 32), 1):
            t, s = ti.load(p, _z(), list(shape)), ti.load(q, _z(), list(shape))
            for f, o in ((ti.reduce_max, om), (ti.reduce_min, om), (ti.reduce_sum, os)):
                r = f(t if f is not ti.reduce_sum else s, dim)
                r = ti.broadcast(r, [1]) if r.shape == [] else r
                ti.store(o, ti.idx_const(off if o is os else off + (32 if f is ti.reduce_min else 0)), r)
            off += 64

    def fexpect(args, launch=0):
        x, y = _f64(args[0]), _f64(args[1])
        om, os = np.zeros(1088), np.zeros(1088)
        off = 0
        for shape, dim in ((1024,), -1), ((32, 32), 0), ((32, 32), 1):
            t, s = x.reshape(shape), y.reshape(shape)
            mx, mn = np.ravel(np.fmax.reduce(t, axis=dim)), np.ravel(np.fmin.reduce(t, axis=dim))
            om[off: off + mx.size] = mx
            om[off + 32: off + 32 + mn.size] = mn
            sm = np.ravel(s.sum(axis=dim))
            os[off: off + sm.size] = sm
            off += 64
        return {2: om.astype(np.float32), 3: os.astype(np.float32)}

    def fbound(args):
        y = _f64(args[1])
        b = np.zeros(1088)
        off = 0
        for shape, dim in ((1024,), -1), ((32, 32), 0), ((32, 32), 1):
            v = np.ravel(_sum_bound(y.reshape(shape), dim))
            b[off: off + v.size] = v
            off += 64
        return b

    cases.append(Case("reduce_f32", (ti.ByPtr(F32),) * 4, fbody, fargs,
                      (Out(2, EXACT), Out(3, Judge("tol"), bound=fbound)), expect=fexpect))
    return Family("reduce", "mixed", "integer sums, max and min exact (sums wrap; every order agrees); float max "
                  "/ min exact (a NaN lane passed over); float sums within (n - 1) u sum|x| (u = 2^-24), the bound "
                  "of every summation order; a body answering the element answers the LAST lane and one answering "
                  "the accumulator the FIRST (the measured accumulator-first order); shapes down to [1], [2] and "
                  "[4, 2] along 1, where an identity would show", ("reduce", "yield"), cases)


def _scan_take(fn_kind):
    """A non-commutative scan body: answer the element, or answer the accumulator."""

    def fn(a, x):
        return x if fn_kind == "elem" else a
    return fn


def _scan():
    cases = []

    def iargs():
        x = C.fill(C.INT32_SPECIALS, 1024, C.int32_spread(1024, 190))
        return [x, np.zeros(10 * 1024, np.int32)]

    def ibody():
        p, o = ti.param(I32, 0), ti.param(I32, 1)
        t = ti.load(p, _z(), [1024])
        t2 = ti.load(p, _z(), [16, 64])
        outs = [ti.scan_sum(t), ti.scan_sum(t, reverse=True), ti.reshape(ti.scan_sum(t2, 0), [1024]),
                ti.reshape(ti.scan_sum(t2, 1, reverse=True), [1024])]
        for kind in ("elem", "acc"):
            for rev in (False, True):
                outs.append(ti.d_scan(t, 0, _scan_take(kind), reverse=rev))
        outs.append(ti.reshape(ti.d_scan(t2, 0, lambda a, x: x, dim=0, reverse=True), [1024]))
        outs.append(ti.reshape(ti.d_scan(t2, 0, lambda a, x: a, dim=1), [1024]))
        for k, r in enumerate(outs):
            ti.store(o, ti.idx_const(1024 * k), r)

    def iexpect(args, launch=0):
        x = args[0].astype(np.int64)
        t2 = x.reshape(16, 64)

        def wrap(v):
            return (v + 2**31) % 2**32 - 2**31

        outs = [wrap(np.cumsum(x)), wrap(np.cumsum(x[::-1])[::-1]), wrap(np.cumsum(t2, axis=0)).ravel(),
                wrap(np.cumsum(t2[:, ::-1], axis=1)[:, ::-1]).ravel(), x, x, np.full(1024, x[0]),
                np.full(1024, x[-1]), t2.ravel(), np.repeat(t2[:, :1], 64, axis=1).ravel()]
        return {1: np.concatenate(outs).astype(np.int32)}

    labels = ("sum", "sum_rev", "sum_dim0", "sum_dim1_rev", "take_elem", "take_elem_rev", "take_acc",
              "take_acc_rev", "take_elem_dim0_rev", "take_acc_dim1")
    cases.append(Case("scan_i32", (ti.ByPtr(I32), ti.ByPtr(I32)), ibody, iargs,
                      (Out(1, EXACT, labels=labels, block=1024),), expect=iexpect))

    def fargs():
        return [C.rng(191).uniform(-4, 4, 1024).astype(np.float32), np.zeros(2048, np.float32)]

    def fbody():
        t = ti.load(ti.param(F32, 0), _z(), [1024])
        o = ti.param(F32, 1)
        ti.store(o, _z(), ti.scan_sum(t))
        ti.store(o, ti.idx_const(1024), ti.scan_sum(t, reverse=True))

    def fexpect(args, launch=0):
        x = _f64(args[0])
        return {1: np.concatenate([np.cumsum(x), np.cumsum(x[::-1])[::-1]]).astype(np.float32)}

    def fbound(args):
        a = np.abs(_f64(args[0]))
        fw = np.arange(1024) * U32 * np.cumsum(a)
        bw = (np.arange(1024)[::-1] * U32 * np.cumsum(a[::-1])[::-1])
        return np.concatenate([fw, bw]) + 1e-45

    cases.append(Case("scan_f32", (ti.ByPtr(F32), ti.ByPtr(F32)), fbody, fargs,
                      (Out(1, Judge("tol"), bound=fbound, labels=("sum", "sum_rev"), block=1024),), expect=fexpect))
    return Family("scan", "mixed", "integer prefix sums exact (wrapping), forward and reversed, along either "
                  "dimension; a body answering the element answers the tile itself and one answering the "
                  "accumulator the first (last, reversed) lane everywhere: the accumulator-first order; float "
                  "prefix sums within j u sum_{i<=j}|x_i| (the device's order is not a left fold)", ("scan",), cases)


def _recurrence(ca, cb, ea, eb):
    """(c, v) . (c', v') = (c c', c' v + v'): h[t] = a[t] h[t-1] + x[t]."""
    if ca.dtype == "i32":
        return ti.mul_i(ca, ea), ti.add_i(ti.mul_i(ea, cb), eb)
    return ca * ea, ea * cb + eb


def _scan2():
    cases = []
    n = 1024

    def iargs():
        r = C.rng(200)
        a = r.choice(np.array([1, -1, 2, 3, -5, 7, 1, 1], np.int32), n)
        x = C.int32_spread(n, 201)
        return [a, x, np.zeros(4 * n, np.int32)]

    def body_for(fmt):
        def body():
            a = ti.load(ti.param(fmt, 0), _z(), [n])
            x = ti.load(ti.param(fmt, 1), _z(), [n])
            o = ti.param(fmt, 2)
            one, zero = 1, 0
            c, h = ti.d_scan2(a, x, one, zero, _recurrence)
            cr, hr = ti.d_scan2(a, x, one, zero, _recurrence, reverse=True)
            for k, t in enumerate((c, h, cr, hr)):
                ti.store(o, ti.idx_const(k * n), t)
        return body

    def iexpect(args, launch=0):
        a, x = args[0].astype(np.int64).tolist(), args[1].astype(np.int64).tolist()

        def run(a, x):
            c, h, cs, hs = 1, 0, [], []
            for ai, xi in zip(a, x):
                c, h = X.wrap(c * ai), X.wrap(ai * h + xi)
                cs.append(c)
                hs.append(h)
            return cs, hs

        c, h = run(a, x)
        cr, hr = run(a[::-1], x[::-1])
        return {2: np.array(c + h + cr[::-1] + hr[::-1], dtype=np.int64).astype(np.int32)}

    cases.append(Case("scan2_i32", (ti.ByPtr(I32),) * 3, body_for(I32), iargs,
                      (Out(2, EXACT, labels=("coef", "h", "coef_rev", "h_rev"), block=n),), expect=iexpect))

    def fargs():
        r = C.rng(202)
        a = r.choice(np.array([1.0, -1.0, 0.5, -0.5, 1.0, 1.0, -1.0, 0.75], np.float32), n)
        x = r.uniform(-2, 2, n).astype(np.float32)
        return [a, x, np.zeros(4 * n, np.float32)]

    def fexpect(args, launch=0):
        a, x = _f64(args[0]), _f64(args[1])

        def run(a, x):
            c, h, cs, hs = 1.0, 0.0, [], []
            for ai, xi in zip(a, x):
                c, h = c * ai, ai * h + xi
                cs.append(c)
                hs.append(h)
            return np.array(cs), np.array(hs)

        c, h = run(a, x)
        cr, hr = run(a[::-1], x[::-1])
        return {2: np.concatenate([c, h, cr[::-1], hr[::-1]]).astype(np.float32)}

    def fbound(args):
        x = np.abs(_f64(args[1]))
        t = np.arange(1, n + 1)
        fw = 4 * t * U32 * np.cumsum(x)
        bw = (4 * t * U32 * np.cumsum(x[::-1]))[::-1]
        c = np.zeros(n) + 4 * t * U32  # |c| <= 1: products of coefficients in [-1, 1]
        return np.concatenate([c, fw, c[::-1], bw]) + 1e-45

    cases.append(Case("scan2_f32", (ti.ByPtr(F32),) * 3, body_for(F32), fargs,
                      (Out(2, Judge("tol"), bound=fbound, labels=("coef", "h", "coef_rev", "h_rev"), block=n),),
                      expect=fexpect))
    return Family("scan2", "mixed", "the two-operand scan as the first-order linear recurrence h[t] = a[t] "
                  "h[t-1] + x[t] through the affine composition (c, v).(c', v') = (c c', c' v + v'), forward and "
                  "reversed: exact over i32 (the composition is associative modulo 2^32), within 4 t u sum|x| over "
                  "f32 with coefficients in [-1, 1]", ("scan",), cases)


# ---- pointers: gather, scatter, the conversions --------------------------------------------------


def _pointers():
    n = 256

    def args():
        r = C.rng(210)
        src = C.spread_floats(n, F32, 211)
        perm = r.permutation(n).astype(np.int32)
        wild = np.where(r.random(n) < 0.3, r.integers(n, 10 * n, n), r.integers(0, n, n)).astype(np.int32)
        wild[:4] = [-1, -(2**31), n, 2**31 - 1]
        isrc = C.int32_spread(n, 212)
        return [src, perm, wild, isrc, np.zeros(4 * n, np.float32), np.full(n, -1.0, np.float32),
                np.full(n, -1.0, np.float32), np.zeros(2 * n, np.int32)]

    params = (ti.ByPtr(F32), ti.ByPtr(I32), ti.ByPtr(I32), ti.ByPtr(I32), ti.ByPtr(F32), ti.ByPtr(F32),
              ti.ByPtr(F32), ti.ByPtr(I32))

    def body():
        src, perm_p, wild_p, isrc = ti.param(F32, 0), ti.param(I32, 1), ti.param(I32, 2), ti.param(I32, 3)
        o, sc, msc, io = ti.param(F32, 4), ti.param(F32, 5), ti.param(F32, 6), ti.param(I32, 7)
        perm, wild = ti.load(perm_p, _z(), [n]), ti.load(wild_p, _z(), [n])
        ok = ti.and_mask(ti.ge_i(wild, ti.i_const(0)), ti.lt_i(wild, ti.i_const(n)))
        ti.store(o, _z(), ti.gather(src, perm))
        ti.store(o, ti.idx_const(n), ti.gather(src, wild, mask=ok, pad=-99.5))
        ps = ti.ptr_offset(ti.ptrs(src, [n]), ti.subi(ti.i_const(n - 1), ti.arange(n)))
        ti.store(o, ti.idx_const(2 * n), ti.load_ptrs(ps))  # reversed through a pointer tile
        addr = ti.ptr_to_int(ti.ptrs(src, [n]))
        moved = ti.int_to_ptr(ti.add_i64(addr, ti.i64_const(4 * 3)), F32)  # 3 elements on, in bytes
        shifted = ti.ptr_offset(moved, ti.and_i(ti.arange(n), ti.i_const(127)))
        ti.store(o, ti.idx_const(3 * n), ti.load_ptrs(shifted))
        v = ti.load(src, _z(), [n])
        ti.scatter(sc, perm, v)
        ti.scatter(msc, wild, v, mask=ok)
        ti.store(io, _z(), ti.load_ptrs(ti.ptr_offset(ti.ptr_to_ptr(ti.ptrs(src, [n]), I32), ti.arange(n))))
        ti.store(io, ti.idx_const(n), ti.gather(isrc, perm))

    def expect(args, launch=0):
        src, perm, wild, isrc = args[:4]
        ok = (wild >= 0) & (wild < n)
        g2 = np.where(ok, src[np.where(ok, wild, 0)], np.float32(-99.5))
        sc = np.full(n, -1.0, np.float32)
        sc[perm] = src
        msc = np.full(n, -1.0, np.float32)
        # several lanes may name one element: the mask's lanes write in lane order here, so compare only
        # elements named once (see lanes below)
        for i in np.nonzero(ok)[0]:
            msc[wild[i]] = src[i]
        return {4: np.concatenate([src[perm], g2, src[::-1], src[3 + (np.arange(n) & 127)]]).astype(np.float32),
                5: sc, 6: msc, 7: np.concatenate([src.view(np.int32), isrc[perm]]).astype(np.int32)}

    def once(args):
        wild = args[2]
        ok = (wild >= 0) & (wild < n)
        counts = np.bincount(wild[ok], minlength=n)
        return counts[:n] <= 1

    case = Case("pointers", params, body, args, (Out(4, BITS, labels=("gather", "gather_masked", "ptr_offset",
                                                                      "int_to_ptr"), block=n),
                                                 Out(5, BITS), Out(6, BITS, lanes=once), Out(7, EXACT)),
                expect=expect, inputs=(0, 1, 2, 3))
    return Family("pointers", "exact", "bit for bit: gather and scatter through a permutation, masked ones through "
                  "indices out of range (a masked lane reads the pad and writes nothing; an element two masked-in "
                  "lanes name is not compared: the lanes of one store are unordered), a pointer tile walked "
                  "backwards, an address taken apart (ptr_to_int), moved 12 bytes and rebuilt (int_to_ptr), and "
                  "f32 memory read as i32 (ptr_to_ptr)", ("offset", "load_ptr_tko", "store_ptr_tko", "ptr_to_int",
                                                          "int_to_ptr", "ptr_to_ptr", "iota"), [case])


# ---- atomics -------------------------------------------------------------------------------------

ATOMIC_MODES = ("and", "or", "xor", "add", "max", "min", "umax", "umin", "xchg")


def _atomics():
    cases = []

    def hargs():
        r = C.rng(220)
        return [r.integers(0, 16, 1024).astype(np.int32), np.zeros(16, np.int32)]

    def hbody():
        d, h = ti.param(I32, 0), ti.param(I32, 1)
        ti.atomic_add(h, ti.load(d, ti.tile_at(ti.block_id(0), 256), [256]), 1)

    cases.append(Case("histogram", (ti.ByPtr(I32), ti.ByPtr(I32)), hbody, hargs, (Out(1, EXACT),), grid=(4,),
                      expect=lambda args, launch=0: {1: np.bincount(args[0], minlength=16).astype(np.int32)}))

    m = len(ATOMIC_MODES)

    def margs():
        r = C.rng(221)
        buf = C.fill(C.INT32_SPECIALS, 16 * m, C.int32_spread(16 * m, 222))
        vals = C.fill(C.INT32_SPECIALS[::-1], 16 * m, C.int32_spread(16 * m, 223))
        perm = r.permutation(16).astype(np.int32)
        lanes_on = (np.arange(16) < 12).astype(np.int32)
        return [buf, vals, np.zeros(16 * m, np.int32), perm, lanes_on]

    def mbody():
        b, v, o = ti.param(I32, 0), ti.param(I32, 1), ti.param(I32, 2)
        p = ti.load(ti.param(I32, 3), _z(), [16])
        on = ti.int_to_mask(ti.load(ti.param(I32, 4), _z(), [16]))
        for k, mode in enumerate(ATOMIC_MODES):
            base = ti.idx_const(16 * k)
            r = ti.atomic_rmw(b, mode, ti.addi(p, ti.i_const(16 * k)), ti.load(v, base, [16]), mask=on)
            ti.store(o, base, r)

    def apply(mode, old, v):
        uo, uv = old & 0xFFFFFFFF, v & 0xFFFFFFFF
        return X.wrap({"and": old & v, "or": old | v, "xor": old ^ v, "add": old + v, "max": max(old, v),
                       "min": min(old, v), "umax": max(uo, uv), "umin": min(uo, uv), "xchg": v}[mode])

    def mexpect(args, launch=0):
        buf, vals, _, perm, on = (a.astype(np.int64) for a in args)
        mem, olds = buf.copy(), np.zeros(16 * m, np.int64)
        for k, mode in enumerate(ATOMIC_MODES):
            for lane in range(16):
                if on[lane]:
                    at = 16 * k + perm[lane]
                    olds[16 * k + lane] = mem[at]
                    mem[at] = apply(mode, int(mem[at]), int(vals[16 * k + lane]))
        return {0: mem.astype(np.int32), 2: olds.astype(np.int32)}

    on_lanes = np.tile(np.arange(16) < 12, m)
    cases.append(Case("rmw_modes", (ti.ByPtr(I32),) * 5, mbody, margs,
                      (Out(0, EXACT, labels=ATOMIC_MODES, block=16), Out(2, EXACT, lanes=on_lanes,
                                                                        labels=ATOMIC_MODES, block=16)),
                      expect=mexpect, inputs=(0, 1, 3, 4),
                      note="old values of masked-off lanes are not compared (the device answers nothing defined)"))

    cmodes = ("add", "max", "min", "umax", "umin", "and", "or", "xor")

    def cargs():
        r = C.rng(224)
        return [C.fill(C.INT32_SPECIALS, 8 * len(cmodes), C.int32_spread(64, 225)),
                C.int32_spread(256, 226), r.integers(0, 8, 256).astype(np.int32)]

    def cbody():
        b, v = ti.param(I32, 0), ti.param(I32, 1)
        idx = ti.load(ti.param(I32, 2), _z(), [256])
        vals = ti.load(v, _z(), [256])
        for k, mode in enumerate(cmodes):
            ti.atomic_rmw(b, mode, ti.addi(idx, ti.i_const(8 * k)), vals)

    def cexpect(args, launch=0):
        buf, vals, idx = (a.astype(np.int64) for a in args)
        mem = buf.copy()
        for k, mode in enumerate(cmodes):
            for lane in range(256):
                at = 8 * k + idx[lane]
                mem[at] = apply(mode, int(mem[at]), int(vals[lane]))
        return {0: mem.astype(np.int32)}

    cases.append(Case("rmw_colliding", (ti.ByPtr(I32),) * 3, cbody, cargs, (Out(0, EXACT, labels=cmodes, block=8),),
                      expect=cexpect, inputs=(0, 1, 2)))

    def sargs():
        r = C.rng(227)
        ib = C.fill(C.INT32_SPECIALS, 32, C.int32_spread(32, 228))
        icmp = np.where(np.arange(32) % 2 == 0, ib, ib ^ 1).astype(np.int32)
        pats = np.array([0x7FC00000, 0x7FC00001, 0x80000000, 0, 0x3F800000, 0xFF800000], np.int64)
        fb = np.concatenate([pats.astype(np.uint32).view(np.float32), C.spread_floats(26, F32, 229)])
        fcmp = fb.copy()
        fcmp[1] = np.uint32(0x7FC00000).view(np.float32)  # another NaN: no match
        fcmp[2] = np.float32(0.0)  # +0 against -0: no match (bits)
        fcmp[3] = np.float32(0.0)  # NaN-free match
        fcmp[10:20] = fcmp[10:20] * np.float32(2)
        return [ib, icmp, C.int32_spread(32, 230), np.zeros(32, np.int32), fb, fcmp,
                r.uniform(-5, 5, 32).astype(np.float32), np.zeros(32, np.float32), r.permutation(32).astype(np.int32),
                np.zeros(64, np.float32), (np.arange(256) % 16).astype(np.float32) / 4]

    sparams = (ti.ByPtr(I32),) * 4 + (ti.ByPtr(F32),) * 4 + (ti.ByPtr(I32), ti.ByPtr(F32), ti.ByPtr(F32))

    def sbody():
        perm = ti.load(ti.param(I32, 8), _z(), [32])
        ib, fb = ti.param(I32, 0), ti.param(F32, 4)
        r = ti.atomic_cas(ib, perm, ti.gather(ti.param(I32, 1), perm), ti.gather(ti.param(I32, 2), perm))
        ti.store(ti.param(I32, 3), _z(), r)
        r = ti.atomic_cas(fb, perm, ti.gather(ti.param(F32, 5), perm), ti.gather(ti.param(F32, 6), perm))
        ti.store(ti.param(F32, 7), _z(), r)
        vals = ti.load(ti.param(F32, 10), _z(), [256])
        ti.atomic_rmw(ti.param(F32, 9), "addf", ti.and_i(ti.arange(256), ti.i_const(63)), vals)

    def sexpect(args, launch=0):
        ib, icmp, ival, _, fb, fcmp, fval, _, perm, acc, vals = args
        mem_i, old_i = ib.copy(), np.zeros(32, np.int32)
        mem_f, old_f = fb.copy(), np.zeros(32, np.float32)
        for lane, at in enumerate(perm):
            old_i[lane] = mem_i[at]
            if mem_i[at] == icmp[at]:
                mem_i[at] = ival[at]
            old_f[lane] = mem_f[at]
            if mem_f[at:at + 1].view(np.int32)[0] == fcmp[at:at + 1].view(np.int32)[0]:
                mem_f[at] = fval[at]
        add = acc.astype(np.float64).copy()
        np.add.at(add, np.arange(256) & 63, _f64(vals))
        return {0: mem_i, 3: old_i, 4: mem_f, 7: old_f, 9: add.astype(np.float32)}

    cases.append(Case("cas_addf", sparams, sbody, sargs, (Out(0, EXACT), Out(3, EXACT), Out(4, BITS), Out(7, BITS),
                                                        Out(9, EXACT)),
                      expect=sexpect, inputs=(0, 1, 2, 4, 5, 6, 8, 9, 10)))
    return Family("atomics", "exact", "exact: colliding integer adds (a histogram over 4 blocks) and every "
                  "order-independent mode on colliding lanes compared as final memory; every mode through a "
                  "permutation compared as final memory and old values (masked lanes' old values excepted); cas "
                  "on the BITS (NaN payloads, -0 against +0); colliding addf of values whose every partial sum is "
                  "exact", ("atomic_rmw_tko", "atomic_cas_tko", "get_tile_block_id"), cases)


# ---- views ---------------------------------------------------------------------------------------


def _views():
    cases = []
    R, Cc = 10, 12  # a tensor whose tiles are cut by both edges

    def pargs():
        x = np.arange(R * Cc, dtype=np.float32).reshape(R, Cc) - 50
        return [x, np.full((3, 2, 4, 8), -1.0, np.float32), np.full((R, Cc), -7.0, np.float32),
                np.full((3, 2, 4, 8), -1.0, np.float32), np.array([R, 0, 0, 0, 0, 0, 0, 0], np.int32)]

    def pbody():
        src, out, back, out2, dims = (ti.param(F32, 0), ti.param(F32, 1), ti.param(F32, 2), ti.param(F32, 3),
                                      ti.param(I32, 4))
        i, j = ti.block_id(0), ti.block_id(1)
        tv = ti.tensor_view(src, 0, [R, Cc], [Cc, 1])
        pv = ti.partition_view(tv, [4, 8], padding=ti.PadNan)
        t = ti.load_view(pv, [i, j])
        cell = ti.idx_add(ti.idx_mul(i, ti.idx_const(2)), j)
        ti.store(out, ti.idx_mul(cell, ti.idx_const(32)), ti.reshape(t, [32]))
        ti.store_view(ti.partition_view(ti.tensor_view(back, 0, [R, Cc], [Cc, 1]), [4, 8]), [i, j], t * 2.0)
        tt = ti.load_view(ti.partition_view(tv, [8, 4], dim_map=[1, 0], padding=ti.PadNegInf), [j, i])
        ti.store(out2, ti.idx_mul(cell, ti.idx_const(32)), ti.reshape(tt, [32]))
        rows = ti.idx_of(ti.load(dims, _z(), [1]).reshape([]))  # R, from memory: a dynamic extent
        dyn = ti.tensor_view_dyn(src, 0, [ti.Dyn(rows), ti.Fixed(Cc)], [Cc, 1])
        d = [ti.index_space_dim(pv, 0), ti.index_space_dim(pv, 1), ti.tensor_dim(dyn, 0), ti.tensor_dim(dyn, 1)]
        for k, v in enumerate(d):  # every block writes the same four numbers
            ti.store(dims, ti.idx_const(4 + k), ti.broadcast(ti.idx_as_tile(v), [1]))

    def pexpect(args, launch=0):
        x = _f64(args[0])
        pad = np.full((12, 16), np.nan)
        pad[:R, :Cc] = x
        out = np.zeros((3, 2, 4, 8))
        for i in range(3):
            for j in range(2):
                out[i, j] = pad[4 * i: 4 * i + 4, 8 * j: 8 * j + 8]
        back = x * 2
        out2 = np.zeros((3, 2, 4, 8))
        for i in range(3):
            for j in range(2):
                out2[i, j] = _transposed_tile(x, i, j)
        return {1: out.astype(np.float32), 2: back.astype(np.float32), 3: out2.astype(np.float32),
                4: np.array([R, 0, 0, 0, 3, 2, R, Cc], np.int32)}

    cases.append(Case("partition", (ti.ByPtr(F32),) * 4 + (ti.ByPtr(I32),), pbody, pargs,
                      (Out(1, EXACT), Out(2, EXACT), Out(3, EXACT), Out(4, EXACT)), grid=(3, 2), expect=pexpect,
                      inputs=(0, 4)))

    def sargs():
        return [np.arange(128, dtype=np.float32).reshape(16, 8), np.zeros(5 * 16, np.float32),
                np.full((16, 8), -1.0, np.float32), np.zeros(2, np.int32)]

    SPOTS = ((0, 0), (1, 1), (7, 0), (3, 1), (6, 1))

    def sbody():
        src, o, back, g = ti.param(F32, 0), ti.param(F32, 1), ti.param(F32, 2), ti.param(I32, 3)
        sv = ti.strided_view(ti.tensor_view(src, 0, [16, 8], [8, 1]), [4, 4], [2, 4], padding=ti.PadNan)
        for k, (i, j) in enumerate(SPOTS):
            ti.store(o, ti.idx_const(16 * k), ti.reshape(ti.load_view(sv, [i, j]), [16]))
        ti.store(g, _z(), ti.broadcast(ti.idx_as_tile(ti.index_space_dim(sv, 0)), [1]))
        ti.store(g, ti.idx_const(1), ti.broadcast(ti.idx_as_tile(ti.index_space_dim(sv, 1)), [1]))
        gv = ti.gather_scatter_view(ti.tensor_view(src, 0, [16, 8], [8, 1]), [4, 8], 0, padding=ti.PadNegInf)
        bv = ti.gather_scatter_view(ti.tensor_view(back, 0, [16, 8], [8, 1]), [4, 8], 0)
        idx = ti.add_i(ti.mul_i(ti.arange(4), ti.i_const(5)), ti.i_const(1))  # rows 1, 6, 11, 16 (past the end)
        t = ti.load_gather(gv, [ti.Rows(idx), ti.At(0)])
        ti.store_gather(bv, [ti.Rows(idx), ti.At(0)], t)

    def sexpect(args, launch=0):
        x = _f64(args[0])
        pad = np.full((20, 8), np.nan)
        pad[:16] = x
        o = np.concatenate([pad[2 * i: 2 * i + 4, 4 * j: 4 * j + 4].ravel() for i, j in SPOTS])
        back = np.full((16, 8), -1.0)
        for r in (1, 6, 11):
            back[r] = x[r]
        return {1: o.astype(np.float32), 2: back.astype(np.float32), 3: np.array([8, 2], np.int32)}

    cases.append(Case("strided_gather", (ti.ByPtr(F32),) * 3 + (ti.ByPtr(I32),), sbody, sargs,
                      (Out(1, EXACT), Out(2, EXACT), Out(3, EXACT)), expect=sexpect, inputs=(0,)))

    def rargs():
        r = C.rng(240)
        return [r.integers(-50, 50, (8, 8)).astype(np.int32), C.int32_spread(64, 241).reshape(4, 16)]

    def rbody():
        t = ti.load(ti.param(I32, 1), ti.tile_at(ti.block_id(0), 16), [4, 4])
        ti.atomic_red_view(ti.partition_view(ti.tensor_view(ti.param(I32, 0), 0, [8, 8], [8, 1]), [4, 4]), [1, 0],
                           "add", "device", t)

    def rexpect(args, launch=0):
        acc, v = args[0].astype(np.int64), args[1].astype(np.int64)
        acc[4:8, 0:4] += v.reshape(4, 4, 4).sum(axis=0)
        return {0: ((acc + 2**31) % 2**32 - 2**31).astype(np.int32)}

    cases.append(Case("atomic_red_view", (ti.ByPtr(I32), ti.ByPtr(I32)), rbody, rargs, (Out(0, EXACT),), grid=(4,),
                      expect=rexpect, inputs=(0, 1)))
    return Family("views", "exact", "exact: partition views cut by both edges (NaN / -inf padding where a tile "
                  "runs past the tensor, stores past it masked), a transposing dim_map, a strided view whose tiles "
                  "overlap, a gather / scatter view with a row past the end, an atomic reduction of 4 blocks "
                  "into one tile, and the index space and tensor extents the device answers",
                  ("make_tensor_view", "make_partition_view", "make_strided_view", "make_gather_scatter_view",
                   "load_view_tko", "store_view_tko", "atomic_red_view_tko", "get_index_space_shape",
                   "get_tensor_shape", "get_tile_block_id"), cases)


def _transposed_tile(x, i, j):
    """Tile [j, i] of the [8, 4]-tile cut of x with dim_map [1, 0] (rows of the tile along x's
    columns), -inf past the edges, as the [4, 8] block of out2 for block (i, j)."""
    R, Cc = x.shape
    t = np.full((8, 4), -np.inf)
    for a in range(8):
        for b in range(4):
            r, c = 4 * i + b, 8 * j + a
            if r < R and c < Cc:
                t[a, b] = x[r, c]
    return t.reshape(4, 8)


# ---- globals, alloca -----------------------------------------------------------------------------

TABLE = [0.5, -1.25, 3.0, 7.75, -0.0, 1e-3, 100.0, -2.5]


def _globals():
    def args():
        return [np.zeros(8, np.float32), np.zeros(1, np.int32)]

    def body():
        o, h = ti.param(F32, 0), ti.param(I32, 1)
        ti.d_global("table", F32, TABLE)
        ti.d_global("hits", I32, [40], align=16)
        t = ti.ptr_offset(ti.global_ptrs("table", F32, [8]), ti.arange(8))
        ti.store(o, _z(), ti.load_ptrs(t))
        ti.store_ptrs(t, ti.load_ptrs(t) * 2.0 + 1.0)
        hp = ti.global_ptrs("hits", I32, [])
        k = ti.addi(ti.load_ptrs(hp), ti.i_const(1))
        ti.store_ptrs(hp, k)
        ti.store(h, _z(), ti.broadcast(k, [1]))

    def expect(args, launch=0):
        t = np.array(TABLE, np.float32).astype(np.float64)
        for _ in range(launch):
            t = t * 2 + 1
        return {0: t.astype(np.float32), 1: np.array([41 + launch], np.int32)}

    case = Case("globals", (ti.ByPtr(F32), ti.ByPtr(I32)), body, args, (Out(0, EXACT), Out(1, EXACT)), launches=2,
                expect=expect, corpus=len(TABLE) + 1)
    return Family("globals", "exact", "exact, over two launches of ONE loaded module: the first reads the declared "
                  "values, the second what the first wrote", ("global", "get_global"), [case])


def _alloca():
    n = 32

    def args():
        return [C.spread_floats(4 * n, F32, 250), C.spread_floats(4 * n, F32, 251), np.zeros(8 * n, np.float32)]

    def body():
        x, y, o = ti.param(F32, 0), ti.param(F32, 1), ti.param(F32, 2)
        base = ti.tile_at(ti.block_id(0), n)
        a1 = ti.alloca_ptrs(F32, n, 16, [])
        a2 = ti.alloca_ptrs(F32, n, 16, [], shared=True)
        ti.store_ptrs(ti.ptr_offset(a1, ti.arange(n)), ti.load(x, base, [n]))
        ti.store_ptrs(ti.ptr_offset(a2, ti.arange(n)), ti.load(y, base, [n]))
        back = ti.subi(ti.i_const(n - 1), ti.arange(n))
        ti.store(o, base, ti.load_ptrs(ti.ptr_offset(a1, back)))
        ti.store(o, ti.idx_add(base, ti.idx_const(4 * n)), ti.load_ptrs(ti.ptr_offset(a2, back)))

    def expect(args, launch=0):
        x, y = args[0].reshape(4, n), args[1].reshape(4, n)
        return {2: np.concatenate([x[:, ::-1].ravel(), y[:, ::-1].ravel()])}

    case = Case("alloca", (ti.ByPtr(F32),) * 3, body, args, (Out(2, EXACT),), grid=(4,), expect=expect)
    return Family("alloca", "exact", "exact: two allocas a block (one private, one shared), each a region of its "
                  "own, written and read back reversed, over 4 blocks", ("alloca",), [case])


# ---- print, assert -------------------------------------------------------------------------------


def _print():
    def args():
        return [np.array([-5, 7, -1, 255], np.int32), np.array([3.5, -0.0625, 1e-5, 2.0], np.float32)]

    def body():
        p, q = ti.param(I32, 0), ti.param(F32, 1)
        iv = [ti.reduce_sum(ti.load(p, ti.idx_const(k), [1])) for k in range(4)]
        fv = [ti.reduce_sum(ti.load(q, ti.idx_const(k), [1])) for k in range(4)]
        ti.d_print("ints %d %d %u %x\n", iv)
        ti.d_print("floats %f %.3e %g %+.1f\n", fv)
        ti.d_print("oct %o hex %#X char %c%%\n", [iv[3], iv[3], ti.i_const(65)])
        ti.d_print("no arguments\n")

    def text(args):
        return ("ints -5 7 4294967295 ff\nfloats 3.500000 -6.250e-02 1e-05 +2.0\noct 377 hex 0XFF char A%\n"
                "no arguments\n")

    case = Case("print", (ti.ByPtr(I32), ti.ByPtr(F32)), body, args, (), mode="print", expect_text=text,
                inputs=(0, 1))
    return Family("print", "exact line", "the bytes one block prints, byte for byte against C's printf of the same "
                  "arguments (rank-0 arguments only; a wide tile's print is not atomic and has no one answer)",
                  ("print_tko",), [case])


def _assert():
    def args():
        return [np.arange(64, dtype=np.int32), np.zeros(64, np.int32)]

    def make(limit):
        def body():
            x, o = ti.param(I32, 0), ti.param(I32, 1)
            v = ti.load(x, _z(), [64])
            ti.d_assert(ti.lt_i(v, ti.i_const(limit)), "v < limit")
            ti.store(o, _z(), ti.add_i(v, ti.i_const(1)))
        return body

    ok = Case("assert_holds", (ti.ByPtr(I32), ti.ByPtr(I32)), make(64), args, (Out(1, EXACT),), mode="assert",
              expect=lambda args, launch=0: {1: args[0] + 1}, note="must NOT fail")
    bad = Case("assert_fires", (ti.ByPtr(I32), ti.ByPtr(I32)), make(40), args, (), mode="assert",
               note="must fail (CUDA_ERROR_ASSERT), in a process of its own: the error is sticky")
    return Family("assert", "launch must fail", "a launch whose assertion holds runs and answers; one whose "
                  "assertion fails must fail with the driver's assert error, each in a process of its own",
                  ("assert",), [ok, bad])


# ---- control flow --------------------------------------------------------------------------------


def _control():
    def args():
        return [C.int32_spread(64, 260) >> 8, np.zeros(4 * 8, np.int32), np.zeros(8, np.int32),
                np.zeros(8, np.int32), np.full(8, -1, np.int32)]

    def body():
        x, o, a, b, rr = (ti.param(I32, k) for k in range(5))
        bid = ti.block_id(0)
        base = ti.tile_at(bid, 8)
        acc = ti.carry(ti.load(x, base, [8]))
        for j in ti.d_range(0, 3):  # acc += x shifted by j * 8 (mod 64)
            off = ti.idx_rem(ti.idx_add(base, ti.idx_mul(j, ti.idx_const(8))), ti.idx_const(64))
            ti.set(acc, ti.add_i(ti.get(acc), ti.load(x, off, [8])))
        even = ti.idx_eq(ti.idx_rem(bid, ti.idx_const(2)), ti.idx_const(0))
        ti.d_if(even, lambda: ti.set(acc, ti.mul_i(ti.get(acc), ti.i_const(3))),
                lambda: ti.set(acc, ti.neg_i(ti.get(acc))))
        ti.store(o, base, ti.get(acc))
        steps = ti.carry(ti.i_const(0))
        v = ti.carry(ti.add_i(ti.idx_as_tile(bid), ti.i_const(27)))

        def collatz():
            cur = ti.get(v)
            odd = ti.eq_i(ti.and_i(cur, ti.i_const(1)), ti.i_const(1))
            up = ti.add_i(ti.mul_i(cur, ti.i_const(3)), ti.i_const(1))
            ti.set(v, ti.select(odd, up, ti.shr_i(cur, ti.i_const(1))))
            ti.set(steps, ti.add_i(ti.get(steps), ti.i_const(1)))
            return ti.eq_i(cur, ti.i_const(1))

        ti.d_loop(collatz)
        one = ti.tile_at(bid, 1)
        ti.d_fork2(lambda: ti.store(a, one, ti.broadcast(ti.get(steps), [1])),
                   lambda: ti.store(b, one, ti.broadcast(ti.idx_as_tile(ti.num_blocks(0)), [1])))
        ti.d_return_if(ti.idx_eq(bid, 2))
        ti.store(rr, one, ti.broadcast(ti.idx_as_tile(bid), [1]))

    def expect(args, launch=0):
        x = args[0].astype(np.int64)
        o = np.zeros(32, np.int64)
        steps = np.zeros(8, np.int64)
        for blk in range(4):
            acc = x[8 * blk: 8 * blk + 8].copy()
            for j in range(3):
                off = (8 * blk + 8 * j) % 64
                acc = acc + x[off: off + 8]
            acc = acc * 3 if blk % 2 == 0 else -acc
            o[8 * blk: 8 * blk + 8] = acc
            v, k = blk + 27, 0
            while True:  # the loop answers what entered the iteration that stopped it
                k += 1
                if v == 1:
                    k -= 1
                    break
                v = 3 * v + 1 if v % 2 else v // 2
            steps[blk] = k
        rr = np.full(8, -1)
        rr[[0, 1, 3]] = [0, 1, 3]
        nb = np.zeros(8)
        nb[:4] = 4
        return {1: ((o + 2**31) % 2**32 - 2**31).astype(np.int32), 2: steps.astype(np.int32),
                3: nb.astype(np.int32), 4: rr.astype(np.int32)}

    case = Case("control", (ti.ByPtr(I32),) * 5, body, args, (Out(1, EXACT), Out(2, EXACT), Out(3, EXACT),
                                                             Out(4, EXACT)),
                grid=(4,), expect=expect, inputs=(0,))
    return Family("control", "exact", "exact: a d_range loop carrying a tile, an if on the block's parity, a "
                  "d_loop whose exit the data decides (Collatz steps), two forked store chains, the grid's "
                  "extent, and a block that returns early", ("for", "if", "loop", "break", "continue", "yield",
                                                              "return", "join_tokens", "get_num_tile_blocks"),
                  [case])


# ---- tile shapes ---------------------------------------------------------------------------------


def _tileshape():
    def args():
        return [np.arange(64, dtype=np.int32) * 3 - 50, np.zeros(6 * 64, np.int32)]

    def body():
        x = ti.load(ti.param(I32, 0), _z(), [8, 8])
        o = ti.param(I32, 1)
        lo = ti.extract(x, [4, 8], [ti.idx_const(0), ti.idx_const(0)])
        hi = ti.extract(x, [4, 8], [ti.idx_const(1), ti.idx_const(0)])
        outs = [ti.cat(hi, lo, 0), ti.transpose(x), ti.insert(ti.extract(x, [2, 4], [ti.idx_const(3), ti.idx_const(1)]),
                                                               ti.broadcast(ti.i_const(9), [8, 8]),
                                                               [ti.idx_const(0), ti.idx_const(0)]),
                ti.reshape(ti.permute_tile(ti.reshape(x, [2, 4, 8]), [2, 0, 1]), [8, 8]),
                ti.cat(ti.extract(x, [8, 4], [ti.idx_const(0), ti.idx_const(1)]),
                       ti.extract(x, [8, 4], [ti.idx_const(0), ti.idx_const(0)]), 1),
                ti.broadcast(ti.reshape(ti.arange(8), [1, 8]), [8, 8])]
        for k, t in enumerate(outs):
            ti.store(o, ti.idx_const(64 * k), ti.reshape(t, [64]))

    def expect(args, launch=0):
        x = args[0].reshape(8, 8)
        ins = np.full((8, 8), 9)
        ins[0:2, 0:4] = x[6:8, 4:8]
        outs = [np.concatenate([x[4:], x[:4]], 0), x.T, ins, np.transpose(x.reshape(2, 4, 8), (2, 0, 1)).reshape(8, 8),
                np.concatenate([x[:, 4:], x[:, :4]], 1), np.broadcast_to(np.arange(8), (8, 8))]
        return {1: np.concatenate([np.ravel(v) for v in outs]).astype(np.int32)}

    case = Case("tileshape", (ti.ByPtr(I32), ti.ByPtr(I32)), body, args,
                (Out(1, EXACT, labels=("cat0", "transpose", "insert", "permute", "cat1", "iota_bcast"), block=64),),
                expect=expect)
    return Family("tileshape", "exact", "exact: extract and insert by slice number, cat along either dimension, "
                  "permute and transpose, reshape, broadcast and iota", ("extract", "insert", "cat", "permute",
                                                                         "reshape", "broadcast", "iota"), [case])


# ---- mma -----------------------------------------------------------------------------------------


def _mma():
    cases = []

    def iargs():
        r = C.rng(270)
        a = r.integers(-128, 128, (16, 32)).astype(np.int8)
        a[0, :] = -128
        b = r.integers(-128, 128, (32, 16)).astype(np.int8)
        return [a, b, C.int32_spread(256, 271).reshape(16, 16), np.zeros((16, 16), np.int32)]

    def ibody():
        z = _z()
        a = ti.load(ti.param(I8, 0), z, [16, 32])
        b = ti.load(ti.param(I8, 1), z, [32, 16])
        c = ti.load(ti.param(I32, 2), z, [16, 16])
        ti.store(ti.param(I32, 3), z, ti.mmai(a, b, c))

    def iexpect(args, launch=0):
        a, b, c = (x.astype(np.int64) for x in args[:3])
        return {3: ((a @ b + c + 2**31) % 2**32 - 2**31).astype(np.int32)}

    cases.append(Case("mmai", (ti.ByPtr(I8), ti.ByPtr(I8), ti.ByPtr(I32), ti.ByPtr(I32)), ibody, iargs,
                      (Out(3, EXACT),), expect=iexpect))
    for fmt in (F16, BF16, ti.TF32):
        store = F32 if fmt is ti.TF32 else fmt

        def fargs(fmt=fmt, store=store):
            r = C.rng(272)
            a = ti.dtypes.to_format(fmt, r.uniform(-2, 2, (32, 16)))
            b = ti.dtypes.to_format(fmt, r.uniform(-2, 2, (16, 32)))
            return [a.astype(_np(store)), b.astype(_np(store)), r.uniform(-1, 1, (32, 32)).astype(np.float32),
                    np.zeros((32, 32), np.float32)]

        def fbody(fmt=fmt, store=store):
            z = _z()
            a = ti.load(ti.param(store, 0), z, [32, 16])
            b = ti.load(ti.param(store, 1), z, [16, 32])
            if fmt is ti.TF32:
                a, b = ti.float_to_float(a, ti.TF32), ti.float_to_float(b, ti.TF32)
            c = ti.load(ti.param(F32, 2), z, [32, 32])
            ti.store(ti.param(F32, 3), z, ti.mma(a, b, c))

        def fexpect(args, launch=0):
            a, b, c = (_f64(x) for x in args[:3])
            return {3: (a @ b + c).astype(np.float32)}

        def fbound(args):
            a, b, c = (np.abs(_f64(x)) for x in args[:3])
            return (2 * 17 * U32 * (a @ b + c)).ravel() + 1e-30

        cases.append(Case(f"mma_{fmt.name}", (ti.ByPtr(store), ti.ByPtr(store), ti.ByPtr(F32), ti.ByPtr(F32)), fbody,
                          fargs, (Out(3, Judge("tol"), bound=fbound),), expect=fexpect))
    return Family("mma", "mixed", "mmai exact (i8 x i8 into i32, both SIGNED, -128 rows included); mma over "
                  "f16, bf16 and tf32 operands into f32 within 2 (k + 1) u sum|a||b| + |c| (u = 2^-24): products "
                  "of the operands are exact in f32, the sum's order is not specified", ("mmaf", "mmai"), cases)


# ---- the registry --------------------------------------------------------------------------------

_BUILDERS = (_float_arith, _float_cmp, _float_maxmin, _float_sign, _remf, _transcendental, _atan2, _powi, _erf,
             _int_arith, _int_cmp, _itof, _ftoi, _ftof, _int_widen, _bitcast, _select, _reduce, _scan, _scan2,
             _pointers, _atomics, _views, _globals, _alloca, _print, _assert, _control, _tileshape, _mma)
_CACHE: dict = {}


def families() -> dict:
    """name -> Family, every family of the diff (built once)."""
    if not _CACHE:
        for b in _BUILDERS:
            f = b()
            _CACHE[f.name] = f
    return _CACHE


# ---- the ledger's layer-2 column -----------------------------------------------------------------

EXEMPT = {
    "assume": "unchecked by design: an assumption is a promise to the compiler that nothing verifies, and a "
              "false one is undefined behaviour (no answer to compare)",
    "gdc_launch_dependents_tko": "a no-op without programmatic dependent launch, which tileir's launch does not "
                                 "set: no answer to compare",
    "gdc_wait_tko": "a no-op without programmatic dependent launch, which tileir's launch does not set",
    "memory_fence_alias_tko": "orders accesses through two virtual aliases of one physical allocation; tileir "
                              "makes no aliased mappings, so no single-kernel answer can tell it from its absence",
    "make_token": "the entry's ordering token: no value of its own; every kernel of every family holds one",
    "mmaf_scaled": "its operand formats (f8E8M0FNU scales, f4E2M1FN) are refused by tileiras below sm_100: no "
                   "sm_90 device answer; the host rule is tested in tests/test_family_mma.py",
    "EntryOp": "the entry is the bytecode's function section, not an operation: every kernel runs through one",
    "ModuleOp": "the module is the bytecode file itself: every kernel runs through one",
    "MultimemLoadReduceViewTkoOp": "bytecode 13.5: beyond the versions the writer speaks",
    "MultimemReduceViewTkoOp": "bytecode 13.5: beyond the versions the writer speaks",
    "MultimemStoreViewTkoOp": "bytecode 13.5: beyond the versions the writer speaks",
    "PreviewCallOp": "a preview feature, not part of the 13.4 dialect",
}


def ledger_layer2() -> dict:
    """dialect operation -> ('family', name) or ('exempt', reason): the ledger's layer-2 column."""
    out: dict = {}
    for f in families().values():
        for op in f.ops:
            out.setdefault(op, ("family", f.name))
    for op, why in EXEMPT.items():
        out.setdefault(op, ("exempt", why))
    return out


__all__ = ["Judge", "BITS", "EXACT", "Out", "Case", "Family", "families", "ledger_layer2", "EXEMPT", "FTOF_SM90",
           "FTOF_DEFECTS", "ERF_BOUND"]
