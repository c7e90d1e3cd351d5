"""The benchmark workloads' inputs and answers, shared by bench/h200.py (tileir, torch and cuTile
timed) and bench/tune_h200.py (the configuration sweeps): each maker answers fresh CUDA tensors
with the output last, each reference what that output must hold."""

from __future__ import annotations

import torch

DEV = "cuda"
VADD_N = 1 << 28
SIDE = 8192  # the matmuls' (tf32: 4096) and the row kernels' square
HEADS = 32
ATTENTION = (4, HEADS, 4096, 128)  # B, H, S, D


def library_config(kern, sizes: dict, **static) -> dict:
    """The whole configuration a plain GPU call of ``kern`` at these run-time sizes (by name: M N K,
    R C, B H S D ...) runs with ``static`` (formats, flags): its tuned keys from the tune cache's
    winner, else the default table's (KernelFn.tuned_config), the rest the kernel's defaults. What
    the records cite and the cuTile peers are given."""
    from tileir.autotune import this_gpu

    return kern.config(**kern.tuned_config(dict(static), this_gpu(), sizes))


def vadd_inputs(n=VADD_N):
    return [torch.randn(n, device=DEV), torch.randn(n, device=DEV), torch.empty(n, device=DEV)]


def vadd_ref(a):
    return a[0] + a[1]


def matmul_inputs(s, dt):
    return [torch.randn(s, s, device=DEV).to(dt) / 8, torch.randn(s, s, device=DEV).to(dt) / 8,
            torch.empty(s, s, device=DEV, dtype=dt)]


def matmul_ref(a):
    return a[0].float() @ a[1].float()


def int8_inputs(s=SIDE):
    return [torch.randint(-128, 128, (s, s), device=DEV, dtype=torch.int8) for _ in range(2)] + [
        torch.empty(s, s, device=DEV, dtype=torch.int32)]


def int8_ref(a):
    return torch._int_mm(a[0], a[1])


def softmax_inputs(rows=SIDE, cols=SIDE):
    return [torch.randn(rows, cols, device=DEV) * 4, torch.empty(rows, cols, device=DEV)]


def softmax_ref(a):
    return torch.softmax(a[0].double(), 1)


def layernorm_inputs(rows=SIDE, cols=SIDE):
    return [torch.randn(rows, cols, device=DEV).half(), torch.randn(cols, device=DEV).half(),
            torch.randn(cols, device=DEV).half(), torch.empty(rows, cols, device=DEV, dtype=torch.half)]


def layernorm_ref(a, eps=1e-5):
    return torch.nn.functional.layer_norm(a[0].float(), (a[0].shape[1],), a[1].float(), a[2].float(), eps)


def rmsnorm_inputs(rows=SIDE, cols=SIDE):
    return [torch.randn(rows, cols, device=DEV).half(), torch.randn(cols, device=DEV).half(),
            torch.empty(rows, cols, device=DEV, dtype=torch.half)]


def rmsnorm_ref(a, eps=1e-6):
    x = a[0].float()
    return x * torch.rsqrt((x * x).mean(1, keepdim=True) + eps) * a[1].float()


def attention_inputs(b=ATTENTION[0], h=ATTENTION[1], seq=ATTENTION[2], d=ATTENTION[3]):
    """q, k, v, o: [B, H, S, D] half tensors (torch's layout)."""
    return [torch.randn(b, h, seq, d, device=DEV).half() for _ in range(3)] + [
        torch.empty(b, h, seq, d, device=DEV, dtype=torch.half)]


def attention_ref(a, causal):
    return torch.nn.functional.scaled_dot_product_attention(*a[:3], is_causal=causal)
