"""A tileir op as torch sees it: a ``torch.library.custom_op`` (what ``torch.compile`` traces and
``torch.ops.tileir.NAME`` is) that an eager call reaches without torch's dispatcher.

Measured on this project's 2-core build machine (``bench/op_dispatch.py``, an implementation that only
allocates: bench/results/op_dispatch_cpu.json): a custom op's call costs ~30 us over the function it
wraps; the training example is host-bound at its size (bench/results/training_profile_h200.json). So in
eager mode, where nothing traces the call, a
``TorchOp`` calls the implementation itself and keeps the custom op for everything that must see it:
``torch.compile`` (dynamo), a dispatch mode (fake tensors, ``make_fx``, export), ``torch.jit.trace``, a
torch function mode or an fx Proxy, forward-mode AD, a tensor subclass or a meta tensor, functorch's
transforms (``vmap``, ``grad``), and a call whose input needs a gradient (autograd's
formula is the custom op's; a ``torch.autograd.Function`` of the same formula measured no cheaper).
A backward's own ops run with gradients off, so they take the eager path.
"""

from __future__ import annotations

import functools

import torch

_Tensor = torch.Tensor
_dispatch_modes = torch._C._len_torch_dispatch_stack
_functorch_active = torch._C._are_functorch_transforms_active
_is_compiling = torch.compiler.is_compiling
_jit_tracing = torch._C._get_tracing_state
_function_modes = torch._C._is_torch_function_mode_enabled


def _dual_level() -> bool:  # forward-mode AD inside a dual_level: tangents are the custom op's to refuse
    return torch.autograd.forward_ad._current_level >= 0


class TorchOp:
    """``tileir::name`` as a custom op (``.op``: what ``torch.compile`` traces, ``opcheck`` tests and
    ``torch.ops.tileir.name`` is) with the eager path beside it. Decorate the implementation with
    ``torch_op("name")``; then ``.register_fake`` and ``.register_autograd`` as on a custom op."""

    def __init__(self, name: str, impl):
        self.name = name
        self.impl = impl
        self.op = torch.library.custom_op(f"tileir::{name}", mutates_args=())(impl)
        functools.update_wrapper(self, impl)

    def register_fake(self, fn):
        self.op.register_fake(fn)
        return fn

    def register_autograd(self, backward, *, setup_context) -> None:
        torch.library.register_autograd(f"tileir::{self.name}", backward, setup_context=setup_context)

    def __call__(self, *args, **kwargs):
        if _is_compiling() or _dispatch_modes() or _functorch_active() or _jit_tracing() is not None or \
                _function_modes() or _dual_level():
            return self.op(*args, **kwargs)
        grad = torch.is_grad_enabled()
        for a in (*args, *kwargs.values()) if kwargs else args:
            if isinstance(a, _Tensor):
                if type(a) is not _Tensor or a.is_meta or (grad and a.requires_grad):
                    return self.op(*args, **kwargs)  # a subclass (fake tensors), meta, or autograd's formula
            elif hasattr(type(a), "__torch_function__"):
                return self.op(*args, **kwargs)  # an fx Proxy (symbolic_trace) records the op as one node
        return self.impl(*args, **kwargs)

    def __repr__(self) -> str:
        return f"TorchOp(tileir::{self.name})"


def torch_op(name: str):
    """The decorator: ``@torch_op("softmax")`` over the implementation makes ``tileir::softmax``."""
    return functools.partial(TorchOp, name)


__all__ = ["TorchOp", "torch_op"]
