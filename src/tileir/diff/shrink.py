"""Shrinking a fuzz difference to a minimal program, and the reproducer file it is saved as.

The shrinker is delta debugging (Zeller's ddmin) over the description's step lists -- the body,
then every nested loop and if body -- followed by simplifications of what remains (one block,
no hints, smaller tiles and trip counts, plain inputs), each accepted only if the program still
fails THE SAME WAY (``same_failure``). Candidates are tested in batches: compiled in the process
pool, run on the device in one go, so a round costs one trip to the GPU worker. Every sub-list of
a body is a program (fuzzgen's lenient operands), so removal never needs repair.

A reproducer is a JSON file: the minimal description, how it failed, its classification
(classify.py), the recorded program and the lowered Tile IR as text. ``python -m tileir.diff
fuzz-repro FILE`` runs it again.
"""

from __future__ import annotations

import copy
import json
import os
import re
import time

from .fuzzgen import walk
from .fuzzknown import run_workarounds
from .fuzzrun import compile_task

FAILURES = ("differ", "device_error", "assemble_error", "host_error", "record_crash", "lower_crash")


class Tester:
    """Compiles descriptions and runs the ready ones on ``device``: ``outcomes(descs)`` answers one
    dict per description with its ``status`` (refused | assemble_error | host_error | ... | equal |
    differ | device_error), ``detail`` and ``verdict``."""

    __test__ = False  # a pytest collector would take the name for a test class

    def __init__(self, device, pool=None, arch: str = "sm_90", opt_level=None, mutant=None, assemble: bool = True):
        self.device, self.pool, self.arch, self.opt_level, self.mutant = device, pool, arch, opt_level, mutant
        self.assemble = assemble
        self.runs = 0

    def outcomes(self, descs: list) -> list:
        tasks = [{"index": i, "seed": d.get("seed", 0), "desc": d, "arch": self.arch, "opt_level": self.opt_level,
                  "mutant": self.mutant, "assemble": self.assemble} for i, d in enumerate(descs)]
        done = list(self.pool.map(compile_task, tasks)) if self.pool is not None and len(tasks) > 1 else \
            [compile_task(t) for t in tasks]
        ready = [c for c in done if c["status"] == "ready"]
        self.runs += len(descs)
        by_index = {r["index"]: r for r in (self.device.run(ready) if ready else [])}
        out = []
        ws = list(run_workarounds(self.opt_level, self.arch))  # the known causes' matchers read them
        for c in done:
            if c["status"] == "ready":
                r = by_index.get(c["index"], {"status": "device_error", "verdict": {"detail": "no result"}})
                v = r.get("verdict", {})
                out.append({"status": r["status"], "detail": v.get("detail"), "verdict": v, "workarounds": ws})
            else:
                out.append({"status": c["status"], "detail": c.get("detail"), "verdict": {}, "workarounds": ws})
        return out


def _norm(text) -> str:
    """A message with its numbers, addresses and paths blurred: one failure, however it is spelled."""
    t = str(text or "")
    t = re.sub(r"/tmp/\S+", "PATH", t)
    t = re.sub(r"0x[0-9a-fA-F]+|\d+", "N", t)
    return t[:160]


def failure_class(outcome: dict) -> tuple:
    """What a failure is, for telling one from another: its status and, for a difference, whether
    it is in exact lanes, approximate lanes or the printed text; for an error its blurred message."""
    st = outcome["status"]
    if st == "differ":
        regs = outcome.get("verdict", {}).get("regions", [])
        kinds = sorted({"stdout" if r.get("buf") == "stdout" else r.get("taint", "exact") for r in regs}) or ["assert"]
        return st, tuple(kinds)
    if st in ("equal", "refused"):
        return (st,)
    return st, _norm(outcome.get("detail"))


def same_failure(orig: dict, cand: dict) -> bool:
    a, b = failure_class(orig), failure_class(cand)
    if a[0] != b[0] or a[0] not in FAILURES:
        return False
    if a[0] == "differ":  # exact lanes that differ are at least as strong as approximate ones
        want = set(a[1]) | ({"exact"} if "approx" in a[1] else set())
        return bool(want & set(b[1]))
    return a == b


_PLAIN = {"load", "store", "const", "iota"}
_KEYS = ("f", "kind", "mode", "to", "fmt", "acc", "rnd", "pred", "alt", "split", "signed")


def core_steps(desc: dict) -> frozenset:
    """What a program does beyond moving data: (op, its distinguishing fields) per step. A failure
    whose program holds every core step of an already shrunk one is probably the same cause."""
    out = set()
    for s in walk(desc["body"]):
        if s["op"] not in _PLAIN:
            out.add((s["op"],) + tuple(f"{k}={s[k]}" for k in _KEYS if k in s))
    return frozenset(out)


# ---- delta debugging ---------------------------------------------------------------------------------


def _split(items: list, n: int) -> list:
    k, r = divmod(len(items), n)
    out, at = [], 0
    for i in range(n):
        size = k + (1 if i < r else 0)
        out.append(items[at: at + size])
        at += size
    return [c for c in out if c]


def ddmin(items: list, fails_many) -> list:
    """A 1-minimal sub-list of ``items`` that still fails: ``fails_many(candidates)`` answers a
    bool per candidate list (tested as one batch)."""
    n = 2
    while len(items) >= 2:
        chunks = _split(items, n)
        complements = [[x for j, c in enumerate(chunks) if j != i for x in c] for i in range(len(chunks))]
        cands = [(c, 2) for c in chunks] + [(c, max(n - 1, 2)) for c in complements]
        got = fails_many([c for c, _ in cands])
        hit = next((cn for cn, ok in zip(cands, got) if ok), None)
        if hit is not None:
            items, n = hit
            continue
        if n >= len(items):
            break
        n = min(len(items), 2 * n)
    if len(items) == 1 and fails_many([[]])[0]:
        return []
    return items


class Shrinker:
    """Reduces a failing description with a ``Tester``, within ``budget_s`` seconds."""

    def __init__(self, tester: Tester, budget_s: float = 120.0, log=None):
        self.tester, self.budget_s, self.log = tester, budget_s, log or (lambda *a: None)
        self.rounds = 0

    def shrink(self, desc: dict, outcome: dict) -> dict:
        self.t0 = time.time()
        self.orig = outcome
        best = copy.deepcopy(desc)
        for _ in range(4):  # until a pass changes nothing
            before = json.dumps(best, sort_keys=True)
            best = self._lists(best)
            best = self._simplify(best)
            if json.dumps(best, sort_keys=True) == before or self._late():
                break
        return best

    def _late(self) -> bool:
        return time.time() - self.t0 > self.budget_s

    def _fails(self, descs: list) -> list:
        if self._late():
            return [False] * len(descs)
        self.rounds += 1
        got = self.tester.outcomes(descs)
        return [same_failure(self.orig, g) for g in got]

    def _lists(self, desc: dict) -> dict:
        """ddmin over the body, then over every nested body, outermost first."""
        paths: list[tuple] = [()]  # each a path of (step index, "body" | "then" | "else") into the description
        done = []
        while paths:
            path = paths.pop(0)
            steps = _get_list(desc, path)
            if steps is None:
                continue

            def fails_many(cands, path=path, desc=desc):
                return self._fails([_with_list(desc, path, c) for c in cands])

            kept = ddmin(list(steps), fails_many)
            desc = _with_list(desc, path, kept)
            done.append(path)
            for i, s in enumerate(kept):
                for key in ("body", "then", "else"):
                    if key in s and s[key]:
                        paths.append(path + ((i, key),))
        return desc

    def _simplify(self, desc: dict) -> dict:
        """One change at a time from a list of simpler variants, batch-tested, first that fails kept."""
        for _ in range(12):
            cands = list(_variants(desc))
            if not cands or self._late():
                return desc
            got = self._fails(cands)
            hit = next((c for c, ok in zip(cands, got) if ok), None)
            if hit is None:
                return desc
            desc = hit
        return desc


def _get_list(desc: dict, path: tuple):
    steps = desc["body"]
    for i, key in path:
        if i >= len(steps) or key not in steps[i]:
            return None
        steps = steps[i][key]
    return steps


def _with_list(desc: dict, path: tuple, new: list) -> dict:
    d = copy.deepcopy(desc)
    if not path:
        d["body"] = copy.deepcopy(new)
        return d
    steps = d["body"]
    for i, key in path[:-1]:
        steps = steps[i][key]
    i, key = path[-1]
    steps[i][key] = copy.deepcopy(new)
    return d


def _halve(shape: list) -> list | None:
    if not shape or max(shape) <= 1:
        return None
    k = shape.index(max(shape))
    return shape[:k] + [shape[k] // 2] + shape[k + 1:]


def _lists_of(desc: dict, path=()):
    """(path, steps) of every step list of ``desc``, outermost first."""
    steps = _get_list(desc, path)
    yield path, steps
    for i, s in enumerate(steps):
        for key in ("body", "then", "else"):
            if key in s:
                yield from _lists_of(desc, path + ((i, key),))


def _variants(desc: dict):
    """Descriptions one simplification away from ``desc``, the boldest first: a loop or an if
    replaced by its body, one block, no hints, no unused globals, then one step made plainer."""
    for path, steps in list(_lists_of(desc)):
        for i, s in enumerate(steps):
            for key in ("body", "then", "else"):
                if s.get(key):
                    yield _with_list(desc, path, steps[:i] + s[key] + steps[i + 1:])
    if desc["grid"][0] > 1:
        yield dict(copy.deepcopy(desc), grid=[1])
    if desc.get("warps"):
        yield dict(copy.deepcopy(desc), warps=0)
    used = {s.get("sym") for s in walk(desc["body"])}
    if any(g["sym"] not in used for g in desc.get("globals", ())):
        yield dict(copy.deepcopy(desc), globals=[g for g in desc["globals"] if g["sym"] in used])
    for n, s in enumerate(walk(desc["body"])):
        for change in _step_variants(s):
            d = copy.deepcopy(desc)
            target = list(walk(d["body"]))[n]
            target.update(change)
            yield d


def _step_variants(s: dict):
    op = s["op"]
    if op == "load":
        if s.get("dist") != "small":
            yield {"dist": "small"}
        if s.get("mask"):
            yield {"mask": False}
        if s.get("moving"):
            yield {"moving": False}
    if op in ("for", "while") and s.get("trips", 0) > 1:
        yield {"trips": 1}
    if op == "softmax":
        if s["trips"] > 1:
            yield {"trips": 1}
        for k in ("M", "N", "D"):
            if s[k] > 4:
                yield {k: s[k] // 2}
    if op == "bin" and s.get("rnd", "nearest_even") != "nearest_even":
        yield {"rnd": "nearest_even"}
    if op == "mma" and s.get("split"):
        yield {"split": False}
    if op == "store" and s.get("mask"):
        yield {"mask": False}


# ---- the reproducer ------------------------------------------------------------------------------------


def program_text(desc: dict) -> dict:
    """The recorded program and the lowered Tile IR of ``desc``, as text (empty where it fails)."""
    out = {"recorded": "", "lowered": ""}
    try:
        from .. import lower, render_kernel
        from .fuzzbuild import build

        b = build(desc)
        out["recorded"] = b.prog.dump()
        out["lowered"] = render_kernel(lower(b.prog))
    except Exception as e:
        out["error"] = f"{type(e).__name__}: {e}"[:300]
    return out


def write_reproducer(path: str, desc: dict, outcome: dict, classification: dict | None = None, **extra) -> str:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    doc = {"tool": "tileir fuzz reproducer", "rerun": f"PYTHONPATH=src python -m tileir.diff fuzz-repro {path}",
           "status": outcome["status"], "detail": outcome.get("detail"),
           "verdict": {k: v for k, v in (outcome.get("verdict") or {}).items() if k != "first"},
           "classification": classification, "desc": desc, "steps": sum(1 for _ in walk(desc["body"])),
           **({"workarounds": outcome["workarounds"]} if "workarounds" in outcome else {}), **extra,
           **program_text(desc)}
    with open(path, "w") as f:
        json.dump(doc, f, indent=1, default=str)
        f.write("\n")
    return path


def read_reproducer(path: str) -> dict:
    with open(path) as f:
        return json.load(f)


__all__ = ["Tester", "Shrinker", "ddmin", "core_steps", "same_failure", "failure_class", "write_reproducer",
           "read_reproducer", "program_text", "FAILURES"]
