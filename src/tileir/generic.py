"""Each lowered instruction in the terms of the dialect table (``dialect.GOp``).

This is the one place an ``Instr`` variant is mapped to a cuda_tile operation, its attribute
values and its regions; ``render`` and the bytecode writer both start from what it answers, so
the text and the bytes cannot disagree about what an instruction means.

``CONVERT`` (Instr class -> converter) is the whole dispatch. Nothing here knows of verification:
the layer-2 mutants (``tileir.diff.mutants``) wrap entries of ``CONVERT`` from outside, for the
duration of a ``with use(name):`` block, and put them back after.
"""

from __future__ import annotations

from . import ir
from .dialect import BY_NAME as DIALECT
from .dialect import GOp, GRegion
from .elementwise import OPS
from .errors import TileirError

I32_0D = ir.tile((), "i32")
I1_0D = ir.tile((), "i1")
V = ir.Val

# An element-wise Instr's op is a row of tileir.elementwise (FloatUn: the unaryf rows' ops, Cast: the
# convert rows' ...): the row names the dialect operation and the attributes the op fixes; which
# attributes that operation carries, their defaults and its operand names are its dialect.OpDef's.
_ROW_KIND = {ir.FloatUn: "unaryf", ir.FloatBin: "binaryf", ir.IntUn: "unaryi", ir.IntBin: "binaryi",
             ir.Cast: "convert"}
_REPACK = ("pack", "unpack")  # Casts of the tile-shape family (surface.tileshape), no element-wise row


def _row(ins, what: str):
    row = OPS.get((_ROW_KIND[type(ins)], ins.op))
    if row is None:
        raise TileirError(f"unknown {what} {ins.op!r}")
    return row, DIALECT[row.dialect]


# dialect operation -> the names of its attributes and flags; -> each attribute's default
_FIELDS = {d.name: frozenset(a.name for a in d.attrs) | frozenset(f.name for f in d.flags) for d in DIALECT.values()}
_DEFAULTS = {d.name: {a.name: a.default for a in d.attrs} for d in DIALECT.values()}


def _fields(d) -> frozenset:
    return _FIELDS[d.name]


def _default(d, name: str):
    return _DEFAULTS[d.name][name]


_TOKEN_ONLY = {"gdc_launch_dependents_tko", "gdc_wait_tko", "memory_fence_alias_tko"}


def _sign(signed: bool) -> str:
    return "signed" if signed else "unsigned"


def _one(dst, ty) -> tuple:
    return ((V(dst), ty),)


def _region(args, body) -> GRegion:
    return GRegion(tuple(args), [to_generic(x) for x in body])


def to_generic(ins) -> GOp:
    """The table's view of one lowered instruction (regions converted recursively)."""
    k = type(ins)
    fn = CONVERT.get(k)
    if fn is None:
        raise TileirError(f"the writer has no encoding for {k.__name__}")
    return fn(ins)


def _consts(ins) -> GOp:
    kind = "int" if type(ins) is ir.ConstInt else "float"
    return GOp("constant", _one(ins.dst, ins.ty), attrs={"value": (kind, ins.ty.elem.name, ins.value)})


def _block_ids(ins) -> GOp:
    name = "get_tile_block_id" if type(ins) is ir.BlockIds else "get_num_tile_blocks"
    return GOp(name, tuple((V(d), I32_0D) for d in (ins.x, ins.y, ins.z)))


def _add_mul(ins) -> GOp:
    name = "muli" if type(ins) is ir.MulInt else "addi"
    return GOp(name, _one(ins.dst, ins.ty), {"lhs": ins.lhs, "rhs": ins.rhs}, {"lhs": ins.ty, "rhs": ins.ty},
               {"overflow": ins.overflow})


def _unary_shape(name):
    def conv(ins) -> GOp:
        return GOp(name, _one(ins.dst, ins.to), {"source": ins.src}, {"source": ins.from_})
    return conv


def _load_ptr(ins) -> GOp:
    return GOp("load_ptr_tko", ((V(ins.dst), ins.val_ty), (V(ins.tok_out), ir.TOKEN)),
               {"source": ins.ptrs, "mask": ins.mask, "paddingValue": ins.pad, "token": ins.tok_in},
               {"source": ins.ptr_ty, "mask": ins.mask_ty, "paddingValue": ins.val_ty, "token": ir.TOKEN},
               {"memory_semantics": ins.sem, "memory_scope": ins.scope, "hints": ins.hints or None})


def _store_ptr(ins) -> GOp:
    return GOp("store_ptr_tko", _one(ins.tok_out, ir.TOKEN),
               {"destination": ins.ptrs, "value": ins.value, "mask": ins.mask, "token": ins.tok_in},
               {"destination": ins.ptr_ty, "value": ins.val_ty, "mask": ins.mask_ty, "token": ir.TOKEN},
               {"memory_semantics": ins.sem, "memory_scope": ins.scope, "hints": ins.hints or None})


def _rmw(ins) -> GOp:
    return GOp("atomic_rmw_tko", ((V(ins.dst), ins.val_ty), (V(ins.tok_out), ir.TOKEN)),
               {"pointers": ins.ptrs, "arg": ins.arg, "mask": ins.mask, "token": ins.tok_in},
               {"pointers": ins.ptr_ty, "arg": ins.val_ty, "mask": ins.mask_ty, "token": ir.TOKEN},
               {"memory_semantics": ins.sem, "memory_scope": ins.scope, "mode": ins.mode})


def _cas(ins) -> GOp:
    return GOp("atomic_cas_tko", ((V(ins.dst), ins.val_ty), (V(ins.tok_out), ir.TOKEN)),
               {"pointers": ins.ptrs, "cmp": ins.cmp, "val": ins.val, "mask": ins.mask, "token": ins.tok_in},
               {"pointers": ins.ptr_ty, "cmp": ins.val_ty, "val": ins.val_ty, "mask": ins.mask_ty,
                "token": ir.TOKEN},
               {"memory_semantics": ins.sem, "memory_scope": ins.scope})


def _float_un(ins) -> GOp:
    row, d = _row(ins, "float unary operation")
    fields = _fields(d)
    attrs = {}
    if "rounding" in fields:
        attrs["rounding"] = ins.rounding or _default(d, "rounding")
    elif ins.rounding:
        raise TileirError(f"{d.name} has no rounding mode (got {ins.rounding!r})")
    if "flush_to_zero" in fields:
        attrs["flush_to_zero"] = ins.ftz
    elif ins.ftz:
        raise TileirError(f"{d.name} has no flush_to_zero")
    return GOp(d.name, _one(ins.dst, ins.ty), {"source": ins.src}, {"source": ins.ty}, attrs)


def _float_bin(ins) -> GOp:
    """A binary float op carries those of rounding, flush_to_zero and propagate_nan its dialect
    operation has (the others' values are not written)."""
    row, d = _row(ins, "float binary operation")
    fields = _fields(d)
    attrs: dict = {}
    if "rounding" in fields:
        attrs["rounding"] = ins.rounding or _default(d, "rounding")
    if "propagate_nan" in fields:
        attrs["propagate_nan"] = ins.propagate_nan
    if "flush_to_zero" in fields:
        attrs["flush_to_zero"] = ins.ftz
    a, b = d.operands
    return GOp(d.name, _one(ins.dst, ins.ty), {a: ins.lhs, b: ins.rhs}, {a: ins.ty, b: ins.ty}, attrs)


def _fma(ins) -> GOp:
    return GOp("fma", _one(ins.dst, ins.ty), {"lhs": ins.lhs, "rhs": ins.rhs, "acc": ins.acc},
               {"lhs": ins.ty, "rhs": ins.ty, "acc": ins.ty},
               {"rounding": ins.rounding or "nearest_even", "flush_to_zero": ins.ftz})


def _mma(ins) -> GOp:
    opnds = {"lhs": ins.lhs, "rhs": ins.rhs, "acc": ins.acc}
    tys = {"lhs": ins.lhs_ty, "rhs": ins.rhs_ty, "acc": ins.ty}
    if type(ins) is ir.FloatMma:
        return GOp("mmaf", _one(ins.dst, ins.ty), opnds, tys, {"fast_acc": ins.fast_acc})
    return GOp("mmai", _one(ins.dst, ins.ty), opnds, tys,
               {"signedness_lhs": _sign(ins.signed_lhs), "signedness_rhs": _sign(ins.signed_rhs)})


def _mma_scaled(ins) -> GOp:
    return GOp("mmaf_scaled", _one(ins.dst, ins.ty),
               {"lhs": ins.lhs, "rhs": ins.rhs, "acc": ins.acc, "lhs_scale": ins.lhs_scale,
                "rhs_scale": ins.rhs_scale},
               {"lhs": ins.lhs_ty, "rhs": ins.rhs_ty, "acc": ins.ty, "lhs_scale": ins.scale_ty,
                "rhs_scale": ins.rhs_scale_ty})


def _cmpf(ins) -> GOp:
    return GOp("cmpf", _one(ins.dst, ins.res_ty), {"lhs": ins.lhs, "rhs": ins.rhs}, {"lhs": ins.ty, "rhs": ins.ty},
               {"predicate": ins.pred, "ordering": "ordered" if ins.ordered else "unordered"})


def _cmpi(ins) -> GOp:
    return GOp("cmpi", _one(ins.dst, ins.res_ty), {"lhs": ins.lhs, "rhs": ins.rhs}, {"lhs": ins.ty, "rhs": ins.ty},
               {"predicate": ins.pred, "signedness": _sign(ins.signed)})


def _int_un(ins) -> GOp:
    row, d = _row(ins, "integer unary operation")
    if "overflow" in _fields(d):
        attrs = {"overflow": ins.overflow}
    elif ins.overflow != "none":
        raise TileirError(f"{d.name} has no overflow attribute")
    else:
        attrs = {}
    return GOp(d.name, _one(ins.dst, ins.ty), {"source": ins.src}, {"source": ins.ty}, attrs)


def _int_bin(ins) -> GOp:
    """overflow, signedness (the op's, as shri / shru fix it, else the Instr's) and rounding (divi's,
    the Instr's or toward zero), where the dialect operation has them."""
    row, d = _row(ins, "integer binary operation")
    fields = _fields(d)
    attrs = {}
    if "overflow" in fields:
        attrs["overflow"] = ins.overflow
    if "signedness" in fields:
        attrs["signedness"] = row.fixed_value("signedness") or _sign(ins.signed)
    if "rounding" in fields:
        attrs["rounding"] = ins.rounding or _default(d, "rounding")
    a, b = d.operands
    return GOp(d.name, _one(ins.dst, ins.ty), {a: ins.lhs, b: ins.rhs}, {a: ins.ty, b: ins.ty}, attrs)


def _cast(ins) -> GOp:
    """A conversion writes the attributes its op fixes (ftof_zero's rounding, exti's signedness,
    ftoi_sat's saturating) and the Instr's rounding, overflow and signedness where the dialect
    operation has them and the op does not fix them; an Instr that sets one it cannot write is refused."""
    op = ins.op
    if op in _REPACK:
        return GOp(op, _one(ins.dst, ins.to), {"source": ins.src}, {"source": ins.from_})
    row, d = _row(ins, "conversion")
    fields = _fields(d)
    fixed = dict(row.fixed)
    takes = {n for n in ("rounding", "overflow", "signedness") if n in fields and n not in fixed}
    if ins.rounding and "rounding" not in takes:
        raise TileirError(f"{op} takes no rounding field (ftof's is in its name: ftof_zero ...); got {ins.rounding!r}")
    if ins.overflow != "none" and "overflow" not in takes:
        raise TileirError(f"{op} takes no overflow field; got {ins.overflow!r}")
    if not ins.signed and "signedness" not in takes:
        raise TileirError(f"{op} takes no signedness field (exti's is in its name: exti / extis)")
    attrs = {}
    for name in (a.name for a in d.attrs):
        if name in fixed:
            attrs[name] = fixed[name]
        elif name == "rounding":
            attrs[name] = ins.rounding or _default(d, name)
        elif name == "signedness":
            attrs[name] = _sign(ins.signed)
        elif name == "overflow":
            attrs[name] = ins.overflow
    for flag in (f.name for f in d.flags):
        attrs[flag] = fixed.get(flag, False)
    (operand,) = d.operands
    return GOp(d.name, _one(ins.dst, ins.to), {operand: ins.src}, {operand: ins.from_}, attrs)


def _select(ins) -> GOp:
    return GOp("select", _one(ins.dst, ins.ty), {"cond": ins.cond, "val_if_true": ins.lhs, "val_if_false": ins.rhs},
               {"cond": ins.cond_ty, "val_if_true": ins.ty, "val_if_false": ins.ty})


def _for(ins) -> GOp:
    iv_ty = ins.iv_ty or I32_0D
    region = _region(((V(ins.iv), iv_ty),) + tuple((V(c), t) for c, t in zip(ins.carried, ins.tys)), ins.body)
    return GOp("for", tuple((V(r), t) for r, t in zip(ins.results, ins.tys)),
               {"lowerBound": ins.lower, "upperBound": ins.upper, "step": ins.step, "initValues": tuple(ins.inits)},
               {"lowerBound": iv_ty, "upperBound": iv_ty, "step": iv_ty, "initValues": tuple(ins.tys)},
               {"unsignedCmp": ins.unsigned}, (region,))


def _loop(ins) -> GOp:
    ctys = tuple(ins.tys if ins.carried_tys is None else ins.carried_tys)
    region = _region(tuple((V(c), t) for c, t in zip(ins.carried, ctys)), ins.body)
    return GOp("loop", tuple((V(r), t) for r, t in zip(ins.results, ins.tys)),
               {"initValues": tuple(ins.inits)}, {"initValues": ctys}, {}, (region,))


def _terminator(name):
    def conv(ins) -> GOp:
        return GOp(name, (), {"operands": tuple(ins.values)}, {"operands": tuple(ins.tys)})
    return conv


def _ret(ins) -> GOp:
    return GOp("return", (), {"operands": ()}, {"operands": ()})


def _reduce_scan(ins) -> GOp:
    scan = type(ins) is ir.ScanTile
    elems = [ir.Tile((), t.elem) for t in ins.operand_tys]
    arg_tys = [t for t in elems for _ in (0, 1)]
    region = _region(tuple((V(a), t) for a, t in zip(ins.args, arg_tys)), ins.body)
    attrs = {"dim": ins.dim}
    if scan:
        attrs["reverse"] = ins.reverse
    attrs["identities"] = tuple(ins.identities)
    return GOp("scan" if scan else "reduce", tuple((V(r), t) for r, t in zip(ins.results, ins.tys)),
               {"operands": tuple(ins.operands)}, {"operands": tuple(ins.operand_tys)}, attrs, (region,))


def _if(ins) -> GOp:
    regions = (_region((), ins.on_true), _region((), ins.on_false))
    return GOp("if", tuple((V(r), t) for r, t in zip(ins.results, ins.tys)),
               {"condition": ins.cond}, {"condition": ins.cond_ty}, {}, regions)


def _extract(ins) -> GOp:
    return GOp("extract", _one(ins.dst, ins.to), {"source": ins.src, "indices": tuple(ins.indices)},
               {"source": ins.from_, "indices": (I32_0D,) * len(ins.indices)})


def _insert(ins) -> GOp:
    return GOp("insert", _one(ins.dst, ins.to),
               {"source": ins.src, "destination": ins.dest, "indices": tuple(ins.indices)},
               {"source": ins.sub, "destination": ins.to, "indices": (I32_0D,) * len(ins.indices)})


def _fpowi(ins) -> GOp:
    return GOp("fpowi", _one(ins.dst, ins.ty), {"source": ins.base, "exponent": ins.exp},
               {"source": ins.ty, "exponent": ins.exp_ty})


def _cat(ins) -> GOp:
    return GOp("cat", _one(ins.dst, ins.to), {"lhs": ins.lhs, "rhs": ins.rhs}, {"lhs": ins.lhs_ty, "rhs": ins.rhs_ty},
               {"dim": ins.dim})


def _permute(ins) -> GOp:
    return GOp("permute", _one(ins.dst, ins.to), {"source": ins.src}, {"source": ins.from_},
               {"permutation": tuple(ins.perm)})


def _join(ins) -> GOp:
    return GOp("join_tokens", _one(ins.dst, ir.TOKEN), {"tokens": tuple(ins.toks)},
               {"tokens": (ir.TOKEN,) * len(ins.toks)})


def _assert(ins) -> GOp:
    return GOp("assert", (), {"condition": ins.cond}, {"condition": ins.cond_ty}, {"message": ins.message})


def _assume(ins) -> GOp:
    return GOp("assume", _one(ins.dst, ins.ty), {"value": ins.src}, {"value": ins.ty}, {"predicate": ins.pred})


def _print(ins) -> GOp:
    tys = tuple(ins.arg_tys) if ins.arg_tys else (ins.arg_ty,) * len(ins.args)
    return GOp("print_tko", _one(ins.tok_out, ir.TOKEN), {"args": tuple(ins.args), "token": ins.tok_in},
               {"args": tys, "token": ir.TOKEN}, {"str": ins.fmt})


def _token_only(ins) -> GOp:
    if ins.op not in _TOKEN_ONLY:
        raise TileirError(f"unknown token operation {ins.op!r}; one of {', '.join(sorted(_TOKEN_ONLY))}")
    return GOp(ins.op, _one(ins.tok_out, ir.TOKEN), {"token": ins.tok_in}, {"token": ir.TOKEN})


def _get_global(ins) -> GOp:
    return GOp("get_global", _one(ins.dst, ins.ty), attrs={"name": ins.sym})


def _alloca(ins) -> GOp:
    return GOp("alloca", _one(ins.dst, ins.ty), attrs={"num_elem": ins.num_elem, "alignment": ins.align,
                                                      "global": ins.shared})


def _make_tensor_view(ins) -> GOp:
    n_shape = len(ins.dyn_shape)
    n_strides = len(ins.dyn_strides)
    return GOp("make_tensor_view", _one(ins.dst, ins.ty),
               {"base": ins.base, "dynamicShape": tuple(ins.dyn_shape), "dynamicStrides": tuple(ins.dyn_strides)},
               {"base": ins.base_ty, "dynamicShape": (ins.dyn_ty,) * n_shape,
                "dynamicStrides": (ins.dyn_ty,) * n_strides})


def _make_view(name):
    def conv(ins) -> GOp:
        return GOp(name, _one(ins.dst, ins.ty), {"tensor_view": ins.src}, {"tensor_view": ins.src_ty})
    return conv


def _shape_query(name):
    def conv(ins) -> GOp:
        return GOp(name, tuple((V(d), ins.res_ty) for d in ins.dsts), {"src": ins.src}, {"src": ins.src_ty})
    return conv


def _inbounds(ins) -> tuple:
    """One flag per index (13.4 requires the full vector; all false where the Instr has none)."""
    return tuple(ins.inbounds) or (False,) * len(ins.indices)


def _load_view(ins) -> GOp:
    return GOp("load_view_tko", ((V(ins.dst), ins.ty), (V(ins.tok_out), ir.TOKEN)),
               {"view": ins.view, "index": tuple(ins.indices), "token": ins.tok_in},
               {"view": ins.view_ty, "index": tuple(ins.idx_tys), "token": ir.TOKEN},
               {"memory_semantics": ins.sem, "memory_scope": ins.scope, "hints": ins.hints or None,
                "inbounds": _inbounds(ins)})


def _store_view(ins) -> GOp:
    return GOp("store_view_tko", _one(ins.tok_out, ir.TOKEN),
               {"tile": ins.value, "view": ins.view, "index": tuple(ins.indices), "token": ins.tok_in},
               {"tile": ins.val_ty, "view": ins.view_ty, "index": tuple(ins.idx_tys), "token": ir.TOKEN},
               {"memory_semantics": ins.sem, "memory_scope": ins.scope, "hints": ins.hints or None,
                "inbounds": _inbounds(ins)})


def _red_view(ins) -> GOp:
    return GOp("atomic_red_view_tko", _one(ins.tok_out, ir.TOKEN),
               {"view": ins.view, "index": tuple(ins.indices), "value": ins.value, "token": ins.tok_in},
               {"view": ins.view_ty, "index": tuple(ins.idx_tys), "value": ins.val_ty, "token": ir.TOKEN},
               {"memory_semantics": ins.sem, "memory_scope": ins.scope, "mode": ins.mode})


# The dispatch: Instr class -> its converter (the layer-2 mutants wrap entries of it from outside)
CONVERT = {
    ir.MakeTok: lambda ins: GOp("make_token", _one(ins.dst, ir.TOKEN)),
    ir.BlockIds: _block_ids, ir.BlockCounts: _block_ids,
    ir.ConstInt: _consts, ir.ConstFloat: _consts,
    ir.MulInt: _add_mul, ir.AddInt: _add_mul,
    ir.Reshape: _unary_shape("reshape"), ir.Broadcast: _unary_shape("broadcast"),
    ir.IotaTile: lambda ins: GOp("iota", _one(ins.dst, ins.ty)),
    ir.Offset: lambda ins: GOp("offset", _one(ins.dst, ins.ptr_ty), {"ptr": ins.ptrs, "offset": ins.offs},
                               {"ptr": ins.ptr_ty, "offset": ins.off_ty}),
    ir.LoadPtr: _load_ptr, ir.StorePtr: _store_ptr, ir.AtomicRMWPtr: _rmw, ir.AtomicCASPtr: _cas,
    ir.FloatUn: _float_un, ir.FloatBin: _float_bin, ir.FloatFma: _fma,
    ir.FloatMma: _mma, ir.IntMma: _mma, ir.FloatMmaScaled: _mma_scaled,
    ir.CmpFloat: _cmpf, ir.CmpInt: _cmpi, ir.IntUn: _int_un, ir.IntBin: _int_bin, ir.Cast: _cast,
    ir.SelectTile: _select, ir.ForLoop: _for, ir.WhileLoop: _loop,
    ir.BreakVals: _terminator("break"), ir.Cont: _terminator("continue"), ir.YieldVals: _terminator("yield"),
    ir.Ret: _ret, ir.ReduceTile: _reduce_scan, ir.ScanTile: _reduce_scan, ir.IfElse: _if,
    ir.ExtractTile: _extract, ir.InsertTile: _insert, ir.FloatPowI: _fpowi, ir.CatTile: _cat,
    ir.PermuteTile: _permute, ir.JoinTokens: _join,
    ir.PtrToIntTile: _unary_shape("ptr_to_int"), ir.IntToPtrTile: _unary_shape("int_to_ptr"),
    ir.PtrToPtrTile: _unary_shape("ptr_to_ptr"),
    ir.AssertTile: _assert, ir.AssumeTile: _assume, ir.PrintTile: _print, ir.TokenOnlyTile: _token_only,
    ir.GetGlobalPtr: _get_global, ir.AllocaPtr: _alloca, ir.MakeTensorView: _make_tensor_view,
    ir.MakePartitionView: _make_view("make_partition_view"), ir.MakeStridedView: _make_view("make_strided_view"),
    ir.MakeGatherScatterView: _make_view("make_gather_scatter_view"),
    ir.GetTensorShape: _shape_query("get_tensor_shape"), ir.GetIndexSpaceShape: _shape_query("get_index_space_shape"),
    ir.LoadViewTile: _load_view, ir.StoreViewTile: _store_view, ir.AtomicRedViewTile: _red_view,
}
