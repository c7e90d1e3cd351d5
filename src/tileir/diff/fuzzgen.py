"""Random tile programs for the device fuzzer, as JSON-able DESCRIPTIONS.

A description is a dict: ``grid``, ``warps`` (an entry hint, 0 for tileiras' choice), ``fmts``
(the storable formats that get an input and an output buffer), ``globals`` (declared module
globals) and ``body``, a list of steps. Each step names its operation (``op``), its id (``id``;
a step with several results owns ids id, id + 1, ...) and its operands as the ids of earlier
steps. ``fuzzbuild.build`` turns a description into a recorded program.

The builder resolves an operand id leniently: an id that is gone (a shrinker removed its step) or
whose value no longer fits (format, shape, exactness) falls back to the newest value in scope
that fits, and a step with nothing that fits records nothing. So every sub-list of a body is a
program, which is what lets the shrinker (``shrink.py``) delete steps freely.

This module is pure Python (``random.Random``): a seed answers the same description on every
machine. The generator tracks each value's format, shape and two flags the judge relies on:
``exact`` (the device must answer it bit for bit: no approximation on its way) and ``raw`` (its
bits are determined: no NaN a computation made, whose payload is the device's to choose).
Operations whose answer jumps with a tiny change of their operand (comparisons, floor, remf,
float to integer, bitcasts) only ever take exact operands, so a tolerance judgement never meets
a value that an approximation upstream pushed across a step.
"""

from __future__ import annotations

import random

from .fuzzdraw import MemoryDraws
from .fuzzspec import (
    ALWAYS,
    BIN_APPROX,
    BIN_EXACT,
    BITS,
    DEFAULT,
    FLOATS,
    FTOF,
    FTOF_V1,
    IBIN,
    INTS,
    MEMORY,
    MMA_PAIRS,
    MUTANT_FOCUS,
    PREDS,
    ROUNDINGS,
    SIZE_WEIGHTS,
    STORABLE,
    TV,
    UN_APPROX,
    UN_EXACT,
    UN_JUMPS,
    WEIGHTS,
    Profile,
)


class Gen(MemoryDraws):
    """One description from one seed."""

    def __init__(self, seed: int, profile: Profile = DEFAULT):
        self.r = random.Random(seed)
        self.seed = seed
        self.p = profile
        self.next_id = 1
        self.fmts: set = set()
        self.globals: list = []
        self.grid = 1
        w = dict(WEIGHTS)
        for k in profile.focus:
            w[k] = w.get(k, 1) * 8
        if profile.only:  # a focused campaign: these step kinds and nothing else but loads and stores
            w = {k: v for k, v in w.items() if k in profile.only or k in ALWAYS}
        self.weights = w

    # -- helpers ------------------------------------------------------------------------------------
    def choose(self, point: str, options):
        """One of ``options`` at the named choice point, the profile's preference first."""
        options = tuple(options)
        for p, v in self.p.prefer:
            if p == point and v in options and self.r.random() < 0.6:
                return v
        return self.r.choice(options)

    def fresh(self, n: int = 1) -> int:
        i = self.next_id
        self.next_id += n
        return i

    def size(self, cap: int = 256) -> int:
        ks = [k for k in SIZE_WEIGHTS if k <= cap]
        return self.r.choices(ks, [SIZE_WEIGHTS[k] for k in ks])[0]

    def shape(self, max_elems: int | None = None) -> tuple:
        cap = max_elems or self.p.max_elems
        rank = self.r.choices((0, 1, 2, 3), (1, 8, 10, 1))[0]
        for _ in range(20):
            s = tuple(self.size() for _ in range(rank))
            n = 1
            for d in s:
                n *= d
            if n <= cap and (n <= 256 or self.r.random() < 0.3):
                return s
        return (8,)

    def pick(self, pool, pred=None):
        c = [v for v in pool if pred is None or pred(v)]
        if not c:
            return None
        # the newest values are the likeliest: programs are chains more than fans
        return c[min(len(c) - 1, int(len(c) * (1 - self.r.random() ** 2)))]

    def use_fmt(self, fmt: str) -> str:
        if fmt in STORABLE:
            self.fmts.add(fmt)
        return fmt

    def add(self, out, pool, step, *vals):
        out.append(step)
        pool.extend(vals)

    # -- the program ----------------------------------------------------------------------------------
    def program(self) -> dict:
        r = self.r
        self.grid = r.choices((1, 2, 3, 4), (6, 3, 1, 1))[0]
        warps = r.choices((0, 4, 8), (6, 1, 1))[0]
        body: list = []
        pool: list = []
        if r.random() < 0.08 or "global" in self.p.focus:
            fmt = r.choice(("f32", "i32"))
            n = self.size(64)
            vals = [round(r.uniform(-50, 50), 2) if fmt == "f32" else r.randint(-1000, 1000) for _ in range(n)]
            self.globals.append({"sym": f"g{len(self.globals)}", "fmt": fmt, "values": vals})
        self.load(body, pool, self.ctx())
        for _ in range(r.randint(*self.p.steps)):
            self.step(body, pool, self.ctx())
        stored = {s["a"] for s in body if s["op"] in ("store", "vstore")}
        for v in [v for v in pool if v.id not in stored][-2:]:
            if v.shape and v.fmt not in ("i1",):
                body.append({"op": "store", "id": self.fresh(), "a": v.id})
        return {"v": 1, "seed": self.seed, "grid": [self.grid], "warps": warps, "fmts": sorted(self.fmts),
                "globals": self.globals, "body": body}

    def ctx(self, **kw) -> dict:
        c = {"depth": 0, "in_if": False, "in_loop": False}
        c.update(kw)
        return c

    def step(self, out, pool, ctx) -> None:
        kinds = [k for k in self.weights if not (ctx["in_if"] and k in MEMORY)
                 and not (ctx["depth"] >= 2 and k in ("for", "while", "if"))
                 and not (ctx["depth"] and k in ("ret", "softmax"))]
        if not kinds:  # a focused profile with nothing drawable here (inside an if, say)
            return
        kind = self.r.choices(kinds, [self.weights[k] for k in kinds])[0]
        getattr(self, "s_" + kind)(out, pool, ctx)

    # -- values -----------------------------------------------------------------------------------------
    def load(self, out, pool, ctx, fmt=None, shape=None):
        r = self.r
        fmt = self.use_fmt(fmt or r.choice(FLOATS + FLOATS[:1] + INTS[:1] * 2 + INTS))
        shape = tuple(shape if shape is not None else self.shape())
        if not shape:
            shape = (1,)
        dist = self.choose("dist", ("small",) * 6 + ("wide",) * 2 + ("special",) * 2)
        step = {"op": "load", "id": self.fresh(), "fmt": fmt, "shape": list(shape), "dist": dist,
                "moving": ctx["in_loop"] and r.random() < 0.5, "mask": r.random() < 0.15}
        v = TV(step["id"], fmt, shape)
        self.add(out, pool, step, v)
        return v

    def s_load(self, out, pool, ctx):
        self.load(out, pool, ctx)

    def s_const(self, out, pool, ctx):
        r = self.r
        fmt = r.choice(FLOATS + INTS)
        value = r.choice((0.0, -0.0, 1.0, -1.5, 0.1, 3.0, 1e30, float("inf"))) if fmt in FLOATS else \
            r.choice((0, 1, -1, 7, -128, 2**31 - 1))
        if fmt in INTS and fmt != "i64":
            value = int(value) & ((1 << BITS[fmt]) - 1)
            value -= (1 << BITS[fmt]) if value >= 1 << (BITS[fmt] - 1) else 0
        shape = self.shape()
        self.add(out, pool, {"op": "const", "id": self.fresh(), "fmt": fmt, "shape": list(shape), "value": value},
                 TV(self.next_id - 1, fmt, shape))

    def s_iota(self, out, pool, ctx):
        shape = self.shape() or (8,)
        sid = self.fresh()
        self.add(out, pool, {"op": "iota", "id": sid, "shape": list(shape)}, TV(sid, "i32", shape))

    def partner(self, out, pool, ctx, a: TV, exact_only=False, raw_only=False):
        """A second operand of a's format and shape: one in the pool, or a fresh load (a if neither)."""
        b = self.pick(pool, lambda v: v.fmt == a.fmt and v.shape == a.shape and v.id != a.id
                      and (v.exact or not exact_only) and (v.raw or not raw_only))
        if b is None and not ctx["in_if"] and a.fmt in STORABLE and a.shape and self.r.random() < 0.7:
            b = self.load(out, pool, ctx, a.fmt, a.shape)
        return b or a

    def s_un(self, out, pool, ctx):
        a = self.pick(pool, lambda v: v.fmt in FLOATS)
        if a is None:
            return
        names = UN_EXACT + UN_APPROX if a.exact else tuple(n for n in UN_EXACT + UN_APPROX if n not in UN_JUMPS)
        f = self.choose("un", names)
        if f == "sqrt_approx" and a.fmt != "f32":
            f = "sqrt"
        exact = a.exact and f in UN_EXACT
        self.add(out, pool, {"op": "un", "id": self.fresh(), "f": f, "a": a.id},
                 TV(self.next_id - 1, a.fmt, a.shape, exact, False))

    def s_bin(self, out, pool, ctx):
        r = self.r
        a = self.pick(pool, lambda v: v.fmt in FLOATS)
        if a is None:
            return
        b = self.partner(out, pool, ctx, a)
        names: tuple[str, ...] = BIN_EXACT + BIN_APPROX
        if not (a.exact and b.exact):
            names = tuple(n for n in names if n != "remf")
        f = self.choose("bin", names)
        if f in ("pow", "atan2") and a.fmt not in ("f32", "f64"):
            f = "addf"
        rnd = r.choice(ROUNDINGS[1:]) if f in ("addf", "subf", "mulf", "divf") and r.random() < 0.06 else \
            "nearest_even"
        exact = a.exact and b.exact and f in BIN_EXACT
        self.add(out, pool, {"op": "bin", "id": self.fresh(), "f": f, "a": a.id, "b": b.id, "rnd": rnd},
                 TV(self.next_id - 1, a.fmt, a.shape, exact, False))

    def s_fma(self, out, pool, ctx):
        a = self.pick(pool, lambda v: v.fmt in FLOATS)
        if a is None:
            return
        b, c = self.partner(out, pool, ctx, a), self.partner(out, pool, ctx, a)
        self.add(out, pool, {"op": "fma", "id": self.fresh(), "a": a.id, "b": b.id, "c": c.id},
                 TV(self.next_id - 1, a.fmt, a.shape, a.exact and b.exact and c.exact, False))

    def s_ibin(self, out, pool, ctx):
        a = self.pick(pool, lambda v: v.fmt in INTS)
        if a is None:
            return
        b = self.partner(out, pool, ctx, a)
        self.add(out, pool, {"op": "ibin", "id": self.fresh(), "f": self.choose("ibin", IBIN), "a": a.id, "b": b.id},
                 TV(self.next_id - 1, a.fmt, a.shape))

    def s_iun(self, out, pool, ctx):
        a = self.pick(pool, lambda v: v.fmt in INTS)
        if a is not None:
            self.add(out, pool, {"op": "iun", "id": self.fresh(), "f": self.r.choice(("negi", "absi")), "a": a.id},
                     TV(self.next_id - 1, a.fmt, a.shape))

    def s_cmp(self, out, pool, ctx):
        r = self.r
        a = self.pick(pool, lambda v: v.exact and (v.fmt in FLOATS or v.fmt in INTS))
        if a is None:
            return
        b = self.partner(out, pool, ctx, a, exact_only=True)
        step = {"op": "cmp", "id": self.fresh(), "pred": r.choice(PREDS), "a": a.id, "b": b.id,
                "alt": self.choose("cmp.alt", (True, False, False))}  # unordered (floats) / unsigned (integers)
        m = TV(step["id"], "i1", a.shape)
        self.add(out, pool, step, m)
        if r.random() < 0.7:
            self.add(out, pool, {"op": "select", "id": self.fresh(), "c": m.id, "a": a.id, "b": b.id},
                     TV(self.next_id - 1, a.fmt, a.shape, True, a.raw and b.raw))

    def s_select(self, out, pool, ctx):
        c = self.pick(pool, lambda v: v.fmt == "i1")
        if c is None:
            return self.s_cmp(out, pool, ctx)
        a = self.pick(pool, lambda v: v.shape == c.shape and v.fmt != "i1")
        if a is None:
            return
        b = self.partner(out, pool, ctx, a)
        self.add(out, pool, {"op": "select", "id": self.fresh(), "c": c.id, "a": a.id, "b": b.id},
                 TV(self.next_id - 1, a.fmt, a.shape, a.exact and b.exact, a.raw and b.raw))

    def s_conv(self, out, pool, ctx):
        r = self.r
        a = self.pick(pool, lambda v: v.fmt != "i1" or r.random() < 0.3)
        if a is None:
            return
        sid = self.fresh()
        if a.fmt == "i1":
            return self.add(out, pool, {"op": "conv", "id": sid, "kind": "mask_int", "a": a.id},
                            TV(sid, "i32", a.shape))
        if a.is_float:
            choices = ["ftof"] * 4 + (["ftoi", "ftoi_sat", "bitcast"] if a.exact else [])
            kind = self.choose("conv", choices)
            if kind == "bitcast" and (not a.raw or a.fmt not in ("f32", "f64", "f16", "bf16")):
                kind = "ftoi_sat"
            if kind == "ftof":
                dsts = (FTOF_V1 if self.p.version == 1 else FTOF)[a.fmt]
                to, modes = r.choices(dsts, [3 if d == "tf32" else 1 for d, _ in dsts])[0]  # tf32 3x: its defect
                mode = self.choose("ftof", modes)
                return self.add(out, pool, {"op": "conv", "id": sid, "kind": "ftof", "to": to, "mode": mode, "a": a.id},
                                TV(sid, to, a.shape, a.exact, False))
            if kind == "bitcast":
                to = {"f32": "i32", "f64": "i64", "f16": "i16", "bf16": "i16"}[a.fmt]
                return self.add(out, pool, {"op": "conv", "id": sid, "kind": "bitcast", "to": to, "a": a.id},
                                TV(sid, to, a.shape))
            to = r.choice(INTS)
            return self.add(out, pool, {"op": "conv", "id": sid, "kind": kind, "to": to, "a": a.id},
                            TV(sid, to, a.shape))
        kind = self.choose("conv", ("itof", "itof", "ext", "trunc", "i4", "bitcast"))
        if kind == "itof":
            to = r.choice(("f32", "f64", "f16", "bf16"))
            return self.add(out, pool, {"op": "conv", "id": sid, "kind": "itof", "to": to, "a": a.id},
                            TV(sid, to, a.shape, True, False))
        if kind == "bitcast":
            dst = {"i32": "f32", "i64": "f64", "i16": r.choice(("f16", "bf16")), "i8": None}[a.fmt]
            if dst is None:
                kind = "ext"
            else:
                return self.add(out, pool, {"op": "conv", "id": sid, "kind": "bitcast", "to": dst, "a": a.id},
                                TV(sid, dst, a.shape))
        if kind == "i4":
            return self.add(out, pool, {"op": "conv", "id": sid, "kind": "i4", "signed": r.random() < 0.6, "a": a.id},
                            TV(sid, "i32", a.shape))
        wider = [f for f in INTS if BITS[f] > BITS[a.fmt]]
        narrower = [f for f in INTS if BITS[f] < BITS[a.fmt]]
        if kind == "ext" and wider:
            to = r.choice(wider)
            return self.add(out, pool, {"op": "conv", "id": sid, "kind": "ext", "signed": r.random() < 0.6, "to": to,
                                        "a": a.id}, TV(sid, to, a.shape))
        if narrower:
            to = r.choice(narrower)
            return self.add(out, pool, {"op": "conv", "id": sid, "kind": "trunc", "to": to, "a": a.id},
                            TV(sid, to, a.shape))

    # -- folds and shapes ---------------------------------------------------------------------------------
    def s_reduce(self, out, pool, ctx):
        r = self.r
        a = self.pick(pool, lambda v: v.shape and (v.fmt in FLOATS or v.fmt in INTS))
        if a is None:
            return
        f = r.choice(("sum", "sum", "max", "min", "take_elem", "take_acc"))
        if self.p.version >= 3 and f.startswith("take"):  # unordered in d_reduce (scans keep them): the
            f = "max" if f == "take_elem" else "min"  # same draws otherwise, so the rest of the program stays
        dim = r.randrange(len(a.shape))
        keep = r.random() < 0.5
        shape = a.shape[:dim] + ((1,) if keep else ()) + a.shape[dim + 1:]
        exact = a.exact and (f != "sum" or a.fmt in INTS)
        self.add(out, pool, {"op": "reduce", "id": self.fresh(), "f": f, "a": a.id, "dim": dim, "keep": keep},
                 TV(self.next_id - 1, a.fmt, shape, exact, a.raw and f.startswith("take")))

    def s_scan(self, out, pool, ctx):
        r = self.r
        a = self.pick(pool, lambda v: v.shape and (v.fmt in FLOATS or v.fmt in INTS))
        if a is None:
            return
        f = r.choice(("sum", "sum", "max", "take_elem", "take_acc"))
        exact = a.exact and (f != "sum" or a.fmt in INTS)
        self.add(out, pool, {"op": "scan", "id": self.fresh(), "f": f, "a": a.id, "dim": r.randrange(len(a.shape)),
                             "rev": r.random() < 0.4}, TV(self.next_id - 1, a.fmt, a.shape, exact, False))

    def s_scan2(self, out, pool, ctx):
        a = self.pick(pool, lambda v: v.shape and v.fmt == "i32")
        if a is None:
            return
        b = self.partner(out, pool, ctx, a)
        i = self.fresh(2)
        self.add(out, pool, {"op": "scan2", "id": i, "a": a.id, "b": b.id, "dim": self.r.randrange(len(a.shape)),
                             "rev": self.r.random() < 0.4}, TV(i, "i32", a.shape), TV(i + 1, "i32", a.shape))

    def s_argmax(self, out, pool, ctx):
        a = self.pick(pool, lambda v: v.shape and v.exact and v.fmt in ("f32", "i32"))
        if a is None:
            return
        dim = self.r.randrange(len(a.shape))
        shape = a.shape[:dim] + a.shape[dim + 1:]
        i = self.fresh(2)
        self.add(out, pool, {"op": "argmax", "id": i, "a": a.id, "dim": dim}, TV(i, a.fmt, shape, True, False),
                 TV(i + 1, "i32", shape))

    def s_shape(self, out, pool, ctx):
        r = self.r
        a = self.pick(pool, lambda v: v.fmt != "i1")
        if a is None:
            return
        sid = self.fresh()
        n = a.size
        f = r.choice(("reshape", "transpose", "broadcast", "extract", "insert", "cat", "cat", "permute"))
        step = {"op": "shape", "id": sid, "f": f, "a": a.id}
        if f == "reshape" or (f in ("transpose", "permute") and len(a.shape) < 2) or \
                (f in ("extract", "insert", "cat") and not a.shape):
            dims: list[int] = []
            left = n
            while left > 1 and len(dims) < 3:
                d = r.choice([k for k in SIZE_WEIGHTS if k <= left and left % k == 0])
                dims.append(d)
                left //= d
            if left > 1:
                dims.append(left)
            step.update(f="reshape", to=dims or [1])
            return self.add(out, pool, step, TV(sid, a.fmt, tuple(dims or [1]), a.exact, a.raw))
        if f == "transpose":
            step["perm"] = [1, 0] if len(a.shape) == 2 else [0, 2, 1]
        if f in ("transpose", "permute"):
            perm = step.get("perm") or r.sample(range(len(a.shape)), len(a.shape))
            step.update(f="permute", perm=perm)
            return self.add(out, pool, step, TV(sid, a.fmt, tuple(a.shape[p] for p in perm), a.exact, a.raw))
        if f == "broadcast":
            to = tuple(d if d != 1 else self.size(16) for d in a.shape) if a.shape else self.shape()
            if not to:
                to = (4,)
            step["to"] = list(to)
            return self.add(out, pool, step, TV(sid, a.fmt, to, a.exact, a.raw))
        dim = r.randrange(len(a.shape))
        if f == "extract" or f == "insert":
            to = tuple(r.choice([k for k in SIZE_WEIGHTS if k <= d and d % k == 0]) for d in a.shape)
            idx = [r.randrange(d // t) for d, t in zip(a.shape, to)]
            step.update(to=list(to), idx=idx)
            if f == "extract":
                return self.add(out, pool, step, TV(sid, a.fmt, to, a.exact, a.raw))
            s = self.pick(pool, lambda v: v.fmt == a.fmt and v.shape == to and v.id != a.id)
            if s is None:
                step.update(f="extract")
                return self.add(out, pool, step, TV(sid, a.fmt, to, a.exact, a.raw))
            step["b"] = s.id
            return self.add(out, pool, step, TV(sid, a.fmt, a.shape, a.exact and s.exact, a.raw and s.raw))
        b = self.partner(out, pool, ctx, a)
        shape = a.shape[:dim] + (a.shape[dim] * 2,) + a.shape[dim + 1:]
        step.update(b=b.id, dim=dim)
        self.add(out, pool, step, TV(sid, a.fmt, shape, a.exact and b.exact, a.raw and b.raw))

    # -- matrix products ----------------------------------------------------------------------------------
    def mma_dims(self) -> tuple:
        r = self.r
        for _ in range(30):
            small = (4, 8, 16)
            m = self.size()
            k = r.choice(small) if r.random() < 0.5 else self.size()
            n = r.choice(small) if r.random() < 0.5 else self.size()
            cap = self.p.max_mma_elems
            if m * k <= cap and k * n <= cap and m * n <= cap:
                return m, k, n
        return 16, 8, 16

    def s_mma(self, out, pool, ctx):
        r = self.r
        fmt, acc = r.choice(MMA_PAIRS)
        m, k, n = self.mma_dims()
        src = "f64" if fmt == "f64" else r.choice(("f32", "f16", "f32"))
        a = self.pick(pool, lambda v: v.is_float and v.shape == (m, k))
        b = self.pick(pool, lambda v: v.is_float and v.shape == (k, n))
        if ctx["in_if"] and (a is None or b is None):
            return
        a = a or self.load(out, pool, ctx, src, (m, k))
        b = b or self.load(out, pool, ctx, src, (k, n))
        c = self.pick(pool, lambda v: v.is_float and v.shape == (m, n)) if r.random() < 0.6 else None
        step = {"op": "mma", "id": self.fresh(), "fmt": fmt, "acc": acc, "a": a.id, "b": b.id,
                "c": c.id if c else None, "split": fmt == "tf32" and r.random() < 0.3}
        self.add(out, pool, step, TV(step["id"], acc, (m, n), False, False))

    def s_mmai(self, out, pool, ctx):
        m, k, n = self.mma_dims()
        if ctx["in_if"]:
            return
        a = self.pick(pool, lambda v: v.fmt == "i8" and v.shape == (m, k)) or self.load(out, pool, ctx, "i8", (m, k))
        b = self.pick(pool, lambda v: v.fmt == "i8" and v.shape == (k, n)) or self.load(out, pool, ctx, "i8", (k, n))
        c = self.pick(pool, lambda v: v.fmt == "i32" and v.shape == (m, n))
        self.add(out, pool, {"op": "mmai", "id": self.fresh(), "a": a.id, "b": b.id, "c": c.id if c else None},
                 TV(self.next_id - 1, "i32", (m, n)))

    def s_powi(self, out, pool, ctx):
        a = self.pick(pool, lambda v: v.fmt in FLOATS)
        if a is None:
            return
        nn = self.pick(pool, lambda v: v.fmt in ("i32", "i16", "i8") and v.shape == a.shape)
        self.add(out, pool, {"op": "powi", "id": self.fresh(), "a": a.id, "n": nn.id if nn else None,
                             "k": self.r.randint(-6, 9)}, TV(self.next_id - 1, a.fmt, a.shape, a.exact, False))

    def s_erf(self, out, pool, ctx):
        a = self.pick(pool, lambda v: v.fmt == "f32")
        if a is not None:
            self.add(out, pool, {"op": "erf", "id": self.fresh(), "a": a.id}, TV(self.next_id - 1, "f32", a.shape,
                                                                                  False, False))

    def s_pack(self, out, pool, ctx):
        a = self.pick(pool, lambda v: len(v.shape) == 1 and v.raw and v.fmt in ("f32", "i32", "f16", "i16", "i64"))
        if a is None:
            return
        to = self.r.choice(("i32", "f32", "f16", "i16"))
        n = a.size * BITS[a.fmt] // BITS[to]
        if n < 1 or n & (n - 1):
            to, n = a.fmt, a.size
        self.add(out, pool, {"op": "pack", "id": self.fresh(), "a": a.id, "to": to}, TV(self.next_id - 1, to, (n,)))

def generate(seed: int, profile: Profile = DEFAULT) -> dict:
    """The description drawn from ``seed``."""
    return Gen(seed, profile).program()


def walk(steps):
    """Every step of a body, nested ones included, depth first."""
    for s in steps:
        yield s
        for key in ("body", "then", "else"):
            if key in s:
                yield from walk(s[key])


def op_kinds(desc: dict) -> list:
    """The step kinds a description uses, sorted (one each)."""
    return sorted({s["op"] for s in walk(desc["body"])})


__all__ = ["Profile", "DEFAULT", "Gen", "generate", "walk", "op_kinds", "MUTANT_FOCUS", "WEIGHTS", "MMA_PAIRS",
           "FTOF", "FLOATS", "INTS", "STORABLE", "UN_APPROX", "UN_EXACT", "BIN_APPROX", "BIN_EXACT"]
