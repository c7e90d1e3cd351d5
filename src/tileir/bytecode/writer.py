"""The bytecode writer: a Kernel as one Tile IR bytecode file, driven by ``dialect.OPS``.

File layout (13.x): magic, version (major, minor, tag u16), then sections, each an id byte
(0x80 set when aligned), a varint length, an alignment varint and 0xCB padding when aligned, and
the contents: Global (1, only when there are globals), Func (8), Constant (8), Debug (8),
Type (4), Producer (1, 13.3+, only when the kernel names one), String (4), then the end byte --
the order NVIDIA's writer uses.

Value numbers are positional: the entry's parameters first, then each operation's results in
order. A region's block arguments and operations number on from where the operation stands, and
the count goes back there when the region closes; the operation's own results follow.
"""

from __future__ import annotations

import math

import numpy as np

from .. import ir
from ..dialect import BY_NAME, GOp
from ..dtypes import BY_NAME as DTYPES
from ..errors import TileirError
from ..generic import to_generic
from . import enums as E
from .tables import Interned, TypeTable, _pad, dense_bytes, float_pattern, int_list
from .varint import put_signed_varint, put_varint, sign_extend
from .version import DEFAULT, parse_version, vstr

_SPLATS: dict = {}  # (format, number, sign) -> a float splat constant's payload


class _FnWriter:
    def __init__(self, mod: _Module, kernel_name: str, nparams: int):
        self.mod = mod
        self.v = mod.version
        self.kernel = kernel_name
        # value numbers: a Val's by its id, an Arg's by its position, anything else by itself (a
        # dataclass's hash is a Python call, and every operand and result is looked up or bound)
        self.vals: dict = {}
        self.args: dict = {i: i for i in range(nparams)}
        self.ids: dict = {}
        self.next_id = nparams
        self.nops = 0
        self.enclosing: list[str] = []  # the operations whose regions the writer is inside
        self.absent: dict = {}  # results an older version does not write: value -> the version that does
        self.plans: dict = {}  # op name -> its _OpPlan at this version

    # -- attribute encodings --------------------------------------------------------------
    def _refuse(self, what: str, since) -> None:
        raise TileirError(f"{what} needs bytecode {vstr(since)}; this module is written at "
                          f"{vstr(self.v)}. Write at {vstr(since)} or later, or leave it at its default.",
                          kernel=self.kernel)

    def attr(self, out: bytearray, kind: str, value, op: str) -> None:
        m = self.mod
        if kind.startswith("enum:"):
            table = E.ENUMS[kind[5:]]
            if value not in table:
                raise TileirError(f"{op}: {value!r} is not one of {', '.join(table)}", kernel=self.kernel)
            out.append(table[value])
        elif kind == "int":
            put_varint(out, value)
        elif kind == "bool":
            out.append(1 if value else 0)
        elif kind in ("str", "symbol"):
            put_varint(out, m.strings[value.encode()])
        elif kind == "type":
            put_varint(out, m.types.ty(value))
        elif kind == "dense":
            put_varint(out, m.constant(self._dense(value)))
        elif kind == "i32s":
            int_list(out, value, 4)
        elif kind == "bools":
            int_list(out, [1 if x else 0 for x in value], 1)
        elif kind == "tagged":
            self.tagged(out, value)
        elif kind == "tagged*":
            put_varint(out, len(value))
            for x in value:
                self.tagged(out, x)
        elif kind == "hints":
            self.hints(out, value)
        else:  # pragma: no cover - the table names only the kinds above
            raise AssertionError(kind)

    def _dense(self, value) -> bytes:
        """A constant's payload: one element for a splat, else every element in order."""
        _kind, dtype, v = value
        if isinstance(v, (tuple, list)):
            return dense_bytes(dtype, list(v))
        # a float splat's bytes are a function of its format and number, and numpy rounds slowly: kept.
        # The key tells -0.0 from 0.0; a NaN (never equal to itself) is not kept.
        if type(v) is float and v == v:
            key = (dtype, v, math.copysign(1.0, v))
            got = _SPLATS.get(key)
            if got is None:
                got = dense_bytes(dtype, [v])
                if len(_SPLATS) < 4096:
                    _SPLATS[key] = got
            return got
        return dense_bytes(dtype, [v])

    def tagged(self, out: bytearray, a) -> None:
        if isinstance(a, ir.IdF):
            out.append(E.ATTR_FLOAT)
            put_varint(out, self.mod.types.simple(a.dtype))
            self.float_bits(out, a.dtype, a.value)
        elif isinstance(a, ir.IdI):
            out.append(E.ATTR_INTEGER)
            put_varint(out, self.mod.types.simple(a.dtype))
            bits = DTYPES[a.dtype].bits
            put_varint(out, a.value & ((1 << bits) - 1))
        elif isinstance(a, ir.DivBy):
            out.append(E.ATTR_DIV_BY)
            put_varint(out, a.divisor)
            out.append((a.every is not None) | ((a.along is not None) << 1))
            if a.every is not None:
                put_signed_varint(out, a.every)
            if a.along is not None:
                put_signed_varint(out, a.along)
        elif isinstance(a, ir.SameElements):
            out.append(E.ATTR_SAME_ELEMENTS)
            int_list(out, a.groups, 8)
        elif isinstance(a, ir.Bounded):
            out.append(E.ATTR_BOUNDED)
            out.append((a.lb is not None) | ((a.ub is not None) << 1))
            if a.lb is not None:
                put_signed_varint(out, a.lb)
            if a.ub is not None:
                put_signed_varint(out, a.ub)
        else:
            raise TileirError(f"no attribute encoding for {a!r}", kernel=self.kernel)

    def float_bits(self, out: bytearray, dtype: str, value: float) -> None:
        """A float attribute's pattern: one byte for 8 bits and narrower, else a zigzagged
        varint of the pattern. The reader checks a pattern narrower than 64 bits fits that width
        read UNSIGNED (measured: the sign-extended -inf of f32 is refused as "does not fit in 32
        bits"), so only an f64 pattern is read as signed, which keeps it within 64 bits."""
        width = DTYPES[dtype].bits
        pattern = float_pattern(dtype, value)
        if width <= 8:
            out.append(pattern & 0xFF)
        else:
            put_signed_varint(out, sign_extend(pattern, 64) if width == 64 else pattern)

    def hints(self, out: bytearray, hints) -> None:
        """The dialect's nested dictionary: per architecture, a dictionary of i32 values (a Python
        bool is written as a bool attribute: allow_tma = false)."""
        m = self.mod
        put_varint(out, len(hints))
        for arch, items in hints:
            put_varint(out, m.strings[arch.encode()])
            out.append(E.ATTR_DICTIONARY)
            put_varint(out, len(items))
            for key, val in items:
                put_varint(out, m.strings[key.encode()])
                if isinstance(val, bool):
                    out.append(E.ATTR_BOOL)
                    out.append(1 if val else 0)
                else:
                    out.append(E.ATTR_INTEGER)
                    put_varint(out, 1)  # i32
                    put_varint(out, val & 0xFFFFFFFF)

    # -- operations -------------------------------------------------------------------------
    def bind(self, r, n: int) -> None:
        t = type(r)
        if t is ir.Val:
            self.vals[r.id] = n
        elif t is ir.Arg:
            self.args[r.pos] = n
        else:
            self.ids[r] = n

    def ref(self, r) -> int:
        t = type(r)
        got = self.vals.get(r.id) if t is ir.Val else self.args.get(r.pos) if t is ir.Arg else self.ids.get(r)
        if got is None:
            since = self.absent.get(r)
            if since is not None:
                self._refuse(f"using the result {r!r} (its operation has no results on the wire before "
                             f"{vstr(since)})", since)
            raise TileirError(f"operand {r!r} is used before it is defined", kernel=self.kernel)
        return got

    def op(self, out: bytearray, g: GOp) -> None:
        p = self.plans.get(g.name)
        if p is None:
            p = self.plans[g.name] = _plan(g.name, self.v)
        v = self.v
        if p.refused:
            self._refuse(f"the operation {g.name}", p.d.since)
        # ftof's rounding modes are NOT gated: the spec dates them to 13.4, but the field has been on
        # the wire since 13.1 and tileirdisasm / tileiras 13.4.92 read and assemble 13.1 bytes with
        # ftof rounding<zero> (the layer-1 golden "ftof" at every version): the measurement wins.
        if p.is_return and "loop" in self.enclosing and v < (13, 4):
            # a return inside a loop needs bytecode 13.4, where ReturnOp's parents became entry, if and loop
            self._refuse("a return inside a loop (d_return_if in a d_loop)", (13, 4))
        self.nops += 1
        out += p.opcode
        if p.write_results:
            ty = self.mod.types.ty
            if p.results_kind == "seq":
                put_varint(out, len(g.results))
            if p.results_kind in ("one", "seq"):
                for _, t in g.results:
                    put_varint(out, ty(t))
        elif p.results_kind == "seq":
            out.append(0)  # an empty list: the results are not on the wire before results_since
        # the flag word: bit i for the i-th flag; absent when no flag exists at this version
        if p.flags or p.late_flags:
            word = 0
            for bit, name in p.flags:
                if _flag_value(g, name):
                    word |= 1 << bit
            for name, since in p.late_flags:
                if _flag_value(g, name):
                    self._refuse(f"{g.name}'s {name}", since)
            if p.flags:
                put_varint(out, word)
        attrs = g.attrs
        for a, late in p.attrs:
            value = attrs.get(a.name)
            if late:
                if not _is_legacy(a, value):
                    self._refuse(f"{g.name}'s {a.name} {value!r}", a.since)
                continue
            if value is None:
                if a.optional:
                    continue
                raise TileirError(f"{g.name} needs its {a.name} attribute", kernel=self.kernel)
            self.attr(out, a.kind, value, g.name)
        operands = g.operands
        ref = self.ref
        if p.counted:
            flat: list = []
            for n, _ in p.operands:
                x = operands.get(n)
                flat.extend(x if isinstance(x, tuple) else [x])
            put_varint(out, len(flat))
            for x in flat:
                put_varint(out, ref(x))
        else:
            for n, how in p.operands:
                x = operands.get(n)
                if not how:
                    put_varint(out, ref(x))
                elif how == "?":
                    if x is not None:
                        put_varint(out, ref(x))
                else:
                    assert x is not None, f"{g.name}'s variadic {n}: a tuple, empty when none"
                    put_varint(out, len(x))
                    for y in x:
                        put_varint(out, ref(y))
        if p.regions:
            put_varint(out, len(g.regions))
            self.enclosing.append(g.name)
            for region in g.regions:
                self.region(out, region)
            self.enclosing.pop()
        if p.write_results:
            for r, _t in g.results:
                self.bind(r, self.next_id)
                self.next_id += 1
        else:
            for r, _t in g.results:
                self.absent[r] = p.d.results_since

    def region(self, out: bytearray, region) -> None:
        saved = self.next_id
        if not region.args and not region.ops:
            out.append(0)  # an empty region: no block at all (an if without else)
            return
        out.append(1)  # one block per region
        put_varint(out, len(region.args))
        for r, t in region.args:
            put_varint(out, self.mod.types.ty(t))
            self.bind(r, self.next_id)
            self.next_id += 1
        body = bytearray()
        for g in region.ops:
            self.op(body, g)
        put_varint(out, len(region.ops))
        out += body
        self.next_id = saved


class _OpPlan:
    """What one dialect entry puts on the wire at one version, worked out once per process: the op
    table is fixed, and the writer read it afresh (names stripped, versions compared) per operation."""

    __slots__ = ("d", "refused", "is_return", "opcode", "write_results", "results_kind", "flags", "late_flags", "attrs",
                 "operands", "counted", "regions")

    def __init__(self, d, v):
        self.d = d
        self.refused = v < d.since
        self.is_return = d.name == "return"
        self.opcode = bytes(put_varint(bytearray(), d.opcode))
        # before results_since the op has no results on the wire: no types, and it defines nothing
        self.write_results = v >= d.results_since
        self.results_kind = d.results  # one | seq | none
        self.flags = tuple((bit, f.name) for bit, f in enumerate(d.flags) if f.since <= v)
        self.late_flags = tuple((f.name, f.since) for f in d.flags if f.since > v)
        self.attrs = tuple((a, a.since > v) for a in d.attrs)
        self.operands = tuple((o.rstrip("?*"), o[-1] if o[-1] in "?*" else "") for o in d.operands)
        self.counted = d.counted
        self.regions = bool(d.regions)


_PLANS: dict = {}


def _plan(name: str, v) -> _OpPlan:
    key = (name, v)
    got = _PLANS.get(key)
    if got is None:
        got = _PLANS[key] = _OpPlan(BY_NAME[name], v)
    return got


def _flag_value(g: GOp, name: str) -> bool:
    """Whether a flag is set: an optional operand or attribute present, a unit attribute true."""
    if name in g.operands:
        return g.operands[name] is not None
    value = g.attrs.get(name)
    return value is not None and value is not False and value != ()


def _is_legacy(a, value) -> bool:
    """Whether ``value`` is one an older version (without the field) can mean."""
    if value is None or value == a.legacy:
        return True
    return a.kind == "bools" and not any(value)


class _Module:
    def __init__(self, version):
        self.version = version
        self.strings = Interned()
        self.types = TypeTable(version)
        self.constants = Interned()
        self.debug_counts: list[int] = []

    def constant(self, data: bytes) -> int:
        b = bytearray()
        put_varint(b, len(data))
        b += data
        return self.constants[bytes(b)]


def _section(out: bytearray, sid: int, content: bytes, align: int) -> None:
    out.append(sid | (0x80 if align > 1 else 0))
    put_varint(out, len(content))
    if align > 1:
        put_varint(out, align)
        _pad(out, align)
    out += content


def encode_kernel(k: ir.Kernel, version=None) -> bytes:
    """``k`` as a bytecode file holding one entry (and the module's globals)."""
    v = parse_version(version)
    mod = _Module(v)
    func = bytearray()
    put_varint(func, 1)
    put_varint(func, mod.strings[k.name.encode()])
    put_varint(func, mod.types.function([p.ty for p in k.params], []))
    func.append(0x02 | (0x04 if k.hints else 0))  # entry, and whether hints follow
    put_varint(func, 1)  # this function's index into the debug section (1-based)
    fw = _FnWriter(mod, k.name, len(k.params))
    if k.hints:
        func.append(E.ATTR_OPT_HINTS)
        fw.hints(func, k.hints)
    body = bytearray()
    for ins in k.body:
        fw.op(body, to_generic(ins))
    put_varint(func, len(body))
    func += body

    glob = bytearray()
    if k.globals:
        put_varint(glob, len(k.globals))
        for gl in k.globals:
            if v < (13, 3) and (gl.private or gl.constant):
                fw._refuse(f"the global {gl.sym}'s visibility/constant field", (13, 3))
            put_varint(glob, mod.strings[gl.sym.encode()])
            put_varint(glob, mod.types.ty(ir.tile((len(gl.values),), gl.dtype)))
            put_varint(glob, mod.constant(dense_bytes(gl.dtype, list(gl.values))))
            put_varint(glob, gl.align)
            if v >= (13, 3):
                glob.append(E.ENUMS["visibility"]["private" if gl.private else "public"])
                put_varint(glob, 1 if gl.constant else 0)

    producer = None
    if k.producer is not None:
        if v < (13, 3):
            fw._refuse("the module's producer string", (13, 3))
        producer = bytearray()
        put_varint(producer, mod.strings[k.producer.encode()])

    consts = bytearray()
    mod.constants.write(consts, 8)

    debug = bytearray()
    put_varint(debug, 1)  # functions with debug info
    _pad(debug, 4)
    debug += (0).to_bytes(4, "little")
    per_op = 1 + fw.nops  # the function's own entry, then one per operation
    put_varint(debug, per_op)
    _pad(debug, 8)
    debug += bytes(8 * per_op)  # no locations: attribute 0 everywhere
    attrs = Interned(start=1)
    attrs[b"\x00"]  # the reader refuses an empty attribute table
    attrs.write(debug, 4)

    types = bytearray()
    mod.types.write(types, 4)
    strings = bytearray()
    mod.strings.write(strings, 4)

    out = bytearray(E.MAGIC)
    out += bytes([v[0], v[1]]) + (0).to_bytes(2, "little")
    if k.globals:
        _section(out, E.SECTION_GLOBAL, bytes(glob), 1)
    _section(out, E.SECTION_FUNC, bytes(func), 8)
    _section(out, E.SECTION_CONSTANT, bytes(consts), 8)
    _section(out, E.SECTION_DEBUG, bytes(debug), 8)
    _section(out, E.SECTION_TYPE, bytes(types), 4)
    if producer is not None:
        _section(out, E.SECTION_PRODUCER, bytes(producer), 1)
    _section(out, E.SECTION_STRING, bytes(strings), 4)
    out.append(E.SECTION_END)
    return bytes(out)


def encode(prog, version=None) -> bytes:
    """``prog`` (a TileProg) lowered and encoded."""
    from ..lower import lower

    return encode_kernel(lower(prog), version)


__all__ = ["encode_kernel", "encode", "DEFAULT", "np"]
