"""The integer encodings of the Tile IR bytecode: LEB128 varints, zigzag, IEEE bit patterns."""

from __future__ import annotations

import math

from ..errors import TileirError


def put_varint(b: bytearray, x: int) -> bytearray:
    """``x`` as an unsigned LEB128 varint appended to ``b``.

    Refuses a negative number: a length, an index and a value number never are one.
    """
    if 0 <= x < 0x80 and type(x) is int:  # most are: one byte
        b.append(x)
        return b
    if x < 0:
        raise TileirError(f"put_varint got {x}: a length, an index or a value number is never "
                          "negative (a signed pattern goes through zigzag first)")
    while True:
        byte = x & 0x7F
        x >>= 7
        if x:
            b.append(byte | 0x80)
        else:
            b.append(byte)
            return b


def put_varint_u64(b: bytearray, x: int) -> bytearray:
    """``x``, a 64-bit pattern whose top bit may be set, as an LEB128 varint."""
    return put_varint(b, x & 0xFFFF_FFFF_FFFF_FFFF)


def zigzag(x: int) -> int:
    """The reader's signed-varint mapping: 0, -1, 1, -2 ... to 0, 1, 2, 3 ...

    The shift is arithmetic, so the mask is all ones for a negative value and a pattern with
    its sign bit set (every negative float) is a short varint, not a ten-byte one.
    """
    return ((x << 1) ^ (x >> 63)) & 0xFFFF_FFFF_FFFF_FFFF


def put_signed_varint(b: bytearray, x: int) -> bytearray:
    return put_varint(b, zigzag(x))


def sign_extend(pattern: int, bits: int) -> int:
    """A ``bits``-wide pattern read as a two's complement integer."""
    pattern &= (1 << bits) - 1
    return pattern - (1 << bits) if pattern >> (bits - 1) else pattern


def ieee_bits(x: float, p: int, emin: int, emax: int) -> int:
    """The IEEE pattern of ``x`` in the binary format with ``p`` significand bits (hidden bit
    included) and minimum normal exponent ``emin``: sign, biased exponent, fraction.

    ``x`` must already be a value of the format (callers round first). A value above the range
    answers the infinity of its sign; NaN answers the canonical quiet NaN.
    """
    ebits = (emax - emin + 1 + 1).bit_length()  # exponent field wide enough for emin-1 .. emax+1
    bias = emax
    frac_bits = p - 1
    sign = 1 if math.copysign(1.0, x) < 0 else 0
    if math.isnan(x):
        return ((1 << ebits) - 1) << frac_bits | (1 << (frac_bits - 1))
    ax = abs(x)
    if math.isinf(ax) or ax >= 2.0 ** (emax + 1):
        return (sign << (ebits + frac_bits)) | (((1 << ebits) - 1) << frac_bits)
    if ax == 0.0:
        return sign << (ebits + frac_bits)
    m, e = math.frexp(ax)  # ax = m * 2**e, 0.5 <= m < 1
    e -= 1  # ax = (2m) * 2**e with 1 <= 2m < 2
    if e < emin:  # subnormal: fraction counts units of 2**(emin - frac_bits)
        frac = int(round(ax * 2.0 ** (frac_bits - emin)))
        return (sign << (ebits + frac_bits)) | frac
    frac = int(round((ax / 2.0 ** e - 1.0) * (1 << frac_bits)))
    return (sign << (ebits + frac_bits)) | ((e + bias) << frac_bits) | frac
