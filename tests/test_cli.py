import subprocess
import sys

import pytest

from tileir.cli import main


def test_kernels_lists_the_library(capsys):
    assert main(["kernels"]) == 0
    out = capsys.readouterr().out
    for name in ("vadd", "saxpy", "softmax", "matmul_f16", "matmul_bf16", "matmul_tf32"):
        assert name in out


def test_show_mlir_is_render_kernel(capsys):
    from tileir.kernels import CASES

    assert main(["show", "softmax", "--emit", "mlir", "--size", "4x1000"]) == 0
    assert capsys.readouterr().out == CASES["softmax"].kernel.mlir()  # no size in it: they are the arrays'


def test_show_bytecode_and_cubin_write_files(tmp_path, capsys):
    bc = tmp_path / "v.tileirbc"
    assert main(["show", "vadd", "--emit", "bytecode", "-o", str(bc)]) == 0
    assert bc.read_bytes()[:8] == b"\x7fTileIR\x00"
    cub = tmp_path / "v.cubin"
    assert main(["show", "vadd", "--emit", "cubin", "--arch", "sm_86", "-o", str(cub)]) == 0
    assert cub.read_bytes()[:4] == b"\x7fELF"


def test_show_args(capsys):
    assert main(["show", "vadd", "--emit", "args", "--arch", "sm_86"]) == 0
    assert capsys.readouterr().out.split() == ["--gpu-name", "sm_86"]


def test_run_on_the_host_prints_ok(capsys):
    assert main(["run", "matmul_f16", "--host", "--size", "70x33x90"]) == 0
    out = capsys.readouterr().out
    assert "host reference" in out and out.strip().endswith("ok")


def test_unknown_kernel_is_a_clear_error(capsys):
    assert main(["run", "nope", "--host"]) == 2
    assert "tileir kernels" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["-m", "tileir", "kernels"]])
def test_python_dash_m(argv):
    r = subprocess.run([sys.executable, *argv], capture_output=True, text=True)
    assert r.returncode == 0 and "vadd" in r.stdout


# ---- issue 16: help, one-line errors, a kernel of your own, the ledger anywhere ---------------------

USER_KERNELS = '''
import numpy as np

import tileir as ti
from tileir import F32, In, Out, cells
from tileir.kernels.registry import Case


@ti.kernel
def scale(x=lambda n: In(F32, cells([n], [1024])), y=lambda n: Out(F32, cells([n], [1024])), *, n: int,
          factor: float = 2.0):
    ti.store_cell(y, ti.load_cell(x) * factor)


def _inputs(n, rng):
    return [rng.standard_normal(n).astype(np.float32), np.zeros(n, np.float32)]


# a case of its own, not registered: `tileir run FILE.py:scale_case` runs it
scale_case = Case("scale", scale, "y = 2 x", 3000, lambda n: {"n": n}, _inputs, lambda a: a[0] * 2, output=1)
not_a_kernel = 3
'''


@pytest.fixture
def user_file(tmp_path):
    path = tmp_path / "my_kernels.py"
    path.write_text(USER_KERNELS)
    return path


def test_show_a_kernel_of_your_own_with_its_configuration(user_file, capsys):
    assert main(["show", f"{user_file}:scale", "--config", "n=4096", "factor=3.0"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("entry @scale(") and "tensor_view<4096xf32" in out and "3.000000e+00" in out


def test_show_a_kernel_of_your_own_as_bytecode(user_file, tmp_path, capsys):
    bc = tmp_path / "scale.tileirbc"
    assert main(["show", f"{user_file}:scale", "--config", "n=2048", "--emit", "bytecode", "-o", str(bc)]) == 0
    assert bc.read_bytes()[:8] == b"\x7fTileIR\x00"


def test_run_a_case_of_your_own(user_file, capsys):
    assert main(["run", f"{user_file}:scale_case", "--host"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("scale size=3000 on the host reference") and out.strip().endswith("ok")


@pytest.mark.parametrize("argv, words, fix", [
    (["show", "{f}:nope"], "has no 'nope'; its kernels: scale", "{f}:scale"),
    (["show", "{f}:not_a_kernel"], "is not a kernel (its type is int)", "decorate it with @tileir.kernel"),
    (["show", "{f}:scale", "--size", "64"], "--size is for the library's cases", "--config key=value"),
    (["show", "{f}:scale"], "missing configuration n=", None),
    (["show", "{f}:scale", "--config", "n"], "configuration is key=value", "--config n=4096"),
    (["run", "{f}:scale", "--host"], "no inputs or answer to run it on", "register(Case(...))"),
    (["show", "nowhere.py:k"], "there is no file nowhere.py", "FILE.py:NAME"),
])
def test_a_kernel_of_your_own_refused_in_one_line(user_file, capsys, argv, words, fix):
    assert main([a.format(f=user_file) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tileir: ") and "Traceback" not in err
    assert words in err
    if fix:
        assert "Write instead: " + fix.format(f=user_file) in err


@pytest.mark.parametrize("size", ["64y1000", "64", "64x1000x3", "0x1000", "-5", "x"])
def test_a_bad_size_is_one_line(capsys, size):
    assert main(["show", "softmax", "--size", size]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--size {size}" in err and "Write instead: --size 64x1000" in err


def test_a_size_the_case_cannot_take_is_one_line(capsys):
    assert main(["run", "matmul_f16", "--host", "--size", "64x64"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "takes 3 positive ints" in err


def test_run_on_the_device_without_a_gpu_suggests_host(capsys, monkeypatch):
    import tileir.cli as cli

    monkeypatch.setattr(cli, "_device_available", lambda: False)
    assert main(["run", "vadd", "--device"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Write instead: tileir run vadd --host" in err


@pytest.mark.parametrize("command", ["show", "run"])
def test_show_and_run_explain_size_and_emit(capsys, command):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "--size SIZE the problem size" in out and "MxNxK" in out
    if command == "show":
        assert "mlir (the Tile IR text" in out and "FILE.py:NAME" in out and "--config KEY=VALUE" in out


def test_kernels_lists_each_default_size(capsys):
    assert main(["kernels"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("matmul_f16 "))
    assert "200x136x300" in line


def test_the_ledger_runs_outside_the_repository(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["ledger", "--quiet"]) == 0
    assert "0 gaps" in capsys.readouterr().out
