"""SwiGLU's gate kernels (kernels/swiglu.py) on the host reference: the halves of one [R, 2H] array
read in place, cut into cells small enough that both dimensions end in a partial cell, f32, f16
and bf16 against the formulas in f64 (the backward against a derivation of its own, not the
kernel's form), and each comparison shown able to fail."""

from __future__ import annotations

import numpy as np
import pytest

from tests.kernelcheck import run_case_on_host
from tileir.dtypes import dtype
from tileir.kernels import CASES
from tileir.kernels.swiglu import reference, swiglu_backward, swiglu_forward, tiles_for

TOL = {"f32": (1e-5, 1e-6), "f16": (2e-3, 2e-3), "bf16": (1e-2, 1e-2)}  # the output's rounding


def _close(got, want, fmt) -> bool:
    rtol, atol = TOL[fmt]
    return bool(np.allclose(np.asarray(got, np.float64), want, rtol=rtol, atol=atol))


@pytest.mark.parametrize("fmt", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("rows, h, cells", [(1, 1, {}), (7, 37, {"rt": 2, "ct": 16}), (33, 300, {"rt": 4, "ct": 64}),
                                            (5, 1024, {})])
def test_forward_and_backward_match_the_formulas(fmt, rows, h, cells):
    """Kills: the halves swapped (h = silu(up) * gate), dgate without the sigmoid's g (1 - s) term,
    a partial last cell written past its row (the halves share rows: dgate's overrun lands in dup)."""
    rng = np.random.default_rng(rows * 1000 + h)
    x = (rng.standard_normal((rows, 2 * h)) * 3).astype(dtype(fmt).np)
    dh = rng.standard_normal((rows, h)).astype(dtype(fmt).np)
    h_want, grad = reference(x)
    dx_want = grad(np.asarray(dh, np.float64))
    got = swiglu_forward(x, **cells)
    assert got.shape == (rows, h) and got.dtype == x.dtype
    assert _close(got, h_want, fmt)
    dx = swiglu_backward(x, dh, **cells)
    assert dx.shape == x.shape and dx.dtype == x.dtype
    assert _close(dx, dx_want, fmt)
    # the comparisons can fail: the mutants' answers miss the same tolerance
    g, u = np.split(np.asarray(x, np.float64), 2, axis=1)
    s = 1 / (1 + np.exp(-g))
    if h > 1 or rows > 1:
        assert not _close(u / (1 + np.exp(-u)) * g, h_want, fmt)
    assert not _close(np.concatenate([dh * u * s, dh * g * s], axis=1), dx_want, fmt)


def test_a_half_in_a_wider_array_is_read_and_written_in_place():
    """gate | up as the middle of a wider row (the halves' row stride is the wide row's), dx into the
    middle of a wider gradient: the lanes around them untouched."""
    rng = np.random.default_rng(3)
    wide = rng.standard_normal((9, 100)).astype(np.float32)
    x = wide[:, 10:90]
    out = np.full((9, 100), 7.0, np.float32)
    dh = rng.standard_normal((9, 40)).astype(np.float32)
    swiglu_backward(x, dh, dx=out[:, 10:90], rt=4, ct=16)
    assert _close(out[:, 10:90], reference(x)[1](dh.astype(np.float64)), "f32")
    assert (out[:, :10] == 7).all() and (out[:, 90:] == 7).all()


SIZES = {"swiglu_fwd": [((37, 600), {}), ((5, 2 * 33), {"rt": 2, "ct": 16})]}  # the registry's case


@pytest.mark.parametrize("name,size,extra", [(n, s, e) for n, ss in SIZES.items() for s, e in ss])
def test_the_registry_case(name, size, extra):
    err, ok = run_case_on_host(CASES[name], size, extra)
    assert ok, err


def test_the_rules_cells():
    assert tiles_for(1408) == {"rt": 1, "ct": 1024} and tiles_for(37) == {"rt": 16, "ct": 64}
    assert all(c["rt"] * c["ct"] == 1024 for c in map(tiles_for, (1, 100, 512, 1000, 50000)))


def test_an_odd_last_dimension_is_refused():
    with pytest.raises(ValueError, match="even"):
        swiglu_forward(np.zeros((2, 5), np.float32))
