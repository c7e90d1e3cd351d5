"""The kernel library: real kernels written on the surface, each with a runnable case."""

from .elementwise import saxpy, vadd
from .matmul import matmul, matmul_bf16, matmul_f16, matmul_tf32
from .registry import CASES, Case
from .softmax import softmax

__all__ = ["CASES", "Case", "vadd", "saxpy", "softmax", "matmul", "matmul_f16", "matmul_bf16", "matmul_tf32"]
