"""What the backward kernels' multi-launch helpers share: where a launch runs and fresh arrays in
the caller's array library.

A helper that runs more than one kernel (a norm's backward and its reduction of the weight
gradients, attention's three backward kernels) takes numpy arrays -- then every launch runs on
the host reference -- or torch tensors: CUDA ones launch on the GPU (asynchronously, on torch's
current stream, so each launch follows the one before it), CPU ones run on the host reference in
their own memory.
"""

from __future__ import annotations

import numpy as np

from ..heuristics import pow2_at_least

_FMTS = {"float32": "f32", "float16": "f16", "bfloat16": "bf16"}


def on_host(a) -> bool:
    """Whether launches on ``a`` run on the host reference: numpy, or a torch tensor on the CPU."""
    if isinstance(a, np.ndarray):
        return True
    return getattr(a, "is_cuda", True) is False


def launch(kern, *args, **config) -> None:
    """``kern`` on ``args``: the host reference for numpy arrays and CPU tensors (in place), the
    GPU otherwise."""
    if args and getattr(args[0], "is_cuda", False):  # a CUDA tensor first: the GPU, asked once
        kern(*args, **config)
        return
    arrays = [a for a in args if hasattr(a, "shape")]
    if arrays and on_host(arrays[0]):
        from ..runtime.arrays import host_view

        kern.run_host(*[host_view(a)[0] for a in args], **config)
        return
    kern(*args, **config)


def in_host_views(fn, x, out):
    """``fn(x, out)`` on numpy views of the tensors x and out (what the host reference runs on, in
    a CPU tensor's own memory), the answer copied back into ``out`` where its view is a copy (a
    CUDA tensor); answers out."""
    from ..runtime.arrays import host_view

    (xv, _), (ov, back) = host_view(x), host_view(out)
    fn(xv, ov)
    if back is not None:
        back(out, ov)
    return out


def fmt_of(a) -> str:
    """f32 / f16 / bf16 for an array of float32 / float16 / bfloat16 (numpy or torch)."""
    name = str(a.dtype).replace("torch.", "")
    if name not in _FMTS:
        raise TypeError(f"the backward kernels take float32, float16 or bfloat16 arrays, not {name}")
    return _FMTS[name]


def empty(like, shape, fmt: str):
    """A fresh array of ``shape`` and ``fmt`` (f32 / f16 / bf16 / i32 / i64) in ``like``'s library and device."""
    if isinstance(like, np.ndarray):
        from ..dtypes import dtype

        return np.empty(tuple(int(n) for n in shape), dtype(fmt).np)
    if not _TORCH_DTYPES:
        import torch

        _TORCH_DTYPES.update({"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "i32": torch.int32,
                              "i64": torch.int64})
    # a training step makes dozens: no per-call import
    return like.new_empty(tuple(int(n) for n in shape), dtype=_TORCH_DTYPES[fmt])


_TORCH_DTYPES: dict = {}


def zeros(like, shape, fmt: str):
    """``empty`` filled with zeros."""
    a = empty(like, shape, fmt)
    if isinstance(a, np.ndarray):
        a[...] = 0
    else:
        a.zero_()
    return a


__all__ = ["on_host", "launch", "in_host_views", "fmt_of", "empty", "zeros", "pow2_at_least"]
