"""Issue 6's decision, held in CI (no GPU needed). tileiras 13.4.92 for sm_90 gives wrong answers at
its default level for a loop that orders its view loads through a token it carries when the loaded
pointers have no div_by<16> assumption (docs/assembler-defect.md; measured on an H200 by
tools/defect_device.py); nothing else was found to differ (tools/defect_sweep.py). So on sm_90 (and,
as the spec says, sm_100, sm_103, sm_107, sm_110) a kernel that reaches that trigger gets
--opt-level 0 and every other kernel tileiras' own level. The mechanism is also tested with a
defect table patched here."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from tests.kernelcheck import compile_spy, first_exit_loop
from tileir import assemble as asm
from tileir.cli import main
from tileir.errors import TileirError
from tileir.kernels import CASES

SPEC_TARGETS = ("sm_90", "sm_100", "sm_103", "sm_107", "sm_110")
O0 = ("--opt-level", "0")


def lowered(name: str):
    case = CASES[name]
    return case.kernel.kernel(**case.config(case.default_size))


def _device_tool():
    path = Path(__file__).resolve().parents[1] / "tools" / "defect_device.py"
    spec = importlib.util.spec_from_file_location("defect_device", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def matmuls():
    """The H200 programs of tools/defect_device.py, as Kernels (small sizes: only the shape matters):
    the library matmul at 128x256x64 tiles, it with its loads chained through a carried token, it
    without the lowering's div_by<16> assumptions, and both (the one that is wrong at -O3)."""
    dd = _device_tool()
    k = CASES["matmul_f16"].kernel.kernel(tm=128, tn=256, tk=64)
    return {"lib": k, "chain": dd.chained(k), "noassume": dd.unassumed(k),
            "chain_noassume": dd.chained(dd.unassumed(k))}


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TILEIR_CACHE_DIR", str(tmp_path / "cubins"))
    asm.clear_memory_cache()
    for case in CASES.values():  # the kernels' own caches too, so each test really compiles
        for cache in ("_cubins", "_sites"):
            if hasattr(case.kernel, cache):
                monkeypatch.setattr(case.kernel, cache, {})
    yield tmp_path / "cubins"
    asm.clear_memory_cache()


@pytest.fixture
def compiles(monkeypatch):
    """The argv of every tileiras compile (-o ...) made from now on; the real run still happens."""
    return compile_spy(monkeypatch)


@pytest.fixture
def fma_defect(monkeypatch):
    """A test-local defect on 13.4.92 / sm_90 reached by kernels with a FloatFma (saxpy has one, vadd
    does not): the mechanism a reproduced defect would use."""
    table = dict(asm.DEFECTS)
    table[("13.4.92", "sm_90")] = asm.Defect(
        asm.uses("FloatFma"), O0,
        "tileiras 13.4.92 on sm_90 miscompiles a test-local FloatFma "
        "(docs/assembler-defect.md, tests/test_assembler_defect.py).")
    monkeypatch.setattr(asm, "DEFECTS", table)
    return table


# ---- the decision ------------------------------------------------------------------------------


@pytest.mark.parametrize("gpu", SPEC_TARGETS)
def test_a_kernel_without_a_trigger_gets_tileiras_own_level(gpu):
    assert asm.kernel_args(lowered("vadd"), "13.4.92", gpu) == ["--gpu-name", gpu]
    assert asm.tileiras_args("13.4.92", gpu) == ["--gpu-name", gpu]


@pytest.mark.parametrize("gpu", SPEC_TARGETS)
def test_a_kernel_with_the_trigger_gets_the_workaround(gpu, matmuls):
    assert asm.kernel_args(matmuls["chain_noassume"], "13.4.92", gpu) == ["--gpu-name", gpu, *O0]
    for right in ("lib", "chain", "noassume"):  # each right at -O3 on the H200
        assert asm.kernel_args(matmuls[right], "13.4.92", gpu) == ["--gpu-name", gpu]
    assert asm.kernel_args(matmuls["chain_noassume"], "13.4.92", gpu, opt_level=3) == \
        ["--gpu-name", gpu, "--opt-level", "3"]  # the user's level wins
    assert asm.kernel_args(None, "13.4.92", gpu) == ["--gpu-name", gpu, *O0]  # bytes we cannot inspect


@pytest.mark.parametrize("gpu", ["sm_80", "sm_86", "sm_89", "sm_120"])
def test_other_targets_never_get_it(gpu, matmuls):
    assert asm.kernel_args(matmuls["chain_noassume"], "13.4.92", gpu) == ["--gpu-name", gpu]
    assert asm.assembler_defect("13.4.92", gpu) == asm.VERSION_DEFECTS["13.4.92"].sentence  # the while loops' only
    assert asm.kernel_args(matmuls["chain_noassume"], "13.5.0", "sm_90") == ["--gpu-name", "sm_90"]


@pytest.mark.parametrize("gpu", SPEC_TARGETS)
def test_the_table_and_the_sentence(gpu):
    d = asm.DEFECTS[("13.4.92", gpu)]
    assert d.trigger is asm.token_chained_unaligned_view_loads and d.workaround == O0
    both = asm.assembler_defect("13.4.92", gpu)
    assert both == d.sentence + " " + asm.VERSION_DEFECTS["13.4.92"].sentence  # the target's, then the version's
    sentence = d.sentence
    assert "13.4.92" in sentence and gpu in sentence
    assert "wrong answers" in sentence and "token" in sentence and "div_by<16>" in sentence
    assert "docs/assembler-defect.md" in sentence and "tests/test_assembler_defect.py" in sentence
    assert "--opt-level 0" in sentence
    assert sentence.endswith(".") and ". " not in sentence  # one sentence
    if gpu != "sm_90":
        assert "no " + gpu + " device" in sentence  # says it was not checked there


def test_no_library_kernel_reaches_the_trigger():
    for name, case in CASES.items():
        k = case.kernel.kernel(**case.config(case.default_size))
        assert not asm.token_chained_unaligned_view_loads(k), name
        assert asm.kernel_args(k, "13.4.92", "sm_90") == ["--gpu-name", "sm_90"], name


def test_assemble_uses_the_program_it_is_given(matmuls, monkeypatch):
    seen = []
    monkeypatch.setattr(asm, "_run_tileiras", lambda tileiras, bc, args, **kw: seen.append(args) or b"\x7fELF")
    for name in ("chain_noassume", "lib"):
        asm.assemble(b"bytes", "sm_90", kernel="m", program=matmuls[name], cache=False)
    asm.assemble(b"bytes", "sm_90", kernel="m", cache=False)
    asm.assemble(b"bytes", "sm_90", kernel="m", program=matmuls["chain_noassume"], opt_level=2, cache=False)
    assert seen == [["--gpu-name", "sm_90", *O0], ["--gpu-name", "sm_90"], ["--gpu-name", "sm_90", *O0],
                    ["--gpu-name", "sm_90", "--opt-level", "2"]]


@pytest.mark.parametrize("level", [0, 1, 2, 3])
def test_a_forced_level_is_passed(level):
    assert asm.kernel_args(lowered("vadd"), "13.4.92", "sm_90", opt_level=level) == \
        ["--gpu-name", "sm_90", "--opt-level", str(level)]


@pytest.mark.parametrize("bad", [4, -1, True, "3", 1.5])
def test_a_bad_level_is_refused(bad):
    with pytest.raises(TileirError, match="opt_level"):
        asm.kernel_args(lowered("vadd"), "13.4.92", "sm_90", opt_level=bad)


def test_instr_kinds_looks_inside_regions():
    kinds = asm.instr_kinds(lowered("matmul_f16"))
    assert {"ForLoop", "FloatMma", "LoadViewTile"} <= kinds  # FloatMma lives in the loop body
    assert "FloatMma" not in {type(i).__name__ for i in lowered("matmul_f16").body}
    assert "FloatFma" in asm.instr_kinds(lowered("saxpy")) and "FloatFma" not in asm.instr_kinds(lowered("vadd"))


# ---- the mechanism, with a defect registered here ---------------------------------------------


def test_only_a_kernel_with_the_trigger_gets_the_workaround(fma_defect):
    assert asm.kernel_args(lowered("saxpy"), "13.4.92", "sm_90") == ["--gpu-name", "sm_90", *O0]
    assert asm.kernel_args(lowered("vadd"), "13.4.92", "sm_90") == ["--gpu-name", "sm_90"]
    assert asm.kernel_args(None, "13.4.92", "sm_90") == ["--gpu-name", "sm_90", *O0]  # cannot tell: safe
    assert asm.kernel_args(lowered("saxpy"), "13.4.92", "sm_90", opt_level=3) == \
        ["--gpu-name", "sm_90", "--opt-level", "3"]  # the user's level wins
    assert asm.kernel_args(lowered("saxpy"), "13.4.92", "sm_100") == ["--gpu-name", "sm_100"]
    assert asm.kernel_args(lowered("saxpy"), "13.5.0", "sm_90") == ["--gpu-name", "sm_90"]
    assert asm.tileiras_args("13.4.92", "sm_90") == ["--gpu-name", "sm_90"]  # not every kernel
    sentence = asm.assembler_defect("13.4.92", "sm_90")
    assert "13.4.92" in sentence and "sm_90" in sentence and "docs/assembler-defect.md" in sentence


def test_a_trigger_that_cannot_be_narrowed_reaches_every_kernel(monkeypatch):
    monkeypatch.setattr(asm, "DEFECTS", {("13.4.92", "sm_90"): asm.Defect(asm.EVERY_KERNEL, O0, "s.")})
    monkeypatch.setattr(asm, "VERSION_DEFECTS", {})
    assert asm.tileiras_args("13.4.92", "sm_90") == ["--gpu-name", "sm_90", *O0]
    assert asm.kernel_args(lowered("vadd"), "13.4.92", "sm_90") == ["--gpu-name", "sm_90", *O0]
    assert asm.assembler_defect("13.4.92", "sm_90") == "s."


def test_cubin_passes_the_kernel_so_the_trigger_decides(fma_defect, cache_dir, compiles):
    vadd, saxpy = CASES["vadd"].kernel, CASES["saxpy"].kernel
    assert vadd.cubin("sm_90")[:4] == b"\x7fELF"
    assert saxpy.cubin("sm_90")[:4] == b"\x7fELF"
    assert "--opt-level" not in compiles[0]
    assert compiles[1][compiles[1].index("--opt-level") + 1] == "0"
    saxpy.cubin("sm_90", opt_level=2)
    assert compiles[2][compiles[2].index("--opt-level") + 1] == "2"


def test_a_call_with_opt_level_reaches_tileiras(cache_dir, compiles, monkeypatch):
    """kernel(..., opt_level=N): the call's level goes through cubin to tileiras (stopped before
    the launch, so no GPU is needed)."""
    from tileir.kernel import KernelFn

    class Stop(Exception):
        pass

    real = KernelFn.cubin

    def cubin_then_stop(self, *a, **kw):
        raise Stop(real(self, *a, **kw))

    monkeypatch.setattr(KernelFn, "cubin", cubin_then_stop)
    a = np.ones(1000, np.float32)
    for level in (1, None):
        with pytest.raises(Stop) as e:
            CASES["vadd"].kernel(a, a, a.copy(), arch="sm_90", opt_level=level)
        assert e.value.args[0][:4] == b"\x7fELF"
    assert compiles[0][compiles[0].index("--gpu-name"):compiles[0].index("-o")] == \
        ["--gpu-name", "sm_90", "--opt-level", "1"]
    assert compiles[1][compiles[1].index("--gpu-name"):compiles[1].index("-o")] == ["--gpu-name", "sm_90"]


# ---- the command line --------------------------------------------------------------------------


def test_cli_prints_the_decided_args(capsys):
    assert main(["show", "vadd", "--emit", "args", "--arch", "sm_90"]) == 0
    assert capsys.readouterr().out == "--gpu-name sm_90\n"
    assert main(["show", "vadd", "--emit", "args", "--arch", "sm_90", "--opt-level", "0"]) == 0
    assert capsys.readouterr().out == "--gpu-name sm_90 --opt-level 0\n"


def test_cli_args_follow_the_kernel(fma_defect, capsys):
    assert main(["show", "saxpy", "--emit", "args", "--arch", "sm_90"]) == 0
    assert capsys.readouterr().out == "--gpu-name sm_90 --opt-level 0\n"
    assert main(["show", "vadd", "--emit", "args", "--arch", "sm_90"]) == 0
    assert capsys.readouterr().out == "--gpu-name sm_90\n"


# ---- the fifth defect: a while loop that stops on its first iteration (docs/assembler-defect.md) -------------

REPRO_U2 = Path(__file__).resolve().parents[1] / "bench" / "results" / "fuzz_repro_unexplained2"


def _has_while(k) -> bool:
    return "WhileLoop" in asm.instr_kinds(k)


def test_a_loop_that_stops_on_its_first_iteration_is_its_body_once(monkeypatch):
    """tileiras 13.4.92 (sm_90) fails to assemble campaign 2's 3439 at its default level and takes it at
    -O0; the lowering writes the loop as its body once, which assembles, and the host (which runs the
    recorded loop) answers what that straight line does: the store in the body happened, the carry is
    what entered the loop."""
    import tileir as ti
    import tileir.families.loops as loops
    from tileir.ref import run_host

    prog = first_exit_loop()
    k = ti.lower(prog)
    assert not _has_while(k)
    assert asm.assemble(ti.encode_kernel(k), "sm_90", kernel="k", program=k, cache=False)[:4] == b"\x7fELF"
    x = np.arange(256, dtype=np.int32)
    f = np.linspace(-1, 1, 128, dtype=np.float32)
    args = [x, np.zeros(256, np.int32), f, np.zeros(128, np.float32)]
    run_host(prog, args, (1,))
    assert np.array_equal(args[1], x) and np.array_equal(args[3], f)
    # the defect itself, with the loop written as a loop: refused at -O3 (tileiras' default level, byte for
    # byte), taken at -O0 -- which the while-O0 workaround gives it at the default level now (the sixth defect)
    monkeypatch.setattr(loops, "stops_on_first_iteration", lambda prog, op: False)
    k = ti.lower(prog)
    assert _has_while(k)
    data = ti.encode_kernel(k)
    if asm.tileiras_version() == "13.4.92":
        with pytest.raises(TileirError, match="failed to compile|exit -11"):
            asm.assemble(data, "sm_90", kernel="k", program=k, opt_level=3, cache=False)
    assert asm.assemble(data, "sm_90", kernel="k", program=k, opt_level=0, cache=False)[:4] == b"\x7fELF"


@pytest.mark.parametrize("seed", [3439, 3904, 9767])
def test_the_second_campaigns_tileiras_failures_assemble_now(seed):
    """The three shrunk on the H200 ('failed to compile Tile IR program' twice, a crash once): each a while
    loop of 0 trips; written once they assemble at the default level (as a loop, at -O0 only)."""
    import tileir as ti
    from tileir.diff.fuzzbuild import build
    from tileir.diff.shrink import read_reproducer

    doc = read_reproducer(str(REPRO_U2 / f"fuzz_assemble_error_{seed}.json"))
    assert doc["status"] == "assemble_error"
    k = ti.lower(build(doc["desc"]).prog)
    assert not _has_while(k)
    assert asm.assemble(ti.encode_kernel(k), "sm_90", kernel="fuzz", program=k, cache=False)[:4] == b"\x7fELF"


def test_only_a_loop_its_constants_stop_first_is_written_once():
    """A loop that runs a second iteration, or whose first stop the data decides, stays a loop; a first
    stop decided by constants is written once inside a for too, and a literal stop as well."""
    import tileir as ti

    assert _has_while(ti.lower(first_exit_loop(trips=1)))
    assert _has_while(ti.lower(first_exit_loop(init_from_data=True)))
    assert not _has_while(ti.lower(first_exit_loop(in_for=True)))
    assert not _has_while(ti.lower(first_exit_loop(literal=True)))


def test_the_atomic_crash_of_a_first_exit_loop_is_gone():
    """docs/fuzz.md's CPU finding: a [32, 1] i32 carried through a while of 0 trips whose body does an
    atomic_cas, then an atomic_red_view min of the loop's result, aborted tileiras ('Invalid AtomicType
    and Op combination for nvvm.atomicrmw'); written once it assembles."""
    import tileir as ti
    from tileir.diff.fuzzbuild import build

    desc = {"v": 1, "seed": 1, "grid": [1], "warps": 0, "fmts": ["i32"], "globals": [], "body": [
        {"op": "load", "id": 1, "fmt": "i32", "shape": [32, 1], "dist": "small", "moving": False, "mask": False},
        {"op": "while", "id": 2, "trips": 0, "carries": [1], "brk": None, "brk_at": 0, "cid": 3, "sets": [4],
         "body": [{"op": "cas", "id": 4, "a": 3, "mul": 1, "add": 3}]},
        {"op": "redview", "id": 6, "a": 2, "mode": "min", "grid": [1, 1], "idx": [0, 0]}]}
    k = ti.lower(build(desc).prog)
    assert not _has_while(k)
    assert asm.assemble(ti.encode_kernel(k), "sm_90", kernel="fuzz", program=k, cache=False)[:4] == b"\x7fELF"
