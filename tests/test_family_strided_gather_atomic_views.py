"""strided_view, gather_scatter_view with load_gather / store_gather, and atomic_red_view: the host
against numpy, the bytes read back as render_kernel's text, tileiras assembling them for sm_90,
and the refusals."""

import numpy as np
import pytest

import tileir as ti
from tests.kernelcheck import refused, run_and_read_back
from tileir import F32, I32, TileirError, ir


def check(body, params, args, grid=(1,), disasm=None):
    return run_and_read_back(body, params, args, grid, disasm)[0]


def refusal(body, params=(ti.ByPtr(F32), ti.ByPtr(I32))) -> TileirError:
    return refused(body, params)


Z = ti.idx_const


def _tv(pos=0, d=F32, shape=(16, 8)):
    return ti.tensor_view(ti.param(d, pos), 0, list(shape), [shape[1], 1])


# ---- strided_view ----------------------------------------------------------------------------


def test_strided_view_overlapping_tiles_padding_and_index_space(disasm):
    x = np.arange(128, dtype=np.float32).reshape(16, 8)
    out = np.zeros((4, 4, 4), np.float32)
    grid = np.zeros(2, np.int32)

    def body():
        sv = ti.strided_view(_tv(), [4, 4], [2, 4], padding=ti.PadNan)  # rows advance by 2: tiles overlap
        o = ti.param(F32, 1)
        for n, (i, j) in enumerate(((0, 0), (1, 1), (7, 0), (3, 1))):
            ti.store(o, Z(16 * n), ti.reshape(ti.load_view(sv, [i, j]), [16]))
        g = ti.param(I32, 2)
        ti.store(g, Z(0), ti.broadcast(ti.idx_as_tile(ti.index_space_dim(sv, 0)), [1]))
        ti.store(g, Z(1), ti.broadcast(ti.idx_as_tile(ti.index_space_dim(sv, 1)), [1]))

    k = check(body, (ti.ByPtr(F32), ti.ByPtr(F32), ti.ByPtr(I32)), [x, out, grid], disasm=disasm)
    pad = np.full((20, 8), np.nan, np.float32)
    pad[:16] = x
    for n, (i, j) in enumerate(((0, 0), (1, 1), (7, 0), (3, 1))):
        np.testing.assert_array_equal(out[n], pad[2 * i:2 * i + 4, 4 * j:4 * j + 4])
    assert grid.tolist() == ti.strided_grid([16, 8], [2, 4]) == [8, 2]  # ceil(shape / traversal)
    (mk,) = [i for i in k.body if isinstance(i, ir.MakeStridedView)]
    assert mk.ty.traversal == (2, 4) and mk.ty.padding == ti.PadNan


def test_strided_view_with_dim_map_skipping_tiles_and_store(disasm):
    x = np.arange(128, dtype=np.float32).reshape(16, 8)
    out = np.full((16, 8), -1.0, np.float32)

    def body():
        sv = ti.strided_view(_tv(), [4, 2], [2, 8], dim_map=[1, 0])  # tile dim 0 runs along columns
        ov = ti.strided_view(_tv(1), [4, 2], [2, 8], dim_map=[1, 0])
        t = ti.load_view(sv, [1, 1])  # columns 2..5, rows 8..9 (rows advance by 8: tiles skip)
        ti.store_view(ov, [1, 1], t)

    check(body, (ti.ByPtr(F32), ti.ByPtr(F32)), [x, out], disasm=disasm)
    want = np.full((16, 8), -1.0, np.float32)
    want[8:10, 2:6] = x[8:10, 2:6]
    np.testing.assert_array_equal(out, want)


def test_strided_view_refusals():
    e = refusal(lambda: ti.strided_view(_tv(), [4, 4], [0, 4]))
    assert "strictly positive" in str(e) and "(strided_view)" in str(e)
    assert "strictly positive" in str(refusal(lambda: ti.strided_view(_tv(), [4, 4], [4, -2])))
    assert "1 traversal strides for a rank-2" in str(refusal(lambda: ti.strided_view(_tv(), [4, 4], [4])))
    assert "powers of two" in str(refusal(lambda: ti.strided_view(_tv(), [3, 4], [4, 4])))
    e = refusal(lambda: ti.strided_view(_tv(1, I32), [4, 4], [4, 4], padding=ti.PadNegInf))
    assert "legal only over a float format" in str(e)
    assert "permutation" in str(refusal(lambda: ti.strided_view(_tv(), [4, 4], [4, 4], dim_map=[0, 0])))
    assert "takes a TensorView" in str(refusal(lambda: ti.strided_view(ti.partition_view(_tv(), [4, 4]), [4, 4],
                                                                      [4, 4])))
    k = ti.lower(ti.trace_kernel("k", (ti.ByPtr(F32),), lambda: ti.load_view(ti.strided_view(_tv(), [4, 4], [2, 2]),
                                                                              [0, 0])))
    with pytest.raises(TileirError, match="needs bytecode 13.3"):
        ti.encode_kernel(k, "13.2")


# ---- gather_scatter_view ---------------------------------------------------------------------


def _gather_body(sparse_dim):
    def body():
        idx = ti.param(I32, 1)
        tile = [4, 4]
        gv = ti.gather_scatter_view(_tv(), tile, sparse_dim, padding=ti.PadZero)
        ov = ti.gather_scatter_view(_tv(2), tile, sparse_dim)
        rows = ti.load(idx, Z(0), [4])
        at = ti.At(1)
        ix = [ti.Rows(rows), at] if sparse_dim == 0 else [at, ti.Rows(rows)]
        t = ti.load_gather(gv, ix)
        ti.store_gather(ov, ix, t)
        ti.store(ti.param(F32, 3), Z(0), ti.reshape(t, [16]))

    return body


@pytest.mark.parametrize("sparse_dim", [0, 1])
def test_gather_and_scatter_rows(sparse_dim, disasm):
    x = np.arange(128, dtype=np.float32).reshape(16, 8)
    rows = np.array([5, 0, 17, 3] if sparse_dim == 0 else [7, 1, 9, 2], np.int32)  # 17 / 9: past the end
    out = np.full((16, 8), -1.0, np.float32)
    got = np.zeros(16, np.float32)
    k = check(_gather_body(sparse_dim), (ti.ByPtr(F32), ti.ByPtr(I32), ti.ByPtr(F32), ti.ByPtr(F32)),
              [x, rows, out, got], disasm=disasm)
    want = np.full((16, 8), -1.0, np.float32)
    # At(1) is the ELEMENT offset 1 (measured on an H200), so the other dimension covers 1..4
    if sparse_dim == 0:
        ok = rows < 16
        tile = np.where(ok[:, None], x[np.minimum(rows, 15), 1:5], 0.0)  # the padding reads zero
        want[rows[ok], 1:5] = x[rows[ok], 1:5]
    else:
        ok = rows < 8
        tile = np.where(ok[None, :], x[1:5][:, np.minimum(rows, 7)], 0.0)
        want[1:5, rows[ok]] = x[1:5, rows[ok]]
    np.testing.assert_array_equal(got.reshape(4, 4), tile)
    np.testing.assert_array_equal(out, want)  # lanes past the end are not written
    ld = [i for i in k.body if isinstance(i, ir.LoadViewTile)][0]
    assert ld.idx_tys[sparse_dim] == ir.tile((4,), "i32") and ld.idx_tys[1 - sparse_dim] == ir.tile((), "i32")


def test_gather_scatter_refusals():
    def gv(sd=0):
        return ti.gather_scatter_view(_tv(), [4, 8], sd)

    e = refusal(lambda: ti.gather_scatter_view(_tv(), [4, 8], 2))
    assert "sparse_dim 2" in str(e) and "(gather_scatter_view)" in str(e)
    assert "legal only over a float" in str(refusal(lambda: ti.gather_scatter_view(_tv(1, I32), [4, 8], 0,
                                                                                  padding=ti.PadNan)))
    e = refusal(lambda: ti.load_gather(gv(), [ti.Rows(ti.arange(8)), ti.At(0)]))
    assert "[4] i32 tile of row numbers" in str(e) and "(load_gather)" in str(e)
    e = refusal(lambda: ti.load_gather(gv(), [ti.At(0), ti.At(0)]))
    assert "tile of row numbers" in str(e) and "Rows(t)" in e.fix
    assert "rank-0 i32 index" in str(refusal(lambda: ti.load_gather(gv(), [ti.Rows(ti.arange(4)),
                                                                           ti.Rows(ti.arange(8))])))
    assert "1 indices into a rank-2" in str(refusal(lambda: ti.load_gather(gv(), [ti.Rows(ti.arange(4))])))
    e = refusal(lambda: ti.load_gather(ti.partition_view(_tv(), [4, 8]), [ti.At(0), ti.At(0)]))
    assert "GatherScatterView" in str(e)
    assert "not a gather/scatter index" in str(refusal(lambda: ti.load_gather(gv(), [ti.arange(4), 0])))
    e = refusal(lambda: ti.store_gather(gv(), [ti.Rows(ti.arange(4)), ti.At(0)], ti.full([4, 4], 1.0, F32)))
    assert "[4, 4] tile" in str(e)


# ---- atomic_red_view -------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["add", "max", "min", "umax", "umin", "and", "or", "xor"])
def test_atomic_red_view_integer_modes_from_many_blocks(mode, disasm):
    rng = np.random.default_rng(3)
    acc = rng.integers(-50, 50, size=(8, 8)).astype(np.int32)
    src = rng.integers(-(2**31), 2**31 - 1, size=(4, 4, 4)).astype(np.int32)
    start = acc.copy()

    def body():
        b = ti.block_id(0)
        t = ti.load(ti.param(I32, 1), ti.tile_at(b, 16), [4, 4])
        pv = ti.partition_view(_tv(0, I32, (8, 8)), [4, 4])
        ti.atomic_red_view(pv, [1, 0], mode, "device", t)

    k = check(body, (ti.ByPtr(I32), ti.ByPtr(I32)), [acc, src], grid=(4,), disasm=disasm)
    want = start.copy().astype(np.int64)
    u = 0xFFFFFFFF
    for blk in src.astype(np.int64):
        cur = want[4:8, 0:4]
        want[4:8, 0:4] = {"add": cur + blk, "max": np.maximum(cur, blk), "min": np.minimum(cur, blk),
                          "umax": np.where((cur & u) >= (blk & u), cur, blk),
                          "umin": np.where((cur & u) <= (blk & u), cur, blk),
                          "and": cur & blk, "or": cur | blk, "xor": cur ^ blk}[mode]
    want = ((want + 2**31) % 2**32 - 2**31).astype(np.int32)
    np.testing.assert_array_equal(acc, want)
    (red,) = [i for i in k.body if isinstance(i, ir.AtomicRedViewTile)]
    assert red.mode == mode and red.scope == "device" and red.sem == "relaxed"


def test_atomic_red_view_addf_on_a_strided_view_tl_blk(disasm):
    acc = np.zeros((8, 8), np.float32)
    src = np.full((4, 4), 0.5, np.float32)

    def body():
        sv = ti.strided_view(_tv(0, F32, (8, 8)), [4, 4], [2, 2])
        t = ti.load(ti.param(F32, 1), Z(0), [4, 4])
        ti.atomic_red_view(sv, [0, 0], "addf", "tl_blk", t)
        ti.atomic_red_view(sv, [1, 1], "addf", "tl_blk", t)  # overlaps the first tile in [2:4, 2:4]

    check(body, (ti.ByPtr(F32), ti.ByPtr(F32)), [acc, src], disasm=disasm)
    want = np.zeros((8, 8), np.float32)
    want[0:4, 0:4] += 0.5
    want[2:6, 2:6] += 0.5
    np.testing.assert_array_equal(acc, want)


def test_atomic_red_view_refusals():
    def pv(d=I32, pad=ti.NoPadding):
        return ti.partition_view(_tv(1 if d is I32 else 0, d, (8, 8)), [4, 4], padding=pad)

    def t(d=I32):
        return ti.load(ti.param(d, 1 if d is I32 else 0), Z(0), [4, 4])

    e = refusal(lambda: ti.atomic_red_view(pv(), [0, 0], "xchg", "device", t()))
    assert "cannot exchange" in str(e) and "atomic_rmw" in e.fix and "(atomic_red_view)" in str(e)
    e = refusal(lambda: ti.atomic_red_view(pv(F32, ti.PadZero), [0, 0], "addf", "device", t(F32)))
    assert "padding zero" in str(e) and "NoPadding" in e.fix
    assert "tl_blk or device" in str(refusal(lambda: ti.atomic_red_view(pv(), [0, 0], "add", "sys", t())))
    assert "addf is the float sum" in str(refusal(lambda: ti.atomic_red_view(pv(), [0, 0], "addf", "device", t())))
    assert "addf is the float sum" in str(refusal(lambda: ti.atomic_red_view(pv(F32), [0, 0], "add", "device",
                                                                             t(F32))))
    assert "the modes are" in str(refusal(lambda: ti.atomic_red_view(pv(), [0, 0], "mul", "device", t())))
    e = refusal(lambda: ti.atomic_red_view(ti.gather_scatter_view(_tv(), [4, 4], 0), [0, 0], "addf", "device",
                                           t(F32)))
    assert "partition or strided view" in str(e)
    assert "with 1 indices" in str(refusal(lambda: ti.atomic_red_view(pv(), [0], "add", "device", t())))
    e = refusal(lambda: ti.d_if(ti.bool_const(True), lambda: ti.atomic_red_view(pv(), [0, 0], "add", "device",
                                                                                  ti.consti(I32, 1))))
    assert "inside an if region" in str(e)


def test_atomic_red_view_into_an_out_is_refused():
    def body():
        v = ti.partition_view(ti.tensor_view(ti.param(I32, 0), 0, [8, 8], [8, 1]), [4, 4])
        ti.atomic_red_view(v, [0, 0], "add", "device", ti.consti(I32, 1))

    e = refusal(body, (ti.Out(I32, ti.cells([8, 8], [4, 4])),))
    assert "an Out" in str(e) and "Shared" in e.fix
    ti.trace_kernel("k", (ti.Shared(I32),), body)  # a Shared parameter takes it
