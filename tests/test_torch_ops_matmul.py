"""tileir.ops' matrix products on CPU tensors (the host reference runs the GPU's programs):
f32 products by torch's precision setting or an explicit ``precision``, split-K where the
library's rule says so, and ``scaled_mm`` (fp8, per-tensor scales) against ``torch._scaled_mm``
-- each at small odd sizes, with its refusals; and (marked gpu) the small-M split path on a GPU
the rule knows."""

from __future__ import annotations

import importlib
from unittest import mock

import ml_dtypes
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tileir.ops as tops  # noqa: E402
from tileir import TileirError  # noqa: E402
from tileir.heuristics import matmul_split  # noqa: E402

gemm_mod = importlib.import_module("tileir.kernels.gemm")  # the module (tileir.kernels.gemm is also its function)


@pytest.fixture
def torch_precision():
    """Sets torch's f32 matmul precision for one test and puts the old one back (through the
    legacy setter, which also resets torch's newer per-backend setting)."""
    old = torch.get_float32_matmul_precision()
    yield torch.set_float32_matmul_precision
    torch.set_float32_matmul_precision(old)


def _err(c, a, b):
    """max |c - a @ b| over max (|a| @ |b|), the product in f64: the error in units of the sum's scale."""
    a64, b64 = a.double(), b.double()
    return float((c.double() - a64 @ b64).abs().max() / (a64.abs() @ b64.abs()).max())


# ---- f32: torch's precision setting ------------------------------------------------------------


def test_torch_setting_picks_the_f32_precision(torch_precision):
    torch_precision("highest")
    assert tops.f32_precision() == "3xtf32"  # f32 accuracy on tensor cores (ieee: by name)
    torch_precision("high")  # TF32, what torch itself runs on CUDA for "high"
    assert tops.f32_precision() == "tf32"
    torch_precision("medium")
    assert tops.f32_precision() == "tf32"
    assert tops.f32_precision("3xtf32") == "3xtf32"  # the keyword wins over the setting
    torch_precision("highest")
    torch.backends.cuda.matmul.fp32_precision = "tf32"  # torch's newer setting, alone
    assert tops.f32_precision() == "tf32"
    torch.backends.cuda.matmul.fp32_precision = "ieee"
    assert tops.f32_precision() == "3xtf32"
    assert tops.f32_precision("ieee") == "ieee"


# errors in units of max(|a| @ |b|) at [37, 300] x [300, 53]: f32 products about 1e-7 (torch's own
# f32 matmul is there too), tf32's 10-bit mantissas about 1e-4 (the bound 2e-3: a few units of 2^-11)
_IEEE_CLASS, _TF32_LOW, _TF32_HIGH = 2e-6, 1e-5, 2e-3


@pytest.mark.parametrize("setting, precision, f32_class", [
    ("highest", None, True), ("high", None, False), ("medium", None, False),
    ("high", "ieee", True), ("highest", "tf32", False), ("highest", "3xtf32", True), ("high", "3xtf32", True)])
def test_f32_products_by_setting_and_keyword(torch_precision, setting, precision, f32_class):
    torch_precision(setting)
    torch.manual_seed(0)
    a, b = torch.randn(37, 300), torch.randn(300, 53)
    c = tops.matmul(a, b, precision)
    assert c.dtype == torch.float32 and c.shape == (37, 53)
    err = _err(c, a, b)
    if f32_class:
        assert err < _IEEE_CLASS
        assert err <= 4 * _err(a @ b, a, b) + 1e-7  # as good as torch's f32 matmul, within a small factor
    else:
        assert _TF32_LOW < err < _TF32_HIGH  # tf32 ran: worse than f32, within tf32's bound


def test_f32_gradients_multiply_as_the_forward_did(torch_precision):
    """The backward takes the forward's precision even where torch's setting changed between them
    (an f32-accurate dA, dB after "high" is set). Kills: the backward's tf32-only matmul_nt/_tn."""
    torch.manual_seed(0)
    a = torch.randn(3, 7, 150, requires_grad=True)
    b = torch.randn(150, 11, requires_grad=True)
    torch_precision("highest")
    y = tops.matmul(a, b)
    torch_precision("high")
    dy = torch.randn(y.shape)
    (y * dy).sum().backward()
    a64, b64, dy64 = a.detach().double(), b.detach().double(), dy.double()
    want_da = dy64 @ b64.t()
    want_db = a64.reshape(-1, 150).t() @ dy64.reshape(-1, 11)
    assert float((a.grad.double() - want_da).abs().max() / want_da.abs().max()) < 1e-5
    assert float((b.grad.double() - want_db).abs().max() / want_db.abs().max()) < 1e-5
    a.grad = b.grad = None
    (tops.matmul(a, b) * dy).sum().backward()  # now under "high": tf32 both ways
    err = float((a.grad.double() - want_da).abs().max() / want_da.abs().max())
    assert 1e-5 < err < 2e-2


def test_a_linear_weight_in_f32_is_read_in_place_only_in_tf32(torch_precision):
    """x @ W.T: matmul_nt reads W in place, in tf32 only; the other precisions copy W.T first
    (the answer then has their accuracy)."""
    torch.manual_seed(0)
    x, w = torch.randn(6, 40), torch.randn(9, 40)
    with mock.patch.object(torch.Tensor, "contiguous", side_effect=AssertionError("copied")):
        got = tops.matmul(x, w.t(), "tf32")
    assert _TF32_LOW < _err(got, x, w.t()) < _TF32_HIGH
    torch_precision("highest")
    assert _err(tops.matmul(x, w.t()), x, w.t()) < _IEEE_CLASS


def test_a_column_slice_is_made_dense_before_the_product():
    """A row pitch wider than the row takes a product's loads off TMA (7-11x slower on the H200:
    bench/results/unaligned_slices_h200.json), so tileir.ops' products pass such operands on as
    contiguous copies where more than 64 rows or columns read them, and contiguous ones as they are.
    Kills: a slice passed in place (either operand, the gemm path, the Linear path's W, the weight
    gradient's A^T), a contiguous operand copied, an operand read once (16 rows) copied, the reuse
    counts of an operand and its partner swapped, a wrong answer from the copy."""
    torch.manual_seed(0)
    a = torch.randn(70, 80).half()[:, 5:45]  # rows 80 apart
    b = torch.randn(40, 150).half()[:, 3:73]
    w = torch.randn(70, 70).half()[:, 10:50]  # a Linear weight [N, K], itself a slice
    seen = []
    real_gemm, real_run, real_nt = tops._gemm_kernel, tops._run, tops._matmul_nt_any

    def gemm(x, y, out, **kw):
        seen.append((x, y))
        return real_gemm(x, y, out, **kw)

    def nt(x, y, out, **kw):
        seen.append((x, y))
        return real_nt(x, y, out, **kw)

    def run(kern, *args, **kw):
        seen.append(args[:2])
        return real_run(kern, *args, **kw)

    with mock.patch.object(tops, "_gemm_kernel", gemm), mock.patch.object(tops, "_run", run), \
            mock.patch.object(tops, "_matmul_nt_any", nt):
        got = tops.matmul(a, b)
        lin = tops.matmul(a, w.t())
        dense_a, dense_b = a.contiguous(), b.contiguous()
        tops.matmul(dense_a, dense_b)
    assert all(t.is_contiguous() for pair in seen for t in pair)
    assert seen[-1][0] is dense_a and seen[-1][1] is dense_b
    assert _err(got, a, b) < 2e-3 and _err(lin, a, w.t()) < 2e-3
    seen.clear()
    with mock.patch.object(tops, "_gemm_kernel", gemm), mock.patch.object(tops, "_run", run), \
            mock.patch.object(tops, "_matmul_nt_any", nt):
        few = tops.matmul(a[:16], b)  # B read by 16 rows: in place
        few_lin = tops.matmul(a[:16], w.t())  # the Linear path's W read by 16 rows: in place, A copied
    assert seen[0][1] is b and _err(few, a[:16], b) < 2e-3
    x, wt = seen[1]
    assert x.is_contiguous() and wt.stride() == w.stride() and wt.data_ptr() == w.data_ptr()
    assert _err(few_lin, a[:16], w.t()) < 2e-3
    # the backward's dB = A^T @ dC (matmul_tn): A [70 rows, 40] sliced, read by dC's 70 columns: copied
    base_a = torch.randn(70, 80).half().requires_grad_()
    base_b = torch.randn(40, 150).half().requires_grad_()
    tn_args = []
    real_tn = tops._matmul_tn_any

    def tn(x, y, out, **kw):
        tn_args.append((x, y))
        return real_tn(x, y, out, **kw)

    with mock.patch.object(tops, "_matmul_tn_any", tn):
        tops.matmul(base_a[:, 5:45], base_b[:, 3:73]).float().sum().backward()
    assert len(tn_args) == 1 and all(t.is_contiguous() for t in tn_args[0])
    want = torch.ones(70, 70, dtype=torch.float64)
    got_db = base_b.grad[:, 3:73].double()
    assert float((got_db - base_a[:, 5:45].detach().double().t() @ want).abs().max()) < 0.5


@pytest.mark.parametrize("precision", ["fp64", "TF32", ""])
def test_an_unknown_precision_is_refused(precision):
    for dtype in (torch.float32, torch.float16):
        with pytest.raises(TileirError, match="precision=") as e:
            tops.matmul(torch.randn(4, 5, dtype=dtype), torch.randn(5, 3, dtype=dtype), precision)
        assert e.value.what == "matmul" and "'3xtf32'" in e.value.fix


# ---- split-K -----------------------------------------------------------------------------------


def _as_on(gpu):
    """gemm's plan as on ``gpu`` for host tensors too (the rule answers one pass without a GPU)."""
    real = gemm_mod.plan
    return mock.patch.object(gemm_mod, "plan",
                             lambda a, b, g=None, precision="tf32", fmt=None: real(a, b, gpu, precision, fmt))


@pytest.mark.parametrize("dtype, shape, tol", [
    (torch.float16, (5, 700, 3100), 2e-3), (torch.bfloat16, (3, 1100, 2100), 1e-2),
    (torch.float32, (7, 1000, 3000), 2e-6)])
def test_split_k_where_the_rule_says_it_pays(dtype, shape, tol):
    """A small M with a long K: the rule for sm_90 splits K, and tileir.ops.matmul runs the split
    (matmul_partial + splitk_reduce) with the rule's split count and tiles; answers as torch's
    product, relative to the sum's scale (f16/bf16: their rounding of C; f32 in 3xtf32)."""
    m, n, k = shape
    torch.manual_seed(0)
    a, b = (torch.randn(m, k) / 30).to(dtype), torch.randn(k, n).to(dtype)
    f32 = dtype == torch.float32
    fmt = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16"}[dtype]
    want = matmul_split("sm_90", fmt, m, n, k, precision="3xtf32" if f32 else "tf32")
    assert want["splits"] > 1
    with _as_on("sm_90"), mock.patch.object(gemm_mod, "matmul_split_k", wraps=gemm_mod.matmul_split_k) as spy:
        got = tops.matmul(a, b, "3xtf32" if f32 else None)
    assert spy.call_count == 1
    assert spy.call_args.kwargs["splits"] == want["splits"] and spy.call_args.kwargs["config"] == want["config"]
    assert got.dtype == dtype and got.shape == (m, n)
    assert _err(got, a, b) < tol


def test_one_pass_where_the_rule_says_so():
    torch.manual_seed(0)
    a, b = torch.randn(37, 45).half(), torch.randn(45, 29).half()  # small: launch-bound, one pass
    with _as_on("sm_90"), mock.patch.object(gemm_mod, "matmul_split_k") as spy:
        got = tops.matmul(a, b)
    assert spy.call_count == 0
    assert _err(got, a, b) < 2e-3
    a = torch.randn(5, 3100).half()
    with mock.patch.object(gemm_mod, "matmul_split_k") as spy:  # CPU tensors, no GPU named: one pass
        tops.matmul(a, torch.randn(3100, 700).half())
    assert spy.call_count == 0



def test_the_persistent_walk_where_the_rule_says_so():
    """Where gemm's plan walks (heuristics.matmul_walk, as on sm_90), tileir.ops.matmul runs
    matmul_persistent with the plan's configuration and answers as torch's product does; here the
    walk's cells are shrunk (64 x 64, 3 programs) so the host reference runs a ragged walk quickly.
    Kills: the plan's walk ignored (the one-cell kernel runs), its configuration not passed, or the
    format left out (bf16 operands written as f16)."""
    small = {"tm": 64, "tn": 64, "tk": 32, "warps": 8, "group": 2, "programs": 3}
    for dtype, tol in ((torch.float16, 2e-3), (torch.bfloat16, 1e-2)):
        torch.manual_seed(0)
        a, b = torch.randn(150, 70).to(dtype), torch.randn(70, 200).to(dtype)
        with _as_on("sm_90"), mock.patch.object(gemm_mod, "matmul_walk", lambda *args: dict(small)), \
                mock.patch.object(gemm_mod, "launch", wraps=gemm_mod.launch) as spy:
            got = tops.matmul(a, b)
        assert spy.call_count == 1  # on the host reference: launch takes the kernel and its configuration
        assert spy.call_args.args[0] is gemm_mod.matmul_persistent
        assert {k: spy.call_args.kwargs[k] for k in small} == small
        assert spy.call_args.kwargs["fmt"] == {torch.float16: "f16", torch.bfloat16: "bf16"}[dtype]
        assert got.dtype == dtype and _err(got, a, b) < tol


def test_x_at_w_t_walks_where_the_rule_says_so():
    """kernels.matmul_nt_any (tileir.ops.matmul of x and a weight's W.t()): matmul_nt_persistent where
    heuristics.matmul_walk gives a configuration (shrunk here to a ragged walk of 64 x 64 cells on 3
    programs, so the host reference runs it quickly), matmul_nt elsewhere; both answer as x @ W^T.
    Kills: the walk's configuration or format not passed, the walk taken where the rule gives none, the
    rule asked without weight_t (the row-major product's K limit)."""
    from tileir.kernels import matmul_nt_any

    mt = importlib.import_module("tileir.kernels.matmul_t")
    small = {"tm": 64, "tn": 64, "tk": 32, "warps": 8, "group": 2, "programs": 3}
    g = np.random.default_rng(3)
    for npd, fmt, tol in ((np.float16, "f16", 2e-3), (ml_dtypes.bfloat16, "bf16", 1e-2)):
        a, w = g.standard_normal((150, 70)).astype(npd), g.standard_normal((200, 70)).astype(npd)
        want = a.astype(np.float64) @ w.astype(np.float64).T
        for walk in (dict(small), None):
            c = np.zeros((150, 200), npd)
            def rule(*args, _w=walk, weight_t=False):
                return _w if weight_t else None

            with mock.patch.object(mt, "matmul_walk", rule), mock.patch.object(mt, "launch", wraps=mt.launch) as spy:
                matmul_nt_any(a, w, c, gpu="sm_90")
            kern = spy.call_args.args[0]
            assert kern is (mt.matmul_nt_persistent if walk else mt.matmul_nt)
            got = spy.call_args.kwargs
            assert got["fmt"] == fmt and all(got[k] == v for k, v in (walk or {}).items())
            err = np.abs(c.astype(np.float64) - want).max() / (np.abs(a).astype(np.float64) @ np.abs(w).T).max()
            assert err < tol


# ---- fp8 ---------------------------------------------------------------------------------------

_F8S = (torch.float8_e4m3fn, torch.float8_e5m2)
_OUT_RTOL = {torch.bfloat16: 8e-3, torch.float16: 1e-3, torch.float32: 1e-5}  # two of the result's ulps, about


def _f8(m, k, n, f8, seed=0):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(m, k, generator=g).to(f8)
    w = torch.randn(n, k, generator=g).to(f8)  # the weight's layout, [N, K]; b = w.t()
    return a, w


@pytest.mark.parametrize("f8", _F8S)
@pytest.mark.parametrize("out_dtype", [torch.bfloat16, torch.float16, torch.float32])
def test_scaled_mm_equals_torch_scaled_mm(f8, out_dtype):
    a, w = _f8(37, 45, 53, f8)
    sa, sb = torch.tensor(0.5), torch.tensor([0.03])  # a 0-d and a [1] scale: both per-tensor
    got = tops.scaled_mm(a, w.t(), sa, sb, out_dtype)
    want = torch._scaled_mm(a, w.t(), sa, sb, out_dtype=out_dtype)
    assert got.dtype == out_dtype and got.shape == (37, 53)
    torch.testing.assert_close(got.float(), want.float(), rtol=_OUT_RTOL[out_dtype], atol=1e-5)
    exact = (a.double() @ w.double().t()) * 0.5 * 0.03
    assert float(((got.double() - exact).abs() / (exact.abs() + 1e-3)).max()) < _OUT_RTOL[out_dtype]


def test_scaled_mm_defaults_to_bf16_and_reads_a_slice_in_place():
    a, w = _f8(9, 70, 13, torch.float8_e4m3fn, seed=1)
    a = a[:, 3:50]  # rows 70 apart: read in place
    w = w[:, 3:50]
    sa, sb = torch.tensor([2.0]), torch.tensor([0.25])
    got = tops.scaled_mm(a, w.t(), sa, sb)
    assert got.dtype == torch.bfloat16
    want = torch._scaled_mm(a.contiguous(), w.contiguous().t(), sa, sb, out_dtype=torch.bfloat16)
    torch.testing.assert_close(got.float(), want.float(), rtol=8e-3, atol=1e-5)


def test_scaled_mm_empty_products_are_torch_answers():
    s = torch.tensor(1.0)
    a, w = _f8(0, 16, 8, torch.float8_e4m3fn)
    assert tops.scaled_mm(a, w.t(), s, s).shape == (0, 8)
    a, w = _f8(3, 0, 8, torch.float8_e4m3fn)
    assert torch.equal(tops.scaled_mm(a, w.t(), s, s), torch.zeros(3, 8, dtype=torch.bfloat16))


def _refusals():
    a, w = _f8(5, 16, 7, torch.float8_e4m3fn)
    _, w5 = _f8(5, 16, 7, torch.float8_e5m2)
    s = torch.tensor(1.0)
    return [
        ((a.half(), w.half().t(), s, s), "scaled_mm a", "float8_e4m3fn or float8_e5m2", "torch.float8_e4m3fn"),
        ((a, w5.t(), s, s), "scaled_mm b", "one format", "b.to("),
        ((a, w.t().contiguous(), s, s), "scaled_mm b", "not column-major", "w.t()"),
        ((a.t().contiguous().t(), w.t(), s, s), "scaled_mm a", "not row-major", "a.contiguous()"),
        ((a, w.t(), torch.ones(5, 1), s), "scaled_mm scale_a", "one f32 scale per tensor", "one element"),
        ((a, w.t(), s, torch.ones(1, 7)), "scaled_mm scale_b", "one f32 scale per tensor", "one element"),
        ((a, w.t(), s.half(), s), "scaled_mm scale_a", "one f32 scale per tensor", "float()"),
        ((a, w.t(), s, s, torch.float8_e4m3fn), "scaled_mm out_dtype", "bfloat16, float16 or float32",
         "out_dtype=torch.bfloat16"),
        ((a, w[:, :8].t(), s, s), "scaled_mm", r"a is \[M, K\] and b \[K, N\]", "w.t()"),
    ]


@pytest.mark.parametrize("i", range(9))
def test_scaled_mm_refuses_what_matmul_f8_does_not_take(i):
    args, what, words, fix = _refusals()[i]
    with pytest.raises(TileirError, match=words) as e:
        tops.scaled_mm(*args)
    assert e.value.what == what and fix in (e.value.fix or "")


# ---- fakes and compile -------------------------------------------------------------------------


def test_fakes_and_schemas():
    """opcheck: the fakes answer the real ops' shapes, dtypes and strides (the schema check does
    arithmetic on its inputs, which torch's CPU fp8 has not: scaled_mm's fake alone)."""
    x = torch.randn(9, 40)[:, 3:35]
    for op, args in [(tops.matmul, (x, torch.randn(32, 5), "3xtf32")), (tops.matmul, (x, torch.randn(32, 5))),
                     (tops._matmul_nt, (x, torch.randn(5, 32), "ieee")),
                     (tops._matmul_tn, (x, torch.randn(9, 5), "ieee"))]:
        torch.library.opcheck(op.op, args, test_utils=("test_schema", "test_faketensor"))
    a, w = _f8(9, 40, 11, torch.float8_e4m3fn)
    s = torch.tensor(0.5)
    for args in [(a, w.t(), s, s, torch.float16), (a, w.t(), s, s)]:
        torch.library.opcheck(tops.scaled_mm.op, args, test_utils=("test_faketensor",))


def test_compile_fullgraph_traces_scaled_mm_and_a_precision():
    a, w = _f8(9, 40, 11, torch.float8_e4m3fn)
    s = torch.tensor(0.5)

    def f(a, b, s, x, y):
        return tops.scaled_mm(a, b, s, s).float().sum() + tops.matmul(x, y, "3xtf32").sum()

    x, y = torch.randn(5, 33), torch.randn(33, 7)
    got = torch.compile(f, fullgraph=True, backend="aot_eager")(a, w.t(), s, x, y)
    torch.testing.assert_close(got, f(a, w.t(), s, x, y))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype, precision, m, n, k, tol", [
    (torch.float32, "3xtf32", 16, 4096, 4096, 1e-5),   # 4 splits (heuristics._fill_split)
    (torch.float32, "3xtf32", 128, 4096, 4096, 1e-5),  # 2 splits
    (torch.float32, "tf32", 64, 4096, 11008, 3e-3),    # 4 splits
    (torch.float16, None, 1, 4096, 32768, 2e-2),       # 4 splits
])
def test_small_m_products_split_on_the_gpu(dtype, precision, m, n, k, tol):
    """A small M with a long K runs split-K on the GPU (the rule's plan for this GPU) and answers as
    the f64 product does, within the format's tolerance of max |C|. Kills: the split plan's partial
    tile or reduce wrong on the device, or the rule no longer splitting these shapes."""
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    from tileir import autotune
    from tileir.heuristics import SMS

    if autotune.this_gpu() not in SMS:
        pytest.skip("the split rule knows sm_90 only (heuristics.SMS): elsewhere one pass runs")
    torch.manual_seed(0)
    a = torch.randn(m, k, device="cuda", dtype=dtype)
    b = torch.randn(k, n, device="cuda", dtype=dtype)
    assert gemm_mod.plan(a, b, precision=precision or "tf32")["splits"] > 1
    got = tops.matmul(a, b, precision=precision)  # None: torch's own setting (f16: not asked)
    want = a.double() @ b.double()
    assert float((got.double() - want).abs().max() / want.abs().max()) <= tol


@pytest.mark.gpu
@pytest.mark.parametrize("dtype, tol", [(torch.float16, 2e-3), (torch.bfloat16, 1e-2)])
def test_the_persistent_walk_on_the_gpu(dtype, tol):
    """The rule's walks on the device (sm_90): ops.matmul at 2048 x 5000 x 1000 (320 cells of 128 x 256)
    and ops.bmm at 64 x 512^3, also with B a column slice of a wider array (rows 640 apart), answer as
    torch's products do within the format's rounding of the sum's scale. Kills: the persistent walk
    skipping or repeating cells at the full grid (132 programs over 320 or 256 cells), the batch index
    of a cell wrong, a strided B read as dense."""
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    from tileir import autotune
    from tileir.heuristics import SMS, bmm_walk

    if autotune.this_gpu() not in SMS:
        pytest.skip("the walk rule knows sm_90 only (heuristics.SMS)")
    torch.manual_seed(0)
    a = (torch.randn(2048, 1000, device="cuda") / 30).to(dtype)
    b = torch.randn(1000, 5000, device="cuda").to(dtype)
    assert "walk" in gemm_mod.plan(a, b)
    assert _err(tops.matmul(a, b), a, b) < tol
    x = (torch.randn(64, 512, 512, device="cuda") / 20).to(dtype)
    y = torch.randn(64, 512, 512, device="cuda").to(dtype)
    fmt = {torch.float16: "f16", torch.bfloat16: "bf16"}[dtype]
    assert bmm_walk(autotune.this_gpu(), fmt, 64, 512, 512, 512) is not None
    wide = torch.randn(64, 512, 640, device="cuda").to(dtype)
    for yy in (y, wide[..., 64:576]):
        got = tops.bmm(x, yy)
        want = x.double() @ yy.double()
        assert float((got.double() - want).abs().max() / (x.double().abs() @ yy.double().abs()).max()) < tol


@pytest.mark.gpu
@pytest.mark.parametrize("f8", _F8S)
@pytest.mark.parametrize("m, n, k", [(1024, 4096, 4096), (1000, 2500, 520), (16, 4096, 4096)])
def test_scaled_mm_on_the_gpu(f8, m, n, k):
    """tileir.ops.scaled_mm on the device against torch._scaled_mm (bf16 out, per-tensor scales): the
    rule's 128 x 128 cells walked by 132 blocks (heuristics.F8_WALKS; 160 ragged cells at 1000 x 2500 x 520) and
    64-row cells one a block (16 rows). Kills: the walk skipping cells (its stride, its end), its grouped
    order mapping two cells to one, a ragged edge cell left unwritten, the rule no longer walking."""
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    from tileir import autotune
    from tileir.heuristics import SMS
    from tileir.kernels import matmul_f8

    if autotune.this_gpu() not in SMS:
        pytest.skip("the walk rule knows sm_90 only (heuristics.SMS)")
    walks = matmul_f8.tuned_config({}, autotune.this_gpu(), {"M": m, "N": n, "K": k}).get("programs", 0)
    assert bool(walks) == (m > 128)
    g = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randn(m, k, device="cuda", generator=g).to(f8)
    w = torch.randn(n, k, device="cuda", generator=g).to(f8)
    sa, sb = torch.tensor(0.5, device="cuda"), torch.tensor(0.25, device="cuda")
    got = tops.scaled_mm(a, w.t(), sa, sb)
    want = (a.float() @ w.float().t()) * 0.125
    assert got.dtype == torch.bfloat16
    assert float((got.float() - want).abs().max() / want.abs().max()) < 1e-2


@pytest.mark.gpu
@pytest.mark.parametrize("dtype, tol", [(torch.float16, 2e-3), (torch.bfloat16, 1e-2)])
@pytest.mark.parametrize("m, n, k", [(8192, 1408, 512), (4096, 2000, 4096)])
def test_x_at_w_t_walks_on_the_gpu(dtype, tol, m, n, k):
    """x @ W.t() with W [N, K] (a Linear layer) walks on the device (the rule's matmul_nt_persistent:
    384 and 256 cells of 128 x 256 over 132 programs, the last column of cells ragged; the second with a
    long K) and answers as torch's product does. Kills: a walked cell skipped or written twice, B^T's
    view misread at the ragged N, the rule no longer walking there."""
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    from tileir import autotune
    from tileir.heuristics import SMS, matmul_walk

    if autotune.this_gpu() not in SMS:
        pytest.skip("the walk rule knows sm_90 only (heuristics.SMS)")
    fmt = {torch.float16: "f16", torch.bfloat16: "bf16"}[dtype]
    assert matmul_walk(autotune.this_gpu(), fmt, m, n, k, weight_t=True) is not None
    torch.manual_seed(0)
    x = (torch.randn(m, k, device="cuda") / 20).to(dtype)
    w = torch.randn(n, k, device="cuda").to(dtype)
    assert _err(tops.matmul(x, w.t()), x, w.t()) < tol
