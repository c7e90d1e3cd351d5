"""float_to_float's rounding modes (issue 15's audit): the recording's table is what tileiras
13.4.92 assembles for sm_90, measured mode by mode -- the spec's "Down / Up from f64 to f32" and
every mode on an exact widening that tileiras takes included -- and the host rule for the modes
no device has measured yet (convert.UNMEASURED_FTOF: the layer-2 ftof family's corpus holds them
for the next device run)."""

import math

import numpy as np
import pytest

import tileir as ti
import tileir.families.convert as C
from tileir import F32, F64
from tileir.assemble import assemble
from tileir.diff import exact as X
from tileir.diff.fam_int import FTOF_SM90
from tileir.diff.fuzzspec import FTOF
from tileir.dtypes import to_format
from tileir.ref import run_host

FORMATS = ("f64", "f32", "tf32", "f16", "bf16", "f8E4M3FN", "f8E5M2")
MEM = {"tf32": "f32", "f8E4M3FN": "f16", "f8E5M2": "f16"}  # what a format reaches memory as


def _kernel(src, outs):
    """Every (dst, mode) of ``outs`` from one ``src`` tile, each stored."""
    sm = MEM.get(src, src)

    def body():
        x = ti.load(ti.param(sm, 0), ti.idx_const(0), [16])
        if sm != src:
            x = ti.float_to_float(x, src)
        for j, (dst, mode) in enumerate(outs):
            y = ti.float_to_float(x, dst, mode)
            if MEM.get(dst, dst) != dst:
                y = ti.float_to_float(y, MEM[dst])
            ti.store(ti.param(MEM.get(dst, dst), j + 1), ti.idx_const(0), y)

    return ti.trace_kernel("k", [ti.ByPtr(sm)] + [ti.ByPtr(MEM.get(d, d)) for d, _ in outs], body)


@pytest.mark.parametrize("src", FORMATS)
def test_every_mode_the_recording_takes_tileiras_assembles(src):
    outs = [(dst, m) for dst in FORMATS if dst != src for m in C.ftof_modes(src, dst)]
    k = ti.lower(_kernel(src, outs))
    assert assemble(ti.encode_kernel(k), "sm_90", kernel="k", program=k)[:4] == b"\x7fELF"


@pytest.mark.parametrize("src,dst,mode,said", [
    ("f32", "f16", "negative_inf", "invalid rounding"),  # the verifier's table
    ("f64", "f32", "nearest_away", "invalid rounding"),
    ("f16", "tf32", "positive_inf", "failed to compile"),  # the verifier takes it, the back end does not
    ("f8E4M3FN", "bf16", "nearest_away", "failed to compile"),
])
def test_a_mode_the_recording_refuses_tileiras_refuses(monkeypatch, src, dst, mode, said):
    assert mode not in C.ftof_modes(src, dst)
    monkeypatch.setattr(C, "ftof_modes", lambda f, t: ("nearest_even", "zero", "negative_inf", "positive_inf",
                                                       "nearest_away"))
    k = ti.lower(_kernel(src, [(dst, mode)]))
    with pytest.raises(Exception) as e:
        assemble(ti.encode_kernel(k), "sm_90", kernel="k", program=k)
    assert said in str(e.value)


def test_the_tables_agree():
    """The fuzzer's table and layer 2's corpus are the recording's (the fuzzer's is written out, its
    module importing nothing of tileir); every unmeasured mode is in both."""
    derived = {s: tuple((d, C.ftof_modes(s, d)) for d in FORMATS if d != s) for s in FORMATS}
    assert FTOF == derived == FTOF_SM90
    for f, t, m in C.UNMEASURED_FTOF:
        assert m in dict(FTOF[f])[t]
    assert ("f64", "f32", "negative_inf") in C.UNMEASURED_FTOF and ("f16", "f32", "zero") in C.UNMEASURED_FTOF
    assert all(C.exact_widening(f, t) or (f, t) == ("f64", "f32") for f, t, _ in C.UNMEASURED_FTOF)


def test_f64_to_f32_down_and_up_round_once():
    x = np.array([1 + 2.0**-30, -(1 + 2.0**-30), 1e-50, -1e-50, 3.5e38, -3.5e38, 0.1, -0.0, np.inf, np.nan,
                  2.0**-149 * 1.5, 1.0, 3.4028235677973366e38, 7.0] + [0.0] * 2, np.float64)
    down, up = np.zeros(16, np.float32), np.zeros(16, np.float32)

    def body():
        a = ti.load(ti.param(F64, 0), ti.idx_const(0), [16])
        ti.store(ti.param(F32, 1), ti.idx_const(0), ti.float_to_float(a, F32, "negative_inf"))
        ti.store(ti.param(F32, 2), ti.idx_const(0), ti.float_to_float(a, F32, ti.Rounding.Up))

    run_host(ti.trace_kernel("k", [ti.ByPtr(F64), ti.ByPtr(F32), ti.ByPtr(F32)], body), [x, down, up], (1,))
    for v, d, u in zip(x.tolist(), down.tolist(), up.tolist()):
        for got, mode in ((d, "negative_inf"), (u, "positive_inf")):
            want = X.device_ftof(v, "f64", "f32", mode)
            assert (math.isnan(want) and math.isnan(got)) or (got == want and math.copysign(1, got) ==
                                                               math.copysign(1, want)), (v, mode, got, want)
    assert down[0] == 1 and up[0] == np.nextafter(np.float32(1), np.float32(2))
    assert down[4] == np.finfo(np.float32).max and up[4] == np.inf  # past the range: held back going down


@pytest.mark.parametrize("src,dst", [("f16", "f32"), ("bf16", "f64"), ("f8E4M3FN", "f16"), ("f16", "tf32"),
                                     ("f8E5M2", "bf16")])
def test_an_exact_widening_answers_the_value_in_every_mode(src, dst):
    from tileir.diff.corpora import float_specials

    sm = MEM.get(src, src)
    vals = to_format(src, float_specials(src if src in ("f16", "bf16") else "f32").astype(np.float64)[:16])
    x = np.zeros(16, dict(f16=np.float16, f32=np.float32).get(sm, None) or to_format(sm, [0.0]).dtype)
    x[: vals.size] = np.asarray(vals).astype(x.dtype)
    modes = C.ftof_modes(src, dst)
    assert len(modes) >= 2
    outs = [np.zeros(16, to_format(MEM.get(dst, dst), [0.0]).dtype) for _ in modes]
    run_host(_kernel(src, [(dst, m) for m in modes]), [x] + outs, (1,))
    for o in outs[1:]:
        assert o.tobytes() == outs[0].tobytes()  # the mode changes nothing: the value is exact
