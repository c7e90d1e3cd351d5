"""Layer-2 families of folds: reductions, scans and the two-operand scan."""

from __future__ import annotations

import numpy as np

import tileir as ti
from tileir import F32, I32

from . import corpora as C
from . import exact as X
from .model import *  # noqa: F401,F403


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
        out: list[np.ndarray | list] = []
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
