"""Layer 3: the ledger of every cuda_tile operation and attribute the writer speaks for, each
mapped to the layer-1 goldens that cover it and to the layer-2 device-diff family that checks it
(``layer2``; tileir/diff/families.py keeps that table), or to a named exemption with its reason.
It lives with the verification layer (``tileir.diff``), which imports the runtime; the runtime
never imports it (``tileir ledger`` loads it when asked).

Three files, shipped with the package (``tileir/data/ledger/``) so that ``tileir ledger`` runs
anywhere: ``dialect.txt`` (the dialect's operations and their attributes, from its generated
encoder tables), ``exemptions.txt`` (entry | reason), and ``coverage.txt`` (golden -> the entries
it covers, written with the goldens and checked by tests/test_ledger.py). ``tileir ledger`` prints
the coverage and exits non-zero when an entry is neither covered nor exempt.

Every function takes ``root``: None for the shipped files, a folder holding the three, or a
checkout of the repository (its ``src/tileir/data/ledger``).
"""

from __future__ import annotations

from pathlib import Path

SHIPPED = Path(__file__).resolve().parent.parent / "data" / "ledger"


def ledger_dir(root=None) -> Path:
    """The folder the three ledger files are read from (see the module docstring)."""
    if root is None:
        return SHIPPED
    root = Path(root)
    if (root / "dialect.txt").exists():
        return root
    in_checkout = root / "src" / "tileir" / "data" / "ledger"
    return in_checkout if in_checkout.exists() else root

# our table's attribute names -> the dialect's field names
ALIASES = {"rounding": "rounding_mode", "memory_semantics": "memory_ordering_semantics",
           "hints": "optimization_hints", "global": "global_", "ordering": "comparison_ordering",
           "visibility": "symbol_visibility", "str": "str"}
CMP_ALIASES = {"predicate": "comparison_predicate"}


def coverage_of(kernel) -> set:
    """The ledger entries one golden kernel covers: each operation it holds, and each attribute or
    optional operand it sets to something other than the default."""
    from ..dialect import BY_NAME
    from ..generic import to_generic

    out = set()

    def walk(g):
        d = BY_NAME[g.name]
        out.add(g.name)
        defaults = {a.name: a.default for a in d.attrs}
        for name, value in g.attrs.items():
            if value is None or value is False or value == () or value == defaults.get(name, object()):
                continue
            field = CMP_ALIASES.get(name, name) if g.name in ("cmpf", "cmpi") else name
            field = name if g.name == "divi" else ALIASES.get(field, field)  # divi's field is "rounding"
            out.add(f"{g.name}.{field}")
        for name, value in g.operands.items():
            if value is not None and any(o == name + "?" for o in d.operands):
                out.add(f"{g.name}.{name}?")
        for r in g.regions:
            for x in r.ops:
                walk(x)

    for ins in kernel.body:
        walk(to_generic(ins))
    return out


def dialect_entries(root=None) -> list:
    """(entry, since) for every operation and attribute of dialect.txt."""
    rows = []
    for line in (ledger_dir(root) / "dialect.txt").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, _opcode, since, *fields = line.split()
        rows.append((name, since))
        for f in fields:
            fname, _, fsince = f.partition("@")
            rows.append((f"{name}.{fname}", fsince or since))
    return rows


def exemptions(root=None) -> dict:
    out = {}
    for line in (ledger_dir(root) / "exemptions.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            entry, _, reason = line.partition("|")
            out[entry.strip()] = reason.strip()
    return out


def coverage(root=None) -> dict:
    """entry -> the goldens that cover it (coverage.txt)."""
    out: dict = {}
    path = ledger_dir(root) / "coverage.txt"
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            golden, _, entries = line.partition(":")
            for e in entries.split():
                out.setdefault(e, []).append(golden.strip())
    return out


def report(root=None) -> tuple:
    """(rows, gaps): each row (entry, since, 'golden'|'exempt'|'GAP', detail)."""
    cov, ex = coverage(root), exemptions(root)
    rows, gaps = [], []
    for entry, since in dialect_entries(root):
        op = entry.partition(".")[0]
        if entry not in cov and entry not in ex and op in ex and "." in entry:
            ex = {**ex, entry: f"(as {op}) {ex[op]}"}
        if entry in cov:
            rows.append((entry, since, "golden", ", ".join(sorted(cov[entry])[:3])))
        elif entry in ex:
            rows.append((entry, since, "exempt", ex[entry]))
        else:
            rows.append((entry, since, "GAP", "neither a golden nor a named exemption"))
            gaps.append(entry)
    return rows, gaps


def layer2(root=None) -> tuple:
    """The layer-2 column (the device diff): (entry -> 'diff FAMILY' | 'exempt: REASON' | 'GAP', layer-2 gaps).
    Each operation maps to the device-diff family that checks it or to a named exemption, from the
    table in tileir/diff/families.py; an attribute is covered as its operation is."""
    from .families import ledger_layer2

    table = ledger_layer2()
    col, gaps = {}, []
    for entry, _since in dialect_entries(root):
        op = entry.partition(".")[0]
        got = table.get(op)
        if got is None:
            col[entry] = "GAP"
            if "." not in entry:
                gaps.append(entry)
        else:
            text = f"diff {got[1]}" if got[0] == "family" else f"exempt: {got[1]}"
            col[entry] = text if "." not in entry else f"(as {op}) {text.split(':')[0]}"
    return col, gaps


def main(root=None, quiet: bool = False) -> int:
    rows, gaps = report(root)
    col, gaps2 = layer2(root)
    ops = [r for r in rows if "." not in r[0]]
    attrs = [r for r in rows if "." in r[0]]
    if not quiet:
        for entry, since, state, detail in rows:
            print(f"{entry:<48} {since:<8} {state:<7} {detail}  | layer 2: {col.get(entry, 'GAP')}")
        print()
    for label, group in (("operations", ops), ("attributes", attrs)):
        n = {s: sum(1 for r in group if r[2] == s) for s in ("golden", "exempt", "GAP")}
        print(f"{label}: {len(group)} in the dialect; {n['golden']} covered by goldens, {n['exempt']} exempt "
              f"with a reason, {n['GAP']} gaps")
    n2 = {k: sum(1 for r in ops if col.get(r[0], "GAP").startswith(k)) for k in ("diff", "exempt", "GAP")}
    print(f"layer 2: {len(ops)} operations; {n2['diff']} checked by a device-diff family, {n2['exempt']} exempt "
          f"with a reason, {n2['GAP']} gaps")
    if gaps:
        print("gaps:", " ".join(gaps))
    if gaps2:
        print("layer-2 gaps:", " ".join(gaps2))
    return 1 if gaps or gaps2 else 0
