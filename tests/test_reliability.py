"""Issue 18, on the CPU: caches that lose nothing and trust nothing, a toolchain the environment
cannot derail, guards on runaway work, a host reference that refuses what the device refuses, and
values that belong to their recording. Each test is one finding of the issue, and fails where the
finding holds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

import tileir as ti
from tileir import F32, I32, TileirError, autotune, ir
from tileir import assemble as asm
from tileir.bytecode import encode_kernel
from tileir.dtypes import dtype
from tileir.ref import run_host
from tileir.runtime.arrays import prepare
from tileir.runtime.launch import normalize_grid

SRC = str(Path(__file__).resolve().parents[1] / "src")


def tiny_bytecode(name: str = "k") -> bytes:
    return encode_kernel(ir.Kernel(name, (ir.KParam("f32"),), body=(ir.MakeTok(0), ir.Ret())))


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    d = tmp_path / "cubins"
    monkeypatch.setenv("TILEIR_CACHE_DIR", str(d))
    asm.clear_memory_cache()
    yield d
    asm.clear_memory_cache()


def fake_tileiras(tmp_path: Path, compile_part: str, name: str = "tileiras") -> str:
    """A tileiras that answers --version as 13.4.92 and runs ``compile_part`` (sh) for a compile, with
    $out the -o path."""
    path = tmp_path / name
    path.write_text("#!/bin/sh\n"
                    'if [ "$1" = "--version" ]; then echo "Cuda compilation tools, V13.4.92"; exit 0; fi\n'
                    'out=""; prev=""; for a in "$@"; do [ "$prev" = "-o" ] && out="$a"; prev="$a"; done\n'
                    + textwrap.dedent(compile_part))
    path.chmod(0o755)
    return str(path)


def counting_tileiras(tmp_path: Path) -> tuple[str, Path]:
    """The real tileiras behind a script that logs each run's arguments, one line a run."""
    log = tmp_path / "runs.log"
    path = tmp_path / "counting-tileiras"
    path.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{asm.find_tileiras()}" "$@"\n')
    path.chmod(0o755)
    return str(path), log


def logged(log: Path) -> tuple[int, int]:
    """(compiles, --version runs) in a counting_tileiras log."""
    lines = log.read_text().splitlines() if log.exists() else []
    return sum(" -o " in f" {x} " for x in lines), sum(x.strip() == "--version" for x in lines)


# ---- the tileiras environment ------------------------------------------------------------------


@pytest.mark.parametrize("var", ["CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"])
@pytest.mark.parametrize("value", ["empty dir", "", "/nonexistent/cuda"])
def test_a_toolkit_variable_does_not_derail_tileiras(var, value, cache_dir, tmp_path, monkeypatch):
    if value == "empty dir":
        (tmp_path / "toolkit").mkdir()
        value = str(tmp_path / "toolkit")
    monkeypatch.setenv(var, value)
    cubin = asm.assemble(tiny_bytecode(), "sm_86", kernel="k", cache=False)
    assert cubin[:4] == b"\x7fELF"
    assert os.environ[var] == value  # ours untouched


@pytest.mark.parametrize("var", ["TMPDIR", "TMP", "TEMP", "TEMPDIR"])
def test_a_missing_temp_directory_does_not_derail_tileiras(var, cache_dir, monkeypatch):
    monkeypatch.setenv(var, "/nonexistent/tmp")
    cubin = asm.assemble(tiny_bytecode(), "sm_86", kernel="k", cache=False)
    assert cubin[:4] == b"\x7fELF"


def test_the_one_line_hint_names_the_toolkit_variables(cache_dir, tmp_path, monkeypatch):
    fake = fake_tileiras(tmp_path, 'echo "error: failed to compile Tile IR program" >&2\nexit 5\n')
    monkeypatch.setattr(asm, "find_tileiras", lambda: fake)
    with pytest.raises(TileirError) as e:
        asm.assemble(tiny_bytecode(), "sm_90", kernel="k")
    assert all(v in str(e.value) for v in ("CUDA_HOME", "CUDA_PATH", "CUDA_ROOT")), str(e.value)


# ---- the tune cache ------------------------------------------------------------------------------


def test_threads_writing_the_tune_cache_lose_nothing(tmp_path):
    path = tmp_path / "tune.json"
    start = threading.Barrier(8)

    def writer(t):
        start.wait()
        for i in range(20):
            autotune._write_entry(f"t{t}-{i}", {"config": {"tile": 1024}}, path)

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    entries = json.loads(path.read_text())["entries"]
    assert len(entries) == 160 and entries["t7-19"] == {"config": {"tile": 1024}}


def test_processes_writing_the_tune_cache_lose_nothing(tmp_path):
    """8 processes x 50 distinct writes, started together: all 400 entries are kept."""
    path, go = tmp_path / "tune.json", tmp_path / "go"
    code = textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from tileir import autotune
        who = sys.argv[1]
        Path({str(tmp_path)!r}, "ready-" + who).touch()
        while not Path({str(go)!r}).exists():
            time.sleep(0.005)
        for i in range(50):
            autotune._write_entry(f"p{{who}}-{{i}}", {{"config": {{"tile": 1024}}, "who": who}}, Path({str(path)!r}))
    """)
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    procs = [subprocess.Popen([sys.executable, "-c", code, str(w)], env=env) for w in range(8)]
    try:
        deadline = time.time() + 60
        while len(list(tmp_path.glob("ready-*"))) < 8 and time.time() < deadline:
            time.sleep(0.01)
        go.touch()
        assert [p.wait(timeout=60) for p in procs] == [0] * 8
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    entries = json.loads(path.read_text())["entries"]
    assert len(entries) == 400
    assert {e["who"] for e in entries.values()} == {str(w) for w in range(8)}


@ti.kernel(tuned=("max_tile", "warps"))
def scaled(x=ti.ByPtr(F32), *, max_tile: int = 4096, warps: int = 0, fmt: str = "f32"):
    """A kernel whose configuration the tune cache's entries are held to (never recorded here)."""


def _cache_with(tmp_path, monkeypatch, entry) -> tuple[Path, str]:
    monkeypatch.setenv("TILEIR_CACHE_DIR", str(tmp_path))
    key = autotune.cache_key("sm_90", scaled, {})
    path = tmp_path / "tune.json"
    path.write_text(json.dumps({"version": 1, "entries": {key: entry}}))
    return path, key


@pytest.mark.parametrize("entry", [
    "garbage", [1, 2], {"config": "big"}, {"config": None},
    {"config": {"max_tile": 3}}, {"config": {"max_tile": "big"}}, {"config": {"max_tile": 512.0}},
    {"config": {"warps": -3}}, {"config": {"max_tile": 0}}, {"config": {"max_tile": [1024]}},
    {"config": {"fmt": 16}}, {"config": {"colour": 1}},
], ids=repr)
def test_a_bad_tune_entry_is_skipped_with_a_warning_naming_file_and_key(entry, tmp_path, monkeypatch):
    path, key = _cache_with(tmp_path, monkeypatch, entry)
    with pytest.warns(UserWarning) as got:
        assert autotune.best(scaled, "sm_90") is None  # this kernel has no default-table entry
    said = " ".join(str(w.message) for w in got)
    assert str(path) in said and key in said, said


def test_a_good_tune_entry_is_used_without_a_warning(tmp_path, monkeypatch):
    _cache_with(tmp_path, monkeypatch, {"config": {"max_tile": 2048, "warps": 8}})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert autotune.best(scaled, "sm_90") == {"max_tile": 2048, "warps": 8}


def test_a_tune_cache_of_another_version_is_neither_used_nor_overwritten(tmp_path, monkeypatch):
    monkeypatch.setenv("TILEIR_CACHE_DIR", str(tmp_path))
    key = autotune.cache_key("sm_90", scaled, {})
    path = tmp_path / "tune.json"
    original = json.dumps({"version": 2, "entries": {key: {"config": {"max_tile": 2048}}}, "layout": "new"})
    path.write_text(original)
    with pytest.warns(UserWarning, match="version"):
        autotune._write_entry(key, {"config": {"max_tile": 1024}}, path)
    assert path.read_text() == original
    with pytest.warns(UserWarning, match="version 2"):
        assert autotune.best(scaled, "sm_90") is None


# ---- the cubin cache -----------------------------------------------------------------------------


def test_a_cubin_entry_is_served_only_under_its_own_key(cache_dir):
    a, b = tiny_bytecode("first"), tiny_bytecode("second")
    cubin_a, cubin_b = asm.assemble(a, "sm_86", kernel="first"), asm.assemble(b, "sm_86", kernel="second")
    assert cubin_a != cubin_b
    args = asm.kernel_args(None, asm.tileiras_version(), "sm_86")  # bytes without their Kernel: any workaround
    entry_a = cache_dir / f"{asm.cache_key(a, asm.tileiras_version(), 'sm_86', args)}.cubin"
    entry_b = cache_dir / f"{asm.cache_key(b, asm.tileiras_version(), 'sm_86', args)}.cubin"
    entry_a.write_bytes(entry_b.read_bytes())  # another kernel's valid entry under this key
    asm.clear_memory_cache()
    assert asm.assemble(a, "sm_86", kernel="first") == cubin_a


def test_junk_from_the_assembler_is_refused_and_not_cached(cache_dir, tmp_path, monkeypatch):
    fake = fake_tileiras(tmp_path, "printf '\\177ELFjunk' > \"$out\"\nexit 0\n")
    monkeypatch.setattr(asm, "find_tileiras", lambda: fake)
    with pytest.raises(TileirError, match="ELF"):
        asm.assemble(tiny_bytecode(), "sm_90", kernel="k")
    assert not list(cache_dir.glob("*.cubin"))


def test_the_elf_check_looks_past_the_magic(cache_dir):
    good = asm.assemble(tiny_bytecode(), "sm_86", kernel="k")
    assert asm.elf_problem(good) is None
    other_machine = good[:18] + (62).to_bytes(2, "little") + good[20:]  # x86-64
    assert "e_machine 62" in asm.elf_problem(other_machine)
    assert "section headers" in asm.elf_problem(good[:200])  # truncated
    assert asm.elf_problem(b"\x7fELFjunk") is not None


def test_threads_asking_for_one_cubin_run_tileiras_once(cache_dir, tmp_path, monkeypatch):
    wrapper, log = counting_tileiras(tmp_path)
    monkeypatch.setattr(asm, "find_tileiras", lambda: wrapper)
    bc, start, got = tiny_bytecode(), threading.Barrier(8), []

    def ask():
        start.wait()
        got.append(asm.assemble(bc, "sm_86", kernel="k"))

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 8 and len(set(got)) == 1
    assert logged(log) == (1, 1)  # one compile, one --version


def test_processes_asking_for_one_cubin_run_tileiras_once(cache_dir, tmp_path):
    wrapper, log = counting_tileiras(tmp_path)
    bc, go = tmp_path / "k.tileirbc", tmp_path / "go"
    bc.write_bytes(tiny_bytecode())
    code = textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from tileir import assemble as asm
        asm.find_tileiras = lambda: {wrapper!r}
        asm.tileiras_version()
        Path({str(tmp_path)!r}, "ready-" + sys.argv[1]).touch()
        while not Path({str(go)!r}).exists():
            time.sleep(0.002)
        asm.assemble(Path({str(bc)!r}).read_bytes(), "sm_86", kernel="k")
    """)
    env = dict(os.environ, TILEIR_CACHE_DIR=str(cache_dir),
               PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    procs = [subprocess.Popen([sys.executable, "-c", code, str(w)], env=env) for w in range(4)]
    try:
        deadline = time.time() + 60
        while len(list(tmp_path.glob("ready-*"))) < 4 and time.time() < deadline:
            time.sleep(0.01)
        go.touch()
        assert [p.wait(timeout=120) for p in procs] == [0] * 4
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert logged(log)[0] == 1


def test_the_disk_cache_keeps_under_its_bound_dropping_the_least_recently_used(cache_dir, monkeypatch):
    first, second, third = (tiny_bytecode(n) for n in ("first", "second", "third"))
    asm.assemble(first, "sm_86", kernel="first")
    asm.assemble(second, "sm_86", kernel="second")
    (size,) = {p.stat().st_size for p in cache_dir.glob("*.cubin")}
    monkeypatch.setenv("TILEIR_CACHE_MAX_MB", str(2.5 * size / 2**20))  # room for two entries
    time.sleep(0.02)
    asm.clear_memory_cache()
    asm.assemble(first, "sm_86", kernel="first")  # read from disk: first is now the more recent
    asm.assemble(third, "sm_86", kernel="third")
    kept = sorted(p.name for p in cache_dir.glob("*.cubin"))
    version = asm.tileiras_version()
    args = asm.kernel_args(None, version, "sm_86")  # the arguments bytes without their Kernel get
    assert kept == sorted(f"{asm.cache_key(b, version, 'sm_86', args)}.cubin" for b in (first, third))
    assert sum(p.stat().st_size for p in cache_dir.glob("*.cubin")) <= 2.5 * size


def test_a_bad_cache_bound_is_refused_naming_the_variable(cache_dir, monkeypatch):
    monkeypatch.setenv("TILEIR_CACHE_MAX_MB", "lots")
    with pytest.raises(TileirError, match="TILEIR_CACHE_MAX_MB"):
        asm.assemble(tiny_bytecode("bound"), "sm_86", kernel="bound")


def test_tileir_cache_info_and_clear(cache_dir, capsys):
    from tileir.cli import main

    asm.assemble(tiny_bytecode(), "sm_86", kernel="k")
    (cache_dir / "notes.txt").write_text("not the cache's")
    assert main(["cache", "info"]) == 0
    out = capsys.readouterr().out
    assert str(cache_dir) in out and "1 entries" in out and "TILEIR_CACHE_MAX_MB" in out
    assert main(["cache", "clear"]) == 0
    assert "removed 1 cubin entries" in capsys.readouterr().out
    assert not list(cache_dir.glob("*.cubin")) and (cache_dir / "notes.txt").exists()


def test_the_in_process_caches_are_bounded_lrus(monkeypatch):
    from tileir.lru import DEFAULT_ENTRIES, LRU

    lru = LRU(3)
    for k in "abc":
        lru[k] = k.upper()
    assert lru.get("a") == "A"  # a is now the most recent
    lru["d"] = "D"
    assert list(lru) == ["c", "a", "d"] and "b" not in lru and len(lru) == 3
    with pytest.raises(TypeError):
        lru.get([])  # unhashable, as a dict says
    assert isinstance(asm._memory_cache, LRU) and asm._memory_cache.maxsize == DEFAULT_ENTRIES
    monkeypatch.setenv("TILEIR_MEMORY_CACHE_ENTRIES", "7")
    assert LRU().maxsize == 7
    monkeypatch.setenv("TILEIR_MEMORY_CACHE_ENTRIES", "0")
    with pytest.raises(TileirError, match="TILEIR_MEMORY_CACHE_ENTRIES"):
        LRU()


# ---- guards on runaway work ------------------------------------------------------------------------


def test_an_endless_python_loop_is_refused_at_record_time(monkeypatch):
    monkeypatch.setenv("TILEIR_MAX_OPS", "2000")

    def body():
        x = ti.load(ti.param(F32, 0), ti.idx_const(0), [16])
        for _ in range(20_000):  # stands for `while True:`
            x = x + 1.0

    with pytest.raises(TileirError) as e:
        ti.trace_kernel("spin", (ti.ByPtr(F32),), body)
    msg = str(e.value)
    assert "kernel 'spin'" in msg and "more than 2000 operations" in msg and "d_range" in msg
    assert "TILEIR_MAX_OPS" in msg


@pytest.mark.parametrize("lanes", [1 << 17, 1 << 22, 1 << 31])
def test_a_tile_over_the_limit_is_refused_at_record_time(lanes):
    with pytest.raises(TileirError) as e:
        ti.trace_kernel("huge", (ti.ByPtr(F32),), lambda: ti.full([lanes], 1.0, F32))
    msg = str(e.value)
    assert f"a tile of {lanes} lanes" in msg and "TILEIR_MAX_TILE_ELEMENTS" in msg and "kernel 'huge'" in msg


def test_the_tile_limit_admits_its_size_and_can_be_raised(monkeypatch):
    ti.trace_kernel("big", (ti.ByPtr(F32),), lambda: ti.full([256, 256], 1.0, F32))  # 2^16 lanes: admitted
    monkeypatch.setenv("TILEIR_MAX_TILE_ELEMENTS", str(1 << 17))
    ti.trace_kernel("bigger", (ti.ByPtr(F32),), lambda: ti.full([1 << 17], 1.0, F32))


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_compile_timeout_kills_tileiras_and_its_children(cache_dir, tmp_path, monkeypatch):
    pidfile = tmp_path / "child.pid"
    fake = fake_tileiras(tmp_path, f"sleep 30 &\necho $! > {pidfile}\nsleep 8\nexit 1\n")
    monkeypatch.setattr(asm, "find_tileiras", lambda: fake)
    monkeypatch.setenv("TILEIR_COMPILE_TIMEOUT", "1")
    t = time.monotonic()
    try:
        with pytest.raises(TileirError) as e:
            asm.assemble(tiny_bytecode(), "sm_90", kernel="k", cache=False)
        took = time.monotonic() - t
        assert took < 6 and "within 1 s" in str(e.value) and "TILEIR_COMPILE_TIMEOUT" in str(e.value)
        pid = int(pidfile.read_text())
        deadline = time.monotonic() + 5
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(pid), "tileiras' child (ptxas's place) outlived the timeout"
    finally:
        if pidfile.exists() and _alive(int(pidfile.read_text())):
            os.kill(int(pidfile.read_text()), 9)


def test_a_bad_compile_timeout_is_refused_naming_the_variable(cache_dir, monkeypatch):
    monkeypatch.setenv("TILEIR_COMPILE_TIMEOUT", "-5")
    with pytest.raises(TileirError, match="TILEIR_COMPILE_TIMEOUT"):
        asm.assemble(tiny_bytecode(), "sm_86", kernel="k", cache=False)


def test_a_20_mb_stderr_does_not_become_a_20_mb_error(cache_dir, tmp_path, monkeypatch):
    fake = fake_tileiras(tmp_path, "printf 'FIRST-LINE\\n' >&2\n"
                                   "head -c 20000000 /dev/zero | tr '\\000' x >&2\n"
                                   "printf '\\nLAST-LINE\\n' >&2\nexit 1\n")
    monkeypatch.setattr(asm, "find_tileiras", lambda: fake)
    with pytest.raises(TileirError) as e:
        asm.assemble(tiny_bytecode(), "sm_90", kernel="k", cache=False)
    msg = str(e.value)
    assert len(msg) < 20_000 and "FIRST-LINE" in msg and "LAST-LINE" in msg and "characters left out" in msg


# ---- the host reference refuses what the launch refuses ------------------------------------------------


def _value_kernel(fmt):
    """out[0] = the by-value parameter."""
    def body():
        ti.store(ti.param(fmt, 0), ti.idx_const(0), ti.reshape(ti.scalar(ti.param(fmt, 1)), [1]))

    return ti.trace_kernel("k", (ti.ByPtr(fmt), ti.ByValue(fmt)), body)


def _refusal(fn) -> str:
    with pytest.raises(TileirError) as e:
        fn()
    return str(e.value)


@pytest.mark.parametrize("fmt,value", [
    (I32, 2999.7), (I32, 2**32 + 3000), (I32, -(2**31) - 1), (I32, "3000"), (I32, None), (I32, np.float32(3.0)),
    (F32, "1.5"), (F32, None), (F32, [1.0]), (F32, np.ones(2, np.float32)),
], ids=repr)
def test_the_host_refuses_a_value_argument_the_launch_refuses_in_its_words(fmt, value):
    name = dtype(fmt).name
    out = np.zeros(1, dtype(fmt).np)
    device = _refusal(lambda: prepare(value, name, False, kernel="k", pos=1))
    host = _refusal(lambda: run_host(_value_kernel(fmt), [out, value], (1,)))
    assert host == device and out[0] == 0


@pytest.mark.parametrize("fmt,value,seen", [
    (I32, 3000, 3000), (I32, 2**32 - 1, -1), (I32, True, 1), (I32, np.int64(7), 7), (F32, 1, 1.0),
    (F32, 0.1, np.float32(0.1)), (F32, np.array(2.5), 2.5),
], ids=repr)
def test_the_host_takes_a_value_the_launch_takes_as_the_device_sees_it(fmt, value, seen):
    out = np.zeros(1, dtype(fmt).np)
    run_host(_value_kernel(fmt), [out, value], (1,))
    assert out[0] == seen


@pytest.mark.parametrize("grid", [(0,), (-1,), (1, 1, 1, 1), (), (1.5,), (2, 0), (1, 65536)], ids=repr)
def test_the_host_refuses_a_grid_the_launch_refuses_in_its_words(grid):
    out = np.zeros(1, np.int32)
    device = _refusal(lambda: normalize_grid(grid, "k"))
    host = _refusal(lambda: run_host(_value_kernel(I32), [out, 5], grid))
    assert host == device and out[0] == 0


def test_the_host_refuses_a_wrong_argument_count_in_the_launchs_words():
    with pytest.raises(TileirError, match=r"takes 2 argument\(s\), got 1"):
        run_host(_value_kernel(I32), [np.zeros(1, np.int32)], (1,))


# ---- values belong to their recording ----------------------------------------------------------------


def test_a_tile_from_another_recording_is_refused_naming_both_kernels():
    kept = []
    ti.trace_kernel("first", (ti.ByPtr(F32),),
                    lambda: kept.append(ti.load(ti.param(F32, 0), ti.idx_const(0), [16])))

    def second():
        ti.load(ti.param(F32, 0), ti.idx_const(16), [16])  # this recording's own value with that number
        ti.store(ti.param(F32, 0), ti.idx_const(0), kept[0] * 3.0)

    msg = _refusal(lambda: ti.trace_kernel("second", (ti.ByPtr(F32),), second))
    assert "'first'" in msg and "'second'" in msg and "Tile" in msg


def test_an_idx_from_another_recording_of_the_same_kernel_is_refused():
    kept = []

    def body():
        if not kept:
            kept.append(ti.block_id(0))
        ti.store(ti.param(F32, 0), ti.tile_at(kept[0], 16), ti.full([16], 1.0, F32))

    ti.trace_kernel("again", (ti.ByPtr(F32),), body)
    msg = _refusal(lambda: ti.trace_kernel("again", (ti.ByPtr(F32),), body))
    assert "another recording of kernel 'again'" in msg and "Idx" in msg
