"""d_reduce2 and d_scan2: folds of two tiles at once -- the host against numpy, the bytes read back
as render_kernel's text, tileiras assembling them for sm_90, and the refusals."""

import numpy as np
import pytest

import tileir as ti
from tests.kernelcheck import refused, run_and_read_back
from tileir import F32, F64, I32, TileirError, ir


def check(body, params, args, grid=(1,), disasm=None):
    return run_and_read_back(body, params, args, grid, disasm)[0]


def refusal(body, params=(ti.ByPtr(F32), ti.ByPtr(I32))) -> TileirError:
    return refused(body, params)


def _argmax(av, ai, ev, ei):
    """(value, index) of the larger value, the smaller index on a tie: associative and commutative."""
    take = ti.or_mask(ti.gt(ev, av), ti.and_mask(ti.eq(ev, av), ti.lt_i(ei, ai)))
    return ti.select(take, ev, av), ti.select(take, ei, ai)


def _argmin(av, ai, ev, ei):
    take = ti.or_mask(ti.lt(ev, av), ti.and_mask(ti.eq(ev, av), ti.lt_i(ei, ai)))
    return ti.select(take, ev, av), ti.select(take, ei, ai)


@pytest.mark.parametrize("which", ["max", "min"])
def test_d_reduce2_argmax_argmin_along_rows(which, disasm):
    rng = np.random.default_rng(1)
    x = rng.integers(-4, 4, size=(8, 16)).astype(np.float32)  # many ties: the smaller index must win
    vals, idxs = np.zeros(8, np.float32), np.zeros(8, np.int32)

    def body():
        t = ti.load(ti.param(F32, 0), ti.idx_const(0), [8, 16])
        lanes = ti.broadcast(ti.reshape(ti.arange(16), [1, 16]), [8, 16])
        ident = -np.inf if which == "max" else np.inf
        v, i = ti.d_reduce2(t, lanes, ident, 2**31 - 1, _argmax if which == "max" else _argmin, dim=1)
        assert v.shape == [8] and i.shape == [8] and i.dtype == "i32"
        ti.store(ti.param(F32, 1), ti.idx_const(0), v)
        ti.store(ti.param(I32, 2), ti.idx_const(0), i)

    k = check(body, (ti.ByPtr(F32), ti.ByPtr(F32), ti.ByPtr(I32)), [x, vals, idxs], disasm=disasm)
    f = np.argmax if which == "max" else np.argmin
    assert idxs.tolist() == f(x, axis=1).tolist()  # numpy answers the first of equal extremes too
    assert vals.tolist() == x[np.arange(8), f(x, axis=1)].tolist()
    (red,) = [i for i in k.body if isinstance(i, ir.ReduceTile)]
    assert len(red.operands) == 2 and len(red.args) == 4
    assert red.identities[1] == ir.IdI("i32", 2**31 - 1)


def test_d_reduce2_along_the_first_dimension_to_rank0_and_keeps_nan_rules():
    x = np.array([3.0, 7.0, 7.0, 1.0], np.float64)
    out_v, out_i = np.zeros(1, np.float64), np.zeros(1, np.int32)

    def body():
        t = ti.load(ti.param(F64, 0), ti.idx_const(0), [4])
        v, i = ti.d_reduce2(t, ti.arange(4), -np.inf, 0, _argmax, dim=0)
        assert v.shape == [] and i.shape == []
        ti.store(ti.param(F64, 1), ti.idx_const(0), ti.broadcast(v, [1]))
        ti.store(ti.param(I32, 2), ti.idx_const(0), ti.broadcast(i, [1]))

    check(body, (ti.ByPtr(F64), ti.ByPtr(F64), ti.ByPtr(I32)), [x, out_v, out_i])
    assert out_v.tolist() == [7.0] and out_i.tolist() == [1]


def _affine(ac, av, ec, ev):
    """(c, v) then (c', v') is (c * c', c' * v + v'): h[t] = a[t] * h[t-1] + x[t]."""
    return ti.mul(ac, ec), ti.add(ti.mul(ec, av), ev)


@pytest.mark.parametrize("reverse", [False, True])
def test_d_scan2_linear_recurrence(reverse, disasm):
    a = np.array([1, 2, 0.5, 1, -1, 2, 0.5, 0.25] * 2, np.float32)  # powers of two: every step exact
    x = np.array([1, -2, 4, 0.5, 1, 2, -1, 8] * 2, np.float32)
    out = np.zeros((2, 16), np.float32)

    def body():
        z = ti.idx_const(0)
        ta, tx = ti.load(ti.param(F32, 0), z, [16]), ti.load(ti.param(F32, 1), z, [16])
        c, h = ti.d_scan2(ta, tx, 1.0, 0.0, _affine, reverse=reverse)
        ti.store(ti.param(F32, 2), z, c)
        ti.store(ti.param(F32, 2), ti.idx_const(16), h)

    k = check(body, (ti.ByPtr(F32),) * 3, [a, x, out], disasm=disasm)
    order = range(15, -1, -1) if reverse else range(16)
    c_want, h_want = np.zeros(16), np.zeros(16)
    c, hh = 1.0, 0.0
    for t in order:
        c, hh = c * a[t], a[t] * hh + x[t]
        c_want[t], h_want[t] = c, hh
    assert out[0].tolist() == c_want.tolist() and out[1].tolist() == h_want.tolist()
    (scan,) = [i for i in k.body if isinstance(i, ir.ScanTile)]
    assert scan.reverse == reverse and len(scan.operands) == 2


def test_d_scan2_over_integers_along_the_first_dimension():
    a = np.arange(1, 9, dtype=np.int32).reshape(4, 2)
    out = np.zeros((2, 4, 2), np.int32)

    def body():
        t = ti.load(ti.param(I32, 0), ti.idx_const(0), [4, 2])
        s, p = ti.d_scan2(t, t, 0, 1, lambda a0, a1, e0, e1: (ti.add_i(a0, e0), ti.mul_i(a1, e1)), dim=0)
        ti.store(ti.param(I32, 1), ti.idx_const(0), s)
        ti.store(ti.param(I32, 1), ti.idx_const(8), p)

    check(body, (ti.ByPtr(I32), ti.ByPtr(I32)), [a, out])
    assert out[0].tolist() == np.cumsum(a, axis=0).tolist()
    assert out[1].tolist() == np.cumprod(a, axis=0).tolist()


# ---- refusals ----------------------------------------------------------------------------------


def _vals():
    return ti.load(ti.param(F32, 0), ti.idx_const(0), [16])


def test_d_reduce2_wants_an_i32_index_tile_of_the_values_shape():
    e = refusal(lambda: ti.d_reduce2(_vals(), _vals(), 0.0, 0, _argmax))
    assert "index tile is f32" in str(e) and "(d_reduce2)" in str(e)
    e = refusal(lambda: ti.d_reduce2(_vals(), ti.arange(8), 0.0, 0, _argmax))
    assert "[16] value tile and a [8] index tile" in str(e)


def test_d_scan2_wants_one_format():
    def body():
        v = _vals()
        ti.d_scan2(v, ti.load(ti.param(I32, 1), ti.idx_const(0), [16]), 0.0, 0.0, _affine)

    e = refusal(body)
    assert "f32 tile and a i32 tile" in str(e) and "(d_scan2)" in str(e)


def test_fold_bodies_answer_two_tiles_of_the_operands_formats():
    e = refusal(lambda: ti.d_scan2(_vals(), _vals(), 1.0, 0.0, lambda a, b, c, d: ti.add(a, c)))
    assert "must answer two tiles" in str(e)
    e = refusal(lambda: ti.d_scan2(_vals(), _vals(), 1.0, 0.0, lambda a, b, c, d: (b, ti.i_const(1))))
    assert "rank-0 f32" in str(e)


def test_fold_bodies_refuse_memory_and_set():
    def body():
        c = ti.carry(ti.f_const(F32, 0.0))

        def fold(av, ai, ev, ei):
            ti.set(c, av)
            return av, ai

        ti.d_reduce2(_vals(), ti.arange(16), 0.0, 0, fold)

    assert "set inside a reduction" in str(refusal(body))

    def body2():
        def fold(a0, a1, e0, e1):
            ti.load(ti.param(F32, 0), ti.idx_const(0), [16])
            return a0, a1

        ti.d_scan2(_vals(), _vals(), 0.0, 0.0, fold)

    assert "inside a scan region" in str(refusal(body2))
