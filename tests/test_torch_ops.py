"""tileir.ops: the library as torch functions -- forward and backward against torch on the CPU
(the host reference runs the same programs the GPU does), bad input named, torch.compile with
fullgraph=True, and the same on the GPU where there is one."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

import tileir.ops as tops  # noqa: E402
from tileir import TileirError  # noqa: E402


def _grads(f, g, *xs, tol=1e-5):
    """f and g agree, and so do their gradients for a random upstream gradient."""
    a = [x.detach().clone().requires_grad_(x.is_floating_point()) for x in xs]
    b = [x.detach().clone().requires_grad_(x.is_floating_point()) for x in xs]
    ya, yb = f(*a), g(*b)
    assert ya.shape == yb.shape and ya.dtype == yb.dtype
    torch.testing.assert_close(ya.float(), yb.float(), atol=tol, rtol=tol)
    dy = torch.randn_like(ya)
    (ya.float() * dy).sum().backward()
    (yb.float() * dy).sum().backward()
    for p, q in zip(a, b):
        if q.grad is not None:
            torch.testing.assert_close(p.grad.float(), q.grad.float(), atol=tol, rtol=tol)


def test_rows_ops_and_their_gradients_equal_torch():
    torch.manual_seed(0)
    x, w, b = torch.randn(6, 37), torch.randn(37), torch.randn(37)
    _grads(tops.softmax, lambda t: torch.softmax(t, -1), x)
    _grads(lambda t: tops.softmax(t, 0), lambda t: torch.softmax(t, 0), x)
    _grads(lambda t, w_, b_: tops.layer_norm(t, [37], w_, b_), lambda t, w_, b_: F.layer_norm(t, [37], w_, b_),
           x, w, b)
    _grads(lambda t, w_: tops.rms_norm(t, [37], w_, 1e-6), lambda t, w_: F.rms_norm(t, [37], w_, 1e-6), x, w)
    _grads(lambda t: tops.softmax(t), lambda t: torch.softmax(t, -1), torch.randn(2, 3, 9))  # leading dims


def _swiglu_torch(x):
    gate, up = x.chunk(2, -1)
    return F.silu(gate) * up


def test_swiglu_and_its_gradient_equal_torch():
    """Leading dimensions, a slice of a wider tensor (the halves read in place) and a 16-bit one
    against torch's own rounding. Kills: the halves swapped, a sigmoid's derivative without
    g (1 - s)."""
    torch.manual_seed(0)
    _grads(tops.swiglu, _swiglu_torch, torch.randn(6, 74) * 3)
    _grads(tops.swiglu, _swiglu_torch, torch.randn(2, 3, 2 * 37))
    _grads(tops.swiglu, _swiglu_torch, torch.randn(5, 100)[:, 10:90])
    _grads(tops.swiglu, _swiglu_torch, (torch.randn(7, 2 * 40) * 3).bfloat16(), tol=2e-2)
    x = torch.randn(4, 10, requires_grad=True)
    tops.swiglu(x).sum().backward()
    assert x.grad.shape == x.shape and x.grad.is_contiguous()


@pytest.mark.parametrize("precision, tol", [("tf32", 2e-2), ("3xtf32", 1e-5), ("ieee", 1e-5)])
def test_matmul_and_its_gradients_by_precision(precision, tol):
    torch.manual_seed(0)
    a, b = torch.randn(3, 5, 40), torch.randn(40, 9)
    _grads(lambda x, y: tops.matmul(x, y, precision), lambda x, y: x @ y, a, b, tol=tol)


@pytest.mark.parametrize("precision, tol", [("tf32", 2e-2), ("3xtf32", 1e-5)])
def test_a_linear_weights_gradients_equal_torch_and_come_out_dense(precision, tol):
    """x @ W.T (a Linear layer): the backward reads W in place for dA and writes dW dense (dB = (dC^T @ A)^T), so
    the optimiser's W.grad is a contiguous [N, K]. Kills: dB's transpose dropped or doubled (a wrong dW), dA
    through W.T's copy (right, but the weight copied every step), the forward's precision lost in dA."""
    torch.manual_seed(0)
    x, w = torch.randn(2, 7, 40), torch.randn(9, 40)
    _grads(lambda a, b: tops.matmul(a, b.t(), precision), lambda a, b: a @ b.t(), x, w, tol=tol)
    wg, xg = w.clone().requires_grad_(), x.clone().requires_grad_()
    y = tops.matmul(xg, wg.t(), precision)
    seen = []
    real_nt = tops._matmul_nt
    old = torch.get_float32_matmul_precision()
    try:
        tops._matmul_nt = lambda *a: seen.append(a) or real_nt(*a)
        torch.set_float32_matmul_precision("high")  # the backward keeps the forward's precision regardless
        (y * torch.ones_like(y)).sum().backward()
    finally:
        tops._matmul_nt = real_nt
        torch.set_float32_matmul_precision(old)
    assert not seen  # dA = dC @ W through matmul, not through matmul_nt on W.T (which copies W)
    assert wg.grad.shape == (9, 40) and wg.grad.is_contiguous()
    want = torch.ones(2, 7, 9, dtype=torch.float64) @ w.double()
    err = float((xg.grad.double() - want).abs().max() / want.abs().max())
    assert err < tol and (precision == "tf32" or err < 1e-5)


def test_attention_forward_backward_causal_and_grouped_heads():
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 2, 33, 64).half() for _ in range(3))
    sdpa = F.scaled_dot_product_attention
    _grads(lambda *t: tops.attention(*t, causal=True), lambda *t: sdpa(*t, is_causal=True), q, k, v, tol=4e-3)
    kv = torch.randn(1, 1, 33, 64).half(), torch.randn(1, 1, 33, 64).half()
    with torch.no_grad():
        got = tops.attention(q, *kv)
        want = sdpa(q.float(), *(t.float().repeat_interleave(2, 1) for t in kv))
    torch.testing.assert_close(got.float(), want, atol=2e-3, rtol=2e-3)


@pytest.mark.parametrize("dtype, precision", [(torch.float16, None), (torch.float32, "tf32")])
def test_a_linear_layers_transposed_weight_is_read_in_place(dtype, precision):
    """x @ W.T (W [N, K] row-major) goes through matmul_nt, which reads W through a transposing
    view: no copy of the weight (f32: in tf32, matmul_nt's one precision). Kills: the contiguous()
    fallback (the copy is counted)."""
    from unittest import mock

    torch.manual_seed(0)
    x, w = torch.randn(6, 40).to(dtype), torch.randn(9, 40).to(dtype)
    with mock.patch.object(torch.Tensor, "contiguous", side_effect=AssertionError("copied")):
        got = tops.matmul(x, w.t(), precision)
    torch.testing.assert_close(got.float(), x.float() @ w.float().t(), atol=2e-2, rtol=2e-2)


def test_the_rest_equals_torch():
    x = torch.randn(33, 70)
    assert torch.equal(tops.transpose(x), x.t())
    xi = torch.randint(0, 10, (1000,), dtype=torch.int32)
    assert torch.equal(tops.histc(xi, 10), torch.bincount(xi, minlength=10).int())
    xf = torch.randn(3000)
    torch.testing.assert_close(tops.cumsum(xf), torch.cumsum(xf, 0), atol=1e-3, rtol=1e-4)
    a, b = torch.randn(2, 17, 33).half(), torch.randn(2, 33, 9).half()
    torch.testing.assert_close(tops.bmm(a, b).float(), a.float() @ b.float(), atol=2e-2, rtol=1e-2)


@pytest.mark.parametrize("call, words, fix", [
    (lambda: tops.matmul(torch.randn(4, 5), torch.randn(6, 3)), "inner sizes must agree", "[K, N]"),
    (lambda: tops.softmax(torch.randn(4, 5, dtype=torch.float64)), "takes float16, bfloat16, float32", "x.to"),
    (lambda: tops.layer_norm(torch.randn(4, 5), [4]), "normalises the last dimension", "normalized_shape=[5]"),
    (lambda: tops.attention(*(torch.randn(2, 8, 16).half() for _ in range(3))), r"are \[B, H, S, D\]",
     "transpose(1, 2)"),
    (lambda: tops.matmul(torch.randn(4, 5), torch.randn(5, 3).half()), "float32 and torch.float16", ".to("),
    (lambda: tops.softmax(torch.randn(0, 5)), "empty tensor", "skip the call"),
    (lambda: tops.swiglu(torch.randn(4, 5)), "gate | up, so it is even", "torch.cat([gate, up], -1)"),
])
def test_bad_input_is_named_with_its_fix(call, words, fix):
    with pytest.raises(TileirError, match=words) as e:
        call()
    assert fix in (e.value.fix or "")


def test_fake_implementations_match_the_real_ones_on_strided_inputs():
    """torch.library.opcheck: the fakes answer the real ops' shapes, dtypes and strides (contiguous
    outputs) for transposed and sliced inputs, as inductor relies on. Kills: empty_like fakes."""
    torch.manual_seed(0)
    x = torch.randn(37, 6).t()  # a transposed [6, 37]
    w, b = torch.randn(37), torch.randn(37)
    q, k, v = (torch.randn(1, 33, 2, 64).half().transpose(1, 2) for _ in range(3))  # [B, S, H, D] viewed
    checks = [(tops._softmax, (x,)), (tops._layer_norm, (x, w, b, 1e-5)), (tops._rms_norm, (x, w, 1e-6)),
              (tops._attention, (q, k, v, True, 0.125)), (tops._attention_lse, (q, k, v, False, 0.125)),
              (tops.matmul, (torch.randn(9, 40)[:, 3:35], torch.randn(32, 5))),
              (tops.swiglu, (torch.randn(9, 40)[:, 2:38],)),
              (tops._swiglu_backward, (torch.randn(9, 40)[:, 2:38], torch.randn(36, 9).t()[:, :18]))]
    for op, args in checks:
        torch.library.opcheck(op.op, args, test_utils=("test_schema", "test_faketensor"))


def test_gradients_that_torch_expands_are_taken():
    a, b = torch.randn(4, 8, requires_grad=True), torch.randn(8, 3)
    (tops.matmul(a, b).sum(0) * torch.randn(3)).sum().backward()  # an upstream gradient of stride 0
    x = torch.randn(5, 9, requires_grad=True)
    tops.softmax(x).sum(0).sum().backward()
    assert a.grad.shape == a.shape and x.grad.shape == x.shape


def test_empty_products_are_torch_answers():
    assert tops.matmul(torch.randn(0, 4), torch.randn(4, 3)).shape == (0, 3)
    assert torch.equal(tops.matmul(torch.randn(2, 0), torch.randn(0, 3)), torch.zeros(2, 3))


def test_torch_compile_fullgraph_traces_a_model_without_breaks():
    torch.manual_seed(0)

    def model(x, w, b, wm):
        return tops.softmax(tops.swiglu(tops.matmul(tops.layer_norm(x, [x.shape[-1]], w, b), wm)))

    def reference(x, w, b, wm):
        return torch.softmax(_swiglu_torch(F.layer_norm(x, [x.shape[-1]], w, b) @ wm), -1)

    x, w, b, wm = torch.randn(8, 64), torch.randn(64), torch.randn(64), torch.randn(64, 64)
    compiled = torch.compile(model, fullgraph=True, backend="aot_eager")  # a graph break raises
    torch.testing.assert_close(compiled(x, w, b, wm), reference(x, w, b, wm), atol=2e-3, rtol=2e-3)
    xr = x.clone().requires_grad_()
    compiled(xr, w, b, wm).sum().backward()
    assert xr.grad is not None and xr.grad.shape == x.shape


# ---- on the GPU ---------------------------------------------------------------------------------


def _cuda():
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU")


@pytest.mark.gpu
@pytest.mark.parametrize("dtype, tol", [(torch.float32, 1e-5), (torch.float16, 2e-3), (torch.bfloat16, 2e-2)])
def test_gpu_rows_ops_and_gradients(dtype, tol):
    _cuda()
    torch.manual_seed(0)
    x = torch.randn(300, 1000, device="cuda", dtype=dtype)
    w, b = torch.randn(1000, device="cuda", dtype=dtype), torch.randn(1000, device="cuda", dtype=dtype)
    _grads(tops.softmax, lambda t: torch.softmax(t, -1), x, tol=tol)
    _grads(lambda t, w_, b_: tops.layer_norm(t, [1000], w_, b_), lambda t, w_, b_: F.layer_norm(t, [1000], w_, b_),
           x, w, b, tol=max(tol, 1e-4) * 10)
    _grads(lambda t, w_: tops.rms_norm(t, [1000], w_, 1e-6), lambda t, w_: F.rms_norm(t, [1000], w_, 1e-6), x, w,
           tol=max(tol, 1e-4) * 10)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype, tol", [(torch.float32, 1e-5), (torch.float16, 2e-3), (torch.bfloat16, 2e-2)])
def test_gpu_swiglu_gradient(dtype, tol):
    _cuda()
    torch.manual_seed(0)
    _grads(tops.swiglu, _swiglu_torch, torch.randn(300, 2 * 1000, device="cuda", dtype=dtype) * 3, tol=tol)
    _grads(tops.swiglu, _swiglu_torch, torch.randn(2, 33, 2 * 1408, device="cuda", dtype=dtype), tol=tol)


@pytest.mark.gpu
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("d", [64, 128])
def test_gpu_attention_gradients_against_sdpa(causal, d):
    _cuda()
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 4, 500, d, device="cuda", dtype=torch.float16) for _ in range(3))
    sdpa = F.scaled_dot_product_attention
    _grads(lambda *t: tops.attention(*t, causal=causal), lambda *t: sdpa(*t, is_causal=causal), q, k, v, tol=2e-2)


@pytest.mark.gpu
def test_gpu_matmul_gradients_and_compile():
    _cuda()
    torch.manual_seed(0)
    a = torch.randn(4, 300, 512, device="cuda", dtype=torch.float16) / 20
    b = torch.randn(512, 200, device="cuda", dtype=torch.float16) / 20
    _grads(tops.matmul, lambda x, y: x @ y, a, b, tol=2e-2)
    compiled = torch.compile(lambda x, y: tops.softmax(tops.matmul(x, y)), fullgraph=True)
    torch.testing.assert_close(compiled(a, b).float(), torch.softmax((a @ b).float(), -1), atol=2e-3, rtol=2e-2)
