"""The training example and the backward tutorial, on the CPU (the host reference):
examples/07_training.py --cpu-smoke trains the tileir model and the pure-torch one side by side and
its JSON says the two loss curves agree step by step; examples/backward_softmax.py runs its
checks; and docs/tutorials/backward.md shows both scripts' sections and output as they are.

The page marks each block it takes from a script with a comment on the line before it,
``<!-- examples/FILE:SECTION -->`` (the lines between ``# --8<-- [start:SECTION]`` and
``# --8<-- [end:SECTION]`` in FILE, dedented) or ``<!-- examples/FILE:output -->`` (what FILE
prints, numbers aside: timings and roundings move, the lines do not).

    python tests/test_training_example.py --write    # rewrite the page's blocks from the scripts
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
# the arguments each script's shown output is printed with
ARGS = {"backward_softmax.py": [], "07_training.py": ["--cpu-smoke"]}
BLOCK = re.compile(r"(<!-- examples/([\w.]+):(\w+) -->\n```\w*\n)(.*?)(^```)", re.S | re.M)


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


def _blocks() -> dict[tuple[str, str], str]:
    return {(m.group(2), m.group(3)): m.group(4).strip("\n") for m in BLOCK.finditer(PAGE.read_text())}


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
    shown = _blocks()[("07_training.py", "output")]
    assert _shape(shown) == _shape(_smoke_lines(stdout)), \
        f"{PAGE.name} shows other lines than the smoke prints (python {__file__} --write):\n{stdout}"


def test_backward_tutorial_script_runs_and_the_page_shows_its_output():
    pytest.importorskip("torch")
    stdout = _run("backward_softmax.py")
    assert _shape(_blocks()[("backward_softmax.py", "output")]) == _shape(stdout), \
        f"{PAGE.name} shows other lines than the script prints (python {__file__} --write):\n{stdout}"


def test_the_page_shows_the_scripts_code_as_it_is():
    blocks = _blocks()
    code = {k: v for k, v in blocks.items() if k[1] != "output"}
    assert {k for k in code if k[0] == "backward_softmax.py"} == \
        {("backward_softmax.py", s) for s in ("kernel", "host", "ops", "check")}
    assert {k for k in code if k[0] == "07_training.py"} == {("07_training.py", s) for s in ("ops", "block")}
    for (name, section), shown in code.items():
        assert shown == _section(name, section), \
            f"{PAGE.name} shows another {name}:{section} than the script (python {__file__} --write)"


def write() -> None:
    outputs = {name: _smoke_lines(_run(name)) for name in ARGS}

    def fill(m):
        name, section = m.group(2), m.group(3)
        body = outputs[name] if section == "output" else _section(name, section)
        return m.group(1) + body.strip("\n") + "\n" + m.group(5)

    PAGE.write_text(BLOCK.sub(fill, PAGE.read_text()))
    print(f"wrote {PAGE.relative_to(ROOT)}")


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit(__doc__)
    write()
