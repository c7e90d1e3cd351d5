"""The package type-checks, for tileir and for its users (the package ships py.typed).

One mypy run, configured by ``[tool.mypy]`` in pyproject.toml, over the whole package (its
``files``: every module under src/tileir), every script under examples/ and two programs of a
user's: the package, the examples and tests/typecheck/user_program.py, written the way the
tutorials write kernels, must have no error; tests/typecheck/user_mistakes.py must have exactly
the errors its ``# E: <code>`` comments name, on those lines.

Mutants it kills: a public function annotated to answer the wrong type (``tileir.ops.softmax ->
int``, ``Tile.__add__ -> Idx``, ``KernelFn.program -> Kernel``: user_program.py fails); a type
error in a checked module (an ``int`` returned where ``-> str`` is declared; a KernelFn method
declared to answer what its body does not); ``@ti.kernel`` erasing the function to Any (its
overloads in tileir/kernel.py dropped: ``vadd.run_hots`` goes unreported); KernelFn's methods
unannotated (``vadd.mlir(256)``, ``run_host(..., grid=4)`` and a use of the None a call answers go
unreported); the kernel-body functions erased to Any (``dev.public`` untyped: ``wrong: int =
ti.load_cell(a)`` unreported); the module ``__getattr__`` of tileir visible to type checkers (every
misspelt ``ti.laod_cell`` an Any); an example whose code does not type-check; and the typed
``kernel`` signature drifting from the real one (test_kernel_overloads_mirror_kernel). Skipped
where mypy is not installed (it is in the ``test`` extra)."""

from __future__ import annotations

import ast
import inspect
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = ROOT / "tests" / "typecheck"
ERROR = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+): error: (?P<msg>.*?)(?:  \[(?P<code>[a-z-]+)\])?$")
EXPECTED = re.compile(r"#\s*E:\s*(?P<code>[a-z-]+)")


def _configured_files() -> list[str]:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        tomllib = pytest.importorskip("tomli")
    with open(ROOT / "pyproject.toml", "rb") as f:
        return list(tomllib.load(f)["tool"]["mypy"]["files"])


def _expected(path: Path) -> set[tuple[int, str]]:
    return {(i, m["code"]) for i, line in enumerate(path.read_text().splitlines(), 1)
            for m in [EXPECTED.search(line)] if m}


def test_public_surface_and_user_programs_type_check(tmp_path):
    pytest.importorskip("mypy.api")
    program, mistakes = PROGRAMS / "user_program.py", PROGRAMS / "user_mistakes.py"
    examples = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "examples").glob("*.py"))
    assert examples, "no examples found"
    args = [*_configured_files(), *examples, str(program.relative_to(ROOT)), str(mistakes.relative_to(ROOT))]
    t0 = time.monotonic()
    # in a subprocess, from the repository root (where pyproject.toml configures it); a fresh
    # cache in tmp_path: a shared one would race with another checkout's run
    run = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "mypy_cache"),
                          "--no-error-summary", "--show-error-codes", "--no-pretty", *args],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    took = time.monotonic() - t0
    assert run.returncode in (0, 1), f"mypy crashed ({run.returncode}):\n{run.stdout}\n{run.stderr}"
    found: dict[str, set[tuple[int, str]]] = {}
    lines = []
    for line in run.stdout.splitlines():
        m = ERROR.match(line)
        if m:
            found.setdefault(Path(m["path"]).as_posix(), set()).add((int(m["line"]), m["code"] or "misc"))
            lines.append(line)
    mistakes_key = mistakes.relative_to(ROOT).as_posix()
    wanted = _expected(mistakes)
    got = found.pop(mistakes_key, set())
    others = [line for line in lines if not line.startswith(mistakes_key)]
    assert not others, "mypy errors in the package, the examples or the user program:\n" + "\n".join(others)
    assert got == wanted, (f"user_mistakes.py: mypy missed {sorted(wanted - got)} and reported "
                           f"{sorted(got - wanted)} unexpectedly:\n" + "\n".join(lines))
    assert took < 300, f"mypy took {took:.0f} s"


def test_kernel_overloads_mirror_kernel():
    """The signatures a type checker sees for ``tileir.kernel`` (the overloads of
    ``tileir.kernel.kernel``, which tileir re-exports) take exactly the parameters the real
    decorator takes, in its order: mypy holds each overload's types to the implementation's, but
    not an overload that leaves a parameter out."""
    import tileir
    from tileir.kernel import kernel as real

    assert tileir.kernel is real, "tileir.kernel is the typed decorator of tileir/kernel.py"
    init = ast.parse((ROOT / "src" / "tileir" / "__init__.py").read_text())
    assert not [node for node in ast.walk(init) if isinstance(node, ast.FunctionDef) and node.name == "kernel"], \
        "a second signature of kernel in tileir/__init__.py, which would hide the one in tileir/kernel.py"
    tree = ast.parse((ROOT / "src" / "tileir" / "kernel.py").read_text())
    defs = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "kernel"]
    overloads = [d for d in defs if any(ast.unparse(dec).split(".")[-1] == "overload" for dec in d.decorator_list)]
    assert len(defs) == 3 and len(overloads) == 2, "two overloads and their implementation"
    want = [(p.name, p.kind) for p in inspect.signature(real).parameters.values()]
    for stub in defs:
        a = stub.args
        got = [(x.arg, inspect.Parameter.POSITIONAL_ONLY) for x in a.posonlyargs]
        got += [(x.arg, inspect.Parameter.POSITIONAL_OR_KEYWORD) for x in a.args]
        got += [(x.arg, inspect.Parameter.KEYWORD_ONLY) for x in a.kwonlyargs]
        assert got == want, f"line {stub.lineno}: {got} != {want}"
