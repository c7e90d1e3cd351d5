"""tileir.torch_op: an eager call runs the implementation without torch's dispatcher; everything that
traces, transforms or differentiates goes through the custom op. CPU tensors (the host reference)."""

import pytest

torch = pytest.importorskip("torch")

import tileir.ops as tops  # noqa: E402
from tileir.torch_op import TorchOp  # noqa: E402


class Spy:
    """Stands in for a TorchOp's custom op: counts calls, then calls it."""

    def __init__(self, op):
        self.real, self.calls = op, 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return self.real(*args, **kwargs)


@pytest.fixture
def spied(monkeypatch):
    spy = Spy(tops._softmax.op)
    monkeypatch.setattr(tops._softmax, "op", spy)
    return spy


def test_an_eager_call_skips_the_dispatcher(spied):
    """Kills: every call through the custom op (the ~17-30 us of bench/results/op_dispatch_cpu.json)."""
    x = torch.randn(3, 40)
    y = tops.softmax(x)
    assert spied.calls == 0
    torch.testing.assert_close(y, torch.softmax(x, -1))


def test_a_call_that_needs_a_gradient_takes_the_same_formula_eagerly(spied):
    """Kills: the implementation called bare where autograd needs the formula (no grad_fn), and the
    eager Function's setup or backward differing from the custom op's (the gradient below)."""
    x = torch.randn(3, 40, dtype=torch.float64).float().requires_grad_()
    y = tops.softmax(x)
    assert spied.calls == 0 and y.requires_grad and "softmax_autograd" in type(y.grad_fn).__name__
    g = torch.randn(3, 40)
    (y * g).sum().backward()
    ref = x.detach().clone().requires_grad_()
    (torch.softmax(ref, -1) * g).sum().backward()
    torch.testing.assert_close(x.grad, ref.grad, rtol=1e-5, atol=1e-6)


def test_no_grad_takes_the_eager_path(spied):
    """Kills: requires_grad read without torch.is_grad_enabled (a backward's own ops would pay the dispatcher)."""
    x = torch.randn(3, 40, requires_grad=True)
    with torch.no_grad():
        tops.softmax(x)
    assert spied.calls == 0


def test_fake_tensors_reach_the_fake(spied):
    """Kills: a fake tensor handed to the implementation (it would run the host reference on no data)."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        y = tops.softmax(torch.empty(5, 7))
    assert spied.calls == 1 and tuple(y.shape) == (5, 7)


def test_torch_compile_traces_the_custom_op():
    """Kills: the eager path taken while dynamo traces (the graph would break or bake the host reference in)."""
    pytest.importorskip("torch._dynamo")
    seen = []

    def backend(gm, inputs):
        seen.extend(str(n.target) for n in gm.graph.nodes if n.op == "call_function")
        return gm.forward

    x = torch.randn(4, 16)
    y = torch.compile(lambda t: tops.softmax(t) * 2, backend=backend, fullgraph=True)(x)
    assert any("tileir.softmax" in s for s in seen), seen
    torch.testing.assert_close(y, torch.softmax(x, -1) * 2)


def test_keyword_arguments_and_defaults_pass_through():
    """Kills: keyword arguments dropped on the eager path."""
    calls = []

    def impl(x: torch.Tensor, scale: float = 2.0) -> torch.Tensor:
        calls.append(scale)
        return x * scale

    op = TorchOp("test_keywords_probe", impl)
    op.register_fake(lambda x, scale=2.0: torch.empty_like(x))
    x = torch.ones(3)
    torch.testing.assert_close(op(x, scale=3.0), x * 3)
    torch.testing.assert_close(op(x), x * 2)
    assert calls == [3.0, 2.0]
    assert "test_keywords_probe" in repr(op) and op.__doc__ == impl.__doc__


def test_meta_tensors_and_jit_tracing_reach_the_custom_op(spied):
    """Kills: a meta tensor handed to the implementation (the host reference on no data), and a
    torch.jit.trace recording the implementation's allocations without the kernel (review, 2026-12-02)."""
    with torch.device("meta"):
        m = torch.empty(3, 8)
    assert tops.softmax(m).is_meta and spied.calls == 1
    torch.jit.trace(lambda t: tops.softmax(t), (torch.randn(3, 8),), check_trace=False)
    assert spied.calls >= 2


def test_the_eager_formula_equals_the_custom_ops():
    """layer_norm (three outputs, two of them statistics) and matmul (needs_input_grad, a string input
    by keyword): the eager Function's gradients equal the custom op's bit for bit. Kills: the inputs
    passed to setup_context without their defaults, or the outputs' grads mis-ordered."""
    torch.manual_seed(1)
    x, w, b = torch.randn(5, 24), torch.randn(24), torch.randn(24)
    a, m = torch.randn(6, 16), torch.randn(16, 8)
    for eager in (True, False):
        ins = [t.clone().requires_grad_() for t in (x, w, b, a, m)]
        if eager:
            y = tops._layer_norm(*ins[:3], 1e-5)[0]
            c = tops.matmul(ins[3], ins[4], precision="ieee")
        else:
            y = tops._layer_norm.op(*ins[:3], 1e-5)[0]
            c = tops.matmul.op(ins[3], ins[4], "ieee")
        ((y * y).sum() + (c * c).sum()).backward()
        grads = [t.grad for t in ins]
        if eager:
            first = grads
    for g0, g1 in zip(first, grads):
        assert torch.equal(g0, g1)


def test_module_weights_take_the_eager_path(monkeypatch):
    """A module's weights are nn.Parameters (a Tensor subclass). Kills: every subclass sent to the custom
    op (layer_norm with a LayerNorm's weight would pay the dispatcher: the review of 2026-12-02)."""
    spy = Spy(tops._layer_norm.op)
    monkeypatch.setattr(tops._layer_norm, "op", spy)
    x = torch.randn(4, 16, requires_grad=True)
    w, b = torch.nn.Parameter(torch.randn(16)), torch.nn.Parameter(torch.randn(16))
    y = tops.layer_norm(x, (16,), w, b)
    y.sum().backward()
    assert spy.calls == 0 and w.grad is not None and x.grad is not None


def test_a_keyword_only_parameter_is_refused_where_a_formula_is_registered():
    def impl(x: torch.Tensor, *, scale: float = 1.0) -> torch.Tensor:
        return x * scale

    op = TorchOp("test_keyword_only_probe", impl)
    with pytest.raises(TypeError, match="keyword-only"):
        op.register_autograd(lambda ctx, g: g, setup_context=lambda ctx, inputs, out: None)


def test_left_out_defaults_are_filled_without_binding_the_signature(monkeypatch):
    """matmul(a, b) with a gradient leaves out precision: its inputs come from the defaults, not from
    inspect's bind (~10 us a call). Kills: the bind on every such call, or a default dropped."""
    op = tops.matmul
    assert op._filled_from == 2  # a and b have no default; precision has
    a, b = torch.randn(3, 4, requires_grad=True), torch.randn(4, 5)
    binds = []
    real = type(op.sig).bind
    monkeypatch.setattr(type(op.sig), "bind", lambda self, *x, **k: binds.append(1) or real(self, *x, **k))
    assert op._inputs((a, b), {}) == (a, b, None)
    op(a, b).sum().backward()
    assert binds == [] and a.grad is not None
    assert op._inputs((a,), {}) is None and binds == [1]  # too few: bind says what is missing


def test_saved_statistics_get_no_gradient_made(monkeypatch):
    """rms_norm's rstd, layer_norm's mean and rstd, attention's lse: non-differentiable outputs of the
    eager Function, whose gradients autograd leaves unmade (None) where it would make a zero tensor
    each (an allocation and a fill kernel a call). Kills: materialize_grads left on, or the wrong
    output marked (the main output's gradient then missing)."""
    torch.manual_seed(2)
    x, w, b = torch.randn(4, 16, requires_grad=True), torch.randn(16, requires_grad=True), torch.randn(16)
    for op, call in ((tops._rms_norm, lambda: tops._rms_norm(x, w, 1e-6)),
                     (tops._layer_norm, lambda: tops._layer_norm(x, w, b, 1e-5))):
        got = []
        real = op.function.backward
        monkeypatch.setattr(op.function, "backward", staticmethod(lambda ctx, *g, real=real, got=got: got.append(g) or
                                                                   real(ctx, *g)))
        outs = call()
        assert outs[0].requires_grad and not any(o.requires_grad for o in outs[1:])
        outs[0].sum().backward()
        (grads,) = got
        assert isinstance(grads[0], torch.Tensor) and all(g is None for g in grads[1:]), op
    q = torch.randn(1, 2, 8, 16).half().requires_grad_()
    o, lse = tops._attention_lse(q, q.detach(), q.detach(), True, 0.25)
    assert o.requires_grad and not lse.requires_grad
    # the custom op's path (what compile traces) answers the same: the review of 2026-12-02
    y, rstd = tops._rms_norm.op(x, w, 1e-6)
    assert y.requires_grad and not rstd.requires_grad
    y.sum().backward()
    assert x.grad is not None


def test_the_eager_function_is_applied_without_torchs_python_wrapper():
    """Kills: Function.apply's Python wrapper (its functorch unwrapping: ~4 us of a ~16 us forward on the
    2-core machine) on every call; the gradient through the C apply is the wrapper's."""
    op = tops._rms_norm
    assert op._apply.__self__ is op.function and not hasattr(op._apply, "__func__")
    x, w = torch.randn(3, 8, requires_grad=True), torch.randn(8, requires_grad=True)
    dy = torch.randn(3, 8)
    by_c = torch.autograd.grad(op._apply(x, w, 1e-6)[0], (x, w), dy)
    by_wrapper = torch.autograd.grad(op.function.apply(x, w, 1e-6)[0], (x, w), dy)
    assert all(torch.equal(a, b) for a, b in zip(by_c, by_wrapper))
