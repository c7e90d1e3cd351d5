"""``tileir.ops``: the library as torch functions.

    import tileir.ops as tops
    y = tops.softmax(x)                          # allocates y on x's device, on torch's current stream
    c = tops.matmul(a, b)                        # f32: torch's precision setting, or precision="3xtf32"
    o = tops.attention(q, k, v, causal=True)     # [B, H, S, D], like F.scaled_dot_product_attention
    y = tops.scaled_mm(a8, w8.t(), sa, sb)       # fp8 with per-tensor scales, like torch._scaled_mm

Each function checks shapes and dtypes (a TileirError that says what to pass), allocates its
output like the torch function it stands for, and calls the library kernel on CUDA tensors --
asynchronously, on torch's current stream -- or, for CPU tensors, on the host reference (the
same program, so a CPU test checks what the GPU runs). Each is a ``torch.library.custom_op``
(``tileir::name``, the ``.op`` of a ``torch_op.TorchOp``) with a fake implementation, so
``torch.compile(fullgraph=True)`` traces a model that uses them without graph breaks, and autograd
formulas where the op has a backward; an eager call skips torch's dispatcher (``tileir.torch_op``:
the implementation itself, or an old-style autograd Function of the same formula; ~17-19 us a call on
a 2-core host).

Matrix products: ``matmul`` runs ``kernels.gemm`` -- split-K where the library's rule says one pass
leaves the GPU idle -- and multiplies f32 operands as torch's own setting says
(``f32_precision``: "highest" -> "3xtf32", "high"/"medium" -> "tf32") unless ``precision`` names one
of "tf32", "3xtf32" (f32 accuracy on tensor cores), "ieee"; ``scaled_mm`` is ``matmul_f8``.
"""

from __future__ import annotations

import math

import torch

from . import kernels as K
from .errors import TileirError
from .kernels.gemm import batched_product as _batched_product
from .kernels.gemm import gemm as _gemm_kernel
from .kernels.launching import launch as _launch
from .kernels.matmul_t import matmul_nt_any as _matmul_nt_any
from .kernels.matmul_t import matmul_tn_any as _matmul_tn_any
from .torch_op import torch_op

_FLOATS = {torch.float16: "f16", torch.bfloat16: "bf16", torch.float32: "f32"}


# An eager call is host-bound at a training step's sizes (bench/results/op_host_cost_h200.json: a bf16 x @ W.T
# 53 us against its kernel's 13 and torch's 18.5), so these helpers read each tensor attribute once and
# make no torch.device objects on the way.


def _fmt(t: torch.Tensor, op: str, allowed=(torch.float16, torch.bfloat16, torch.float32)) -> str:
    dt = t.dtype
    if dt not in allowed:
        names = ", ".join(str(d).rpartition(".")[2] for d in allowed)
        raise TileirError(f"{op} takes {names} tensors, not {str(dt).rpartition('.')[2]}", what=op,
                          fix=f"x.to(torch.{str(allowed[0]).rpartition('.')[2]})")
    f = _FLOATS.get(dt)
    return f if f is not None else str(dt).rpartition(".")[2]


def _same(op: str, *ts: torch.Tensor) -> None:
    first = ts[0]
    dev, cuda, dt = first.get_device(), first.is_cuda, first.dtype
    for t in ts[1:]:
        # CUDA tensors by their index (no torch.device made); the rest (CPU, meta, ...) by their device
        if t.get_device() != dev or t.is_cuda != cuda or (not cuda and t.device != first.device):
            raise TileirError(f"{op}: tensors on {first.device} and {t.device}", what=op,
                              fix=f".to('{first.device}') on every argument")
        if t.dtype != dt:
            raise TileirError(f"{op}: tensors of {first.dtype} and {t.dtype}", what=op,
                              fix=f".to({first.dtype}) on every argument")


def _run(kern, *args, **config) -> None:
    """``kern`` on CUDA tensors (asynchronously, torch's current stream), or on the host reference
    for CPU tensors (their memory, in place)."""
    if getattr(args[0], "is_cuda", False):  # numpy (scaled_mm's f8 on the host) has none
        kern(*args, **config)
    else:
        _launch(kern, *args, **config)


def _like(t: torch.Tensor) -> torch.Tensor:
    """A fresh contiguous tensor of ``t``'s shape, format and device. ``empty_like`` rather than
    ``new_empty(t.shape)``: torch parses a Size argument on every call (on the 2-core build machine
    0.9 against 1.7 us a call; an eager op makes one or two)."""
    return torch.empty_like(t, memory_format=torch.contiguous_format)


def _rows(x: torch.Tensor, op: str) -> torch.Tensor:
    """``x`` as [rows, last dim], a view where the layout allows (a copy otherwise)."""
    n = x.dim()
    if n == 0:
        raise TileirError(f"{op} of a 0-dimensional tensor", what=op, fix="x.reshape(1, -1)")
    if x.numel() == 0:
        raise TileirError(f"{op} of an empty tensor", what=op, fix="skip the call")
    return _dense_last(_2d(x))


def _2d(t: torch.Tensor) -> torch.Tensor:
    """``t`` as [rows, last dim]: itself where it is a matrix already."""
    return t if t.dim() == 2 else t.reshape(-1, t.shape[-1])


# ---- matrix products ---------------------------------------------------------------------------

PRECISIONS = ("tf32", "3xtf32", "ieee")  # matmul_tf32's, as Triton's input_precision names them


def f32_precision(precision: str | None = None) -> str:
    """How ``matmul`` multiplies f32 operands: ``precision`` where given ("tf32", "3xtf32" or
    "ieee"), else torch's own setting for f32 matrix products, read at the call:

    * ``torch.backends.cuda.matmul.fp32_precision`` (torch's newer setting) where it is "ieee" or
      "tf32" -- ``torch.set_float32_matmul_precision`` and ``allow_tf32`` set it too;
    * else ``torch.get_float32_matmul_precision()``: "highest" (torch's default) and "ieee" ->
      "3xtf32", "high" and "medium" -> "tf32".

    torch's default asks for f32 accuracy. tileir gives it with "3xtf32" (three tensor-core
    products of hi/lo tf32 parts: an error within a few times torch's own f32 matmul's,
    tests/test_torch_ops_matmul.py) rather than "ieee" (f32 products without tensor cores:
    tileiras 13.4 runs them as scalar multiply-adds with spills, far slower than cuBLAS's f32);
    ``precision="ieee"`` asks for those by name.

    "high" is "tf32", not "3xtf32", though torch's words for it allow TF32 *or* bf16x3: on CUDA
    torch runs "high" as TF32 (it sets ``fp32_precision = "tf32"``), so tileir's products agree with
    torch's own in the same program, at tf32's speed; 3xtf32 does three tensor-core products for
    f32 accuracy and is asked for by name (``precision="3xtf32"``). "medium" (bf16 inside) has no
    bf16 variant here and gets tf32, the nearer in accuracy, as torch does on CUDA."""
    if precision is not None:
        if precision not in PRECISIONS:
            raise TileirError(f"matmul(precision={precision!r}): the f32 product is one of {', '.join(PRECISIONS)}",
                              what="matmul", fix="precision='tf32' (tensor cores, 10-bit mantissas), '3xtf32' "
                              "(tensor cores, f32 accuracy), 'ieee' (f32 products) or None (torch's setting)")
        return precision
    for setting in (lambda: torch.backends.cuda.matmul.fp32_precision, lambda: torch.backends.fp32_precision):  # type: ignore[attr-defined]
        try:
            p = setting()
        except (AttributeError, RuntimeError):  # an older torch; a mix of torch's two settings
            continue
        if p in ("ieee", "tf32"):
            return "3xtf32" if p == "ieee" else p
    try:
        legacy = torch.get_float32_matmul_precision()
    except RuntimeError:  # torch refuses to answer where its two settings were mixed
        return "3xtf32"
    return "3xtf32" if legacy == "highest" else "tf32"


def _dense(t: torch.Tensor) -> bool:
    """Whether tileir reads ``t`` in place: a dense last dimension, every other stride positive."""
    st, sh = t.stride(), t.shape
    n = len(sh)
    if n == 0 or (st[-1] != 1 and sh[-1] != 1):
        return False
    for i in range(n - 1):
        if st[i] <= 0 and sh[i] != 1:
            return False
    return True


def _dense_last(t: torch.Tensor) -> torch.Tensor:
    """``t`` itself where tileir reads it in place (a slice, a transposed head layout), else a
    contiguous copy (an expanded gradient's stride 0, a transposed matrix)."""
    return t if _dense(t) else t.contiguous()


def _gapless(t: torch.Tensor, reuse: int) -> torch.Tensor:
    """A matrix product's operand as its kernels read it fastest: ``t`` where it is contiguous, or dense
    rows (``_dense``) read about once (``reuse``: the other operand's outer size, the rows or columns
    that read each of its elements), else a contiguous copy. A row pitch wider than the row (a column
    slice ``x[:, :n]``, ``x.chunk(2, -1)``) takes the operand's loads off TMA (the pitch-gap
    workaround, families/views.py ``load_may_read_a_gap``). On the H200, f16 column slices of
    matrices twice as wide (bench/results/unaligned_slices_h200.json): 4096^3 3075 us in place against 274 copied (torch
    180), 4096 x 5000 x 1000 896 against 118 (torch 76); but at 16 rows 37 in place against 64
    copied, where the product reads B once and the copy moves it twice. So a copy where more than
    ``COPY_REUSE`` rows or columns read the operand (not measured between 16 and 4096)."""
    if t.is_contiguous() or (reuse <= COPY_REUSE and _dense(t)):
        return t
    return t.contiguous()


COPY_REUSE = 64  # one 64-row tile of the other operand: the small-M products' tile height


def _gemm(a: torch.Tensor, b: torch.Tensor, precision: str) -> torch.Tensor:
    """a [M, K] @ b [K, N] through ``kernels.gemm``: one pass, or split-K where the rule for this
    GPU says one pass leaves it idle (``heuristics.matmul_split``: a small M, a long K)."""
    out = a.new_empty(a.shape[0], b.shape[1])
    m, n = a.shape[0], b.shape[1]
    _gemm_kernel(_gapless(a, n), _gapless(b, m), out, precision=precision if a.dtype == torch.float32 else None)
    return out


def _nt(a: torch.Tensor, b: torch.Tensor, precision: str) -> torch.Tensor:
    """a [M, K] @ b [N, K]^T: b read through a transposing view (matmul_nt, no copy); f32 products
    other than tf32 (matmul_nt's only one) through ``_gemm`` on a copy of b^T."""
    if a.dtype == torch.float32 and precision != "tf32":
        return _gemm(a, b.t(), precision)
    _fmt(a, "matmul")
    out = a.new_empty(a.shape[0], b.shape[0])
    # one cell a block, or the persistent walk where the rule says so (kernels.matmul_t.matmul_nt_any)
    _matmul_nt_any(_gapless(a, b.shape[0]), _gapless(b, a.shape[0]), out)
    return out


def _tn(a: torch.Tensor, b: torch.Tensor, precision: str) -> torch.Tensor:
    """a [K, M]^T @ b [K, N]: a read through a transposing view (matmul_tn, no copy); f32 products
    other than tf32 through ``_gemm`` on a copy of a^T."""
    if a.dtype == torch.float32 and precision != "tf32":
        return _gemm(a.t(), b, precision)
    out = a.new_empty(a.shape[1], b.shape[1])
    _fmt(a, "matmul")
    # split along K where the product rule says so
    _matmul_tn_any(_gapless(a, b.shape[1]), _gapless(b, a.shape[1]), out)
    return out


@torch_op("matmul")
def matmul(a: torch.Tensor, b: torch.Tensor, precision: str | None = None) -> torch.Tensor:
    """``a @ b`` for a [..., M, K] and b [K, N] (f16, bf16, f32), f32 accumulation.

    f32 operands multiply by ``precision`` ("tf32", "3xtf32", "ieee"; None: torch's own setting,
    see ``f32_precision``); f16 and bf16 products are exact in the f32 accumulator, so it does not
    apply to them. The product runs through ``kernels.gemm``: split-K where the library's rule
    (``heuristics.matmul_split``) says one pass leaves the GPU idle -- a small M and a long K -- and
    one pass otherwise (always, on the host reference). b = W.T of a row-major W [N, K] (a Linear
    layer's weight) is read in place by matmul_nt (one pass; f32 there is tf32 only, so the other
    precisions copy W.T)."""
    fmt = _fmt(a, "matmul")
    _same("matmul", a, b)
    p = f32_precision(precision) if fmt == "f32" or precision is not None else "tf32"
    sa, sb = a.shape, b.shape
    if len(sa) < 1 or len(sb) != 2 or sa[-1] != sb[0]:
        raise TileirError(f"matmul of {list(sa)} and {list(sb)}: the inner sizes must agree and b is "
                          "[K, N]", what="matmul", fix="a [..., M, K] and b [K, N]; bmm for batches of b")
    if a.numel() == 0 or b.numel() == 0:  # torch's answers: empty, or a sum of nothing
        return a.new_zeros(*sa[:-1], sb[1])
    flat = len(sa) == 2
    a2 = _2d(a)
    if _linear_weight(b):
        out = _nt(a2, b.t(), p)  # b is W.T of a row-major W [N, K] (a Linear layer)
    else:
        out = _gemm(a2, b, p)
    return out if flat else out.reshape(*sa[:-1], sb[1])


def _linear_weight(b: torch.Tensor) -> bool:
    """Whether the [K, N] ``b`` is W.T of a row-major W [N, K] (what matmul_nt reads in place)."""
    sb = b.shape
    return b.stride(0) == 1 and sb[0] > 1 and sb[1] > 1


@matmul.register_fake
def _(a, b, precision=None):
    return a.new_empty(*a.shape[:-1], b.shape[1])


@torch_op("matmul_nt")
def _matmul_nt(a: torch.Tensor, b: torch.Tensor, precision: str = "tf32") -> torch.Tensor:
    """a [M, K] @ b[N, K]^T (``_nt``): the backward's dA = dC @ B^T."""
    return _nt(a, b, precision)


@_matmul_nt.register_fake
def _(a, b, precision="tf32"):
    return a.new_empty(a.shape[0], b.shape[0])


@torch_op("matmul_tn")
def _matmul_tn(a: torch.Tensor, b: torch.Tensor, precision: str = "tf32") -> torch.Tensor:
    """a[K, M]^T @ b [K, N] (``_tn``): the backward's dB = A^T @ dC."""
    return _tn(a, b, precision)


@_matmul_tn.register_fake
def _(a, b, precision="tf32"):
    return a.new_empty(a.shape[1], b.shape[1])


def _matmul_setup(ctx, inputs, output):
    a, b, precision = inputs
    ctx.save_for_backward(a, b)
    # the backward multiplies as the forward did, whatever torch's setting is by then
    ctx.precision = f32_precision(precision) if a.dtype == torch.float32 else "tf32"


def _matmul_backward(ctx, grad):
    a, b = ctx.saved_tensors
    g2, a2 = _2d(grad), _2d(a)
    weight = _linear_weight(b)  # b = W.T: W itself is the dense operand, and dW = dC^T @ A comes out dense
    need_a, need_b = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
    da = db = None
    # the products are the custom ops (matmul, matmul_nt / _tn), not _gemm / _nt: torch.compile traces this
    # formula, and only an op has a fake implementation
    if need_a:  # dA = dC @ B^T: for B = W.T that is dC @ W, W read in place (no copy of the weight)
        da = matmul(g2, b.t(), ctx.precision) if weight else _matmul_nt(g2, b, ctx.precision)
        da = da if a.dim() == 2 else da.reshape(a.shape)
    if need_b:  # dB = A^T @ dC; for B = W.T, (dC^T @ A)^T, so that autograd's dW is a dense tensor
        db = _matmul_tn(g2, a2, ctx.precision).t() if weight else _matmul_tn(a2, g2, ctx.precision)
    return da, db, None


matmul.register_autograd(_matmul_backward, setup_context=_matmul_setup)


@torch_op("bmm")
def bmm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``torch.bmm``: [B, M, K] x [B, K, N] -> [B, M, N] (f16, bf16)."""
    _fmt(a, "bmm", (torch.float16, torch.bfloat16))
    _same("bmm", a, b)
    if a.dim() != 3 or b.dim() != 3 or a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
        raise TileirError(f"bmm of {list(a.shape)} and {list(b.shape)}", what="bmm",
                          fix="a [B, M, K] and b [B, K, N]")
    out = a.new_empty(a.shape[0], a.shape[1], b.shape[2])
    # one cell a block, or the persistent walk where the rule says so (kernels.gemm.batched_plan)
    _batched_product(_dense_last(a), _dense_last(b), out)
    return out


@bmm.register_fake
def _(a, b):
    return a.new_empty(a.shape[0], a.shape[1], b.shape[2])


_F8 = {torch.float8_e4m3fn: "f8E4M3FN", torch.float8_e5m2: "f8E5M2"}
_F8_OUT = {torch.bfloat16: "bf16", torch.float16: "f16", torch.float32: "f32"}


def _scaled_mm_check(a, b, scale_a, scale_b, out_dtype) -> None:
    """What matmul_f8 takes, or a TileirError naming the argument and the fix."""
    op = "scaled_mm"
    for name, t in (("a", a), ("b", b)):
        if t.dtype not in _F8:
            raise TileirError(f"{op}: {name} is {str(t.dtype).rpartition('.')[2]}; the operands are float8_e4m3fn "
                              "or float8_e5m2", what=f"{op} {name}", fix=f"{name}.to(torch.float8_e4m3fn), its scale "
                              "beside it (matmul for 16-bit and f32 operands)")
    if b.dtype != a.dtype:
        raise TileirError(f"{op} of {a.dtype} and {b.dtype}: both operands are one format (the dialect's fp8 "
                          "product pairs a format with itself)", what=f"{op} b", fix=f"b.to({a.dtype})")
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise TileirError(f"{op} of {list(a.shape)} and {list(b.shape)}: a is [M, K] and b [K, N]", what=op,
                          fix="a [M, K] and b = w.t() for a weight w [N, K]")
    if not _dense(a):
        raise TileirError(f"{op}: a {list(a.shape)} of strides {list(a.stride())} is not row-major",
                          what=f"{op} a", fix="a.contiguous() (torch._scaled_mm also takes a row-major a)")
    if not _dense(b.t()):
        raise TileirError(f"{op}: b {list(b.shape)} of strides {list(b.stride())} is not column-major; matmul_f8 "
                          "reads b as the weight w [N, K] it is the transpose of", what=f"{op} b",
                          fix="b = w.t() for a row-major w [N, K] (as torch._scaled_mm takes it); "
                              "b.t().contiguous().t() from a row-major b")
    for name, s in (("scale_a", scale_a), ("scale_b", scale_b)):
        if s.dtype != torch.float32 or s.numel() != 1:
            raise TileirError(f"{op}: {name} is a {str(s.dtype).rpartition('.')[2]} tensor of shape {list(s.shape)}; "
                              "matmul_f8 takes one f32 scale per tensor (no row-wise or block scales)",
                              what=f"{op} {name}", fix=f"a float32 tensor of one element: {name}.float() where it "
                              "is one value; row-wise scales folded into the operand before quantising")
    _same(op, a, b)
    for name, s in (("scale_a", scale_a), ("scale_b", scale_b)):
        if s.device != a.device:
            raise TileirError(f"{op}: {name} on {s.device}, the operands on {a.device}", what=f"{op} {name}",
                              fix=f"{name}.to('{a.device}')")
    if out_dtype not in _F8_OUT:
        raise TileirError(f"{op} into {out_dtype}: the result is bfloat16, float16 or float32", what=f"{op} out_dtype",
                          fix="out_dtype=torch.bfloat16")


def _f8_host(t: torch.Tensor):
    """An fp8 tensor as what the launch reads: a numpy view of a CPU tensor's memory (the host
    reference's arrays; torch's numpy() takes no fp8), the tensor itself on CUDA."""
    if t.is_cuda:
        return t
    import ml_dtypes

    return t.view(torch.uint8).numpy().view({torch.float8_e4m3fn: ml_dtypes.float8_e4m3fn,
                                             torch.float8_e5m2: ml_dtypes.float8_e5m2}[t.dtype])


@torch_op("scaled_mm")
def scaled_mm(a: torch.Tensor, b: torch.Tensor, scale_a: torch.Tensor, scale_b: torch.Tensor,
              out_dtype: torch.dtype = torch.bfloat16) -> torch.Tensor:
    """``torch._scaled_mm(a, b, scale_a, scale_b, out_dtype=out_dtype)`` with per-tensor scales:
    (a @ b) * scale_a * scale_b for a [M, K] row-major and b [K, N] column-major (``w.t()`` of a
    weight w [N, K], read in place), both float8_e4m3fn or both float8_e5m2; f32 accumulation,
    the result bfloat16 (the default), float16 or float32; any M, N, K. The kernel is
    ``matmul_f8`` with the tensor core's own accumulation along K (its ``promote=False``; torch's
    ``use_fast_accum=True`` is the like of it). No gradient (fp8 is for inference here).

    Refused, with the fix: other formats, an e4m3 x e5m2 pair (torch takes it; the dialect's fp8
    product does not), a row-major b, row-wise or block scales, an fp8 result, bias and
    scale_result (not arguments here)."""
    _scaled_mm_check(a, b, scale_a, scale_b, out_dtype)
    m, n = a.shape[0], b.shape[1]
    if m == 0 or n == 0 or a.shape[1] == 0:  # torch's answers: empty, or a sum of nothing
        return torch.zeros(m, n, dtype=out_dtype, device=a.device)
    out = torch.empty(m, n, dtype=out_dtype, device=a.device)
    _run(K.matmul_f8, _f8_host(a), _f8_host(b.t()), out, scale_a.reshape(1), scale_b.reshape(1), fmt=_F8[a.dtype],
         out=_F8_OUT[out_dtype])
    return out


@scaled_mm.register_fake
def _(a, b, scale_a, scale_b, out_dtype=torch.bfloat16):
    _scaled_mm_check(a, b, scale_a, scale_b, out_dtype)
    return a.new_empty(a.shape[0], b.shape[1], dtype=out_dtype)


# ---- rows ----------------------------------------------------------------------------------------


@torch_op("softmax")
def _softmax(x: torch.Tensor) -> torch.Tensor:
    kern = K.softmax
    fmt = _fmt(x, "softmax")
    x2 = _rows(x, "softmax")
    y = _like(x2)
    _run(kern, x2, y, fmt=fmt)
    return y.reshape(x.shape)


@_softmax.register_fake
def _(x):
    return x.new_empty(x.shape)


@torch_op("softmax_backward")
def _softmax_backward(y: torch.Tensor, dy: torch.Tensor) -> torch.Tensor:
    y2, dy2 = _rows(y, "softmax"), _rows(dy.to(y.dtype), "softmax")
    dx = torch.empty(y2.shape, dtype=y.dtype, device=y.device)
    _run(K.softmax_bwd, y2, dy2, dx, fmt=_fmt(y, "softmax"))
    return dx.reshape(y.shape)


@_softmax_backward.register_fake
def _(y, dy):
    return y.new_empty(y.shape)


def _softmax_setup(ctx, inputs, output):
    ctx.save_for_backward(output)


def _softmax_grad(ctx, dy):
    (y,) = ctx.saved_tensors
    return _softmax_backward(y, dy)


_softmax.register_autograd(_softmax_grad, setup_context=_softmax_setup)


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """``torch.softmax(x, dim)`` (f32, f16, bf16; f32 arithmetic)."""
    if dim not in (-1, x.dim() - 1):
        return _softmax(x.movedim(dim, -1)).movedim(-1, dim)
    return _softmax(x)


def _norm_args(x, shape, op):
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if len(shape) != 1 or not x.dim() or x.shape[-1] != shape[0]:
        raise TileirError(f"{op} over {list(shape)} of a {list(x.shape)} tensor: tileir normalises the last "
                          "dimension", what=op,
                          fix=f"normalized_shape=[{x.shape[-1]}]" if x.dim() else "x.reshape(1, -1) first")


@torch_op("layer_norm")
def _layer_norm(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, eps: float) -> tuple[torch.Tensor, torch.Tensor,
                                                                                        torch.Tensor]:
    """(y, mean, rstd): the forward and the [rows] f32 statistics its backward reads."""
    fmt = _fmt(x, "layer_norm")
    _same("layer_norm", x, w, b)
    x2 = _rows(x, "layer_norm")
    y = _like(x2)
    mean = x2.new_empty(x2.shape[0], dtype=torch.float32)
    rstd = torch.empty_like(mean)
    _run(K.layernorm_fwd_stats, x2, _dense_last(w), _dense_last(b), y, mean, rstd, eps=float(eps), fmt=fmt)
    return (y if x2 is x else y.reshape(x.shape)), mean, rstd


@_layer_norm.register_fake
def _(x, w, b, eps):
    rows = x.numel() // x.shape[-1]
    return x.new_empty(x.shape), x.new_empty(rows, dtype=torch.float32), x.new_empty(rows, dtype=torch.float32)


@torch_op("layer_norm_backward")
def _layer_norm_backward(x: torch.Tensor, w: torch.Tensor, dy: torch.Tensor, mean: torch.Tensor,
                         rstd: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    x2 = _rows(x, "layer_norm")
    dx, dw, db = K.layernorm_backward(x2, _dense_last(w), _rows(dy.to(x.dtype), "layer_norm"), mean, rstd)
    return dx.reshape(x.shape), dw, db


@_layer_norm_backward.register_fake
def _(x, w, dy, mean, rstd):
    return x.new_empty(x.shape), w.new_empty(w.shape), w.new_empty(w.shape)


def _layer_norm_setup(ctx, inputs, output):
    x, w, _, _ = inputs
    _, mean, rstd = output
    ctx.save_for_backward(x, w, mean, rstd)


def _layer_norm_grad(ctx, dy, _dmean, _drstd):
    x, w, mean, rstd = ctx.saved_tensors
    dx, dw, db = _layer_norm_backward(x, w, dy, mean, rstd)
    return dx, dw, db, None


_layer_norm.register_autograd(_layer_norm_grad, setup_context=_layer_norm_setup, statistics=(1, 2))


def layer_norm(x: torch.Tensor, normalized_shape, weight=None, bias=None, eps: float = 1e-5) -> torch.Tensor:
    """``F.layer_norm`` over the last dimension (f32, f16, bf16; statistics in f32)."""
    _norm_args(x, normalized_shape, "layer_norm")
    n = x.shape[-1]
    w = weight if weight is not None else torch.ones(n, dtype=x.dtype, device=x.device)
    b = bias if bias is not None else torch.zeros(n, dtype=x.dtype, device=x.device)
    return _layer_norm(x, w, b, eps)[0]


@torch_op("rms_norm")
def _rms_norm(x: torch.Tensor, w: torch.Tensor, eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    """(y, rstd): the forward and the [rows] f32 statistic its backward reads."""
    fmt = _fmt(x, "rms_norm")
    _same("rms_norm", x, w)
    x2 = _rows(x, "rms_norm")
    y = _like(x2)
    rstd = x2.new_empty(x2.shape[0], dtype=torch.float32)
    _run(K.rmsnorm_fwd_stats, x2, _dense_last(w), y, rstd, eps=float(eps), fmt=fmt)
    return (y if x2 is x else y.reshape(x.shape)), rstd


@_rms_norm.register_fake
def _(x, w, eps):
    return x.new_empty(x.shape), x.new_empty(x.numel() // x.shape[-1], dtype=torch.float32)


@torch_op("rms_norm_backward")
def _rms_norm_backward(x: torch.Tensor, w: torch.Tensor, dy: torch.Tensor,
                       rstd: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    x2 = _rows(x, "rms_norm")
    dx, dw = K.rmsnorm_backward(x2, _dense_last(w), _rows(dy.to(x.dtype), "rms_norm"), rstd)
    return dx.reshape(x.shape), dw


@_rms_norm_backward.register_fake
def _(x, w, dy, rstd):
    return x.new_empty(x.shape), w.new_empty(w.shape)


def _rms_norm_setup(ctx, inputs, output):
    x, w, _ = inputs
    ctx.save_for_backward(x, w, output[1])


def _rms_norm_grad(ctx, dy, _drstd):
    x, w, rstd = ctx.saved_tensors
    dx, dw = _rms_norm_backward(x, w, dy, rstd)
    return dx, dw, None


_rms_norm.register_autograd(_rms_norm_grad, setup_context=_rms_norm_setup, statistics=(1,))


def rms_norm(x: torch.Tensor, normalized_shape, weight=None, eps: float | None = None) -> torch.Tensor:
    """``F.rms_norm`` over the last dimension (eps: torch's default, the format's epsilon, when None)."""
    _norm_args(x, normalized_shape, "rms_norm")
    w = weight if weight is not None else torch.ones(x.shape[-1], dtype=x.dtype, device=x.device)
    if eps is None:
        eps = _EPS.get(x.dtype)
        if eps is None:
            eps = _EPS[x.dtype] = torch.finfo(x.dtype).eps
    return _rms_norm(x, w, eps)[0]


_EPS: dict = {}  # torch.finfo(dtype).eps, F.rms_norm's default, read once a format


# ---- attention -----------------------------------------------------------------------------------


@torch_op("attention")
def _attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool, scale: float) -> torch.Tensor:
    kern = K.attention
    fmt = _fmt(q, "attention", (torch.float16, torch.bfloat16))
    _same("attention", q, k, v)
    if q.dim() != 4 or k.dim() != 4 or v.dim() != 4:
        raise TileirError(f"attention of {list(q.shape)}, {list(k.shape)}, {list(v.shape)}: q, k, v are "
                          "[B, H, S, D]", what="attention", fix="x.view(B, S, H, D).transpose(1, 2) for [B, S, H, D]")
    sq, sk, sv = q.shape, k.shape, v.shape
    b, h, _, d = sq
    if sk[0] != b or sv[0] != b or sk[3] != d or sv[3] != d or sk[:3] != sv[:3] or h % sk[1]:
        raise TileirError(f"attention of {list(sq)}, {list(sk)}, {list(sv)}: k and v are "
                          "[B, H_kv, S_kv, D] with H a multiple of H_kv", what="attention")
    o = _like(q)
    _run(kern, _dense_last(q), _dense_last(k), _dense_last(v), o, causal=bool(causal), scale=float(scale), fmt=fmt)
    return o


@_attention.register_fake
def _(q, k, v, causal, scale):
    return q.new_empty(q.shape)


@torch_op("attention_lse")
def _attention_lse(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool,
                   scale: float) -> tuple[torch.Tensor, torch.Tensor]:
    """(o, lse): the forward that keeps each query row's log-sum-exp for the backward (q, k, v of
    one shape [B, H, S, D])."""
    _fmt(q, "attention", (torch.float16, torch.bfloat16))
    _same("attention", q, k, v)
    return K.attention_forward(_dense_last(q), _dense_last(k), _dense_last(v), causal=bool(causal),
                               scale=float(scale))


@_attention_lse.register_fake
def _(q, k, v, causal, scale):
    return q.new_empty(q.shape), q.new_empty(q.shape[:3], dtype=torch.float32)


@torch_op("attention_backward")
def _attention_backward(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, o: torch.Tensor, do: torch.Tensor,
                        lse: torch.Tensor, causal: bool, scale: float) -> tuple[torch.Tensor, torch.Tensor,
                                                                                torch.Tensor]:
    return K.attention_backward(_dense_last(q), _dense_last(k), _dense_last(v), _dense_last(o),
                              _dense_last(do.to(q.dtype)), lse, causal=bool(causal), scale=float(scale))


@_attention_backward.register_fake
def _(q, k, v, o, do, lse, causal, scale):
    return q.new_empty(q.shape), k.new_empty(k.shape), v.new_empty(v.shape)


def _attention_setup(ctx, inputs, output):
    q, k, v, causal, scale = inputs
    o, lse = output
    ctx.save_for_backward(q, k, v, o, lse)
    ctx.causal, ctx.scale = causal, scale


def _attention_grad(ctx, do, _dlse):
    q, k, v, o, lse = ctx.saved_tensors
    dq, dk, dv = _attention_backward(q, k, v, o, do, lse, ctx.causal, ctx.scale)
    return dq, dk, dv, None, None


_attention_lse.register_autograd(_attention_grad, setup_context=_attention_setup, statistics=(1,))


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, causal: bool = False,
              scale: float | None = None) -> torch.Tensor:
    """``F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)`` for [B, H, S, D]
    tensors (f16, bf16), grouped-query heads (k, v with H_kv dividing H) included. Where a gradient
    is wanted the forward keeps its log-sum-exp and the backward is FlashAttention-2's (grouped
    heads through k and v repeated to H heads, their gradients summed back)."""
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
    if (q.requires_grad or k.requires_grad or v.requires_grad) and torch.is_grad_enabled():
        if k.shape[1] != q.shape[1]:  # grouped heads: autograd sums the repeated heads' gradients
            if q.dim() != 4 or k.dim() != 4 or q.shape[1] % k.shape[1]:
                raise TileirError(f"attention of q {list(q.shape)} and k {list(k.shape)}: k and v are [B, H_kv, "
                                  "S, D] with H_kv dividing q's H", what="attention")
            rep = q.shape[1] // k.shape[1]
            k, v = k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1)
        if k.shape != q.shape:
            raise TileirError(f"attention's backward of q {list(q.shape)} and k {list(k.shape)}: the training "
                              "path takes one sequence length", what="attention",
                              fix="k and v with q's sequence length, or no gradient (torch.no_grad())")
        return _attention_lse(q, k, v, causal, scale)[0]
    return _attention(q, k, v, causal, scale)


# ---- the gated MLP's activation -------------------------------------------------------------------


def _gated(x: torch.Tensor, op: str) -> torch.Tensor:
    """``x`` [..., 2H] as [R, 2H] (its halves gate | up), refused where the halves cannot be."""
    _fmt(x, op)
    if x.dim() == 0 or x.shape[-1] % 2:
        raise TileirError(f"{op} of a {list(x.shape)} tensor: the last dimension holds gate | up, so it is even",
                          what=op, fix="torch.cat([gate, up], -1), or x of an even last dimension")
    return _rows(x, op)


@torch_op("swiglu")
def swiglu(x: torch.Tensor) -> torch.Tensor:
    """``F.silu(gate) * up`` for ``gate, up = x.chunk(2, -1)`` (f32, f16, bf16; f32 arithmetic): a
    gated MLP's activation over its one [..., 2H] product, in one pass, and its backward in one more
    that writes both halves' gradient into one [..., 2H] tensor (no concatenation)."""
    if x.numel() == 0 and x.dim() and not x.shape[-1] % 2:
        return x.new_empty(*x.shape[:-1], x.shape[-1] // 2)
    h = K.swiglu_forward(_gated(x, "swiglu"))
    return h.reshape(*x.shape[:-1], x.shape[-1] // 2)


@swiglu.register_fake
def _(x):
    return x.new_empty(*x.shape[:-1], x.shape[-1] // 2)


@torch_op("swiglu_backward")
def _swiglu_backward(x: torch.Tensor, dh: torch.Tensor) -> torch.Tensor:
    if x.numel() == 0:
        return torch.zeros_like(x)
    dx = K.swiglu_backward(_gated(x, "swiglu"), _rows(dh.to(x.dtype), "swiglu"))
    return dx.reshape(x.shape)


@_swiglu_backward.register_fake
def _(x, dh):
    return x.new_empty(x.shape)


def _swiglu_setup(ctx, inputs, output):
    ctx.save_for_backward(inputs[0])


def _swiglu_grad(ctx, dh):
    (x,) = ctx.saved_tensors
    return _swiglu_backward(x, dh)


swiglu.register_autograd(_swiglu_grad, setup_context=_swiglu_setup)


# ---- the rest ------------------------------------------------------------------------------------


@torch_op("transpose")
def transpose(x: torch.Tensor) -> torch.Tensor:
    """``x.t().contiguous()`` for a [M, N] matrix: a new [N, M] tensor."""
    kern = K.transpose
    fmt = _fmt(x, "transpose", (torch.float32, torch.float16, torch.bfloat16))
    if x.dim() != 2:
        raise TileirError(f"transpose of a {x.dim()}-dimensional tensor", what="transpose", fix="a [M, N] matrix")
    out = x.new_empty(x.shape[1], x.shape[0])
    _run(kern, _dense_last(x), out, fmt=fmt)
    return out


@transpose.register_fake
def _(x):
    return x.new_empty(x.shape[1], x.shape[0])


@torch_op("cumsum")
def _cumsum(x: torch.Tensor) -> torch.Tensor:
    if x.dtype not in (torch.float32, torch.int32):
        raise TileirError(f"cumsum of {x.dtype}", what="cumsum", fix="x.float() (or x.int())")
    flat = x.reshape(-1).contiguous()
    out = torch.empty_like(flat)
    K.prefix_sum(flat, out)  # a CPU tensor on the host reference, in its memory
    return out.reshape(x.shape)


@_cumsum.register_fake
def _(x):
    return x.new_empty(x.shape)


def cumsum(x: torch.Tensor, dim: int = 0) -> torch.Tensor:
    """``torch.cumsum`` of a 1-D tensor (f32 or i32)."""
    if x.dim() != 1 or dim not in (0, -1):
        raise TileirError(f"cumsum along {dim} of a {x.dim()}-dimensional tensor", what="cumsum",
                          fix="a 1-D tensor (x.reshape(-1))")
    return _cumsum(x)


@torch_op("histc")
def _histc(x: torch.Tensor, bins: int) -> torch.Tensor:
    if x.dtype != torch.int32:
        raise TileirError(f"histc of {x.dtype}: tileir's histogram counts i32 values in [0, bins)", what="histc",
                          fix="x.int() of values in [0, bins)")
    counts = torch.zeros(bins, dtype=torch.int32, device=x.device)
    K.count_values(x.reshape(-1).contiguous(), counts)
    return counts


@_histc.register_fake
def _(x, bins):
    return x.new_empty(bins, dtype=torch.int32)


def histc(x: torch.Tensor, bins: int) -> torch.Tensor:
    """Counts of the i32 values of ``x`` in [0, bins) (``torch.bincount(x, minlength=bins)``)."""
    return _histc(x, int(bins))


__all__ = ["matmul", "scaled_mm", "f32_precision", "PRECISIONS", "bmm", "softmax", "layer_norm", "rms_norm",
           "attention", "swiglu", "transpose", "cumsum", "histc"]
