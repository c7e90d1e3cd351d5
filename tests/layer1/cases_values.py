"""Layer-1 goldens: tokens and shapes, constants, integer and float arithmetic, conversions."""

from __future__ import annotations

import math
import random

from tileir import ir
from tileir.ir import Val

from .build import B, P, T
from .common import (
    F8_REFUSED,
    IEEE,
    INF,
    NAN,
    OVERFLOWS,
    PRE_SM90,
    PRE_SM100,
    PREDICATES,
    V13_1,
    V13_2,
    V13_3,
    V13_4,
    add,
    un,
    unsupported,
)

# ---- tokens, block ids, shapes ---------------------------------------------------------------

def _basics():
    b = B("make_token")
    t = b.tok()
    t2 = un(b, ir.MakeTok, None)
    j = un(b, ir.JoinTokens, None, (t, t2, t))
    b.emit(ir.StorePtr(b.n(), b.ptr("i32"), b.ci("i32", 1), None, j, P((), "i32"), None, T((), "i32")))
    add("make_token_join_tokens", b)

    for cls, name in ((ir.BlockIds, "block_ids"), (ir.BlockCounts, "block_counts")):
        b = B(name)
        x, y, z = b.n(), b.n(), b.n()
        b.emit(cls(x, y, z))
        s = un(b, ir.AddInt, None, T((), "i32"), Val(x), Val(y))
        s = un(b, ir.AddInt, None, T((), "i32"), s, Val(z))
        b.sink(s, T((), "i32"))
        add(name, b)

    b = B("shapes")
    i = b.iota(8)
    r = b.reshape(i, T((8,), "i32"), T((2, 4), "i32"))
    r2 = b.reshape(i, T((8,), "i32"), T((1, 8), "i32"))
    br = b.bcast(r2, T((1, 8), "i32"), T((4, 8), "i32"))
    b.sink(r, T((2, 4), "i32"))
    b.sink(br, T((4, 8), "i32"))
    i64 = b.iota(16, "i64")
    b.sink(i64, T((16,), "i64"))
    add("iota_reshape_broadcast", b)

    b = B("offset")
    p = b.ptrs("f32", (8,))
    off = b.iota(8)
    q = un(b, ir.Offset, None, p, off, P((8,), "f32"), T((8,), "i32"))
    off64 = b.iota(8, "i64")
    q2 = un(b, ir.Offset, None, q, off64, P((8,), "f32"), T((8,), "i64"))
    b.emit(ir.StorePtr(b.n(), q2, b.cf(T((8,), "f32"), 1.0), None, b.tok(), P((8,), "f32"), None, T((8,), "f32")))
    add("offset", b)


# ---- constants -------------------------------------------------------------------------------

CONSTS = {
    "i1": [1, 0],
    "i8": [0, 127, -128, 255, 3],
    "i16": [-32768, 1234, 65535],
    "i32": [0, -3, 2147483647, 1024, -2147483648],
    "i64": [-1, 2 ** 63 - 1, -(2 ** 63), 2 ** 40, 7],
    "f32": [0.0, -0.0, 1.0, 2.0, 0.5, 0.1, -INF, INF, NAN, 1e-45, 3.4028234663852886e38, 16777216.0, 1e20,
            123456.789, -7.0, 1e-38, 4294967296.0, 1.8446744073709552e19],
    "f64": [0.1, 0.30000000000000004, 0.7999999999999999, 16777217.0, 1e300, 5e-324, -2.5, NAN, INF,
            123456789012345678.0, 1e-5, 100.0, 1234567.0, 2.0 ** 64, 2.0 ** 63, 1.0 / 3, 2.2250738585072014e-308],
    "f16": [0.0009765625, 65504.0, 6e-8, -INF, NAN, 0.1, 1.0 / 3, 3.0, -0.0, 1000.0],
    "bf16": [0.1, 3.0, 1e38, -INF, NAN, 1.0 / 3, 256.0, 257.0],
    "tf32": [0.1, 1.5, INF, 1.0 / 3, 0.0, -2.0],
    "f8E4M3FN": [448.0, -0.5, 0.001953125, NAN, 0.3, 1.0, 0.0],
    "f8E5M2": [57344.0, INF, -0.25, NAN, 1.5e-5, 0.1, 2.0],
}
CONSTS_LATE = {
    "f8E8M0FNU": ([1.0, 2.0 ** -127, 2.0 ** 127, NAN, 0.25, 3.0], V13_2),
    "f4E2M1FN": ([0.5, 6.0, -1.5, 0.0, -0.0, 2.5], V13_3),
}


def float_patterns(dtype: str) -> list:
    """Values whose printing exercises APFloat's digit logic: every finite pattern of an 8- or
    4-bit format; 120 random finite patterns (a fixed seed) and 40 short decimals otherwise."""
    from tileir.render_float import FORMATS, decode, width

    rng = random.Random(dtype)
    nbits = width(dtype)
    pats = list(range(1 << nbits)) if nbits <= 8 else [rng.getrandbits(nbits) for _ in range(120)]
    values = []
    for p in pats:
        v = decode(dtype, p)
        if v[0] == "num":
            _, neg, m, e = v
            values.append((-1.0 if neg else 1.0) * math.ldexp(m, e))
        elif v[0] == "inf":
            values.append(-INF if v[1] else INF)
    if FORMATS[dtype][0] > 4:
        digits = 4 if dtype == "f16" else 9  # within f16's range
        values += [rng.choice((1, -1)) * rng.randint(1, 10 ** rng.randint(1, digits)) / 10 ** rng.randint(0, 12)
                   for _ in range(40)]
    return values


def _constants():
    def const_kernel(dtype, values, shape):
        b = B(f"const_{dtype}")
        for v in values:
            ty = T(shape, dtype)
            c = b.ci(ty, v) if dtype[0] == "i" else b.cf(ty, v)
            b.sink(c, ty)
        return b

    for dtype, values in CONSTS.items():
        add(f"const_{dtype}", const_kernel(dtype, values, (4,)),
            refused_on=unsupported(dtype, F8_REFUSED.get(dtype, ())))
    for dtype, (values, since) in CONSTS_LATE.items():
        add(f"const_{dtype}", const_kernel(dtype, values, (2,)), since=since,
            refused_on=unsupported(dtype, F8_REFUSED[dtype]))
    b = B("const_scalar")
    for dtype in ("i32", "f32", "i1", "f64"):
        ty = T((), dtype)
        c = b.ci(ty, 1) if dtype[0] == "i" else b.cf(ty, 2.5)
        b.sink(c, ty)
    add("const_rank0", b)

    b = B("const_dense")
    for dtype, shape, values in (("i32", (4,), (1, 2, 3, 4)), ("f32", (2, 2), (0.5, -1.0, INF, 0.1)),
                                 ("i1", (4,), (1, 0, 1, 1)), ("f16", (2,), (1.0, 2.0)),
                                 ("i8", (2, 2), (1, 1, 1, 1)), ("i64", (2,), (-1, 2 ** 40)),
                                 ("f32", (2,), (2.0, 2.0)), ("f16", (2,), (0.0, -0.0)), ("i1", (2, 4), (1,) * 8)):
        ty = T(shape, dtype)
        c = b.ci(ty, values) if dtype[0] == "i" else b.cf(ty, values)
        b.sink(c, ty)
    add("const_dense", b)

    # APFloat's digits, pattern by pattern: every f8 / f4 pattern, and a fixed draw of random
    # patterns and short decimals in the wider formats, as non-splat constants (printed as lists)
    for dtype, since in (("f16", V13_1), ("bf16", V13_1), ("f32", V13_1), ("f64", V13_1), ("tf32", V13_1),
                         ("f8E4M3FN", V13_1), ("f8E5M2", V13_1), ("f8E8M0FNU", V13_2), ("f4E2M1FN", V13_3)):
        b = B(f"float_patterns_{dtype}")
        values = float_patterns(dtype)
        for i in range(0, len(values), 64):
            chunk = values[i:i + 64]
            chunk += [0.0] * (64 - len(chunk))
            b.cf(T((64,), dtype), tuple(chunk))
        add(f"float_patterns_{dtype}", b, since=since, refused_on=unsupported(dtype, F8_REFUSED.get(dtype, ())))

    b = B("const_dense_hex")
    ty = T((128,), "i32")
    c = b.ci(ty, tuple(range(128)))
    b.sink(c, ty)
    ty = T((128,), "f32")
    c = b.cf(ty, tuple(x * 0.5 for x in range(128)))
    b.sink(c, ty)
    add("const_dense_hex", b)

    b = B("const_dense_f4")
    ty = T((16,), "f4E2M1FN")
    c = b.cf(ty, tuple([0.5, 1.0, -6.0, 0.0] * 4))
    b.sink(c, ty)
    add("const_dense_f4", b, since=V13_3, refused_on=unsupported("f4E2M1FN", PRE_SM100))


# ---- integer arithmetic ----------------------------------------------------------------------



def _int_ops():
    ty = T((8,), "i32")
    for ov in OVERFLOWS:
        b = B(f"int_overflow_{ov}")
        x, y = b.load(ty), b.iota(8)
        for op in ("addi", "subi", "muli", "shli"):
            b.sink(un(b, ir.IntBin, None, op, ty, x, y, overflow=ov), ty)
        b.sink(un(b, ir.AddInt, None, ty, x, y, overflow=ov), ty)
        b.sink(un(b, ir.MulInt, None, ty, x, y, overflow=ov), ty)
        add(f"int_overflow_{ov}", b)

    for signed in (True, False):
        sfx = "signed" if signed else "unsigned"
        b = B(f"int_{sfx}")
        x, y = b.load(ty), b.iota(8)
        for op in ("divi", "remi", "maxi", "mini"):
            b.sink(un(b, ir.IntBin, None, op, ty, x, y, signed=signed), ty)
        add(f"int_signedness_{sfx}", b)
        for rnd in ("positive_inf", "negative_inf") if signed else ("positive_inf",):
            b = B(f"divi_{sfx}_{rnd}")
            x, y = b.load(ty), b.iota(8)
            b.sink(un(b, ir.IntBin, None, "divi", ty, x, y, signed=signed, rounding=rnd), ty)
            add(f"divi_{sfx}_{rnd}", b)

    b = B("int_bitwise")
    x, y = b.load(ty), b.iota(8)
    for op in ("shri", "shru", "mulhii", "andi", "ori", "xori"):
        b.sink(un(b, ir.IntBin, None, op, ty, x, y), ty)
    add("int_bitwise_shift_mulhi", b)

    for dtype in ("i8", "i16", "i64"):
        t = T((8,), dtype)
        b = B(f"int_{dtype}")
        x = b.load(t)
        y = b.iota(8, dtype)
        for op in ("addi", "muli", "divi", "xori", "maxi"):
            b.sink(un(b, ir.IntBin, None, op, t, x, y), t)
        add(f"int_ops_{dtype}", b)

    b = B("absi_negi")
    x = b.load(ty)
    b.sink(un(b, ir.IntUn, None, "absi", ty, x), ty)
    b.sink(un(b, ir.IntUn, None, "negi", ty, x), ty)
    add("absi_negi", b)
    b = B("negi_nsw")
    x = b.load(ty)
    b.sink(un(b, ir.IntUn, None, "negi", ty, x, overflow="no_signed_wrap"), ty)
    add("negi_overflow", b, since=V13_2)
    b = B("negi_nw")
    x = b.load(ty)
    b.sink(un(b, ir.IntUn, None, "negi", ty, x, overflow="no_wrap"), ty)
    add("negi_overflow_no_wrap", b, since=V13_2)  # no_unsigned_wrap: the verifier refuses it on negi

    for signed in (True, False):
        b = B("cmpi")
        x, y = b.load(ty), b.iota(8)
        m = T((8,), "i1")
        acc = None
        for pred in PREDICATES:
            c = un(b, ir.CmpInt, None, pred, ty, m, x, y, signed=signed)
            acc = c if acc is None else un(b, ir.IntBin, None, "xori", m, acc, c)
        sel = un(b, ir.SelectTile, None, m, ty, acc, x, y)
        b.sink(sel, ty)
        add(f"cmpi_select_{'signed' if signed else 'unsigned'}", b)


# ---- float arithmetic ------------------------------------------------------------------------

FLOAT_UN = ("negf", "absf", "floor", "ceil", "sin", "cos", "tan", "sinh", "cosh", "log", "log2", "exp",
            "exp2", "rsqrt", "sqrt", "tanh")


def _float_ops():
    ty = T((8,), "f32")
    b = B("float_unary")
    x = b.load(ty)
    for op in FLOAT_UN:
        b.sink(un(b, ir.FloatUn, None, op, ty, x), ty)
    add("float_unary_f32", b)

    b = B("float_unary_ftz")
    x = b.load(ty)
    for op in ("exp2", "rsqrt", "sqrt"):
        b.sink(un(b, ir.FloatUn, None, op, ty, x, ftz=True), ty)
    add("float_unary_ftz", b)
    for rnd in ("zero", "negative_inf", "positive_inf", "approx"):
        b = B(f"sqrt_{rnd}")
        x = b.load(ty)
        b.sink(un(b, ir.FloatUn, None, "sqrt", ty, x, rounding=rnd), ty)
        b.sink(un(b, ir.FloatUn, None, "sqrt", ty, x, rounding=rnd, ftz=True), ty)
        add(f"sqrt_rounding_{rnd}", b)
    b = B("tanh_approx")
    x = b.load(ty)
    b.sink(un(b, ir.FloatUn, None, "tanh", ty, x, rounding="approx"), ty)
    add("tanh_approx", b, since=V13_2)
    b = B("exp_approx")
    x = b.load(ty)
    b.sink(un(b, ir.FloatUn, None, "exp", ty, x, rounding="approx"), ty)
    add("exp_approx", b, since=V13_3)

    for dtype in ("f16", "bf16", "f64"):
        t = T((8,), dtype)
        b = B(f"float_unary_{dtype}")
        x = b.load(t)
        for op in ("negf", "absf", "sqrt", "exp", "floor"):
            b.sink(un(b, ir.FloatUn, None, op, t, x), t)
        b.sink(un(b, ir.FloatBin, None, "addf", t, x, x), t)
        b.sink(un(b, ir.FloatFma, None, t, x, x, x), t)
        add(f"float_ops_{dtype}", b)

    for rnd in IEEE:
        for ftz in (False, True):
            b = B("fbin")
            x, y = b.load(ty), b.cf(ty, 0.5)
            for op in ("addf", "subf", "mulf", "divf"):
                b.sink(un(b, ir.FloatBin, None, op, ty, x, y, rounding=rnd, ftz=ftz), ty)
            b.sink(un(b, ir.FloatFma, None, ty, x, y, x, rounding=rnd, ftz=ftz), ty)
            add(f"float_binary_{rnd}{'_ftz' if ftz else ''}", b)
    for rnd in ("approx", "full"):
        b = B(f"divf_{rnd}")
        x, y = b.load(ty), b.cf(ty, 3.0)
        b.sink(un(b, ir.FloatBin, None, "divf", ty, x, y, rounding=rnd), ty)
        add(f"divf_{rnd}", b)

    for nan in (False, True):
        for ftz in (False, True):
            b = B("maxmin")
            x, y = b.load(ty), b.cf(ty, 0.5)
            for op in ("maxf", "minf"):
                b.sink(un(b, ir.FloatBin, None, op, ty, x, y, propagate_nan=nan, ftz=ftz), ty)
            add(f"maxf_minf{'_nan' if nan else ''}{'_ftz' if ftz else ''}", b)

    b = B("remf_pow")
    x, y = b.load(ty), b.cf(ty, 1.5)
    for op in ("remf", "pow"):
        b.sink(un(b, ir.FloatBin, None, op, ty, x, y), ty)
    add("remf_pow", b)
    b = B("atan2")
    x, y = b.load(ty), b.cf(ty, 1.5)
    b.sink(un(b, ir.FloatBin, None, "atan2", ty, x, y), ty)
    add("atan2", b, since=V13_2)

    b = B("fpowi")
    x = b.load(ty)
    e = b.iota(8)
    b.sink(un(b, ir.FloatPowI, None, ty, T((8,), "i32"), x, e), ty)
    add("fpowi", b, since=V13_4)

    for ordered in (True, False):
        b = B("cmpf")
        x, y = b.load(ty), b.cf(ty, 0.5)
        m = T((8,), "i1")
        acc = None
        for pred in PREDICATES:
            c = un(b, ir.CmpFloat, None, pred, ty, m, x, y, ordered=ordered)
            acc = c if acc is None else un(b, ir.IntBin, None, "ori", m, acc, c)
        b.sink(un(b, ir.SelectTile, None, m, ty, acc, x, y), ty)
        add(f"cmpf_{'ordered' if ordered else 'unordered'}", b)


# ---- conversions -----------------------------------------------------------------------------

def _casts():
    f32, f16, i32 = T((8,), "f32"), T((8,), "f16"), T((8,), "i32")

    def cast(b, op, from_, to, src, **kw):
        v = un(b, ir.Cast, None, op, from_, to, src, **kw)
        b.sink(v, to)
        return v

    b = B("ftof")
    x = b.load(f32)
    for op in ("ftof", "ftof_zero"):
        cast(b, op, f32, f16, x)
    h = b.load(f16)
    cast(b, "ftof", f16, f32, h)
    cast(b, "ftof", f32, T((8,), "bf16"), x)
    cast(b, "ftof", f32, T((8,), "f64"), x)
    add("ftof", b)
    # the verifier's rules: to tf32 nearest_even, zero or nearest_away; to f8E8M0FNU zero or
    # positive_inf; to the other f8 formats nearest_even only
    for op, to in (("ftof_away", "tf32"), ("ftof_zero", "tf32"), ("ftof_zero", "f8E8M0FNU"),
                   ("ftof_pos_inf", "f8E8M0FNU")):
        b = B(f"{op}_{to}")
        x = b.load(f32)
        cast(b, op, f32, T((8,), to), x)
        add(f"{op}_{to}", b, since=V13_2 if to == "f8E8M0FNU" else V13_1,
            refused_on=unsupported(to, F8_REFUSED.get(to, ())))
    b = B("ftof_f8")
    x = b.load(f32)
    cast(b, "ftof", f32, T((8,), "f8E4M3FN"), x)
    cast(b, "ftof", f32, T((8,), "f8E5M2"), x)
    add("ftof_f8", b, refused_on=unsupported("f8E4M3FN", PRE_SM90))

    for signed in (True, False):
        sfx = "signed" if signed else "unsigned"
        b = B(f"itof_ftoi_{sfx}")
        x = b.load(i32)
        cast(b, "itof", i32, f32, x, signed=signed)
        cast(b, "itof", i32, T((8,), "f16"), x, signed=signed)
        f = b.load(f32)
        cast(b, "ftoi", f32, i32, f, signed=signed)
        cast(b, "ftoi", f32, T((8,), "i64"), f, signed=signed)
        add(f"itof_ftoi_{sfx}", b)
    b = B("ftoi_sat")
    f = b.load(f32)
    cast(b, "ftoi_sat", f32, i32, f)
    cast(b, "ftoi_sat", f32, T((8,), "i8"), f, signed=False)
    add("ftoi_saturating", b, since=V13_4)

    b = B("exti_trunci")
    x8 = b.load(T((8,), "i8"))
    cast(b, "exti", T((8,), "i8"), i32, x8)
    cast(b, "extis", T((8,), "i8"), T((8,), "i64"), x8)
    x = b.load(i32)
    cast(b, "trunci", i32, T((8,), "i16"), x)
    for ov in OVERFLOWS[1:]:
        cast(b, "trunci", i32, T((8,), "i8"), x, overflow=ov)
    add("exti_trunci", b)

    b = B("unpack_i4")
    x = b.load(T((8,), "i8"))
    u = un(b, ir.Cast, None, "unpack", T((8,), "i8"), T((16,), "i4"), x)  # no pointer to i4: widen to store
    w = un(b, ir.Cast, None, "extis", T((16,), "i4"), T((16,), "i8"), u)
    b.sink(w, T((16,), "i8"))
    w2 = un(b, ir.Cast, None, "exti", T((16,), "i4"), T((16,), "i32"), u)
    b.sink(w2, T((16,), "i32"))
    add("unpack_i4_exti", b, since=V13_3)

    b = B("bitcast")
    x = b.load(f32)
    cast(b, "bitcast", f32, i32, x)
    y = b.load(T((8,), "i16"))
    cast(b, "bitcast", T((8,), "i16"), T((8,), "bf16"), y)
    add("bitcast", b)

    b = B("pack_unpack")
    x = b.load(T((8,), "i8"))
    u = cast(b, "unpack", T((8,), "i8"), T((16,), "f4E2M1FN"), x)
    cast(b, "pack", T((16,), "f4E2M1FN"), T((8,), "i8"), u)
    add("pack_unpack", b, since=V13_3, refused_on=unsupported("f4E2M1FN", PRE_SM100))

    b = B("ptr_casts")
    p = b.ptrs("f32", (8,))
    i = un(b, ir.PtrToIntTile, None, p, P((8,), "f32"), T((8,), "i64"))
    q = un(b, ir.IntToPtrTile, None, i, T((8,), "i64"), P((8,), "f16"))
    r = un(b, ir.PtrToPtrTile, None, q, P((8,), "f16"), P((8,), "i32"))
    b.emit(ir.StorePtr(b.n(), r, b.iota(8), None, b.tok(), P((8,), "i32"), None, i32))
    add("ptr_to_int_int_to_ptr_ptr_to_ptr", b)


def register():
    _basics()
    _constants()
    _int_ops()
    _float_ops()
    _casts()
