"""d_assert, d_assume and the assume_* helpers, d_print, memory_fence_alias, gdc_launch_dependents
and gdc_wait: the host against what C and numpy answer, the bytes read back as render_kernel's
text, tileiras assembling them, and every recording refusal."""

import numpy as np
import pytest

import tileir as ti
from tests.kernelcheck import refused, run_and_read_back, walk
from tileir import F16, F32, F64, I1, I32, I64, TileirError, ir
from tileir.ref import run_host


def check(body, params, args, grid=(1,), disasm=None, targets=("sm_90", "sm_80")):
    return run_and_read_back(body, params, args, grid, disasm, targets=targets)


def refusal(body, params=(ti.ByPtr(I32), ti.ByPtr(F32))) -> TileirError:
    return refused(body, params)


P2 = (ti.ByPtr(I32), ti.ByPtr(F32))


# ---- d_assert ---------------------------------------------------------------------------------


def _asserting(limit):
    def body():
        p = ti.param(I32, 0)
        v = ti.load(p, ti.tile_at(ti.block_id(0), 8), [8])
        ti.d_assert(ti.lt_i(v, ti.i_const(limit)), "v < limit")
        ti.d_assert(ti.lt_i(ti.reshape(v, [2, 4]), ti.i_const(limit)), "rank 2")  # any rank
        ti.d_if(ti.bool_const(True), lambda: ti.d_assert(ti.bool_const(True), "in an if"))
        for _ in ti.d_range(0, 2):
            ti.d_assert(ti.bool_const(True), "in a loop")

    return body


def test_assert_passes_and_fails_on_the_host(disasm):
    x = np.arange(16, dtype=np.int32)
    k, _ = check(_asserting(16), (ti.ByPtr(I32),), [x], grid=(2,), disasm=disasm)
    asserts = [a for a in walk(k.body) if isinstance(a, ir.AssertTile)]
    assert len(asserts) == 4 and asserts[1].cond_ty == ir.tile((2, 4), "i1")
    with pytest.raises(TileirError, match=r"block \(1, 0, 0\), lane \[3\]: v < limit"):
        run_host(ti.trace_kernel("k", (ti.ByPtr(I32),), _asserting(11)), [x], (2,))


# ---- d_assume ---------------------------------------------------------------------------------


def test_assumptions_change_no_value(disasm):
    x = np.arange(32, dtype=np.int32) * 4
    y = np.zeros(32, np.float32)
    def body():
        p, f = ti.param(I32, 0), ti.param(F32, 1)
        v = ti.load(p, ti.idx_const(0), [32])
        a = ti.assume_div_by(v, 4)
        a = ti.assume_div_by(ti.reshape(a, [4, 8]), 8, every=4, along=1)
        a = ti.assume_same_elements(a, [1, 1])
        a = ti.assume_in_range(ti.reshape(a, [32]), 0, None)
        a = ti.d_assume(a, ti.Bounded(None, 1000))
        ps = ti.assume_div_by(ti.ptrs(f, [32]), 16)  # a pointer tile keeps where it points
        ti.store_ptrs(ti.ptr_offset(ps, ti.arange(32)), ti.int_to_float(a, F32))
        ti.store(p, ti.idx_const(0), ti.addi(a, ti.i_const(1)))
        ti.d_if(ti.bool_const(True), lambda: ti.assume_in_range(v, 0, 200))  # taken in an if

    k, _ = check(body, P2, [x, y], disasm=disasm)
    preds = [a.pred for a in walk(k.body) if isinstance(a, ir.AssumeTile)]
    assert ir.DivBy(8, 4, 1) in preds and ir.SameElements((1, 1)) in preds and ir.Bounded(0, None) in preds
    assert np.array_equal(y, (np.arange(32) * 4).astype(np.float32))
    assert np.array_equal(x, np.arange(32) * 4 + 1)


def test_assume_refusals():
    i = lambda: ti.load(ti.param(I32, 0), ti.idx_const(0), [8])  # noqa: E731
    f = lambda: ti.load(ti.param(F32, 1), ti.idx_const(0), [8])  # noqa: E731
    cases = [
        (lambda: ti.assume_div_by(i(), 3), "power of two"),
        (lambda: ti.assume_div_by(i(), 0), "power of two"),
        (lambda: ti.assume_div_by(i(), -4), "power of two"),
        (lambda: ti.assume_div_by(f(), 4), "integers and pointers only"),
        (lambda: ti.assume_div_by(i(), 4, every=2), "every / along"),
        (lambda: ti.assume_div_by(i(), 4, every=2, along=1), "along dimension 1 of a rank-1"),
        (lambda: ti.assume_div_by(i(), 4, every=16, along=0), "every 16"),
        (lambda: ti.assume_in_range(f(), 0, 1), "integer tiles only"),
        (lambda: ti.assume_in_range(ti.ptrs(ti.param(I32, 0), [8]), 0, 1), "integer tiles only"),
        (lambda: ti.assume_in_range(i(), 5, 4), "above the upper"),
        (lambda: ti.assume_in_range(i(), 0, 1 << 40), "signed range"),
        (lambda: ti.assume_in_range(ti.lt_i(i(), ti.i_const(3)), 0, 1), "[-1, 0]"),
        (lambda: ti.assume_same_elements(f(), [2]), "integers and"),
        (lambda: ti.assume_same_elements(i(), [2, 2]), "2 group sizes for a rank-1"),
        (lambda: ti.assume_same_elements(i(), [16]), "group 16"),
        (lambda: ti.d_assume(i(), "div_by 4"), "DivBy, SameElements or Bounded"),
        (lambda: ti.d_reduce(ti.arange(8), 0, lambda a, x: ti.addi(a, ti.assume_div_by(x, 2))), "inside a reduce"),
        (lambda: ti.d_scan(ti.arange(8), 0, lambda a, x: (ti.d_assert(ti.bool_const(True), "m"), a)[1]),
         "inside a scan"),
    ]
    for body, phrase in cases:
        e = refusal(body)
        assert phrase in str(e), (phrase, str(e))
    assert "(assume_div_by)" in str(refusal(cases[0][0]))


# ---- d_print ----------------------------------------------------------------------------------


def test_print_formats_as_c_does(disasm):
    x = np.array([-1, 255, 7], np.int32)
    f = np.array([3.0, -0.5], np.float32)

    def body():
        p, q = ti.param(I32, 0), ti.param(F32, 1)
        v = ti.load(p, ti.idx_const(0), [2])
        a = ti.reduce_sum(v)  # 254
        m = ti.reduce_min(v)  # -1
        g = ti.reduce_max(ti.load(q, ti.idx_const(0), [2]))  # 3.0
        ti.d_print("a=%d m=%i u=%u x=%x X=%#X o=%o c=%c%%\n", [a, m, m, a, a, ti.i_const(8), ti.i_const(65)])
        ti.d_print("f=%f e=%.2e g=%g a=%a w=[%8.3f] l=[%-6.1f]\n", [g, g, g, g, g, g])
        ti.d_print("mixed %d %f %lld %hhd\n", [a, g, ti.consti(I64, -(1 << 40)), ti.i_const(300)])
        ti.d_print("block %d\n", [ti.idx_as_tile(ti.block_id(0))])
        ti.d_print("no arguments\n")

    k, it = check(body, P2, [x, f], grid=(2,), disasm=disasm)
    first = ["a=254 m=-1 u=4294967295 x=fe X=0XFE o=10 c=A%\n",
             "f=3.000000 e=3.00e+00 g=3 a=0x1.8p+1 w=[   3.000] l=[3.0   ]\n",
             "mixed 254 3.000000 -1099511627776 44\n"]
    assert it.printed[:3] == first
    assert it.printed[3:5] == ["block 0\n", "no arguments\n"] and it.printed[8] == "block 1\n"
    assert len(it.printed) == 10
    prints = [x for x in k.body if isinstance(x, ir.PrintTile)]
    assert prints[2].arg_tys == (ir.tile((), "i32"), ir.tile((), "f32"), ir.tile((), "i64"), ir.tile((), "i32"))
    assert prints[0].arg_tys == ()  # one format: arg_ty covers them


def test_print_is_in_the_token_chain():
    def body():
        p = ti.param(I32, 0)
        v = ti.load(p, ti.idx_const(0), [8])
        ti.store(p, ti.idx_const(0), ti.addi(v, ti.i_const(1)))
        ti.d_print("after the store\n")
        ti.store(p, ti.idx_const(8), v)
        ti.d_print("second\n")
        for _ in ti.d_range(0, 2):
            ti.d_print("in a loop %d\n", [ti.i_const(1)])

    k = ti.lower(ti.trace_kernel("k", (ti.ByPtr(I32),), body))
    st = [x for x in k.body if isinstance(x, ir.StorePtr)]
    pr = [x for x in k.body if isinstance(x, ir.PrintTile)]
    assert pr[0].tok_in == ir.Val(st[0].tok_out)  # after the store
    assert st[1].tok_in == ir.Val(pr[0].tok_out)  # and the next store after it
    joins = {ir.Val(x.dst): x.toks for x in k.body if isinstance(x, ir.JoinTokens)}
    assert ir.Val(st[1].tok_out) in joins.get(pr[1].tok_in, (pr[1].tok_in,))
    x = np.zeros(16, np.int32)
    it = run_host(ti.trace_kernel("k", (ti.ByPtr(I32),), body), [x], (1,))
    assert it.printed == ["after the store\n", "second\n", "in a loop 1\n", "in a loop 1\n"]


def test_print_refusals():
    i = lambda: ti.reduce_sum(ti.load(ti.param(I32, 0), ti.idx_const(0), [8]))  # noqa: E731
    f = lambda: ti.reduce_sum(ti.load(ti.param(F32, 1), ti.idx_const(0), [8]))  # noqa: E731
    cases = [
        (lambda: ti.d_print("%d %d", [i()]), "2 format expressions and 1 arguments"),
        (lambda: ti.d_print("x", [i()]), "0 format expressions and 1"),
        (lambda: ti.d_print("%d", [ti.load(ti.param(I32, 0), ti.idx_const(0), [8])]), "rank-0 tiles"),
        (lambda: ti.d_print("%s", [i()]), "string, a pointer or a width"),
        (lambda: ti.d_print("%*d", [i()]), "string, a pointer or a width"),
        (lambda: ti.d_print("%f", [i()]), "reads a float"),
        (lambda: ti.d_print("%d", [f()]), "reads an integer"),
        (lambda: ti.d_print("100%", []), "unterminated"),
        (lambda: ti.d_print("%y", [i()]), "unterminated or not one of printf's"),
        (lambda: ti.d_if(ti.bool_const(True), lambda: ti.d_print("x")), "inside an if"),
        (lambda: ti.d_reduce(ti.arange(8), 0, lambda a, x: (ti.d_print("%d", [x]), a)[1]), "inside a reduce"),
        (lambda: ti.d_scan(ti.arange(8), 0, lambda a, x: (ti.d_print("%d", [x]), a)[1]), "inside a scan"),
    ]
    for body, phrase in cases:
        e = refusal(body)
        assert phrase in str(e), (phrase, str(e))
    assert "(d_print)" in str(refusal(cases[0][0]))


# ---- the token-only three ---------------------------------------------------------------------


def test_fence_and_gdc(disasm):
    x = np.arange(8, dtype=np.int32)
    y = np.zeros(8, np.float32)

    def body():
        p, q = ti.param(I32, 0), ti.param(F32, 1)
        ti.gdc_wait()
        v = ti.load(p, ti.idx_const(0), [8])
        ti.store(p, ti.idx_const(0), ti.addi(v, ti.i_const(1)))
        ti.memory_fence_alias()
        w = ti.load(q, ti.idx_const(0), [8])
        ti.store(p, ti.idx_const(0), ti.addi(ti.load(p, ti.idx_const(0), [8]), ti.float_to_int(w, I32)))
        ti.gdc_launch_dependents()
        for _ in ti.d_range(0, 2):
            ti.memory_fence_alias()

    k, _ = check(body, P2, [x, y], disasm=disasm)
    assert np.array_equal(x, np.arange(8) + 1)
    ops = [x for x in k.body if isinstance(x, ir.TokenOnlyTile)]
    assert [o.op for o in ops] == ["gdc_wait_tko", "memory_fence_alias_tko", "gdc_launch_dependents_tko"]
    loads = [x for x in k.body if isinstance(x, ir.LoadPtr)]
    assert loads[0].tok_in == ir.Val(ops[0].tok_out)  # every load waits for the predecessor kernel
    assert loads[1].tok_in == ir.Val(ops[1].tok_out)  # a never-written parameter's load waits for the fence
    (loop,) = [x for x in k.body if isinstance(x, ir.ForLoop)]
    assert any(isinstance(x, ir.TokenOnlyTile) for x in loop.body)
    with pytest.raises(TileirError, match="13.4"):
        ti.encode_kernel(k, "13.3")  # the token-only three came at 13.4


def test_print_needs_13_2_and_takes_an_index():
    def body():
        for j in ti.d_range(0, 2):
            ti.d_print("j=%d\n", [ti.assume_in_range(j, 0, 1)])

    prog = ti.trace_kernel("k", (), body)
    assert run_host(prog, [], (1,)).printed == ["j=0\n", "j=1\n"]
    k = ti.lower(prog)
    ti.encode_kernel(k, "13.2")
    with pytest.raises(TileirError, match="13.2"):
        ti.encode_kernel(k, "13.1")


def test_token_only_refusals():
    e = refusal(lambda: ti.d_if(ti.bool_const(True), lambda: ti.memory_fence_alias()))
    assert "inside an if" in str(e) and "(d_if)" in str(e)

    def wait_in_loop():
        for _ in ti.d_range(0, 2):
            ti.gdc_wait()

    e = refusal(wait_in_loop)
    assert "gdc_wait inside a region" in str(e) and "top of the kernel" in e.fix


def test_print_of_narrow_and_wide_formats_on_the_host():
    def body():
        ti.d_print("%f %f %d %g\n", [ti.f_const(F16, 0.1), ti.f_const(F64, 1e300), ti.bool_const(True),
                                      ti.f_const(F32, float("inf"))])

    it = run_host(ti.trace_kernel("k", (), body), [], (1,))
    assert it.printed == [f"0.099976 {1e300:f} 1 inf\n"]
    assert I1 is ti.BOOL
