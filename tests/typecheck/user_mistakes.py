"""Mistakes a user makes, each of which mypy must report where its ``# E: <code>`` says
(tests/test_typing.py): a check on the public surface that answers Any everywhere would pass
user_program.py and fail here. Never run."""

from __future__ import annotations

import numpy as np
import torch

import tileir as ti
import tileir.ops
from tileir import F32, In, Out, cells


@ti.kernel
def vadd(a=In(F32, cells(["N"], [1024])), b=In(F32, cells(["N"], [1024])),
         c=Out(F32, cells(["N"], [1024]))) -> None:
    t = ti.load_cell(a) + ti.load_cell(b)
    name: str = t  # E: assignment
    wrong: int = ti.load_cell(a)  # E: assignment
    ti.store_cell(c, ti.laod_cell(b))  # E: attr-defined
    print(name, wrong)


@ti.kernel(grid=lambda N: (N,), nmae="typo")  # E: call-overload
def bad_keyword(a=In(F32, cells(["N"], [1024]))) -> None:
    pass


def main() -> None:
    vadd.run_hots()  # E: attr-defined
    text: int = vadd.mlir()  # E: assignment
    a = torch.ones(1024, device="cuda")
    out = vadd(a, a, torch.empty_like(a)).sum()  # E: attr-defined
    vadd.mlir(256)  # E: arg-type
    vadd.run_host(np.ones(1024), np.ones(1024), np.empty(1024), grid=4)  # E: arg-type
    y: int = tileir.ops.softmax(torch.ones(4, 4))  # E: assignment
    tileir.ops.softmax([1.0, 2.0])  # E: arg-type
    bits: str = F32.bits  # E: assignment
    print(text, y, bits, out)
