"""The spine's slice of the surface, one small kernel a feature: the host reference answers what
numpy answers, and the bytes read back (tileirdisasm) as exactly the text render_kernel gives."""

import math

import numpy as np
import pytest

import tileir as ti
from tileir import F16, F32, F64, I32
from tileir.render import normalise


def check(fn, params, args, grid=(1,), disasm=None):
    prog = ti.trace_kernel("k", params, fn)
    from tileir.ref import run_host

    run_host(prog, args, grid)
    k = ti.lower(prog)
    if disasm is not None:
        assert normalise(disasm(ti.encode_kernel(k))) == normalise(ti.render_kernel(k))
    return args


def test_elementwise_floats_and_operators(disasm):
    x = np.linspace(-3, 3, 64).astype(np.float32)
    out = np.zeros((7, 64), np.float32)

    def body():
        p, o = ti.param(F32, 0), ti.param(F32, 1)
        z = ti.idx_const(0)
        v = ti.load(p, z, [64])
        w = v * 2.0 - 1.0
        rows = [ti.add(v, w), ti.sub(v, w), ti.mul(v, w), ti.div(w, ti.abs(v) + 1.0), ti.max(v, w), ti.min(-v, w),
                ti.fma(v, w, v)]
        for i, r in enumerate(rows):
            ti.store(o, ti.idx_const(64 * i), r)

    check(body, (ti.ByPtr(F32), ti.ByPtr(F32)), [x, out], disasm=disasm)
    w = x * 2 - 1
    want = [x + w, x - w, x * w, w / (np.abs(x) + 1), np.maximum(x, w), np.minimum(-x, w),
            (x.astype(np.float64) * w + x).astype(np.float32)]
    for i, r in enumerate(want):
        assert np.array_equal(out[i], r.astype(np.float32)), i


def test_exp_and_sqrt(disasm):
    x = np.linspace(0, 4, 32).astype(np.float32)
    out = np.zeros((2, 32), np.float32)

    def body():
        p, o = ti.param(F32, 0), ti.param(F32, 1)
        v = ti.load(p, ti.idx_const(0), [32])
        ti.store(o, ti.idx_const(0), ti.exp(v))
        ti.store(o, ti.idx_const(32), ti.sqrt(v))

    check(body, (ti.ByPtr(F32), ti.ByPtr(F32)), [x, out], disasm=disasm)
    assert np.allclose(out[0], np.exp(x), rtol=1e-6)
    assert np.array_equal(out[1], np.sqrt(x))  # correctly rounded: exact


def test_ordered_compares_on_nan(disasm):
    x = np.array([1, np.nan, 3, -0.0] * 4, np.float32)
    y = np.array([1, 1, np.nan, 0.0] * 4, np.float32)
    out = np.zeros((6, 16), np.int32)

    def body():
        a, b, o = ti.param(F32, 0), ti.param(F32, 1), ti.param(I32, 2)
        z = ti.idx_const(0)
        u, v = ti.load(a, z, [16]), ti.load(b, z, [16])
        for i, f in enumerate((ti.eq, ti.ne, ti.lt, ti.le, ti.gt, ti.ge)):
            ti.store(o, ti.idx_const(16 * i), ti.select(f(u, v), ti.i_const(1), ti.i_const(0)))

    check(body, (ti.ByPtr(F32), ti.ByPtr(F32), ti.ByPtr(I32)), [x, y, out], disasm=disasm)
    with np.errstate(invalid="ignore"):
        for i, f in enumerate((np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal)):
            want = f(x, y) & ~np.isnan(x) & ~np.isnan(y)  # ordered: NaN answers 0, ne included
            assert np.array_equal(out[i], want.astype(np.int32)), i


def test_integer_ops_wrap_and_compare_signed(disasm):
    a = np.array([2**31 - 1, -5, 7, -(2**31)] * 4, np.int32)
    b = np.array([1, 3, -2, -1] * 4, np.int32)
    out = np.zeros((4, 16), np.int32)

    def body():
        p, q, o = ti.param(I32, 0), ti.param(I32, 1), ti.param(I32, 2)
        z = ti.idx_const(0)
        u, v = ti.load(p, z, [16]), ti.load(q, z, [16])
        ti.store(o, ti.idx_const(0), ti.add_i(u, v))
        ti.store(o, ti.idx_const(16), ti.sub_i(u, v))
        ti.store(o, ti.idx_const(32), ti.mul_i(u, v))
        ti.store(o, ti.idx_const(48), ti.select(ti.lt_i(u, v), ti.i_const(1), ti.i_const(0)))

    check(body, (ti.ByPtr(I32),) * 3, [a, b, out], disasm=disasm)
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    wrap = lambda x: ((x + 2**31) % 2**32 - 2**31).astype(np.int32)  # noqa: E731
    assert np.array_equal(out[0], wrap(a64 + b64))
    assert np.array_equal(out[1], wrap(a64 - b64))
    assert np.array_equal(out[2], wrap(a64 * b64))
    assert np.array_equal(out[3], (a < b).astype(np.int32))


def test_conversions(disasm):
    x = np.array([1.5, -2.7, 3.0, 1e-3] * 4, np.float32)
    outf = np.zeros(16, np.float16)
    outi = np.zeros(16, np.int32)
    outd = np.zeros(16, np.float64)

    def body():
        p = ti.param(F32, 0)
        v = ti.load(p, ti.idx_const(0), [16])
        ti.store(ti.param(F16, 1), ti.idx_const(0), ti.float_to_float(v, F16))
        i = ti.float_to_int(v, I32)
        ti.store(ti.param(I32, 2), ti.idx_const(0), i)
        ti.store(ti.param(F64, 3), ti.idx_const(0), ti.int_to_float(i, F64) + ti.to(v, F64))

    check(body, (ti.ByPtr(F32), ti.ByPtr(F16), ti.ByPtr(I32), ti.ByPtr(F64)), [x, outf, outi, outd], disasm=disasm)
    assert np.array_equal(outf, x.astype(np.float16))
    assert np.array_equal(outi, np.trunc(x).astype(np.int32))
    assert np.array_equal(outd, np.trunc(x).astype(np.float64) + x.astype(np.float64))


def test_reductions_keepdims_broadcast_reshape(disasm):
    x = np.arange(32, dtype=np.float32).reshape(4, 8) - 10
    out = np.zeros((4, 4, 8), np.float32)

    def body():
        p, o = ti.param(F32, 0), ti.param(F32, 1)
        v = ti.load(p, ti.idx_const(0), [4, 8])
        for i, r in enumerate((ti.reduce_sum(v, 1, keepdims=True), ti.reduce_max(v, 1, keepdims=True),
                               ti.reduce_min(v, 0, keepdims=True))):
            ti.store(o, ti.idx_const(32 * i), ti.broadcast(r, [4, 8]))
        ti.store(o, ti.idx_const(96), ti.reshape(ti.reshape(v, [32]), [4, 8]))

    check(body, (ti.ByPtr(F32), ti.ByPtr(F32)), [x, out], disasm=disasm)
    assert np.array_equal(out[0], np.broadcast_to(x.sum(1, keepdims=True), (4, 8)))
    assert np.array_equal(out[1], np.broadcast_to(x.max(1, keepdims=True), (4, 8)))
    assert np.array_equal(out[2], np.broadcast_to(x.min(0, keepdims=True), (4, 8)))
    assert np.array_equal(out[3], x)


@pytest.mark.parametrize("step", [1, 3])
def test_d_range_with_device_bounds_and_step(step, disasm):
    n = np.array([10], np.int32)
    out = np.zeros(16, np.float32)

    def body():
        hi = ti.idx_of(ti.load(ti.param(I32, 0), ti.idx_const(0), [1]).reshape([]))
        acc = ti.carry(ti.full([16], 0.0, F32))
        for j in ti.d_range(ti.idx_const(1), hi, ti.By(step)):
            ti.set(acc, ti.get(acc) + ti.int_to_float(ti.broadcast(ti.idx_as_tile(j), [16]), F32))
        ti.store(ti.param(F32, 1), ti.idx_const(0), ti.get(acc))

    check(body, (ti.ByPtr(I32), ti.ByPtr(F32)), [n, out], disasm=disasm)
    assert np.all(out == sum(range(1, 10, step)))


def test_strided_load_lanes_and_tail_mask(disasm):
    x = np.arange(100, dtype=np.float32)
    out = np.full(64, -1.0, np.float32)

    def body():
        p, o = ti.param(F32, 0), ti.param(F32, 1)
        base = ti.tile_at(ti.block_id(0), 8)
        t = ti.load(p, base, [8, 8], strides=[10, 1])  # an 8x8 block of a 10-wide array
        m = ti.tail_mask(ti.idx_const(0), [64], 50)
        ti.store(o, ti.idx_const(0), ti.reshape(t, [64]), mask=m)

    check(body, (ti.ByPtr(F32), ti.ByPtr(F32)), [x, out], disasm=disasm)
    want = np.array([[r * 10 + c for c in range(8)] for r in range(8)], np.float32).reshape(64)
    assert np.array_equal(out[:50], want[:50]) and np.all(out[50:] == -1.0)


def test_masked_load_pad_reads_the_pad():
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(16, np.float32)

    def body():
        m = ti.tail_mask(ti.idx_const(0), [16], 8)
        v = ti.load(ti.param(F32, 0), ti.idx_const(0), [16], mask=m, pad=ti.f_const(F32, -math.inf))
        ti.store(ti.param(F32, 1), ti.idx_const(0), v)

    check(body, (ti.ByPtr(F32), ti.ByPtr(F32)), [x, out])
    assert np.array_equal(out[:8], x) and np.all(out[8:] == -np.inf)


def test_f_const_rounds_where_the_value_is_made():
    seen = {}

    def body():
        c = ti.f_const(ti.BF16, 0.1)
        seen["v"] = ti.dev.dev().prog.consts[c.h]

    ti.trace_kernel("k", (), body)
    assert seen["v"] == 0.10009765625


def test_mma_f16_into_f32(disasm):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((16, 32)).astype(np.float16)
    b = rng.standard_normal((32, 16)).astype(np.float16)
    out = np.zeros((16, 16), np.float32)

    def body():
        z = ti.idx_const(0)
        ta = ti.load(ti.param(F16, 0), z, [16, 32])
        tb = ti.load(ti.param(F16, 1), z, [32, 16])
        ti.store(ti.param(F32, 2), z, ti.mma(ta, tb, ti.lit(0.0)))

    check(body, (ti.ByPtr(F16), ti.ByPtr(F16), ti.ByPtr(F32)), [a, b, out], disasm=disasm)
    assert np.allclose(out, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5, atol=1e-5)
