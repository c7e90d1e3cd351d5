"""The shapes of the layer-2 diff (judgements, outputs, cases, families) and the helpers every family's
kernels use."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

import tileir as ti

from ..judge import BITS, EXACT, Judge
from . import corpora as C
from . import exact as X

# ---- outputs, cases, families (the judgements are tileir.judge's, shared with checked mode) -------


@dataclass
class Out:
    pos: int  # the parameter compared
    judge: Judge = EXACT
    lanes: object = None  # None (every lane), a bool array over the flattened buffer, or fn(args) -> one
    bound: Callable | None = None  # fn(args) -> per-lane absolute bound (a tol judge with data-dependent bound)
    against: str = "host"  # host: the device is held to the host reference; expect: to the independent answer
    labels: tuple = ()  # names of consecutive blocks of ``block`` lanes (the op each block holds)
    block: int = 0
    expect_lanes: Callable | None = None  # fn(args) -> the lanes the independent answer settles (None: all)


@dataclass
class Case:
    name: str
    params: tuple
    body: Callable
    make_args: Callable
    outs: tuple = ()
    grid: tuple = (1,)
    expect: Callable | None = None  # fn(args, launch) -> {pos: array}: the independent answer
    launches: int = 1  # launches of ONE loaded module (globals persist between them)
    mode: str = "launch"  # launch | print (stdout compared) | assert (the launch must fail)
    inputs: tuple | None = None  # positions counted as the corpus (None: every parameter not in outs)
    defects: dict = field(default_factory=dict)  # out pos -> why the host reference disagrees with expect
    expect_text: Callable | None = None  # print: fn(args) -> the exact text
    note: str = ""
    corpus: int | None = None  # the corpus size where it is not the input buffers' (a global's values)

    def prog(self):
        """The recorded program (fresh: a global's host state lives as long as its program)."""
        return ti.trace_kernel(self.name, self.params, self.body)

    def out_positions(self) -> tuple:
        return tuple(o.pos for o in self.outs)

    def corpus_size(self, args) -> int:
        if self.corpus is not None:
            return self.corpus
        pos = self.inputs if self.inputs is not None else [i for i in range(len(args)) if i not in self.out_positions()]
        return int(sum(np.asarray(args[i]).size for i in pos))


@dataclass
class Family:
    name: str
    tier: str  # exact | tolerance | mixed | judgement shape (print / launch must fail)
    judgement: str  # what is compared and why that bound
    ops: tuple  # the cuda_tile operations it checks on the device
    cases: list

    @property
    def mutants(self) -> list:
        from .mutants import of_family  # (on demand: importing the shapes installs no TILEIR_MUTANT patch)

        return of_family(self.name)


# ---- kernel helpers ------------------------------------------------------------------------------


def _z():
    return ti.idx_const(0)


def _elementwise(ins, out_fmt, n: int, fn):
    """Params: one buffer per input format (n lanes each), then one output buffer of ``out_fmt``;
    ``fn(*tiles)`` answers the tiles stored one after another (block k at lanes [k n, (k+1) n))."""
    params = tuple(ti.ByPtr(f) for f in ins) + (ti.ByPtr(out_fmt),)

    def body():
        ts = [ti.load(ti.param(f, i), _z(), [n]) for i, f in enumerate(ins)]
        o = ti.param(out_fmt, len(ins))
        for k, r in enumerate(fn(*ts)):
            ti.store(o, ti.idx_const(k * n), r)

    return params, body


def _np(fmt):
    return C.np_of(fmt)


def _f64(a) -> np.ndarray:
    return np.asarray(a).astype(np.float64)


def _vec(fn, *arrays, otype=np.float64):
    return np.vectorize(fn, otypes=[otype])(*arrays) if np.asarray(arrays[0]).size else np.zeros(0, otype)


def _in_fmt(values, fmt) -> np.ndarray:
    """Python floats already representable in ``fmt`` as that format's host array."""
    return X.to_fmt_array(values, getattr(fmt, "name", fmt))


def _round(values, fmt, mode="nearest_even") -> np.ndarray:
    """Every value (f64) correctly rounded into ``fmt`` by ``mode`` (diff.exact, not ml_dtypes)."""
    name = getattr(fmt, "name", fmt)
    return _in_fmt(_vec(lambda v: X.convert_float(float(v), name, mode), _f64(values)), name)


def _bool(x) -> np.ndarray:
    return np.asarray(x).astype(np.int32)


PREDS = ("eq", "ne", "lt", "le", "gt", "ge")
_NP_CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
           "ge": np.greater_equal}
ULP_F32, ULP_F64 = 8, 4
U32 = 2.0 ** -24  # the unit roundoff of f32, in the float folds' bounds

__all__ = [
    'PREDS', '_NP_CMP',
    'ULP_F32', 'ULP_F64', 'U32',
    'Judge', 'BITS', 'EXACT', 'Out', 'Case', 'Family', '_z', '_elementwise', '_np', '_f64', '_vec',
    '_in_fmt', '_round', '_bool',
]
