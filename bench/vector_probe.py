"""The vector family's kernels against torch, one configuration at a time: the prefix sum's
reduce-then-scan at several tiles, chunk counts and with the next tile loaded ahead; the histogram
straight into the counts and through private rows (count_values), and the adds alone into 1 .. 528
copies of the bins; vector_sum / vector_max (one launch or two) against one block at small
lengths. Timed as the suite times (triton.testing.do_bench, the L2 flushed, median), answers
checked. Needs a GPU.

    PYTHONPATH=src python bench/vector_probe.py --out bench/results/vector_probe_h200.json

The committed file holds four rounds of it (``--only`` parts), each saying what the library was
then; the decisions in prefix_sum.py, histogram.py and reductions.py quote them.
"""

from __future__ import annotations

import argparse

import torch
from timing import checked_ms, flushed_ms, host_us, write_rows

from tileir import surface as ti
from tileir.dtypes import F32, I32
from tileir.kernel import cdiv, kernel
from tileir.kernels import block_max, block_sum, histogram, prefix_sum, vadd, vector_max, vector_sum
from tileir.markers import In, Out, Shared, Whole, cells

SCAN_CONFIGS = ((1024, 528, False), (1024, 528, True), (1024, 1056, True), (2048, 528, True), (512, 1056, True))


def scans(rows):
    for n in (1 << 10, 1 << 12, 1 << 14, 1 << 16, 1 << 17, 1 << 20, 1 << 22, 1 << 24, 1 << 26, 1 << 28):
        x = torch.rand(n, device="cuda")
        y = torch.empty_like(x)
        want = torch.cumsum(x.double(), 0)
        t_torch = flushed_ms(lambda x=x: torch.cumsum(x, 0))
        configs = SCAN_CONFIGS + (((1024, 1, False), (1024, 1, True)) if n <= 1 << 16 else ())
        for tile, chunks, ahead in configs if n > 1024 else SCAN_CONFIGS[:1]:
            cfg = {"tile": tile, "chunks": chunks, "ahead": ahead}
            try:
                prefix_sum(x, y, sync=False, **cfg)
                torch.cuda.synchronize()
                err = float(((y.double() - want).abs() / want.abs().clamp_min(1e-30)).max())
                t = flushed_ms(lambda x=x, y=y, cfg=cfg: prefix_sum(x, y, sync=False, **cfg))
                rows.append({"what": "scan", "n": n, **cfg, "tileir_ms": t, "torch_ms": t_torch, "ratio": t_torch / t,
                             "rel_err": err})
            except Exception as e:  # noqa: BLE001  (a probe: record and go on)
                rows.append({"what": "scan", "n": n, **cfg, "error": repr(e)[:300]})
            print(rows[-1], flush=True)
        if n == 1 << 12:
            import cProfile
            import io
            import pstats

            rows.append({"what": "scan host", "n": n,
                         "prefix_sum_host_us": host_us(lambda x=x, y=y: prefix_sum(x, y, sync=False)),
                         "cumsum_host_us": host_us(lambda x=x: torch.cumsum(x, 0))})
            prof = cProfile.Profile()
            prof.enable()
            for _ in range(2000):
                prefix_sum(x, y, sync=False)
            prof.disable()
            torch.cuda.synchronize()
            text = io.StringIO()
            pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(14)
            rows[-1]["profile"] = text.getvalue()[-3000:]
            print(rows[-1], flush=True)


@kernel(grid=lambda N, tile=1024: (max(1, min(cdiv(N, tile), 4 * 132)),))  # noqa: N803
def histogram_copies(x=Whole(I32, ["N"]), counts=Shared(I32, ["S"]), *, tile: int = 1024, copies: int = 32,
                     bins: int = 256):
    """The experiment behind histogram_rows: block b adds into copy b % copies of the bins (counts
    holds copies * bins)."""
    n = ti.extent_of(x, 0)
    off = ti.idx_as_tile(ti.idx_mul(ti.idx_rem(ti.block_id(0), ti.idx_const(copies)), ti.idx_const(bins)))
    for j in ti.d_range(ti.block_id(0), ti.idx_div(ti.idx_add(n, ti.idx_const(tile - 1)), ti.idx_const(tile)),
                        ti.num_blocks(0)):
        base = ti.tile_at(j, tile)
        v = ti.load(x, base, [tile], mask=ti.tail_mask(base, [tile], n), pad=-1)
        keep = ti.and_mask(ti.ge_i(v, ti.i_const(0)), ti.lt_i(v, ti.i_const(bins)))
        ti.atomic_add(counts, ti.add_i(v, off), 1, mask=keep)


def copies(rows):
    """The adds alone, into 1 .. 528 copies of 256 bins (the merge not timed)."""
    for n in (1 << 16, 1 << 20, 1 << 24, 1 << 28):
        x = torch.randint(0, 256, (n,), device="cuda", dtype=torch.int32)
        want = torch.bincount(x, minlength=256)
        row = {"what": "histogram copies", "n": n, "torch_ms": flushed_ms(lambda x=x: torch.bincount(x, minlength=256))}
        for k in (1, 8, 32, 128, 528):
            w = torch.zeros(k * 256, device="cuda", dtype=torch.int32)

            def call(w=w, k=k, x=x):
                w.zero_()
                histogram_copies(x, w, copies=k, sync=False)
            call()
            torch.cuda.synchronize()
            row[f"copies_{k}_ok"] = bool((w.view(k, 256).sum(0) == want).all())
            row[f"copies_{k}_atomics_ms"] = flushed_ms(call)
        rows.append(row)
        print(rows[-1], flush=True)


def histograms(rows):
    from tileir.kernels import count_values

    for n in (1 << 12, 1 << 15, 1 << 16, 1 << 18, 1 << 20, 1 << 24, 1 << 28):
        x = torch.randint(0, 256, (n,), device="cuda", dtype=torch.int32)
        c = torch.zeros(256, device="cuda", dtype=torch.int32)
        want = torch.bincount(x, minlength=256)
        t_torch = flushed_ms(lambda x=x: torch.bincount(x, minlength=256))

        def direct(x=x, c=c):
            c.zero_()
            histogram(x, c, sync=False)

        def library(x=x, c=c):
            c.zero_()
            count_values(x, c)
        library()
        torch.cuda.synchronize()
        rows.append({"what": "histogram", "n": n, "torch_ms": t_torch, "direct_ms": flushed_ms(direct),
                     "count_values_ms": flushed_ms(library), "ok": bool((c == want).all())})
        print(rows[-1], flush=True)


# (tiles of 4096 are refused: an extract of one lane from a [4096] tile has 4096 slices, past tileiras 13.4.92's
# limit; windows of 16 were the slowest at -O0, bench/results/scan_lookback_h100.json)
# (and the default tile and window at -O0, the while-loop workaround's level: how much of the first form's
# time was the level; prefix_sum's own is prefix_sum.LEVEL)
LOOKBACK_CONFIGS = ({"tile": 1024, "window": 32}, {"tile": 2048, "window": 32}, {"tile": 2048, "window": 64},
                    {"tile": 512, "window": 32}, {"tile": 1024, "window": 32, "opt_level": 0})


def lookbacks(rows, out=None):
    """The one-pass scan (prefix_sum(one_pass=True)) at several tiles and windows beside the library's
    prefix_sum and torch.cumsum, f32, every answer checked against a float64 cumsum; the file rewritten
    after each size (a call cut short, or a look-back that hangs, keeps what it measured)."""
    for n in (1 << 16, 1 << 20, 1 << 21, 1 << 23, 1 << 24, 1 << 25, 1 << 26, 1 << 28):
        x = torch.rand(n, device="cuda")
        y = torch.empty_like(x)
        want = torch.cumsum(x.double(), 0)
        row = {"what": "scan lookback", "n": n, "torch_ms": flushed_ms(lambda x=x: torch.cumsum(x, 0)),
               "prefix_sum_ms": flushed_ms(lambda x=x, y=y: prefix_sum(x, y, sync=False))}
        for cfg in LOOKBACK_CONFIGS:
            key = "lookback " + " ".join(f"{k}{v}" for k, v in cfg.items())
            try:
                y.zero_()
                prefix_sum(x, y, sync=True, one_pass=True, **cfg)
                err = float(((y.double() - want).abs() / want.abs().clamp_min(1e-30)).max())
                one = dict(cfg, one_pass=True)
                row[key] = {"ms": flushed_ms(lambda x=x, y=y, one=one: prefix_sum(x, y, sync=False, **one)),
                            "rel_err": float(f"{err:.3g}")}
            except Exception as e:  # noqa: BLE001  (a probe: a failing variant is a finding)
                row[key] = {"error": repr(e)[:300]}
        rows.append(row)
        print(rows[-1], flush=True)
        if out:
            write_rows(out, rows)


def merges(rows):
    """merge_rows alone over 528 rows of 256 bins, at several cells."""
    from tileir.kernels import merge_rows

    parts = torch.randint(0, 1000, (528, 256), device="cuda", dtype=torch.int32)
    want = parts.sum(0, dtype=torch.int32)
    for tg, tc in ((32, 256), (128, 64), (128, 32), (64, 32), (256, 16)):
        c = torch.zeros(256, device="cuda", dtype=torch.int32)
        merge_rows(parts, c, tg=tg, tc=tc, sync=True)
        ok = bool((c == want).all())
        rows.append({"what": "merge_rows", "rows": 528, "bins": 256, "tg": tg, "tc": tc, "ok": ok,
                     "ms": flushed_ms(lambda c=c, tg=tg, tc=tc: merge_rows(parts, c, tg=tg, tc=tc, sync=False))})
        print(rows[-1], flush=True)


def reductions(rows):
    for n in (1 << 10, 1 << 13, 1 << 14, 1 << 15, 1 << 16, 1 << 18):
        x = torch.randn(n, device="cuda")
        out = torch.empty(1, device="cuda")
        for name, two, one, th in (("sum", vector_sum, block_sum, torch.sum),
                                   ("max", vector_max, block_max, torch.max)):
            t_two = flushed_ms(lambda two=two, x=x, out=out: two(x, out, sync=False))
            t_one = {tile: flushed_ms(lambda tile=tile, one=one, x=x, out=out: one(x, out, tile=tile, sync=False))
                     for tile in (1024, 4096)}
            t_torch = flushed_ms(lambda th=th, x=x: th(x))
            rows.append({"what": name, "n": n, "library_ms": t_two, "one_launch_ms": t_one, "torch_ms": t_torch})
            print(rows[-1], flush=True)


def sums(rows):
    """vector_sum / vector_max's first pass at (tile, parts) where the suite had them at 0.69-0.80x."""
    for n in (1 << 21, 1 << 22, 1 << 23, 1 << 24):
        x = torch.randn(n, device="cuda")
        out = torch.empty(1, device="cuda")
        for name, fn, th in (("sum", vector_sum, torch.sum), ("max", vector_max, torch.max)):
            row = {"what": f"{name} parts", "n": n, "torch_ms": flushed_ms(lambda x=x, th=th: th(x))}
            for tile, parts in ((4096, 1024), (4096, 528), (8192, 528), (8192, 264), (16384, 264), (2048, 1024)):
                row[f"{tile}x{parts}"] = flushed_ms(lambda x=x, o=out, fn=fn, t=tile, p=parts: fn(x, o, tile=t, parts=p,
                                                                                           sync=False))
            rows.append(row)
            print(rows[-1], flush=True)


def scan_sizes(rows):
    """The two sizes the suite had at half speed (65536, 2^21) beside their neighbours: do_bench,
    CUDA events without the flush, and the host's own time a call, at 1024- and 2048-lane tiles."""
    from timing import median_ms

    for n in (32768, 65536, 131072, 1 << 20, 1 << 21, 1 << 22):
        x = torch.rand(n, device="cuda")
        y = torch.empty_like(x)
        row = {"what": "scan sizes", "n": n, "torch_ms": flushed_ms(lambda x=x: torch.cumsum(x, 0))}
        for tile in (1024, 2048):
            def call(x=x, y=y, t=tile):
                prefix_sum(x, y, tile=t, sync=False)
            row[f"tile{tile}"] = {"do_bench_ms": flushed_ms(call), "events_ms": median_ms(call, reps=200, warm=20),
                                  "host_us": host_us(call)}
        rows.append(row)
        print(rows[-1], flush=True)


@kernel
def vadd_cells(a=lambda tile: In(F32, cells(["N"], [tile])), b=lambda tile: In(F32, cells(["N"], [tile])),
               c=lambda tile: Out(F32, cells(["N"], [tile])), *, tile: int = 1024):
    """c = a + b on cells (TMA views: the library's vadd until 2026-12-04), against the library's vadd on
    masked pointer loads."""
    ti.store_cell(c, ti.load_cell(a) + ti.load_cell(b))


def vadds(rows):
    """vadd on cells (tiles 1024 .. 8192) against the same add on masked pointers (tiles 1024 .. 8192),
    2^10 .. 2^28 elements, torch's add beside: the suite had vadd on cells at 0.77-0.9x from 4096 to
    524288 elements."""
    for n in (1 << 10, 1 << 12, 1 << 14, 1 << 16, 1 << 17, 1 << 19, 1 << 20, 1 << 22, 1 << 24, 1 << 26, 1 << 28):
        a, b = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
        c = torch.empty_like(a)
        want = a + b
        row = {"what": "vadd", "n": n, "torch_ms": flushed_ms(lambda a=a, b=b, c=c: torch.add(a, b, out=c))}
        for name, fn, tile in [*[("cells", vadd_cells, t) for t in (1024, 2048, 4096, 8192)],
                               *[("pointers", vadd, t) for t in (1024, 2048, 4096, 8192)]]:
            # max_err 0: the exact sum
            row[f"{name}{tile}"] = checked_ms(lambda fn=fn, a=a, b=b, c=c, t=tile: fn(a, b, c, tile=t, sync=False),
                                              c, want, row["torch_ms"])
        rows.append(row)
        print(rows[-1], flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--only", default="histogram,copies,merge,scan,reduce", help="also: lookback, sums, ...")
    a = p.parse_args()
    rows = []
    only = a.only.split(",")
    for key, fn in (("histogram", histograms), ("copies", copies), ("merge", merges), ("scan", scans),
                    ("reduce", reductions), ("sums", sums), ("scansizes", scan_sizes), ("vadd", vadds),
                    ("lookback", lookbacks)):
        if key in only:
            try:
                fn(rows, a.out) if key == "lookback" else fn(rows)
            except Exception as e:  # noqa: BLE001
                rows.append({"what": key, "error": repr(e)[:500]})
            write_rows(a.out, rows)


if __name__ == "__main__":
    main()
