"""The numbers the bytecode writes for the dialect's enums and type tags, named by keyword."""

from __future__ import annotations

# Simple (scalar) types: the type table's one-byte tags. i1 and i32 are pre-registered as
# type ids 0 and 1 by every writer and reader. Since: f8E8M0FNU 13.2, f4E2M1FN and i4 13.3.
SIMPLE_TYPE = {
    "i1": 0x00, "i8": 0x01, "i16": 0x02, "i32": 0x03, "i64": 0x04,
    "f16": 0x05, "bf16": 0x06, "f32": 0x07, "tf32": 0x08, "f64": 0x09,
    "f8E4M3FN": 0x0A, "f8E5M2": 0x0B, "token": 0x11, "f8E8M0FNU": 0x12,
    "f4E2M1FN": 0x13, "i4": 0x16,
}
SIMPLE_TYPE_SINCE = {"f8E8M0FNU": (13, 2), "f4E2M1FN": (13, 3), "i4": (13, 3)}

TYPE_POINTER = 0x0C
TYPE_TILE = 0x0D
TYPE_TENSOR_VIEW = 0x0E
TYPE_PARTITION_VIEW = 0x0F
TYPE_FUNCTION = 0x10
TYPE_GATHER_SCATTER_VIEW = 0x14  # since 13.3
TYPE_STRIDED_VIEW = 0x15  # since 13.3

# ShapedType::kDynamic, the wire value of a ? extent or stride (INT64_MIN).
DYNAMIC = -(1 << 63)

ENUMS = {
    "rounding": {"nearest_even": 0, "zero": 1, "negative_inf": 2, "positive_inf": 3,
                 "approx": 4, "full": 5, "nearest_int_to_zero": 6, "nearest_away": 7},
    "signedness": {"unsigned": 0, "signed": 1},
    "overflow": {"none": 0, "no_signed_wrap": 1, "no_unsigned_wrap": 2, "no_wrap": 3},
    "predicate": {"equal": 0, "not_equal": 1, "less_than": 2, "less_than_or_equal": 3,
                  "greater_than": 4, "greater_than_or_equal": 5},
    "ordering": {"unordered": 0, "ordered": 1},
    "memory_semantics": {"weak": 0, "relaxed": 1, "acquire": 2, "release": 3, "acq_rel": 4},
    "memory_scope": {"tl_blk": 0, "device": 1, "sys": 2},
    "atomic_mode": {"and": 0, "or": 1, "xor": 2, "add": 3, "addf": 4, "max": 5, "min": 6,
                    "umax": 7, "umin": 8, "xchg": 9},
    "padding": {"zero": 0, "neg_zero": 1, "nan": 2, "pos_inf": 3, "neg_inf": 4},
    "visibility": {"public": 0, "private": 1},
}

# Section ids; a section whose id has 0x80 set carries an alignment.
SECTION_END = 0x00
SECTION_STRING = 0x01
SECTION_FUNC = 0x02
SECTION_DEBUG = 0x03
SECTION_CONSTANT = 0x04
SECTION_TYPE = 0x05
SECTION_GLOBAL = 0x06
SECTION_PRODUCER = 0x07  # since 13.3

# Tagged attribute kinds.
ATTR_INTEGER = 0x01
ATTR_FLOAT = 0x02
ATTR_BOOL = 0x03
ATTR_ARRAY = 0x06
ATTR_DIV_BY = 0x08
ATTR_SAME_ELEMENTS = 0x09
ATTR_DICTIONARY = 0x0A
ATTR_OPT_HINTS = 0x0B
ATTR_BOUNDED = 0x0C

MAGIC = b"\x7fTileIR\x00"
