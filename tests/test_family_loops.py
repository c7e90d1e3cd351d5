"""d_loop, d_return_if, the index comparisons and d_fork2: the host against numpy, the bytes read
back as render_kernel's text, tileiras assembling them for sm_90, and every recording refusal."""

import numpy as np
import pytest

import tileir as ti
from tests.kernelcheck import refused, run_and_read_back, walk
from tileir import F32, I32, TileirError, ir


def check(body, params, args, grid=(1,), disasm=None, version=None):
    return run_and_read_back(body, params, args, grid, disasm, version=version)[0]


def refusal(body, params=(ti.ByPtr(F32),)) -> TileirError:
    return refused(body, params)


# ---- d_loop ----------------------------------------------------------------------------------


def _doubling():
    p, n = ti.param(F32, 0), ti.param(I32, 1)
    c = ti.carry(ti.f_const(F32, 1.0))
    k = ti.carry(ti.i_const(0))

    def step():
        stop = ti.ge(ti.get(c), ti.f_const(F32, 100.0))  # from what the iteration started with
        ti.set(c, ti.get(c) * 2.0)
        ti.set(k, ti.add_i(ti.get(k), ti.i_const(1)))
        ti.store(p, ti.idx_const(0), ti.broadcast(ti.get(c), [1]))  # happens on the stopping iteration too
        return stop

    ti.d_loop(step)
    ti.store(p, ti.idx_const(1), ti.broadcast(ti.get(c), [1]))
    ti.store(n, ti.idx_const(0), ti.broadcast(ti.get(k), [1]))


def test_d_loop_answers_the_values_that_entered_the_stopping_iteration(disasm):
    x, n = np.zeros(2, np.float32), np.zeros(1, np.int32)
    k = check(_doubling, (ti.ByPtr(F32), ti.ByPtr(I32)), [x, n], disasm=disasm)
    # entering 1, 2, .., 128: the iteration entered with 128 stops; its own set (256) is discarded,
    # but its store ran (the body runs to its end every time)
    assert x.tolist() == [256.0, 128.0] and n.tolist() == [7]
    (loop,) = [i for i in k.body if isinstance(i, ir.WhileLoop)]
    assert loop.tys == (ir.tile((), "f32"), ir.tile((), "i32"), ir.TOKEN)  # the stored parameter's token rides
    *_, cond_if, cont = loop.body
    assert isinstance(cond_if, ir.IfElse) and isinstance(cont, ir.Cont)
    brk = cond_if.on_true[-1]
    assert isinstance(brk, ir.BreakVals) and isinstance(cond_if.on_false[-1], ir.YieldVals)
    assert brk.values[:2] == tuple(ir.Val(c) for c in loop.carried[:2])  # break: the ENTERING values
    assert brk.values[2] == cont.values[2]  # both terminators hand on the token of the body's store
    store_after = [i for i in k.body if isinstance(i, ir.StorePtr)][0]
    assert store_after.tok_in == ir.Val(loop.results[2])


def test_d_loop_of_a_pure_body_carries_no_token(disasm):
    out = np.zeros(1, np.int32)

    def body():
        c = ti.carry(ti.i_const(37))

        def collatz():
            v = ti.get(c)
            odd = ti.eq_i(ti.and_i(v, ti.i_const(1)), ti.i_const(1))
            ti.set(c, ti.select(odd, ti.add_i(ti.mul_i(v, ti.i_const(3)), ti.i_const(1)), ti.shr_i(v, ti.i_const(1))))
            return ti.eq_i(v, ti.i_const(1))

        ti.d_loop(collatz)
        ti.store(ti.param(I32, 0), ti.idx_const(0), ti.broadcast(ti.get(c), [1]))

    k = check(body, (ti.ByPtr(I32),), [out], disasm=disasm)
    assert out.tolist() == [1]
    (loop,) = [i for i in k.body if isinstance(i, ir.WhileLoop)]
    assert ir.TOKEN not in loop.tys


def test_d_loop_with_a_load_and_a_store_to_one_parameter(disasm):
    x = np.arange(8, dtype=np.float32)

    def body():
        p = ti.param(F32, 0)
        i = ti.carry(ti.i_const(0))

        def step():
            j = ti.idx_of(ti.get(i))
            v = ti.load(p, j, [1])
            ti.store(p, j, v * 10.0)
            ti.set(i, ti.add_i(ti.get(i), ti.i_const(1)))
            return ti.idx_ge(j, 3)

        ti.d_loop(step)

    check(body, (ti.ByPtr(F32),), [x], disasm=disasm)
    assert x.tolist() == [0, 10, 20, 30, 4, 5, 6, 7]


def test_d_loop_nested_in_d_range_and_d_range_in_d_loop(disasm):
    out = np.zeros(4, np.int32)

    def body():
        o = ti.param(I32, 0)
        for j in ti.d_range(0, 4):
            c = ti.carry(ti.i_const(0))

            def step(j=j, c=c):
                acc = ti.carry(ti.get(c))
                for _ in ti.d_range(0, 2):
                    ti.set(acc, ti.add_i(ti.get(acc), ti.i_const(1)))
                done = ti.ge_i(ti.get(c), ti.idx_as_tile(j) * 2)
                ti.set(c, ti.get(acc))
                return done

            ti.d_loop(step)
            ti.store(o, j, ti.broadcast(ti.get(c), [1]))

    check(body, (ti.ByPtr(I32),), [out], disasm=disasm)
    assert out.tolist() == [0, 2, 4, 6]


# ---- d_return_if -----------------------------------------------------------------------------


def _returns():
    p = ti.param(I32, 0)
    b = ti.block_id(0)
    c = ti.carry(ti.i_const(0))

    def step():
        i = ti.get(c)
        ti.d_return_if(ti.idx_eq(ti.idx_of(i), b))  # inside the loop: leaves the loop and the kernel
        ti.set(c, ti.add_i(i, ti.i_const(1)))
        return ti.ge_i(i, ti.i_const(5))

    ti.d_loop(step)
    ti.d_if(ti.idx_eq(b, 6), lambda: ti.d_return_if(ti.bool_const(True)))  # inside an if
    ti.d_return_if(ti.idx_eq(b, 8))  # at the top
    ti.store(p, ti.tile_at(b, 1), ti.broadcast(ti.get(c), [1]))


def test_d_return_if_in_a_loop_in_an_if_and_at_the_top(disasm):
    """The shape measured right on an H200 (.devcheck, tileiras 13.4.92, sm_90): blocks 0-5 leave in
    the loop, 6 in the if, 8 at the top; 7 and 9 store what the loop answered."""
    x = np.full(10, -1, np.int32)
    k = check(_returns, (ti.ByPtr(I32),), [x], grid=(10,), disasm=disasm)
    assert x.tolist() == [-1] * 7 + [5, -1, 5]
    rets = [i for i in walk(k.body) if isinstance(i, ir.IfElse) and i.on_true and isinstance(i.on_true[-1], ir.Ret)]
    assert len(rets) == 3 and all(isinstance(i.on_false[-1], ir.YieldVals) for i in rets)


def test_a_top_level_return_before_a_loop_that_returns_is_refused():
    """Measured on an H200 (tileiras 13.4.92, sm_90, -O0 and -O3): with a conditional return at the
    top before the loop, the loop's return acts as a break and the block runs on after the loop."""
    def body():
        b = ti.block_id(0)
        ti.d_return_if(ti.idx_eq(b, 3))
        c = ti.carry(ti.i_const(0))

        def step():
            ti.d_return_if(ti.idx_eq(ti.idx_of(ti.get(c)), b))
            ti.set(c, ti.add_i(ti.get(c), ti.i_const(1)))
            return ti.ge_i(ti.get(c), ti.i_const(5))

        ti.d_loop(step)

    e = refusal(body)
    assert "tileiras 13.4.92" in str(e) and "break" in str(e) and "after the loop" in e.fix


def test_d_return_if_keeps_what_was_stored_before_it():
    x = np.zeros(4, np.float32)

    def body():
        p = ti.param(F32, 0)
        b = ti.block_id(0)
        ti.store(p, ti.tile_at(b, 2), ti.full([1], 1.0, F32))
        ti.d_return_if(ti.idx_lt(b, 1))
        ti.store(p, ti.tile_at(b, 2) + 1, ti.full([1], 2.0, F32))

    check(body, (ti.ByPtr(F32),), [x], grid=(2,))
    assert x.tolist() == [1, 0, 1, 2]


def test_return_inside_a_loop_is_refused_below_bytecode_13_4(disasm):
    """The spec dates the permission to 13.4 (ReturnOp's parents became entry, if and loop), so the
    writer refuses it at 13.3 with the version named -- although tileirdisasm / tileiras 13.4.92 were
    measured to read and assemble such 13.3 bytes too."""
    x = np.full(10, -1, np.int32)
    check(_returns, (ti.ByPtr(I32),), [x], grid=(10,), disasm=disasm)  # 13.4: written
    k = ti.lower(ti.trace_kernel("k", (ti.ByPtr(I32),), _returns))
    with pytest.raises(TileirError, match="needs bytecode 13.4"):
        ti.encode_kernel(k, "13.3")


@pytest.mark.parametrize("where", ["d_range", "reduce", "scan"])
def test_d_return_if_refused_under_a_for_a_reduce_and_a_scan(where):
    def body():
        t = ti.load(ti.param(F32, 0), ti.idx_const(0), [8])
        if where == "d_range":
            for j in ti.d_range(0, 2):
                ti.d_return_if(ti.idx_eq(j, 1))
        else:
            def fold(a, e):
                ti.d_return_if(ti.gt(a, e))
                return ti.add(a, e)
            (ti.d_reduce if where == "reduce" else ti.d_scan)(t, 0.0, fold)

    e = refusal(body)
    assert "d_return_if inside" in str(e) and "d_loop" in e.fix  # named by the kernel's own call (d_range ...)


def test_d_return_if_refused_under_a_d_loop_inside_a_d_range():
    def body():
        for _ in ti.d_range(0, 2):
            ti.d_loop(lambda: (ti.d_return_if(ti.bool_const(False)), ti.bool_const(True))[1])

    assert "d_range body" in str(refusal(body))


def test_d_return_if_and_d_loop_want_a_rank0_mask():
    e = refusal(lambda: ti.d_return_if(ti.load(ti.param(F32, 0), ti.idx_const(0), [8]) > 0.0))
    assert "rank-0 i1" in str(e)
    e = refusal(lambda: ti.d_loop(lambda: ti.f_const(F32, 1.0)))
    assert "d_loop's body answers a f32[]" in str(e) and "(d_loop)" in str(e)
    e = refusal(lambda: ti.d_loop(lambda: None))
    assert "must answer a rank-0 mask" in str(e)


def test_d_loop_body_must_keep_a_carry_format():
    def body():
        c = ti.carry(ti.f_const(F32, 1.0))

        def step():
            ti.set(c, ti.full([2], 1.0, F32))
            return ti.bool_const(True)

        ti.d_loop(step)

    assert "keeps its first tile's format and shape" in str(refusal(body))


# ---- index comparisons -----------------------------------------------------------------------


def test_idx_compares_are_signed_rank0_masks(disasm):
    vals = np.array([-5, 3, 3, 2**31 - 1], np.int32)
    out = np.zeros((4, 6), np.int32)
    fns = (ti.idx_eq, ti.idx_ne, ti.idx_lt, ti.idx_le, ti.idx_gt, ti.idx_ge)

    def body():
        p, o = ti.param(I32, 0), ti.param(I32, 1)
        b = ti.block_id(0)
        a = ti.idx_of(ti.load(p, b, [1]).reshape([]))
        for i, f in enumerate(fns):
            m = f(a, 3)
            assert m.shape == [] and m.dtype == "i1"
            ti.store(o, ti.tile_at(b, 6) + i, ti.broadcast(ti.mask_to_int(m), [1]))

    check(body, (ti.ByPtr(I32), ti.ByPtr(I32)), [vals, out], grid=(4,), disasm=disasm)
    for i, f in enumerate((np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal)):
        assert out[:, i].tolist() == f(vals, 3).astype(np.int32).tolist()


# ---- d_fork2 ---------------------------------------------------------------------------------


def _fork_disjoint():
    x, y, s = ti.param(F32, 0), ti.param(F32, 1), ti.param(F32, 2)
    z = ti.idx_const(0)
    v = ti.load(s, z, [8])
    ti.d_fork2(lambda: ti.store(x, z, v + 1.0), lambda: ti.store(y, z, ti.load(s, z, [8]) * 2.0))
    ti.store(x, ti.idx_const(8), ti.load(y, z, [8]))


def test_d_fork2_of_disjoint_chains(disasm):
    x, y, s = np.zeros(16, np.float32), np.zeros(8, np.float32), np.arange(8, dtype=np.float32)
    k = check(_fork_disjoint, (ti.ByPtr(F32),) * 3, [x, y, s], disasm=disasm)
    assert x[:8].tolist() == (s + 1).tolist() and y.tolist() == (s * 2).tolist() and x[8:].tolist() == y.tolist()
    prog = ti.trace_kernel("k", (ti.ByPtr(F32),) * 3, _fork_disjoint)
    assert [op.kind for op in prog.ops].count("tok_join") == 1
    st_x, st_y = [i for i in k.body if isinstance(i, ir.StorePtr)][:2]
    assert st_x.tok_in == st_y.tok_in == ir.Val(k.body[0].dst)  # neither chain waits for the other
    last = [i for i in k.body if isinstance(i, ir.StorePtr)][-1]
    ld_y = [i for i in k.body if isinstance(i, ir.LoadPtr)][-1]
    assert ld_y.tok_in == ir.Val(st_y.tok_out) and last.tok_in == ir.Val(st_x.tok_out)


def test_d_fork2_chains_may_both_read_one_parameter():
    x, y, s = np.zeros(8, np.float32), np.zeros(8, np.float32), np.ones(8, np.float32)

    def body():
        a, b, src = ti.param(F32, 0), ti.param(F32, 1), ti.param(F32, 2)
        z = ti.idx_const(0)
        ti.d_fork2(lambda: ti.store(a, z, ti.load(src, z, [8])), lambda: ti.store(b, z, ti.load(src, z, [8])))

    check(body, (ti.ByPtr(F32),) * 3, [x, y, s])
    assert x.tolist() == y.tolist() == [1.0] * 8


@pytest.mark.parametrize("second", ["store", "load"])
def test_d_fork2_refuses_chains_that_touch_one_parameter(second):
    def body():
        a = ti.param(F32, 0)
        z = ti.idx_const(0)
        other = (lambda: ti.store(a, ti.idx_const(8), ti.full([8], 1.0, F32))) if second == "store" else (
            lambda: ti.load(a, ti.idx_const(8), [8]))
        ti.d_fork2(lambda: ti.store(a, z, ti.full([8], 0.0, F32)), other)

    e = refusal(body)
    assert "parameter 0" in str(e) and "(d_fork2)" in str(e) and "in sequence" in e.fix


def test_d_fork2_refuses_a_loop_that_writes_what_the_other_chain_reads():
    def body():
        a, b = ti.param(F32, 0), ti.param(F32, 1)

        def writer():
            for j in ti.d_range(0, 2):
                ti.store(a, ti.tile_at(j, 8), ti.full([8], 0.0, F32))

        ti.d_fork2(writer, lambda: ti.store(b, ti.idx_const(0), ti.load(a, ti.idx_const(0), [8])))

    assert "parameter 0" in str(refusal(body, (ti.ByPtr(F32), ti.ByPtr(F32))))


def test_d_fork2_of_empty_chains_records_no_join():
    prog = ti.trace_kernel("k", (), lambda: ti.d_fork2(lambda: None, lambda: None))
    assert [op.kind for op in prog.ops] == ["make_token", "return"]
