"""matmul_3xtf32 (B's tf32 halves first, kernels/matmul_3xtf32.py): the same sums in the same order as the
one-kernel 3xtf32 product, so the host reference answers both bit for bit; the halves themselves; and on a
GPU the answer against an f64 product."""

import numpy as np
import pytest

from tileir.kernels import matmul_tf32, product_3xtf32, tf32_halves
from tileir.kernels.launching import launch

U = 2.0 ** -24  # f32's unit roundoff


def _operands(m, n, k, seed=0, positive=False):
    g = np.random.default_rng(seed)
    if positive:  # the errors pile up
        return g.uniform(0, 1, (m, k)).astype(np.float32), g.uniform(0, 1, (k, n)).astype(np.float32)
    return (g.standard_normal((m, k)) / np.sqrt(k)).astype(np.float32), g.standard_normal((k, n)).astype(np.float32)


@pytest.mark.parametrize("m,n,k,group", [(200, 136, 300, 2), (64, 64, 64, 8), (130, 70, 97, 3), (1, 40, 33, 1)])
def test_the_halves_product_is_the_one_kernel_product_bit_for_bit(m, n, k, group):
    """Kills: a cross term dropped or doubled, the halves swapped (lo read as hi), A's lo taken from A instead of
    A - hi, the fresh accumulator chained into the long one, a ragged edge cell read past its padding."""
    a, b = _operands(m, n, k)
    cfg = dict(tm=64, tn=64, tk=32, group=group)
    got, want = np.zeros((m, n), np.float32), np.zeros((m, n), np.float32)
    product_3xtf32(a, b, got, config=cfg)
    launch(matmul_tf32, a, b, want, precision="3xtf32", **cfg)
    assert np.array_equal(got, want)


def test_the_halves_are_tf32_and_sum_to_b():
    """hi keeps 10 mantissa bits (the low 13 of the f32 zero), lo = tf32(b - hi), and hi + lo is b to within
    lo's own rounding. Kills: lo taken from b (hi + lo = 2b), hi not rounded, a tail lane left unwritten."""
    b = np.random.default_rng(1).standard_normal(3001).astype(np.float32)  # not a whole number of tiles
    hi, lo = np.full_like(b, np.nan), np.full_like(b, np.nan)
    launch(tf32_halves, b, hi, lo)
    assert not (hi.view(np.uint32) & 0x1FFF).any() and not (lo.view(np.uint32) & 0x1FFF).any()
    assert np.all(np.abs(b.astype(np.float64) - hi - lo) <= np.abs(b) * 2.0 ** -21)
    assert np.all(np.abs(b - hi) <= np.abs(b) * 2.0 ** -11) and np.any(hi != b)


def test_f32_accurate_where_tf32_is_not():
    """Kills: the lo halves read as zeros (the product is then tf32's, > 500 u), a cross term dropped."""
    a, b = _operands(70, 50, 200, seed=2, positive=True)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    scale = np.abs(a64) @ np.abs(b64)
    got, tf32 = np.zeros((70, 50), np.float32), np.zeros((70, 50), np.float32)
    product_3xtf32(a, b, got, config=dict(tm=32, tn=32, tk=16, group=2))
    launch(matmul_tf32, a, b, tf32, precision="tf32", tm=32, tn=32, tk=16)
    err = lambda c: float((np.abs(c - a64 @ b64) / scale).max() / U)  # noqa: E731
    assert err(tf32) > 500 and err(got) < 8


def test_given_halves_are_used_and_written():
    """Kills: the given halves left unwritten (a fresh pair made instead), a half written off its place."""
    a, b = _operands(40, 24, 48, seed=3)
    halves = np.zeros((2, 48, 24), np.float32)
    got = np.zeros((40, 24), np.float32)
    product_3xtf32(a, b, got, halves=halves, config=dict(tm=32, tn=32, tk=16, group=1))
    assert np.abs(halves[0].astype(np.float64) + halves[1] - b).max() <= np.abs(b).max() * 2.0 ** -21
    assert not (halves[0].view(np.uint32) & 0x1FFF).any() and np.any(halves[1] != 0)
    assert np.abs(got - a.astype(np.float64) @ b.astype(np.float64)).max() < 1e-5


def test_bad_halves_and_b_are_refused_by_name():
    """A wrong shape or format, or halves with gaps (a reshape would copy them and the product read stale
    values), is a TileirError naming ``halves``; a 1-D B names ``b``."""
    from tileir import TileirError

    a, b = _operands(8, 6, 16, seed=6)
    c = np.zeros((8, 6), np.float32)
    for bad in (np.zeros((2, 16, 6)), np.zeros((3, 16, 6), np.float32), np.zeros((2, 16, 12), np.float32)[:, :, :6]):
        with pytest.raises(TileirError, match="halves"):
            product_3xtf32(a, b, c, halves=bad)
    with pytest.raises(TileirError, match="matrix B"):
        product_3xtf32(a, b[0], c)


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k", [(4096, 4096, 4096), (1000, 5000, 1000), (129, 257, 511)])
def test_on_the_gpu_against_f64(m, n, k):
    """Kills on the device what the host cannot see: halves read with the wrong layout or rounding, a tail
    cell of a ragged shape, a K slice dropped (each an error far past torch's f32 product's)."""
    torch = pytest.importorskip("torch")
    a, b = (torch.from_numpy(x).cuda() for x in _operands(m, n, k, seed=4))
    c = torch.empty(m, n, device="cuda", dtype=torch.float32)
    from tileir.heuristics import HALVES_CELL

    product_3xtf32(a, b, c, config=HALVES_CELL)  # the cells gemm runs
    _within_torch_f32_error(torch, a, b, c)


def _within_torch_f32_error(torch, a, b, c):
    """c's largest error against the f64 product, over max(|a| @ |b|), is at most 2x torch's f32 product's
    (cuBLAS without tf32: 3xtf32 is to be no worse than it, give or take 2x), or 4 u."""
    want = a.double() @ b.double()
    scale = (a.double().abs() @ b.double().abs()).max()
    saved = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        f32 = torch.matmul(a, b)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = saved
    mine, theirs = (float((x.double() - want).abs().max() / scale) for x in (c, f32))
    assert mine <= max(4 * U, 2 * theirs)


def test_gemm_runs_a_one_pass_3xtf32_of_1000_rows_from_the_halves():
    """gemm's one-pass 3xtf32 of at least HALVES_LEAST_ROWS rows on sm_90 is product_3xtf32 at
    heuristics.HALVES_CELL (bit for bit), not the one-kernel form (whose fresh accumulator is rounded every 32
    of K, not 64: a different answer here); fewer rows, tf32, and a call without a GPU keep the one kernel.
    Kills: the routing dropped, the halves at other K slices than the rule's, routing by precision None or tf32,
    routing under HALVES_LEAST_ROWS."""
    from tileir.heuristics import HALVES_CELL, HALVES_LEAST_ROWS
    from tileir.kernels import gemm

    def three(m, precision="3xtf32", gpu="sm_90"):
        a, b = _operands(m, 24, 640, seed=5, positive=True)
        got, halves, one_kernel = (np.zeros((m, 24), np.float32) for _ in range(3))
        gemm(a, b, got, precision=precision, gpu=gpu)
        product_3xtf32(a, b, halves, config=HALVES_CELL)
        launch(matmul_tf32, a, b, one_kernel, precision=precision)
        return got, halves, one_kernel

    got, halves, one_kernel = three(HALVES_LEAST_ROWS)
    assert np.array_equal(got, halves) and not np.array_equal(got, one_kernel)
    for m, precision, gpu in ((HALVES_LEAST_ROWS - 1, "3xtf32", "sm_90"), (HALVES_LEAST_ROWS, "3xtf32", None),
                              (HALVES_LEAST_ROWS, "tf32", "sm_90")):
        got, halves, one_kernel = three(m, precision, gpu)
        assert np.array_equal(got, one_kernel) and not np.array_equal(got, halves)


def test_transposed_halves_are_b_halves_transposed():
    """tf32_halves_t writes [N, K] hi and lo that are tf32_halves' [K, N] ones transposed, every cell of a
    ragged shape included. Kills: the halves not transposed, a ragged edge cell left unwritten (NaN), lo taken
    from x instead of x - hi."""
    from tileir.kernels.matmul_3xtf32 import tf32_halves_t

    b = np.random.default_rng(7).standard_normal((97, 70)).astype(np.float32)
    hi, lo = np.full_like(b, np.nan), np.full_like(b, np.nan)
    launch(tf32_halves, b.reshape(-1), hi.reshape(-1), lo.reshape(-1))
    hit, lot = np.full(b.T.shape, np.nan, np.float32), np.full(b.T.shape, np.nan, np.float32)
    launch(tf32_halves_t, b, hit, lot, tk=32, tn=64)
    assert np.array_equal(hit, hi.T) and np.array_equal(lot, lo.T)


@pytest.mark.parametrize("fresh", [1, 2])
@pytest.mark.parametrize("m,n,k", [(130, 70, 97), (64, 64, 64), (1, 40, 33), (70, 50, 200)])
def test_k_major_fresh_form_is_the_halves_product_bit_for_bit(m, n, k, fresh):
    """product_3xtf32(k_major=True) with fresh accumulators sums each K slice's three products in the B-halves
    kernel's order and adds the slices to the f32 one in K's order, ``fresh`` of them an iteration and the rest
    one at a time: the host reference answers both forms' bits alike (2, 2, 4 and 7 slices of 32: at 7 with
    fresh=2 one is left over). Kills: a pair's second slice taken at the wrong index, the slices left over
    dropped or added twice, a cross term dropped, A's or B's lo read as hi, B's halves read untransposed, the
    products' order changed."""
    a, b = _operands(m, n, k, seed=8, positive=True)
    cfg = dict(tm=64, tn=64, tk=32, group=2)
    got, want = np.full((m, n), np.nan, np.float32), np.zeros((m, n), np.float32)
    product_3xtf32(a, b, got, k_major=True, config=dict(cfg, fresh=fresh))
    product_3xtf32(a, b, want, config=cfg)
    assert np.array_equal(got, want)


@pytest.mark.parametrize("m,n,k", [(130, 70, 97), (1, 40, 33)])
def test_k_major_on_one_accumulator_is_f32_accurate_on_the_host(m, n, k):
    """fresh=0 (every product on the tensor cores' accumulator) within 8 u of sum |a||b| of the f64 product on
    the host reference, positive operands, where plain tf32 is past 500 u. Kills: a cross term dropped, a
    slice skipped. (Its error on the device is the tensor cores' rounding: bench/split_b_probe.py records it.)"""
    a, b = _operands(m, n, k, seed=8, positive=True)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    got = np.full((m, n), np.nan, np.float32)
    product_3xtf32(a, b, got, k_major=True, config=dict(tm=64, tn=64, tk=32, group=2, fresh=0))
    assert float((np.abs(got - a64 @ b64) / (np.abs(a64) @ np.abs(b64))).max() / U) < 8


def test_k_major_workspaces_are_used_and_checked():
    """Given a_halves [2, M, K] and halves [2, N, K] are written (A's halves and B's transposed); a
    [2, K, N] halves in the k-major form, and a negative fresh, are refused by name. Kills: fresh workspaces
    made instead of the given ones, the transposed halves' shape not checked, fresh < 0 answering zeros."""
    from tileir import TileirError

    a, b = _operands(40, 24, 48, seed=9)
    ah, bh = np.zeros((2, 40, 48), np.float32), np.zeros((2, 24, 48), np.float32)
    got = np.zeros((40, 24), np.float32)
    product_3xtf32(a, b, got, k_major=True, a_halves=ah, halves=bh, config=dict(tm=32, tn=32, tk=16, group=1))
    assert np.abs(ah[0].astype(np.float64) + ah[1] - a).max() <= np.abs(a).max() * 2.0 ** -21
    assert np.abs(bh[0].astype(np.float64) + bh[1] - b.T).max() <= np.abs(b).max() * 2.0 ** -21
    assert np.abs(got - a.astype(np.float64) @ b.astype(np.float64)).max() < 1e-5
    with pytest.raises(TileirError, match=r"halves is a .*\[2, 48, 24\].*\[2, 24, 48\]"):  # the wrapper's own check
        product_3xtf32(a, b, got, k_major=True, halves=np.zeros((2, 48, 24), np.float32))
    with pytest.raises(TileirError, match="K differ"):  # B's K against A's, before any workspace is asked for
        product_3xtf32(a, b[:40], got[:, :24], k_major=True)
    with pytest.raises(TileirError, match="fresh"):  # no slices an iteration would sum nothing: C = 0
        product_3xtf32(a, b, got, k_major=True, config=dict(fresh=-1))


@pytest.mark.gpu
@pytest.mark.parametrize("fresh", [1, 2])
@pytest.mark.parametrize("m,n,k", [(4096, 4096, 4096), (1000, 5000, 1000), (129, 257, 575)])
def test_k_major_on_the_gpu_against_f64(m, n, k, fresh):
    """The k-major form with fresh accumulators on the device, positive operands: within 2x torch's f32
    product's error (or 4 u). Kills what the host cannot see: a transposed view read with the wrong layout, a
    ragged tail cell, a pair's slices summed where the tensor cores round a long sum, the slice past K of an
    odd count (575: 9 slices of 64) not reading zeros."""
    torch = pytest.importorskip("torch")
    a, b = (torch.from_numpy(x).cuda() for x in _operands(m, n, k, seed=4, positive=True))
    c = torch.empty(m, n, device="cuda", dtype=torch.float32)
    product_3xtf32(a, b, c, k_major=True, config=dict(tm=128, tn=128, tk=64, group=8, warps=8, fresh=fresh))
    _within_torch_f32_error(torch, a, b, c)


def test_k_major_defaults_answer_gemms_halves_cell_bit_for_bit():
    """At its defaults (slices of 64, a fresh accumulator each) the k-major form gives gemm's B-halves product at
    heuristics.HALVES_CELL bit for bit on the host reference, so routing gemm to it would change no host answer.
    Kills: the default slice drifting from HALVES_CELL's 64 (the fresh sums rounded every 32 of K), the default
    summing on the tensor cores' one accumulator (fresh=0). (How many slices an iteration does not change the
    bits: the adds run in K's order either way.)"""
    from tileir.heuristics import HALVES_CELL

    a, b = _operands(70, 50, 300, seed=10, positive=True)
    got, want = np.zeros((70, 50), np.float32), np.zeros((70, 50), np.float32)
    product_3xtf32(a, b, got, k_major=True, config=dict(tm=64, tn=64, group=2))
    product_3xtf32(a, b, want, config=dict(HALVES_CELL, tm=64, tn=64, group=2))
    assert np.array_equal(got, want)


def test_k_major_takes_a_linear_weight_as_it_lies():
    """weight_t: B given as W [N, K] (C = A @ W^T) gives the bits of the same product with B = W^T given
    [K, N]; without k_major it is refused by name. Kills: W's halves transposed a second time (a wrong
    product), W's shape read as [K, N] (N and K swapped)."""
    from tileir import TileirError

    a, b = _operands(70, 50, 97, seed=11, positive=True)
    w = np.ascontiguousarray(b.T)
    got, want = np.zeros((70, 50), np.float32), np.zeros((70, 50), np.float32)
    cfg = dict(tm=64, tn=64, tk=32, group=2)
    product_3xtf32(a, w, got, k_major=True, weight_t=True, config=cfg)
    product_3xtf32(a, b, want, k_major=True, config=cfg)
    assert np.array_equal(got, want)
    with pytest.raises(TileirError, match="weight_t"):
        product_3xtf32(a, w, got, weight_t=True)
