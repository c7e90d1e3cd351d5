"""The kernel library: real kernels written on the surface, each with a runnable case."""

from .elementwise import saxpy, vadd
from .matmul import matmul, matmul_bf16, matmul_f16, matmul_tf32
from .registry import CASES, Case
from .softmax import softmax

__all__ = ["CASES", "Case", "vadd", "saxpy", "softmax", "matmul", "matmul_f16", "matmul_bf16", "matmul_tf32"]

# more library kernels (tests/test_kernels_more.py)
from .attention import attention  # noqa: E402
from .bmm import bmm  # noqa: E402
from .conv1d import conv1d  # noqa: E402
from .norms import layernorm, rmsnorm  # noqa: E402
from .reductions import block_max, block_sum, vector_max, vector_sum  # noqa: E402
from .transpose import transpose  # noqa: E402

__all__ += ["layernorm", "rmsnorm", "attention", "bmm", "transpose", "block_sum", "block_max", "vector_sum",
            "vector_max", "conv1d"]
