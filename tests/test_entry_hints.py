"""Entry hints as configuration (``@kernel(hints=fn)``, kernels/entry_hints.py) and the matmul's
grouped block order: what the bytes say, that tileiras reads them, and that neither changes an
answer on the host reference."""

import numpy as np
import pytest

from tileir import TileirError
from tileir.assemble import assemble
from tileir.kernel import kernel
from tileir.kernels import layernorm, matmul_bf16, matmul_f16, softmax
from tileir.kernels.entry_hints import entry_hints
from tileir.markers import Out, cells
from tileir.render import normalise


def test_hints_follow_the_configuration():
    assert "optimization_hints" not in softmax.mlir(cols=100)
    head = softmax.mlir(cols=100, warps=8, occupancy=4).splitlines()[0]
    assert "optimization_hints=<default = {num_worker_warps_per_cta = 8, occupancy = 4}>" in head
    assert "num_cta_in_cga = 2" in matmul_f16.mlir(m=64, n=64, k=64, cga=2)
    assert entry_hints() == [] and entry_hints(cga=1) == [("default", (("num_cta_in_cga", 1),))]


@pytest.mark.parametrize("version", ["13.1", "13.4"])
def test_hinted_bytes_read_back_and_assemble(version, disasm):
    cfg = dict(m=200, n=136, k=300, tm=64, tn=64, tk=32, group=2, warps=8, occupancy=2, cga=2)
    assert normalise(disasm(matmul_f16.bytecode(version=version, **cfg))) == normalise(matmul_f16.mlir(**cfg))
    plain = assemble(softmax.bytecode(cols=8192), "sm_90", kernel="softmax", cache=False)
    hinted = assemble(softmax.bytecode(cols=8192, warps=8), "sm_90", kernel="softmax", cache=False)
    assert hinted[:4] == b"\x7fELF" and hinted != plain  # the default key is read for sm_90: the code changes


def test_a_hints_function_must_answer_a_list():
    @kernel(hints=lambda warps=0: "eight warps")
    def k(y=Out("f32", cells([16], [16])), *, warps: int = 0):
        pass

    with pytest.raises(TileirError, match="hints function answered 'eight warps'"):
        k.program()


def test_hints_change_no_answer():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((5, 300)).astype(np.float16)
    w, b = (rng.standard_normal(300).astype(np.float16) for _ in range(2))
    outs = []
    for h in ({}, {"warps": 8, "occupancy": 4}):
        y = np.zeros_like(x)
        layernorm.run_host(x, w, b, y, cols=300, fmt="f16", **h)
        outs.append(y)
    assert np.array_equal(outs[0], outs[1])


@pytest.mark.parametrize("m,n,k,group", [(200, 136, 300, 2), (256, 384, 96, 4), (320, 64, 64, 3), (64, 200, 48, 8)])
def test_grouped_block_order_computes_every_cell(m, n, k, group):
    """Each block finds its own cell in the grouped order (a wrong order leaves cells unwritten or
    writes one twice); group is cut to divide the block rows (3 of 5 rows -> 1)."""
    rng = np.random.default_rng(m + n)
    a = (rng.standard_normal((m, k)) / np.sqrt(k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float16)
    cfg = dict(m=m, n=n, k=k, tm=64, tn=64, tk=32, group=group)
    assert matmul_f16.grid(a, b, c, **cfg) == (-(-m // 64) * -(-n // 64),)
    matmul_f16.run_host(a, b, c, **cfg)
    np.testing.assert_allclose(c.astype(np.float64), a.astype(np.float64) @ b.astype(np.float64), rtol=1e-2,
                               atol=2e-2)


def test_grouped_order_is_tuned_for_bf16_on_the_bytes():
    text = matmul_bf16.mlir(m=8192, n=8192, k=8192, tm=128, tn=256, tk=32, group=8, warps=8)
    assert "num_worker_warps_per_cta = 8" in text and "divi" in text and "remi" in text
