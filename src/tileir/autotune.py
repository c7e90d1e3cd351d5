"""``tileir.autotune``: time candidate configurations of a kernel on the GPU, keep the fastest
whose answer agrees, and remember it on disk.

    from tileir import autotune
    from tileir.kernels import matmul_f16

    cands = [{"tm": 128, "tn": 128, "tk": 64}, {"tm": 128, "tn": 128, "tk": 32}, {"tm": 64, "tn": 128, "tk": 64}]
    win = autotune.tune(matmul_f16, cands, [a, b, c])              # torch CUDA tensors of 8192 x 8192
    autotune.best("matmul_f16", "sm_90", M=8192, N=8192, K=8192)   # == win, from the cache

``tune`` runs every candidate once and reads back what it writes (the parameters marked Out or
Shared, or every buffer of a kernel without markers), restoring those buffers before each run
so a kernel that adds into its output (a histogram) is compared fairly; a candidate whose answer
differs from the first candidate's beyond ``rtol`` / ``atol`` is not eligible, and one that
refuses (a tile the recording or tileiras rejects) is skipped. It then times each with CUDA
events through torch (warm-up, then the median of ``reps`` launches) and answers the fastest
eligible candidate, written to the cache under its key.

The key is (the GPU, the kernel's name, the shape bucket): the GPU named by its target, sm_XY,
what tileiras' ``--gpu-name`` takes; the bucket is the configuration ``tune`` was given besides
the candidates, with the named run-time sizes of its arrays (``M``, ``S``, ``D``: what a call
passes ``best``), in its canonical form -- without the kernel's tuned keys and
without keys set to the kernel's defaults, so ``attention(..., fmt="f16")`` and a call that leaves
fmt to its default meet one entry -- with each integer (a size) rounded up to a power of two and
every other value -- a format such as ``fmt="bf16"``, a flag such as ``causal`` -- kept as it is, so
the formats are in the key through the configuration or the kernel's name (matmul_f16). A
winner is kept whole, with the tuned keys the fixed configuration named: it is what was measured,
and a call takes it instead of the table's entry, not on top of it.

``best(kernel, gpu, **config)`` answers the cache's winner for that key, else the most specific
entry of the committed default table (``src/tileir/data/tune_defaults.json``, one list of
entries per target, each with the measurement it comes from), else None. The cache is the JSON
file ``tune.json`` in ``$TILEIR_CACHE_DIR``, or ``~/.cache/tileir/tune.json``.

A kernel is named by its KernelFn or by its name: every KernelFn makes itself known here when it is
defined (``know``), so a name finds a kernel defined in this process -- a library kernel once
``tileir.kernels`` is imported. This module imports neither ``tileir.kernel`` nor the library (the
kernels import it: a tuned call asks ``best``); the rule for unmeasured shapes is ``heuristics``,
a module of its own below both.

The cache trusts nothing it reads and loses nothing it writes: an entry is added under a lock file
(``tune.json.lock``) by reading the file afresh, so concurrent writers in threads or processes keep
each other's entries; ``best`` holds each entry it would use to the kernel's configuration
(``entry_problem``: known keys, the defaults' types, non-negative tuned sizes, power-of-two tiles)
and skips a bad one with a ``TuneCacheWarning`` naming the file and the key; a file of another
``version`` than ``CACHE_VERSION`` is not read and never overwritten.

The timing needs a GPU and torch; without them ``tune`` refuses, unless both ``run`` (a
candidate's answer) and ``timer`` (its time) are given, which is how the choice is tested on a
CPU.
"""

from __future__ import annotations

import inspect
import json
import os
import threading
import time
import warnings
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from .errors import TileirError
from .files import file_lock, write_atomic
from .heuristics import MEASURED_AS, rule
from .markers import Marker, kparam_of
from .runtime.arrays import numpy_to_torch, torch_to_numpy
from .runtime.timing import median_ms

DEFAULTS_FILE = Path(__file__).parent / "data" / "tune_defaults.json"

__all__ = ["tune", "best", "bucket", "canonical", "kernel_named", "know", "cache_key", "cache_path", "read_cache",
           "defaults", "cuda_event_timer", "DEFAULTS_FILE", "entry_problem", "TuneCacheWarning", "CACHE_VERSION"]


# ---- keys ----------------------------------------------------------------------------------------


def _pow2_at_least(v: int) -> int:
    return 1 if v <= 1 else 1 << (v - 1).bit_length()


def bucket(config: dict) -> dict:
    """The shape bucket of a configuration: each int (not bool) rounded up to a power of two, every
    other value as it is."""
    return {k: _pow2_at_least(v) if isinstance(v, int) and not isinstance(v, bool) else v
            for k, v in sorted(config.items())}


def _name(kernel) -> str:
    return kernel if isinstance(kernel, str) else kernel.name


# every kernel defined so far, by name (weakly: a kernel nobody holds is forgotten); KernelFn adds
# itself when it is made, so this module needs neither tileir.kernel nor the library
_NAMED: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def know(kernel) -> None:
    """Let the functions here find ``kernel`` (a KernelFn) by its name. Every KernelFn calls it
    when it is made; the first kernel defined under a name keeps it while it lives (the library's,
    once ``tileir.kernels`` is imported, unless a kernel of that name was defined before it)."""
    _NAMED.setdefault(kernel.name, kernel)


def kernel_named(kernel):
    """The KernelFn of ``kernel``: itself, or the kernel defined under that name (``know``; None
    if there is none)."""
    if not isinstance(kernel, str):
        return kernel if hasattr(kernel, "static") else None
    return _NAMED.get(kernel)


def canonical(kernel, config: dict) -> dict:
    """What a key is made of: the configuration's keys that are neither a tuned key of the kernel
    nor set to the kernel's default, so every spelling of one call (``fmt="f16"`` written out or
    left to its default) meets the same cache entry. As given for a kernel this package does not
    know."""
    fn = kernel_named(kernel)
    if fn is None:
        return dict(config)
    tuned, static = set(fn.tuned), fn.static
    return {k: v for k, v in config.items()
            if k not in tuned and not (k in static and _same(static[k], v))}


def _same(a, b) -> bool:
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:
        return False


def _with_defaults(kernel, config: dict) -> dict:
    """``config`` with the kernel's defaults for what it leaves out (the default table's ``when``
    is matched against this, so an entry for causal=False serves a call that leaves causal out)."""
    fn = kernel_named(kernel)
    if fn is None:
        return dict(config)
    empty = inspect.Parameter.empty
    return dict({k: v for k, v in fn.static.items() if v is not empty}, **config)


def cache_key(gpu: str, kernel, config: dict) -> str:
    """The cache's key for ``kernel`` (a name or a KernelFn) on ``gpu`` under ``config`` (its
    canonical form, bucketed)."""
    return json.dumps([gpu, _name(kernel), bucket(canonical(kernel, config))], sort_keys=True,
                      separators=(",", ":"))


# ---- the cache and the default table -------------------------------------------------------------


def cache_path() -> Path:
    """``$TILEIR_CACHE_DIR/tune.json``, or ``~/.cache/tileir/tune.json``."""
    env = os.environ.get("TILEIR_CACHE_DIR")
    return (Path(env) if env else Path.home() / ".cache" / "tileir") / "tune.json"


CACHE_VERSION = 1  # the format of tune.json this module reads and writes
_LOCK_TIMEOUT_S = 60.0  # a writer holds the lock for one read and one write of the file


class TuneCacheWarning(UserWarning):
    """A tune cache file or entry that is not used, naming it and saying why."""


_read_memo: dict = {}
_write_lock = threading.Lock()


def _load(path: Path) -> tuple[dict, str | None, bool]:
    """(the file's top-level object, why it cannot be used, whether it must be left as it is): {}
    where there is no file; a damaged file may be replaced, one of another version may not."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return {}, None, False
    except (OSError, UnicodeDecodeError) as e:
        return {}, f"it cannot be read ({e})", True
    try:
        data = json.loads(text)
    except ValueError as e:
        return {}, f"it is not JSON ({e})", False
    if not isinstance(data, dict) or not isinstance(data.get("entries", {}), dict):
        return {}, "it is not a JSON object with an 'entries' object", False
    version = data.get("version", CACHE_VERSION)
    if type(version) is not int or version != CACHE_VERSION:
        return data, (f"it is version {version!r} and this tileir reads version {CACHE_VERSION} (a newer "
                      "tileir's file is kept as it is: point TILEIR_CACHE_DIR elsewhere to tune here)"), True
    return data, None, False


def read_cache(path: Path | None = None) -> dict:
    """The cache's entries by key ({} where there is no file or it cannot be used, with a
    TuneCacheWarning saying why). Entries are as stored: ``best`` checks the one it uses."""
    path = Path(path) if path is not None else cache_path()
    try:
        st = path.stat()
    except OSError:
        return {}
    stamp = (st.st_mtime_ns, st.st_size, st.st_ino)  # a replaced file is a new inode, whatever its mtime
    got = _read_memo.get(path)
    if got is not None and got[0] == stamp:
        return got[1]
    data, why, _ = _load(path)
    if why is not None:
        warnings.warn(f"tune cache {path} is not used: {why}", TuneCacheWarning, stacklevel=2)
    entries = data.get("entries", {}) if why is None else {}
    _read_memo[path] = (stamp, entries)
    return entries


def _write_entry(key: str, entry: dict, path: Path | None = None) -> bool:
    """Add one entry: under the lock file, read the file afresh, add, write atomically (a temp file
    beside it, then os.replace), so no writer loses another's entry. A file of another version is
    left as it is (a TuneCacheWarning says so). A cache that cannot be written is not an error, only
    a slower next time: answers whether the entry was written."""
    path = Path(path) if path is not None else cache_path()
    with _write_lock, file_lock(path.with_name(path.name + ".lock"), _LOCK_TIMEOUT_S) as held:
        if not held:
            warnings.warn(f"tune cache {path}: its lock file could not be had; entry {key} is not written",
                          TuneCacheWarning, stacklevel=2)
            return False
        data, why, keep = _load(path)
        if keep:
            warnings.warn(f"tune cache {path}: {why}; entry {key} is not written", TuneCacheWarning, stacklevel=2)
            return False
        entries = dict(data.get("entries", {})) if why is None else {}
        entries[key] = entry
        doc = dict(data if why is None else {}, version=CACHE_VERSION, entries=entries)
        ok = write_atomic(path, json.dumps(doc, indent=1, sort_keys=True).encode())
    _read_memo.pop(path, None)
    return ok


def entry_problem(kernel, entry) -> str | None:
    """Why a cache entry cannot configure ``kernel`` (a name or a KernelFn), or None. The entry must
    be an object whose ``config`` is an object of numbers, strings and flags; for a kernel this
    package knows, each key one of its configuration keys, each value of the type of the kernel's
    default (an int where a float is wanted too), a tuned int not negative, and a tuned int whose
    default is a power of two (a tile size) a power of two."""
    if not isinstance(entry, dict):
        return f"the entry is a {type(entry).__name__}, not an object"
    config = entry.get("config")
    if not isinstance(config, dict):
        return f"its config is {_short(config)}, not an object"
    fn = kernel_named(kernel)
    static = fn.static if fn is not None else {}
    tuned = set(getattr(fn, "tuned", ()))
    empty = inspect.Parameter.empty
    for k, v in config.items():
        if fn is not None and k not in static:
            return f"{k!r} is not a configuration key of {fn.name} (it takes {', '.join(static) or 'none'})"
        if isinstance(v, (bool, str)) or (isinstance(v, (int, float)) and v == v and abs(v) != float("inf")):
            pass
        else:
            return f"{k}={_short(v)}: a configuration value is a finite number, a string or a flag"
        default = static.get(k, empty)
        if default is not empty and default is not None and type(v) is not type(default) and \
                not (type(default) is float and type(v) is int):
            return f"{k}={v!r} is a {type(v).__name__}; {k} is a {type(default).__name__} (default {default!r})"
        if type(v) is int and k in tuned:
            if v < 0:
                return f"{k}={v} is negative"
            if type(default) is int and default >= 2 and not default & (default - 1) and (v < 1 or v & (v - 1)):
                return f"{k}={v} is not a power of two, as the tile size {k} (default {default}) must be"
    return None


def _short(v) -> str:
    text = repr(v)
    return f"{type(v).__name__} {text if len(text) <= 60 else text[:57] + '...'}"


_defaults_memo: list = []


def defaults() -> list[dict]:
    """The committed default table's entries: {"gpu", "kernel", "when", "config", "measured"}."""
    if not _defaults_memo:
        try:
            data = json.loads(DEFAULTS_FILE.read_text())
            _defaults_memo.append(list(data.get("entries", [])))
        except (OSError, ValueError):
            _defaults_memo.append([])
    return _defaults_memo[0]


def _from_defaults(kernel, gpu: str, config: dict, least: int = 0) -> dict | None:
    """The most specific default entry for (gpu, name) whose ``when`` holds for ``config`` (every
    key in it present with that value) and names at least ``least`` keys; the first of equally
    specific ones."""
    name, config = _name(kernel), _with_defaults(kernel, config)
    found, most = None, -1
    for e in defaults():
        if e.get("gpu") != gpu or e.get("kernel") != name:
            continue
        when = e.get("when", {})
        if len(when) >= least and all(k in config and config[k] == v for k, v in when.items()) and len(when) > most:
            found, most = e, len(when)
    return dict(found["config"]) if found is not None else None


def _from_rule(kernel, gpu: str, config: dict) -> dict | None:
    """The rule's configuration for a shape nobody measured (heuristics.py), started from
    the table's catch-all entry for the kernel; None where the rule has nothing to say."""
    name = _name(kernel)
    measured = MEASURED_AS.get(name, name)
    catch_all = next((e["config"] for e in defaults() if e.get("gpu") == gpu and e.get("kernel") == measured
                      and not e.get("when")), None)
    return rule(name, gpu, _with_defaults(kernel, config), catch_all)


_gpu_memo: list = []


def this_gpu() -> str | None:
    """sm_XY of this machine's GPU 0, or None where there is none (asked once)."""
    if not _gpu_memo:
        from .assemble import gpu_name_of_device

        _gpu_memo.append(gpu_name_of_device())
    return _gpu_memo[0]


def best(kernel, gpu: str | None = None, **config) -> dict | None:
    """The configuration to use for ``kernel`` (a name or a KernelFn) on ``gpu`` (sm_XY; this
    machine's when None) under ``config``: the cache's winner for its shape bucket; else the
    default table's most specific entry whose ``when`` names something and holds; else the rule
    for unmeasured shapes (heuristics.py: None for problems so small the launch dominates,
    kernels and GPUs it does not know); else the table's catch-all entry (``when`` empty); else
    None (where there is no GPU and none is named, None)."""
    gpu = gpu or this_gpu()
    if gpu is None:
        return None
    key = cache_key(gpu, kernel, config)
    hit = read_cache().get(key)
    if hit is not None:
        problem = entry_problem(kernel, hit)
        if problem is None:
            return dict(hit["config"])  # whole: it is what was measured (the table's other keys were not)
        warnings.warn(f"tune cache {cache_path()}: entry {key} is skipped: {problem}", TuneCacheWarning,
                      stacklevel=2)
    specific = _from_defaults(kernel, gpu, config, least=1)
    if specific is not None:
        return specific
    ruled = _from_rule(kernel, gpu, config)
    if ruled is not None:
        return ruled
    return _from_defaults(kernel, gpu, config)


# ---- timing --------------------------------------------------------------------------------------


def cuda_event_timer(call: Callable[[], None], config: dict | None = None, *, reps: int = 20,
                     warmup: int = 3) -> float:
    """Milliseconds per launch of ``call``: ``warmup`` launches, then the median of ``reps``, each
    between two CUDA events on torch's current stream."""
    return median_ms(call, reps, warmup)


def _torch_or_refuse():
    why = None
    try:
        import torch

        if not torch.cuda.is_available():
            why = "torch sees no CUDA device"
    except ImportError:
        why = "torch is not installed (the timing uses its CUDA events)"
    if why is None and this_gpu() is None:
        why = "the CUDA driver reports no GPU"
    if why is not None:
        raise TileirError(f"tune times candidates on the GPU, and there is none here: {why}",
                          what="autotune", fix="run it where there is a GPU, or give run= and timer= "
                          "to choose among answers and timings you supply; best(...) reads the cache and the "
                          "default table anywhere")
    return torch


def _to_device(a, torch):
    return numpy_to_torch(a, torch) if isinstance(a, np.ndarray) else a


def _to_host(a) -> np.ndarray:
    if hasattr(a, "detach"):  # torch
        return torch_to_numpy(a)
    if hasattr(a, "get"):  # cupy
        return np.asarray(a.get())
    return np.asarray(a)


def _written(kernel_fn, cfg) -> list[int]:
    """The positions of the parameters a kernel may write: Out and Shared markers, and every buffer
    of a kernel declared with ByPtr."""
    out = []
    for i, m in enumerate(kernel_fn.markers(kernel_fn.config(**cfg))):
        if isinstance(m, Marker):
            if m.role in ("Out", "Shared"):
                out.append(i)
        elif kparam_of(m).by_ptr:
            out.append(i)
    return out


def _agrees(got, want, rtol, atol) -> bool:
    if len(got) != len(want):
        return False
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape:
            return False
        if not np.allclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True):
            return False
    return True


def tune(kernel_fn, candidates: list[dict], args, *, run: Callable | None = None, timer: Callable | None = None,
         rtol: float = 1e-2, atol: float = 1e-2, gpu: str | None = None, save: bool = True, reps: int = 20,
         warmup: int = 3, results: list | None = None, **config) -> dict:
    """The fastest of ``candidates`` (dicts of configuration, e.g. tiles) for ``kernel_fn`` on
    ``args`` under ``config`` whose answer equals the first working candidate's within ``rtol`` /
    ``atol``; remembered in the cache (``save``) under (gpu, kernel name, bucket(config)).

    ``args``: the launch's arguments (torch / cupy CUDA arrays; numpy arrays are copied to the GPU
    once). ``run(cfg) -> [arrays]``: a candidate's answer (default: launch it on the GPU with the
    written buffers restored first, and read them back). ``timer(call, cfg) -> ms``: its time
    (default: ``cuda_event_timer`` of a launch, ``reps`` and ``warmup``). Both given, no GPU is
    needed (``gpu`` names the target the answer is kept under, this machine's by default; nothing is
    kept without one).
    ``results``: a list that gets one record per candidate {"config", "ok", "ms", "error"}. On the
    GPU the written buffers end holding the winner's answer."""
    if not candidates:
        raise TileirError("tune wants at least one candidate configuration", what="autotune")
    taken = set(candidates[0]) & set(config)
    if taken:
        raise TileirError(f"{', '.join(sorted(taken))} is both a candidate's and the fixed configuration",
                          what="autotune", fix="leave the tuned keys out of the fixed configuration")
    # the entry is keyed as a call looks it up (KernelFn.tuned_config): the fixed configuration and
    # the named run-time sizes, read off ``args`` (or, with no arrays given, the sizes ``config``
    # names, e.g. M=8192)
    fixed, sizes = kernel_fn.split_sizes(dict(config)) if hasattr(kernel_fn, "split_sizes") else (config, {})
    plan = kernel_fn.plan(kernel_fn.config(**fixed)) if args and hasattr(kernel_fn, "plan") else None
    if plan:
        sizes = plan.named(plan.values(list(args)))
    device = run is None or timer is None
    if device:
        torch = _torch_or_refuse()
        dev_args = [_to_device(a, torch) for a in args]
        written = _written(kernel_fn, dict(fixed, **candidates[0]))
        initial = {i: dev_args[i].clone() for i in written}

        def launch(cfg, sync):
            kernel_fn(*dev_args, stream=torch.cuda.current_stream(), sync=sync, **cfg)

        def device_run(cfg):
            for i in written:
                dev_args[i].copy_(initial[i])
            launch(cfg, True)
            return [_to_host(dev_args[i]) for i in written]

        run = run or device_run
        if timer is None:
            def timer(call, cfg):
                return cuda_event_timer(call, cfg, reps=reps, warmup=warmup)
    else:
        def launch(cfg, sync):  # the injected timer's call: nothing runs unless it calls it
            kernel_fn(*args, **cfg)

    assert run is not None and timer is not None  # given, or the device's (both given: no device)
    gpu = gpu or this_gpu()
    reference, records = None, []
    for cand in candidates:
        cfg = dict(config, **cand)
        rec: dict[str, Any] = {"config": dict(cand), "ok": False, "ms": None, "error": None}
        records.append(rec)
        try:
            got = [_to_host(a) for a in run(cfg)]
        except TileirError as e:  # a candidate the recording or tileiras refuses
            rec["error"] = str(e)
            continue
        if reference is None:
            reference = got
        elif not _agrees(got, reference, rtol, atol):
            rec["error"] = "its answer differs from the first candidate's"
            continue
        rec["ok"] = True
        rec["ms"] = float(timer(lambda cfg=cfg: launch(cfg, False), cfg))
    if results is not None:
        results.extend(records)
    ok = [r for r in records if r["ok"]]
    if not ok:
        why = "; ".join(f"{r['config']}: {r['error']}" for r in records)
        raise TileirError(f"no candidate ran: {why}", kernel=_name(kernel_fn), what="autotune")
    win = min(ok, key=lambda r: r["ms"])
    if device:
        device_run(dict(config, **win["config"]))  # leave the winner's answer in the buffers
    if save and gpu:
        tuned = getattr(kernel_fn, "tuned", ())
        measured = dict({k: v for k, v in config.items() if k in tuned}, **win["config"])  # self-complete
        keyed = dict(fixed, **sizes)
        _write_entry(cache_key(gpu, kernel_fn, keyed), {
            "gpu": gpu, "kernel": _name(kernel_fn), "bucket": bucket(canonical(kernel_fn, keyed)), "config": measured,
            "ms": win["ms"], "candidates": len(candidates), "date": time.strftime("%Y-%m-%d")})
        forget = getattr(kernel_fn, "forget", None)
        if forget is not None:  # calls prepared before now would keep the configuration they found then
            forget()
    return dict(win["config"])
