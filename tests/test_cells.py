"""Markers and cells (issue 4): each block reads its cells and writes its own cell, and nothing
else; run-time extents (DYN_DIM, size names) come from the arrays, so one recording serves several
sizes."""

import numpy as np
import pytest

import tileir as ti
from tileir import DYN_DIM, F32, FREE_AXIS, In, Out, PadNegInf, Shared, TileirError, Whole, cells
from tileir.calls import calls_text, owners_text


@ti.kernel
def rowsum(x=In(F32, cells([DYN_DIM, 100], [1, 128])), y=Out(F32, cells([DYN_DIM, 1], [1, 1]))):
    ti.store_cell(y, ti.reduce_sum(ti.load_cell(x), keepdims=True))


def test_one_recording_serves_every_row_count():
    progs = set()
    for rows in (1, 3, 17):
        x = np.random.default_rng(rows).standard_normal((rows, 100)).astype(np.float32)
        y = np.zeros((rows, 1), np.float32)
        rowsum.run_host(x, y)
        assert np.allclose(y[:, 0], x.sum(1), rtol=1e-5)
        assert rowsum.grid(x, y) == (rows, 1)
        progs.add(id(rowsum.program()))
    assert len(progs) == 1
    # the bytes do not depend on the row count either: the extent is the grid's
    assert "tensor_view<?x100xf32" in rowsum.mlir()


def test_the_grid_follows_from_the_markers_and_refuses_disagreement():
    @ti.kernel
    def k(a=In(F32, cells([DYN_DIM], [4])), b=Out(F32, cells([DYN_DIM], [8]))):
        ti.store_cell(b, ti.fill(b, 1.0))

    with pytest.raises(TileirError, match="grid axis 0 would have 4 blocks from a .* and 2 from this array"):
        k.grid(np.zeros(16, np.float32), np.zeros(16, np.float32))
    # ragged last cells: 10 elements in cells of 4 and 20 in cells of 8 are 3 blocks each
    assert k.grid(np.zeros(10, np.float32), np.zeros(20, np.float32)) == (3,)


def test_store_sub_writes_a_cell_in_pieces():
    @ti.kernel
    def halves(x=In(F32, cells([DYN_DIM, 8], [1, 8])), y=Out(F32, cells([DYN_DIM, 8], [1, 8]))):
        row = ti.load_cell(x)  # [1, 8]
        left = ti.reshape(ti.extract(row, [1, 4], [0, 0]), [1, 4]) if hasattr(ti, "extract") else None
        del left
        ti.store_sub(y, [0, 1], ti.full([1, 4], 2.0, F32))  # the right half
        ti.store_sub(y, [0, 0], ti.full([1, 4], 1.0, F32))  # the left half

    x = np.zeros((3, 8), np.float32)
    y = np.zeros((3, 8), np.float32)
    halves.run_host(x, y)
    assert np.all(y[:, :4] == 1.0) and np.all(y[:, 4:] == 2.0)


def test_retile_reads_a_parameter_two_ways():
    @ti.kernel
    def two_ways(x=In(F32, cells([4, 8], [4, 8])), y=Out(F32, cells([4, 8], [4, 8]))):
        whole = ti.load_cell(x)
        cols = ti.retile(x, [4, 8], [4, 4])  # the same tensor in [4, 4] tiles
        right = ti.load_view(cols, [0, 1])
        ti.store_cell(y, whole + ti.broadcast(ti.reshape(ti.reduce_sum(right, 1), [4, 1]), [4, 8]))

    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    y = np.zeros_like(x)
    two_ways.run_host(x, y)
    assert np.array_equal(y, x + x[:, 4:].sum(1, keepdims=True))


def test_load_at_names_the_free_dimension():
    @ti.kernel
    def colsum(x=In(F32, cells([1, 64], [1, 16], along=[0, FREE_AXIS])), y=Out(F32, cells([1, 16], [1, 16]))):
        acc = ti.carry(ti.zeros(y))
        for j in ti.d_range(0, ti.blocks_of(x, 1)):
            ti.set(acc, ti.get(acc) + ti.load_at(x, [j]))
        ti.store_cell(y, ti.get(acc))

    x = np.arange(64, dtype=np.float32).reshape(1, 64)
    y = np.zeros((1, 16), np.float32)
    colsum.run_host(x, y)
    assert np.array_equal(y[0], x[0].reshape(4, 16).sum(0))


def refused(body, params, match):
    with pytest.raises(TileirError) as e:
        ti.trace_kernel("k", params, body)
    assert str(e.value).startswith("kernel 'k', op ") and e.value.fix, str(e.value)
    assert match in str(e.value), str(e.value)
    return e.value


OUT = Out(F32, cells([64], [16]))
IN = In(F32, cells([64], [16]))


def test_a_store_into_an_out_is_refused():
    e = refused(lambda: ti.store(ti.param(F32, 0), ti.idx_const(0), ti.full([16], 0.0, F32)), (OUT,), "an Out")
    assert "store_cell" in e.fix


def test_a_store_view_into_an_out_is_refused():
    def body():
        v = ti.partition_view(ti.tensor_view(ti.param(F32, 0), 0, [64], [1]), [16])
        ti.store_view(v, [ti.idx_const(0)], ti.full([16], 0.0, F32))

    refused(body, (OUT,), "store_view into parameter 0, an Out")


def test_a_store_into_an_in_or_whole_is_refused():
    refused(lambda: ti.store(ti.param(F32, 0), ti.idx_const(0), ti.full([16], 0.0, F32)), (IN,), "an In")
    refused(lambda: ti.store(ti.param(F32, 0), ti.idx_const(0), ti.full([16], 0.0, F32)), (Whole(F32),), "a Whole")
    ti.trace_kernel("k", (Shared(F32),), lambda: ti.store(ti.param(F32, 0), ti.idx_const(0), ti.full([16], 0.0, F32)))


def test_a_store_sub_piece_that_would_leave_the_cell():
    e = refused(lambda: ti.store_sub(ti.param(F32, 0), [4], ti.full([4], 0.0, F32)), (OUT,),
                "leave the block's own cell")
    assert "below 4" in e.fix


def test_cells_of_a_parameter_with_none():
    refused(lambda: ti.load_cell(ti.param(F32, 0)), (Shared(F32),), "no cells")
    refused(lambda: ti.load_cell(ti.param(F32, 0)), (ti.ByPtr(F32),), "trace_kernel")
    refused(lambda: ti.zeros(ti.param(F32, 0)), (Whole(F32),), "no cells")


def test_load_cell_of_a_parameter_with_a_free_dimension():
    p = In(F32, cells([4, 64], [4, 16], along=[0, FREE_AXIS]))
    refused(lambda: ti.load_cell(ti.param(F32, 0)), (p,), "follow no grid axis")


def test_marker_construction_refusals():
    with pytest.raises(TileirError, match="powers of two"):
        cells([100], [100])
    cells([DYN_DIM], [16], along=[FREE_AXIS])  # a run-time extent may follow no axis: the kernel walks it
    with pytest.raises(TileirError, match="size name '1M' is not an identifier"):
        cells(["1M"], [16])
    with pytest.raises(TileirError, match="a dimension follows grid axis 0, 1 or 2"):
        cells([DYN_DIM], [16], along=[3])
    with pytest.raises(TileirError, match="two dimensions follow one grid axis"):
        cells([4, 4], [4, 4], along=[0, 0])
    with pytest.raises(TileirError, match="cut into cells"):
        In(F32)


def test_pad_from_the_marker():
    @ti.kernel
    def k(x=In(F32, cells([5], [8], pad=PadNegInf)), y=Out(F32, cells([1], [1]))):
        ti.store_cell(y, ti.reshape(ti.reduce_max(ti.load_cell(x)), [1]))

    x = np.array([-5, -4, -3, -2, -1], np.float32)
    y = np.zeros(1, np.float32)
    k.run_host(x, y)
    assert y[0] == -1.0  # the three padded lanes read -inf, not 0


def test_call_tree_and_owners():
    prog = rowsum.program()
    names = [n.name for n in prog.calls]
    assert names == ["load_cell", "reduce_sum", "store_cell"]
    assert all(n.loc.startswith("test_cells.py:") for n in prog.calls)
    text = calls_text(prog)
    assert "reduce_sum" in text and "test_cells.py" in text

    @ti.kernel
    def looped(x=In(F32, cells([1, 64], [1, 16], along=[0, FREE_AXIS])), y=Out(F32, cells([1, 16], [1, 16]))):
        acc = ti.carry(ti.zeros(y))
        for j in ti.d_range(0, 4):
            ti.set(acc, ti.get(acc) + ti.load_at(x, [j]))
        ti.store_cell(y, ti.get(acc))

    p2 = looped.program()
    d_range = next(n for n in p2.calls if n.name == "d_range")
    assert [c.name for c in d_range.children] == ["get", "load_at", "add", "set"]  # the kernel's own calls
    own = owners_text(looped.kernel(), p2)
    assert "LoadViewTile" in own and "load_at at test_cells.py" in own
    k = looped.kernel()
    loop = next(x for x in k.body if type(x).__name__ == "ForLoop")
    inner = k.owners[k.body.index(loop)].inner[0]
    load_owner = next(o for x, o in zip(loop.body, inner) if type(x).__name__ == "LoadViewTile")
    assert next(op for op in p2.walk() if op.num == load_owner.op).kind == "load_view"
