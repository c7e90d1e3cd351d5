"""The pieces of the fuzz builder every kind of step shares: the values (``Val``: a recorded tile
with its format, shape and the judge's two flags), the memory regions, the layout and the lenient
operand resolution (fuzzgen's docstring says why), and the helpers that keep an operand inside
what the device defines (finite mma operands, in-range shifts and divisors)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

import tileir as ti
from tileir.elementwise import OPS, ROWS

from .fuzzgen import FLOATS, STORABLE

NP = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64, "i16": np.int16, "i8": np.int8}
PAD = {"zero": ti.PadZero, "neg_zero": ti.PadNegZero, "nan": ti.PadNan, "pos_inf": ti.PadPosInf,
       "neg_inf": ti.PadNegInf, "none": ti.NoPadding}
ALIGN = 16  # every region starts on a multiple of 16 elements (the buffers are 16-byte aligned)
# the generator's unary names (fuzzspec UN_EXACT + UN_APPROX: the op, or the function where a later row of
# the op fixes an attribute, sqrt_approx) -> the public function (tileir.elementwise's unaryf rows)
UN_FN = {(r.op if OPS[(r.kind, r.op)] is r else r.name): getattr(ti, r.name) for r in ROWS if r.kind == "unaryf"}


@dataclass
class Val:
    tile: ti.Tile
    fmt: str
    shape: tuple
    exact: bool = True  # the device must answer it bit for bit
    raw: bool = True  # its bits are determined (no NaN a computation made)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape)) if self.shape else 1

    @property
    def is_float(self) -> bool:
        return ti.dtypes.BY_NAME[self.fmt].is_float


@dataclass
class Region:
    buf: str  # "in_f32", "out_i32", ...
    fmt: str
    offset: int
    per_block: int
    blocks: int  # the grid (one copy per block) or 1 (the blocks share it)
    dist: str  # how make_args fills it
    step: int  # the step that owns it
    op: str
    taint: str = "exact"  # exact | approx: how its lanes are judged (output buffers)

    @property
    def size(self) -> int:
        return self.per_block * self.blocks


@dataclass
class Built:
    desc: dict
    prog: ti.TileProg
    params: list  # (buffer name, fmt) per entry parameter
    grid: tuple
    regions: list
    sizes: dict  # buffer name -> elements
    skipped: list = field(default_factory=list)  # ids of steps that recorded nothing
    const_fire: bool = False  # it holds an assert drawn to fire whose condition is a constant (generator 2)

    def kparams(self) -> list:
        return [(fmt, True) for _, fmt in self.params]


def _round_up(n: int) -> int:
    return -(-max(n, 1) // ALIGN) * ALIGN


class BuilderCore:
    """The layout, the operand resolution and the step loop every kind of step shares."""

    def __init__(self, desc: dict):
        self.desc = desc
        self.grid = int(desc["grid"][0])
        self.fmts = [f for f in desc["fmts"] if f in STORABLE]
        self.params = [(f"in_{f}", f) for f in self.fmts] + [(f"out_{f}", f) for f in self.fmts]
        self.pos = {name: i for i, (name, _) in enumerate(self.params)}
        self.regions: dict = {}
        self.next_off: dict = {}
        self.loops: list = []  # (iteration index Idx or None, trips) of the enclosing loops
        self.skipped: set = set()
        self.done: set = set()
        self.depth = 0  # regions entered (loops, ifs)
        self.in_if = 0  # ifs entered: no memory operation is allowed there
        self.const_fire = False  # an assert recorded to fire on a constant condition (generator 2's x != x)

    # -- memory layout -------------------------------------------------------------------------------
    def param(self, kind: str, fmt: str):
        name = f"{kind}_{fmt}"
        return ti.param(fmt, self.pos[name]) if name in self.pos else None

    def region(self, step, tag: str, kind: str, fmt: str, per_block: int, shared=False, dist="small",
               taint="exact") -> Region:
        key = (step["id"], tag)
        reg = self.regions.get(key)
        if reg is None:
            buf = f"{kind}_{fmt}"
            per = _round_up(per_block)
            blocks = 1 if shared else self.grid
            off = self.next_off.get(buf, 0)
            reg = Region(buf, fmt, off, per, blocks, dist, step["id"], step["op"], taint)
            self.next_off[buf] = off + per * blocks
            self.regions[key] = reg
        elif taint == "approx":
            reg.taint = "approx"
        return reg

    def mult(self) -> int:
        n = 1
        for _, trips in self.loops:
            n *= max(1, trips)
        return n

    def iteration(self):
        """The linear iteration index over the enclosing counted loops (None outside any)."""
        lin = None
        for k, trips in self.loops:
            if k is None:
                continue
            lin = k if lin is None else ti.idx_add(ti.idx_mul(lin, ti.idx_const(max(1, trips))), k)
        return lin

    def base(self, reg: Region, moving: bool = False, stride: int = 0):
        off = ti.idx_const(reg.offset)
        if reg.blocks > 1:
            off = ti.idx_add(off, ti.idx_mul(ti.block_id(0), ti.idx_const(reg.per_block)))
        it = self.iteration() if moving else None
        if it is not None:
            off = ti.idx_add(off, ti.idx_mul(it, ti.idx_const(stride)))
        return off

    # -- operands ------------------------------------------------------------------------------------
    @staticmethod
    def get(scope: dict, ref, pred):
        v = scope.get(ref) if ref is not None else None
        if v is not None and pred(v):
            return v
        for v in reversed(list(scope.values())):
            if pred(v):
                return v
        return None

    # -- bodies --------------------------------------------------------------------------------------
    def run(self, steps, scope: dict) -> None:
        for s in steps:
            fn = getattr(self, "b_" + s["op"])
            got = fn(s, scope)
            if got is None:
                self.skipped.add(s["id"])
                continue
            self.done.add(s["id"])
            for j, v in enumerate(got):
                if v is not None:
                    scope[s["id"] + j] = v


def take(which: str):
    """A non-commutative fold body: answer the element or the accumulator (the measured order)."""
    return (lambda acc, x: x) if which == "take_elem" else (lambda acc, x: acc)


def fits_shape(s, v) -> bool:
    f = s["f"]
    if f == "reshape":
        return v.size == int(np.prod(s["to"])) if s["to"] else v.size == 1
    if f == "permute":
        return len(v.shape) == len(s["perm"])
    if f == "broadcast":
        return len(v.shape) in (0, len(s["to"])) and all(d in (1, t) for d, t in zip(v.shape, s["to"]))
    if f in ("extract", "insert"):
        return len(v.shape) == len(s["to"]) and all(d % t == 0 and i < d // t for d, t, i in
                                                    zip(v.shape, s["to"], s["idx"]))
    return len(v.shape) > s.get("dim", 0)


def ftof_ok(src: str, dst: str, mode: str) -> bool:
    from .fuzzgen import FTOF

    return any(d == dst and mode in modes for d, modes in FTOF.get(src, ()))


def clamp(t, fmt: str, lim: float):
    """|t| <= lim and NaN as -lim: the operands of a product stay finite (an infinity's product order
    decides between inf and NaN)."""
    return ti.min(ti.max(t, ti.f_const(fmt, -lim)), ti.f_const(fmt, lim))


def operand(v: Val, fmt: str):
    """``v`` as an mma operand (or accumulator) of format ``fmt``: finite, then converted."""
    t = v.tile
    if v.fmt not in FLOATS:
        t = ti.float_to_float(t, "f32")
    src = v.fmt if v.fmt in FLOATS else "f32"
    t = clamp(t, src, 8.0)
    return t if src == fmt else ti.float_to_float(t, fmt)


def split_tf32(v: Val):
    x = operand(v, "f32")
    hi = ti.float_to_float(x, "tf32")
    lo = ti.float_to_float(ti.sub(x, ti.float_to_float(hi, "f32")), "tf32")
    return hi, lo


def bini(op: str, a, b):
    """An integer operation at any width (the surface's spellings are i32 for most)."""
    from tileir.surface.elementwise import record_op

    return record_op("binaryi", op, a, b)


def h(t) -> int:
    """A tile's handle (for the Dev operations the surface has no spelling of)."""
    from tileir.surface._util import h as handle

    return handle(t)


__all__ = ["Val", "Region", "Built", "BuilderCore", "NP", "PAD", "UN_FN", "take", "fits_shape", "ftof_ok", "clamp",
           "operand", "split_tf32", "bini", "h"]
