"""Layer-2 families of float arithmetic: add/sub/mul/div/fma/sqrt, compares, max/min, sign ops, remf,
the transcendental functions, atan2, powi and erf.

Each element-wise family's operations are the rows of ``tileir.elementwise`` that name it as their
corpus (``Family.ops``); the unary families (float_sign, transcendental) compute every such row,
against its ``oracle``; tests/test_elementwise.py holds the others to recording every row of theirs."""

from __future__ import annotations

import math

import numpy as np

import tileir as ti
from tileir import BF16, F16, F32, F64, I8, I16, I32

from ..elementwise import dialect_ops, of_corpus
from ..hostmath import flush_subnormals
from . import corpora as C
from . import exact as X
from .model import *  # noqa: F401,F403

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
                  "correctly rounded at nearest_even in the operands' format; fma rounds once",
                  dialect_ops("float_arith"), cases)


# ---- float comparisons ---------------------------------------------------------------------------


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
                  "unordered ones 1; -0 == +0", dialect_ops("float_cmp"), cases)


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
                  "device's to say (the corpus holds both orders)", dialect_ops("float_maxmin"), cases)


# ---- neg / abs / floor / ceil --------------------------------------------------------------------


def _float_sign():
    rows = of_corpus("float_sign")  # neg abs floor ceil
    cases = []
    for salt, fmt in enumerate((F32, F64, F16)):
        n = 256

        def args(fmt=fmt, n=n, salt=salt):
            near = np.array([0.5, -0.5, 1.5, -1.5, 2.5, -2.5, -0.3, 0.3, -0.99, 0.99, 1e-30, -1e-30, 4503599627370495.5,
                             -4503599627370495.5, 8388607.5, -8388607.5, 8388608.0, 1023.75, -1023.75], np.float64)
            head = np.concatenate([C.float_specials(fmt).astype(np.float64), near])
            a = C.fill(ti.dtypes.to_format(fmt, head), n, C.spread_floats(n, fmt, 50 + salt, -4, 24))
            return [a, np.zeros(len(rows) * n, _np(fmt))]

        params, body = _elementwise([fmt], fmt, n, lambda x: [getattr(ti, r.name)(x) for r in rows])

        def expect(args, launch=0, fmt=fmt):
            a = _f64(args[0])
            return {1: np.concatenate([_vec(r.oracle, a) for r in rows]).astype(_np(fmt))}

        cases.append(Case(f"sign_{fmt.name}", params, body, args,
                          (Out(1, EXACT, labels=tuple(r.name for r in rows), block=n),), expect=expect))
    return Family("float_sign", "exact", "exact: neg and abs move only the sign bit, floor and ceil are exact "
                  "(ceil(-0.3) is -0)", dialect_ops("float_sign"), cases)


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
                  "remainder of two representable numbers is representable", dialect_ops("remf"), cases)


# ---- transcendental: tolerance -------------------------------------------------------------------

UNARY_T = tuple(r for r in of_corpus("transcendental") if r.kind == "unaryf")  # exp exp2 log ... rsqrt


def _libm(oracle):
    """A row's oracle (a Python float function) on one lane: NaN where the lane is NaN, the infinity of
    the function's sign where it overflows, NaN where it is undefined (a pole is the oracle's to say)."""
    def one(x):
        if math.isnan(x):
            return math.nan
        try:
            return oracle(x)
        except OverflowError:
            return math.copysign(math.inf, oracle(math.copysign(1.0, x)))
        except (ValueError, ZeroDivisionError):
            return math.nan

    return one


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

        params, body = _elementwise([fmt], fmt, n, lambda x: [getattr(ti, r.name)(x) for r in UNARY_T])

        def expect(args, launch=0, fmt=fmt):
            x = _f64(args[0])
            return {1: np.concatenate([_vec(_libm(r.oracle), x) for r in UNARY_T]).astype(_np(fmt))}

        labels = tuple(r.name for r in UNARY_T)
        cases.append(Case(f"trans_{fmt.name}", params, body, args, (Out(1, judge, labels=labels, block=n),),
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
    cases.append(_exp2_ftz())
    return Family("transcendental", "tolerance", TRANS_WHY, dialect_ops("transcendental"), cases)


def _exp2_ftz():
    """exp2 with flush_to_zero on f32 lanes whose answers cross the subnormal range (2^-149 .. 2^-126)
    and on subnormal inputs: the oracle's answer with every subnormal input and result the zero of
    its sign (the attention kernels' probabilities take this form). A second output says which lanes
    are zero, exactly: the ulp judge reads a zero's ulp as f32's epsilon, so a subnormal answer where
    0 is wanted would pass it (the exp2-ftz-dropped mutant survived that alone on the H100)."""
    n = 1024

    def args():
        r = C.rng(77)
        head = np.array([0.0, -0.0, 1e-40, -1e-40, 1e-45, -126.0, -125.5, -126.5, -140.0, -149.0, -150.0, -200.0,
                         np.inf, -np.inf, np.nan, 3.0], np.float64)
        body = np.concatenate([r.uniform(-152, -120, n // 2), r.uniform(-20, 20, n // 4),
                               r.uniform(-1e-38, 1e-38, n // 4)])
        return [C.fill(ti.dtypes.to_format(F32, head), n, ti.dtypes.to_format(F32, body)), np.zeros(2 * n, np.float32)]

    def lanes(x):
        y = ti.exp2(x, ftz=True)
        return [y, ti.select(ti.eq(y, 0.0), ti.f_const(F32, 1.0), 0.0)]

    params, body = _elementwise([F32], F32, n, lanes)

    def expect(args, launch=0):
        x = flush_subnormals(np.asarray(args[0]), "f32")
        y = flush_subnormals(np.exp2(x.astype(np.float64)).astype(np.float32), "f32")
        return {1: np.concatenate([y, (y == 0).astype(np.float32)])}

    out = Out(1, Judge("tol", ulps=ULP_F32), labels=("exp2_ftz", "is_zero"), block=n)
    return Case("exp2_ftz_f32", params, body, args, (out,), expect=expect)


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
                  "orders differ by far more than the bound on most lanes", dialect_ops("atan2"), cases)


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
