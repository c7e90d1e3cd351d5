"""Entry hints as configuration (``@kernel(hints=fn)``, kernels/entry_hints.py) and the matmul's
grouped block order: what the bytes say, that tileiras reads them, and that neither changes an
answer on the host reference."""

from types import SimpleNamespace

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
    assert "optimization_hints" not in softmax.mlir().splitlines()[0]  # the entry (a store may carry allow_tma)
    head = softmax.mlir(warps=8, occupancy=4).splitlines()[0]
    assert "optimization_hints=<default = {num_worker_warps_per_cta = 8, occupancy = 4}>" in head
    assert "num_cta_in_cga = 2" in matmul_f16.mlir(cga=2)
    assert entry_hints() == [] and entry_hints(cga=1) == [("default", (("num_cta_in_cga", 1),))]
    assert entry_hints(no_tma_store=1) == [("default", (("view_store_no_tma", 1),))]


@pytest.mark.parametrize("version", ["13.1", "13.4"])
@pytest.mark.parametrize("group", [2, 3])  # 2 divides the 4 block rows; 3 leaves a shorter last group
def test_hinted_bytes_read_back_and_assemble(version, group, disasm):
    cfg = dict(tm=64, tn=64, tk=32, group=group, warps=8, occupancy=2, cga=2)
    assert normalise(disasm(matmul_f16.bytecode(version=version, **cfg))) == normalise(matmul_f16.mlir(**cfg))
    assert assemble(matmul_f16.bytecode(version=version, **cfg), "sm_90", kernel="matmul_f16", cache=False)[:4] == \
        b"\x7fELF"
    plain = assemble(softmax.bytecode(max_tile=8192), "sm_90", kernel="softmax", cache=False)
    hinted = assemble(softmax.bytecode(max_tile=8192, warps=8), "sm_90", kernel="softmax", cache=False)
    assert hinted[:4] == b"\x7fELF" and hinted != plain  # the default key is read for sm_90: the code changes


def test_a_hints_function_must_answer_a_list():
    @kernel(hints=lambda warps=0: "eight warps")
    def k(y=Out("f32", cells([16], [16])), *, warps: int = 0):
        pass

    with pytest.raises(TileirError, match="hints function answered 'eight warps'"):
        k.program()


def test_warps_past_8_are_8_to_tileiras():
    """The spec: the dialect clamps anything but 4 or 8; measured here: 16 assembles to 8's cubin,
    and 4 to the cubin of no hint at all (docs/facts.md)."""
    def cubin(**h):
        return assemble(layernorm.bytecode(fmt="f16", **h), "sm_90", kernel="layernorm", cache=False)

    eight = cubin(warps=8)
    assert cubin(warps=16) == eight and cubin(warps=4) == cubin() != eight


@pytest.mark.parametrize("m,n,k,group", [(200, 136, 300, 2), (256, 384, 96, 4), (320, 64, 64, 3), (64, 200, 48, 8),
                                         (448, 130, 64, 3), (200, 136, 300, 3)])
def test_grouped_block_order_computes_every_cell(m, n, k, group):
    """Each block finds its own cell in the grouped order (a wrong order leaves cells unwritten or
    writes one twice): whole groups, a shorter last group (5 block rows in groups of 3; 7 in 3s),
    and a group taller than the matrix (8 of 1 row)."""
    rng = np.random.default_rng(m + n)
    a = (rng.standard_normal((m, k)) / np.sqrt(k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float16)
    cfg = dict(tm=64, tn=64, tk=32, group=group)
    assert matmul_f16.grid(a, b, c, **cfg) == (-(-m // 64) * -(-n // 64),)
    matmul_f16.run_host(a, b, c, **cfg)
    np.testing.assert_allclose(c.astype(np.float64), a.astype(np.float64) @ b.astype(np.float64), rtol=1e-2,
                               atol=2e-2)


def test_the_tuned_bf16_matmul_is_the_grouped_program_with_its_hints():
    cfg = matmul_bf16.tuned_config({}, "sm_90", {"M": 8192, "N": 8192, "K": 8192})  # the sm_90 table's choice
    assert cfg["group"] > 0 and cfg["warps"] == 8
    text = matmul_bf16.mlir(**cfg)
    assert "num_worker_warps_per_cta = 8" in text and "divi" in text and "remi" in text
    assert "mini" in text  # the last group's height, from the run-time M on the device
    square = SimpleNamespace(shape=(8192, 8192))  # a contiguous stand-in: only the shape is read
    assert matmul_bf16.grid(square, square, square, **cfg) == (64 * 32,)
