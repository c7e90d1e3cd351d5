"""The training example and the backward tutorial, on the CPU (the host reference):
examples/07_training.py --cpu-smoke trains the tileir model and the pure-torch one side by side and
its JSON says the two loss curves agree step by step; examples/backward_softmax.py runs its
checks; and docs/tutorials/backward.md shows that script's sections and output as they are."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "tutorials" / "backward.md"
SCRIPT = ROOT / "examples" / "backward_softmax.py"


def _run(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), CUDA_VISIBLE_DEVICES="")
    got = subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert got.returncode == 0, f"{args} exited {got.returncode}\n{got.stdout[-3000:]}\n{got.stderr[-3000:]}"
    return got


def _shape(text: str) -> list[str]:
    """Lines with every number (1,234.5e-06 included) replaced by #: timings and roundings move."""
    return [re.sub(r"[-+]?(\d[\d,]*\.?\d*|\.\d+)([eE][-+]?\d+)?", "#", line).rstrip()
            for line in text.strip("\n").splitlines()]


def _blocks(page: str) -> dict[str, str]:
    """The page's fenced blocks that follow an ``<!-- examples/FILE:SECTION -->`` comment, by
    FILE:SECTION."""
    return {m.group(1): m.group(2).strip("\n")
            for m in re.finditer(r"<!-- (examples/[\w.]+:\w+) -->\n```[\w]*\n(.*?)^```", page, re.S | re.M)}


def _section(path: Path, name: str) -> str:
    m = re.search(rf"^[ \t]*# --8<-- \[start:{name}\]\n(.*?)^[ \t]*# --8<-- \[end:{name}\]", path.read_text(),
                  re.S | re.M)
    assert m, f"{path.name} has no section {name}"
    return textwrap.dedent(m.group(1)).strip("\n")


def test_training_smoke_losses_agree_step_by_step(tmp_path):
    out = tmp_path / "curves.json"
    got = _run("examples/07_training.py", "--cpu-smoke", "--out", str(out))
    rec = json.loads(out.read_text())
    c = rec["config"]
    assert (c["d_model"], c["heads"], c["head_dim"], c["seq"], c["batch"], c["steps"]) == (64, 2, 64, 16, 2, 3)
    assert len(rec["loss_tileir"]) == len(rec["loss_torch"]) == 3
    assert rec["agree"] and not rec["steps_outside_tolerance"], got.stdout
    for a, b in zip(rec["loss_tileir"], rec["loss_torch"]):
        assert abs(a - b) <= c["atol"] + c["rtol"] * abs(b)
    assert rec["max_abs_diff"] == max(abs(a - b) for a, b in zip(rec["loss_tileir"], rec["loss_torch"]))
    assert rec["loss_torch"][-1] < rec["loss_torch"][0]  # it trains
    # the first batch's gradients: tileir's bf16 ones as close to f32 torch's as torch's bf16 ones
    err = rec["grad_rel_err_vs_f32"]
    assert err["tileir"] < 2 * err["torch"] + 1e-3, err
    assert rec["tokens_per_s"]["tileir"] > 0 and rec["tokens_per_s"]["torch"] > 0


def test_backward_tutorial_script_runs_and_the_page_shows_it():
    got = _run(str(SCRIPT.relative_to(ROOT)))
    page = PAGE.read_text()
    blocks = _blocks(page)
    sections = {k: v for k, v in blocks.items() if not k.endswith(":output")}
    assert set(sections) == {f"examples/backward_softmax.py:{s}" for s in ("kernel", "host", "ops", "check")}
    for key, shown in sections.items():
        assert shown == _section(SCRIPT, key.rpartition(":")[2]), f"{PAGE.name} shows another {key} than the script"
    assert _shape(blocks["examples/backward_softmax.py:output"]) == _shape(got.stdout), \
        f"{PAGE.name} shows other output lines than the script prints:\n{got.stdout}"
