"""Layer-2 families of memory and effects: pointers and gather/scatter, atomics, views, globals,
alloca, print and assert."""

from __future__ import annotations

import numpy as np

import tileir as ti
from tileir import F32, I32, I64

from . import corpora as C
from . import exact as X
from .model import *  # noqa: F401,F403


def _pointers():
    n = 256

    def args():
        r = C.rng(210)
        src = C.spread_floats(n, F32, 211)
        perm = r.permutation(n).astype(np.int32)
        wild = np.where(r.random(n) < 0.3, r.integers(n, 10 * n, n), r.integers(0, n, n)).astype(np.int32)
        wild[:4] = [-1, -(2**31), n, 2**31 - 1]
        isrc = C.int32_spread(n, 212)
        return [src, perm, wild, isrc, np.zeros(4 * n, np.float32), np.full(n, -1.0, np.float32),
                np.full(n, -1.0, np.float32), np.zeros(2 * n, np.int32)]

    params = (ti.ByPtr(F32), ti.ByPtr(I32), ti.ByPtr(I32), ti.ByPtr(I32), ti.ByPtr(F32), ti.ByPtr(F32),
              ti.ByPtr(F32), ti.ByPtr(I32))

    def body():
        src, perm_p, wild_p, isrc = ti.param(F32, 0), ti.param(I32, 1), ti.param(I32, 2), ti.param(I32, 3)
        o, sc, msc, io = ti.param(F32, 4), ti.param(F32, 5), ti.param(F32, 6), ti.param(I32, 7)
        perm, wild = ti.load(perm_p, _z(), [n]), ti.load(wild_p, _z(), [n])
        ok = ti.and_mask(ti.ge_i(wild, ti.i_const(0)), ti.lt_i(wild, ti.i_const(n)))
        ti.store(o, _z(), ti.gather(src, perm))
        ti.store(o, ti.idx_const(n), ti.gather(src, wild, mask=ok, pad=-99.5))
        ps = ti.ptr_offset(ti.ptrs(src, [n]), ti.subi(ti.i_const(n - 1), ti.arange(n)))
        ti.store(o, ti.idx_const(2 * n), ti.load_ptrs(ps))  # reversed through a pointer tile
        addr = ti.ptr_to_int(ti.ptrs(src, [n]))
        moved = ti.int_to_ptr(ti.add_i64(addr, ti.i64_const(4 * 3)), F32)  # 3 elements on, in bytes
        shifted = ti.ptr_offset(moved, ti.and_i(ti.arange(n), ti.i_const(127)))
        ti.store(o, ti.idx_const(3 * n), ti.load_ptrs(shifted))
        v = ti.load(src, _z(), [n])
        ti.scatter(sc, perm, v)
        ti.scatter(msc, wild, v, mask=ok)
        ti.store(io, _z(), ti.load_ptrs(ti.ptr_offset(ti.ptr_to_ptr(ti.ptrs(src, [n]), I32), ti.arange(n))))
        ti.store(io, ti.idx_const(n), ti.gather(isrc, perm))

    def expect(args, launch=0):
        src, perm, wild, isrc = args[:4]
        ok = (wild >= 0) & (wild < n)
        g2 = np.where(ok, src[np.where(ok, wild, 0)], np.float32(-99.5))
        sc = np.full(n, -1.0, np.float32)
        sc[perm] = src
        msc = np.full(n, -1.0, np.float32)
        # several lanes may name one element: the mask's lanes write in lane order here, so compare only
        # elements named once (see lanes below)
        for i in np.nonzero(ok)[0]:
            msc[wild[i]] = src[i]
        return {4: np.concatenate([src[perm], g2, src[::-1], src[3 + (np.arange(n) & 127)]]).astype(np.float32),
                5: sc, 6: msc, 7: np.concatenate([src.view(np.int32), isrc[perm]]).astype(np.int32)}

    def once(args):
        wild = args[2]
        ok = (wild >= 0) & (wild < n)
        counts = np.bincount(wild[ok], minlength=n)
        return counts[:n] <= 1

    case = Case("pointers", params, body, args, (Out(4, BITS, labels=("gather", "gather_masked", "ptr_offset",
                                                                      "int_to_ptr"), block=n),
                                                 Out(5, BITS), Out(6, BITS, lanes=once), Out(7, EXACT)),
                expect=expect, inputs=(0, 1, 2, 3))
    return Family("pointers", "exact", "bit for bit: gather and scatter through a permutation, masked ones through "
                  "indices out of range (a masked lane reads the pad and writes nothing; an element two masked-in "
                  "lanes name is not compared: the lanes of one store are unordered), a pointer tile walked "
                  "backwards, an address taken apart (ptr_to_int), moved 12 bytes and rebuilt (int_to_ptr), and "
                  "f32 memory read as i32 (ptr_to_ptr)", ("offset", "load_ptr_tko", "store_ptr_tko", "ptr_to_int",
                                                          "int_to_ptr", "ptr_to_ptr", "iota"), [case])


# ---- atomics -------------------------------------------------------------------------------------

ATOMIC_MODES = ("and", "or", "xor", "add", "max", "min", "umax", "umin", "xchg")


def _atomics():
    cases = []

    def hargs():
        r = C.rng(220)
        return [r.integers(0, 16, 1024).astype(np.int32), np.zeros(16, np.int32)]

    def hbody():
        d, h = ti.param(I32, 0), ti.param(I32, 1)
        ti.atomic_add(h, ti.load(d, ti.tile_at(ti.block_id(0), 256), [256]), 1)

    cases.append(Case("histogram", (ti.ByPtr(I32), ti.ByPtr(I32)), hbody, hargs, (Out(1, EXACT),), grid=(4,),
                      expect=lambda args, launch=0: {1: np.bincount(args[0], minlength=16).astype(np.int32)}))

    m = len(ATOMIC_MODES)

    def margs():
        r = C.rng(221)
        buf = C.fill(C.INT32_SPECIALS, 16 * m, C.int32_spread(16 * m, 222))
        vals = C.fill(C.INT32_SPECIALS[::-1], 16 * m, C.int32_spread(16 * m, 223))
        perm = r.permutation(16).astype(np.int32)
        lanes_on = (np.arange(16) < 12).astype(np.int32)
        return [buf, vals, np.zeros(16 * m, np.int32), perm, lanes_on]

    def mbody():
        b, v, o = ti.param(I32, 0), ti.param(I32, 1), ti.param(I32, 2)
        p = ti.load(ti.param(I32, 3), _z(), [16])
        on = ti.int_to_mask(ti.load(ti.param(I32, 4), _z(), [16]))
        for k, mode in enumerate(ATOMIC_MODES):
            base = ti.idx_const(16 * k)
            r = ti.atomic_rmw(b, mode, ti.addi(p, ti.i_const(16 * k)), ti.load(v, base, [16]), mask=on)
            ti.store(o, base, r)

    def apply(mode, old, v):
        uo, uv = old & 0xFFFFFFFF, v & 0xFFFFFFFF
        return X.wrap({"and": old & v, "or": old | v, "xor": old ^ v, "add": old + v, "max": max(old, v),
                       "min": min(old, v), "umax": max(uo, uv), "umin": min(uo, uv), "xchg": v}[mode])

    def mexpect(args, launch=0):
        buf, vals, _, perm, on = (a.astype(np.int64) for a in args)
        mem, olds = buf.copy(), np.zeros(16 * m, np.int64)
        for k, mode in enumerate(ATOMIC_MODES):
            for lane in range(16):
                if on[lane]:
                    at = 16 * k + perm[lane]
                    olds[16 * k + lane] = mem[at]
                    mem[at] = apply(mode, int(mem[at]), int(vals[16 * k + lane]))
        return {0: mem.astype(np.int32), 2: olds.astype(np.int32)}

    on_lanes = np.tile(np.arange(16) < 12, m)
    cases.append(Case("rmw_modes", (ti.ByPtr(I32),) * 5, mbody, margs,
                      (Out(0, EXACT, labels=ATOMIC_MODES, block=16), Out(2, EXACT, lanes=on_lanes,
                                                                        labels=ATOMIC_MODES, block=16)),
                      expect=mexpect, inputs=(0, 1, 3, 4),
                      note="old values of masked-off lanes are not compared (the device answers nothing defined)"))

    # i64 words through a permutation (what kernels.scan_lookback's status words take): adds that carry
    # across the halves, ors and exchanges of words whose high half is a flag, old values compared
    wmodes = ("add", "or", "xchg")

    def wargs():
        r = C.rng(230)
        perm = r.permutation(16).astype(np.int32)
        lanes = np.argsort(perm)[:4]  # the lanes that reach words 0..3 of each mode's block
        buf = r.integers(-2**63, 2**63 - 1, 16 * len(wmodes), dtype=np.int64)
        buf[:4] = [0xFFFFFFFF, -1, 2**32, -(2**32)]  # adds that carry into (or borrow from) the high half
        buf[16:20] = 0  # ors into unpublished words, as a status word's first publication
        vals = r.integers(-2**63, 2**63 - 1, 16 * len(wmodes), dtype=np.int64)
        vals[lanes] = [1, 1, -1, 2**32 - 1]
        vals[16 + lanes] = [2 << 32, (1 << 32) | 0xBF800000, 0, -(2**63)]
        return [buf, vals, np.zeros(16 * len(wmodes), np.int64), perm]

    def wbody():
        b, v, o = ti.param(I64, 0), ti.param(I64, 1), ti.param(I64, 2)
        p = ti.load(ti.param(I32, 3), _z(), [16])
        for k, mode in enumerate(wmodes):
            base = ti.idx_const(16 * k)
            ti.store(o, base, ti.atomic_rmw(b, mode, ti.addi(p, ti.i_const(16 * k)), ti.load(v, base, [16])))

    def wexpect(args, launch=0):
        buf, vals, _, perm = (a.astype(object) for a in args)
        mem = [int(a) for a in buf]
        olds = [0] * len(mem)

        def wrap(x):
            return (x + 2**63) % 2**64 - 2**63

        for k, mode in enumerate(wmodes):
            for lane in range(16):
                at, val = 16 * k + int(perm[lane]), int(vals[16 * k + lane])
                olds[16 * k + lane] = mem[at]
                mem[at] = wrap({"add": mem[at] + val, "or": mem[at] | val, "xchg": val}[mode])
        return {0: np.array(mem, np.int64), 2: np.array(olds, np.int64)}

    cases.append(Case("rmw_i64", (ti.ByPtr(I64), ti.ByPtr(I64), ti.ByPtr(I64), ti.ByPtr(I32)), wbody, wargs,
                      (Out(0, EXACT, labels=wmodes, block=16), Out(2, EXACT, labels=wmodes, block=16)),
                      expect=wexpect, inputs=(0, 1, 3)))

    cmodes = ("add", "max", "min", "umax", "umin", "and", "or", "xor")

    def cargs():
        r = C.rng(224)
        return [C.fill(C.INT32_SPECIALS, 8 * len(cmodes), C.int32_spread(64, 225)),
                C.int32_spread(256, 226), r.integers(0, 8, 256).astype(np.int32)]

    def cbody():
        b, v = ti.param(I32, 0), ti.param(I32, 1)
        idx = ti.load(ti.param(I32, 2), _z(), [256])
        vals = ti.load(v, _z(), [256])
        for k, mode in enumerate(cmodes):
            ti.atomic_rmw(b, mode, ti.addi(idx, ti.i_const(8 * k)), vals)

    def cexpect(args, launch=0):
        buf, vals, idx = (a.astype(np.int64) for a in args)
        mem = buf.copy()
        for k, mode in enumerate(cmodes):
            for lane in range(256):
                at = 8 * k + idx[lane]
                mem[at] = apply(mode, int(mem[at]), int(vals[lane]))
        return {0: mem.astype(np.int32)}

    cases.append(Case("rmw_colliding", (ti.ByPtr(I32),) * 3, cbody, cargs, (Out(0, EXACT, labels=cmodes, block=8),),
                      expect=cexpect, inputs=(0, 1, 2)))

    def sargs():
        r = C.rng(227)
        ib = C.fill(C.INT32_SPECIALS, 32, C.int32_spread(32, 228))
        icmp = np.where(np.arange(32) % 2 == 0, ib, ib ^ 1).astype(np.int32)
        pats = np.array([0x7FC00000, 0x7FC00001, 0x80000000, 0, 0x3F800000, 0xFF800000], np.int64)
        fb = np.concatenate([pats.astype(np.uint32).view(np.float32), C.spread_floats(26, F32, 229)])
        fcmp = fb.copy()
        fcmp[1] = np.uint32(0x7FC00000).view(np.float32)  # another NaN: no match
        fcmp[2] = np.float32(0.0)  # +0 against -0: no match (bits)
        fcmp[3] = np.float32(0.0)  # NaN-free match
        fcmp[10:20] = fcmp[10:20] * np.float32(2)
        return [ib, icmp, C.int32_spread(32, 230), np.zeros(32, np.int32), fb, fcmp,
                r.uniform(-5, 5, 32).astype(np.float32), np.zeros(32, np.float32), r.permutation(32).astype(np.int32),
                np.zeros(64, np.float32), (np.arange(256) % 16).astype(np.float32) / 4]

    sparams = (ti.ByPtr(I32),) * 4 + (ti.ByPtr(F32),) * 4 + (ti.ByPtr(I32), ti.ByPtr(F32), ti.ByPtr(F32))

    def sbody():
        perm = ti.load(ti.param(I32, 8), _z(), [32])
        ib, fb = ti.param(I32, 0), ti.param(F32, 4)
        r = ti.atomic_cas(ib, perm, ti.gather(ti.param(I32, 1), perm), ti.gather(ti.param(I32, 2), perm))
        ti.store(ti.param(I32, 3), _z(), r)
        r = ti.atomic_cas(fb, perm, ti.gather(ti.param(F32, 5), perm), ti.gather(ti.param(F32, 6), perm))
        ti.store(ti.param(F32, 7), _z(), r)
        vals = ti.load(ti.param(F32, 10), _z(), [256])
        ti.atomic_rmw(ti.param(F32, 9), "addf", ti.and_i(ti.arange(256), ti.i_const(63)), vals)

    def sexpect(args, launch=0):
        ib, icmp, ival, _, fb, fcmp, fval, _, perm, acc, vals = args
        mem_i, old_i = ib.copy(), np.zeros(32, np.int32)
        mem_f, old_f = fb.copy(), np.zeros(32, np.float32)
        for lane, at in enumerate(perm):
            old_i[lane] = mem_i[at]
            if mem_i[at] == icmp[at]:
                mem_i[at] = ival[at]
            old_f[lane] = mem_f[at]
            if mem_f[at:at + 1].view(np.int32)[0] == fcmp[at:at + 1].view(np.int32)[0]:
                mem_f[at] = fval[at]
        add = acc.astype(np.float64).copy()
        np.add.at(add, np.arange(256) & 63, _f64(vals))
        return {0: mem_i, 3: old_i, 4: mem_f, 7: old_f, 9: add.astype(np.float32)}

    cases.append(Case("cas_addf", sparams, sbody, sargs, (Out(0, EXACT), Out(3, EXACT), Out(4, BITS), Out(7, BITS),
                                                        Out(9, EXACT)),
                      expect=sexpect, inputs=(0, 1, 2, 4, 5, 6, 8, 9, 10)))
    return Family("atomics", "exact", "exact: colliding integer adds (a histogram over 4 blocks) and every "
                  "order-independent mode on colliding lanes compared as final memory; every mode through a "
                  "permutation compared as final memory and old values (masked lanes' old values excepted), and i64 "
                  "add / or / xchg so; cas "
                  "on the BITS (NaN payloads, -0 against +0); colliding addf of values whose every partial sum is "
                  "exact", ("atomic_rmw_tko", "atomic_cas_tko", "get_tile_block_id"), cases)


# ---- views ---------------------------------------------------------------------------------------


def _views():
    cases = []
    R, Cc = 10, 12  # a tensor whose tiles are cut by both edges

    def pargs():
        x = np.arange(R * Cc, dtype=np.float32).reshape(R, Cc) - 50
        return [x, np.full((3, 2, 4, 8), -1.0, np.float32), np.full((R, Cc), -7.0, np.float32),
                np.full((3, 2, 4, 8), -1.0, np.float32), np.array([R, 0, 0, 0, 0, 0, 0, 0], np.int32)]

    def pbody():
        src, out, back, out2, dims = (ti.param(F32, 0), ti.param(F32, 1), ti.param(F32, 2), ti.param(F32, 3),
                                      ti.param(I32, 4))
        i, j = ti.block_id(0), ti.block_id(1)
        tv = ti.tensor_view(src, 0, [R, Cc], [Cc, 1])
        pv = ti.partition_view(tv, [4, 8], padding=ti.PadNan)
        t = ti.load_view(pv, [i, j])
        cell = ti.idx_add(ti.idx_mul(i, ti.idx_const(2)), j)
        ti.store(out, ti.idx_mul(cell, ti.idx_const(32)), ti.reshape(t, [32]))
        ti.store_view(ti.partition_view(ti.tensor_view(back, 0, [R, Cc], [Cc, 1]), [4, 8]), [i, j], t * 2.0)
        tt = ti.load_view(ti.partition_view(tv, [8, 4], dim_map=[1, 0], padding=ti.PadNegInf), [j, i])
        ti.store(out2, ti.idx_mul(cell, ti.idx_const(32)), ti.reshape(tt, [32]))
        rows = ti.idx_of(ti.load(dims, _z(), [1]).reshape([]))  # R, from memory: a dynamic extent
        dyn = ti.tensor_view_dyn(src, 0, [ti.Dyn(rows), ti.Fixed(Cc)], [Cc, 1])
        d = [ti.index_space_dim(pv, 0), ti.index_space_dim(pv, 1), ti.tensor_dim(dyn, 0), ti.tensor_dim(dyn, 1)]
        for k, v in enumerate(d):  # every block writes the same four numbers
            ti.store(dims, ti.idx_const(4 + k), ti.broadcast(ti.idx_as_tile(v), [1]))

    def pexpect(args, launch=0):
        x = _f64(args[0])
        pad = np.full((12, 16), np.nan)
        pad[:R, :Cc] = x
        out = np.zeros((3, 2, 4, 8))
        for i in range(3):
            for j in range(2):
                out[i, j] = pad[4 * i: 4 * i + 4, 8 * j: 8 * j + 8]
        back = x * 2
        out2 = np.zeros((3, 2, 4, 8))
        for i in range(3):
            for j in range(2):
                out2[i, j] = _transposed_tile(x, i, j)
        return {1: out.astype(np.float32), 2: back.astype(np.float32), 3: out2.astype(np.float32),
                4: np.array([R, 0, 0, 0, 3, 2, R, Cc], np.int32)}

    cases.append(Case("partition", (ti.ByPtr(F32),) * 4 + (ti.ByPtr(I32),), pbody, pargs,
                      (Out(1, EXACT), Out(2, EXACT), Out(3, EXACT), Out(4, EXACT)), grid=(3, 2), expect=pexpect,
                      inputs=(0, 4)))

    def sargs():
        return [np.arange(128, dtype=np.float32).reshape(16, 8), np.zeros(5 * 16, np.float32),
                np.full((16, 8), -1.0, np.float32), np.zeros(2, np.int32)]

    SPOTS = ((0, 0), (1, 1), (7, 0), (3, 1), (6, 1))

    def sbody():
        src, o, back, g = ti.param(F32, 0), ti.param(F32, 1), ti.param(F32, 2), ti.param(I32, 3)
        sv = ti.strided_view(ti.tensor_view(src, 0, [16, 8], [8, 1]), [4, 4], [2, 4], padding=ti.PadNan)
        for k, (i, j) in enumerate(SPOTS):
            ti.store(o, ti.idx_const(16 * k), ti.reshape(ti.load_view(sv, [i, j]), [16]))
        ti.store(g, _z(), ti.broadcast(ti.idx_as_tile(ti.index_space_dim(sv, 0)), [1]))
        ti.store(g, ti.idx_const(1), ti.broadcast(ti.idx_as_tile(ti.index_space_dim(sv, 1)), [1]))
        gv = ti.gather_scatter_view(ti.tensor_view(src, 0, [16, 8], [8, 1]), [4, 8], 0, padding=ti.PadNegInf)
        bv = ti.gather_scatter_view(ti.tensor_view(back, 0, [16, 8], [8, 1]), [4, 8], 0)
        idx = ti.add_i(ti.mul_i(ti.arange(4), ti.i_const(5)), ti.i_const(1))  # rows 1, 6, 11, 16 (past the end)
        t = ti.load_gather(gv, [ti.Rows(idx), ti.At(0)])
        ti.store_gather(bv, [ti.Rows(idx), ti.At(0)], t)

    def sexpect(args, launch=0):
        x = _f64(args[0])
        pad = np.full((20, 8), np.nan)
        pad[:16] = x
        o = np.concatenate([pad[2 * i: 2 * i + 4, 4 * j: 4 * j + 4].ravel() for i, j in SPOTS])
        back = np.full((16, 8), -1.0)
        for r in (1, 6, 11):
            back[r] = x[r]
        return {1: o.astype(np.float32), 2: back.astype(np.float32), 3: np.array([8, 2], np.int32)}

    cases.append(Case("strided_gather", (ti.ByPtr(F32),) * 3 + (ti.ByPtr(I32),), sbody, sargs,
                      (Out(1, EXACT), Out(2, EXACT), Out(3, EXACT)), expect=sexpect, inputs=(0,)))

    def rargs():
        r = C.rng(240)
        return [r.integers(-50, 50, (8, 8)).astype(np.int32), C.int32_spread(64, 241).reshape(4, 16)]

    def rbody():
        t = ti.load(ti.param(I32, 1), ti.tile_at(ti.block_id(0), 16), [4, 4])
        ti.atomic_red_view(ti.partition_view(ti.tensor_view(ti.param(I32, 0), 0, [8, 8], [8, 1]), [4, 4]), [1, 0],
                           "add", "device", t)

    def rexpect(args, launch=0):
        acc, v = args[0].astype(np.int64), args[1].astype(np.int64)
        acc[4:8, 0:4] += v.reshape(4, 4, 4).sum(axis=0)
        return {0: ((acc + 2**31) % 2**32 - 2**31).astype(np.int32)}

    cases.append(Case("atomic_red_view", (ti.ByPtr(I32), ti.ByPtr(I32)), rbody, rargs, (Out(0, EXACT),), grid=(4,),
                      expect=rexpect, inputs=(0, 1)))
    return Family("views", "exact", "exact: partition views cut by both edges (NaN / -inf padding where a tile "
                  "runs past the tensor, stores past it masked), a transposing dim_map, a strided view whose tiles "
                  "overlap, a gather / scatter view with a row past the end, an atomic reduction of 4 blocks "
                  "into one tile, and the index space and tensor extents the device answers",
                  ("make_tensor_view", "make_partition_view", "make_strided_view", "make_gather_scatter_view",
                   "load_view_tko", "store_view_tko", "atomic_red_view_tko", "get_index_space_shape",
                   "get_tensor_shape", "get_tile_block_id"), cases)


def _transposed_tile(x, i, j):
    """Tile [j, i] of the [8, 4]-tile cut of x with dim_map [1, 0] (rows of the tile along x's
    columns), -inf past the edges, as the [4, 8] block of out2 for block (i, j)."""
    R, Cc = x.shape
    t = np.full((8, 4), -np.inf)
    for a in range(8):
        for b in range(4):
            r, c = 4 * i + b, 8 * j + a
            if r < R and c < Cc:
                t[a, b] = x[r, c]
    return t.reshape(4, 8)


# ---- globals, alloca -----------------------------------------------------------------------------

TABLE = [0.5, -1.25, 3.0, 7.75, -0.0, 1e-3, 100.0, -2.5]


def _globals():
    def args():
        return [np.zeros(8, np.float32), np.zeros(1, np.int32)]

    def body():
        o, h = ti.param(F32, 0), ti.param(I32, 1)
        ti.d_global("table", F32, TABLE)
        ti.d_global("hits", I32, [40], align=16)
        t = ti.ptr_offset(ti.global_ptrs("table", F32, [8]), ti.arange(8))
        ti.store(o, _z(), ti.load_ptrs(t))
        ti.store_ptrs(t, ti.load_ptrs(t) * 2.0 + 1.0)
        hp = ti.global_ptrs("hits", I32, [])
        k = ti.addi(ti.load_ptrs(hp), ti.i_const(1))
        ti.store_ptrs(hp, k)
        ti.store(h, _z(), ti.broadcast(k, [1]))

    def expect(args, launch=0):
        t = np.array(TABLE, np.float32).astype(np.float64)
        for _ in range(launch):
            t = t * 2 + 1
        return {0: t.astype(np.float32), 1: np.array([41 + launch], np.int32)}

    case = Case("globals", (ti.ByPtr(F32), ti.ByPtr(I32)), body, args, (Out(0, EXACT), Out(1, EXACT)), launches=2,
                expect=expect, corpus=len(TABLE) + 1)
    return Family("globals", "exact", "exact, over two launches of ONE loaded module: the first reads the declared "
                  "values, the second what the first wrote", ("global", "get_global"), [case])


def _alloca():
    n = 32

    def args():
        return [C.spread_floats(4 * n, F32, 250), C.spread_floats(4 * n, F32, 251), np.zeros(8 * n, np.float32)]

    def body():
        x, y, o = ti.param(F32, 0), ti.param(F32, 1), ti.param(F32, 2)
        base = ti.tile_at(ti.block_id(0), n)
        a1 = ti.alloca_ptrs(F32, n, 16, [])
        a2 = ti.alloca_ptrs(F32, n, 16, [], shared=True)
        ti.store_ptrs(ti.ptr_offset(a1, ti.arange(n)), ti.load(x, base, [n]))
        ti.store_ptrs(ti.ptr_offset(a2, ti.arange(n)), ti.load(y, base, [n]))
        back = ti.subi(ti.i_const(n - 1), ti.arange(n))
        ti.store(o, base, ti.load_ptrs(ti.ptr_offset(a1, back)))
        ti.store(o, ti.idx_add(base, ti.idx_const(4 * n)), ti.load_ptrs(ti.ptr_offset(a2, back)))

    def expect(args, launch=0):
        x, y = args[0].reshape(4, n), args[1].reshape(4, n)
        return {2: np.concatenate([x[:, ::-1].ravel(), y[:, ::-1].ravel()])}

    case = Case("alloca", (ti.ByPtr(F32),) * 3, body, args, (Out(2, EXACT),), grid=(4,), expect=expect)
    return Family("alloca", "exact", "exact: two allocas a block (one private, one shared), each a region of its "
                  "own, written and read back reversed, over 4 blocks", ("alloca",), [case])


# ---- print, assert -------------------------------------------------------------------------------


def _print():
    def args():
        return [np.array([-5, 7, -1, 255], np.int32), np.array([3.5, -0.0625, 1e-5, 2.0], np.float32)]

    def body():
        p, q = ti.param(I32, 0), ti.param(F32, 1)
        iv = [ti.reduce_sum(ti.load(p, ti.idx_const(k), [1])) for k in range(4)]
        fv = [ti.reduce_sum(ti.load(q, ti.idx_const(k), [1])) for k in range(4)]
        ti.d_print("ints %d %d %u %x\n", iv)
        ti.d_print("floats %f %.3e %g %+.1f\n", fv)
        ti.d_print("oct %o hex %#X char %c%%\n", [iv[3], iv[3], ti.i_const(65)])
        ti.d_print("no arguments\n")

    def text(args):
        return ("ints -5 7 4294967295 ff\nfloats 3.500000 -6.250e-02 1e-05 +2.0\noct 377 hex 0XFF char A%\n"
                "no arguments\n")

    case = Case("print", (ti.ByPtr(I32), ti.ByPtr(F32)), body, args, (), mode="print", expect_text=text,
                inputs=(0, 1))
    return Family("print", "exact line", "the bytes one block prints, byte for byte against C's printf of the same "
                  "arguments (rank-0 arguments only; a wide tile's print is not atomic and has no one answer)",
                  ("print_tko",), [case])


def _assert():
    def args():
        return [np.arange(64, dtype=np.int32), np.zeros(64, np.int32)]

    def make(limit):
        def body():
            x, o = ti.param(I32, 0), ti.param(I32, 1)
            v = ti.load(x, _z(), [64])
            ti.d_assert(ti.lt_i(v, ti.i_const(limit)), "v < limit")
            ti.store(o, _z(), ti.add_i(v, ti.i_const(1)))
        return body

    ok = Case("assert_holds", (ti.ByPtr(I32), ti.ByPtr(I32)), make(64), args, (Out(1, EXACT),), mode="assert",
              expect=lambda args, launch=0: {1: args[0] + 1}, note="must NOT fail")
    bad = Case("assert_fires", (ti.ByPtr(I32), ti.ByPtr(I32)), make(40), args, (), mode="assert",
               note="must fail (CUDA_ERROR_ASSERT), in a process of its own: the error is sticky")
    return Family("assert", "launch must fail", "a launch whose assertion holds runs and answers; one whose "
                  "assertion fails must fail with the driver's assert error, each in a process of its own",
                  ("assert",), [ok, bad])


# ---- control flow --------------------------------------------------------------------------------
