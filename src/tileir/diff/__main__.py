"""``python -m tileir.diff``: the layer-2 device diff (see tileir.diff.run)."""

from __future__ import annotations

import argparse
import sys


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tileir.diff", description="layer 2: each op family on the GPU "
                                "against the host reference, with mutants that must fail it")
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run the diff and write the results")
    r.add_argument("--out", required=True, help="the results JSON")
    r.add_argument("--md", default=None, help="also write the markdown table here")
    r.add_argument("--families", default=None, help="comma-separated family names (default: every family)")
    r.add_argument("--mutants", action="store_true", help="also run every mutant of each family")
    r.add_argument("--opt-level", type=int, default=None, help="force tileiras --opt-level (default: its own, or "
                   "the level a known assembler defect needs: -O0 for a while loop, an alloca in a loop or a carry "
                   "passed to another)")
    r.add_argument("--arch", default=None, help="the target (default: the GPU's, else sm_90)")
    r.add_argument("--no-device", action="store_true", help="host reference and assembly only")
    sub.add_parser("list", help="the families, their tiers and their mutants")
    z = sub.add_parser("fuzz", help="random whole programs on the GPU against the host reference")
    z.add_argument("--programs", type=int, default=10000, help="programs to draw (default 10000)")
    z.add_argument("--seed", type=int, default=1, help="program i is drawn from seed + i")
    z.add_argument("--out", required=True, help="the campaign's results JSON")
    z.add_argument("--repro-dir", default=None, help="where reproducers go (default: beside --out, fuzz_repro/)")
    z.add_argument("--time-limit", type=float, default=360.0, help="seconds after which no new program (with "
                   "--mutants: no new mutant) starts")
    z.add_argument("--max-shrink", type=int, default=12, help="failures to shrink and classify")
    z.add_argument("--max-shrink-per-class", type=int, default=4,
                   help="failures of one class (status and lanes: exact, approx, stdout) to shrink")
    z.add_argument("--shrink-s", type=float, default=40.0, help="seconds one shrink may take")
    z.add_argument("--shrink-total-s", type=float, default=90.0, help="seconds all the shrinking may take")
    z.add_argument("--ops", default=None, help="comma-separated step kinds: draw only these (with loads and "
                   "stores), e.g. vstore,if,atomic")
    z.add_argument("--focus", default=None, help="comma-separated step kinds drawn 8x as often")
    z.add_argument("--gen-version", type=int, default=None, help="the generator's version (default: the newest); 2 "
                   "draws campaign 2's programs (bench/results/fuzz_h200.json) again, 1 campaign 1's "
                   "(bench/results/fuzz_campaign1_h200.json)")
    z.add_argument("--shrink-known", action="store_true", help="shrink failures with a known cause too (to "
                   "study an open one)")
    z.add_argument("--seeds", default=None, help="comma-separated program seeds to run (and shrink) instead of "
                   "--programs from --seed: a campaign's failures again")
    z.add_argument("--workers", type=int, default=None, help="compile processes (default: one a core; 0: none)")
    z.add_argument("--opt-level", type=int, default=None, help="force tileiras --opt-level (default: its own, "
                   "or the level a known assembler defect needs: -O0 for a program that keeps a while loop, an "
                   "alloca in a loop or a carry passed to another, the report's while-O0 / alloca-loop-O0 / "
                   "carry-swap-O0 workarounds, which a level forced here drops)")
    z.add_argument("--arch", default=None, help="the target (default: the GPU's, else sm_90)")
    z.add_argument("--device", choices=("gpu", "fake", "inprocess"), default="gpu",
                   help="gpu; fake / inprocess: the host reference answers (no GPU; for tests)")
    z.add_argument("--hang-s", type=float, default=None, help="seconds a program may run on the device before its "
                   "worker is killed and the program counted a device error (default 15)")
    z.add_argument("--mutants", action="store_true", help="the mutant check instead of a campaign")
    z.add_argument("--mutant-programs", type=int, default=200, help="programs drawn per mutant (--mutants)")
    z.add_argument("--only", default=None, help="comma-separated mutant names (--mutants)")
    rp = sub.add_parser("fuzz-repro", help="run fuzz reproducers again (one device for all) and classify them")
    rp.add_argument("file", nargs="+")
    rp.add_argument("--device", choices=("gpu", "fake", "inprocess"), default="gpu")
    rp.add_argument("--out", default=None, help="also write the results (a JSON list) here")
    fw = sub.add_parser("_fuzz_worker", help=argparse.SUPPRESS)
    fw.add_argument("fd", type=int)
    w = sub.add_parser("_worker", help=argparse.SUPPRESS)
    w.add_argument("jobs")
    w.add_argument("results")
    w.add_argument("--only", type=int, default=None)
    return p


def main(argv=None) -> int:
    a = build_parser().parse_args(argv)
    if a.cmd == "_worker":
        from .run import worker_main

        return worker_main(a.jobs, a.results, a.only)
    if a.cmd == "_fuzz_worker":
        from .fuzzrun import worker_main as fuzz_worker

        return fuzz_worker(a.fd)
    if a.cmd in ("fuzz", "fuzz-repro"):
        return _fuzz(a)
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


def profile_of(ops: str | None, focus: str | None, version: int | None = None):
    """The generator's profile for ``--ops`` / ``--focus`` (comma-separated step kinds) and
    ``--gen-version``."""
    from .fuzzspec import DEFAULT, GENERATOR, WEIGHTS, Profile

    def kinds(text):
        names = tuple(x.strip() for x in (text or "").split(",") if x.strip())
        bad = [n for n in names if n not in WEIGHTS]
        if bad:
            raise SystemExit(f"unknown step kind(s) {', '.join(bad)}; the kinds are {', '.join(sorted(WEIGHTS))}")
        return names

    only, foc = kinds(ops), kinds(focus)
    ver = GENERATOR if version is None else int(version)
    if not 1 <= ver <= GENERATOR:
        raise SystemExit(f"generator version {ver}: there are 1 to {GENERATOR}")
    return Profile(only=only, focus=foc, version=ver) if only or foc or ver != GENERATOR else DEFAULT


def _fuzz(a) -> int:
    import json
    import os

    from .fuzz import Campaign, mutant_check, rerun_reproducer, write_json

    log = lambda *x: print(*x, file=sys.stderr, flush=True)  # noqa: E731
    if a.cmd == "fuzz-repro":
        res = rerun_reproducer(a.file, a.device)
        print(json.dumps(res, indent=1, default=str))
        if a.out:
            write_json(a.out, {"tool": "python -m tileir.diff fuzz-repro", "results": res})
        return 0
    arch = a.arch
    if arch is None and a.device == "gpu":
        from ..assemble import gpu_name_of_device

        arch = gpu_name_of_device()
    arch = arch or "sm_90"
    if a.mutants:
        names = [x.strip() for x in a.only.split(",")] if a.only else None
        rep = mutant_check(a.mutant_programs, a.seed, arch, a.device, a.workers, names=names, log=log,
                           time_limit=a.time_limit)
        write_json(a.out, rep)
        log(json.dumps(rep["summary"]))
        return 0 if not rep["summary"]["not_found"] else 1
    repro = a.repro_dir or os.path.join(os.path.dirname(os.path.abspath(a.out)), "fuzz_repro")
    prof = profile_of(a.ops, a.focus, a.gen_version)
    seeds = [int(x) for x in a.seeds.split(",") if x.strip()] if a.seeds else None
    camp = Campaign(a.programs, a.seed, arch, a.opt_level, a.device, a.workers, a.time_limit, profile=prof, log=log,
                    seeds=seeds, **({"hang_s": a.hang_s} if a.hang_s else {}))
    import signal

    def stop(signum, frame):  # `timeout` sends SIGTERM: the report of what ran is still written
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, stop)
    rep = camp.run(repro, a.max_shrink, a.shrink_s, a.shrink_total_s, a.max_shrink_per_class, a.shrink_known)
    rep["profile"] = {"ops": prof.only, "focus": prof.focus} if prof.only or prof.focus else None
    write_json(a.out, rep)
    keys = ("programs", "recorded_share", "ran_on_device", "equal", "differ", "device_errors", "worker_errors",
            "assemble_errors", "host_errors", "failures", "failures_unexplained", "seconds", "throughput")
    log(json.dumps({k: rep[k] for k in keys}))
    return 0 if not rep["failures_unexplained"] and not rep["worker_errors"] else 1


if __name__ == "__main__":
    sys.exit(main())
