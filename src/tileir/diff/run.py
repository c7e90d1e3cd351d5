"""The layer-2 diff runner: every family's kernels through our pipeline on the GPU against the same
TileProgs on the host reference, each output judged as its family says, and the mutants run the
same way to show each comparison can fail.

    python -m tileir.diff run --out bench/results/diff_h200.json [--families a,b] [--mutants]

Shape of a run: this process records every kernel, lowers it (once plain, once under each mutant
of its family), encodes and assembles it (tileiras in parallel threads, the cubin cache keyed on
the bytes, so a mutant's cubin is its own), and hands the jobs to a WORKER process that launches,
runs the host reference and compares. A worker that meets a launch error exits (a CUDA error may
be sticky: every later launch in that process would fail too) and a fresh one takes the jobs
left. The print and assert families always run in a process of their own: a print is judged on
the worker's standard output, and an assert that fires leaves the context unusable. Without a GPU
(``tileir.runtime.available()`` false) the run records, assembles and runs the host reference,
and reports no device answer.
"""

from __future__ import annotations

import copy
import datetime
import hashlib
import json
import os
import pickle
import subprocess
import sys
import tempfile
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..judge import Verdict, compare
from . import mutants as M
from .families import families

# ---- the host side ------------------------------------------------------------------------------


@dataclass
class Answer:
    """What one side answered for a case: the arguments after each launch, what it printed, or
    the error that stopped it."""

    after: list = field(default_factory=list)  # per launch: the argument arrays after it
    before: list = field(default_factory=list)  # per launch: the arguments it was given
    printed: str = ""
    error: str | None = None


def host_answer(case, prog=None) -> Answer:
    """The host reference's answer: ``prog`` (the case's recording; made fresh if None) run once
    per launch on fresh arguments, its globals kept between launches as a loaded module's are."""
    from ..ref import run_host

    prog = case.prog() if prog is None else prog
    ans = Answer()
    try:
        for _ in range(case.launches):
            args = case.make_args()
            ans.before.append(copy.deepcopy(args))
            it = run_host(prog, args, case.grid)
            ans.after.append(args)
            ans.printed += "".join(it.printed)
    except Exception as e:  # a host failure is an answer: an assert that fired, or a defect
        ans.error = f"{type(e).__name__}: {e}"
    return ans


# ---- the comparison -----------------------------------------------------------------------------


def _lanes(out, before):
    return out.lanes(before) if callable(out.lanes) else out.lanes


def judge_case(case, host: Answer, dev: Answer) -> dict:
    """One case's verdict: every output of every launch of ``dev`` against ``host`` (or against
    the case's independent answer where the output says so), or the judgement shapes of print
    (the exact bytes) and assert (a launch that must fail)."""
    r = {"case": case.name, "ok": False, "lanes": 0, "bad": 0, "max_err": 0.0, "max_ulp": 0.0, "first": [],
         "error": None}
    must_fail = case.mode == "assert" and not case.outs
    if must_fail:
        r["lanes"] = 1
        host_failed = host.error is not None and "d_assert failed" in host.error
        dev_failed = dev.error is not None and "ASSERT" in dev.error.upper()
        r["ok"] = host_failed and dev_failed
        if not host_failed:
            r["error"] = f"the host reference did not fail: {host.error or 'it ran'}"
        elif not dev_failed:
            r["error"] = f"the launch did not fail with an assert: {dev.error or 'it ran to the end'}"
        else:
            assert dev.error is not None  # dev_failed: it holds the assert
            r["detail"] = dev.error.splitlines()[0][:200]
        r["bad"] = 0 if r["ok"] else 1
        return r
    if host.error:
        r["error"] = f"host reference: {host.error}"
        return r
    if dev.error:
        r["error"] = f"device: {dev.error}"
        r["bad"] = 1
        return r
    if case.mode == "print":
        want, got = host.printed.encode(), dev.printed.encode()
        r["lanes"] = len(want)
        r["ok"] = want == got
        r["bad"] = 0 if r["ok"] else 1
        if not r["ok"]:
            r["first"] = [(0, "stdout", host.printed, dev.printed)]
        return r
    total = Verdict()
    for launch, (before, h_after, d_after) in enumerate(zip(host.before, host.after, dev.after)):
        expected = None
        for o in case.outs:
            if o.against == "expect":
                if expected is None:
                    expected = case.expect(before, launch)
                want = expected[o.pos]
            else:
                want = h_after[o.pos]
            bound = o.bound(before) if o.bound is not None else None
            v = compare(o.judge, want, d_after[o.pos], _lanes(o, before), bound, o)
            where = f"L{launch}/out{o.pos}" if case.launches > 1 else f"out{o.pos}"
            v.first = [(where + f[1],) + f[2:] for f in v.first]
            v.by_label = {f"out{o.pos}/{k}": x for k, x in v.by_label.items()}
            total = total.merge(v)
    if len(dev.after) != len(host.after):
        total.bad += 1
        total.first.append(("launches", f"{len(host.after)} on the host, {len(dev.after)} on the device"))
    r.update(ok=total.ok, lanes=total.lanes, bad=total.bad, max_err=total.max_err, max_ulp=total.max_ulp,
             first=total.first, by_label={k: {"bad": b, "max_ulp": u} for k, (b, u) in total.by_label.items()})
    return r


# ---- compiling ------------------------------------------------------------------------------------


def lower_bytes(prog, mutant: str | None = None) -> tuple:
    """(Kernel, bytecode) of ``prog`` lowered with ``mutant`` active (None: none)."""
    from .. import lower
    from ..bytecode import encode_kernel

    with M.use(mutant):
        k = lower(prog)
        return k, encode_kernel(k)


def assemble_many(items, arch: str, opt_level=None, workers: int | None = None) -> list:
    """tileiras over ``items`` ((name, Kernel, bytecode) each) in parallel threads: a cubin or the
    error text for each, in order."""
    from ..assemble import assemble

    def one(item):
        name, k, data = item
        try:
            return assemble(data, arch, kernel=name, program=k, opt_level=opt_level)
        except Exception as e:
            return f"{type(e).__name__}: {e}"

    with ThreadPoolExecutor(max_workers=workers or min(16, (os.cpu_count() or 2))) as ex:
        return list(ex.map(one, items))


# ---- the device side (in a worker process) ------------------------------------------------------------


def _evict(cubin: bytes) -> None:
    """Forget the loaded module of ``cubin`` (and its launchers) so the next launch loads it afresh:
    a module's globals start from their declared values only when it is loaded."""
    import importlib

    L = importlib.import_module("tileir.runtime.launch")  # the module (the package exports its launch function)

    key = hashlib.sha256(bytes(cubin)).hexdigest()
    with L._modules_lock:
        mod = L._modules.pop(key, None)
    for k, got in list(L._launchers.items()):
        if got[0] == cubin:
            L._launchers.pop(k, None)
    if mod is not None:
        mod.unload()


FAKE = "TILEIR_DIFF_FAKE_DEVICE"  # tests only: the "device" is the host reference (no mutant reaches it)


def _fake_answer(case) -> Answer:
    ans = host_answer(case)
    if ans.error and "d_assert failed" in ans.error:
        ans.error = "TileirError: running the kernel failed: CUDA_ERROR_ASSERT (fake device: " + ans.error + ")"
    if case.mode == "print":
        sys.stdout.write(ans.printed)
        sys.stdout.flush()
        ans.printed = ""
    return ans


def device_answer(case, cubin: bytes) -> Answer:
    """The GPU's answer: the cubin launched once per launch on fresh arguments (numpy arrays copied
    in and back), the module loaded afresh before the first launch."""
    if os.environ.get(FAKE):
        return _fake_answer(case)
    from ..runtime import launch

    ans = Answer()
    params = [(p.dtype, p.by_ptr) for p in case.params]
    try:
        _evict(cubin)
        for _ in range(case.launches):
            args = case.make_args()
            ans.before.append(copy.deepcopy(args))
            launch(cubin, case.name, case.grid, args, params)
            ans.after.append(args)
    except Exception as e:
        ans.error = f"{type(e).__name__}: {e}"
    if case.mode == "print":
        try:
            import ctypes

            ctypes.CDLL(None).fflush(None)  # the driver's printf buffer went to C's stdout
        except Exception:
            pass
    return ans


# ---- jobs ------------------------------------------------------------------------------------------------


@dataclass
class Job:
    family: str
    mutant: str | None
    cases: list  # per case: (case name, cubin | None, bytes sha, compile error | None, unchanged)

    @property
    def key(self) -> str:
        return f"{self.family}" + (f"@{self.mutant}" if self.mutant else "")

    @property
    def own_process(self) -> bool:
        return self.family in ("print", "assert")


def _case(family: str, name: str):
    for c in families()[family].cases:
        if c.name == name:
            return c
    raise KeyError(f"{family}/{name}")


def run_job(job: Job, host_cache: dict) -> dict:
    """Launch and judge one job (this process must be able to launch). Raises _Sticky after a
    launch error, once its result is written."""
    out: dict[str, Any] = {"job": job.key, "family": job.family, "mutant": job.mutant, "cases": []}
    sticky = False
    for name, cubin, sha, cerr, unchanged in job.cases:
        case = _case(job.family, name)
        if unchanged:
            out["cases"].append({"case": name, "unchanged": True, "ok": True, "lanes": 0, "bad": 0})
            continue
        if cerr is not None:
            out["cases"].append({"case": name, "ok": False, "error": f"tileiras: {cerr}", "refused": True,
                                 "lanes": 0, "bad": 0})
            continue
        host = host_cache.get(name)
        if host is None:
            host = host_cache[name] = host_answer(case)
        t = time.time()
        dev = device_answer(case, cubin)
        if dev.error is not None:
            sticky = True
        if case.mode == "print":  # judged by the parent, on this process's standard output
            err = f"host reference: {host.error}" if host.error else (f"device: {dev.error}" if dev.error else None)
            res = {"case": name, "ok": False if err else None, "error": err, "lanes": 0, "bad": 1 if err else 0,
                   "host_printed": host.printed}
        else:
            res = judge_case(case, host, dev)
        res["seconds"] = round(time.time() - t, 3)
        res["sha"] = sha
        out["cases"].append(res)
        if sticky:
            break
    out["sticky"] = sticky
    return out


def worker_main(jobs_path: str, results_path: str, only: int | None = None) -> int:
    """The worker: run the jobs of ``jobs_path`` not yet in ``results_path`` (one JSON line each),
    or only job ``only``. Exits 3 after a launch error (the parent starts a fresh worker)."""
    with open(jobs_path, "rb") as f:
        jobs = pickle.load(f)
    done = set()
    if os.path.exists(results_path):
        with open(results_path) as f:
            done = {json.loads(line)["index"] for line in f if line.strip()}
    host_cache: dict = {}
    for i, job in enumerate(jobs):
        if i in done or (only is not None and i != only) or (only is None and job.own_process):
            continue
        try:
            res = run_job(job, host_cache)
        except Exception:
            res = {"job": job.key, "family": job.family, "mutant": job.mutant, "cases": [],
                   "error": traceback.format_exc(limit=4), "sticky": True}
        res["index"] = i
        with open(results_path, "a") as f:
            f.write(json.dumps(res, default=_jsonable) + "\n")
        if res.get("sticky"):
            return 3
    return 0


def _jsonable(x):
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating,)):
        return float(x)
    if isinstance(x, np.ndarray):
        return x.tolist()
    return str(x)


WORKER_TIMEOUT_S = 150


def _spawn(jobs_path: str, results_path: str, only: int | None, fake: bool = False,
           timeout: float = WORKER_TIMEOUT_S) -> tuple:
    """A worker process over the jobs file: (exit code, its standard output, its standard error)."""
    cmd = [sys.executable, "-m", "tileir.diff", "_worker", jobs_path, results_path]
    if only is not None:
        cmd += ["--only", str(only)]
    env = dict(os.environ)
    env.pop("CUDA_HOME", None)
    env.pop(M.ENV, None)  # the worker launches the cubins it is handed; it lowers nothing
    if fake:
        env[FAKE] = "1"
    src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        return -1, (e.stdout or b"").decode("utf-8", "replace"), f"timed out after {timeout} s"
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def _done(results_path: str) -> set:
    if not os.path.exists(results_path):
        return set()
    with open(results_path) as f:
        return {json.loads(line)["index"] for line in f if line.strip()}


def _mark_pending(jobs, results_path: str, why: str, only: int | None = None) -> None:
    """Write the first job a worker left without a result (it died or hung in it) as failed."""
    done = _done(results_path)
    for i, job in enumerate(jobs):
        if i in done or (only is not None and i != only) or (only is None and job.own_process):
            continue
        res = {"index": i, "job": job.key, "family": job.family, "mutant": job.mutant, "cases": [],
               "error": f"the worker stopped in this job: {why}", "sticky": True}
        with open(results_path, "a") as f:
            f.write(json.dumps(res) + "\n")
        return


# ---- the whole run ------------------------------------------------------------------------------------------


def build_jobs(names, with_mutants: bool, arch: str, opt_level=None, log=print) -> list:
    """Record, lower (plainly and under each mutant of each family), encode and assemble."""
    fams = families()
    plan = []  # (family, mutant, case, kernel, bytes, unchanged)
    base_bytes = {}
    for fname in names:
        fam = fams[fname]
        for case in fam.cases:
            prog = case.prog()
            k, data = lower_bytes(prog)
            base_bytes[(fname, case.name)] = data
            plan.append((fname, None, case, k, data, False))
    if with_mutants:
        for m in M.MUTANTS:
            if m.family not in names:
                continue
            for fname in (m.family,) + m.also:
                for case in fams[fname].cases:
                    if (fname, case.name) not in base_bytes:
                        base_bytes[(fname, case.name)] = lower_bytes(case.prog())[1]
                        plan.append((fname, None, case, *lower_bytes(case.prog()), False))
                    k, data = lower_bytes(case.prog(), m.name)
                    plan.append((fname, m.name, case, k, data, data == base_bytes[(fname, case.name)]))
    todo = [(c.name, k, data) for (_, _, c, k, data, same) in plan if not same]
    t = time.time()
    cubins = iter(assemble_many(todo, arch, opt_level))
    log(f"assembled {len(todo)} kernels for {arch} in {time.time() - t:.1f} s")
    jobs: dict = {}
    for fname, mut, case, _k, data, same in plan:
        got = None if same else next(cubins)
        cerr = got if isinstance(got, str) else None
        cubin = got if isinstance(got, (bytes, bytearray)) else None
        job = jobs.setdefault((fname, mut), Job(fname, mut, []))
        job.cases.append((case.name, cubin, hashlib.sha256(data).hexdigest()[:16], cerr, same))
    return list(jobs.values())


def _mutant_status(res: dict, base: dict | None) -> tuple:
    """killed: a case has more disagreeing lanes with the mutant than without it, or fails with it
    where it ran without one (a case the host reference cannot answer kills nothing)."""
    cases = res.get("cases", [])
    if res.get("error"):
        return "error", res["error"].strip().splitlines()[-1][:200]
    changed = [c for c in cases if not c.get("unchanged")]
    if not changed:
        return "unchanged", "no kernel of its family changes under it: not wired"
    before = {c["case"]: c for c in (base or {}).get("cases", [])}

    def kills(c) -> bool:  # more lanes fail than without the mutant, or it fails where that ran clean
        b = before.get(c["case"], {})
        if c.get("ok") or c.get("refused") or str(c.get("error") or "").startswith("host reference"):
            return False
        if c.get("error") and not b.get("error"):
            return True
        return (c.get("bad") or 0) > (b.get("bad") or 0) and not b.get("error")

    killers = [c for c in changed if kills(c)]
    if killers:
        c = killers[0]
        why = c.get("error") or (f"{c.get('bad')} of {c.get('lanes')} lanes differ: {c.get('first', [])[:1]}")
        return "killed", f"{c['case']}: {str(why)[:240]}"
    if any(c.get("refused") for c in changed):
        said = next(c["error"] for c in changed if c.get("refused"))
        return "refused", "tileiras refused the mutated bytes: " + said[:200]
    return "survived", "no comparison fails under it: the family's check proves nothing against it"


_RANK = ("killed", "error", "refused", "survived", "unchanged", "not run")


def _mutant_verdict(m, jobs, results) -> tuple:
    """A mutant's status over the jobs of every family it is run against: killed if any kills it."""
    got = []
    for i, j in enumerate(jobs):
        if j.mutant != m.name:
            continue
        res = results.get(i)
        if res is None:
            got.append(("unchanged", "no kernel of its families changes under it: not wired")
                       if all(c[4] for c in j.cases) else ("not run", "no device"))
            continue
        base = next((results.get(k) for k, b in enumerate(jobs) if b.family == j.family and b.mutant is None), None)
        status, detail = _mutant_status(res, base)
        got.append((status, f"{j.family}: {detail}" if m.also else detail))
    if not got:
        return "not run", "its family was not selected"
    return min(got, key=lambda x: _RANK.index(x[0]))


def run(names=None, with_mutants: bool = False, out: str | None = None, md: str | None = None, opt_level=None,
        arch: str | None = None, device: str = "auto", log=print) -> dict:
    """The diff: answers the results dict (and writes ``out`` / ``md`` if given). ``device``: auto
    (the GPU if ``tileir.runtime.available()``), none (host and assembly only), fake (tests: the
    workers answer with the host reference, so every comparison passes and no mutant is killed)."""
    from ..assemble import gpu_name_of_device
    from ..runtime import available

    t0 = time.time()
    fams = families()
    names = list(fams) if not names else list(names)
    for n in names:
        if n not in fams:
            raise SystemExit(f"no family {n!r}; the families are {', '.join(fams)}")
    fake = device == "fake"
    on_gpu = fake or (device == "auto" and available())
    arch = arch or (gpu_name_of_device() if on_gpu and not fake else None) or "sm_90"
    jobs = build_jobs(names, with_mutants, arch, opt_level, log)
    results: dict = {}
    if on_gpu:
        with tempfile.TemporaryDirectory(prefix="tileir-diff-") as d:
            jp, rp = os.path.join(d, "jobs.pkl"), os.path.join(d, "results.jsonl")
            with open(jp, "wb") as f:
                pickle.dump(jobs, f)
            shared = [i for i, j in enumerate(jobs) if not j.own_process]
            for _ in range(len(jobs) + 1):  # a fresh worker after each launch error at most
                if set(shared) <= _done(rp):
                    break
                rc, _, err = _spawn(jp, rp, None, fake)
                if rc not in (0, 3):
                    log(f"worker exited {rc}: {err.strip()[-2000:]}")
                    _mark_pending(jobs, rp, f"exit {rc}: {err.strip()[-300:]}")
            for i, job in enumerate(jobs):
                if job.own_process:
                    rc, text, err = _spawn(jp, rp, i, fake)
                    if rc not in (0, 3):
                        log(f"{job.key}: worker exited {rc}: {err.strip()[-1000:]}")
                        _mark_pending(jobs, rp, f"exit {rc}: {err.strip()[-300:]}", only=i)
                    if job.family == "print":
                        _patch_print(rp, i, text)
            with open(rp) as f:
                for line in f:
                    if line.strip():
                        res = json.loads(line)
                        results[res["index"]] = res
    label = "fake device (the host reference)" if fake else (_device_name() if on_gpu else None)
    report = _report(jobs, results, names, on_gpu, arch, opt_level, time.time() - t0, label)
    if out:
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        with open(out, "w") as f:
            json.dump(report, f, indent=1, default=_jsonable)
            f.write("\n")
    if md:
        with open(md, "w") as f:
            f.write(markdown(report))
    log(markdown(report))
    return report


def _patch_print(results_path: str, index: int, stdout_text: str) -> None:
    """The print job's verdict is made here: the worker compared an empty string (its stdout is
    the device's), so judge the captured text against the host's and rewrite the line."""
    lines = open(results_path).read().splitlines()
    out = []
    for line in lines:
        if not line.strip():
            continue
        res = json.loads(line)
        if res["index"] == index:
            for c in res["cases"]:
                if c.get("unchanged") or c.get("refused") or c.get("host_printed") is None or c.get("error"):
                    continue
                want = c["host_printed"]
                c["ok"] = stdout_text == want
                c["bad"] = 0 if c["ok"] else 1
                c["lanes"] = len(want.encode())
                c["error"] = None
                c["first"] = [] if c["ok"] else [("stdout", want, stdout_text)]
        out.append(json.dumps(res, default=_jsonable))
    with open(results_path, "w") as f:
        f.write("\n".join(out) + "\n")


def _report(jobs, results, names, on_gpu, arch, opt_level, seconds, label=None) -> dict:
    from ..assemble import tileiras_version

    fams = families()
    fam_rows: list[dict] = []
    mut_rows: list[dict] = []
    for fname in names:
        fam = fams[fname]
        host_only = {}
        corpus = 0
        for case in fam.cases:
            ans = host_answer(case) if not on_gpu else None
            args = case.make_args()
            corpus += case.corpus_size(args) * case.launches
            if ans is not None:
                host_only[case.name] = ans.error
        base = next((results.get(i) for i, j in enumerate(jobs) if j.family == fname and j.mutant is None), None)
        row = {"family": fname, "tier": fam.tier, "judgement": fam.judgement, "ops": list(fam.ops),
               "cases": len(fam.cases), "corpus": corpus}
        if base is not None:
            cs = base.get("cases", [])
            row.update(lanes=sum(c.get("lanes", 0) for c in cs),
                       passed=bool(cs) and all(c.get("ok") for c in cs) and not base.get("error"),
                       max_err=max([c.get("max_err", 0.0) or 0.0 for c in cs] or [0.0]),
                       max_ulp=max([c.get("max_ulp", 0.0) or 0.0 for c in cs] or [0.0]),
                       failures=[{k: c.get(k) for k in ("case", "bad", "lanes", "error", "first")} for c in cs
                                 if not c.get("ok")] + ([{"error": base["error"]}] if base.get("error") else []),
                       per_op={f"{c['case']}/{k}": v for c in cs for k, v in (c.get("by_label") or {}).items()})
        else:
            row.update(lanes=None, passed=None, max_err=None, max_ulp=None,
                       host_errors={k: v for k, v in host_only.items() if v})
        killed = 0
        for m in (M.BY_NAME[j.mutant] for j in jobs if j.family == fname and j.mutant):
            if m.family != fname or any(r["mutant"] == m.name for r in mut_rows):
                continue
            status, detail = _mutant_verdict(m, jobs, results)
            killed += status == "killed"
            mut_rows.append({"mutant": m.name, "family": fname, "also": list(m.also), "where": m.where, "what": m.what,
                             "status": status, "detail": detail,
                             "proves_nothing": status in ("survived", "unchanged")})
        row["mutants_killed"] = killed
        row["mutants_total"] = len(fam.mutants)
        fam_rows.append(row)
    try:
        version = tileiras_version()
    except Exception:
        version = None
    return {"tool": "python -m tileir.diff", "date": datetime.datetime.now(datetime.timezone.utc).isoformat(
        timespec="seconds"), "device": label, "arch": arch, "tileiras": version,
        "opt_level": "tileiras default" if opt_level is None else opt_level, "seconds": round(seconds, 1),
        "families": fam_rows, "mutants": mut_rows,
        "summary": {"families": len(fam_rows), "passed": sum(1 for r in fam_rows if r.get("passed")),
                    "mutants": len(mut_rows), "killed": sum(1 for r in mut_rows if r["status"] == "killed"),
                    "proves_nothing": [r["mutant"] for r in mut_rows if r["proves_nothing"]]}}


def _device_name() -> str | None:
    try:
        from cuda.bindings import driver as cu

        from ..runtime.driver import context

        context()
        err, dev = cu.cuDeviceGet(0)
        err, name = cu.cuDeviceGetName(128, dev)
        return name.split(b"\0", 1)[0].decode()
    except Exception:
        return None


def markdown(report: dict) -> str:
    lines = [f"layer-2 diff: {report.get('device') or 'no device (host and assembly only)'}, {report['arch']}, "
             f"tileiras {report.get('tileiras')}, opt level: {report['opt_level']}, {report['seconds']} s", "",
             "| family | tier | cases | corpus | lanes compared | pass | max err (ulp) | mutants killed |",
             "|---|---|---|---|---|---|---|---|"]
    for r in report["families"]:
        p = {True: "yes", False: "**NO**", None: "-"}[r.get("passed")]
        err = "-" if r.get("max_err") is None else f"{r['max_err']:.3g} ({r.get('max_ulp') or 0:.3g})"
        lines.append(f"| {r['family']} | {r['tier']} | {r['cases']} | {r['corpus']} | {r.get('lanes') or '-'} | {p} | "
                     f"{err} | {r['mutants_killed']}/{r['mutants_total']} |")
    if report["mutants"]:
        lines += ["", "| mutant | family | status | detail |", "|---|---|---|---|"]
        for m in report["mutants"]:
            st = m["status"] + (" (proves nothing)" if m["proves_nothing"] else "")
            lines.append(f"| {m['mutant']} | {m['family']} | {st} | {m['detail'][:120].replace('|', '/')} |")
    return "\n".join(lines) + "\n"


__all__ = ["Answer", "host_answer", "judge_case", "lower_bytes", "assemble_many", "device_answer", "Job",
           "build_jobs", "run", "markdown", "worker_main"]
