"""The kernel library: real kernels written on the surface, each with a runnable case."""

from .elementwise import saxpy, vadd
from .matmul import matmul, matmul_bf16, matmul_f16, matmul_tf32
from .registry import CASES, Case
from .softmax import softmax

__all__ = ["CASES", "Case", "vadd", "saxpy", "softmax", "matmul", "matmul_f16", "matmul_bf16", "matmul_tf32"]

# attention, batched and transposed products, convolution, norms, reductions
from .attention import attention  # noqa: E402
from .bmm import bmm  # noqa: E402
from .conv1d import conv1d  # noqa: E402
from .norms import layernorm, rmsnorm  # noqa: E402
from .reductions import block_max, block_sum, vector_max, vector_sum  # noqa: E402
from .transpose import transpose  # noqa: E402

__all__ += ["layernorm", "rmsnorm", "attention", "bmm", "transpose", "block_sum", "block_max", "vector_sum",
            "vector_max", "conv1d"]

# atomics, scans across blocks, integer products, recurrences
from .histogram import count_values, histogram, histogram_rows, merge_rows  # noqa: E402
from .matmul import tile_for  # noqa: E402
from .matmul_i8 import matmul_i8  # noqa: E402
from .prefix_sum import chunk_totals, prefix_sum, scan_blocks, scan_chunks, scan_lookback  # noqa: E402
from .recurrence import recurrence, recurrence_apply, recurrence_blocks, recurrence_totals  # noqa: E402

__all__ += ["histogram", "histogram_rows", "merge_rows", "count_values", "matmul_i8", "tile_for", "prefix_sum",
            "scan_blocks", "chunk_totals", "scan_chunks", "scan_lookback",
            "recurrence", "recurrence_blocks", "recurrence_totals", "recurrence_apply"]

# training: forwards that save what the backward needs, the backward kernels, transposed products
# (tests/test_backward.py)
from .attention_bwd import (  # noqa: E402
    attention_backward,
    attention_bwd_delta,
    attention_bwd_dkdv,
    attention_bwd_dq,
    attention_bwd_fused,
    attention_forward,
    attention_fwd_lse,
)
from .matmul_t import matmul_nt, matmul_nt_any, matmul_tn, matmul_tn_any, matmul_tn_partial  # noqa: E402
from .norms_bwd import (  # noqa: E402
    layernorm_backward,
    layernorm_bwd,
    layernorm_fwd_stats,
    rmsnorm_backward,
    rmsnorm_bwd,
    rmsnorm_fwd_stats,
    sum_rows,
)
from .softmax_bwd import softmax_bwd  # noqa: E402

__all__ += ["softmax_bwd", "layernorm_fwd_stats", "layernorm_bwd", "layernorm_backward", "rmsnorm_fwd_stats",
            "rmsnorm_bwd", "rmsnorm_backward", "sum_rows", "attention_fwd_lse", "attention_forward",
            "attention_bwd_delta", "attention_bwd_dkdv", "attention_bwd_dq", "attention_bwd_fused",
            "attention_backward", "matmul_nt", "matmul_tn", "matmul_tn_partial", "matmul_tn_any",
            "matmul_nt_any"]

# split-K products and their dispatch, the fp8 product
from .gemm import batched_product, gemm, matmul_partial, matmul_split_k, splitk_reduce  # noqa: E402
from .matmul_3xtf32 import matmul_3xtf32, matmul_3xtf32_nt, product_3xtf32, tf32_halves, tf32_halves_t  # noqa: E402
from .matmul_f8 import matmul_f8  # noqa: E402
from .matmul_persistent import bmm_persistent, matmul_nt_persistent, matmul_persistent  # noqa: E402
from .matmul_stream_k import matmul_nt_stream_k, matmul_stream_k, stream_k  # noqa: E402
from .matmul_stream_k import workspace_words as stream_k_workspace_words  # noqa: E402

__all__ += ["gemm", "batched_product", "matmul_partial", "matmul_split_k", "splitk_reduce", "matmul_f8",
            "matmul_persistent", "matmul_nt_persistent", "bmm_persistent", "matmul_3xtf32", "product_3xtf32",
            "tf32_halves", "matmul_3xtf32_nt", "tf32_halves_t", "matmul_stream_k", "matmul_nt_stream_k", "stream_k",
            "stream_k_workspace_words"]

# the gated MLP's activation, forward and backward
from .swiglu import swiglu_backward, swiglu_bwd, swiglu_forward, swiglu_fwd  # noqa: E402

__all__ += ["swiglu_fwd", "swiglu_bwd", "swiglu_forward", "swiglu_backward"]
