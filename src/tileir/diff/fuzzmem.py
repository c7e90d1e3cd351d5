"""The fuzz builder's memory and control steps: loads and stores through every spelling (plain,
views with dim_map / padding / strides, gather-scatter views, pointer gathers and scatters),
atomics, globals, allocas, prints, asserts, early returns, loops and ifs with carries, and the
online-softmax loop of flash attention.

Memory discipline, so that every answer is defined: each block works in its own copy of a region
(``Region.blocks``) except where blocks share one on purpose (colliding atomics, atomic view
reductions), and there only order-independent modes run on values whose every partial sum is
exact (quarter units); a scatter's and an exchange's lanes name distinct elements; a value an
atomic answered where lanes collide is never used.
"""

from __future__ import annotations

import math

import tileir as ti
from tileir.dev import dev

from .fuzzgen import FLOATS, STORABLE
from .fuzzspec import ASSERT_MARK
from .fuzzval import PAD, BuilderCore, Val, clamp, operand, split_tf32


def _perm(n: int, mul: int, add: int, shape):
    """A permutation of 0 .. n-1 (n a power of two, mul odd) shaped like ``shape``."""
    t = ti.and_i(ti.add_i(ti.mul_i(ti.arange(n), ti.i_const(mul | 1)), ti.i_const(add)), ti.i_const(n - 1))
    return ti.reshape(t, list(shape)) if tuple(shape) != (n,) else t


def _quarters(t, fmt: str):
    """t clamped to [-64, 64] in quarter units: sums of a few thousand such values are exact in
    f32, so colliding atomic adds have one answer whatever their order."""
    q = ti.floor(ti.mul(clamp(t, fmt, 64.0), ti.f_const(fmt, 4.0)))
    return ti.mul(q, ti.f_const(fmt, 0.25))


def _strides(tshape, order: str, pitch: int) -> list:
    if len(tshape) == 1:
        return [1]
    if order == "col":
        return [1, tshape[0] + pitch]
    return [tshape[1] + pitch, 1]


def _extent(tshape, strides) -> int:
    return 1 + sum((d - 1) * s for d, s in zip(tshape, strides))


class MemorySteps(BuilderCore):
    """Steps that touch memory or open regions (mixed into fuzzbuild.Builder)."""

    # -- indices -----------------------------------------------------------------------------------
    def view_index(self, spec: dict, grid_len: int):
        c = spec.get("c", 0) % max(1, grid_len)
        by = spec.get("by", "const")
        it = self.iteration() if by == "loop" else None
        if by == "block":
            return ti.idx_rem(ti.idx_add(ti.block_id(0), ti.idx_const(c)), ti.idx_const(grid_len))
        if it is not None:
            return ti.idx_rem(ti.idx_add(it, ti.idx_const(c)), ti.idx_const(grid_len))
        return ti.idx_const(c)

    def base_tile(self, reg, moving=False, stride=0):
        return ti.idx_as_tile(self.base(reg, moving, stride))

    def storable(self, v: Val):
        """``v`` in a format an output buffer of this program holds: (tile, fmt), or None."""
        outs = [f for f in STORABLE if f"out_{f}" in self.pos]
        if v.fmt in outs:
            return v.tile, v.fmt
        if v.fmt == "i1":
            if "out_i32" in self.pos:
                return ti.mask_to_int(v.tile), "i32"
            to: str | None = next((f for f in ("i8", "i16", "i64") if f in outs), None)
            if to is None:
                return None
            return ti.Tile(dev().t_convert("exti", "i1", to, list(v.shape), _h(v.tile))), to
        if v.is_float:
            to = next((f for f in ("f32", "f64", "f16", "bf16") if f in outs), None)
            if to is None or to == v.fmt:
                return None
            return ti.float_to_float(v.tile, to), to
        to = next((f for f in ("i32", "i64", "i16", "i8") if f in outs), None)
        if to is None:
            return None
        fb, tb = ti.dtypes.BY_NAME[v.fmt].bits, ti.dtypes.BY_NAME[to].bits
        op = "extis" if tb > fb else "trunci"
        return ti.Tile(dev().t_convert(op, v.fmt, to, list(v.shape), _h(v.tile))), to

    # -- plain loads and stores ------------------------------------------------------------------------
    def b_store(self, s, scope):
        if self.in_if:
            return None
        a = self.get(scope, s["a"], lambda v: v.shape)
        if a is None:
            return None
        got = self.storable(a)
        if got is None:
            return None
        t, fmt = got
        n = a.size
        moving = self.iteration() is not None
        reg = self.region(s, "out", "out", fmt, n * (self.mult() if moving else 1), dist="sentinel",
                          taint="exact" if a.exact else "approx")
        base = self.base(reg, moving, n)
        mask = ti.lt_i(ti.reshape(ti.arange(n), list(a.shape)), ti.i_const(max(1, (3 * n) // 4))) \
            if s.get("mask") else None
        ti.store(self.param("out", fmt), base, t, mask=mask)
        return []

    # -- views --------------------------------------------------------------------------------------------
    def b_vload(self, s, scope):
        if self.in_if or self.param("in", s["fmt"]) is None:
            return None
        fmt, tile, tshape = s["fmt"], list(s["tile"]), list(s["tshape"])
        rank = len(tile)
        dim_map, trav = list(s["dim_map"]), list(s["trav"])
        strides = _strides(tshape, s["order"], s["pitch"])
        reg = self.region(s, "in", "in", fmt, _extent(tshape, strides), dist="special")
        tv = ti.tensor_view(self.param("in", fmt), self.base(reg), tshape, strides)
        grid_len = [-(-tshape[dim_map[k]] // trav[k]) for k in range(rank)]
        over = any((g - 1) * t + w > tshape[dim_map[k]] for k, (g, t, w) in enumerate(zip(grid_len, trav, tile)))
        pad = s["pad"] if s["pad"] != "none" or not over else "zero"
        pad = pad if fmt in FLOATS or pad in ("zero", "none") else "zero"  # the special pads are float ones
        if s["kind"] == "strided":
            v = ti.strided_view(tv, tile, trav, dim_map, PAD[pad])
        else:
            if trav != tile:
                grid_len = [-(-tshape[dim_map[k]] // tile[k]) for k in range(rank)]
            v = ti.partition_view(tv, tile, dim_map, PAD[pad])
        idx = [self.view_index(spec, g) for spec, g in zip(s["idx"], grid_len)]
        t = ti.load_view(v, idx)
        return [Val(t, fmt, tuple(tile), True, pad != "nan")]

    def b_vstore(self, s, scope):
        if self.in_if:
            return None
        rank = len(s["tshape"])
        a = self.get(scope, s["a"], lambda v: len(v.shape) == rank and f"out_{v.fmt}" in self.pos)
        if a is None:
            return None
        tsh, dim_map = list(s["tshape"]), list(s["dim_map"])
        strides = _strides(tsh, s["order"], s["pitch"])
        reg = self.region(s, "out", "out", a.fmt, _extent(tsh, strides), dist="sentinel",
                          taint="exact" if a.exact else "approx")
        tv = ti.tensor_view(self.param("out", a.fmt), self.base(reg), tsh, strides)
        pv = ti.partition_view(tv, list(a.shape), dim_map)
        grid_len = [-(-tsh[dim_map[k]] // a.shape[k]) for k in range(rank)]
        ti.store_view(pv, [self.view_index(spec, g) for spec, g in zip(s["idx"], grid_len)], a.tile)
        return []

    def b_gload(self, s, scope):
        if self.in_if or self.param("in", s["fmt"]) is None:
            return None
        fmt, (rows, cols), tsh = s["fmt"], s["tile"], list(s["tshape"])
        reg = self.region(s, "in", "in", fmt, tsh[0] * tsh[1], dist="special")
        tv = ti.tensor_view(self.param("in", fmt), self.base(reg), tsh, [tsh[1], 1])
        pad = s["pad"] if fmt in FLOATS or s["pad"] in ("zero", "none") else "zero"
        gv = ti.gather_scatter_view(tv, [rows, cols], 0, PAD[pad])
        r = ti.add_i(ti.mul_i(ti.arange(rows), ti.i_const(s["stride"])), ti.i_const(s["first"]))
        t = ti.load_gather(gv, [ti.Rows(r), ti.At(s["at"])])
        return [Val(t, fmt, (rows, cols), True, pad != "nan")]

    def b_gstore(self, s, scope):
        if self.in_if:
            return None
        a = self.get(scope, s["a"], lambda v: len(v.shape) == 2 and v.fmt in ("f32", "i32")
                     and f"out_{v.fmt}" in self.pos)
        if a is None:
            return None
        rows, cols = a.shape
        tsh = [rows * s["stride"] + s["first"] - s["stride"] + 1 + s["extra"] // 2, cols]
        tsh[0] = max(1, tsh[0] - s["extra"])  # some rows fall past the end: not written
        reg = self.region(s, "out", "out", a.fmt, tsh[0] * tsh[1], dist="sentinel",
                          taint="exact" if a.exact else "approx")
        tv = ti.tensor_view(self.param("out", a.fmt), self.base(reg), tsh, [cols, 1])
        gv = ti.gather_scatter_view(tv, [rows, cols], 0)
        r = ti.add_i(ti.mul_i(ti.arange(rows), ti.i_const(s["stride"])), ti.i_const(s["first"]))
        ti.store_gather(gv, [ti.Rows(r), ti.At(0)], a.tile)
        return []

    # -- pointers ---------------------------------------------------------------------------------------------
    def b_gather(self, s, scope):
        if self.in_if or self.param("in", s["fmt"]) is None:
            return None
        a = self.get(scope, s["a"], lambda v: v.fmt == "i32" and v.exact and v.shape)
        if a is None:
            return None
        fmt, n = s["fmt"], int(s["n"])
        reg = self.region(s, "in", "in", fmt, n, dist="special")
        masked = bool(s.get("masked"))
        raw = ti.and_i(a.tile, ti.i_const(2 * n - 1 if masked else n - 1))
        idx = ti.add_i(raw, self.base_tile(reg))
        mask = ti.lt_i(raw, ti.i_const(n)) if masked else None
        pad = (ti.f_const(fmt, -99.5) if fmt in FLOATS else ti.consti(fmt, -99)) if masked else None
        p = self.param("in", fmt)
        if s.get("via") == "ptrs":
            t = ti.load_ptrs(ti.ptr_offset(ti.ptrs(p, list(a.shape)), idx), mask, pad)
        else:
            t = ti.gather(p, idx, mask, pad)
        return [Val(t, fmt, a.shape)]

    def b_scatter(self, s, scope):
        if self.in_if:
            return None
        a = self.get(scope, s["a"], lambda v: v.shape and f"out_{v.fmt}" in self.pos and v.size <= 4096)
        if a is None:
            return None
        n = a.size
        reg = self.region(s, "out", "out", a.fmt, n, dist="sentinel", taint="exact" if a.exact else "approx")
        perm = _perm(n, s["mul"], s["add"], a.shape)
        mask = ti.lt_i(perm, ti.i_const(max(1, (3 * n) // 4))) if s.get("masked") else None
        ti.scatter(self.param("out", a.fmt), ti.add_i(perm, self.base_tile(reg)), a.tile, mask)
        return []

    # -- atomics ----------------------------------------------------------------------------------------------
    def b_atomic(self, s, scope):
        if self.in_if:
            return None
        mode = s["mode"]
        ok_fmts = ("i32", "i64") if mode not in ("addf", "xchg") else \
            (("f32", "f64", "f16") if mode == "addf" else ("i32", "i64", "f32", "f64"))
        collide = bool(s["collide"]) and mode != "xchg"
        a = self.get(scope, s["a"], lambda v: v.fmt in ok_fmts and v.shape and v.exact and f"out_{v.fmt}" in self.pos
                     and not (collide and v.fmt == "f16"))
        if a is None:
            return None
        n = a.size
        if collide:  # every block adds into one shared stretch; lanes i and i + m meet
            m = min(16, n)
            reg = self.region(s, "out", "out", a.fmt, m, shared=True,
                              dist="quarter" if mode == "addf" else "small")
            idx = ti.and_i(_perm(n, s["mul"], s["add"], a.shape), ti.i_const(m - 1))
        else:
            reg = self.region(s, "out", "out", a.fmt, n, dist="quarter" if mode == "addf" else "small")
            idx = _perm(n, s["mul"], s["add"], a.shape)
        v = _quarters(a.tile, a.fmt) if mode == "addf" and a.fmt != "f16" else a.tile
        old = ti.atomic_rmw(self.param("out", a.fmt), mode, ti.add_i(idx, self.base_tile(reg)), v)
        return [] if collide else [Val(old, a.fmt, a.shape, True, True)]

    def b_cas(self, s, scope):
        if self.in_if:
            return None
        a = self.get(scope, s["a"], lambda v: v.fmt in ("i32", "i64", "f32", "f64") and v.shape and v.raw
                     and v.exact and f"out_{v.fmt}" in self.pos)
        if a is None:
            return None
        n = a.size
        reg = self.region(s, "out", "out", a.fmt, n, dist="sentinel")
        p = self.param("out", a.fmt)
        idx = ti.add_i(_perm(n, s["mul"], s["add"], a.shape), self.base_tile(reg))
        cur = ti.gather(p, idx)  # what memory holds: half the lanes compare equal on purpose
        even = ti.eq_i(ti.and_i(ti.reshape(ti.arange(n), list(a.shape)), ti.i_const(1)), ti.i_const(0))
        old = ti.atomic_cas(p, idx, ti.select(even, cur, a.tile), a.tile)
        return [Val(old, a.fmt, a.shape, True, True)]

    def b_redview(self, s, scope):
        if self.in_if:
            return None
        a = self.get(scope, s["a"], lambda v: v.fmt in ("i32", "f32") and len(v.shape) == 2 and v.exact
                     and f"out_{v.fmt}" in self.pos)
        if a is None:
            return None
        mode = s["mode"] if a.fmt == "i32" else "addf"
        if a.fmt == "i32" and mode == "addf":
            mode = "add"
        gl = [max(1, g) for g in s["grid"]]
        tsh = [gl[0] * a.shape[0], gl[1] * a.shape[1]]
        reg = self.region(s, "out", "out", a.fmt, tsh[0] * tsh[1], shared=True,
                          dist="quarter" if mode == "addf" else "small")
        tv = ti.tensor_view(self.param("out", a.fmt), self.base(reg), tsh, [tsh[1], 1])
        v = _quarters(a.tile, a.fmt) if mode == "addf" else a.tile
        idx = [ti.idx_const(i % g) for i, g in zip(s["idx"], gl)]
        ti.atomic_red_view(ti.partition_view(tv, list(a.shape)), idx, mode, "device", v)
        return []

    # -- globals, allocas, prints, asserts, returns -------------------------------------------------------------
    def b_global(self, s, scope):
        if self.in_if:
            return None
        g = next((g for g in self.desc.get("globals", ()) if g["sym"] == s["sym"]), None)
        if g is None:
            return None
        n = min(int(s["n"]), len(g["values"]))
        n = 1 << (n.bit_length() - 1)
        ps = ti.ptr_offset(ti.global_ptrs(g["sym"], g["fmt"], [n]), ti.arange(n))
        return [Val(ti.load_ptrs(ps), g["fmt"], (n,))]

    def b_alloca(self, s, scope):
        if self.in_if:
            return None
        a = self.get(scope, s["a"], lambda v: v.fmt in ("f32", "i32", "f64", "i64") and v.shape and v.size <= 1024)
        if a is None:
            return None
        b = self.get(scope, s["b"], lambda v: v.fmt == a.fmt and v.shape == a.shape) or a
        n = a.size
        offs = ti.arange(n)
        p1 = ti.ptr_offset(ti.alloca_ptrs(a.fmt, n, 16, [n]), offs)
        p2 = ti.ptr_offset(ti.alloca_ptrs(a.fmt, n, 16, [n]), offs)
        ti.store_ptrs(p1, ti.reshape(a.tile, [n]) if a.shape != (n,) else a.tile)
        ti.store_ptrs(p2, ti.reshape(b.tile, [n]) if b.shape != (n,) else b.tile)
        r1, r2 = ti.load_ptrs(p1), ti.load_ptrs(p2)
        if a.shape != (n,):
            r1, r2 = ti.reshape(r1, list(a.shape)), ti.reshape(r2, list(a.shape))
        return [Val(r1, a.fmt, a.shape, a.exact, a.raw), Val(r2, a.fmt, a.shape, b.exact, b.raw)]

    def b_print(self, s, scope):
        if self.in_if:
            return None
        args, convs = [], []
        for k, ref in enumerate(s["args"]):
            v = self.get(scope, ref, lambda v: v.exact and v.fmt in ("i32", "f32", "f64"))
            if v is None:
                continue
            t = v.tile if not v.shape else ti.reshape(v.tile, [v.size])
            if v.fmt != "i32":  # a NaN prints as nan or -nan by its sign, which a computation chose: make it 0
                t = ti.select(ti.eq(t, t), t, ti.full([v.size] if v.shape else [], 0.0, v.fmt))
            if v.shape:
                t = ti.reduce_max(t, 0)
            args.append(t)
            convs.append("%d" if v.fmt == "i32" else s["conv"][k % len(s["conv"])])
        if not args:
            return None
        ti.d_print(f"fz{s['id']}: " + " ".join(convs) + "\n", args)
        return []

    def b_assert(self, s, scope):
        if "n" in s:  # generator 3: on input data of its own, the mark at lane ``lane`` when drawn to fire
            p = self.param("in", "i32")
            if p is None or self.in_if:
                return None
            n = int(s["n"])
            reg = self.region(s, "in", "in", "i32", n, dist=f"assert:{int(s['lane']) % n}" if s.get("fire") else
                              "assert")
            x = ti.load(p, self.base(reg), [n])
            ti.d_assert(ti.ne_i(x, ti.i_const(ASSERT_MARK)), f"fz{s['id']}")
            return []
        a = self.get(scope, s["a"], lambda v: v.exact and v.fmt == "i32" and v.shape)
        if a is None:
            return None
        if s.get("fire"):
            cond = ti.ne_i(a.tile, a.tile)
            self.const_fire = True
        else:
            cond = ti.ge_i(ti.and_i(a.tile, ti.i_const(255)), ti.i_const(0))
        ti.d_assert(cond, f"fz{s['id']}")
        return []

    def b_ret(self, s, scope):
        if self.depth or self.grid < 2:
            return None
        ti.d_return_if(ti.idx_eq(ti.block_id(0), ti.idx_const(int(s["k"]) % self.grid)))
        return []

    # -- control flow ----------------------------------------------------------------------------------------
    def carried(self, s, scope):
        vals = [self.get(scope, ref, lambda v: v.fmt != "i1" and v.size <= 4096) for ref in s["carries"]]
        vals = [v for v in vals if v is not None]
        seen, out = set(), []
        for v in vals:
            if id(v) not in seen:
                seen.add(id(v))
                out.append(v)
        return out

    def region_body(self, steps, scope, cs, vals, cid, sets):
        inner = dict(scope)
        for j, (c, v) in enumerate(zip(cs, vals)):
            inner[cid + j] = Val(ti.get(c), v.fmt, v.shape, v.exact, False)
        self.run(steps, inner)
        for j, (c, v) in enumerate(zip(cs, vals)):
            ref = sets[j] if j < len(sets) else None
            nv = self.get(inner, ref, lambda x, v=v: x.fmt == v.fmt and x.shape == v.shape and (x.exact or not v.exact))
            if ref is not None and nv is not None:
                ti.set(c, nv.tile)
        return inner

    def b_for(self, s, scope):
        vals = self.carried(s, scope)
        cs = [ti.carry(v.tile) for v in vals]
        lo, trips, st = int(s["lo"]), int(s["trips"]), int(s["step"])
        for iv in ti.d_range(lo, lo + trips * st, ti.By(st) if st != 1 else ti.One()):
            k = iv if lo == 0 and st == 1 else ti.idx_div(ti.idx_sub(iv, ti.idx_const(lo)), ti.idx_const(st))
            inner = dict(scope)
            inner[s["iv"]] = Val(ti.idx_as_tile(iv), "i32", ())
            self.loops.append((k, trips))
            self.depth += 1
            try:
                self.region_body(s["body"], inner, cs, vals, s["cid"], s["sets"])
            finally:
                self.loops.pop()
                self.depth -= 1
        return [Val(ti.get(c), v.fmt, v.shape, v.exact, False) for c, v in zip(cs, vals)] or []

    def b_while(self, s, scope):
        vals = self.carried(s, scope)
        cs = [ti.carry(v.tile) for v in vals]
        count = ti.carry(ti.i_const(0))
        brk = self.get(scope, s.get("brk"), lambda v: v.fmt == "i32" and v.exact and v.shape) \
            if s.get("brk") is not None else None

        def step():
            cur = ti.get(count)
            stop = ti.ge_i(cur, ti.i_const(int(s["trips"])))
            if brk is not None:  # a data-dependent exit after the first iteration
                big = ti.gt_i(ti.reduce_max(ti.reshape(brk.tile, [brk.size]), 0), ti.i_const(int(s["brk_at"])))
                stop = ti.or_mask(stop, ti.and_mask(ti.ge_i(cur, ti.i_const(1)), big))
            self.loops.append((None, 1))
            self.depth += 1
            try:
                self.region_body(s["body"], scope, cs, vals, s["cid"], s["sets"])
            finally:
                self.loops.pop()
                self.depth -= 1
            ti.set(count, ti.add_i(cur, ti.i_const(1)))
            return stop

        ti.d_loop(step)
        return [Val(ti.get(c), v.fmt, v.shape, v.exact, False) for c, v in zip(cs, vals)] or []

    def b_if(self, s, scope):
        vals = self.carried(s, scope)
        cs = [ti.carry(v.tile) for v in vals]
        cond = s["cond"]
        a = self.get(scope, cond.get("a"), lambda v: v.exact and v.fmt in ("i32", "f32") and v.shape) \
            if "a" in cond else None
        if a is not None:
            flat = ti.reshape(a.tile, [a.size]) if a.shape != (a.size,) else a.tile
            c = ti.lt_i(ti.reduce_sum(flat, 0), ti.i_const(int(cond["at"]))) if a.fmt == "i32" else \
                ti.lt(ti.reduce_max(flat, 0), ti.f_const("f32", float(cond["at"])))
        else:
            c = ti.idx_eq(ti.idx_rem(ti.block_id(0), ti.idx_const(2)), ti.idx_const(int(cond.get("block", 0))))

        def branch(steps, cid, sets):
            def run():
                self.in_if += 1
                self.depth += 1
                try:
                    self.region_body(steps, scope, cs, vals, cid, sets)
                finally:
                    self.in_if -= 1
                    self.depth -= 1
            return run

        ti.d_if(c, branch(s["then"], s["cid"], s["sets_then"]), branch(s["else"], s["cid_else"], s["sets_else"]))
        return [Val(ti.get(c_), v.fmt, v.shape, v.exact, False) for c_, v in zip(cs, vals)] or []

    # -- the online softmax of flash attention ---------------------------------------------------------------
    def b_softmax(self, s, scope):
        p = self.param("in", "f32")
        if p is None or self.depth:
            return None
        M, D, N, trips, fmt = int(s["M"]), int(s["D"]), int(s["N"]), int(s["trips"]), s["fmt"]
        rq = self.region(s, "q", "in", "f32", M * D)
        rk = self.region(s, "k", "in", "f32", D * N * max(1, trips))
        rv = self.region(s, "v", "in", "f32", N * D * max(1, trips))
        q = Val(ti.load(p, self.base(rq), [M, D]), "f32", (M, D))
        m = ti.carry(ti.full([M, 1], -math.inf, "f32"))
        l_ = ti.carry(ti.full([M, 1], 0.0, "f32"))
        acc = ti.carry(ti.full([M, D], 0.0, "f32"))
        scale = ti.f_const("f32", 1.0 / math.sqrt(D))
        for j in ti.d_range(0, trips):
            kt = Val(ti.load(p, ti.idx_add(self.base(rk), ti.idx_mul(j, ti.idx_const(D * N))), [D, N]), "f32", (D, N))
            v = Val(ti.load(p, ti.idx_add(self.base(rv), ti.idx_mul(j, ti.idx_const(N * D))), [N, D]), "f32", (N, D))
            sc = ti.mul(_product(q, kt, fmt), scale)
            mn = ti.max(ti.get(m), ti.reduce_max(sc, 1, True))
            pr = ti.exp(ti.sub(sc, ti.broadcast(mn, [M, N])))
            alpha = ti.exp(ti.sub(ti.get(m), mn))
            ti.set(l_, ti.add(ti.mul(ti.get(l_), alpha), ti.reduce_sum(pr, 1, True)))
            pv = _product(Val(pr, "f32", (M, N)), v, fmt)
            ti.set(acc, ti.add(ti.mul(ti.get(acc), ti.broadcast(alpha, [M, D])), pv))
            ti.set(m, mn)
        out = ti.div(ti.get(acc), ti.broadcast(ti.get(l_), [M, D]))
        return [Val(out, "f32", (M, D), False, False), Val(ti.get(l_), "f32", (M, 1), False, False)]


def _product(a: Val, b: Val, fmt: str):
    """a @ b in f32 with the products in ``fmt`` (tf32x3: 3xTF32, operands split hi + lo)."""
    m, n = a.shape[0], b.shape[1]
    zero = ti.full([m, n], 0.0, "f32")
    if fmt == "tf32x3":
        ah, al = split_tf32(a)
        bh, bl = split_tf32(b)
        return ti.mma(ah, bh, ti.mma(ah, bl, ti.mma(al, bh, zero)))
    return ti.mma(operand(a, fmt), operand(b, fmt), zero)


def _h(t) -> int:
    from tileir.surface._util import h

    return h(t)


__all__ = ["MemorySteps"]
