"""Run-time sizes: what a launch reads off the arrays and hands the kernel as hidden parameters.

A marker's extent is a fixed number, a size name (``"M"``) or ``DYN_DIM`` (``markers.py``). The
run-time ones are not configuration: the ``SizePlan`` of a kernel's markers lists one hidden
by-value ``i32`` parameter per distinct run-time size and one per stride of every dimension but
the last of each array with an extent, appended after the kernel's own parameters. At every
launch (device or host reference) ``values`` reads them off the arguments, checks what must
agree (a named size across arrays, fixed extents, ranks, strides), and ``grid`` derives the
blocks along each axis (a partial last cell included). So one recording, one tileiras run and
one cubin serve every size, and an array with a leading-dimension stride (a slice of a wider
matrix, a head of ``[B, S, H, D]``) is read in place.

The strides are where a size can still be worth specialising on: a stride that is a multiple of
16 elements lets tileiras move tiles with the bulk copy engine, so ``div16`` reports, per hidden
stride, whether the call's value is one, and the kernel records that claim (``assume div_by<16>``)
for those strides only -- at most a few cubins per configuration, the measured choice
(docs/design.md, "Run-time sizes").
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .errors import TileirError
from .ir import DYN_DIM

SIZE_LIMIT = 2**31 - 1  # the hidden parameters are i32 (Tile IR's index width here)
SPECIALISE_DIVISOR = 16  # the stride claim recorded when a call's stride is a multiple of it
# TILEIR_SPECIALISE_STRIDES=0: one cubin per configuration, no stride claims (bench/dynamic_sizes.py
# measures what the claims are worth)
SPECIALISE = os.environ.get("TILEIR_SPECIALISE_STRIDES", "1") not in ("0", "")
# TILEIR_SPECIALISE_SIZES=0: no claims on the contiguous dimensions' sizes (read when a plan is made;
# bench/h200.py measured what they are worth: docs/design.md, "Run-time sizes")
SPECIALISE_SIZES = os.environ.get("TILEIR_SPECIALISE_SIZES", "1") not in ("0", "")


def claim_of(v: int):
    """The divisibility a launch claims of a stride or contiguous size ``v``: True for a multiple of
    SPECIALISE_DIVISOR elements, else 8 or 4 where that is the largest of them dividing it (a row of
    1000 f16 is 2000 bytes: 16-byte rows, what the bulk copy engine needs), else False. Measured on
    the H200: an f16 product whose rows are 1000 and 5000 elements ran at 0.06-0.09x torch with no
    claim, 0.98x on the same data with its rows padded to 16 elements (bench/results/matmul_probe_h200.json)."""
    if v % SPECIALISE_DIVISOR == 0:
        return True
    if v % 4:
        return False
    return v & -v


ROW = "row"  # a stride claim's mark: the stride is its row's extent (SizePlan.claim)


def divisor_of(claim) -> int:
    """The number a claim says divides its value (0: none): claim_of's True is SPECIALISE_DIVISOR, its 8
    and 4 themselves, a (ROW, claim) its claim's."""
    if isinstance(claim, tuple):
        claim = claim[1]
    return SPECIALISE_DIVISOR if claim is True else int(claim or 0)


def specialising() -> bool:
    """Whether launches specialise on the stride claims (SPECIALISE; tests and benches flip it)."""
    return SPECIALISE


@dataclass(frozen=True)
class Hidden:
    """One hidden parameter: a run-time size or a stride, and where a launch reads it."""

    kind: str  # "size" | "stride"
    label: str  # "M", "x.shape[0]", "x.stride(0)": what an error calls it
    reads: tuple  # ((parameter position, dimension), ...): the first is the source, the rest must agree


def shape_strides(a):
    """(shape, strides in elements) of an array argument, or None for something that is not one.
    torch tensors, numpy and cupy arrays, ``__cuda_array_interface__`` objects; anything else
    with a shape is taken as contiguous."""
    shape = getattr(a, "shape", None)
    if shape is None:
        return None
    shape = tuple(shape)
    stride = getattr(a, "stride", None)
    if callable(stride):  # torch
        return shape, tuple(stride())
    strides, itemsize = getattr(a, "strides", None), getattr(a, "itemsize", None)
    if strides is not None and itemsize:
        return shape, tuple(s // itemsize for s in strides)
    cai = getattr(a, "__cuda_array_interface__", None)
    if isinstance(cai, dict) and cai.get("strides") is not None:
        import numpy as np

        size = np.dtype(cai["typestr"]).itemsize
        return shape, tuple(s // size for s in cai["strides"])
    return shape, contiguous_strides(shape)


def data_ptr(a) -> int:
    """The device address of an array argument's first element (0 for a host array: its staged
    copy is a fresh, aligned allocation)."""
    ptr = getattr(a, "data_ptr", None)
    if callable(ptr):
        return int(ptr())
    data = getattr(a, "data", None)
    if isinstance(getattr(data, "ptr", None), int):  # cupy
        return int(data.ptr)  # type: ignore[union-attr]  # (data is no None: it has a ptr)
    cai = getattr(a, "__cuda_array_interface__", None)
    if isinstance(cai, dict):
        return int(cai["data"][0] or 0)
    return 0


def contiguous_strides(shape) -> tuple:
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= max(int(n), 1)
    return tuple(reversed(out))


class SizePlan:
    """The hidden parameters of one kernel's markers, and how a launch fills them.

    ``extent[(p, d)]``: a fixed int, or ("h", k) for hidden parameter k; ``stride[(p, d)]``: the
    hidden parameter k of that stride (every dimension but the last; the last's stride is 1)."""

    def __init__(self, kernel: str, names, markers, checked: bool = False, exact: tuple[str, ...] = ()):
        self.kernel = kernel
        self.checked = checked
        self.names = list(names)
        self.hidden: list[Hidden] = []
        self.extent: dict = {}
        self.stride: dict = {}
        self.ranks: dict = {}  # parameter -> its array's rank
        self.axes: dict = {}  # grid axis -> [(parameter, dimension, tile)]
        self.limits: list = []  # (parameter, dimension, tile): a run-time extent one cell covers
        named: dict = {}
        reads: list = []
        for p, m in enumerate(markers):
            ext = getattr(m, "extent", None)
            if ext is None:
                continue
            self.ranks[p] = len(ext)
            for d, e in enumerate(ext):
                if isinstance(e, str):
                    if e not in named:
                        named[e] = len(reads)
                        reads.append(("size", e, []))
                    reads[named[e]][2].append((p, d))
                    self.extent[(p, d)] = ("h", named[e])
                elif e == DYN_DIM:
                    self.extent[(p, d)] = ("h", len(reads))
                    reads.append(("size", f"{self.names[p]}.shape[{d}]", [(p, d)]))
                else:
                    self.extent[(p, d)] = e
            cells = getattr(m, "cells", None)
            if cells is not None:
                for d, (t, a) in enumerate(zip(cells.tile, cells.along)):
                    if a >= 0:
                        self.axes.setdefault(a, []).append((p, d, t))
                self.limits += [(p, d, cells.tile[d]) for d in cells.one_cell
                                if isinstance(ext[d], str) or ext[d] == DYN_DIM]  # a run-time extent
        for p, rank in self.ranks.items():
            for d in range(rank - 1):
                self.stride[(p, d)] = len(reads)
                reads.append(("stride", f"{self.names[p]}.stride({d})", [(p, d)]))
        self.span: dict = {}  # buffer parameter -> its hidden span (the bounds-checked variant only)
        if checked:
            for p, m in enumerate(markers):
                if getattr(m, "dtype", None) is not None and (hasattr(m, "role") or getattr(m, "by_ptr", False)):
                    self.span[p] = len(reads)
                    reads.append(("span", f"{self.names[p]}.span", [(p, -1)]))
        self.hidden = [Hidden(k, label, tuple(r)) for k, label, r in reads]
        self._sizes = [(k, h.reads) for k, h in enumerate(self.hidden) if h.kind == "size"]
        self._strides = [(k, h.reads[0]) for k, h in enumerate(self.hidden) if h.kind == "stride"]
        self._fixed = [(p, d, e) for (p, d), e in self.extent.items() if isinstance(e, int)]
        self.stride_slots = tuple(k for k, _ in self._strides)
        # the stride just outside an array's contiguous dimension -> that dimension's extent (("h", k) a
        # run-time size, or an int): a launch whose stride equals it claims ROW (no pitch gap after a
        # row: families/views.py keeps TMA stores there, tileiras 13.4.92 writing a gap's lanes)
        self.row_of = {k: self.extent[(p, d + 1)] for k, (p, d) in self._strides if d == self.ranks[p] - 2}
        # ... and, for an array of rank 3 or more, its rows a matrix: one row a matrix claims nothing (the
        # next row is the next matrix's, at a stride ROW does not see)
        self.rows_of = {k: self.extent[(p, d)] for k, (p, d) in self._strides
                        if d == self.ranks[p] - 2 and self.ranks[p] > 2}
        # the sizes that bound an array's contiguous dimension: a launch claims their divisibility
        # (claim_of; only those: a row count masks whole rows, and every claim multiplies the cubins a
        # configuration may need)
        self.size_slots = tuple(k for k, reads in self._sizes
                                if any(d == self.ranks.get(p, 0) - 1 for p, d in reads)) if SPECIALISE_SIZES else ()
        self.claim_slots = tuple(sorted(self.size_slots + self.stride_slots))
        self.array_params = tuple(sorted(self.ranks))
        # the sizes (by name, or "all": every size and stride) whose call values the program records
        # as constants, one program per value: what sizes as configuration were (``KernelFn.specialised``)
        self.exact_slots = tuple(k for k, h in enumerate(self.hidden) if h.kind in ("size", "stride")
                                 and ("all" in exact or h.label in exact))

    def __bool__(self) -> bool:
        return bool(self.hidden)

    @property
    def size_names(self) -> list[str]:
        """The run-time sizes' labels, in hidden-parameter order (a grid function takes the named ones)."""
        return [h.label for h in self.hidden if h.kind == "size"]

    def _refuse(self, message: str, p: int | None, fix: str | None = None) -> TileirError:
        what = None if p is None else f"argument {p} ({self.names[p]})"
        return TileirError(message, kernel=self.kernel, what=what, fix=fix)

    def values(self, arrays) -> list[int]:
        """The hidden parameters' values for a call with ``arrays`` (the kernel's own arguments),
        checked: ranks, fixed extents, named sizes that agree, positive sizes that fit i32,
        unit-stride last dimensions."""
        if not self.hidden:
            return []
        if len(arrays) < len(self.names):
            raise TileirError(f"takes {len(self.names)} argument(s), got {len(arrays)}.", kernel=self.kernel,
                              what="launch")
        geo = {}
        for p, rank in self.ranks.items():
            got = shape_strides(arrays[p])
            if got is None:
                raise self._refuse(f"this parameter is an array of rank {rank}, and a {type(arrays[p]).__name__} "
                                   "has no shape", p, "pass an array (a torch tensor, numpy or cupy array)")
            shape, strides = got
            if len(shape) != rank:
                raise self._refuse(f"an array of shape {list(shape)} for a parameter of rank {rank}", p,
                                   f"pass a {rank}-dimensional array (reshape it)")
            for d, n in enumerate(shape):
                if n < 1:
                    raise self._refuse(f"dimension {d} of the array is {n}: there is nothing to compute", p,
                                       "skip the call for an empty array")
            geo[p] = (shape, strides)
        for p, d, e in self._fixed:
            n = geo[p][0][d]
            if n != e:
                raise self._refuse(f"dimension {d} of the array is {n}, and the kernel was written for {e}", p,
                                   f"an array with {e} there, or declare that extent as a run-time size (a name)")
        out = [0] * len(self.hidden)
        for k, reads in self._sizes:
            p0, d0 = reads[0]
            v = geo[p0][0][d0]
            for p, d in reads[1:]:
                if geo[p][0][d] != v:
                    h = self.hidden[k]
                    raise self._refuse(f"size {h.label} is {v} in {self.names[p0]} (dimension {d0}) and "
                                       f"{geo[p][0][d]} here (dimension {d})", p,
                                       f"arrays that agree on {h.label}")
            if v > SIZE_LIMIT:
                raise self._refuse(f"size {self.hidden[k].label} is {v}, past {SIZE_LIMIT} (sizes are i32)", p0,
                                   "split the work into pieces below 2^31 elements a dimension")
            out[k] = v
        for p, d, t in self.limits:
            n = geo[p][0][d]
            if n > t:
                raise self._refuse(f"dimension {d} of the array is {n}, past the {t} lanes of the one cell this "
                                   "configuration covers it with", p,
                                   f"a configuration whose tile there is at least {n} (a power of two), or one "
                                   "that walks that dimension in cells")
        for p in self.ranks:
            shape, strides = geo[p]
            if shape[-1] != 1 and strides[-1] != 1:
                raise self._refuse(f"the array's last dimension has stride {strides[-1]}; the kernel reads it "
                                   "with stride 1", p, ".contiguous() (or arrange the data so the last dimension "
                                   "is dense)")
        for p, k in self.span.items():  # the elements reachable from the first: 1 + sum (n - 1) * stride
            got = geo.get(p) or shape_strides(arrays[p])
            if got is None:
                raise self._refuse(f"a {type(arrays[p]).__name__} for a buffer parameter", p, "pass an array")
            out[k] = min(SIZE_LIMIT, 1 + sum((n - 1) * st for n, st in zip(*got))) if all(got[0]) else 0
        for k, (p, d) in self._strides:
            shape, strides = geo[p]
            s = strides[d]
            if shape[d] == 1:  # never stepped over: any positive stride reads the same
                s = contiguous_strides(shape)[d]
            if s < 1:
                raise self._refuse(f"dimension {d} of the array has stride {s} (an expanded or reversed array)", p,
                                   ".contiguous()")
            if s > SIZE_LIMIT:
                raise self._refuse(f"dimension {d}'s stride {s} is past {SIZE_LIMIT} (strides are i32)", p,
                                   "a smaller array")
            out[k] = s
        return out

    def fast_grid(self):
        """A function of ``values`` answering ``grid(values)`` as the launch's three ints in a few
        operations, or None where the dimensions along an axis disagree or an axis is past the
        driver's limit (then ``grid`` runs and says so); None where the plan derives no grid."""
        if not self.axes:
            return None
        conds, dims = [], []
        for a in range(max(self.axes) + 1):
            exprs = []
            for p, d, t in self.axes.get(a, ()):
                e = self.extent[(p, d)]
                v = str(e) if isinstance(e, int) else f"values[{e[1]}]"
                exprs.append(f"(({v} + {t - 1}) // {t})")
            if not exprs:
                dims.append("1")
                continue
            dims.append(exprs[0])
            conds += [f"{x} == {exprs[0]}" for x in exprs[1:]]
        dims += ["1"] * (3 - len(dims))
        # x is at most a size (below 2^31); y and z must stay within the driver's 65535
        conds += [f"{x} <= 65535" for x in dims[1:] if x != "1"]
        lines = ["def fast(values):"]
        if conds:
            lines.append("    if not (" + " and ".join(conds) + "):\n        return None")
        lines.append("    return (" + ", ".join(dims) + ")")
        scope: dict = {}
        exec("\n".join(lines), scope)  # noqa: S102 - our own text, made from the plan's numbers
        return scope["fast"]

    def extent_value(self, values, p: int, d: int) -> int:
        e = self.extent[(p, d)]
        return e if isinstance(e, int) else values[e[1]]

    def grid(self, values) -> tuple:
        """The grid the cells imply: along each axis, how many cells cover the dimensions that
        follow it (they must agree); 1-D ``(1,)`` where no dimension follows an axis."""
        if not self.axes:
            raise TileirError("no marker has cells along a grid axis to derive the grid from", kernel=self.kernel,
                              fix="pass grid=(x, y, z), or give @kernel(grid=...)")
        g: dict[int, tuple[int, int, int]] = {}
        for a, terms in self.axes.items():
            for p, d, t in terms:
                n = -(-self.extent_value(values, p, d) // t)
                if g.setdefault(a, (n, p, d))[0] != n:
                    n0, p0, d0 = g[a]
                    raise self._refuse(f"grid axis {a} would have {n0} blocks from {self.names[p0]} (dimension {d0}) "
                                       f"and {n} from this array (dimension {d})", p,
                                       "arrays whose dimensions along one axis cover the same number of cells")
        return tuple(g[a][0] if a in g else 1 for a in range(max(g) + 1))

    def div16(self, values, arrays=None) -> tuple:
        """The claims a launch with these values specialises on: per claimable hidden value
        (``claim_slots``: the strides and the contiguous dimensions' sizes), whether it is a
        multiple of SPECIALISE_DIVISOR elements (True), else of 8 or 4 (that number: ``claim_of``),
        a row stride equal to its row's extent marked (ROW, that: ``claim``),
        then per array parameter (``array_params``),
        whether its first element's address is 16-byte aligned (a slice at an odd column is not;
        its program then makes no alignment claim for it). With SPECIALISE off, no claims on
        values (and the pointers claimed aligned). Last, the values of the exact sizes (``exact_slots``:
        a specialised kernel's, whatever SPECIALISE says)."""
        if not SPECIALISE:
            return self.exact_only(values) if arrays is not None else (False,) * len(self.claim_slots)
        strides = tuple(self.claim(values, k) for k in self.claim_slots)
        if arrays is None:
            return strides
        return (strides + tuple(data_ptr(arrays[p]) % SPECIALISE_DIVISOR == 0 for p in self.array_params)
                + tuple(values[k] for k in self.exact_slots))

    def claim(self, values, k: int):
        """claim_of the value of claim slot ``k``, as (ROW, that) where ``k`` is a row stride equal to
        its row's extent (``row_of``: the rows are dense, no gap between them) and, beyond rank 2, a
        matrix holds more than one row (``rows_of``)."""
        c = claim_of(values[k])
        row = self.row_of.get(k)
        if row is not None and values[k] == (row if isinstance(row, int) else values[row[1]]):
            rows = self.rows_of.get(k, 2)
            if (rows if isinstance(rows, int) else values[rows[1]]) > 1:
                return (ROW, c)
        return c

    def exact_only(self, values) -> tuple:
        """div16's layout with no claim but the exact sizes' values (every pointer taken as aligned):
        what the host reference records, one program per configuration (and per exact value); ()
        where there are no exact sizes."""
        if not self.exact_slots:
            return (False,) * len(self.claim_slots)
        return ((False,) * len(self.claim_slots) + (True,) * len(self.array_params)
                + tuple(values[k] for k in self.exact_slots))

    def named(self, values) -> dict:
        """The named run-time sizes of a call, by name (what a grid function and the tuner see)."""
        return {h.label: values[k] for k, h in enumerate(self.hidden) if h.kind == "size" and h.label.isidentifier()}


def flat_span(a):
    """A numpy array's elements from its first to its last as one contiguous 1-D view of the same
    memory (writes land in ``a``), so the host reference reads it through the strides a launch
    passes: how a strided numpy argument (a slice of a wider matrix) runs on the host in place."""
    import numpy as np

    if a.flags.c_contiguous:
        return a
    if any(s < 0 for s in a.strides):
        raise TileirError("an array with a negative stride (reversed) cannot be read in place", fix="a.copy()")
    span = 1 + sum((n - 1) * (s // a.itemsize) for n, s in zip(a.shape, a.strides))
    return np.lib.stride_tricks.as_strided(a, shape=(span,), strides=(a.itemsize,), writeable=a.flags.writeable)


__all__ = ["SizePlan", "Hidden", "shape_strides", "flat_span", "SIZE_LIMIT", "SPECIALISE_DIVISOR", "claim_of",
           "divisor_of", "ROW"]
