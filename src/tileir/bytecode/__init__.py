"""The Tile IR bytecode writer (13.1-13.4)."""

from .tables import global_payload
from .varint import ieee_bits, put_varint, put_varint_u64, zigzag
from .version import BYTECODE_MAJOR, BYTECODE_MINOR, VERSIONS, bytecode_version
from .writer import encode, encode_kernel

__all__ = ["BYTECODE_MAJOR", "BYTECODE_MINOR", "VERSIONS", "bytecode_version", "encode",
           "encode_kernel", "global_payload", "ieee_bits", "put_varint", "put_varint_u64", "zigzag"]
