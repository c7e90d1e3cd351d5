"""Every example script runs on the host reference and says its answers are right (exit status 0),
and the output each tutorial page shows (docs/tutorials/output/) is what the script prints now,
numbers aside: timings and rounding move, the lines do not.

    python tests/test_examples.py --write     # run the tutorials and write their outputs for the docs
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
OUTPUTS = ROOT / "docs" / "tutorials" / "output"
# the arguments that run a script on the host reference at small sizes (the tutorials do by default)
HOST_ARGS = {"07_training.py": ["--cpu-smoke"]}
# needs two GPUs and NCCL: there is no host reference of a collective
NOT_ON_THE_HOST = {"distributed_matmul.py"}
# the scripts whose output a tutorial page shows
TUTORIALS = ["01_vector_add.py", "02_fused_softmax.py", "03_matmul_autotune.py", "04_flash_attention.py",
             "05_debugging.py", "06_pytorch_model.py"]
TIMEOUT_S = 180


def _scripts() -> list[str]:
    return sorted(p.name for p in EXAMPLES.glob("*.py") if p.name not in NOT_ON_THE_HOST)


def _tested_elsewhere(name: str) -> str | None:
    """Another test module that runs this script (the training example's runs it with its JSON
    checked): the suite runs each script once."""
    for f in sorted(Path(__file__).parent.glob("test_*.py")):
        if f.name != Path(__file__).name and name in f.read_text():
            return f.name
    return None


def run_example(name: str) -> subprocess.CompletedProcess:
    """``name`` run from the repository's root on the host reference, as CI runs it."""
    env = dict(os.environ, TILEIR_INTERPRET="1", PYTHONPATH=str(ROOT / "src"))
    return subprocess.run([sys.executable, str(Path("examples") / name), *HOST_ARGS.get(name, [])], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=TIMEOUT_S)


def shape_of(text: str) -> list[str]:
    """The output's lines with every number replaced by # and runs of blanks by one (a number's
    width pads a column): what must not change between runs."""
    return [" ".join(re.sub(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", "#", line).split())
            for line in text.splitlines()]


def output_file(name: str) -> Path:
    return OUTPUTS / (Path(name).stem + ".txt")


@pytest.mark.parametrize("name", _scripts())
def test_example_runs_on_the_host_reference(name):
    elsewhere = _tested_elsewhere(name) if name not in TUTORIALS else None
    if elsewhere:
        pytest.skip(f"tests/{elsewhere} runs it")
    got = run_example(name)
    assert got.returncode == 0, f"{name} exited {got.returncode}\n{got.stdout[-3000:]}\n{got.stderr[-3000:]}"
    if name in TUTORIALS:
        assert got.stdout.rstrip().endswith("ok")
        shown = output_file(name)
        assert shown.exists(), f"{shown} is missing: python tests/test_examples.py --write"
        assert shape_of(shown.read_text()) == shape_of(got.stdout), \
            f"{name} prints other lines than its tutorial shows: python tests/test_examples.py --write"


def test_every_tutorial_is_an_example_with_a_page():
    assert set(TUTORIALS) <= set(_scripts())
    for name in TUTORIALS:
        pages = [p for p in (ROOT / "docs" / "tutorials").glob("*.md") if f"examples/{name}" in p.read_text()]
        assert pages, f"no page of docs/tutorials includes examples/{name}"
        assert any(f"output/{Path(name).stem}.txt" in p.read_text() for p in pages)


def write_outputs() -> int:
    OUTPUTS.mkdir(parents=True, exist_ok=True)
    status = 0
    for name in TUTORIALS:
        got = run_example(name)
        if got.returncode:
            print(f"{name} exited {got.returncode}: not written\n{got.stderr[-2000:]}", file=sys.stderr)
            status = 1
            continue
        output_file(name).write_text(got.stdout)
        print(f"wrote {output_file(name).relative_to(ROOT)}")
    return status


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit(__doc__)
    sys.exit(write_outputs())
