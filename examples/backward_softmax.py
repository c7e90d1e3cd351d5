"""A backward kernel in tileir, registered with torch: softmax's, the worked example of the tutorial
docs/tutorials/backward.md (the page includes this file's sections, between the ``--8<--``
markers, and its output, docs/tutorials/output/backward_softmax.txt; tests/test_training_example.py
runs this file and holds the output to what it prints).

    PYTHONPATH=src python3 examples/backward_softmax.py     # on the CPU: the host reference

It writes a softmax backward kernel (one row a block, the row in one tile), checks it on the host
reference against numpy, makes the library's softmax forward and this backward two
``torch.library.custom_op``s with fake implementations, registers the backward with
``torch.library.register_autograd``, and checks values and gradients against torch's softmax
(f32 and bf16), torch.library.opcheck's tests and a ``torch.compile(fullgraph=True)`` trace -- on
CPU tensors, which run on the host reference; the same code runs on CUDA tensors on the GPU.
"""

from __future__ import annotations

import numpy as np
import torch

import tileir as ti
from tileir import F32, In, Out, PadZero, cells
from tileir.kernels import softmax as softmax_fwd  # the library's forward kernel
from tileir.kernels.launching import launch  # CUDA tensors: the GPU; CPU tensors: the host reference


# --8<-- [start:kernel]
def _rows(fmt="f32", tile=1024):
    """Block r reads row r of an [R, C] array as one [1, tile] cell (C <= tile); the lanes past C
    read zero."""
    return In(fmt, cells(["R", "C"], [1, tile], pad=PadZero))


def _dx(fmt="f32", tile=1024):
    """Block r writes row r of dx (the lanes past C are not written)."""
    return Out(fmt, cells(["R", "C"], [1, tile]))


@ti.kernel
def softmax_bwd_rows(y=_rows, dy=_rows, dx=_dx, *, fmt: str = "f32", tile: int = 1024):
    """dx = y * (dy - sum(dy * y)) along each row of [R, C] arrays of ``fmt``, in f32."""
    yt = ti.to(ti.load_cell(y), F32)
    dyt = ti.to(ti.load_cell(dy), F32)
    total = ti.reduce_sum(yt * dyt, keepdims=True)  # [1, 1]; a padded lane adds 0 * 0
    ti.store_cell(dx, ti.to(yt * (dyt - total), fmt))


def tile_for(cols: int) -> int:
    """The tile a row of ``cols`` needs: the smallest power of two >= cols."""
    return 1 << (int(cols) - 1).bit_length()
# --8<-- [end:kernel]


# --8<-- [start:host]
def check_on_host():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 37)).astype(np.float32)
    y = np.exp(x - x.max(-1, keepdims=True))
    y /= y.sum(-1, keepdims=True)
    dy = rng.standard_normal((5, 37)).astype(np.float32)
    dx = np.zeros_like(y)
    softmax_bwd_rows.run_host(y, dy, dx, tile=tile_for(37))  # R = 5 and C = 37 read off the arrays
    want = y * (dy - (dy * y).sum(-1, keepdims=True))
    np.testing.assert_allclose(dx, want, rtol=1e-5, atol=1e-6)
    print(f"host reference: softmax_bwd_rows of [5, 37] f32 equals numpy (max error {np.abs(dx - want).max():.1e})")
# --8<-- [end:host]


# --8<-- [start:ops]
FMT = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16"}


def _as_rows(t: torch.Tensor) -> torch.Tensor:
    return t.reshape(-1, t.shape[-1]).contiguous()


@torch.library.custom_op("tutorial::softmax", mutates_args=())
def softmax(x: torch.Tensor) -> torch.Tensor:
    """torch.softmax(x, -1) through the library's forward kernel."""
    x2 = _as_rows(x)
    y = torch.empty_like(x2)
    launch(softmax_fwd, x2, y, fmt=FMT[x.dtype])
    return y.reshape(x.shape)


@softmax.register_fake
def _(x):
    return torch.empty_like(x)


@torch.library.custom_op("tutorial::softmax_backward", mutates_args=())
def softmax_backward(y: torch.Tensor, dy: torch.Tensor) -> torch.Tensor:
    """softmax's dx from its output y and the gradient dy, through softmax_bwd_rows."""
    y2, dy2 = _as_rows(y), _as_rows(dy.to(y.dtype))
    dx = torch.empty_like(y2)
    launch(softmax_bwd_rows, y2, dy2, dx, fmt=FMT[y.dtype], tile=tile_for(y.shape[-1]))
    return dx.reshape(y.shape)


@softmax_backward.register_fake
def _(y, dy):
    return torch.empty_like(y)


def setup_context(ctx, inputs, output):
    ctx.save_for_backward(output)  # the backward reads y, not x


def backward(ctx, dy):
    (y,) = ctx.saved_tensors
    return softmax_backward(y, dy)  # one gradient per input of tutorial::softmax


torch.library.register_autograd("tutorial::softmax", backward, setup_context=setup_context)
# --8<-- [end:ops]


# --8<-- [start:check]
def check_against_torch():
    torch.manual_seed(0)
    for dtype, tol in ((torch.float32, 1e-5), (torch.bfloat16, 2e-2)):
        x = torch.randn(4, 6, 300, dtype=dtype)  # CPU tensors: both kernels run on the host reference
        a, b = x.clone().requires_grad_(), x.clone().requires_grad_()
        ya, yb = softmax(a), torch.softmax(b, -1)
        dy = torch.randn_like(ya)
        ya.backward(dy)
        yb.backward(dy)
        torch.testing.assert_close(ya, yb, atol=tol, rtol=tol)
        torch.testing.assert_close(a.grad, b.grad, atol=tol, rtol=tol)
        assert a.grad is not None and b.grad is not None  # (for type checkers: backward() set them)
        err = (a.grad.float() - b.grad.float()).abs().max().item()
        print(f"{str(dtype)[6:]:>8}: y and dx equal torch's (max dx error {err:.1e}, tolerance {tol})")

    # the registrations themselves: schema, fake (meta) implementation, autograd, tracing
    torch.library.opcheck(softmax, (torch.randn(3, 40, requires_grad=True),))
    torch.library.opcheck(softmax_backward, (torch.softmax(torch.randn(3, 40), -1), torch.randn(3, 40)))

    # torch.compile traces the forward and the backward without a graph break
    f = torch.compile(lambda t: (softmax(t) * torch.arange(40.0)).sum(), fullgraph=True, backend="aot_eager")
    x = torch.randn(3, 40, requires_grad=True)
    f(x).backward()
    xr = x.detach().clone().requires_grad_()
    (torch.softmax(xr, -1) * torch.arange(40.0)).sum().backward()
    torch.testing.assert_close(x.grad, xr.grad, atol=1e-5, rtol=1e-5)
    print("opcheck and torch.compile(fullgraph=True): passed")
# --8<-- [end:check]


if __name__ == "__main__":
    check_on_host()
    check_against_torch()
