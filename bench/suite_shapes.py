"""The public shape suite's shapes (issue 12; bench/suite.py runs them): per family, the shapes users
run as ``Shape`` records -- how to make the inputs, tileir's call, torch's, the reference and the
tolerance -- and the tiny shapes ``--cpu-smoke`` runs on the host reference."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch

FAMILIES = ("matmul_f16", "matmul_bf16", "matmul_tf32", "matmul_3xtf32", "matmul_fp8", "linear_bf16", "bmm", "softmax",
            "layernorm", "rmsnorm", "attention", "vadd", "sum", "max", "scan", "histogram")

M_SIZES = (1, 16, 64, 128, 512, 1000, 2048, 4096, 8192)
NK_PAIRS = ((4096, 4096), (11008, 4096), (4096, 11008), (14336, 4096), (1024, 1024), (5000, 1000))
# x @ W^T (W [N, K], a Linear layer's weight as torch holds it): an LLM's projections and a small model's
LINEAR_NK = ((4096, 4096), (11008, 4096), (4096, 11008), (14336, 4096), (1536, 512), (3072, 1024))
ROW_WIDTHS = (128, 512, 1000, 1024, 2048, 4096, 8192, 16384, 32768, 65536)
ROW_COUNTS = (1, 64, 4096, 32768)
MAX_ELEMENTS = 1 << 31
SEQS = (512, 1024, 2048, 4096, 8192, 16384)
TOKENS = 1 << 18  # B * H * S of every attention shape (H 16): constant work per key row
VECTOR_SIZES = tuple(1 << p for p in range(10, 29))
HIST_BINS = 256

_DT = {"f32": torch.float32, "tf32": torch.float32, "3xtf32": torch.float32, "f16": torch.float16,
       "bf16": torch.bfloat16, "f8E4M3FN": torch.float8_e4m3fn, "f8E5M2": torch.float8_e5m2, "i32": torch.int32}


# ---- shapes --------------------------------------------------------------------------------------


@dataclass
class Shape:
    """One shape of one family. ``make(device)`` answers fresh inputs (device "meta": shapes only);
    ``tileir`` / ``torch`` run a side on them and answer its output; ``ref`` answers what the output
    must hold (``rows``: a sample of the rows, compared where a full reference is too big);
    ``launches(inputs, gpu)`` answers the launches the library makes for them -- (kernel,
    configuration, arrays) -- and a description of its choice; ``like`` names the sizes the
    configuration is chosen for where they are not the arrays' (the CPU smoke test runs the
    suite's configurations on small arrays)."""

    family: str
    name: str
    shape: dict
    formats: dict
    make: Callable
    tileir: Callable
    torch: Callable | None
    ref: Callable
    tol: float
    unit: str
    amount: float
    launches: Callable | None = None
    rows: Callable | None = None  # (out) -> the compared part of an output
    exact: bool = False
    extra: dict = field(default_factory=dict)  # more torch columns: label -> fn(inputs)
    like: dict | None = None


def _rand(shape, dt, dev, scale=1.0, shift=0.0):
    if dev == "meta":
        return torch.empty(shape, dtype=dt, device="meta")
    if dt in (torch.float8_e4m3fn, torch.float8_e5m2):
        return (torch.randn(shape, device=dev) * scale).to(dt)
    x = torch.randn(shape, device=dev, dtype=dt)
    if scale != 1.0:
        x.mul_(scale)
    if shift:
        x.add_(shift)
    return x


def _empty(shape, dt, dev):
    return torch.empty(shape, dtype=dt, device=dev)


def _tuned(kern, static, arrays, gpu, like=None):
    """The configuration a plain call of ``kern`` with ``static`` on ``arrays`` runs (its tuned keys
    from autotune.best for the arrays' named sizes, or ``like``'s), the defaults filled in."""
    cfg = kern.config(**static)
    named = dict(like) if like else kern.plan(cfg).named(kern.plan(cfg).values(arrays))
    return kern.config(**kern.tuned_config(dict(static), gpu, named))


def _tuned_keys(kern, cfg):
    return {k: v for k, v in cfg.items() if k in kern.tuned}


def _gemm_launches(fmt, precision, like):
    from tileir.heuristics import HALVES_CELL, HALVES_LEAST_ROWS, SMS, matmul_split, matmul_walk
    from tileir.kernels import matmul_3xtf32, matmul_bf16, matmul_f16, matmul_persistent, matmul_tf32, tf32_halves
    from tileir.kernels.gemm import even_splits, matmul_partial, splitk_reduce

    plain = {"f16": matmul_f16, "bf16": matmul_bf16, "f32": matmul_tf32}[fmt]

    def launches(ins, gpu):
        a, b, c = ins[:3]
        m, k = a.shape
        n = b.shape[1]
        lm, ln, lk = (like["M"], like["N"], like["K"]) if like else (m, n, k)
        p = matmul_split(gpu, fmt, lm, ln, lk, precision=precision or "tf32") if gpu else {"splits": 1}
        extra = {"precision": precision} if fmt == "f32" and precision else {}
        if p["splits"] > 1:
            s = even_splits(k, p["config"]["tk"], p["splits"])
            w = _empty((s, m, n), torch.float32, a.device)
            pc = matmul_partial.config(fmt=fmt, **extra, **p["config"])
            rc = splitk_reduce.config(fmt=fmt, **p["reduce"])
            return [(matmul_partial, pc, [a, b, w]), (splitk_reduce, rc, [w, c])], {
                "kernel": "matmul_partial + splitk_reduce", "splits": s, "partial": _tuned_keys(matmul_partial, pc),
                "reduce": _tuned_keys(splitk_reduce, rc)}
        if gpu in SMS and fmt == "f32" and precision == "3xtf32" and lm >= HALVES_LEAST_ROWS:
            # gemm's plan: B's tf32 halves, then matmul_3xtf32 (kernels.product_3xtf32)
            h = _empty((2, k, n), torch.float32, a.device)
            hc, pc = tf32_halves.config(), matmul_3xtf32.config(**HALVES_CELL)
            return [(tf32_halves, hc, [b.reshape(-1), h[0].reshape(-1), h[1].reshape(-1)]),
                    (matmul_3xtf32, pc, [a, h[0], h[1], c])], {
                "kernel": "tf32_halves + matmul_3xtf32", "splits": 1, **_tuned_keys(matmul_3xtf32, pc)}
        walk = matmul_walk(gpu, fmt, lm, ln, lk) if gpu else None
        if walk is not None:  # gemm's plan: the persistent walk (heuristics.matmul_walk)
            cfg = matmul_persistent.config(fmt=fmt, **walk)
            return [(matmul_persistent, cfg, [a, b, c])], {"kernel": matmul_persistent.name, "splits": 1,
                                                            **_tuned_keys(matmul_persistent, cfg)}
        cfg = _tuned(plain, extra, [a, b, c], gpu, like)
        return [(plain, cfg, [a, b, c])], {"kernel": plain.name, "splits": 1, **_tuned_keys(plain, cfg)}

    return launches


def matmul_shapes(family, like_map=None):
    """matmul_f16 / matmul_bf16 / matmul_tf32 (vs torch fp32, TF32 off) / matmul_3xtf32: M x (N, K)
    and 8192^3 (3xtf32: a few M at 4096 x 4096, and 4096^3 and 8192^3)."""
    from tileir.kernels.gemm import gemm

    fmt = {"matmul_f16": "f16", "matmul_bf16": "bf16", "matmul_tf32": "f32", "matmul_3xtf32": "f32"}[family]
    precision = {"matmul_tf32": "tf32", "matmul_3xtf32": "3xtf32"}.get(family)
    dt = _DT[fmt]
    if family == "matmul_3xtf32":
        sizes = [(m, 4096, 4096) for m in (16, 128, 1000, 4096)] + [(8192, 8192, 8192)]
    else:
        sizes = [(m, n, k) for m in M_SIZES for n, k in NK_PAIRS] + [(8192, 8192, 8192)]
    if like_map is not None:
        sizes = list(like_map)
    out = []
    for m, n, k in sizes:
        like = like_map[(m, n, k)] if like_map is not None else None

        def make(dev, m=m, n=n, k=k):
            s = k ** -0.25  # C's entries about N(0, 1)
            return [_rand((m, k), dt, dev, s), _rand((k, n), dt, dev, s), _empty((m, n), dt, dev),
                    _empty((m, n), dt, dev)]

        def ti(ins, p=precision):
            gemm(ins[0], ins[1], ins[2], precision=p if fmt == "f32" else None)
            return ins[2]

        def th(ins):
            return torch.matmul(ins[0], ins[1], out=ins[3])

        def ref(ins):
            if family == "matmul_3xtf32":
                return ins[0].double() @ ins[1].double()
            return torch.matmul(ins[0].float(), ins[1].float())  # TF32 off: an f32 reference

        extra = {}
        if fmt == "f32":
            def th_tf32(ins):
                torch.backends.cuda.matmul.allow_tf32 = True
                try:
                    return torch.matmul(ins[0], ins[1], out=ins[3])
                finally:
                    torch.backends.cuda.matmul.allow_tf32 = False
            extra["torch_tf32"] = th_tf32
        tol = {"f16": 3e-2, "bf16": 8e-2}.get(fmt, 2e-2 if family == "matmul_tf32" else 1e-4)
        out.append(Shape(family, f"{family} M={m} N={n} K={k}", {"M": m, "N": n, "K": k},
                         {"a": fmt if fmt != "f32" else "f32", "product": precision or fmt, "c": fmt}, make, ti, th,
                         ref, tol, "TFLOP/s", 2.0 * m * n * k, launches=_gemm_launches(fmt, precision, like),
                         extra=extra, like=like))
    return out


def linear_shapes(like_map=None):
    """linear_bf16: x @ W^T for W [N, K] row-major (``F.linear``'s layout, read in place through a
    transposing view) through ``kernels.matmul_nt_any`` (matmul_nt one cell a block, or the persistent
    walk where heuristics.matmul_walk says so) against torch.matmul(x, W.t())."""
    from tileir.heuristics import matmul_walk
    from tileir.kernels import matmul_nt, matmul_nt_any, matmul_nt_persistent

    sizes = [(m, n, k) for m in M_SIZES for n, k in LINEAR_NK]
    out = []
    for m, n, k in (list(like_map) if like_map is not None else sizes):
        like = like_map[(m, n, k)] if like_map is not None else None

        def make(dev, m=m, n=n, k=k):
            s = k ** -0.25
            return [_rand((m, k), torch.bfloat16, dev, s), _rand((n, k), torch.bfloat16, dev, s),
                    _empty((m, n), torch.bfloat16, dev), _empty((m, n), torch.bfloat16, dev)]

        def ti(ins):
            matmul_nt_any(ins[0], ins[1], ins[2])
            return ins[2]

        def launches(ins, gpu, like=like):
            a, w, c = ins[:3]
            lm, ln, lk = (like["M"], like["N"], like["K"]) if like else (a.shape[0], w.shape[0], a.shape[1])
            walk = matmul_walk(gpu, "bf16", lm, ln, lk, weight_t=True) if gpu else None
            kern = matmul_nt if walk is None else matmul_nt_persistent
            cfg = kern.config(fmt="bf16", **walk) if walk else _tuned(kern, {"fmt": "bf16"}, [a, w, c], gpu, like)
            return [(kern, cfg, [a, w, c])], {"kernel": kern.name, **_tuned_keys(kern, cfg)}

        out.append(Shape("linear_bf16", f"linear_bf16 M={m} N={n} K={k}", {"M": m, "N": n, "K": k},
                         {"x": "bf16", "w": "bf16 [N, K]", "c": "bf16"}, make, ti,
                         lambda i: torch.matmul(i[0], i[1].t(), out=i[3]),
                         lambda i: torch.matmul(i[0].float(), i[1].float().t()), 8e-2, "TFLOP/s", 2.0 * m * n * k,
                         launches=launches, like=like))
    return out


def fp8_shapes(like_map=None):
    """matmul_fp8: e4m3 and e5m2 operands, per-tensor scales, bf16 out, against torch._scaled_mm
    (M, N, K multiples of 16, as cuBLASLt's fp8 product wants)."""
    from tileir.kernels import matmul_f8

    sizes = [(m, n, k) for m in (16, 128, 1024, 4096, 8192) for n, k in ((4096, 4096), (14336, 4096))]
    sizes.append((8192, 8192, 8192))
    out = []
    for fmt in ("f8E4M3FN", "f8E5M2"):
        dt = _DT[fmt]
        for m, n, k in (list(like_map) if like_map is not None else sizes):
            like = like_map[(m, n, k)] if like_map is not None else None

            def make(dev, m=m, n=n, k=k, dt=dt):
                sa = torch.full((1,), 0.5, device=dev) if dev != "meta" else _empty((1,), torch.float32, dev)
                sb = torch.full((1,), 0.25, device=dev) if dev != "meta" else _empty((1,), torch.float32, dev)
                return [_rand((m, k), dt, dev), _rand((n, k), dt, dev), _empty((m, n), torch.bfloat16, dev), sa, sb]

            def ti(ins, fmt=fmt):
                matmul_f8(*ins[:5], fmt=fmt)
                return ins[2]

            def th(ins):
                return torch._scaled_mm(ins[0], ins[1].t(), scale_a=ins[3].reshape(()), scale_b=ins[4].reshape(()),
                                        out_dtype=torch.bfloat16)

            def ref(ins):
                return (ins[0].float() @ ins[1].float().t()) * 0.125

            def launches(ins, gpu, fmt=fmt, like=like):
                cfg = _tuned(matmul_f8, {"fmt": fmt}, ins[:5], gpu, like)
                return [(matmul_f8, cfg, ins[:5])], {"kernel": "matmul_f8", **_tuned_keys(matmul_f8, cfg)}

            out.append(Shape("matmul_fp8", f"matmul_fp8 {fmt} M={m} N={n} K={k}", {"M": m, "N": n, "K": k},
                             {"a": fmt, "b": fmt, "scales": "f32 per tensor", "c": "bf16"}, make, ti, th, ref,
                             2e-2, "TFLOP/s", 2.0 * m * n * k, launches=launches, like=like))
    return out


def bmm_shapes(like_map=None):
    """bmm f16 through the library's batched product (kernels.gemm.batched_product: one cell a block, or
    the persistent walk where heuristics.bmm_walk says so) against torch.bmm."""
    from tileir.kernels.gemm import batched_plan, batched_product

    sizes = [(b, s, s, s) for b in (8, 64) for s in (512, 1024, 2048)]
    out = []
    for bt, m, n, k in (list(like_map) if like_map is not None else sizes):
        like = like_map[(bt, m, n, k)] if like_map is not None else None

        def make(dev, bt=bt, m=m, n=n, k=k):
            s = k ** -0.25
            return [_rand((bt, m, k), torch.float16, dev, s), _rand((bt, k, n), torch.float16, dev, s),
                    _empty((bt, m, n), torch.float16, dev), _empty((bt, m, n), torch.float16, dev)]

        def ti(ins):
            batched_product(ins[0], ins[1], ins[2])
            return ins[2]

        def launches(ins, gpu, like=like):
            kern, walk = batched_plan(*ins[:2], gpu)
            cfg = kern.config(**walk) if walk else _tuned(kern, {}, ins[:3], gpu, like)
            return [(kern, cfg, ins[:3])], {"kernel": kern.name, **_tuned_keys(kern, cfg)}

        out.append(Shape("bmm", f"bmm B={bt} M={m} N={n} K={k}", {"B": bt, "M": m, "N": n, "K": k},
                         {"a": "f16", "c": "f16"}, make, ti, lambda i: torch.bmm(i[0], i[1], out=i[3]),
                         lambda i: torch.bmm(i[0].float(), i[1].float()), 3e-2, "TFLOP/s", 2.0 * bt * m * n * k,
                         launches=launches, like=like))
    return out


def _sample_rows(r):
    """The rows an answer is checked on: all of a small matrix, else the first and last 8 and 48
    spread between (a full f64 reference of 2^31 elements is 16 GB)."""
    if r <= 64:
        return list(range(r))
    step = max(1, r // 48)
    return sorted(set(list(range(8)) + list(range(r - 8, r)) + list(range(8, r - 8, step))))


def rows_shapes(family, like_map=None):
    """softmax (f32, f16), layernorm and rmsnorm (f16, bf16): widths x rows, at most 2^31 elements."""
    from tileir.kernels import layernorm, rmsnorm, softmax

    fmts = ("f32", "f16") if family == "softmax" else ("f16", "bf16")
    kern = {"softmax": softmax, "layernorm": layernorm, "rmsnorm": rmsnorm}[family]
    sizes = [(r, c) for c in ROW_WIDTHS for r in ROW_COUNTS if r * c <= MAX_ELEMENTS]
    out = []
    for fmt in fmts:
        dt = _DT[fmt]
        e = dt.itemsize
        for r, c in (list(like_map) if like_map is not None else sizes):
            like = like_map[(r, c)] if like_map is not None else None
            idx = _sample_rows(r)

            def make(dev, r=r, c=c, dt=dt):
                if family == "softmax":
                    return [_rand((r, c), dt, dev, 4.0), _empty((r, c), dt, dev)]
                x = _rand((r, c), dt, dev, 2.0, 0.5)
                w = _rand((c,), dt, dev, 0.5, 1.0)
                b = _rand((c,), dt, dev)
                return [x, w, b, _empty((r, c), dt, dev)] if family == "layernorm" else [x, w, _empty((r, c), dt, dev)]

            def ti(ins, fmt=fmt):
                kern(*ins, fmt=fmt)
                return ins[-1]

            def th(ins, c=c):
                if family == "softmax":
                    return torch.softmax(ins[0], -1)
                if family == "layernorm":
                    return torch.nn.functional.layer_norm(ins[0], (c,), ins[1], ins[2], 1e-5)
                return torch.nn.functional.rms_norm(ins[0], (c,), ins[1], 1e-6)

            def ref(ins, idx=idx, c=c):
                x = ins[0][idx].double()
                if family == "softmax":
                    return torch.softmax(x, -1)
                if family == "layernorm":
                    return torch.nn.functional.layer_norm(x, (c,), ins[1].double(), ins[2].double(), 1e-5)
                return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * ins[1].double()

            def launches(ins, gpu, fmt=fmt, like=like):
                cfg = _tuned(kern, {"fmt": fmt}, ins, gpu, like)
                return [(kern, cfg, ins)], {"kernel": kern.name, **_tuned_keys(kern, cfg)}

            tol = {"f32": 1e-5, "f16": 2e-2 if family != "softmax" else 2e-3, "bf16": 6e-2}[fmt]
            moved = 2 * r * c * e + (2 if family == "layernorm" else 1 if family == "rmsnorm" else 0) * c * e
            out.append(Shape(family, f"{family} {fmt} R={r} C={c}", {"R": r, "C": c}, {"x": fmt, "y": fmt}, make,
                             ti, th, ref, tol, "GB/s", moved, launches=launches, rows=lambda o, idx=idx: o[idx],
                             like=like))
    return out


def attention_shapes(like_map=None):
    """f16 and bf16, head dims 64 and 128, S 512 .. 16384 with B * H * S = 2^18 (H 16), causal and
    not; grouped-query: 32 query heads, 8 KV heads (f16)."""
    from tileir.kernels import attention

    sizes = []
    for fmt in ("f16", "bf16"):
        for d in (64, 128):
            for s in SEQS:
                for causal in (False, True):
                    sizes.append((fmt, max(1, TOKENS // (16 * s)), 16, 16, s, d, causal))
    for d in (64, 128):
        for s in (512, 2048, 8192):
            for causal in (False, True):
                sizes.append(("f16", max(1, TOKENS // (32 * s)), 32, 8, s, d, causal))
    if like_map is not None:
        sizes = list(like_map)
    out = []
    for fmt, b, h, hkv, s, d, causal in sizes:
        like = like_map[(fmt, b, h, hkv, s, d, causal)] if like_map is not None else None
        dt = _DT[fmt]

        def make(dev, b=b, h=h, hkv=hkv, s=s, d=d, dt=dt):
            return [_rand((b, h, s, d), dt, dev), _rand((b, hkv, s, d), dt, dev), _rand((b, hkv, s, d), dt, dev),
                    _empty((b, h, s, d), dt, dev)]

        def ti(ins, causal=causal, fmt=fmt):
            attention(*ins, causal=causal, fmt=fmt)
            return ins[3]

        def th(ins, causal=causal, g=h != hkv):
            return torch.nn.functional.scaled_dot_product_attention(*ins[:3], is_causal=causal, enable_gqa=g)

        nh = 4 if h != hkv else 2  # the heads checked: batch 0, these query heads (their K/V heads)

        def ref(ins, causal=causal, nh=nh, g=h // hkv):
            q = ins[0][:1, :nh].float()
            k, v = (t[:1, :max(1, nh // g)].float() for t in ins[1:3])
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=g > 1)

        def launches(ins, gpu, causal=causal, fmt=fmt, like=like):
            cfg = _tuned(attention, {"causal": causal, "fmt": fmt}, ins, gpu, like)
            return [(attention, cfg, ins)], {"kernel": "attention", **_tuned_keys(attention, cfg)}

        flop = 4.0 * b * h * s * s * d / (2 if causal else 1)
        name = f"attention {fmt} B={b} H={h} H_kv={hkv} S={s} D={d}{' causal' if causal else ''}"
        out.append(Shape("attention", name, {"B": b, "H": h, "H_kv": hkv, "S": s, "D": d, "causal": causal},
                         {"qkv": fmt, "o": fmt}, make, ti, th, ref, 1e-2 if fmt == "f16" else 2e-2, "TFLOP/s",
                         flop, launches=launches, rows=lambda o, nh=nh: o[:1, :nh], like=like))
    return out


def vector_shapes(family, sizes=VECTOR_SIZES):
    """vadd, sum, max, scan (f32) and histogram (i32, 256 bins) at 2^10 .. 2^28 elements."""
    from tileir.kernels import count_values, prefix_sum, vadd, vector_max, vector_sum

    out = []
    for n in sizes:
        if family == "vadd":
            def make(dev, n=n):
                return [_rand((n,), torch.float32, dev), _rand((n,), torch.float32, dev),
                        _empty((n,), torch.float32, dev), _empty((n,), torch.float32, dev)]

            def ti(ins):
                vadd(ins[0], ins[1], ins[2])
                return ins[2]

            sh = Shape("vadd", f"vadd f32 N={n}", {"N": n}, {"x": "f32"}, make, ti,
                       lambda i: torch.add(i[0], i[1], out=i[3]), lambda i: i[0] + i[1], 0.0, "GB/s", 12.0 * n,
                       exact=True, extra={})
        elif family in ("sum", "max"):
            def make(dev, n=n):
                return [_rand((n,), torch.float32, dev), _empty((1,), torch.float32, dev)]

            kern, op = (vector_sum, torch.sum) if family == "sum" else (vector_max, torch.max)

            def ti(ins, kern=kern):
                return kern(ins[0], ins[1], sync=False)

            def th(ins, op=op):
                return op(ins[0]).reshape(1)

            def ref(ins, op=op):  # the sum in f64; the max is exact in f32
                return (op(ins[0].double()) if op is torch.sum else op(ins[0]).double()).reshape(1)
            sh = Shape(family, f"{family} f32 N={n}", {"N": n}, {"x": "f32"}, make, ti, th, ref,
                       1e-5 if family == "sum" else 0.0, "GB/s", 4.0 * n, exact=family == "max")
            sh.extra = {}
        elif family == "scan":
            def make(dev, n=n):
                x = torch.rand(n, device=dev) if dev != "meta" else _empty((n,), torch.float32, dev)
                return [x, _empty((n,), torch.float32, dev)]

            def ti(ins):
                return prefix_sum(ins[0], ins[1], sync=False)

            sh = Shape("scan", f"scan f32 N={n}", {"N": n}, {"x": "f32"}, make, ti, lambda i: torch.cumsum(i[0], 0),
                       lambda i: torch.cumsum(i[0].double(), 0), 2e-4, "GB/s", 8.0 * n)
        else:
            def make(dev, n=n):
                if dev == "meta":
                    return [_empty((n,), torch.int32, dev), _empty((HIST_BINS,), torch.int32, dev)]
                return [torch.randint(0, HIST_BINS, (n,), device=dev, dtype=torch.int32),
                        torch.zeros(HIST_BINS, device=dev, dtype=torch.int32)]

            def ti(ins):
                ins[1].zero_()
                count_values(ins[0], ins[1])
                return ins[1]

            sh = Shape("histogram", f"histogram i32 N={n} bins={HIST_BINS}", {"N": n, "bins": HIST_BINS},
                       {"x": "i32", "counts": "i32"}, make, ti, lambda i: torch.bincount(i[0], minlength=HIST_BINS),
                       lambda i: torch.bincount(i[0].long(), minlength=HIST_BINS), 0.0, "GB/s", 4.0 * n, exact=True)
        out.append(sh)
    return out


def all_shapes(families=FAMILIES) -> list[Shape]:
    out = []
    for f in families:
        if f.startswith("matmul_") and f != "matmul_fp8":
            out += matmul_shapes(f)
        elif f == "matmul_fp8":
            out += fp8_shapes()
        elif f == "linear_bf16":
            out += linear_shapes()
        elif f == "bmm":
            out += bmm_shapes()
        elif f in ("softmax", "layernorm", "rmsnorm"):
            out += rows_shapes(f)
        elif f == "attention":
            out += attention_shapes()
        else:
            out += vector_shapes(f)
    return out


def smoke_shapes() -> list[Shape]:
    """A handful of tiny shapes for the CPU (the host reference): each runs the configuration the
    rule gives one of the suite's shapes (``like``), so the variants the device will run -- split-K,
    several rows a block, the head tile of 64, 3xtf32 -- are exercised on the CPU."""
    out = []
    out += matmul_shapes("matmul_f16", {(16, 96, 300): {"M": 16, "N": 1024, "K": 4096},
                                        (100, 130, 70): {"M": 8192, "N": 8192, "K": 8192}})
    out += matmul_shapes("matmul_bf16", {(33, 65, 129): {"M": 128, "N": 11008, "K": 4096}})
    out += matmul_shapes("matmul_tf32", {(20, 40, 70): {"M": 512, "N": 4096, "K": 4096}})
    out += matmul_shapes("matmul_3xtf32", {(40, 50, 100): {"M": 4096, "N": 4096, "K": 4096}})
    out += fp8_shapes({(32, 48, 64): {"M": 8192, "N": 8192, "K": 8192}})
    out += linear_shapes({(40, 300, 70): {"M": 8192, "N": 1536, "K": 512},  # the walk, and one cell a block
                          (16, 96, 64): {"M": 16, "N": 4096, "K": 4096}})
    out += bmm_shapes({(2, 40, 40, 40): {"B": 8, "M": 512, "N": 512, "K": 512}})
    out += rows_shapes("softmax", {(20, 100): {"R": 4096, "C": 128}, (3, 300): {"R": 64, "C": 65536}})
    out += rows_shapes("layernorm", {(13, 1000): {"R": 32768, "C": 1000}})
    out += rows_shapes("rmsnorm", {(5, 2048): {"R": 4096, "C": 2048}})
    big = {"B": 32, "H": 16, "S": 512, "D": 64, "H_kv": 16, "S_kv": 512}
    gqa = {"B": 1, "H": 32, "S": 8192, "D": 128, "H_kv": 8, "S_kv": 8192}
    out += attention_shapes({("f16", 1, 2, 2, 100, 64, True): big, ("bf16", 1, 4, 1, 64, 128, False): gqa})
    for f, n in (("vadd", 1000), ("sum", 5000), ("max", 3000), ("scan", 3000), ("histogram", 2000)):
        out += vector_shapes(f, (n,))
    return out
