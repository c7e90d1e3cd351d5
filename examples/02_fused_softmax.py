"""Tutorial 2: fused softmax -- a row a block, reductions, padding, and rows longer than a tile.

    python examples/02_fused_softmax.py            # on the host reference (no GPU needed)
    python examples/02_fused_softmax.py --device   # on the GPU, at larger sizes, timed against torch

Exits nonzero if an answer is wrong.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable

import torch
from tutorial import tutorial_args

import tileir as ti
from tileir import F32, FREE_AXIS, In, Out, PadNegInf, Shared, TileirError, cells


# --8<-- [start:kernel]
def _one_tile_grid(R, C, block):  # noqa: N803  (the run-time sizes' names)
    # a grid function sees the configuration and the run-time sizes: the place to refuse, before
    # anything launches, what this kernel cannot do
    if C > block:
        raise TileirError(f"a row of {C} does not fit one tile of {block}", kernel="softmax_one_tile",
                          what="block", fix=f"block={1 << (C - 1).bit_length()}, or softmax_chunked")
    return (R,)


# One block a row, the whole row in one tile. Lanes past C (the tile is a power of two) read the
# pad, -inf: exp(-inf - max) is 0, so they change neither the maximum nor the sum, and the store
# does not write them.
@ti.kernel(grid=_one_tile_grid)
def softmax_one_tile(x=lambda block: In(F32, cells(["R", "C"], [1, block], pad=PadNegInf)),
                     y=lambda block: Out(F32, cells(["R", "C"], [1, block])), *, block: int = 1024):
    """y[r, :] = softmax(x[r, :]) for rows of at most ``block`` elements."""
    row = ti.load_cell(x)  # [1, block]: x is read once
    e = ti.exp(row - ti.reduce_max(row, keepdims=True))
    ti.store_cell(y, e / ti.reduce_sum(e, keepdims=True))  # and y written once


# Rows of any length, walked in chunks: x's column cells follow no grid axis (FREE_AXIS), so the
# kernel names the chunk it reads (load_at). The first walk keeps a running maximum m and a running
# sum l of exp(x - m), rescaling l whenever m grows (the online softmax); the second walk writes.
# y is Shared and written through a view of its whole array, cut into [1, chunk] tiles.
@ti.kernel
def softmax_chunked(x=lambda chunk: In(F32, cells(["R", "C"], [1, chunk], along=[0, FREE_AXIS], pad=PadNegInf)),
                    y=Shared(F32, ["R", "C"]), *, chunk: int = 1024):
    """y[r, :] = softmax(x[r, :]) for rows of any length, ``chunk`` elements at a time."""
    r = ti.block_id(0)
    m = ti.carry(ti.full([1, 1], -math.inf, F32))
    l_ = ti.carry(ti.full([1, 1], 0.0, F32))
    for j in ti.d_range(0, ti.blocks_of(x, 1)):  # a loop on the device; j is a run-time index
        c = ti.load_at(x, [j])
        m_new = ti.max(ti.get(m), ti.reduce_max(c, keepdims=True))
        ti.set(l_, ti.get(l_) * ti.exp(ti.get(m) - m_new) + ti.reduce_sum(ti.exp(c - m_new), keepdims=True))
        ti.set(m, m_new)
    out = ti.partition_view(ti.array_view(y), [1, chunk])
    for j in ti.d_range(0, ti.blocks_of(x, 1)):
        ti.store_view(out, [r, j], ti.exp(ti.load_at(x, [j]) - ti.get(m)) / ti.get(l_))  # the tail is clipped

# --8<-- [end:kernel]

def _rates(x, y) -> str:
    """Bandwidth of each kernel and of torch.softmax on the GPU (x read once, y written once)."""
    from functools import partial

    from tileir.runtime.timing import median_ms

    rows, cols = x.shape
    calls: dict[str, Callable[[], object]] = {"chunked": partial(softmax_chunked, x, y),
                                              "torch.softmax": partial(torch.softmax, x, dim=-1)}
    if cols <= 4096:
        calls = {"one tile": partial(softmax_one_tile, x, y, block=_pow2(cols)), **calls}
    return ", ".join(f"{name} {2 * 4 * rows * cols / median_ms(fn, 30, 5) / 1e9:.2f}" for name, fn in calls.items())


def _pow2(n: int) -> int:
    return 1 << (n - 1).bit_length()


def main(argv=None) -> int:
    args = tutorial_args(argv, __doc__, "run on the GPU (default: the host reference)")
    if args is None:
        return 2
    if args.device:
        device, shapes = "cuda", [(4096, 1000), (8192, 4096), (4096, 20_000)]
    else:
        os.environ["TILEIR_INTERPRET"] = "1"  # plain calls run on the host reference
        device, shapes = "cpu", [(37, 1000), (5, 3000)]
    where = "the GPU" if args.device else "the host reference"

    gen = torch.Generator().manual_seed(0)
    ok = True
    for rows, cols in shapes:
        x = (torch.randn(rows, cols, generator=gen) * 4).to(device)
        want = torch.softmax(x, dim=-1)
        y = torch.empty_like(x)
        if cols <= 4096:
            softmax_one_tile(x, y, block=_pow2(cols))
            err = (y - want).abs().max().item()
            ok &= err < 1e-6
            print(f"softmax_one_tile [{rows}, {cols}] on {where} (block={_pow2(cols)}): "
                  f"max |y - torch.softmax| = {err:.2e}")
        y = torch.empty_like(x)
        softmax_chunked(x, y)
        err = (y - want).abs().max().item()
        ok &= err < 1e-6
        print(f"softmax_chunked  [{rows}, {cols}] on {where} (chunk=1024): max |y - torch.softmax| = {err:.2e}")
        if args.device:
            print("  TB/s: " + _rates(x, y))

    # A row longer than the tile is refused before anything runs, with the fix.
    try:
        softmax_one_tile(x, y, block=1024)
    except TileirError as e:
        print(f"refused: {e}")
    print("ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
