"""The interned tables of one bytecode file: strings, types, constants; and the type encodings."""

from __future__ import annotations

import struct

import numpy as np

from .. import ir
from ..dtypes import BY_NAME, to_format, wrap_int_scalar
from ..errors import TileirError
from . import enums as E
from .varint import put_varint
from .version import vstr


class Interned:
    """Byte strings numbered in the order first seen (from ``start``)."""

    def __init__(self, start: int = 0):
        self.ids: dict[bytes, int] = {}
        self.start = start

    def __getitem__(self, data: bytes) -> int:
        got = self.ids.get(data)
        if got is None:
            got = self.ids[data] = len(self.ids) + self.start
        return got

    def __len__(self) -> int:
        return len(self.ids)

    def write(self, out: bytearray, index_width: int) -> None:
        """count, padding to the index width, an offset per item, then the items."""
        put_varint(out, len(self.ids))
        _pad(out, index_width)
        offset = 0
        for data in self.ids:  # dicts keep insertion order, which is id order
            out += offset.to_bytes(index_width, "little")
            offset += len(data)
        for data in self.ids:
            out += data


def _pad(out: bytearray, align: int) -> None:
    out += b"\xcb" * (-len(out) % align)


def int_list(out: bytearray, values, width: int) -> None:
    put_varint(out, len(values))
    for v in values:
        out += int(v).to_bytes(width, "little", signed=True)


def _dims(values) -> list:
    return [E.DYNAMIC if v == ir.DYN_DIM else v for v in values]


class TypeTable(Interned):
    """Type ids; i1 and i32 are ids 0 and 1 in every file."""

    def __init__(self, version):
        super().__init__()
        self.version = version
        # type -> id: a kernel names the same few types over and over, and an equal type always
        # encodes to the same bytes in one file (its parts are interned by then)
        self.memo: dict = {}
        self.seen: dict = {}  # id(type) -> (type, id in this table)
        self[bytes([E.SIMPLE_TYPE["i1"]])]
        self[bytes([E.SIMPLE_TYPE["i32"]])]

    def simple(self, name: str) -> int:
        since = E.SIMPLE_TYPE_SINCE.get(name)
        if since and self.version < since:
            raise TileirError(f"the element format {name} needs bytecode {vstr(since)}; "
                              f"this module is written at {vstr(self.version)}")
        return self[bytes([E.SIMPLE_TYPE[name]])]

    def elem(self, e) -> int:
        if isinstance(e, ir.PtrTo):
            b = bytearray([E.TYPE_POINTER])
            if self.version >= (13, 4):
                put_varint(b, 0)  # optional-field flags: no pointer attribute
            put_varint(b, self.simple(e.name))
            return self[bytes(b)]
        return self.simple(e.name)

    def ty(self, t) -> int:
        # by identity first (a frozen type's hash is a Python call over its fields; the lowering
        # shares its type objects), the object kept so its id is not reused while the table lives
        seen = self.seen.get(id(t))
        if seen is not None and seen[0] is t:
            return seen[1]
        try:
            got = self.memo.get(t)
        except TypeError:  # an unhashable part (a list for a shape): no memo
            return self._ty(t)
        if got is None:
            got = self.memo[t] = self._ty(t)
        self.seen[id(t)] = (t, got)
        return got

    def _ty(self, t) -> int:
        if isinstance(t, ir.Token):
            return self.simple("token")
        if isinstance(t, ir.Tile):
            b = bytearray([E.TYPE_TILE])
            put_varint(b, self.elem(t.elem))
            int_list(b, t.shape, 8)
            return self[bytes(b)]
        if isinstance(t, ir.TensorView):
            b = bytearray([E.TYPE_TENSOR_VIEW])
            if self.version >= (13, 4):
                put_varint(b, 0)
            put_varint(b, self.elem(t.elem))
            int_list(b, _dims(t.shape), 8)
            int_list(b, _dims(t.strides), 8)
            return self[bytes(b)]
        if isinstance(t, ir.PartitionView):
            return self._view(E.TYPE_PARTITION_VIEW, t, [t.tile_shape], t.dim_map)
        if isinstance(t, ir.StridedView):
            return self._view(E.TYPE_STRIDED_VIEW, t, [t.tile_shape, t.traversal], t.dim_map)
        if isinstance(t, ir.GatherScatterView):
            return self._view(E.TYPE_GATHER_SCATTER_VIEW, t, [t.tile_shape], None, t.sparse_dim)
        raise TileirError(f"no type encoding for {t!r}")

    def _view(self, tag, t, lists, dim_map, sparse_dim=None) -> int:
        padded = ir.padding_present(t.padding)
        if tag != E.TYPE_PARTITION_VIEW and self.version < (13, 3):
            raise TileirError("strided and gather/scatter views need bytecode 13.3; this module is "
                              f"written at {vstr(self.version)}")
        b = bytearray([tag])
        unified = self.version >= (13, 3)
        if unified:
            put_varint(b, 1 if padded else 0)
        for lst in lists:
            int_list(b, lst, 4)
        put_varint(b, self.ty(ir.tensor_view_of(t)))
        if dim_map is not None:
            int_list(b, dim_map, 4)
        else:
            put_varint(b, sparse_dim)
        if not unified:
            put_varint(b, 1 if padded else 0)
        if padded:
            b.append(E.ENUMS["padding"][t.padding.value])
        return self[bytes(b)]

    def function(self, params, results) -> int:
        b = bytearray([E.TYPE_FUNCTION])
        put_varint(b, len(params))
        for p in params:
            put_varint(b, self.ty(p))
        put_varint(b, len(results))
        for r in results:
            put_varint(b, self.ty(r))
        return self[bytes(b)]


def element_bytes(dtype_name: str, values) -> bytes:
    """The little-endian bytes of ``values`` in format ``dtype_name``, element after element.

    Sub-byte formats (i4, f4E2M1FN) pack two elements a byte, the even one in the low nibble;
    i1 takes a byte an element. This is the layout in memory (``global_payload``); a constant's
    bytes on the wire are ``dense_bytes``.
    """
    d = BY_NAME[dtype_name]
    arr = to_format(d, np.atleast_1d(np.asarray(values, dtype=np.float64 if d.is_float else np.int64)))
    if d.name == "i1":
        return bytes(int(bool(x)) for x in arr)
    if d.bits == 4:
        nib = arr.view(np.uint8) & 0xF if d.is_float else (arr.astype(np.int64) & 0xF).astype(np.uint8)
        if len(nib) % 2:
            nib = np.append(nib, np.uint8(0))
        return bytes((nib[0::2] | (nib[1::2] << 4)).astype(np.uint8))
    if d.name == "tf32":
        return arr.astype(np.float32).tobytes()
    return arr.astype(arr.dtype.newbyteorder("<")).tobytes()


def dense_bytes(dtype_name: str, values) -> bytes:
    """A constant's payload as MLIR's DenseElementsAttr stores it (what the reader validates):
    every element in a whole number of bytes -- tf32's 19 bits in 3, i4 and f4E2M1FN a byte each --
    except i1, packed eight a byte (the first in the low bit), whose splat is one byte of 0 or 0xFF.
    The reader also accepts a single element as a splat of any shape."""
    d = BY_NAME[dtype_name]
    vals = list(values)
    if d.name == "i1":
        bits = [int(v) & 1 for v in vals]
        if len(set(bits)) == 1:
            return bytes([0xFF if bits[0] else 0])
        packed = bytearray((len(bits) + 7) // 8)
        for i, bit in enumerate(bits):
            packed[i // 8] |= bit << (i % 8)
        return bytes(packed)
    if d.is_float:
        width = (d.bits + 7) // 8
        return b"".join(float_pattern(dtype_name, v).to_bytes(width, "little") for v in vals)
    if d.bits == 4:
        return bytes(int(x) & 0xF for x in to_format(d, vals).astype(np.int64))
    if all(type(v) is int and _I64_MIN <= v <= _I64_MAX for v in vals):
        # what element_bytes answers, without numpy's per-call cost (an index constant's bytes)
        width = d.bits // 8
        return b"".join(wrap_int_scalar(d, v).to_bytes(width, "little", signed=True) for v in vals)
    return element_bytes(dtype_name, vals)


_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1


def float_pattern(dtype_name: str, value: float) -> int:
    """The bit pattern of ``value`` rounded (nearest even) to float format ``dtype_name``;
    tf32's is its 19 bits (sign, 8 exponent, 10 fraction)."""
    d = BY_NAME[dtype_name]
    arr = to_format(d, np.atleast_1d(np.asarray([value], dtype=np.float64)))
    if d.name == "tf32":
        return int(arr.astype(np.float32).view(np.uint32)[0]) >> 13
    raw = arr.tobytes()
    return int.from_bytes(raw, "little") & ((1 << d.bits) - 1)


def global_payload(dtype: str, values) -> bytes:
    """The initializer blob of a global: every element's bytes in order, which is the layout
    get_global's pointer then walks (the dialect: initial values are stored in linear order)."""
    return element_bytes(dtype, values)


def f64_bytes(x: float) -> bytes:
    return struct.pack("<d", x)
