"""``KernelFn.specialised``: a kernel whose run-time sizes (named, or all of them with the strides)
are recorded as each call's values -- the fixed-size programs run-time sizes replaced, kept so that
bench/h200.py measures what run-time sizes cost in the same run. On the host reference: right
answers, static shapes in the program, one recording per distinct value, bad names refused."""

from __future__ import annotations

import numpy as np
import pytest

from tileir import TileirError
from tileir.kernels import attention, vadd
from tileir.kernels.attention import reference as attention_reference


def _views(kern, cfg, arrays):
    plan = kern.plan(cfg)
    return kern.mlir(plan.div16(plan.values(arrays), arrays), **cfg)


def test_exact_attention_answers_right_with_static_shapes_in_its_program():
    # kills: an exact slot read from the launch's parameter (the view's type would say "?"), and the
    # exact values taken from the wrong end of the claims (a shape of 0/1 and a wrong answer)
    exact = attention.specialised()
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal((1, 2, 77, 40)).astype(np.float16) for _ in range(3))
    o = np.zeros_like(q)
    exact.run_host(q, k, v, o, causal=True, d_tile=64)
    assert np.abs(o.astype(np.float64) - attention_reference(q, k, v, True)).max() < 2e-2
    cfg = exact.config(causal=True, d_tile=64)
    text = _views(exact, cfg, [q, k, v, o])
    assert "shape = [1, 2, 77, 40], strides = [6160, 3080, 40, 1]" in text
    assert "?" not in "".join(ln for ln in text.splitlines() if "make_tensor_view" in ln)
    # the library's own attention reads the same sizes at run time
    assert "shape = [%arg" in _views(attention, cfg, [q, k, v, o])


def test_one_recording_per_exact_value_and_one_for_every_size_otherwise():
    # kills: exact values left out of the program's cache key (the second size would reuse the first
    # one's constants and answer wrong past 100 lanes)
    exact = vadd.specialised(["N"])
    for n in (100, 300, 300):
        a, b = np.arange(n, dtype=np.float32), np.ones(n, np.float32)
        c = np.zeros(n, np.float32)
        exact.run_host(a, b, c)
        np.testing.assert_array_equal(c, a + 1)
    assert exact.compiled()["recordings"] == 2
    assert vadd.specialised(()).plan(vadd.config()).exact_slots == ()


def test_a_name_that_is_not_a_run_time_size_is_refused():
    with pytest.raises(TileirError, match=r"not run-time sizes.*Write instead: names among \['N'\]"):
        vadd.specialised(["M"])


def test_a_row_that_fills_its_one_cell_is_claimed_and_held_as_a_constant():
    # kills: the full-cell claim dropped from the launch's claims (the program would read C at run
    # time: "%arg" in its view), and a claim made where the row is narrower than the cell
    from tileir.kernels import layernorm

    cfg = layernorm.config(fmt="f16", max_tile=1024, one_chunk=True)
    plan = layernorm.plan(cfg)
    assert [t for _, t in plan.full_slots] == [1024]
    for cols, full in ((1024, True), (1000, False)):
        x, w, b = np.ones((8, cols), np.float16), np.ones(cols, np.float16), np.ones(cols, np.float16)
        y = np.zeros_like(x)
        spec = plan.div16(plan.values([x, w, b, y]), [x, w, b, y])
        assert spec[-1] is full
        views = [ln for ln in layernorm.mlir(spec, **cfg).splitlines() if "make_tensor_view" in ln]
        assert any("x1024xf16" in ln for ln in views) == full
        layernorm.run_host(x, w, b, y, **cfg)
        np.testing.assert_allclose(y.astype(np.float32), 1.0, atol=1e-3)
