"""The device fuzzer's campaign: random whole programs on the GPU against the host
reference, every difference shrunk, saved and classified.

    python -m tileir.diff fuzz --programs 10000 --seed 1 --out bench/results/fuzz_h200.json

Shape of a campaign: a process pool (one process a CPU core) draws each program from
``seed + index``, records, lowers, encodes and assembles it (tileiras) and runs the host
reference; the ready programs go to the GPU worker (fuzzrun.py) in batches while the pool goes
on, so assembly and the device overlap. After ``--time-limit`` seconds no new program starts (the
report says how many ran). Then each difference with no known cause (diff/fuzzknown.py), up to
``--max-shrink`` of them and ``--max-shrink-per-class`` of one kind (``shrink.failure_class``), is
shrunk within ``--shrink-s`` (all of them within ``--shrink-total-s``), written as a reproducer
under ``--repro-dir`` and classified (classify.py: -O0 against the default level, the host against
independent answers). ``--ops`` / ``--focus`` draw programs of chosen step kinds only / more often;
``--seeds`` runs the programs of given seeds again (a campaign's failures, to shrink them).

``--mutants`` runs the mutant check instead: programs are lowered under each of the 33 mutants
(diff/mutants.py); those whose bytes a mutant changes are run with it, and the mutant is FOUND
when one of them differs from the host where the plain program did not.
"""

from __future__ import annotations

import collections
import concurrent.futures as cf
import datetime
import json
import multiprocessing
import os
import queue
import threading
import time

from ..assemble import ENV_TIMEOUT
from . import mutants as M
from .fuzzgen import DEFAULT, MUTANT_FOCUS, Profile
from .fuzzknown import run_workarounds
from .fuzzrun import GpuWorker, InProcessDevice, compile_task, fake_answer
from .fuzzspec import EQUIVALENT
from .shrink import FAILURES, Shrinker, Tester, core_steps, failure_class, write_reproducer

BATCH = 256  # programs handed to the GPU worker at a time


ASSEMBLE_TIMEOUT_S = 60.0  # tileiras' time on one fuzz program past which it is killed: the campaign's slowest
# of 10,000 took 2.1 s (fuzz_campaign10_h200.json, stage_s_max), and one that never finished held campaign 10's
# last batch until the call's limit (tileir's own default waits 600 s)


def _compile_worker_init(assemble_timeout_s: float) -> None:
    os.environ[ENV_TIMEOUT] = f"{assemble_timeout_s:g}"


def make_pool(workers: int | None, assemble_timeout_s: float | None = None):
    """The compile pool: ``workers`` processes (None: one a core), tileiras killed past
    ``assemble_timeout_s`` there (an assemble error of its own; None: $TILEIR_FUZZ_ASSEMBLE_S or
    ASSEMBLE_TIMEOUT_S); 0 runs everything in process."""
    if workers == 0:
        return None
    if assemble_timeout_s is None:
        assemble_timeout_s = float(os.environ.get("TILEIR_FUZZ_ASSEMBLE_S") or ASSEMBLE_TIMEOUT_S)
    n = workers or os.cpu_count() or 2
    return cf.ProcessPoolExecutor(max_workers=n, mp_context=multiprocessing.get_context("spawn"),
                                  initializer=_compile_worker_init, initargs=(assemble_timeout_s,))


INTERRUPTED = "the campaign was interrupted"  # what the device answers for the programs it never ran
HANG_S = 15.0  # a program's time on the device past which its worker is killed (fuzz programs take ms;
# a worker's first program also creates the CUDA context, a few seconds)


def make_device(kind: str, hang_s: float = HANG_S):
    """'gpu' (the worker process on the GPU), 'fake' (a worker answering with the host reference),
    or 'inprocess' (the host reference in this process: the tests')."""
    if not isinstance(kind, str):  # a device object already (the tests' fakes)
        return kind
    if kind == "inprocess":
        return InProcessDevice(fake_answer)
    return GpuWorker(fake=kind == "fake", hang_s=hang_s)


def _device_label(kind) -> str | None:
    if not isinstance(kind, str):
        return f"{type(kind).__name__} (a test's fake)"
    if kind != "gpu":
        return f"{kind} device (the host reference)"
    try:
        from .run import _device_name

        return _device_name()
    except Exception:
        return None


class Campaign:
    """One run: ``run()`` answers the report dict."""

    def __init__(self, programs: int, seed: int, arch: str = "sm_90", opt_level=None, device: str = "gpu",
                 workers: int | None = None, time_limit: float = 360.0, profile: Profile = DEFAULT, log=print,
                 assemble: bool = True, seeds=None, hang_s: float = HANG_S):
        self.seeds = list(seeds) if seeds else None  # the programs of these seeds (a campaign's failures again)
        if self.seeds:
            programs = len(self.seeds)
        self.programs, self.seed, self.arch, self.opt_level = programs, seed, arch, opt_level
        self.device_kind, self.workers, self.time_limit, self.profile, self.log = device, workers, time_limit, \
            profile, log
        self.compiled: list = []  # every compile result (arrays dropped)
        self.results: dict = {}  # index -> device result
        self.assemble = assemble  # False: no tileiras (the CPU tests, with a device that needs no cubin)
        self.pool = None
        self.pool_restarts = 0
        self.hang_s = hang_s
        self.interrupted: str | None = None  # why the run stopped early (a signal): the report then holds what ran
        self._queue: queue.Queue | None = None  # run_programs' batches for the device thread, and that thread
        self._gpu_thread: threading.Thread | None = None
        self.t0 = time.time()

    def task(self, i: int, **kw) -> dict:
        t = {"index": i, "seed": self.seed + i, "arch": self.arch, "opt_level": self.opt_level,
             "profile": self.profile.__dict__ if self.profile is not DEFAULT else None, "assemble": self.assemble}
        t.update(kw)
        return t

    def run_programs(self, pool, device, tasks) -> None:
        """Compile ``tasks`` in the pool (a bounded window of them in flight) and run the ready ones
        on ``device`` in batches on a thread of their own."""
        q: queue.Queue = queue.Queue()
        gpu_time = [0.0]

        def gpu_loop():
            while True:
                batch = q.get()
                if batch is None:
                    return
                t = time.time()
                for r in device.run(batch):
                    self.results[r["index"]] = r
                gpu_time[0] += time.time() - t

        th = threading.Thread(target=gpu_loop, daemon=True)
        th.start()
        self._queue, self._gpu_thread = q, th  # for _halt
        ready: list = []
        pending = collections.deque(tasks)
        inflight: set = set()
        window = 4 * (self.workers or os.cpu_count() or 2)
        done = 0
        last_log = time.time()

        def take(res):
            nonlocal ready
            if res["status"] == "ready":
                ready.append(res)
                if len(ready) >= BATCH:
                    q.put(ready)
                    ready = []
            self.compiled.append({k: v for k, v in res.items() if k not in ("cubin", "args", "host", "layout",
                                                                            "data")})

        if pool is None:
            for t in pending:
                if time.time() - self.t0 > self.time_limit:
                    break
                take(compile_task(t))
        else:
            while pending or inflight:
                while pending and len(inflight) < window and time.time() - self.t0 < self.time_limit:
                    try:
                        inflight.add(pool.submit(compile_task, pending[0]))
                        pending.popleft()
                    except cf.process.BrokenProcessPool:  # a worker died: the pool is done for
                        if self.pool_restarts >= 3:
                            pending.clear()
                            break
                        self.pool_restarts += 1
                        self.log("[fuzz] the compile pool broke; starting a fresh one")
                        pool = self.pool = make_pool(self.workers)
                if not inflight:
                    break
                fin, inflight = cf.wait(inflight, timeout=5, return_when=cf.FIRST_COMPLETED)
                for f in fin:
                    try:
                        take(f.result())
                    except Exception as e:  # a worker process that died: the program is lost, not the run
                        self.compiled.append({"status": "compile_crash", "detail": f"{type(e).__name__}: {e}"[:300]})
                    done += 1
                if time.time() - last_log > 30:
                    last_log = time.time()
                    self.log(f"[fuzz] {done} compiled, {len(self.results)} run on the device, "
                             f"{time.time() - self.t0:.0f} s")
                if time.time() - self.t0 > self.time_limit:
                    pending.clear()
        if ready:
            q.put(ready)
        q.put(None)
        th.join()
        self.gpu_seconds = gpu_time[0]

    def run(self, repro_dir: str | None = None, max_shrink: int = 12, shrink_s: float = 40.0,
            shrink_total_s: float = 90.0, per_class: int = 4, shrink_known: bool = False) -> dict:
        self.pool = make_pool(self.workers)
        device = make_device(self.device_kind, self.hang_s)
        t_run, diffs, shrunk = None, [], {}
        try:
            tasks = [self.task(i, seed=self.seeds[i]) if self.seeds else self.task(i) for i in range(self.programs)]
            self.run_programs(self.pool, device, tasks)
            t_run = time.time() - self.t0
            diffs = self.differences()
            self.log(f"[fuzz] {len(self.compiled)} programs in {t_run:.0f} s: {len(diffs)} failures; shrinking")
            shrunk = self.shrink_all(diffs, self.pool, device, repro_dir, max_shrink, shrink_s, shrink_total_s,
                                     per_class, shrink_known)
        except KeyboardInterrupt as e:  # SIGINT, or SIGTERM (the CLI turns it into this): report what ran
            self.interrupted = str(e) or "interrupted"
            self._halt(device)
            self.log(f"[fuzz] stopped early ({self.interrupted}): reporting the {len(self.results)} programs run")
            t_run = t_run or time.time() - self.t0
            diffs = self.differences()
        finally:
            device.close()
            if self.pool is not None:
                self.pool.shutdown(wait=not self.interrupted, cancel_futures=True)
        return self.report(diffs, shrunk, t_run)

    def _halt(self, device) -> None:
        """Stop the device side after an interrupt, keeping what it answered: no fresh worker, the
        running one killed (its thread then reads the batch's results file as after any death),
        the thread joined; the programs it never ran are dropped, not counted as errors."""
        if hasattr(device, "broken"):
            device.broken = INTERRUPTED
        proc = getattr(device, "proc", None)
        if proc is not None:
            try:
                proc.kill()
            except OSError:
                pass
        if self._queue is not None:
            self._queue.put(None)
        if self._gpu_thread is not None:
            self._gpu_thread.join(timeout=30)
        self.results = {i: r for i, r in list(self.results.items())
                        if (r.get("verdict") or {}).get("detail") != INTERRUPTED}

    def workarounds(self, tileiras: str | None = None) -> list:
        """The workarounds this run has (fuzzknown.run_workarounds: while-O0 only at tileiras' own level)."""
        return list(run_workarounds(self.opt_level, self.arch, tileiras))

    def differences(self) -> list:
        """Every failing program: device differences and errors, and the CPU half's failures, each with
        the run's ``workarounds`` (the known causes' matchers read them)."""
        out = []
        ws = self.workarounds()
        for c in self.compiled:
            if c["status"] in ("assemble_error", "host_error", "record_crash", "lower_crash"):
                out.append({"index": c["index"], "seed": c["seed"], "status": c["status"], "detail": c.get("detail"),
                            "desc": c["desc"], "verdict": {}, "workarounds": ws})
            elif c["status"] == "ready":
                r = self.results.get(c["index"])
                if r is not None and r["status"] in FAILURES:
                    v = r.get("verdict", {})
                    out.append({"index": c["index"], "seed": c["seed"], "status": r["status"], "desc": c["desc"],
                                "detail": v.get("detail"), "verdict": v, "workarounds": ws})
        return out

    def shrink_all(self, diffs, pool, device, repro_dir, max_shrink, shrink_s, total_s=1e9, per_class_max=4,
                   shrink_known=False) -> dict:
        """Shrink, save and classify up to ``max_shrink`` failures, each within ``shrink_s`` and all
        within ``total_s`` seconds. A failure with a known cause is recorded, not shrunk; one that
        fails the same way (``failure_class``, the ops of its differing regions) as a failure already
        shrunk and whose program holds every core step of that one's minimal program is marked as
        probably that one (``likely_same_as``) and not shrunk; at most ``per_class_max`` of one class
        are. ``shrink_known`` shrinks known failures too (to study an open cause: its trigger)."""
        from .classify import classify, known_cause

        out: dict = {}
        per_class: collections.Counter[tuple] = collections.Counter()
        shrunk: list[tuple] = []  # (failure class and region ops, core steps, reproducer)
        tester = Tester(device, pool, self.arch, self.opt_level, assemble=self.assemble)
        tester_o0 = Tester(device, pool, self.arch, 0, assemble=self.assemble)
        t_all = time.time()
        for d in diffs:
            known = known_cause(d)
            if known is not None and not shrink_known:  # understood already: the record, no shrinking
                out[d["index"]] = {"classification": known, "steps": _steps(d["desc"]),
                                   "steps_before": _steps(d["desc"]), "status_after": d["status"]}
                continue
            how = (failure_class(d), region_ops(d))
            same = next((r for st, core, r in shrunk if st == how and core and core <= core_steps(d["desc"])), None)
            if same is not None:
                out[d["index"]] = {"likely_same_as": same}
                continue
            cls = failure_class(d)
            left = total_s - (time.time() - t_all)
            if sum(1 for v in out.values() if "reproducer" in v) >= max_shrink or per_class[cls] >= per_class_max or \
                    left < 5:
                continue
            per_class[cls] += 1
            t = time.time()
            sh = Shrinker(tester, min(shrink_s, left), self.log)
            small = sh.shrink(d["desc"], d)
            again = tester.outcomes([small])[0]
            if again["status"] not in FAILURES:  # the failure did not reproduce (flaky): keep the original
                small, again = d["desc"], d
            c = classify(small, again, tester_o0 if again["status"] in ("differ", "device_error", "assemble_error")
                         else None)
            path = None
            if repro_dir:
                path = os.path.join(repro_dir, f"fuzz_{d['status']}_{d['seed']}.json")
                write_reproducer(path, small, again, c, original_seed=d["seed"], arch=self.arch,
                                 opt_level=self.opt_level, shrink_rounds=sh.rounds, steps_before=_steps(d["desc"]))
            shrunk.append(((failure_class(d), region_ops(d)), core_steps(small), path or f"seed {d['seed']}"))
            out[d["index"]] = {"reproducer": path, "classification": c, "steps": _steps(small),
                               "steps_before": _steps(d["desc"]), "shrink_s": round(time.time() - t, 1),
                               "status_after": again["status"], "core": sorted(map(list, core_steps(small)))}
        return out

    def report(self, diffs, shrunk, t_run) -> dict:
        st = collections.Counter(c["status"] for c in self.compiled)
        dev = collections.Counter(r["status"] for r in list(self.results.values()))
        generated = len(self.compiled)
        recorded = generated - st["refused"] - st["record_crash"]
        cover = collections.Counter(k for c in self.compiled if c["status"] != "refused" for k in c.get("ops", ()))
        refusals = collections.Counter(c.get("detail", "")[:140] for c in self.compiled if c["status"] == "refused")
        t_asm = [c["t_assemble"] for c in self.compiled if "t_assemble" in c]
        stage = {k: [c[k] for c in self.compiled if k in c] for k in ("t_compile", "t_assemble", "t_host")}
        from .classify import known_cause

        rows = []
        for d in diffs:
            s = shrunk.get(d["index"], {})
            v = d.get("verdict") or {}
            k = known_cause(d) if not s else None
            if k:
                s = {"classification": k}
            same = {"likely_same_as": s["likely_same_as"]} if s.get("likely_same_as") else {}
            rows.append({"seed": d["seed"], "status": d["status"], "class": list(failure_class(d)),
                         "detail": (d.get("detail") or "")[:300], "bad": v.get("bad"), "lanes": v.get("lanes"),
                         "regions": [{k: r.get(k) for k in ("buf", "step", "op", "taint", "bad", "first")}
                                     for r in v.get("regions", [])[:4]],
                         **({"envelope_draws": v["envelope_draws"]} if v.get("envelope_draws") else {}),
                         **same, **({"reproducer": s.get("reproducer"), "classification": s.get("classification"),
                                     "steps_after_shrinking": s.get("steps"), "steps_before": s.get("steps_before"),
                                     "core": s.get("core")} if s.get("classification") else {})})
        try:
            from ..assemble import tileiras_version

            version = tileiras_version()
        except Exception:
            version = None
        explained = sum(1 for r in rows if (r.get("classification") or {}).get("known"))
        causes = collections.Counter((r.get("classification") or {}).get("cause") for r in rows
                                     if (r.get("classification") or {}).get("known"))
        # the verdicts the judge drew the envelope again for (an approximate lane out of the one draw's
        # tolerance: fuzzjudge.judge), and how many of them the wider envelope made equal
        redrawn = [r for r in self.results.values() if (r.get("verdict") or {}).get("envelope_draws")]
        stops = [(r.get("verdict") or {}) for r in self.results.values()
                 if "assert_printed" in (r.get("verdict") or {})]
        return {
            "tool": "python -m tileir.diff fuzz", "date": datetime.datetime.now(datetime.timezone.utc).isoformat(
                timespec="seconds"), "device": _device_label(self.device_kind), "arch": self.arch,
            "tileiras": version, "opt_level": "tileiras default" if self.opt_level is None else self.opt_level,
            "seed": self.seed, "generator": self.profile.version, "workarounds": self.workarounds(version),
            "interrupted": self.interrupted,
            "programs_requested": self.programs, "programs": generated, "recorded": recorded,
            "recorded_share": round(recorded / generated, 4) if generated else None, "refused": st["refused"],
            "assembled": st["ready"] + st["host_error"], "assemble_errors": st["assemble_error"],
            "host_errors": st["host_error"], "crashes": st["record_crash"] + st["lower_crash"] + st["compile_crash"],
            "ran_on_device": len(self.results), "equal": dev["equal"], "differ": dev["differ"],
            "device_errors": dev["device_error"], "worker_errors": dev["worker_error"],
            "failures": len(rows), "failures_known": explained, "failures_unexplained": len(rows) - explained,
            "known_causes": dict(causes),
            "envelope_redrawn": {"verdicts": len(redrawn), "equal_after": sum(r["status"] == "equal" for r in redrawn)},
            # the host stopped at an assert, the device failed its launch: did the device print that assert's
            # message (fuzzjudge.assert_printed)? true / false / nothing captured
            "asserts_printed": {str(k): sum(v["assert_printed"] is k for v in stops) for k in (True, False, None)},
            "seconds": {"compile_and_run": round(t_run, 1), "total": round(time.time() - self.t0, 1),
                        "device": round(getattr(self, "gpu_seconds", 0.0), 1)},
            "throughput": {"programs_per_s": round(generated / t_run, 2) if t_run else None,
                           "assemble_s_mean": round(sum(t_asm) / len(t_asm), 3) if t_asm else None,
                           "stage_s_mean": {k[2:]: round(sum(v) / len(v), 4) for k, v in stage.items() if v},
                           "stage_s_max": {k[2:]: round(max(v), 3) for k, v in stage.items() if v},
                           "cpu_s_per_program": round(sum(sum(v) for v in stage.values()) / max(1, generated), 3),
                           "workers": self.workers or os.cpu_count()},
            "op_coverage": dict(sorted(cover.items())),
            "refusals": dict(refusals.most_common(20)),
            "differences": rows,
        }


def region_ops(outcome: dict) -> tuple:
    """The ops of the regions a failure differs in (a store, a view store, a cas ...), sorted."""
    return tuple(sorted({r.get("op") for r in (outcome.get("verdict") or {}).get("regions", [])}))


def _steps(desc) -> int:
    from .fuzzgen import walk

    return sum(1 for _ in walk(desc["body"]))


# ---- the mutant check ----------------------------------------------------------------------------------


def mutant_check(programs: int, seed: int, arch: str = "sm_90", device="gpu", workers: int | None = None,
                 per_mutant: int = 24, names=None, log=print, assemble: bool = True,
                 time_limit: float | None = None) -> dict:
    """Each mutant against the programs whose bytes it changes (up to ``per_mutant`` of them, drawn
    with the generator's weights shifted toward the mutant's own operations): found when one of
    them differs from the host where the plain program ran clean. After ``time_limit`` seconds no
    further mutant starts (those left are reported ``not run``)."""
    t0 = time.time()
    pool = make_pool(workers)
    dev = make_device(device)
    rows = []
    try:
        for m in M.MUTANTS:
            if names and m.name not in names:
                continue
            if time_limit is not None and time.time() - t0 > time_limit:
                rows.append({"mutant": m.name, "family": m.family, "programs": 0, "changed": 0, "ran_clean_plain": 0,
                             "differing": 0, "status": "not run", "example": None})
                continue
            if m.name in EQUIVALENT:
                rows.append({"mutant": m.name, "family": m.family, "programs": 0, "changed": 0, "ran_clean_plain": 0,
                             "differing": 0, "status": "equivalent", "why": EQUIVALENT[m.name], "example": None})
                continue
            kinds, prefer = MUTANT_FOCUS.get(m.name, ((), ()))
            prof = Profile(focus=kinds, prefer=prefer, fire_asserts=0.5 if m.name == "assert-dropped" else 0.02)
            base = {"arch": arch, "profile": prof.__dict__, "assemble": assemble}
            tasks = [dict(base, index=i, seed=seed + 7919 * i, bytes_only=True) for i in range(programs)]
            mapper = pool.map if pool is not None else map
            plain = list(mapper(compile_task, tasks))
            mutated = list(mapper(compile_task, [dict(t, mutant=m.name) for t in tasks]))
            changed = [p["index"] for p, q in zip(plain, mutated) if p["status"] == "lowered" and
                       q["status"] == "lowered" and p["sha"] != q["sha"]][:per_mutant]
            run_tasks = [dict(base, index=2 * j, seed=tasks[i]["seed"]) for j, i in enumerate(changed)] + \
                [dict(base, index=2 * j + 1, seed=tasks[i]["seed"], mutant=m.name) for j, i in enumerate(changed)]
            compiled = list(mapper(compile_task, run_tasks))
            ready = [c for c in compiled if c["status"] == "ready"]
            res = {r["index"]: r for r in (dev.run(ready) if ready else [])}
            found, example, ran, unclean = 0, None, 0, None
            for j in range(len(changed)):
                p, q = res.get(2 * j), res.get(2 * j + 1)
                qc: dict = next((c for c in compiled if c["index"] == 2 * j + 1), {})
                if p is None or p["status"] != "equal":
                    if unclean is None:  # the first plain program that did not run clean, and why: a mutant
                        # that survives for want of clean runs says so (assert-dropped on the H200, 2026-12-02)
                        pc: dict = next((c for c in compiled if c["index"] == 2 * j), {})
                        unclean = {"seed": pc.get("seed"), "status": (p or pc).get("status"),
                                   "detail": ((p or {}).get("verdict") or {}).get("detail") or pc.get("detail")}
                    continue
                ran += 1
                bad = (q is not None and q["status"] in ("differ", "device_error")) or \
                    qc.get("status") in ("assemble_error",)
                if bad:
                    found += 1
                    if example is None:
                        v = (q or {}).get("verdict", {})
                        example = {"seed": qc.get("seed"), "status": (q or qc).get("status"),
                                   "first": v.get("first", [])[:2], "detail": (v.get("detail") or qc.get("detail"))}
            status = "found" if found else ("not reached" if not changed else "survived")
            rows.append({"mutant": m.name, "family": m.family, "programs": programs, "changed": len(changed),
                         "ran_clean_plain": ran, "differing": found, "status": status, "example": example,
                         "plain_not_clean": unclean})
            log(f"[mutants] {m.name}: {status} ({found} of {ran} differ; {len(changed)} of {programs} changed)")
    finally:
        dev.close()
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    return {"tool": "python -m tileir.diff fuzz --mutants", "date": datetime.datetime.now(
        datetime.timezone.utc).isoformat(timespec="seconds"), "device": _device_label(device), "arch": arch,
        "seed": seed, "seconds": round(time.time() - t0, 1), "mutants": rows,
        "summary": {"mutants": len(rows), "found": sum(r["status"] == "found" for r in rows),
                    "not_found": [r["mutant"] for r in rows if r["status"] not in ("found", "equivalent")],
                    "equivalent": [r["mutant"] for r in rows if r["status"] == "equivalent"]}}


def write_json(path: str, doc: dict) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(doc, f, indent=1, default=str)
        f.write("\n")


def rerun_reproducer(path, device="gpu", arch: str | None = None):
    """A reproducer run again: its outcome now, at the default level and at -O0, and its class.
    ``path`` may be a list of files: they share one device (one CUDA context), and a list of
    results comes back."""
    from .classify import classify
    from .shrink import read_reproducer

    paths = [path] if isinstance(path, str) else list(path)
    dev = make_device(device)
    out = []
    try:
        for p in paths:
            doc = read_reproducer(p)
            a = arch or doc.get("arch") or "sm_90"
            now = Tester(dev, None, a, doc.get("opt_level")).outcomes([doc["desc"]])[0]
            c = classify(doc["desc"], now, Tester(dev, None, a, 0)) if now["status"] in FAILURES else None
            out.append({"reproducer": p, "status_then": doc.get("status"), "status_now": now["status"],
                        "cause_then": (doc.get("classification") or {}).get("cause") or (
                            doc.get("classification") or {}).get("class"),
                        "detail": now.get("detail"), "first": (now.get("verdict") or {}).get("first"),
                        "regions": [{k: r.get(k) for k in ("buf", "step", "op", "taint", "bad")}
                                    for r in (now.get("verdict") or {}).get("regions", [])],
                        "classification": c})
    finally:
        dev.close()
    return out[0] if isinstance(path, str) else out


__all__ = ["Campaign", "mutant_check", "rerun_reproducer", "write_json", "make_pool", "make_device", "region_ops"]
