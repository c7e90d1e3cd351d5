"""matmul_stream_k (kernels/matmul_stream_k.py): the last waves' K slices shared out among the blocks, a
cut cell finished by the last of its holders to arrive. On the host reference the blocks run in order;
the workspace's slots start as NaN here, so a finishing sum that reads a slot no holder wrote poisons
the answer, and C starts as NaN, so a cell nobody stores shows."""

import numpy as np
import pytest

from tileir.errors import TileirError
from tileir.kernels import matmul_persistent, matmul_stream_k, stream_k
from tileir.kernels.launching import launch
from tileir.kernels.matmul_stream_k import split_cells, workspace_words


def _operands(m, n, k, fmt=np.float16, seed=0):
    g = np.random.default_rng(seed)
    return (g.standard_normal((m, k)) / np.sqrt(k)).astype(fmt), g.standard_normal((k, n)).astype(fmt)


def _run(a, b, cfg, weight_t=False):
    m, n = a.shape[0], b.shape[0 if weight_t else 1]
    c = np.full((m, n), np.nan, a.dtype)
    ws = np.full(workspace_words(m, n, cfg["tm"], cfg["tn"], cfg["programs"]), np.nan, np.float32)
    stream_k(a, b, c, config=cfg, workspace=ws, weight_t=weight_t)
    return c


def test_split_cells_keeps_one_to_two_waves_to_share():
    assert [split_cells(c, 132) for c in (1, 131, 132, 160, 263, 264, 300, 1000)] == [0, 0, 0, 0, 0, 132, 132, 792]


# (m, n, k, tm, tn, tk, programs, group): cells x slices against programs -- a cell cut among three or more
# blocks, one block holding pieces of two cells, walked waves before the shared ones, ragged edges, fewer
# cells than blocks
SHAPES = [(200, 136, 300, 64, 64, 32, 5, 2), (64, 64, 1000, 64, 64, 32, 4, 8), (130, 200, 500, 64, 64, 32, 7, 8),
          (300, 260, 170, 64, 64, 32, 3, 1), (100, 70, 65, 64, 64, 32, 3, 3), (65, 129, 2048, 32, 64, 64, 9, 2),
          # fewer units than blocks: 2 units on 4 blocks, 6 on 9, 3 x 4 = 12 on 40
          (64, 64, 64, 64, 64, 32, 4, 8), (70, 64, 190, 64, 64, 64, 9, 1), (200, 64, 100, 64, 64, 32, 40, 2)]


@pytest.mark.parametrize("m,n,k,tm,tn,tk,programs,group", SHAPES)
def test_the_shared_product_is_the_product(m, n, k, tm, tn, tk, programs, group):
    """Kills: the first or last holder of a cut cell left out of the finishing sum (off by one in either
    bound: a NaN slot or a missing partial), a slot index of a block's second cut cell taken as its first,
    the counter compared before its own slices are added (nobody finishes: NaN), the units' split losing a
    slice at a block's edge, fewer units than blocks shared among all the blocks (an empty block inside a
    cut cell's holder range: its NaN slot read)."""
    a, b = _operands(m, n, k)
    cfg = dict(tm=tm, tn=tn, tk=tk, programs=programs, group=group)
    got = _run(a, b, cfg).astype(np.float64)
    want = a.astype(np.float64) @ b.astype(np.float64)
    assert np.isfinite(got).all()
    assert np.abs(got - want).max() <= 2e-2 * np.abs(want).max()


def _whole_cells(cells, slices, programs):
    """The cell indices (grouped order) stored by one block: walked, or shared but in one block's range."""
    walked = split_cells(cells, programs)
    units, first = (cells - walked) * slices, walked * slices
    whole = set(range(walked))
    for p in range(programs):
        u0, u1 = first + p * units // programs, first + (p + 1) * units // programs
        whole |= {c for c in range(walked, cells) if u0 <= c * slices and (c + 1) * slices <= u1}
    return whole


def test_whole_cells_are_the_walks_cells_bit_for_bit():
    """A walked cell, or a shared one a single block holds, is one accumulator over all of K, as the
    persistent walk's: equal bits there; the cut cells' sums are grouped otherwise, so some of their f16
    values differ. Kills: a cell stored at another cell's place (grouped order mixed up), a cut cell
    stored by one holder alone (far off: the tolerance), the units' cells counted from 0, not the walk's end."""
    m, n, k, tm = 256, 320, 960, 64  # 4 x 5 = 20 cells, 30 slices, 7 blocks: 7 walked, 13 x 30 units shared
    a, b = _operands(m, n, k, seed=4)
    cfg = dict(tm=tm, tn=tm, tk=32, programs=7, group=1)  # group 1: cell i is block row i // 5, column i % 5
    got = _run(a, b, cfg)
    walk = np.zeros((m, n), np.float16)
    launch(matmul_persistent, a, b, walk, **cfg)
    whole = _whole_cells(20, 30, 7)
    assert 7 < len(whole) < 20
    tiles = [np.s_[r * tm:(r + 1) * tm, c * tm:(c + 1) * tm] for r, c in map(lambda i: divmod(i, 5), range(20))]
    assert all(np.array_equal(got[tiles[i]], walk[tiles[i]]) for i in whole)
    assert not all(np.array_equal(got[tiles[i]], walk[tiles[i]]) for i in set(range(20)) - whole)
    assert np.abs(got.astype(np.float64) - walk).max() <= 1e-2 * np.abs(walk).max()


def test_counters_are_zeroed_each_call():
    """A workspace used once (its counters at each cell's slice count) serves the next call: stream_k zeroes
    them. Kills: the zeroing dropped (no counter then reaches the count again: C stays NaN)."""
    a, b = _operands(130, 200, 500, seed=1)
    cfg = dict(tm=64, tn=64, tk=32, programs=7, group=8)
    ws = np.full(workspace_words(130, 200, 64, 64, 7), np.nan, np.float32)
    first, second = np.full((130, 200), np.nan, np.float16), np.full((130, 200), np.nan, np.float16)
    stream_k(a, b, first, config=cfg, workspace=ws)
    stream_k(a, b, second, config=cfg, workspace=ws)
    assert np.isfinite(first).all() and np.array_equal(first, second)


@pytest.mark.parametrize("m,n,k,programs", [(200, 136, 300, 5), (65, 129, 2048, 9)])
def test_x_at_w_t(m, n, k, programs):
    """matmul_nt_stream_k: B [N, K] read through the transposing view. Kills: B's view not transposed (the
    shapes' N != K: a refusal or garbage), its ragged last block column unpadded (NaN past N's edge)."""
    a, b = _operands(m, n, k, seed=5)
    w = np.ascontiguousarray(b.T)
    got = _run(a, w, dict(tm=64, tn=64, tk=32, programs=programs, group=2), weight_t=True).astype(np.float64)
    want = a.astype(np.float64) @ b.astype(np.float64)
    assert np.isfinite(got).all() and np.abs(got - want).max() <= 2e-2 * np.abs(want).max()


def test_bf16():
    import ml_dtypes

    a, b = _operands(200, 136, 300, fmt=ml_dtypes.bfloat16, seed=2)
    got = _run(a, b, dict(tm=64, tn=64, tk=32, programs=5, group=2)).astype(np.float64)
    want = a.astype(np.float64) @ b.astype(np.float64)
    assert np.abs(got - want).max() <= 5e-2 * np.abs(want).max()


def test_refusals_name_the_argument():
    a, b = _operands(64, 64, 64)
    c = np.zeros((64, 64), np.float16)
    with pytest.raises(TileirError, match="ws"):
        launch(matmul_stream_k, a, b, c, np.zeros(10, np.float32), tm=64, tn=64, tk=32, programs=4)
    for x in (np.float32, np.float64):
        with pytest.raises(TileirError, match="float16 or bfloat16"):
            stream_k(a.astype(x), b.astype(x), c.astype(x))
    with pytest.raises(TileirError, match="programs"):
        stream_k(a, b, c, config=dict(programs=0))
    with pytest.raises(TileirError, match="fmt"):
        stream_k(a, b, c, config=dict(fmt="f16"))
    cfg = dict(tm=64, tn=64, tk=32, programs=4)
    short = np.full(workspace_words(64, 64, 64, 64, 4) - 1, 7.0, np.float32)
    for ws in (short, np.zeros(workspace_words(64, 64, 64, 64, 4), np.float16)):
        with pytest.raises(TileirError, match="workspace"):
            stream_k(a, b, c, config=cfg, workspace=ws)
    assert (short == 7.0).all()  # refused before its counters were touched


def test_the_default_call_takes_the_kernel_defaults():
    """stream_k with no config: 128 x 128 cells on 132 blocks, the workspace laid out for them (a tuned
    table's tm / tn / programs would not match it: the wrapper passes its own). 300 x 260: 9 cells of 4
    slices, 36 units on 132 blocks (fewer units than blocks)."""
    a, b = _operands(300, 260, 256, seed=6)
    c = np.full((300, 260), np.nan, np.float16)
    stream_k(a, b, c)
    want = a.astype(np.float64) @ b.astype(np.float64)
    assert np.abs(c - want).max() <= 2e-2 * np.abs(want).max()


def test_the_counter_update_is_acq_rel():
    """The cut cell's counter carries acq_rel to the dialect (relaxed would let the finishing block read a
    slot before its holder's stores are seen); other orders are refused by name."""
    text = matmul_stream_k.mlir(tm=64, tn=64, tk=32, programs=4)
    assert [line for line in text.splitlines() if "atomic_rmw_tko" in line and "acq_rel device" in line]
    from tileir import atomic_rmw, kernel
    from tileir.dtypes import I32
    from tileir.markers import Shared

    @kernel(grid=lambda: (1,))
    def bad(x=Shared(I32, ["N"])):
        atomic_rmw(x, "add", __import__("tileir").full([1], 0, I32), 1, order="seq_cst")

    with pytest.raises(TileirError, match="order"):
        bad.mlir()


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k", [(1000, 5000, 1000), (512, 11008, 4096), (129, 257, 511), (64, 64, 4096),
                                   (2048, 5000, 1000)])
def test_on_the_gpu(m, n, k):
    """Against torch, then 24 more calls with the workspace's slots poisoned with NaN before each, every
    answer bit for bit the first (the sum order is fixed, whoever arrives last): a finishing block that
    read a slot before its holder's stores were seen (the acq_rel ordering not holding) would read NaN or
    differ. Odd calls take the x @ W^T form. 1000 x 5000 x 1000 has 120 cut cells a call."""
    torch = pytest.importorskip("torch")
    g = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randn(m, k, device="cuda", generator=g, dtype=torch.float16) / k ** 0.5
    b = torch.randn(k, n, device="cuda", generator=g, dtype=torch.float16)
    want = (a.float() @ b.float())
    w = b.t().contiguous()
    for cfg in (dict(tm=128, tn=128, programs=132), dict(tm=64, tn=64, tk=32, programs=132, group=8)):
        words = workspace_words(m, n, cfg["tm"], cfg["tn"], cfg["programs"])
        ws = torch.empty(words, device="cuda")
        first: dict = {}
        for call in range(25):
            ws.fill_(float("nan"))
            c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
            stream_k(a, w if call % 2 else b, c, config=cfg, workspace=ws, weight_t=bool(call % 2))
            if call % 2 not in first:  # each form's first answer (A @ B, A @ W^T)
                err = float((c.float() - want).abs().max()) / float(want.abs().max())
                assert err < 1e-2, (cfg, err)
                first[call % 2] = c
            assert torch.equal(c, first[call % 2]), (cfg, call)


def test_the_parts_make_the_whole():
    """parts=WALKED then parts=SHARED into one C answer what both in one launch do, bit for bit, and each alone
    leaves the other's cells as they were (NaN): what bench/stream_k_probe.py times apart. Kills: a part that
    writes the other's cells, a shared part that depends on the walked one having run."""
    from tileir.kernels.matmul_stream_k import SHARED, WALKED

    a, b = _operands(256, 320, 960, seed=8)
    cfg = dict(tm=64, tn=64, tk=32, programs=7, group=1)
    whole = _run(a, b, cfg)
    c = np.full((256, 320), np.nan, np.float16)
    words = workspace_words(256, 320, 64, 64, 7)
    stream_k(a, b, c, config=dict(cfg, parts=WALKED), workspace=np.full(words, np.nan, np.float32))
    assert 0 < np.isnan(c).mean() < 1  # the walked cells only
    stream_k(a, b, c, config=dict(cfg, parts=SHARED), workspace=np.full(words, np.nan, np.float32))
    assert np.array_equal(c, whole)
    with pytest.raises(TileirError, match="parts"):
        stream_k(a, b, c, config=dict(cfg, parts=0))
