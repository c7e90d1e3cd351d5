"""atomic_rmw (every mode), atomic_add and atomic_cas: the host against numpy, the bytes read back
as render_kernel's text, tileiras assembling them, and every recording refusal."""

import numpy as np
import pytest

import tileir as ti
from tests.kernelcheck import refused, run_and_read_back
from tileir import BF16, F16, F32, F64, I8, I32, I64, TileirError, ir
from tileir.assemble import assemble
from tileir.render import normalise


def check(body, params, args, grid=(1,), disasm=None, targets=("sm_90", "sm_80")):
    return run_and_read_back(body, params, args, grid, disasm, targets=targets)[0]


def refusal(body, params=(ti.ByPtr(I32), ti.ByPtr(F32))) -> TileirError:
    return refused(body, params)


def test_histogram_with_colliding_lanes(disasm):
    data = np.random.default_rng(1).integers(0, 16, 256).astype(np.int32)
    hist = np.zeros(16, np.int32)

    def body():
        d, h = ti.param(I32, 0), ti.param(I32, 1)
        base = ti.tile_at(ti.block_id(0), 64)
        ti.atomic_add(h, ti.load(d, base, [64]), 1)

    k = check(body, (ti.ByPtr(I32), ti.ByPtr(I32)), [data, hist], grid=(4,), disasm=disasm)
    assert np.array_equal(hist, np.bincount(data, minlength=16))
    (rmw,) = [x for x in k.body if isinstance(x, ir.AtomicRMWPtr)]
    assert rmw.mode == "add" and rmw.sem == "relaxed" and rmw.scope == "device"


def _np_mode(mode, old, v, bits):
    u = np.uint32 if bits == 32 else np.uint64
    return {"and": old & v, "or": old | v, "xor": old ^ v, "add": old + v, "max": np.maximum(old, v),
            "min": np.minimum(old, v), "xchg": v, "umax": np.where(old.view(u) >= v.view(u), old, v),
            "umin": np.where(old.view(u) <= v.view(u), old, v)}[mode]


INT_MODES = ("and", "or", "xor", "add", "max", "min", "umax", "umin", "xchg")


@pytest.mark.parametrize("fmt,np_t", [(I32, np.int32), (I64, np.int64)])
def test_every_integer_mode(disasm, fmt, np_t):
    rng = np.random.default_rng(7)
    buf0 = rng.integers(-1000, 1000, 16 * len(INT_MODES)).astype(np_t)
    buf0[::5] = np.iinfo(np_t).max  # add wraps
    vals = rng.integers(-1000, 1000, 16 * len(INT_MODES)).astype(np_t)
    buf, old = buf0.copy(), np.zeros_like(buf0)
    perm = rng.permutation(16).astype(np.int32)
    idx = np.concatenate([perm, np.arange(16, dtype=np.int32)])

    def body():
        b, v, o, ix = ti.param(fmt, 0), ti.param(fmt, 1), ti.param(fmt, 2), ti.param(I32, 3)
        p = ti.load(ix, ti.idx_const(0), [16])
        m = ti.lt_i(ti.load(ix, ti.idx_const(16), [16]), ti.i_const(12))
        for k, mode in enumerate(INT_MODES):
            base = ti.idx_const(16 * k)
            r = ti.atomic_rmw(b, mode, ti.addi(p, ti.i_const(16 * k)), ti.load(v, base, [16]), mask=m)
            ti.store(o, base, r)

    params = (ti.ByPtr(fmt), ti.ByPtr(fmt), ti.ByPtr(fmt), ti.ByPtr(I32))
    check(body, params, [buf, vals, old, idx], disasm=disasm if fmt is I32 else None)
    lane_on = np.arange(16) < 12
    with np.errstate(over="ignore"):
        for k, mode in enumerate(INT_MODES):
            s = slice(16 * k, 16 * k + 16)
            at = 16 * k + perm
            before = buf0[at]
            want_mem = buf0[s].copy()
            want_mem[perm[lane_on]] = _np_mode(mode, before, vals[s], 8 * buf0.itemsize)[lane_on]
            assert np.array_equal(buf[s], want_mem), mode
            assert np.array_equal(old[s], np.where(lane_on, before, 0)), mode  # masked lanes: 0 on the host


@pytest.mark.parametrize("fmt,np_t", [(F32, np.float32), (F64, np.float64), (F16, np.float16)])
def test_addf_sums_exactly_representable_values(fmt, np_t, disasm):
    acc = np.zeros(4, np_t)
    v = np.arange(64).astype(np_t) / 4  # every partial sum is exact, so lane order cannot show

    def body():
        a, x = ti.param(fmt, 0), ti.param(fmt, 1)
        ti.atomic_rmw(a, "addf", ti.and_i(ti.arange(64), ti.i_const(3)), ti.load(x, ti.idx_const(0), [64]))

    check(body, (ti.ByPtr(fmt), ti.ByPtr(fmt)), [acc, v], disasm=disasm if fmt is F32 else None)
    assert np.array_equal(acc, np.array([v[k::4].astype(np.float64).sum() for k in range(4)], np_t))


def test_addf_bf16_assembles_for_sm90_only(disasm):
    def body():
        a = ti.param(BF16, 0)
        ti.atomic_rmw(a, "addf", ti.arange(8), ti.load(a, ti.idx_const(0), [8]))

    prog = ti.trace_kernel("k", (ti.ByPtr(BF16),), body)
    k = ti.lower(prog)
    data = ti.encode_kernel(k)
    assert normalise(disasm(data)) == normalise(ti.render_kernel(k))
    assemble(data, "sm_90", kernel="k", program=k)
    with pytest.raises(TileirError, match="bf16 is not supported"):
        assemble(data, "sm_80", kernel="k", program=k)


def test_colliding_lanes_apply_in_lane_order_on_the_host():
    buf = np.array([5], np.int32)
    old = np.zeros(4, np.int32)

    def body():
        b, o = ti.param(I32, 0), ti.param(I32, 1)
        zero = ti.muli(ti.arange(4), ti.i_const(0))
        ti.store(o, ti.idx_const(0), ti.atomic_rmw(b, "xchg", zero, ti.addi(ti.arange(4), ti.i_const(10))))

    check(body, (ti.ByPtr(I32), ti.ByPtr(I32)), [buf, old])
    assert buf[0] == 13 and list(old) == [5, 10, 11, 12]  # the host's order; the device's is unspecified


def test_cas_compares_bits(disasm):
    f = np.array([0.0, -0.0, np.nan, 1.0, 2.0, np.nan, 3.0, 4.0], np.float32)
    cmp = np.array([-0.0, -0.0, np.nan, 1.0, 5.0, 0.0, 3.0, 4.0], np.float32)
    cmp[2] = np.frombuffer(np.float32(np.nan).tobytes(), np.float32)[0]  # the same NaN bits as f[2]
    f0 = f.copy()
    old = np.zeros(8, np.float32)
    ints = np.arange(8, dtype=np.int32)
    iold = np.zeros(8, np.int32)

    def body():
        a, c, o, n, no = ti.param(F32, 0), ti.param(F32, 1), ti.param(F32, 2), ti.param(I32, 3), ti.param(I32, 4)
        z = ti.idx_const(0)
        i = ti.arange(8)
        r = ti.atomic_cas(a, i, ti.load(c, z, [8]), ti.f_const(F32, 9.0))
        ti.store(o, z, r)
        ri = ti.atomic_cas(n, i, ti.and_i(i, ti.i_const(6)), ti.i_const(-1), mask=ti.lt_i(i, ti.i_const(6)))
        ti.store(no, z, ri)

    params = (ti.ByPtr(F32), ti.ByPtr(F32), ti.ByPtr(F32), ti.ByPtr(I32), ti.ByPtr(I32))
    check(body, params, [f, cmp, old, ints, iold], disasm=disasm)
    same = f0.view(np.int32) == cmp.view(np.int32)
    assert list(same) == [False, True, True, True, False, False, True, True]
    assert np.array_equal(f.view(np.int32), np.where(same, np.float32(9).view(np.int32), f0.view(np.int32)))
    assert np.array_equal(old.view(np.int32), f0.view(np.int32))
    i = np.arange(8)
    hit = (i == (i & 6)) & (i < 6)
    assert np.array_equal(ints, np.where(hit, -1, i)) and np.array_equal(iold, np.where(i < 6, i, 0))


def test_refusals():
    i_, f_ = (lambda: ti.param(I32, 0)), (lambda: ti.param(F32, 1))  # noqa: E731
    e = refusal(lambda: ti.atomic_rmw(i_(), "sum", ti.arange(8), 1))
    assert "mode 'sum'" in str(e) and "(atomic_rmw)" in str(e)
    e = refusal(lambda: ti.atomic_rmw(f_(), "add", ti.arange(8), 1.0))
    assert "integer modes" in str(e) and "addf" in e.fix
    e = refusal(lambda: ti.atomic_rmw(i_(), "addf", ti.arange(8), 1))
    assert "addf takes" in str(e) and "add" in e.fix
    e = refusal(lambda: ti.atomic_rmw(ti.param(I8, 0), "and", ti.arange(8), 1), (ti.ByPtr(I8),))
    assert "i32 and i64 only" in str(e)
    e = refusal(lambda: ti.atomic_rmw(ti.param(F16, 0), "xchg", ti.arange(8), 1.0), (ti.ByPtr(F16),))
    assert "32- and 64-bit" in str(e)
    e = refusal(lambda: ti.atomic_cas(ti.param(F16, 0), ti.arange(8), 1.0, 2.0), (ti.ByPtr(F16),))
    assert "compare-and-swap" in str(e) and "(atomic_cas)" in str(e)
    e = refusal(lambda: ti.atomic_add(f_(), ti.arange(8), 1.0))
    assert "integer sum" in str(e) and "addf" in e.fix and "(atomic_add)" in str(e)
    e = refusal(lambda: ti.atomic_add(i_(), ti.load(f_(), ti.idx_const(0), [8]), 1))
    assert "i32 tile of element offsets" in str(e)
    e = refusal(lambda: ti.atomic_add(i_(), ti.arange(8), ti.f_const(F32, 1.0)))
    assert "f32" in str(e)

    def in_reduce():
        ti.d_reduce(ti.arange(8), 0, lambda acc, x: ti.atomic_rmw(i_(), "add", x, x))

    assert "inside a reduce" in str(refusal(in_reduce))
    cells = ti.cells([16], [16])
    e = refusal(lambda: ti.atomic_add(ti.param(I32, 1), ti.arange(16), 1), (ti.In(I32, cells), ti.Out(I32, cells)))
    assert "an Out" in str(e)
    e = refusal(lambda: ti.atomic_cas(ti.param(I32, 0), ti.arange(16), 1, 2), (ti.In(I32, cells), ti.Out(I32, cells)))
    assert "an In" in str(e)
    ti.trace_kernel("k", (ti.Shared(I32),), lambda: ti.atomic_add(ti.param(I32, 0), ti.arange(16), 1))  # taken
