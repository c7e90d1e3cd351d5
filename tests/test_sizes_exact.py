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



def test_exact_sizes_reach_the_launch_whatever_the_stride_switch(monkeypatch):
    # kills: div16 answering the stride claims alone with TILEIR_SPECIALISE_STRIDES=0, which would
    # run the run-time program on the device while run_host runs the exact one
    import tileir.sizes as sizes

    exact = vadd.specialised(["N"])
    a = np.zeros(100, np.float32)
    plan = exact.plan(exact.config())
    monkeypatch.setattr(sizes, "SPECIALISE", False)
    assert plan.div16(plan.values([a, a, a]), [a, a, a])[-1] == 100


def test_the_generated_reader_claims_what_div16_claims_for_a_specialised_kernel():
    # kills: the fast path's claims tuple without the exact values (a variant of another size served)
    torch = pytest.importorskip("torch")
    from tileir.runtime.fastpath import reader

    exact = vadd.specialised(["N"])
    cfg = exact.config()
    plan = exact.plan(cfg)
    read = reader(plan, [(kp.dtype, kp.by_ptr) for kp in exact.kparams(cfg)], len(exact.params))
    from tests.test_launch_fast_path import OnGpu0  # CPU tensors that say they live on cuda:0

    xs = [torch.zeros(300).as_subclass(OnGpu0) for _ in range(3)]
    got = read(xs)
    assert got is not None, "the generated reader refused plain contiguous tensors"
    assert got[3] == plan.div16(plan.values(xs), xs)
    assert got[3][-1] == 300
