"""The host reference's element-wise arithmetic where the fuzzer's first H200 campaign found it
wrong (issue 15, bench/results/fuzz_campaign1_h200.json): unsigned i64 operations, the directed rounding
modes of addf / subf / mulf / divf, and a float max / min fold over both zeros. Each answer is
held to one computed another way (Python's unbounded integers, exact rationals)."""

import math
from fractions import Fraction

import numpy as np
import pytest

import tileir as ti
from tileir import BF16, F16, F32, F64, I64
from tileir.dev import dev
from tileir.diff.classify import _exact_binary
from tileir.families.arith import binary_directed
from tileir.ref import run_host
from tileir.surface._util import h
from tileir.values import Tile

U64 = (1 << 64) - 1
I64_LANES = np.array([0, 1, -1, 2**63 - 1, -2**63, 2**32, -2**32 + 7, 123456789012345, -5, 3, 2**62 + 9, -2**62,
                      7 << 40, -(7 << 40), 64, 63], np.int64)


def _i64_kernel(make):
    """Two i64 tiles in, ``make(a, b)`` (a Tile) out: run on the host, the answer read back."""
    n = I64_LANES.size
    b_lanes = I64_LANES[::-1].copy()
    out_dtype = [None]

    def body():
        a = ti.load(ti.param(I64, 0), ti.idx_const(0), [n])
        b = ti.load(ti.param(I64, 1), ti.idx_const(0), [n])
        r = make(a, b)
        out_dtype[0] = r.dtype
        if r.dtype == "i1":
            r = ti.mask_to_int(r)
            ti.store(ti.param(ti.I32, 3), ti.idx_const(0), r)
        else:
            ti.store(ti.param(I64, 2), ti.idx_const(0), r)

    out64, out32 = np.zeros(n, np.int64), np.zeros(n, np.int32)
    prog = ti.trace_kernel("k", [ti.ByPtr(I64), ti.ByPtr(I64), ti.ByPtr(I64), ti.ByPtr(ti.I32)], body)
    run_host(prog, [I64_LANES.copy(), b_lanes, out64, out32], (1,))
    return I64_LANES, b_lanes, (out32 if out_dtype[0] == "i1" else out64)


def _s64(n: int) -> int:
    n &= U64
    return n - (1 << 64) if n >> 63 else n


def _bini(op):
    return lambda a, b: Tile(dev().t_binaryi(op, "i64", [I64_LANES.size], h(a), h(b), "none"))


@pytest.mark.parametrize("pred", ["lt", "le", "gt", "ge", "eq", "ne"])
def test_unsigned_i64_compare_reads_lanes_past_2_63(pred):
    """cmpi unsigned at i64 raised OverflowError on the host (the mask (1 << 64) - 1 is no C long):
    35 of 2000 programs of the first campaign."""
    a, b, got = _i64_kernel(lambda a, b: Tile(dev().t_cmpi(pred, [I64_LANES.size], h(a), h(b), False, "i64")))
    f = {"lt": int.__lt__, "le": int.__le__, "gt": int.__gt__, "ge": int.__ge__, "eq": int.__eq__,
         "ne": int.__ne__}[pred]
    assert got.tolist() == [int(f(int(x) & U64, int(y) & U64)) for x, y in zip(a, b)]


def test_unsigned_i64_shift_and_high_product():
    a, b, got = _i64_kernel(lambda a, b: _bini("shru")(a, _bini("andi")(b, ti.consti(I64, 63))))
    assert got.tolist() == [_s64((int(x) & U64) >> (int(y) & 63)) for x, y in zip(a, b)]
    a, b, got = _i64_kernel(_bini("mulhii"))
    assert got.tolist() == [_s64(((int(x) & U64) * (int(y) & U64)) >> 64) for x, y in zip(a, b)]


# ---- directed roundings of addf / subf / mulf / divf ---------------------------------------------------


def _float_kernel(fmt, op, rounding, x, y):
    n = x.size

    def body():
        a = ti.load(ti.param(fmt, 0), ti.idx_const(0), [n])
        b = ti.load(ti.param(fmt, 1), ti.idx_const(0), [n])
        r = {"addf": ti.add, "subf": ti.sub, "mulf": ti.mul, "divf": ti.div}[op](a, b, rounding=rounding)
        ti.store(ti.param(fmt, 2), ti.idx_const(0), r)

    out = np.zeros(n, x.dtype)
    prog = ti.trace_kernel("k", [ti.ByPtr(fmt)] * 3, body)
    run_host(prog, [x, y, out], (1,))
    return out


def test_directed_rounding_is_not_nearest():
    """The host rounded to nearest whatever the mode said (seed 146 of the campaign: an f16 addf
    toward -inf answered 1.515625 where the device, and the exact answer, say 1.5146484375)."""
    x = np.array([1.0, 1.0, -1.0, 1.0, 3.4028234663852886e38, 0, 0, 0], np.float32)
    y = np.array([2.0**-30, 3.0, 2.0**-30, -1.0, 3.4028234663852886e38, 0, 0, 0], np.float32)
    up = _float_kernel(F32, "addf", "positive_inf", x, y)
    down = _float_kernel(F32, "addf", "negative_inf", x, y)
    zero = _float_kernel(F32, "addf", "zero", x, y)
    assert up[0] == np.nextafter(np.float32(1), np.float32(2)) and down[0] == 1 and zero[0] == 1
    above = np.nextafter(np.float32(-1), np.float32(0))  # -1 + 2^-30 lies between -1 and this
    assert down[2] == -1 and up[2] == above and zero[2] == above
    assert math.copysign(1, down[3]) < 0 and math.copysign(1, up[3]) > 0  # an exact zero sum: -0 toward -inf
    assert up[4] == np.inf and zero[4] == down[4] == np.finfo(np.float32).max  # overflow held back
    third = _float_kernel(F32, "divf", "positive_inf", np.ones(2, np.float32), np.full(2, 3, np.float32))
    assert Fraction(float(third[0])) > Fraction(1, 3) > Fraction(float(np.nextafter(third[0], np.float32(0))))


@pytest.mark.parametrize("fmt", [F32, F16, BF16, F64])
@pytest.mark.parametrize("op", ["addf", "subf", "mulf", "divf"])
def test_directed_rounding_matches_exact_rationals(fmt, op):
    """Every directed mode over random values (30 binades apart, so sums are inexact in f64 too),
    the format's specials and every pair of them, held to classify.py's exact-rational answer."""
    from tileir.diff.corpora import float_specials
    from tileir.dtypes import BY_NAME, to_format

    d = BY_NAME[fmt.name if hasattr(fmt, "name") else fmt]
    r = np.random.default_rng(7)
    sp = to_format(d, float_specials(d.name).astype(np.float64)).astype(np.float64)
    gx, gy = np.meshgrid(sp, sp)
    x = np.concatenate([to_format(d, r.uniform(-4, 4, 200) * np.exp2(r.integers(-30, 30, 200))).astype(np.float64),
                        gx.ravel()])
    y = np.concatenate([to_format(d, r.uniform(-4, 4, 200) * np.exp2(r.integers(-30, 30, 200))).astype(np.float64),
                        gy.ravel()])
    n = 1 << (x.size - 1).bit_length()  # a power of two: pad with ones
    x, y = np.pad(x, (0, n - x.size), constant_values=1.0), np.pad(y, (0, n - y.size), constant_values=1.0)
    np_t = {"f32": np.float32, "f64": np.float64, "f16": np.float16}.get(d.name) or d.np_dtype
    for mode in ("zero", "negative_inf", "positive_inf"):
        with np.errstate(all="ignore"):
            got = _float_kernel(fmt, op, mode, x.astype(np_t), y.astype(np_t)).astype(np.float64)
            assert got.tobytes() == binary_directed(op, x, y, d.name, mode).astype(np.float64).tobytes()
        for p, q, g in zip(x.tolist(), y.tolist(), got.tolist()):
            w = _exact_binary(op, p, q, d.name, mode)
            assert (math.isnan(w) and math.isnan(g)) or (w == g and math.copysign(1, w) == math.copysign(1, g)), \
                (d.name, op, mode, p, q, g, w)


def test_nearest_even_still_takes_the_numpy_path():
    x = np.array([1.0, 0.1], np.float32)
    y = np.array([2.0**-24, 0.2], np.float32)
    assert _float_kernel(F32, "addf", "nearest_even", x, y).tolist() == (x + y).tolist()


# ---- max / min folds over both zeros ------------------------------------------------------------------


@pytest.mark.parametrize("prop", [False, True])
def test_reduce_and_scan_max_min_of_both_zeros_follow_maxf(prop):
    """reduce_max of [-0, +0, -1, -2] answered -0 on the host (np.fmax keeps an operand's zero)
    where maxf -- and so a reduction whose body is maxf -- answers +0 (the H200's maxf / minf:
    bench/results/diff_h200.json float_maxmin; IEEE 754-2019 maximum / minimum)."""
    x = np.array([-0.0, 0.0, -1.0, -2.0, 0.0, -0.0, 1.0, 2.0], np.float32)
    outs = [np.zeros(2, np.float32) for _ in range(2)] + [np.zeros(8, np.float32) for _ in range(2)]

    def body():
        t = ti.load(ti.param(F32, 0), ti.idx_const(0), [2, 4])
        mx = ti.d_reduce(t, float("-inf"), lambda a, e: ti.max(a, e, propagate_nan=prop), dim=1)
        mn = ti.d_reduce(t, float("inf"), lambda a, e: ti.min(a, e, propagate_nan=prop), dim=1)
        ti.store(ti.param(F32, 1), ti.idx_const(0), mx)
        ti.store(ti.param(F32, 2), ti.idx_const(0), mn)
        flat = ti.reshape(t, [8])
        smx = ti.d_scan(flat, float("-inf"), lambda a, e: ti.max(a, e, propagate_nan=prop))
        smn = ti.d_scan(flat, float("inf"), lambda a, e: ti.min(a, e, propagate_nan=prop))
        ti.store(ti.param(F32, 3), ti.idx_const(0), smx)
        ti.store(ti.param(F32, 4), ti.idx_const(0), smn)

    prog = ti.trace_kernel("k", [ti.ByPtr(F32)] * 5, body)
    run_host(prog, [x] + outs, (1,))
    sign = lambda v: [math.copysign(1, e) for e in v.tolist()]  # noqa: E731
    assert outs[0].tolist() == [0.0, 2.0] and sign(outs[0])[0] > 0  # max(-0, +0, -1, -2) is +0
    assert outs[1].tolist() == [-2.0, -0.0] and sign(outs[1])[1] < 0  # min(+0, -0, 1, 2) is -0
    assert sign(outs[2])[:4] == [-1, 1, 1, 1]  # the prefix max: -0, then +0 once +0 is in
    assert sign(outs[3])[4:6] == [-1, -1] and outs[3][4:6].tolist() == [-2.0, -2.0]
    assert sign(outs[3])[:2] == [-1, -1] and outs[3][:2].tolist() == [0.0, 0.0]


def test_rounding_is_a_type_and_its_strings_alike():
    """The spec's Rounding (the audit: modes were strings only): a member records what its string does."""
    x = np.array([1.0] * 4, np.float32)
    y = np.array([2.0**-30] * 4, np.float32)
    for member, name in ((ti.Rounding.Down, "negative_inf"), (ti.Rounding.Up, "positive_inf"),
                         (ti.Rounding.TowardZero, "zero"), (ti.Rounding.NearestEven, "nearest_even")):
        assert ti.rounding_name(member) == name == member.value
        assert _float_kernel(F32, "addf", member, x, y).tobytes() == _float_kernel(F32, "addf", name, x, y).tobytes()
    with pytest.raises(ti.TileirError, match="tileir.Rounding"):
        _float_kernel(F32, "addf", "down", x, y)


def test_a_signalling_nan_in_max_and_min_answers_the_other_operand():
    """numpy's fmax / fmin answer NaN for a signalling NaN (IEEE 754-2008 maxNum); the H200's maxf / minf
    answer the other operand, as for a quiet one (campaign 5's 109018, a scan max over packed f16 bits:
    bench/results/fuzz_campaign5_h200.json). Kills: hostmath.maxmin or the fold's fast path without
    quiet_nans."""
    from tileir import hostmath as H

    snan = np.array([0x7FA00000], np.uint32).view(np.float32)
    assert H.maxmin(np.float32(3738.0), snan, True, False) == 3738.0
    assert H.maxmin(snan, np.float32(-1.0), False, False) == -1.0
    assert np.isnan(H.maxmin(np.float32(1.0), snan, True, True))  # propagate_nan: NaN
    x = np.array([3738.0, snan[0], -1.88, 5.0], np.float32)
    outs = [np.zeros(4, np.float32), np.zeros(1, np.float32)]

    def body():
        t = ti.load(ti.param(F32, 0), ti.idx_const(0), [4])
        ti.store(ti.param(F32, 1), ti.idx_const(0), ti.d_scan(t, float("-inf"), lambda a, e: ti.max(a, e)))
        ti.store(ti.param(F32, 2), ti.idx_const(0),
                 ti.d_reduce(ti.reshape(t, [1, 4]), float("inf"), lambda a, e: ti.min(a, e), dim=1))

    run_host(ti.trace_kernel("k", [ti.ByPtr(F32)] * 3, body), [x] + outs, (1,))
    assert outs[0].tolist() == [3738.0, 3738.0, 3738.0, 3738.0]  # the host said NaN, then -1.88, then 5
    assert outs[1][0] == np.float32(-1.88)


# ---- flush_to_zero on the host --------------------------------------------------------------------------

TINY = 2.0 ** -126  # f32's least normal magnitude
FTZ_LANES = np.array([-150.0, -140.0, -127.0, -126.0, -125.0, 0.0, 1e-40, -1e-40, 3.0, -1e-45, 2.0 ** -127, -1.0,
                      -0.0, 100.0, -np.inf, 0.5], np.float32)


def _f32_kernel(make, *inputs):
    """f32 tiles of ``inputs`` in, ``make(*tiles)`` out, on the host reference."""
    n = inputs[0].size
    k = len(inputs)

    def body():
        ts = [ti.load(ti.param(F32, i), ti.idx_const(0), [n]) for i in range(k)]
        ti.store(ti.param(F32, k), ti.idx_const(0), make(*ts))

    out = np.zeros(n, np.float32)
    prog = ti.trace_kernel("k", [ti.ByPtr(F32)] * (k + 1), body)
    run_host(prog, [x.copy() for x in inputs] + [out], (1,))
    return out


def test_exp2_ftz_flushes_subnormal_results():
    plain = _f32_kernel(ti.exp2, FTZ_LANES)
    flushed = _f32_kernel(lambda x: ti.exp2(x, ftz=True), FTZ_LANES)
    sub = (plain != 0) & (np.abs(plain) < TINY)
    assert sub.sum() == 2  # 2^-140 and 2^-127 are subnormal without the flag (2^-150 rounds to 0)
    assert (flushed[sub] == 0).all() and (np.signbit(flushed[sub]) == np.signbit(plain[sub])).all()
    assert (flushed[~sub] == plain[~sub]).all()  # (a subnormal input's 2^x is 1 either way: add's test sees it)
    assert flushed[FTZ_LANES == np.float32(-126.0)][0] == np.float32(TINY)  # the least normal stays


def test_add_ftz_flushes_on_the_host_too():
    a = np.array([1e-39, -1e-39, 2e-38, 3e-39, 1.0, 2e-38, 1.0, 1.0], np.float32)
    b = np.array([1e-39, 0.0, 1e-39, -1e-39, 1e-39, -1.9e-38, 1.0, 1.0], np.float32)
    plain = _f32_kernel(ti.add, a, b)
    flushed = _f32_kernel(lambda x, y: ti.add(x, y, ftz=True), a, b)
    want = np.array([0.0, 0.0, 2e-38, 0.0, 1.0, 0.0, 2.0, 2.0], np.float32)  # inputs, then sums, flushed (-0 + 0: +0)
    assert (plain != flushed).any()
    assert (flushed == want).all() and (np.signbit(flushed) == np.signbit(want)).all()


def test_ftz_refusals_name_the_fix():
    def exp2_f16():
        ti.exp2(ti.load(ti.param(F16, 0), ti.idx_const(0), [16]), ftz=True)

    with pytest.raises(ti.TileirError, match=r"exp2\(ftz=True\) of a f16 tile.*convert to f32"):
        ti.trace_kernel("k", [ti.ByPtr(F16)], exp2_f16)

    def add_bf16():  # tileiras: "flush_to_zero modifier only supported for f32 data type"
        x = ti.load(ti.param(BF16, 0), ti.idx_const(0), [16])
        ti.add(x, x, ftz=True)

    with pytest.raises(ti.TileirError, match=r"add\(ftz=True\) of a bf16 tile"):
        ti.trace_kernel("k", [ti.ByPtr(BF16)], add_bf16)

    from tileir.surface.elementwise import record

    def log_ftz():
        record("log", ti.load(ti.param(F32, 0), ti.idx_const(0), [16]), ftz=True)

    with pytest.raises(ti.TileirError, match="log has no flush_to_zero"):
        ti.trace_kernel("k", [ti.ByPtr(F32)], log_ftz)
