"""Bad inputs a new user hit (issue 16), each a TileirError whose message names the argument and
whose fix says what to write instead. (``xor_i`` / ``and_i`` / ``or_i`` on narrow integers:
tests/test_conveniences.py.)"""

import numpy as np
import pytest

import tileir as ti
from tests.kernelcheck import refused
from tileir import F32, I8, I32, TileirError
from tileir.kernels.elementwise import saxpy


def test_a_float_tile_size_is_refused_as_not_an_int():
    x, y = np.ones(1000, np.float32), np.zeros(1000, np.float32)
    with pytest.raises(TileirError) as e:
        saxpy.run_host(np.float32(2.0), x, y, tile=256.0)
    msg = str(e.value)
    assert "an int" in msg and "256.0" in msg and "power of two" not in msg
    assert "256" in e.value.fix and "256.0" not in e.value.fix


@pytest.mark.parametrize("body", [
    lambda: ti.load(ti.param(F32, 0), 0, [256.0]),
    lambda: ti.full([16, 8.0], 0.0, F32),
    lambda: ti.arange(64.0),
    lambda: ti.load(ti.param(F32, 0), 0, [16]).reshape([4.0, 4]),
])
def test_a_float_dimension_anywhere_in_a_shape(body):
    e = refused(body, (ti.ByPtr(F32),))
    assert "a tile dimension is an int" in str(e) and e.fix.startswith("int(")


def test_numpy_integers_are_dimensions_and_strides():
    prog = ti.trace_kernel("k", (ti.ByPtr(F32),), lambda: ti.load(ti.param(F32, 0), 0, [np.int64(16)],
                                                                  strides=[np.int32(1)]))
    assert prog.ops[1].a.shape == (16,) and type(prog.ops[1].a.strides[0]) is int


def test_cells_pad_of_a_number_lists_the_paddings():
    with pytest.raises(TileirError) as e:
        ti.cells([1000], [1024], pad=1.0)
    msg = str(e.value)
    assert msg.startswith("cells: pad=1.0 is not a padding")
    for name in ("NoPadding", "PadZero", "PadNegZero", "PadNan", "PadPosInf", "PadNegInf"):
        assert name in msg
    assert "select(mask, t, 1.0)" in e.value.fix


@pytest.mark.parametrize("pad, name", [(0.0, "PadZero"), (-0.0, "PadNegZero"), (float("-inf"), "PadNegInf"),
                                       (float("nan"), "PadNan")])
def test_cells_pad_of_a_special_number_names_its_padding(pad, name):
    with pytest.raises(TileirError) as e:
        ti.cells([1000], [1024], pad=pad)
    assert e.value.fix.startswith(f"pad={name}")


def test_cells_pad_still_takes_the_members_and_their_keywords():
    assert ti.cells([1000], [1024], pad=ti.PadNegInf).pad is ti.PadNegInf
    assert ti.cells([1000], [1024], pad="zero").pad is ti.PadZero


def test_a_view_padding_of_a_number_is_refused_while_recording():
    def body():
        tv = ti.tensor_view(ti.param(F32, 0), 0, [64], [1])
        ti.strided_view(tv, [16], [8], padding=2.0)

    e = refused(body, (ti.ByPtr(F32),))
    assert "padding=2.0 is not a padding" in str(e) and "PadZero" in str(e)


def _strided_by_a_runtime_value():
    @ti.kernel(grid=lambda: (1,))
    def rows(a=ti.ByPtr(F32), b=ti.ByPtr(F32), stride=ti.ByValue(I32)):
        s = ti.idx_of(ti.scalar(stride))
        ti.store(b, 0, ti.load(a, 0, [4, 4], strides=[s, 1]))

    return rows


@pytest.mark.parametrize("call", [lambda k: k.mlir(), lambda k: k.run_host(np.zeros(64, np.float32),
                                                                          np.zeros(16, np.float32), 16)])
def test_a_stride_given_as_a_runtime_idx_is_refused_while_recording(call):
    with pytest.raises(TileirError) as e:
        call(_strided_by_a_runtime_value())
    msg = str(e.value)
    assert msg.startswith("kernel 'rows', op ") and "(load)" in msg and "a value the device computes" in msg
    assert "keyword-only configuration" in e.value.fix and "tensor_view_dyn" in e.value.fix


@pytest.mark.parametrize("body", [
    lambda s: ti.store(ti.param(F32, 0), 0, ti.f_const(F32, 1.0).broadcast([4, 4]), strides=[s, 1]),
    lambda s: ti.lanes_strided(0, [4, 4], [s, 1]),
])
def test_store_and_lanes_refuse_a_runtime_stride_too(body):
    e = refused(lambda: body(ti.idx_of(ti.scalar(ti.param(I32, 1)))), (ti.ByPtr(F32), ti.ByValue(I32)))
    assert "a value the device computes" in str(e) and "tensor_view_dyn" in e.fix


def test_a_uint8_array_on_the_host_is_pointed_at_a_view_not_a_copy():
    @ti.kernel(grid=lambda: (1,))
    def flip(x=ti.ByPtr(I8)):
        ti.store(x, 0, ti.load(x, 0, [16]) ^ ti.full([16], -1, I8))

    a = np.arange(16, dtype=np.uint8)
    with pytest.raises(TileirError) as e:
        flip.run_host(a)
    assert "holds uint8" in str(e.value)
    assert e.value.fix.startswith("array.view(np.int8)") and "astype(" not in e.value.fix.split(";")[0]
    flip.run_host(a.view(np.int8))  # the fix works in place: the kernel wrote the caller's array
    assert np.array_equal(a, 255 - np.arange(16))


def test_a_float_array_for_an_integer_buffer_is_still_told_to_convert():
    @ti.kernel(grid=lambda: (1,))
    def touch(x=ti.ByPtr(I8)):
        ti.store(x, 0, ti.load(x, 0, [16]))

    with pytest.raises(TileirError) as e:
        touch.run_host(np.zeros(16, np.float32))
    assert e.value.fix.startswith("array.astype(np.int8)")


def test_a_partition_view_padding_of_a_number_is_refused_while_recording():
    def body():
        tv = ti.tensor_view(ti.param(F32, 0), 0, [64], [1])
        ti.partition_view(tv, [16], padding=float("-inf"))

    e = refused(body, (ti.ByPtr(F32),))
    assert "padding=-inf is not a padding" in str(e) and e.fix == "padding=PadNegInf, the padding that reads -inf"
