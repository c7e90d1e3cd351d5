import os
import shutil
import sys
from pathlib import Path

import pytest

# tileiras / tileirdisasm from the pinned pip package, first on PATH for the tests that run them
try:
    import nvidia  # noqa: F401

    for base in nvidia.__path__:
        b = Path(base) / "cu13" / "bin"
        if (b / "tileirdisasm").exists():
            os.environ["PATH"] = f"{b}{os.pathsep}{os.environ.get('PATH', '')}"
            break
except ImportError:
    pass

os.environ.pop("CUDA_HOME", None)


def have_gpu() -> bool:
    try:
        from tileir.runtime import available

        return available()
    except Exception:
        return False


def pytest_collection_modifyitems(config, items):
    if have_gpu():
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU and the CUDA driver")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def disasm():
    tool = shutil.which("tileirdisasm")
    if tool is None:
        pytest.fail("tileirdisasm is not installed: `pip install -e '.[cuda,test]'` (CI installs it)")
    import subprocess
    import tempfile

    def run(data: bytes) -> str:
        with tempfile.NamedTemporaryFile(suffix=".tileirbc", delete=False) as f:
            f.write(data)
            path = f.name
        try:
            r = subprocess.run([tool, path], capture_output=True, text=True)
        finally:
            os.unlink(path)
        if r.returncode != 0:
            raise AssertionError(f"tileirdisasm refused the bytes:\n{r.stderr}")
        return r.stdout

    return run


sys.dont_write_bytecode = True
