"""tileir.assemble: finding tileiras, its arguments, running it, and the cubin cache (no GPU needed)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap

import pytest

from tileir import assemble as asm
from tileir import ir
from tileir.bytecode import encode_kernel
from tileir.errors import TileirError

DEFECT_TARGETS = ("sm_90", "sm_100", "sm_103", "sm_107", "sm_110")


def tiny_bytecode(name: str = "k") -> bytes:
    return encode_kernel(ir.Kernel(name, (ir.KParam("f32"),), body=(ir.MakeTok(0), ir.Ret())))


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    d = tmp_path / "cubins"
    monkeypatch.setenv("TILEIR_CACHE_DIR", str(d))
    asm.clear_memory_cache()
    yield d
    asm.clear_memory_cache()


@pytest.fixture
def runs(monkeypatch):
    """Every tool run the assembler makes: (argv, env) pairs, the real run still happening."""
    seen = []
    real = asm._run_child

    def spy(cmd, env, timeout_s):
        seen.append((list(cmd), env))
        return real(cmd, env, timeout_s)

    asm.tileiras_version()  # cached before counting, so only compiles are seen
    monkeypatch.setattr(asm, "_run_child", spy)
    return seen


def compiles(seen):
    return [c for c, _ in seen if "-o" in c]


# ---- finding tileiras ------------------------------------------------------------------------


def test_find_tileiras_finds_the_pip_one():
    path = asm.find_tileiras()
    assert path.replace(os.sep, "/").endswith("nvidia/cu13/bin/tileiras")
    assert os.access(path, os.X_OK)
    assert asm.find_tileiras() is path  # cached


def test_version_parses():
    assert asm.tileiras_version() == "13.4.92"
    assert asm.tileiras_version(asm.find_tileiras()) == "13.4.92"


def test_find_tileiras_falls_back_to_env_then_path(monkeypatch, tmp_path):
    fake = tmp_path / "tileiras"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setattr(asm.importlib.util, "find_spec", lambda name: None)
    asm.find_tileiras.cache_clear()
    try:
        monkeypatch.setenv("TILEIR_TILEIRAS", str(fake))
        assert asm.find_tileiras() == str(fake)
        asm.find_tileiras.cache_clear()
        monkeypatch.delenv("TILEIR_TILEIRAS")
        monkeypatch.setenv("PATH", str(tmp_path))
        assert asm.find_tileiras() == str(fake)
        asm.find_tileiras.cache_clear()
        monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
        with pytest.raises(TileirError, match=r"pip install 'tileir\[cuda\]'"):
            asm.find_tileiras()
    finally:
        asm.find_tileiras.cache_clear()


# ---- arguments and defects -------------------------------------------------------------------


@pytest.mark.parametrize("gpu", DEFECT_TARGETS)
def test_spec_targets_get_tileiras_own_level(gpu):
    # the defect is narrowed to a trigger (tests/test_assembler_defect.py), so the
    # arguments every kernel gets add nothing; the kernels that reach it get --opt-level 0
    assert asm.tileiras_args("13.4.92", gpu) == ["--gpu-name", gpu]
    sentence = asm.assembler_defect("13.4.92", gpu)
    assert "13.4.92" in sentence and gpu in sentence and "--opt-level 0" in sentence
    assert "docs/assembler-defect.md" in sentence


@pytest.mark.parametrize("gpu", ["sm_80", "sm_86", "sm_89", "sm_120", "sm_121"])
def test_other_targets_get_only_the_while_loop_workaround(gpu):
    # the token defect is the spec targets'; the while-loop one (tileiras 13.4.92's optimiser) every target's
    assert asm.tileiras_args("13.4.92", gpu) == ["--gpu-name", gpu]
    assert asm.assembler_defect("13.4.92", gpu) == asm.VERSION_DEFECTS["13.4.92"].sentence


def test_other_versions_get_no_workaround():
    assert asm.tileiras_args("13.5.0", "sm_90") == ["--gpu-name", "sm_90"]
    assert asm.assembler_defect("13.5.0", "sm_90") is None


def test_defect_table_is_one_dict():
    assert set(asm.DEFECTS) == {("13.4.92", g) for g in DEFECT_TARGETS}
    for d in asm.DEFECTS.values():
        assert d.trigger is asm.token_chained_unaligned_view_loads
        assert tuple(d.workaround) == ("--opt-level", "0") and "docs/assembler-defect.md" in d.sentence


def test_kernel_args():
    k = ir.Kernel("k", (ir.KParam("f32"),), body=(ir.MakeTok(0), ir.Ret()))
    assert asm.kernel_args(k, "13.4.92", "sm_90") == ["--gpu-name", "sm_90"]
    assert asm.kernel_args(None, "13.4.92", "sm_90") == ["--gpu-name", "sm_90", "--opt-level", "0"]  # cannot tell
    assert asm.kernel_args(None, "13.4.92", "sm_86") == ["--gpu-name", "sm_86", "--opt-level", "0"]  # a while loop?
    assert asm.kernel_args(k, "13.4.92", "sm_86") == ["--gpu-name", "sm_86"]
    assert asm.kernel_args(k, "13.4.92", "sm_90", opt_level=3) == ["--gpu-name", "sm_90", "--opt-level", "3"]
    assert asm.kernel_args(None, "13.4.92", "sm_86", opt_level=2) == ["--gpu-name", "sm_86", "--opt-level", "2"]
    for bad in (4, -1, True, "3"):
        with pytest.raises(TileirError, match="opt_level"):
            asm.kernel_args(k, "13.4.92", "sm_90", opt_level=bad)


# ---- assembling ------------------------------------------------------------------------------


@pytest.mark.parametrize("gpu", ["sm_80", "sm_90"])
def test_assemble_makes_an_elf_cubin(gpu, cache_dir):
    cubin = asm.assemble(tiny_bytecode(), gpu, kernel="k")
    assert cubin[:4] == b"\x7fELF"


def test_cache_in_process_then_on_disk(cache_dir, runs):
    bc = tiny_bytecode()
    first = asm.assemble(bc, "sm_86", kernel="k")
    assert len(compiles(runs)) == 1
    assert asm.assemble(bc, "sm_86", kernel="k") == first
    assert len(compiles(runs)) == 1  # the in-process dict
    entries = list(cache_dir.glob("*.cubin"))
    assert len(entries) == 1 and not list(cache_dir.glob("*.tmp"))
    asm.clear_memory_cache()  # as a fresh process would be
    assert asm.assemble(bc, "sm_86", kernel="k") == first
    assert len(compiles(runs)) == 1  # the disk entry
    # a different argument list is a different entry
    asm.assemble(bc, "sm_86", kernel="k", opt_level=1)
    assert len(compiles(runs)) == 2
    # cache=False always runs tileiras
    asm.assemble(bc, "sm_86", kernel="k", cache=False)
    assert len(compiles(runs)) == 3


def test_cache_is_shared_between_processes(cache_dir):
    bc_path = cache_dir.parent / "k.tileirbc"
    bc_path.write_bytes(tiny_bytecode())
    code = textwrap.dedent(f"""
        from tileir import assemble as asm
        asm.tileiras_version()
        n = []
        real = asm._run_child
        asm._run_child = lambda *a, **k: (n.append(1), real(*a, **k))[1]
        asm.assemble(open({str(bc_path)!r}, "rb").read(), "sm_86", kernel="k")
        print(len(n))
    """)
    env = dict(os.environ, TILEIR_CACHE_DIR=str(cache_dir))
    out = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
           .stdout.strip() for _ in range(2)]
    assert out == ["1", "0"]


def test_corrupt_cache_entry_is_recompiled(cache_dir, runs):
    bc = tiny_bytecode()
    good = asm.assemble(bc, "sm_86", kernel="k")
    (entry,) = cache_dir.glob("*.cubin")
    for damage in (b"", b"garbage", entry.read_bytes()[:-10]):
        entry.write_bytes(damage)
        asm.clear_memory_cache()
        before = len(compiles(runs))
        assert asm.assemble(bc, "sm_86", kernel="k") == good
        assert len(compiles(runs)) == before + 1
        assert entry.read_bytes().endswith(good) and len(entry.read_bytes()) > len(good)  # rewritten


def test_bad_bytes_name_the_kernel_and_carry_stderr(cache_dir):
    with pytest.raises(TileirError) as e:
        asm.assemble(b"this is not bytecode", "sm_90", kernel="broken")
    msg = str(e.value)
    assert "kernel 'broken'" in msg and "sm_90" in msg
    assert "input does not correspond to Tile IR bytecode" in msg  # tileiras' own words
    assert "--gpu-name sm_90" in msg and "tileiras" in msg  # the command line
    assert "tileir show broken --emit mlir" in msg
    assert e.value.kernel == "broken"


def test_one_line_failure_is_explained(cache_dir, tmp_path, monkeypatch):
    fake = tmp_path / "tileiras"
    fake.write_text(textwrap.dedent("""\
        #!/bin/sh
        if [ "$1" = "--version" ]; then echo "Cuda compilation tools, release 13.4, V13.4.92"; exit 0; fi
        echo "error: failed to compile Tile IR program" >&2
        exit 5
    """))
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setattr(asm, "find_tileiras", lambda: str(fake))
    with pytest.raises(TileirError) as e:
        asm.assemble(tiny_bytecode(), "sm_90", kernel="vadd")
    msg = str(e.value)
    assert "failed to compile Tile IR program" in msg and "exit 5" in msg
    assert "one line" in msg and "tileir show vadd --emit mlir" in msg and "ptxas" in msg
    assert "--gpu-name sm_90 --opt-level 0 -o" in msg  # bytes without their Kernel get the workaround


def test_cuda_home_is_removed_from_the_child(cache_dir, runs, monkeypatch):
    monkeypatch.setenv("CUDA_HOME", "/usr/local/cuda-13.0")
    cubin = asm.assemble(tiny_bytecode(), "sm_86", kernel="k", cache=False)
    assert cubin[:4] == b"\x7fELF"
    (env,) = [env for cmd, env in runs if "-o" in cmd]
    assert env is not None and "CUDA_HOME" not in env and "PATH" in env
    assert os.environ["CUDA_HOME"] == "/usr/local/cuda-13.0"  # ours untouched


def test_refuses_a_bad_target(cache_dir):
    with pytest.raises(TileirError, match="sm_XY"):
        asm.assemble(tiny_bytecode(), "90", kernel="k")


def test_gpu_name_of_device_never_raises():
    from tileir.runtime import available

    name = asm.gpu_name_of_device()
    if available():
        assert name.startswith("sm_")
    else:
        assert name is None
