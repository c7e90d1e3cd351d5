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
    assert capsys.readouterr().out == CASES["softmax"].kernel.mlir(cols=1000)


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
