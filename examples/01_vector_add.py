"""Tutorial 1: vector add -- a first kernel, its markers, run-time sizes and the host reference.

    python examples/01_vector_add.py            # on the host reference (no GPU needed)
    python examples/01_vector_add.py --device   # on the GPU, at larger sizes, with a timing

Exits nonzero if an answer is wrong.
"""

from __future__ import annotations

import os
import sys

import torch
from tutorial import tutorial_args

import tileir as ti
from tileir import F32, In, Out, cells


# --8<-- [start:kernel]
# The positional parameters are the kernel's arrays. Their markers say what each block reads and
# writes: every array is cut into cells of ``tile`` elements along the run-time size "N" (read off
# the arrays at every call), and block i of the grid reads cell i of a and b and writes cell i of c.
# The grid follows from the cells: cdiv(N, tile) blocks. ``tile`` is keyword-only, so it is
# configuration: fixed when the kernel records (a marker given as a function of it sees its value).
@ti.kernel
def vadd(a=lambda tile: In(F32, cells(["N"], [tile])),
         b=lambda tile: In(F32, cells(["N"], [tile])),
         c=lambda tile: Out(F32, cells(["N"], [tile])), *, tile: int = 1024):
    """c = a + b, elementwise, for f32 vectors of any length N."""
    ti.store_cell(c, ti.load_cell(a) + ti.load_cell(b))  # the last cell may be partial: its tail is not written

# --8<-- [end:kernel]

def main(argv=None) -> int:
    args = tutorial_args(argv, __doc__, "run on the GPU (default: the host reference)")
    if args is None:
        return 2
    if args.device:
        device, sizes = "cuda", [1, 1000, 1 << 20, (1 << 24) + 3]
    else:
        # plain kernel calls run on the host reference: the same recording, interpreted with numpy,
        # on CPU tensors in place
        os.environ["TILEIR_INTERPRET"] = "1"
        device, sizes = "cpu", [1, 1000, 3000, 10_007]
    where = "the GPU" if args.device else "the host reference"

    gen = torch.Generator().manual_seed(0)
    ok = True
    for n in sizes:
        a = torch.randn(n, generator=gen).to(device)
        b = torch.randn(n, generator=gen).to(device)
        c = torch.empty_like(a)
        vadd(a, b, c)  # asynchronous on the GPU (torch's current stream), like a torch operation
        same = torch.equal(c, a + b)  # one f32 add a lane: the answer is exact
        ok &= same
        print(f"vadd of {n:>8} elements on {where}: grid {vadd.grid(a, b, c)}, "
              f"c == a + b bit for bit: {same}")

    # One recording serves every size: N is a hidden parameter of the program, not a constant in it.
    print(f"recordings made for {len(sizes)} sizes: {vadd.compiled()['recordings']}")

    # A slice is read and written in place: these are views into a, b and c, not copies.
    n = sizes[-1]
    a, b = torch.randn(n, generator=gen).to(device), torch.randn(n, generator=gen).to(device)
    c = torch.zeros_like(a)
    vadd(a[100:], b[100:], c[100:])
    sliced = torch.equal(c[100:], a[100:] + b[100:]) and not c[:100].any()
    ok &= sliced
    print(f"on slices [100:] of {n} elements: the slice is right and the first 100 untouched: {sliced}")

    # Another configuration is another recording (and, on the GPU, another cubin).
    c2 = torch.empty_like(a)
    vadd(a, b, c2, tile=256)
    ok &= torch.equal(c2, a + b)
    print(f"tile=256: grid {vadd.grid(a, b, c2, tile=256)}, recordings now {vadd.compiled()['recordings']}")

    if args.device:
        from tileir.runtime.timing import median_ms

        ms = median_ms(lambda: vadd(a, b, c), reps=50, warm=5)
        print(f"{n} elements: {ms * 1e3:.1f} us a call, {3 * 4 * n / ms / 1e9:.2f} TB/s "
              f"(torch's a + b: {3 * 4 * n / median_ms(lambda: torch.add(a, b, out=c), 50, 5) / 1e9:.2f} TB/s)")

    # What the kernel became: the Tile IR text tileir writes as bytecode for tileiras.
    print("the kernel as Tile IR (its first lines):")
    print("\n".join(vadd.mlir().splitlines()[:6]))
    print("ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
