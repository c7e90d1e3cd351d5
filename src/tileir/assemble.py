"""Bytecode to cubin: find tileiras, choose its arguments, run it, and cache what it makes.

tileiras runs on a machine without a GPU, so everything here except ``gpu_name_of_device``
works on a CPU-only machine. The child process gets an environment no user setting can derail
(``_child_env``): tileiras reads ``CUDA_HOME``, ``CUDA_PATH`` and ``CUDA_ROOT`` and, with any of them
set (to another toolkit, an empty directory, even ""), loads that toolkit's libnvvm before its own
and every compile fails with one uninformative line; they are removed. Its temporary files
(``TMPDIR``, ``TMP``, ``TEMP``, ``TEMPDIR``, read by tileiras and ptxas; a missing directory fails
every compile) go to a fresh directory of ours, removed after the run. Measured by
tools/tileiras_env_probe.py (bench/results/tileiras_env_cpu.json): no other variable it or ptxas
reads changes a compile.

It runs in its own process group under ``$TILEIR_COMPILE_TIMEOUT`` seconds (``DEFAULT_TIMEOUT_S``),
the whole group (ptxas included) killed past it; what it prints is kept to its head and tail in
an error (``bounded``). The cubin cache is ``cubin_cache``: an LRU in this process in front of it.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from . import cubin_cache
from .cubin_cache import ELF_MAGIC, cache_dir, cache_key, elf_problem  # noqa: F401  (this module's API)
from .errors import TileirError
from .lru import LRU

INSTALL_HINT = "pip install 'tileir[cuda]'"
OPT_LEVELS = (0, 1, 2, 3)
ENV_TIMEOUT = "TILEIR_COMPILE_TIMEOUT"
DEFAULT_TIMEOUT_S = 600.0
TOOLKIT_VARS = ("CUDA_HOME", "CUDA_PATH", "CUDA_ROOT")  # each makes tileiras look in another toolkit
TEMP_VARS = ("TMPDIR", "TMP", "TEMP", "TEMPDIR")  # where tileiras and ptxas write their temporary files
SAID_LIMIT = 8000  # characters of a tool's output an error keeps (head and tail)

# ---------------------------------------------------------------------------------------------
# Finding tileiras and its version


@functools.cache
def find_tileiras() -> str:
    """The path of tileiras: the pip package's, then ``$TILEIR_TILEIRAS``, then the one on PATH."""
    spec = importlib.util.find_spec("nvidia")
    if spec is not None and spec.submodule_search_locations:
        for root in spec.submodule_search_locations:
            candidate = Path(root) / "cu13" / "bin" / "tileiras"
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return str(candidate)
    env = os.environ.get("TILEIR_TILEIRAS")
    if env:
        if Path(env).is_file() and os.access(env, os.X_OK):
            return env
        raise TileirError(f"TILEIR_TILEIRAS names {env!r}, which is not an executable file.",
                          fix=f"point TILEIR_TILEIRAS at a tileiras binary, or unset it and {INSTALL_HINT}")
    found = shutil.which("tileiras")
    if found:
        return found
    raise TileirError("tileiras, the Tile IR assembler, was not found: not in the nvidia-cuda-tileiras pip "
                      "package, not named by TILEIR_TILEIRAS, and not on PATH.",
                      fix=f"{INSTALL_HINT} (it brings tileiras, ptxas and libnvvm at one pin)")


def _child_env(tmp: str | None = None) -> dict[str, str]:
    """This process's environment without the variables that point tileiras at another toolkit, and
    with its temporary files in ``tmp`` (a directory of ours; a valid system one when None)."""
    env = {k: v for k, v in os.environ.items() if k not in TOOLKIT_VARS}
    tmp = tmp if tmp is not None else tempfile.gettempdir()
    env.update({k: tmp for k in TEMP_VARS})
    return env


def compile_timeout() -> float:
    """``$TILEIR_COMPILE_TIMEOUT`` (seconds, > 0), or ``DEFAULT_TIMEOUT_S``."""
    text = os.environ.get(ENV_TIMEOUT)
    if not text:
        return DEFAULT_TIMEOUT_S
    try:
        s = float(text)
    except ValueError:
        s = 0.0
    if not 0 < s < float("inf"):
        raise TileirError(f"{ENV_TIMEOUT}={text!r} is not a positive number of seconds.",
                          fix=f"{ENV_TIMEOUT}=1200 (or unset it for {DEFAULT_TIMEOUT_S:g})")
    return s


def bounded(text: str, limit: int = SAID_LIMIT) -> str:
    """``text`` cut to its first and last ``limit // 2`` characters when longer, saying how much
    was left out: a tool's 20 MB of output does not become a 20 MB exception."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n... [{len(text) - 2 * half} characters left out] ...\n{text[-half:]}"


def _run_child(cmd: list[str], env: dict, timeout_s: float) -> tuple[int, bytes, bytes]:
    """(exit status, stdout, stderr) of ``cmd`` run in a new process group; past ``timeout_s`` (or on
    any exception here, ^C included) the whole group is killed and TimeoutExpired / the exception
    raised. Every tileiras run goes through here."""
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except BaseException:
        _kill_group(proc)
        raise
    return proc.returncode, out or b"", err or b""


def _kill_group(proc: subprocess.Popen) -> None:
    """Kill ``proc``'s process group (it leads it: start_new_session) and reap it. Its pid, still
    unreaped, cannot have been reused."""
    try:
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, signal.SIGKILL)
        else:  # Windows: no process groups here; the child alone
            proc.kill()
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.communicate(timeout=10)
    except Exception:
        pass


_version_lock = threading.Lock()
_versions: dict[str, str] = {}


def _version_of(path: str) -> str:
    got = _versions.get(path)
    if got is not None:
        return got
    with _version_lock:  # threads asking at once run it once
        if path not in _versions:
            _versions[path] = _run_version(path)
    return _versions[path]


def _run_version(path: str) -> str:
    try:
        rc, out, err = _run_child([path, "--version"], _child_env(), 60)
    except (OSError, subprocess.SubprocessError) as e:
        raise TileirError(f"could not run {path} --version: {e}", fix=INSTALL_HINT) from None
    said = (out + err).decode("utf-8", "replace")
    m = re.search(r"\bV(\d+\.\d+\.\d+)\b", said)
    if rc != 0 or m is None:
        raise TileirError(f"{path} --version exited {rc} and printed no version "
                          f"(V<major>.<minor>.<patch>): {bounded(said.strip())!r}")
    return m.group(1)


def tileiras_version(path: str | None = None) -> str:
    """The version ``tileiras --version`` prints after V, e.g. ``"13.4.92"`` (asked once per path)."""
    return _version_of(path if path is not None else find_tileiras())


# ---------------------------------------------------------------------------------------------
# Arguments, and the assembler defects they work around

# The known tileiras defects (docs/assembler-defect.md): one Defect per (tileiras version, target) known
# (DEFECTS), and one per version for a defect of its optimiser that every target reaches
# (VERSION_DEFECTS). ``trigger`` is a predicate over an ir.Kernel naming the kernels that reach it
# (EVERY_KERNEL if it cannot be narrowed). Only reproduced defects are entries; what was searched and
# not found is in docs/assembler-defect.md. Change defects here and only here;
# tests/test_assembler_defect.py holds the decision.


def _walk(body):
    """Every instruction of ``body``, those inside regions included."""
    stack = list(body)
    while stack:
        ins = stack.pop()
        yield ins
        for region in ("body", "on_true", "on_false"):
            stack.extend(getattr(ins, region, None) or ())


def instr_kinds(kernel) -> frozenset[str]:
    """The class names of every instruction of an ``ir.Kernel``, those inside regions included."""
    return frozenset(type(ins).__name__ for ins in _walk(kernel.body))


def EVERY_KERNEL(kernel) -> bool:  # noqa: N802 - a constant, recognised by identity
    """The trigger of a defect that could not be narrowed: every kernel reaches it."""
    return True


def uses(*kinds: str) -> Callable[[object], bool]:
    """The trigger "the kernel has an instruction of one of these kinds" (ir class names)."""
    wanted = frozenset(kinds)

    def trigger(kernel) -> bool:
        return bool(wanted & instr_kinds(kernel))

    trigger.__name__ = f"uses({', '.join(sorted(wanted))})"
    return trigger


def _aligned(ref, defs) -> bool:
    """Whether the view ``ref`` stands, through its views, on a pointer under assume div_by >= 16."""
    from .ir import DivBy, Val

    for _ in range(32):
        d = defs.get(ref.id) if isinstance(ref, Val) else None  # an Arg: a bare parameter
        if d is None:
            return False
        kind = type(d).__name__
        if kind == "AssumeTile" and isinstance(d.pred, DivBy) and d.pred.divisor >= 16:
            return True
        if kind in ("AssumeTile", "MakePartitionView", "MakeStridedView", "MakeGatherScatterView"):
            ref = d.src
        elif kind == "MakeTensorView":
            ref = d.base
        else:
            return False
    return False


def token_chained_unaligned_view_loads(kernel) -> bool:
    """The trigger reproduced on sm_90: a loop whose view loads are ordered through a token the loop
    carries (a load takes the carried token, or an earlier load's, in the loop), where such a load's
    view stands on a pointer with no div_by<16> assumption. (The lowering writes div_by<16> for every
    buffer and carries no token past loads of buffers it does not write: none of its kernels reach it.)"""
    from .ir import Val

    defs = {i.dst: i for i in _walk(kernel.body) if isinstance(getattr(i, "dst", None), int)}
    for loop in _walk(kernel.body):
        if type(loop).__name__ not in ("ForLoop", "WhileLoop"):
            continue
        loads = [i for i in _walk(loop.body) if type(i).__name__ == "LoadViewTile"]
        toks = set(loop.carried) | {i.tok_out for i in loads}
        if any(isinstance(i.tok_in, Val) and i.tok_in.id in toks and not _aligned(i.view, defs) for i in loads):
            return True
    return False


def holds_while_loop(kernel) -> bool:
    """The trigger of the while-loop defects (docs/assembler-defect.md, the sixth): the ``ir.Kernel``
    holds a ``WhileLoop`` anywhere, in regions too. That is a ``d_loop`` the lowering keeps as a loop: one
    whose constants stop it on its first iteration it writes as its body once (the fifth defect's
    workaround, families/loops.py ``stops_on_first_iteration``), so only loops whose trip count the data
    decides, or that run past their first iteration, are left."""
    return "WhileLoop" in instr_kinds(kernel)


def alloca_in_a_loop(kernel) -> bool:
    """An ``AllocaPtr`` in the body of a ``ForLoop`` or ``WhileLoop``: campaign 4's 3958 (an alloca in a
    for loop of 3 trips, reductions and an xor of the carry: 121 of 256 lanes wrong at tileiras' default
    level, right at -O0 on the H200; 1 of the campaign's 33 such programs outside while loops) and campaign
    2's 2926 (a misaligned address from allocas in a loop, right at -O0)."""
    for ins in _walk(kernel.body):
        if type(ins).__name__ in ("ForLoop", "WhileLoop") and \
                any(type(x).__name__ == "AllocaPtr" for x in _walk(ins.body)):
            return True
    return False


def _own_continues(body):
    """The ``Cont`` instructions of a loop's ``body`` that continue that loop: those in its ifs, not
    those of loops nested in it."""
    stack = list(body)
    while stack:
        ins = stack.pop()
        kind = type(ins).__name__
        if kind == "Cont":
            yield ins
        elif kind == "IfElse":
            stack.extend(ins.on_true or ())
            stack.extend(ins.on_false or ())


def carry_yielded_to_another(kernel) -> bool:
    """A loop that continues with one carry's entering value as another carry's next value (``c1' = c0``
    beside ``c0' = c0 + c1``: SSA's swap problem): campaign 5's 100243, a for loop of 3 trips whose
    second result came back as the first carry's final value (2 of 2 lanes wrong at tileiras' default
    level, right at -O0 on the H200). 285 of campaign 5's 10,000 programs have such a loop and 1
    differed: the trigger is wider than the defect. No library kernel has one."""
    from .ir import Val

    for loop in _walk(kernel.body):
        if type(loop).__name__ not in ("ForLoop", "WhileLoop"):
            continue
        pos = {c: i for i, c in enumerate(loop.carried)}
        for cont in _own_continues(loop.body):
            if any(isinstance(v, Val) and pos.get(v.id, j) != j for j, v in enumerate(cont.values)):
                return True
    return False


WORKAROUND = {"any_alloca": True}  # a study's switch: False leaves ``holds_alloca`` out of the -O0 trigger


def holds_alloca(kernel) -> bool:
    """An ``AllocaPtr`` anywhere (while ``WORKAROUND["any_alloca"]``): campaign 10's 608065, two allocas of a
    reduction's [1, 8] result stored and read back beside an unrelated copy, 4 blocks, no loop, failed its
    launch with CUDA_ERROR_ILLEGAL_ADDRESS at tileiras' default level and was right at -O0 on the H200
    (bench/results/fuzz_campaign10_after_h200.json). Its variants (bench/alloca_variants.py) failed with the
    read-back values used too and needed the reduction, the copy and several blocks together: no narrower
    test. No library kernel holds an alloca, so -O0 for all of them costs the library nothing. (With the
    switch off, ``alloca_in_a_loop`` still stands: the runs before this trigger had it.)"""
    return WORKAROUND["any_alloca"] and "AllocaPtr" in instr_kinds(kernel)


def optimiser_loops(kernel) -> bool:
    """The trigger of tileiras 13.4.92's optimiser defects (docs/assembler-defect.md, the sixth):
    ``holds_while_loop``, ``alloca_in_a_loop``, ``carry_yielded_to_another`` or ``holds_alloca``."""
    return holds_while_loop(kernel) or alloca_in_a_loop(kernel) or carry_yielded_to_another(kernel) or \
        holds_alloca(kernel)


@dataclass(frozen=True)
class Defect:
    trigger: Callable[[object], bool]  # over an ir.Kernel: the kernels that reach the defect
    workaround: tuple[str, ...]
    sentence: str  # assembler_defect's answer


_REPRODUCED = ("gives wrong answers at its default level (also at -O1 and -O2; right at -O0) for a loop that "
               "orders its view loads through a token it carries when the loaded pointers have no div_by<16> "
               "assumption (seen on an H200 with 8192^3 f16 matmuls at 128x256x64 tiles)")
_DEFECT_TARGETS_13_4_92 = ("sm_90", "sm_100", "sm_103", "sm_107", "sm_110")
DEFECTS: dict[tuple[str, str], Defect] = {
    ("13.4.92", gpu): Defect(
        token_chained_unaligned_view_loads,
        ("--opt-level", "0"),
        f"tileiras 13.4.92 for sm_90 {_REPRODUCED}, so kernels that reach that trigger are assembled with "
        "--opt-level 0 and no others; docs/assembler-defect.md and tests/test_assembler_defect.py hold it."
        if gpu == "sm_90" else
        f"tileiras 13.4.92 for {gpu} is held, as the spec says, to the defect reproduced for sm_90, where it "
        f"{_REPRODUCED.replace('gives', 'gave', 1)}, but no {gpu} device has run it, so kernels that reach the "
        "same trigger get --opt-level 0 and no others; docs/assembler-defect.md and "
        "tests/test_assembler_defect.py hold it.",
    )
    for gpu in _DEFECT_TARGETS_13_4_92
}


# tileiras 13.4.92's optimiser and while loops, on every target: the device fuzzer's campaign 2 on an H200
# (sm_90) found loops whose trip count the data decides answering an earlier iteration's carried values
# (diff.fuzzknown's while-stale-carries: 9 programs, all 9 equal at --opt-level 0 in
# bench/results/fuzz_while_O0_h200.json) and a misaligned address from two allocas in a loop of 3 trips
# (seed 2926: right at -O0, bench/results/fuzz_errors2_h200.json); the loops that stop on their first
# iteration, which tileiras fails to assemble at -O1 to -O3 and takes at -O0, fail so for sm_80, sm_86,
# sm_90, sm_100 and sm_120 alike (on the CPU): an optimiser every target shares, so every target gets it.
_WHILE_13_4_92 = (
    "tileiras 13.4.92 gives wrong answers at its default level and right ones at -O0 for while loops that run "
    "past their first iteration (seen on an H200, sm_90: a loop answering the carried values of an earlier "
    "iteration in 9 fuzz programs, a misaligned address from allocas in a loop in one), for an alloca in a "
    "for loop (one fuzz program, 121 lanes wrong) and for a for loop that continues with one carry's entering "
    "value as another carry's (one fuzz program, 2 lanes wrong), and its optimiser fails on while loops for "
    "every target it was tried on, so kernels that hold a while loop, an alloca in a loop or such a loop are "
    "assembled with --opt-level 0 on every target; docs/assembler-defect.md and tests/test_assembler_defect.py "
    "hold it.")
VERSION_DEFECTS: dict[str, Defect] = {
    "13.4.92": Defect(optimiser_loops, ("--opt-level", "0"), _WHILE_13_4_92),
}


def defects_of(tileiras: str, gpu_name: str) -> tuple[Defect, ...]:
    """The reproduced defects of tileiras version ``tileiras`` for ``gpu_name``: the target's
    (``DEFECTS``), then the version's on every target (``VERSION_DEFECTS``)."""
    found = (DEFECTS.get((tileiras, gpu_name)), VERSION_DEFECTS.get(tileiras))
    return tuple(d for d in found if d is not None)


def while_loops_at_O0(tileiras: str, gpu_name: str) -> bool:
    """Whether tileiras version ``tileiras`` for ``gpu_name`` assembles a kernel that holds a while loop
    (or an alloca in a loop, or a loop passing one carry to another) at -O0 unless a level is forced (the
    fuzzer's ``while-O0``, ``carry-swap-O0`` and
    ``alloca-loop-O0`` workarounds, diff/fuzzmodel.py)."""
    return any(d.trigger is optimiser_loops for d in defects_of(tileiras, gpu_name))


def assembler_defect(tileiras: str, gpu_name: str) -> str | None:
    """Why arguments are added for tileiras version ``tileiras`` on ``gpu_name`` (to every kernel,
    or to the kernels that reach a trigger): per defect one sentence naming the version, the target,
    the defect as reproduced and what tracks it, joined by a space; None where nothing is added."""
    found = defects_of(tileiras, gpu_name)
    return " ".join(d.sentence for d in found) if found else None


def kernel_args(kernel, tileiras: str, gpu_name: str, opt_level: int | None = None) -> list[str]:
    """The tileiras arguments before ``-o`` for one ``ir.Kernel``: --gpu-name, then the level a
    user forces (``opt_level`` wins over any workaround) or, for each reproduced defect of this
    combination that the kernel reaches, its workaround (once where two defects share one). A kernel
    that holds a while loop, an alloca in a loop or a carry passed to another reaches tileiras 13.4.92's
    loop defect on every target (``optimiser_loops``: -O0). ``kernel`` None (bytes we cannot inspect) gets the
    workaround of any reproduced defect.

    A forced ``opt_level`` other than 0 on a kernel that reaches a defect risks that defect (for a
    while loop: stale carried values, a misaligned address)."""
    args = ["--gpu-name", gpu_name]
    if opt_level is not None:
        if isinstance(opt_level, bool) or opt_level not in OPT_LEVELS:
            raise TileirError(f"opt_level must be one of {OPT_LEVELS} (tileiras --opt-level), not {opt_level!r}.")
        return args + ["--opt-level", str(int(opt_level))]
    extra: list[tuple[str, ...]] = []
    for d in defects_of(tileiras, gpu_name):
        if (kernel is None or d.trigger is EVERY_KERNEL or d.trigger(kernel)) and d.workaround not in extra:
            extra.append(d.workaround)
    return args + [a for w in extra for a in w]


def tileiras_args(tileiras: str, gpu_name: str) -> list[str]:
    """The arguments before ``-o <cubin> <bytecode>`` that every kernel gets for tileiras version
    ``tileiras`` on ``gpu_name``: --gpu-name, and a workaround only where a reproduced defect's
    trigger is every kernel (``kernel_args`` answers for one kernel)."""
    extra: list[tuple[str, ...]] = []
    for d in defects_of(tileiras, gpu_name):
        if d.trigger is EVERY_KERNEL and d.workaround not in extra:
            extra.append(d.workaround)
    return ["--gpu-name", gpu_name, *(a for w in extra for a in w)]


# ---------------------------------------------------------------------------------------------
# The cubins made in this process, in front of the disk cache (cubin_cache)

_memory_cache = LRU()


def clear_memory_cache() -> None:
    _memory_cache.clear()


# ---------------------------------------------------------------------------------------------
# Running tileiras

_ONE_LINE = "failed to compile Tile IR program"


def _run_tileiras(tileiras: str, bytecode: bytes, args: list[str], *, kernel: str, gpu_name: str) -> bytes:
    timeout_s = compile_timeout()
    with tempfile.TemporaryDirectory(prefix="tileir-") as d:
        src = os.path.join(d, f"{_safe(kernel)}.tileirbc")
        out = os.path.join(d, f"{_safe(kernel)}.cubin")
        with open(src, "wb") as f:
            f.write(bytecode)
        cmd = [tileiras, *args, "-o", out, src]
        try:
            rc, stdout, stderr = _run_child(cmd, _child_env(d), timeout_s)
        except subprocess.TimeoutExpired:
            raise TileirError(f"tileiras did not finish within {timeout_s:g} s for target {gpu_name} and was "
                              f"killed with its children. Command: {shlex.join(cmd)}", kernel=kernel,
                              what="assemble", fix=f"smaller tiles, or a longer {ENV_TIMEOUT} (seconds)") from None
        except OSError as e:
            raise TileirError(f"could not run tileiras for target {gpu_name}: {e}. Command: {shlex.join(cmd)}",
                              kernel=kernel, what="assemble", fix=INSTALL_HINT) from None
        said = (stderr.decode("utf-8", "replace").strip() or stdout.decode("utf-8", "replace").strip())
        cubin = None
        if rc == 0:
            try:
                with open(out, "rb") as f:
                    cubin = f.read()
            except OSError:
                cubin = None
        if rc != 0 or not cubin:
            raise _assemble_error(kernel, gpu_name, cmd, rc, said)
        problem = elf_problem(cubin)
        if problem is not None:
            raise TileirError(f"tileiras exited 0 for target {gpu_name} but wrote no CUDA ELF cubin "
                              f"({len(cubin)} bytes: {problem}). Command: {shlex.join(cmd)}",
                              kernel=kernel, what="assemble")
        return cubin


def _assemble_error(kernel: str, gpu_name: str, cmd: list[str], rc: int, said: str) -> TileirError:
    msg = (f"tileiras could not assemble this kernel for target {gpu_name} (exit {rc}).\n"
           f"  command: {shlex.join(cmd)}\n"
           f"  tileiras said: {bounded(said) or '(nothing)'}")
    if _ONE_LINE in said and len(said.splitlines()) <= 2:
        msg += ("\n  tileiras often prints only this one line. It means either that the Tile IR was "
                "refused (inspect it with `tileir show " + kernel + " --emit mlir`) or that tileiras "
                "could not find ptxas or libnvvm.so.4 beside it (a broken install). tileir runs it without "
                f"{', '.join(TOOLKIT_VARS)} (each points it at another toolkit) and with its own temporary "
                "directory, so this environment's are not the cause.")
    else:
        msg += f"\n  Inspect the Tile IR with `tileir show {kernel} --emit mlir`."
    return TileirError(msg, kernel=kernel, what="assemble")


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:64] or "kernel"


def assemble(bytecode: bytes, gpu_name: str, *, kernel: str, opt_level: int | None = None,
             extra_args=(), cache: bool = True, program=None) -> bytes:
    """The cubin tileiras makes from ``bytecode`` for ``gpu_name`` (e.g. ``"sm_90"``).

    ``program`` is the ``ir.Kernel`` the bytes encode: with it, a defect workaround is added only if this
    kernel reaches the defect (``kernel_args``): with tileiras 13.4.92 a kernel that holds a while loop, an
    alloca in a loop or a carry passed to another is assembled at ``--opt-level 0`` on every target
    (docs/assembler-defect.md, the sixth defect). ``opt_level`` forces ``--opt-level`` (replacing any
    workaround: a level other than 0 for such a kernel risks the defect it works around); ``extra_args`` go
    after the chosen arguments. The arguments are part of the cache key (``cache_key``), so a cubin made at
    one level is never answered for another. With ``cache`` the answer is kept in this process (an LRU) and on
    disk (``cubin_cache``), and a key is compiled once while other threads and processes asking for it wait.
    """
    if not isinstance(gpu_name, str) or not re.fullmatch(r"sm_\d+[a-z]?", gpu_name):
        raise TileirError(f"the target must be an sm_XY name such as 'sm_90', not {gpu_name!r}.",
                          kernel=kernel, what="assemble")
    if not isinstance(bytecode, (bytes, bytearray, memoryview)):
        raise TileirError(f"assemble takes the bytecode as bytes, not {type(bytecode).__name__}.",
                          kernel=kernel, what="assemble")
    bytecode = bytes(bytecode)
    tileiras = find_tileiras()
    version = tileiras_version(tileiras)
    args = kernel_args(program, version, gpu_name, opt_level) + [str(a) for a in extra_args]
    if not cache:
        return _run_tileiras(tileiras, bytecode, args, kernel=kernel, gpu_name=gpu_name)
    key = cache_key(bytecode, version, gpu_name, args)
    hit = _memory_cache.get(key)
    if hit is not None:
        return hit
    directory = cache_dir()
    with cubin_cache.compile_lock(key, compile_timeout(), directory):
        cubin = _memory_cache.get(key)  # made by the thread that held the key before us
        if cubin is None:
            path = cubin_cache.entry_path(key, directory)
            cubin = cubin_cache.read_entry(path, key)
            if cubin is None:
                cubin = _run_tileiras(tileiras, bytecode, args, kernel=kernel, gpu_name=gpu_name)
                cubin_cache.write_entry(path, key, cubin)
            _memory_cache[key] = cubin
    return cubin


# ---------------------------------------------------------------------------------------------
# The target of this machine's GPU


def gpu_name_of_device() -> str | None:
    """``sm_XY`` of GPU 0, or None where there is no driver or no GPU (never raises)."""
    try:
        from cuda.bindings import driver as cu

        (err,) = cu.cuInit(0)
        if err != cu.CUresult.CUDA_SUCCESS:
            return None
        err, count = cu.cuDeviceGetCount()
        if err != cu.CUresult.CUDA_SUCCESS or count < 1:
            return None
        err, dev = cu.cuDeviceGet(0)
        if err != cu.CUresult.CUDA_SUCCESS:
            return None
        attr = cu.CUdevice_attribute
        err, major = cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev)
        if err != cu.CUresult.CUDA_SUCCESS:
            return None
        err, minor = cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev)
        if err != cu.CUresult.CUDA_SUCCESS:
            return None
        return f"sm_{major}{minor}"
    except Exception:
        return None
