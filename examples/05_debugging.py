"""Tutorial 5: debugging a kernel -- the host reference, d_print, d_assert, the calls and owners
listings, and check (the GPU against the host reference, lane by lane).

    python examples/05_debugging.py            # on the host reference (no GPU needed)
    python examples/05_debugging.py --device   # check compares the GPU with the host reference

Exits nonzero if the fixed kernel's answer is wrong.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import torch
from tutorial import tutorial_args

import tileir as ti
from tileir import F32, In, Out, PadZero, TileirError, cells


# --8<-- [start:kernel]
# Center each row of an [R, C] matrix: y = x - mean(x). One block a row, the row in one tile of
# `block` lanes; lanes past C read zero (PadZero), which leaves the sum alone.
def _x(block):
    return In(F32, cells(["R", "C"], [1, block], pad=PadZero))


def _y(block):
    return Out(F32, cells(["R", "C"], [1, block]))


@ti.kernel
def center_buggy(x=_x, y=_y, *, block: int = 1024, debug: bool = False):
    """y = x - mean(x) along the rows -- with a bug."""
    row = ti.load_cell(x)
    total = ti.reduce_sum(row, keepdims=True)  # [1, 1]
    mean = total / block  # the bug: the tile's width, not the row's length C
    if debug:  # configuration: debug=True is a recording of its own, with the print in it
        ti.d_print("row %d: sum %f, mean %f\n", [ti.idx_as_tile(ti.block_id(0)), ti.reshape(total, []),
                                                 ti.reshape(mean, [])])
    ti.store_cell(y, row - mean)


@ti.kernel
def center(x=_x, y=_y, *, block: int = 1024, debug: bool = False):
    """y = x - mean(x) along the rows of an [R, C] matrix, C <= block."""
    row = ti.load_cell(x)
    length = ti.int_to_float(ti.idx_as_tile(ti.extent_of(x, 1)), F32)  # C, read off the array at run time
    mean = ti.reduce_sum(row, keepdims=True) / length
    if debug:
        ti.d_print("row %d: mean %f\n", [ti.idx_as_tile(ti.block_id(0)), ti.reshape(mean, [])])
        # x == x fails only for NaN: stop, naming the block and the lane, rather than answer NaNs
        ti.d_assert(ti.eq(row, row), "x holds a NaN")
    ti.store_cell(y, row - mean)

# --8<-- [end:kernel]

def _bad_lanes(got: np.ndarray, want: np.ndarray, tol: float) -> str:
    bad = np.argwhere(np.abs(got - want) > tol)
    if not len(bad):
        return "none"
    return f"{len(bad)} of {got.size}, the first at {tuple(int(i) for i in bad[0])}"


def main(argv=None) -> int:
    args = tutorial_args(argv, __doc__, "check on the GPU (default: the host reference)")
    if args is None:
        return 2
    rng = np.random.default_rng(0)
    ok = True

    # 1. The host reference against numpy, on a power-of-two width and on an odd one. run_host
    #    runs the recording on numpy arrays in place: no GPU, and every value is there to look at.
    print("-- 1. the host reference against numpy")
    for cols in (1024, 1000):
        x = rng.standard_normal((4, cols)).astype(np.float32)
        y = np.zeros_like(x)
        center_buggy.run_host(x, y)
        want = x - x.mean(axis=1, keepdims=True)
        print(f"center_buggy on [4, {cols}]: max |y - numpy| = {np.abs(y - want).max():.2e}, "
              f"lanes off by more than 1e-5: {_bad_lanes(y, want, 1e-5)}")

    # 2. d_print: what one block computed. On the host reference the lines come out as the blocks
    #    run; on the GPU, when the launch is synchronised (blocks may interleave).
    print("-- 2. d_print (debug=True records the prints; the plain recording has none)")
    x3 = x[:3]
    center_buggy.run_host(x3, np.zeros_like(x3), debug=True)
    sums, means = x3.sum(axis=1, dtype=np.float64), x3.mean(axis=1, dtype=np.float64)
    print(f"numpy: sums {', '.join(f'{v:.6f}' for v in sums)}; means {', '.join(f'{v:.6f}' for v in means)}"
          f" -- the kernel divided by 1024, not {x3.shape[1]}")

    # 3. The fix, checked on both widths.
    print("-- 3. the fix: divide by C, extent_of(x, 1)")
    for cols in (1024, 1000, 37):
        x = rng.standard_normal((4, cols)).astype(np.float32)
        y = np.zeros_like(x)
        center.run_host(x, y, block=max(16, 1 << (cols - 1).bit_length()))
        err = np.abs(y - (x - x.mean(axis=1, keepdims=True))).max()
        ok &= err < 1e-5
        print(f"center on [4, {cols}]: max |y - numpy| = {err:.2e}")

    # 4. d_assert: a NaN in row 2, column 7. The host reference raises a TileirError naming the
    #    block and the lane. (On the GPU a failed assert stops the launch, and the CUDA context is
    #    unusable from then on: the process has to start again, so this runs on the host.)
    print("-- 4. d_assert")
    x = rng.standard_normal((4, 1000)).astype(np.float32)
    x[2, 7] = np.nan
    try:
        center.run_host(x, np.zeros_like(x), debug=True)
        print("the assert did not fire")
        ok = False
    except TileirError as e:
        print(f"refused: {e}")

    # 5. What the kernel called and what each instruction came from: `tileir show FILE.py:KERNEL`
    #    with --emit calls (the kernel's calls, with their source lines) and --emit owners (each
    #    lowered instruction, the operation it came from and the call that asked for it).
    print("-- 5. tileir show examples/05_debugging.py:center --emit calls / owners")
    here = os.path.relpath(__file__)
    for emit, lines in (("calls", 12), ("owners", 10)):
        shown = subprocess.run([sys.executable, "-m", "tileir", "show", f"{here}:center", "--emit", emit],
                               capture_output=True, text=True, check=True).stdout.splitlines()
        print(f"$ tileir show {here}:center --emit {emit}  ({len(shown)} lines; the first {lines})")
        print("\n".join(shown[:lines]))

    # 6. check: the same inputs on the GPU and on the host reference, every lane of every array
    #    judged (floats within 8 ulp plus 8 epsilons of the largest value; integers exactly).
    print("-- 6. check")
    x = rng.standard_normal((64, 1000)).astype(np.float32)
    y = np.zeros_like(x)
    if args.device:
        res = center.check(torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda())
        print(res)
        ok &= res.ok
    else:
        try:
            center.check(x, y)
        except TileirError as e:
            print(f"without a GPU: {e}")
    # device= stands in for the GPU: any callable taking the kernel's arguments (numpy copies) and
    # its configuration. Here the buggy kernel plays a device that answers wrong, to show the report.
    res = center.check(x, y, device=center_buggy.run_host)
    print(res)
    ok &= not res.ok and res["y"].first_bad[0][0] == (0, 0)
    print("ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
