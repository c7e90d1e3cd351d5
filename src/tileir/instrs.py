"""The lowered instructions: one frozen dataclass per variant of the spec's ``Instr``.

Field names follow the spec. Every ``dst`` / ``tok_out`` / ``x`` / ``y`` / ``z`` is a value number
the instruction defines; every Ref (``ir.Arg`` / ``ir.Val``) names a parameter or an earlier value;
lists are tuples so an instruction is hashable. ``ir`` re-exports all of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Union

if TYPE_CHECKING:  # the names the annotations use; ir imports this module, so not at run time
    from .ir import AssumePred, Hints, Ref, Ty

# ---- instructions ---------------------------------------------------------------------------
# Field names follow the spec's Instr. Lists are tuples so an Instr is hashable and immutable.


@dataclass(frozen=True)
class MakeTok:
    dst: int


@dataclass(frozen=True)
class BlockIds:
    x: int
    y: int
    z: int


@dataclass(frozen=True)
class BlockCounts:
    x: int
    y: int
    z: int


@dataclass(frozen=True)
class ConstInt:
    dst: int
    ty: Ty
    value: int


@dataclass(frozen=True)
class ConstFloat:
    dst: int
    ty: Ty
    value: float


@dataclass(frozen=True)
class MulInt:
    dst: int
    ty: Ty
    lhs: Ref
    rhs: Ref
    overflow: str = "none"


@dataclass(frozen=True)
class AddInt:
    dst: int
    ty: Ty
    lhs: Ref
    rhs: Ref
    overflow: str = "none"


@dataclass(frozen=True)
class Reshape:
    dst: int
    src: Ref
    from_: Ty
    to: Ty


@dataclass(frozen=True)
class Broadcast:
    dst: int
    src: Ref
    from_: Ty
    to: Ty


@dataclass(frozen=True)
class IotaTile:
    dst: int
    ty: Ty


@dataclass(frozen=True)
class Offset:
    dst: int
    ptrs: Ref
    offs: Ref
    ptr_ty: Ty
    off_ty: Ty


@dataclass(frozen=True)
class LoadPtr:
    dst: int
    tok_out: int
    ptrs: Ref
    mask: Ref | None
    pad: Ref | None
    tok_in: Ref
    ptr_ty: Ty
    mask_ty: Ty | None
    val_ty: Ty
    hints: Hints = ()
    sem: str = "weak"  # memory ordering: weak | relaxed | acquire
    scope: str | None = None  # memory scope: tl_blk | device | sys (None: absent)


@dataclass(frozen=True)
class StorePtr:
    tok_out: int
    ptrs: Ref
    value: Ref
    mask: Ref | None
    tok_in: Ref
    ptr_ty: Ty
    mask_ty: Ty | None
    val_ty: Ty
    hints: Hints = ()
    sem: str = "weak"  # memory ordering: weak | relaxed | release
    scope: str | None = None


@dataclass(frozen=True)
class AtomicRMWPtr:
    dst: int
    tok_out: int
    ptrs: Ref
    mode: str
    arg: Ref
    mask: Ref | None
    tok_in: Ref
    ptr_ty: Ty
    mask_ty: Ty | None
    val_ty: Ty
    sem: str = "relaxed"
    scope: str = "device"


@dataclass(frozen=True)
class AtomicCASPtr:
    dst: int
    tok_out: int
    ptrs: Ref
    cmp: Ref
    val: Ref
    mask: Ref | None
    tok_in: Ref
    ptr_ty: Ty
    mask_ty: Ty | None
    val_ty: Ty
    sem: str = "relaxed"
    scope: str = "device"


@dataclass(frozen=True)
class FloatUn:
    """An op of the unaryf rows of ``tileir.elementwise`` (negf absf exp ...); its rounding and
    flush_to_zero where its dialect operation has them."""

    dst: int
    op: str
    ty: Ty
    src: Ref
    rounding: str = ""
    ftz: bool = False


@dataclass(frozen=True)
class FloatBin:
    dst: int
    op: str
    ty: Ty
    lhs: Ref
    rhs: Ref
    rounding: str = ""
    ftz: bool = False
    propagate_nan: bool = False


@dataclass(frozen=True)
class FloatFma:
    dst: int
    ty: Ty
    lhs: Ref
    rhs: Ref
    acc: Ref
    rounding: str = "nearest_even"
    ftz: bool = False


@dataclass(frozen=True)
class FloatMma:
    dst: int
    ty: Ty
    lhs_ty: Ty
    rhs_ty: Ty
    lhs: Ref
    rhs: Ref
    acc: Ref
    fast_acc: bool = False  # since 13.3


@dataclass(frozen=True)
class FloatMmaScaled:
    dst: int
    ty: Ty
    lhs_ty: Ty
    rhs_ty: Ty
    scale_ty: Ty
    rhs_scale_ty: Ty
    lhs: Ref
    rhs: Ref
    acc: Ref
    lhs_scale: Ref
    rhs_scale: Ref


@dataclass(frozen=True)
class IntMma:
    dst: int
    ty: Ty
    lhs_ty: Ty
    rhs_ty: Ty
    lhs: Ref
    rhs: Ref
    acc: Ref
    signed_lhs: bool = True
    signed_rhs: bool = True


@dataclass(frozen=True)
class CmpFloat:
    dst: int
    pred: str
    ty: Ty
    res_ty: Ty
    lhs: Ref
    rhs: Ref
    ordered: bool = True


@dataclass(frozen=True)
class CmpInt:
    dst: int
    pred: str
    ty: Ty
    res_ty: Ty
    lhs: Ref
    rhs: Ref
    signed: bool = True


@dataclass(frozen=True)
class IntUn:
    dst: int
    op: str
    ty: Ty
    src: Ref
    overflow: str = "none"


@dataclass(frozen=True)
class IntBin:
    """An op of the binaryi rows of ``tileir.elementwise`` (subi divi ... shru; addi and muli are
    AddInt / MulInt where the lowering writes them)."""

    dst: int
    op: str
    ty: Ty
    lhs: Ref
    rhs: Ref
    overflow: str = "none"
    signed: bool = True  # divi remi maxi mini
    rounding: str = ""  # divi: zero (default) | positive_inf | negative_inf


@dataclass(frozen=True)
class Cast:
    """An op of the convert rows of ``tileir.elementwise`` (ftof ftof_zero ... itof ftoi ftoi_sat exti
    extis trunci bitcast), or the tile-shape family's pack / unpack."""

    dst: int
    op: str
    from_: Ty
    to: Ty
    src: Ref
    signed: bool = True  # itof ftoi
    rounding: str = ""  # itof / ftoi: the rounding mode where not the op's default
    overflow: str = "none"  # trunci


@dataclass(frozen=True)
class SelectTile:
    dst: int
    cond_ty: Ty
    ty: Ty
    cond: Ref
    lhs: Ref
    rhs: Ref


@dataclass(frozen=True)
class ForLoop:
    results: tuple
    tys: tuple
    iv: int
    lower: Ref
    upper: Ref
    step: Ref
    unsigned: bool
    inits: tuple
    carried: tuple
    body: tuple
    iv_ty: Ty | None = None  # the bounds' and induction variable's type (None: tile<i32>)


@dataclass(frozen=True)
class WhileLoop:
    results: tuple
    tys: tuple
    inits: tuple
    carried: tuple
    body: tuple
    carried_tys: tuple | None = None  # the carried values' types where not ``tys``


@dataclass(frozen=True)
class BreakVals:
    values: tuple
    tys: tuple


@dataclass(frozen=True)
class Cont:
    values: tuple
    tys: tuple


@dataclass(frozen=True)
class ReduceTile:
    results: tuple
    tys: tuple
    dim: int
    identities: tuple
    operands: tuple
    operand_tys: tuple
    args: tuple
    body: tuple


@dataclass(frozen=True)
class ScanTile:
    results: tuple
    tys: tuple
    dim: int
    reverse: bool
    identities: tuple
    operands: tuple
    operand_tys: tuple
    args: tuple
    body: tuple


@dataclass(frozen=True)
class IfElse:
    results: tuple
    tys: tuple
    cond: Ref
    cond_ty: Ty
    on_true: tuple
    on_false: tuple


@dataclass(frozen=True)
class YieldVals:
    values: tuple
    tys: tuple


@dataclass(frozen=True)
class ExtractTile:
    dst: int
    src: Ref
    from_: Ty
    to: Ty
    indices: tuple


@dataclass(frozen=True)
class InsertTile:
    dst: int
    src: Ref
    dest: Ref
    sub: Ty
    to: Ty
    indices: tuple


@dataclass(frozen=True)
class FloatPowI:
    dst: int
    ty: Ty
    exp_ty: Ty
    base: Ref
    exp: Ref


@dataclass(frozen=True)
class CatTile:
    dst: int
    dim: int
    lhs: Ref
    rhs: Ref
    lhs_ty: Ty
    rhs_ty: Ty
    to: Ty


@dataclass(frozen=True)
class PermuteTile:
    dst: int
    src: Ref
    perm: tuple
    from_: Ty
    to: Ty


@dataclass(frozen=True)
class JoinTokens:
    dst: int
    toks: tuple


@dataclass(frozen=True)
class PtrToIntTile:
    dst: int
    src: Ref
    from_: Ty
    to: Ty


@dataclass(frozen=True)
class IntToPtrTile:
    dst: int
    src: Ref
    from_: Ty
    to: Ty


@dataclass(frozen=True)
class PtrToPtrTile:
    dst: int
    src: Ref
    from_: Ty
    to: Ty


@dataclass(frozen=True)
class AssertTile:
    cond: Ref
    cond_ty: Ty
    message: str


@dataclass(frozen=True)
class AssumeTile:
    dst: int
    src: Ref
    pred: AssumePred
    ty: Ty


@dataclass(frozen=True)
class PrintTile:
    tok_out: int
    fmt: str
    args: tuple
    arg_ty: Ty
    tok_in: Ref
    arg_tys: tuple = ()  # one type per argument where they differ (else arg_ty for all)


@dataclass(frozen=True)
class TokenOnlyTile:
    tok_out: int
    op: str
    tok_in: Ref


@dataclass(frozen=True)
class GetGlobalPtr:
    dst: int
    sym: str
    ty: Ty


@dataclass(frozen=True)
class AllocaPtr:
    dst: int
    num_elem: int
    align: int
    shared: bool
    ty: Ty


@dataclass(frozen=True)
class MakeTensorView:
    dst: int
    base: Ref
    base_ty: Ty
    ty: Ty
    dyn_shape: tuple
    dyn_strides: tuple
    dyn_ty: Ty


@dataclass(frozen=True)
class MakePartitionView:
    dst: int
    src: Ref
    src_ty: Ty
    ty: Ty


@dataclass(frozen=True)
class MakeStridedView:
    dst: int
    src: Ref
    src_ty: Ty
    ty: Ty


@dataclass(frozen=True)
class MakeGatherScatterView:
    dst: int
    src: Ref
    src_ty: Ty
    ty: Ty


@dataclass(frozen=True)
class GetTensorShape:
    dsts: tuple
    src: Ref
    src_ty: Ty
    res_ty: Ty


@dataclass(frozen=True)
class GetIndexSpaceShape:
    dsts: tuple
    src: Ref
    src_ty: Ty
    res_ty: Ty


@dataclass(frozen=True)
class LoadViewTile:
    dst: int
    tok_out: int
    view: Ref
    view_ty: Ty
    indices: tuple
    idx_tys: tuple
    ty: Ty
    tok_in: Ref
    inbounds: tuple = ()
    hints: Hints = ()
    sem: str = "weak"
    scope: str | None = None


@dataclass(frozen=True)
class StoreViewTile:
    tok_out: int
    view: Ref
    view_ty: Ty
    value: Ref
    val_ty: Ty
    indices: tuple
    idx_tys: tuple
    tok_in: Ref
    inbounds: tuple = ()
    hints: Hints = ()
    sem: str = "weak"
    scope: str | None = None


@dataclass(frozen=True)
class AtomicRedViewTile:
    tok_out: int
    view: Ref
    view_ty: Ty
    value: Ref
    val_ty: Ty
    indices: tuple
    idx_tys: tuple
    mode: str
    scope: str
    tok_in: Ref
    sem: str = "relaxed"


@dataclass(frozen=True)
class Ret:
    pass


INSTR_KINDS = (
    MakeTok, BlockIds, ConstInt, ConstFloat, MulInt, AddInt, Reshape, Broadcast, IotaTile, Offset,
    LoadPtr, StorePtr, AtomicRMWPtr, AtomicCASPtr, FloatUn, FloatBin, FloatFma, FloatMma,
    FloatMmaScaled, IntMma, CmpFloat, CmpInt, IntUn, IntBin, Cast, SelectTile, ForLoop, WhileLoop,
    BreakVals, Cont, ReduceTile, ScanTile, IfElse, YieldVals, ExtractTile, InsertTile, FloatPowI,
    CatTile, PermuteTile, BlockCounts, JoinTokens, PtrToIntTile, IntToPtrTile, PtrToPtrTile,
    AssertTile, AssumeTile, PrintTile, TokenOnlyTile, GetGlobalPtr, AllocaPtr, MakeTensorView,
    MakePartitionView, MakeStridedView, MakeGatherScatterView, GetTensorShape, GetIndexSpaceShape,
    LoadViewTile, StoreViewTile, AtomicRedViewTile, Ret,
)

Instr = Union[INSTR_KINDS]  # type: ignore[valid-type]
