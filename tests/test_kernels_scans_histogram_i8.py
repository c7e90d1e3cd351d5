"""The library's scan, histogram and integer-product kernels (histogram, prefix sum, linear
recurrence, i8 matmul): each on the host reference against an independent numpy reference on
shapes with tails (bit-exact where the kernel is exact, the module's stated bound where it is not),
and layer 1 for each kernel (tileirdisasm of our bytes == render_kernel at every bytecode version;
tileiras assembles for sm_90)."""

import numpy as np
import pytest

import tileir.assemble as asm
from tests.kernelcheck import At, assert_matches_on_host, config_id, render_matches_disassembly
from tileir.kernels import (
    CASES,
    chunk_totals,
    histogram,
    histogram_rows,
    matmul_i8,
    merge_rows,
    prefix_sum,
    recurrence,
    recurrence_apply,
    recurrence_blocks,
    recurrence_totals,
    scan_blocks,
    scan_chunks,
)
from tileir.kernels.recurrence import reference

SIZES = {
    "histogram": [1, (5, 3), (3000, 17), (100_003, 256), At((5000, 64), {"tile": 256}),
                  At((5000, 300), {"tile": 32, "direct_most": 0}), (70_001, 1000)],
    "prefix_sum_f32": [1, 1000, 1024, 1025, 100_003, At(5000, {"tile": 32}), At(4096, {"tile": 64})],
    "prefix_sum_i32": [1, 3001, 100_003, At(5000, {"tile": 32}), At(2049, {"tile": 1024}), At(40_000, {"tile": 16})],
    "recurrence": [1, 1023, 3000, At(3001, {"tile": 32}), At(2048, {"tile": 64})],
    "matmul_i8": [(64, 64, 64), (200, 136, 300), (1, 7, 65), At((130, 70, 100), {"tm": 64, "tn": 32, "tk": 32})],
}


@pytest.mark.parametrize("name,at", [(n, s) for n, ss in SIZES.items() for s in ss], ids=repr)
def test_kernel_matches_numpy_on_the_host(name, at):
    assert_matches_on_host(name, at)


def test_exact_cases_are_bit_exact_and_the_others_state_a_tolerance():
    for name in ("histogram", "prefix_sum_i32", "matmul_i8"):
        assert CASES[name].rtol == 0 and CASES[name].atol == 0, name
    assert CASES["prefix_sum_f32"].rtol == 2e-4
    assert CASES["recurrence"].atol == 1e-3


# ---- histogram ----------------------------------------------------------------------------------


def test_histogram_adds_into_the_counts_and_ignores_values_outside():
    x = np.array([0, 3, 3, -1, 4, 5, 2**31 - 1, -(2**31), 3, 1], np.int32)
    counts = np.array([10, 0, 0, 0], np.int32)
    histogram.run_host(x, counts, tile=4)  # the bins: counts' length
    assert counts.tolist() == [11, 1, 0, 3]
    # only x's elements count: a slice is read in place
    counts = np.zeros(4, np.int32)
    histogram.run_host(x[:3], counts, tile=4)
    assert counts.tolist() == [1, 0, 0, 2]


def test_histogram_records_once_for_every_length_and_bin_count():
    progs = {id(histogram.program(**CASES["histogram"].config((n, b)))) for n, b in ((1, 1), (1000, 256), (10**6, 7))}
    assert len(progs) == 1
    assert histogram.grid(np.zeros(1025, np.int32), np.zeros(3, np.int32)) == (2,)


# ---- prefix sum ---------------------------------------------------------------------------------


def test_prefix_sum_f32_of_whole_numbers_is_exact_across_blocks():
    # every partial sum is an integer below 2^24: any order gives the same f32
    x = np.random.default_rng(5).integers(-8, 9, 5003).astype(np.float32)
    for tile, chunks, ahead in ((16, 528, True), (16, 7, True), (16, 7, False), (1024, 528, True), (4, 2000, True),
                                (1024, 1, False)):
        # 313 tiles in 313 chunks; in 7 chunks of 45 (the last 43), with the next tile loaded
        # ahead and without; 5 tiles in one launch; 1251 tiles in 1251 chunks, so the last chunk's
        # block adds 1250 totals, 313 tiles of 4 of them; one chunk of 5 tiles, nothing loaded ahead
        y = prefix_sum(x, tile=tile, chunks=chunks, ahead=ahead)
        assert np.array_equal(y, np.cumsum(x.astype(np.int64)).astype(np.float32)), (tile, chunks, ahead)


def test_prefix_sum_chunks_past_the_tiles_are_empty():
    # the grid is totals' length: chunks past the last tile sum nothing (their totals are 0) and
    # scan nothing into y
    x = np.arange(1, 101, dtype=np.int32)
    totals, y = np.full(40, -1, np.int32), np.zeros(100, np.int32)
    chunk_totals.run_host(x, totals, fmt="i32", tile=4)  # 25 tiles in 40 chunks of one tile
    assert list(totals[:25]) == [int(x[4 * b:4 * b + 4].sum()) for b in range(25)] and not totals[25:].any()
    scan_chunks.run_host(x, y, totals, fmt="i32", tile=4)
    assert np.array_equal(y, np.cumsum(x))


def test_prefix_sum_i32_wraps_and_leaves_the_input():
    x = np.full(3000, 2**30, np.int32)
    keep = x.copy()
    y = prefix_sum(x, tile=256)
    assert y.dtype == np.int32 and np.array_equal(x, keep)
    assert np.array_equal(y, np.cumsum(x.astype(np.int64)).astype(np.int32))
    assert prefix_sum(np.zeros(0, np.int32)).shape == (0,)


def test_prefix_sum_and_the_reductions_run_cpu_tensors_on_the_host_in_their_memory():
    torch = pytest.importorskip("torch")
    from tileir.kernels import vector_max, vector_sum

    x = torch.arange(-2000, 3001, dtype=torch.int32)
    out = torch.zeros_like(x)
    assert prefix_sum(x, out) is out and torch.equal(out, torch.cumsum(x, 0).int())
    f = torch.linspace(-1, 2, 20_001)
    assert abs(float(vector_sum(f)) - float(f.double().sum())) < 1e-3
    assert float(vector_max(f)) == float(f.max())


def test_prefix_sum_refuses_other_formats():
    from tileir.errors import TileirError

    with pytest.raises(TileirError, match="f32 or i32"):
        prefix_sum(np.zeros(8, np.float64))


def test_count_values_takes_the_rows_where_there_are_many_values_and_few_bins():
    import torch

    from tileir.kernels import count_values

    rng = np.random.default_rng(3)
    x = rng.integers(-2, 70, 5000).astype(np.int32)
    want = np.bincount(x[(x >= 0) & (x < 64)], minlength=64)
    for rows in (1, 3, 528):  # fewer rows than tiles: a block walks several tiles into its row
        counts = np.full(64, 5, np.int32)  # added to, not overwritten
        count_values(x, counts, tile=64, rows=rows, direct_most=0)
        assert np.array_equal(counts, want + 5), rows
    t = torch.from_numpy(x)  # a CPU tensor runs on the host reference in its own memory
    counts = torch.zeros(64, dtype=torch.int32)
    count_values(t, counts, tile=64, direct_most=0)
    assert np.array_equal(counts.numpy(), want)
    count_values(np.zeros(0, np.int32), counts)  # nothing to count: nothing launched


def test_count_values_goes_straight_where_the_bins_outnumber_the_values():
    from unittest import mock

    from tileir.kernels import count_values, histogram_rows

    x = np.arange(3000, dtype=np.int32)
    counts = np.zeros(1 << 20, np.int32)  # a million bins: no [G, 2^20] rows for 3000 values
    with mock.patch.object(histogram_rows, "run_host", side_effect=AssertionError("the rows path")):
        count_values(x, counts, tile=64, direct_most=0)
    assert counts[:3000].all() and counts.sum() == 3000


# ---- recurrence ---------------------------------------------------------------------------------


def test_recurrence_of_unit_coefficients_is_exact_across_blocks():
    # a in {-1, 0, 1}, x small integers: every h is an integer below 2^24, so any order is exact
    rng = np.random.default_rng(2)
    n = 3001
    a = rng.choice(np.array([-1, 0, 1, 1, 1], np.float32), n)
    x = rng.integers(-4, 5, n).astype(np.float32)
    want = reference(a, x)
    for tile in (32, 1024):
        h = recurrence(a, x, tile=tile)
        assert np.array_equal(h, want.astype(np.float32)), tile


def test_recurrence_is_within_its_stated_bound():
    case = CASES["recurrence"]
    rng = np.random.default_rng(11)
    n, tile = 2500, 64
    a, x, _ = case.inputs(n, rng)
    h = recurrence(a, x, tile=tile)
    want = reference(a, x)
    # S(t) = sum_k |P(k, t)| |x[k]|: the recurrence of |a| and |x|
    s = reference(np.abs(a), np.abs(x))
    nb = -(-n // tile)
    bound = 3 * (tile + nb + -(-nb // tile)) * 2.0**-24 * s
    assert np.all(np.abs(h - want) <= bound)
    assert s.max() <= 2.0  # |a| <= 0.5 and |x| <= 1, so the case's atol covers the bound


# ---- matmul_i8 ----------------------------------------------------------------------------------


def test_matmul_i8_is_signed_and_exact_at_the_extremes():
    m, n, k = 65, 33, 300
    a = np.full((m, k), -128, np.int8)
    b = np.full((k, n), -128, np.int8)
    b[:, 1] = 127
    c = np.zeros((m, n), np.int32)
    matmul_i8.run_host(a, b, c, tm=64, tn=32, tk=64)
    assert (c[:, 0] == 128 * 128 * k).all() and (c[:, 1] == -128 * 127 * k).all()


# ---- layer 1 ------------------------------------------------------------------------------------

VERSIONS = ["13.1", "13.2", "13.3", "13.4"]
LAYER1 = [
    (histogram, {}),
    (histogram, {"tile": 256}),
    (histogram_rows, {}),
    (merge_rows, {}),
    (scan_blocks, {"fmt": "f32"}),
    (scan_blocks, {"fmt": "i32", "tile": 256}),
    (chunk_totals, {"fmt": "f32"}),
    (chunk_totals, {"fmt": "i32"}),
    (scan_chunks, {"fmt": "f32"}),
    (scan_chunks, {"fmt": "i32", "tile": 256}),
    (recurrence_blocks, {}),
    (recurrence_totals, {}),
    (recurrence_apply, {"tile": 256}),
    (matmul_i8, {}),
    (matmul_i8, {"tm": 128, "tn": 256, "tk": 64, "warps": 8}),  # the sm_90 table's
]


@pytest.mark.parametrize("kc", LAYER1, ids=[config_id(kc) for kc in LAYER1])
def test_disassembly_equals_render(kc, disasm):
    render_matches_disassembly(*kc, disasm, VERSIONS)


@pytest.mark.parametrize("kc", LAYER1, ids=[config_id(kc) for kc in LAYER1])
def test_tileiras_assembles_for_sm90_without_the_defect_workaround(kc):
    kern, cfg = kc
    k = kern.kernel(**cfg)
    assert asm.kernel_args(k, "13.4.92", "sm_90") == ["--gpu-name", "sm_90"]
    cubin = asm.assemble(kern.bytecode(**cfg), "sm_90", kernel=kern.name, cache=False, program=k)
    assert cubin[:4] == b"\x7fELF"
