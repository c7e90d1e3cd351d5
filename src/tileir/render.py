"""A Kernel as cuda_tile MLIR text, identical (up to whitespace) to what ``tileirdisasm`` prints
for the bytes the writer makes of it.

Two things make that possible. The operations print from the same table the writer reads
(``dialect.OPS``: each entry's ``asm`` template), and values are named the way MLIR's printer
names them: result and block-argument names the operation suggests (``%blockId_x``, ``%for``,
``%loopIdx``), made unique within a scope by a suffix from one counter (``%reshape_0``), and
the rest numbered ``%0, %1 ...``; a region numbers on from where its parent region ended, and
its siblings each start again from there.
"""

from __future__ import annotations

import math
import struct

import numpy as np

from . import ir
from .dialect import BY_NAME, GOp
from .dtypes import BY_NAME as DTYPES
from .dtypes import to_format
from .generic import to_generic

# ---- types ----------------------------------------------------------------------------------


def elem_str(e) -> str:
    return f"ptr<{e.name}>" if isinstance(e, ir.PtrTo) else e.name


def _dim(d) -> str:
    return "?" if d == ir.DYN_DIM else str(d)


def type_str(t) -> str:
    if isinstance(t, ir.Token):
        return "token"
    if isinstance(t, ir.Tile):
        dims = "".join(f"{d}x" for d in t.shape)
        return f"tile<{dims}{elem_str(t.elem)}>"
    if isinstance(t, ir.TensorView):
        shape = "x".join(_dim(d) for d in t.shape)
        strides = ",".join(_dim(d) for d in t.strides)
        sep = "x" if t.shape else ""
        return f"tensor_view<{shape}{sep}{elem_str(t.elem)}, strides=[{strides}]>"
    if isinstance(t, ir.PartitionView):
        tile_s = "x".join(str(d) for d in t.tile_shape)
        tv = type_str(ir.tensor_view_of(t))
        out = f"partition_view<tile=({tile_s}), {tv}"
        if list(t.dim_map) != list(range(len(t.tile_shape))):
            out += f", dim_map=[{', '.join(str(d) for d in t.dim_map)}]"
        if ir.padding_present(t.padding):
            out += f", padding_value = {t.padding.value}"
        return out + ">"
    raise NotImplementedError(f"no text for type {t!r}")


# ---- floats as MLIR prints them ---------------------------------------------------------------


def _bits_of(dtype: str, x: float) -> int:
    arr = to_format(DTYPES[dtype], [x])
    width = {"f64": 8, "f32": 4, "tf32": 4, "f16": 2, "bf16": 2}.get(dtype, 1)
    return int.from_bytes(np.asarray(arr).tobytes()[:width], "little")


def float_str(dtype: str, x: float) -> str:
    """MLIR's float printing: %e with 6 digits when that reads back to the same value, else the
    shortest decimal that does, else the bit pattern in hex (inf, NaN)."""
    d = DTYPES[dtype]
    x = float(to_format(d, [x])[0])
    if math.isinf(x) or math.isnan(x):
        width = 16 if dtype == "f64" else (8 if d.bits > 16 else (4 if d.bits > 8 else 2))
        return "0x" + format(_bits_of(dtype, x), f"0{width}X")
    s = f"{x:.6e}"
    if float(to_format(d, [float(s)])[0]) == x:
        return s
    r = repr(x if dtype == "f64" else float(np.float32(x)) if dtype in ("f32", "tf32") else x)
    return r


def int_attr_str(dtype: str, v: int) -> str:
    if dtype == "i1":
        return "true" if v & 1 else "false"
    return str(v)


# ---- naming ------------------------------------------------------------------------------------


def _const_name(value) -> str:
    kind, dtype, v = value
    if kind == "int":
        if dtype == "i1":
            return "true" if v & 1 else "false"
        return f"cst_{v}_{dtype}"
    return f"cst_{dtype}"


def _sanitize(name: str) -> str:
    ok = set("$._-")
    if name[0].isdigit():
        return "_" + "".join(c if (c.isalnum() or c in ok) else ("_" if c == " " else f"{ord(c):X}")
                             for c in name)
    if all(c.isalnum() or c in ok for c in name):
        return name
    return "".join(c if (c.isalnum() or c in ok) else ("_" if c == " " else f"{ord(c):X}") for c in name)


class _Names:
    """MLIR's SSANameState, for the shapes of program this package writes."""

    def __init__(self):
        self.text: dict = {}  # value -> printed reference
        self.groups: dict = {}  # id(op) -> list of (name, size)
        self.scopes: list[set] = [set()]
        self.next_value = 0
        self.next_arg = 0
        self.next_conflict = 0

    def _used(self, name: str) -> bool:
        return any(name in s for s in self.scopes)

    def unique(self, name: str) -> str:
        name = _sanitize(name)
        if self._used(name):
            base = name + "_"
            while True:
                probe = base + str(self.next_conflict)
                self.next_conflict += 1
                if not self._used(probe):
                    name = probe
                    break
        self.scopes[-1].add(name)
        return name

    def name_op(self, g: GOp) -> None:
        d = BY_NAME[g.name]
        n = len(g.results)
        if n == 0:
            return
        names = list(d.names)
        if g.name == "constant":
            names = [_const_name(g.attrs["value"])]
        # result groups: one starts at 0 and at every result given a name
        suggested = {}
        for i, nm in enumerate(names[:n]):
            if nm:
                suggested[i] = nm
        starts = sorted({0} | set(suggested))
        groups = []
        for gi, s in enumerate(starts):
            e = starts[gi + 1] if gi + 1 < len(starts) else n
            if s in suggested:
                label = self.unique(suggested[s])
            else:
                label = str(self.next_value)
                self.next_value += 1
            groups.append((label, e - s))
            for k in range(s, e):
                ref = g.results[k][0]
                self.text[ref] = f"%{label}" if e - s == 1 else f"%{label}#{k - s}"
        self.groups[id(g)] = groups

    def name_region_args(self, g: GOp, ri: int, region) -> None:
        arg_names = _region_arg_names(g, ri, len(region.args))
        for (ref, _t), nm in zip(region.args, arg_names):
            if nm:
                self.text[ref] = "%" + self.unique(nm)
            else:
                self.text[ref] = "%" + self.unique(f"arg{self.next_arg}")
                self.next_arg += 1

    def number(self, ops, region_owner=None) -> None:
        """Name the values of one region (its ops, not their regions), then each nested region
        from the state this one ends in, siblings each from that same state."""
        for g in ops:
            self.name_op(g)
        state = (self.next_value, self.next_arg, self.next_conflict)
        for g in ops:
            for ri, region in enumerate(g.regions):
                self.next_value, self.next_arg, self.next_conflict = state
                self.scopes.append(set())
                self.name_region_args(g, ri, region)
                self.number(region.ops)
                self.scopes.pop()


def _region_arg_names(g: GOp, ri: int, n: int) -> list:
    if g.name == "for":
        return ["loopIdx"] + [f"iterArg{i}" for i in range(n - 1)]
    if g.name == "loop":
        return [f"iterArg{i}" for i in range(n)]
    if g.name in ("reduce", "scan"):
        k = n // 2
        if k == 1:
            return [f"{g.name}_lhs", f"{g.name}_rhs"]
        return [f"{g.name}_{side}_{i}" for i in range(k) for side in ("lhs", "rhs")]
    return [""] * n


# ---- printing ----------------------------------------------------------------------------------


class _Printer:
    def __init__(self, names: _Names):
        self.n = names
        self.lines: list[str] = []

    def ref(self, r) -> str:
        return self.n.text[r]

    def defs(self, g: GOp) -> str:
        groups = self.n.groups.get(id(g))
        if not groups:
            return ""
        return ", ".join(f"%{lab}" + (f":{size}" if size > 1 else "") for lab, size in groups) + " = "

    def attr(self, g: GOp, name: str) -> str:
        d = BY_NAME[g.name]
        for a in d.attrs:
            if a.name == name:
                return self._attr_value(g, a)
        for f in d.flags:  # a unit attribute
            if f.name == name:
                return name if g.attrs.get(name) else ""
        raise KeyError(f"{g.name} has no attribute {name}")

    def _attr_value(self, g: GOp, a) -> str:
        v = g.attrs.get(a.name)
        if v is None:
            return ""
        if a.default is not None and v == a.default:
            return ""
        if a.kind == "enum:rounding":
            return f"rounding<{v}>"
        if a.kind == "enum:overflow":
            return f"overflow<{v}>"
        if a.kind.startswith("enum:"):
            return str(v)
        if a.kind == "dense":
            kind, dtype, x = v
            return f"<{dtype}: {int_attr_str(dtype, x) if kind == 'int' else float_str(dtype, x)}>"
        if a.kind == "i32s":
            return "[" + ", ".join(str(x) for x in v) + "]"
        if a.kind in ("int",):
            return str(v)
        if a.kind == "str":
            return '"' + v + '"'
        if a.kind == "symbol":
            return "@" + v
        if a.kind == "tagged":
            return _tagged_str(v)
        raise NotImplementedError(a.kind)

    def template(self, g: GOp, tmpl: str) -> str:
        out = []
        for tok in tmpl.split(" "):
            out.append(self._expand(g, tok))
        return " ".join(x for x in out if x)

    def _expand(self, g: GOp, tok: str) -> str:
        # a token may hold several directives glued to punctuation: "$lhs," "^ptr," "$view[$index],"
        res = []
        i = 0
        while i < len(tok):
            c = tok[i]
            if c in "$^#@":
                j = i + 1
                while j < len(tok) and (tok[j].isalnum() or tok[j] in "_*"):
                    j += 1
                key = tok[i + 1:j]
                res.append(self._directive(g, c, key))
                i = j
            else:
                res.append(c)
                i += 1
        s = "".join(res)
        return "" if s.strip(",") == "" and tok.strip(",") != tok and all(p == "" for p in res if p != ",") \
            else s

    def _directive(self, g: GOp, c: str, key: str) -> str:
        if c == "$":
            x = g.operands.get(key)
            if isinstance(x, tuple):
                return ", ".join(self.ref(r) for r in x)
            return self.ref(x) if x is not None else ""
        if c == "^":
            t = g.operand_tys.get(key)
            if isinstance(t, tuple):
                return ", ".join(type_str(y) for y in t)
            return type_str(t) if t is not None else ""
        if c == "@":
            if key == "*":
                return ", ".join(type_str(t) for _, t in g.results)
            return type_str(g.results[int(key)][1])
        return self.attr(g, key)

    # -- operations --------------------------------------------------------------------------
    def op(self, g: GOp, indent: str) -> None:
        d = BY_NAME[g.name]
        special = getattr(self, "_op_" + g.name, None)
        if special is not None:
            special(g, indent)
            return
        body = self.template(g, d.asm)
        self.lines.append(f"{indent}{self.defs(g)}{g.name} {body}".rstrip())

    def _terminator(self, g: GOp, indent: str) -> None:
        vals = g.operands.get("operands", ())
        if vals:
            self.lines.append(f"{indent}{g.name} {', '.join(self.ref(v) for v in vals)} : "
                              f"{', '.join(type_str(t) for t in g.operand_tys['operands'])}")
        else:
            self.lines.append(f"{indent}{g.name}")

    _op_return = _op_yield = _op_continue = _op_break = _terminator

    def _mem_tail(self, g: GOp, names) -> str:
        parts = []
        for n in names:
            if g.operands.get(n) is not None:
                parts.append(self.ref(g.operands[n]))
        return ", ".join(parts)

    def _op_load_ptr_tko(self, g: GOp, indent: str) -> None:
        ops = self._mem_tail(g, ("source", "mask", "paddingValue"))
        tys = [type_str(g.operand_tys["source"])]
        if g.operands.get("mask") is not None:
            tys.append(type_str(g.operand_tys["mask"]))
        if g.operands.get("paddingValue") is not None:
            tys.append(type_str(g.operand_tys["paddingValue"]))
        tok = f" token={self.ref(g.operands['token'])}" if g.operands.get("token") is not None else ""
        self.lines.append(f"{indent}{self.defs(g)}load_ptr_tko weak {ops}{tok}{_hints_str(g)} : "
                          f"{', '.join(tys)} -> {type_str(g.results[0][1])}, token")

    def _op_store_ptr_tko(self, g: GOp, indent: str) -> None:
        ops = self._mem_tail(g, ("destination", "value", "mask"))
        tys = [type_str(g.operand_tys["destination"]), type_str(g.operand_tys["value"])]
        if g.operands.get("mask") is not None:
            tys.append(type_str(g.operand_tys["mask"]))
        tok = f" token={self.ref(g.operands['token'])}" if g.operands.get("token") is not None else ""
        self.lines.append(f"{indent}{self.defs(g)}store_ptr_tko weak {ops}{tok}{_hints_str(g)} : "
                          f"{', '.join(tys)} -> token")

    def _op_for(self, g: GOp, indent: str) -> None:
        o = g.operands
        region = g.regions[0]
        iv = self.ref(region.args[0][0])
        head = (f"{indent}{self.defs(g)}for {iv} in ({self.ref(o['lowerBound'])} to "
                f"{self.ref(o['upperBound'])}, step {self.ref(o['step'])}) : tile<i32>")
        if g.attrs.get("unsignedCmp"):
            head = head.replace(f"for {iv} in", f"for unsigned {iv} in")
        inits = o["initValues"]
        if inits:
            pairs = ", ".join(f"{self.ref(a)} = {self.ref(x)}" for (a, _), x in zip(region.args[1:], inits))
            head += f" iter_values({pairs}) -> ({', '.join(type_str(t) for _, t in g.results)})"
        self.lines.append(head + " {")
        self.block(region.ops, indent + "  ")
        self.lines.append(f"{indent}}}")

    def _op_if(self, g: GOp, indent: str) -> None:
        head = f"{indent}{self.defs(g)}if {self.ref(g.operands['condition'])}"
        if g.results:
            head += f" -> ({', '.join(type_str(t) for _, t in g.results)})"
        self.lines.append(head + " {")
        self.block(g.regions[0].ops, indent + "  ")
        if g.regions[1].ops and not _only_empty_yield(g.regions[1].ops):
            self.lines.append(f"{indent}}} else {{")
            self.block(g.regions[1].ops, indent + "  ")
        self.lines.append(f"{indent}}}")

    def _op_reduce(self, g: GOp, indent: str, scan=False) -> None:
        o = g.operands["operands"]
        ids = ", ".join(_tagged_str(x) for x in g.attrs["identities"])
        head = f"{indent}{self.defs(g)}{g.name} {', '.join(self.ref(x) for x in o)} dim={g.attrs['dim']}"
        if scan:
            head += f" reverse={'true' if g.attrs['reverse'] else 'false'}"
        head += (f" identities=[{ids}] : {', '.join(type_str(t) for t in g.operand_tys['operands'])} -> "
                 f"{', '.join(type_str(t) for _, t in g.results)}")
        region = g.regions[0]
        args = ", ".join(f"{self.ref(r)}: {type_str(t)}" for r, t in region.args)
        self.lines.append(head)
        self.lines.append(f"{indent}({args}) {{")
        self.block(region.ops, indent + "  ")
        self.lines.append(f"{indent}}}")

    def _op_scan(self, g: GOp, indent: str) -> None:
        self._op_reduce(g, indent, scan=True)

    def block(self, ops, indent: str) -> None:
        for g in ops:
            self.op(g, indent)


def _only_empty_yield(ops) -> bool:
    return len(ops) == 1 and ops[0].name == "yield" and not ops[0].operands.get("operands")


def _hints_str(g: GOp) -> str:
    h = g.attrs.get("hints")
    if not h:
        return ""
    inner = ", ".join(f"{arch} = {{{', '.join(f'{k} = {v}' for k, v in items)}}}" for arch, items in h)
    return f" optimization_hints = <{inner}>"


def _tagged_str(a) -> str:
    if isinstance(a, ir.IdF):
        return f"{float_str(a.dtype, a.value)} : {a.dtype}"
    if isinstance(a, ir.IdI):
        return f"{a.value} : {a.dtype}"
    if isinstance(a, ir.DivBy):
        s = f"div_by<{a.divisor}"
        if a.every is not None:
            s += f", every {a.every} along {a.along}"
        return s + ">"
    if isinstance(a, ir.SameElements):
        return f"same_elements<[{', '.join(str(x) for x in a.groups)}]>"
    if isinstance(a, ir.Bounded):
        lb = "?" if a.lb is None else str(a.lb)
        ub = "?" if a.ub is None else str(a.ub)
        return f"bounded<{lb}, {ub}>"
    raise NotImplementedError(repr(a))


def render_kernel(k: ir.Kernel) -> str:
    """``k`` as the cuda_tile text ``tileirdisasm`` prints for its bytes."""
    ops = [to_generic(x) for x in k.body]
    names = _Names()
    params = []
    for i, p in enumerate(k.params):
        nm = names.unique(f"arg{names.next_arg}")
        names.next_arg += 1
        names.text[ir.Arg(i)] = "%" + nm
        params.append(f"%{nm}: {type_str(p.ty)}")
    names.number(ops)
    pr = _Printer(names)
    lines = []
    for gl in k.globals:
        lines.append(_global_line(gl))
    head = f"entry @{k.name}({', '.join(params)})"
    if k.hints:
        head += " optimization_hints=" + _hints_str(GOp("x", attrs={"hints": k.hints})).split("= ", 1)[1]
    lines.append(head + " {")
    pr.block(ops, "  ")
    lines += pr.lines
    lines.append("}")
    return "\n".join(lines) + "\n"


def _global_line(gl: ir.Global) -> str:
    vals = ", ".join(float_str(gl.dtype, v) if DTYPES[gl.dtype].is_float else str(int(v)) for v in gl.values)
    return f"global @{gl.sym} <{gl.dtype}: [{vals}]> : tile<{len(gl.values)}x{gl.dtype}>"


def normalise(text: str) -> str:
    """Text with every run of whitespace made one space: what the layer-1 comparison compares."""
    return " ".join(text.split())


__all__ = ["render_kernel", "type_str", "float_str", "normalise", "struct"]
