"""What a cubin says about launching its kernel: the block tileiras compiled it for.

tileiras picks a kernel's threads itself and writes them in the kernel's ``.nv.info.<name>``
section as EIATTR_REQNTID. The driver then takes a launch with a block of (1, 1, 1) or of exactly
those threads, and refuses any other with CUDA_ERROR_INVALID_VALUE before running anything
(measured on the H200: a vadd of 128 threads ran with 1 and 128, was refused with 2, 32, 64, 256
and 384; bench/results/static_launch_h200.json). torch's own launcher passes blocks of 32 x warps
threads, so it can launch a kernel whose threads this finds.
"""

from __future__ import annotations

import struct

from ..cubin_cache import _EHDR, elf_problem

_SHDR = struct.Struct("<IIQQQQIIQQ")  # name, type, flags, addr, offset, size, link, info, addralign, entsize
_EIATTR_REQNTID = 0x10
_EIFMT_SVAL = 4  # a sized value; the other formats (1: none, 2: a byte, 3: a half) fill a 4-byte entry


def _section(cubin: bytes, name: bytes) -> bytes | None:
    """The bytes of section ``name`` of an ELF that elf_problem passed, or None."""
    header = _EHDR.unpack_from(cubin, 16)
    shoff, shnum, shstrndx = header[5], header[11], header[12]
    headers = [_SHDR.unpack_from(cubin, shoff + 64 * i) for i in range(shnum)]
    names = headers[shstrndx][4]
    for h in headers:
        start = names + h[0]
        end = cubin.find(b"\0", start)
        if end >= 0 and cubin[start:end] == name and h[4] + h[5] <= len(cubin):
            return cubin[h[4]:h[4] + h[5]]
    return None


def required_threads(cubin: bytes, kernel: str) -> tuple[int, int, int] | None:
    """The block ``kernel`` of ``cubin`` was compiled for (EIATTR_REQNTID), or None where the cubin
    does not say (or says it in an entry this reader does not know: it stops there)."""
    if elf_problem(cubin) is not None:
        return None
    info = _section(cubin, b".nv.info." + kernel.encode())
    i = 0
    while info is not None and i + 4 <= len(info):
        fmt, attr = info[i], info[i + 1]
        if fmt == _EIFMT_SVAL:  # a 16-bit size, then that many bytes
            size = int.from_bytes(info[i + 2:i + 4], "little")
            if attr == _EIATTR_REQNTID and size == 12 and i + 16 <= len(info):
                x, y, z = struct.unpack_from("<III", info, i + 4)
                return (x, y, z)
            i += 4 + size
        elif fmt in (1, 2, 3):  # the value (if any) inside the 4-byte entry (seen in tileiras 13.4's cubins)
            i += 4
        else:
            return None
    return None


def warps_of(cubin: bytes, kernel: str) -> int | None:
    """The warps of ``kernel``'s block where it is a whole number of warps along x alone, else None."""
    t = required_threads(cubin, kernel)
    if t is None or t[1:] != (1, 1) or not 32 <= t[0] <= 1024 or t[0] % 32:
        return None
    return t[0] // 32


__all__ = ["required_threads", "warps_of"]
