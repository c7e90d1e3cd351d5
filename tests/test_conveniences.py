"""What a Triton user reaches for, each recorded through the existing operations: ``**``, indexing
and slicing a tile, ``rint``, integer ``full`` / ``zeros``, ``fma`` widening like ``+``, bitwise
operators on narrow integers. The host reference against numpy; where the bytes are new to the
goldens (a rank-0 reshape after extract, bitcasts to i16 / i64, i8 bitwise ops) tileirdisasm
reads them back as render's text and tileiras assembles them for sm_90."""

import ml_dtypes
import numpy as np
import pytest

import tileir as ti
from tests.kernelcheck import refused, run_and_read_back
from tileir import BF16, F16, F32, F64, I8, I16, I32, I64, TileirError
from tileir.ref import ref_fpowi

Z = ti.idx_const


def _store(p, base, t):
    """Store a tile of any rank (a rank-0 one as [1])."""
    ti.store(p, Z(base), t.reshape([1]) if not t.shape else t)


# ---- ** --------------------------------------------------------------------------------------------


def _f32_products(x, n):
    """x ** n as right-to-left binary exponentiation, each product rounded to f32 (fpowi's sequence)."""
    return ref_fpowi(x, np.full(x.shape, n), "f32")


def test_power_by_whole_numbers_is_products(disasm):
    x = np.linspace(-2.5, 3.0, 64).astype(np.float32)
    powers = (0, 1, 2, 3, 5, 8, -1, -3)
    out = np.zeros((len(powers), 64), np.float32)

    def body():
        v = ti.load(ti.param(F32, 0), Z(0), [64])
        for i, n in enumerate(powers):
            _store(ti.param(F32, 1), 64 * i, v ** n)

    k, _ = run_and_read_back(body, (ti.ByPtr(F32), ti.ByPtr(F32)), [x, out], disasm=disasm)
    for i, n in enumerate(powers):
        assert out[i].tobytes() == _f32_products(x, n).tobytes(), n
        with np.errstate(divide="ignore"):
            assert np.allclose(out[i], np.power(x.astype(np.float64), n), rtol=1e-5), n
    names = [type(i).__name__ for i in k.body]
    assert "FloatPowI" not in names  # products, at every bytecode version


def test_power_x_squared_is_one_multiply():
    def body():
        v = ti.load(ti.param(F32, 0), Z(0), [16])
        ti.store(ti.param(F32, 0), Z(0), v ** 2)

    k = ti.lower(ti.trace_kernel("k", (ti.ByPtr(F32),), body))
    assert sum(type(i).__name__ == "FloatBin" for i in k.body) == 1


def test_power_by_a_float_is_pow_and_by_an_int_tile_is_powi(disasm):
    x = np.linspace(0.25, 4.0, 32).astype(np.float32)
    n = np.arange(-4, 28, dtype=np.int32)
    out = np.zeros((3, 32), np.float32)

    def body():
        v = ti.load(ti.param(F32, 0), Z(0), [32])
        e = ti.load(ti.param(I32, 1), Z(0), [32])
        _store(ti.param(F32, 2), 0, v ** 0.5)
        _store(ti.param(F32, 2), 32, v ** e)
        _store(ti.param(F32, 2), 64, 2.0 ** v)

    run_and_read_back(body, (ti.ByPtr(F32), ti.ByPtr(I32), ti.ByPtr(F32)), [x, n, out], disasm=disasm)
    assert np.allclose(out[0], np.sqrt(x), rtol=1e-6)
    assert out[1].tobytes() == ref_fpowi(x, n, "f32").tobytes()
    assert np.allclose(out[2], np.exp2(x), rtol=1e-6)


def test_integer_tiles_to_whole_powers_wrap():
    x = np.arange(-8, 8, dtype=np.int32) * 1000
    out = np.zeros((3, 16), np.int32)

    def body():
        v = ti.load(ti.param(I32, 0), Z(0), [16])
        _store(ti.param(I32, 1), 0, v ** 0)
        _store(ti.param(I32, 1), 16, v ** 2)
        _store(ti.param(I32, 1), 32, v ** 3)

    run_and_read_back(body, (ti.ByPtr(I32), ti.ByPtr(I32)), [x, out])
    assert (out[0] == 1).all()
    assert np.array_equal(out[1], (x * x).astype(np.int32))
    with np.errstate(over="ignore"):
        assert np.array_equal(out[2], (x.astype(np.int64) ** 3).astype(np.int32))  # wraps modulo 2^32


@pytest.mark.parametrize("expr, words, fix", [
    (lambda v: v ** -1, "negative power", "int_to_float"),
    (lambda v: v ** 0.5, "whole-number", "int_to_float"),
    (lambda v: 2.0 ** v, "power of an i32 tile", "powi(f_const"),
])
def test_power_refusals(expr, words, fix):
    e = refused(lambda: expr(ti.load(ti.param(I32, 0), Z(0), [16])), (ti.ByPtr(I32),))
    assert words in str(e) and fix in e.fix


# ---- indexing ----------------------------------------------------------------------------------


def test_indexing_and_slicing_a_tile(disasm):
    x = np.arange(8 * 64, dtype=np.float32).reshape(8, 64)
    cases = [
        (lambda t: t[3], x[3]),
        (lambda t: t[-1], x[-1]),
        (lambda t: t[:, 16:32], x[:, 16:32]),
        (lambda t: t[4:8, 32:], x[4:8, 32:]),
        (lambda t: t[..., 5], x[..., 5]),
        (lambda t: t[2, 7], x[2, 7]),
        (lambda t: t[None], x[None]),
        (lambda t: t[:, None, 0:2], x[:, None, 0:2]),
        (lambda t: t[np.int64(1)], x[1]),
        (lambda t: t[:], x),
    ]
    out = np.zeros(sum(w.size for _, w in cases), np.float32)

    def body():
        t = ti.load(ti.param(F32, 0), Z(0), [8, 64])
        at = 0
        for f, want in cases:
            got = f(t)
            assert got.shape == list(want.shape)
            _store(ti.param(F32, 1), at, got.reshape([want.size]) if got.ndim > 1 else got)
            at += want.size

    run_and_read_back(body, (ti.ByPtr(F32), ti.ByPtr(F32)), [x, out], disasm=disasm)
    at = 0
    for _, want in cases:
        assert np.array_equal(out[at:at + want.size], want.reshape(-1))
        at += want.size


def test_indexing_by_a_runtime_index(disasm):
    x = np.arange(4 * 16, dtype=np.float32).reshape(4, 16)
    out = np.zeros((4, 16), np.float32)

    def body():
        t = ti.load(ti.param(F32, 0), Z(0), [4, 16])
        b = ti.block_id(0)
        ti.store(ti.param(F32, 1), ti.tile_at(b, 16), t[b])

    run_and_read_back(body, (ti.ByPtr(F32), ti.ByPtr(F32)), [x, out], grid=(4,), disasm=disasm)
    assert np.array_equal(out, x)


def test_indexing_records_nothing_when_nothing_is_cut():
    def body():
        t = ti.load(ti.param(F32, 0), Z(0), [8, 16])
        assert t[:, :] is t and t[...] is t

    ti.trace_kernel("k", (ti.ByPtr(F32),), body)


@pytest.mark.parametrize("key, words, fix", [
    ((slice(None), slice(8, 24)), "power-of-two run", "t[:, 16:32]"),
    ((slice(None), slice(0, 24)), "power-of-two run", "cat two slices"),
    ((slice(None), slice(None, None, 2)), "steps by 1", "strides="),
    ((1, 2, 3), "3 indices into a rank-2 tile", "at most 2"),
    ((8,), "index 8 into dimension 0 of length 8", "-8 .. 7"),
    ((1.0,), "with a float", "an int, an Idx"),
])
def test_indexing_refusals(key, words, fix):
    e = refused(lambda: ti.load(ti.param(F32, 0), Z(0), [8, 32])[key], (ti.ByPtr(F32),))
    assert words in str(e) and fix in e.fix


# ---- rint ------------------------------------------------------------------------------------------

_RINT_LANES = [0.0, -0.0, 0.3, -0.3, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.49, -3.51, 100.5, 101.5, 1e3 + 0.5,
               np.inf, -np.inf, np.nan, 7.0, -7.0]


@pytest.mark.parametrize("fmt, npd, big", [(F32, np.float32, 2.0**23), (F64, np.float64, 2.0**52),
                                           (F16, np.float16, 2.0**10), (BF16, ml_dtypes.bfloat16, 2.0**7)])
def test_rint_rounds_half_to_even(fmt, npd, big, disasm):
    lanes = _RINT_LANES + [big - 0.5, -(big - 0.5), big - 1.5, big, big + 2, -big - 2, big / 2 + 0.5]
    lanes += [0.0] * (32 - len(lanes))
    x = np.array(lanes, dtype=np.float64).astype(npd)
    out = np.zeros(32, npd)

    def body():
        ti.store(ti.param(fmt, 1), Z(0), ti.rint(ti.load(ti.param(fmt, 0), Z(0), [32])))

    run_and_read_back(body, (ti.ByPtr(fmt), ti.ByPtr(fmt)), [x, out], disasm=disasm)
    want = np.rint(x.astype(np.float64)).astype(npd)
    assert out.tobytes() == want.tobytes(), (out, want)  # the signs of the zeros too


def test_rint_refuses_integers():
    e = refused(lambda: ti.rint(ti.load(ti.param(I32, 0), Z(0), [16])), (ti.ByPtr(I32),))
    assert "rint of an i32 tile" in str(e) and "int_to_float" in e.fix


# ---- integer full and zeros ---------------------------------------------------------------------


def test_integer_full_and_zeros(disasm):
    out32 = np.ones(64, np.int32)
    out8 = np.zeros(64, np.int8)
    outf = np.ones(16, np.float16)

    def body():
        ti.store(ti.param(I32, 0), Z(0), ti.full([32], 7, I32))
        ti.store(ti.param(I32, 0), Z(32), ti.zeros([32], I32))
        ti.store(ti.param(I8, 1), Z(0), ti.full([64], 300, I8))  # truncated to the width: 44
        ti.store(ti.param(F16, 2), Z(0), ti.zeros([16], F16))

    run_and_read_back(body, (ti.ByPtr(I32), ti.ByPtr(I8), ti.ByPtr(F16)), [out32, out8, outf], disasm=disasm)
    assert (out32[:32] == 7).all() and (out32[32:] == 0).all()
    assert (out8 == 44).all() and (outf == 0).all()


def test_integer_full_refuses_a_fraction_and_zeros_wants_a_format():
    e = refused(lambda: ti.full([16], 1.5, I32), (ti.ByPtr(I32),))
    assert "whole numbers" in str(e) and "F32" in e.fix
    e = refused(lambda: ti.zeros([16]), (ti.ByPtr(I32),))
    assert "without a format" in str(e) and "zeros([16], F32)" in e.fix


# ---- fma widens like + and * ----------------------------------------------------------------------


def test_fma_widens_operands_that_differ_in_ones(disasm):
    rng = np.random.default_rng(3)
    a = rng.standard_normal(8).astype(np.float32)
    b = rng.standard_normal(16).astype(np.float32)
    c = rng.standard_normal((8, 16)).astype(np.float32)
    out = np.zeros((8, 16), np.float32)

    def body():
        ta = ti.load(ti.param(F32, 0), Z(0), [8, 1])
        tb = ti.load(ti.param(F32, 1), Z(0), [1, 16])
        tc = ti.load(ti.param(F32, 2), Z(0), [8, 16])
        ti.store(ti.param(F32, 3), Z(0), ti.fma(ta, tb, tc))

    run_and_read_back(body, (ti.ByPtr(F32),) * 4, [a, b, c, out], disasm=disasm)
    want = (a[:, None].astype(np.float64) * b[None, :] + c).astype(np.float32)  # f32 products are exact in f64
    assert np.array_equal(out, want)


def test_fma_still_refuses_shapes_that_do_not_widen():
    def body():
        ta = ti.load(ti.param(F32, 0), Z(0), [8, 2])
        ti.fma(ta, ti.load(ti.param(F32, 0), Z(0), [8, 16]), 1.0)

    e = refused(body, (ti.ByPtr(F32),))
    assert "[8, 2]" in str(e) or "[8, 16]" in str(e)


# ---- bitwise operators on narrow integers ---------------------------------------------------------


@pytest.mark.parametrize("fmt, npd", [(I8, np.int8), (I16, np.int16), (I64, np.int64)])
def test_bitwise_operators_on_every_integer_width(fmt, npd, disasm):
    rng = np.random.default_rng(5)
    info = np.iinfo(npd)
    x = rng.integers(info.min, info.max, 32, dtype=npd)
    y = rng.integers(info.min, info.max, 32, dtype=npd)
    out = np.zeros((8, 32), npd)

    def body():
        a = ti.load(ti.param(fmt, 0), Z(0), [32])
        b = ti.load(ti.param(fmt, 1), Z(0), [32])
        shift = ti.full([32], 3, fmt)
        rows = [a & b, a | b, a ^ b, ti.andi(a, b), ti.ori(a, b), ti.xori(a, b), a << shift, a >> shift]
        for i, r in enumerate(rows):
            ti.store(ti.param(fmt, 2), Z(32 * i), r)

    run_and_read_back(body, (ti.ByPtr(fmt),) * 3, [x, y, out], disasm=disasm)
    want = [x & y, x | y, x ^ y, x & y, x | y, x ^ y, x << npd(3), x >> npd(3)]
    for i, w in enumerate(want):
        assert np.array_equal(out[i], w.astype(npd)), i


@pytest.mark.parametrize("fn, generic", [(ti.xor_i, "xori"), (ti.and_i, "andi"), (ti.or_i, "ori"),
                                         (ti.add_i, "addi")])
def test_i32_only_spellings_on_narrow_ints_name_one_that_exists(fn, generic):
    def body():
        a = ti.load(ti.param(I8, 0), Z(0), [16])
        fn(a, a)

    e = refused(body, (ti.ByPtr(I8),))
    assert "takes i32 tiles, got i8" in str(e) and e.fix.startswith(f"{generic}(a, b)")
    assert hasattr(ti, generic)


def test_i32_only_operations_without_a_generic_say_how_to_widen():
    def body():
        a = ti.load(ti.param(I8, 0), Z(0), [16])
        ti.div_i(a, a)

    e = refused(body, (ti.ByPtr(I8),))
    assert "ext_u8" in e.fix and "generic spelling" not in e.fix


def test_operators_on_i32_record_what_the_named_functions_record():
    def named():
        a = ti.load(ti.param(I32, 0), Z(0), [16])
        ti.store(ti.param(I32, 0), Z(0), ti.xor_i(ti.and_i(a, a), ti.shl_i(a, a)))

    def ops():
        a = ti.load(ti.param(I32, 0), Z(0), [16])
        ti.store(ti.param(I32, 0), Z(0), (a & a) ^ (a << a))

    def text(body):
        return ti.render_kernel(ti.lower(ti.trace_kernel("k", (ti.ByPtr(I32),), body)))

    assert text(named) == text(ops)


def test_a_narrow_tile_meets_a_mismatched_one():
    with pytest.raises(TileirError):
        ti.trace_kernel("k", (ti.ByPtr(I8), ti.ByPtr(I16)), lambda: ti.load(ti.param(I8, 0), Z(0), [16])
                        ^ ti.load(ti.param(I16, 1), Z(0), [16]))
