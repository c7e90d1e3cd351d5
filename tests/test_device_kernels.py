"""On a GPU: every library kernel through our pipeline and runtime equals numpy on fresh inputs."""

import pytest

from tileir.cli import run_case
from tileir.kernels import CASES

SIZES = {"vadd": 100_003, "saxpy": 3001, "softmax": (64, 1000), "softmax_bf16": (33, 5000),
         "matmul_f16": (200, 136, 300), "matmul_bf16": (130, 70, 100), "matmul_tf32": (100, 50, 33),
         "layernorm_f16": (64, 1000), "rmsnorm_bf16": (7, 9000), "attention_f16_causal": (1, 2, 200, 64),
         "attention_bf16": (2, 1, 130, 128), "bmm_f16": (3, 100, 70, 65), "transpose_f32": (300, 77),
         "conv1d": (3001, 7), "histogram": (10_007, 256), "matmul_i8": (129, 257, 65), "vector_sum": 100_003,
         "prefix_sum_i32": 5001, "recurrence": 3001, "prefix_sum_f32": 1_000_003}


@pytest.mark.gpu
@pytest.mark.parametrize("name,size", [("histogram", (100_003, 256)), ("histogram", (300_001, 5000)),
                                       ("prefix_sum_i32", 3000), ("prefix_sum_f32", 70_001),
                                       ("vector_max", 10_000), ("softmax_f16", (64, 20_000)),
                                       ("layernorm_f16", (33, 65_536))])
def test_the_other_paths_on_the_gpu(name, size):
    # the histogram's private rows (and fewer rows than its 528 where the bins are many); the scan
    # in one launch of one chunk, and past 4 tiles; vector_max in one launch; rows one tile wide
    err, ok = run_case(CASES[name], size, "device", seed=5)
    assert ok, f"{name} {size}: max error {err}"


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(SIZES))
def test_library_kernel_on_the_gpu(name):
    err, ok = run_case(CASES[name], SIZES[name], "device", seed=3)
    assert ok, f"{name}: max error {err}"


@pytest.mark.gpu
def test_one_saxpy_cubin_serves_every_length():
    case = CASES["saxpy"]
    cubins = {case.kernel.cubin("sm_90", **case.config(n)) for n in (1, 1000)}
    assert len(cubins) == 1  # the length is read off the arrays, not configuration
    for n in (5, 1024, 4097):
        assert run_case(case, n, "device", seed=n)[1]


@pytest.mark.gpu
def test_the_fast_lane_launches_right_again_and_again():
    """Repeated torch calls take the fast lane: new buffers, the same buffers, another length and a
    scalar that changes all answer right, from one recording each."""
    torch = pytest.importorskip("torch")
    from tileir.kernels import saxpy, vadd

    a, b, c = (torch.randn(5000, device="cuda") for _ in range(3))
    vadd(a, b, c)
    saxpy(1.0, a, c)
    made = (vadd.compiled(), saxpy.compiled())
    for _ in range(3):
        vadd(a, b, c)
        assert torch.equal(c, a + b)
    d, e, f = (torch.randn(5000, device="cuda") for _ in range(3))
    vadd(d, e, f)
    assert torch.equal(f, d + e)
    # 1240: another length of 5000's claim (a multiple of 8, not 16: sizes.claim_of); 1234 would claim
    # nothing and take a cubin of its own (bench/results/gpu_tests_sizes_h200.log)
    for alpha, n in ((2.0, 5000), (-0.5, 5000), (3.0, 1240)):
        x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
        want = alpha * x + y
        saxpy(alpha, x, y)
        torch.testing.assert_close(y, want)
    assert (vadd.compiled(), saxpy.compiled()) == made  # another length compiled nothing


@pytest.mark.gpu
@pytest.mark.parametrize("causal", [True, False])
def test_attention_heavy_first_on_the_gpu(causal):
    """heavy_first (the query blocks on the grid's last axis, the last first) on the device: two batches,
    grouped-query heads and a ragged last query block, against the default order and f32 SDPA. Kills: K / V
    following the old batch axis (the second batch wrong), the reversal off by one, the grid's axes swapped."""
    torch = pytest.importorskip("torch")
    import torch.nn.functional as F  # noqa: N812

    from tileir.kernels import attention

    g = torch.Generator(device="cuda").manual_seed(7)
    q = torch.randn(2, 4, 300, 64, device="cuda", dtype=torch.float16, generator=g)
    k, v = (torch.randn(2, 2, 300, 64, device="cuda", dtype=torch.float16, generator=g) for _ in range(2))
    outs = []
    for order in (False, True):
        o = torch.zeros_like(q)
        attention(q, k, v, o, causal=causal, heavy_first=order, bq=64, bk=64, d_tile=64, sync=True)
        outs.append(o)
    want = F.scaled_dot_product_attention(q.float(), k.float().repeat_interleave(2, 1),
                                          v.float().repeat_interleave(2, 1), is_causal=causal)
    assert (outs[1].float() - want).abs().max() < 2e-2
    assert torch.equal(outs[0], outs[1])


@pytest.mark.gpu
@pytest.mark.parametrize("causal", [True, False])
def test_attention_walked_on_the_gpu(causal):
    """programs (a persistent grid walking the blocks of O, the heaviest first) on the device at the suite's
    configuration (bq 128, 8 warps): two batches, grouped-query heads, a ragged last query block, 7 programs
    for 24 blocks and 132 for all of them, each against f32 SDPA (O filled with NaN first). Kills: a walked
    block unwritten or written with another's rows, the batch of V wrong, the reversal off by one."""
    torch = pytest.importorskip("torch")
    import torch.nn.functional as F  # noqa: N812

    from tileir.kernels import attention

    g = torch.Generator(device="cuda").manual_seed(8)
    q = torch.randn(2, 4, 300, 128, device="cuda", dtype=torch.float16, generator=g)
    k, v = (torch.randn(2, 2, 300, 128, device="cuda", dtype=torch.float16, generator=g) for _ in range(2))
    outs = []
    for programs in (0, 7, 132):
        o = torch.full_like(q, float("nan"))
        attention(q, k, v, o, causal=causal, programs=programs, bq=128, bk=64, warps=8, sync=True)
        outs.append(o)
    want = F.scaled_dot_product_attention(q.float(), k.float().repeat_interleave(2, 1),
                                          v.float().repeat_interleave(2, 1), is_causal=causal)
    for o in outs:  # NaN where a block was left unwritten; tileiras may schedule the walked loop's sums apart
        assert (o.float() - want).abs().max() < 2e-2
