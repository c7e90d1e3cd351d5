"""tileirdisasm and tileiras for the layer-1 goldens: found in the pinned pip package or on PATH,
run without CUDA_HOME, many at a time."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

GOLDENS = Path(__file__).resolve().parents[1] / "data" / "goldens"


def find(tool: str) -> str | None:
    try:
        import nvidia

        for base in nvidia.__path__:
            p = Path(base) / "cu13" / "bin" / tool
            if p.is_file() and os.access(p, os.X_OK):
                return str(p)
    except ImportError:
        pass
    return shutil.which(tool)


def _env() -> dict:
    env = dict(os.environ)
    env.pop("CUDA_HOME", None)
    return env


class Runner:
    """Writes each byte string once to a scratch directory and runs the tools on it."""

    def __init__(self):
        self.disasm_tool = find("tileirdisasm")
        self.asm_tool = find("tileiras")
        self.dir = Path(tempfile.mkdtemp(prefix="tileir-layer1-"))
        self.env = _env()

    def path(self, key: str, data: bytes) -> Path:
        p = self.dir / f"{key}.tileirbc"
        if not p.exists():
            p.write_bytes(data)
        return p

    def version(self) -> str:
        """tileiras' own version line (the key its verdicts are cached under)."""
        r = subprocess.run([self.asm_tool, "--version"], capture_output=True, text=True, env=self.env, timeout=60)
        lines = [x for x in (r.stdout + r.stderr).splitlines() if "V" in x or "ersion" in x]
        return "".join(c if c.isalnum() or c in "._-" else "_" for c in (lines[-1] if lines else "unknown"))

    def disasm(self, key: str, data: bytes):
        r = subprocess.run([self.disasm_tool, str(self.path(key, data))], capture_output=True, text=True,
                           env=self.env, timeout=120)
        return r.returncode, r.stdout, r.stderr

    def assemble(self, key: str, data: bytes, target: str):
        out = self.dir / f"{key}.{target}.cubin"
        r = subprocess.run([self.asm_tool, "--gpu-name", target, "-o", str(out), str(self.path(key, data))],
                           capture_output=True, text=True, env=self.env, timeout=600)
        ok = r.returncode == 0 and out.exists() and out.read_bytes()[:4] == b"\x7fELF"
        return ok, (r.stderr + r.stdout).strip()

    @staticmethod
    def parallel(fn, jobs) -> list:
        """``fn(*job)`` for every job, many processes at a time; the results in job order."""
        workers = max(4, 2 * (os.cpu_count() or 2))
        with ThreadPoolExecutor(workers) as ex:
            return list(ex.map(lambda j: fn(*j), jobs))

    def close(self):
        shutil.rmtree(self.dir, ignore_errors=True)
