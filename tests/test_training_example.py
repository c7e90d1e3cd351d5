"""The training example and the backward tutorial, on the CPU (the host reference):
examples/07_training.py --cpu-smoke trains the tileir model and the pure-torch one side by side and
its JSON says the two loss curves agree step by step; examples/backward_softmax.py runs its
checks; and docs/tutorials/backward.md includes both scripts' sections (pymdownx.snippets,
``--8<-- "examples/FILE:SECTION"``) and their output as they print it now
(docs/tutorials/output/FILE.txt), numbers aside: timings and roundings move, the lines do not.

    python tests/test_training_example.py --write    # rewrite the output files the page includes
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "tutorials" / "backward.md"
OUTPUTS = ROOT / "docs" / "tutorials" / "output"
# the arguments each script's shown output is printed with
ARGS = {"backward_softmax.py": [], "07_training.py": ["--cpu-smoke"]}
# the sections the page includes
SECTIONS = {("backward_softmax.py", s) for s in ("kernel", "host", "ops", "check")} | \
    {("07_training.py", s) for s in ("ops", "block")}


def _run(name: str, *extra: str) -> str:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), CUDA_VISIBLE_DEVICES="")
    got = subprocess.run([sys.executable, f"examples/{name}", *ARGS[name], *extra], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=300)
    assert got.returncode == 0, f"{name} exited {got.returncode}\n{got.stdout[-3000:]}\n{got.stderr[-3000:]}"
    return got.stdout


def _shape(text: str) -> list[str]:
    """Lines with every number (1,234.5e-06 included) replaced by # and runs of blanks by one (a
    number's width pads a column)."""
    return [" ".join(re.sub(r"[-+]?(\d[\d,]*\.?\d*|\.\d+)([eE][-+]?\d+)?", "#", line).split())
            for line in text.strip("\n").splitlines()]


def _section(name: str, section: str) -> str:
    m = re.search(rf"^[ \t]*# --8<-- \[start:{section}\]\n(.*?)^[ \t]*# --8<-- \[end:{section}\]",
                  (ROOT / "examples" / name).read_text(), re.S | re.M)
    assert m, f"examples/{name} has no section {section}"
    return textwrap.dedent(m.group(1)).strip("\n")


def _included() -> list[str]:
    """What the page includes: ``examples/FILE[:SECTION]`` and ``docs/...`` paths."""
    return re.findall(r'^\s*--8<-- "([^"]+)"\s*$', PAGE.read_text(), re.M)


def _output(name: str) -> Path:
    return OUTPUTS / f"{Path(name).stem}.txt"


def _smoke_lines(stdout: str) -> str:
    """The smoke's output without the lines ``--out`` adds."""
    return "\n".join(s for s in stdout.splitlines() if not s.startswith(("wrote ", "matplotlib is not importable")))


def test_training_smoke_losses_agree_step_by_step(tmp_path):
    pytest.importorskip("torch")
    out = tmp_path / "curves.json"
    stdout = _run("07_training.py", "--out", str(out))
    rec = json.loads(out.read_text())
    c = rec["config"]
    assert (c["d_model"], c["heads"], c["head_dim"], c["seq"], c["batch"], c["steps"]) == (64, 2, 64, 16, 2, 3)
    assert len(rec["loss_tileir"]) == len(rec["loss_torch"]) == 3
    assert rec["agree"] and not rec["steps_outside_tolerance"], stdout
    for a, b in zip(rec["loss_tileir"], rec["loss_torch"]):
        assert abs(a - b) <= c["atol"] + c["rtol"] * abs(b)
    assert rec["max_abs_diff"] == max(abs(a - b) for a, b in zip(rec["loss_tileir"], rec["loss_torch"]))
    assert rec["loss_torch"][-1] < rec["loss_torch"][0]  # it trains
    # the first batch's gradients: tileir's bf16 ones as close to f32 torch's as torch's bf16 ones
    err = rec["grad_rel_err_vs_f32"]
    assert err["tileir"] < 2 * err["torch"] + 1e-3, err
    assert rec["tokens_per_s"]["tileir"] > 0 and rec["tokens_per_s"]["torch"] > 0
    assert _shape(_output("07_training.py").read_text()) == _shape(_smoke_lines(stdout)), \
        f"{PAGE.name} shows other lines than the smoke prints (python {__file__} --write):\n{stdout}"


def test_training_backward_on_the_calling_thread(tmp_path, monkeypatch):
    """--backward-on-caller: each model's steps run inside set_multithreading_enabled(False), and the record
    says so; refused with --graph. Kills: the flag parsed and not applied (or applied to one model only),
    and the record without it."""
    torch = pytest.importorskip("torch")
    import importlib.util

    spec = importlib.util.spec_from_file_location("training_example", ROOT / "examples" / "07_training.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    seen = []

    def train(*args, **kw):  # what each model's steps would see, without training
        seen.append(torch.autograd.is_multithreading_enabled())
        return [1.0] * 3, 1.0, 0.1

    monkeypatch.setattr(example, "train", train)
    monkeypatch.setattr(example, "grad_check", lambda *a: {"tileir": 0.0, "torch": 0.0})
    out = tmp_path / "r.json"
    monkeypatch.setattr(example, "plot", lambda record, path: None)
    assert example.main(["--cpu-smoke", "--no-control", "--backward-on-caller", "--out", str(out)]) == 0
    assert seen == [False, False] and json.loads(out.read_text())["config"]["backward_on_caller"] is True
    seen.clear()
    assert example.main(["--cpu-smoke", "--no-control"]) == 0
    assert seen == [True, True]
    with pytest.raises(SystemExit):
        example.parse(["--cpu-smoke", "--graph", "--backward-on-caller"])


def test_backward_tutorial_script_runs_and_the_page_shows_its_output():
    pytest.importorskip("torch")
    stdout = _run("backward_softmax.py")
    assert _shape(_output("backward_softmax.py").read_text()) == _shape(stdout), \
        f"{PAGE.name} shows other lines than the script prints (python {__file__} --write):\n{stdout}"


def test_the_page_includes_the_scripts_sections_and_outputs():
    included = _included()
    sections = {tuple(p[len("examples/"):].split(":")) for p in included if ":" in p}
    assert sections == SECTIONS
    for name, section in sections:
        assert _section(name, section).strip(), f"examples/{name}:{section} is empty"
    for name in ARGS:
        assert str(_output(name).relative_to(ROOT)) in included
    missing = [p for p in included if not (ROOT / p.partition(":")[0]).exists()]
    assert not missing, missing


def write() -> None:
    OUTPUTS.mkdir(parents=True, exist_ok=True)
    for name in ARGS:
        _output(name).write_text(_smoke_lines(_run(name)).rstrip("\n") + "\n")
        print(f"wrote {_output(name).relative_to(ROOT)}")


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit(__doc__)
    write()
