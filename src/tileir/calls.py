"""What a kernel called and what each instruction came from: the spec's trace_calls and Owner,
as text a user reads next to the kernel's source.

``trace_calls(prog)`` is the tree of the public calls the kernel made (the library's calls on its
behalf, like idx_mul inside tile_at, are not nodes of their own; the calls a kernel makes inside a
d_range or a reduction body are children of that call). ``owners_text(kernel, prog)`` lists every
lowered instruction with the program operation it came from and the kernel line that asked.
"""

from __future__ import annotations

from . import ir
from .prog import TileProg


def trace_calls(prog: TileProg) -> list:
    """The kernel's own calls, as a tree of CallNode (name, operation range, children, loc)."""
    return prog.calls


def calls_text(prog: TileProg) -> str:
    lines = []

    def go(nodes, ind):
        for n in nodes:
            ops = f"op {n.first_op}" if n.last_op <= n.first_op else f"ops {n.first_op}-{n.last_op}"
            if n.last_op < n.first_op:
                ops = "no op"
            lines.append(f"{ind}{n.name:<{max(1, 24 - len(ind))}} {ops:<12} {n.loc}")
            go(n.children, ind + "  ")

    go(prog.calls, "")
    return "\n".join(lines) + "\n"


def _issuer(nodes, op: int):
    """The innermost call of the kernel's whose operations include ``op``."""
    for n in nodes:
        if n.first_op <= op <= n.last_op:
            return _issuer(n.children, op) or n
    return None


def owners_text(kernel: ir.Kernel, prog: TileProg) -> str:
    """One line an instruction: its kind, the operation it came from, and the kernel's call."""
    kinds = {op.num: op.kind for op in prog.walk()}
    lines = []

    def go(body, owners, ind):
        for ins, own in zip(body, owners):
            node = _issuer(prog.calls, own.op)
            call = f"{node.name} at {node.loc}" if node is not None else "(the kernel's entry)"
            lines.append(f"{ind}{type(ins).__name__:<{max(1, 22 - len(ind))}} op {own.op:<4} "
                         f"{kinds.get(own.op, ''):<14} {call}")
            regions = _regions(ins)
            for r_body, r_owners in zip(regions, own.inner):
                go(r_body, r_owners, ind + "  ")

    go(kernel.body, kernel.owners, "")
    return "\n".join(lines) + "\n"


def _regions(ins) -> list:
    if isinstance(ins, ir.IfElse):
        return [ins.on_true, ins.on_false]
    body = getattr(ins, "body", None)
    return [body] if body is not None else []
