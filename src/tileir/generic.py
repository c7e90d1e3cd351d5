"""Each lowered instruction in the terms of the dialect table (``dialect.GOp``).

This is the one place an ``Instr`` variant is mapped to a cuda_tile operation, its attribute
values and its regions; ``render`` and the bytecode writer both start from what it answers, so
the text and the bytes cannot disagree about what an instruction means.
"""

from __future__ import annotations

from . import ir
from .dialect import GOp, GRegion
from .errors import TileirError

I32_0D = ir.tile((), "i32")
I1_0D = ir.tile((), "i1")

# FloatUn / FloatBin op -> (dialect op, attributes it carries)
_FLOAT_UN = {
    "negf": ("negf", ()), "absf": ("absf", ()), "floor": ("floor", ()), "ceil": ("ceil", ()),
    "sin": ("sin", ()), "cos": ("cos", ()), "tan": ("tan", ()), "sinh": ("sinh", ()),
    "cosh": ("cosh", ()), "log": ("log", ()), "log2": ("log2", ()),
    "exp": ("exp", ("rounding",)), "tanh": ("tanh", ("rounding",)),
    "exp2": ("exp2", ("flush_to_zero",)), "rsqrt": ("rsqrt", ("flush_to_zero",)),
    "sqrt": ("sqrt", ("rounding", "flush_to_zero")),
}
_FLOAT_BIN_ROUNDED = {"addf", "subf", "mulf", "divf"}
_FLOAT_BIN_NAN = {"maxf", "minf"}
_FLOAT_BIN_PLAIN = {"remf": ("lhs", "rhs"), "pow": ("source", "exponent"), "atan2": ("x", "y")}

_INT_BIN = {
    # op -> (dialect op, fixed attributes)
    "addi": ("addi", {}), "subi": ("subi", {}), "muli": ("muli", {}), "shli": ("shli", {}),
    "divi": ("divi", {"signedness": "signed", "rounding": "zero"}),
    "remi": ("remi", {"signedness": "signed"}),
    "maxi": ("maxi", {"signedness": "signed"}), "mini": ("mini", {"signedness": "signed"}),
    "shri": ("shri", {"signedness": "signed"}), "shru": ("shri", {"signedness": "unsigned"}),
    "mulhii": ("mulhii", {}), "andi": ("andi", {}), "ori": ("ori", {}), "xori": ("xori", {}),
}
_INT_OVERFLOW = {"addi", "subi", "muli", "shli"}

_FTOF_ROUNDING = {"ftof": "nearest_even", "ftof_zero": "zero", "ftof_neg_inf": "negative_inf",
                  "ftof_pos_inf": "positive_inf", "ftof_away": "nearest_away"}


def _tok(ref):
    return ref


def to_generic(ins) -> GOp:
    """The table's view of one lowered instruction (regions converted recursively)."""
    k = type(ins)
    V = ir.Val
    if k is ir.MakeTok:
        return GOp("make_token", ((V(ins.dst), ir.TOKEN),))
    if k is ir.BlockIds or k is ir.BlockCounts:
        name = "get_tile_block_id" if k is ir.BlockIds else "get_num_tile_blocks"
        return GOp(name, tuple((V(d), I32_0D) for d in (ins.x, ins.y, ins.z)))
    if k is ir.ConstInt:
        return GOp("constant", ((V(ins.dst), ins.ty),), attrs={"value": ("int", ins.ty.elem.name, ins.value)})
    if k is ir.ConstFloat:
        return GOp("constant", ((V(ins.dst), ins.ty),),
                   attrs={"value": ("float", ins.ty.elem.name, ins.value)})
    if k is ir.MulInt or k is ir.AddInt:
        return GOp("muli" if k is ir.MulInt else "addi", ((V(ins.dst), ins.ty),),
                   {"lhs": ins.lhs, "rhs": ins.rhs}, {"lhs": ins.ty, "rhs": ins.ty},
                   {"overflow": ins.overflow})
    if k is ir.Reshape or k is ir.Broadcast:
        return GOp("reshape" if k is ir.Reshape else "broadcast", ((V(ins.dst), ins.to),),
                   {"source": ins.src}, {"source": ins.from_})
    if k is ir.IotaTile:
        return GOp("iota", ((V(ins.dst), ins.ty),))
    if k is ir.Offset:
        return GOp("offset", ((V(ins.dst), ins.ptr_ty),), {"ptr": ins.ptrs, "offset": ins.offs},
                   {"ptr": ins.ptr_ty, "offset": ins.off_ty})
    if k is ir.LoadPtr:
        return GOp("load_ptr_tko", ((V(ins.dst), ins.val_ty), (V(ins.tok_out), ir.TOKEN)),
                   {"source": ins.ptrs, "mask": ins.mask, "paddingValue": ins.pad, "token": ins.tok_in},
                   {"source": ins.ptr_ty, "mask": ins.mask_ty, "paddingValue": ins.val_ty},
                   {"memory_semantics": "weak", "memory_scope": None, "hints": ins.hints or None})
    if k is ir.StorePtr:
        return GOp("store_ptr_tko", ((V(ins.tok_out), ir.TOKEN),),
                   {"destination": ins.ptrs, "value": ins.value, "mask": ins.mask, "token": ins.tok_in},
                   {"destination": ins.ptr_ty, "value": ins.val_ty, "mask": ins.mask_ty},
                   {"memory_semantics": "weak", "memory_scope": None, "hints": ins.hints or None})
    if k is ir.AtomicRMWPtr:
        return GOp("atomic_rmw_tko", ((V(ins.dst), ins.val_ty), (V(ins.tok_out), ir.TOKEN)),
                   {"pointers": ins.ptrs, "arg": ins.arg, "mask": ins.mask, "token": ins.tok_in},
                   {"pointers": ins.ptr_ty, "arg": ins.val_ty, "mask": ins.mask_ty},
                   {"memory_semantics": "relaxed", "memory_scope": "device", "mode": ins.mode})
    if k is ir.AtomicCASPtr:
        return GOp("atomic_cas_tko", ((V(ins.dst), ins.val_ty), (V(ins.tok_out), ir.TOKEN)),
                   {"pointers": ins.ptrs, "cmp": ins.cmp, "val": ins.val, "mask": ins.mask,
                    "token": ins.tok_in},
                   {"pointers": ins.ptr_ty, "cmp": ins.val_ty, "val": ins.val_ty, "mask": ins.mask_ty},
                   {"memory_semantics": "relaxed", "memory_scope": "device"})
    if k is ir.FloatUn:
        name, fields = _FLOAT_UN[ins.op]
        attrs = {}
        if "rounding" in fields:
            attrs["rounding"] = ins.rounding or ("full" if name in ("exp", "tanh") else "nearest_even")
        if "flush_to_zero" in fields:
            attrs["flush_to_zero"] = ins.ftz
        return GOp(name, ((V(ins.dst), ins.ty),), {"source": ins.src}, {"source": ins.ty}, attrs)
    if k is ir.FloatBin:
        if ins.op in _FLOAT_BIN_ROUNDED:
            return GOp(ins.op, ((V(ins.dst), ins.ty),), {"lhs": ins.lhs, "rhs": ins.rhs},
                       {"lhs": ins.ty, "rhs": ins.ty},
                       {"rounding": ins.rounding or "nearest_even", "flush_to_zero": ins.ftz})
        if ins.op in _FLOAT_BIN_NAN:
            return GOp(ins.op, ((V(ins.dst), ins.ty),), {"lhs": ins.lhs, "rhs": ins.rhs},
                       {"lhs": ins.ty, "rhs": ins.ty},
                       {"propagate_nan": ins.propagate_nan, "flush_to_zero": ins.ftz})
        a, b = _FLOAT_BIN_PLAIN[ins.op]
        return GOp(ins.op, ((V(ins.dst), ins.ty),), {a: ins.lhs, b: ins.rhs}, {a: ins.ty, b: ins.ty})
    if k is ir.FloatFma:
        return GOp("fma", ((V(ins.dst), ins.ty),), {"lhs": ins.lhs, "rhs": ins.rhs, "acc": ins.acc},
                   {"lhs": ins.ty, "rhs": ins.ty, "acc": ins.ty},
                   {"rounding": ins.rounding, "flush_to_zero": ins.ftz})
    if k is ir.FloatMma or k is ir.IntMma:
        g = GOp("mmaf" if k is ir.FloatMma else "mmai", ((V(ins.dst), ins.ty),),
                {"lhs": ins.lhs, "rhs": ins.rhs, "acc": ins.acc},
                {"lhs": ins.lhs_ty, "rhs": ins.rhs_ty, "acc": ins.ty})
        g.attrs = {"fast_acc": False} if k is ir.FloatMma else {"signedness_lhs": "signed",
                                                               "signedness_rhs": "signed"}
        return g
    if k is ir.FloatMmaScaled:
        return GOp("mmaf_scaled", ((V(ins.dst), ins.ty),),
                   {"lhs": ins.lhs, "rhs": ins.rhs, "acc": ins.acc, "lhs_scale": ins.lhs_scale,
                    "rhs_scale": ins.rhs_scale},
                   {"lhs": ins.lhs_ty, "rhs": ins.rhs_ty, "acc": ins.ty, "lhs_scale": ins.scale_ty,
                    "rhs_scale": ins.rhs_scale_ty})
    if k is ir.CmpFloat:
        return GOp("cmpf", ((V(ins.dst), ins.res_ty),), {"lhs": ins.lhs, "rhs": ins.rhs},
                   {"lhs": ins.ty, "rhs": ins.ty},
                   {"predicate": ins.pred, "ordering": "ordered" if ins.ordered else "unordered"})
    if k is ir.CmpInt:
        return GOp("cmpi", ((V(ins.dst), ins.res_ty),), {"lhs": ins.lhs, "rhs": ins.rhs},
                   {"lhs": ins.ty, "rhs": ins.ty},
                   {"predicate": ins.pred, "signedness": "signed" if ins.signed else "unsigned"})
    if k is ir.IntUn:
        attrs = {"overflow": ins.overflow} if ins.op == "negi" else {}
        return GOp(ins.op, ((V(ins.dst), ins.ty),), {"source": ins.src}, {"source": ins.ty}, attrs)
    if k is ir.IntBin:
        name, fixed = _INT_BIN[ins.op]
        attrs = dict(fixed)
        if ins.op in _INT_OVERFLOW:
            attrs["overflow"] = ins.overflow
        a, b = ("x", "y") if name == "mulhii" else ("lhs", "rhs")
        return GOp(name, ((V(ins.dst), ins.ty),), {a: ins.lhs, b: ins.rhs}, {a: ins.ty, b: ins.ty}, attrs)
    if k is ir.Cast:
        return _cast(ins)
    if k is ir.SelectTile:
        return GOp("select", ((V(ins.dst), ins.ty),),
                   {"cond": ins.cond, "val_if_true": ins.lhs, "val_if_false": ins.rhs},
                   {"cond": ins.cond_ty, "val_if_true": ins.ty, "val_if_false": ins.ty})
    if k is ir.ForLoop:
        region = GRegion(((V(ins.iv), I32_0D),) + tuple((V(c), t) for c, t in zip(ins.carried, ins.tys)),
                         [to_generic(x) for x in ins.body])
        return GOp("for", tuple((V(r), t) for r, t in zip(ins.results, ins.tys)),
                   {"lowerBound": ins.lower, "upperBound": ins.upper, "step": ins.step,
                    "initValues": tuple(ins.inits)},
                   {"lowerBound": I32_0D, "upperBound": I32_0D, "step": I32_0D, "initValues": tuple(ins.tys)},
                   {"unsignedCmp": ins.unsigned}, (region,))
    if k is ir.WhileLoop:
        region = GRegion(tuple((V(c), t) for c, t in zip(ins.carried, ins.tys)),
                         [to_generic(x) for x in ins.body])
        return GOp("loop", tuple((V(r), t) for r, t in zip(ins.results, ins.tys)),
                   {"initValues": tuple(ins.inits)}, {"initValues": tuple(ins.tys)}, {}, (region,))
    if k in (ir.Cont, ir.YieldVals, ir.BreakVals):
        name = {ir.Cont: "continue", ir.YieldVals: "yield", ir.BreakVals: "break"}[k]
        return GOp(name, (), {"operands": tuple(ins.values)}, {"operands": tuple(ins.tys)})
    if k is ir.Ret:
        return GOp("return", (), {"operands": ()}, {"operands": ()})
    if k is ir.ReduceTile or k is ir.ScanTile:
        region = GRegion(tuple((V(a), ir.Tile((), t.elem)) for a, t in
                               zip(ins.args, [t for t in ins.operand_tys for _ in (0, 1)])),
                         [to_generic(x) for x in ins.body])
        attrs = {"dim": ins.dim, "identities": tuple(ins.identities)}
        if k is ir.ScanTile:
            attrs = {"dim": ins.dim, "reverse": ins.reverse, "identities": tuple(ins.identities)}
        return GOp("reduce" if k is ir.ReduceTile else "scan",
                   tuple((V(r), t) for r, t in zip(ins.results, ins.tys)),
                   {"operands": tuple(ins.operands)}, {"operands": tuple(ins.operand_tys)}, attrs, (region,))
    if k is ir.IfElse:
        regions = (GRegion((), [to_generic(x) for x in ins.on_true]),
                   GRegion((), [to_generic(x) for x in ins.on_false]))
        return GOp("if", tuple((V(r), t) for r, t in zip(ins.results, ins.tys)),
                   {"condition": ins.cond}, {"condition": ins.cond_ty}, {}, regions)
    if k is ir.PermuteTile:
        return GOp("permute", ((V(ins.dst), ins.to),), {"source": ins.src}, {"source": ins.from_},
                   {"permutation": tuple(ins.perm)})
    if k is ir.AssumeTile:
        return GOp("assume", ((V(ins.dst), ins.ty),), {"value": ins.src}, {"value": ins.ty},
                   {"predicate": ins.pred})
    raise TileirError(f"the writer has no encoding for {k.__name__} yet")


def _cast(ins) -> GOp:
    V = ir.Val
    op = ins.op
    res = ((V(ins.dst), ins.to),)
    opnd = {"from": ins.src}
    tys = {"from": ins.from_}
    if op in _FTOF_ROUNDING:
        return GOp("ftof", res, opnd, tys, {"rounding": _FTOF_ROUNDING[op]})
    if op == "itof":
        return GOp("itof", res, opnd, tys, {"signedness": "signed", "rounding": "nearest_even"})
    if op in ("ftoi", "ftoi_sat"):
        return GOp("ftoi", res, opnd, tys, {"signedness": "signed", "rounding": "nearest_int_to_zero",
                                            "saturating": op == "ftoi_sat"})
    if op in ("exti", "extis"):
        return GOp("exti", res, opnd, tys, {"signedness": "signed" if op == "extis" else "unsigned"})
    if op == "trunci":
        return GOp("trunci", res, opnd, tys, {"overflow": "none"})
    if op in ("bitcast", "pack", "unpack"):
        return GOp(op, res, {"source": ins.src}, {"source": ins.from_})
    raise TileirError(f"unknown conversion {op!r}")
