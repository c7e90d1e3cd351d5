"""The pointer surface (ptrs, ptr_offset, ptr_to_int, int_to_ptr, ptr_to_ptr, load_ptrs,
store_ptrs) and gather / scatter: the host against numpy, the bytes read back as render_kernel's
text, tileiras assembling them, and every recording refusal."""

import numpy as np
import pytest

import tileir as ti
from tests.kernelcheck import refused, run_and_read_back
from tileir import F32, I4, I32, I64, TileirError, ir
from tileir.ref import run_host


def check(body, params, args, grid=(1,), disasm=None, targets=("sm_90", "sm_80")):
    return run_and_read_back(body, params, args, grid, disasm, targets=targets)


def refusal(body, params=(ti.ByPtr(F32), ti.ByPtr(F32))) -> TileirError:
    return refused(body, params)


def kinds(k):
    return [type(x).__name__ for x in k.body]


F2 = (ti.ByPtr(F32), ti.ByPtr(F32))


# ---- host answers, bytes, tileiras -----------------------------------------------------------


def test_ptrs_offset_load_store(disasm):
    x = np.linspace(-4, 4, 64).astype(np.float32)
    y = np.zeros(64, np.float32)

    def body():
        a, b = ti.param(F32, 0), ti.param(F32, 1)
        i = ti.arange(16)
        v = ti.load_ptrs(ti.ptr_offset(ti.ptrs(a, [16]), ti.muli(i, ti.i_const(3))))  # a stride of 3
        ti.store_ptrs(ti.ptr_offset(ti.ptrs(b, [16]), ti.subi(ti.i_const(15), i)), v * 2.0)  # reversed
        row = ti.ptr_offset(ti.ptrs(a, []), ti.reshape(ti.arange(32), [4, 8]))  # a rank-0 base widens
        ti.store_ptrs(ti.ptr_offset(ti.ptrs(b, [4, 8]), ti.addi(ti.reshape(ti.arange(32), [4, 8]), ti.i_const(32))),
                      ti.load_ptrs(row))

    k, _ = check(body, F2, [x, y], disasm=disasm)
    assert np.array_equal(y[:16], (x[0:48:3] * 2)[::-1])
    assert np.array_equal(y[32:], x[:32])
    assert {"Offset", "LoadPtr", "StorePtr"} <= set(kinds(k))


def test_masked_load_ptrs_reads_the_pad():
    x = np.arange(16, dtype=np.float32)
    y = np.zeros(16, np.float32)

    def body():
        a, b = ti.param(F32, 0), ti.param(F32, 1)
        i = ti.arange(16)
        m = ti.lt_i(i, ti.i_const(5))
        v = ti.load_ptrs(ti.ptr_offset(ti.ptrs(a, [16]), ti.addi(i, ti.i_const(100))), mask=ti.ge_i(i, ti.i_const(99)),
                         pad=-1.0)  # every lane masked off: the offsets past the end are never read
        w = ti.load_ptrs(ti.ptr_offset(ti.ptrs(a, [16]), i), mask=m, pad=ti.f_const(F32, 7.0))
        ti.store_ptrs(ti.ptr_offset(ti.ptrs(b, [16]), i), w + v, mask=ti.lt_i(i, ti.i_const(12)))

    check(body, F2, [x, y])
    assert np.array_equal(y, np.array([-1, 0, 1, 2, 3] + [6] * 7 + [0] * 4, np.float32))


def test_conversions_round_trip_and_count_bytes(disasm):
    x = np.array([1.5, -0.0, np.inf, np.nan, 3, 4, 5, 6], np.float32)
    bits = np.zeros(8, np.int32)
    dist = np.zeros(8, np.int64)
    y = np.zeros(8, np.float32)

    def body():
        a, o, d, b = ti.param(F32, 0), ti.param(I32, 1), ti.param(I64, 2), ti.param(F32, 3)
        ps = ti.ptr_offset(ti.ptrs(a, [8]), ti.arange(8))
        addr = ti.ptr_to_int(ps)
        ti.store_ptrs(ti.ptr_offset(ti.ptrs(d, [8]), ti.arange(8)), ti.subi(addr, ti.ptr_to_int(ti.ptrs(a, [8]))))
        back = ti.int_to_ptr(ti.add_i64(addr, ti.i64_const(0)), F32)
        ti.store_ptrs(ti.ptr_offset(ti.ptrs(o, [8]), ti.arange(8)), ti.load_ptrs(ti.ptr_to_ptr(back, I32)))
        ti.store_ptrs(ti.ptr_offset(ti.ptrs(b, [8]), ti.arange(8)), ti.load_ptrs(back))

    k, _ = check(body, (ti.ByPtr(F32), ti.ByPtr(I32), ti.ByPtr(I64), ti.ByPtr(F32)), [x, bits, dist, y],
                 disasm=disasm)
    assert np.array_equal(bits, x.view(np.int32))  # the same bytes, read as i32
    assert np.array_equal(dist, 4 * np.arange(8))  # addresses differ by bytes
    assert np.array_equal(y.view(np.int32), x.view(np.int32))
    assert {"PtrToIntTile", "IntToPtrTile", "PtrToPtrTile"} <= set(kinds(k))


def test_a_store_through_int_to_ptr_is_ordered_after_every_access():
    def body():
        a = ti.param(F32, 0)
        ps = ti.ptrs(a, [8])
        v = ti.load_ptrs(ti.ptr_offset(ps, ti.arange(8)))
        ti.store_ptrs(ti.ptr_offset(ps, ti.arange(8)), v + 1.0)
        q = ti.int_to_ptr(ti.ptr_to_int(ti.ptr_offset(ps, ti.arange(8))), F32)
        ti.store_ptrs(q, ti.load_ptrs(q) * 2.0)

    k = ti.lower(ti.trace_kernel("k", (ti.ByPtr(F32),), body))
    stores = [x for x in k.body if isinstance(x, ir.StorePtr)]
    loads = [x for x in k.body if isinstance(x, ir.LoadPtr)]
    assert loads[1].tok_in == ir.Val(stores[0].tok_out)  # the unknown load waits for the known store
    assert stores[1].tok_in != loads[0].tok_in  # and the unknown store for the loads before it
    x = np.arange(8, dtype=np.float32)
    run_host(ti.trace_kernel("k", (ti.ByPtr(F32),), body), [x], (1,))
    assert np.array_equal(x, (np.arange(8) + 1) * 2)


def test_gather_scatter(disasm):
    src = np.arange(100, 164, dtype=np.float32)
    perm = np.random.default_rng(3).permutation(32).astype(np.int32)
    idx = np.concatenate([perm, np.array([0, 5, 63, 70, -3, 2, 2, 9], np.int32)])
    out = np.full(64, -5, np.float32)

    def body():
        s, ix, o = ti.param(F32, 0), ti.param(I32, 1), ti.param(F32, 2)
        i = ti.load(ix, ti.idx_const(0), [32])
        ti.scatter(o, i, ti.gather(s, i))  # o[perm[k]] = s[perm[k]]
        j = ti.load(ix, ti.idx_const(32), [8])
        m = ti.and_mask(ti.lt_i(j, ti.i_const(64)), ti.ge_i(j, ti.i_const(0)))
        g = ti.gather(s, j, mask=m, pad=-1.0)  # indices outside the array: masked off, they read the pad
        ti.store(o, ti.idx_const(32), g)
        ti.scatter(o, ti.addi(ti.arange(8), ti.i_const(40)), g, mask=m)  # a masked-off lane leaves memory

    k, _ = check(body, (ti.ByPtr(F32), ti.ByPtr(I32), ti.ByPtr(F32)), [src, idx, out], disasm=disasm)
    want = np.full(64, -5, np.float32)
    want[perm] = src[perm]
    j = idx[32:]
    m = (j >= 0) & (j < 64)
    g = np.where(m, src[np.where(m, j, 0)], -1).astype(np.float32)
    want[32:40] = g
    want[40:48] = np.where(m, g, -5)
    assert np.array_equal(out, want)
    offs = [x for x in k.body if isinstance(x, ir.Offset)]
    assert offs and all(x.off_ty.elem == ir.Num("i32") for x in offs)  # offset takes the index tile as it is


def test_gather_of_a_2d_index_tile():
    src = np.arange(64, dtype=np.int32) * 3
    out = np.zeros(32, np.int32)

    def body():
        s, o = ti.param(I32, 0), ti.param(I32, 1)
        ix = ti.reshape(ti.muli(ti.arange(32), ti.i_const(2)), [4, 8])
        ti.store(o, ti.idx_const(0), ti.reshape(ti.gather(s, ix), [32]))

    check(body, (ti.ByPtr(I32), ti.ByPtr(I32)), [src, out])
    assert np.array_equal(out, src[0:64:2])


def test_host_refuses_what_it_cannot_follow():
    def computed():
        a = ti.param(F32, 0)
        q = ti.int_to_ptr(ti.add_i64(ti.ptr_to_int(ti.ptrs(a, [8])), ti.i64_const(1 << 50)), F32)
        ti.store_ptrs(q, ti.f_const(F32, 1.0))

    def misaligned():
        a = ti.param(F32, 0)
        q = ti.int_to_ptr(ti.add_i64(ti.ptr_to_int(ti.ptrs(a, [8])), ti.i64_const(2)), F32)
        ti.store(a, ti.idx_const(0), ti.load_ptrs(q))

    def past_the_end():
        a = ti.param(F32, 0)
        ti.store(a, ti.idx_const(0), ti.gather(a, ti.addi(ti.arange(8), ti.i_const(4))))

    for body, phrase in ((computed, "cannot follow"), (misaligned, "not aligned"), (past_the_end, "outside its 8")):
        with pytest.raises(TileirError, match=phrase):
            run_host(ti.trace_kernel("k", (ti.ByPtr(F32),), body), [np.zeros(8, np.float32)], (1,))


# ---- recording refusals -----------------------------------------------------------------------


def test_refusals_of_the_pointer_ops():
    a = lambda: ti.param(F32, 0)  # noqa: E731
    e = refusal(lambda: ti.ptr_offset(ti.ptrs(a(), [8]), ti.f_const(F32, 1.0)))
    assert "i32" in str(e) and "(ptr_offset)" in str(e)
    e = refusal(lambda: ti.ptr_offset(ti.ptrs(a(), [8]), ti.arange(16)))
    assert "[8]" in str(e) and "[16]" in str(e)
    e = refusal(lambda: ti.load_ptrs(ti.arange(8)))
    assert "tile of pointers" in str(e)
    e = refusal(lambda: ti.load_ptrs(ti.ptrs(a(), [8]), pad=1.0))
    assert "pad and no mask" in str(e)
    e = refusal(lambda: ti.int_to_ptr(ti.arange(8), F32))
    assert "i64" in str(e) and "(int_to_ptr)" in str(e)
    e = refusal(lambda: ti.ptr_to_ptr(ti.ptrs(a(), [8]), I4))
    assert "sub-byte" in str(e)
    e = refusal(lambda: ti.ptrs(ti.param(I4, 0), [8]), (ti.ByPtr(I4),))
    assert "sub-byte" in str(e) and "pack" in e.fix
    e = refusal(lambda: ti.ptrs(a(), [6]))
    assert "powers of two" in str(e)
    e = refusal(lambda: ti.store_ptrs(ti.ptrs(a(), [8]), ti.i_const(1)))
    assert "f32" in str(e) and "i32" in str(e)


def test_refusals_of_gather_and_scatter():
    a = lambda: ti.param(F32, 0)  # noqa: E731
    e = refusal(lambda: ti.gather(a(), ti.load(a(), ti.idx_const(0), [8])))
    assert "i32 tile of element offsets" in str(e) and "(gather)" in str(e)
    e = refusal(lambda: ti.gather(a(), ti.arange(8), pad=0.0))
    assert "pad and no mask" in str(e)
    e = refusal(lambda: ti.scatter(a(), ti.arange(8), ti.i_const(1)))
    assert "f32" in str(e)

    def in_if():
        ti.d_if(ti.bool_const(True), lambda: ti.scatter(a(), ti.arange(8), ti.f_const(F32, 1.0)))

    e = refusal(in_if)
    assert "inside an if" in str(e)


def test_writes_the_markers_forbid():
    cells = ti.cells([16], [16])

    def scatter_out():
        ti.scatter(ti.param(F32, 1), ti.arange(16), ti.f_const(F32, 1.0))

    e = refusal(scatter_out, (ti.In(F32, cells), ti.Out(F32, cells)))
    assert "an Out" in str(e) and "(scatter)" in str(e)

    def store_in():
        ti.store_ptrs(ti.ptr_offset(ti.ptrs(ti.param(F32, 0), [16]), ti.arange(16)), ti.f_const(F32, 1.0))

    e = refusal(store_in, (ti.In(F32, cells), ti.Out(F32, cells)))
    assert "an In" in str(e)

    def computed():
        p = ti.param(F32, 2)
        ti.store_ptrs(ti.int_to_ptr(ti.ptr_to_int(ti.ptrs(p, [16])), F32), ti.f_const(F32, 1.0))

    e = refusal(computed, (ti.In(F32, cells), ti.Out(F32, cells), ti.Shared(F32)))
    assert "cannot follow" in str(e) and "Shared" in e.fix
    ti.trace_kernel("k", (ti.Shared(F32),), lambda: ti.store_ptrs(
        ti.int_to_ptr(ti.ptr_to_int(ti.ptrs(ti.param(F32, 0), [16])), F32), ti.f_const(F32, 1.0)))  # taken
