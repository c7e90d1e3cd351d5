"""``python -m tileir.diff``: the layer-2 device diff (see tileir.diff.run)."""

from __future__ import annotations

import argparse
import sys


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m tileir.diff", description="layer 2: each op family on the GPU "
                                "against the host reference, with mutants that must fail it")
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run the diff and write the results")
    r.add_argument("--out", required=True, help="the results JSON")
    r.add_argument("--md", default=None, help="also write the markdown table here")
    r.add_argument("--families", default=None, help="comma-separated family names (default: every family)")
    r.add_argument("--mutants", action="store_true", help="also run every mutant of each family")
    r.add_argument("--opt-level", type=int, default=None, help="force tileiras --opt-level (default: its own)")
    r.add_argument("--arch", default=None, help="the target (default: the GPU's, else sm_90)")
    r.add_argument("--no-device", action="store_true", help="host reference and assembly only")
    sub.add_parser("list", help="the families, their tiers and their mutants")
    w = sub.add_parser("_worker", help=argparse.SUPPRESS)
    w.add_argument("jobs")
    w.add_argument("results")
    w.add_argument("--only", type=int, default=None)
    a = p.parse_args(argv)
    if a.cmd == "_worker":
        from .run import worker_main

        return worker_main(a.jobs, a.results, a.only)
    if a.cmd == "list":
        from .families import families

        for f in families().values():
            muts = ", ".join(m.name for m in f.mutants)
            print(f"{f.name:15s} {f.tier:17s} {len(f.cases):2d} case(s)  mutants: {muts}")
        return 0
    from .run import run

    names = [x.strip() for x in a.families.split(",")] if a.families else None
    report = run(names, a.mutants, a.out, a.md, a.opt_level, a.arch, "none" if a.no_device else "auto",
                 log=lambda *x: print(*x, file=sys.stderr))
    bad = [f["family"] for f in report["families"] if f.get("passed") is False]
    return 1 if bad or report["summary"]["proves_nothing"] and a.mutants else 0


if __name__ == "__main__":
    sys.exit(main())
