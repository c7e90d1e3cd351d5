"""Every library kernel on the host reference equals an independent numpy reference, on shapes
with tails (bit-exact where the kernel is exact, a stated tolerance where it is not)."""

import numpy as np
import pytest

from tileir.cli import run_case
from tileir.kernels import CASES

SIZES = {
    "vadd": [1, 1024, 3000, 5000],
    "saxpy": [7, 2048, 3001],
    "softmax": [(3, 1), (5, 100), (4, 1000), (2, 4096), (3, 5000), (2, 9000)],
    "softmax_f16": [(3, 1), (4, 1000), (3, 5000)],
    "softmax_bf16": [(5, 100), (2, 4097)],
    "matmul_f16": [(64, 64, 64), (200, 136, 300), (1, 7, 65)],
    "matmul_bf16": [(128, 128, 64), (130, 70, 100)],
    "matmul_tf32": [(64, 128, 32), (100, 50, 33)],
}


@pytest.mark.parametrize("name,size", [(n, s) for n, ss in SIZES.items() for s in ss])
def test_library_kernel_matches_numpy(name, size):
    err, ok = run_case(CASES[name], size, "host", seed=7)
    assert ok, f"{name} {size}: max error {err}"


def test_every_library_kernel_is_exercised():
    from tests.test_backward import SIZES as BACKWARD  # the training kernels' own table
    from tests.test_kernels_norms_attention_reductions import SIZES as NORMS  # their own table
    from tests.test_kernels_scans_histogram_i8 import SIZES as SCANS  # their own table

    assert set(SIZES) | set(NORMS) | set(SCANS) | set(BACKWARD) == set(CASES)


def test_vadd_is_bit_exact_and_leaves_the_tail_alone():
    case = CASES["vadd"]
    assert case.rtol == 0 and case.atol == 0
    n = 1500
    a = np.arange(n, dtype=np.float32)
    b = np.ones(n, dtype=np.float32)
    c = np.full(2048, -7.0, dtype=np.float32)  # a longer buffer: nothing past n may change
    cc = c.copy()
    case.kernel.run_host(a, b, cc[:n])  # a view: written in place, the clipped tail not at all
    assert np.array_equal(cc[:n], a + 1)
    assert np.all(cc[n:] == -7.0)


def test_matmul_reference_detects_a_wrong_answer():
    # the comparison can fail: a product with one element changed is refused
    case = CASES["matmul_f16"]
    rng = np.random.default_rng(0)
    args = case.inputs((32, 32, 32), rng)
    want = case.expected(args)
    bad = want.copy()
    bad[3, 4] += 1.0
    assert not case.check(bad, want)[1]


def test_saxpy_records_once_for_every_length():
    case = CASES["saxpy"]
    progs = {id(case.kernel.program(**case.config(n))) for n in (1, 10, 5000)}
    assert len(progs) == 1
    x = np.zeros(5000, np.float32)
    assert case.kernel.grid(1.0, x, x) == (5,)  # the length read off x and y
