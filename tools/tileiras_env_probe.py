"""Which environment variables can derail tileiras (on a CPU, no GPU needed): the measurement behind
``assemble._child_env``.

1. The names: every getenv a real compile makes (tileiras and the ptxas it runs), logged by a
   getenv shim loaded with LD_PRELOAD (built with the C compiler when there is one), and the
   environment-variable-like strings in the tileiras, ptxas and libnvvm binaries.
2. The measurement: a small kernel assembled for sm_90 with each name set to values that point
   elsewhere (a missing path, an empty directory, a toolkit of junk files, /usr/local/cuda where it
   exists, the empty string, "1"): a name whose value breaks a compile is one the child must not
   inherit (or must get from us).

    PYTHONPATH=src python3 tools/tileiras_env_probe.py --out bench/results/tileiras_env_cpu.json
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from tileir.assemble import find_tileiras, tileiras_version
from tileir.bytecode import encode_kernel
from tileir.kernels import saxpy

_SHIM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
static void note(const char *name) {
  const char *log = "@LOG@"; FILE *f = fopen(log, "a"); if (f) { fprintf(f, "%s\n", name); fclose(f); } }
char *getenv(const char *name) {
  static char *(*real)(const char *); if (!real) real = dlsym(RTLD_NEXT, "getenv"); note(name); return real(name); }
char *secure_getenv(const char *name) {
  static char *(*real)(const char *); if (!real) real = dlsym(RTLD_NEXT, "secure_getenv"); note(name);
  return real(name); }
"""
# Strings of the binaries worth trying: the shapes an environment variable of a toolkit takes.
_NAME = re.compile(rb"(?<![A-Za-z0-9_])((?:CUDA|NVVM|LIBNVVM|PTXAS|TILEIRAS|TMP|TEMP|LLVM|NV)[A-Z0-9_]*)\0")


def names_in(path: Path) -> set[str]:
    try:
        data = path.read_bytes()
    except OSError:
        return set()
    return {m.group(1).decode() for m in _NAME.finditer(data) if len(m.group(1)) >= 4}


def compile_once(tileiras: str, src: str, out: str, env: dict) -> tuple[int, str]:
    if os.path.exists(out):
        os.unlink(out)
    p = subprocess.run([tileiras, "--gpu-name", "sm_90", "-o", out, src], env=env, capture_output=True, timeout=120)
    said = (p.stdout + p.stderr).decode("utf-8", "replace").strip().replace("\n", " | ")
    return p.returncode, said[:200]


def getenv_log(tileiras: str, src: str, out: str, base: dict, work: Path) -> list[str] | None:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return None
    log = work / "getenv.log"
    (work / "shim.c").write_text(_SHIM.replace("@LOG@", str(log)))
    if subprocess.run([cc, "-shared", "-fPIC", "-o", str(work / "shim.so"), str(work / "shim.c"), "-ldl"]).returncode:
        return None
    compile_once(tileiras, src, out, dict(base, LD_PRELOAD=str(work / "shim.so")))
    return sorted(set(log.read_text().split())) if log.exists() else []


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    tileiras = find_tileiras()
    bindir = Path(tileiras).parent
    base = {k: v for k, v in os.environ.items() if k not in ("CUDA_HOME", "CUDA_PATH", "CUDA_ROOT")}
    with tempfile.TemporaryDirectory(prefix="tileir-envprobe-") as d:
        work = Path(d)
        src, out = str(work / "k.tileirbc"), str(work / "k.cubin")
        Path(src).write_bytes(encode_kernel(saxpy.kernel(tile=1024)))
        baseline = compile_once(tileiras, src, out, base)
        read = getenv_log(tileiras, src, out, base, work)
        in_binaries = set()
        for b in (bindir / "tileiras", bindir / "ptxas", bindir.parent / "lib" / "libnvvm.so.4"):
            in_binaries |= names_in(b)
        candidates = sorted((set(read or ()) | in_binaries | {"PATH", "LD_LIBRARY_PATH"}) - {"LD_PRELOAD"})
        junk = work / "junk-toolkit"
        for sub in ("bin", "lib", "nvvm/lib64"):
            (junk / sub).mkdir(parents=True)
        (junk / "lib" / "libnvvm.so.4").write_bytes(b"\x7fELFjunk")
        (junk / "nvvm" / "lib64" / "libnvvm.so").write_bytes(b"\x7fELFjunk")
        (junk / "bin" / "ptxas").write_text("#!/bin/sh\nexit 3\n")
        (junk / "bin" / "ptxas").chmod(0o755)
        empty = work / "empty-toolkit"
        empty.mkdir()
        values = {"missing path": "/nonexistent/tileir-probe", "empty directory": str(empty),
                  "junk toolkit": str(junk), "empty string": "", "1": "1"}
        if os.path.isdir("/usr/local/cuda"):
            values["/usr/local/cuda"] = "/usr/local/cuda"
        rows = []
        for name in candidates:
            for label, value in values.items():
                if name == "PATH":
                    value = f"{value}{os.pathsep}{base.get('PATH', '')}" if label != "empty string" else ""
                elif name == "LD_LIBRARY_PATH" and label == "junk toolkit":
                    value = f"{junk / 'lib'}{os.pathsep}{junk / 'nvvm' / 'lib64'}"
                rc, said = compile_once(tileiras, src, out, dict(base, **{name: value}))
                rows.append({"name": name, "value": label, "rc": rc, "said": said})
    breaks = sorted({r["name"] for r in rows if r["rc"] != 0})
    doc = {"what": "environment variables that change whether tileiras assembles saxpy for sm_90: each set "
                   "alone, to each value, on top of an environment without CUDA_HOME/CUDA_PATH/CUDA_ROOT",
           "tileiras": tileiras_version(tileiras), "date": datetime.date.today().isoformat(),
           "baseline_rc": baseline[0], "read_by_getenv": read, "in_binaries": sorted(in_binaries),
           "break_a_compile": breaks,
           "breaking": [r for r in rows if r["rc"] != 0]}
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(json.dumps({"break_a_compile": breaks, "read_by_getenv": read}, indent=1))


if __name__ == "__main__":
    main()
