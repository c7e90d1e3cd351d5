"""A weight gradient's product cut along K (kernels/matmul_t.matmul_tn_any: matmul_tn_partial into an
f32 workspace, then gemm's splitk_reduce) on the host reference: every split count from one to more
splits than K has blocks, ragged edges in M, N and K, f16 / bf16 / f32 (tf32), against f64."""

from __future__ import annotations

import numpy as np
import pytest

from tileir.dtypes import dtype
from tileir.heuristics import matmul_split
from tileir.kernels import matmul_tn_any, matmul_tn_partial
from tileir.kernels.launching import launch

TOL = {"f16": (1e-2, 2e-2), "bf16": (2e-2, 5e-2), "f32": (5e-3, 1e-2)}


@pytest.mark.parametrize("fmt", ["f16", "bf16", "f32"])
@pytest.mark.parametrize("splits", [1, 2, 3, 5, 40])
def test_split_products_equal_the_product(fmt, splits):
    """Kills: a split's K range overlapping the next one's (a block counted twice), the last split
    left out, the splits' sum taken from the workspace's first slice only."""
    rng = np.random.default_rng(splits)
    k, m, n = 300, 37, 50
    a = (rng.standard_normal((k, m)) / np.sqrt(k)).astype(dtype(fmt).np)
    b = rng.standard_normal((k, n)).astype(dtype(fmt).np)
    want = a.astype(np.float64).T @ b.astype(np.float64)
    c = np.zeros((m, n), dtype(fmt).np)
    matmul_tn_any(a, b, c, splits=splits) if splits > 1 else matmul_tn_any(a, b, c)
    rtol, atol = TOL[fmt]
    assert np.allclose(c.astype(np.float64), want, rtol=rtol, atol=atol)
    assert not np.allclose(want - a[-16:].astype(np.float64).T @ b[-16:].astype(np.float64), want, rtol=rtol,
                           atol=atol)  # the comparison can fail: the last K block's share is seen


def test_the_partials_hold_disjoint_shares_of_k():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((96, 16)).astype(np.float16), rng.standard_normal((96, 16)).astype(np.float16)
    w = np.zeros((3, 16, 16), np.float32)
    launch(matmul_tn_partial, a, b, w, fmt="f16", tm=16, tn=16, tk=32)
    for z in range(3):  # K's three 32-row blocks, one a split
        share = a[32 * z: 32 * (z + 1)].astype(np.float64).T @ b[32 * z: 32 * (z + 1)].astype(np.float64)
        assert np.allclose(w[z], share, rtol=1e-5, atol=1e-4), z


def test_the_rule_splits_a_weight_gradients_few_blocks_over_many_tokens():
    """The example's output projection ([256, 512] over 8192 tokens): 8 blocks of 64 x 64 in one pass
    on 132 multiprocessors; the rule cuts K. A square product of many blocks is not cut."""
    assert matmul_split("sm_90", "bf16", 512, 256, 8192)["splits"] > 1
    assert matmul_split("sm_90", "bf16", 4096, 4096, 8192)["splits"] == 1


@pytest.mark.gpu
def test_gpu_split_and_rule_products_equal_torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU")
    torch.manual_seed(0)
    for k, m, n in ((8192, 256, 512), (1000, 37, 300)):
        dy = torch.randn(k, m, device="cuda", dtype=torch.bfloat16) / 30
        x = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        want = dy.t().float() @ x.float()
        for splits in (None, 3):
            c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
            matmul_tn_any(dy, x, c, splits=splits)
            torch.testing.assert_close(c.float(), want, atol=2e-2 * float(want.abs().max()), rtol=2e-2)
