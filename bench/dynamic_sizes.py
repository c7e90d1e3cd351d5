"""What run-time sizes cost: the library's matmul (sizes read off the arrays, hidden parameters)
against the same program with every size and stride fixed when it records (the old way), and
against run-time sizes without the stride claim (``assume div_by<16>``), at the benchmark's
shapes; plus one recording serving many odd shapes, each checked against torch.

    PYTHONPATH=src python3 bench/dynamic_sizes.py --out bench/results/dynamic_sizes_h200.json
"""

from __future__ import annotations

import argparse
import datetime
import json
import time

import torch
from triton.testing import do_bench

import tileir as ti
from tileir import sizes
from tileir.dtypes import F32, dtype
from tileir.kernel import KernelFn, cdiv
from tileir.kernels import matmul_bf16, matmul_f16
from tileir.kernels.entry_hints import entry_hints

CONFIG = {"tm": 128, "tn": 256, "tk": 32, "group": 8, "warps": 8}  # the sm_90 table's matmul entry


def static_matmul(fmt):
    """The grouped matmul with M, N, K fixed at record time: static tensor views, static strides."""

    def body(a=ti.Whole(fmt), b=ti.Whole(fmt), c=ti.Shared(fmt), *, m: int, n: int, k: int, tm: int, tn: int,
             tk: int, group: int, warps: int = 0):
        nm, nn = cdiv(m, tm), cdiv(n, tn)
        pa = ti.partition_view(ti.tensor_view(a, 0, [m, k], [k, 1]), [tm, tk], padding=ti.PadZero)
        pb = ti.partition_view(ti.tensor_view(b, 0, [k, n], [n, 1]), [tk, tn], padding=ti.PadZero)
        pc = ti.partition_view(ti.tensor_view(c, 0, [m, n], [n, 1]), [tm, tn])
        pid = ti.block_id(0)
        span = ti.idx_const(group * nn)
        in_group = ti.idx_rem(pid, span)
        first = ti.idx_mul(ti.idx_div(pid, span), ti.idx_const(group))
        height = ti.idx_const(group) if nm % group == 0 else \
            ti.idx_of(ti.min_i(ti.idx_as_tile(ti.idx_sub(ti.idx_const(nm), first)), ti.i_const(group)))
        bm = ti.idx_add(first, ti.idx_rem(in_group, height))
        bn = ti.idx_div(in_group, height)
        acc = ti.carry(ti.full([tm, tn], 0.0, F32))
        for kk in ti.d_range(0, cdiv(k, tk)):
            ti.set(acc, ti.mma(ti.load_view(pa, [bm, kk]), ti.load_view(pb, [kk, bn]), ti.get(acc)))
        ti.store_view(pc, [bm, bn], ti.to(ti.get(acc), fmt))

    return KernelFn(body, name=f"static_matmul_{dtype(fmt).name}",
                    grid=lambda m, n, tm, tn: (cdiv(m, tm) * cdiv(n, tn),), hints=entry_hints)



def ms(fn):
    return do_bench(fn, warmup=25, rep=200, return_mode="median")


def compare(kern, fmt, tdt, s):
    """One shape: the static program, run-time sizes with and without the stride claim, torch."""
    a = torch.randn(s, s, device="cuda", dtype=tdt)
    b = torch.randn(s, s, device="cuda", dtype=tdt)
    want = a @ b
    st = static_matmul(fmt)
    c1, c2, c3 = (torch.empty_like(want) for _ in range(3))
    dyn = kern.fresh()
    sizes.SPECIALISE = False
    plain = kern.fresh()
    plain(a, b, c3, **CONFIG)  # its call site is made (and keeps) no claims
    sizes.SPECIALISE = True
    st(a, b, c1, m=s, n=s, k=s, **CONFIG)
    dyn(a, b, c2, **CONFIG)
    torch.cuda.synchronize()
    errs = [float((c.float() - want.float()).abs().max()) for c in (c1, c2, c3)]
    t_static = ms(lambda: st(a, b, c1, m=s, n=s, k=s, **CONFIG))
    t_dyn = ms(lambda: dyn(a, b, c2, **CONFIG))
    t_plain = ms(lambda: plain(a, b, c3, **CONFIG))
    t_torch = ms(lambda: a @ b)
    flop = 2 * s ** 3
    return {"kernel": kern.name, "size": s, "tflops_static": flop / t_static / 1e9,
            "tflops_runtime_sizes": flop / t_dyn / 1e9, "tflops_runtime_sizes_no_claim": flop / t_plain / 1e9,
            "tflops_torch": flop / t_torch / 1e9, "runtime_over_static": t_static / t_dyn,
            "no_claim_over_static": t_static / t_plain, "max_err": errs,
            "programs": {"static": st.compiled(), "runtime": dyn.compiled(), "no_claim": plain.compiled()}}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    args = p.parse_args()
    rows = []
    for kern, fmt, tdt in ((matmul_f16, ti.F16, torch.float16), (matmul_bf16, ti.BF16, torch.bfloat16)):
        for s in (4096, 8192):
            rows.append(compare(kern, fmt, tdt, s))
            print(json.dumps(rows[-1]))
    # one recording, many shapes: the plain library call (its table's configuration) at odd sizes
    kern = matmul_f16.fresh()
    shapes = [(1, 4096, 4096), (16, 4096, 4096), (257, 129, 65), (1000, 1000, 1000), (3000, 5000, 1000),
              (128, 11008, 4096), (4097, 33, 4096), (7, 7, 7), (2048, 2048, 2048), (8192, 8192, 8192)]
    odd = []
    t0 = time.perf_counter()
    for m, n, k in shapes:
        a = torch.randn(m, k, device="cuda", dtype=torch.float16) / k ** 0.5
        b = torch.randn(k, n, device="cuda", dtype=torch.float16)
        c = torch.empty(m, n, device="cuda", dtype=torch.float16)
        kern(a, b, c)
        want = (a.float() @ b.float())
        torch.cuda.synchronize()
        err = float((c.float() - want).abs().max())
        odd.append({"shape": [m, n, k], "max_err": err, "ok": err < 5e-2, **kern.compiled()})
        print(json.dumps(odd[-1]))
    wall = time.perf_counter() - t0
    # a slice of a wider matrix, read in place (a leading-dimension stride)
    w = torch.randn(1000, 3000, device="cuda", dtype=torch.float16) / 30
    a = w[:, 1000:2000]
    b = torch.randn(1000, 1000, device="cuda", dtype=torch.float16)
    c = torch.empty(1000, 1000, device="cuda", dtype=torch.float16)
    kern(a, b, c)
    torch.cuda.synchronize()
    strided_err = float((c.float() - a.float() @ b.float()).abs().max())
    out = {"date": datetime.date.today().isoformat(), "gpu": torch.cuda.get_device_name(0), "config": CONFIG,
           "speed": rows, "odd_shapes": odd, "odd_shapes_wall_s": wall, "strided_slice_max_err": strided_err,
           "compiled_after_all": kern.compiled()}
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    print(json.dumps({"strided": strided_err, "compiled": kern.compiled(), "wall": wall}))


if __name__ == "__main__":
    main()
