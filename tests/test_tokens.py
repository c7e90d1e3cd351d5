"""The lowering's memory ordering (lower/tokens.py): loads of a parameter nobody writes take the
entry token and never chain; stores to a parameter are ordered after every earlier access to it."""

import tileir as ti
from tileir import F32, ir
from tileir.kernels import CASES


def loops(k):
    return [x for x in k.body if isinstance(x, ir.ForLoop)]


def tokens_carried(loop):
    return sum(1 for t in loop.tys if t == ir.TOKEN)


def test_matmul_loads_are_not_chained():
    case = CASES["matmul_f16"]
    k = case.kernel.kernel(**case.config((256, 256, 256)))
    (loop,) = loops(k)
    assert tokens_carried(loop) == 0  # the K loop carries only the accumulator
    entry = k.body[0].dst
    loads = [x for x in loop.body if isinstance(x, ir.LoadViewTile)]
    assert len(loads) == 2 and all(x.tok_in == ir.Val(entry) for x in loads)


def _in_place():
    p = ti.param(F32, 0)
    for j in ti.d_range(0, 4):
        base = ti.tile_at(j, 16)
        ti.store(p, base, ti.load(p, base, [16]) + 1.0)


def test_a_loop_that_stores_carries_the_parameters_token():
    k = ti.lower(ti.trace_kernel("inplace", (ti.ByPtr(F32),), _in_place))
    (loop,) = loops(k)
    assert tokens_carried(loop) == 1
    load = next(x for x in loop.body if isinstance(x, ir.LoadPtr))
    store = next(x for x in loop.body if isinstance(x, ir.StorePtr))
    carried_tok = loop.carried[loop.tys.index(ir.TOKEN)]
    assert load.tok_in == ir.Val(carried_tok)  # the load waits for the previous iteration's store
    assert store.tok_in == ir.Val(load.tok_out)  # the store waits for the load (which waited for the last store)
    cont = loop.body[-1]
    assert cont.values[loop.tys.index(ir.TOKEN)] == ir.Val(store.tok_out)  # and hands its token on


def _read_loop_then_store():
    p = ti.param(F32, 0)
    acc = ti.carry(ti.full([16], 0.0, F32))
    for j in ti.d_range(0, 4):
        ti.set(acc, ti.get(acc) + ti.load(p, ti.tile_at(j, 16), [16]))
    ti.store(p, ti.idx_const(0), ti.get(acc))


def test_reads_in_a_loop_are_joined_before_a_later_store():
    k = ti.lower(ti.trace_kernel("rs", (ti.ByPtr(F32),), _read_loop_then_store))
    (loop,) = loops(k)
    assert tokens_carried(loop) == 1  # the reads' token, not a chain the loads wait on
    load = next(x for x in loop.body if isinstance(x, ir.LoadPtr))
    assert load.tok_in == ir.Val(k.body[0].dst)  # loads still take the store-free entry token
    store = next(x for x in k.body if isinstance(x, ir.StorePtr))
    tok_result = loop.results[loop.tys.index(ir.TOKEN)]
    assert store.tok_in == ir.Val(tok_result)


def test_a_read_only_parameter_is_never_ordered():
    case = CASES["softmax"]
    k = case.kernel.kernel(**case.config((2, 9000)))
    ls = loops(k)
    assert [tokens_carried(x) for x in ls] == [0, 1]  # the statistics read x; the last loop writes y


def _nested_reads_then_store():
    p = ti.param(F32, 0)
    acc = ti.carry(ti.full([16], 0.0, F32))
    first = ti.load(p, ti.idx_const(64), [16])  # a read before the loops
    for i in ti.d_range(0, 2):
        for j in ti.d_range(0, 2):
            ti.set(acc, ti.get(acc) + ti.load(p, ti.tile_at(ti.idx_add(ti.tile_at(i, 2), j), 16), [16]))
    ti.store(p, ti.idx_const(0), ti.get(acc) + first)


def test_nested_read_loops_and_an_earlier_read_are_joined_before_the_store(disasm):
    k = ti.lower(ti.trace_kernel("nested", (ti.ByPtr(F32),), _nested_reads_then_store))
    # the bytes read back (an inner loop's read token must not leak into the outer loop's state)
    assert disasm(ti.encode_kernel(k))
    first_load = next(x for x in k.body if isinstance(x, ir.LoadPtr))
    store = next(x for x in k.body if isinstance(x, ir.StorePtr))
    join = next(x for x in k.body if isinstance(x, ir.JoinTokens) and ir.Val(x.dst) == store.tok_in)
    assert ir.Val(first_load.tok_out) in join.toks  # the store waits for the read made before the loops
