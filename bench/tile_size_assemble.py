"""How long tileiras takes to assemble one kernel as its tile grows (on a CPU, no GPU needed): the
measurement behind the recorder's tile-size limit (record/core.py, MAX_TILE_ELEMENTS).

Two kernels of the library, each with one tile of 2^e lanes: vadd (c = a + b, f32, loads and a
store through a view: three tiles of 2^e elements) and saxpy (y = alpha * x + y, f32, masked loads
and a store through a tile of 2^e pointers). Each size is recorded, lowered and encoded, then
tileiras assembles it for sm_90 at its default level in its own process group, killed after
--timeout seconds (a larger tile of that kernel is then not tried).

    PYTHONPATH=src python3 bench/tile_size_assemble.py --out bench/results/tile_size_assemble_cpu.json
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import signal
import subprocess
import tempfile
import time

from tileir.assemble import find_tileiras, tileiras_version
from tileir.bytecode import encode_kernel
from tileir.kernels import saxpy, vadd

KERNELS = {  # vadd took its length as configuration before sizes came from the arrays
    "vadd": lambda n: vadd.kernel(tile=n, **({"n": n} if "n" in vadd.static else {})),
    "saxpy": lambda n: saxpy.kernel(tile=n),
}


def assemble_seconds(tileiras: str, bytecode: bytes, timeout: float) -> dict:
    with tempfile.TemporaryDirectory(prefix="tileir-bench-") as d:
        src, out = os.path.join(d, "k.tileirbc"), os.path.join(d, "k.cubin")
        with open(src, "wb") as f:
            f.write(bytecode)
        env = {k: v for k, v in os.environ.items() if k not in ("CUDA_HOME", "CUDA_PATH", "CUDA_ROOT")}
        t = time.perf_counter()
        proc = subprocess.Popen([tileiras, "--gpu-name", "sm_90", "-o", out, src], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        try:
            _, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return {"seconds": None, "timed_out_after_s": timeout}
        took = time.perf_counter() - t
        size = os.path.getsize(out) if proc.returncode == 0 and os.path.exists(out) else None
        return {"seconds": round(took, 3), "rc": proc.returncode, "cubin_bytes": size,
                "stderr_head": err.decode("utf-8", "replace")[:300]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--exponents", default="12,14,16,17,18,19,20,21,22")
    ap.add_argument("--timeout", type=float, default=900.0)
    ap.add_argument("--kernels", default="saxpy,vadd")
    args = ap.parse_args()
    tileiras = find_tileiras()
    rows = []
    for name in args.kernels.split(","):
        for e in (int(x) for x in args.exponents.split(",")):
            n = 1 << e
            t = time.perf_counter()
            bc = encode_kernel(KERNELS[name](n))
            row = {"kernel": name, "exponent": e, "lanes": n, "record_encode_s": round(time.perf_counter() - t, 3),
                   "bytecode_bytes": len(bc)}
            row.update(assemble_seconds(tileiras, bc, args.timeout))
            print(json.dumps(row), flush=True)
            rows.append(row)
            if row.get("seconds") is None:  # a larger tile takes longer still
                break
    doc = {"what": "tileiras assembling a kernel whose tiles have 2^e lanes (vadd: view loads and store; saxpy: "
                   "pointer loads and store with a mask) for sm_90 at its default level, wall seconds; the "
                   "measurement behind record/core.py MAX_TILE_ELEMENTS",
           "tileiras": tileiras_version(tileiras), "machine": platform.platform(), "cpus": os.cpu_count(),
           "date": datetime.date.today().isoformat(), "rows": rows}
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
