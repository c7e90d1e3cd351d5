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
    # the case's configuration: 64 x 64 cells on 3 blocks, so each block walks several cells of a ragged
    # grid (200 x 136: 4 x 3 cells; 1 x 7: one cell, two blocks idle)
    "matmul_persistent_f16": [(200, 136, 300), (1, 7, 65), (129, 257, 33)],
    "matmul_persistent_bf16": [(130, 70, 100)],
    "bmm_persistent_f16": [(3, 100, 70, 65), (1, 1, 7, 33), (5, 65, 129, 40)],  # 5 blocks, ragged cells
    "bmm_persistent_bf16": [(2, 70, 130, 40)],
    "matmul_nt_persistent_f16": [(200, 136, 300), (1, 7, 65), (129, 257, 33)],
    "matmul_nt_persistent_bf16": [(130, 70, 100)],
    "matmul_3xtf32": [(200, 136, 300), (1, 7, 65), (64, 64, 64)],
    "matmul_3xtf32_nt": [(200, 136, 300), (1, 7, 65), (129, 257, 97)],
    # 64 x 64 cells on 5 blocks: walked waves and cut cells (200 x 136 x 300), fewer units than blocks (1 x 7)
    "matmul_stream_k_f16": [(200, 136, 300), (1, 7, 65), (129, 257, 511)],
    "matmul_stream_k_bf16": [(130, 70, 100)],  # f32 accuracy: 1e-5 of the f64 product
}


@pytest.mark.parametrize("name,size", [(n, s) for n, ss in SIZES.items() for s in ss])
def test_library_kernel_matches_numpy(name, size):
    err, ok = run_case(CASES[name], size, "host", seed=7)
    assert ok, f"{name} {size}: max error {err}"


def test_every_library_kernel_is_exercised():
    from tests.test_backward import SIZES as BACKWARD  # the training kernels' own table
    from tests.test_kernels_norms_attention_reductions import SIZES as NORMS  # their own table
    from tests.test_kernels_scans_histogram_i8 import SIZES as SCANS  # their own table
    from tests.test_swiglu import SIZES as GATE  # its own table

    assert set(SIZES) | set(NORMS) | set(SCANS) | set(BACKWARD) | set(GATE) == set(CASES)


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


def _instrs(body):
    for ins in body:
        yield ins
        for f in ("body", "on_true", "on_false"):
            yield from _instrs(getattr(ins, f, ()))


@pytest.mark.parametrize("fmt", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("one_chunk", [True, False])
def test_softmax_divides_once_a_row_and_exponentiates_by_exp2(fmt, one_chunk):
    """The measured arithmetic (kernels/softmax.py): a lane's e^(x - m) is one exp2, y is e times
    the row's 1 / l. Kills: e / l back (a division a lane: 0.55-0.70x torch on the H200), exp back."""
    from tileir.kernels import softmax

    k = softmax.kernel(fmt=fmt, max_tile=1024, rows=2, one_chunk=one_chunk)
    ops = [(i.op, tuple(i.ty.shape)) for i in _instrs(k.body) if type(i).__name__ in ("FloatUn", "FloatBin")]
    divides = [s for op, s in ops if op == "divf"]
    assert divides and all(s == (2, 1) for s in divides), divides  # [rows, 1]: once a row
    assert not [s for op, s in ops if op == "exp"]
    assert [s for op, s in ops if op == "exp2" and s == (2, 1024)]


@pytest.mark.parametrize("fmt,npd", [("f16", np.float16), ("bf16", None), ("f32", np.float32)])
@pytest.mark.parametrize("one_chunk", [True, False])
def test_softmax_past_the_row_reads_nothing(fmt, npd, one_chunk):
    """Rows of 1000 lanes in 1024-lane tiles, 2 rows a block, 3 rows (a block half past R): a
    16-bit row is padded with zero and a select makes its tail -inf. Kills: the select dropped
    (exp(0 - m) of 24 lanes joins the sum), the mask's limit off by a tile."""
    import ml_dtypes

    from tileir.kernels import softmax

    npd = npd or ml_dtypes.bfloat16
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((3, 1000)) * 4 - 30).astype(npd)  # a zero lane would outweigh them all
    y = np.zeros_like(x)
    softmax.run_host(x, y, fmt=fmt, max_tile=1024, rows=2, one_chunk=one_chunk)
    xd = x.astype(np.float64)
    e = np.exp(xd - xd.max(axis=1, keepdims=True))
    want = e / e.sum(axis=1, keepdims=True)
    tol = 1e-6 if fmt == "f32" else 1e-2
    assert np.abs(y.astype(np.float64) - want).max() <= tol * want.max()


@pytest.mark.parametrize("name, m, n, k", [("matmul_f16", 1, 70, 1000), ("matmul_f16", 16, 130, 257),
                                           ("matmul_bf16", 3, 200, 140), ("matmul_tf32", 7, 130, 100)])
def test_the_narrow_rows_tiles_answer_right(name, m, n, k):
    """The tiles heuristics.NARROW_ROWS gives products of at most 16 rows (16-row cells, K slices of
    128 / 64, columns of 64 or 128), on the host reference at sizes with tails in every dimension: the
    suite checks them on the GPU at its own shapes only. Kills: a 16-row cell that drops or repeats
    rows, a partial last K slice read wrong."""
    from tileir.heuristics import rule

    case = CASES[name]
    cfg = rule(name, "sm_90", {"M": 16, "N": 4096, "K": 4096})
    assert cfg["tm"] == 16
    rng = np.random.default_rng(3)
    args = case.inputs((m, n, k), rng)
    for tn in (64, 128):
        out = [a.copy() for a in args]
        case.kernel.run_host(*out, **dict(cfg, tn=tn))
        want = case.expected(args)
        assert case.check(out[2], want)[1], (name, m, n, k, tn)


def test_the_persistent_products_refuse_a_group_of_zero():
    """group 0 is matmul's "no grouped order", but the persistent walk divides by it (the host reference left
    cells unwritten). Kills: the check dropped, or reaching group 1."""
    from tileir.errors import TileirError
    from tileir.kernels import bmm_persistent, matmul_persistent

    for kern in (matmul_persistent, bmm_persistent):
        with pytest.raises(TileirError, match="group=0") as e:
            kern.program(group=0)
        assert e.value.fix.startswith("group=1")
        kern.program(group=1)
