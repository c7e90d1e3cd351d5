"""SwiGLU's gate, forward and backward in one pass each: h = silu(gate) * up over [R, H] halves of a
gated MLP's [R, 2H] product, f32 arithmetic on f32, f16 or bf16 arrays (``fmt``).

gate and up are the two halves of one row-major [R, 2H] array (a view each, the row stride 2H:
the launch reads them in place), cut into [rt, ct] cells along a 2-D grid; the last cells of a
dimension are padded on read and clipped on write. With s = sigmoid(g) = 1 / (1 + 2^(-g log2 e)):

    forward   h  = g s u
    backward  du = dh g s,   dg = dh u s (1 + g (1 - s))

and the backward writes dg and du into the halves of one [R, 2H] gradient, so the gated product's
gradient needs no concatenation. Eager torch spends one pass each on silu, the product and, in the
backward, silu's backward, the two products and the concatenation of the halves' gradients: five
to seven reads and writes of [R, H] where these make two and three (bench/results/swiglu_round1_h200.json).

``swiglu_forward(x)`` / ``swiglu_backward(x, dh)`` run them on [R, 2H] arrays: numpy arrays and CPU
tensors on the host reference, CUDA tensors on the GPU (torch's current stream).
"""

from __future__ import annotations

import numpy as np

from .. import surface as ti
from ..dtypes import F32
from ..kernel import kernel
from ..markers import In, Out, cells
from .entry_hints import entry_hints
from .launching import empty, fmt_of, launch
from .registry import Case, register
from .softmax import LOG2E


def _half(fmt="f32", rt=8, ct=512):
    return In(fmt, cells(["R", "H"], [rt, ct]))


def _half_out(fmt="f32", rt=8, ct=512):
    return Out(fmt, cells(["R", "H"], [rt, ct]))


def _sigmoid(g):
    return 1.0 / (1.0 + ti.exp2(g * -LOG2E))


def _f32(p):
    return ti.to(ti.load_cell(p), F32)


@kernel(hints=entry_hints, tuned=("rt", "ct", "warps", "occupancy"))
def swiglu_fwd(gate=_half, up=_half, h=_half_out, *, fmt: str = "f32", rt: int = 8, ct: int = 512, warps: int = 0,
               occupancy: int = 0):
    """h = silu(gate) * up for [R, H] gate, up and h of ``fmt`` (f32 arithmetic), a block a cell."""
    g = _f32(gate)
    ti.store_cell(h, ti.to(g * _sigmoid(g) * _f32(up), fmt))


@kernel(hints=entry_hints, tuned=("rt", "ct", "warps", "occupancy"))
def swiglu_bwd(gate=_half, up=_half, dh=_half, dgate=_half_out, dup=_half_out, *, fmt: str = "f32", rt: int = 8,
               ct: int = 512, warps: int = 0, occupancy: int = 0):
    """dgate and dup of h = silu(gate) * up from dh, [R, H] arrays of ``fmt`` (f32 arithmetic)."""
    g, u, d = _f32(gate), _f32(up), _f32(dh)
    s = _sigmoid(g)
    ti.store_cell(dup, ti.to(d * g * s, fmt))
    ti.store_cell(dgate, ti.to(d * u * s * (1.0 + g * (1.0 - s)), fmt))


def tiles_for(cols: int) -> dict:
    """The cells a [R, H] half takes: 1024 lanes a block, as wide as H allows up to 1024 (narrow H
    takes more rows a cell). Measured on the H200 (bench/results/swiglu_round1_h200.json, 5 shapes x f16 /
    bf16): one row of 1024 lanes took 27-29 us forward and 41-42 backward at [8192, 2 x 1408] against
    51 and 70-89 for 4 rows of 1024 and 28 and 46-53 for 4 rows of 512; the smallest blocks won at
    every shape (2.3-3.0x torch's GPU time forward, 2.6-3.3x backward)."""
    ct = 64
    while ct < min(int(cols), 1024):
        ct *= 2
    return {"rt": max(1, 1024 // ct), "ct": ct}


def _halves(x):
    n = int(x.shape[-1])
    if n % 2:
        raise ValueError(f"swiglu: the last dimension ({n}) holds gate | up, so it is even")
    return x[..., : n // 2], x[..., n // 2:]


def swiglu_forward(x, h=None, **config):
    """h [R, H] = silu(x[:, :H]) * x[:, H:] for a row-major [R, 2H] x (a fresh h where None)."""
    gate, up = _halves(x)
    fmt = fmt_of(x)
    h = empty(x, tuple(int(n) for n in gate.shape), fmt) if h is None else h
    launch(swiglu_fwd, gate, up, h, fmt=fmt, **{**tiles_for(gate.shape[-1]), **config})
    return h


def swiglu_backward(x, dh, dx=None, **config):
    """dx [R, 2H], the gradient of swiglu_forward's x from dh [R, H] (a fresh dx where None)."""
    gate, up = _halves(x)
    fmt = fmt_of(x)
    dx = empty(x, tuple(int(n) for n in x.shape), fmt) if dx is None else dx
    dgate, dup = _halves(dx)
    launch(swiglu_bwd, gate, up, dh, dgate, dup, fmt=fmt, **{**tiles_for(gate.shape[-1]), **config})
    return dx


def reference(x):
    """float64 numpy: (h, and a function of dh giving dx), from the formulas' own derivation."""
    x = np.asarray(x, np.float64)
    g, u = np.split(x, 2, axis=-1)
    s = 1.0 / (1.0 + np.exp(-g))
    return g * s * u, lambda dh: np.concatenate([dh * u * (s + g * s * (1 - s)), dh * g * s], axis=-1)


def _inputs(size, rng):
    r, c = size
    x = (rng.standard_normal((r, c)) * 2).astype(np.float32)
    return [x[:, : c // 2], x[:, c // 2:], np.zeros((r, c // 2), np.float32)]


register(Case("swiglu_fwd", swiglu_fwd, "h = silu(gate) * up, f32, halves of one [R, 2H] array", (37, 2 * 300),
              lambda size: tiles_for(size[1] // 2), _inputs,
              lambda args: reference(np.concatenate(args[:2], axis=1))[0], output=2, rtol=1e-5, atol=1e-6))
