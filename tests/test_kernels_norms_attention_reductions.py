"""The library's norm, attention, batched-product, transpose, reduction and convolution kernels
(layernorm, rmsnorm, attention, bmm, transpose, vector / block sum and max, conv1d):
each on the host reference against an independent numpy reference in f64 on shapes with tails,
and layer 1 for each (tileirdisasm of our bytes == render_kernel at every bytecode version;
tileiras assembles for sm_80 and sm_90)."""


import numpy as np
import pytest

from tests.kernelcheck import At, assert_matches_on_host, config_id, render_matches_disassembly
from tileir.assemble import assemble
from tileir.errors import TileirError
from tileir.kernels import (
    CASES,
    attention,
    block_max,
    block_sum,
    bmm,
    conv1d,
    layernorm,
    rmsnorm,
    transpose,
    vector_max,
    vector_sum,
)
from tileir.kernels.attention import reference as attention_reference

SIZES = {
    "layernorm_f32": [(3, 1), (5, 100), (4, 256), At((3, 1000), {"max_tile": 256}), At((2, 1024), {"max_tile": 256})],
    "layernorm_f16": [(5, 100), (2, 3000), At((3, 700), {"max_tile": 128})],
    "layernorm_bf16": [(4, 300), At((2, 257), {"max_tile": 64})],
    "rmsnorm_f32": [(3, 1), (5, 100), At((3, 1000), {"max_tile": 256})],
    "rmsnorm_f16": [(4, 300), At((2, 1000), {"max_tile": 128})],
    "rmsnorm_bf16": [(3, 129), At((2, 100), {"max_tile": 32})],
    "attention_f16": [(1, 2, 128, 64), (1, 1, 130, 128), At((2, 1, 100, 64), {"bq": 64, "bk": 32}),
                      At((1, 4, 40, 24, 2, 70), {"bq": 32, "bk": 16, "d_tile": 32})],
    "attention_f16_causal": [(2, 1, 200, 64), (1, 1, 130, 128), At((1, 1, 70, 32), {"bq": 32, "bk": 16}),
                             At((1, 4, 70, 16, 1, 33), {"bq": 32, "bk": 16})],
    "attention_bf16": [(1, 1, 200, 64), At((2, 1, 70, 32), {"bq": 32, "bk": 32})],
    "attention_bf16_causal": [(1, 1, 128, 128), At((1, 2, 100, 64), {"bq": 64, "bk": 32})],
    "bmm_f16": [(3, 64, 64, 64), (2, 200, 136, 100), At((2, 1, 7, 65), {"tm": 64, "tn": 64, "tk": 32})],
    "bmm_bf16": [(2, 130, 70, 100)],
    "transpose_f32": [(64, 64), (100, 37), (1, 300), At((130, 200), {"tm": 32, "tn": 64})],
    "transpose_f16": [(100, 37), At((70, 130), {"tm": 64, "tn": 16})],
    "vector_sum": [1, 4096, 100_003, At(100_003, {"tile": 1024, "parts": 4}), At(5000, {"tile": 256, "parts": 3})],
    "vector_max": [1, 100_003, At(5000, {"tile": 256, "parts": 3})],
    "conv1d": [(1, 1), (5, 5), (12, 12), (100, 3), (3001, 7), (5000, 64), (300, 100), At((3001, 9), {"tile": 256})],
}


@pytest.mark.parametrize("name,at", [(n, s) for n, ss in SIZES.items() for s in ss], ids=repr)
def test_kernel_matches_numpy_on_the_host(name, at):
    assert_matches_on_host(name, at)


def test_layernorm_masks_the_padded_lanes_out_of_the_variance():
    # a row of 1000 in one chunk of 8192, and in chunks of 256 (the last partial), with a large mean:
    # zero padding alone would be off by ~1e-3
    case = CASES["layernorm_f32"]
    for extra in ({}, {"max_tile": 256}):
        args = case.inputs((4, 1000), np.random.default_rng(3))
        args[0] += np.float32(20.0)
        want = case.expected([a.copy() for a in args])
        case.kernel.run_host(*args, **case.config((4, 1000)), **extra)
        err, ok = case.check(args[3], want)
        assert ok, (extra, err)


def test_norms_record_once_for_every_shape():
    case = CASES["layernorm_f16"]
    kern = case.kernel
    progs = {id(kern.program(**case.config((r, c)))) for r, c in ((1, 1), (7, 1000), (4096, 20000))}
    assert len(progs) == 1
    x, v = np.zeros((7, 1000), np.float16), np.zeros(1000, np.float16)
    assert kern.grid(x, v, v, x, **case.config((7, 1000))) == (7,)  # one block a row


def test_vector_sum_and_max_public_functions_on_numpy():
    x = np.random.default_rng(0).standard_normal(50_001).astype(np.float32)
    s = vector_sum(x, tile=512, parts=8)
    m = vector_max(x, tile=512, parts=8)
    assert s.shape == (1,) and abs(float(s[0]) - x.astype(np.float64).sum()) < 1e-2
    assert float(m[0]) == float(x.max())


def test_conv1d_takes_its_width_from_the_filter_and_refuses_a_y_of_another_length():
    x, w = np.arange(10, dtype=np.float32), np.ones(4, np.float32)
    y = np.zeros(7, np.float32)
    conv1d.run_host(x, w, y)
    assert y.tolist() == [6.0, 10.0, 14.0, 18.0, 22.0, 26.0, 30.0]
    with pytest.raises(TileirError, match="y has N - W [+] 1 = 7; it has 8") as e:
        conv1d.run_host(x, w, np.zeros(8, np.float32))
    assert e.value.fix == "a y of 7 elements"


def test_attention_heavy_first_answers_as_the_default_order():
    """heavy_first moves the query blocks to the grid's last axis, walked from the last: the same answer
    lane for lane on the host reference, grouped-query and a ragged last block included, and the grid
    (heads, batch, query blocks). Kills: the reversal off by one (block 0's rows never written, a block
    past the end), the query block taken from another axis, K / V following the old batch axis (the second
    batch reads the first's), the grid's axes unchanged or swapped. (Which block runs first is the
    device's business: the host runs every block, so the order itself is measured, not tested.)"""
    rng = np.random.default_rng(3)
    q = rng.standard_normal((2, 4, 300, 64)).astype(np.float16)
    k, v = (rng.standard_normal((2, 2, 300, 64)).astype(np.float16) for _ in range(2))
    for causal in (False, True):
        outs = []
        for order in (False, True):
            o = np.zeros_like(q)
            attention.run_host(q, k, v, o, causal=causal, heavy_first=order, bq=64, bk=64, d_tile=64)
            outs.append(o)
        assert np.array_equal(outs[0], outs[1])
        assert np.abs(outs[1].astype(np.float64) - attention_reference(q, k, v, causal)).max() < 2e-3
    assert attention.grid(q, k, v, q, heavy_first=True, bq=64, d_tile=64) == (4, 2, 5)
    assert attention.grid(q, k, v, q, bq=64, d_tile=64) == (5, 4, 2)


def test_attention_walked_by_few_programs_answers_as_one_block_a_block():
    """programs: at most that many blocks, each walking every programs-th block of O from the heaviest
    (the last query block of every head and batch first). On the host reference with 7 programs over 40
    blocks (2 batches x 4 heads x 5 query blocks, grouped-query, a ragged last block): the same answer
    lane for lane as one block a block, and a one-axis grid of min(blocks, programs). Kills: the walk's
    stride or end wrong (blocks unwritten), the cell's batch and head swapped or mixed (H 4 against B 2),
    V read at the wrong batch, the reversal off by one; heavy_first with programs refused."""
    rng = np.random.default_rng(4)
    q = rng.standard_normal((2, 4, 300, 64)).astype(np.float16)
    k, v = (rng.standard_normal((2, 2, 300, 64)).astype(np.float16) for _ in range(2))
    for causal in (False, True):
        outs = []
        for programs in (0, 7):
            o = np.zeros_like(q)
            attention.run_host(q, k, v, o, causal=causal, programs=programs, bq=64, bk=64, d_tile=64)
            outs.append(o)
        assert np.array_equal(outs[0], outs[1])
    assert attention.grid(q, k, v, q, programs=7, bq=64, d_tile=64) == (7,)
    assert attention.grid(q, k, v, q, programs=132, bq=64, d_tile=64) == (40,)
    with pytest.raises(TileirError, match="heaviest blocks first"):
        attention.program(causal=True, programs=132, heavy_first=True)

def test_causal_attention_wants_bk_to_divide_bq():
    with pytest.raises(TileirError, match="bk"):
        attention.program(causal=True, bq=32, bk=64)


def test_causal_attention_refuses_the_warps_tileiras_gets_wrong():
    """bench/results/attention_warps_h200.json: causal, bq = bk = 64, 8 warps is wrong on the H200 at
    every level; its neighbours that were measured right stay allowed."""
    for warps in (8, 16):
        with pytest.raises(TileirError, match="wrong answers") as e:
            attention.program(causal=True, bq=64, bk=64, warps=warps)
        assert "warps=0" in str(e.value) and "attention" in str(e.value)
    attention.program(causal=True, bq=64, bk=64)  # tileiras' own choice of warps
    attention.program(causal=True, bq=128, bk=64, warps=8)
    attention.program(causal=False, bq=64, bk=64, warps=8)


# ---- layer 1 ------------------------------------------------------------------------------------

VERSIONS = ["13.1", "13.2", "13.3", "13.4"]
LAYER1 = [
    (layernorm, {}),
    (layernorm, {"fmt": "f16", "max_tile": 1024}),
    (rmsnorm, {"fmt": "f16"}),
    (rmsnorm, {"fmt": "bf16", "max_tile": 2048}),
    (attention, {"causal": True}),
    (attention, {"d_tile": 64}),
    (attention, {"causal": True, "fmt": "bf16", "d_tile": 64}),
    (attention, {"fmt": "bf16", "scale": 0.125}),
    (bmm, {}),
    (bmm, {"fmt": "bf16"}),
    (transpose, {}),
    (transpose, {"fmt": "f16", "tn": 16}),
    (block_sum, {}),
    (block_sum, {"tile": 32}),
    (block_max, {}),
    (conv1d, {}),
    (conv1d, {"tile": 256}),
]


# tileiras takes seconds on an attention or a matmul: it assembles one configuration of each kernel
# family at each target (the render checks above cover every configuration)
ASSEMBLE = [LAYER1[i] for i in (0, 1, 2, 4, 6, 9, 10, 11, 12, 14, 15)]


@pytest.mark.parametrize("kc", LAYER1, ids=[config_id(kc) for kc in LAYER1])
def test_disassembly_equals_render(kc, disasm):
    render_matches_disassembly(*kc, disasm, VERSIONS)


@pytest.mark.parametrize("target", ["sm_80", "sm_90"])
@pytest.mark.parametrize("kc", ASSEMBLE, ids=[config_id(kc) for kc in ASSEMBLE])
def test_tileiras_assembles(kc, target):
    kern, cfg = kc
    cubin = assemble(kern.bytecode(**cfg), target, kernel=kern.name, cache=False)
    assert cubin[:4] == b"\x7fELF"
