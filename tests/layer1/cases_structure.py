"""Layer-1 goldens: memory, control flow, tile shuffles, misc ops, views, mma."""

from __future__ import annotations

from tileir import ir
from tileir.ir import Val

from .build import B, P, T
from .common import (
    F8_REFUSED,
    INF,
    NAN,
    PRE_SM90,
    TARGETS,
    V13_1,
    V13_2,
    V13_3,
    V13_4,
    add,
    un,
    unsupported,
)

# ---- pointer memory operations ---------------------------------------------------------------

def _memory():
    f32, m = T((8,), "f32"), T((8,), "i1")
    pt = P((8,), "f32")

    def setup(name):
        b = B(name)
        p = b.ptrs("f32", (8,))
        mask = un(b, ir.CmpInt, None, "less_than", T((8,), "i32"), m, b.iota(8), b.ci(T((8,), "i32"), 5))
        return b, p, mask

    variants = {
        "plain": dict(mask=False, pad=False, tok=True),
        "no_token": dict(mask=False, pad=False, tok=False),
        "mask": dict(mask=True, pad=False, tok=True),
        "mask_pad": dict(mask=True, pad=True, tok=True),
        "mask_pad_no_token": dict(mask=True, pad=True, tok=False),
    }
    for vname, o in variants.items():
        b, p, mask = setup(f"load_store_{vname}")
        pad = b.cf(f32, -1.0) if o["pad"] else None
        tok = b.tok() if o["tok"] else None
        d, t = b.n(), b.n()
        b.emit(ir.LoadPtr(d, t, p, mask if o["mask"] else None, pad, tok, pt, m if o["mask"] else None, f32))
        b.emit(ir.StorePtr(b.n(), p, Val(d), mask if o["mask"] else None, Val(t) if o["tok"] else None, pt,
                           m if o["mask"] else None, f32))
        add(f"load_store_ptr_{vname}", b)

    for sem_l, sem_s, scope in (("relaxed", "relaxed", "device"), ("acquire", "release", "sys"),
                                ("acquire", "release", "tl_blk"), ("weak", "weak", None)):
        b, p, mask = setup("load_store_sem")
        d, t = b.n(), b.n()
        hints = (("sm_80", (("latency", 3),)), ("sm_100", (("allow_tma", False), ("latency", 7))))
        b.emit(ir.LoadPtr(d, t, p, None, None, b.tok(), pt, None, f32, sem=sem_l, scope=scope,
                          hints=hints if scope is None else ()))
        b.emit(ir.StorePtr(b.n(), p, Val(d), mask, Val(t), pt, m, f32, sem=sem_s, scope=scope,
                           hints=hints if scope is None else ()))
        add(f"load_store_ptr_{sem_l}_{scope or 'hints'}", b)

    modes = {"add": "i32", "and": "i32", "or": "i32", "xor": "i32", "max": "i32", "min": "i32",
             "umax": "i32", "umin": "i32", "xchg": "i32", "addf": "f32"}
    for mode, dtype in modes.items():
        b = B(f"rmw_{mode}")
        ty = T((8,), dtype)
        p = b.ptrs(dtype, (8,))
        v = b.load(ty)
        d, t = b.n(), b.n()
        b.emit(ir.AtomicRMWPtr(d, t, p, mode, v, None, b.tok(), P((8,), dtype), None, ty))
        b.sink(Val(d), ty)
        add(f"atomic_rmw_{mode}", b)
    for sem, scope, masked, tok in (("acq_rel", "sys", True, True), ("acquire", "tl_blk", True, False),
                                    ("release", "device", False, False)):
        b, p, mask = setup("rmw_sem")
        v = b.load(f32)
        d, t = b.n(), b.n()
        b.emit(ir.AtomicRMWPtr(d, t, p, "addf", v, mask if masked else None, b.tok() if tok else None, pt,
                               m if masked else None, f32, sem=sem, scope=scope))
        b.sink(Val(d), f32)
        add(f"atomic_rmw_{sem}_{scope}{'_mask' if masked else ''}{'_token' if tok else ''}", b)
    for masked, tok, sem, scope in ((False, True, "relaxed", "device"), (True, True, "acq_rel", "device"),
                                    (True, False, "acquire", "sys"), (False, False, "release", "tl_blk")):
        b = B("cas")
        i32 = T((8,), "i32")
        p = b.ptrs("i32", (8,))
        mask = un(b, ir.CmpInt, None, "less_than", i32, m, b.iota(8), b.ci(i32, 5))
        c, v = b.ci(i32, 0), b.iota(8)
        d, t = b.n(), b.n()
        b.emit(ir.AtomicCASPtr(d, t, p, c, v, mask if masked else None, b.tok() if tok else None, P((8,), "i32"),
                               m if masked else None, i32, sem=sem, scope=scope))
        b.sink(Val(d), i32)
        add(f"atomic_cas_{sem}_{scope}{'_mask' if masked else ''}{'_token' if tok else ''}", b)


# ---- control flow ----------------------------------------------------------------------------

def _control():
    i32, f32 = T((), "i32"), T((8,), "f32")

    b = B("for_plain")
    lo, hi, st = b.ci(i32, 0), b.ci(i32, 10), b.ci(i32, 1)
    iv = b.n()
    with b.region() as body:
        b.sink(Val(iv), i32)
        body.append(ir.Cont((), ()))
    b.emit(ir.ForLoop((), (), iv, lo, hi, st, False, (), (), tuple(body)))
    add("for_no_iter_values", b)

    b = B("for_iter")
    lo, hi, st = b.ci(i32, 0), b.ci(i32, 10), b.ci(i32, 2)
    x = b.load(f32)
    r0, r1, iv, c0, c1 = b.n(), b.n(), b.n(), b.n(), b.n()
    with b.region() as body:
        y = un(b, ir.FloatBin, None, "addf", f32, Val(c0), Val(c0))
        z = un(b, ir.AddInt, None, i32, Val(c1), Val(iv))
        body.append(ir.Cont((y, z), (f32, i32)))
    b.emit(ir.ForLoop((r0, r1), (f32, i32), iv, lo, hi, st, False, (x, lo), (c0, c1), tuple(body)))
    b.sink(Val(r0), f32)
    b.sink(Val(r1), i32)
    add("for_iter_values", b)

    b = B("for_unsigned")
    i64 = T((), "i64")
    lo, hi, st = b.ci(i64, 0), b.ci(i64, 10), b.ci(i64, 1)
    r, iv, c = b.n(), b.n(), b.n()
    with b.region() as body:
        z = un(b, ir.AddInt, None, i64, Val(c), Val(iv))
        body.append(ir.Cont((z,), (i64,)))
    b.emit(ir.ForLoop((r,), (i64,), iv, lo, hi, st, True, (lo,), (c,), tuple(body), iv_ty=i64))
    b.sink(Val(r), i64)
    add("for_unsigned_i64", b, since=V13_2)

    b = B("for_nested")
    lo, hi, st = b.ci(i32, 0), b.ci(i32, 4), b.ci(i32, 1)
    r, iv, c = b.n(), b.n(), b.n()
    with b.region() as body:
        r2, iv2, c2 = b.n(), b.n(), b.n()
        with b.region() as inner:
            k = b.ci(i32, 3)
            s = un(b, ir.MulInt, None, i32, Val(iv2), k)
            s = un(b, ir.AddInt, None, i32, Val(c2), s)
            inner.append(ir.Cont((s,), (i32,)))
        b.emit(ir.ForLoop((r2,), (i32,), iv2, lo, hi, st, False, (Val(c),), (c2,), tuple(inner)))
        k2 = b.ci(i32, 3)
        s2 = un(b, ir.AddInt, None, i32, Val(r2), k2)
        body.append(ir.Cont((s2,), (i32,)))
    b.emit(ir.ForLoop((r,), (i32,), iv, lo, hi, st, False, (lo,), (c,), tuple(body)))
    r3, iv3 = b.n(), b.n()
    with b.region() as body3:
        b.sink(Val(iv3), i32)
        body3.append(ir.Cont((), ()))
    b.emit(ir.ForLoop((), (), iv3, lo, Val(r), st, False, (), (), tuple(body3)))
    del r3
    b.sink(Val(r), i32)
    add("for_nested_naming", b)

    b = B("loop_break")
    x = b.ci(i32, 0)
    r, c = b.n(), b.n()
    with b.region() as body:
        one = b.ci(i32, 1)
        nxt = un(b, ir.AddInt, None, i32, Val(c), one)
        lim = b.ci(i32, 10)
        done = un(b, ir.CmpInt, None, "greater_than", i32, T((), "i1"), nxt, lim)
        with b.region() as then:
            then.append(ir.BreakVals((nxt,), (i32,)))
        with b.region() as els:
            els.append(ir.YieldVals((), ()))
        b.emit(ir.IfElse((), (), done, T((), "i1"), tuple(then), tuple(els)))
        body.append(ir.Cont((nxt,), (i32,)))
    b.emit(ir.WhileLoop((r,), (i32,), (x,), (c,), tuple(body)))
    b.sink(Val(r), i32)
    add("loop_break_continue", b)

    b = B("loop_plain")
    with b.region() as body:
        b.sink(b.ci(i32, 5), i32)
        body.append(ir.BreakVals((), ()))
    b.emit(ir.WhileLoop((), (), (), (), tuple(body)))
    add("loop_no_values", b)

    b = B("loop_result_only")
    r = b.n()
    with b.region() as body:
        v = b.cf(f32, 2.0)
        body.append(ir.BreakVals((v,), (f32,)))
    b.emit(ir.WhileLoop((r,), (f32,), (), (), tuple(body), carried_tys=()))
    b.sink(Val(r), f32)
    add("loop_results_differ", b)

    # names across nested and sibling regions: argN continues from the enclosing region's count,
    # reduce_lhs is reused by siblings and uniqued by a nested copy, suffixes share one counter
    b = B("naming")
    f = T((8,), "f32")
    x = b.load(f)

    def reduce_max(b, src):
        a0, a1 = b.n(), b.n()
        with b.region() as body:
            m = un(b, ir.FloatBin, None, "maxf", T((), "f32"), Val(a0), Val(a1))
            body.append(ir.YieldVals((m,), (T((), "f32"),)))
        r = b.n()
        b.emit(ir.ReduceTile((r,), (T((), "f32"),), 0, (ir.IdF("f32", -INF),), (src,), (f,), (a0, a1),
                             tuple(body)))
        return Val(r)

    r1 = reduce_max(b, x)
    lo, hi, st = b.ci(i32, 0), b.ci(i32, 3), b.ci(i32, 1)
    res, iv, c = b.n(), b.n(), b.n()
    with b.region() as body:
        w, wc = b.n(), b.n()
        with b.region() as wbody:
            r2 = reduce_max(b, x)
            a0, a1 = b.n(), b.n()
            with b.region() as nested:
                inner = reduce_max(b, x)
                s2 = un(b, ir.FloatBin, None, "addf", T((), "f32"), Val(a0), inner)
                nested.append(ir.YieldVals((s2,), (T((), "f32"),)))
            r3 = b.n()
            b.emit(ir.ReduceTile((r3,), (T((), "f32"),), 0, (ir.IdF("f32", 0.0),), (x,), (f,), (a0, a1),
                                 tuple(nested)))
            s = un(b, ir.FloatBin, None, "addf", T((), "f32"), Val(wc), r2)
            s = un(b, ir.FloatBin, None, "addf", T((), "f32"), s, Val(r3))
            wbody.append(ir.BreakVals((s,), (T((), "f32"),)))
        b.emit(ir.WhileLoop((w,), (T((), "f32"),), (Val(c),), (wc,), tuple(wbody)))
        body.append(ir.Cont((Val(w),), (T((), "f32"),)))
    b.emit(ir.ForLoop((res,), (T((), "f32"),), iv, lo, hi, st, False, (r1,), (c,), tuple(body)))
    r4 = reduce_max(b, x)
    b.sink(un(b, ir.FloatBin, None, "addf", T((), "f32"), Val(res), r4), T((), "f32"))
    add("naming_nested_regions", b)

    b = B("if_plain")
    c = un(b, ir.CmpInt, None, "less_than", i32, T((), "i1"), b.ci(i32, 1), b.ci(i32, 2))
    with b.region() as then:
        b.sink(b.ci(i32, 7), i32)
        then.append(ir.YieldVals((), ()))
    b.emit(ir.IfElse((), (), c, T((), "i1"), tuple(then), ()))
    add("if_no_else", b)

    b = B("if_else")
    c = un(b, ir.CmpInt, None, "less_than", i32, T((), "i1"), b.ci(i32, 1), b.ci(i32, 2))
    with b.region() as then:
        b.sink(b.ci(i32, 7), i32)
        then.append(ir.YieldVals((), ()))
    with b.region() as els:
        b.sink(b.ci(i32, 8), i32)
        els.append(ir.YieldVals((), ()))
    b.emit(ir.IfElse((), (), c, T((), "i1"), tuple(then), tuple(els)))
    add("if_else_no_results", b)

    b = B("if_empty_else")
    c = un(b, ir.CmpInt, None, "less_than", i32, T((), "i1"), b.ci(i32, 1), b.ci(i32, 2))
    with b.region() as then:
        b.sink(b.ci(i32, 7), i32)
        then.append(ir.YieldVals((), ()))
    b.emit(ir.IfElse((), (), c, T((), "i1"), tuple(then), (ir.YieldVals((), ()),)))
    add("if_empty_else", b)

    b = B("if_results")
    c = un(b, ir.CmpInt, None, "less_than", i32, T((), "i1"), b.ci(i32, 1), b.ci(i32, 2))
    r0, r1 = b.n(), b.n()
    with b.region() as then:
        a = b.ci(i32, 7)
        then.append(ir.YieldVals((a, b.cf(f32, 1.0)), (i32, f32)))
    with b.region() as els:
        a2 = b.ci(i32, 8)
        with b.region() as inner_t:
            inner_t.append(ir.YieldVals((b.ci(i32, 9),), (i32,)))
        with b.region() as inner_e:
            inner_e.append(ir.YieldVals((a2,), (i32,)))
        r2 = b.n()
        b.emit(ir.IfElse((r2,), (i32,), c, T((), "i1"), tuple(inner_t), tuple(inner_e)))
        els.append(ir.YieldVals((Val(r2), b.cf(f32, 2.0)), (i32, f32)))
    b.emit(ir.IfElse((r0, r1), (i32, f32), c, T((), "i1"), tuple(then), tuple(els)))
    b.sink(Val(r0), i32)
    b.sink(Val(r1), f32)
    add("if_results_nested", b)

    # reduce / scan
    for kind in ("reduce", "scan"):
        for two in (False, True):
            for rev in ((False, True) if kind == "scan" else (False,)):
                b = B(f"{kind}")
                x = b.load(T((8, 4), "f32"))
                y = b.load(T((8, 4), "i32"))
                a0, a1 = b.n(), b.n()
                ops = [x]
                tys = [T((8, 4), "f32")]
                ids = [ir.IdF("f32", -INF if kind == "reduce" else 0.0)]
                args = [a0, a1]
                with b.region() as body:
                    s = un(b, ir.FloatBin, None, "maxf" if kind == "reduce" else "addf", T((), "f32"),
                           Val(a0), Val(a1))
                    yv, yt = [s], [T((), "f32")]
                    if two:
                        a2, a3 = b.n(), b.n()
                        args += [a2, a3]
                        s2 = un(b, ir.IntBin, None, "addi", T((), "i32"), Val(a2), Val(a3))
                        yv.append(s2)
                        yt.append(T((), "i32"))
                    body.append(ir.YieldVals(tuple(yv), tuple(yt)))
                if two:
                    ops.append(y)
                    tys.append(T((8, 4), "i32"))
                    ids.append(ir.IdI("i32", 0))
                out_ty = (lambda t: T((4,), t.elem.name)) if kind == "reduce" else (lambda t: t)
                res = [b.n() for _ in ops]
                if kind == "reduce":
                    b.emit(ir.ReduceTile(tuple(res), tuple(out_ty(t) for t in tys), 0, tuple(ids), tuple(ops),
                                         tuple(tys), tuple(args), tuple(body)))
                else:
                    b.emit(ir.ScanTile(tuple(res), tuple(out_ty(t) for t in tys), 1, rev, tuple(ids), tuple(ops),
                                       tuple(tys), tuple(args), tuple(body)))
                for r, t in zip(res, tys):
                    b.sink(Val(r), out_ty(t))
                add(f"{kind}_{'two' if two else 'one'}{'_reverse' if rev else ''}", b)

    b = B("reduce_ids")
    for dtype, ident in (("i8", ir.IdI("i8", -128)), ("i64", ir.IdI("i64", -1)), ("f16", ir.IdF("f16", INF)),
                         ("bf16", ir.IdF("bf16", 0.1)), ("f64", ir.IdF("f64", -0.0)), ("i1", ir.IdI("i1", 1))):
        t = T((8,), dtype)
        x = b.load(t) if dtype != "i1" else b.ci(t, (1, 0, 1, 1, 1, 1, 1, 1))
        a0, a1 = b.n(), b.n()
        with b.region() as body:
            if dtype[0] != "i":
                s = un(b, ir.FloatBin, None, "maxf", T((), dtype), Val(a0), Val(a1))
            else:
                s = un(b, ir.IntBin, None, "andi", T((), dtype), Val(a0), Val(a1))
            body.append(ir.YieldVals((s,), (T((), dtype),)))
        r = b.n()
        b.emit(ir.ReduceTile((r,), (T((), dtype),), 0, (ident,), (x,), (t,), (a0, a1), tuple(body)))
        b.sink(Val(r), T((), dtype))
    add("reduce_identities", b)

    # identities whose wire form is special: tf32's 19-bit pattern, one-byte f8 patterns, NaN, a
    # wrapped i16. tileiras compiles no reduction over tf32 or f8 tiles (on any target).
    groups = {
        "reduce_identities_narrow": (((("f32", ir.IdF("f32", NAN)), ("i16", ir.IdI("i16", 65535)),
                                        ("i32", ir.IdI("i32", -5)))), {}),
        "reduce_identity_tf32": (((("tf32", ir.IdF("tf32", 0.1)),)),
                                 {t: "failed to compile Tile IR program" for t in TARGETS}),
        "reduce_identities_f8": (((("f8E4M3FN", ir.IdF("f8E4M3FN", -448.0)), ("f8E5M2", ir.IdF("f8E5M2", -INF)))),
                                 {**{t: "failed to compile Tile IR program" for t in TARGETS},
                                  **unsupported("f8E4M3FN", PRE_SM90)}),
    }
    for name, (idents, refused) in groups.items():
        b = B(name)
        for dtype, ident in idents:
            t = T((8,), dtype)
            x = b.load(t)
            a0, a1 = b.n(), b.n()
            r = b.n()
            b.emit(ir.ReduceTile((r,), (T((), dtype),), 0, (ident,), (x,), (t,), (a0, a1),
                                 (ir.YieldVals((Val(a1),), (T((), dtype),)),)))
            b.sink(Val(r), T((), dtype))
        add(name, b, refused_on=refused)


# ---- tiles: extract insert cat permute -------------------------------------------------------

def _tiles():
    b = B("extract_cat_permute")
    x = b.load(T((8, 4), "f32"))
    i, j = b.ci("i32", 1), b.ci("i32", 0)
    e = un(b, ir.ExtractTile, None, x, T((8, 4), "f32"), T((4, 4), "f32"), (i, j))
    b.sink(e, T((4, 4), "f32"))
    c = un(b, ir.CatTile, None, 0, e, e, T((4, 4), "f32"), T((4, 4), "f32"), T((8, 4), "f32"))
    b.sink(c, T((8, 4), "f32"))
    c1 = un(b, ir.CatTile, None, 1, e, e, T((4, 4), "f32"), T((4, 4), "f32"), T((4, 8), "f32"))
    b.sink(c1, T((4, 8), "f32"))
    p = un(b, ir.PermuteTile, None, x, (1, 0), T((8, 4), "f32"), T((4, 8), "f32"))
    b.sink(p, T((4, 8), "f32"))
    y = b.load(T((2, 4, 8), "i32"))
    p3 = un(b, ir.PermuteTile, None, y, (2, 0, 1), T((2, 4, 8), "i32"), T((8, 2, 4), "i32"))
    b.sink(p3, T((8, 2, 4), "i32"))
    add("extract_cat_permute", b)

    b = B("insert")
    x = b.load(T((8, 4), "f32"))
    s = b.load(T((4, 4), "f32"))
    i, j = b.ci("i32", 1), b.ci("i32", 0)
    r = un(b, ir.InsertTile, None, s, x, T((4, 4), "f32"), T((8, 4), "f32"), (i, j))
    b.sink(r, T((8, 4), "f32"))
    add("insert", b, since=V13_4)


# ---- misc: assert assume print tokens globals alloca hints ------------------------------------

def _misc():
    b = B("assert")
    c = un(b, ir.CmpInt, None, "less_than", T((8,), "i32"), T((8,), "i1"), b.iota(8), b.ci(T((8,), "i32"), 9))
    b.emit(ir.AssertTile(c, T((8,), "i1"), 'lane out of range: "x" \\ \n\t'))
    c0 = b.ci(T((), "i1"), 1)
    b.emit(ir.AssertTile(c0, T((), "i1"), "ok"))
    add("assert", b)

    b = B("assume")
    p = b.ptr("f32")
    a1 = un(b, ir.AssumeTile, None, p, ir.DivBy(16), P((), "f32"))
    i = b.iota(8)
    a2 = un(b, ir.AssumeTile, None, i, ir.DivBy(8, 4, 0), T((8,), "i32"))
    a3 = un(b, ir.AssumeTile, None, a2, ir.SameElements((4,)), T((8,), "i32"))
    a4 = un(b, ir.AssumeTile, None, a3, ir.Bounded(0, None), T((8,), "i32"))
    a5 = un(b, ir.AssumeTile, None, a4, ir.Bounded(None, 100), T((8,), "i32"))
    a6 = un(b, ir.AssumeTile, None, a5, ir.Bounded(-4, 7), T((8,), "i32"))
    k = b.ci(T((8,), "i32"), 4)
    a7 = un(b, ir.AssumeTile, None, k, ir.DivBy(4), T((8,), "i32"))
    s = un(b, ir.AddInt, None, T((8,), "i32"), a6, a7)
    a8 = un(b, ir.AssumeTile, None, s, ir.Bounded(None, None), T((8,), "i32"))
    r = b.reshape(a8, T((8,), "i32"), T((2, 4), "i32"))
    a9 = un(b, ir.AssumeTile, None, r, ir.SameElements((1, 2)), T((2, 4), "i32"))
    b.sink(a9, T((2, 4), "i32"))
    pp = b.splat(a1, ir.PtrTo("f32"), (8,))
    b.emit(ir.StorePtr(b.n(), pp, b.cf(T((8,), "f32"), 0.0), None, b.tok(), P((8,), "f32"), None, T((8,), "f32")))
    add("assume", b)

    b = B("print")
    x = b.load(T((8,), "f32"))
    n = b.ci("i32", 3)
    t1 = un(b, ir.PrintTile, None, "no args\n", (), T((), "i32"), None)
    t2 = un(b, ir.PrintTile, None, "x=%f n=%d", (x, n), T((8,), "f32"), t1, arg_tys=(T((8,), "f32"), T((), "i32")))
    t3 = un(b, ir.PrintTile, None, "n=%d", (n,), T((), "i32"), t2)
    del t3
    add("print_tko", b, since=V13_2)
    b = B("print_token_used")
    t1 = un(b, ir.PrintTile, None, "first", (), T((), "i32"), None)
    j = un(b, ir.JoinTokens, None, (b.tok(), t1))
    b.emit(ir.StorePtr(b.n(), b.ptr("i32"), b.ci("i32", 1), None, j, P((), "i32"), None, T((), "i32")))
    add("print_token_result_used", b, since=V13_2)

    b = B("print_legacy")
    n = b.ci("i32", 3)
    un(b, ir.PrintTile, None, "n=%d %d", (n, n), T((), "i32"), None)
    un(b, ir.PrintTile, None, "plain", (), T((), "i32"), None)
    b.sink(b.ci("i32", 4), T((), "i32"))
    add("print_untokened", b)

    b = B("gdc")
    t = b.tok()
    t1 = un(b, ir.TokenOnlyTile, None, "gdc_wait_tko", None)
    t2 = un(b, ir.TokenOnlyTile, None, "gdc_launch_dependents_tko", t1)
    t3 = un(b, ir.TokenOnlyTile, None, "memory_fence_alias_tko", t2)
    t4 = un(b, ir.TokenOnlyTile, None, "gdc_wait_tko", t)
    t5 = un(b, ir.TokenOnlyTile, None, "gdc_launch_dependents_tko", None)
    j = un(b, ir.JoinTokens, None, (t3, t4, t5))
    b.emit(ir.StorePtr(b.n(), b.ptr("i32"), b.ci("i32", 1), None, j, P((), "i32"), None, T((), "i32")))
    add("gdc_and_fence_tokens", b, since=V13_4)

    b = B("globals")
    b.globals = [ir.Global("table", "f32", (1.0, 2.5, -0.0, 0.1)), ir.Global("one", "i32", (7,), align=16),
                 ir.Global("g_i64", "i64", (1, -2))]
    for sym, dt in (("table", "f32"), ("one", "i32"), ("g_i64", "i64")):
        g = un(b, ir.GetGlobalPtr, None, sym, P((), dt))
        d, t = b.n(), b.n()
        b.emit(ir.LoadPtr(d, t, g, None, None, b.tok(), P((), dt), None, T((), dt)))
        b.sink(Val(d), T((), dt))
    add("globals_get_global", b)
    b = B("globals_late")
    b.globals = [ir.Global("ro", "f16", (1.0, 2.0), constant=True),
                 ir.Global("hidden", "i32", (5, 6, 7, 8), align=8, private=True),
                 ir.Global("both", "i8", (1,), private=True, constant=True)]
    for sym, dt in (("ro", "f16"), ("hidden", "i32"), ("both", "i8")):
        g = un(b, ir.GetGlobalPtr, None, sym, P((), dt))
        d, t = b.n(), b.n()
        b.emit(ir.LoadPtr(d, t, g, None, None, b.tok(), P((), dt), None, T((), dt)))
        b.sink(Val(d), T((), dt))
    add("globals_private_constant", b, since=V13_3)

    b = B("alloca")
    a = un(b, ir.AllocaPtr, None, 64, 128, False, P((), "f32"))
    g = un(b, ir.AllocaPtr, None, 16, 16, True, P((), "i32"))
    b.emit(ir.StorePtr(b.n(), a, b.cf("f32", 1.0), None, b.tok(), P((), "f32"), None, T((), "f32")))
    b.emit(ir.StorePtr(b.n(), g, b.ci("i32", 1), None, b.tok(), P((), "i32"), None, T((), "i32")))
    add("alloca", b, since=V13_3)

    b = B("entry_hints")
    b.hints = (("sm_90", (("num_cta_in_cga", 2), ("occupancy", 1))), ("sm_100", (("occupancy", 2),)),
               ("sm_80", (("occupancy", 4),)))
    b.sink(b.ci("i32", 1), T((), "i32"))
    add("entry_hints", b)

    b = B("producer")
    b.producer = "tileir layer-1 tests"
    b.sink(b.ci("i32", 1), T((), "i32"))
    add("producer", b, since=V13_3)

    b = B("no_params")
    add("entry_without_params", b)

    b = B("global_hex")
    b.globals = [ir.Global("big", "i16", tuple(range(-60, 68)))]
    g = un(b, ir.GetGlobalPtr, None, "big", P((), "i16"))
    d, t = b.n(), b.n()
    b.emit(ir.LoadPtr(d, t, g, None, None, b.tok(), P((), "i16"), None, T((), "i16")))
    b.sink(Val(d), T((), "i16"))
    add("global_large_hex", b)

    b = B("value_params")
    x = b.param("f32", by_ptr=False)
    n = b.param("i64", by_ptr=False)
    b.sink(x, T((), "f32"))
    b.sink(n, T((), "i64"))
    add("by_value_params", b)

    # symbols MLIR must quote: the text is right, but tileiras cannot make a PTX name of them
    b = B("name with space")
    b.globals = [ir.Global("g 1", "i32", (3,)), ir.Global("g.2$", "i32", (4,)), ir.Global("3g", "i32", (5,))]
    for sym in ("g 1", "g.2$", "3g"):
        g = un(b, ir.GetGlobalPtr, None, sym, P((), "i32"))
        b.emit(ir.StorePtr(b.n(), g, b.ci("i32", 1), None, b.tok(), P((), "i32"), None, T((), "i32")))
    add("quoted_symbols", b, refused_on={t: "failed to compile Tile IR program" for t in TARGETS})


# ---- views -----------------------------------------------------------------------------------

def _views():
    i32 = T((), "i32")
    tv = ir.TensorView(ir.Num("f32"), (64, 32), (32, 1))

    def loadstore(b, view, vty, tile_ty, idx, **kw):
        d, t = b.n(), b.n()
        b.emit(ir.LoadViewTile(d, t, view, vty, tuple(idx), (i32,) * len(idx), tile_ty, b.tok(), **kw.get("l", {})))
        tok = None if kw.get("store_untokened") else Val(t)
        b.emit(ir.StoreViewTile(b.n(), view, vty, Val(d), tile_ty, tuple(idx), (i32,) * len(idx), tok,
                                **kw.get("s", {})))

    b = B("tensor_view_static")
    p = b.ptr("f32")
    v = un(b, ir.MakeTensorView, None, p, P((), "f32"), tv, (), (), i32)
    pv_ty = ir.PartitionView((16, 8), ir.Num("f32"), (64, 32), (32, 1), (0, 1))
    pv = un(b, ir.MakePartitionView, None, v, tv, pv_ty)
    x, y = b.ci(i32, 1), b.ci(i32, 2)
    loadstore(b, pv, pv_ty, T((16, 8), "f32"), (x, y))
    add("tensor_view_partition_view", b)

    b = B("tensor_view_dynamic")
    p = b.ptr("f16")
    n = b.param("i64", by_ptr=False)
    dtv = ir.TensorView(ir.Num("f16"), (ir.DYN_DIM, 32), (ir.DYN_DIM, 1))
    v = un(b, ir.MakeTensorView, None, p, P((), "f16"), dtv, (n,), (n,), T((), "i64"))
    shp = [b.n(), b.n()]
    b.emit(ir.GetTensorShape(tuple(shp), v, dtv, T((), "i64")))
    b.sink(Val(shp[0]), T((), "i64"))
    b.sink(Val(shp[1]), T((), "i64"))
    for pad in (ir.NoPadding, ir.PadZero, ir.PadNegZero, ir.PadNan, ir.PadPosInf, ir.PadNegInf):
        pvt = ir.PartitionView((8, 16), ir.Num("f16"), (ir.DYN_DIM, 32), (ir.DYN_DIM, 1), (1, 0), pad)
        pv = un(b, ir.MakePartitionView, None, v, dtv, pvt)
        sh = [b.n(), b.n()]
        b.emit(ir.GetIndexSpaceShape(tuple(sh), pv, pvt, i32))
        d, t = b.n(), b.n()
        b.emit(ir.LoadViewTile(d, t, pv, pvt, (Val(sh[0]), Val(sh[1])), (i32, i32), T((8, 16), "f16"), b.tok()))
        b.sink(Val(d), T((8, 16), "f16"))
    add("tensor_view_dynamic_padding_dim_map", b)

    b = B("tensor_view_dyn_i32")
    p = b.ptr("i32")
    n, m = b.param("i32", by_ptr=False), b.param("i32", by_ptr=False)
    dtv = ir.TensorView(ir.Num("i32"), (ir.DYN_DIM, ir.DYN_DIM), (ir.DYN_DIM, 1))
    v = un(b, ir.MakeTensorView, None, p, P((), "i32"), dtv, (n, m), (m,), i32)
    tv0 = ir.TensorView(ir.Num("i32"), (), ())
    v0 = un(b, ir.MakeTensorView, None, p, P((), "i32"), tv0, (), (), i32)
    del v0
    pvt = ir.PartitionView((4, 4), ir.Num("i32"), dtv.shape, dtv.strides, (0, 1))
    pv = un(b, ir.MakePartitionView, None, v, dtv, pvt)
    x64 = b.ci(T((), "i64"), 1)
    d, t = b.n(), b.n()
    b.emit(ir.LoadViewTile(d, t, pv, pvt, (x64, x64), (T((), "i64"),) * 2, T((4, 4), "i32"), None))
    b.sink(Val(d), T((4, 4), "i32"))
    add("tensor_view_dynamic_i32_i64_index", b)

    for sem_l, sem_s, scope in (("relaxed", "relaxed", "device"), ("acquire", "release", "tl_blk"),
                                ("acquire", "relaxed", "sys")):
        b = B("view_sem")
        p = b.ptr("f32")
        v = un(b, ir.MakeTensorView, None, p, P((), "f32"), tv, (), (), i32)
        pv_ty = ir.PartitionView((16, 8), ir.Num("f32"), (64, 32), (32, 1), (0, 1))
        pv = un(b, ir.MakePartitionView, None, v, tv, pv_ty)
        x = b.ci(i32, 0)
        loadstore(b, pv, pv_ty, T((16, 8), "f32"), (x, x), l=dict(sem=sem_l, scope=scope),
                  s=dict(sem=sem_s, scope=scope), store_untokened=scope == "sys")
        add(f"view_load_store_{sem_l}_{scope}", b)

    b = B("view_hints")
    p = b.ptr("f32")
    v = un(b, ir.MakeTensorView, None, p, P((), "f32"), tv, (), (), i32)
    pv_ty = ir.PartitionView((16, 8), ir.Num("f32"), (64, 32), (32, 1), (0, 1))
    pv = un(b, ir.MakePartitionView, None, v, tv, pv_ty)
    x = b.ci(i32, 0)
    h = (("sm_90", (("allow_tma", False), ("latency", 2))),)
    loadstore(b, pv, pv_ty, T((16, 8), "f32"), (x, x), l=dict(hints=h), s=dict(hints=h))
    add("view_load_store_hints", b)

    b = B("view_inbounds")
    p = b.ptr("f32")
    v = un(b, ir.MakeTensorView, None, p, P((), "f32"), tv, (), (), i32)
    pv_ty = ir.PartitionView((16, 8), ir.Num("f32"), (64, 32), (32, 1), (0, 1))
    pv = un(b, ir.MakePartitionView, None, v, tv, pv_ty)
    x = b.ci(i32, 0)
    loadstore(b, pv, pv_ty, T((16, 8), "f32"), (x, x), l=dict(inbounds=(True, False)),
              s=dict(inbounds=(True, True)))
    add("view_load_store_inbounds", b, since=V13_4)

    b = B("view_inbounds_false")
    p = b.ptr("f32")
    v = un(b, ir.MakeTensorView, None, p, P((), "f32"), tv, (), (), i32)
    pv_ty = ir.PartitionView((16, 8), ir.Num("f32"), (64, 32), (32, 1), (0, 1))
    pv = un(b, ir.MakePartitionView, None, v, tv, pv_ty)
    x = b.ci(i32, 0)
    loadstore(b, pv, pv_ty, T((16, 8), "f32"), (x, x), l=dict(inbounds=(False, False)),
              s=dict(inbounds=(False, False)))
    add("view_load_store_inbounds_all_false", b)

    b = B("strided")
    p = b.ptr("f32")
    v = un(b, ir.MakeTensorView, None, p, P((), "f32"), tv, (), (), i32)
    for pad, dm in ((ir.NoPadding, (0, 1)), (ir.PadNan, (1, 0))):
        sv_ty = ir.StridedView((8, 8), (16, 4), ir.Num("f32"), (64, 32), (32, 1), dm, pad)
        sv = un(b, ir.MakeStridedView, None, v, tv, sv_ty)
        sh = [b.n(), b.n()]
        b.emit(ir.GetIndexSpaceShape(tuple(sh), sv, sv_ty, i32))
        x = b.ci(i32, 0)
        loadstore(b, sv, sv_ty, T((8, 8), "f32"), (x, Val(sh[1])))
    add("strided_view", b, since=V13_3)

    b = B("gather_scatter")
    p = b.ptr("f32")
    v = un(b, ir.MakeTensorView, None, p, P((), "f32"), tv, (), (), i32)
    for pad, sd in ((ir.NoPadding, 0), (ir.PadZero, 1)):
        gv_ty = ir.GatherScatterView((8, 8) if sd == 0 else (8, 8), ir.Num("f32"), (64, 32), (32, 1), sd, pad)
        gv = un(b, ir.MakeGatherScatterView, None, v, tv, gv_ty)
        idx = b.iota(8)
        x = b.ci(i32, 0)
        ix = (idx, x) if sd == 0 else (x, idx)
        it = (T((8,), "i32"), i32) if sd == 0 else (i32, T((8,), "i32"))
        d, t = b.n(), b.n()
        b.emit(ir.LoadViewTile(d, t, gv, gv_ty, ix, it, T((8, 8), "f32"), b.tok()))
        b.emit(ir.StoreViewTile(b.n(), gv, gv_ty, Val(d), T((8, 8), "f32"), ix, it, Val(t)))
    add("gather_scatter_view", b, since=V13_3)

    # the verifier allows relaxed only, tl_blk or device, and every mode but xchg
    for mode, dtype, scope, tok in (("add", "i32", "device", True), ("addf", "f32", "tl_blk", False),
                                    ("max", "i32", "device", False), ("umin", "i32", "device", True),
                                    ("and", "i32", "tl_blk", True), ("or", "i32", "device", True),
                                    ("xor", "i32", "device", True), ("min", "i32", "device", True),
                                    ("umax", "i32", "device", True)):
        b = B("red_view")
        p = b.ptr(dtype)
        tvd = ir.TensorView(ir.Num(dtype), (64, 32), (32, 1))
        v = un(b, ir.MakeTensorView, None, p, P((), dtype), tvd, (), (), i32)
        pv_ty = ir.PartitionView((16, 8), ir.Num(dtype), (64, 32), (32, 1), (0, 1))
        pv = un(b, ir.MakePartitionView, None, v, tvd, pv_ty)
        x = b.ci(i32, 1)
        val = b.load(T((16, 8), dtype))
        b.emit(ir.AtomicRedViewTile(b.n(), pv, pv_ty, val, T((16, 8), dtype), (x, x), (i32, i32), mode, scope,
                                    b.tok() if tok else None))
        add(f"atomic_red_view_{mode}_{scope}{'_token' if tok else ''}", b, since=V13_3)


# ---- mma -------------------------------------------------------------------------------------

def _mma():
    def mma(name, a_dt, acc_dt, m=16, n=16, k=16, since=V13_1, fast=False):
        b = B(name)
        at, bt, ct = T((m, k), a_dt), T((k, n), a_dt), T((m, n), acc_dt)
        a, bb, c = b.load(at), b.load(bt), b.load(ct)
        r = un(b, ir.FloatMma, None, ct, at, bt, a, bb, c, fast_acc=fast)
        b.sink(r, ct)
        add(name, b, since=since, refused_on=unsupported(a_dt, F8_REFUSED.get(a_dt, ())))

    mma("mmaf_f16_f32", "f16", "f32")
    mma("mmaf_f16_f16", "f16", "f16")
    mma("mmaf_bf16_f32", "bf16", "f32")
    mma("mmaf_tf32_f32", "tf32", "f32", k=8)
    mma("mmaf_f32_f32", "f32", "f32", k=8)
    mma("mmaf_f64_f64", "f64", "f64", m=8, n=8, k=4)
    mma("mmaf_f8e4m3_f32", "f8E4M3FN", "f32", k=32)
    mma("mmaf_f8e5m2_f16", "f8E5M2", "f16", k=32)
    mma("mmaf_fast_acc", "f8E4M3FN", "f32", k=32, since=V13_3, fast=True)

    for sl, sr in ((True, True), (False, True), (True, False), (False, False)):
        b = B("mmai")
        at, bt, ct = T((16, 32), "i8"), T((32, 16), "i8"), T((16, 16), "i32")
        a, bb, c = b.load(at), b.load(bt), b.load(ct)
        r = un(b, ir.IntMma, None, ct, at, bt, a, bb, c, signed_lhs=sl, signed_rhs=sr)
        b.sink(r, ct)
        add(f"mmai_{'s' if sl else 'u'}{'s' if sr else 'u'}", b)

    for a_dt, s_dt, k, blk in (("f8E4M3FN", "f8E8M0FNU", 64, 32), ("f4E2M1FN", "f8E8M0FNU", 64, 32),
                               ("f4E2M1FN", "f8E4M3FN", 64, 16), ("f8E5M2", "f8E8M0FNU", 64, 32)):
        b = B("mmaf_scaled")
        m = n = 16
        at, bt, ct = T((m, k), a_dt), T((k, n), a_dt), T((m, n), "f32")
        st_l, st_r = T((m, k // blk), s_dt), T((k // blk, n), s_dt)
        a, bb, c = b.load(at) if a_dt[1] != "4" else b.cf(at, 1.0), None, b.load(ct)
        bb = b.load(bt) if a_dt[1] != "4" else b.cf(bt, 0.5)
        sl, sr = b.cf(st_l, 1.0), b.cf(st_r, 2.0)
        r = un(b, ir.FloatMmaScaled, None, ct, at, bt, st_l, st_r, a, bb, c, sl, sr)
        b.sink(r, ct)
        refused = unsupported(s_dt, F8_REFUSED[s_dt])
        refused.update(unsupported(a_dt, F8_REFUSED[a_dt]))  # tileiras names the operand format first
        add(f"mmaf_scaled_{a_dt}_{s_dt}", b, since=V13_3, refused_on=refused)


def register():
    _memory()
    _control()
    _tiles()
    _misc()
    _views()
    _mma()
