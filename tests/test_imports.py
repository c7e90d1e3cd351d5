"""No import cycles among tileir's modules: every import of a tileir module -- at module level or
inside a function, where an import cannot hide a cycle from this test -- goes one way.

The graph is read from the source (ast), so it holds every import a module can make, not only those
one run happens to reach. Importing ``a.b.c`` imports the packages ``a`` and ``a.b`` first, so an
edge to a module is an edge to each package above it too (except the importer's own packages, which
are already loading, and the root ``tileir``). Imports under ``if TYPE_CHECKING:`` never run.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

# run-time edges that close a cycle and are known; each is a debt, not a design
KNOWN: set = set()


def _modules() -> dict[str, tuple[Path, bool]]:
    out = {}
    for p in sorted((SRC / "tileir").rglob("*.py")):
        parts = list(p.relative_to(SRC).with_suffix("").parts)
        pkg = parts[-1] == "__init__"
        out[".".join(parts[:-1] if pkg else parts)] = (p, pkg)
    return out


def _type_checking(node) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _imports(tree, name: str, pkg: bool, mods) -> set[str]:
    """The tileir modules ``tree`` imports, wherever in it."""
    here = name.split(".") if pkg else name.split(".")[:-1]
    found = set()

    def visit(node):
        for ch in ast.iter_child_nodes(node):
            if isinstance(ch, ast.If) and _type_checking(ch):
                for sub in ch.orelse:
                    visit_one(sub)
                continue
            visit_one(ch)

    def visit_one(ch):
        if isinstance(ch, ast.ImportFrom):
            base = ".".join(here[:len(here) - ch.level + 1] + ([ch.module] if ch.module else [])) if ch.level \
                else ch.module or ""
            for a in ch.names:
                sub = f"{base}.{a.name}"
                found.add(sub if sub in mods else base)
        elif isinstance(ch, ast.Import):
            found.update(a.name for a in ch.names)
        visit(ch)

    visit(tree)
    out = set()
    for target in found:
        parts = target.split(".")
        for i in range(2, len(parts) + 1):  # the module and every package above it but tileir
            q = ".".join(parts[:i])
            if q in mods and q != name and not name.startswith(q + "."):
                out.add(q)
    return out


def graph() -> dict[str, set[str]]:
    mods = _modules()
    return {m: _imports(ast.parse(p.read_text()), m, pkg, mods) for m, (p, pkg) in mods.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict = {}
    low: dict = {}
    stack: list = []
    on: set = set()
    out = []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_the_graph_is_read():
    g = graph()
    assert len(g) > 100
    # a few edges every version of the package has: the test fails if it stops seeing imports
    assert "tileir.autotune" in g["tileir.kernel"]
    assert "tileir.lower.core" in g["tileir.families.arith"]
    assert "tileir.render_float" in g["tileir.render"]
    assert "tileir.ir" not in g["tileir.instrs"]  # under TYPE_CHECKING only


def test_no_import_cycles():
    g = graph()
    for a, b in KNOWN:
        assert b in g[a], f"{a} no longer imports {b}: take it out of KNOWN"
        g[a] = g[a] - {b}
    found = cycles(g)
    assert not found, "import cycles (an import inside a function counts too):\n" + "\n".join(
        " <-> ".join(c) for c in found)


def test_a_cycle_is_seen():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
