"""The bytecode versions the writer speaks, and the one it writes by default.

BYTECODE_MAJOR / BYTECODE_MINOR move together with the tileiras pin in pyproject.toml
(nvidia-cuda-tileiras==13.4.92, whose current version is 13.4; it still reads 13.1-13.3).
"""

from __future__ import annotations

from ..errors import TileirError

BYTECODE_MAJOR = 13
BYTECODE_MINOR = 4

V13_1 = (13, 1)
V13_2 = (13, 2)
V13_3 = (13, 3)
V13_4 = (13, 4)
VERSIONS = (V13_1, V13_2, V13_3, V13_4)
DEFAULT = (BYTECODE_MAJOR, BYTECODE_MINOR)


def bytecode_version() -> str:
    """The version written by default, as ``tileiras --list-versions`` spells it."""
    return f"{BYTECODE_MAJOR}.{BYTECODE_MINOR}"


def vstr(v) -> str:
    return f"{v[0]}.{v[1]}"


def parse_version(v) -> tuple:
    """``"13.3"``, ``(13, 3)`` or None (the default) as a version the writer speaks."""
    if v is None:
        return DEFAULT
    if isinstance(v, str):
        try:
            major, minor = (int(x) for x in v.split("."))
            v = (major, minor)
        except ValueError:
            raise TileirError(f"bytecode version {v!r} is not MAJOR.MINOR") from None
    v = tuple(v)
    if v not in VERSIONS:
        raise TileirError(f"bytecode version {vstr(v)} is not one the writer speaks; it writes "
                          + ", ".join(vstr(x) for x in VERSIONS))
    return v
