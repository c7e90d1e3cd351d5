"""tileir: GPU kernels as tile programs, recorded in Python, written as Tile IR bytecode,
assembled by NVIDIA's tileiras, and checked against a host reference.

A kernel is a plain Python function that runs once on the host while a handler records it::

    import tileir as ti
    from tileir import F32, In, Out, cells

    @ti.kernel
    def double(x=In(F32, cells([4096], [1024])), y=Out(F32, cells([4096], [1024]))):
        ti.store_cell(y, ti.load_cell(x) * 2.0)

    double.run_host(x, y)      # numpy arrays, on the host reference
    double(xt, yt)             # torch / cupy CUDA arrays, on the GPU

``tileir.__all__`` is the public surface: every public name of the spec (the kernel-body
functions under the spec's names, ``Dev`` and its ``t_*`` operations, the lowered ``Kernel`` and
``Instr`` types, the bytecode writer's functions), the formats (``F32`` ...), the markers
(``In``, ``Out``, ``Shared``, ``Whole``, ``cells``) and ``@kernel``. The lowered types are also
all in ``tileir.ir``; the host reference is ``tileir.ref``, the library of kernels
``tileir.kernels``, the tuner ``tileir.autotune``.
"""

# private: the name of the typing module here, so that TYPE_CHECKING is no public name of tileir
import typing as _typing

# The bytecode writer (the spec's encoding functions and version)
from .bytecode import (
    BYTECODE_MAJOR,
    BYTECODE_MINOR,
    bytecode_version,
    encode,
    encode_kernel,
    global_payload,
    ieee_bits,
    put_varint,
    put_varint_u64,
    zigzag,
)

# The Dev effect: every t_* operation of the spec is a method of Dev
from .dev import (
    Dev,
)

# Formats
from .dtypes import (
    BF16,
    BOOL,
    F4E2M1FN,
    F8E4M3FN,
    F8E5M2,
    F8E8M0FNU,
    F16,
    F32,
    F64,
    I1,
    I4,
    I8,
    I16,
    I32,
    I64,
    TF32,
    Dtype,
    FloatDtype,
    float_dtype,
    host_float,
    is_float_dtype,
)
from .errors import (
    TileirError,
)
from .instrs import (
    AddInt,
    AllocaPtr,
    AssertTile,
    AssumeTile,
    AtomicCASPtr,
    AtomicRedViewTile,
    AtomicRMWPtr,
    BlockCounts,
    BlockIds,
    BreakVals,
    Broadcast,
    Cast,
    CatTile,
    CmpFloat,
    CmpInt,
    ConstFloat,
    ConstInt,
    Cont,
    ExtractTile,
    FloatBin,
    FloatFma,
    FloatMma,
    FloatMmaScaled,
    FloatPowI,
    FloatUn,
    ForLoop,
    GetGlobalPtr,
    GetIndexSpaceShape,
    GetTensorShape,
    IfElse,
    InsertTile,
    Instr,
    IntBin,
    IntMma,
    IntToPtrTile,
    IntUn,
    IotaTile,
    JoinTokens,
    LoadPtr,
    LoadViewTile,
    MakeGatherScatterView,
    MakePartitionView,
    MakeStridedView,
    MakeTensorView,
    MakeTok,
    MulInt,
    Offset,
    PermuteTile,
    PrintTile,
    PtrToIntTile,
    PtrToPtrTile,
    ReduceTile,
    Reshape,
    Ret,
    ScanTile,
    SelectTile,
    StorePtr,
    StoreViewTile,
    TokenOnlyTile,
    WhileLoop,
    YieldVals,
)

# The lowered program under the spec's names (tileir.ir holds them all; Tile and TensorView here
# are the kernel-body values, the lowered types of those names are tileir.ir.Tile / .TensorView)
from .ir import (
    DYN_DIM,
    Arg,
    AssumePred,
    Bounded,
    DivBy,
    Elem,
    IdF,
    IdI,
    Kernel,
    NoPadding,
    Num,
    Owner,
    Padding,
    PadNan,
    PadNegInf,
    PadNegZero,
    PadPosInf,
    PadZero,
    PartitionView,
    PtrTo,
    RedId,
    Ref,
    SameElements,
    StridedView,
    Token,
    Ty,
    Val,
    padding_is_special,
    padding_name,
    padding_present,
    tensor_view_of,
)

# Declaring and running kernels (``kernel`` is typed by its overloads in tileir/kernel.py)
from .kernel import (
    KernelFn,
    cdiv,
    kernel,
    trace_kernel,
)
from .lower import (
    lower,
)
from .markers import (
    FREE_AXIS,
    Cells,
    In,
    Marker,
    Out,
    Shared,
    Whole,
    cells,
)
from .prog import (
    ByPtr,
    ByValue,
    TileProg,
)
from .render import (
    render_kernel,
)

# The kernel-body functions, by family (tileir.surface)
from .surface.arith import (
    NoAssumption,
    NoSignedWrap,
    NoUnsignedWrap,
    NoWrap,
    Overflow,
    Rounding,
    abs,
    abs_i,
    add,
    add_i,
    add_i64,
    addi,
    and_i,
    andi,
    atan2,
    bool_const,
    ceil,
    consti,
    cos,
    cosh,
    div,
    div_i,
    eq,
    eq_i,
    eq_u,
    exp,
    exp2,
    f_const,
    floor,
    fma,
    full,
    ge,
    ge_i,
    ge_u,
    gt,
    gt_i,
    gt_u,
    i8_const,
    i64_const,
    i_const,
    le,
    le_i,
    le_u,
    lit,
    log,
    log2,
    lt,
    lt_i,
    lt_u,
    max,
    max_i,
    min,
    min_i,
    mul,
    mul_i,
    mulhi_i,
    muli,
    ne,
    ne_i,
    ne_u,
    neg,
    neg_i,
    or_i,
    ori,
    overflow_name,
    pow,
    rem_i,
    remf,
    rint,
    rounding_name,
    rsqrt,
    select,
    shl_i,
    shli,
    shr_i,
    shr_u,
    shri,
    sin,
    sinh,
    sqrt,
    sqrt_approx,
    sub,
    sub_i,
    subi,
    tan,
    tanh,
    xor_i,
    xori,
)
from .surface.atomics import (
    atomic_add,
    atomic_cas,
    atomic_rmw,
)
from .surface.cell_io import (
    array_view,
    blocks_of,
    extent_of,
    fill,
    load_at,
    load_cell,
    retile,
    store_cell,
    store_sub,
    zeros,
)
from .surface.control import (
    By,
    DRange,
    One,
    RangeBound,
    Step,
    carry,
    d_if,
    d_range,
    get,
    range_idx,
    set,
)
from .surface.convert import (
    bits_to_float,
    bits_to_int,
    ext_i4,
    ext_i8,
    ext_u4,
    ext_u8,
    float_to_float,
    float_to_int,
    int_to_float,
    int_to_mask,
    mask_to_int,
    to,
    trunc_i4,
    trunc_u8,
)
from .surface.debug import (
    assume_div_by,
    assume_in_range,
    assume_same_elements,
    d_assert,
    d_assume,
    d_print,
    gdc_launch_dependents,
    gdc_wait,
    memory_fence_alias,
)
from .surface.folds import (
    d_reduce2,
    d_scan2,
)
from .surface.globals import (
    Private,
    Public,
    Visibility,
    alloca_ptrs,
    d_global,
    global_ptrs,
    visibility_name,
)
from .surface.hints import (
    Hint,
    Hints,
    for_arch,
    hint_latency,
    hint_num_cta_in_cga,
    hint_num_worker_warps_per_cta,
    hint_occupancy,
    hint_view_load_latency,
    hint_view_store_no_tma,
)
from .surface.index import (
    and_mask,
    arange,
    axis_mask,
    axis_strides,
    block_id,
    coord,
    idx_add,
    idx_as_tile,
    idx_const,
    idx_div,
    idx_mul,
    idx_of,
    idx_rem,
    idx_sub,
    in_range,
    lanes,
    lanes_strided,
    num_blocks,
    or_mask,
    permute,
    row_major,
    tail_mask,
    tile_at,
)
from .surface.loops import (
    d_fork2,
    d_loop,
    d_return_if,
    idx_eq,
    idx_ge,
    idx_gt,
    idx_le,
    idx_lt,
    idx_ne,
)
from .surface.memory import (
    load,
    param,
    param_dtype,
    position,
    scalar,
    store,
)
from .surface.mma import (
    mma,
    mma_scaled,
    mmai,
)
from .surface.pointers import (
    gather,
    int_to_ptr,
    load_ptrs,
    ptr_offset,
    ptr_to_int,
    ptr_to_ptr,
    ptrs,
    scatter,
    store_ptrs,
)
from .surface.reduce import (
    d_reduce,
    d_scan,
    reduce_max,
    reduce_min,
    reduce_sum,
    scan_sum,
)
from .surface.shape import (
    broadcast,
    permute_tile,
    reshape,
    transpose,
)
from .surface.strided_gather_views import (
    At,
    GatherIdx,
    Rows,
    atomic_red_view,
    gather_scatter_view,
    load_gather,
    store_gather,
    strided_view,
)
from .surface.tileshape import (
    cat,
    erf,
    extract,
    insert,
    pack_bytes,
    powi,
    unpack_bytes,
)
from .surface.views import (
    Dim,
    Dyn,
    Fixed,
    dim_extent,
    dim_operands,
    inbounds_note,
    index_space_dim,
    load_view,
    partition_view,
    store_view,
    strided_grid,
    tensor_dim,
    tensor_view,
    tensor_view_dyn,
    view_grid,
)

# The values a kernel body holds
from .values import (
    Carry,
    GatherScatterView,
    GridView,
    Idx,
    Lit,
    Param,
    Ptrs,
    TensorView,
    Tile,
)

__version__ = "0.1.0"

if _typing.TYPE_CHECKING:
    # the two names the module __getattr__ below loads on first use, as type checkers see them
    from .assemble import assembler_defect, tileiras_args
else:
    def __getattr__(name):
        # the assembler and the runtime load on first use (they look for tileiras and the CUDA
        # driver); kept from type checkers, to whom it would make every misspelt name an Any
        if name in ("tileiras_args", "assembler_defect"):
            import importlib

            return getattr(importlib.import_module("tileir.assemble"), name)
        raise AttributeError(f"module 'tileir' has no attribute {name!r}")


def __dir__():
    # builtins.set: this module's own `set` is the spec's carry setter
    import builtins

    return sorted(builtins.set(globals()) | builtins.set(__all__))


# The public surface, deliberately: the spec's names (every fn, type, constructor and const that is
# not a Dev operation) and the user-facing API beside them. tests/test_public_api.py holds it to that.
__all__ = [
    # bytecode
    "BYTECODE_MAJOR", "BYTECODE_MINOR", "bytecode_version", "encode", "encode_kernel", "global_payload",
    "ieee_bits", "put_varint", "put_varint_u64", "zigzag",
    # dev
    "Dev",
    # dtypes
    "BF16", "BOOL", "F4E2M1FN", "F8E4M3FN", "F8E5M2", "F8E8M0FNU", "F16", "F32", "F64", "I1", "I4", "I8", "I16",
    "I32", "I64", "TF32", "Dtype", "FloatDtype", "float_dtype", "host_float", "is_float_dtype",
    # errors
    "TileirError",
    # kernel
    "KernelFn", "cdiv", "kernel", "trace_kernel",
    # markers
    "FREE_AXIS", "Cells", "In", "Marker", "Out", "Shared", "Whole", "cells",
    # prog
    "ByPtr", "ByValue", "TileProg",
    # lower
    "lower",
    # render
    "render_kernel",
    # values
    "Carry", "GatherScatterView", "GridView", "Idx", "Lit", "Param", "Ptrs", "TensorView", "Tile",
    # surface.arith
    "NoAssumption", "NoSignedWrap", "NoUnsignedWrap", "NoWrap", "Overflow", "Rounding", "abs", "abs_i", "add",
    "add_i", "add_i64", "addi", "and_i", "andi", "atan2", "bool_const", "ceil", "consti", "cos", "cosh", "div", "div_i",
    "eq", "eq_i", "eq_u", "exp", "exp2", "f_const", "floor", "fma", "full", "ge", "ge_i", "ge_u", "gt", "gt_i",
    "gt_u", "i64_const", "i8_const", "i_const", "le", "le_i", "le_u", "lit", "log", "log2", "lt", "lt_i",
    "lt_u", "max", "max_i", "min", "min_i", "mul", "mul_i", "mulhi_i", "muli", "ne", "ne_i", "ne_u", "neg",
    "neg_i", "or_i", "ori", "overflow_name", "pow", "rem_i", "remf", "rint", "rounding_name", "rsqrt", "select",
    "shl_i", "shli", "shr_i", "shr_u", "shri", "sin", "sinh", "sqrt", "sqrt_approx", "sub", "sub_i", "subi",
    "tan", "tanh", "xor_i", "xori",
    # surface.atomics
    "atomic_add", "atomic_cas", "atomic_rmw",
    # surface.cell_io
    "array_view", "blocks_of", "extent_of", "fill", "load_at", "load_cell", "retile", "store_cell", "store_sub",
    "zeros",
    # surface.control
    "By", "DRange", "One", "RangeBound", "Step", "carry", "d_if", "d_range", "get", "range_idx", "set",
    # surface.convert
    "bits_to_float", "bits_to_int", "ext_i4", "ext_i8", "ext_u4", "ext_u8", "float_to_float", "float_to_int",
    "int_to_float", "int_to_mask", "mask_to_int", "to", "trunc_i4", "trunc_u8",
    # surface.debug
    "assume_div_by", "assume_in_range", "assume_same_elements", "d_assert", "d_assume", "d_print",
    "gdc_launch_dependents", "gdc_wait", "memory_fence_alias",
    # surface.folds
    "d_reduce2", "d_scan2",
    # surface.globals
    "Private", "Public", "Visibility", "alloca_ptrs", "d_global", "global_ptrs", "visibility_name",
    # surface.hints
    "Hint", "Hints", "for_arch", "hint_latency", "hint_num_cta_in_cga", "hint_num_worker_warps_per_cta",
    "hint_occupancy", "hint_view_load_latency", "hint_view_store_no_tma",
    # surface.index
    "and_mask", "arange", "axis_mask", "axis_strides", "block_id", "coord", "idx_add", "idx_as_tile",
    "idx_const", "idx_div", "idx_mul", "idx_of", "idx_rem", "idx_sub", "in_range", "lanes", "lanes_strided",
    "num_blocks", "or_mask", "permute", "row_major", "tail_mask", "tile_at",
    # surface.loops
    "d_fork2", "d_loop", "d_return_if", "idx_eq", "idx_ge", "idx_gt", "idx_le", "idx_lt", "idx_ne",
    # surface.memory
    "load", "param", "param_dtype", "position", "scalar", "store",
    # surface.mma
    "mma", "mma_scaled", "mmai",
    # surface.pointers
    "gather", "int_to_ptr", "load_ptrs", "ptr_offset", "ptr_to_int", "ptr_to_ptr", "ptrs", "scatter",
    "store_ptrs",
    # surface.reduce
    "d_reduce", "d_scan", "reduce_max", "reduce_min", "reduce_sum", "scan_sum",
    # surface.shape
    "broadcast", "permute_tile", "reshape", "transpose",
    # surface.strided_gather_views
    "At", "GatherIdx", "Rows", "atomic_red_view", "gather_scatter_view", "load_gather", "store_gather",
    "strided_view",
    # surface.tileshape
    "cat", "erf", "extract", "insert", "pack_bytes", "powi", "unpack_bytes",
    # surface.views
    "Dim", "Dyn", "Fixed", "dim_extent", "dim_operands", "inbounds_note", "index_space_dim", "load_view",
    "partition_view", "store_view", "strided_grid", "tensor_dim", "tensor_view", "tensor_view_dyn", "view_grid",
    # ir
    "DYN_DIM", "AssumePred", "Arg", "Bounded", "DivBy", "Elem", "IdF", "IdI", "Kernel", "Num", "Owner",
    "Padding", "PadNan", "PadNegInf", "PadNegZero", "PadPosInf", "PadZero", "NoPadding", "PartitionView",
    "PtrTo", "RedId", "Ref", "SameElements", "StridedView", "Token", "Ty", "Val", "padding_is_special",
    "padding_name", "padding_present", "tensor_view_of",
    # instrs
    "AddInt", "AllocaPtr", "AssertTile", "AssumeTile", "AtomicCASPtr", "AtomicRMWPtr", "AtomicRedViewTile",
    "BlockCounts", "BlockIds", "BreakVals", "Broadcast", "Cast", "CatTile", "CmpFloat", "CmpInt", "ConstFloat",
    "ConstInt", "Cont", "ExtractTile", "FloatBin", "FloatFma", "FloatMma", "FloatMmaScaled", "FloatPowI",
    "FloatUn", "ForLoop", "GetGlobalPtr", "GetIndexSpaceShape", "GetTensorShape", "IfElse", "InsertTile",
    "Instr", "IntBin", "IntMma", "IntToPtrTile", "IntUn", "IotaTile", "JoinTokens", "LoadPtr", "LoadViewTile",
    "MakeGatherScatterView", "MakePartitionView", "MakeStridedView", "MakeTensorView", "MakeTok", "MulInt",
    "Offset", "PermuteTile", "PrintTile", "PtrToIntTile", "PtrToPtrTile", "ReduceTile", "Reshape", "Ret",
    "ScanTile", "SelectTile", "StorePtr", "StoreViewTile", "TokenOnlyTile", "WhileLoop", "YieldVals",
    # assemble (loaded on first use)
    "assembler_defect", "tileiras_args",
]
