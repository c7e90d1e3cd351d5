"""The printers ``render`` cannot express as a template: operations with regions (for, loop, if,
reduce, scan), make_tensor_view's mixed static/dynamic lists, the module's globals, and the
attribute values with a structure of their own (optimization hints, assume predicates,
reduction identities). ``SpecialPrinters`` is mixed into ``render.Printer``, which supplies
``ref``, ``defs``, ``ty``, ``lines`` and ``block``.
"""

from __future__ import annotations

from . import ir


def _render():
    from . import render

    return render


class SpecialPrinters:
    """``op_<name>`` for each table entry whose ``asm`` is ``<name>``."""

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


def global_line(gl: ir.Global) -> str:
    """A module global as ``global`` prints it: visibility, constant, symbol, alignment, value."""
    r = _render()
    value = ("float" if r.DTYPES[gl.dtype].is_float else "int", gl.dtype, tuple(gl.values))
    ty = ir.tile((len(gl.values),), gl.dtype)
    parts = ["global"]
    if gl.private:
        parts.append("private")
    if gl.constant:
        parts.append("constant")
    parts.append(r.symbol_str(gl.sym))
    if gl.align:
        parts.append(f"alignment = {gl.align}")
    parts.append(f"<{gl.dtype}: {r.dense_str(value, ty.shape)}> : {r.type_str(ty)}")
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
    r = _render()
    # MLIR leaves out the type of an f64 float and an i64 integer (its defaults); an i1 is a bool
    if isinstance(a, ir.IdF):
        return r.float_str(a.dtype, a.value) + ("" if a.dtype == "f64" else f" : {a.dtype}")
    if isinstance(a, ir.IdI):
        if a.dtype == "i1":
            return "true" if a.value & 1 else "false"
        return r.int_str(a.dtype, a.value) + ("" if a.dtype == "i64" else f" : {a.dtype}")
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
