"""Rewrite the layer-1 golden bytes (tests/data/goldens/<name>.tileirbc, at bytecode 13.4) from
the writer, and remove those whose case is gone: ``python -m tests.layer1.regen``."""

from __future__ import annotations

from tileir.bytecode import encode_kernel

from .cases import CASES
from .tools import GOLDENS


def main() -> None:
    GOLDENS.mkdir(parents=True, exist_ok=True)
    names = set()
    changed = 0
    for c in CASES:
        data = encode_kernel(c.kernel)
        path = GOLDENS / f"{c.name}.tileirbc"
        names.add(path.name)
        if not path.exists() or path.read_bytes() != data:
            path.write_bytes(data)
            changed += 1
    stale = [p for p in GOLDENS.glob("*.tileirbc") if p.name not in names]
    for p in stale:
        p.unlink()
    print(f"{len(CASES)} goldens in {GOLDENS}: {changed} written, {len(stale)} stale removed")


if __name__ == "__main__":
    main()
