"""The on/off switches a call reads from the environment (``TILEIR_INTERPRET``,
``TILEIR_CHECK_BOUNDS``): unset, empty or ``0`` is off, anything else on.

A leaf: ``kernel`` reads them on every call and ``check`` refuses to compare the host reference with
itself, and neither has to import the other for it.
"""

from __future__ import annotations

import os

# os.environ.get costs ~1 us (it encodes the key and decodes the value), and every call asks two
# switches; CPython keeps the environment's bytes in os.environ._data, which it updates on every
# os.environ change (monkeypatch.setenv included)
_ENV = getattr(os.environ, "_data", None)

OFF = (None, b"", b"0")  # the values of FAST_ENV that leave a switch off
# the environment as bytes (POSIX CPython), for a hot path to read a switch inline; else None
FAST_ENV = _ENV if isinstance(_ENV, dict) and os.name == "posix" else None


def switch(name: str) -> bool:
    """Whether the environment turns ``name`` on."""
    if FAST_ENV is not None:
        return FAST_ENV.get(name.encode()) not in OFF
    return os.environ.get(name, "") not in ("", "0")


def checking_bounds() -> bool:
    """Whether calls run the bounds-checked variant by default (``TILEIR_CHECK_BOUNDS=1``)."""
    return switch("TILEIR_CHECK_BOUNDS")


def interpreting() -> bool:
    """Whether plain kernel calls run on the host reference (``TILEIR_INTERPRET=1``)."""
    return switch("TILEIR_INTERPRET")


__all__ = ["FAST_ENV", "OFF", "switch", "checking_bounds", "interpreting"]
