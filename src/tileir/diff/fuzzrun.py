"""Compiling and running fuzz programs: the CPU half (``compile_task``, run in a process pool:
record, lower, encode, assemble with tileiras, draw the inputs, run the host reference) and the
GPU half (a WORKER process that launches each cubin, judges it against the host's answer and
writes one JSON line a program).

The worker is persistent: it reads batches from its standard input (a jobs file and a results
file a line) and says ``done`` on a pipe of its own, so the shrinker can send it a handful of
candidates at a time without paying for a fresh CUDA context. A launch error may leave the
context unusable (an assert that fired always does): the worker writes that program's result and
exits, and ``GpuWorker`` starts a fresh one for the rest. A program that runs past ``hang_s`` is
killed and marked. The device's printf goes to the worker's standard output, which is redirected
into a file around each launch that prints.

``InProcessDevice`` is the same interface without a GPU: its answers come from a function (the
tests' fake devices).
"""

from __future__ import annotations

import copy
import ctypes
import hashlib
import json
import os
import pickle
import select
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from typing import TextIO

import numpy as np

from . import mutants as M
from .fuzzgen import DEFAULT, Profile, generate, op_kinds, walk
from .fuzzjudge import ENVELOPE_DRAWS, Answer, Layout, host_answer, judge

KERNEL = "fuzz"
FAKE = "TILEIR_FUZZ_FAKE"  # set in a worker's environment: answer with the host reference (no GPU)
# the fake device's answer where the host reference stops at an assert: the words the H200's launch fails with
# (tileiras' assert is a printf and a trap, which the driver reports so), then where the host stopped
FAKE_ASSERT_STOP = ("TileirError: kernel 'fuzz': running the kernel (cuStreamSynchronize after the launch) failed: "
                    "CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure) [fake device: the host stopped")


# ---- the CPU half ------------------------------------------------------------------------------------


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    said = text.split("tileiras said:", 1)
    if len(said) == 2:
        return "tileiras: " + said[1].strip().splitlines()[0][:300]
    return text.splitlines()[0][:300] if text else type(e).__name__


def compile_task(task: dict) -> dict:
    """One program through the CPU half. ``task``: seed, desc (None: drawn from the seed and
    ``profile``), arch, opt_level, mutant (lower with it active), host (run the host reference).
    ``assemble`` False skips tileiras (the tests' fake devices need no cubin). Answers a result with
    ``status`` refused | record_crash | lower_crash | assemble_error | host_error | ready (a job for
    the device: cubin, args, layout, host answer)."""
    warnings.filterwarnings("ignore")
    from .. import lower
    from ..assemble import assemble
    from ..bytecode import encode_kernel
    from ..errors import TileirError
    from .fuzzbuild import build, make_args

    t0 = time.time()
    seed = task.get("seed", 0)
    desc = task.get("desc") or generate(seed, Profile(**task.get("profile", {})) if task.get("profile") else DEFAULT)
    out = {"index": task.get("index", 0), "seed": seed, "desc": desc, "mutant": task.get("mutant"),
           "opt_level": task.get("opt_level"), "ops": op_kinds(desc)}
    try:
        built = build(desc, KERNEL)
    except TileirError as e:
        out.update(status="refused", detail=_first_line(e), t_compile=time.time() - t0)
        return out
    except Exception as e:  # a crash of the recorder is a finding of its own
        out.update(status="record_crash", detail=f"{type(e).__name__}: {e}"[:400],
                   trace=traceback.format_exc(limit=6)[-1500:], t_compile=time.time() - t0)
        return out
    try:
        with M.use(task.get("mutant")):
            k = lower(built.prog)
            data = encode_kernel(k)
    except Exception as e:
        out.update(status="lower_crash", detail=f"{type(e).__name__}: {e}"[:400],
                   trace=traceback.format_exc(limit=6)[-1500:], t_compile=time.time() - t0)
        return out
    out["sha"] = hashlib.sha256(data).hexdigest()[:16]
    out["op_count"] = built.prog.op_count()
    if task.get("bytes_only"):
        out.update(status="lowered", t_compile=time.time() - t0)
        return out
    t1 = time.time()
    try:  # without ``assemble`` (the CPU tests' fake devices) there is no cubin
        cubin = assemble(data, task.get("arch", "sm_90"), kernel=KERNEL, program=k,
                         opt_level=task.get("opt_level")) if task.get("assemble", True) else None
    except Exception as e:
        out.update(status="assemble_error", detail=_first_line(e), t_compile=t1 - t0, t_assemble=time.time() - t1)
        return out
    t2 = time.time()
    layout = Layout.of(built)
    args = make_args(built)
    out.update(cubin=cubin, layout=layout, args=args, kparams=built.kparams(), grid=built.grid,
               prints=any(s["op"] in ("print", "assert") for s in walk(desc["body"])),  # an assert prints too
               t_compile=t1 - t0, t_assemble=t2 - t1)
    if task.get("host", True):
        host = host_answer(built.prog, layout, args, seed)
        out["host"] = host
        out["t_host"] = time.time() - t2
        if host.error and not host.asserted:
            out.update(status="host_error", detail=host.error[:400])
            return out
    out["status"] = "ready"
    return out


# ---- the GPU half ----------------------------------------------------------------------------------------


class _Stdout:
    """Fd 1 redirected into a temporary file while the device prints (printf goes to C's stdout)."""

    def __enter__(self):
        sys.stdout.flush()
        self.saved = os.dup(1)
        self.file = tempfile.TemporaryFile()
        os.dup2(self.file.fileno(), 1)
        return self

    def __exit__(self, *exc):
        try:
            ctypes.CDLL(None).fflush(None)
        except Exception:
            pass
        os.dup2(self.saved, 1)
        os.close(self.saved)
        self.file.seek(0)
        self.text = self.file.read().decode("utf-8", "replace")
        self.file.close()
        return False


def _forget_modules() -> None:
    """Unload the module just run: ten thousand programs must not keep ten thousand loaded."""
    import importlib

    L = importlib.import_module("tileir.runtime.launch")
    clear = getattr(L, "clear_modules", None)
    if clear is not None:
        clear()
    launchers = getattr(L, "_launchers", None)  # the launcher cache holds the cubins and modules alive
    if launchers is not None and hasattr(launchers, "clear"):
        launchers.clear()


def device_answer(job: dict) -> Answer:
    """The GPU's answer for a ready job: the cubin launched once on a copy of its arguments."""
    if os.environ.get(FAKE):
        return fake_answer(job)
    from ..runtime import launch

    args = copy.deepcopy(job["args"])
    ans = Answer()
    try:
        if job.get("prints"):
            cap = _Stdout()
            try:
                with cap:
                    launch(job["cubin"], KERNEL, job["grid"], args, job["kparams"])
            finally:  # a firing assert raises from the launch: what it printed is kept all the same
                ans.printed = getattr(cap, "text", "")
        else:
            launch(job["cubin"], KERNEL, job["grid"], args, job["kparams"])
    except Exception as e:
        ans.error = f"{type(e).__name__}: {e}"[:2000]
    try:
        _forget_modules()
    except Exception:
        pass
    lay = job["layout"]
    ans.outs = {lay.params[i][0]: args[i] for i in lay.outputs()}
    return ans


def fake_answer(job: dict, rules=None) -> Answer:
    """A device that is the host reference, with ``rules`` (op kind -> host rule) replacing the
    host's own where given: the tests' device that is wrong about one operation."""
    from ..ref.core import RULES, Interp
    from .fuzzbuild import build

    class Altered(Interp):
        def exec(self, ops):
            for op in ops:
                rule = (rules or {}).get(op.kind) or RULES.get(op.kind)
                if rule is None:
                    raise self.fail(f"the host reference has no rule for {op.kind}")
                self.cur_op = op.num
                rule(self, op)

    built = build(job["desc"], KERNEL)
    args = copy.deepcopy(job["args"])
    ans, it = Answer(), None
    try:
        it = Altered(built.prog, args, job["layout"].grid)
        with np.errstate(all="ignore"):
            it.run()
        ans.printed = "".join(it.printed)
    except Exception as e:
        ans.error = f"{type(e).__name__}: {e}"
        if "d_assert failed" in ans.error:  # stopped as the H200 stops at a firing assert (fuzzjudge.LAUNCH_FAILED),
            said = ans.error.split("d_assert failed", 1)[1].rstrip()  # its message printed first
            ans.printed = "".join(it.printed if it else ()) + f"assert failed{said}\n"
            ans.error = FAKE_ASSERT_STOP + said + "]"
    lay = job["layout"]
    ans.outs = {lay.params[i][0]: args[i] for i in lay.outputs()}
    return ans


# the GPU worker's sign of life while it judges a job (drawing the envelope again takes up to seconds for a
# large program): it touches the batch's results file, whose time the campaign's hang timer reads as an answer
_ALIVE: list = []


def _alive() -> None:
    for f in _ALIVE:
        f()


def wide_host(job: dict) -> Answer:
    """The host's answer of a ready job with its envelope over ENVELOPE_DRAWS draws of the random signs
    (its first draw the job's own), kept in the job once made."""
    if "host_wide" not in job:
        from .fuzzbuild import build

        built = build(job["desc"], KERNEL)
        job["host_wide"] = host_answer(built.prog, job["layout"], job["args"], job.get("seed", 0), ENVELOPE_DRAWS,
                                       tick=_alive)
    return job["host_wide"]


def judge_job(job: dict, dev: Answer) -> dict:
    """``dev`` judged against a ready job's host answer, the envelope drawn again (``wide_host``) where
    an approximate lane is out of tolerance under the job's one draw (fuzzjudge.judge)."""
    return judge(job["layout"], job["host"], dev, redraw=lambda: wide_host(job))


def run_job(job: dict, answer=device_answer) -> dict:
    """Launch and judge one ready job: a result line (no arrays)."""
    t = time.time()
    dev = answer(job)
    v = judge_job(job, dev)
    res = {"index": job["index"], "seed": job["seed"], "status": v["status"], "verdict": v,
           "t_device": round(time.time() - t, 4), "sticky": bool(dev.error)}
    return res


def worker_main(resp_fd: int) -> int:
    """The GPU worker: batches from stdin, one JSON line a program into the batch's results file,
    ``done`` on ``resp_fd`` after each batch; exits 3 after a launch error."""
    warnings.filterwarnings("ignore")
    resp = os.fdopen(resp_fd, "w", buffering=1)
    for line in sys.stdin:
        if not line.strip():
            continue
        jobs_path, results_path = line.rstrip("\n").split("\t")
        with open(jobs_path, "rb") as f:
            jobs = pickle.load(f)
        _ALIVE[:] = [lambda path=results_path: os.utime(path)]
        with open(results_path, "a") as out:
            for job in jobs:
                try:
                    res = run_job(job)
                except Exception:
                    res = {"index": job["index"], "seed": job["seed"], "status": "worker_error", "sticky": True,
                           "verdict": {"status": "worker_error", "detail": traceback.format_exc(limit=4)[-800:]}}
                out.write(json.dumps(res, default=_jsonable) + "\n")
                out.flush()
                if res.get("sticky"):
                    resp.write("sticky\n")
                    return 3
        resp.write("done\n")
    return 0


def _jsonable(x):
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    if isinstance(x, np.ndarray):
        return x.tolist()
    return str(x)


class GpuWorker:
    """The parent's handle on the worker process: ``run(jobs)`` answers one result per job, in
    order, starting fresh workers after sticky errors and killing one that hangs."""

    def __init__(self, fake: bool = False, hang_s: float = 60.0, log_path: str | None = None):
        self.fake, self.hang_s = fake, hang_s
        self.proc: subprocess.Popen[str] | None = None
        self.resp: TextIO | None = None  # the worker's answers: "done" or "sticky" per batch
        self.dir = tempfile.mkdtemp(prefix="tileir-fuzz-")
        self.log = open(log_path or os.path.join(self.dir, "worker.log"), "ab")
        self.starts = 0
        self.batch = 0
        self.deaths = 0  # workers in a row that died before answering anything
        self.broken: str | None = None  # why no worker can run (then every job answers worker_error)

    def _start(self) -> None:
        r, w = os.pipe()
        env = dict(os.environ)
        env.pop("CUDA_HOME", None)
        env.pop(M.ENV, None)  # the worker launches what it is handed; it lowers nothing
        if self.fake:
            env[FAKE] = "1"
        src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        cmd = [sys.executable, "-m", "tileir.diff", "_fuzz_worker", str(w)]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=self.log,
                                     pass_fds=(w,), env=env, text=True)
        os.close(w)
        self.resp = os.fdopen(r, "r")
        self.starts += 1

    def _stop(self) -> None:
        if self.proc is not None:
            try:
                self.proc.kill()
                self.proc.wait(timeout=10)
            except Exception:
                pass
        if self.resp is not None:
            self.resp.close()
        self.proc = self.resp = None

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                if self.proc.stdin is not None:
                    self.proc.stdin.close()
                self.proc.wait(timeout=20)
            except Exception:
                self._stop()
        self._stop()
        self.log.close()

    def run(self, jobs: list) -> list:
        pending, got = list(jobs), []
        while pending:
            if self.broken:  # no worker can run, or the campaign was stopped: the rest answer at once
                got += [{"index": job["index"], "seed": job["seed"], "status": "worker_error", "sticky": False,
                         "verdict": {"status": "worker_error", "detail": self.broken}} for job in pending]
                break
            if self.proc is None or self.proc.poll() is not None:
                self._stop()
                self._start()
            proc = self.proc
            assert proc is not None and proc.stdin is not None  # _start made one, its stdin a pipe
            self.batch += 1
            jp = os.path.join(self.dir, f"jobs{self.batch}.pkl")
            rp = os.path.join(self.dir, f"results{self.batch}.jsonl")
            with open(jp, "wb") as f:
                pickle.dump(pending, f)
            open(rp, "w").close()
            try:
                proc.stdin.write(f"{jp}\t{rp}\n")
                proc.stdin.flush()
                why = self._wait(rp)
            except OSError:  # it exited before reading its jobs (a broken pipe): as a death
                why = "exited before it read its jobs"
            with open(rp) as f:
                res = [json.loads(x) for x in f if x.strip()]
            got += res
            pending = pending[len(res):]
            os.unlink(jp)
            self.deaths = 0 if res else self.deaths + 1
            if why != "done":
                self._stop()
                why += self._log_tail()
                if self.deaths >= 3:  # it cannot even start (no driver, a broken install): stop trying
                    self.broken = f"the GPU worker died three times before answering: {why}"
                    return got + self.run(pending)
                if pending and why != "sticky" and not self.broken:  # it died or hung inside the next job
                    # (not when the campaign stopped it: that job is not the device's failure)
                    job = pending.pop(0)
                    got.append({"index": job["index"], "seed": job["seed"], "status": "device_error", "sticky": True,
                                "verdict": {"status": "device_error", "bad": 1, "detail": f"the worker {why}"}})
        return got

    def _log_tail(self) -> str:
        """The end of the worker's standard error, for a worker that died or hung."""
        try:
            self.log.flush()
            with open(self.log.name, "rb") as f:
                f.seek(0, 2)
                f.seek(max(0, f.tell() - 600))
                tail = f.read().decode("utf-8", "replace").strip()
            return f"; its stderr ends: {tail[-400:]}" if tail else ""
        except Exception:
            return ""

    def _wait(self, results_path: str) -> str:
        proc, resp = self.proc, self.resp
        assert proc is not None and resp is not None  # a worker runs: run() started it
        seen, last, touched = 0, time.time(), 0.0
        while True:
            ready, _, _ = select.select([resp], [], [], 1.0)
            if ready:
                msg = resp.readline().strip()
                return msg if msg in ("done", "sticky") else "died"
            if proc.poll() is not None:
                return f"died (exit {proc.returncode})"
            with open(results_path) as f:
                n = sum(1 for _ in f)
            mtime = os.path.getmtime(results_path) if os.path.exists(results_path) else 0.0
            if n > seen or mtime > touched:  # a new answer, or the worker's sign of life (_alive)
                seen, last, touched = n, time.time(), mtime
            elif time.time() - last > self.hang_s:
                return f"hung (no answer in {self.hang_s:.0f} s)"


class InProcessDevice:
    """A device without a process: ``answer(job) -> Answer`` (the tests' fakes)."""

    def __init__(self, answer=fake_answer):
        self.answer = answer

    def run(self, jobs: list) -> list:
        return [run_job(j, self.answer) for j in jobs]

    def close(self) -> None:
        pass


__all__ = ["compile_task", "device_answer", "fake_answer", "run_job", "worker_main", "GpuWorker", "InProcessDevice",
           "KERNEL", "FAKE", "FAKE_ASSERT_STOP", "judge_job", "wide_host"]
