"""On a GPU: every library kernel through our pipeline and runtime equals numpy on fresh inputs."""

import pytest

from tileir.cli import run_case
from tileir.kernels import CASES

SIZES = {"vadd": 100_003, "saxpy": 3001, "softmax": (64, 1000), "matmul_f16": (200, 136, 300),
         "matmul_bf16": (130, 70, 100), "matmul_tf32": (100, 50, 33)}


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(SIZES))
def test_library_kernel_on_the_gpu(name):
    err, ok = run_case(CASES[name], SIZES[name], "device", seed=3)
    assert ok, f"{name}: max error {err}"


@pytest.mark.gpu
def test_one_saxpy_cubin_serves_every_length():
    case = CASES["saxpy"]
    cubins = {case.kernel.cubin("sm_90", **case.config(n)) for n in (1, 1000)}
    assert len(cubins) == 1  # the length is an argument, not configuration
    for n in (5, 1024, 4097):
        assert run_case(case, n, "device", seed=n)[1]
