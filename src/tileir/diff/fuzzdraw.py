"""The fuzz generator's memory and control-flow draws (mixed into fuzzgen.Gen): views, gathers
and scatters, atomics, globals, allocas, prints, asserts, early returns, loops and ifs with
carries, and the online-softmax loop."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .fuzzspec import FLOATS, INTS, PADS, RMW_ORDERLESS, STORABLE, TV, Profile, pow2_at_most


class MemoryDraws:
    """The draws of steps that touch memory or open regions (Gen supplies pick, load, step ...)."""

    # what fuzzgen.Gen supplies (declared for the type checker; Gen's own definitions are held to these)
    r: random.Random
    p: Profile
    next_id: int
    grid: int
    globals: list

    if TYPE_CHECKING:
        def choose(self, point: str, options) -> Any: ...
        def fresh(self, n: int = 1) -> int: ...
        def size(self, cap: int = 256) -> int: ...
        def pick(self, pool, pred: Callable[..., object] | None = None) -> TV | None: ...
        def use_fmt(self, fmt: str) -> str: ...
        def add(self, out: list, pool: list, step: dict, *vals: TV) -> None: ...
        def partner(self, out: list, pool: list, ctx: dict, a: TV, exact_only: bool = False,
                    raw_only: bool = False) -> TV: ...
        def step(self, out: list, pool: list, ctx: dict) -> None: ...

    # -- memory --------------------------------------------------------------------------------------------
    def view_shape(self, rank: int) -> dict:
        r = self.r
        tile = [self.size(32) for _ in range(rank)]
        tshape = [max(1, int(t * r.uniform(0.5, 3.5))) for t in tile]
        order = r.choice(("row", "col")) if rank == 2 else "row"
        return {"tile": tile, "tshape": tshape, "order": order, "pitch": r.choice((0, 0, 1, 3))}

    def index_spec(self, grid_len: int, ctx) -> dict:
        r = self.r
        by = r.choice(("const", "const", "block") + (("loop",) if ctx["in_loop"] else ()))
        return {"c": r.randrange(max(1, grid_len)), "by": by}

    def s_vload(self, out, pool, ctx):
        r = self.r
        rank = r.choice((1, 2, 2, 2))
        fmt = self.use_fmt(r.choice(("f32", "f32", "i32", "f16", "f64", "i8")))
        v = self.view_shape(rank)
        kind = r.choice(("partition", "partition", "strided"))
        step: dict[str, Any]
        step = {"op": "vload", "id": self.fresh(), "fmt": fmt, "kind": kind, "pad": r.choice(PADS), **v}
        dim_map = list(range(rank))
        if rank == 2 and r.random() < 0.4:
            dim_map = [1, 0]
        step["dim_map"] = dim_map
        trav = [max(1, t + r.choice((-t // 2, 0, 1, 3))) for t in v["tile"]] if kind == "strided" else v["tile"]
        step["trav"] = trav
        grid_len = [-(-v["tshape"][dim_map[k]] // trav[k]) for k in range(rank)]
        step["idx"] = [self.index_spec(g, ctx) for g in grid_len]
        exact_pad = step["pad"] != "none" or fmt not in FLOATS
        self.add(out, pool, step, TV(step["id"], fmt, tuple(v["tile"]), True, exact_pad))

    def s_vstore(self, out, pool, ctx):
        r = self.r
        a = self.pick(pool, lambda v: 1 <= len(v.shape) <= 2 and v.fmt in STORABLE and max(v.shape) <= 64)
        if a is None:
            return
        self.use_fmt(a.fmt)
        rank = len(a.shape)
        dim_map = [1, 0] if rank == 2 and r.random() < 0.4 else list(range(rank))
        tshape = [max(1, int(a.shape[k] * r.uniform(0.5, 2.5))) for k in range(rank)]
        tsh = [0] * rank
        for k in range(rank):
            tsh[dim_map[k]] = tshape[k]
        grid_len = [-(-tsh[dim_map[k]] // a.shape[k]) for k in range(rank)]
        self.add(out, pool, {"op": "vstore", "id": self.fresh(), "a": a.id, "tshape": tsh, "dim_map": dim_map,
                             "order": r.choice(("row", "col")) if rank == 2 else "row", "pitch": r.choice((0, 2)),
                             "idx": [self.index_spec(g, ctx) for g in grid_len]})

    def s_gload(self, out, pool, ctx):
        r = self.r
        fmt = self.use_fmt(r.choice(("f32", "i32")))
        rows, cols = self.size(16), self.size(16)
        step: dict[str, Any]
        step = {"op": "gload", "id": self.fresh(), "fmt": fmt, "tile": [rows, cols],
                "tshape": [rows + r.randint(0, 8), cols + r.randint(0, 4)], "pad": r.choice(PADS[:-1]),
                "stride": r.randint(1, 3), "first": r.randint(0, 4), "at": r.randint(0, 3)}
        self.add(out, pool, step, TV(step["id"], fmt, (rows, cols)))

    def s_gstore(self, out, pool, ctx):
        a = self.pick(pool, lambda v: len(v.shape) == 2 and v.fmt in ("f32", "i32") and max(v.shape) <= 32)
        if a is None:
            return
        self.add(out, pool, {"op": "gstore", "id": self.fresh(), "a": a.id, "stride": self.r.randint(1, 3),
                             "first": self.r.randint(0, 3), "extra": self.r.randint(0, 6)})

    def s_store(self, out, pool, ctx):
        a = self.pick(pool, lambda v: v.shape)
        if a is not None:
            out.append({"op": "store", "id": self.fresh(), "a": a.id, "mask": self.r.random() < 0.15})

    def s_gather(self, out, pool, ctx):
        r = self.r
        a = self.pick(pool, lambda v: v.fmt == "i32" and v.exact and v.shape)
        if a is None:
            return
        fmt = self.use_fmt(r.choice(("f32", "i32", "f16", "f64")))
        self.add(out, pool, {"op": "gather", "id": self.fresh(), "fmt": fmt, "a": a.id, "n": self.size(64),
                             "masked": self.choose("gather.masked", (True, True, False)),
                             "via": r.choice(("gather", "ptrs"))},
                 TV(self.next_id - 1, fmt, a.shape))

    def s_scatter(self, out, pool, ctx):
        a = self.pick(pool, lambda v: v.fmt in STORABLE and v.shape and v.size <= 1024)
        if a is not None:
            self.use_fmt(a.fmt)
            out.append({"op": "scatter", "id": self.fresh(), "a": a.id, "mul": self.r.choice((1, 3, 5, 7)),
                        "add": self.r.randint(0, 9), "masked": self.r.random() < 0.4})

    def s_atomic(self, out, pool, ctx):
        r = self.r
        a = self.pick(pool, lambda v: v.fmt in ("i32", "i64", "f32", "f64", "f16") and v.shape and v.exact)
        if a is None:
            return
        self.use_fmt(a.fmt)
        if a.fmt in ("i32", "i64"):
            mode = self.choose("atomic", RMW_ORDERLESS + ("xchg",))
        else:
            mode = r.choice(("addf", "addf", "xchg")) if a.fmt != "f16" else "addf"
        collide = mode not in ("xchg",) and a.fmt != "f16" and r.random() < 0.6
        step: dict[str, Any]
        step = {"op": "atomic", "id": self.fresh(), "mode": mode, "a": a.id, "collide": collide,
                "mul": r.choice((1, 3, 5)), "add": r.randint(0, 9)}
        self.add(out, pool, step, *(() if collide else (TV(step["id"], a.fmt, a.shape, True, a.raw),)))

    def s_cas(self, out, pool, ctx):
        a = self.pick(pool, lambda v: v.fmt in ("i32", "i64", "f32", "f64") and v.shape and v.raw and v.exact)
        if a is None:
            return
        self.use_fmt(a.fmt)
        self.add(out, pool, {"op": "cas", "id": self.fresh(), "a": a.id, "mul": self.r.choice((1, 3)),
                             "add": self.r.randint(0, 5)}, TV(self.next_id - 1, a.fmt, a.shape, True, True))

    def s_redview(self, out, pool, ctx):
        r = self.r
        a = self.pick(pool, lambda v: v.fmt in ("i32", "f32") and len(v.shape) == 2 and v.exact
                      and max(v.shape) <= 32)
        if a is None:
            return
        self.use_fmt(a.fmt)
        mode = r.choice(RMW_ORDERLESS) if a.fmt == "i32" else "addf"
        grid_len = [r.randint(1, 2) for _ in a.shape]
        out.append({"op": "redview", "id": self.fresh(), "a": a.id, "mode": mode, "grid": grid_len,
                    "idx": [r.randrange(g) for g in grid_len]})

    def s_global(self, out, pool, ctx):
        if not self.globals:
            return
        g = self.r.choice(self.globals)
        n = pow2_at_most(len(g["values"]))
        self.add(out, pool, {"op": "global", "id": self.fresh(), "sym": g["sym"], "n": n},
                 TV(self.next_id - 1, g["fmt"], (n,)))

    def s_alloca(self, out, pool, ctx):
        a = self.pick(pool, lambda v: v.fmt in ("f32", "i32", "f64", "i64") and v.shape and v.size <= 256)
        if a is None:
            return
        b = self.partner(out, pool, ctx, a)
        i = self.fresh(2)
        self.add(out, pool, {"op": "alloca", "id": i, "a": a.id, "b": b.id},
                 TV(i, a.fmt, a.shape, a.exact, a.raw), TV(i + 1, a.fmt, a.shape, b.exact, b.raw))

    def s_print(self, out, pool, ctx):
        args = []
        for _ in range(self.r.randint(1, 3)):
            v = self.pick(pool, lambda v: v.exact and v.fmt in ("i32", "f32", "f64"))
            if v is not None:
                args.append(v.id)
        if args:
            out.append({"op": "print", "id": self.fresh(), "args": args,
                        "conv": [self.r.choice(("%f", "%.3e", "%g")) for _ in args]})

    def s_assert(self, out, pool, ctx):
        if self.p.version >= 3:  # on input data of its own: x != ASSERT_MARK, the mark at ``lane`` to fire
            if ctx.get("in_if"):
                return
            n = self.r.choice((8, 16, 32, 64))
            fire = self.r.random() < self.p.fire_asserts
            self.use_fmt("i32")
            out.append({"op": "assert", "id": self.fresh(), "n": n, "lane": self.r.randrange(n), "fire": fire})
            return
        a = self.pick(pool, lambda v: v.exact and v.fmt == "i32" and v.shape)
        if a is not None:
            fire = self.r.random() < self.p.fire_asserts
            out.append({"op": "assert", "id": self.fresh(), "a": a.id, "fire": fire})

    def s_ret(self, out, pool, ctx):
        if self.grid > 1:
            out.append({"op": "ret", "id": self.fresh(), "k": self.r.randrange(self.grid)})

    # -- control flow ----------------------------------------------------------------------------------------
    def carries(self, pool, k: int) -> list:
        got = []
        for _ in range(k):
            v = self.pick(pool, lambda v: v.fmt != "i1" and v not in got and v.size <= 1024)
            if v is not None and v not in got:
                got.append(v)
        return got

    def region(self, pool, carries, ctx, lo=1, hi=4) -> tuple:
        """A body: its steps, the ids its carries are read as, and what it sets them to."""
        cid = self.fresh(len(carries))
        inner = list(pool) + [TV(cid + j, c.fmt, c.shape, c.exact, c.raw) for j, c in enumerate(carries)]
        body: list = []
        for _ in range(self.r.randint(lo, hi)):
            self.step(body, inner, ctx)
        sets: list[int | None] = []
        for j, c in enumerate(carries):
            # the carry as the body read it, combined with something new, keeps it moving
            cur = inner[len(pool) + j]
            other = self.pick(inner[len(pool):], lambda v, c=c, cur=cur: v.fmt == c.fmt and v.shape == c.shape
                              and v.id != cur.id and (v.exact or not c.exact))
            if other is None:
                sets.append(None)
                continue
            if self.r.random() < 0.6 and c.fmt in FLOATS + INTS:
                sid = self.fresh()
                if c.fmt in FLOATS:
                    body.append({"op": "bin", "id": sid, "f": self.r.choice(("addf", "maxf", "subf")), "a": cur.id,
                                 "b": other.id, "rnd": "nearest_even"})
                else:
                    body.append({"op": "ibin", "id": sid, "f": self.r.choice(("addi", "xori", "maxi")), "a": cur.id,
                                 "b": other.id})
                sets.append(sid)
            else:
                sets.append(other.id)
        return body, cid, sets

    def s_for(self, out, pool, ctx):
        r = self.r
        carries = self.carries(pool, r.randint(0, 3))
        step: dict[str, Any]
        step = {"op": "for", "id": self.fresh(max(1, len(carries))), "lo": r.choice((0, 0, 1, 2)),
                "trips": r.choice((0, 1, 2, 3, 3, 4, 5)), "step": r.choice((1, 1, 2)),
                "carries": [c.id for c in carries], "iv": self.fresh()}
        inner_ctx = dict(ctx, depth=ctx["depth"] + 1, in_loop=True)
        pool_iv = list(pool) + [TV(step["iv"], "i32", ())]
        step["body"], step["cid"], step["sets"] = self.region(pool_iv, carries, inner_ctx)
        self.add(out, pool, step, *[TV(step["id"] + j, c.fmt, c.shape, c.exact, False) for j, c in enumerate(carries)])

    def s_while(self, out, pool, ctx):
        r = self.r
        carries = self.carries(pool, r.randint(1, 2))
        brk = self.pick(pool, lambda v: v.fmt == "i32" and v.exact and v.shape)
        step: dict[str, Any]
        step = {"op": "while", "id": self.fresh(max(1, len(carries))), "trips": r.randint(0, 4),
                "carries": [c.id for c in carries], "brk": brk.id if brk and r.random() < 0.5 else None,
                "brk_at": r.randint(-50, 50)}
        inner_ctx = dict(ctx, depth=ctx["depth"] + 1, in_loop=True)
        step["body"], step["cid"], step["sets"] = self.region(pool, carries, inner_ctx)
        self.add(out, pool, step, *[TV(step["id"] + j, c.fmt, c.shape, c.exact, False) for j, c in enumerate(carries)])

    def s_if(self, out, pool, ctx):
        r = self.r
        carries = self.carries(pool, r.randint(1, 2))
        cond = self.pick(pool, lambda v: v.exact and (v.fmt in ("i32", "f32")) and v.shape)
        step: dict[str, Any]
        step = {"op": "if", "id": self.fresh(max(1, len(carries))), "carries": [c.id for c in carries],
                "cond": {"a": cond.id, "at": r.randint(-20, 20)} if cond is not None and r.random() < 0.7 else
                {"block": r.randrange(2)}}
        inner_ctx = dict(ctx, depth=ctx["depth"] + 1, in_if=True)
        step["then"], step["cid"], step["sets_then"] = self.region(pool, carries, inner_ctx, 1, 3)
        step["else"], step["cid_else"], step["sets_else"] = self.region(pool, carries, inner_ctx, 0, 2)
        self.add(out, pool, step, *[TV(step["id"] + j, c.fmt, c.shape, c.exact, False) for j, c in enumerate(carries)])

    def s_softmax(self, out, pool, ctx):
        """The online-softmax loop of flash attention: per key block a score product [M, D] x [D, N],
        the running max and sum, and the value product [M, N] x [N, D] (the third defect of
        docs/assembler-defect.md: tf32 with D or N of 4)."""
        r = self.r
        self.use_fmt("f32")
        step: dict[str, Any]
        step = {"op": "softmax", "id": self.fresh(2), "M": r.choice((16, 32, 32, 64)), "D": r.choice((4, 4, 8, 16, 32)),
                "N": r.choice((4, 8, 16, 32)), "trips": r.randint(1, 4),
                "fmt": r.choice(("tf32", "tf32", "tf32x3", "f16", "bf16", "f32"))}
        self.add(out, pool, step, TV(step["id"], "f32", (step["M"], step["D"]), False, False),
                 TV(step["id"] + 1, "f32", (step["M"], 1), False, False))
