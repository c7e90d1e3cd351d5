"""Recording-time refusals of the slice: each names the kernel, the operation and the fix."""

import math

import pytest

import tileir as ti
from tileir import F32, F64, I32, TileirError


def rec(body, params=(ti.ByPtr(F32), ti.ByPtr(F32))):
    return ti.trace_kernel("k", params, body)


def refusal(body, params=(ti.ByPtr(F32), ti.ByPtr(F32))) -> TileirError:
    with pytest.raises(TileirError) as e:
        rec(body, params)
    msg = str(e.value)
    assert msg.startswith("kernel 'k', op "), msg
    assert e.value.op is not None and e.value.fix, msg
    return e.value


def test_pad_without_mask():
    e = refusal(lambda: ti.load(ti.param(F32, 0), ti.idx_const(0), [16], pad=ti.f_const(F32, 0.0)))
    assert "pad and no mask" in str(e) and "(load)" in str(e)


def test_mixing_f32_and_f64():
    def body():
        x = ti.load(ti.param(F32, 0), ti.idx_const(0), [16])
        ti.add(x, ti.f_const(F64, 1.0))

    e = refusal(body)
    assert "f32" in str(e) and "f64" in str(e) and "(add)" in str(e)


def test_shape_mismatch():
    def body():
        x = ti.load(ti.param(F32, 0), ti.idx_const(0), [16])
        y = ti.load(ti.param(F32, 1), ti.idx_const(0), [32])
        ti.add(x, y)

    e = refusal(body)
    assert "[16]" in str(e) and "[32]" in str(e) and "broadcast" in e.fix


# The operand rules of element-wise operations (value tiles, one format, one shape or rank 0, float
# or integer) are the recorder's alone (families/arith.py ArithRecording.operands); the surface only
# makes numbers in the operands' format. These hold the refusals the surface used to make itself.


def test_a_pointer_tile_in_arithmetic_is_refused_with_a_fix():
    def body():
        x = ti.load(ti.param(F32, 0), ti.idx_const(0), [16])
        ti.add(x, ti.ptrs(ti.param(F32, 1), [16]))

    e = refusal(body)
    assert "takes tiles, not a ptrs" in str(e) and "(add)" in str(e) and "load_ptrs" in e.fix


def test_a_host_object_in_arithmetic_is_refused_with_a_fix():
    def body():
        ti.add(ti.load(ti.param(F32, 0), ti.idx_const(0), [16]), "x")

    e = refusal(body)
    assert "expected a tile, got str" in str(e) and "(add)" in str(e) and "f_const" in e.fix


def test_an_i32_spelling_on_float_tiles_names_the_float_one():
    def body():
        x = ti.load(ti.param(F32, 0), ti.idx_const(0), [16])
        ti.add_i(x, x)

    e = refusal(body)
    assert "integer operation and the operands are f32" in str(e) and "(add_i)" in str(e)
    assert "float spelling" in e.fix


def test_a_lit_meeting_an_integer_tile_through_an_operator():
    def body():
        ti.load(ti.param(I32, 0), ti.idx_const(0), [16]) + ti.lit(1.0)

    e = refusal(body, (ti.ByPtr(I32),))
    assert "integer operation refuses it" in str(e) and "Python int" in e.fix


def test_store_of_rank0_tile():
    e = refusal(lambda: ti.store(ti.param(F32, 1), ti.idx_const(0), ti.f_const(F32, 1.0)))
    assert "rank-0" in str(e) and "broadcast(v, [1])" in e.fix and "(store)" in str(e)


def test_wrong_parameter_format():
    e = refusal(lambda: ti.load(ti.param(F64, 0), ti.idx_const(0), [16]))
    assert "parameter 0 is f32" in str(e)


def test_non_power_of_two_tile():
    e = refusal(lambda: ti.load(ti.param(F32, 0), ti.idx_const(0), [100]))
    assert "powers of two" in str(e)


def test_lit_where_a_format_is_needed():
    e = refusal(lambda: ti.carry(ti.lit(0.0)))
    assert "format" in str(e) and "f_const" in e.fix


def test_mma_pair_outside_the_table_shows_the_table():
    def body():
        a = ti.load(ti.param(F32, 0), ti.idx_const(0), [16, 16])
        ti.mma(ti.float_to_float(a, ti.BF16), ti.float_to_float(a, ti.BF16), ti.full([16, 16], 0.0, ti.F16))

    e = refusal(body)
    assert "bf16 -> f32" in str(e) and "f16 -> f16 or f32" in str(e)


def test_float_to_float_between_equal_formats():
    def body():
        a = ti.load(ti.param(F32, 0), ti.idx_const(0), [16])
        ti.float_to_float(a, F32)

    e = refusal(body)
    assert "itself" in str(e) and "to(" in e.fix


def test_to_the_same_format_records_nothing():
    def body():
        a = ti.load(ti.param(F32, 0), ti.idx_const(0), [16])
        assert ti.to(a, F32) is a

    rec(body)


def test_wider_condition_to_d_if():
    def body():
        a = ti.load(ti.param(F32, 0), ti.idx_const(0), [16])
        ti.d_if(ti.lt(a, ti.f_const(F32, 0.0)), lambda: None)

    e = refusal(body)
    assert "rank-0 i1" in str(e)


def test_load_inside_an_if_and_a_reduction():
    def body():
        c = ti.lt_i(ti.i_const(1), ti.i_const(2))
        ti.d_if(c, lambda: ti.load(ti.param(F32, 0), ti.idx_const(0), [16]))

    assert "inside an if" in str(refusal(body))

    def body2():
        a = ti.load(ti.param(F32, 0), ti.idx_const(0), [16])
        ti.d_reduce(a, 0.0, lambda acc, x: ti.add(acc, ti.reduce_sum(ti.load(ti.param(F32, 1), ti.idx_const(0),
                                                                            [16]))))

    assert "inside a reduce" in str(refusal(body2))


def test_set_inside_a_reduction_body():
    def body():
        a = ti.load(ti.param(F32, 0), ti.idx_const(0), [16])
        c = ti.carry(ti.full([16], 0.0, F32))

        def fold(acc, x):
            ti.set(c, a)
            return ti.add(acc, x)

        ti.d_reduce(a, 0.0, fold)

    assert "set inside a reduction" in str(refusal(body))


def test_carry_keeps_its_format_and_shape():
    def body():
        c = ti.carry(ti.full([16], 0.0, F32))
        for _ in ti.d_range(0, 4):
            ti.set(c, ti.full([32], 1.0, F32))

    assert "keeps its first tile's format and shape" in str(refusal(body))


def test_overflow_pairings_outside_the_three():
    e = refusal(lambda: ti.add_i(ti.i_const(1), ti.i_const(2), overflow="NoWrap"))
    assert "NoSignedWrap" in str(e)
    rec(lambda: ti.add_i(ti.i_const(1), ti.i_const(2), overflow="NoSignedWrap"))


def test_scalar_of_a_buffer_and_load_of_a_value():
    e = refusal(lambda: ti.scalar(ti.param(F32, 0)))
    assert "buffer" in str(e)
    e = refusal(lambda: ti.load(ti.param(I32, 1), ti.idx_const(0), [16]), params=(ti.ByPtr(F32), ti.ByValue(I32)))
    assert "by value" in str(e)


def test_the_op_number_is_the_operation_about_to_be_recorded():
    def body():
        x = ti.load(ti.param(F32, 0), ti.idx_const(0), [16])  # op 1 (make_token is 0)
        ti.exp(x)  # op 2
        ti.add(x, ti.f_const(F64, 1.0))  # op 3: refused

    assert refusal(body).op == 3


def test_an_unfinished_loop_body_is_refused():
    def body():
        for _ in ti.d_range(0, 4):
            break

    with pytest.raises(TileirError) as e:
        rec(body)
    assert "still open" in str(e.value)


def test_a_tile_has_no_host_truth_value():
    def body():
        if ti.lt(ti.f_const(F32, 1.0), ti.f_const(F32, 2.0)):
            pass

    with pytest.raises(TileirError, match="d_if"):
        rec(body)


def test_a_surface_call_outside_a_kernel():
    with pytest.raises(TileirError, match="outside a kernel"):
        ti.exp(ti.lit(1.0))


def test_reduce_max_identity_is_minus_infinity():
    prog = rec(lambda: ti.reduce_max(ti.load(ti.param(F32, 0), ti.idx_const(0), [16])))
    (red,) = [op for op in prog.walk() if op.kind == "reduce"]
    assert red.a.identities[0].value == -math.inf


def test_a_value_made_in_a_loop_body_used_after_the_loop():
    kept = []

    def body():
        for j in ti.d_range(0, 4):
            kept.append(ti.load(ti.param(F32, 0), ti.tile_at(j, 16), [16]))
        ti.store(ti.param(F32, 1), ti.idx_const(0), kept[-1])

    e = refusal(body)
    assert "after that region ended" in str(e) and "carry" in e.fix


def test_a_value_from_the_trial_run_of_a_body_is_refused_in_the_real_one():
    seen = []

    def body():
        acc = ti.carry(ti.full([16], 0.0, F32))
        for j in ti.d_range(0, 4):
            t = ti.load(ti.param(F32, 0), ti.tile_at(j, 16), [16])
            seen.append(t)
            ti.set(acc, ti.get(acc) + seen[0])  # the second run reuses the trial's tile

    assert "trial run" in str(refusal(body))


def test_ftof_modes_outside_the_table_show_the_table():
    def body():
        a = ti.load(ti.param(F64, 0), ti.idx_const(0), [16])
        ti.float_to_float(ti.float_to_float(a, F32), ti.F16, "negative_inf")  # tileiras: "invalid rounding"

    e = refusal(body, params=(ti.ByPtr(F64), ti.ByPtr(F32)))
    assert "negative_inf and positive_inf f64 -> f32" in str(e) and "nearest_even, zero" in e.fix

    def ok():
        a = ti.load(ti.param(F64, 0), ti.idx_const(0), [16])
        ti.float_to_float(a, F32, "zero")
        ti.float_to_float(a, F32, "negative_inf")  # tileiras 13.4.92 assembles it (the spec's Down)
        ti.float_to_float(ti.float_to_float(a, F32), ti.TF32, "nearest_away")

    rec(ok, params=(ti.ByPtr(F64), ti.ByPtr(F32)))
