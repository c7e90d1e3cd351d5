"""Issue 15's audit: five places where the package and the spec (/work/shared/spec) disagreed, each
fixed or written down with its reason (docs/fuzz.md, "The audit's five spec deviations"). The ftof
table and the Rounding type have their own tests (test_family_convert.py, test_family_arith.py)."""

import numpy as np
import pytest

import tileir as ti
from tests.kernelcheck import refused
from tileir import F32, I32, I64, ir
from tileir.assemble import assemble
from tileir.ref import run_host

P2 = (ti.ByPtr(I32), ti.ByPtr(F32))


def _assembles(prog) -> bool:
    k = ti.lower(prog)
    return assemble(ti.encode_kernel(k), "sm_90", kernel=k.name, program=k)[:4] == b"\x7fELF"


# ---- gdc_wait / gdc_launch_dependents in regions ----------------------------------------------------------


def test_gdc_launch_dependents_is_taken_in_a_loop_and_refused_in_an_if():
    """The spec restricts only memory_fence_alias. gdc_launch_dependents is taken in a loop (tileiras
    13.4.92 assembles it); in an if it stays refused: the lowering gives an if no token, and the token
    one made inside is not one after it (tileiras rejected such bytes: "operand #0 must be cuda tile
    token type")."""

    def body():
        x = ti.load(ti.param(I32, 0), ti.idx_const(0), [8])
        for _ in ti.d_range(0, 2):
            ti.gdc_launch_dependents()
        ti.store(ti.param(I32, 0), ti.idx_const(0), x)

    prog = ti.trace_kernel("k", P2, body)
    run_host(prog, [np.arange(8, dtype=np.int32), np.zeros(8, np.float32)], (1,))
    assert _assembles(prog)
    e = refused(lambda: ti.d_if(ti.bool_const(True), lambda: ti.gdc_launch_dependents()), P2)
    assert "inside an if" in str(e)


def test_gdc_wait_stays_at_the_top_level_and_says_why():
    """gdc_wait orders the loads after it; inside a region the lowering cannot (no token there for the
    parameters nobody writes), so it is refused in loops, ifs and folds -- wider than the spec, on
    purpose. At the top level it orders every later load."""

    def in_loop():
        for _ in ti.d_range(0, 2):
            ti.gdc_wait()

    e = refused(in_loop, P2)
    assert "gdc_wait inside a region" in str(e) and "the spec restricts only memory_fence_alias" in str(e)
    e = refused(lambda: ti.d_if(ti.bool_const(True), lambda: ti.gdc_wait()), P2)
    assert "inside an if" in str(e)

    def in_fold():
        x = ti.load(ti.param(I32, 0), ti.idx_const(0), [8])
        ti.d_reduce(x, 0, lambda a, b: (ti.gdc_launch_dependents(), ti.addi(a, b))[1])

    assert "reduce" in str(refused(in_fold, P2))

    def top():
        ti.gdc_wait()
        ti.store(ti.param(F32, 1), ti.idx_const(0), ti.load(ti.param(F32, 1), ti.idx_const(0), [8]))

    k = ti.lower(ti.trace_kernel("k", P2, top))
    (wait,) = [x for x in k.body if isinstance(x, ir.TokenOnlyTile)]
    (load,) = [x for x in k.body if isinstance(x, ir.LoadPtr)]
    assert load.tok_in == ir.Val(wait.tok_out)


# ---- a lit in an integer operation -------------------------------------------------------------------------


@pytest.mark.parametrize("op", [lambda x: ti.add_i(x, ti.lit(2.0)), lambda x: ti.addi(x, ti.lit(1.0)),
                                lambda x: ti.lt_i(x, ti.lit(3.0)), lambda x: ti.max_i(ti.lit(0.0), x)])
def test_a_lit_in_an_integer_operation_is_refused_by_name(op):
    """The spec: lit is a float constant; a place that needs a format of its own -- an integer
    operation -- refuses it by name. It was taken and made an integer constant."""

    def body():
        op(ti.load(ti.param(I32, 0), ti.idx_const(0), [8]))

    e = refused(body, P2)
    assert "lit(" in str(e) and "integer operation refuses it" in str(e) and "Python int" in e.fix


def test_a_python_int_and_a_lit_in_float_operations_still_work():
    out = np.zeros(8, np.int32)
    outf = np.zeros(8, np.float32)

    def body():
        x = ti.load(ti.param(I32, 0), ti.idx_const(0), [8])
        ti.store(ti.param(I32, 0), ti.idx_const(0), ti.add_i(x, 2))
        ti.store(ti.param(F32, 1), ti.idx_const(0), ti.mul(ti.load(ti.param(F32, 1), ti.idx_const(0), [8]),
                                                           ti.lit(0.5)))

    outf[:] = 2.0
    out[:] = np.arange(8)
    run_host(ti.trace_kernel("k", P2, body), [out, outf], (1,))
    assert out.tolist() == list(range(2, 10)) and outf.tolist() == [1.0] * 8


# ---- d_print with mixed formats ------------------------------------------------------------------------------


def test_d_print_takes_mixed_formats_documented_and_measured():
    """The spec: every argument of d_print is of one format, the first's. The package takes mixed
    ones on purpose: the dialect's print_tko carries a type per argument, the lowering writes them,
    tileiras assembles them, and the layer-2 print family printed "mixed %d %f %lld %hhd" with i32,
    f32, i64, i32 arguments byte for byte on the H200 (bench/results/diff_h200.json, print)."""

    def body():
        ti.d_print("mixed %d %f %lld\n", [ti.i_const(254), ti.f_const(F32, 3.0), ti.consti(I64, -(1 << 40))])

    prog = ti.trace_kernel("k", (), body)
    assert run_host(prog, [], (1,)).printed == ["mixed 254 3.000000 -1099511627776\n"]
    k = ti.lower(prog)
    (pr,) = [x for x in k.body if isinstance(x, ir.PrintTile)]
    assert [t.elem.name for t in pr.arg_tys] == ["i32", "f32", "i64"]
    assert _assembles(prog)
