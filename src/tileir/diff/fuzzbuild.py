"""A fuzz description (fuzzgen.py) recorded as a tile program, with the memory it runs on.

``build(desc)`` records the description and answers a ``Built``: the TileProg, the parameters
(an input and an output buffer per format in ``desc["fmts"]``), the grid, and the REGIONS: each
load, store, view and atomic step owns a stretch of one buffer (one copy per block unless the
blocks share it on purpose, one slot per loop iteration where it moves with the loop). The
regions say how the inputs are drawn (``make_args``) and how each output lane is judged: exact
(bit for bit) or approx (the tolerance the host reference's perturbed runs give, fuzzjudge.py).

Operand ids resolve leniently (fuzzgen's docstring): a step whose operands are gone or no longer
fit falls back to the newest value in scope that fits, or records nothing. The builder, not the
generator, decides each value's ``exact`` / ``raw`` flags, so a shrunk program never feeds an
approximate value to an operation whose answer jumps. The value steps are here; the memory and
control steps in fuzzmem.py.
"""

from __future__ import annotations

import numpy as np

import tileir as ti
from tileir.dev import dev

from .fuzzgen import BIN_APPROX, FLOATS, INTS, STORABLE, UN_APPROX, UN_JUMPS
from .fuzzmem import MemorySteps
from .fuzzspec import ASSERT_MARK
from .fuzzval import ALIGN, UN_FN, BuilderCore, Built, Val, bini, fits_shape, ftof_ok, h, operand, split_tf32, take

Tile = ti.Tile


class ValueSteps(BuilderCore):
    """The steps that make values from values (no memory, no regions)."""

    # -- values --------------------------------------------------------------------------------------
    def b_load(self, s, scope):
        fmt, shape = s["fmt"], tuple(s["shape"]) or (1,)
        p = self.param("in", fmt)
        if p is None:
            return None
        n = int(np.prod(shape))
        moving = bool(s.get("moving")) and self.iteration() is not None
        reg = self.region(s, "in", "in", fmt, n * (self.mult() if moving else 1), dist=s.get("dist", "small"))
        base = self.base(reg, moving, n)
        if s.get("mask"):
            m = ti.lt_i(ti.reshape(ti.arange(n), list(shape)), ti.i_const(max(1, (3 * n) // 4)))
            pad = ti.f_const(fmt, -3.5) if fmt in FLOATS else ti.consti(fmt, -7)
            t = ti.load(p, base, list(shape), mask=m, pad=pad)
        else:
            t = ti.load(p, base, list(shape))
        return [Val(t, fmt, shape)]

    def b_const(self, s, scope):
        shape = tuple(s["shape"])
        return [Val(ti.full(list(shape), s["value"], s["fmt"]), s["fmt"], shape)]

    def b_iota(self, s, scope):
        shape = tuple(s["shape"]) or (1,)
        return [Val(ti.reshape(ti.arange(int(np.prod(shape))), list(shape)), "i32", shape)]

    def b_un(self, s, scope):
        f = s["f"]
        a = self.get(scope, s["a"], lambda v: v.fmt in FLOATS and (v.exact or f not in UN_JUMPS))
        if a is None:
            return None
        if f == "sqrt_approx" and a.fmt != "f32":
            f = "sqrt"
        exact = a.exact and f not in UN_APPROX
        return [Val(UN_FN[f](a.tile), a.fmt, a.shape, exact, False)]

    def b_bin(self, s, scope):
        f = s["f"]
        a = self.get(scope, s["a"], lambda v: v.fmt in FLOATS and (v.exact or f != "remf"))
        if a is None:
            return None
        b = self.get(scope, s["b"], lambda v: v.fmt == a.fmt and v.shape == a.shape and (v.exact or f != "remf"))
        b = b or a
        if f in BIN_APPROX and a.fmt not in ("f32", "f64"):
            f = "addf"
        x, y = a.tile, b.tile
        rnd = s.get("rnd", "nearest_even")
        if f in ("addf", "subf", "mulf", "divf"):
            t = {"addf": ti.add, "subf": ti.sub, "mulf": ti.mul, "divf": ti.div}[f](x, y, rounding=rnd)
        elif f in ("maxf", "minf", "maxf_nan", "minf_nan"):
            t = (ti.max if f.startswith("max") else ti.min)(x, y, propagate_nan=f.endswith("_nan"))
        else:
            t = {"remf": ti.remf, "pow": ti.pow, "atan2": ti.atan2}[f](x, y)
        return [Val(t, a.fmt, a.shape, a.exact and b.exact and f not in BIN_APPROX, False)]

    def b_fma(self, s, scope):
        a = self.get(scope, s["a"], lambda v: v.fmt in FLOATS)
        if a is None:
            return None
        same = lambda v: v.fmt == a.fmt and v.shape == a.shape  # noqa: E731
        b = self.get(scope, s["b"], same) or a
        c = self.get(scope, s["c"], same) or a
        return [Val(ti.fma(a.tile, b.tile, c.tile), a.fmt, a.shape, a.exact and b.exact and c.exact, False)]

    def b_ibin(self, s, scope):
        a = self.get(scope, s["a"], lambda v: v.fmt in INTS)
        if a is None:
            return None
        b = self.get(scope, s["b"], lambda v: v.fmt == a.fmt and v.shape == a.shape) or a
        f, y = s["f"], b.tile
        bits = ti.dtypes.BY_NAME[a.fmt].bits
        if f in ("divi", "remi"):  # a divisor in [1, 2^(bits-2)]: no division by zero, no MIN / -1
            y = ti.addi(ti.and_i(y, ti.consti(a.fmt, (1 << (bits - 2)) - 1)) if a.fmt == "i32" else
                        bini("andi", y, ti.consti(a.fmt, (1 << (bits - 2)) - 1)), ti.consti(a.fmt, 1))
        elif f in ("shli", "shri", "shru"):  # a count below the width: larger ones are undefined
            y = bini("andi", y, ti.consti(a.fmt, bits - 1))
        return [Val(bini(f, a.tile, y), a.fmt, a.shape)]

    def b_iun(self, s, scope):
        a = self.get(scope, s["a"], lambda v: v.fmt in INTS)
        if a is None:
            return None
        t: Tile = Tile(dev().t_unaryi(s["f"], a.fmt, list(a.shape), h(a.tile), "none"))
        return [Val(t, a.fmt, a.shape)]

    def b_cmp(self, s, scope):
        a = self.get(scope, s["a"], lambda v: v.exact and (v.fmt in FLOATS or v.fmt in INTS))
        if a is None:
            return None
        b = self.get(scope, s["b"], lambda v: v.exact and v.fmt == a.fmt and v.shape == a.shape) or a
        pred, alt = s["pred"], bool(s.get("alt"))
        hs = (h(a.tile), h(b.tile))
        if a.fmt in FLOATS:
            t: Tile = Tile(dev().t_cmpf(pred, a.fmt, list(a.shape), *hs, not alt))
        else:
            t = Tile(dev().t_cmpi(pred, list(a.shape), *hs, not alt, a.fmt))
        return [Val(t, "i1", a.shape)]

    def b_select(self, s, scope):
        c = self.get(scope, s["c"], lambda v: v.fmt == "i1")
        if c is None:
            return None
        a = self.get(scope, s["a"], lambda v: v.shape == c.shape and v.fmt != "i1")
        if a is None:
            return None
        b = self.get(scope, s["b"], lambda v: v.fmt == a.fmt and v.shape == a.shape) or a
        return [Val(ti.select(c.tile, a.tile, b.tile), a.fmt, a.shape, a.exact and b.exact and c.exact,
                    a.raw and b.raw)]

    def b_conv(self, s, scope):
        kind = s["kind"]
        if kind == "mask_int":
            a = self.get(scope, s["a"], lambda v: v.fmt == "i1")
            return None if a is None else [Val(ti.mask_to_int(a.tile), "i32", a.shape, a.exact)]
        if kind == "ftof":
            a = self.get(scope, s["a"], lambda v: v.is_float and ftof_ok(v.fmt, s["to"], s["mode"]))
            if a is None:
                return None
            return [Val(ti.float_to_float(a.tile, s["to"], s["mode"]), s["to"], a.shape, a.exact, False)]
        if kind in ("ftoi", "ftoi_sat"):
            a = self.get(scope, s["a"], lambda v: v.is_float and v.exact and v.fmt in FLOATS)
            if a is None:
                return None
            x = a.tile
            if kind == "ftoi":  # the plain conversion of NaN or a value past the range is undefined: clamp first
                lim = {"i8": 100.0, "i16": 30000.0, "i32": 1e9, "i64": 1e18}[s["to"]]
                lim = min(lim, 60000.0) if a.fmt == "f16" else lim
                x = ti.min(ti.max(x, ti.f_const(a.fmt, -lim)), ti.f_const(a.fmt, lim))
            return [Val(ti.float_to_int(x, s["to"], saturating=kind == "ftoi_sat"), s["to"], a.shape)]
        if kind == "bitcast":
            a = self.get(scope, s["a"], lambda v: v.raw and v.exact and ti.dtypes.BY_NAME[v.fmt].bits ==
                         ti.dtypes.BY_NAME[s["to"]].bits and v.fmt in STORABLE and v.fmt != s["to"]
                         and v.is_float != ti.dtypes.BY_NAME[s["to"]].is_float)
            if a is None:
                return None
            t: Tile = Tile(dev().t_convert("bitcast", a.fmt, s["to"], list(a.shape), h(a.tile)))
            return [Val(t, s["to"], a.shape, True, True)]
        a = self.get(scope, s["a"], lambda v: v.fmt in INTS)
        if a is None:
            return None
        ha = h(a.tile)
        if kind == "itof":
            return [Val(ti.int_to_float(a.tile, s["to"]), s["to"], a.shape, True, False)]
        if kind == "i4":
            t = a.tile if a.fmt == "i32" else Tile(dev().t_convert("extis", a.fmt, "i32", list(a.shape), ha)) \
                if ti.dtypes.BY_NAME[a.fmt].bits < 32 else Tile(dev().t_convert("trunci", a.fmt, "i32",
                                                                                list(a.shape), ha))
            n = ti.trunc_i4(t)
            return [Val(ti.ext_i4(n) if s.get("signed") else ti.ext_u4(n), "i32", a.shape)]
        to = s["to"]
        fb, tb = ti.dtypes.BY_NAME[a.fmt].bits, ti.dtypes.BY_NAME[to].bits
        if kind == "ext" and tb > fb:
            op = "extis" if s.get("signed") else "exti"
        elif kind == "trunc" and tb < fb:
            op = "trunci"
        else:
            return None
        return [Val(Tile(dev().t_convert(op, a.fmt, to, list(a.shape), ha)), to, a.shape)]

    # -- folds and shapes ------------------------------------------------------------------------------
    def b_reduce(self, s, scope):
        a = self.get(scope, s["a"], lambda v: v.shape and (v.fmt in FLOATS or v.fmt in INTS))
        if a is None:
            return None
        dim = s["dim"] % len(a.shape)
        f = s["f"]
        if f in ("sum", "max", "min"):
            t = {"sum": ti.reduce_sum, "max": ti.reduce_max, "min": ti.reduce_min}[f](a.tile, dim, bool(s["keep"]))
        else:
            t = ti.d_reduce(a.tile, 0, take(f), dim)
            if s["keep"]:
                t = ti.reshape(t, list(a.shape[:dim] + (1,) + a.shape[dim + 1:]))
        shape = a.shape[:dim] + ((1,) if s["keep"] else ()) + a.shape[dim + 1:]
        exact = a.exact and (f != "sum" or a.fmt in INTS)
        return [Val(t, a.fmt, shape, exact, a.raw and f.startswith("take"))]

    def b_scan(self, s, scope):
        a = self.get(scope, s["a"], lambda v: v.shape and (v.fmt in FLOATS or v.fmt in INTS))
        if a is None:
            return None
        dim = s["dim"] % len(a.shape)
        f, rev = s["f"], bool(s["rev"])
        if f == "sum":
            t = ti.scan_sum(a.tile, dim, rev)
        elif f == "max":
            lo = -np.inf if a.fmt in FLOATS else -(1 << (ti.dtypes.BY_NAME[a.fmt].bits - 1))
            mx = (lambda x, y: ti.max(x, y)) if a.fmt in FLOATS else (lambda x, y: bini("maxi", x, y))
            t = ti.d_scan(a.tile, lo, mx, dim, rev)
        else:
            t = ti.d_scan(a.tile, 0, take(f), dim, rev)
        return [Val(t, a.fmt, a.shape, a.exact and (f != "sum" or a.fmt in INTS), False)]

    def b_scan2(self, s, scope):
        a = self.get(scope, s["a"], lambda v: v.shape and v.fmt == "i32")
        if a is None:
            return None
        b = self.get(scope, s["b"], lambda v: v.fmt == "i32" and v.shape == a.shape) or a

        def lin(ca, va, cb, vb):  # (c, v) then (c', v'): h = c' h + v'
            return ti.mul_i(ca, cb), ti.add_i(ti.mul_i(cb, va), vb)

        x, y = ti.d_scan2(a.tile, b.tile, 1, 0, lin, s["dim"] % len(a.shape), bool(s["rev"]))
        return [Val(x, "i32", a.shape), Val(y, "i32", a.shape)]

    def b_argmax(self, s, scope):
        a = self.get(scope, s["a"], lambda v: v.shape and v.exact and v.fmt in ("f32", "i32"))
        if a is None:
            return None
        dim = s["dim"] % len(a.shape)
        shape = a.shape
        idx = ti.broadcast(ti.reshape(ti.arange(shape[dim]), [shape[dim] if k == dim else 1 for k in
                                                             range(len(shape))]), list(shape))
        low = -np.inf if a.fmt == "f32" else -(2**31)

        def pick(av, ai, ev, ei):  # the larger value; the smaller index on a tie (commutes)
            if a.fmt == "f32":
                gt, eq = ti.gt(ev, av), ti.eq(ev, av)
            else:
                gt, eq = ti.gt_i(ev, av), ti.eq_i(ev, av)
            take = ti.or_mask(gt, ti.and_mask(eq, ti.lt_i(ei, ai)))
            return ti.select(take, ev, av), ti.select(take, ei, ai)

        vals = a.tile
        if a.fmt == "f32":  # a NaN would make the body neither associative nor commutative: the order would show
            vals = ti.select(ti.eq(vals, vals), vals, ti.full(list(shape), -np.inf, "f32"))
        v, i = ti.d_reduce2(vals, idx, low, 2**31 - 1, pick, dim)
        out = shape[:dim] + shape[dim + 1:]
        return [Val(v, a.fmt, out, True, False), Val(i, "i32", out)]

    def b_shape(self, s, scope):
        f = s["f"]
        a = self.get(scope, s["a"], lambda v: v.fmt != "i1" and fits_shape(s, v))
        if a is None:
            return None
        t = a.tile
        if f == "reshape":
            return [Val(ti.reshape(t, s["to"]), a.fmt, tuple(s["to"]), a.exact, a.raw)]
        if f == "permute":
            perm = s["perm"]
            return [Val(ti.permute_tile(t, perm), a.fmt, tuple(a.shape[p] for p in perm), a.exact, a.raw)]
        if f == "broadcast":
            return [Val(ti.broadcast(t, s["to"]), a.fmt, tuple(s["to"]), a.exact, a.raw)]
        if f == "extract":
            return [Val(ti.extract(t, s["to"], [ti.idx_const(i) for i in s["idx"]]), a.fmt, tuple(s["to"]), a.exact,
                        a.raw)]
        if f == "insert":
            b = self.get(scope, s["b"], lambda v: v.fmt == a.fmt and v.shape == tuple(s["to"]))
            if b is None:
                return None
            return [Val(ti.insert(b.tile, t, [ti.idx_const(i) for i in s["idx"]]), a.fmt, a.shape, a.exact and b.exact,
                        a.raw and b.raw)]
        dim = s["dim"] % len(a.shape)
        b = self.get(scope, s["b"], lambda v: v.fmt == a.fmt and v.shape == a.shape) or a
        shape = a.shape[:dim] + (2 * a.shape[dim],) + a.shape[dim + 1:]
        return [Val(ti.cat(t, b.tile, dim), a.fmt, shape, a.exact and b.exact, a.raw and b.raw)]

    # -- matrix products -------------------------------------------------------------------------------
    def b_mma(self, s, scope):
        a = self.get(scope, s["a"], lambda v: v.is_float and len(v.shape) == 2)
        if a is None:
            return None
        m, k = a.shape
        b = self.get(scope, s["b"], lambda v: v.is_float and len(v.shape) == 2 and v.shape[0] == k)
        if b is None:
            return None
        n = b.shape[1]
        fmt, acc = s["fmt"], s["acc"]
        c = self.get(scope, s.get("c"), lambda v: v.is_float and v.shape == (m, n)) if s.get("c") else None
        ct = operand(c, acc) if c is not None else ti.full([m, n], 0.0, acc)
        if s.get("split") and fmt == "tf32":  # 3xTF32: a = hi + lo, a b ~ hi hi + hi lo + lo hi
            ah, al = split_tf32(a)
            bh, bl = split_tf32(b)
            t = ti.mma(al, bh, ct)
            t = ti.mma(ah, bl, t)
            t = ti.mma(ah, bh, t)
        else:
            t = ti.mma(operand(a, fmt), operand(b, fmt), ct)
        return [Val(t, acc, (m, n), False, False)]

    def b_mmai(self, s, scope):
        a = self.get(scope, s["a"], lambda v: v.fmt == "i8" and len(v.shape) == 2)
        if a is None:
            return None
        m, k = a.shape
        b = self.get(scope, s["b"], lambda v: v.fmt == "i8" and len(v.shape) == 2 and v.shape[0] == k)
        if b is None:
            return None
        n = b.shape[1]
        c = self.get(scope, s.get("c"), lambda v: v.fmt == "i32" and v.shape == (m, n)) if s.get("c") else None
        ct = c.tile if c is not None else ti.full([m, n], 0, "i32")
        return [Val(ti.mmai(a.tile, b.tile, ct), "i32", (m, n))]

    def b_powi(self, s, scope):
        a = self.get(scope, s["a"], lambda v: v.fmt in FLOATS)
        if a is None:
            return None
        n = self.get(scope, s.get("n"), lambda v: v.fmt in ("i32", "i16", "i8") and v.shape == a.shape)
        if n is None or s.get("n") is None:
            nt = ti.full(list(a.shape), s.get("k", 3), "i32")
        else:  # a small exponent keeps the sequence inside the range most of the time
            nt = bini("andi", n.tile, ti.consti(n.fmt, 15)) if n.fmt != "i32" else ti.sub_i(
                ti.and_i(n.tile, ti.i_const(15)), ti.i_const(5))
        return [Val(ti.powi(a.tile, nt), a.fmt, a.shape, a.exact, False)]

    def b_erf(self, s, scope):
        a = self.get(scope, s["a"], lambda v: v.fmt == "f32")
        return None if a is None else [Val(ti.erf(a.tile), "f32", a.shape, False, False)]

    def b_pack(self, s, scope):
        a = self.get(scope, s["a"], lambda v: len(v.shape) == 1 and v.raw and v.fmt in ("f32", "i32", "f16", "i16",
                                                                                           "i64"))
        if a is None:
            return None
        to = s["to"]
        n = a.size * ti.dtypes.BY_NAME[a.fmt].bits // ti.dtypes.BY_NAME[to].bits
        if n < 1 or n & (n - 1) or a.size * ti.dtypes.BY_NAME[a.fmt].bits < 8:
            return None
        return [Val(ti.unpack_bytes(ti.pack_bytes(a.tile), to), to, (n,), a.exact, True)]


class Builder(ValueSteps, MemorySteps, BuilderCore):
    """Records one description (``body`` is the kernel body ``trace_kernel`` runs)."""

    def body(self) -> None:
        for g in self.desc.get("globals", ()):
            ti.d_global(g["sym"], g["fmt"], g["values"])
        self.run(self.desc["body"], {})


def entry_hints(desc: dict) -> list:
    w = int(desc.get("warps") or 0)
    return [ti.for_arch("default", [ti.hint_num_worker_warps_per_cta(w)])] if w else []


def build(desc: dict, name: str = "fuzz") -> Built:
    """Record ``desc``; a TileirError means the recording refused it (a refused program)."""
    b = Builder(desc)
    with np.errstate(over="ignore"):  # a constant past a narrow format's range is rounded to infinity
        prog = ti.trace_kernel(name, [ti.ByPtr(f) for _, f in b.params], b.body, entry_hints(desc))
    sizes = {n: max(ALIGN, b.next_off.get(n, 0)) for n, _ in b.params}
    return Built(desc, prog, list(b.params), (b.grid,), list(b.regions.values()), sizes, sorted(b.skipped),
                 b.const_fire)


# ---- the inputs -----------------------------------------------------------------------------------------

_INT_SPECIALS = {"i8": (0, 1, -1, 127, -128), "i16": (0, 1, -1, 32767, -32768),
                 "i32": (0, 1, -1, 2**31 - 1, -2**31, 65536), "i64": (0, 1, -1, 2**63 - 1, -2**63, 2**32)}


def _float_values(r, fmt: str, n: int, dist: str) -> np.ndarray:
    from .corpora import float_specials

    if dist == "wide":
        x = r.uniform(1, 2, n) * np.exp2(r.integers(-20, 20, n)) * r.choice([-1.0, 1.0], n)
    elif dist == "quarter":
        x = np.round(r.uniform(-16, 16, n) * 4) / 4
    elif dist == "sentinel":
        x = np.round(r.uniform(-9, 9, n) * 8) / 8 + 0.0625
    else:
        x = r.uniform(-2, 2, n)
    if dist == "special":
        sp = float_specials(fmt).astype(np.float64)
        pick = r.random(n) < 0.3
        x = np.where(pick, sp[r.integers(0, sp.size, n)], x)
    with np.errstate(over="ignore"):
        return ti.dtypes.to_format(ti.dtypes.BY_NAME[fmt], x)


def _int_values(r, fmt: str, n: int, dist: str) -> np.ndarray:
    info = np.iinfo(ti.dtypes.BY_NAME[fmt].np)
    if dist == "wide":
        x = r.integers(info.min, info.max, n, dtype=np.int64, endpoint=True)
    else:
        x = r.integers(max(info.min, -100), min(info.max, 100), n, dtype=np.int64, endpoint=True)
    if dist in ("special", "wide"):
        sp = np.array(_INT_SPECIALS[fmt], dtype=np.int64)
        x = np.where(r.random(n) < 0.25, sp[r.integers(0, sp.size, n)], x)
    return x.astype(NP[fmt])


def values(r, fmt: str, n: int, dist: str) -> np.ndarray:
    return _float_values(r, fmt, n, dist) if ti.dtypes.BY_NAME[fmt].is_float else _int_values(r, fmt, n, dist)


def make_args(built: Built, seed: int | None = None) -> list:
    """Fresh arguments for ``built``: every buffer drawn from ``seed`` (the description's own by
    default), each region by its distribution, the rest of an output buffer a sentinel pattern."""
    r = np.random.default_rng(built.desc.get("seed", 0) if seed is None else seed)
    by_buf: dict = {}
    for reg in built.regions:
        by_buf.setdefault(reg.buf, []).append(reg)
    out = []
    for name, fmt in built.params:
        n = built.sizes[name]
        arr = values(r, fmt, n, "sentinel" if name.startswith("out") else "small")
        for reg in sorted(by_buf.get(name, ()), key=lambda x: x.offset):
            if reg.dist.startswith("assert"):  # a generator-3 assert's data: small values, the mark to fire
                arr[reg.offset: reg.offset + reg.size] = values(r, fmt, reg.size, "small")
                if ":" in reg.dist:  # at one lane of block 0's copy
                    arr[reg.offset + int(reg.dist.split(":")[1])] = ASSERT_MARK
            elif reg.dist != "sentinel":
                arr[reg.offset: reg.offset + reg.size] = values(r, fmt, reg.size, reg.dist)
        out.append(np.ascontiguousarray(arr))
    return out


NP = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64, "i16": np.int16, "i8": np.int8}

__all__ = ["Builder", "build", "make_args", "values", "entry_hints", "Built", "Val", "STORABLE"]
