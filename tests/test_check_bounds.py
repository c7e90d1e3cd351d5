"""The bounds-checked mode (TILEIR_CHECK_BOUNDS / check_bounds=True): pointer loads and stores
assert their lanes inside the arrays passed, on the host reference (naming the lane) and on the
device (the assert stops the kernel)."""

from __future__ import annotations

import numpy as np
import pytest

import tileir as ti
from tileir import F32


@ti.kernel(grid=lambda n, tile: (ti.cdiv(n, tile),))
def doubled(x=ti.ByPtr(F32), y=ti.ByPtr(F32), n=ti.ByValue(ti.I32), *, tile: int = 256):
    base = ti.tile_at(ti.block_id(0), tile)
    m = ti.tail_mask(base, [tile], ti.idx_of(ti.scalar(n)))
    ti.store(y, base, ti.load(x, base, [tile], mask=m) * 2.0)  # the bug: the store has no mask


@ti.kernel(grid=lambda n, tile: (ti.cdiv(n, tile),))
def doubled_right(x=ti.ByPtr(F32), y=ti.ByPtr(F32), n=ti.ByValue(ti.I32), *, tile: int = 256):
    base = ti.tile_at(ti.block_id(0), tile)
    m = ti.tail_mask(base, [tile], ti.idx_of(ti.scalar(n)))
    ti.store(y, base, ti.load(x, base, [tile], mask=m) * 2.0, mask=m)


def test_an_unmasked_store_past_the_array_is_caught_naming_kernel_parameter_and_lane():
    x, y = np.arange(1000, dtype=np.float32), np.zeros(1000, np.float32)
    with pytest.raises(ti.TileirError, match=r"kernel 'doubled'.*block \(3, 0, 0\), lane \[232\]: store of "
                                             r"parameter y outside the array passed"):
        doubled.run_host(x, y, 1000, check_bounds=True)


def test_a_right_kernel_passes_checked_and_the_checks_are_only_in_the_checked_variant(monkeypatch):
    x, y = np.arange(1000, dtype=np.float32), np.zeros(1000, np.float32)
    doubled_right.run_host(x, y, 1000, check_bounds=True)
    assert np.array_equal(y, 2 * x)
    assert doubled_right.mlir(checked=True).count("assert ") == 2  # one a masked load, one a store
    assert "assert " not in doubled_right.mlir()  # off by default: the same program as before
    monkeypatch.setenv("TILEIR_CHECK_BOUNDS", "1")
    y[:] = 0
    doubled_right.run_host(x, y, 1000)  # the switch turns it on for plain calls
    assert np.array_equal(y, 2 * x)


@ti.kernel(grid=lambda n, tile: (ti.cdiv(n, tile),))
def binned(x=ti.ByPtr(F32), counts=ti.ByPtr(ti.I32), out=ti.ByPtr(F32), n=ti.ByValue(ti.I32), *, tile: int = 64,
           shift: int = 0):
    """Index-tile accesses: a gather of x at i + shift, an atomic count into counts at the gathered
    value's integer part, a cas and a scatter into out at i -- each masked to i < n."""
    base = ti.tile_at(ti.block_id(0), tile)
    i = ti.lanes(base, [tile])
    m = ti.tail_mask(base, [tile], ti.idx_of(ti.scalar(n)))
    v = ti.gather(x, i + shift, mask=m, pad=0.0)
    ti.atomic_add(counts, ti.float_to_int(v, ti.I32), 1, mask=m)
    ti.atomic_cas(counts, ti.float_to_int(v, ti.I32), 1000, 1000, mask=m)
    ti.scatter(out, i, v, mask=m)


@pytest.mark.parametrize("shift,what", [(0, None), (1, "gather of parameter x"), (-1, "gather of parameter x")])
def test_gathers_scatters_and_atomics_are_checked_by_their_index(shift, what):
    """The index-tile operations assert their selected lanes' indices too (the mutant: no
    check_index in gather, and the shifted gathers run to the end unflagged)."""
    n = 100
    x, counts, out = np.arange(n, dtype=np.float32) % 7, np.zeros(8, np.int32), np.zeros(n, np.float32)
    if what is None:
        binned.run_host(x, counts, out, n, shift=shift, check_bounds=True)
        assert np.array_equal(out, x) and counts.sum() == n
        assert binned.mlir(checked=True, shift=shift).count("assert ") == 4  # gather, add, cas, scatter
        return
    with pytest.raises(ti.TileirError, match=what):
        binned.run_host(x, counts, out, n, shift=shift, check_bounds=True)


def test_an_atomic_past_the_array_is_caught():
    x, counts, out = np.full(10, 9.0, np.float32), np.zeros(8, np.int32), np.zeros(10, np.float32)
    with pytest.raises(ti.TileirError, match="atomic_rmw of parameter counts outside"):
        binned.run_host(x, counts, out, 10, check_bounds=True)


def test_the_checked_variant_assembles():
    assert doubled.cubin("sm_90", checked=True)[:4] == b"\x7fELF"


@pytest.mark.gpu
def test_the_device_stops_an_out_of_bounds_store_in_checked_mode():
    """In a subprocess: the assert leaves the CUDA context unusable."""
    import subprocess
    import sys

    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU")
    code = ("import torch, tests.test_check_bounds as t\n"
            "x = torch.arange(1000., device='cuda'); y = torch.zeros(1000, device='cuda')\n"
            "t.doubled(x, y, 1000, check_bounds=True)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    # the H200 (2026-12-01) prints the assert's words per lane, then the launch fails
    # (CUDA_ERROR_LAUNCH_FAILED from the synchronize, not CUDA_ERROR_ASSERT)
    out = r.stdout + r.stderr
    assert r.returncode != 0 and "store of parameter y outside the array passed" in out, out[-2000:]
    assert "CUDA_ERROR_ASSERT" in out or "CUDA_ERROR_LAUNCH_FAILED" in out
