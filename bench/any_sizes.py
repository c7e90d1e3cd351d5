"""The any-size sweep's kernels, sizes and configurations, shared by tests/test_any_size.py (the host
reference, CI) and bench/any_size_device.py (the GPU): every library case at COUNT sizes drawn
from a fixed seed -- odd, tiny and past a tile, a third of the extents from EDGES -- each case
under ONE configuration, so the whole sweep should record (and assemble) once per kernel and
configuration whatever the sizes.

``config`` is the host's configuration (tiles small enough that the interpreter walks several
cells on small arrays); ``device`` is a GPU call's (the case's formats and flags only: the tiles
are the library's own, from the tuned table). Keep every size small: the host sweep of all cases
runs in CI in seconds.
"""

from __future__ import annotations

import importlib
import math
import zlib
from dataclasses import dataclass, field

import numpy as np

# the modules of the cases of several launches (tileir.kernels exports functions of two of these names)
_prefix_sum = importlib.import_module("tileir.kernels.prefix_sum")
_recurrence = importlib.import_module("tileir.kernels.recurrence")
_reductions = importlib.import_module("tileir.kernels.reductions")
# the modules of the kernels this sweep covers: every case whose kernel is written in one of them
MODULES = ("elementwise", "matmul", "matmul_i8", "bmm", "transpose", "softmax", "norms", "attention", "conv1d",
           "histogram", "reductions", "prefix_sum", "recurrence")

COUNT = 32  # sizes a case
EDGES = (1, 3, 257, 1000, 4097)  # the sizes every sweep draws from where they fit


@dataclass(frozen=True)
class Sweep:
    draw: object  # numpy Generator -> one size the case's inputs take
    config: dict  # the one host configuration of every size
    device: dict = field(default_factory=dict)  # the one GPU configuration (tiles: the library's)
    runs: tuple = ()  # (module, kernel name): the kernels a case of several launches runs (else its own)
    recordings: dict | None = None  # kernel name -> recordings the host sweep makes (None: its one kernel, 1)
    recorded: object = None  # size -> the values of the sizes the kernel records (@kernel(exact=...)): one
    #                          recording per distinct value


def extent(rng, hi: int, edges=EDGES) -> int:
    """One extent in [1, hi]: 30% of draws one of ``edges`` that fits, the rest log-uniform (most
    small, a few near hi)."""
    fits = [e for e in edges if e <= hi]
    if fits and rng.random() < 0.3:
        return int(rng.choice(fits))
    return int(min(hi, max(1, round(math.exp(rng.uniform(0, math.log(hi + 1)))))))


@dataclass(frozen=True)
class Upto:
    """A 1-D case's draw: one extent up to ``hi``."""

    hi: int

    def __call__(self, rng) -> int:
        return extent(rng, self.hi)


_vector = Upto


def _rows(r):
    return (extent(r, 8, (1, 3)), extent(r, 5000))


def _mnk(r):
    return tuple(extent(r, 300, (1, 3, 257)) for _ in range(3))


def _bmnk(r):
    return (extent(r, 3, (1, 3)),) + tuple(extent(r, 150, (1, 3)) for _ in range(3))


def _attention(r):
    """(B, H, S, D, H_kv, S_kv): K/V heads 1 or 2, each serving 1 or 2 query heads; D up to 64."""
    h_kv, group = int(r.integers(1, 3)), int(r.integers(1, 3))
    return (extent(r, 2, (1,)), h_kv * group, extent(r, 130, (1, 3)), extent(r, 64, (1, 3)), h_kv,
            extent(r, 130, (1, 3)))


def _conv(r):
    n = extent(r, 20000)
    return (n, extent(r, min(n, 40), (1, 3)))


def _hist(r):
    return (extent(r, 20000), extent(r, 600, (1, 3, 257)))


def _transpose(r):
    return (extent(r, 600, (1, 3, 257)), extent(r, 600, (1, 3, 257)))


def _fmt(name):
    """The format a case name ends in, as configuration (none for the kernel's default)."""
    for f in ("f16", "bf16"):
        if name.endswith("_" + f) or name.endswith("_" + f + "_causal"):
            return {"fmt": f}
    return {}


def _head_shape(size):
    """attention records its head shape (D, H, H_kv); the batch and the sequence lengths are run-time."""
    b, h, s, d, h_kv, s_kv = size
    return d, h, h_kv


def _attention_sweep(name):
    flags = dict(_fmt(name) or {"fmt": "f16"}, causal=name.endswith("_causal"), d_tile=64)
    return Sweep(_attention, dict(flags, bq=32, bk=16), flags, recorded=_head_shape)


SWEEPS: dict[str, Sweep] = {
    "vadd": Sweep(_vector(100_000), {}),
    "saxpy": Sweep(_vector(100_000), {}),
    "matmul_f16": Sweep(_mnk, {"tm": 64, "tn": 64, "tk": 32}),
    "matmul_bf16": Sweep(_mnk, {"tm": 64, "tn": 64, "tk": 32}),
    "matmul_tf32": Sweep(_mnk, {"tm": 64, "tn": 64, "tk": 32}),
    "matmul_i8": Sweep(_mnk, {"tm": 64, "tn": 64, "tk": 32}),
    "bmm_f16": Sweep(_bmnk, {"tm": 32, "tn": 32, "tk": 32}),
    "bmm_bf16": Sweep(_bmnk, {"fmt": "bf16", "tm": 32, "tn": 32, "tk": 32}, {"fmt": "bf16"}),
    "transpose_f32": Sweep(_transpose, {"tm": 32, "tn": 32}),
    "transpose_f16": Sweep(_transpose, {"fmt": "f16", "tm": 32, "tn": 32}, {"fmt": "f16"}),
    "conv1d": Sweep(_conv, {"tile": 256}),
    "histogram": Sweep(_hist, {}),
    "vector_sum": Sweep(_vector(100_000), {"tile": 256, "parts": 8}, runs=((_reductions, "block_sum"),),
                        recordings={"block_sum": 2}),  # the first pass's tile, and the last's (8 partials)
    "vector_max": Sweep(_vector(100_000), {"tile": 256, "parts": 8}, runs=((_reductions, "block_max"),),
                        recordings={"block_max": 2}),
    "recurrence": Sweep(_vector(5000), {"tile": 64}, runs=tuple(
        (_recurrence, k) for k in ("recurrence_blocks", "recurrence_totals", "recurrence_apply"))),
}
for _name in ("softmax", "softmax_f16", "softmax_bf16"):
    SWEEPS[_name] = Sweep(_rows, dict(_fmt(_name), max_tile=512), _fmt(_name))
for _name in ("layernorm_f32", "layernorm_f16", "layernorm_bf16", "rmsnorm_f32", "rmsnorm_f16", "rmsnorm_bf16"):
    SWEEPS[_name] = Sweep(_rows, dict(_fmt(_name), max_tile=512), _fmt(_name))
for _name in ("attention_f16", "attention_f16_causal", "attention_bf16", "attention_bf16_causal"):
    SWEEPS[_name] = _attention_sweep(_name)
for _name in ("prefix_sum_f32", "prefix_sum_i32"):
    SWEEPS[_name] = Sweep(_vector(20_000), {"tile": 64}, runs=tuple(
        (_prefix_sum, k) for k in ("scan_blocks", "chunk_totals", "scan_chunks")))


def sizes_of(name: str) -> list:
    """COUNT distinct sizes of case ``name``, the same on every machine (seeded by the name); a 1-D
    case's start with the EDGES that fit."""
    sweep = SWEEPS[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    out = [e for e in EDGES if e <= sweep.draw.hi] if isinstance(sweep.draw, Upto) else []
    for _ in range(100 * COUNT):
        if len(out) >= COUNT:
            break
        s = sweep.draw(rng)
        if s not in out:
            out.append(s)
    return out


def recordings(name: str, kernel_name: str) -> dict:
    """What the host sweep of case ``name`` should record: each kernel once (or as ``recordings`` says)."""
    sweep = SWEEPS[name]
    if sweep.recordings is not None:
        return dict(sweep.recordings)
    if sweep.runs:
        return {k: 1 for _, k in sweep.runs}
    if sweep.recorded is not None:
        return {kernel_name: len({sweep.recorded(s) for s in sizes_of(name)})}
    return {kernel_name: 1}
