"""Issue 11 on the GPU: every library kernel at the any-size sweep's sizes (bench/any_sizes.py: 32
seeded sizes a case, odd and tiny, the ones tests/test_any_size.py runs on the host reference), on
torch CUDA tensors through plain calls, each answer against torch (the recurrence, which torch
lacks, against numpy in f64), counting the recordings, the cubins and the tileiras runs the whole
sweep costs, and its wall time; then strided operands (slices of wider matrices, a [B, S, H, D]
tensor's .transpose(1, 2)) against torch. Writes one JSON.

    PYTHONPATH=src python3 bench/any_size_device.py --out bench/results/any_size_h200.json [--only softmax,...]

Every call runs the case's device configuration (its formats and flags; the tiles are the library's
own: the kernel defaults or the sm_XY default table), with a fresh TILEIR_CACHE_DIR (no cubin on
disk, no tune cache: every assembly is a real tileiras run, and the table's choices apply). Before
this sweep, the library recorded and assembled once per size (a size was configuration): the
``per_shape`` figures count the configurations the old calls would have made at these sizes and
price them at this run's mean cost of a configuration -- an estimate, labelled so.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ["TILEIR_CACHE_DIR"] = tempfile.mkdtemp(prefix="tileir-any-size-")  # before tileir reads it

import numpy as np  # noqa: E402
import torch  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
import any_sizes as SW  # noqa: E402

import tileir.assemble as assemble_module  # noqa: E402
from tileir.assemble import gpu_name_of_device, tileiras_version  # noqa: E402
from tileir.kernels import CASES  # noqa: E402
from tileir.runtime.arrays import numpy_to_torch, torch_to_numpy  # noqa: E402

F = torch.nn.functional


class Tileiras:
    """Counts the tileiras runs (and their seconds) by wrapping the one function that starts it."""

    def __init__(self):
        self.runs, self.seconds = 0, 0.0
        self._real = assemble_module._run_tileiras
        assemble_module._run_tileiras = self._counted

    def _counted(self, *a, **k):
        t = time.perf_counter()
        try:
            return self._real(*a, **k)
        finally:
            self.runs += 1
            self.seconds += time.perf_counter() - t

    def mark(self):
        return self.runs, self.seconds



# ---- torch's answers -----------------------------------------------------------------------------


def _wrap_i32(t):
    return ((t + 2**31) % 2**32 - 2**31).to(torch.int32)


def torch_reference(name: str, a: list):
    """Torch's answer for case ``name`` on its device arguments (before the kernel ran), in f64
    (i32 where the case is exact on integers); None where torch has no such operation."""
    d = [x.double() if torch.is_tensor(x) and x.is_floating_point() else x for x in a]
    if name == "vadd":
        return d[0] + d[1]
    if name == "saxpy":
        return float(a[0]) * d[1] + d[2]
    if name == "matmul_i8":
        return (a[0].double() @ a[1].double()).round().to(torch.int32)  # exact in f64 (no i64 mm on CUDA)
    if name.startswith("matmul"):
        return d[0] @ d[1]
    if name.startswith("bmm"):
        return torch.bmm(d[0], d[1])
    if name.startswith("transpose"):
        return d[0].t()
    if name.startswith("softmax"):
        return torch.softmax(d[0], -1)
    if name.startswith("layernorm"):
        return F.layer_norm(d[0], (d[0].shape[1],), d[1], d[2], eps=1e-5)
    if name.startswith("rmsnorm"):
        return d[0] * torch.rsqrt((d[0] * d[0]).mean(1, keepdim=True) + 1e-6) * d[1]
    if name.startswith("attention"):
        q, k, v = d[:3]
        group = q.shape[1] // k.shape[1]
        k, v = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)  # K/V head h // group
        return F.scaled_dot_product_attention(q, k, v, is_causal=name.endswith("_causal"))  # top-left: j <= i
    if name == "conv1d":
        return F.conv1d(d[0][None, None], d[1][None, None])[0, 0]
    if name == "histogram":
        x, counts = a[0], a[1]
        x = x[(x >= 0) & (x < counts.numel())].long()
        return (counts.long() + torch.bincount(x, minlength=counts.numel())).to(torch.int32)
    if name == "vector_sum":
        return d[0].sum().reshape(1)
    if name == "vector_max":
        return d[0].max().reshape(1)
    if name == "prefix_sum_f32":
        return torch.cumsum(d[0], 0)
    if name == "prefix_sum_i32":
        return _wrap_i32(torch.cumsum(a[0].long(), 0))
    return None


# ---- what the library compiled before sizes came from the arrays (an estimate) ---------------------


def _per_shape_key(name: str, size):
    """The configuration a call at ``size`` had when sizes were configuration (the old keywords):
    None where the old kernel took its length at launch too."""
    if name in ("saxpy", "recurrence") or name.startswith("prefix_sum"):
        return None
    if name == "conv1d":
        return size[1]  # width was configuration, the length an argument
    if name == "histogram":
        return size[1]  # bins
    if name.startswith(("softmax", "layernorm", "rmsnorm")):
        return size[1]  # cols
    if name.startswith("attention"):
        return size[2], size[3]  # s, d
    if name.startswith("bmm"):
        return size[1:]
    return size  # vadd n, vector_sum n, matmul m n k, transpose m n


# ---- the sweep -----------------------------------------------------------------------------------


def run_case(name: str, counter: Tileiras) -> dict:
    sweep, case = SW.SWEEPS[name], CASES[name]
    kept = {(module, attr): getattr(module, attr) for module, attr in sweep.runs}
    if sweep.runs:  # a case of several launches: its module's kernels replaced by fresh copies
        kernels = {attr: getattr(module, attr).fresh() for module, attr in sweep.runs}
        for module, attr in sweep.runs:
            setattr(module, attr, kernels[attr])
    else:
        kernels = {case.kernel.name: case.kernel.fresh()}
    sizes = SW.sizes_of(name)
    rng = np.random.default_rng(11)
    runs0, secs0 = counter.mark()
    t0 = time.perf_counter()
    worst, bad, first_s, reference = 0.0, [], None, "torch"
    for size in sizes:
        args = case.inputs(size, rng)
        dev = [numpy_to_torch(x, torch) if isinstance(x, np.ndarray) else x for x in args]
        want = torch_reference(name, dev)
        if want is None:  # the recurrence: numpy in f64
            reference = "numpy f64"
            want = case.expected([x.copy() if isinstance(x, np.ndarray) else x for x in args])
        else:
            want = want.detach().cpu().numpy()
        t = time.perf_counter()
        try:
            if sweep.runs:
                case.runner(dev, "device", **sweep.device)
            else:
                kernels[case.kernel.name](*dev, **sweep.device)
            torch.cuda.synchronize()
            err, ok = case.check(torch_to_numpy(dev[case.output]), want)
            what = {"max_abs_err": err}
        except Exception as e:  # noted, and the sweep goes on
            err, ok, what = float("nan"), False, {"error": f"{type(e).__name__}: {e}"[:400]}
        first_s = time.perf_counter() - t if first_s is None else first_s
        if not ok:
            bad.append(dict({"size": np.ravel(size).tolist()}, **what))
        if err == err:
            worst = max(worst, err)
    for (module, attr), kern in kept.items():
        setattr(module, attr, kern)
    runs1, secs1 = counter.mark()
    old = {_per_shape_key(name, s) for s in sizes}
    return {"case": name, "sizes": len(sizes), "ok": not bad, "failures": bad, "max_abs_err": worst,
            "tolerance": {"rtol": case.rtol, "atol": case.atol}, "reference": reference, "config": sweep.device,
            "recordings": {k: v.compiled()["recordings"] for k, v in kernels.items()},
            "cubins": {k: v.compiled()["cubins"] for k, v in kernels.items()}, "tileiras_runs": runs1 - runs0,
            "tileiras_s": round(secs1 - secs0, 2), "wall_s": round(time.perf_counter() - t0, 2),
            "first_call_s": round(first_s or 0.0, 3),
            # what the old size keywords would have assembled: one per distinct keyword set and kernel
            "per_shape_configurations": len(old - {None}) * len(kernels) if old != {None} else len(kernels)}


# ---- strided operands ----------------------------------------------------------------------------


def strided_checks() -> list[dict]:
    """Slices of wider matrices and a [B, S, H, D] tensor's .transpose(1, 2), against torch."""
    from tileir.kernels import attention, layernorm, matmul_bf16, matmul_f16, softmax

    g = torch.Generator(device="cuda").manual_seed(0)
    dev = "cuda"
    out = []

    def record(label, got, want, tol):
        err = float((got.double() - want.double()).abs().max())
        out.append({"check": label, "max_abs_err": err, "ok": err <= tol})
        print(json.dumps(out[-1]), flush=True)

    for kern, dt in ((matmul_f16, torch.float16), (matmul_bf16, torch.bfloat16)):
        m, n, k = 1000, 257, 129
        a = (torch.randn(m + 3, k + 11, device=dev, generator=g) / 10).to(dt)[3:, 5:5 + k]
        b = torch.randn(k + 1, n + 7, device=dev, generator=g).to(dt)[1:, 2:2 + n]
        big = torch.zeros(m, n + 30, device=dev, dtype=dt)
        kern(a, b, big[:, 9:9 + n])
        torch.cuda.synchronize()
        record(f"{kern.name} on slices", big[:, 9:9 + n], a.double() @ b.double(), 3e-2)
    for causal in (False, True):
        bsz, s, h, h_kv, s_kv, d = 2, 300, 8, 2, 517, 64
        q = torch.randn(bsz, s, h, d, device=dev, generator=g).half()
        kk = torch.randn(bsz, s_kv, h_kv, d, device=dev, generator=g).half()
        vv = torch.randn(bsz, s_kv, h_kv, d, device=dev, generator=g).half()
        o = torch.zeros(bsz, s, h, d, device=dev, dtype=torch.half)
        attention(q.transpose(1, 2), kk.transpose(1, 2), vv.transpose(1, 2), o.transpose(1, 2), causal=causal,
                  d_tile=64)
        torch.cuda.synchronize()
        want = F.scaled_dot_product_attention(q.transpose(1, 2).double(),
                                              kk.transpose(1, 2).double().repeat_interleave(h // h_kv, 1),
                                              vv.transpose(1, 2).double().repeat_interleave(h // h_kv, 1),
                                              is_causal=causal)
        record(f"attention [B, S, H, D].transpose(1, 2), GQA 8/2, S 300 / S_kv 517, causal={causal}",
               o.transpose(1, 2), want, 2e-2)
    x = (torch.randn(33, 5000 + 7, device=dev, generator=g) * 4)[:, 7:]
    y = torch.zeros(33, 5000 + 9, device=dev)[:, :5000]
    softmax(x, y)
    torch.cuda.synchronize()
    record("softmax on slices", y, torch.softmax(x.double(), -1), 1e-6)
    x = torch.randn(17, 3000 + 5, device=dev, generator=g).half()[:, 5:]
    w, bias = torch.randn(3000, device=dev, generator=g).half(), torch.randn(3000, device=dev, generator=g).half()
    y = torch.zeros(17, 3100, device=dev, dtype=torch.half)[:, 100:]
    layernorm(x, w, bias, y, fmt="f16")
    torch.cuda.synchronize()
    record("layernorm f16 on slices", y, F.layer_norm(x.double(), (3000,), w.double(), bias.double(), 1e-5), 2e-2)
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--only", default="", help="comma-separated parts of case names")
    args = p.parse_args()
    only = [o for o in args.only.split(",") if o]
    names = [n for n in SW.SWEEPS if not only or any(o in n for o in only)]
    counter = Tileiras()
    t0 = time.perf_counter()
    rows = []
    for name in names:
        row = run_case(name, counter)
        print(json.dumps({k: row[k] for k in ("case", "ok", "max_abs_err", "recordings", "cubins", "tileiras_runs",
                                              "wall_s", "per_shape_configurations")}), flush=True)
        rows.append(row)
    sweep_s = time.perf_counter() - t0
    runs, secs = counter.mark()
    configs = sum(sum(r["cubins"].values()) for r in rows) or 1
    per_config_s = sweep_s / configs  # this run's wall time per assembled configuration, runs included
    before = sum(r["per_shape_configurations"] for r in rows)
    strided = strided_checks() if not only else []
    out = {"date": datetime.date.today().isoformat(), "gpu": torch.cuda.get_device_name(0),
           "arch": gpu_name_of_device(), "tileiras": tileiras_version(), "torch": torch.__version__,
           "command": "PYTHONPATH=src python3 bench/any_size_device.py --out bench/results/any_size_h200.json",
           "sweep": {"cases": len(rows), "sizes": sum(r["sizes"] for r in rows),
                     "all_ok": all(r["ok"] for r in rows) and all(s["ok"] for s in strided),
                     "wall_s": round(sweep_s, 1), "tileiras_runs": runs, "tileiras_s": round(secs, 1),
                     "recordings": sum(sum(r["recordings"].values()) for r in rows), "cubins": configs,
                     "per_shape_configurations_estimate": before,
                     "per_shape_wall_s_estimate": round(before * per_config_s, 1),
                     "estimate_note": "the configurations the old size keywords would have made at these sizes, "
                                      "each priced at this run's wall time per assembled configuration"},
           "cases": rows, "strided": strided}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    print(json.dumps(out["sweep"]), flush=True)


if __name__ == "__main__":
    main()
