"""Layer-2 families of integers and conversions: i32 arithmetic and compares, itof, ftoi, ftof, the
integer widenings, bitcast and select. An element-wise family's operations are the rows of
``tileir.elementwise`` that name it as their corpus (tests/test_elementwise.py holds each family to
recording every row of its)."""

from __future__ import annotations

import math

import numpy as np

import tileir as ti
from tileir import F16, F32, I8, I16, I32, I64

from ..elementwise import dialect_ops
from ..families.convert import ftof_modes
from . import corpora as C
from . import exact as X
from .model import *  # noqa: F401,F403

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
                  dialect_ops("int_arith"),
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
                  "operand is negative)", dialect_ops("int_cmp"),
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
                  "and values past 2^24 / 2^53 / the f16 range in the corpus)", dialect_ops("itof"), cases)


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
                  "(its other lanes are undefined)", dialect_ops("ftoi"), cases)


# the ftof pairs and modes the recording takes and tileiras assembles for sm_90 (measured with
# tileiras 13.4.92: every pair to or from f8E8M0FNU and f4E2M1FN is "unsupported type" below sm_100)
# every pair and mode the recording takes that tileiras assembles for sm_90 (families/convert.py
# ftof_modes, measured pair by pair); those of convert.UNMEASURED_FTOF are here to be measured
_FTOF_FORMATS = ("f64", "f32", "tf32", "f16", "bf16", "f8E4M3FN", "f8E5M2")
FTOF_SM90 = {src: tuple((dst, ftof_modes(src, dst)) for dst in _FTOF_FORMATS if dst != src) for src in _FTOF_FORMATS}
FTOF_EXCLUDED = ("f8E8M0FNU", "f4E2M1FN")  # tileiras refuses both formats below sm_100

# where the host reference disagrees with the correctly rounded conversion (tests xfail them)
FTOF_DEFECTS: dict = {}  # the host rounds f64 into every format once, and tf32 by its own units (ops/convert.py)


def _ftof_corpus(src: str, n: int, salt: int) -> np.ndarray:
    """Values of ``src``: its specials, then for every narrower destination its ties, one source unit
    either side of them, values past its range and its subnormals, then spread values."""
    r = C.rng(salt)
    sfmt = "f32" if src == "tf32" else src
    vals: list[np.ndarray | list[float]] = [C.float_specials(sfmt).astype(np.float64)]
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
                  dialect_ops("ftof"), cases)


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
        outs = [ti.ext_u8(b), ti.ext_i8(b), _conv("exti", h, "i32"), _conv("extis", h, "i32"),
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
                  "every byte value and every nibble pair in the corpus", dialect_ops("int_widen") + ("pack", "unpack"),
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
                  "no bit, pack / unpack reread a tile as its little-endian bytes",
                  dialect_ops("bitcast") + ("pack", "unpack"), [case])


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

