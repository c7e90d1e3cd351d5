"""A user's program written the way the tutorials write one (examples/01_vector_add.py,
02_fused_softmax.py, 06_pytorch_model.py): it must type-check without one error
(tests/test_typing.py runs mypy on it). It is never run; the names its kernels take are the
tutorials' own."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

import tileir as ti
import tileir.ops
from tileir import F32, FREE_AXIS, In, Kernel, KernelFn, Out, PadNegInf, Shared, TileirError, TileProg, cells
from tileir.kernel import kernel


@ti.kernel
def vadd(a=lambda tile: In(F32, cells(["N"], [tile])),
         b=lambda tile: In(F32, cells(["N"], [tile])),
         c=lambda tile: Out(F32, cells(["N"], [tile])), *, tile: int = 1024) -> None:
    """c = a + b."""
    ti.store_cell(c, ti.load_cell(a) + ti.load_cell(b))


def _one_tile_grid(R: int, C: int, block: int) -> tuple[int]:  # noqa: N803
    if C > block:
        raise TileirError(f"a row of {C} does not fit one tile of {block}", kernel="softmax_one_tile",
                          what="block", fix="a larger block")
    return (R,)


@ti.kernel(grid=_one_tile_grid)
def softmax_one_tile(x=lambda block: In(F32, cells(["R", "C"], [1, block], pad=PadNegInf)),
                     y=lambda block: Out(F32, cells(["R", "C"], [1, block])), *, block: int = 1024) -> None:
    row = ti.load_cell(x)
    e = ti.exp(row - ti.reduce_max(row, keepdims=True))
    ti.store_cell(y, e / ti.reduce_sum(e, keepdims=True))


@ti.kernel
def softmax_chunked(x=lambda chunk: In(F32, cells(["R", "C"], [1, chunk], along=[0, FREE_AXIS], pad=PadNegInf)),
                    y=Shared(F32, ["R", "C"]), *, chunk: int = 1024) -> None:
    r = ti.block_id(0)
    m = ti.carry(ti.full([1, 1], -math.inf, F32))
    s = ti.carry(ti.full([1, 1], 0.0, F32))
    for j in ti.d_range(0, ti.blocks_of(x, 1)):
        c = ti.load_at(x, [j])
        m_new = ti.max(ti.get(m), ti.reduce_max(c, keepdims=True))
        ti.set(s, ti.get(s) * ti.exp(ti.get(m) - m_new) + ti.reduce_sum(ti.exp(c - m_new), keepdims=True))
        ti.set(m, m_new)
    out = ti.partition_view(ti.array_view(y), [1, chunk])
    for j in ti.d_range(0, ti.blocks_of(x, 1)):
        ti.store_view(out, [r, j], ti.exp(ti.load_at(x, [j]) - ti.get(m)) / ti.get(s))


@ti.kernel
def affine(x=In(F32, cells([4096], [1024])), y=Out(F32, cells([4096], [1024])), *, k: float = 2.0) -> None:
    t: ti.Tile = ti.load_cell(x)
    u: ti.Tile = 1.0 - t * k + t / 3.0
    ti.store_cell(y, abs(-u) ** 2)


@kernel(name="scaled", hints=())
def scale(x=In(F32, cells(["N"], [256])), y=Out(F32, cells(["N"], [256])), *, by: float = 2.0) -> None:
    ti.store_cell(y, ti.load_cell(x) * by)


def forms() -> None:
    # every form of a kernel, typed: what @kernel (from tileir or tileir.kernel) answers is a KernelFn
    k: KernelFn = scale
    prog: TileProg = k.program(by=3.0)
    low: Kernel = k.kernel((True,), checked=True)
    code: bytes = k.bytecode("13.3") + k.bytecode((13, 3), by=1.5)
    cubin: bytes = k.cubin("sm_100", opt_level=3, by=0.5)
    cfg: dict[str, Any] = k.config(by=4.0)
    hidden: int = len(k.plan(cfg, checked=True).hidden)
    tuned: dict[str, Any] = k.tuned_config(cfg, "sm_90", {"N": 4096})
    made: int = k.compiled()["recordings"]
    x, y = np.ones(1024, np.float32), np.empty(1024, np.float32)
    ok: bool = k.check(x, y, judge="exact", by=2.0).ok and k.check(x, y, judge={"y": "bits"}).ok
    k(torch.ones(1024), torch.empty(1024), grid=(4,), stream=None, arch="sm_90", sync=True, check_bounds=True)
    k(torch.ones(1024), torch.empty(1024), grid=[4, 1, 1], opt_level=2, by=3)
    k.run_host(x, y, grid=(4,), check_bounds=False, by=1.0)
    k.forget()
    print(prog.name, low.name, len(code), len(cubin), hidden, tuned, made, ok, k.name)


def main() -> None:
    kern: KernelFn = vadd
    a = np.ones(4096, np.float32)
    b = np.full(4096, 2.0, np.float32)
    c = np.empty_like(a)
    kern.run_host(a, b, c)
    vadd.run_host(a, b, c, tile=256)
    vadd(torch.ones(4096), torch.ones(4096), torch.empty(4096), tile=512)
    sizes: list[int] = vadd.sizes(a, b, c)
    text: str = vadd.mlir(tile=256)
    made: dict = vadd.compiled()
    print(sizes, text.splitlines()[0], made, vadd.grid(a, b, c), ti.cdiv(len(a), 1024))

    x = torch.randn(8, 100)
    y: torch.Tensor = tileir.ops.softmax(x)
    z: torch.Tensor = tileir.ops.matmul(x, x.t(), precision="ieee")
    print(y.sum() + z.sum(), F32.bits, F32.round(0.1), ti.host_float(1.0))
    softmax_one_tile.run_host(x.numpy(), np.empty((8, 100), np.float32), block=128)
    softmax_chunked.run_host(x.numpy(), np.empty((8, 100), np.float32), chunk=64)
    affine.run_host(a, c, k=0.5)
