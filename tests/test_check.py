"""check for users' kernels (tileir.check, KernelFn.check, `tileir check`): a fake device -- the
host reference with one lane changed -- is caught and the lane named; an equal run passes; the
judgements are layer 2's; without a GPU check says it cannot compare."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

import tileir as ti
from tileir import F32, I32, In, Out, TileirError, cells
from tileir.assemble import gpu_name_of_device
from tileir.judge import Judge

NO_GPU = gpu_name_of_device() is None


@ti.kernel
def scale(x=In(F32, cells(["R", "C"], [1, 64])), y=Out(F32, cells(["R", "C"], [1, 64])), *, factor: float = 2.0):
    ti.store_cell(y, ti.load_cell(x) * factor)


@ti.kernel
def count(x=In(I32, cells(["N"], [128])), y=Out(I32, cells(["N"], [128]))):
    ti.store_cell(y, ti.load_cell(x) + 1)


def perturbing(kern, pos: int, index, by):
    """A fake device: the host reference, then lane ``index`` of argument ``pos`` moved by ``by``."""
    def device(*args, **config):
        kern.run_host(*args, **config)
        args[pos][index] += by
    return device


def _inputs():
    rng = np.random.default_rng(0)
    return rng.standard_normal((5, 100)).astype(np.float32), np.zeros((5, 100), np.float32)


def test_a_changed_lane_is_found_and_named():
    x, y = _inputs()
    res = scale.check(x, y, device=perturbing(scale, 1, (3, 17), 0.5), factor=3.0)
    assert not res.ok and [a.name for a in res.bad] == ["y"]
    y_check = res["y"]
    assert y_check.verdict.bad == 1 and y_check.verdict.lanes == 500
    (index, host, device), = y_check.first_bad
    assert index == (3, 17)
    assert float(host.split()[0]) == pytest.approx(3 * x[3, 17])
    assert float(device.split()[0]) == pytest.approx(3 * x[3, 17] + 0.5)
    assert y_check.verdict.max_err == pytest.approx(0.5)
    text = str(res)
    assert "1 of 2 arrays differ: y" in text and "1 of 500 lanes differ" in text and "y[3, 17]: host" in text
    assert "factor=3.0" in text
    assert not y.any()  # the arguments themselves are not written


def test_an_equal_run_passes():
    x, y = _inputs()
    res = scale.check(x, y, device=scale.run_host)
    assert res.ok and not res.bad
    assert "every array agrees" in str(res) and "all 500 lanes agree" in str(res)
    assert "device=scale.run_host" in str(res)
    assert res["x"].role == "In" and res["y"].role == "Out"


def test_floats_are_held_to_the_tolerance_and_integers_exactly():
    x, y = _inputs()
    one_ulp = float(np.spacing(np.float32(2 * x[1, 2])))
    near = perturbing(scale, 1, (1, 2), one_ulp)
    assert scale.check(x, y, device=near).ok  # within 8 ulp: the default for floats
    assert not scale.check(x, y, device=near, judge="exact").ok
    assert not scale.check(x, y, device=near, judge={"y": "bits"}).ok
    assert not scale.check(x, y, device=near, judge=Judge("tol", 0.0, 0.0)).ok
    xi = np.arange(300, dtype=np.int32)
    res = count.check(xi, np.zeros_like(xi), device=perturbing(count, 1, 299, 1))
    assert not res.ok and res["y"].judge.kind == "exact" and res["y"].first_bad[0][0] == (299,)
    with pytest.raises(TileirError, match="judge="):
        scale.check(x, y, device=scale.run_host, judge="close")


def test_a_device_that_writes_an_input_is_reported():
    x, y = _inputs()
    res = scale.check(x, y, device=perturbing(scale, 0, (0, 0), 1.0))
    assert not res.ok and [a.name for a in res.bad] == ["x"] and "x [5x100]" in str(res)


def test_torch_tensors_are_copied_not_written():
    torch = pytest.importorskip("torch")
    x, y = (torch.from_numpy(a) for a in _inputs())
    res = scale.check(x, y, device=perturbing(scale, 1, (0, 1), 1.0))
    assert not res.ok and res["y"].first_bad[0][0] == (0, 1)
    assert not y.any()


@pytest.mark.skipif(not NO_GPU, reason="a GPU is here: check compares")
def test_without_a_gpu_check_says_it_cannot_compare():
    x, y = _inputs()
    with pytest.raises(TileirError, match="no GPU here") as e:
        scale.check(x, y)
    assert "device=" in e.value.fix and "run_host" in e.value.fix


def test_the_argument_count_is_checked():
    with pytest.raises(TileirError, match="1 arguments for 2 parameters"):
        scale.check(np.zeros(3, np.float32), device=scale.run_host)


# ---- the command ----------------------------------------------------------------------------------


USER_FILE = '''
import tileir as ti
from tileir import F32, In, Out, cells

@ti.kernel
def shift(x=In(F32, cells(["R", "C"], [1, 64])), y=Out(F32, cells(["R", "C"], [1, 64])), *, by: float = 1.0):
    ti.store_cell(y, ti.load_cell(x) + by)

@ti.kernel
def axpy(a=ti.ByValue(F32), x=In(F32, cells(["N"], [64])), y=Out(F32, cells(["N"], [64]))):
    ti.store_cell(y, ti.load_cell(x) * ti.scalar(a))
'''


@pytest.fixture()
def user_file(tmp_path):
    f = tmp_path / "my_kernels.py"
    f.write_text(textwrap.dedent(USER_FILE))
    return f


def _fake_devices(monkeypatch, lane=None):
    """`tileir check` runs on a fake device: the host reference, with ``lane`` of the kernel's last
    argument moved by 1 (when given)."""
    from tileir import cli

    def device_for(kern):
        def device(*args, **config):
            kern.run_host(*args, **config)
            if lane is not None:
                args[-1][lane] += 1.0
        return device

    monkeypatch.setattr(cli, "_check_device", device_for)


def test_cli_check_of_a_users_kernel(user_file, monkeypatch, capsys):
    from tileir.cli import main

    _fake_devices(monkeypatch, lane=(2, 5))
    assert main(["check", f"{user_file}:shift", "--size", "4x100", "--config", "by=2.5"]) == 1
    out = capsys.readouterr().out
    assert "check shift(by=2.5)" in out and "1 of 400 lanes differ" in out and "y[2, 5]: host" in out
    _fake_devices(monkeypatch)
    assert main(["check", f"{user_file}:shift", "--size", "R=3,C=70", "--seed", "1"]) == 0
    assert "all 210 lanes agree" in capsys.readouterr().out
    assert main(["check", f"{user_file}:axpy", "--size", "100", "--arg", "a=0.5"]) == 0
    assert "all 100 lanes agree" in capsys.readouterr().out


def test_cli_check_of_a_library_kernel(monkeypatch, capsys):
    from tileir.cli import main

    _fake_devices(monkeypatch)
    assert main(["check", "softmax", "--size", "4x100"]) == 0
    assert "check softmax" in capsys.readouterr().out


@pytest.mark.parametrize("argv, words, fix", [
    (["--size", "4"], "reads 2 run-time sizes", "--size 64x128 (R x C)"),
    (["--size", "R=4,K=5"], "has no run-time size K", "R=...,C=..."),
    (["--size", "4x-1"], "positive int", "--size 64x128"),
    ([], "reads the run-time sizes R, C", "--size 64x128"),
])
def test_cli_check_names_a_bad_size_and_its_fix(user_file, monkeypatch, capsys, argv, words, fix):
    from tileir.cli import main

    _fake_devices(monkeypatch)
    assert main(["check", f"{user_file}:shift", *argv]) == 2
    err = capsys.readouterr().err
    assert words in err and fix in err


def test_cli_check_wants_a_value_for_a_by_value_parameter(user_file, monkeypatch, capsys):
    from tileir.cli import main

    _fake_devices(monkeypatch)
    assert main(["check", f"{user_file}:axpy", "--size", "100"]) == 2
    assert "--arg a=VALUE" in capsys.readouterr().err


@pytest.mark.skipif(not NO_GPU, reason="a GPU is here: check compares")
def test_cli_check_without_a_gpu_says_so(user_file, capsys):
    from tileir.cli import main

    assert main(["check", f"{user_file}:shift", "--size", "4x100"]) == 2
    assert "no GPU here" in capsys.readouterr().err
