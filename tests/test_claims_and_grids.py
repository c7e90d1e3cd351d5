"""The launch's size claims at 16, 8 and 4 elements, and the generated grid of a kernel with its own
grid function -- both on the CPU (the device measured what they are worth: bench/matmul_probe.py)."""

from __future__ import annotations

import numpy as np
import pytest

import tileir as ti
from tileir import F32, In, Out, cells
from tileir.kernel import _user_grid
from tileir.kernels import matmul_f16
from tileir.runtime import fastpath
from tileir.sizes import claim_of


@ti.kernel
def vadd(a=In(F32, cells(["N"], [256])), b=In(F32, cells(["N"], [256])), c=Out(F32, cells(["N"], [256]))):
    ti.store_cell(c, ti.load_cell(a) + ti.load_cell(b))


def test_claim_of_names_the_largest_of_16_8_4_that_divides():
    # the mutant: a claim of 8 for 1004 (a stride of 4 elements' multiple only) would promise too much
    assert [claim_of(v) for v in (4096, 1008, 1000, 5000, 1004, 1002, 1001)] == [True, True, 8, 8, 4, False, False]


@pytest.mark.parametrize("n", [1000, 1008, 1004, 1002, 4096])
def test_the_generated_reader_claims_what_the_plan_claims(n):
    torch = pytest.importorskip("torch")

    class OnGpu0(torch.Tensor):
        __torch_function__ = torch._C._disabled_torch_function_impl

        def get_device(self):
            return 0

    arrays = tuple(torch.zeros(n).as_subclass(OnGpu0) for _ in range(3))
    cfg = vadd.config()
    plan = vadd.plan(cfg)
    read = fastpath.reader(plan, [(kp.dtype, kp.by_ptr) for kp in vadd.kparams(cfg)], 3)
    got = read(arrays)
    assert got is not None
    assert got[3] == plan.div16(plan.values(arrays), arrays)  # the mutant: the reader still claiming only 16


def test_a_size_claim_of_8_is_recorded_as_div_by_8():
    cfg = vadd.config()
    plan = vadd.plan(cfg)
    arrays = [np.zeros(1000, np.float32) for _ in range(3)]
    claims = plan.div16(plan.values(arrays), arrays)
    assert 8 in claims
    text = vadd.mlir(div16=claims)
    assert "div_by<8>" in text  # the mutant: any claim recorded as div_by<16> (a false promise)
    assert "div_by<8>" not in vadd.mlir(div16=plan.div16(plan.values([np.zeros(1024, np.float32)] * 3),
                                                          [np.zeros(1024, np.float32)] * 3))
    four = [np.zeros(1004, np.float32)] * 3
    text = vadd.mlir(div16=plan.div16(plan.values(four), four))
    assert "div_by<4>" in text and "div_by<8>" not in text  # the mutant: a claim of 4 recorded as 8


@pytest.mark.parametrize("group", [0, 8])
@pytest.mark.parametrize("m, n, k", [(1000, 5000, 1000), (1, 4096, 4096), (8192, 8192, 8192), (129, 257, 64)])
def test_the_generated_grid_of_a_grid_function_is_the_checked_one(group, m, n, k):
    cfg = matmul_f16.config(group=group)
    plan = matmul_f16.plan(cfg)
    arrays = [np.zeros((m, k), np.float16), np.zeros((k, n), np.float16), np.zeros((m, n), np.float16)]
    values = plan.values(arrays)
    want = matmul_f16._grid_of(cfg, plan, arrays, values)
    fast = _user_grid(matmul_f16, cfg, plan)
    assert fast is not None
    # the mutant: the configuration's tiles bound once from the defaults, not this configuration's
    assert fast(values) == tuple(want) + (1,) * (3 - len(want))


def test_a_grid_function_answering_numpy_ints_takes_the_generated_grid():
    @ti.kernel(grid=lambda N: (np.int64(N // 128 + 1), np.int32(1)))
    def ones(x=Out(F32, cells(["N"], [128]))):
        ti.store_cell(x, ti.full([128], 1.0, F32))

    cfg = ones.config()
    plan = ones.plan(cfg)
    values = plan.values([np.zeros(1000, np.float32)])
    fast = _user_grid(ones, cfg, plan)
    assert fast(values) == (8, 1, 1)  # the mutant: numpy ints sent the checked way every launch
    assert _user_grid(ti.kernel(grid=lambda N: (True,))(ones.fn), cfg, plan)(values) is None  # a bool is no count


def test_a_grid_function_of_a_by_value_argument_keeps_the_checked_way():
    @ti.kernel(grid=lambda n: (n,))
    def fill(x=Out(F32, cells(["N"], [128])), n=ti.ByValue("i32")):
        ti.store_cell(x, ti.full([128], 1.0, F32))

    cfg = fill.config()
    assert _user_grid(fill, cfg, fill.plan(cfg)) is None  # read off the call: the generic way serves it


def test_a_grid_function_is_asked_once_per_size():
    asked = []

    def grid(N):
        asked.append(N)
        return (N // 128 + 1,)

    @ti.kernel(grid=grid)
    def ones(x=Out(F32, cells(["N"], [128]))):
        ti.store_cell(x, ti.full([128], 1.0, F32))

    cfg = ones.config()
    plan = ones.plan(cfg)
    fast = _user_grid(ones, cfg, plan)
    small, large = (plan.values([np.zeros(n, np.float32)]) for n in (1000, 5000))
    assert [fast(small), fast(small), fast(large), fast(small)] == [(8, 1, 1), (8, 1, 1), (40, 1, 1), (8, 1, 1)]
    assert asked == [1000, 5000]  # the mutant: the function asked on every launch
    # a refused answer is not kept: asked again (the checked way then words it)
    refused = _user_grid(ti.kernel(grid=lambda N: (asked.append(-N) or 0,))(ones.fn), cfg, plan)
    assert refused(small) is None and refused(small) is None and asked[-2:] == [-1000, -1000]
