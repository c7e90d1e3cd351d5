"""The fuzz generator's vocabulary: formats, operations, the dialect's tables it draws from,
the step kinds and their weights, the mutant check's focus, ``Profile`` and ``TV`` (a value as
the generator sees it). Pure Python, no tileir import (fuzzgen.py's docstring says why)."""

from __future__ import annotations

from dataclasses import dataclass

FLOATS = ("f32", "f16", "bf16", "f64")  # formats arithmetic runs in (and buffers hold)
INTS = ("i32", "i64", "i16", "i8")
STORABLE = FLOATS + INTS
UN_EXACT = ("negf", "absf", "floor", "ceil", "sqrt")
UN_APPROX = ("exp", "exp2", "log", "log2", "tanh", "sin", "cos", "tan", "sinh", "cosh", "rsqrt", "sqrt_approx")
UN_JUMPS = ("floor", "ceil")  # a tiny change of the operand moves the answer a whole unit
BIN_EXACT = ("addf", "subf", "mulf", "divf", "maxf", "minf", "maxf_nan", "minf_nan", "remf")
BIN_APPROX = ("pow", "atan2")
ROUNDINGS = ("nearest_even", "zero", "negative_inf", "positive_inf")
IBIN = ("addi", "subi", "muli", "divi", "remi", "maxi", "mini", "mulhii", "andi", "ori", "xori", "shli", "shri",
        "shru")
PREDS = ("eq", "ne", "lt", "le", "gt", "ge")
PADS = ("zero", "neg_zero", "nan", "pos_inf", "neg_inf", "none")
RMW_ORDERLESS = ("add", "and", "or", "xor", "max", "min", "umax", "umin")
# the dialect's mma table (families/mma.py MMA_TABLE), written out so this module imports nothing of tileir
MMA_PAIRS = (("f16", "f16"), ("f16", "f32"), ("bf16", "f32"), ("f32", "f32"), ("tf32", "f32"), ("f64", "f64"),
             ("f8E4M3FN", "f16"), ("f8E4M3FN", "f32"), ("f8E5M2", "f16"), ("f8E5M2", "f32"))
# conversions between float formats and their modes that tileiras assembles for sm_90 (diff.fam_int.FTOF_SM90,
# families/convert.py ftof_modes; the modes of convert.UNMEASURED_FTOF included: the campaign measures them too)
_NE, _NZ = ("nearest_even",), ("nearest_even", "zero")
_ALL = ("nearest_even", "zero", "negative_inf", "positive_inf", "nearest_away")  # widening into f64, f32, f16
_TF = ("nearest_even", "zero", "nearest_away")  # an exact widening into tf32
_F8 = (("f8E4M3FN", _NE), ("f8E5M2", _NE))
FTOF = {
    "f64": (("f32", ("nearest_even", "zero", "negative_inf", "positive_inf")), ("tf32", _NZ), ("f16", _NZ),
            ("bf16", _NZ)) + _F8,
    "f32": (("f64", _ALL), ("tf32", _TF), ("f16", _NZ), ("bf16", _NZ)) + _F8,
    "tf32": (("f64", _ALL), ("f32", _ALL), ("f16", _NZ), ("bf16", _NZ)) + _F8,
    "f16": (("f64", _ALL), ("f32", _ALL), ("tf32", _TF), ("bf16", _NZ)) + _F8,
    "bf16": (("f64", _ALL), ("f32", _ALL), ("tf32", _TF), ("f16", _NZ)) + _F8,
    "f8E4M3FN": (("f64", _ALL), ("f32", _ALL), ("tf32", _TF), ("f16", _ALL), ("bf16", _NZ), ("f8E5M2", _NE)),
    "f8E5M2": (("f64", _ALL), ("f32", _ALL), ("tf32", _TF), ("f16", _ALL), ("bf16", _NZ), ("f8E4M3FN", _NE)),
}
# the table campaign 1 (bench/results/fuzz_h200.json) drew from: generator version 1 (Profile.version)
# draws the programs of its seeds again, mode for mode
_TFA = ("nearest_even", "zero", "nearest_away")
FTOF_V1 = {
    "f64": (("f32", _NZ), ("tf32", _NZ), ("f16", _NZ), ("bf16", _NZ)) + _F8,
    "f32": (("f64", _NE), ("tf32", _TFA), ("f16", _NZ), ("bf16", _NZ)) + _F8,
    "tf32": (("f64", _NE), ("f32", _NE), ("f16", _NZ), ("bf16", _NZ)) + _F8,
    "f16": (("f64", _NE), ("f32", _NE), ("tf32", _NE), ("bf16", _NZ)) + _F8,
    "bf16": (("f64", _NE), ("f32", _NE), ("tf32", _NE), ("f16", _NZ)) + _F8,
    "f8E4M3FN": (("f64", _NE), ("f32", _NE), ("tf32", _NE), ("f16", _NE), ("bf16", _NE), ("f8E5M2", _NE)),
    "f8E5M2": (("f64", _NE), ("f32", _NE), ("tf32", _NE), ("f16", _NE), ("bf16", _NE), ("f8E4M3FN", _NE)),
}
# the generator's version: 3 draws no reduction that takes the element or the accumulator (d_reduce leaves
# their answer open: campaign 2's reduce-order) and writes every assert's condition on input data of its own
# (``x != ASSERT_MARK``; drawn to fire, the mark sits at a known lane) where 2 drew x != x, a constant
# tileiras stops on with CUDA_ERROR_LAUNCH_FAILED (campaign 2's 5630, 6991); 2 draws campaign 2's programs
# again, 1 campaign 1's (the ftof modes of FTOF_V1)
GENERATOR = 3
ASSERT_MARK = 123456789  # the input value a version-3 assert stops on (inputs are drawn in [-100, 100])
BITS = {"f64": 64, "f32": 32, "tf32": 32, "f16": 16, "bf16": 16, "f8E4M3FN": 8, "f8E5M2": 8, "i64": 64, "i32": 32,
        "i16": 16, "i8": 8, "i4": 4, "i1": 1}
# the step kinds and their default weights; a profile may boost some (the mutant check's focus)
WEIGHTS = {
    "load": 8, "const": 2, "iota": 1, "un": 8, "bin": 12, "fma": 2, "ibin": 8, "iun": 1, "cmp": 6, "select": 3,
    "conv": 9, "reduce": 5, "scan": 3, "scan2": 1, "argmax": 1, "shape": 6, "mma": 6, "mmai": 2, "powi": 1,
    "erf": 1, "pack": 1, "vload": 4, "vstore": 3, "gload": 1, "gstore": 1, "store": 10, "gather": 2, "scatter": 1,
    "atomic": 2, "cas": 1, "redview": 1, "global": 1, "alloca": 1, "print": 0.4, "assert": 0.4, "for": 4,
    "while": 2, "if": 3, "softmax": 1.0, "ret": 0.3,
}
ALWAYS = ("load", "store")  # kept by a profile's ``only``: the values' sources and the outputs
MEMORY = {"load", "vload", "vstore", "gload", "gstore", "store", "gather", "scatter", "atomic", "cas", "redview",
          "global", "alloca", "print", "softmax", "ret"}
# which step kinds (and choices) exercise each mutant of diff/mutants.py: the mutant check's focus
MUTANT_FOCUS = {
    "arith-rounds-toward-zero": (("bin", "fma"), (("bin", "addf"), ("bin", "mulf"))),
    "cmp-ordered-as-unordered": (("cmp", "select"), (("dist", "special"),)),
    "maxmin-nan-dropped": (("bin",), (("bin", "maxf_nan"), ("dist", "special"))),
    "floor-ceil-swapped": (("un",), (("un", "floor"),)), "remf-ieee-remainder": (("bin",), (("bin", "remf"),)),
    "exp-as-exp2": (("un",), (("un", "exp"),)), "atan2-operands-swapped": (("bin",), (("bin", "atan2"),)),
    "powi-exponent-abs": (("powi",), ()), "negf-as-absf": (("un", "erf"), (("un", "negf"),)),
    "shri-always-logical": (("ibin",), (("ibin", "shri"),)), "mulhi-signed": (("ibin",), (("ibin", "mulhii"),)),
    "divi-rounds-down": (("ibin",), (("ibin", "divi"),)), "cmpi-unsigned-as-signed": (("cmp",), (("cmp.alt", True),)),
    "itof-unsigned": (("conv",), (("conv", "itof"),)),
    "ftoi-no-saturation": (("conv",), (("conv", "ftoi_sat"), ("dist", "special"))),
    "ftof-rounding-nearest": (("conv",), (("conv", "ftof"), ("ftof", "zero"))),
    "exti-i4-zero-extends": (("conv",), (("conv", "i4"),)), "bitcast-as-itof": (("conv",), (("conv", "bitcast"),)),
    "select-branches-swapped": (("select", "cmp"), ()), "reduce-identity-wrong": (("reduce", "scan"), ()),
    "reduce-args-swapped": (("reduce",), ()), "scan-args-swapped": (("scan",), ()),
    "scan2-operands-swapped": (("scan2",), ()), "gather-pad-dropped": (("gather",), (("gather.masked", True),)),
    "atomic-umax-as-max": (("atomic",), (("atomic", "umax"),)), "view-indices-reversed": (("vload",), ()),
    "global-as-alloca": (("global",), ()), "alloca-regions-merged": (("alloca",), ()),
    "print-args-reversed": (("print",), ()), "assert-dropped": (("assert",), ()), "if-branches-swapped": (("if",), ()),
    "cat-operands-swapped": (("shape",), ()), "mmai-unsigned": (("mmai",), ()),
}
# mutants no program of the newest generator can tell from the plain lowering: the mutant check reports them
# "equivalent" instead of running them (layer 2's families still run them: tests/test_diff.py)
EQUIVALENT = {
    "reduce-args-swapped": "a reduction's region arguments in the other order change only a body that is not "
                           "commutative, and generator 3 draws none (d_reduce leaves their answer open: campaign 2's "
                           "reduce-order); its witnesses on the H200 were such reductions",
}
SIZE_WEIGHTS = {1: 2, 2: 3, 4: 4, 8: 5, 16: 5, 32: 3, 64: 2, 128: 1, 256: 1}


@dataclass(frozen=True)
class Profile:
    """How programs are drawn: ``steps`` top-level steps (a range), the largest tile (elements)
    outside mma, the largest mma operand (elements), the step weights' boosts."""

    steps: tuple = (2, 10)
    max_elems: int = 1024
    max_mma_elems: int = 8192
    focus: tuple = ()  # step kinds drawn 8x as often
    only: tuple = ()  # when given, the only step kinds drawn (with loads and stores, which feed and keep them)
    prefer: tuple = ()  # (choice point, value): drawn there 60% of the time where it is legal
    fire_asserts: float = 0.02  # the share of assert steps whose condition is false on purpose
    version: int = GENERATOR  # the generator's version: 2 draws campaign 2's programs again, 1 campaign 1's


DEFAULT = Profile()


@dataclass(frozen=True)
class TV:
    """A value as the generator sees it."""

    id: int
    fmt: str
    shape: tuple
    exact: bool = True
    raw: bool = True

    @property
    def is_float(self) -> bool:
        return self.fmt in FLOATS or self.fmt in ("tf32", "f8E4M3FN", "f8E5M2")

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n


def pow2_at_most(n: int) -> int:
    p = 1
    while p * 2 <= n:
        p *= 2
    return p
