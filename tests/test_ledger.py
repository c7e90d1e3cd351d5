"""Layer 3: the ledger's coverage file is what the goldens cover now, and the ledger has no gap."""

from pathlib import Path

from tileir.diff import ledger

ROOT = Path(__file__).resolve().parents[1]
COVERAGE = ledger.SHIPPED / "coverage.txt"


def current_coverage() -> str:
    from tests.layer1.cases import CASES

    lines = ["# golden: the ledger entries it covers (written by tests/test_ledger.py with TILEIR_REGEN_GOLDENS=1)"]
    for c in sorted(CASES, key=lambda c: c.name):
        lines.append(f"{c.name}: {' '.join(sorted(ledger.coverage_of(c.kernel)))}")
    return "\n".join(lines) + "\n"


def test_coverage_file_is_current():
    import os

    want = current_coverage()
    if os.environ.get("TILEIR_REGEN_GOLDENS"):
        COVERAGE.write_text(want)
    assert COVERAGE.read_text() == want, "the goldens changed: regenerate with TILEIR_REGEN_GOLDENS=1"


def test_the_ledger_has_no_gap():
    rows, gaps = ledger.report()
    assert len(rows) > 200
    assert not gaps, f"neither covered nor exempt: {gaps}"


def test_a_gap_is_reported(tmp_path):
    # the check can fail: an entry nobody covers is a gap and a non-zero exit
    (tmp_path / "dialect.txt").write_text("addf 2 13.1 rounding_mode flush_to_zero\n")
    (tmp_path / "exemptions.txt").write_text("addf.flush_to_zero | a reason\n")
    (tmp_path / "coverage.txt").write_text("g: addf\n")
    rows, gaps = ledger.report(tmp_path)
    assert gaps == ["addf.rounding_mode"]
    assert ledger.main(str(tmp_path), quiet=True) == 1


def test_where_the_ledger_reads_its_files(tmp_path):
    """The ledger reads the files the package ships; a checkout given as --root reads the same."""
    assert ledger.ledger_dir() == ledger.SHIPPED
    assert ledger.ledger_dir(ROOT) == ROOT / "src" / "tileir" / "data" / "ledger"
    assert ledger.ledger_dir(tmp_path) == tmp_path  # a folder of its own files, or nothing to read


def test_tileir_ledger_runs_outside_the_repository(tmp_path):
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "tileir", "ledger", "--quiet"], cwd=tmp_path, capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    assert "0 gaps" in r.stdout and "Traceback" not in r.stderr
