"""The recording handler's machinery: handles, regions, carries, trials, the token, refusals.

The recorder answers every ``t_*`` operation by appending an ``Op`` to the region being filled and
issuing handles for what it defines. The family modules under ``tileir.families`` add the operations
themselves (their checks and what they record) as mixins on this class.

Refusals name the kernel, the number of the operation about to be recorded and the public call
the kernel made (``kernel 'softmax', op 12 (store): ...``), and say what to write instead.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from types import FrameType

from .. import dev as _dev
from ..dtypes import BY_NAME
from ..errors import TileirError
from ..ir import KParam
from ..prog import Attrs, HInfo, Op, Region, TileProg


@dataclass(frozen=True)
class MakeToken(Attrs, kind="make_token"):
    """The entry's memory ordering token (operation 0)."""


@dataclass(frozen=True)
class Return(Attrs, kind="return"):
    """The kernel's end."""


@dataclass(eq=False)
class Frame:
    kind: str  # entry | for | while | if | else | reduce | scan | trial
    ops: list
    op: Op | None = None
    region: Region | None = None
    saved: dict = field(default_factory=dict)
    serial: int = 0  # which region this is: a value belongs to the region it was made in


@dataclass(eq=False)
class CallNode:
    """One public call of the kernel's (the spec's trace_calls): its name, the operations it
    recorded (numbers, inclusive range), and the kernel's calls inside its bodies."""

    name: str
    first_op: int
    last_op: int = -1
    children: list = field(default_factory=list)
    in_body: bool = False
    loc: str = ""  # where in the kernel's source the call was made (file:line)


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_LIBRARY_DIR = os.path.join(_PACKAGE_DIR, "kernels")  # the library's kernels are kernels like any user's


# Guards on runaway work, each refused at record time with its fix.
# A tile of more lanes than this is refused: tileiras' time grows faster than the tile
# (bench/results/tile_size_assemble_cpu.json, bench/tile_size_assemble.py: saxpy's pointer tile of
# 2^16 lanes assembles for sm_90 in 10 s, 2^17 in 37 s, 2^18 in 183 s), and 2^16 32-bit lanes are
# already a whole SM's register file (64K registers), so a larger tile lives in local memory.
MAX_TILE_ELEMENTS = 1 << 16
# A recording of more operations than this is refused: a Python loop that never ends records ~27k
# operations a second forever; the library's largest kernel records under 100.
MAX_OPS = 100_000
ENV_MAX_TILE = "TILEIR_MAX_TILE_ELEMENTS"
ENV_MAX_OPS = "TILEIR_MAX_OPS"


def _limit(env: str, default: int) -> int:
    """``$env`` as a positive int, else ``default``."""
    text = os.environ.get(env)
    if not text:
        return default
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise TileirError(f"{env}={text!r} is not a positive int.", fix=f"{env}={default} (or unset it)")
    return n


# code file name -> (whether it is tileir's machinery, its base name): asked for every frame of every call
_FILES: dict[str, tuple[bool, str]] = {}


def _file(path: str) -> tuple[bool, str]:
    got = _FILES.get(path)
    if got is None:
        full = os.path.abspath(path)
        got = (full.startswith(_PACKAGE_DIR) and not full.startswith(_LIBRARY_DIR), os.path.basename(path))
        if len(_FILES) < 4096 and full == path:  # a relative name's answer follows the cwd
            _FILES[path] = got
    return got


def user_location() -> str:
    """The file:line of the innermost caller outside tileir's machinery: the kernel's own line."""
    f: FrameType | None = sys._getframe(1)
    while f is not None:
        internal, base = _file(f.f_code.co_filename)
        if not internal:
            return f"{base}:{f.f_lineno}"
        f = f.f_back
    return ""


_HINFOS: dict = {}  # (kind, dtype, shape) -> (HInfo, lanes): a recording makes many handles of few kinds


def _hinfo(kind: str, dtype: str, shape: tuple):
    """The shared HInfo of a handle and its lanes, or None where a part is not a plain str / int (an
    equal key of another type, 128.0 for 128, must not answer the HInfo of the plain one)."""
    if type(kind) is not str or type(dtype) is not str:
        return None
    lanes = 1
    for n in shape:
        if type(n) is not int:
            return None
        lanes *= n
    key = (kind, dtype, shape)
    got = _HINFOS.get(key)
    if got is None:
        got = (HInfo(kind, dtype, shape), lanes)
        if len(_HINFOS) < 4096:
            _HINFOS[key] = got
    return got


class RecorderCore(_dev.Dev):
    MAX_DEPTH = 16  # regions nested deeper than this are refused (the spec: "the handler bounds the depth")

    def __init__(self, name: str, params, hints=(), markers=None, sizes=None):
        from ..markers import Marker, kparam_of

        params = tuple(params)
        self.sizes = sizes if sizes else None  # tileir.sizes.SizePlan: run-time sizes and strides
        self.hidden_h: list = []  # the handle of each hidden parameter (read_hidden)
        self.hidden_exact: dict[int, int] = {}  # hidden parameter -> the value recorded in its place
        if self.sizes is not None:
            params = params + (KParam("i32", False),) * len(self.sizes.hidden)
        self.max_tile = _limit(ENV_MAX_TILE, MAX_TILE_ELEMENTS)
        self.max_ops = _limit(ENV_MAX_OPS, MAX_OPS)
        self.emitted = 0  # every operation recorded, trials' included (they are thrown away, not free)
        self.markers = tuple(markers) if markers is not None else tuple(
            p if isinstance(p, Marker) else None for p in params)
        self.prog = TileProg(name, tuple(kparam_of(p) for p in params), hints=tuple(hints))
        self.prog.markers = self.markers
        self.next_h = 0
        self.num = 0
        self.frames = [Frame("entry", self.prog.ops)]
        self.scope: dict[int, int] = {}  # handle -> the serial of the region it was made in
        self.live = {0}  # the serials of the regions open now
        self.closing: set = set()  # a region being closed: its yields are read once more
        self.next_serial = 0
        self.carries: dict[int, int] = {}  # carry id -> handle it holds now
        self.carry_info: dict[int, tuple] = {}
        self.next_cid = 0
        self.trials: list[dict] = []
        self.calls: list[str] = []  # public calls open now, outermost first
        self.call_nodes: list[CallNode] = []  # open call nodes
        self.body_depth: list[int] = []  # call depth at each open body
        tok = self.new("token", "token", ())
        self.emit(MakeToken(), (tok,))
        self.tok_cid = self._carry_new_raw(tok, ("token", ()))

    def read_hidden(self, div16=()) -> None:
        """The hidden parameters' handles, made at the entry before the body runs (so every region
        may use them); a stride or size the launch found a multiple of 16 (or 8, or 4) carries that claim, an array
        whose address is not 16-byte aligned is left out of the alignment claim, a row stride that is its
        row's extent is that extent's handle (a constant, or the size's own: families/views.py reads it
        as "no pitch gap"), and an exact size is the call's value as a constant (``div16``:
        ``SizePlan.div16``'s layout)."""
        if self.sizes is None:
            return
        from ..ir import DivBy
        from ..sizes import divisor_of

        plan = self.sizes
        base = len(self.prog.params) - len(plan.hidden)
        n, a = len(plan.claim_slots), len(plan.array_params)
        claims = dict(zip(plan.claim_slots, div16[:n]))
        self.prog.unaligned = frozenset(p for p, ok in zip(plan.array_params, div16[n:n + a]) if not ok)
        self.hidden_exact = dict(zip(plan.exact_slots, div16[n + a:]))
        for k in range(len(plan.hidden)):
            claim = claims.get(k)  # sizes.claim_of's True, 8, 4 or False; or (ROW, that)
            divisor = divisor_of(claim)
            if k in self.hidden_exact:
                h = self.t_idx_const(self.hidden_exact[k])
            elif isinstance(claim, tuple):  # a row stride that is its row's extent: that extent's handle
                row = plan.row_of[k]
                h = self.t_idx_const(row) if isinstance(row, int) else self.hidden_h[row[1]]
                if not isinstance(row, int) and row[1] not in claims and divisor:  # the extent claims nothing
                    h = self.t_assume(DivBy(divisor), "i32", (), h)
            else:
                h = self.t_scalar(base + k, "i32")
                if divisor:
                    h = self.t_assume(DivBy(divisor), "i32", (), h)
            self.hidden_h.append(h)
        self.span_h = {p: self.hidden_h[k] for p, k in plan.span.items()}

    def checked_span(self, param):
        """The hidden span of buffer ``param`` in a bounds-checked recording (else None)."""
        return getattr(self, "span_h", {}).get(param)

    # -- handles and operations ----------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.prog.name

    def new(self, kind: str, dtype: str, shape) -> int:
        shape = tuple(shape)
        got = _hinfo(kind, dtype, shape)
        if got is None:
            inf, lanes = HInfo(kind, dtype, shape), 1
            for n in shape:
                lanes *= n if isinstance(n, int) else 1
        else:
            inf, lanes = got
        if kind in ("val", "ptrs") and shape and lanes > self.max_tile:
            raise self.refuse(f"a tile of {lanes} lanes ({dtype}{list(shape)}) is more than a tile may hold "
                              f"({self.max_tile}): tileiras takes minutes to assemble such a tile (2^18 lanes "
                              "of pointers: 183 s) and a block's registers hold 2^16 32-bit values",
                              "smaller tiles over more blocks, or a d_range loop over pieces of it "
                              f"({ENV_MAX_TILE}=<lanes> raises the limit)")
        h = self.next_h
        self.next_h += 1
        self.prog.info[h] = inf
        self.scope[h] = self.frames[-1].serial
        return h

    def emit(self, a: Attrs, res: tuple = (), regions=()) -> Op:
        """Record an operation of kind ``type(a).KIND`` with attributes ``a``, defining ``res``."""
        self.emitted += 1
        if self.emitted > self.max_ops:
            raise self.refuse(f"the kernel recorded more than {self.max_ops} operations: a Python loop in the "
                              "kernel that never ends, or one that unrolls far too much?",
                              "a device loop (d_range, d_loop) for work that repeats "
                              f"({ENV_MAX_OPS}=<n> raises the limit for a kernel this large)")
        op = Op(a.KIND, tuple(res), a, tuple(regions), self.num)
        self.num += 1
        self.frames[-1].ops.append(op)
        return op

    def const(self, dtype: str, shape, value) -> int:
        """A constant: a handle with no operation; lowering makes it where it is used, so it belongs to
        no region and may be used anywhere."""
        h = self.new("val", dtype, shape)
        self.prog.consts[h] = value
        self.scope[h] = 0
        return h

    def info(self, h) -> HInfo:
        try:
            inf = self.prog.info[h]
        except (KeyError, TypeError):
            raise self.refuse(f"{h!r} is not a value of this kernel (a value from another kernel, or "
                              "a Python object where a tile was expected)") from None
        serial = self.scope.get(h, 0)
        if serial not in self.live and serial not in self.closing:
            raise self.refuse("a value made inside a region (a d_range, d_loop or d_if body, a reduction) used "
                              "after that region ended -- or one kept from the discarded trial run of a loop body",
                              "carry it out: c = carry(init) before the region, set(c, v) inside, get(c) after")
        return inf

    def is_const(self, h) -> bool:
        return h in self.prog.consts

    def refuse(self, message: str, fix: str | None = None) -> TileirError:
        what = self.calls[0] if self.calls else None
        return TileirError(message, kernel=self.name, op=self.num, what=what, fix=fix)

    # -- the markers ------------------------------------------------------------------------------
    def t_call_enter(self, name):
        self.calls.append(name)
        node = CallNode(name, self.num)
        node.in_body = bool(self.body_depth) and self.body_depth[-1] == len(self.calls) - 1
        if len(self.calls) == 1 or node.in_body:
            parent = self.call_nodes[-1].children if self.call_nodes else self.prog.calls
            if not self.trials:
                node.loc = user_location()
                parent.append(node)
        self.call_nodes.append(node)

    def t_call_exit(self):
        node = self.call_nodes.pop()
        node.last_op = self.num - 1
        self.calls.pop()

    def t_body_enter(self):
        self.body_depth.append(len(self.calls))

    def t_body_exit(self):
        self.body_depth.pop()

    # -- state queries ----------------------------------------------------------------------------
    def t_shape_of(self, h):
        inf = self.info(h)
        if inf.kind == "token":
            raise self.refuse("the memory ordering token has no shape")
        return inf.dtype, list(inf.shape)

    # -- regions ------------------------------------------------------------------------------------
    def push(self, kind: str, op: Op | None, region: Region | None, ops: list | None = None) -> Frame:
        if len(self.frames) > self.MAX_DEPTH:
            raise self.refuse(f"regions nest deeper than {self.MAX_DEPTH}", "a flatter kernel")
        self.next_serial += 1
        f = Frame(kind, region.ops if region is not None else (ops if ops is not None else []), op, region,
                  serial=self.next_serial)
        self.frames.append(f)
        self.live.add(f.serial)
        return f

    def pop(self, kind: str) -> Frame:
        f = self.frames[-1]
        if f.kind != kind:
            raise self.refuse(f"a {kind} region was closed while a {f.kind} region is open (a body that "
                              "ended early: break, return or an exception inside a d_range body?)")
        self.live.discard(f.serial)
        self.closing.add(f.serial)  # its yields are still read by the operation closing it (see closed())
        return self.frames.pop()

    def closed(self, result):
        """What a region-closing operation answers, once it has read the region's yields: from here
        on nothing made inside the region may be used."""
        self.closing.clear()
        return result

    def inside(self, *kinds) -> str | None:
        """The innermost open region of one of ``kinds`` (trials look through to what they try)."""
        for f in reversed(self.frames):
            if f.kind in kinds:
                return f.kind
        return None

    # -- carries and trials -----------------------------------------------------------------------
    def _carry_new_raw(self, h: int, info) -> int:
        cid = self.next_cid
        self.next_cid += 1
        self.carries[cid] = h
        self.carry_info[cid] = info
        return cid

    def t_carry_new(self, init):
        inf = self.info(init)
        if inf.kind != "val":
            raise self.refuse("carry takes a tile", "carry(full([..], 0.0)) or carry(zeros(p))")
        return self._carry_new_raw(init, (inf.dtype, inf.shape))

    def t_carry_get(self, c):
        return self.carries[c]

    def t_carry_set(self, c, h):
        if self.inside("reduce", "scan"):
            raise self.refuse("set inside a reduction or scan body: those regions carry nothing",
                              "compute the value in the body and use what the reduction answers")
        if c != self.tok_cid:
            inf = self.info(h)
            want = self.carry_info[c]
            if (inf.dtype, inf.shape) != want:
                raise self.refuse(f"set of a carry of {want[0]}{list(want[1])} to a {inf.dtype}"
                                  f"{list(inf.shape)} tile: a carry keeps its first tile's format and shape",
                                  "convert (to / float_to_float) or broadcast/reshape the tile first")
        self.carries[c] = h
        for t in self.trials:
            if c < t["first_cid"] and c not in t["set"]:
                t["set"].append(c)

    def t_trial_begin(self):
        self.trials.append({"first_cid": self.next_cid, "set": [], "carries": dict(self.carries),
                            "num": self.num, "frames": len(self.frames)})
        self.push("trial", None, None, [])

    def t_trial_end(self):
        self.pop("trial")
        self.closed(None)  # nothing the trial made is usable after it
        t = self.trials.pop()
        self.carries = t["carries"]
        self.num = t["num"]
        order = {self.tok_cid: -1}
        return sorted(t["set"], key=lambda c: order.get(c, c))

    # -- the token --------------------------------------------------------------------------------
    def t_tok_get(self):
        return self.carries[self.tok_cid]

    def t_tok_set(self, tok):
        self.t_carry_set(self.tok_cid, tok)

    def next_token(self) -> tuple[int, int]:
        """(the token a memory operation takes, a fresh one it defines); the fresh one is current."""
        tin = self.carries[self.tok_cid]
        tout = self.new("token", "token", ())
        self.t_carry_set(self.tok_cid, tout)
        return tin, tout

    def memory_allowed(self, what: str) -> None:
        k = self.inside("reduce", "scan", "if", "else")
        if k:
            region = {"else": "an if", "if": "an if"}.get(k, f"a {k}")
            raise self.refuse(f"a {what} inside {region} region: the dialect requires that region to be "
                              "pure and it does not carry the memory ordering token",
                              "move the memory operation out of the region, and choose values inside "
                              "it with select")

    def marker(self, param):
        return self.markers[param] if 0 <= param < len(self.markers) else None

    def check_write(self, param, what: str) -> None:
        """Refuse a write the parameter's marker does not allow: an Out is written through its
        cells (store_cell, store_sub) and nothing else; an In and a Whole are never written.
        Every write passes here (or writes a cell), so ``prog.written`` is the launch's list of
        outputs (a read-only array there is refused)."""
        if isinstance(param, int):
            self.prog.written.add(param)
        m = self.marker(param)
        if m is None or m.role == "Shared":
            return
        if m.role == "Out":
            raise self.refuse(f"a {what} into parameter {param}, an Out: an Out is written through its cells and "
                              "nothing else, so that each block writes its own cell",
                              "store_cell(p, t) or store_sub(p, at, t); or declare the parameter Shared(fmt)")
        article = "an" if m.role == "In" else "a"
        raise self.refuse(f"a {what} into parameter {param}, {article} {m.role}: it is read, never written",
                          "declare it Out(fmt, cells(...)) or Shared(fmt)")

    # -- finishing ----------------------------------------------------------------------------------
    def finish(self) -> TileProg:
        if len(self.frames) != 1:
            raise self.refuse(f"the kernel ended with a {self.frames[-1].kind} region still open (a "
                              "break, return or exception inside a d_range body?)",
                              "let every d_range body run to its end; a data-dependent exit is d_loop")
        self.emit(Return())
        return self.prog


def check_dtype_name(rec: RecorderCore, name) -> str:
    if name not in BY_NAME:
        raise rec.refuse(f"unknown element format {name!r}")
    return name


__all__ = ["MakeToken", "Return", "RecorderCore", "Frame", "CallNode", "KParam", "check_dtype_name"]
