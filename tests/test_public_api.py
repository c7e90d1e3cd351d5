"""``tileir.__all__`` is deliberate: every name in it resolves, none is something a module imported
for itself (a stdlib or typing name, a module), every public name of the spec is in it, and
nothing public sits at the top level without being in it."""

import __future__

import builtins
import dataclasses
import enum
import functools
import inspect
import typing
from pathlib import Path

import tileir

SPEC_NAMES = set((Path(__file__).parent / "data" / "spec_names.txt").read_text().split())
# what a module's own imports would leak: the names of the stdlib modules a tileir module imports
LEAK_SOURCES = (builtins, typing, dataclasses, enum, functools, __future__)


def test_every_name_resolves():
    assert len(tileir.__all__) == len(set(tileir.__all__)), "a name is listed twice"
    for name in tileir.__all__:
        assert getattr(tileir, name) is not None or name in SPEC_NAMES, name


def test_no_name_is_a_leak():
    for name in tileir.__all__:
        obj = getattr(tileir, name)
        assert not inspect.ismodule(obj), f"{name} is a module"
        for src in LEAK_SOURCES:
            # tileir's own abs / max / min / pow / set shadow the builtins of those names: that is
            # the spec's choice, and they are tileir functions, not the builtins themselves
            assert getattr(src, name, object()) is not obj, f"{name} is {src.__name__}.{name}"
        if name in SPEC_NAMES:
            continue  # the spec's type aliases (Hints = list ...) are the spec's to name
        module = getattr(obj, "__module__", None)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert module and module.startswith("tileir"), f"{name} comes from {module}"
    for leak in ("annotations", "dataclass", "field", "TYPE_CHECKING", "Union", "Generic", "TypeVar", "Enum",
                 "builtins", "enum", "math", "np"):
        assert leak not in tileir.__all__ and not hasattr(tileir, leak), leak


def test_every_spec_name_is_public():
    top = {n for n in SPEC_NAMES if not hasattr(tileir.Dev, n) or hasattr(tileir, n)}
    missing = sorted(top - set(tileir.__all__))
    assert not missing, f"spec names missing from tileir.__all__: {missing}"


def test_nothing_public_is_left_out_of_all():
    """A name at the top level is in __all__, a submodule, or private: adding one is a decision."""
    stray = [n for n in vars(tileir) if not n.startswith("_") and n not in tileir.__all__
             and not inspect.ismodule(getattr(tileir, n))]
    assert not stray, f"public names not in tileir.__all__: {stray}"


def test_the_user_facing_api_is_there():
    for name in ("kernel", "KernelFn", "trace_kernel", "cdiv", "In", "Out", "Shared", "Whole", "cells", "ByPtr",
                 "ByValue", "F32", "BF16", "I8", "TileirError", "Kernel", "Dev", "rint", "xori", "full", "zeros"):
        assert name in tileir.__all__, name


def test_the_lowered_types_live_in_ir():
    from tileir import ir

    for name in ir.INSTR_KINDS:
        assert getattr(ir, name.__name__ if isinstance(name, type) else name) is not None
    for name in ("INSTR_KINDS", "KParam", "Global"):
        assert hasattr(ir, name) and name not in tileir.__all__


def test_help_of_kernel_is_its_own():
    """help(tileir.kernel) explains the decorator itself (tileir.kernel is the function, which hides
    the module of that name, so pointing at the module's docstring helps nobody)."""
    doc = tileir.kernel.__doc__
    assert "module docstring" not in doc
    assert "keyword-only" in doc and "configuration" in doc and "grid" in doc


def test_star_import_gives_all_and_only_all():
    ns: dict = {}
    exec("from tileir import *", ns)
    assert set(ns) - {"__builtins__"} == set(tileir.__all__)


def test_py_typed_is_shipped():
    assert (Path(tileir.__file__).parent / "py.typed").exists()
