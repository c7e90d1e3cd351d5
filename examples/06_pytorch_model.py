"""Tutorial 6: tileir in a PyTorch model -- the library's ops (tileir.ops), a kernel of your own
as a torch custom op, and torch.compile(fullgraph=True).

    python examples/06_pytorch_model.py            # CPU tensors: the host reference (no GPU needed)
    python examples/06_pytorch_model.py --device   # CUDA tensors, compiled with inductor, timed

Exits nonzero if the model's output differs from the same model written in plain torch.
"""

from __future__ import annotations

import os
import sys

import torch
import torch.nn.functional as F  # noqa: N812  (torch's own spelling)
from tutorial import tutorial_args

import tileir as ti
import tileir.ops as tops
from tileir import F16, F32, In, Out, cells


# --8<-- [start:kernel]
# A kernel of your own: the SwiGLU gate, silu(g) * u, fused into one pass over [R, C] f16 arrays.
# g and u will be the two column halves of one matrix product's output: slices whose rows are
# 2C apart, which the kernel reads in place (the row stride is a run-time parameter too).
@ti.kernel
def swiglu_kernel(g=In(F16, cells(["R", "C"], [16, 64])), u=In(F16, cells(["R", "C"], [16, 64])),
                  y=Out(F16, cells(["R", "C"], [16, 64]))):
    """y = silu(g) * u = g / (1 + exp(-g)) * u, computed in f32, for [R, C] f16 arrays."""
    gt, ut = ti.to(ti.load_cell(g), F32), ti.to(ti.load_cell(u), F32)
    ti.store_cell(y, ti.to(gt / (ti.exp(-gt) + 1.0) * ut, F16))


# As a torch custom op: torch.compile sees one opaque call (no graph break) whose output the fake
# implementation describes without running anything. The call launches on torch's current stream
# for CUDA tensors; for CPU tensors it runs on the host reference when TILEIR_INTERPRET=1.
@torch.library.custom_op("tutorial::swiglu", mutates_args=())
def swiglu(gu: torch.Tensor) -> torch.Tensor:
    """silu(gu[..., :C]) * gu[..., C:] for gu [..., 2C]."""
    c = gu.shape[-1] // 2
    rows = gu.reshape(-1, 2 * c)
    y = rows.new_empty(rows.shape[0], c)
    swiglu_kernel(rows[:, :c], rows[:, c:], y)  # two views of one tensor: nothing copied
    return y.reshape(*gu.shape[:-1], c)


@swiglu.register_fake
def _(gu):
    return gu.new_empty(*gu.shape[:-1], gu.shape[-1] // 2)

# --8<-- [end:kernel]

class Block(torch.nn.Module):
    """A pre-norm transformer block: x + attention(layer_norm(x)), then x + mlp(rms_norm(x)) with a
    SwiGLU MLP. ``ops`` is tileir.ops or the plain-torch stand-in below: the same weights either way."""

    def __init__(self, dim: int, heads: int, hidden: int, ops):
        super().__init__()
        self.ops, self.heads = ops, heads
        self.norm1_w, self.norm1_b = torch.nn.Parameter(torch.ones(dim)), torch.nn.Parameter(torch.zeros(dim))
        self.qkv = torch.nn.Parameter(torch.randn(dim, 3 * dim) / dim ** 0.5)
        self.proj = torch.nn.Parameter(torch.randn(dim, dim) / dim ** 0.5)
        self.norm2_w = torch.nn.Parameter(torch.ones(dim))
        self.up = torch.nn.Parameter(torch.randn(dim, 2 * hidden) / dim ** 0.5)
        self.down = torch.nn.Parameter(torch.randn(hidden, dim) / hidden ** 0.5)

    def forward(self, x):  # x [B, S, dim]
        ops = self.ops
        b, s, dim = x.shape
        h = ops.layer_norm(x, [dim], self.norm1_w, self.norm1_b)
        q, k, v = ops.matmul(h, self.qkv).view(b, s, 3, self.heads, dim // self.heads).permute(2, 0, 3, 1, 4)
        att = ops.attention(q.contiguous(), k.contiguous(), v.contiguous(), causal=True)  # [B, H, S, D]
        x = x + ops.matmul(att.transpose(1, 2).reshape(b, s, dim), self.proj)
        h = ops.rms_norm(x, [dim], self.norm2_w, 1e-6)
        return x + ops.matmul(ops.swiglu(ops.matmul(h, self.up)), self.down)


class TileirOps:
    """tileir.ops and the user's swiglu."""

    matmul, layer_norm, rms_norm, attention = tops.matmul, tops.layer_norm, tops.rms_norm, tops.attention
    swiglu = staticmethod(swiglu)


class TorchOps:
    """The same operations in plain torch, computed in f32 (the reference)."""

    @staticmethod
    def matmul(a, b):
        return (a.float() @ b.float()).to(a.dtype)

    @staticmethod
    def layer_norm(x, shape, w, b):
        return F.layer_norm(x.float(), shape, w.float(), b.float()).to(x.dtype)

    @staticmethod
    def rms_norm(x, shape, w, eps):
        return F.rms_norm(x.float(), shape, w.float(), eps).to(x.dtype)

    @staticmethod
    def attention(q, k, v, causal):
        return F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal).to(q.dtype)

    @staticmethod
    def swiglu(gu):
        g, u = gu.float().chunk(2, dim=-1)
        return (F.silu(g) * u).to(gu.dtype)


class TorchNativeOps:
    """The same operations as torch runs them in the tensors' own format (for the timing)."""

    matmul = staticmethod(torch.matmul)
    layer_norm, rms_norm = staticmethod(F.layer_norm), staticmethod(F.rms_norm)

    @staticmethod
    def attention(q, k, v, causal):
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    @staticmethod
    def swiglu(gu):
        g, u = gu.chunk(2, dim=-1)
        return F.silu(g) * u


def _timings(model, x, dim, heads, hidden, backend) -> str:
    """Milliseconds a forward of the compiled tileir model and of the same model in torch's own
    f16 operations, compiled the same way."""
    from tileir.runtime.timing import median_ms

    same = torch.nn.Sequential(*(Block(dim, heads, hidden, TorchNativeOps) for _ in model))
    same.load_state_dict(model.state_dict())
    native = torch.compile(same.to(x.device, x.dtype), fullgraph=True, backend=backend)
    model = torch.compile(model, fullgraph=True, backend=backend)
    with torch.no_grad():
        return f"tileir {median_ms(lambda: model(x), 10, 3):.2f}, torch {median_ms(lambda: native(x), 10, 3):.2f}"


def main(argv=None) -> int:
    args = tutorial_args(argv, __doc__, "CUDA tensors (default: CPU, the host reference)")
    if args is None:
        return 2
    if args.device:
        device, (batch, seq, dim, heads, hidden, layers) = "cuda", (8, 1024, 1024, 8, 2816, 4)
        backend = "inductor"  # torch.compile's default
    else:
        # CPU tensors: tileir.ops runs them on the host reference by itself; the user's kernel is a
        # plain call, which TILEIR_INTERPRET=1 sends there too
        os.environ["TILEIR_INTERPRET"] = "1"
        device, (batch, seq, dim, heads, hidden, layers) = "cpu", (2, 24, 64, 2, 64, 2)
        backend = "eager"  # the captured graph run as it is: no C++ compiled for the CPU
    where = "the GPU" if args.device else "the host reference"

    torch.manual_seed(0)
    mine = torch.nn.Sequential(*(Block(dim, heads, hidden, TileirOps) for _ in range(layers)))
    ref = torch.nn.Sequential(*(Block(dim, heads, hidden, TorchOps) for _ in range(layers)))
    ref.load_state_dict(mine.state_dict())  # the same weights
    mine, ref = mine.half().to(device), ref.half().to(device)
    x = torch.randn(batch, seq, dim).half().to(device)

    captured: list = []

    def capture(gm, example_inputs):
        # a torch.compile backend is a function of the captured graph: this one notes the graph's
        # calls, then hands it to the real backend
        captured.extend(str(n.target) for n in gm.graph.nodes if n.op == "call_function")
        if backend == "eager":
            return gm.forward
        from torch._dynamo import lookup_backend

        return lookup_backend(backend)(gm, example_inputs)

    with torch.no_grad():
        want = ref(x).float()
        eager = mine(x).float()
        # fullgraph=True: a graph break would be an error. Every tileir op is one node of the graph.
        compiled = torch.compile(mine, fullgraph=True, backend=capture)
        got = compiled(x).float()
    scale = want.abs().max().item()
    err_eager = (eager - want).abs().max().item()
    err_compiled = (got - want).abs().max().item()
    ok = err_eager <= 2e-2 * scale and err_compiled <= 2e-2 * scale
    print(f"{layers} blocks, x [{batch}, {seq}, {dim}] f16, on {where}: max |y| = {scale:.2f}")
    print(f"eager:                                 max |y - plain torch (f32 math)| = {err_eager:.2e}")
    print(f"torch.compile(fullgraph=True, {backend}): max |y - plain torch (f32 math)| = {err_compiled:.2e}")
    ours = [t for t in captured if t.startswith(("tileir.", "tutorial."))]
    print(f"one graph of {len(captured)} calls; {len(ours)} are tileir's: "
          + ", ".join(f"{t} x{ours.count(t)}" for t in sorted(set(ours))))
    if args.device:
        print("ms a forward, compiled: " + _timings(mine, x, dim, heads, hidden, backend))
    print("ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
