"""extract, insert, cat, powi, erf, pack_bytes / unpack_bytes and the host second opinions
(ref_erf, ref_sin, ref_fpowi): the host against numpy, the bytes read back as render_kernel's
text, tileiras assembling them, and the refusals."""

import math

import ml_dtypes
import numpy as np
import pytest

import tileir as ti
from tests.kernelcheck import refused, run_and_read_back
from tileir import F16, F32, F64, I4, I8, I16, I32, TileirError, ir
from tileir.ref import ref_erf, ref_fpowi, ref_sin


def check(body, params, args, grid=(1,), disasm=None, arch="sm_90"):
    return run_and_read_back(body, params, args, grid, disasm, targets=(arch,))[0]


def refusal(body, params=(ti.ByPtr(F32), ti.ByPtr(I32))) -> TileirError:
    return refused(body, params)


Z = ti.idx_const


# ---- extract / insert / cat ------------------------------------------------------------------


def test_extract_insert_cat_by_slice_numbers(disasm):
    x = np.arange(64, dtype=np.float32).reshape(8, 8)
    out = np.zeros(4 * 64, np.float32)

    def body():
        o = ti.param(F32, 1)
        t = ti.load(ti.param(F32, 0), Z(0), [8, 8])
        e = ti.extract(t, [4, 2], [1, ti.idx_const(3)])  # rows 4..7, columns 6..7
        ti.store(o, Z(0), e)
        ti.store(o, Z(64), ti.insert(ti.full([4, 2], -1.0, F32), t, [0, 1]))  # rows 0..3, columns 2..3
        ti.store(o, Z(128), ti.cat(e, e, 1))  # [4, 4]
        ti.store(o, Z(192), ti.cat(ti.extract(t, [4, 8], [1, 0]), ti.extract(t, [4, 8], [0, 0]), 0))

    check(body, (ti.ByPtr(F32), ti.ByPtr(F32)), [x, out], disasm=disasm)
    assert out[:8].reshape(4, 2).tolist() == x[4:8, 6:8].tolist()
    want = x.copy()
    want[0:4, 2:4] = -1
    assert out[64:128].reshape(8, 8).tolist() == want.tolist()
    assert out[128:144].reshape(4, 4).tolist() == np.concatenate([x[4:8, 6:8]] * 2, 1).tolist()
    assert out[192:256].reshape(8, 8).tolist() == np.concatenate([x[4:8], x[0:4]], 0).tolist()


def test_extract_of_insert_is_the_subtile_with_device_indices():
    x = np.arange(16, dtype=np.int32)
    out = np.zeros(16 + 4, np.int32)

    def body():
        o = ti.param(I32, 1)
        t = ti.load(ti.param(I32, 0), Z(0), [16])
        i = ti.idx_of(ti.load(ti.param(I32, 0), Z(2), [1]).reshape([]))  # 2, read at run time
        s = ti.full([4], 0.0, F32)
        ins = ti.insert(ti.float_to_int(s, I32), t, [i])
        ti.store(o, Z(0), ins)
        ti.store(o, Z(16), ti.extract(ins, [4], [i]))

    check(body, (ti.ByPtr(I32), ti.ByPtr(I32)), [x, out])
    assert out[:16].tolist() == [*range(8), 0, 0, 0, 0, *range(12, 16)] and out[16:].tolist() == [0] * 4


def test_insert_needs_bytecode_13_4():
    def body():
        t = ti.load(ti.param(F32, 0), Z(0), [8])
        ti.store(ti.param(F32, 0), Z(0), ti.insert(ti.full([4], 1.0, F32), t, [0]))

    k = ti.lower(ti.trace_kernel("k", (ti.ByPtr(F32),), body))
    with pytest.raises(TileirError, match="needs bytecode 13.4"):
        ti.encode_kernel(k, "13.3")


def test_extract_insert_cat_refusals():
    def t8():
        return ti.load(ti.param(F32, 0), Z(0), [8, 8])

    e = refusal(lambda: ti.extract(t8(), [3, 8], [0, 0]))
    assert "does not divide" in str(e) and "(extract)" in str(e)
    e = refusal(lambda: ti.extract(t8(), [4, 8], [0]))
    assert "1 indices into a rank-2 tile" in str(e) and "SLICE" in e.fix
    assert "one rank" in str(refusal(lambda: ti.extract(t8(), [4], [0])))
    assert "index is wanted" in str(refusal(lambda: ti.extract(t8(), [4, 8], [ti.arange(2), 0])))
    assert "rank-0 i32 index" in str(refusal(lambda: ti.extract(t8(), [4, 8], [ti.idx_of(ti.arange(2)), 0])))
    e = refusal(lambda: ti.insert(ti.full([4, 8], 1.0, F64), t8(), [0, 0]))
    assert "f64 subtile into a f32 tile" in str(e) and "(insert)" in str(e)
    assert "does not divide" in str(refusal(lambda: ti.insert(ti.full([16, 8], 1.0, F32), t8(), [0, 0])))
    e = refusal(lambda: ti.cat(t8(), ti.full([8, 4], 1.0, F32), 1))
    assert "makes [8, 12]" in str(e) and "(cat)" in str(e)
    assert "every other dimension" in str(refusal(lambda: ti.cat(t8(), ti.full([4, 4], 1.0, F32), 1)))
    assert "one format" in str(refusal(lambda: ti.cat(t8(), ti.full([8, 8], 1.0, F16), 0)))
    assert "dimension 2" in str(refusal(lambda: ti.cat(t8(), t8(), 2)))


# ---- powi ------------------------------------------------------------------------------------


def _fpowi_python(a: float, n: int) -> float:
    """The device's sequence in Python floats (f64): right to left, one rounding a product."""
    if n == 0:
        return 1.0
    r, b, m = 1.0, a, abs(n)
    while m:
        if m & 1:
            r = r * b
        m >>= 1
        if m:
            b = b * b
    if n >= 0:
        return r
    return 1.0 / r if r != 0 else math.copysign(math.inf, r)


def test_ref_fpowi_is_the_right_to_left_sequence():
    rng = np.random.default_rng(7)
    a = np.concatenate([rng.uniform(0.5, 2.0, 200), [np.nan, np.inf, -np.inf, 0.0, -0.0, -1.5, 3.0]])
    n = np.concatenate([rng.integers(-60, 60, 200), [0, 0, 3, -1, -3, 7, -5]])
    got = ref_fpowi(a, n, "f64")
    want = np.array([_fpowi_python(float(x), int(k)) for x, k in zip(a, n)])
    assert got.view(np.int64).tolist() == want.view(np.int64).tolist()  # bit for bit, NaN and -0 included
    assert ref_fpowi(np.nan, 0) == 1.0  # a^0 = 1 even for NaN
    # not the correctly rounded power: somewhere in the corpus the sequence is off by some ulps
    assert np.any(got[:200] != np.power(a[:200], n[:200].astype(np.float64)))
    f32 = ref_fpowi(np.float32(1.1), 37, "f32")
    assert f32.dtype == np.float32


@pytest.mark.parametrize("fmt,edt", [(F64, I32), (F32, I8), (F32, I16), (F16, I32)])
def test_powi_host_and_bytes(fmt, edt, disasm):
    d = fmt.np
    a = np.array([1.5, -2.0, 0.5, 3.0, np.nan, 1.1, -0.0, 2.0], d)
    n = np.array([3, -2, 10, 0, 0, 17, -1, -127], edt.np)
    out = np.zeros(8, d)

    def body():
        t = ti.load(ti.param(fmt, 0), Z(0), [8])
        e = ti.load(ti.param(edt, 1), Z(0), [8])
        ti.store(ti.param(fmt, 2), Z(0), ti.powi(t, e))

    k = check(body, (ti.ByPtr(fmt), ti.ByPtr(edt), ti.ByPtr(fmt)), [a, n, out], disasm=disasm)
    assert out.tobytes() == ref_fpowi(a, n, fmt.name).tobytes()
    if fmt is F64:
        want = np.array([_fpowi_python(float(x), int(m)) for x, m in zip(a, n)])
        assert out.view(np.int64).tolist() == want.view(np.int64).tolist()
    (pw,) = [i for i in k.body if isinstance(i, ir.FloatPowI)]
    assert pw.exp_ty == ir.tile((8,), edt.name)


def test_powi_reads_the_exponent_signed_and_widens_rank0():
    a = np.full(4, 2.0, np.float32)
    out = np.zeros(8, np.float32)

    def body():
        t = ti.load(ti.param(F32, 0), Z(0), [4])
        ti.store(ti.param(F32, 1), Z(0), ti.powi(t, ti.i8_const(0xFF)))  # i8 0xFF is the power -1
        ti.store(ti.param(F32, 1), Z(4), ti.powi(t, ti.bool_const(True)))  # i1 true, read signed: -1

    check(body, (ti.ByPtr(F32), ti.ByPtr(F32)), [a, out])
    assert out.tolist() == [0.5] * 8


def test_powi_refusals_and_version():
    def base():
        return ti.load(ti.param(F32, 0), Z(0), [8])

    e = refusal(lambda: ti.powi(base(), ti.load(ti.param(F32, 0), Z(0), [8])))
    assert "exponent is f32" in str(e) and "pow(a, b)" in e.fix and "(powi)" in str(e)
    assert "i64" in str(refusal(lambda: ti.powi(base(), ti.i64_const(2))))
    assert "raises a float tile" in str(refusal(lambda: ti.powi(ti.load(ti.param(I32, 1), Z(0), [8]), ti.i_const(2))))
    assert "shapes must agree" in str(refusal(lambda: ti.powi(base(), ti.arange(4))))
    k = ti.lower(ti.trace_kernel("k", (ti.ByPtr(F32),), lambda: ti.store(ti.param(F32, 0), Z(0),
                                                                          ti.powi(base(), ti.i_const(2)))))
    with pytest.raises(TileirError, match="needs bytecode 13.4"):
        ti.encode_kernel(k, "13.3")


# ---- erf and the second opinions -------------------------------------------------------------


def test_ref_erf_and_ref_sin_against_the_libraries():
    xs = np.concatenate([np.linspace(-7, 7, 4001), [0.0, 1e-300, 5e-324, 0.5, 3.3, 5.99, 6.01, 30.0]])
    assert np.max(np.abs(ref_erf(xs) - np.array([math.erf(x) for x in xs]))) < 2e-15
    assert math.copysign(1, ref_erf(-0.0)) == -1 and ref_erf(np.inf) == 1.0 and math.isnan(ref_erf(np.nan))
    xs = np.concatenate([np.linspace(-100, 100, 4001), [1e22, 1e300, -1e10, 2.0**60, 5e-324, 1e-10, 355.0]])
    assert np.max(np.abs(ref_sin(xs) - np.sin(xs))) < 1e-15
    assert math.copysign(1, ref_sin(-0.0)) == -1 and math.isnan(ref_sin(np.inf))


@pytest.mark.parametrize("fmt,bound", [(F64, 1.5e-7), (F32, 1.5e-7 + 4e-7)])
def test_erf_by_composition_is_within_the_handbook_bound(fmt, bound, disasm):
    x = np.linspace(-4, 4, 256).astype(fmt.np)
    out = np.zeros(256, fmt.np)

    def body():
        ti.store(ti.param(fmt, 1), Z(0), ti.erf(ti.load(ti.param(fmt, 0), Z(0), [256])))

    k = check(body, (ti.ByPtr(fmt), ti.ByPtr(fmt)), [x, out], disasm=disasm)
    err = np.abs(out.astype(np.float64) - ref_erf(x.astype(np.float64)))
    assert err.max() <= bound and err.max() > 1e-9  # the approximation's own error shows
    assert np.all(np.sign(out) == np.sign(x))  # the odd half: 7.1.26 holds for x >= 0 only
    kinds = {type(i).__name__ + ":" + getattr(i, "op", "") for i in k.body}
    assert {"FloatUn:absf", "FloatUn:exp", "FloatUn:negf", "FloatBin:divf", "CmpFloat:", "SelectTile:"} <= kinds


def test_erf_refuses_an_integer_tile():
    assert "float function" in str(refusal(lambda: ti.erf(ti.load(ti.param(I32, 1), Z(0), [8]))))


# ---- pack_bytes / unpack_bytes ---------------------------------------------------------------


def test_pack_and_unpack_f32_f16_bytes(disasm):
    x = np.array([1.0, -2.5, np.inf, 3.25], np.float32)
    out_b = np.zeros(16, np.int8)
    out_h = np.zeros(8, np.float16)

    def body():
        b = ti.pack_bytes(ti.load(ti.param(F32, 0), Z(0), [4]))
        assert b.shape == [16] and b.dtype == "i8"
        ti.store(ti.param(I8, 1), Z(0), b)
        ti.store(ti.param(F16, 2), Z(0), ti.unpack_bytes(b, F16))

    check(body, (ti.ByPtr(F32), ti.ByPtr(I8), ti.ByPtr(F16)), [x, out_b, out_h], disasm=disasm)
    assert out_b.tobytes() == x.tobytes()
    assert out_h.tobytes() == x.tobytes()


def test_unpack_to_i4_doubles_the_lanes_even_lane_low_nibble(disasm):
    b = np.array([0x21, 0x8F, 0x7A, 0x00, 0xFF, 0x5C, 0x10, 0x09], np.uint8).view(np.int8)
    out = np.zeros(16, np.int32)
    back = np.zeros(8, np.int8)

    def body():
        n = ti.unpack_bytes(ti.load(ti.param(I8, 0), Z(0), [8]), I4)
        assert n.shape == [16] and n.dtype == "i4"
        ti.store(ti.param(I32, 1), Z(0), ti.ext_i4(n))
        ti.store(ti.param(I8, 2), Z(0), ti.pack_bytes(n))

    check(body, (ti.ByPtr(I8), ti.ByPtr(I32), ti.ByPtr(I8)), [b, out, back], disasm=disasm)
    u = b.view(np.uint8)
    nib = np.stack([u & 0xF, u >> 4], 1).reshape(16).astype(np.int32)
    assert out.tolist() == np.where(nib >= 8, nib - 16, nib).tolist()
    assert back.tobytes() == b.tobytes()


def test_f4_round_trip_host_and_bytes_for_sm100(disasm):
    """f4E2M1FN exists from sm_100 on (tileiras refuses it below): unpacked, held, packed back."""
    b = (np.arange(8, dtype=np.uint8) * 0x11 + np.arange(8, dtype=np.uint8)).view(np.int8)  # mixed nibbles
    out = np.zeros(8, np.int8)

    def body():
        f = ti.unpack_bytes(ti.load(ti.param(I8, 0), Z(0), [8]), ti.F4E2M1FN)
        assert f.shape == [16] and f.dtype == "f4E2M1FN"
        ti.store(ti.param(I8, 1), Z(0), ti.pack_bytes(f))

    check(body, (ti.ByPtr(I8), ti.ByPtr(I8)), [b, out], disasm=disasm, arch="sm_100")
    assert out.tobytes() == b.tobytes()
    from tileir.families.tileshape import _from_bytes

    lanes = _from_bytes(b.view(np.uint8), "f4E2M1FN")
    u = b.view(np.uint8)
    assert lanes.dtype == ml_dtypes.float4_e2m1fn
    assert (lanes.view(np.uint8) & 0xF).tolist() == np.stack([u & 0xF, u >> 4], 1).reshape(16).tolist()


def test_pack_unpack_refusals_and_version():
    e = refusal(lambda: ti.pack_bytes(ti.load(ti.param(F32, 0), Z(0), [4, 4])))
    assert "both tiles are rank 1" in str(e) and "(pack_bytes)" in str(e)
    e = refusal(lambda: ti.pack_bytes(ti.i8_const(1).broadcast([8])))
    assert "bitcast" in str(e)
    e = refusal(lambda: ti.unpack_bytes(ti.load(ti.param(I32, 1), Z(0), [4]), F32))
    assert "reads an i8 tile" in str(e) and "(unpack_bytes)" in str(e)
    assert "no whole power-of-two" in str(refusal(lambda: ti.unpack_bytes(ti.i8_const(1).broadcast([2]), F32)))
    assert "formats of 4, 16, 32 or 64" in str(refusal(lambda: ti.pack_bytes(ti.bool_const(True).broadcast([8]))))
    k = ti.lower(ti.trace_kernel("k", (ti.ByPtr(F32), ti.ByPtr(I8)), lambda: ti.store(
        ti.param(I8, 1), Z(0), ti.pack_bytes(ti.load(ti.param(F32, 0), Z(0), [4])))))
    with pytest.raises(TileirError, match="needs bytecode 13.3"):
        ti.encode_kernel(k, "13.2")
