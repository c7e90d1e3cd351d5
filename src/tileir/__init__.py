"""tileir: GPU kernels as tile programs, recorded in Python, written as Tile IR bytecode,
assembled by NVIDIA's tileiras, and checked against a host reference.

Every public name of the spec lives here under the same name (``ti.load``, ``ti.d_range``,
``ti.reduce_sum``, ``ti.tileiras_args`` ...).
"""

from .bytecode import (  # noqa: F401
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
from .dev import Dev  # noqa: F401
from .dtypes import (  # noqa: F401  # noqa: F401
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
from .errors import TileirError  # noqa: F401
from .ir import (  # noqa: F401
    DYN_DIM,
    Kernel,
    NoPadding,
    Owner,
    Padding,
    PadNan,
    PadNegInf,
    PadNegZero,
    PadPosInf,
    PadZero,
    padding_is_special,
    padding_name,
    padding_present,
    tensor_view_of,
)
from .kernel import KernelFn, cdiv, kernel, trace_kernel  # noqa: F401
from .lower import lower  # noqa: F401
from .markers import FREE_AXIS, Cells, In, Marker, Out, Shared, Whole, cells  # noqa: F401
from .prog import ByPtr, ByValue, TileProg  # noqa: F401
from .ref.second import ref_erf, ref_fpowi, ref_sin  # noqa: F401
from .render import render_kernel  # noqa: F401
from .surface import *  # noqa: F401,F403
from .values import (  # noqa: F401
    Carry,
    GatherScatterView,  # noqa: F401
    GridView,
    Idx,
    Lit,
    Param,
    Ptrs,
    TensorView,
    Tile,
)

__version__ = "0.1.0"


def __getattr__(name):
    # the assembler and the runtime load on first use (they look for tileiras and the CUDA driver)
    if name in ("tileiras_args", "assembler_defect"):
        import importlib

        return getattr(importlib.import_module("tileir.assemble"), name)
    raise AttributeError(f"module 'tileir' has no attribute {name!r}")

# The lowered types under the spec's names. Tile and TensorView here are the kernel-body values
# (values.py); the lowered types of the same names are tileir.ir.Tile and tileir.ir.TensorView.
from .instrs import *  # noqa: E402,F401,F403
from .ir import (  # noqa: E402,F401
    Arg,
    Bounded,
    DivBy,
    Elem,
    IdF,
    IdI,
    KParam,
    Num,
    PartitionView,
    PtrTo,
    RedId,
    Ref,
    SameElements,
    StridedView,
    Token,
    Ty,
    Val,
)
from .ir import Global as KGlobal  # noqa: E402,F401
