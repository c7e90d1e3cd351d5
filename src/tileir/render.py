"""A Kernel as cuda_tile MLIR text, identical (up to whitespace) to what ``tileirdisasm`` prints
for the bytes the writer makes of it.

Two things make that possible. The operations print from the same table the writer reads
(``dialect.OPS``: each entry's ``asm`` template, or ``<name>``, a method ``op_<name>`` of
``Printer`` for the operations with regions or mixed lists), and values are named the way MLIR's
printer names them (``SSANameState``): result and block-argument names the operation suggests
(``%blockId_x``, ``%for``, ``%loopIdx``), made unique within a scope by a suffix from one counter
(``%reshape_0``), the rest numbered ``%0, %1 ...``; a region numbers on from where its parent
region ended, and its siblings each start again from there.

Floats print through ``render_float`` (APFloat's own digits), from the very bit pattern the
writer stores.

One module, one ``Printer``: the printers a template cannot express (for, loop, if, reduce, scan,
make_tensor_view) are its methods beside the template expander, and the attribute values with a
structure of their own (globals, optimization hints, assume predicates, reduction identities)
print beside the other attribute values. Split in two, each half would need the other: the region
printers use the naming and the value printers, the template expander uses the value printers.
What does stand alone is below this module, never beside it: ``render_float`` (a float's digits)
imports nothing of it.
"""

from __future__ import annotations

from . import ir
from .bytecode.tables import dense_bytes, float_pattern
from .dialect import BY_NAME, GOp
from .dtypes import BY_NAME as DTYPES
from .dtypes import wrap_int
from .generic import to_generic
from .render_float import decode, print_float

# ---- types ----------------------------------------------------------------------------------


def elem_str(e) -> str:
    return f"ptr<{e.name}>" if isinstance(e, ir.PtrTo) else e.name


def _dim(d) -> str:
    return "?" if d == ir.DYN_DIM else str(d)


def _view_tail(t) -> str:
    pad = f"padding_value = {t.padding.value}, " if ir.padding_present(t.padding) else ""
    return pad + type_str(ir.tensor_view_of(t))


def _dim_map(dim_map) -> str:
    if list(dim_map) == list(range(len(dim_map))):
        return ""
    return f", dim_map=[{', '.join(str(d) for d in dim_map)}]"


def type_str(t) -> str:
    """A type as the dialect prints it (without the ``!cuda_tile.`` prefix)."""
    if isinstance(t, ir.Token):
        return "token"
    if isinstance(t, ir.Tile):
        dims = "".join(f"{d}x" for d in t.shape)
        return f"tile<{dims}{elem_str(t.elem)}>"
    if isinstance(t, ir.TensorView):
        dims = "".join(f"{_dim(d)}x" for d in t.shape)
        strides = f", strides=[{','.join(_dim(d) for d in t.strides)}]" if t.shape else ""
        return f"tensor_view<{dims}{elem_str(t.elem)}{strides}>"
    if isinstance(t, ir.PartitionView):
        tile_s = "x".join(str(d) for d in t.tile_shape)
        return f"partition_view<tile=({tile_s}), {_view_tail(t)}{_dim_map(t.dim_map)}>"
    if isinstance(t, ir.StridedView):
        tile_s = "x".join(str(d) for d in t.tile_shape)
        trav = ",".join(str(d) for d in t.traversal)
        return (f"strided_view<tile=({tile_s}), traversal_strides=[{trav}], {_view_tail(t)}"
                f"{_dim_map(t.dim_map)}>")
    if isinstance(t, ir.GatherScatterView):
        tile_s = "x".join(str(d) for d in t.tile_shape)
        return f"gather_scatter_view<tile=({tile_s}), {_view_tail(t)}, sparse_dim={t.sparse_dim}>"
    raise NotImplementedError(f"no text for type {t!r}")


# ---- attribute values ------------------------------------------------------------------------


def float_str(dtype: str, x: float) -> str:
    """``x`` rounded to ``dtype`` as MLIR prints a float attribute of that format."""
    return print_float(dtype, float_pattern(dtype, x))


def int_str(dtype: str, v: int) -> str:
    """An integer element as MLIR prints it: i1 as true/false, the rest signed in their width."""
    if dtype == "i1":
        return "true" if int(v) & 1 else "false"
    return str(int(wrap_int(DTYPES[dtype], int(v))))


def _elements(value) -> list:
    _kind, _dtype, v = value
    return list(v) if isinstance(v, (tuple, list)) else [v]


def elem_text(kind: str, dtype: str, v) -> str:
    return int_str(dtype, v) if kind == "int" else float_str(dtype, v)


def is_splat(value) -> bool:
    """Whether a constant prints as one element: a scalar value, or a tuple whose elements all
    have the same bits (the reader makes that a splat too)."""
    kind, dtype, _ = value
    elems = _elements(value)
    if kind == "int":
        return len({int(wrap_int(DTYPES[dtype], int(x))) for x in elems}) == 1
    return len({float_pattern(dtype, x) for x in elems}) == 1


def dense_str(value, shape) -> str:
    """A DenseElementsAttr's value text: one element for a splat, else nested lists."""
    kind, dtype, _ = value
    elems = _elements(value)
    if is_splat(value):
        return elem_text(kind, dtype, elems[0])
    if len(elems) > 100:  # MLIR prints a large non-splat as its raw bytes in hex
        return '"0x' + dense_bytes(dtype, elems).hex().upper() + '"'
    items = [elem_text(kind, dtype, x) for x in elems]
    shape = list(shape) or [len(items)]

    def nest(flat, dims):
        if len(dims) == 1:
            return "[" + ", ".join(flat) + "]"
        step = len(flat) // dims[0]
        return "[" + ", ".join(nest(flat[i * step:(i + 1) * step], dims[1:]) for i in range(dims[0])) + "]"

    return nest(items, shape)


def const_name(value) -> str:
    """ConstantOp's asm name: true/false, cst_<value>_<type> for a splat with an integral value."""
    kind, dtype, _ = value
    elems = _elements(value)
    if dtype == "i1":
        bits = {int(x) & 1 for x in elems}
        return "true" if bits == {1} else "false" if bits == {0} else "cst_i1"
    name = "cst"
    if is_splat(value):
        x = elems[0]
        if kind == "int":
            name += f"_{int(wrap_int(DTYPES[dtype], int(x)))}"
        else:
            exact = _exact_uint(dtype, x)
            if exact == "nan":
                name += "_NaN"
            elif exact is not None:
                name += f"_{exact}"
    return f"{name}_{dtype}"


def _exact_uint(dtype: str, x: float):
    """APFloat::convertToInteger(64 bits, unsigned, toward zero): the value when exact."""
    v = decode(dtype, float_pattern(dtype, x))
    if v[0] == "nan":
        return "nan"
    if v[0] != "num":
        return None
    _, neg, m, e = v
    if m == 0:
        return None if neg else 0
    if neg:
        return None
    if e < 0:
        if m % (1 << -e):
            return None
        n = m >> -e
    else:
        n = m << e
    return n if n < (1 << 64) else None


def escape_str(s: str) -> str:
    """llvm::printEscapedString inside double quotes."""
    out = []
    for c in s.encode():
        if c == 0x5C:
            out.append("\\\\")
        elif 0x20 <= c < 0x7F and c != 0x22:
            out.append(chr(c))
        else:
            out.append("\\" + format(c, "02X"))
    return '"' + "".join(out) + '"'


def symbol_str(name: str) -> str:
    ok = name and (name[0].isalpha() or name[0] == "_") and all(c.isalnum() or c in "_$." for c in name[1:])
    return "@" + (name if ok and name.isascii() else escape_str(name))


def global_line(gl: ir.Global) -> str:
    """A module global as ``global`` prints it: visibility, constant, symbol, alignment, value."""
    value = ("float" if DTYPES[gl.dtype].is_float else "int", gl.dtype, tuple(gl.values))
    ty = ir.tile((len(gl.values),), gl.dtype)
    parts = ["global"]
    if gl.private:
        parts.append("private")
    if gl.constant:
        parts.append("constant")
    parts.append(symbol_str(gl.sym))
    if gl.align:
        parts.append(f"alignment = {gl.align}")
    parts.append(f"<{gl.dtype}: {dense_str(value, ty.shape)}> : {type_str(ty)}")
    return " ".join(parts)


def hints_str(hints) -> str:
    """An optimization_hints dictionary as ``<arch = {key = value, ...}, ...>``: MLIR keeps a
    DictionaryAttr's entries sorted by name, at both levels."""
    def val(v):
        return ("true" if v else "false") if isinstance(v, bool) else str(v)

    inner = ", ".join(f"{arch} = {{{', '.join(f'{k} = {val(v)}' for k, v in sorted(items))}}}"
                      for arch, items in sorted(hints))
    return f"<{inner}>"


def tagged_str(a) -> str:
    """A tagged attribute: a reduction identity or an assume predicate."""
    # MLIR leaves out the type of an f64 float and an i64 integer (its defaults); an i1 is a bool
    if isinstance(a, ir.IdF):
        return float_str(a.dtype, a.value) + ("" if a.dtype == "f64" else f" : {a.dtype}")
    if isinstance(a, ir.IdI):
        if a.dtype == "i1":
            return "true" if a.value & 1 else "false"
        return int_str(a.dtype, a.value) + ("" if a.dtype == "i64" else f" : {a.dtype}")
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


# ---- naming ------------------------------------------------------------------------------------


def _sanitize(name: str) -> str:
    ok = set("$._-")

    def valid(c):
        return (c.isascii() and c.isalnum()) or c in ok

    def copy():
        return "".join(c if valid(c) else ("_" if c == " " else "".join(f"{b:X}" for b in c.encode()))
                       for c in name)

    if name[0].isdigit():
        return "_" + copy()
    if all(valid(c) for c in name):
        return name
    return copy()


class Names:
    """MLIR's SSANameState, for the shapes of program this package writes."""

    def __init__(self):
        self.text: dict = {}  # value -> printed reference
        self.asm_name: dict = {}  # value -> the name its operation suggested (for assume)
        self.producer: dict = {}  # value -> the GOp that defines it
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
            while True:
                probe = f"{name}_{self.next_conflict}"
                self.next_conflict += 1
                if not self._used(probe):
                    name = probe
                    break
        self.scopes[-1].add(name)
        return name

    def suggested(self, g: GOp) -> list:
        """The names an operation gives its results ("" for none)."""
        n = len(g.results)
        if g.name == "constant":
            return [const_name(g.attrs["value"])]
        if g.name == "assume":
            src = g.operands["value"]
            prod = self.producer.get(src)
            if prod is None or not BY_NAME[prod.name].names_results:
                return ["assume"]
            return ["assume_" + self.asm_name.get(src, "")]
        names = list(BY_NAME[g.name].names)
        return (names + [""] * n)[:n]

    def name_op(self, g: GOp) -> None:
        n = len(g.results)
        if n == 0:
            return
        suggested = self.suggested(g)
        for (ref, _t), nm in zip(g.results, suggested):
            self.producer[ref] = g
            if nm:
                self.asm_name[ref] = nm
        # result groups: one starts at 0 and at every result given a name
        starts = sorted({0} | {i for i, nm in enumerate(suggested) if nm})
        groups = []
        for gi, s in enumerate(starts):
            e = starts[gi + 1] if gi + 1 < len(starts) else n
            if suggested[s]:
                label = self.unique(suggested[s])
            else:
                label = str(self.next_value)
                self.next_value += 1
            groups.append((label, e - s))
            for k in range(s, e):
                ref = g.results[k][0]
                self.text[ref] = f"%{label}" if e - s == 1 else f"%{label}#{k - s}"
        self.groups[id(g)] = groups

    def name_args(self, refs, names) -> None:
        """Block arguments: the suggested names, else argN (an entry block's default)."""
        for ref, nm in zip(refs, names):
            if not nm:
                nm = f"arg{self.next_arg}"
                self.next_arg += 1
            self.text[ref] = "%" + self.unique(nm)

    def number(self, ops) -> None:
        """Name the values of one region (its ops, not their regions), then each nested region
        from the state this one ends in, siblings each from that same state."""
        for g in ops:
            self.name_op(g)
        state = (self.next_value, self.next_arg, self.next_conflict)
        for g in ops:
            for ri, region in enumerate(g.regions):
                self.next_value, self.next_arg, self.next_conflict = state
                self.scopes.append(set())
                self.name_args([r for r, _ in region.args], region_arg_names(g, ri, len(region.args)))
                self.number(region.ops)
                self.scopes.pop()


def region_arg_names(g: GOp, ri: int, n: int) -> list:
    if g.name == "for":
        return ["loopIdx"] + [f"iterArg{i}" for i in range(n - 1)]
    if g.name == "reduce":
        suffix = (lambda i: str(i // 2)) if n > 2 else (lambda i: "")
        return [f"{g.name}_{'lhs' if i % 2 == 0 else 'rhs'}{suffix(i)}" for i in range(n)]
    return [""] * n


# ---- printing ----------------------------------------------------------------------------------

_DIRECTIVES = "$^~@#"


class Printer:
    """Prints operations into ``lines``: by their table template, or by the method ``op_<name>`` where
    the table entry's ``asm`` is ``<name>``."""

    def __init__(self, names: Names):
        self.n = names
        self.lines: list[str] = []

    ty = staticmethod(type_str)

    def ref(self, r) -> str:
        return self.n.text[r]

    def defs(self, g: GOp) -> str:
        groups = self.n.groups.get(id(g))
        if not groups:
            return ""
        return ", ".join(f"%{lab}" + (f":{size}" if size > 1 else "") for lab, size in groups) + " = "

    # -- attributes ------------------------------------------------------------------------
    def attr(self, g: GOp, name: str) -> str:
        d = BY_NAME[g.name]
        for a in d.attrs:
            if a.name == name:
                return self.attr_value(g, a)
        for f in d.flags:  # a unit attribute
            if f.name == name:
                return name if g.attrs.get(name) else ""
        raise KeyError(f"{g.name} has no attribute {name}")

    def attr_value(self, g: GOp, a) -> str:
        v = g.attrs.get(a.name)
        if v is None or (a.default is not None and v == a.default):
            return ""
        k = a.kind
        if k == "enum:rounding":
            return f"rounding<{v}>"
        if k == "enum:overflow":
            return f"overflow<{v}>"
        if k.startswith("enum:"):
            return str(v)
        if k == "dense":
            return f"<{v[1]}: {dense_str(v, g.results[0][1].shape)}>"
        if k == "i32s":
            return "[" + ", ".join(str(x) for x in v) + "]"
        if k == "bools":
            return "inbounds = [" + ", ".join("true" if x else "false" for x in v) + "]" if any(v) else ""
        if k == "int":
            return str(v)
        if k == "bool":
            return "true" if v else "false"
        if k == "str":
            return escape_str(v)
        if k == "symbol":
            return symbol_str(v)
        if k == "tagged":
            return tagged_str(v)
        if k == "hints":
            return hints_str(v)
        raise NotImplementedError(k)

    # -- the template language (see dialect's docstring) ----------------------------------
    def template(self, g: GOp, tmpl: str) -> str:
        text, _ok, _end = self._seq(g, tmpl, 0)
        return text

    def _seq(self, g: GOp, t: str, i: int):
        """Expand from ``i`` to the end or the closing brace: (text, every directive non-empty, end)."""
        out: list[str] = []
        ok = True
        while i < len(t):
            c = t[i]
            if c == "}":
                return "".join(out), ok, i + 1
            if c == "{":
                text, sub_ok, i = self._seq(g, t, i + 1)
                if sub_ok:
                    out.append(text)
                continue
            if c in _DIRECTIVES:
                j = i + 1
                while j < len(t) and (t[j].isalnum() or t[j] in "_*"):
                    j += 1
                text = self._directive(g, c, t[i + 1:j])
                ok = ok and text != ""
                out.append(text)
                i = j
                continue
            out.append(c)
            i += 1
        return "".join(out), ok, i

    def _directive(self, g: GOp, c: str, key: str) -> str:
        if c == "$":
            x = g.operands.get(key)
            if isinstance(x, tuple):
                return ", ".join(self.ref(r) for r in x)
            return self.ref(x) if x is not None else ""
        if c == "^":
            if g.operands.get(key) is None or g.operands.get(key) == ():
                return ""
            t = g.operand_tys.get(key)
            if isinstance(t, tuple):
                return ", ".join(type_str(y) for y in t)
            return type_str(t)
        if c == "~":
            tys = list(g.operand_tys.get(key) or ())
            if not tys:
                return ""
            if all(t == tys[0] for t in tys):
                tys = tys[:1]
            return "".join(", " + type_str(t) for t in tys)
        if c == "@":
            if key == "*":
                return ", ".join(type_str(t) for _, t in g.results)
            return type_str(g.results[int(key)][1])
        return self.attr(g, key)

    # -- operations --------------------------------------------------------------------------
    def op(self, g: GOp, indent: str) -> None:
        asm = BY_NAME[g.name].asm
        if asm.startswith("<"):
            getattr(self, "op_" + asm[1:-1])(g, indent)
            return
        body = self.template(g, asm)
        self.lines.append(f"{indent}{self.defs(g)}{g.name} {body}".rstrip())

    def block(self, ops, indent: str) -> None:
        for g in ops:
            self.op(g, indent)

    # -- the operations a template cannot express ----------------------------------------------
    def region_body(self, region, indent: str, implicit: str | None) -> None:
        """A region's operations; the terminator left out where it is the implicit ``implicit``
        with no operands (MLIR's printControlFlowRegion)."""
        ops = list(region.ops)
        if implicit and ops and ops[-1].name == implicit and not ops[-1].operands.get("operands"):
            ops = ops[:-1]
        self.block(ops, indent + "  ")

    def op_for(self, g, indent: str) -> None:
        o = g.operands
        region = g.regions[0]
        iv, iv_ty = region.args[0]
        kw = "for unsigned" if g.attrs.get("unsignedCmp") else "for"
        head = (f"{indent}{self.defs(g)}{kw} {self.ref(iv)} in ({self.ref(o['lowerBound'])} to "
                f"{self.ref(o['upperBound'])}, step {self.ref(o['step'])}) : {self.ty(iv_ty)}")
        inits = o["initValues"]
        if inits:
            pairs = ", ".join(f"{self.ref(a)} = {self.ref(x)}" for (a, _), x in zip(region.args[1:], inits))
            head += f" iter_values({pairs}) -> ({', '.join(self.ty(t) for t in g.operand_tys['initValues'])})"
        self.lines.append(head + " {")
        self.region_body(region, indent, "continue")
        self.lines.append(f"{indent}}}")

    def op_loop(self, g, indent: str) -> None:
        region = g.regions[0]
        inits = g.operands["initValues"]
        head = f"{indent}{self.defs(g)}loop"
        if inits:
            pairs = ", ".join(f"{self.ref(a)} = {self.ref(x)}" for (a, _), x in zip(region.args, inits))
            head += f" iter_values({pairs})"
        if inits or g.results:
            head += " :"
        if inits:
            head += " " + ", ".join(self.ty(t) for t in g.operand_tys["initValues"])
            if g.results:
                head += " ->"
        if g.results:
            head += " " + ", ".join(self.ty(t) for _, t in g.results)
        self.lines.append(head + " {")
        self.region_body(region, indent, "continue")
        self.lines.append(f"{indent}}}")

    def op_if(self, g, indent: str) -> None:
        head = f"{indent}{self.defs(g)}if {self.ref(g.operands['condition'])}"
        if g.results:
            head += f" -> ({', '.join(self.ty(t) for _, t in g.results)})"
        self.lines.append(head + " {")
        self.region_body(g.regions[0], indent, "yield")
        if g.regions[1].ops or g.regions[1].args:
            self.lines.append(f"{indent}}} else {{")
            self.region_body(g.regions[1], indent, "yield")
        self.lines.append(f"{indent}}}")

    def op_reduce(self, g, indent: str) -> None:
        o = g.operands["operands"]
        ids = ", ".join(tagged_str(x) for x in g.attrs["identities"])
        head = f"{indent}{self.defs(g)}{g.name} {', '.join(self.ref(x) for x in o)} dim={g.attrs['dim']}"
        if g.name == "scan":
            head += f" reverse={'true' if g.attrs['reverse'] else 'false'}"
        head += (f" identities=[{ids}] : {', '.join(self.ty(t) for t in g.operand_tys['operands'])} -> "
                 f"{', '.join(self.ty(t) for _, t in g.results)}")
        region = g.regions[0]
        args = ", ".join(f"{self.ref(r)}: {self.ty(t)}" for r, t in region.args)
        self.lines.append(head)
        self.lines.append(f"{indent}({args}) {{")
        self.region_body(region, indent, None)
        self.lines.append(f"{indent}}}")

    op_scan = op_reduce

    def op_make_tensor_view(self, g, indent: str) -> None:
        t = g.results[0][1]

        def mixed(static, dynamic):
            dyn = iter(dynamic)
            return ", ".join(self.ref(next(dyn)) if d == ir.DYN_DIM else str(d) for d in static)

        o = g.operands
        text = (f"{indent}{self.defs(g)}make_tensor_view {self.ref(o['base'])}, shape = "
                f"[{mixed(t.shape, o['dynamicShape'])}], strides = [{mixed(t.strides, o['dynamicStrides'])}] : ")
        dyn_tys = list(g.operand_tys["dynamicShape"]) + list(g.operand_tys["dynamicStrides"])
        if dyn_tys:
            text += self.ty(dyn_tys[0]) + " -> "
        self.lines.append(text + self.ty(t))


def render_kernel(k: ir.Kernel) -> str:
    """``k`` as the cuda_tile text ``tileirdisasm`` prints for its bytes."""
    ops = [to_generic(x) for x in k.body]
    names = Names()
    args = [ir.Arg(i) for i in range(len(k.params))]
    names.name_args(args, [""] * len(args))
    names.number(ops)
    pr = Printer(names)
    lines = [f"// Producer: {k.producer}"] if k.producer is not None else []
    lines += [global_line(gl) for gl in k.globals]
    params = ", ".join(f"{names.text[a]}: {type_str(p.ty)}" for a, p in zip(args, k.params))
    head = f"entry {symbol_str(k.name)}({params})"
    if k.hints:
        head += " optimization_hints=" + hints_str(k.hints)
    lines.append(head + " {")
    pr.block(ops, "  ")
    lines += pr.lines
    lines.append("}")
    return "\n".join(lines) + "\n"


def normalise(text: str) -> str:
    """Text with every run of whitespace made one space: what the layer-1 comparison compares."""
    return " ".join(text.split())


__all__ = ["render_kernel", "type_str", "float_str", "normalise", "dense_str", "const_name"]
