"""The one exception tileir raises for a program, a setting or a device it refuses."""

from __future__ import annotations


class TileirError(Exception):
    """A refusal that says what went wrong and what to write instead.

    Recording-time refusals name the kernel and the number of the operation about to be
    recorded (``kernel 'vadd', op 7 (store): ...``); assembler and driver failures name the
    kernel and the tool's own words.
    """

    def __init__(self, message: str, *, kernel: str | None = None, op: int | None = None,
                 what: str | None = None, fix: str | None = None):
        self.kernel = kernel
        self.op = op
        self.what = what
        self.fix = fix
        parts = []
        if kernel is not None:
            where = f"kernel '{kernel}'"
            if op is not None:
                where += f", op {op}"
                if what:
                    where += f" ({what})"
            elif what:
                where += f" ({what})"
            parts.append(where + ": ")
        parts.append(message)
        if fix:
            sep = "" if message.rstrip().endswith((".", "!", "?", ":")) else "."
            parts.append(f"{sep} Write instead: {fix}")
        super().__init__("".join(parts))
