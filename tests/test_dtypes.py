import math

import numpy as np
import pytest

import tileir as ti
from tileir.dtypes import ALL_DTYPES, to_format, wrap_int


def test_every_format_the_spec_names():
    names = {d.name for d in ALL_DTYPES}
    assert names == {"f64", "f32", "tf32", "f16", "bf16", "f8E4M3FN", "f8E5M2", "f8E8M0FNU", "f4E2M1FN",
                     "i64", "i32", "i16", "i8", "i4", "i1"}
    assert {d.name: d.bits for d in ALL_DTYPES}["tf32"] == 19
    assert ti.F4E2M1FN.bits == 4 and ti.I4.bits == 4 and ti.I1.bits == 1


def test_host_rounding_where_the_value_is_made():
    assert ti.BF16.round(0.1) == 0.10009765625
    assert ti.F16.round(1 / 3) == float(np.float16(1 / 3))
    assert ti.TF32.round(1 + 2 ** -11) == 1.0  # ties to even at 10 fraction bits
    assert ti.TF32.round(1 + 3 * 2 ** -12) == 1 + 2 ** -10
    assert math.isinf(ti.TF32.round(math.inf))


def test_integer_wrapping():
    assert int(wrap_int(ti.I32, 2 ** 31)) == -(2 ** 31)
    assert int(wrap_int(ti.I8, 255)) == -1
    assert int(wrap_int(ti.I4, 9)) == -7
    assert bool(to_format(ti.I1, 3)) is True


def test_is_float_dtype():
    assert ti.is_float_dtype("bf16") and not ti.is_float_dtype("i32") and not ti.is_float_dtype("nope")


def test_float_dtype_refuses_the_exponent_only_and_sub_byte_formats():
    with pytest.raises(ti.TileirError):
        ti.float_dtype(ti.F8E8M0FNU)
    assert ti.float_dtype("f16") is ti.F16
