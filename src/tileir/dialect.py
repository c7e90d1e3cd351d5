"""One declarative table of the cuda_tile operations: what the writer puts on the wire and what
the renderer prints, from the same entry.

An entry says, in wire order: the opcode; how the result types are written (``one``: a type id
per result; ``seq``: a counted list; ``none``: nothing); the flag word's bits (unit attributes and
the presence of optional attributes and operands, bit i for the i-th flag); the attributes; the
operands (``x`` one, ``x?`` optional and flagged, ``x*`` a counted group; ``counted`` ops write one
count of all their operands first and then all of them); the number of regions; and the bytecode
version that introduced the op, its results (``results_since``) and each late field.

A field added after 13.1 carries its version and the only value an older version can mean; the
writer refuses any other value there, naming the version (see ``bytecode.writer``).

``asm`` is the operation's assembly after its name, as ``tileirdisasm`` prints it, in a small
template language read by ``render``:

* ``$x`` an operand (a group joined by ", "), ``^x`` its type(s), ``~x`` a group's types the way the
  view operations print index types (", T" once when they are all the same, else ", T1, T2 ...";
  nothing for an empty group), ``@0`` a result's type, ``@*`` all of them;
* ``#a`` an attribute printed by its kind (nothing at its default, a unit attribute its name);
* ``{...}`` an optional group, printed only when every directive in it prints something;
* anything else is literal. ``<name>`` instead of a template names a printer, ``render.Printer.op_<name>``.

``names`` are the result names the disassembler gives (MLIR's asm result names): one per result,
"" where the value is numbered. tileirdisasm names every result of a multi-result op after its
ODS name (``%result, %result_token``); of single-result ops only those listed here have a name.
``asm_iface`` marks the ops that implement MLIR's OpAsmOpInterface without naming their results
(if, loop, scan): ``assume`` names its result after its operand's producer only for those.

Names and formats checked against tileirdisasm 13.4.92 by tests/test_layer1_ops.py; where the
dialect spells an op differently from the encoder (FPowFOp is ``fpowf``) the table uses the
dialect's spelling. Some values the wire can carry are refused by the reader's verifier (the
goldens found them): rounding modes outside each op's list, i4 constants, pointers to i4, weak
atomics, a memory scope on a weak load or store.
"""

from __future__ import annotations

from dataclasses import dataclass, field

V13_1, V13_2, V13_3, V13_4 = (13, 1), (13, 2), (13, 3), (13, 4)


@dataclass(frozen=True)
class Attr:
    name: str
    kind: str  # enum:<table> | int | bool | str | symbol | dense | i32s | bools | tagged | tagged* | hints
    since: tuple = V13_1
    legacy: object = None  # the one value a version before `since` can carry
    optional: bool = False  # written only when present; its presence is a flag bit
    default: object = None  # the value the assembly leaves out


@dataclass(frozen=True)
class Flag:
    name: str  # a unit attribute, or the name of an optional attribute / operand
    since: tuple = V13_1


@dataclass(frozen=True)
class OpDef:
    name: str
    opcode: int
    results: str = "one"  # one | seq | none
    flags: tuple = ()
    attrs: tuple = ()
    operands: tuple = ()
    counted: bool = False
    regions: int = 0
    since: tuple = V13_1
    asm: str = ""
    names: tuple = ()  # asm result names, "" where the value is numbered
    results_since: tuple = V13_1  # before this version the op has no results on the wire
    asm_iface: bool = False  # implements OpAsmOpInterface without naming results (see ``names_results``)

    @property
    def names_results(self) -> bool:
        """Whether the op implements MLIR's OpAsmOpInterface: an ``assume`` of its result is then
        named ``assume_<the name it suggests>`` (``assume_`` where it suggests none), else
        ``assume``."""
        return self.asm_iface or bool(self.names)


ROUND = "enum:rounding"
SIGN = "enum:signedness"
OVF = "enum:overflow"
FTZ = Flag("flush_to_zero")


def _fbin(name, opcode):
    return OpDef(name, opcode, flags=(FTZ,), attrs=(Attr("rounding", ROUND, default="nearest_even"),),
                 operands=("lhs", "rhs"), asm="$lhs, $rhs #rounding #flush_to_zero : @0")


def _plain(name, opcode, operands=("source",), since=V13_1):
    args = ", ".join("$" + o for o in operands)
    return OpDef(name, opcode, operands=operands, since=since, asm=f"{args} : @0")


def _cast(name, opcode, since=V13_1, operand="source", attrs=(), flags=()):
    attr_asm = "".join(f" #{a.name}" for a in attrs) + "".join(f" #{f.name}" for f in flags)
    return OpDef(name, opcode, flags=flags, attrs=attrs, operands=(operand,), since=since,
                 asm=f"${operand}{attr_asm} : ^{operand} -> @0")


def _ibin(name, opcode, attrs=()):
    attr_asm = "".join(" #" + a.name for a in attrs)
    return OpDef(name, opcode, attrs=attrs, operands=("lhs", "rhs"), asm=f"$lhs, $rhs{attr_asm} : @0")


def _term(name, opcode):
    return OpDef(name, opcode, results="seq", operands=("operands",), counted=True,
                 asm="{$operands : ^operands}")


_SEM = Attr("memory_semantics", "enum:memory_semantics")
_SCOPE = Attr("memory_scope", "enum:memory_scope")
_SCOPE_OPT = Attr("memory_scope", "enum:memory_scope", optional=True)
_HINTS_OPT = Attr("hints", "hints", optional=True)
_INBOUNDS = Attr("inbounds", "bools", since=V13_4, legacy=())
_OVF = Attr("overflow", OVF, default="none")
_SIGNED = Attr("signedness", SIGN)
_PTR_RESULT = ("result", "result_token")

OPS = [
    _plain("absf", 0),
    _plain("absi", 1),
    _fbin("addf", 2),
    _ibin("addi", 3, (_OVF,)),
    OpDef("alloca", 113, flags=(Flag("global"),), attrs=(Attr("num_elem", "int"), Attr("alignment", "int")),
          since=V13_3, asm="num_elem = #num_elem, alignment = #alignment #global : @0"),
    _ibin("andi", 4),
    OpDef("assert", 5, results="none", attrs=(Attr("message", "str"),), operands=("condition",),
          asm="$condition, #message : ^condition"),
    OpDef("assume", 6, attrs=(Attr("predicate", "tagged"),), operands=("value",),
          asm="#predicate, $value : ^value", asm_iface=True),  # named by render (assume_<producer's>)
    _plain("atan2", 110, ("x", "y"), since=V13_2),
    OpDef("atomic_cas_tko", 7, flags=(Flag("mask"), Flag("token")), attrs=(_SEM, _SCOPE),
          operands=("pointers", "cmp", "val", "mask?", "token?"),
          asm="#memory_semantics #memory_scope $pointers, $cmp, $val{, $mask}{ token=$token}"
              " : ^pointers, ^val{, ^mask} -> @0, @1",
          names=_PTR_RESULT),
    OpDef("atomic_rmw_tko", 8, flags=(Flag("mask"), Flag("token")),
          attrs=(_SEM, _SCOPE, Attr("mode", "enum:atomic_mode")),
          operands=("pointers", "arg", "mask?", "token?"),
          asm="#memory_semantics #memory_scope $pointers, #mode, $arg{, $mask}{ token=$token}"
              " : ^pointers, ^arg{, ^mask} -> @0, @1",
          names=_PTR_RESULT),
    OpDef("atomic_red_view_tko", 117, results="seq", flags=(Flag("token"),),
          attrs=(_SEM, _SCOPE, Attr("mode", "enum:atomic_mode")),
          operands=("view", "index*", "value", "token?"), since=V13_3,
          asm="#memory_semantics #memory_scope $view[$index], #mode, $value{ token = $token}"
              " : ^value, ^view~index -> @0"),
    _cast("bitcast", 9),
    _term("break", 10),
    OpDef("broadcast", 11, operands=("source",), asm="$source : ^source -> @0", names=("bcast",)),
    OpDef("cat", 12, attrs=(Attr("dim", "int"),), operands=("lhs", "rhs"),
          asm="$lhs, $rhs dim = #dim : ^lhs, ^rhs -> @0"),
    _plain("ceil", 13),
    OpDef("cmpf", 14, attrs=(Attr("predicate", "enum:predicate"), Attr("ordering", "enum:ordering")),
          operands=("lhs", "rhs"), asm="#predicate #ordering $lhs, $rhs : ^lhs -> @0"),
    OpDef("cmpi", 15, attrs=(Attr("predicate", "enum:predicate"), _SIGNED),
          operands=("lhs", "rhs"), asm="#predicate $lhs, $rhs, #signedness : ^lhs -> @0"),
    OpDef("constant", 16, attrs=(Attr("value", "dense"),), asm="#value : @0",
          asm_iface=True),  # named by render from the value (cst_1024_i32, true)
    _term("continue", 17),
    _plain("cos", 18),
    _plain("cosh", 19),
    _fbin("divf", 20),
    _ibin("divi", 21, (_SIGNED, Attr("rounding", ROUND, default="zero"))),
    # 22 is the entry, written by the function section rather than as an operation.
    OpDef("exp", 23, attrs=(Attr("rounding", ROUND, since=V13_3, legacy="full", default="full"),),
          operands=("source",), asm="$source #rounding : @0"),
    OpDef("exp2", 24, flags=(FTZ,), operands=("source",), asm="$source #flush_to_zero : @0"),
    _cast("exti", 37, operand="from", attrs=(_SIGNED,)),
    OpDef("extract", 38, results="seq", operands=("source", "indices"), counted=True,
          asm="$source[$indices] : ^source -> @0"),
    _plain("floor", 39),
    OpDef("fma", 40, flags=(FTZ,), attrs=(Attr("rounding", ROUND, default="nearest_even"),),
          operands=("lhs", "rhs", "acc"), asm="$lhs, $rhs, $acc #rounding #flush_to_zero : @0"),
    OpDef("for", 41, results="seq", flags=(Flag("unsignedCmp", since=V13_2),),
          operands=("lowerBound", "upperBound", "step", "initValues"), counted=True, regions=1,
          asm="<for>", names=("for",)),
    _cast("ftof", 42, operand="from", attrs=(Attr("rounding", ROUND, default="nearest_even"),)),
    _cast("ftoi", 43, operand="from", flags=(Flag("saturating", since=V13_4),),
          attrs=(_SIGNED, Attr("rounding", ROUND, default="nearest_int_to_zero"))),
    OpDef("get_global", 44, attrs=(Attr("name", "symbol"),), asm="#name : @0"),
    OpDef("get_index_space_shape", 45, results="seq", operands=("src",), asm="$src : ^src -> @0"),
    OpDef("get_num_tile_blocks", 46, asm=": @0", names=("gridSize_x", "gridSize_y", "gridSize_z")),
    OpDef("get_tensor_shape", 47, results="seq", operands=("src",), asm="$src : ^src -> @0"),
    OpDef("get_tile_block_id", 48, asm=": @0", names=("blockId_x", "blockId_y", "blockId_z")),
    # The module's globals: written by the global section, printed by render.global_line.
    OpDef("global", 49, results="none", flags=(Flag("constant", since=V13_3),),
          attrs=(Attr("sym_name", "str"), Attr("value", "dense"), Attr("alignment", "int"),
                 Attr("visibility", "enum:visibility", since=V13_3, legacy="public")),
          asm="<global>"),
    OpDef("if", 50, results="seq", operands=("condition",), regions=2, asm="<if>", asm_iface=True),
    _cast("int_to_ptr", 51),
    OpDef("iota", 58, asm=": @0"),
    _cast("itof", 59, operand="from", attrs=(_SIGNED, Attr("rounding", ROUND, default="nearest_even"))),
    OpDef("join_tokens", 60, results="seq", operands=("tokens",), counted=True, asm="$tokens : @0"),
    OpDef("load_ptr_tko", 61, flags=(Flag("memory_scope"), Flag("hints"), Flag("mask"), Flag("paddingValue"),
                                     Flag("token")),
          attrs=(_SEM, _SCOPE_OPT, _HINTS_OPT),
          operands=("source", "mask?", "paddingValue?", "token?"),
          asm="#memory_semantics{ #memory_scope} $source{, $mask}{, $paddingValue}{ token=$token}"
              "{ optimization_hints = #hints} : ^source{, ^mask}{, ^paddingValue} -> @0, @1",
          names=_PTR_RESULT),
    OpDef("load_view_tko", 62, results="seq", flags=(Flag("memory_scope"), Flag("hints"), Flag("token")),
          attrs=(_SEM, _SCOPE_OPT, _HINTS_OPT, _INBOUNDS),
          operands=("view", "index*", "token?"),
          asm="#memory_semantics{ #memory_scope} $view[$index]{ token = $token}{ optimization_hints = #hints}"
              "{ #inbounds} : ^view~index -> @0, @1",
          names=("tile", "result_token")),
    _plain("log", 63),
    _plain("log2", 64),
    OpDef("loop", 65, results="seq", operands=("initValues",), counted=True, regions=1, asm="<loop>",
          asm_iface=True),
    OpDef("make_partition_view", 66, operands=("tensor_view",), asm="$tensor_view : @0", names=("pview",)),
    OpDef("make_tensor_view", 67, results="seq", operands=("base", "dynamicShape*", "dynamicStrides*"),
          asm="<make_tensor_view>", names=("tview",)),
    OpDef("make_token", 68, asm=": @0"),
    OpDef("maxf", 69, flags=(Flag("propagate_nan"), FTZ), operands=("lhs", "rhs"),
          asm="$lhs, $rhs #flush_to_zero #propagate_nan : @0"),
    _ibin("maxi", 70, (_SIGNED,)),
    OpDef("minf", 71, flags=(Flag("propagate_nan"), FTZ), operands=("lhs", "rhs"),
          asm="$lhs, $rhs #flush_to_zero #propagate_nan : @0"),
    _ibin("mini", 72, (_SIGNED,)),
    OpDef("mmaf", 73, flags=(Flag("fast_acc", since=V13_3),), operands=("lhs", "rhs", "acc"),
          asm="$lhs, $rhs, $acc #fast_acc : ^lhs, ^rhs, ^acc"),
    OpDef("mmai", 74, attrs=(Attr("signedness_lhs", SIGN), Attr("signedness_rhs", SIGN)),
          operands=("lhs", "rhs", "acc"),
          asm="$lhs, $rhs, $acc #signedness_lhs #signedness_rhs : ^lhs, ^rhs, ^acc"),
    _fbin("mulf", 76),
    _plain("mulhii", 77, ("x", "y")),
    _ibin("muli", 78, (_OVF,)),
    _plain("negf", 79),
    OpDef("negi", 80, attrs=(Attr("overflow", OVF, since=V13_2, legacy="none", default="none"),),
          operands=("source",), asm="$source #overflow : @0"),
    OpDef("offset", 81, operands=("ptr", "offset"), asm="$ptr, $offset : ^ptr, ^offset -> @0"),
    _ibin("ori", 82),
    OpDef("permute", 83, attrs=(Attr("permutation", "i32s"),), operands=("source",),
          asm="$source #permutation : ^source -> @0"),
    _plain("fpowf", 84, ("source", "exponent")),
    OpDef("print_tko", 85, results="seq", results_since=V13_2, flags=(Flag("token", since=V13_2),),
          attrs=(Attr("str", "str"),), operands=("args*", "token?"),
          asm="#str{, $args}{ token=$token}{ : ^args} -> @0"),
    _cast("ptr_to_int", 86),
    _cast("ptr_to_ptr", 87),
    OpDef("reduce", 88, results="seq", attrs=(Attr("dim", "int"), Attr("identities", "tagged*")),
          operands=("operands",), counted=True, regions=1, asm="<reduce>", names=("reduce",)),
    _plain("remf", 89, ("lhs", "rhs")),
    _ibin("remi", 90, (_SIGNED,)),
    OpDef("reshape", 91, operands=("source",), asm="$source : ^source -> @0", names=("reshape",)),
    _term("return", 92),
    OpDef("rsqrt", 93, flags=(FTZ,), operands=("source",), asm="$source #flush_to_zero : @0"),
    OpDef("scan", 94, results="seq", attrs=(Attr("dim", "int"), Attr("reverse", "bool"), Attr("identities", "tagged*")),
          operands=("operands",), counted=True, regions=1, asm="<scan>", asm_iface=True),
    OpDef("select", 95, operands=("cond", "val_if_true", "val_if_false"),
          asm="$cond, $val_if_true, $val_if_false : ^cond, @0"),
    _ibin("shli", 96, (_OVF,)),
    _ibin("shri", 97, (_SIGNED,)),
    _plain("sin", 98),
    _plain("sinh", 99),
    OpDef("sqrt", 100, flags=(FTZ,), attrs=(Attr("rounding", ROUND, default="nearest_even"),),
          operands=("source",), asm="$source #rounding #flush_to_zero : @0"),
    OpDef("store_ptr_tko", 101, flags=(Flag("memory_scope"), Flag("hints"), Flag("mask"), Flag("token")),
          attrs=(_SEM, _SCOPE_OPT, _HINTS_OPT),
          operands=("destination", "value", "mask?", "token?"),
          asm="#memory_semantics{ #memory_scope} $destination, $value{, $mask}{ token=$token}"
              "{ optimization_hints = #hints} : ^destination, ^value{, ^mask} -> @0"),
    OpDef("store_view_tko", 102, results="seq", flags=(Flag("memory_scope"), Flag("hints"), Flag("token")),
          attrs=(_SEM, _SCOPE_OPT, _HINTS_OPT, _INBOUNDS),
          operands=("tile", "view", "index*", "token?"),
          asm="#memory_semantics{ #memory_scope} $tile, $view[$index]{ token = $token}"
              "{ optimization_hints = #hints}{ #inbounds} : ^tile, ^view~index -> @0"),
    _fbin("subf", 103),
    _ibin("subi", 104, (_OVF,)),
    _plain("tan", 105),
    OpDef("tanh", 106, attrs=(Attr("rounding", ROUND, since=V13_2, legacy="full", default="full"),),
          operands=("source",), asm="$source #rounding : @0"),
    _cast("trunci", 107, operand="from", attrs=(_OVF,)),
    _ibin("xori", 108),
    _term("yield", 109),
    _cast("pack", 111, since=V13_3),
    _cast("unpack", 112, since=V13_3),
    OpDef("mmaf_scaled", 114, operands=("lhs", "rhs", "acc", "lhs_scale", "rhs_scale"), since=V13_3,
          asm="$lhs, $rhs, $acc, $lhs_scale, $rhs_scale : ^lhs, ^rhs, ^acc, ^lhs_scale, ^rhs_scale"),
    OpDef("make_gather_scatter_view", 115, operands=("tensor_view",), since=V13_3, asm="$tensor_view : @0",
          names=("gsview",)),
    OpDef("make_strided_view", 116, operands=("tensor_view",), since=V13_3, asm="$tensor_view : @0",
          names=("sview",)),
    OpDef("insert", 118, results="seq", operands=("source", "destination", "indices"), counted=True,
          since=V13_4, asm="$source, $destination[$indices] : ^source, ^destination"),
    OpDef("gdc_launch_dependents_tko", 119, flags=(Flag("token"),), operands=("token?",), since=V13_4,
          asm="{token = $token} -> @0"),
    OpDef("gdc_wait_tko", 120, flags=(Flag("token"),), operands=("token?",), since=V13_4,
          asm="{token = $token} -> @0"),
    OpDef("fpowi", 121, operands=("source", "exponent"), since=V13_4, asm="$source, $exponent : @0, ^exponent"),
    OpDef("memory_fence_alias_tko", 122, operands=("token",), since=V13_4, asm="$token"),
]

BY_NAME = {op.name: op for op in OPS}
BY_OPCODE = {op.opcode: op for op in OPS}


@dataclass
class GRegion:
    """One region of a generic operation: its block arguments (value number, type) and ops."""

    args: tuple
    ops: list


@dataclass
class GOp:
    """An operation in the table's terms: the name of its entry, the values it defines with
    their types, its operands (by the entry's names), the operands' types, its attributes and
    its regions."""

    name: str
    results: tuple = ()  # ((value number, Ty), ...)
    operands: dict = field(default_factory=dict)
    operand_tys: dict = field(default_factory=dict)
    attrs: dict = field(default_factory=dict)
    regions: tuple = ()

    @property
    def opdef(self) -> OpDef:
        return BY_NAME[self.name]
