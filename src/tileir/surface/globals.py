"""Module globals and automatic allocations: d_global, global_ptrs, alloca_ptrs, visibility."""

from __future__ import annotations

from enum import Enum

from ..dev import dev, public
from ..values import Ptrs
from ._util import dname, refuse


class Visibility(Enum):
    """A global's symbol visibility (the Global record's field since bytecode 13.3). Private gives
    the symbol a LOCAL ELF binding in the cubin and a public one GLOBAL; the driver's module-global
    lookup finds both, so it changes no answer."""

    Public = "public"
    Private = "private"


Public = Visibility.Public
Private = Visibility.Private


def visibility_name(v: Visibility) -> str:
    """The dialect's spelling of a symbol visibility."""
    return Visibility(v).value


@public
def d_global(sym: str, d, values, align: int = 0, visibility: Visibility = Public, constant: bool = False) -> None:
    """Declare a statically allocated global ``sym`` holding ``values``, one element of ``d`` each,
    initialised when the module loads and kept across its launches (on the host reference: across
    runs of the same program, see ``tileir.families.globals.host_globals``). A record of the module, not
    an instruction: refused inside a d_range, d_loop, d_if or reduction, and refused twice.
    ``align`` in bytes (0: the default); ``constant`` is a promise nothing writes it (the recording
    refuses a store through its pointers)."""
    if not isinstance(visibility, Visibility):
        raise refuse(f"visibility {visibility!r}: Public or Private", "ti.Public or ti.Private")
    dev().t_global(sym, dname(d), list(values), align, visibility is Private, bool(constant))


@public
def global_ptrs(sym: str, d, shape) -> Ptrs:
    """The tile of ``shape`` every lane of which holds the address of global ``sym`` (declared by
    d_global, in format ``d``); element x of the global is ptr_offset's x from here."""
    return Ptrs(dev().t_get_global(sym, dname(d), list(shape)))


@public
def alloca_ptrs(d, num_elem: int, align: int, shape, shared: bool = False) -> Ptrs:
    """The tile of ``shape`` every lane of which holds the address of a fresh allocation of
    ``num_elem`` elements of ``d``, aligned to ``align`` bytes (a non-zero power of two, at least
    d's size). Scratch: it lives as long as the block (the host gives fresh zeros each time it runs;
    the device leaves it undefined). ``shared`` lets other tile threads use the address."""
    return Ptrs(dev().t_alloca(dname(d), num_elem, align, bool(shared), list(shape)))


__all__ = ["Visibility", "Public", "Private", "visibility_name", "d_global", "global_ptrs", "alloca_ptrs"]
