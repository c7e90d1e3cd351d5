"""The host reference's machinery: it interprets a TileProg (not the lowered Kernel, so a
lowering bug shows as a difference) on numpy arrays held in each operation's own format.

The rules live with their families (``tileir.families.*``), registered here by the recorded
operation's kind as ``tileir.families`` imports them (the recorder imports that package, so every
recorded program meets a full table); this module imports no family. A kernel runs once per block
of the grid, blocks in order; parameters are the caller's host arrays (buffers, written in place)
or scalars.
"""

from __future__ import annotations

import itertools

import numpy as np

from ..dtypes import BY_NAME
from ..errors import TileirError
from ..prog import TileProg
from ..runtime.args import check_count, check_grid, host_value

RULES: dict = {}


def interp(*kinds):
    def reg(fn):
        for k in kinds:
            RULES[k] = fn
        return fn

    return reg


class Interp:
    def __init__(self, prog: TileProg, args, grid):
        self.prog = prog
        # what a launch refuses, refused here in its words (runtime/args.py)
        check_count(args, prog.params, prog.name)
        self.grid = check_grid(grid, prog.name)
        self.args = []
        for i, (a, p) in enumerate(zip(args, prog.params)):
            d = BY_NAME[p.dtype]
            if p.by_ptr:
                if not isinstance(a, np.ndarray):
                    raise TileirError(f"parameter {i} is a {p.dtype} buffer: pass a numpy array",
                                      kernel=prog.name)
                if a.dtype != d.np:
                    raise TileirError(f"parameter {i} is a {p.dtype} buffer but the array holds {a.dtype}",
                                      kernel=prog.name, fix=f"array.view(np.{d.np}) (the same memory, so the kernel "
                                      "writes your array; astype would copy it)" if a.dtype.kind in "iu" and
                                      d.np.kind in "iu" and a.dtype.itemsize == d.np.itemsize else
                                      f"array.astype({'np' if hasattr(np, str(d.np)) else 'ml_dtypes'}.{d.np}) "
                                      "(a copy)")
                if not a.flags.c_contiguous:
                    raise TileirError(f"parameter {i}'s array is not contiguous", kernel=prog.name,
                                      fix="np.ascontiguousarray(array)")
                self.args.append(a.reshape(-1))
            else:
                self.args.append(host_value(a, p.dtype, d.np, kernel=prog.name, pos=i))
        self.vals: dict = {}
        self.block = (0, 0, 0)
        self.cur_op = 0
        self.print_pieces: list = []  # what d_print wrote: (block, the pieces the device writes one at a time)

    @property
    def printed(self) -> list:
        """What d_print wrote, one string a print a block, in the order run."""
        return ["".join(pieces) for _, pieces in self.print_pieces]

    def val(self, h):
        v = self.vals.get(h)
        if v is not None:
            return v
        if h in self.prog.consts:
            inf = self.prog.info[h]
            d = BY_NAME[inf.dtype]
            from ..dtypes import to_format

            v = np.broadcast_to(to_format(d, self.prog.consts[h]), inf.shape)
            self.vals[h] = v
            return v
        if h in self.prog.arg_handles:
            return self.args[self.prog.arg_handles[h]]
        inf = self.prog.info.get(h)
        if inf is not None and inf.kind == "token":
            return _TOKEN  # the host orders memory by running operations in order
        raise TileirError(f"host reference: value {h} has no value here", kernel=self.prog.name, op=self.cur_op)

    def set(self, h, v) -> None:
        self.vals[h] = v

    def fail(self, message: str) -> TileirError:
        return TileirError(message, kernel=self.prog.name, op=self.cur_op)

    def exec(self, ops) -> None:
        for op in ops:
            rule = RULES.get(op.kind)
            if rule is None:
                raise TileirError(f"the host reference has no rule for {op.kind}", kernel=self.prog.name,
                                  op=op.num)
            self.cur_op = op.num
            rule(self, op)

    def run(self) -> None:
        for bz, by, bx in itertools.product(range(self.grid[2]), range(self.grid[1]), range(self.grid[0])):
            self.block = (bx, by, bz)
            self.vals = {}
            try:
                self.exec(self.prog.ops)
            except _Return:
                pass


_TOKEN = np.zeros((), dtype=np.int8)


class _Return(Exception):
    """A block ended (d_return_if)."""


def run_host(prog: TileProg, args, grid) -> Interp:
    """Run ``prog`` on the host over ``grid``; buffers in ``args`` are written in place. Answers
    the interpreter (``.printed`` holds what d_print wrote)."""
    it = Interp(prog, args, grid)
    with np.errstate(all="ignore"):
        it.run()
    return it
