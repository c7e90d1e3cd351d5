"""The judge's bound for wide f8 products into f32 (fuzzjudge.f8_wide: M >= 64, K >= 32), old against new.

(a) Every device value campaign 2 recorded for seeds 3403 and 8979 (the campaign's verdicts and the shrunk
reproducers in bench/results/fuzz_repro_unexplained2/) judged as the judge does now (fuzzknown's
_listed_within_now: SAFETY x envelope + 4 ulp) under each bound. (b) The share of lanes where a device that
drops 1, 4 or 16 k-terms of a lane (the emulation fuzzjudge.narrow_f8_mma over the data with those terms
zeroed) escapes the bound, at K in 32 64 128 256 (M 64, N 8), on nonzero integer-valued E4M3 data (every
dropped product at least 1) and on E4M3-rounded normals; beside it the false alarms: lanes where a right
device (the emulation; also accumulators it does not model: 8- and 32-term groups, 14 fraction bits) is out.
Bounds: old 2 (K + 1) 2^-14 sum|a_k b_k|; running sum_k 2^-13 max(|a_k b_k|, |S_k|) (the review's); new
fuzzjudge.f8_wide_bound (|emulation - exact| + 4 x 2^-13 max_k(|a_k b_k|, |S_k|)). CPU only:
.venv/bin/python bench/f8_bound_check.py [out.json]"""

from __future__ import annotations

import json
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))

from tileir.diff import fuzzgen as G  # noqa: E402
from tileir.diff import fuzzjudge as J  # noqa: E402
from tileir.diff.fuzzknown import OLD_WORKAROUNDS, _listed_within_now  # noqa: E402
from tileir.diff.fuzzspec import Profile  # noqa: E402
from tileir.diff.shrink import read_reproducer  # noqa: E402
from tileir.dtypes import BY_NAME, to_format  # noqa: E402
from tileir.judge import ulp_of  # noqa: E402

OUT = os.path.join(ROOT, "bench", "results", "f8_bound_check_cpu.json")
NEW = J.f8_wide_bound


def old_bound(x, y, c):
    x, y, c = (np.asarray(v, np.float64) for v in (x, y, c))
    return 2 * (x.shape[1] + 1) * 2.0 ** -14 * (np.abs(x) @ np.abs(y) + np.abs(c))


def running_bound(x, y, c):
    x, y, c = (np.asarray(v, np.float64) for v in (x, y, c))
    t = x[:, :, None] * y[None, :, :]
    s = c[:, None, :] + np.cumsum(t, axis=1)
    return 2.0 ** -13 * np.maximum(np.abs(t), np.abs(s)).sum(axis=1)


BOUNDS = {"old": old_bound, "running": running_bound, "new": NEW}


def recorded() -> list:
    """(name, outcome, desc) of every recorded verdict of 3403 and 8979."""
    with open(os.path.join(ROOT, "bench", "results", "fuzz_h200.json")) as f:
        rows = {r["seed"]: r for r in json.load(f)["differences"]}
    out = []
    for seed in (3403, 8979):
        r = rows[seed]
        out.append((f"{seed} campaign", {"status": r["status"], "workarounds": list(OLD_WORKAROUNDS),
                                         "verdict": {"regions": r["regions"]}}, G.generate(seed, Profile(version=2))))
        doc = read_reproducer(os.path.join(ROOT, "bench", "results", "fuzz_repro_unexplained2",
                                           f"fuzz_differ_{seed}.json"))
        out.append((f"{seed} shrunk", {"status": doc["status"], "verdict": doc["verdict"]}, doc["desc"]))
    return out


def check_recorded() -> dict:
    res = {}
    for name, fn in BOUNDS.items():
        J.f8_wide_bound = fn
        try:
            rows = []
            for what, outcome, desc in recorded():
                ok, lanes = _listed_within_now(desc, outcome)
                rows += [[what, lane, err, lim] for lane, err, lim in lanes]
        finally:
            J.f8_wide_bound = NEW
        res[name] = {"all_within": all(e <= lim for *_, e, lim in rows),
                     "largest_share": round(max(e / lim for *_, e, lim in rows), 3), "lanes": rows}
    return res


def _f32(v):
    return to_format(BY_NAME["f32"], v).astype(np.float64)


def limit(fn, x, y, c, h):
    """The judge's limit for a lane stored straight from the product: SAFETY x the source bound (at least
    f32's) + 4 ulp of the host's answer."""
    f32 = 2 * (x.shape[1] + 1) * 2.0 ** -24 * (np.abs(x) @ np.abs(y) + np.abs(c))
    return J.SAFETY * np.maximum(f32, fn(x, y, c)) + J.TOL.ulps * ulp_of(h, np.dtype(np.float32))


def simulate(K: int, drops, data: str, rng, m=64, n=8, trials=8) -> dict:
    e4m3 = BY_NAME["f8E4M3FN"]
    esc = {d: dict.fromkeys(BOUNDS, 0) for d in drops}
    alarms = {acc: dict.fromkeys(BOUNDS, 0) for acc in ("g16f13", "g8f13", "g32f13", "g16f14")}
    lanes = 0
    for _ in range(trials):
        if data == "int":  # nonzero integers of E4M3 (all of 1..16 are exact): every dropped product >= 1
            x, y = (rng.integers(1, 17, s) * rng.choice([-1.0, 1.0], s) for s in ((m, K), (K, n)))
        else:
            x, y = (to_format(e4m3, 4 * rng.standard_normal(s)).astype(np.float64) for s in ((m, K), (K, n)))
        c = np.zeros((m, n))
        h = _f32(x @ y + c)
        lims = {b: limit(fn, x, y, c, h) for b, fn in BOUNDS.items()}
        for acc, (g, fr) in zip(alarms, ((16, 13), (8, 13), (32, 13), (16, 14))):
            right = _f32(J.narrow_f8_mma(x, y, c, g, fr))
            for b in BOUNDS:
                alarms[acc][b] += int((np.abs(right - h) > lims[b]).sum())
        for d in drops:
            xd = x.copy()
            for i in range(m):
                xd[i, rng.choice(K, d, replace=False)] = 0.0
            wrong = _f32(J.narrow_f8_mma(xd, y, c))
            for b in BOUNDS:
                esc[d][b] += int((np.abs(wrong - h) <= lims[b]).sum())
        lanes += m * n
    return {"lanes": lanes,
            "escaped": {str(d): {b: round(v / lanes, 4) for b, v in e.items()} for d, e in esc.items()},
            "false_alarms": alarms}


def main(out=OUT) -> dict:
    rng = np.random.default_rng(15)
    res = {"recorded": check_recorded(), "simulated": {}}
    for data in ("int", "real"):
        for K in (32, 64, 128, 256):
            res["simulated"][f"{data} K={K}"] = simulate(K, (1, 4, 16), data, rng)
    with open(out, "w") as f:
        json.dump(res, f, indent=1)
    for b, r in res["recorded"].items():
        print(f"recorded, {b}: all within {r['all_within']}, largest error / limit {r['largest_share']}")
    for key, r in res["simulated"].items():
        esc = "  ".join(f"drop {d}: " + "/".join(f"{e[b]:.3f}" for b in BOUNDS) for d, e in r["escaped"].items())
        fa = sum(a["new"] for a in r["false_alarms"].values())
        print(f"{key:10s} escaped old/running/new  {esc}   false alarms (new, 4 accumulators) {fa}")
    return res


if __name__ == "__main__":
    main(*sys.argv[1:])
