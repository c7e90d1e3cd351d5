"""What the bounds-checked variant costs on the GPU: two library kernels whose memory goes through
the pointer path the checks cover -- saxpy (masked pointer loads and a store) and histogram (a
masked load and an index-tile atomic) -- and vadd (cells: views, nothing to check, so only the
extra hidden parameters), each timed plain and with ``check_bounds=True`` on the same inputs,
answers compared. Writes one JSON.

    PYTHONPATH=src python3 bench/checked_overhead.py --out bench/results/checked_overhead_h200.json
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from timing import median_ms  # noqa: E402

from tileir.kernels import histogram, saxpy, vadd  # noqa: E402


def cases(n):
    """name -> (answer(checked): the output after one call from the same start, launch(checked):
    the bare call to time, bytes moved)."""
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    y0 = y.clone()
    bins = torch.randint(-3, 259, (n,), device="cuda", dtype=torch.int32)
    counts = torch.zeros(256, device="cuda", dtype=torch.int32)
    c = torch.empty(n, device="cuda")

    def saxpy_answer(checked):
        y.copy_(y0)
        saxpy(2.0, x, y, check_bounds=checked)
        return y.clone()

    def histogram_answer(checked):
        counts.zero_()
        histogram(bins, counts, check_bounds=checked)
        return counts.clone()

    def vadd_answer(checked):
        vadd(x, y0, c, check_bounds=checked)
        return c.clone()

    return {"saxpy": (saxpy_answer, lambda ch: saxpy(2.0, x, y, check_bounds=ch), 3 * 4 * n),
            "histogram": (histogram_answer, lambda ch: histogram(bins, counts, check_bounds=ch), 4 * n),
            "vadd": (vadd_answer, lambda ch: vadd(x, y0, c, check_bounds=ch), 3 * 4 * n)}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--n", type=int, default=1 << 26)
    a = p.parse_args()
    rows = []
    for name, (answer, launch, nbytes) in cases(a.n).items():
        same = bool(torch.equal(answer(False), answer(True)))
        # a checked call waits for its kernel (an assert leaves the context unusable), so both sides
        # are timed the same way: events around one call, the plain one synchronised too
        t_plain = median_ms(lambda f=launch: (f(False), torch.cuda.synchronize()), 30, 3)
        t_checked = median_ms(lambda f=launch: f(True), 30, 3)
        rows.append({"kernel": name, "n": a.n, "same_answer": same, "plain_ms": round(t_plain, 4),
                     "checked_ms": round(t_checked, 4), "overhead": round(t_checked / t_plain - 1, 4),
                     "plain_TBps": round(nbytes / t_plain / 1e9, 3)})
        print(json.dumps(rows[-1]), flush=True)
    out = {"date": datetime.date.today().isoformat(), "gpu": torch.cuda.get_device_name(0),
           "records": rows}
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
