"""A tileir op as torch sees it: a ``torch.library.custom_op`` (what ``torch.compile`` traces and
``torch.ops.tileir.NAME`` is) that an eager call reaches without torch's dispatcher.

Measured on this project's 2-core build machine (``bench/op_dispatch.py``, an implementation that only
allocates: bench/results/op_dispatch_cpu.json): a custom op's call costs ~30 us over the function it
wraps; the training example is host-bound at its size (bench/results/training_profile_h200.json). So in
eager mode, where nothing traces the call, a
``TorchOp`` calls the implementation itself and keeps the custom op for everything that must see it:
``torch.compile`` (dynamo), a dispatch mode (fake tensors, ``make_fx``, export), ``torch.jit.trace``, a
torch function mode or an fx Proxy, forward-mode AD, a tensor subclass or a meta tensor, functorch's
transforms (``vmap``, ``grad``). A call whose input needs a gradient takes an old-style
``torch.autograd.Function`` of the same formula (about half the custom op's cost:
bench/results/op_dispatch_cpu.json); a backward's own ops run with gradients off, so they take the
plain eager path.
"""

from __future__ import annotations

import functools
import inspect

import torch

_Tensor = torch.Tensor
_PLAIN = (torch.Tensor, torch.nn.Parameter)  # a module's weights are Parameters: plain tensors to dispatch
_dispatch_modes = torch._C._len_torch_dispatch_stack
_functorch_active = torch._C._are_functorch_transforms_active
_is_compiling = torch.compiler.is_compiling
_jit_tracing = torch._C._get_tracing_state
_function_modes = torch._C._is_torch_function_mode_enabled


def _dual_level() -> bool:  # forward-mode AD inside a dual_level: tangents are the custom op's to refuse
    return torch.autograd.forward_ad._current_level >= 0


def _c_apply(function):
    """``function``'s apply without torch's Python wrapper (``Function.apply``): the wrapper binds
    defaults only for a ``setup_context``-style Function and unwraps functorch's dead wrappers only
    where a functorch transform is active -- neither holds where ``TorchOp`` calls it (old-style, and
    the custom op takes every call under functorch). On the 2-core machine a forward with its kernel
    left out took 14.3 us through this against 16.0 through the wrapper. The wrapper itself where this
    torch's class layout is not the one read here."""
    try:
        raw = super(torch.autograd.Function, function).apply
    except AttributeError:
        return function.apply
    return raw if getattr(raw, "__self__", None) is function and not hasattr(raw, "__func__") else function.apply


class TorchOp:
    """``tileir::name`` as a custom op (``.op``: what ``torch.compile`` traces, ``opcheck`` tests and
    ``torch.ops.tileir.name`` is) with the eager path beside it. Decorate the implementation with
    ``torch_op("name")``; then ``.register_fake`` and ``.register_autograd`` as on a custom op."""

    def __init__(self, name: str, impl):
        self.name = name
        self.impl = impl
        self.op = torch.library.custom_op(f"tileir::{name}", mutates_args=())(impl)
        self.sig = inspect.signature(impl)
        self.defaults = tuple(p.default for p in self.sig.parameters.values())
        # the first position from which every parameter has a default: a call passing fewer inputs by
        # position is filled from there without inspect's bind (~10 us a call: the training example's
        # matmul(a, b) left out precision on every call)
        self._filled_from = len(self.defaults)
        while self._filled_from and self.defaults[self._filled_from - 1] is not inspect.Parameter.empty:
            self._filled_from -= 1
        self.function: type[torch.autograd.Function] | None = None
        functools.update_wrapper(self, impl)

    def register_fake(self, fn):
        self.op.register_fake(fn)
        return fn

    def register_autograd(self, backward, *, setup_context, statistics=()) -> None:
        """The formula, registered on the custom op (what compile and every traced call use) and made the
        eager path's ``torch.autograd.Function``: the old-style one (``forward(ctx, ...)`` calling
        ``setup_context`` itself): on the 2-core machine 12-21 us a call against the custom op's 27-39
        and a ``setup_context``-style Function's 41-61 (bench/op_dispatch.py; the spread is two runs).

        ``statistics``: the positions of outputs that are saved statistics (a norm's rstd, attention's
        lse) whose gradient the formula ignores: both paths mark them non-differentiable and leave their
        gradients unmade, where autograd would otherwise make a zero tensor for each (an allocation and
        a fill kernel a call)."""
        if any(p.kind is inspect.Parameter.KEYWORD_ONLY for p in self.sig.parameters.values()):
            raise TypeError(f"tileir::{self.name}: the eager formula passes inputs by position; a keyword-only "
                            "parameter would be dropped (make it positional)")
        if statistics:  # the custom op's path (compile, traced calls) marks them too: one answer both ways
            plain_setup = setup_context

            def setup_context(ctx, inputs, output):
                plain_setup(ctx, inputs, output)
                ctx.set_materialize_grads(False)
                ctx.mark_non_differentiable(*(output[i] for i in statistics))

        torch.library.register_autograd(f"tileir::{self.name}", backward, setup_context=setup_context)
        impl = self.impl

        def forward(ctx, *inputs):
            out = impl(*inputs)
            setup_context(ctx, inputs, out)
            return out

        self.function = type(f"{self.name}_autograd", (torch.autograd.Function,),
                             {"forward": staticmethod(forward), "backward": staticmethod(backward)})
        self._apply = _c_apply(self.function)

    def _inputs(self, args, kwargs) -> tuple | None:
        """Every input by position, defaults filled (what setup_context reads); None where the call does
        not bind (the custom op then says what is wrong, as torch does)."""
        if not kwargs and self._filled_from <= len(args) <= len(self.defaults):
            return args + self.defaults[len(args):]
        try:
            b = self.sig.bind(*args, **kwargs)
        except TypeError:
            return None
        b.apply_defaults()
        return b.args

    def __call__(self, *args, **kwargs):
        if _is_compiling() or _dispatch_modes() or _functorch_active() or _jit_tracing() is not None or \
                _function_modes() or _dual_level():
            return self.op(*args, **kwargs)
        grad = torch.is_grad_enabled()
        needs_grad = False
        for a in (*args, *kwargs.values()) if kwargs else args:
            if isinstance(a, _Tensor):
                if type(a) not in _PLAIN or a.is_meta:
                    return self.op(*args, **kwargs)  # a subclass (fake tensors) or meta: the fake answers
                needs_grad = needs_grad or (grad and a.requires_grad)
            elif hasattr(type(a), "__torch_function__"):
                return self.op(*args, **kwargs)  # an fx Proxy (symbolic_trace) records the op as one node
        if not needs_grad:
            return self.impl(*args, **kwargs)
        function = self.function
        inputs = self._inputs(args, kwargs) if function is not None else None
        if function is None or inputs is None:
            return self.op(*args, **kwargs)  # no formula of ours (torch refuses the backward), or a bad call
        return self._apply(*inputs)

    def __repr__(self) -> str:
        return f"TorchOp(tileir::{self.name})"


def torch_op(name: str):
    """The decorator: ``@torch_op("softmax")`` over the implementation makes ``tileir::softmax``."""
    return functools.partial(TorchOp, name)


__all__ = ["TorchOp", "torch_op"]
